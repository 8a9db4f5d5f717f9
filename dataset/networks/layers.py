"""Shared layers of the whole-network graphs, in torch layouts (Linear weight is (out, in), conv weight is (out, in/groups, kh, kw)).
Weights and inputs are Tensor.empty: nothing runs, scheduling the outputs yields the network's kernels as a real pass has them."""
from __future__ import annotations
import contextlib
from tinygrad import Tensor, dtypes
from dataset.workloads import DTYPES

class P:
  """The tensors of one network build: p(*shape) is a weight, p.x(*shape) an input. In a training build (dataset.networks.train_step)
  weights require grad and are collected for the optimizer, and BatchNorm normalizes by batch statistics."""
  def __init__(self, dtype:str, device:str|None, train:bool=False):
    self.dtype, self.device, self.train, self.weights = DTYPES[dtype], device, train, []
  def __call__(self, *shape:int) -> Tensor:
    # Tensor.empty in tinygrad 0.14 rejects a requires_grad kwarg: the attribute is set after
    t = Tensor.empty(*shape, dtype=self.dtype, device=self.device)
    if self.train: t.requires_grad = True; self.weights.append(t)
    return t
  def x(self, *shape:int) -> Tensor: return Tensor.empty(*shape, dtype=self.dtype, device=self.device)
  def idx(self, *shape:int) -> Tensor: return Tensor.empty(*shape, dtype=dtypes.int32, device=self.device)

_BUILDS: list[P]|None = None   # while a training build records (train_step), every P made lands here

def params(dtype:str, device:str|None) -> P:
  p = P(dtype, device, _BUILDS is not None)
  if _BUILDS is not None: _BUILDS.append(p)
  return p

@contextlib.contextmanager
def recording():
  global _BUILDS
  prev, _BUILDS = _BUILDS, []
  try: yield _BUILDS
  finally: _BUILDS = prev

def bn(x:Tensor, c:int, p:P, eps=1e-5) -> Tensor:
  # eval: exactly tinygrad's nn.BatchNorm eval path (running stats are data, so an elementwise op); training: nn.BatchNorm's batch
  # statistics over all but the channel axis (BatchNorm1d on (b, c, t) as well as 2d)
  if not p.train: return x.batchnorm(p(c), p(c), p(c), p(c).add(eps).rsqrt())
  axes = tuple(i for i in range(x.ndim) if i != 1)
  mean = x.mean(axis=axes)
  var = (x - mean.reshape(1, -1, *[1]*(x.ndim-2))).square().mean(axis=axes)
  return x.batchnorm(p(c), p(c), mean, var.add(eps).rsqrt())

def conv_bn(x:Tensor, cin:int, cout:int, ks:int, p:P, stride=1, padding=0, groups=1, relu=True, eps=1e-5) -> Tensor:
  x = bn(x.conv2d(p(cout, cin//groups, ks, ks), stride=stride, padding=padding, groups=groups), cout, p, eps)  # conv bias=False before BN
  return x.relu() if relu else x

def conv(x:Tensor, cin:int, cout:int, ks:int, p:P, stride=1, padding=0, groups=1, bias=True) -> Tensor:
  return x.conv2d(p(cout, cin//groups, ks, ks), p(cout) if bias else None, stride=stride, padding=padding, groups=groups)

def linear(x:Tensor, cin:int, cout:int, p:P, bias=True) -> Tensor: return x.linear(p(cout, cin).T, p(cout) if bias else None)
def ln(x:Tensor, c:int, p:P, eps=1e-5) -> Tensor: return x.layernorm(-1, eps) * p(c) + p(c)

def split_heads(x:Tensor, h:int) -> Tensor:  # (b, t, c) -> (b, h, t, c//h)
  return x.reshape(x.shape[0], x.shape[1], h, x.shape[2]//h).transpose(1, 2)
def merge_heads(x:Tensor) -> Tensor:  # (b, h, t, d) -> (b, t, h*d)
  return x.transpose(1, 2).reshape(x.shape[0], x.shape[2], x.shape[1]*x.shape[3])

def mha(x:Tensor, dim:int, h:int, p:P, kv:Tensor|None=None, causal=False, bias=True) -> Tensor:
  """Multi-head attention with separate q/k/v projections (torch nn.MultiheadAttention, OPT, Conformer), self or cross (kv)."""
  kv = x if kv is None else kv
  q, k, v = [split_heads(linear(t, dim, dim, p, bias), h) for t in (x, kv, kv)]
  return linear(merge_heads(q.scaled_dot_product_attention(k, v, is_causal=causal)), dim, dim, p, bias)

def upsample2(x:Tensor) -> Tensor:  # nearest x2 (nn.Upsample(scale_factor=2)), as tinygrad writes it: an expand, no gather
  b, c, hh, ww = x.shape
  return x.reshape(b, c, hh, 1, ww, 1).expand(b, c, hh, 2, ww, 2).reshape(b, c, 2*hh, 2*ww)

def embedding(weight:Tensor, idx:Tensor) -> Tensor:
  # nn.Embedding's forward (tinygrad 0.14, without USE_ATOMICS): a one-hot compare against the vocabulary, reduced. arange has no device
  return (Tensor.arange(weight.shape[0]) == idx.unsqueeze(-1)).unsqueeze(-1).where(weight, 0).sum(-2, dtype=weight.dtype)
