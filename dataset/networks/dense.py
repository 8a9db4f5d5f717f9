"""Dense-prediction and generative convnets: U-Net segmentation, a DCGAN generator (transposed convs), a YOLOv3 detection neck and heads."""
from __future__ import annotations
from tinygrad import Tensor
from dataset.networks.layers import P, params, bn, conv, conv_bn, upsample2

# ***** U-Net (Ronneberger et al. 2015, with BN as in milesial/Pytorch-UNet): 4 downs, 4 transposed-conv ups with skip concats *****

def _double(x:Tensor, cin:int, cout:int, p:P) -> Tensor: return conv_bn(conv_bn(x, cin, cout, 3, p, padding=1), cout, cout, 3, p, padding=1)

def unet(batch=1, image=256, base=64, classes=2, dtype="fp16", device=None) -> list[Tensor]:
  p = params(dtype, device)
  x, skips, c = _double(p.x(batch, 3, image, image), 3, base, p), [], base
  for _ in range(4): skips.append(x); x, c = _double(x.max_pool2d(2, 2), c, 2*c, p), 2*c
  for s in reversed(skips):
    up = x.conv_transpose2d(p(c, c//2, 2, 2), p(c//2), stride=2)   # ConvTranspose2d weight: (in, out, kh, kw)
    x, c = _double(s.cat(up, dim=1), c, c//2, p), c//2
  return [conv(x, c, classes, 1, p)]

# ***** DCGAN generator (Radford et al. 2016, the PyTorch DCGAN example): z -> 4x4 -> ... -> 64x64 RGB *****

def dcgan_generator(batch=64, nz=100, ngf=64, dtype="fp16", device=None) -> list[Tensor]:
  p = params(dtype, device)
  x, cin = p.x(batch, nz, 1, 1), nz
  for i, cout in enumerate((8*ngf, 4*ngf, 2*ngf, ngf)):
    x, cin = bn(x.conv_transpose2d(p(cin, cout, 4, 4), stride=1 if i == 0 else 2, padding=0 if i == 0 else 1), cout, p).relu(), cout
  return [x.conv_transpose2d(p(cin, 3, 4, 4), stride=2, padding=1).tanh()]

# ***** YOLOv3 neck and heads (ultralytics yolov3.yaml) on Darknet-53's three feature maps: conv-BN-LeakyReLU(0.1) *****

def _cbl(x:Tensor, cin:int, cout:int, ks:int, p:P) -> Tensor:
  return conv_bn(x, cin, cout, ks, p, padding=ks//2, relu=False).leaky_relu(0.1)

def _five(x:Tensor, cin:int, c:int, p:P) -> Tensor:   # 1x1 c, 3x3 2c, 1x1 c, 3x3 2c, 1x1 c
  for i in range(5): x, cin = _cbl(x, cin, c if i % 2 == 0 else 2*c, 1 if i % 2 == 0 else 3, p), c if i % 2 == 0 else 2*c
  return x

def yolo_head(batch=1, image=416, classes=80, dtype="fp16", device=None) -> list[Tensor]:
  p = params(dtype, device)
  c3, c4, c5 = p.x(batch, 256, image//8, image//8), p.x(batch, 512, image//16, image//16), p.x(batch, 1024, image//32, image//32)
  na = 3*(5 + classes)   # 3 anchors x (box, objectness, classes) per cell
  outs, x, cin = [], c5, 1024
  for c, skip, cskip in ((512, c4, 512), (256, c3, 256), (128, None, 0)):
    x = _five(x, cin, c, p)
    outs.append(conv(_cbl(x, c, 2*c, 3, p), 2*c, na, 1, p))
    if skip is not None: x, cin = upsample2(_cbl(x, c, c//2, 1, p)).cat(skip, dim=1), c//2 + cskip
  return outs

NETWORKS = {f.__name__: f for f in [unet, dcgan_generator, yolo_head]}
