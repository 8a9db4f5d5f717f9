"""How much of the cost model's held-out top-1 gap single timings alone put there: on the H200 consolidation run (each kernel's ~12
fastest and model-picked configs timed again 2-3 times, dataset/logs/gpu_run13_consolidated.json.gz), the top-1 score (best stored
time / stored time of the pick) of an ideal ranking by the repeated timings' median, judged by the stored single timings as
models.evaluate judges a model. Run from the repository root:
  python results/logs/ranker_limits/noise_ceiling.py > results/logs/ranker_limits/noise_ceiling.txt"""
import gzip, json
import numpy as np
d = json.load(gzip.open("dataset/logs/gpu_run13_consolidated.json.gz"))
sc, same = [], []
for v in d["kernels"].values():
  cs = [c for c in v["configs"] if c.get("old_s") and len(c.get("new") or []) >= 2]
  if len(cs) < 4: continue
  old, med = np.array([c["old_s"] for c in cs]), np.array([np.median(c["new"]) for c in cs])
  sc.append(old.min()/old[np.argmin(med)]); same.append(np.argmin(med) == np.argmin(old))
print(f"{d['device']}: {len(sc)} kernels, {np.median([len(v['configs']) for v in d['kernels'].values()]):.0f} configs each (median)")
print(f"ideal ranking (repeated timings' median) judged by the stored single timings: top-1 score {np.mean(sc):.3f}")
print(f"the single timings' fastest is the repeated timings' fastest on {np.mean(same):.0%} of kernels")
