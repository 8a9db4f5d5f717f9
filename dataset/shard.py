"""Stores measured elsewhere (a GPU host's returned store, a run's new rows) merged into the main store, once: a row the main
store holds is not added again, and a finished row replaces only a pending one (dataset.store.Store.merge).

  python -m dataset.shard merge dataset/data/cuda.sqlite <returned>/new.sqlite.gz
  python -m dataset.shard merge out/new.sqlite /tmp/run.sqlite --since 1764120000   # only a run's new rows: a store to send back

Generation over several GPUs or hosts is generate-dataset --ray (dataset.ray_generate), which merges as it goes."""
from __future__ import annotations
import argparse, gzip, shutil, sys, tempfile
from pathlib import Path
from dataset.kernel import ASTError, Kernel
from dataset.store import Store, StoreError

def check_asts(path:str|Path, name:str|Path|None=None):
  """Every kernel AST of a store loads as an AST (dataset.kernel's restricted unpickler): a shard from another host must not bring a
  pickle that runs code when a later run loads it. Raises StoreError (ASTError) naming the shard (`name`, default `path`) and kernel."""
  s = Store(path, readonly=True)
  try:
    for r in s.kernels():
      try: Kernel.ast_from_blob(r["ast"])
      except ASTError as e: raise ASTError(f"{name or path}: kernel {r['key']}: {e}") from None
  finally: s.close()

def merge(dst:str|Path, srcs:list[str|Path], since:float|None=None) -> dict[str, int]:
  """Every shard merged into dst (with `since`, only the rows finished since then): measurements added per shard. A shard may be
  gzipped (NAME.sqlite.gz, as the GPU host returns them): it is read from a decompressed temporary copy. Every shard's ASTs are checked
  first (check_asts): one that fails adds nothing, nor does any other."""
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
    try: return {name: s.merge(f, since=since) for name, f in files.items()}
    finally: s.close(compact=True)

def main(argv=None) -> int:
  ap = argparse.ArgumentParser("dataset.shard", description=__doc__.split("\n")[0])
  sub = ap.add_subparsers(dest="cmd", required=True)
  mp = sub.add_parser("merge", help="merge stores into the main store (created if missing)")
  mp.add_argument("dst"); mp.add_argument("srcs", nargs="+")
  mp.add_argument("--since", type=float, default=None, help="only rows finished since this time (seconds since the epoch)")
  a = ap.parse_args(argv)
  try:
    for p, n in merge(a.dst, a.srcs, a.since).items(): print(f"{p}: {n} measurements added")
  except StoreError as e: print(f"dataset.shard: error: {e}", file=sys.stderr); return 2
  return 0

if __name__ == "__main__": sys.exit(main())
