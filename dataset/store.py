"""The measurement store: one SQLite file (WAL, a commit per record, so kill -9 loses only what is in flight), with a Parquet export.

A measurement row is written as 'pending' before its config runs on the device and finished after. A pending row found on
open means the process died running it: it is retried once, and marked 'hang' if it is found pending again."""
from __future__ import annotations
import json, os, sqlite3, time
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

class StoreError(RuntimeError): pass

class Store:
  def __init__(self, path:str|os.PathLike, readonly:bool=False):
    self.path = Path(path)
    if readonly and not self.path.is_file(): raise StoreError(f"no dataset at {self.path}")
    try:
      if not readonly: self.path.parent.mkdir(parents=True, exist_ok=True)
      uri = f"file:{self.path}?mode=ro" if readonly else f"file:{self.path}"
      self.db = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=30)
      if not readonly:
        self.db.execute("PRAGMA journal_mode=WAL"); self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(_DDL)
        self.db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
      v = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    except sqlite3.DatabaseError as e: raise StoreError(f"{self.path} is not a kerntune dataset: {e}") from e
    if v is None or int(v[0]) != SCHEMA_VERSION: raise StoreError(f"{self.path}: dataset schema {v and v[0]}, expected {SCHEMA_VERSION}")

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
  def add_variant(self, name:str, device:str, kernels:list, rows:list[tuple]):
    """Kernels of one extracted variant, in one transaction. rows: (flops, bytes) per kernel."""
    with self.db:
      self.db.execute("BEGIN")
      self.db.executemany("INSERT OR IGNORE INTO kernels VALUES (?,?,?,?,?,?,?,?,?)",
                          [(k.key, device, k.name, k.family, k.workload, name, f, b, k.blob()) for k, (f, b) in zip(kernels, rows)])
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

  def merge(self, src:str|os.PathLike, variants:list[str]|None=None) -> int:
    """Add another store's devices, kernels and finished measurements (a shard measured on another GPU or host); with `variants`,
    only theirs (kernels by the variant that first produced them). What this store already has is kept: a kernel or
    (kernel, opts, device) row it holds is not replaced. Returns the measurements added."""
    other = Store(src, readonly=True); other.close()   # a clear error for a missing or foreign file
    before = self.count()
    only = "" if variants is None else " WHERE {} IN (SELECT name FROM temp.want)"
    with self.db:
      self.db.execute("BEGIN")
      self.db.execute("ATTACH DATABASE ? AS src", (f"file:{Path(src)}?mode=ro",))
      if variants is not None:
        self.db.execute("CREATE TEMP TABLE IF NOT EXISTS want (name TEXT PRIMARY KEY)"); self.db.execute("DELETE FROM temp.want")
        self.db.executemany("INSERT OR IGNORE INTO temp.want VALUES (?)", [(n,) for n in variants])
      self.db.execute("INSERT OR IGNORE INTO devices SELECT * FROM src.devices")
      self.db.execute("INSERT OR IGNORE INTO variants SELECT * FROM src.variants" + only.format("name"))
      self.db.execute("INSERT OR IGNORE INTO kernels SELECT * FROM src.kernels" + only.format("variant"))
      cols = "kernel, opts, device, arch, tinygrad, source, status, time_s, runtimes, early_stop, compile_s, checked, error, attempts, ts"
      keep = "" if variants is None else " AND kernel IN (SELECT key FROM src.kernels WHERE variant IN (SELECT name FROM temp.want))"
      self.db.execute(f"INSERT OR IGNORE INTO measurements ({cols}) SELECT {cols} FROM src.measurements WHERE status != 'pending'{keep} ORDER BY id")
      if self.db.execute("SELECT 1 FROM src.sqlite_master WHERE name='picks'").fetchone():   # stores older than the picks table lack it
        self.db.execute("INSERT OR IGNORE INTO picks SELECT * FROM src.picks" + ("" if variants is None else f" WHERE 1{keep}"))
    self.db.execute("DETACH DATABASE src")
    return self.count() - before

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
