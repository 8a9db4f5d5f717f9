"""Image classifiers beyond ResNet (torchvision definitions): VGG-11/16, DenseNet-121, GoogLeNet, SqueezeNet 1.1, ShuffleNetV2 x1.0,
RegNetX-400MF. No MobileNet or EfficientNet (inverted residuals, squeeze-excite): those are the unseen benchmark's."""
from __future__ import annotations
from tinygrad import Tensor
from dataset.networks.layers import P, params, bn, conv, conv_bn, linear

# ***** VGG (no BatchNorm): 3x3 convs with bias + ReLU, 2x2 max pools, three fully connected layers *****

def _vgg(cfg:list, batch:int, image:int, dtype:str, device:str|None) -> list[Tensor]:
  p = params(dtype, device)
  x, cin = p.x(batch, 3, image, image), 3
  for c in cfg:
    if c == "M": x = x.max_pool2d(2, 2)
    else: x, cin = conv(x, cin, c, 3, p, padding=1).relu(), c
  # AdaptiveAvgPool2d(7) is the identity at 224; at other sizes the classifier takes the map as it is
  x = linear(linear(x.flatten(1), x.shape[1]*x.shape[2]*x.shape[3], 4096, p).relu(), 4096, 4096, p).relu()
  return [linear(x, 4096, 1000, p)]

def vgg11(batch=1, image=224, dtype="fp16", device=None) -> list[Tensor]:
  return _vgg([64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"], batch, image, dtype, device)
def vgg16(batch=1, image=224, dtype="fp16", device=None) -> list[Tensor]:
  return _vgg([64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"], batch, image, dtype, device)

# ***** DenseNet-121: pre-activation dense layers whose inputs are every earlier feature map, concatenated *****

def densenet121(batch=1, image=224, growth=32, dtype="fp16", device=None) -> list[Tensor]:
  p = params(dtype, device)
  x = conv_bn(p.x(batch, 3, image, image), 3, 64, 7, p, stride=2, padding=3).max_pool2d(3, 2, padding=1)
  c = 64
  blocks = (6, 12, 24, 16)
  for i, n in enumerate(blocks):
    for _ in range(n):   # BN-ReLU-conv1x1 (4*growth) -> BN-ReLU-conv3x3 (growth), appended to the features
      y = bn(x, c, p).relu().conv2d(p(4*growth, c, 1, 1))
      x, c = x.cat(bn(y, 4*growth, p).relu().conv2d(p(growth, 4*growth, 3, 3), padding=1), dim=1), c + growth
    if i < len(blocks) - 1: x, c = bn(x, c, p).relu().conv2d(p(c//2, c, 1, 1)).avg_pool2d(2, 2), c//2   # transition
  return [linear(bn(x, c, p).relu().mean((2, 3)), c, 1000, p)]

# ***** GoogLeNet (torchvision googlenet: BasicConv2d is conv + BN(eps=1e-3) + ReLU; its "5x5" branch is a 3x3) *****

def _bc(x:Tensor, cin:int, cout:int, ks:int, p:P, stride=1, padding=0) -> Tensor: return conv_bn(x, cin, cout, ks, p, stride, padding, eps=1e-3)

def _inception(x:Tensor, cin:int, c1:int, r3:int, c3:int, r5:int, c5:int, pp:int, p:P) -> Tensor:
  b1 = _bc(x, cin, c1, 1, p)
  b2 = _bc(_bc(x, cin, r3, 1, p), r3, c3, 3, p, padding=1)
  b3 = _bc(_bc(x, cin, r5, 1, p), r5, c5, 3, p, padding=1)
  b4 = _bc(x.max_pool2d(3, 1, padding=1, ceil_mode=True), cin, pp, 1, p)
  return b1.cat(b2, b3, b4, dim=1)

def googlenet(batch=1, image=224, dtype="fp16", device=None) -> list[Tensor]:
  p = params(dtype, device)
  x = _bc(p.x(batch, 3, image, image), 3, 64, 7, p, stride=2, padding=3).max_pool2d(3, 2, ceil_mode=True)
  x = _bc(_bc(x, 64, 64, 1, p), 64, 192, 3, p, padding=1).max_pool2d(3, 2, ceil_mode=True)
  for i, cfg in enumerate([(192, 64, 96, 128, 16, 32, 32), (256, 128, 128, 192, 32, 96, 64), None, (480, 192, 96, 208, 16, 48, 64),
                           (512, 160, 112, 224, 24, 64, 64), (512, 128, 128, 256, 24, 64, 64), (512, 112, 144, 288, 32, 64, 64),
                           (528, 256, 160, 320, 32, 128, 128), None, (832, 256, 160, 320, 32, 128, 128), (832, 384, 192, 384, 48, 128, 128)]):
    x = x.max_pool2d(3 if i == 2 else 2, 2, ceil_mode=True) if cfg is None else _inception(x, *cfg, p)
  return [linear(x.mean((2, 3)), 1024, 1000, p)]

# ***** SqueezeNet 1.1: fire modules (1x1 squeeze, then 1x1 and 3x3 expands side by side), a conv classifier *****

def _fire(x:Tensor, cin:int, s:int, e:int, p:P) -> Tensor:
  x = conv(x, cin, s, 1, p).relu()
  return conv(x, s, e, 1, p).relu().cat(conv(x, s, e, 3, p, padding=1).relu(), dim=1)

def squeezenet(batch=1, image=224, dtype="fp16", device=None) -> list[Tensor]:
  p = params(dtype, device)
  x = conv(p.x(batch, 3, image, image), 3, 64, 3, p, stride=2).relu().max_pool2d(3, 2, ceil_mode=True)
  x = _fire(_fire(x, 64, 16, 64, p), 128, 16, 64, p).max_pool2d(3, 2, ceil_mode=True)
  x = _fire(_fire(x, 128, 32, 128, p), 256, 32, 128, p).max_pool2d(3, 2, ceil_mode=True)
  x = _fire(_fire(_fire(_fire(x, 256, 48, 192, p), 384, 48, 192, p), 384, 64, 256, p), 512, 64, 256, p)
  return [conv(x, 512, 1000, 1, p).relu().mean((2, 3))]

# ***** ShuffleNetV2 x1.0: channel split, depthwise 3x3 (BN, no ReLU), concat, channel shuffle *****

def _shuffle(x:Tensor) -> Tensor:
  b, c, h, w = x.shape
  return x.reshape(b, 2, c//2, h, w).transpose(1, 2).reshape(b, c, h, w)

def _branch(x:Tensor, cin:int, c:int, stride:int, p:P) -> Tensor:
  x = conv_bn(conv_bn(x, cin, c, 1, p), c, c, 3, p, stride=stride, padding=1, groups=c, relu=False)
  return conv_bn(x, c, c, 1, p)

def _shuffle_unit(x:Tensor, cin:int, cout:int, stride:int, p:P) -> Tensor:
  c = cout//2
  if stride == 1:
    a, b = x.chunk(2, dim=1)
    return _shuffle(a.cat(_branch(b, c, c, 1, p), dim=1))
  left = conv_bn(conv_bn(x, cin, cin, 3, p, stride=2, padding=1, groups=cin, relu=False), cin, c, 1, p)
  return _shuffle(left.cat(_branch(x, cin, c, 2, p), dim=1))

def shufflenet_v2(batch=1, image=224, dtype="fp16", device=None) -> list[Tensor]:
  p = params(dtype, device)
  x = conv_bn(p.x(batch, 3, image, image), 3, 24, 3, p, stride=2, padding=1).max_pool2d(3, 2, padding=1)
  cin = 24
  for cout, n in ((116, 4), (232, 8), (464, 4)):
    for i in range(n): x, cin = _shuffle_unit(x, cin, cout, 2 if i == 0 else 1, p), cout
  return [linear(conv_bn(x, 464, 1024, 1, p).mean((2, 3)), 1024, 1000, p)]

# ***** RegNetX-400MF (torchvision regnet_x_400mf): X blocks, bottleneck ratio 1, group width 16 *****

def regnet_x(batch=1, image=224, dtype="fp16", device=None) -> list[Tensor]:
  p = params(dtype, device)
  widths, depths, group_width = (32, 64, 160, 400), (1, 2, 7, 12), 16
  x, cin = conv_bn(p.x(batch, 3, image, image), 3, 32, 3, p, stride=2, padding=1), 32
  for w, d in zip(widths, depths):
    for i in range(d):
      s = 2 if i == 0 else 1
      y = conv_bn(conv_bn(x, cin, w, 1, p), w, w, 3, p, stride=s, padding=1, groups=w//group_width)
      y = conv_bn(y, w, w, 1, p, relu=False)
      x, cin = (y + (conv_bn(x, cin, w, 1, p, stride=s, relu=False) if s != 1 or cin != w else x)).relu(), w
  return [linear(x.mean((2, 3)), cin, 1000, p)]

NETWORKS = {f.__name__: f for f in [vgg11, vgg16, densenet121, googlenet, squeezenet, shufflenet_v2, regnet_x]}
