"""Registers and stack frame of the CUBINs of a kernel's best config and its one-opt extensions (the cost model's worst misses
are such cliffs): compiled here with NVRTC for sm_90, no GPU needed. A frame (local memory) marks the cliff configs.
  NVRTC_PATH=.../libnvrtc.so.12 python scripts/cliff_resources.py dataset/data/cuda.sqlite NAME [NAME ...]"""
import json, struct, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from dataset.store import Store
from dataset.kernel import Kernel, scheduler, opts_from_json
from dataset.device import renderer_for
from dataset.compile import optimized_ast, compile_ast

def resources(cubin:bytes) -> dict[str, int]:
  """Registers per thread (EIATTR_REGCOUNT, 0x2f) and stack frame bytes (EIATTR_FRAME_SIZE, 0x11) from a cubin's .nv.info."""
  shoff, = struct.unpack_from("<Q", cubin, 0x28)
  shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3a)
  sh = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i*shentsize) for i in range(shnum)]
  strs = sh[shstrndx][4]
  name = lambda off: cubin[strs+off:cubin.index(b"\0", strs+off)].decode()
  out = {}
  for h in sh:
    if name(h[0]) != ".nv.info": continue
    off, end = h[4], h[4] + h[5]
    while off < end:   # records: format byte, attribute byte, u16 (a size for format 0x04, else the value itself)
      fmt, attr, size = struct.unpack_from("<BBH", cubin, off)
      if fmt == 0x04 and size == 8 and attr in (0x2f, 0x11): out["regs" if attr == 0x2f else "frame"] = struct.unpack_from("<II", cubin, off+4)[1]
      off += 4 + (size if fmt == 0x04 else 0)
  return out

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
