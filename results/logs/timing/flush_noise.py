"""How reproducible is a small kernel's label, and does the L2 flush or the number of runs set its noise? The store's re-timing of
its 185 kernels under 20 us (results/logs/retime_small20_h200/) gave each config's 3 runs a median spread (slowest / fastest - 1)
of 10.7%, p90 40%. The flush (dataset.device.L2Flush) memsets a buffer of twice the L2, so the timed kernel starts with an L2 full of
dirty lines and each line it loads first writes one back to HBM; a read of another such buffer after the memset leaves the L2 clean.

For the corpus's smallest norms, gelu_bias and swiglu kernels (nothing of the unseen benchmark), the hand-coded config of each and two of its
prefixes, each label (Bench.time's protocol: a warm-up, then RUNS runs each after a flush, the fastest) taken REPS times under each
variant, interleaved: memset (today's) or memset then a read of another 2 x L2 buffer (clean), with 3 or 10 runs. Per variant:
the median over configs of the labels' spread (max / min - 1 over the REPS labels) and the share of kernels whose three configs
keep one order in every rep. One nvidia-h200 call (carry .whl):
  bash scripts/gpu_host.sh python3 results/logs/timing/flush_noise.py > $OUT/flush_noise.txt 2>&1
(`python results/logs/timing/flush_noise.py CPU` runs the same steps on the CPU device, where both flushes are the host array's.)"""
import statistics, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from small_kernels import small_kernels
from tinygrad import Tensor, TinyJit, dtypes

DEV = sys.argv[1] if len(sys.argv) > 1 else "CUDA"
VARIANTS = [("memset", 3), ("clean", 3), ("memset", 10), ("clean", 10)]
REPS = 12

rows = small_kernels(DEV, "layernorm,softmax,rmsnorm,gelu_bias,swiglu", 10, variants=24, all_compile=True)

memset = rows[0][2].bench.flush if rows else None
if DEV == "CUDA" and rows:
  big = Tensor.empty(memset.n//4, dtype=dtypes.float32, device=DEV).contiguous().realize()
  read = TinyJit(lambda: big.sum().realize())
  for _ in range(3): read()   # captured: each call replays the read's kernels on the device
  def clean():
    memset()
    read()
else: clean = memset

print(f"{DEV}: {len(rows)} kernels x 3 configs, {REPS} labels each per variant, interleaved\nkernel | " +
      " | ".join(f"{f} {r} runs: label us median (spread)" for f, r in VARIANTS))
spreads = {v: [] for v in VARIANTS}; same = {v: 0 for v in VARIANTS}
for t0, k, m, _, progs in rows:
  labels = {(v, c): [] for v in VARIANTS for c in range(len(progs))}
  for _ in range(REPS):
    for v in VARIANTS:
      m.bench.flush = memset if v[0] == "memset" else clean
      for c, prg in enumerate(progs): labels[(v, c)].append(min(m.bench.time(prg, runs=v[1])[0])*1e6)
  cells = []
  for v in VARIANTS:
    sp = [max(labels[(v, c)])/min(labels[(v, c)]) - 1 for c in range(len(progs))]
    spreads[v] += sp
    orders = {tuple(sorted(range(len(progs)), key=lambda c: labels[(v, c)][r])) for r in range(REPS)}
    same[v] += len(orders) == 1
    cells.append(", ".join(f"{statistics.median(labels[(v, c)]):.1f} ({s:.0%})" for c, s in enumerate(sp)))
  print(f"{k.name} | " + " | ".join(cells), flush=True)
  m.close()
for v in VARIANTS:
  if spreads[v]: print(f"{v[0]} {v[1]} runs: labels' spread median {statistics.median(spreads[v]):.1%}, p90 "
                       f"{sorted(spreads[v])[int(0.9*(len(spreads[v])-1))]:.1%}; one order in every rep: {same[v]} of {len(rows)} kernels")
