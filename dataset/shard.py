"""Shards: each run's new rows as an immutable gzipped store, read with the base store they sit beside as one dataset.

A dataset is a frozen base store plus the shards in the shards/ directory beside it (<devicekind>_<date>_<what>.sqlite.gz), each
exported once, so that the repository grows by what was measured and never by another copy of the base. Readers name the base and
get it with its device's shards as one store (resolve: a working copy in the cache directory, built once); writers write the path
they are given.

  python -m dataset.shard export out/run.sqlite --since 1764120000 --out dataset/data/shards/h200_2026-11-26_ray.sqlite.gz
  python -m dataset.shard loaded dataset/data/cuda.sqlite        # the file readers open, and what each shard added
  python -m dataset.shard merge out/new.sqlite /tmp/run.sqlite --since 1764120000   # stores merged into one (created if missing)

Merging is idempotent: a row the destination holds (same kernel, opts and device) is not added again, and a finished row replaces
only a pending one (dataset.store.Store.merge). Generation over several GPUs or hosts is generate-dataset --ray (dataset.ray_generate),
which merges as it goes."""
from __future__ import annotations
import argparse, gzip, hashlib, json, os, shutil, sqlite3, sys, tempfile
from dataclasses import dataclass
from pathlib import Path
from dataset.kernel import ASTError, Kernel
from dataset.paths import cache_dir, cannot_write
from dataset.store import Store, StoreError

SHARDS = "shards"    # a base's shards: <its directory>/shards/*.sqlite.gz
COPY_FORMAT = 1      # the working copy's layout: a change here builds them again

def check_asts(path:str|Path, name:str|Path|None=None):
  """Every kernel AST of a store loads as an AST (dataset.kernel's restricted unpickler): a shard from another host must not bring a
  pickle that runs code when a later run loads it. Raises StoreError (ASTError) naming the shard (`name`, default `path`) and kernel."""
  s = Store(path, readonly=True, name=name)
  try:
    for r in s.kernels():
      try: Kernel.ast_from_blob(r["ast"])
      except ASTError as e: raise ASTError(f"{name or path}: kernel {r['key']}: {e}") from None
  except sqlite3.DatabaseError as e: raise StoreError(f"{name or path} is not a kerntune dataset: {e}") from None
  finally: s.close()

def _unpack(p:Path, d:str|Path) -> Path:
  """A store as a plain SQLite file: a gzipped one (NAME.sqlite.gz) decompressed into the directory d, any other as it is."""
  if p.suffix != ".gz": return p
  fd, tmp = tempfile.mkstemp(dir=d, prefix=p.stem + "-")
  try:
    with gzip.open(p, "rb") as fi, os.fdopen(fd, "wb") as fo: shutil.copyfileobj(fi, fo)
  except (OSError, EOFError) as e: raise StoreError(f"{p} is not a readable gzipped store: {e}") from None
  return Path(tmp)

def merge(dst:str|Path, srcs:list[str|Path], since:float|None=None) -> dict[str, int]:
  """Every store of srcs merged into dst (with `since`, only the rows finished since then): measurements added per store. A store
  may be gzipped (NAME.sqlite.gz: a shard, or what the GPU host returns). Every store's ASTs are checked first (check_asts): one that
  fails adds nothing, nor does any other."""
  with tempfile.TemporaryDirectory() as d:
    files = {str(p): _unpack(Path(p), d) for p in srcs}
    for name, f in files.items(): check_asts(f, name)
    s = Store(dst)
    try: return {name: s.merge(f, since=since) for name, f in files.items()}
    finally: s.close(compact=True)

def _devices(s:Store) -> set[str]:
  """The devices a store's finished rows were measured on: what a shard is of, whatever its name says."""
  return {d for (d,) in s.db.execute("SELECT DISTINCT device FROM measurements WHERE status != 'pending'")}

def export(srcs:list[str|Path], out:str|Path, since:float|None=None) -> dict:
  """A shard: the finished rows of srcs (with `since`, those finished since then: a run's new rows) and their kernels, in one
  gzipped store of one device written once to `out` (NAME.sqlite.gz). Returns its device, rows and ok rows."""
  out = Path(out)
  if not out.name.endswith(".sqlite.gz"): raise StoreError(f"{out}: a shard is a gzipped store, NAME.sqlite.gz")
  if out.exists(): raise StoreError(f"{out} exists: a shard is written once (a run's rows go into a shard of their own)")
  if why := cannot_write(out): raise StoreError(why)
  with tempfile.TemporaryDirectory() as d:
    merge(f := Path(d) / "shard.sqlite", srcs, since)
    s = Store(f)
    try:
      devs, rows, ok = _devices(s), s.count(), s.count("ok")
      s.db.execute("VACUUM")   # the smallest file: what every clone carries
    finally: s.close(compact=True)
    if not rows: raise StoreError(f"no finished rows in {', '.join(map(str, srcs))}" + (f" since {since}" if since is not None else ""))
    if len(devs) > 1: raise StoreError(f"rows of {len(devs)} devices ({', '.join(sorted(devs))}): a shard is of one device")
    tmp = out.with_name(f".{out.name}.tmp")
    with open(f, "rb") as fi, open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as fo:
      shutil.copyfileobj(fi, fo)   # mtime 0: the same rows give the same bytes
    os.replace(tmp, out)
  return {"device": devs.pop(), "rows": rows, "ok": ok, "bytes": out.stat().st_size}

# *** reading: a base and its shards as one store ***

@dataclass(frozen=True)
class Loaded:
  path: Path                 # the SQLite file to open: the base itself, or the working copy of it with its shards merged
  shards: dict[str, dict]    # shard file name -> devices, rows, ok, added, added_ok (what it gave the dataset), in merge order
  skipped: dict[str, str]    # shard file name -> why it is not merged (another device's)

def resolve(base:str|Path, shards:bool=True, skip:frozenset[str]=frozenset()) -> Loaded:
  """The dataset a store path names: the store with every shard in its directory's shards/ whose rows were measured on the store's
  devices, merged in name order (its date: oldest first) into a working copy in the cache directory. The copy is built once for
  the files as they are (their sizes and modification times: adding a shard or writing the base builds a new one) and replaces
  the base's earlier copies. With shards=False, or no shards there, the store alone; a gzipped base (NAME.sqlite.gz: a device's
  data committed once, like a shard) is always read through its working copy. `skip`: shard file names left out (read already with
  another store of the same device in the same directory). Raises StoreError, naming a file it cannot read."""
  base = Path(base)
  files = sorted(f for f in (base.parent / SHARDS).glob("*.sqlite.gz") if f.name not in skip) if shards else []
  if not files and base.suffix != ".gz": return Loaded(base, {}, {})   # a gzipped base is read through its working copy
  if not base.is_file(): raise StoreError(f"no dataset at {base}")
  where, stamp = base.resolve(), []
  for f in (base, Path(f"{base}-wal"), *files):   # the WAL of a base being written holds rows its file does not yet
    if f.exists(): stamp.append((f.name, (st := f.stat()).st_size, st.st_mtime_ns))
  prefix = f"{base.stem}-{hashlib.sha256(str(where).encode()).hexdigest()[:8]}-"
  name = prefix + hashlib.sha256(json.dumps([COPY_FORMAT, str(where), stamp]).encode()).hexdigest()[:16]
  d = cache_dir() / "stores"
  try: m = json.loads((d / f"{name}.json").read_text())
  except (OSError, ValueError): m = None
  if m is None or (m["path"] is not None and not Path(m["path"]).is_file()): m = _build(base, files, d, prefix, name)
  return Loaded(Path(m["path"]) if m["path"] else base, m["shards"], m["skipped"])

def _build(base:Path, files:list[Path], d:Path, prefix:str, name:str) -> dict:
  """The working copy `name` of base with the shards of its devices merged, and its manifest; the base's other copies go."""
  if why := cannot_write(d, is_dir=True): raise StoreError(f"the working copy of {base} with its shards: {why}")
  merged, skipped, work, packed = {}, {}, None, base.suffix == ".gz"
  with tempfile.TemporaryDirectory(dir=d) as tmp:
    b = Store(plain := _unpack(base, tmp), readonly=True, name=base)
    try: want = _devices(b)
    except sqlite3.DatabaseError as e: raise StoreError(f"{base} is not a kerntune dataset: {e}") from None
    finally: b.close()
    if packed: check_asts(plain, base)
    def copy():   # the base copied through SQLite: a consistent copy, whatever its journal holds
      src, dst = sqlite3.connect(f"file:{plain}?mode=ro", uri=True), sqlite3.connect(Path(tmp) / "work.sqlite")
      try: src.backup(dst)
      finally: src.close(); dst.close()
      return Store(Path(tmp) / "work.sqlite")
    try:
      if packed: work = copy()
      for f in files:
        s = Store(u := _unpack(f, tmp), readonly=True, name=f)
        try: devs, rows, ok = _devices(s), s.count(), s.count("ok")
        except sqlite3.DatabaseError as e: raise StoreError(f"{f} is not a kerntune dataset: {e}") from None
        finally: s.close()
        if not devs or not devs <= want:
          skipped[f.name] = f"measured on {', '.join(sorted(devs)) or 'nothing'}, {base.name} on {', '.join(sorted(want)) or 'nothing'}"
          continue
        check_asts(u, f)
        if work is None: work = copy()
        before = work.count("ok")
        try: added = work.merge(u)
        except sqlite3.DatabaseError as e: raise StoreError(f"{f} is not a kerntune dataset: {e}") from None
        merged[f.name] = {"devices": sorted(devs), "rows": rows, "ok": ok, "added": added, "added_ok": work.count("ok") - before}
        u.unlink()
    finally:
      if work is not None: work.close(compact=True)
    m = {"base": str(base), "path": str(d / f"{name}.sqlite") if merged or packed else None, "shards": merged, "skipped": skipped}
    if merged or packed: os.replace(Path(tmp) / "work.sqlite", m["path"])
    (t := Path(tmp) / "manifest.json").write_text(json.dumps(m, indent=1))
    os.replace(t, d / f"{name}.json")
  for old in d.glob(prefix + "*"):   # a reader holding an old copy open keeps reading it
    if old.stem != name: old.unlink(missing_ok=True)
  return m

def describe(shards:dict[str, dict], skipped:dict[str, str]) -> list[str]:
  """What each shard of a loaded dataset (Loaded.shards, Loaded.skipped) gave it, a line each."""
  lines = [f"{n}: {s['rows']:,} rows ({s['ok']:,} ok) of {', '.join(s['devices'])}, {s['added']:,} new ({s['added_ok']:,} ok)"
           for n, s in shards.items()]
  return lines + [f"{n}: not merged ({why})" for n, why in skipped.items()]

def main(argv=None) -> int:
  ap = argparse.ArgumentParser("dataset.shard", description=__doc__.split("\n")[0])
  sub = ap.add_subparsers(dest="cmd", required=True)
  ep = sub.add_parser("export", help="a run's rows as a shard, written once")
  ep.add_argument("srcs", nargs="+", help="the run's stores (.sqlite or .sqlite.gz)")
  ep.add_argument("--since", type=float, default=None, help="only rows finished since this time (seconds since the epoch): the run's new rows")
  ep.add_argument("--out", required=True, help="the shard: dataset/data/shards/<devicekind>_<date>_<what>.sqlite.gz")
  lp = sub.add_parser("loaded", help="the file readers of a store open (its working copy with its shards merged), and what each shard added")
  lp.add_argument("store"); lp.add_argument("--no-shards", action="store_true", help="the store alone")
  mp = sub.add_parser("merge", help="merge stores into a store (created if missing)")
  mp.add_argument("dst"); mp.add_argument("srcs", nargs="+")
  mp.add_argument("--since", type=float, default=None, help="only rows finished since this time (seconds since the epoch)")
  a = ap.parse_args(argv)
  try:
    if a.cmd == "export":
      r = export(a.srcs, a.out, a.since)
      print(f"{a.out}: {r['rows']:,} rows ({r['ok']:,} ok) of {r['device']}, {r['bytes']:,} bytes")
    elif a.cmd == "loaded":
      src = resolve(a.store, not a.no_shards)
      for line in describe(src.shards, src.skipped): print(line, file=sys.stderr)
      print(src.path)
    else:
      for p, n in merge(a.dst, a.srcs, a.since).items(): print(f"{p}: {n} measurements added")
  except StoreError as e: print(f"dataset.shard: error: {e}", file=sys.stderr); return 2
  return 0

if __name__ == "__main__": sys.exit(main())
