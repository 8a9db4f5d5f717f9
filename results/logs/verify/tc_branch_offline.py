"""Beam.tc_branch offline, no GPU: the first batch with and without it on the fresh splits' fp16 convs whose learned answer ran over
1.2x BEAM=2's with BEAM=2's pick on another tensor-core axis, scored by the shipped sm_90 model, and the seconds of CPU the first
batch took here (its model descents). Output: tc_branch_offline.txt beside this file.
  python results/logs/verify/tc_branch_offline.py > results/logs/verify/tc_branch_offline.txt"""
import glob, json, platform, time
from dataset.device import renderer_for
from dataset.unseen import kernels_of
from dataset.kernel import scheduler, opts_to_json
from models.cost_model import CostModel
from search.beam import Beam
from search.context import Context, _KIDS
ren, model = renderer_for("CUDA", "sm_90", compiler=False), CostModel.load("models/cost_model_sm_90.txt")
score = model.scorer()
tc_axes = lambda opts: {o[1] for o in opts if o[0] == "TC"}
print(f"{time.strftime('%Y-%m-%d')}, {platform.machine()}, CPU seconds on this machine")
for f in sorted(glob.glob("results/unseen_s[0-9]*.json")):
  if not f.split("_s")[-1].split(".")[0].isdigit(): continue
  for e in json.load(open(f)).get("kernels", []):
    if not e.get("beam2_us") or e["learned_us"] < 1.2*e["beam2_us"] or not tc_axes(e["beam2_opts"]) or tc_axes(e["beam2_opts"]) == tc_axes(e["learned_opts"]): continue
    k = next(k for k in kernels_of(e["op"], "CUDA") if k.key == e["key"])
    print(f"{f.split('/')[-1]} {e['name']}: learned {e['learned_us']/e['beam2_us']:.2f}x BEAM=2; BEAM=2's pick {e['beam2_opts']}")
    for tb in (False, True):
      _KIDS.clear(); st = time.perf_counter()
      batch = Beam(tc_branch=tb)._seed(Context(scheduler(k.ast, ren), None, score))
      tcs = [opts_to_json(o) for o, _ in batch if any(x.op.name == "TC" for x in o)]
      print(f"  tc_branch={tb}: {time.perf_counter() - st:.2f} s, the batch's tensor-core configs {tcs}")
