"""tinygrad 0.14.0: a reduce axis padded by PADTO computes wrong when it is then unrolled, or when it is also grouped (GROUP/GROUPTOP,
a shared-memory reduce, in either order). kerntune's fuzzer (search.fuzz) found both: the unroll on the CPU (results/fuzz_cpu.md),
the grouping on an H100 (results/fuzz.md, where its reproduce() lines reran the failures). This script needs tinygrad alone.
tinygrad refuses the other unroll order (codegen/opt/postrange.py: "cannot pad upcasted") but not these.
  python results/tinygrad_bugs/padded_reduce.py             # the CPU device: the unroll case (GROUP needs shared memory)
  DEV=CUDA python results/tinygrad_bugs/padded_reduce.py    # both cases
unroll: a batched matmul (3, 64, 33) @ (3, 33, 16), its 33-long reduce axis padded to 48, then unrolled by 4.
group: the GPU fuzzer's first failure, rmsnorm's first kernel (64 x 100 float32: sqrt(mean(x^2) + 1e-6) per row, the same AST),
8 rows a block (LOCAL), the 100-long reduce grouped whole (GROUP) and then padded to 128 (PADTO).
On an H100 (2026-11-26, results/logs/padded_reduce_h100.log) the unroll case computes wrong there too (max abs error 8.66); the
grouped case ran then as a plain mean of squares, a different kernel, and computed right. In the fuzzer's own form (this one: the
AST is the failing kernel's) it has not run standalone on a GPU yet; results/fuzz.md's reproduce() lines rerun it through kerntune.
"""
from dataclasses import replace
import numpy as np
import tinygrad.tensor as T
from tinygrad import Tensor
from tinygrad.codegen.opt import Opt, OptOps
from tinygrad.uop.ops import Ops

OPTS: tuple[Opt, ...]|None = None
_run = T.run_linear
def _with_opts(linear, *args, **kwargs):   # the opts reach the kernel as tinygrad's own: KernelInfo.opts_to_apply
  if OPTS is not None:
    linear = linear.replace(src=tuple(c.replace(src=(c.src[0].replace(arg=replace(c.src[0].arg, opts_to_apply=OPTS)), *c.src[1:]))
                                      if c.src[0].op is Ops.SINK else c for c in linear.src))
  return _run(linear, *args, **kwargs)
T.run_linear = _with_opts

def bmm() -> Tensor:
  rng = np.random.default_rng(0)
  a, b = (Tensor(rng.standard_normal(s).astype(np.float32)).realize() for s in ((3, 64, 33), (3, 33, 16)))
  return a @ b
def rms() -> Tensor:
  x = Tensor(np.random.default_rng(0).standard_normal((64, 100)).astype(np.float32)).realize()
  return (x.square().mean(-1, keepdim=True) + 1e-6).sqrt()

def run(f, opts:tuple[Opt, ...]|None) -> np.ndarray:
  global OPTS
  out = f()
  OPTS = opts
  try: return out.numpy()
  finally: OPTS = None

CASES = [(bmm, [(Opt(OptOps.PADTO, 3, 16),), (Opt(OptOps.PADTO, 3, 16), Opt(OptOps.UNROLL, 0, 4))]),   # (33 unrolled by 4 alone is refused)
         (rms, [(Opt(OptOps.LOCAL, 0, 8), Opt(OptOps.GROUP, 0, 0)), (Opt(OptOps.LOCAL, 0, 8), Opt(OptOps.GROUP, 0, 0), Opt(OptOps.PADTO, 2, 32))])]

if __name__ == "__main__":
  for f, configs in CASES:
    ref = run(f, None)
    for opts in configs:
      name = f"{f.__name__} {[(o.op.name, o.axis, o.arg) for o in opts]}"
      try: got = run(f, opts)
      except Exception as e: print(f"{name}: does not apply here ({type(e).__name__}: {e})"); continue
      err = float(np.nanmax(np.abs(got - ref))) if np.isfinite(got).all() else float("nan")
      print(f"{name}: max abs error {err:.3g}, {'ok' if err < 1e-3 else 'WRONG'}")
