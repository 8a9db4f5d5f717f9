"""The model-only descent's width, no GPU: on the fresh splits' kernels whose learned answer ran over 1.2x BEAM=2's (splits 1-33,
all measured before this ran), the best score a descent of width 4 (the default), 8 and 16 reaches, against the score of BEAM=2's
pick (scores without the compile penalty; the descents rank with it, as the search does), with the seconds each descent took here
(one process, no pool). A search miss (BEAM=2's pick scored above the answer) is one a wider descent can mend where it reaches a
config scored at least as high as BEAM=2's pick. Output: descent_width_offline.txt beside this file.
  python results/logs/verify/descent_width_offline.py > results/logs/verify/descent_width_offline.txt"""
import glob, json, platform, re, statistics, time
from dataset.device import renderer_for
from dataset.kernel import opts_from_json, scheduler
from dataset.unseen import kernels_of
from models.cost_model import CostModel
from search.beam import Beam
from search.context import Context, _KIDS
WIDTHS = (4, 8, 16)
ren, model = renderer_for("CUDA", "sm_90", compiler=False), CostModel.load("models/cost_model_sm_90.txt")
score = model.scorer()   # as the search descends: less the compile penalty
print(f"{time.strftime('%Y-%m-%d')}, {platform.machine()}: best descent score by width {WIDTHS} (seconds) against BEAM=2's pick's score")
reach, secs, n_search = {w: 0 for w in WIDTHS}, {w: [] for w in WIDTHS}, 0
for f in sorted(glob.glob("results/unseen_s[0-9]*.json"), key=lambda f: int(re.findall(r"\d+", f)[-1])):
  if not re.fullmatch(r"results/unseen_s\d+\.json", f): continue
  for e in json.load(open(f)).get("kernels", []):
    if not e.get("beam2_us") or not e.get("learned_us") or e["learned_us"] < 1.2*e["beam2_us"] or not e.get("beam2_opts"): continue
    if (k := next((k for k in kernels_of(e["op"], "CUDA") if k.key == e["key"]), None)) is None: continue
    sl, sb = model.score_opts(k.ast, [opts_from_json(e["learned_opts"]), opts_from_json(e["beam2_opts"])], ren)
    row = []
    for w in WIDTHS:
      _KIDS.clear(); ctx = Context(scheduler(k.ast, ren), None, score); st = time.perf_counter()
      picks, _ = Beam(descent_width=w)._descent(ctx, [()], {ctx.base.ast.key}, Beam.max_depth, None)
      secs[w].append(dt := time.perf_counter() - st)
      best = float(model.score_opts(k.ast, [picks[0][0]], ren)[0]) if picks else float("-inf")
      if sb > sl: reach[w] += best >= sb
      row.append(f"w{w} {best:+.2f} ({dt:.1f} s)")
    n_search += sb > sl
    print(f"{f.split('/')[-1]:16} {e['name'][:60]:60} {e['learned_us']/e['beam2_us']:.2f}x  BEAM=2 {sb:+.2f} answer {sl:+.2f}  " + "  ".join(row))
print(f"\nsearch misses (BEAM=2's pick scored above the answer): {n_search}; a descent reaching BEAM=2's score: " +
      ", ".join(f"width {w} {reach[w]}" for w in WIDTHS))
print("descent seconds, median and total: " + ", ".join(f"width {w} {statistics.median(secs[w]):.2f} / {sum(secs[w]):.0f}" for w in WIDTHS))
