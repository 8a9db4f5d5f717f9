# Where the CNN training step's drop-in kernels lose to BEAM=2's picks on the H200 (results/dropin_h200_cnn.md), offline, no GPU: the
# step's kernels built device-less for sm_90; per named kernel, the shipped model's scores of both configs and where BEAM=2's pick
# stands in the first round's model descent (Beam().descend). Usage, from the repository root:
#   mkdir -p /tmp/c && tar xzf results/logs/dropin/h200_cnn/all.tgz -C /tmp/c && PYTHONPATH=. python3 results/logs/dropin/h200_cnn/rank.py \
#     /tmp/c/cnn_h200/runs/cnn_train.kernels.json r_64_32_3_3_256_8_8,r_256_32_24_24_32_6_6,r_256_32_20_20_32_5_5,r_256_64_8_8_32_3_3
import json, sys
from tinygrad import Tensor, nn, Context, dtypes
from tinygrad.uop.ops import Ops
from dataset.device import renderer_for
from dataset.kernel import scheduler, opts_from_json, describe
from dataset.sampler import replay
from models.cost_model import CostModel
from search.beam import Beam
from search.context import Context as SCtx
bs, c1, c2 = 256, 32, 64
D = "CUDA"
class Model:
  def __init__(self):
    self.layers = [nn.Conv2d(1, c1, 5), Tensor.relu, nn.Conv2d(c1, c1, 5), Tensor.relu, nn.BatchNorm(c1), Tensor.max_pool2d,
                   nn.Conv2d(c1, c2, 3), Tensor.relu, nn.Conv2d(c2, c2, 3), Tensor.relu, nn.BatchNorm(c2), Tensor.max_pool2d,
                   lambda x: x.flatten(1), nn.Linear(c2*9, 10)]
  def __call__(self, x): return x.sequential(self.layers)
m = Model()
for k, t in nn.state.get_state_dict(m).items():
  t.replace(Tensor.empty(*t.shape, dtype=t.dtype, device=D))
params = nn.state.get_parameters(m)
for p in params: p.requires_grad = True
opt = nn.optim.Adam(params)
x, y = Tensor.empty(bs, 1, 28, 28, device=D), Tensor.empty(bs, dtype=dtypes.int32, device=D)
with Context(TRAINING=1):
  opt.zero_grad()
  loss = m(x).sparse_categorical_crossentropy(y).backward()
  lin = Tensor.schedule_linear(loss, *opt.schedule_step())
asts = [c.src[0] for c in lin.src if c.src[0].op is Ops.SINK]
ren = renderer_for("CUDA", "sm_90", compiler=False)
kern = json.load(open(sys.argv[1]))["kernels"]
model = CostModel.load("models/cost_model_sm_90.txt"); score = model.scorer(); beam = Beam()
names = sys.argv[2].split(",")
for a in asts:
  s = scheduler(a, ren); n = describe(s)
  if n not in names: continue
  r = [r for r in kern if r["kernel"] == n][0]
  kt, b2 = replay(s, tuple(opts_from_json(r["kerntune_opts"]))), replay(s, tuple(opts_from_json(r["beam2_opts"])))
  ctx = SCtx(s, None, score); descent = beam.descend(ctx)
  batch, pool = {k for _, k in beam._seed(ctx, descent)}, descent[1]
  sk, sb = (float(score([k])[0]) for k in (kt, b2))
  pool_sc = score([replay(s, o) for o, _ in pool]) if pool else []
  print(n, f"KT {r['kerntune_warm_us']:.0f} us score {sk:.3f}; BEAM {r['beam2_warm_us']:.0f} us score {sb:.3f}; descent scored {len(pool)}, above BEAM's {sum(float(v) > sb for v in pool_sc)}, above KT's {sum(float(v) > sk for v in pool_sc)}; BEAM's in descent: {b2.ast.key in {k for _, k in pool}}, in first batch: {b2.ast.key in batch}")
