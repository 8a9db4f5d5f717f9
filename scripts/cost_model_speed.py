"""Featurize + predict speed of the cost model alone (train-cost-model --evaluate measures it too, first thing, but on this 2-vCPU
machine anything else running at the time shows in it), against compile + time on the GPU host from a generation log:
  python scripts/cost_model_speed.py dataset/data/cuda.sqlite --threads 2"""
from __future__ import annotations
import argparse, json
from models.data import load
from models.train import GPU_LOG, compile_rate, measure_speed, speed_kernels

def main(argv=None) -> int:
  ap = argparse.ArgumentParser("cost_model_speed")
  ap.add_argument("dataset"); ap.add_argument("--threads", type=int, default=2); ap.add_argument("--folds", type=int, default=5)
  a = ap.parse_args(argv)
  ds = load(a.dataset)
  sp = measure_speed(ds, a.dataset, speed_kernels(ds, a.folds, 0), 0, a.threads)   # as --evaluate with seed 0
  comp = compile_rate(GPU_LOG)
  rate = {m: r["candidates"]/r["seconds"] for m, r in sp.items()}
  print(json.dumps({"featurize_predict_per_s": rate, "compile_time_per_s": comp and comp["per_s"],
                    "ratio": comp and rate["batched_all_cores"]/comp["per_s"]}, indent=1))
  return 0

if __name__ == "__main__": raise SystemExit(main())
