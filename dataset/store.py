"""The measurement store: one SQLite file (WAL, a commit per record, so kill -9 loses only what is in flight), with a Parquet export.

A measurement row is written as 'pending' before its config runs on the device and finished after. A pending row found on
open means the process died running it: it is retried once, and marked 'hang' if it is found pending again."""
from __future__ import annotations
import json, math, os, sqlite3, time
from pathlib import Path

SCHEMA_VERSION = 1
STATUSES = ("ok", "compile_error", "timeout", "hang", "runtime_error", "wrong")

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS devices (device TEXT PRIMARY KEY, arch TEXT, props TEXT);
CREATE TABLE IF NOT EXISTS variants (name TEXT, device TEXT, kernels INTEGER, PRIMARY KEY (name, device));
CREATE TABLE IF NOT EXISTS kernels (key TEXT PRIMARY KEY, device TEXT, name TEXT, family TEXT, workload TEXT, variant TEXT,
  flops REAL, bytes REAL, ast BLOB);
CREATE TABLE IF NOT EXISTS measurements (id INTEGER PRIMARY KEY, kernel TEXT NOT NULL REFERENCES kernels(key), opts TEXT NOT NULL,
  device TEXT NOT NULL, arch TEXT, tinygrad TEXT, source TEXT, status TEXT NOT NULL, time_s REAL, runtimes TEXT, early_stop INTEGER,
  compile_s REAL, checked INTEGER, error TEXT, attempts INTEGER DEFAULT 0, ts REAL, UNIQUE (kernel, opts, device));
CREATE INDEX IF NOT EXISTS m_kernel ON measurements (kernel, status);
CREATE TABLE IF NOT EXISTS picks (kernel TEXT NOT NULL REFERENCES kernels(key), device TEXT NOT NULL, source TEXT NOT NULL,
  opts TEXT NOT NULL, search_s REAL, PRIMARY KEY (kernel, device, source));
"""

MEASURE_COLS = ("kernel", "opts", "device", "arch", "tinygrad", "source", "status", "time_s", "runtimes", "early_stop", "compile_s",
                "checked", "error", "attempts", "ts")
# rows from another store: one this store holds is kept, unless it is pending and the other is finished or was retried more often
_UPSERT = (f"INSERT INTO measurements ({', '.join(MEASURE_COLS)}) {{}} ON CONFLICT (kernel, opts, device) DO UPDATE SET "
           + ", ".join(f"{c}=excluded.{c}" for c in MEASURE_COLS[3:]) +
           " WHERE measurements.status='pending' AND (excluded.status!='pending' OR excluded.attempts>measurements.attempts)")

class StoreError(RuntimeError): pass

def writer_lock(path:str|os.PathLike):
  """The store's writer lock, held while the returned file is open; None if another process holds it. One writer per store: two
  would fight over its pending rows."""
  import fcntl
  lock = open(Path(path).with_suffix(".lock"), "w")
  try: fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
  except BlockingIOError: lock.close(); return None
  return lock

class Store:
  def __init__(self, path:str|os.PathLike, readonly:bool=False, name:str|os.PathLike|None=None):
    """name: what errors call the store (a gzipped shard is read from a decompressed temporary copy: errors name the shard)."""
    self.path, who = Path(path), name or path
    if readonly and not self.path.is_file(): raise StoreError(f"no dataset at {who}")
    try:
      if not readonly: self.path.parent.mkdir(parents=True, exist_ok=True)
      uri = f"file:{self.path}?mode=ro" if readonly else f"file:{self.path}"
      self.db = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=30)
      if not readonly:
        self.db.execute("PRAGMA journal_mode=WAL"); self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(_DDL)
        self.db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
      v = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    except sqlite3.DatabaseError as e: raise StoreError(f"{who} is not a kerntune dataset: {e}") from e
    if v is None or int(v[0]) != SCHEMA_VERSION: raise StoreError(f"{who}: dataset schema {v and v[0]}, expected {SCHEMA_VERSION}")

  def close(self, compact:bool=False):
    if compact:
      try:
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.db.execute("PRAGMA journal_mode=DELETE")  # a single self-contained file, fit to commit
      except sqlite3.OperationalError: pass  # another reader holds it open: the data is safe in the WAL, compacted next time
    self.db.close()

  # *** kernels ***
  def add_device(self, device:str, arch:str, props:dict):
    self.db.execute("INSERT OR REPLACE INTO devices VALUES (?,?,?)", (device, arch, json.dumps(props)))
  def devices(self) -> dict[str, dict]:
    return {d: {"arch": a, **json.loads(p)} for d, a, p in self.db.execute("SELECT device, arch, props FROM devices")}
  def has_variant(self, name:str, device:str) -> bool:
    return self.db.execute("SELECT 1 FROM variants WHERE name=? AND device=?", (name, device)).fetchone() is not None
  def add_variant(self, name:str, device:str, kernels:list, rows:list[tuple], blobs:list[bytes|None]|None=None):
    """Kernels of one extracted variant, in one transaction. rows: (flops, bytes) per kernel; blobs: their ASTs as already packed
    (Kernel.pack), None where not."""
    blobs = blobs or [None]*len(kernels)
    with self.db:
      self.db.execute("BEGIN")
      self.db.executemany("INSERT OR IGNORE INTO kernels VALUES (?,?,?,?,?,?,?,?,?)",
                          [(k.key, device, k.name, k.family, k.workload, name, f, b, ab or k.blob()) for k, (f, b), ab in zip(kernels, rows, blobs)])
      self.db.execute("INSERT OR REPLACE INTO variants VALUES (?,?,?)", (name, device, len(kernels)))
  def kernel_keys(self) -> set[str]: return {r[0] for r in self.db.execute("SELECT key FROM kernels")}
  def measured_keys(self) -> set[str]:
    return {r[0] for r in self.db.execute("SELECT DISTINCT kernel FROM measurements WHERE status != 'pending'")}
  def kernels(self, device:str|None=None, variants:list[str]|None=None) -> list[dict]:
    q, args = "SELECT key, device, name, family, workload, variant, flops, bytes, ast FROM kernels", []
    if device is not None: q, args = q + " WHERE device=?", [device]
    rows = [dict(zip(("key", "device", "name", "family", "workload", "variant", "flops", "bytes", "ast"), r)) for r in self.db.execute(q, args)]
    if variants is not None: rows = [r for r in rows if r["variant"] in set(variants)]
    return rows

  # *** measurements ***
  def begin(self, kernel:str, opts:list, device:str, arch:str, tinygrad:str, source:str) -> int|None:
    """A pending row for a config about to run. None if it is already measured on this device."""
    try:
      cur = self.db.execute("INSERT INTO measurements (kernel, opts, device, arch, tinygrad, source, status, ts) VALUES (?,?,?,?,?,?,?,?)",
                            (kernel, json.dumps(opts), device, arch, tinygrad, source, "pending", time.time()))
      return cur.lastrowid
    except sqlite3.IntegrityError: return None
  def finish(self, rid:int, status:str, time_s:float|None=None, runtimes:list[float]|None=None, early_stop:bool=False,
             compile_s:float|None=None, checked:bool|None=None, error:str|None=None):
    assert status in STATUSES, status
    self.db.execute("UPDATE measurements SET status=?, time_s=?, runtimes=?, early_stop=?, compile_s=?, checked=?, error=?, ts=? WHERE id=?",
                    (status, time_s, json.dumps(runtimes) if runtimes is not None else None, int(early_stop), compile_s,
                     None if checked is None else int(checked), error and error[:500], time.time(), rid))
  def record(self, kernel:str, opts:list, device:str, arch:str, tinygrad:str, source:str, status:str, **kw) -> bool:
    """A finished row in one step (a config that never reached the device). False if it was already there."""
    if (rid := self.begin(kernel, opts, device, arch, tinygrad, source)) is None: return False
    self.finish(rid, status, **kw)
    return True
  def recover_pending(self, device:str) -> list[tuple[str, list, str]]:
    """Rows left pending by a process that died while running them: retried once (returned), then marked 'hang'."""
    with self.db:
      self.db.execute("BEGIN")
      self.db.execute("UPDATE measurements SET status='hang', error='process died running this config twice' "
                      "WHERE status='pending' AND device=? AND attempts>=1", (device,))
      rows = self.db.execute("SELECT kernel, opts, source FROM measurements WHERE status='pending' AND device=?", (device,)).fetchall()
      self.db.execute("UPDATE measurements SET attempts=attempts+1 WHERE status='pending' AND device=?", (device,))
    return [(k, json.loads(o), s) for k, o, s in rows]
  def retry(self, kernel:str, opts:list, device:str) -> int|None:
    r = self.db.execute("SELECT id FROM measurements WHERE kernel=? AND opts=? AND device=? AND status='pending'",
                        (kernel, json.dumps(opts), device)).fetchone()
    return r[0] if r else None
  def measured(self, device:str) -> dict[str, list[tuple[list, str, float|None, str]]]:
    """Per kernel: (opts, status, time_s, source) of every finished row on this device."""
    out: dict[str, list] = {}
    q = "SELECT kernel, opts, status, time_s, source FROM measurements WHERE device=? AND status!='pending'"
    for k, o, s, t, src in self.db.execute(q, (device,)): out.setdefault(k, []).append((json.loads(o), s, t, src))
    return out
  def count(self, status:str|None=None) -> int:
    q = "SELECT COUNT(*) FROM measurements" + (" WHERE status=?" if status else " WHERE status!='pending'")
    return self.db.execute(q, (status,) if status else ()).fetchone()[0]

  def merge(self, src:str|os.PathLike, kernels:set[str]|None=None, pending:bool=False, since:float|None=None) -> int:
    """Add another store's devices, kernels and measurements (a shard measured on another GPU or host); with `kernels` (keys), only
    those kernels, their variants and rows; with `since` (a time), only the rows finished since then and their kernels (a run's new
    data). Rows left pending (a process died running them) come too with `pending`, for this store to retry. What this store holds
    is kept, but for a pending row, which a finished one replaces (merge_rows). Returns the finished measurements gained."""
    other = Store(src, readonly=True); other.close()   # a clear error for a missing or foreign file
    before = self.count()
    with self.db:
      self.db.execute("BEGIN")
      self.db.execute("ATTACH DATABASE ? AS src", (f"file:{Path(src)}?mode=ro",))
      self.db.execute("CREATE TEMP TABLE IF NOT EXISTS keep (key TEXT PRIMARY KEY)"); self.db.execute("DELETE FROM temp.keep")
      if kernels is None: self.db.execute("INSERT INTO temp.keep SELECT key FROM src.kernels")
      else: self.db.executemany("INSERT OR IGNORE INTO temp.keep VALUES (?)", [(k,) for k in kernels])
      if since is not None: self.db.execute("DELETE FROM temp.keep WHERE key NOT IN (SELECT kernel FROM src.measurements WHERE ts >= ?)", (since,))
      kept = "kernel IN (SELECT key FROM temp.keep)" + ("" if since is None else f" AND ts >= {float(since)!r}")
      self.db.execute("INSERT OR IGNORE INTO devices SELECT * FROM src.devices")
      self.db.execute("INSERT OR IGNORE INTO variants SELECT * FROM src.variants" +
                      ("" if kernels is None and since is None else " WHERE name IN (SELECT variant FROM src.kernels WHERE key IN (SELECT key FROM temp.keep))"))
      self.db.execute("INSERT OR IGNORE INTO kernels SELECT * FROM src.kernels WHERE key IN (SELECT key FROM temp.keep)")
      self.db.execute("UPDATE kernels SET flops=s.flops, bytes=s.bytes FROM src.kernels s WHERE kernels.key=s.key AND kernels.flops IS NULL "
                      "AND s.flops IS NOT NULL AND s.key IN (SELECT key FROM temp.keep)")
      self.db.execute(_UPSERT.format(f"SELECT {', '.join(MEASURE_COLS)} FROM src.measurements WHERE {kept}" +
                                     ("" if pending else " AND status != 'pending'") + " ORDER BY id"))
      if self.db.execute("SELECT 1 FROM src.sqlite_master WHERE name='picks'").fetchone():   # stores older than the picks table lack it
        self.db.execute("INSERT OR IGNORE INTO picks SELECT * FROM src.picks WHERE kernel IN (SELECT key FROM temp.keep)")
    self.db.execute("DETACH DATABASE src")
    return self.count() - before

  # *** rows a generator writes, read back from its store while it runs and merged into another (dataset.ray_generate) ***
  def low_mark(self) -> int:
    """An id below every row still pending, and at most the last id: rows above it may yet finish (a retried row keeps its id)."""
    hi, lo = self.db.execute("SELECT MAX(id), (SELECT MIN(id) FROM measurements WHERE status='pending') FROM measurements").fetchone()
    return min(hi or 0, (lo or math.inf) - 1)
  def rows_after(self, low:int, limit:int=20_000) -> tuple[list[tuple], int]:
    """Finished measurement rows (MEASURE_COLS) with id > low, at most `limit`, and the low mark to ask from next."""
    with self.db:
      self.db.execute("BEGIN")
      rows = self.db.execute(f"SELECT id, {', '.join(MEASURE_COLS)} FROM measurements WHERE id > ? AND status != 'pending' ORDER BY id LIMIT ?",
                             (low, limit)).fetchall()
      mark = self.low_mark()
    return [r[1:] for r in rows], min(mark, rows[-1][0]) if len(rows) == limit else mark
  def merge_rows(self, rows:list[tuple]) -> list[str]:
    """Measurement rows (MEASURE_COLS) of another store: each added unless this store has it, and then it only replaces a pending
    row (a finished one, or one that has been retried more often). Returns the status of each row gained, a finished row's."""
    gained, q = [], _UPSERT.format(f"VALUES ({','.join('?'*len(MEASURE_COLS))})")
    with self.db:
      self.db.execute("BEGIN")
      for r in rows:
        if self.db.execute(q, r).rowcount and r[6] != "pending": gained.append(r[6])
    return gained
  def extras(self) -> dict[str, list]:
    """What a generator writes besides measurements: devices, picks, and kernels' flops and bytes (set as their reference runs)."""
    return {"devices": self.db.execute("SELECT * FROM devices").fetchall(), "picks": self.db.execute("SELECT * FROM picks").fetchall(),
            "flops": self.db.execute("SELECT flops, bytes, key FROM kernels WHERE flops IS NOT NULL").fetchall()}
  def merge_extras(self, x:dict[str, list]):
    with self.db:
      self.db.execute("BEGIN")
      self.db.executemany("INSERT OR IGNORE INTO devices VALUES (?,?,?)", x["devices"])
      self.db.executemany("INSERT OR IGNORE INTO picks VALUES (?,?,?,?,?)", x["picks"])
      self.db.executemany("UPDATE kernels SET flops=?, bytes=? WHERE key=? AND flops IS NULL", x["flops"])

  # *** an outside search's picks (tinygrad's BEAM): kept apart from the measurements, so that a run that stopped before measuring
  # every prefix of one resumes them instead of searching again ***
  def add_pick(self, kernel:str, device:str, source:str, opts:list, search_s:float):
    self.db.execute("INSERT OR REPLACE INTO picks VALUES (?,?,?,?,?)", (kernel, device, source, json.dumps(opts), search_s))
  def picks(self, device:str, source:str) -> dict[str, list]:
    return {k: json.loads(o) for k, o in self.db.execute("SELECT kernel, opts FROM picks WHERE device=? AND source=?", (device, source))}

  # *** reading ***
  def frame(self):
    """Every finished measurement with its kernel's name, family and workload, as a pandas DataFrame."""
    import pandas as pd
    df = pd.read_sql_query("SELECT m.id, m.kernel, k.name, k.family, k.workload, k.variant, k.flops, k.bytes, m.opts, m.device, m.arch, "
                           "m.tinygrad, m.source, m.status, m.time_s, m.runtimes, m.early_stop, m.compile_s, m.checked, m.error, m.ts "
                           "FROM measurements m JOIN kernels k ON k.key = m.kernel WHERE m.status != 'pending' ORDER BY m.id", self.db)
    return df
  def export_parquet(self, path:str|os.PathLike):
    import pyarrow as pa, pyarrow.parquet as pq
    tmp = Path(str(path) + ".tmp")
    pq.write_table(pa.Table.from_pandas(self.frame(), preserve_index=False), tmp, compression="zstd")
    os.replace(tmp, path)
