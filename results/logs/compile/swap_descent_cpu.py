"""Rooted's SWAP (one substitute pass) against tinygrad's (two pattern-matched rewrites) in the model descent, on corpus kernels for
the H200's renderer (no GPU: the model scores, nothing is compiled): that both descend to the same scored pool, and the CPU seconds
of making the children of the descent's parents (every action tried, as dataset.sampler.children does), best of 5, the two ways
interleaved. Output: swap_descent_cpu.txt beside this file.
  python results/logs/compile/swap_descent_cpu.py > results/logs/compile/swap_descent_cpu.txt"""
import platform, time
import search.context as sc
from dataset.corpus import parse_variant
from dataset.kernel import kernel_asts, scheduler, Rooted
from dataset.device import renderer_for
from dataset.sampler import ACTIONS, children
from models.cost_model import CostModel
from search.beam import Beam
from search.context import Context, _KIDS
from tinygrad.codegen.opt import OptOps
from tinygrad.codegen.opt.postrange import Scheduler

SPECS = ["conv2d:c=64:dilation=1:groups=1:h=56:k=64:ks=3:n=8:padding=1:stride=1:w=56:fp16",
         "conv2d:c=128:dilation=1:groups=1:h=56:k=128:ks=3:n=8:padding=1:stride=2:w=56:fp16",
         "conv2d:c=256:dilation=2:groups=1:h=28:k=256:ks=3:n=8:padding=2:stride=1:w=28:fp16", "gemm:m=1024:k=1024:n=1024:fp16"]
ren, score = renderer_for("CUDA", "sm_90", compiler=False), CostModel.load("models/cost_model_sm_90.txt").scorer()
ways = {"tinygrad": lambda self, opt, append_opt=True: Scheduler.apply_opt(self, opt, append_opt), "rooted": Rooted.apply_opt}
swaps = [a for a in ACTIONS if a.op is OptOps.SWAP]
print(f"{time.strftime('%Y-%m-%d')}, {platform.machine()}, models/cost_model_sm_90.txt; children of the descent's parents: all {len(ACTIONS)} actions, of which {len(swaps)} SWAPs")
tot = {w: 0.0 for w in ways}
for spec in SPECS:
  base = scheduler(max(kernel_asts(*parse_variant(spec).build("CUDA")), key=lambda a: len(a.toposort())), ren)
  pools, parents = {}, []
  for w in ways:
    Rooted.apply_opt = ways[w]; _KIDS.clear()
    sc.children = lambda k, actions=ACTIONS: (parents.append(k) if w == "rooted" else None) or children(k, actions)
    pools[w] = Beam().descend(Context(base, None, score))[1]
  sc.children = children
  secs = {w: [] for w in ways}
  for rep in range(5):
    for w in (list(ways) if rep % 2 == 0 else list(ways)[::-1]):
      Rooted.apply_opt = ways[w]
      st = time.perf_counter()
      for p in parents: children(p)
      secs[w].append(time.perf_counter() - st)
  Rooted.apply_opt = ways["rooted"]
  t, r = min(secs["tinygrad"]), min(secs["rooted"])
  tot["tinygrad"] += t; tot["rooted"] += r
  print(f"{spec}: {len(parents)} parents; their children in {t:.3f} s with tinygrad's SWAP, {r:.3f} s with Rooted's ({r/t:.3f}); "
        f"the same descent: {pools['tinygrad'] == pools['rooted']}", flush=True)
print(f"summed: {tot['tinygrad']:.3f} s against {tot['rooted']:.3f} s ({tot['rooted']/tot['tinygrad']:.3f})")
