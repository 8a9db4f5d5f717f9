"""Offline, no GPU: could Beam.second_opinion's picks keep a milder compile penalty? On the published splits' kernels 1.2x or more
behind BEAM=2, the rank of BEAM=2's pick among the descent's configs by the blend's MLP alone, less the compile penalty with its cap at
1, 2, 4 and 8 s (the shipped model's: 1 s) and with none; the last lines count the picks in the top 3 and 8, and the predicted compile
seconds of those the unpenalized MLP ranks top-3.
  python results/logs/ranker_limits/cap_ranks.py > results/logs/ranker_limits/cap_ranks.txt"""
import json, sys
sys.path.insert(0, "scripts")
from pathlib import Path
import numpy as np
from bench_unseen import measured
from dataset.device import renderer_for
from dataset.kernel import opts_from_json
from dataset.sampler import replay
from models.cost_model import CostModel
from models.compile_penalty import penalty
from models.features import featurize
from search.beam import Beam
from search.context import Context, _KIDS
model, ren = CostModel.load("models/cost_model_sm_90.txt"), renderer_for("CUDA", "sm_90", compiler=False)
score = model.scorer()
files = sorted(p for p in Path("results").glob("unseen_s*.json") if not p.name.endswith("_beam2.json"))
CAPS = (1.0, 2.0, 4.0, 8.0, None)
rows = []
for p, e, base in measured(files, lambda e: e["learned_us"] >= 1.2*e["beam2_us"], ren):
  if (b := replay(base, tuple(opts_from_json(e["beam2_opts"])))) is None: continue
  _KIDS.clear()
  pool = [k for k in (replay(base, o) for o, _ in Beam().descend(Context(base, None, score))[1]) if k is not None and k.ast.key != b.ast.key]
  ks = pool + [b]
  X = np.stack([featurize(k, model.props) for k in ks])
  _, alt = model.opinions(X)
  lt = model.compile_model.predict_log_time(X)
  r = {}
  for cap in CAPS:
    a = alt - (model.penalty_unit*penalty(lt, cap, 1.0) if cap else 0)
    r[str(cap)] = 1 + int((a[:-1] > a[-1]).sum())
  rows.append({"name": e["name"], "split": p.name, "compile_s": round(float(np.exp(lt[-1])), 2), **r})
  print(json.dumps(rows[-1]), flush=True)
print(f"\n{len(rows)} misses; BEAM=2's pick in the MLP's top 3 / top 8 with the compile penalty's cap at:")
for cap in CAPS: print(f"  {cap or 'no penalty'}: {sum(r[str(cap)] <= 3 for r in rows)} / {sum(r[str(cap)] <= 8 for r in rows)}")
print("predicted compile s of the picks the unpenalized MLP ranks top-3:", sorted(r["compile_s"] for r in rows if r["None"] <= 3))
