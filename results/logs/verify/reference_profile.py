"""Where the correctness reference's seconds go on a kernel with a huge output (a causal fp16 attention's score kernel, 4x16x2048x2048,
not a benchmark shape): Measurer._reference() (the unoptimized kernel's outputs, the float32 build's, exact_bounds) and Bench.check()
of one program, each under cProfile, the top functions by their own time. reference_profile_h200_twice.txt, run with commit b0908b7, computed
the reference twice (search.measure's re-entry, fixed since) and exact_bounds in the caller; reference_profile_h200.txt ran with
4f6197f (exact_bounds on a thread; read-backs still through Buffer.numpy()); reference_profile_h200_copyout.txt with 14e4978 (read-backs by
dataset.timing._copyout). Output: reference_profile_<device>.txt beside this file.
  python results/logs/verify/reference_profile.py CUDA [SPEC] > results/logs/verify/reference_profile_h200.txt"""
import cProfile, pstats, io, sys, time, platform
from dataset.unseen import kernels_of
from search.measure import Measurer
dev = sys.argv[1] if len(sys.argv) > 1 else "CPU"
spec = sys.argv[2] if len(sys.argv) > 2 else "attention:b=4:heads=16:seq=2048:dim=64:causal=1:fp16"
def prof(f, what:str):
  pr, st = cProfile.Profile(), time.perf_counter()
  pr.enable(); r = f(); pr.disable()
  s = io.StringIO(); ps = pstats.Stats(pr, stream=s)
  ps.sort_stats("tottime").print_stats(12); ps.sort_stats("cumulative").print_stats("timing.py|measure.py", 12)
  print(f"== {what}: {time.perf_counter() - st:.3f} s -> {r!r}\n" + "\n".join(l[:170] for l in s.getvalue().splitlines() if l.strip()[:1].isdigit()), flush=True)
from tinygrad.uop.ops import Ops
k = max(kernels_of(spec, dev), key=lambda k: max(u.max_numel() for u in k.ast.toposort() if u.op is Ops.PARAM))   # the largest buffer
m = Measurer(k, dev, workers=4)
print(f"{time.strftime('%Y-%m-%d %H:%M')}, {platform.node()}, {dev}, {spec} -> {k.name}; buffers: {[(b.size, b.dtype.name) for b in m.bench.bufs]}", flush=True)
for o in (m.ref_opts, m.hand): m._ahead[o].result() if o in m._ahead else None   # compiles in, so the profile is of the rest
if m._exact is not None and m._exact[2] is not None: m._exact[2].result()
prof(m._reference, "reference")
prof(lambda: m.bench.exact is not None, "the float32 build's bounds, waited for (exact_bounds runs on a thread from set_reference on)")
print("outputs:", {i: (r.size, str(r.dtype)) for i, r in m.bench.ref.items()}, "exact:", m.bench.exact is not None)
c = m._compile([m.hand])[0]
for i in range(2): prof(lambda: m.bench.check(c.prg), f"check of the hand-coded config ({i})")
