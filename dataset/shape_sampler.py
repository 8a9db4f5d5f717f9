"""A seeded sampler of single-op shapes over the ranges real networks run at: any batch from 1 to 64, channel counts off the
power-of-two grid (3, 24, 40, 72, 200, 1000, ...), odd maps and sequences (7, 13, 17, 35, 75, 77, 257, 1000, ...), both dtypes.
The fixed grid (dataset.corpus) names the shapes the shipped models were measured on; this draws the shapes around them.

Sequence lengths 49, 197, 577, 1500 and 3000 are left out: they are the unseen benchmark's signature (scripts/bench_unseen.py), whose
kernels must stay out of the corpus (tests/test_unseen.py checks the keys)."""
from __future__ import annotations
import math, random

BATCH = (1, 1, 2, 4, 8, 16, 32, 64)
MAPS = (7, 14, 28, 56, 112, 13, 17, 19, 26, 35, 52, 75)
SEQS = (16, 64, 77, 128, 196, 256, 257, 384, 512, 1000, 1024, 2048)
HIDDEN = (128, 256, 320, 512, 640, 768, 1024, 1280, 2048, 2560, 4096, 1000, 1152, 1536, 3072, 5120)

def _ch(r:random.Random, lo=8, hi=2048) -> int:
  """A channel count: mostly a multiple of 8, log-uniform in [lo, hi]; one in four any integer (odd widths: 3, 27, 200, ...)."""
  c = int(math.exp(r.uniform(math.log(lo), math.log(hi))))
  return max(lo, c if r.random() < 0.25 else (c + 4)//8*8)

def _dt(r:random.Random) -> str: return r.choice(("fp16", "fp32"))
def _tokens(r:random.Random, cap=16384) -> int:
  while (t := r.choice(BATCH)*r.choice(SEQS)) > cap: pass
  return t

def conv2d(r:random.Random) -> dict:
  kind = r.choice(("plain", "plain", "strided", "pointwise", "depthwise", "grouped", "dilated"))
  n, h, c = r.choice(BATCH), r.choice(MAPS), _ch(r)
  ks = 1 if kind == "pointwise" else r.choice((3, 3, 3, 5, 7)) if kind in ("plain", "depthwise") else 3
  s, d = (2 if kind == "strided" or r.random() < 0.15 else 1), (r.choice((2, 3, 4)) if kind == "dilated" else 1)
  g = c if kind == "depthwise" else r.choice((2, 4, 8, 16, 32)) if kind == "grouped" else 1
  if kind == "grouped": c = max(g, c//g*g)
  k = c if kind == "depthwise" else (_ch(r)//g*g or g)
  return dict(n=n, c=c, h=h, w=h, k=k, ks=ks, stride=s, padding=ks//2*d, dilation=d, groups=g)

def conv2d_bias_relu(r:random.Random) -> dict:
  ks, h = r.choice((1, 3)), r.choice(MAPS)
  return dict(n=r.choice(BATCH), c=_ch(r), h=h, w=h, k=_ch(r), ks=ks, stride=1, padding=ks//2)

def conv1d(r:random.Random) -> dict:
  ks = r.choice((3, 5, 7, 31))
  return dict(n=r.choice((1, 2, 4, 8)), c=_ch(r, 16, 768), l=r.choice((250, 499, 1000, 1024, 2000, 4096)), k=_ch(r, 16, 768), ks=ks,
              stride=r.choice((1, 1, 2)), padding=ks//2)

def gemm(r:random.Random) -> dict:
  return dict(m=_tokens(r), k=r.choice(HIDDEN), n=r.choice(HIDDEN + (50257, 32000)) if r.random() < 0.9 else _ch(r), trans_b=r.random() < 0.3)

def bmm(r:random.Random) -> dict:
  seq, d = r.choice(SEQS[:-1]), r.choice((32, 64, 80, 96, 128))
  b = r.choice(BATCH[:6])*r.choice((4, 8, 12, 16, 20))
  return dict(b=b, m=seq, k=d, n=seq) if r.random() < 0.5 else dict(b=b, m=seq, k=seq, n=d)

def attention(r:random.Random) -> dict:
  return dict(b=r.choice((1, 2, 4, 8)), heads=r.choice((4, 8, 12, 16, 20, 25)), seq=r.choice(SEQS[:-1]), dim=r.choice((32, 64, 80, 96, 128)),
              causal=r.random() < 0.5)

def _rows_cols(r:random.Random) -> dict: return dict(rows=_tokens(r), cols=r.choice(HIDDEN[:-1]))
def softmax(r:random.Random) -> dict:
  s = r.choice(SEQS)
  return dict(rows=r.choice((1, 4, 8, 12, 16, 32))*r.choice((1, 8))*s, cols=s, log=r.random() < 0.2)
def layernorm(r:random.Random) -> dict: return _rows_cols(r)
def rmsnorm(r:random.Random) -> dict: return _rows_cols(r)
def gelu_bias(r:random.Random) -> dict: return dict(rows=_tokens(r, 8192), cols=r.choice((1024, 2048, 3072, 4096, 5120, 1152, 2560)))
def swiglu(r:random.Random) -> dict: return dict(rows=_tokens(r, 8192), cols=r.choice((1408, 2816, 5632, 8192, 13824)))

def gated_mlp(r:random.Random) -> dict:
  # no 5632-wide hidden layer: the unseen benchmark's LLaMA block (TinyLlama's sizes) has it
  return dict(rows=_tokens(r, 8192), dim=r.choice((512, 768, 1024, 2048, 2560, 4096)), hidden=r.choice((1408, 2048, 2816, 3072, 4096, 8192, 11008)))

def reduce(r:random.Random) -> dict:
  a, b, c = r.choice(BATCH), r.choice(SEQS + MAPS), _ch(r, 16, 4096)
  return dict(a=a, b=b, c=c, axis=r.choice((1, 2)), op=r.choice(("sum", "mean", "max")))

def maxpool(r:random.Random) -> dict:
  ks, h = r.choice((2, 3)), r.choice(MAPS[:5] + (13, 35, 75))
  return dict(n=r.choice(BATCH[:6]), c=_ch(r, 16, 512), h=h, w=h, ks=ks, stride=2, padding=ks//2 if ks == 3 else 0)

def conv2d_backward(r:random.Random) -> dict:
  h = r.choice((7, 14, 28, 13, 19))
  return dict(n=r.choice((1, 2, 8, 16)), c=_ch(r, 16, 512), h=h, w=h, k=_ch(r, 16, 512), ks=3, stride=r.choice((1, 2)), padding=1)

def softmax_backward(r:random.Random) -> dict: return dict(rows=_tokens(r, 8192), cols=r.choice(SEQS))
def layernorm_backward(r:random.Random) -> dict: return _rows_cols(r)

# workload -> (sampler, weight, reporting family as in the grid)
SAMPLERS = {"conv2d": (conv2d, 10, "conv2d"), "conv2d_bias_relu": (conv2d_bias_relu, 2, "conv2d_fused"), "conv1d": (conv1d, 2, "conv1d"),
            "gemm": (gemm, 6, "gemm"), "bmm": (bmm, 3, "bmm"), "attention": (attention, 3, "attention"), "softmax": (softmax, 2, "softmax"),
            "layernorm": (layernorm, 2, "layernorm"), "rmsnorm": (rmsnorm, 1, "rmsnorm"), "gelu_bias": (gelu_bias, 1, "gelu_bias"),
            "swiglu": (swiglu, 1, "swiglu"), "reduce": (reduce, 2, "reduce"), "maxpool": (maxpool, 1, "maxpool"),
            "conv2d_backward": (conv2d_backward, 2, "backward"), "softmax_backward": (softmax_backward, 1, "backward"),
            "layernorm_backward": (layernorm_backward, 1, "backward"), "gated_mlp": (gated_mlp, 1, "gated_mlp")}

MAX_FLOPS, MAX_ELEMENTS = 2e11, 2**26   # a draw above either is drawn again: each kernel times in milliseconds on a GPU

def cost(w:str, p:dict) -> tuple[float, int]:
  """(flops, largest tensor's elements) of a draw, roughly: what the caps bound."""
  if w.startswith("conv2d"):
    o = (p["h"] + 2*p["padding"] - p.get("dilation", 1)*(p["ks"]-1) - 1)//p["stride"] + 1
    fl = 2*p["n"]*p["k"]*p["c"]//p.get("groups", 1)*p["ks"]**2*o*o*(3 if w == "conv2d_backward" else 1)
    return fl, max(p["n"]*p["c"]*p["h"]**2, p["n"]*p["k"]*o*o)
  if w == "conv1d": return 2*p["n"]*p["k"]*p["c"]*p["ks"]*p["l"]//p["stride"], max(p["n"]*p["c"]*p["l"], p["n"]*p["k"]*p["l"])
  if w == "gemm": return 2*p["m"]*p["k"]*p["n"], max(p["m"]*p["k"], p["k"]*p["n"], p["m"]*p["n"])
  if w == "gated_mlp": return 4*p["rows"]*p["dim"]*p["hidden"], max(p["rows"]*p["dim"], p["dim"]*p["hidden"], p["rows"]*p["hidden"])
  if w == "bmm": return 2*p["b"]*p["m"]*p["k"]*p["n"], p["b"]*max(p["m"]*p["k"], p["k"]*p["n"], p["m"]*p["n"])
  if w == "attention": return 4*p["b"]*p["heads"]*p["seq"]**2*p["dim"], p["b"]*p["heads"]*p["seq"]**2
  els = p["rows"]*p["cols"] if "rows" in p else p["a"]*p["b"]*p["c"] if w == "reduce" else p["n"]*p["c"]*p["h"]**2
  return 8*els, els

def sample(n:int, seed:int=0, exclude:frozenset|set=frozenset()) -> list[tuple[str, str, dict]]:
  """n distinct (workload, family, params) draws, params with their dtype, the same for the same (n, seed): a longer list extends a
  shorter one. `exclude`: (workload, sorted params items) never drawn (dataset.corpus passes its grid's)."""
  r, ws = random.Random(seed), list(SAMPLERS)
  seen, out = set(exclude), []
  while len(out) < n:
    w = r.choices(ws, weights=[SAMPLERS[x][1] for x in ws])[0]
    params = {**SAMPLERS[w][0](r), "dtype": _dt(r)}
    if any(v > cap for v, cap in zip(cost(w, params), (MAX_FLOPS, MAX_ELEMENTS))): continue
    if (key := (w, tuple(sorted(params.items())))) in seen: continue
    seen.add(key); out.append((w, SAMPLERS[w][2], params))
  return out
