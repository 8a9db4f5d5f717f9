"""Generation sharded over several GPUs or hosts: split the kernels of some variants into shard stores, measure each shard with its
own generate-dataset (one per GPU), then merge the shards into the main store.

  python -m dataset.shard split --base dataset/data/cuda.sqlite --kernels all --shards 4 --out-dir out/shards   # needs no device
  CUDA_VISIBLE_DEVICES=$i generate-dataset --kernels "$(cat out/shards/shard$i.txt)" --out out/shards/shard$i.sqlite ...
  python -m dataset.shard merge dataset/data/cuda.sqlite out/shards/shard*.sqlite

A shard holds only kernels that neither the base store has measured nor an earlier shard holds, so no kernel is measured twice; variants go to
the shard with the fewest kernels so far (largest variants first), which balances the GPUs' work."""
from __future__ import annotations
import argparse, sys
from pathlib import Path
from dataset.corpus import ShapeError, extract, select
from dataset.store import Store, StoreError

def split(base:str|None, kernels:str, shards:int, out_dir:str|Path, device:str="CUDA") -> list[tuple[Path, list[str], int]]:
  """Shard stores out_dir/shard{i}.sqlite (with their variant lists in shard{i}.txt): (store, variant names, kernels) per shard."""
  seen: set[str] = set()
  if base is not None:   # a base that is not there is an error (StoreError), not an empty store: everything would be measured again
    b = Store(base, readonly=True); seen = b.measured_keys(); b.close()
  found = [(v, ks) for v, ks in extract(select(kernels, device), device, seen) if ks]
  found.sort(key=lambda vk: -len(vk[1]))
  parts: list[list] = [[] for _ in range(shards)]
  for vk in found: min(parts, key=lambda p: sum(len(ks) for _, ks in p)).append(vk)
  out_dir = Path(out_dir); out_dir.mkdir(parents=True, exist_ok=True)
  made = []
  for i, part in enumerate(parts):
    s = Store(path := out_dir / f"shard{i}.sqlite")
    try:
      for v, ks in part: s.add_variant(v.name, device, ks, [(None, None)]*len(ks))
    finally: s.close(compact=True)
    (out_dir / f"shard{i}.txt").write_text(",".join(v.name for v, _ in part) + "\n")
    made.append((path, [v.name for v, _ in part], sum(len(ks) for _, ks in part)))
  return made

def merge(dst:str|Path, srcs:list[str|Path]) -> dict[str, int]:
  """Every shard merged into dst: measurements added per shard."""
  s = Store(dst)
  try: return {str(p): s.merge(p) for p in srcs}
  finally: s.close(compact=True)

def main(argv=None) -> int:
  ap = argparse.ArgumentParser("dataset.shard", description=__doc__.split("\n")[0])
  sub = ap.add_subparsers(dest="cmd", required=True)
  sp = sub.add_parser("split", help="extract new kernels into shard stores (needs no device)")
  sp.add_argument("--base", help="the main store: kernels it holds are left out"); sp.add_argument("--kernels", required=True)
  sp.add_argument("--shards", type=int, required=True); sp.add_argument("--out-dir", required=True)
  sp.add_argument("--device", default="CUDA")
  mp = sub.add_parser("merge", help="merge shard stores into the main store")
  mp.add_argument("dst"); mp.add_argument("srcs", nargs="+")
  a = ap.parse_args(argv)
  try:
    if a.cmd == "split":
      if a.shards < 1: ap.error("--shards must be >= 1")
      for path, names, n in split(a.base, a.kernels, a.shards, a.out_dir, a.device): print(f"{path}: {len(names)} variants, {n} kernels")
    else:
      for p, n in merge(a.dst, a.srcs).items(): print(f"{p}: {n} measurements added")
  except (StoreError, ShapeError) as e: print(f"dataset.shard: error: {e}", file=sys.stderr); return 2
  except KeyError as e: print(f"dataset.shard: error: {e.args[0]}", file=sys.stderr); return 2
  return 0

if __name__ == "__main__": sys.exit(main())
