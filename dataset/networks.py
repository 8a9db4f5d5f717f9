"""Whole-network forward graphs (inference), built on Tensor.empty like dataset.workloads: weights and inputs are empty,
nothing runs, scheduling the outputs yields the network's kernels as they appear in a real forward pass."""
from __future__ import annotations
from typing import Callable
from tinygrad import Tensor
from dataset.workloads import DTYPES

P = Callable[..., Tensor]  # p(*shape) -> empty parameter tensor

def _params(dtype:str, device:str|None) -> P:
  # weights/inputs: empty, inference only. Same as workloads._e minus its requires_grad kwarg, which tinygrad 0.14's Tensor.empty rejects
  return lambda *shape: Tensor.empty(*shape, dtype=DTYPES[dtype], device=device)

# ***** shared layers: torch layouts (Linear weight is (out, in), conv weight is (out, in/groups, kh, kw)) *****

def _bn(x:Tensor, c:int, p:P, eps=1e-5) -> Tensor:
  # eval-mode BatchNorm2d, exactly tinygrad's nn.BatchNorm eval path: running stats are data, so this stays an elementwise op
  return x.batchnorm(p(c), p(c), p(c), p(c).add(eps).rsqrt())

def _conv_bn(x:Tensor, cin:int, cout:int, ks:int, p:P, stride=1, padding=0, groups=1, relu=True) -> Tensor:
  x = _bn(x.conv2d(p(cout, cin//groups, ks, ks), stride=stride, padding=padding, groups=groups), cout, p)  # conv bias=False before BN
  return x.relu() if relu else x

def _linear(x:Tensor, cin:int, cout:int, p:P, bias=True) -> Tensor: return x.linear(p(cout, cin).T, p(cout) if bias else None)
def _ln(x:Tensor, c:int, p:P, eps=1e-5) -> Tensor: return x.layernorm(-1, eps) * p(c) + p(c)

def _heads(x:Tensor, heads:int) -> Tensor:  # (b, t, c) -> (b, heads, t, c//heads)
  return x.reshape(x.shape[0], x.shape[1], heads, x.shape[2]//heads).transpose(1, 2)
def _merge(x:Tensor) -> Tensor:  # (b, heads, t, d) -> (b, t, heads*d)
  return x.transpose(1, 2).reshape(x.shape[0], x.shape[2], x.shape[1]*x.shape[3])

# ***** ResNet-50 v1.5 (torchvision resnet50) *****

def _bottleneck(x:Tensor, cin:int, planes:int, stride:int, p:P) -> Tensor:
  out = _conv_bn(x, cin, planes, 1, p)
  out = _conv_bn(out, planes, planes, 3, p, stride=stride, padding=1)  # v1.5: the stride sits on the 3x3, not the first 1x1
  out = _conv_bn(out, planes, planes*4, 1, p, relu=False)
  # projection shortcut where shape changes (first block of every layer; layer1's only widens channels 64->256)
  idn = _conv_bn(x, cin, planes*4, 1, p, stride=stride, relu=False) if stride != 1 or cin != planes*4 else x
  return (out + idn).relu()

def resnet50(batch=1, image=224, dtype="fp16", device=None) -> list[Tensor]:
  p = _params(dtype, device)
  x = _conv_bn(p(batch, 3, image, image), 3, 64, 7, p, stride=2, padding=3).max_pool2d(kernel_size=3, stride=2, padding=1)
  cin = 64
  for planes, blocks, stride in [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]:
    for i in range(blocks):
      x, cin = _bottleneck(x, cin, planes, stride if i == 0 else 1, p), planes*4
  return [_linear(x.mean((2, 3)), 2048, 1000, p)]  # AdaptiveAvgPool2d(1) + flatten + fc

# ***** CvT stage 1 (Wu et al. 2021, microsoft/CvT cls_cvt.py, CvT-13 config) *****

def _conv_proj(x:Tensor, dim:int, stride:int, p:P) -> Tensor:
  # depthwise 3x3 (bias=False) + BN on the token map, then the pointwise 1x1 as a Linear on tokens (proj_q/k/v, qkv_bias=True)
  x = _conv_bn(x, dim, dim, 3, p, stride=stride, padding=1, groups=dim, relu=False)
  return _linear(x.flatten(2).transpose(1, 2), dim, dim, p)

def cvt_block(batch=1, tokens_hw=56, dim=64, heads=1, dtype="fp16", device=None) -> list[Tensor]:
  p = _params(dtype, device)
  # convolutional token embedding: 7x7 s4 p2 maps a 4*t image to a t x t token map (224 -> 56), then LayerNorm over channels
  x = p(batch, 3, 4*tokens_hw, 4*tokens_hw).conv2d(p(dim, 3, 7, 7), p(dim), stride=4, padding=2)
  x = _ln(x.flatten(2).transpose(1, 2), dim, p)  # (b, t*t, dim)
  # block: x + attn(norm1(x)); q/k/v see the token map through depthwise-separable conv projections, k/v subsampled by 2
  h = _ln(x, dim, p).transpose(1, 2).reshape(batch, dim, tokens_hw, tokens_hw)
  q, k, v = [_heads(_conv_proj(h, dim, s, p), heads) for s in (1, 2, 2)]
  # note: CvT scales by dim**-0.5 rather than head_dim**-0.5; identical for stage 1 (heads=1), and only a constant otherwise
  x = x + _linear(_merge(q.scaled_dot_product_attention(k, v)), dim, dim, p)
  # x + mlp(norm2(x)); CvT uses nn.GELU, the exact erf form
  return [x + _linear(_linear(_ln(x, dim, p), dim, 4*dim, p).gelu(approximate="none"), 4*dim, dim, p)]

# ***** GPT-2 small block (HF GPT2Block; Conv1D weights are stored (in, out), so no transpose) *****

def gpt2_block(batch=1, seq=512, dim=768, heads=12, dtype="fp16", device=None) -> list[Tensor]:
  p = _params(dtype, device)
  x = p(batch, seq, dim)
  q, k, v = _ln(x, dim, p).linear(p(dim, 3*dim), p(3*dim)).split(dim, dim=-1)  # c_attn
  att = _heads(q, heads).scaled_dot_product_attention(_heads(k, heads), _heads(v, heads), is_causal=True)
  x = x + _merge(att).linear(p(dim, dim), p(dim))  # c_proj
  return [x + _ln(x, dim, p).linear(p(dim, 4*dim), p(4*dim)).gelu().linear(p(4*dim, dim), p(dim))]  # mlp: gelu_new = tanh form

NETWORKS = {"resnet50": resnet50, "cvt_block": cvt_block, "gpt2_block": gpt2_block}
