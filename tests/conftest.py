"""Caches a test run writes (featurized matrices, optuna studies, tuned kernels) go to one temporary directory for the whole test run:
never the package or the user's ~/.cache. Set here, at import, so modules that read them at import and every subprocess see it."""
import os, shutil, subprocess, sys, tempfile, atexit, faulthandler, threading, time

CACHE = tempfile.mkdtemp(prefix="kerntune-tests-")
os.environ["KERNTUNE_CACHE_DIR"] = CACHE                                # models.data (features), models.tune (optuna)
os.environ["KERNTUNE_CACHE"] = os.path.join(CACHE, "tuned.json")        # search.cache
atexit.register(shutil.rmtree, CACHE, True)

# A run that has reported must end. CI's slow step once passed all its tests, then did not exit until its step's timeout killed it
# 770 s later, and the whole run failed on it with nothing said. If exiting (atexit hooks, pool finalizers, threads) takes longer
# than this, every thread's stack and the live child processes are printed, and the process ends with the tests' own status.
EXIT_GRACE_S = 120.0
_status = [0]

def pytest_sessionfinish(exitstatus): _status[0] = int(exitstatus)   # pluggy passes the arguments a hook names

def _held_up():
  time.sleep(EXIT_GRACE_S)
  print(f"\nconftest: the test process is still exiting {EXIT_GRACE_S:.0f} s after its summary; its threads and child processes:", file=sys.stderr, flush=True)
  faulthandler.dump_traceback(sys.stderr, all_threads=True)
  try: print(subprocess.run(["ps", "-o", "pid,etime,stat,args", "--ppid", str(os.getpid())], capture_output=True, text=True, timeout=10).stdout, file=sys.stderr, flush=True)
  except Exception as e: print(f"conftest: ps: {e}", file=sys.stderr, flush=True)
  os._exit(_status[0])

def pytest_unconfigure(config): threading.Thread(target=_held_up, daemon=True, name="kerntune-exit-watchdog").start()

def script(name:str):
  """scripts/NAME.py as a module (scripts/ is no package; its own imports of one another resolve)."""
  import importlib.util
  root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts")
  if root not in sys.path: sys.path.insert(0, root)
  spec = importlib.util.spec_from_file_location(f"{name}_script", os.path.join(root, f"{name}.py"))
  mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
  return mod
