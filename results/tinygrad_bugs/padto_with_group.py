"""tinygrad 0.14.0: a reduce axis padded by PADTO and grouped (GROUP/GROUPTOP, a shared-memory reduce; either order) computes wrong
or leaves outputs unwritten. kerntune's fuzzer (search.fuzz) found 4 such configs on an H100 (results/fuzz.md, where its
reproduce() lines reran them there); this script needs tinygrad alone and a GPU (the CPU device has no shared memory, so GROUP does
not apply there). It has not run on a GPU in this form yet.
  DEV=CUDA python results/tinygrad_bugs/padto_with_group.py
The fuzzer's first failure: the row mean of squares of a (64, 100) float32 tensor, 8 rows a block (LOCAL), the 100-long reduce
grouped whole (GROUP) and then padded to 128 (PADTO)."""
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

def mean_sq(opts:tuple[Opt, ...]|None) -> np.ndarray:
  global OPTS
  x = Tensor(np.random.default_rng(0).standard_normal((64, 100)).astype(np.float32)).realize()
  OPTS = opts
  try: return (x * x).mean(-1).numpy()
  finally: OPTS = None

if __name__ == "__main__":
  ref = mean_sq(None)
  for opts in [(Opt(OptOps.LOCAL, 0, 8), Opt(OptOps.GROUP, 0, 0)), (Opt(OptOps.LOCAL, 0, 8), Opt(OptOps.GROUP, 0, 0), Opt(OptOps.PADTO, 2, 32))]:
    try: got = mean_sq(opts)
    except Exception as e: print(f"{[(o.op.name, o.axis, o.arg) for o in opts]}: does not apply here ({type(e).__name__}: {e})"); continue
    err = float(np.nanmax(np.abs(got - ref))) if np.isfinite(got).all() else float("nan")
    print(f"{[(o.op.name, o.axis, o.arg) for o in opts]}: max abs error {err:.3g}, {'ok' if err < 1e-3 else 'WRONG'}")
