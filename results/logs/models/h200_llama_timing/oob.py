"""Whether the LLaMA block's breaking gate/up config (wrong.py: right alone and without TinyJit, wrong under it) writes outside its
output: each of the kernel's buffers is a view into a larger one with a guard zone of GUARD bytes on each side, filled with a
pattern; after a run, any guard byte changed is an out-of-bounds write the per-kernel check (outputs only) cannot see. The
right config of c2's r2 (same kernel) is the control. Checked on the CPU device with a CPU kernel (guards intact).
  python3 results/logs/models/h200_llama_timing/oob.py OUT.json"""
import json, os, sys
from pathlib import Path
import numpy as np
sys.path.insert(0, "scripts")
from tinygrad import dtypes
from tinygrad.device import Buffer
from tinygrad.uop.ops import UOp
from dataset.kernel import opts_from_json
from dataset.timing import _copyin, _copyout
from search.measure import Measurer, Budget
GUARD = 1 << 16   # bytes each side: a multiple of any alignment a kernel's vector loads and stores need
D, DEV = Path(__file__).parent, os.environ.get("DEV", "CUDA")

def guarded_run(prg, bufs:list[Buffer], var_vals:dict) -> list[dict]:
  """`prg` run once on copies of `bufs` inside guarded views; per buffer, how many guard bytes before and after it changed."""
  bases, views = [], []
  for b in bufs:
    nbytes = b.size*b.dtype.itemsize
    base = Buffer(b.device, nbytes + 2*GUARD, dtypes.uint8).ensure_allocated()
    _copyin(base, np.full(nbytes + 2*GUARD, 0xA5, dtype=np.uint8))
    v = Buffer(b.device, b.size, b.dtype, base=base, offset=GUARD).ensure_allocated()
    _copyin(v, _copyout(b))
    bases.append(base); views.append(v)
  from tinygrad.engine.realize import time_call
  next(time_call(prg.call(*[UOp.from_buffer(v) for v in views]), var_vals))
  out = []
  for base in bases:
    raw = _copyout(base).view(np.uint8)
    out.append({"before": int((raw[:GUARD] != 0xA5).sum()), "after": int((raw[-GUARD:] != 0xA5).sum())})
  return out

if __name__ == "__main__":
  rows = {r["index"]: r for r in json.loads((D / "r4_warm.tune.json").read_text())}
  right = {r["index"]: r for r in json.loads((D / "r2_def.tune.json").read_text())}
  if DEV == "CPU":   # the mechanics alone: a CPU kernel with its hand-coded config
    from dataset.corpus import parse_variant
    from dataset.kernel import Kernel, kernel_asts
    ast = kernel_asts(*parse_variant("gemm:m=64:k=64:n=64:fp32").build("CPU"))[0]
    cases = [("cpu_gemm_hand", Kernel(ast.key.hex(), ast, "gemm", "t", "t"), None)]
  else:
    from bench_models import build
    from search.onnx_model import open_model
    mod, inputs = build("llama_block_s512_fp16", DEV)
    _, _, kernels, _, _ = open_model(mod, inputs, DEV, "llama_block_s512_fp16")
    k = next(k for k in kernels if k.key == rows[8]["key"])
    cases = [("r4_breaking", k, rows[8]["opts"]), ("r2_right", k, right[8]["opts"])]
  res = {}
  for name, k, opts in cases:
    m = Measurer(k, DEV, Budget(), workers=0)
    o = m.hand if opts is None else tuple(opts_from_json(opts))
    m.measure([o])
    res[name] = {"check": m.verify(o), "guards": guarded_run(m.progs[o], m.bench.bufs, m.bench.var_vals)}
    print(name, res[name], flush=True)
    m.close()
  Path(sys.argv[1]).write_text(json.dumps(res, indent=1))
