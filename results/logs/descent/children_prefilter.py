"""A model descent's CPU seconds with dataset.sampler.children refusing the actions it knows will fail or break the size limits
(_cannot) and without (every action applied), on corpus-style kernels scheduled offline for sm_90 (no GPU), the shipped model.
The descents' picks must be the same. Run from the repository root:
  python results/logs/descent/children_prefilter.py > results/logs/descent/children_prefilter.txt"""
import platform, time
import dataset.sampler as sampler
from dataset.unseen import kernels_of
from dataset.device import renderer_for
from dataset.kernel import scheduler
from models.cost_model import CostModel
from search.beam import Beam
from search.context import Context

SPECS = ["gemm:m=512:k=768:n=3072:fp32", "conv2d:n=8:c=64:h=56:w=56:k=64:ks=3:stride=1:padding=1:dilation=1:groups=1:fp16",
         "conv2d:n=1:c=256:h=14:w=14:k=256:ks=3:stride=2:padding=1:dilation=1:groups=1:fp32", "softmax:rows=4096:cols=1024:log=0:fp32"]
ren = renderer_for("CUDA", arch="sm_90", compiler=False)
score = CostModel.load("models/cost_model_sm_90.txt", arch="sm_90").scorer()
cannot = sampler._cannot
def descend(kern) -> tuple[float, list]:
  t0 = time.perf_counter(); picks = Beam()._seed(Context(scheduler(kern.ast, ren), None, score)); return time.perf_counter() - t0, [o for o, _ in picks]
print(f"# {platform.processor() or platform.machine()}, {time.strftime('%Y-%m-%d')}: seconds of one model descent (best of 3), each way")
tot = {True: 0.0, False: 0.0}
for spec in SPECS:
  for kern in kernels_of(spec, "CUDA")[:2]:
    descend(kern)   # warm
    got = {}
    for on in (True, False):
      sampler._cannot = cannot if on else (lambda k, a, sizes: False)
      runs = [descend(kern) for _ in range(3)]
      got[on] = (min(s for s, _ in runs), runs[0][1])
      tot[on] += got[on][0]
    sampler._cannot = cannot
    assert got[True][1] == got[False][1], kern.name
    print(f"{kern.name}: {got[True][0]:.2f} s with the refusals, {got[False][0]:.2f} s without (same picks)")
print(f"in all: {tot[True]:.2f} s against {tot[False]:.2f} s ({tot[True]/tot[False]:.3f}x)")
