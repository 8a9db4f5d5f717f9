"""Kernel-held-out ranking of the H200 store (dataset/data/cuda.sqlite and its shards), split by whether a kernel's fastest
measured config groups its reduction (GROUP/GROUPTOP) and by that config's time. The shipped recipe's LightGBM ranker alone
(Ranker defaults), 5 kernel-grouped folds, seed 0; per kernel: top-1 regret (the measured time of the model's top-scored config
over the fastest measured one) and top-5 (the fastest of its five best-scored). A diagnostic of the training store only: no
benchmark kernel is in it (tests/test_unseen.py).
  usage: python results/logs/model/ranking_by_size.py > results/logs/model/ranking_by_size.txt   (~25 min on 2 cores, cold cache)"""
import json, sys
from pathlib import Path
import numpy as np
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
from models.data import load
from models.evaluate import out_of_fold
from models.ranker import Ranker

ds = load(ROOT / "dataset/data/cuda.sqlite", workers=2)
grouped = np.array([any(o[0] in ("GROUP", "GROUPTOP") for o in json.loads(s)) for s in ds.opts])
score = out_of_fold(lambda: Ranker(threads=2), ds, folds=5, seed=0)
print(f"{ds.device}: {len(ds.time_s)} measurements, {len(set(ds.kernel.tolist()))} kernels; {grouped.mean():.2f} of the rows group a reduction")
rows = []
for k in sorted(set(ds.kernel.tolist())):
  m = ds.kernel == k
  t, s, g = ds.time_s[m], score[m], grouped[m]
  order = np.argsort(-s)
  rows.append((bool(g[t.argmin()]), bool(g.any()), t.min()*1e6, t[order[0]]/t.min(), t[order[:5]].min()/t.min()))
gm = lambda xs: float(np.exp(np.mean(np.log(xs)))) if xs else float("nan")
for name, sel in (("fastest config grouped", lambda r: r[0]), ("fastest not grouped, a grouped one measured", lambda r: not r[0] and r[1]),
                  ("no grouped config measured", lambda r: not r[1])):
  rs = [r for r in rows if sel(r)]
  print(f"{name}: {len(rs)} kernels, top-1 regret {gm([r[3] for r in rs]):.3f}, top-5 {gm([r[4] for r in rs]):.3f}")
  for lo, hi in ((0, 20), (20, 100), (100, float("inf"))):
    sub = [r for r in rs if lo <= r[2] < hi]
    print(f"  fastest {lo}-{hi} us: {len(sub)} kernels, top-1 {gm([r[3] for r in sub]):.3f}, top-5 {gm([r[4] for r in sub]):.3f}")
