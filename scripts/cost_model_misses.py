"""Where the ranker's top-1 misses are: kernel-held-out scores (5-fold by kernel, one seed, default parameters), the per-kernel
top-1 distribution (with the share of picks whose time is one early-stopped run: a config slower than 4x the best known is timed
once), the mean top-1 and top-5 of kernels grouped by how many of their 6 fastest rows a consolidation timed together (dataset.retime
--best: rows timed in other sessions carry their session's drift and the winner's curse), and the worst kernels with the model's pick
next to the measured best.
  python scripts/cost_model_misses.py dataset/data/cuda.sqlite [--worst 25] [--base models/cost_model_sm_90.json]"""
import argparse, sqlite3, sys
from pathlib import Path
import numpy as np
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from dataset.retime import consolidated
from models.data import load
from models.evaluate import kernel_kfold, per_kernel, run_splits
from models.ranker import Ranker
from models.cost_model import ranker_params

def main():
  ap = argparse.ArgumentParser("cost_model_misses")
  ap.add_argument("dataset"); ap.add_argument("--worst", type=int, default=25); ap.add_argument("--threads", type=int, default=0)
  ap.add_argument("--base", help="a cost model's JSON: rank with its parameters instead of the defaults")
  a = ap.parse_args()
  ds = load(a.dataset)
  X, t, kern = ds.X, ds.time_s, ds.kernel
  p = ranker_params(a.base) if a.base else {}
  s = run_splits(lambda i, tr: Ranker(seed=0, threads=a.threads, **p), X, t, kern, kernel_kfold(kern, 5, 0))
  pk = per_kernel(s, t, kern)
  t1 = np.array([v["top1_score"] for v in pk.values()])
  print(f"{len(t1)} kernels: top-1 mean {t1.mean():.4f}, median {np.median(t1):.4f}, below 0.8: {(t1 < 0.8).mean():.1%}, "
        f"below 0.5: {(t1 < 0.5).mean():.1%}; mean without the worst 10%: {np.sort(t1)[len(t1)//10:].mean():.4f}")
  db = sqlite3.connect(f"file:{a.dataset}?mode=ro", uri=True)
  early = {(k, o): e for k, o, e in db.execute("SELECT kernel, opts, early_stop FROM measurements WHERE status='ok'")}
  done = consolidated(db)
  share = {k: np.mean([(k, o) in done for o in ds.opts[m][np.argsort(t[m], kind="stable")[:6]]]) for k in pk if (m := kern == k).any()}
  for lo, hi, what in ((0, 0, "none"), (1e-9, 0.5, "up to half"), (0.5 + 1e-9, 1 - 1e-9, "most"), (1, 1, "all")):
    ks = [k for k in pk if lo <= share[k] <= hi]
    if ks: print(f"{what} of the 6 fastest rows consolidated: {len(ks)} kernels, top-1 {np.mean([pk[k]['top1_score'] for k in ks]):.4f}, "
                  f"top-5 {np.mean([pk[k]['top5_score'] for k in ks]):.4f}")
  picked = {k: int(np.flatnonzero(kern == k)[np.argmax(s[kern == k])]) for k in pk}
  for lo, hi in ((0, 0.25), (0.25, 0.5), (0.5, 0.8), (0.8, 0.95), (0.95, 1.01)):
    ks = [k for k, v in pk.items() if lo <= v["top1_score"] < hi]
    es = np.mean([bool(early.get((k, ds.opts[picked[k]]))) for k in ks]) if ks else 0.0
    print(f"top-1 in [{lo:.2f}, {min(hi, 1):.2f}{']' if hi > 1 else ')'}: {len(ks)} kernels, their pick one early-stopped run: {es:.0%}")
  names = dict(zip(kern, ds.name))
  for k, v in sorted(pk.items(), key=lambda kv: kv[1]["top1_score"])[:a.worst]:
    m = kern == k
    print(f"{v['top1_score']:.3f} tau {v['kendall_tau']:.2f} {names[k]}\n  pick {ds.opts[m][np.argmax(s[m])]}\n  best {ds.opts[m][np.argmin(t[m])]}")

if __name__ == "__main__": main()
