"""`KERNTUNE=1 python prog.py` for a program that never imports kerntune. kerntune.pth, in site-packages, runs LINE at every
interpreter start: with KERNTUNE or KERNTUNE_TUNED set (not 0) it waits for the program's `import tinygrad`, and right after it
enables search.cache (drop-in tuning, or replay). A start without either variable pays one line of the .pth, a program that never
imports tinygrad a class definition. Workers that multiprocessing spawns (the search's compile pool, a program's own) are left
alone: the process that runs the program tunes.

  python -m search.hook install      # kerntune.pth into this interpreter's site-packages (or the user's); uninstall, status

A wheel install ships kerntune.pth itself (search.build_hook); an editable install (pip install -e .) does not, as setuptools'
editable wheels carry only the project's packages: run install once there."""
from __future__ import annotations
import importlib.abc, importlib.util, os, site, sys, sysconfig
from pathlib import Path

NAME = "kerntune.pth"
# site.py executes a .pth line that starts with "import". The line imports nothing of kerntune's: it waits for `import tinygrad`, by
# when every .pth has run (kerntune's own, which makes `search` importable, may sit in a site directory read later); where kerntune is
# gone, tinygrad imports as it would.
_AWAIT = """import sys
class KerntuneAwait:
 def find_spec(self, name, path=None, target=None):
  if name != 'tinygrad': return None
  sys.meta_path.remove(self)
  try: import search.hook as h
  except ImportError: import importlib.util as h; return h.find_spec(name)
  return h.spec(name)
'--multiprocessing-fork' in sys.argv or any(type(f).__name__ == 'KerntuneAwait' for f in sys.meta_path) or sys.meta_path.insert(0, KerntuneAwait())
"""
LINE = (f"import os; (os.environ.get('KERNTUNE', '0') not in ('', '0') or os.environ.get('KERNTUNE_TUNED', '0') not in ('', '0')) "
        f"and exec({_AWAIT!r})\n")

def _enable():
  try: import search.cache   # noqa: F401  # its import enables what the environment asks for (search.cache._from_env)
  except Exception as e: print(f"kerntune: not enabled: {type(e).__name__}: {e}", file=sys.stderr)

def spec(name:str):
  """The module spec of `import tinygrad`, whose loader enables search.cache once tinygrad's module has run."""
  if (sp := importlib.util.find_spec(name)) is None or not hasattr(sp.loader, "exec_module") or "exec_module" in vars(sp.loader): return sp
  run = sp.loader.exec_module
  def exec_module(module):
    run(module)
    vars(sp.loader).pop("exec_module", None)   # the loader's own again
    _enable()
  sp.loader.exec_module = exec_module
  return sp

class _Await(importlib.abc.MetaPathFinder):
  def find_spec(self, name, path=None, target=None):
    if name != "tinygrad": return None
    sys.meta_path.remove(self)
    return spec(name)

def arm():
  """What kerntune.pth does, from a program: enable search.cache once tinygrad is imported (now, if it is). Spawned workers (the
  search's compile pool, a program's own) are left alone: their parent tunes."""
  if "--multiprocessing-fork" in sys.argv: return
  if "tinygrad" in sys.modules: return _enable()
  if not any(isinstance(f, _Await) or type(f).__name__ == "KerntuneAwait" for f in sys.meta_path): sys.meta_path.insert(0, _Await())

def site_dir() -> Path:
  """Where install() writes: this interpreter's site-packages if writable (a virtual environment's), else the user's."""
  purelib = Path(sysconfig.get_paths()["purelib"])
  if os.access(purelib, os.W_OK) or not site.ENABLE_USER_SITE: return purelib
  return Path(site.getusersitepackages())

def install(where:str|os.PathLike|None=None) -> Path:
  (p := Path(where or site_dir()) / NAME).parent.mkdir(parents=True, exist_ok=True)
  p.write_text(LINE)
  return p

def uninstall(where:str|os.PathLike|None=None) -> list[Path]:
  gone = [p for p in ([Path(where) / NAME] if where else installed()) if p.is_file()]
  for p in gone: p.unlink()
  return gone

def installed() -> list[Path]:
  """Every kerntune.pth this interpreter reads at startup."""
  dirs = [*site.getsitepackages(), *([site.getusersitepackages()] if site.ENABLE_USER_SITE else [])]
  return [p for d in dict.fromkeys(dirs) if (p := Path(d) / NAME).is_file()]

def main(argv:list[str]|None=None) -> int:
  argv = sys.argv[1:] if argv is None else argv
  cmd, where = (argv[0] if argv else "status"), (argv[1] if len(argv) > 1 else None)
  if cmd == "install":
    try: print(f"kerntune: installed {install(where)}: KERNTUNE=1 python prog.py tunes any tinygrad program"); return 0
    except OSError as e: print(f"kerntune: error: cannot write {NAME} into {where or site_dir()}: {e.strerror or e}", file=sys.stderr); return 2
  if cmd == "uninstall": print("kerntune: removed " + (", ".join(map(str, uninstall(where))) or "nothing (none installed)")); return 0
  if cmd == "status": print("kerntune: " + (", ".join(map(str, installed())) or f"not installed (python -m search.hook install: {site_dir()})")); return 0
  print("usage: python -m search.hook [install|uninstall|status] [SITE_DIR]", file=sys.stderr)
  return 2

def install_main(argv:list[str]|None=None) -> int:
  """`kerntune install-hook [SITE_DIR]`."""
  return main(["install", *(sys.argv[1:] if argv is None else argv)])

if __name__ == "__main__": sys.exit(main())
