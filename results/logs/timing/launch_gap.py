"""Is a small kernel's timing its own run, or also the host's launch? tinygrad times a run with two CUDA events recorded around its
cuLaunchKernel (cu_time_execution). The L2 flush before it (a 2 x L2 memset, ~30 us) is queued first; if it has finished by the time
the first event is recorded, the GPU idles from that event until the launch arrives, and whatever delays the launch on the host is
timed as the kernel's. On the H200, 20-40 us norms timed 15 times in one state spread by -35%..+25% around their median
(clock_ramp_h200.txt), and an idle GPU's clocks were not the cause (1980 MHz throughout).

For the corpus's smallest norms and the hand-coded config of each, with two of its prefixes (three configs a kernel), each timed 15
times (a warm-up, then 3 runs, each after a flush; the fastest run) with the flush issued K times (K x ~30 us of GPU work ahead of
the launch), the runs on the watchdog thread (thread: timing.bounded) or in the calling thread (inline). Per kernel: the median
[min, max] of each variant, and whether the three configs' order by median is the same as at K=32 inline; then the host's wall for
one run from its flush's return. One nvidia-h200 call (carry .whl):
  bash scripts/gpu_host.sh python3 results/logs/timing/launch_gap.py > $OUT/launch_gap.txt 2>&1
(`python results/logs/timing/launch_gap.py CPU` runs the same steps on the CPU device: a check of the script.)
Outputs, 2026-11-29, one H200 (thread: the watchdog thread as timing.bounded had it then; the last's flush ran on it too):
  launch_gap_h200.txt                   a thread started per run, the flush from the caller (thread: 3-11 us slower, 2x the spread)
  launch_gap_h200_kept_thread.txt       one kept thread, the flush from the caller (-4..+9 us)
  launch_gap_h200_flush_in_thread.txt   one kept thread, the flush from it too (-3..+8 us)
so Bench.time now runs its timed runs in the caller (only the warm-up on the watchdog thread)."""
import statistics, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from small_kernels import small_kernels
from dataset.timing import RUN_TIMEOUT_S, bounded
from search.measure import Budget, Measurer

DEV = sys.argv[1] if len(sys.argv) > 1 else "CUDA"
VARIANTS = [(1, True), (1, False), (8, False), (32, False), (8, True)]   # (K flushes, on the watchdog thread)
REPS = 15

rows = small_kernels(DEV, "layernorm,softmax,rmsnorm", 8)
print("K: flushes ahead of each run; thread/inline: the run on the watchdog thread or in the caller\nkernel | config | " + " | ".join(f"K={n} {'thread' if t else 'inline'}: us median [min, max]"
                                                     for n, t in VARIANTS))
for t0, k, m, configs, progs in rows:
  b, flush = m.bench, m.bench.flush
  med: dict[tuple, list[float]] = {}
  for ci, (c, prg) in enumerate(zip(configs, progs)):
    if prg is None: continue
    cells = []
    for n, threaded in VARIANTS:
      def flushes(n=n):
        for _ in range(n): flush()
      b.flush = flushes
      def timed(threaded=threaded) -> float:   # Bench.time's protocol, every run on the watchdog thread or none
        timer = b._timer(prg)
        runs = []
        for _ in range(4):   # the first is the warm-up
          b.flush()
          runs.append(b._run(timer, inline=not threaded))
        return min(runs[1:])
      ts = [timed()*1e6 for _ in range(REPS)]
      b.flush = flush
      med.setdefault((n, threaded), []).append(statistics.median(ts))
      cells.append(f"{statistics.median(ts):.1f} [{min(ts):.1f}, {max(ts):.1f}]")
    print(f"{k.name} | {len(c)} opts | " + " | ".join(cells), flush=True)
  ref = med.get((32, False), [])
  order = lambda xs: sorted(range(len(xs)), key=xs.__getitem__)
  print(f"  same order as K=32 inline: " + ", ".join(f"K={n} {'thread' if t else 'inline'} {order(v) == order(ref)}"
                                                    for (n, t), v in med.items()), flush=True)
  m.close()
# the host's overhead: one run's wall from its flush's return, on the watchdog thread and inline (first kernel, hand-coded config)
if rows:
  k = rows[0][1]
  m0 = Measurer(k, DEV, Budget(), workers=0)
  prg = m0._compile([m0.hand])[0].prg
  timer = m0.bench._timer(prg)
  next(timer)   # time_call links the program on its first run
  for threaded in (True, False):
    walls = []
    for _ in range(50):
      m0.bench.flush()
      st = time.perf_counter(); bounded(lambda: next(timer), RUN_TIMEOUT_S if threaded else None); walls.append((time.perf_counter() - st)*1e6)
    print(f"host wall of one run after a flush ({'thread' if threaded else 'inline'}): median {statistics.median(walls):.0f} us", flush=True)
  m0.close()
