"""GPT-2 generation's steady-state step in one process, after drop-in tuning (or none): the median step as the benchmark times it,
then after gc.collect(), after the compile pool is shut, with gc frozen, with gc off; and where one step's host seconds go (cProfile).
  [KERNTUNE=CACHE KERNTUNE_WHEN=jit | KERNTUNE_TUNED=CACHE] python3 diag_step.py LABEL OUT.json"""
import cProfile, gc, io, json, os, pstats, statistics, sys, time
from pathlib import Path
ROOT = Path(os.getcwd())
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "scripts"))
if any(os.environ.get(v, "0") not in ("", "0") for v in ("KERNTUNE", "KERNTUNE_TUNED")):
  import search.hook; search.hook.arm()
from bench_dropin import gpt2_gen
from tinygrad import Device
t0 = time.perf_counter()
first, step, outputs = gpt2_gen(False)
first()
for _ in range(3): step()
dev = Device[Device.DEFAULT]
res = {"label": sys.argv[1], "setup_s": round(time.perf_counter() - t0, 1)}
def med(n:int=40) -> float:
  ts = []
  for _ in range(n):
    dev.synchronize(); st = time.perf_counter(); step(); dev.synchronize(); ts.append((time.perf_counter() - st)*1e3)
  return round(statistics.median(ts), 3)
res["after"] = med()
res["objects"] = len(gc.get_objects())
gc.collect(); res["gc_collect"] = med()
import search.measure as M
M._close_pools(); M._POOLS.clear(); time.sleep(1); res["pool_closed"] = med()
gc.freeze(); res["gc_freeze"] = med()
gc.disable(); res["gc_off"] = med(); gc.enable()
pr = cProfile.Profile(); pr.enable()
for _ in range(20): step()
dev.synchronize(); pr.disable()
s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(14); res["profile"] = s.getvalue()[-3500:]
print(json.dumps({k: v for k, v in res.items() if k != "profile"}), flush=True)
Path(sys.argv[2]).write_text(json.dumps(res, indent=1))
