"""Where a learned search's compiles go, on the CPU device (no GPU needed): the shipped CPU model, the beam with budget 24 per kernel,
2 compile workers, the first workload of each family named. Per search: configs sent to compile, timed (a new binary), duplicates
of a binary this kernel already had (timed once: Measurer.libs), failures, and those still in the pool at the end (speculated or
cut stragglers, never timed). Of the duplicates: do their opts hold the same multiset as their twin's, and the same sequence once
sorted by op type (a cruder key than the commuting pairs commute.py finds on sm_90)? And among distinct binaries, how many share
such a key (what a dedup on it would lose)? Since the search skips reorderings of commuting opts (search.commute), how many it
skipped, and whether each builds its twin's binary here.   python results/logs/compile/duplicates_cpu.py conv2d,gemm,bmm,layernorm,softmax"""
import sys
from collections import Counter
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from dataset.corpus import select
from dataset.device import device_info
from dataset.kernel import Kernel, kernel_asts
from search.api import load_model, search_kernels
from search.measure import Budget, Measurer

A, PAIRS, MS = {"timed": 0, "duplicate": 0, "failed": 0}, [], []
_time = Measurer._time
def counted(self, c):
  if c.prg is None or c.status != "ok": A["failed"] += 1
  elif c.lib_hash in self.libs: A["duplicate"] += 1; PAIRS.append((self.libs[c.lib_hash], c.task.parent))
  else: A["timed"] += 1
  return _time(self, c)
Measurer._time = counted
dev = "CPU"; name, arch, _ = device_info(dev)
model, _ = load_model(None, dev, name, arch, False)
sent = left = 0
for fam in sys.argv[1].split(","):
  v = select(fam, dev)[0]
  ks = [Kernel(a.key.hex(), a, f"{v.name}#{i}", v.family, v.workload) for i, a in enumerate(kernel_asts(*v.build(dev)))]
  for _, m in search_kernels(ks, dev, "beam", Budget(measurements=24), model.scorer(), 0, 2): MS.append(m); sent += m.compiled; left += len(m._ahead)
multiset = lambda o: tuple(sorted(map(str, o)))
by_op = lambda o: tuple(sorted(o, key=lambda x: x.op.value))
print(f"sent to compile {sent}; {A}; left in the pool {left} (the rest: reference and hand-coded configs)")
for name, key in (("multiset", multiset), ("sorted by op type", by_op)):
  coll = sum(len(m.libs) - len(Counter(map(key, m.libs.values()))) for m in MS)
  print(f"{name}: duplicates with their twin's key {sum(key(a) == key(b) for a, b in PAIRS)} of {len(PAIRS)}; distinct binaries sharing a key {coll} of {sum(len(m.libs) for m in MS)}")
# a reordering that took its twin's program (Measurer.twins, search.commute) shares the very program object: each compiled on its
# own here, to see whether it builds the same binary on this device too
from dataset.compile import Task, run_kernel_task
tw = [(m, o, t) for m in MS for o in m.progs for t in m.libs.values() if o != t and m.progs[o] is m.progs.get(t)]
same = sum(run_kernel_task((m.blob, Task(m.kernel.key, "fixed", o))).lib_hash == run_kernel_task((m.blob, Task(m.kernel.key, "fixed", t))).lib_hash
           for m, o, t in tw)
print(f"twinned (not compiled) {sum(m.twinned for m in MS)}; of them compiled here, the same binary as their twin: {same} of {len(tw)}")
