"""dataset.retime's command line with its select step's ranking: the cost model's scores of a store's rows, computed here since
dataset imports nothing from models. run and apply need no model (python -m dataset.retime run|apply works without LightGBM).

  python -m models.retime select dataset/data/cuda.sqlite --model models/cost_model_sm_90.txt --top 3 --held-out 5 --out out/retime.json.gz"""
from __future__ import annotations
import sys
import numpy as np
from dataset import retime
from models.cost_model import CostModel, ranker_params
from models.data import Dataset, load
from models.evaluate import out_of_fold
from models.ranker import Ranker

def held_out_scores(ds:Dataset, model:str, folds:int, seed:int, threads:int=0) -> np.ndarray:
  """Every row scored by a ranker with the model's parameters fitted on the other folds' kernels (by kernel, models.evaluate): the
  shipped model has learnt the stored times, wrong ones included, so only a model that never saw a kernel can point at its suspects."""
  p = ranker_params(model)
  return out_of_fold(lambda: Ranker(seed=seed, threads=threads, **p), ds, folds, seed)

def rank(store:str, model:str, device:str|None=None, held_out:int=0, seed:int=0, threads:int=0, shards:bool=True) -> tuple[Dataset, np.ndarray]:
  """The store's ok rows (with its shards, dataset.shard) and the model's score of each (dataset.retime.Rank); out of fold with
  held_out folds."""
  ds = load(store, device=device, shards=shards)
  cm = CostModel.load(model, arch=ds.arch)   # a model of another arch is an error even where only its parameters are used
  return ds, held_out_scores(ds, model, held_out, seed, threads) if held_out else cm.score(ds.X)

def main(argv=None) -> int: return retime.main(argv, rank)

if __name__ == "__main__": sys.exit(main())
