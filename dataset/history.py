"""Measured history: the fastest configs the dataset found for each of its kernels, indexed by loop nest, so that a kernel with the
same nest starts its search from them (TVM's apply_history_best, and its transfer from similar tasks).

A nest is the scheduled kernel's full shape, axis types and buffer dtypes: the same opts apply to every kernel of a nest and do the
same to its loops. ResNet-50 exported through ONNX gives mostly other ASTs than the corpus' ResNet-50 (3 of 27 batch-32 keys
match; the others differ in fused epilogues and op order), but the same nests. Why it pays (H200, separate runs, so only a pointer):
the dataset's best for the nest of batch 32's 2048<-512 1x1 conv on 7x7 measured 252 us, where the learned search from the cost model alone ended
at 669 us and BEAM=2 at 310 us on the exported kernel.

Built from a measurement store, with the shards beside it (dataset.shard), once per device (train-cost-model writes
models/history_<arch>.json next to the model); a search then pays only for timing the few configs it takes from here. Configs are
kept with their time relative to their kernel's best.

  python -m dataset.history dataset/data/cuda.sqlite [--out models/history_sm_90.json] [--no-shards]"""
from __future__ import annotations
import argparse, json, sys
from pathlib import Path
from tinygrad.codegen.opt import Opt
from tinygrad.codegen.opt.postrange import Scheduler
from tinygrad.uop.ops import Ops
from dataset.device import renderer_for
from dataset.kernel import Kernel, TINYGRAD_VERSION, opts_from_json, opts_to_json, scheduler
from dataset.sampler import replay
from dataset.shard import resolve
from dataset.store import Store, StoreError

MODELS = Path(__file__).resolve().parents[1] / "models"
TOP = 8           # configs kept per kernel
MAX_REL = 1.5     # ... within this factor of its best

class HistoryError(RuntimeError): pass

def nest(k:Scheduler) -> str:
  dts = sorted({str(u.dtype) for u in k.ast.toposort() if u.op is Ops.PARAM})
  return f"{tuple(k.full_shape)}|{','.join(t.name for t in k.axis_types)}|{';'.join(dts)}"

def default_path(device:str, arch:str|None=None) -> Path:
  return MODELS / (f"history_{arch or 'sm_90'}.json" if device == "CUDA" else f"history_{device.lower()}.json")

class History:
  """nest -> [(relative time, opts, kernel key)], best first; `candidates` gives a kernel the configs of its nest that replay."""
  def __init__(self, nests:dict[str, list[tuple[float, tuple[Opt, ...], str]]], meta:dict):
    self.nests, self.meta = nests, meta

  @classmethod
  def build(cls, store_path:str|Path, device:str|None=None, top:int=TOP, max_rel:float=MAX_REL, shards:bool=True) -> History:
    try:
      src = resolve(store_path, shards)
      s = Store(src.path, readonly=True)
      try:
        devs = s.devices()
        if device is None and len(devs) != 1: raise HistoryError(f"{store_path} has {len(devs)} devices: name one")
        device = device or next(iter(devs))
        if device not in devs: raise HistoryError(f"{store_path} has no measurements of {device!r}")
        arch, measured = devs[device]["arch"], s.measured(device)
        backend = "CUDA" if arch.startswith("sm_") else "CPU"
        kernels = s.kernels(backend)
      finally: s.close()
    except StoreError as e: raise HistoryError(str(e)) from None
    ren = renderer_for(backend, arch if backend == "CUDA" else None, compiler=False)
    nests: dict[str, list] = {}
    for k in kernels:
      ok = sorted((t, o) for o, st, t, _ in measured.get(k["key"], []) if st == "ok" and t is not None and t > 0)
      if not ok: continue
      try: n = nest(scheduler(Kernel.ast_from_blob(k["ast"]), ren))
      except Exception: continue   # a kernel this tinygrad cannot schedule any more has no history
      rows = [(t/ok[0][0], opts_from_json(o), k["key"]) for t, o in ok if t/ok[0][0] <= max_rel]
      nests.setdefault(n, []).extend(list({r[1]: r for r in rows}.values())[:top])
    for rows in nests.values(): rows.sort(key=lambda r: r[0])
    return cls(nests, {"device": device, "arch": arch, "tinygrad": TINYGRAD_VERSION, "dataset": str(store_path), "shards": list(src.shards),
                       "top": top, "max_rel": max_rel, "kernels": sum(len({r[2] for r in v}) for v in nests.values()), "nests": len(nests)})

  def candidates(self, base:Scheduler, key:str|None=None, n:int=TOP) -> list[tuple[Opt, ...]]:
    """Up to n configs of `base`'s nest: those of kernel `key` (its AST key: the same kernel measured) first, then by relative
    time; only those that apply."""
    rows = sorted(self.nests.get(nest(base), []), key=lambda r: (r[2] != key, r[0]))
    out: list[tuple[Opt, ...]] = []
    for _, o, _ in rows:
      if len(out) >= n: break
      if o not in out and replay(base, o) is not None: out.append(o)
    return out

  @classmethod
  def resolve(cls, history:str|Path|bool|None, device:str, arch:str) -> History|None:
    """A search's history: False none; None the shipped one for this device and arch if there is one; True that one, which must
    exist; a path that file. Raises HistoryError."""
    if history is False: return None
    p = default_path(device, arch) if history is None or history is True else Path(history)
    if history is None and not p.is_file(): return None
    h = cls.load(p, arch)
    h.meta["path"] = str(p)
    return h

  def save(self, path:str|Path):
    nests = {k: [[round(r, 4), opts_to_json(o), key] for r, o, key in v] for k, v in self.nests.items()}
    Path(path).write_text(json.dumps({"meta": self.meta, "nests": nests}, separators=(",", ":")))

  @classmethod
  def load(cls, path:str|Path, arch:str|None=None) -> History:
    try: d = json.loads(Path(path).read_text())
    except FileNotFoundError: raise HistoryError(f"no history file {path}") from None
    except (OSError, ValueError) as e: raise HistoryError(f"{path} is not a history file ({e})") from None
    try:
      meta = d["meta"]
      nests = {k: [(float(r), opts_from_json(o), key) for r, o, key in v] for k, v in d["nests"].items()}
    except (KeyError, TypeError, ValueError) as e: raise HistoryError(f"{path} is not a history file (bad entry: {e!r})") from None
    if meta.get("tinygrad") != TINYGRAD_VERSION:
      raise HistoryError(f"{path} was built with tinygrad {meta.get('tinygrad')}, this is {TINYGRAD_VERSION}: "
                         "its opts may not apply")
    if arch is not None and meta.get("arch") != arch: raise HistoryError(f"{path} is of {meta.get('arch')}, this device is {arch}")
    return cls(nests, meta)

def main(argv=None) -> int:
  ap = argparse.ArgumentParser("dataset.history", description=__doc__.split("\n")[0])
  ap.add_argument("dataset"); ap.add_argument("--device", default=None, help="the store's measured device (default: its only one)")
  ap.add_argument("--out", default=None, help="default: models/history_<arch>.json (models/history_cpu.json for the CPU)")
  ap.add_argument("--top", type=int, default=TOP)
  ap.add_argument("--no-shards", action="store_true", help="the store alone, without the shards beside it")
  a = ap.parse_args(argv)
  try: h = History.build(a.dataset, a.device, a.top, shards=not a.no_shards)
  except HistoryError as e: print(f"dataset.history: error: {e}", file=sys.stderr); return 2
  arch = h.meta["arch"]
  out = Path(a.out) if a.out else default_path("CUDA" if arch.startswith("sm_") else "CPU", arch)
  h.save(out)
  print(f"wrote {out}: {h.meta['kernels']} kernels in {h.meta['nests']} loop nests", file=sys.stderr)
  return 0

if __name__ == "__main__": sys.exit(main())
