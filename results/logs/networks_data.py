"""Does H200 data of some networks help the ranker on networks it has not seen? The networks shards' 24 networks are dealt into two
halves (seeded); on each half's kernels: a ranker trained on the base alone (A) against one trained on the base plus the other
half's networks rows (B), default parameters, seeds 0 and 1. Per-kernel metrics averaged over the test kernels."""
import json, sqlite3, sys, time
import numpy as np
from models.data import load
from models.ranker import Ranker
from models.evaluate import per_kernel, average
ds = load("dataset/data/cuda.sqlite")
base = {r[0] for r in sqlite3.connect("file:dataset/data/cuda.sqlite?mode=ro", uri=True).execute("SELECT key FROM kernels")}
new = ~np.isin(ds.kernel, list(base))
nets = sorted(set(ds.family[new].tolist()))
np.random.default_rng(34).shuffle(nets)
halves = [sorted(nets[::2]), sorted(nets[1::2])]
out = {"networks": halves, "rows_base": int((~new).sum()), "rows_new": int(new.sum()), "runs": []}
def fit(tr, seed):
  t0 = time.time(); m = Ranker(seed=seed, threads=2).fit(ds.X[tr], ds.time_s[tr], ds.kernel[tr]); return m, round(time.time() - t0, 1)
def metrics(m, te): return average(per_kernel(m.predict(ds.X[te]), ds.time_s[te], ds.kernel[te]))
for seed in (0, 1):
  a, fa = fit(~new, seed)
  for h in (0, 1):
    te, other = new & np.isin(ds.family, halves[h]), new & np.isin(ds.family, halves[1 - h])
    b, fb = fit(~new | other, seed)
    res = {"seed": seed, "test_half": h, "test_kernels": int(len(np.unique(ds.kernel[te]))), "test_rows": int(te.sum()),
           "A_base": {**metrics(a, te), "train_rows": int((~new).sum()), "fit_s": fa},
           "B_base_plus_other_half": {**metrics(b, te), "train_rows": int((~new | other).sum()), "fit_s": fb}}
    print(json.dumps(res), flush=True); out["runs"].append(res)
json.dump(out, open(sys.argv[1], "w"), indent=1)
