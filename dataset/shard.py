"""Generation sharded over several GPUs or hosts: split the kernels of some variants into shard stores, measure each shard with its
own generate-dataset (one per GPU), then merge the shards into the main store.

  python -m dataset.shard split --base dataset/data/cuda.sqlite --kernels all --shards 4 --out-dir out/shards   # needs no device
  CUDA_VISIBLE_DEVICES=$i generate-dataset --kernels "$(cat out/shards/shard$i.txt)" --out out/shards/shard$i.sqlite ...
  python -m dataset.shard merge dataset/data/cuda.sqlite out/shards/shard*.sqlite
  python -m dataset.shard split --base dataset/data/cuda.sqlite --measured --shards 4 --out-dir out/shards  # more of measured kernels

A shard holds only kernels that neither the base store has measured nor an earlier shard holds, so no kernel is measured twice; variants go to
the shard with the fewest kernels so far (largest variants first), which balances the GPUs' work. With --measured it is the other
way round: the base's measured kernels are split, each with its measurements, so that generate-dataset resumes them to a larger
--samples-per-kernel (or steers more of them with --model) and merge adds only the new rows."""
from __future__ import annotations
import argparse, gzip, shutil, sys, tempfile
from pathlib import Path
from dataset.corpus import ShapeError, extract, select
from dataset.kernel import ASTError, Kernel
from dataset.store import Store, StoreError

def _balanced(groups:list[tuple[str, int]], shards:int) -> list[list[str]]:
  """Names of (name, size) groups dealt to `shards` parts, largest first, each to the part with the least so far."""
  parts: list[list[tuple[str, int]]] = [[] for _ in range(shards)]
  for g in sorted(groups, key=lambda g: -g[1]): min(parts, key=lambda p: sum(n for _, n in p)).append(g)
  return [[name for name, _ in p] for p in parts]

def _write(out_dir:Path, i:int, names:list[str], fill) -> tuple[Path, list[str], int]:
  s = Store(path := out_dir / f"shard{i}.sqlite")
  try: fill(s)
  finally: n = len(s.kernel_keys()); s.close(compact=True)
  (out_dir / f"shard{i}.txt").write_text(",".join(names) + "\n")
  return path, names, n

def split(base:str|None, kernels:str, shards:int, out_dir:str|Path, device:str="CUDA") -> list[tuple[Path, list[str], int]]:
  """Shard stores out_dir/shard{i}.sqlite (with their variant lists in shard{i}.txt): (store, variant names, kernels) per shard."""
  seen: set[str] = set()
  if base is not None:   # a base that is not there is an error (StoreError), not an empty store: everything would be measured again
    b = Store(base, readonly=True); seen = b.measured_keys(); b.close()
  found = {v.name: (v, ks) for v, ks in extract(select(kernels, device), device, seen) if ks}
  out_dir = Path(out_dir); out_dir.mkdir(parents=True, exist_ok=True)
  def fill(names): return lambda s: [s.add_variant(n, device, found[n][1], [(None, None)]*len(found[n][1])) for n in names]
  return [_write(out_dir, i, names, fill(names)) for i, names in enumerate(_balanced([(n, len(ks)) for n, (_, ks) in found.items()], shards))]

def split_measured(base:str, shards:int, out_dir:str|Path, device:str="CUDA", variants:list[str]|None=None) -> list[tuple[Path, list[str], int]]:
  """The base's measured kernels (of `variants` only, if given), whole variants with their devices and finished measurements,
  split into shard stores (no extraction: the kernels' ASTs are copied)."""
  b = Store(base, readonly=True)   # StoreError if it is not there
  measured = b.measured_keys()
  sizes: dict[str, int] = {}
  for r in b.kernels(device):
    if r["key"] in measured and (variants is None or r["variant"] in variants): sizes[r["variant"]] = sizes.get(r["variant"], 0) + 1
  b.close()
  if variants is not None and (missing := set(variants) - set(sizes)): raise StoreError(f"{base} has no measured kernels of {sorted(missing)}")
  def fill(names:list[str]): return lambda s: s.merge(base, variants=names)
  out_dir = Path(out_dir); out_dir.mkdir(parents=True, exist_ok=True)
  return [_write(out_dir, i, names, fill(names)) for i, names in enumerate(_balanced(list(sizes.items()), shards))]

def check_asts(path:str|Path, name:str|Path|None=None):
  """Every kernel AST of a store loads as an AST (dataset.kernel's restricted unpickler): a shard from another host must not bring a
  pickle that runs code when a later run loads it. Raises StoreError (ASTError) naming the shard (`name`, default `path`) and kernel."""
  s = Store(path, readonly=True)
  try:
    for r in s.kernels():
      try: Kernel.ast_from_blob(r["ast"])
      except ASTError as e: raise ASTError(f"{name or path}: kernel {r['key']}: {e}") from None
  finally: s.close()

def merge(dst:str|Path, srcs:list[str|Path]) -> dict[str, int]:
  """Every shard merged into dst: measurements added per shard. A shard may be gzipped (NAME.sqlite.gz, as the GPU host returns
  them): it is read from a decompressed temporary copy. Every shard's ASTs are checked first (check_asts): one that fails adds nothing,
  nor does any other."""
  with tempfile.TemporaryDirectory() as d:
    files: dict[str, Path] = {}
    for i, p in enumerate(map(Path, srcs)):
      if p.suffix != ".gz": files[str(p)] = p; continue
      try:
        with gzip.open(p, "rb") as fi, open(tmp := Path(d) / f"{i}.{p.stem}", "wb") as fo: shutil.copyfileobj(fi, fo)
      except (OSError, EOFError) as e: raise StoreError(f"{p} is not a readable gzipped store: {e}") from None
      files[str(p)] = tmp
    for name, f in files.items(): check_asts(f, name)
    s = Store(dst)
    try: return {name: s.merge(f) for name, f in files.items()}
    finally: s.close(compact=True)

def main(argv=None) -> int:
  ap = argparse.ArgumentParser("dataset.shard", description=__doc__.split("\n")[0])
  sub = ap.add_subparsers(dest="cmd", required=True)
  sp = sub.add_parser("split", help="extract new kernels into shard stores (needs no device)")
  sp.add_argument("--base", help="the main store: kernels it has measured are left out")
  sp.add_argument("--kernels", help="variants to split (as generate-dataset --kernels); with --measured: a comma list of the base's variant names")
  sp.add_argument("--measured", action="store_true", help="split the base's measured kernels instead, with their measurements")
  sp.add_argument("--shards", type=int, required=True); sp.add_argument("--out-dir", required=True)
  sp.add_argument("--device", default="CUDA")
  mp = sub.add_parser("merge", help="merge shard stores into the main store")
  mp.add_argument("dst"); mp.add_argument("srcs", nargs="+")
  a = ap.parse_args(argv)
  try:
    if a.cmd == "split":
      if a.shards < 1: ap.error("--shards must be >= 1")
      if a.measured and a.base is None: ap.error("--measured takes --base")
      if not a.measured and a.kernels is None: ap.error("--kernels is required (or --measured)")
      made = split_measured(a.base, a.shards, a.out_dir, a.device, a.kernels.split(",") if a.kernels else None) if a.measured else split(a.base, a.kernels, a.shards, a.out_dir, a.device)
      for path, names, n in made: print(f"{path}: {len(names)} variants, {n} kernels")
    else:
      for p, n in merge(a.dst, a.srcs).items(): print(f"{p}: {n} measurements added")
  except (StoreError, ShapeError) as e: print(f"dataset.shard: error: {e}", file=sys.stderr); return 2
  except KeyError as e: print(f"dataset.shard: error: {e.args[0]}", file=sys.stderr); return 2
  return 0

if __name__ == "__main__": sys.exit(main())
