"""Offline, no GPU, on the splits already measured (results/unseen_s*.json; a diagnostic: Beam.group_best is judged on a fresh split):
the kernels whose first batch Beam(group_best=True) changes, each with its learned/BEAM=2 ratio, whether BEAM=2's pick groups a
reduction, and the config group_best adds. `miss`: every kernel 1.2x or more behind BEAM=2; `other`: a seeded 5% sample of the rest.
  python results/logs/verify/group_best/reach.py miss > results/logs/verify/group_best/miss.txt   (and `other`; ~4 min each, 2 cores)"""
import glob, re, sys, random, json
sys.path.insert(0, 'scripts')
from pathlib import Path
from bench_unseen import measured
from dataset.device import renderer_for
from dataset.kernel import opts_from_json
from dataset.sampler import replay
from models.cost_model import CostModel
from search.beam import Beam
from search.context import Context, _KIDS
from search.picks import grouped
which = sys.argv[1]
res = [Path(p) for p in sorted(glob.glob('results/unseen_s[0-9]*.json')) if re.fullmatch(r'unseen_s\d+\.json', Path(p).name)]
model, ren = CostModel.load('models/cost_model_sm_90.txt'), renderer_for("CUDA", "sm_90", compiler=False)
score = model.scorer(); rng = random.Random(0)
keep = (lambda e: e['learned_us'] >= 1.2*e['beam2_us']) if which == 'miss' else (lambda e: e['learned_us'] < 1.2*e['beam2_us'] and rng.random() < 0.05)
n = changed = 0
for p, e, base in measured(res, keep, ren):
  _KIDS.clear(); ctx = Context(base, None, score); d = Beam().descend(ctx)
  a = Beam(group_best=False)._seed(ctx, d); b = Beam()._seed(ctx, d)
  n += 1; ch = [o for o, k in b if k not in {k for _, k in a}]
  changed += bool(ch)
  bg = any(x.op.name.startswith('GROUP') for x in opts_from_json(e['beam2_opts']))
  print(p.name, e['name'][:70], round(e['learned_us']/e['beam2_us'], 2), 'beam2 groups' if bg else '', 'CHANGED' if ch else '', [(x.op.name, x.axis, x.arg) for x in ch[0]] if ch else '', flush=True)
print(which, 'kernels', n, 'first batch changed', changed)
