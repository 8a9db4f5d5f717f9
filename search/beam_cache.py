"""The BEAM=2 comparison cache of the whole-model benchmark (scripts/bench_models.py, tune-model --compare-beam): per-kernel
results of tinygrad's own BEAM=2 in DIR/beam2.gpu*.json, one file per GPU worker, every kernel in exactly one file. A host call
carries a copy of the cache and returns its files; merge_beam folds them back in."""
from __future__ import annotations
import json
from pathlib import Path

def beam_done(cache:Path) -> dict[str, dict]:
  """Every kernel's BEAM=2 result in `cache`, by kernel key."""
  out = {}
  for f in sorted(cache.glob("beam2.gpu*.json")):
    try: out.update(json.loads(f.read_text()))
    except (OSError, json.JSONDecodeError): pass   # being replaced by its worker: read again next time
  return out

def drop_beam(cache:Path, keys:set[str]) -> int:
  """These kernels' BEAM=2 results out of every cache file (so BEAM=2 searches them again); returns how many were there."""
  n = 0
  for f in sorted(cache.glob("beam2.gpu*.json")):
    d = json.loads(f.read_text())
    if (hit := keys & d.keys()): n += len(hit); f.write_text(json.dumps({k: v for k, v in d.items() if k not in hit}, indent=1))
  return n

def model_keys(cache:Path, models:list[str]) -> set[str]:
  """The kernels of these models that `cache` has BEAM=2 results for: by each entry's name (MODEL#i), and by the model's cached
  tuned.json where there is one (a kernel two models share is named after one of them)."""
  keys = {k for k, v in beam_done(cache).items() if str(v.get("name", "")).split("#")[0] in models}
  for m in models:
    if (f := cache / f"{m}.tuned.json").is_file(): keys |= set(json.loads(f.read_text()))
  return keys

def merge_beam(src:Path, cache:Path) -> int:
  """BEAM=2's results from a host call (src/beam2.gpu*.json) into `cache`: a kernel searched again there replaces its old entry,
  which leaves every other file of `cache` (each kernel is in one file only). Returns the entries that are new or replaced. A call
  carries a copy of the whole cache, so its other entries may be older than `cache`'s (merged from a later call meanwhile): an entry
  never replaces one searched later (`ts`; entries without it count as oldest)."""
  old = beam_done(cache)
  changed = {k: v for k, v in beam_done(src).items() if old.get(k) != v and v.get("ts", 0) >= old.get(k, {}).get("ts", 0)}
  drop_beam(cache, set(changed))
  f = cache / "beam2.gpu0.json"
  f.write_text(json.dumps({**(json.loads(f.read_text()) if f.is_file() else {}), **changed}, indent=1))
  return len(changed)
