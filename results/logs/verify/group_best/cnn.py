"""Offline, no GPU: the reduction kernels of the drop-in CNN training step (scripts/bench_dropin.py cnn_train, built on the CPU and
scored for sm_90) whose first batch Beam(group_best=True) changes, with the config it adds.
  python results/logs/verify/group_best/cnn.py > results/logs/verify/group_best/cnn.txt   (~3 min, 2 cores)"""
import sys
sys.path.insert(0, "scripts")
import search.cache as C
from bench_dropin import cnn_train
from dataset.device import renderer_for
from dataset.kernel import scheduler
from models.cost_model import CostModel
from search.beam import Beam
from search.context import Context, _KIDS
asts = []
class Capture:
  def tune(self, linear, device, table, cache, captured=False): asts.extend(c.src[0] for c in linear.src if c.src[0].op.name == "SINK")
C.enable("/tmp/cnn_gb_empty.json", tuner=Capture())
cnn_train(False)[0]()
ren, model = renderer_for("CUDA", "sm_90", compiler=False), CostModel.load("models/cost_model_sm_90.txt")
score = model.scorer(); n = ch = 0
for u in asts:
  try: base = scheduler(u, ren)
  except Exception as e: continue
  if not any(t.name == "REDUCE" for t in base.axis_types): continue
  _KIDS.clear(); ctx = Context(base, None, score); d = Beam().descend(ctx)
  a, b = Beam(group_best=False)._seed(ctx, d), Beam()._seed(ctx, d)
  add = [o for o, k in b if k not in {k for _, k in a}]
  n += 1; ch += bool(add)
  print(list(base.full_shape), 'CHANGED' if add else '', [(x.op.name, x.axis, x.arg) for x in add[0]] if add else '', flush=True)
print('reduce kernels', n, 'changed', ch)
