"""Named, parameterized single-op workloads. Each builder takes keyword params and returns the output tensors,
built on Tensor.empty so that scheduling them runs nothing."""
from __future__ import annotations
from tinygrad import Tensor, dtypes
from tinygrad.dtype import DType

DTYPES: dict[str, DType] = {"fp32": dtypes.float32, "fp16": dtypes.float16}

def _e(*shape, dtype:str, device:str|None, grad=False) -> Tensor:
  t = Tensor.empty(*shape, dtype=DTYPES[dtype], device=device)
  t.requires_grad = grad or None
  return t

def conv2d(n=8, c=64, h=56, w=56, k=64, ks=3, stride=1, padding=1, dilation=1, groups=1, dtype="fp16", device=None):
  x, wt = _e(n, c, h, w, dtype=dtype, device=device), _e(k, c//groups, ks, ks, dtype=dtype, device=device)
  return [x.conv2d(wt, stride=stride, padding=padding, dilation=dilation, groups=groups)]

def conv2d_bias_relu(n=8, c=64, h=56, w=56, k=64, ks=3, stride=1, padding=1, dtype="fp16", device=None):
  x, wt, b = _e(n, c, h, w, dtype=dtype, device=device), _e(k, c, ks, ks, dtype=dtype, device=device), _e(k, dtype=dtype, device=device)
  return [x.conv2d(wt, b, stride=stride, padding=padding).relu()]

def conv2d_backward(n=8, c=64, h=28, w=28, k=64, ks=3, stride=1, padding=1, dtype="fp32", device=None):
  x, wt = _e(n, c, h, w, dtype=dtype, device=device, grad=True), _e(k, c, ks, ks, dtype=dtype, device=device, grad=True)
  out = x.conv2d(wt, stride=stride, padding=padding)
  out.backward(_e(*out.shape, dtype=dtype, device=device))
  return [x.grad, wt.grad]

def bmm(b=16, m=512, k=64, n=512, dtype="fp16", device=None):
  return [_e(b, m, k, dtype=dtype, device=device) @ _e(b, k, n, dtype=dtype, device=device)]

def gemm(m=1024, k=1024, n=1024, alpha=1.0, beta=0.0, trans_a=False, trans_b=False, dtype="fp16", device=None):
  a = _e(k, m, dtype=dtype, device=device).T if trans_a else _e(m, k, dtype=dtype, device=device)
  b = _e(n, k, dtype=dtype, device=device).T if trans_b else _e(k, n, dtype=dtype, device=device)
  out = a @ b
  if alpha != 1.0: out = out * alpha
  if beta != 0.0: out = out + beta * _e(m, n, dtype=dtype, device=device)
  return [out]

def softmax(rows=4096, cols=4096, log=False, dtype="fp32", device=None):
  x = _e(rows, cols, dtype=dtype, device=device)
  return [x.log_softmax(-1) if log else x.softmax(-1)]

def softmax_backward(rows=4096, cols=1024, dtype="fp32", device=None):
  x = _e(rows, cols, dtype=dtype, device=device, grad=True)
  out = x.softmax(-1)
  out.backward(_e(rows, cols, dtype=dtype, device=device))
  return [x.grad]

def layernorm(rows=8192, cols=1024, dtype="fp32", device=None):
  x, g, b = _e(rows, cols, dtype=dtype, device=device), _e(cols, dtype=dtype, device=device), _e(cols, dtype=dtype, device=device)
  return [x.layernorm(-1) * g + b]

def layernorm_backward(rows=4096, cols=1024, dtype="fp32", device=None):
  x, g = _e(rows, cols, dtype=dtype, device=device, grad=True), _e(cols, dtype=dtype, device=device, grad=True)
  out = x.layernorm(-1) * g
  out.backward(_e(rows, cols, dtype=dtype, device=device))
  return [x.grad, g.grad]

def attention(b=8, heads=12, seq=512, dim=64, causal=False, dtype="fp16", device=None):
  q, k, v = [_e(b, heads, seq, dim, dtype=dtype, device=device) for _ in range(3)]
  return [q.scaled_dot_product_attention(k, v, is_causal=causal)]

def conv1d(n=1, c=80, l=3000, k=384, ks=3, stride=1, padding=1, dtype="fp32", device=None):
  """A 1-D convolution (audio front ends: Whisper's 80 mel bins over 3000 frames)."""
  return [_e(n, c, l, dtype=dtype, device=device).conv2d(_e(k, c, ks, dtype=dtype, device=device), stride=stride, padding=padding)]

def rmsnorm(rows=4096, cols=4096, dtype="fp16", device=None):
  x, g = _e(rows, cols, dtype=dtype, device=device), _e(cols, dtype=dtype, device=device)
  return [x * (x.square().mean(-1, keepdim=True) + 1e-6).rsqrt() * g]

def reduce(a=64, b=197, c=768, axis=2, op="sum", dtype="fp32", device=None):
  """A reduction of a 3-D tensor over one axis: sum, mean or max (pooling tokens, a global average pool, row statistics)."""
  return [getattr(_e(a, b, c, dtype=dtype, device=device), op)(axis)]

def gelu_bias(rows=4096, cols=3072, dtype="fp16", device=None):
  """An MLP's elementwise epilogue: gelu(x + bias)."""
  return [(_e(rows, cols, dtype=dtype, device=device) + _e(cols, dtype=dtype, device=device)).gelu()]

def swiglu(rows=4096, cols=11008, dtype="fp16", device=None):
  """A gated MLP's elementwise core: silu(gate) * up."""
  return [_e(rows, cols, dtype=dtype, device=device).silu() * _e(rows, cols, dtype=dtype, device=device)]

def gated_mlp(rows=1024, dim=1024, hidden=2816, dtype="fp16", device=None):
  """A gated MLP's first half, which tinygrad fuses into one kernel of two reductions: silu(x @ W_gate) * (x @ W_up) (T5 v1.1, PaLM,
  most decoder LLMs). The elementwise core alone is swiglu."""
  x = _e(rows, dim, dtype=dtype, device=device)
  return [(x @ _e(dim, hidden, dtype=dtype, device=device)).silu() * (x @ _e(dim, hidden, dtype=dtype, device=device))]

def maxpool(n=8, c=64, h=112, w=112, ks=3, stride=2, padding=1, dtype="fp16", device=None):
  return [_e(n, c, h, w, dtype=dtype, device=device).max_pool2d(kernel_size=ks, stride=stride, padding=padding)]

BUILDERS = {f.__name__: f for f in [conv2d, conv2d_bias_relu, conv2d_backward, bmm, gemm, softmax, softmax_backward, layernorm,
                                    layernorm_backward, attention, maxpool, conv1d, rmsnorm, reduce, gelu_bias, swiglu, gated_mlp]}
