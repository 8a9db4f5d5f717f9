"""Where the ranker's top-1 misses are: kernel-held-out scores (5-fold by kernel, one seed, default parameters), the per-kernel
top-1 distribution, and the worst kernels with the model's pick next to the measured best.
  python scripts/cost_model_misses.py dataset/data/cuda.sqlite [--worst 25]"""
import argparse, sys
from pathlib import Path
import numpy as np
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from models.data import load
from models.evaluate import kernel_kfold, per_kernel, run_splits
from models.ranker import Ranker

def main():
  ap = argparse.ArgumentParser("cost_model_misses")
  ap.add_argument("dataset"); ap.add_argument("--worst", type=int, default=25); ap.add_argument("--threads", type=int, default=0)
  a = ap.parse_args()
  ds = load(a.dataset)
  X, t, kern = ds.X, ds.time_s, ds.kernel
  s = run_splits(lambda i, tr: Ranker(seed=0, threads=a.threads), X, t, kern, kernel_kfold(kern, 5, 0))
  pk = per_kernel(s, t, kern)
  t1 = np.array([v["top1_score"] for v in pk.values()])
  print(f"{len(t1)} kernels: top-1 mean {t1.mean():.4f}, median {np.median(t1):.4f}, below 0.8: {(t1 < 0.8).mean():.1%}, "
        f"below 0.5: {(t1 < 0.5).mean():.1%}; mean without the worst 10%: {np.sort(t1)[len(t1)//10:].mean():.4f}")
  names = dict(zip(kern, ds.name))
  for k, v in sorted(pk.items(), key=lambda kv: kv[1]["top1_score"])[:a.worst]:
    m = kern == k
    print(f"{v['top1_score']:.3f} tau {v['kendall_tau']:.2f} {names[k]}\n  pick {ds.opts[m][np.argmax(s[m])]}\n  best {ds.opts[m][np.argmin(t[m])]}")

if __name__ == "__main__": main()
