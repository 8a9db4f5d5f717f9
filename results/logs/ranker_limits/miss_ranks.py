"""Offline, no GPU: on every published unseen kernel whose learned answer ran 1.2x or more behind BEAM=2's, where BEAM=2's pick ranks
among what the shipped model's descent scored (the pool a search's batches come from), under the shipped blend (with and without its
compile penalty), its ranker alone and its MLP alone. If one part ranked the misses' picks high where the blend does not, a batch
that mixes the parts' picks would reach them. python results/logs/ranker_limits/miss_ranks.py > results/logs/ranker_limits/miss_ranks.txt"""
import json, statistics, sys
from pathlib import Path
sys.path.insert(0, "scripts")
from bench_unseen import measured
from dataset.device import renderer_for
from dataset.kernel import opts_from_json
from dataset.sampler import replay
from models.cost_model import CostModel
from search.beam import Beam
from search.context import Context, _KIDS

model, ren, beam = CostModel.load("models/cost_model_sm_90.txt"), renderer_for("CUDA", "sm_90", compiler=False), Beam()
score, w0 = model.scorer(), model.blend.weight
def rank(ks, b, how):   # 1 + how many of ks score above b, scored `how`
  model.blend.weight = {"ranker": 1.0, "mlp": 0.0, "mlp+penalty": 0.0}.get(how, w0)
  s = model.score_schedulers(ks + [b], compile_penalty=how.endswith("+penalty"))
  model.blend.weight = w0
  return 1 + int((s[:-1] > s[-1]).sum())
HOWS = ("blend+penalty", "blend", "ranker", "mlp", "mlp+penalty")
rows = []
# ALL=1: every kernel of the latest splits, 41-43 (one file a split), not only the misses: what a batch mixing the parts' picks
# would lose where the blend's picks found BEAM=2's (python ... ALL=1 > all_ranks.txt)
ALL = len(sys.argv) > 1 and sys.argv[1] == "ALL=1"
files = sorted(p for p in Path("results").glob("unseen_s*.json") if not p.name.endswith("_beam2.json")
               and (not ALL or (p.stem[8:].isdigit() and 41 <= int(p.stem[8:]) <= 43)))
for p, e, base in measured(files, lambda e: ALL or e["learned_us"] >= 1.2*e["beam2_us"], ren):
  if (b := replay(base, tuple(opts_from_json(e["beam2_opts"])))) is None: continue
  _KIDS.clear()
  pool = [k for k in (replay(base, o) for o, _ in beam.descend(Context(base, None, score))[1]) if k is not None and k.ast.key != b.ast.key]
  r = {h: rank(pool, b, h) for h in HOWS}
  rows.append({"name": e["name"], "split": p.name, "ratio": round(e["learned_us"]/e["beam2_us"], 2), "pool": len(pool), **r})
  print(json.dumps(rows[-1]), flush=True)
n = len(rows)
print(f"\n{n} misses over 1.2x in {len(files)} result files; BEAM=2's pick's rank in the descent's pool (1 = scored first):")
for h in HOWS:
  rk = [r[h] for r in rows]
  print(f"  {h:14s} median {statistics.median(rk):6.1f}; in the top 8: {sum(x <= 8 for x in rk):3d}, top 16: {sum(x <= 16 for x in rk):3d}, top 32: {sum(x <= 32 for x in rk):3d}")
for a in HOWS[2:]:
  print(f"  top 8 under {a} but not the blend+penalty: {sum(r[a] <= 8 < r['blend+penalty'] for r in rows)}; under the blend+penalty but not {a}: {sum(r['blend+penalty'] <= 8 < r[a] for r in rows)}")
