"""The ResNet family (torchvision resnet.py): basic-block ResNet-18/34, bottleneck ResNet-50/101, ResNeXt-50 32x4d, Wide ResNet-50-2."""
from __future__ import annotations
from tinygrad import Tensor
from dataset.networks.layers import P, params, conv_bn, linear

def _basic(x:Tensor, cin:int, planes:int, stride:int, p:P) -> Tensor:
  out = conv_bn(conv_bn(x, cin, planes, 3, p, stride=stride, padding=1), planes, planes, 3, p, padding=1, relu=False)
  idn = conv_bn(x, cin, planes, 1, p, stride=stride, relu=False) if stride != 1 or cin != planes else x
  return (out + idn).relu()

def _bottleneck(x:Tensor, cin:int, planes:int, stride:int, p:P, groups=1, base_width=64) -> Tensor:
  width = planes*base_width//64*groups
  out = conv_bn(x, cin, width, 1, p)
  out = conv_bn(out, width, width, 3, p, stride=stride, padding=1, groups=groups)  # v1.5: the stride sits on the 3x3, not the first 1x1
  out = conv_bn(out, width, planes*4, 1, p, relu=False)
  # projection shortcut where shape changes (first block of every layer; layer1's only widens channels 64->256)
  idn = conv_bn(x, cin, planes*4, 1, p, stride=stride, relu=False) if stride != 1 or cin != planes*4 else x
  return (out + idn).relu()

def _resnet(depths:tuple[int, ...], bottleneck:bool, batch:int, image:int, dtype:str, device:str|None, groups=1, base_width=64) -> list[Tensor]:
  p = params(dtype, device)
  x = conv_bn(p.x(batch, 3, image, image), 3, 64, 7, p, stride=2, padding=3).max_pool2d(kernel_size=3, stride=2, padding=1)
  cin, mult = 64, 4 if bottleneck else 1
  for planes, blocks, stride in zip((64, 128, 256, 512), depths, (1, 2, 2, 2)):
    for i in range(blocks):
      s = stride if i == 0 else 1
      x = _bottleneck(x, cin, planes, s, p, groups, base_width) if bottleneck else _basic(x, cin, planes, s, p)
      cin = planes*mult
  return [linear(x.mean((2, 3)), 512*mult, 1000, p)]  # AdaptiveAvgPool2d(1) + flatten + fc

def resnet18(batch=1, image=224, dtype="fp16", device=None) -> list[Tensor]: return _resnet((2, 2, 2, 2), False, batch, image, dtype, device)
def resnet34(batch=1, image=224, dtype="fp16", device=None) -> list[Tensor]: return _resnet((3, 4, 6, 3), False, batch, image, dtype, device)
def resnet50(batch=1, image=224, dtype="fp16", device=None) -> list[Tensor]: return _resnet((3, 4, 6, 3), True, batch, image, dtype, device)
def resnet101(batch=1, image=224, dtype="fp16", device=None) -> list[Tensor]: return _resnet((3, 4, 23, 3), True, batch, image, dtype, device)
def resnext50(batch=1, image=224, dtype="fp16", device=None) -> list[Tensor]:   # resnext50_32x4d: 32 groups of 4 channels per 64
  return _resnet((3, 4, 6, 3), True, batch, image, dtype, device, groups=32, base_width=4)
def wide_resnet50(batch=1, image=224, dtype="fp16", device=None) -> list[Tensor]:   # wide_resnet50_2: twice the bottleneck width
  return _resnet((3, 4, 6, 3), True, batch, image, dtype, device, base_width=128)

NETWORKS = {f.__name__: f for f in [resnet18, resnet34, resnet50, resnet101, resnext50, wide_resnet50]}
