"""How far a search's own timing of its answer (learned_search_us) lies from the side-by-side re-timing of the same config
(learned_us), by the config's time, over the fresh splits' results (results/unseen_sS.json); and per split, the kernels whose
answer ran slower than the hand-coded config side by side (by more than 2%), and the geomean had the answer been the faster of
the two.   usage: python results/logs/timing/search_vs_side_by_side.py"""
import glob, json, math, re
from pathlib import Path
import numpy as np
ROOT = Path(__file__).resolve().parents[3]
files = sorted((p for p in glob.glob(str(ROOT / "results/unseen_s*.json")) if re.search(r"unseen_s\d+\.json$", p)),
               key=lambda p: int(re.search(r"_s(\d+)\.", p).group(1)))
gm = lambda xs: math.exp(sum(map(math.log, xs))/len(xs))
dev = {"under 20 us": [], "20-100 us": [], "over 100 us": []}
print("split | kernels | answer slower than hand-coded (side by side) | geomean vs BEAM=2 | with the faster of the two")
for f in files:
  ks = [k for k in json.loads(Path(f).read_text()).get("kernels", []) if k.get("verified") and k.get("learned_us") and k.get("beam2_us") and k.get("hand_us")]
  for k in ks:
    if k.get("learned_search_us"):
      us = k["learned_us"]
      dev["under 20 us" if us < 20 else "20-100 us" if us < 100 else "over 100 us"].append(abs(math.log(k["learned_search_us"]/us)))
  print(f"{Path(f).stem[8:]} | {len(ks)} | {sum(k['learned_us'] > 1.02*k['hand_us'] for k in ks)} | {gm([k['learned_us']/k['beam2_us'] for k in ks]):.3f} | "
        f"{gm([min(k['learned_us'], k['hand_us'])/k['beam2_us'] for k in ks]):.3f}")
print("\nthe answer's time in its search against side by side: |log ratio| median, 90th percentile, share over 10%")
for n, v in dev.items():
  a = np.array(v)
  print(f"{n}: {len(a)} kernels, median {np.median(a):.3f}, p90 {np.percentile(a, 90):.3f}, over 10%: {np.mean(a > math.log(1.1)):.2f}")
