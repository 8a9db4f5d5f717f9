"""tinygrad 0.14.0: a reduce axis padded by PADTO and then unrolled computes wrong. kerntune's fuzzer (search.fuzz) found it;
this script needs tinygrad alone. tinygrad refuses the other order (codegen/opt/postrange.py: "cannot pad upcasted") but not this.
  python results/tinygrad_bugs/padto_then_unroll.py             # the CPU device; DEV=CUDA on a GPU
A batched matmul (3, 64, 33) @ (3, 33, 16): its 33-long reduce axis padded to 48, then unrolled by 4."""
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

def bmm(opts:tuple[Opt, ...]|None) -> np.ndarray:
  global OPTS
  rng = np.random.default_rng(0)
  a, b = (Tensor(rng.standard_normal(s).astype(np.float32)).realize() for s in ((3, 64, 33), (3, 33, 16)))
  OPTS = opts
  try: return (a @ b).numpy()
  finally: OPTS = None

if __name__ == "__main__":
  ref = bmm(None)
  for opts in [(Opt(OptOps.PADTO, 3, 16),), (Opt(OptOps.PADTO, 3, 16), Opt(OptOps.UNROLL, 0, 4))]:   # (33 unrolled by 4 alone is refused)
    got = bmm(opts)
    err = float(np.nanmax(np.abs(got - ref))) if np.isfinite(got).all() else float("nan")
    print(f"{[(o.op.name, o.axis, o.arg) for o in opts]}: max abs error {err:.3g}, {'ok' if err < 1e-3 else 'WRONG'}")
