"""Output paths, checked before a command's work: a run must not end in a traceback because it cannot write what it made."""
from __future__ import annotations
import os, tempfile
from pathlib import Path

def cannot_write(path:str|os.PathLike, is_dir:bool=False) -> str|None:
  """Why `path` (a file, or with is_dir a directory to write files into) cannot be written, in one line; None if it can. Its directory
  is created if missing, and a probe file is created and removed there: permissions alone do not tell (root, read-only mounts, /proc)."""
  p = Path(path)
  d = p if is_dir else p.parent
  if is_dir and p.exists() and not p.is_dir(): return f"cannot write into {p}: it is not a directory"
  if not is_dir and p.is_dir(): return f"cannot write {p}: it is a directory"
  try: d.mkdir(parents=True, exist_ok=True)
  except OSError as e: return f"cannot write {p}: cannot create the directory {e.filename or d} ({e.strerror or e})"
  try:
    fd, probe = tempfile.mkstemp(dir=d, prefix=".kerntune-probe-")
    os.close(fd); os.unlink(probe)
    if p.is_file() and not os.access(p, os.W_OK): return f"cannot write {p}: permission denied"
  except OSError as e: return f"cannot write {p}: {e.strerror or e}"
  return None

def cache_dir() -> Path:
  """Where kerntune keeps what it can make again (featurized matrices, optuna studies, a store's working copy with its shards):
  $KERNTUNE_CACHE_DIR, else $XDG_CACHE_HOME/kerntune, else ~/.cache/kerntune. Never the package, which may be read-only."""
  return Path(os.environ.get("KERNTUNE_CACHE_DIR") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home()/".cache")/"kerntune")
