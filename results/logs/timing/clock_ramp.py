"""Does a small kernel time slower after the GPU has idled, as it does in a search between compiles? On split 18 a 16-us bmm's
hand-coded config timed 23.3 us in the search and 16.3 us side by side; over splits 1-18 a search's answer differed by more than
10% from its side-by-side time on 48% of kernels under 20 us and 32% at 20-100 us, against 1% above 100 us
(results/logs/timing/search_vs_side_by_side.py).

The corpus's smallest norms and softmaxes (no benchmark kernel: the corpus holds none), their hand-coded configs, each timed with
the search's protocol (timing.Bench.time: a warm-up, then 3 runs, each after an L2 flush) 15 times in each of three states:
  idle   0.5 s of sleep before each timing (a search waiting on compiles)
  spun   0.5 s of sleep, then ~5 ms of back-to-back L2 flushes (memsets), then the timing
  busy   one timing right after another
and the SM clock nvidia-smi reads after a second's idle and while flushing. One nvidia-h200 call (carry .whl; a minute):
  bash scripts/gpu_host.sh python3 results/logs/timing/clock_ramp.py > $OUT/clock_ramp.txt 2>&1
(`python results/logs/timing/clock_ramp.py CPU` runs the same steps on the CPU device's small variants: a check of the script.)"""
import statistics, subprocess, sys, threading, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from tinygrad import Device
from dataset.corpus import select
from dataset.kernel import Kernel, kernel_asts
from search.measure import Budget, Measurer

def sm_clock() -> str:
  try: return subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm", "--format=csv,noheader"], capture_output=True, text=True, timeout=10).stdout.strip()
  except Exception as e: return f"? ({e})"

DEV = sys.argv[1] if len(sys.argv) > 1 else "CUDA"
def spin(bench, ms:float=5.0):
  end = time.perf_counter() + ms/1e3
  while time.perf_counter() < end: bench.flush()
  Device[DEV].synchronize()

kernels = [Kernel(a.key.hex(), a, f"{v.name}#{i}", v.family, v.workload) for v in select("layernorm,softmax,rmsnorm", DEV)[:12]
           for i, a in enumerate(kernel_asts(*v.build(DEV)))]
rows = []
for k in kernels:
  m = Measurer(k, DEV, Budget(), workers=0)
  prg = m._compile([m.hand])[0].prg
  if prg is not None and (t0 := min(m.bench.time(prg)[0])*1e6) < (40 if DEV == "CUDA" else 1e9): rows.append((t0, k, m, prg))
  else: m.close()
rows = sorted(rows, key=lambda r: r[0])[:6]
time.sleep(1.0); print(f"SM clock after 1 s idle: {sm_clock()}", flush=True)
reader = []
th = threading.Thread(target=lambda: reader.append(sm_clock())); th.start()
spin(rows[0][2].bench, 300.0); th.join(); print(f"SM clock while flushing: {reader[0]}", flush=True)
print("kernel | us (first look) | idle: median [min, max] | spun | busy | idle/busy | spun/busy")
for t0, k, m, prg in rows:
  def timed(before) -> list[float]:
    out = []
    for _ in range(15):
      before()
      out.append(min(m.bench.time(prg)[0])*1e6)
    return out
  idle = timed(lambda: time.sleep(0.5))
  spun = timed(lambda: (time.sleep(0.5), spin(m.bench)))
  busy = timed(lambda: None)
  f = lambda xs: f"{statistics.median(xs):.1f} [{min(xs):.1f}, {max(xs):.1f}]"
  print(f"{k.name} | {t0:.1f} | {f(idle)} | {f(spun)} | {f(busy)} | {statistics.median(idle)/statistics.median(busy):.3f} | "
        f"{statistics.median(spun)/statistics.median(busy):.3f}", flush=True)
  m.close()
