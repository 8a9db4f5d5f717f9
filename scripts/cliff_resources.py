"""Registers and stack frame of the CUBINs of a kernel's best config and its one-opt extensions (the cost model's worst misses
are such cliffs): compiled here with NVRTC for sm_90, no GPU needed. A frame (local memory) marks the cliff configs.
  NVRTC_PATH=.../libnvrtc.so.12 python scripts/cliff_resources.py dataset/data/cuda.sqlite NAME [NAME ...]"""
import json, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from dataset.store import Store
from dataset.kernel import Kernel, scheduler, opts_from_json
from dataset.device import renderer_for
from dataset.compile import optimized_ast, compile_ast
from dataset.resources import resources

def main():
  store, names = sys.argv[1], sys.argv[2:]
  ren = renderer_for("CUDA")
  ren.compiler.ptx = False   # SASS, as the host compiles: registers and frame are known only after ptxas
  s = Store(store, readonly=True)
  rows = {r["name"]: r for r in s.kernels()}
  for n in names:
    r = rows[n]
    base = scheduler(Kernel.ast_from_blob(r["ast"]), ren)
    ms = [(json.loads(o), t) for o, t in s.db.execute("SELECT opts, time_s FROM measurements WHERE kernel=? AND status='ok' ORDER BY time_s", (r["key"],))]
    best, tb = ms[0]
    print(n)
    for o, t in [(best, tb)] + [(o, t) for o, t in ms if o[:len(best)] == best and len(o) == len(best) + 1]:
      prg = compile_ast(optimized_ast(base, opts_from_json(o)), ren)
      lib = next(u.arg for u in prg.src if isinstance(u.arg, bytes))
      print(f"  {'best' if o is best else '+ ' + json.dumps(o[-1]):28} {t/tb:6.2f}x  {resources(lib)}")

if __name__ == "__main__": main()
