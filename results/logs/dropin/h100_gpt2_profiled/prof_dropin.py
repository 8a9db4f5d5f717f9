# GPT-2 generation under drop-in tuning (defaults) with the tuning process profiled (cProfile, main thread) and the host's busy
# cores sampled every 0.25 s: where the search's seconds go
import cProfile, pstats, sys, time, os, json, threading, io
sys.path.insert(0, "scripts"); sys.path.insert(0, ".")
out = os.environ["OUT"]
busy, stop = [], threading.Event()
def sample():
  def read():
    v = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return sum(v), v[3] + v[4]
  t0, (a0, i0) = time.perf_counter(), read()
  while not stop.wait(0.25):
    a, i = read(); busy.append((round(time.perf_counter() - t0, 2), round((a - a0 - (i - i0))/max(a - a0, 1)*os.cpu_count(), 1))); a0, i0 = a, i
threading.Thread(target=sample, daemon=True).start()
import bench_dropin
from search.cache import tuned
from search.dropin import Tuner
t0 = time.perf_counter()
first, step, _ = bench_dropin.gpt2_gen(bool(os.environ.get("SMALL")))
print("built", round(time.perf_counter() - t0, 1), flush=True)
tu = Tuner()
pr = cProfile.Profile()
marks = []
with tuned(path=f"{out}/cache.json", tune=True, tuner=tu) as c:
  t1 = time.perf_counter(); pr.enable()
  first(); marks.append(("first", round(time.perf_counter() - t0, 2)))
  for _ in range(3): step(); marks.append(("step", round(time.perf_counter() - t0, 2)))
  pr.disable()
stop.set()
json.dump({"report": tu.report(c.path), "busy": busy, "marks": marks, "t_tune_start": round(t1 - t0, 2)}, open(f"{out}/prof.json", "w"))
pr.dump_stats(f"{out}/gpt2.prof")
for key in ("cumulative", "tottime"):
  s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats(key).print_stats(45); open(f"{out}/prof_{key}.txt", "w").write(s.getvalue())
print("search", tu.spent_s, tu.phases, tu.waits(), flush=True)
