"""Reading a device buffer back to the host: tinygrad's Buffer.numpy() (into a zeroed bytearray, then wrapped) against
dataset.timing._copyout (straight into np.empty), best of 5, interleaved, on a tinygrad device (default CPU). Output: readback_DEV.txt.
  python results/logs/verify/readback.py [CUDA] > results/logs/verify/readback_cpu.txt (readback_h200.txt)"""
import platform, sys, time
import numpy as np
from tinygrad.device import Buffer
from tinygrad.dtype import dtypes
from dataset.timing import _copyout
DEV = sys.argv[1] if len(sys.argv) > 1 else "CPU"
print(f"{time.strftime('%Y-%m-%d')}, {platform.processor() or platform.machine()}, {DEV} device")
for n, dt in ((16 << 20, dtypes.float16), (64 << 20, dtypes.float16), (64 << 20, dtypes.float32)):
  b = Buffer(DEV, n, dt).ensure_allocated()
  secs = {"numpy()": [], "_copyout": []}
  for rep in range(5):
    for w, f in (list(zip(secs, (b.numpy, lambda: _copyout(b)))))[::(1 if rep % 2 == 0 else -1)]:
      st = time.perf_counter(); a = f(); secs[w].append(time.perf_counter() - st); del a
  t, c = min(secs["numpy()"]), min(secs["_copyout"])
  print(f"{n} x {dt.name} ({b.nbytes >> 20} MiB): numpy() {t:.3f} s, _copyout {c:.3f} s ({c/t:.2f}x)")
