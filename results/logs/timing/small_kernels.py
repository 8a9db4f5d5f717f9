"""The timing experiments' kernels: the corpus's smallest kernels of some families (nothing of the unseen benchmark), each with its
hand-coded config and two of that config's prefixes compiled, smallest first."""
from dataset.corpus import select
from dataset.kernel import Kernel, kernel_asts
from search.measure import Budget, Measurer

def small_kernels(dev:str, families:str, n:int, variants:int=12, all_compile:bool=False) -> list[tuple]:
  """(us of the hand-coded config, kernel, its Measurer, configs, programs) of the n smallest of the first `variants` workloads of
  `families` under 60 us on a GPU; all_compile: only kernels all three of whose configs compile."""
  kernels = [Kernel(a.key.hex(), a, f"{v.name}#{i}", v.family, v.workload) for v in select(families, dev)[:variants]
             for i, a in enumerate(kernel_asts(*v.build(dev)))]
  rows = []
  for k in kernels:
    m = Measurer(k, dev, Budget(), workers=0)
    configs = [m.hand[:j] for j in (len(m.hand), len(m.hand)-1, len(m.hand)-2) if j >= 0]
    progs = [c.prg for c in m._compile(configs)]
    ok = all(p is not None for p in progs) if all_compile else progs[0] is not None
    if ok and (t0 := min(m.bench.time(progs[0])[0])*1e6) < (60 if dev == "CUDA" else 1e9): rows.append((t0, k, m, configs, progs))
    else: m.close()
  return sorted(rows, key=lambda r: r[0])[:n]
