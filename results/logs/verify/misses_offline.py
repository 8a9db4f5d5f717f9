"""The fresh splits' misses, no GPU: for every kernel whose learned answer ran over 1.2x BEAM=2's, does the shipped sm_90 model score
BEAM=2's pick above the learned one (the search never reached it: a search miss) or not above it (a ranking miss)? Scores are the model's
(higher = predicted faster), without the compile penalty. Each learned answer is that of its split's day (the model and search of
that day); the scores are the model shipped now, so a ranking miss is one the shipped model still makes. Output: misses_offline.txt beside this file.
  python results/logs/verify/misses_offline.py > results/logs/verify/misses_offline.txt"""
import glob, json, re, time
from collections import Counter
from dataset.device import renderer_for
from dataset.unseen import kernels_of
from dataset.kernel import opts_from_json
from models.cost_model import CostModel
ren, model = renderer_for("CUDA", "sm_90", compiler=False), CostModel.load("models/cost_model_sm_90.txt")
family = lambda op: "dilated conv" if re.search(r"dilation=[2-9]", op) else "grouped conv" if re.search(r"groups=([2-9]|\d\d)", op) \
  else op.split(":")[0]
print(f"{time.strftime('%Y-%m-%d')}: the shipped sm_90 model's scores of each miss's learned answer and BEAM=2's pick")
tally = Counter()
for f in sorted(glob.glob("results/unseen_s[0-9]*.json"), key=lambda f: int(re.findall(r"\d+", f)[-1])):
  if not re.fullmatch(r"results/unseen_s\d+\.json", f): continue
  for e in json.load(open(f)).get("kernels", []):
    if not e.get("beam2_us") or not e.get("learned_us") or e["learned_us"] < 1.2*e["beam2_us"] or not e.get("beam2_opts"): continue
    k = next((k for k in kernels_of(e["op"], "CUDA") if k.key == e["key"]), None)
    if k is None: continue
    s = model.score_opts(k.ast, [opts_from_json(e["learned_opts"]), opts_from_json(e["beam2_opts"]), ()], ren)
    kind = "search miss" if s[1] > s[0] else "ranking miss"
    tally[(family(e["op"]), kind)] += 1
    us = e["learned_us"]
    print(f"{f.split('/')[-1]:16} {e['name'][:70]:70} {us/e['beam2_us']:.2f}x {us:8.1f} us  scores learned {s[0]:+.2f} BEAM=2 {s[1]:+.2f} "
          f"hand {s[2]:+.2f}: {kind}")
print("\nby family: " + ", ".join(f"{fam} {kind} {n}" for (fam, kind), n in sorted(tally.items())))
print("in all: " + ", ".join(f"{kind} {sum(n for (_, k), n in tally.items() if k == kind)}" for kind in ("search miss", "ranking miss")))
