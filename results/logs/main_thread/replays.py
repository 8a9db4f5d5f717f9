"""What seed_batch's rows (opts, key, score, shape terms) take off the searching thread, per kernel: the replays Beam.prepare made
of a first batch computed in a worker (for its AST keys), and the replays and scoring Beam._learn made of it after the first round;
and what a later round's neighbourhood of a config (near_k's one job) costs that thread where it is scored there, for the batch's
first model pick.
CUDA kernels scheduled offline (sm_90 renderer, no GPU), the shipped sm_90 model. Run from the repository root:
  python results/logs/main_thread/replays.py > results/logs/main_thread/replays.txt"""
import platform, time
import numpy as np
from dataset.unseen import kernels_of
from dataset.device import renderer_for
from dataset.kernel import scheduler
from dataset.sampler import replay
from models.cost_model import CostModel
from search.adapt import shape_terms
from search.beam import Beam
from search.context import Context, _scored
from dataset.sampler import ACTIONS

SPECS = ["gemm:m=2048:k=1024:n=3072:fp16", "conv2d:n=32:c=128:h=28:w=28:k=128:ks=3:stride=1:padding=1:dilation=1:groups=64:fp32",
         "attention:b=4:heads=32:seq=512:dim=128:causal=1:fp32", "layernorm:rows=12000:cols=1280:fp32", "softmax:rows=98304:cols=1024:log=0:fp32"]
ren = renderer_for("CUDA", arch="sm_90", compiler=False)
score = CostModel.load("models/cost_model_sm_90.txt", arch="sm_90").scorer()
print(f"# {platform.processor() or platform.machine()}, {time.strftime('%Y-%m-%d')}: per kernel, ms of the searching thread (best of 3)")
total = 0.0
for spec in SPECS:
  for kern in kernels_of(spec, "CUDA"):
    seeds = [o for o, _ in Beam()._seed(Context(scheduler(kern.ast, ren), None, score))]
    best = []
    for _ in range(3):
      base = scheduler(kern.ast, ren)   # a fresh root, as the searching process has
      t0 = time.perf_counter(); [replay(base, o) for o in seeds]                       # Beam.prepare: keys
      t1 = time.perf_counter(); ks = [replay(base, o) for o in seeds]                  # Beam._learn: the batch again, scored
      np.asarray(score(ks)); [shape_terms(k) for k in ks]; t2 = time.perf_counter()
      best.append((t1 - t0, t2 - t1))
    p, l = min(best, key=sum)
    total += p + l
    t0 = time.perf_counter(); nb = _scored(scheduler(kern.ast, ren), score, ACTIONS, seeds[1], True); nt = time.perf_counter() - t0
    print(f"{kern.name}: {len(seeds)} configs, prepare {p*1e3:.0f} ms, _learn {l*1e3:.0f} ms; neighbourhood of {len(nb)}: {nt*1e3:.0f} ms")
print(f"prepare and _learn: {total:.2f} s over the kernels above")
