"""How saved rankers rank the search suite's own dataset configs (kernels a no-suite model never saw): per kernel, the best
measured time divided by the best among each model's top-k picks, geomean over the suite's kernels.
  python scripts/cost_model_suite.py dataset/data/cuda.sqlite models/cost_model_sm_90_nosuite.txt [OTHER.txt ...]"""
import argparse, sys
from pathlib import Path
import numpy as np
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from models.data import load
from models.ranker import Ranker

SUITE_KEYS = Path(__file__).resolve().parents[1] / "results" / "suite_keys.txt"

def main():
  ap = argparse.ArgumentParser("cost_model_suite")
  ap.add_argument("dataset"); ap.add_argument("models", nargs="+"); ap.add_argument("--k", default="1,3,5,10,15")
  a = ap.parse_args()
  ds = load(a.dataset)
  keys = {l.split("#")[0].strip() for l in SUITE_KEYS.read_text().splitlines()} - {""}
  s = ds.subset(np.isin(ds.kernel, list(keys)))
  print(f"{len(s)} configs of {len(set(s.kernel))} suite kernels")
  for p in a.models:
    sc, out = Ranker.load(p).predict(s.X), {}
    for k in map(int, a.k.split(",")):
      r = [s.time_s[m].min()/s.time_s[m][np.argsort(-sc[m])[:k]].min() for m in (s.kernel == key for key in sorted(set(s.kernel)))]
      out[k] = round(float(np.exp(np.mean(np.log(r)))), 4)
    print(f"{p}: geomean top-k {out}")

if __name__ == "__main__": main()
