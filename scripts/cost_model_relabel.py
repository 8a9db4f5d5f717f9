"""What a relabelling of the dataset (dataset.retime apply) does to the held-out metrics, split into the model and the labels: the
same ranker (a cost model's parameters, 5-fold by kernel, one seed) is fitted on the old and on the new store, and each one's
out-of-fold scores are scored against both stores' times; then against the old times with only one retimed group's rows replaced
(from the run's results file), to say which group moved the metrics. A random ranking on both is the reference.
  python scripts/cost_model_relabel.py old.sqlite dataset/data/cuda.sqlite --model models/cost_model_sm_90.json \
    --retimed dataset/logs/gpu_run13_consolidated.json.gz --threads 2
(old.sqlite: the store before, e.g. git show 43798fd~1:dataset/data/cuda.sqlite > old.sqlite)"""
import argparse, gzip, json, sys
from pathlib import Path
import numpy as np
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from dataset.retime import held_out_scores
from models.data import load
from models.evaluate import average, per_kernel, random_scores

def main():
  ap = argparse.ArgumentParser("cost_model_relabel")
  ap.add_argument("old"); ap.add_argument("new"); ap.add_argument("--model", required=True); ap.add_argument("--retimed", required=True)
  ap.add_argument("--seed", type=int, default=0); ap.add_argument("--threads", type=int, default=0)
  a = ap.parse_args()
  old, new = load(a.old), load(a.new)
  if not (np.array_equal(old.kernel, new.kernel) and np.array_equal(old.opts, new.opts)): sys.exit("the two stores hold different rows")
  res = json.loads(gzip.decompress(Path(a.retimed).read_bytes()))
  group = {(k, json.dumps(c["opts"])): c["group"] for k, v in res["kernels"].items() for c in v["configs"]}
  g = np.array([group.get((k, o), "") for k, o in zip(new.kernel, new.opts)])
  show = lambda s, t: " ".join(f"{m}={v:.4f}" for m, v in average(per_kernel(s, t, new.kernel)).items())
  print(f"{len(new)} rows, {len(np.unique(new.kernel))} kernels; retimed rows per group: " +
        ", ".join(f"{x} {int((g == x).sum())}" for x in sorted(set(g) - {""})), flush=True)
  scores = {"fitted on old": held_out_scores(old, a.model, 5, a.seed, a.threads), "fitted on new": held_out_scores(new, a.model, 5, a.seed, a.threads),
            "random": random_scores(len(new), a.seed)}
  for name, s in scores.items():
    print(f"{name:<14} old times: {show(s, old.time_s)}")
    print(f"{name:<14} new times: {show(s, new.time_s)}")
  for x in sorted(set(g) - {""}):
    print(f"fitted on new, old times but the '{x}' rows new: {show(scores['fitted on new'], np.where(g == x, new.time_s, old.time_s))}")

if __name__ == "__main__": main()
