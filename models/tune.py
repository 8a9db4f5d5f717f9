"""Hyperparameter tuning of the ranker with optuna, on validation folds only: a study only ever sees the rows it is given (the
training side of an outer split), which it splits again into kernel-grouped inner folds. Test kernels never reach it.

Studies live in persistent storage (default: optuna.db in the cache directory, models.data.CACHE_DIR) under a name that pins the
dataset hash, the feature schema and the outer split, so a rerun resumes a study instead of starting over, and asking for more
trials extends it."""
from __future__ import annotations
import logging
from pathlib import Path
import numpy as np
import optuna
from models.data import CACHE_DIR
from models.evaluate import kernel_kfold, per_kernel, average
from models.ranker import Ranker

STORAGE = f"sqlite:///{CACHE_DIR / 'optuna.db'}"

def suggest(trial:optuna.Trial) -> dict:
  return {"n_estimators": trial.suggest_int("n_estimators", 150, 700, step=50),
          "learning_rate": trial.suggest_float("learning_rate", 0.02, 0.15, log=True),
          "num_leaves": trial.suggest_int("num_leaves", 15, 127, log=True),
          "min_data_in_leaf": trial.suggest_int("min_data_in_leaf", 5, 100, log=True),
          "feature_fraction": trial.suggest_float("feature_fraction", 0.15, 0.9),
          "bagging_fraction": trial.suggest_float("bagging_fraction", 0.5, 1.0),
          "lambda_l2": trial.suggest_float("lambda_l2", 1e-3, 30.0, log=True),
          "label_base": trial.suggest_float("label_base", 1.03, 1.3, log=True),
          "levels": trial.suggest_int("levels", 15, 80),
          "gain_power": trial.suggest_float("gain_power", 1.0, 3.0)}

SPACE = ("n_estimators", "learning_rate", "num_leaves", "min_data_in_leaf", "feature_fraction", "bagging_fraction", "lambda_l2",
         "label_base", "levels", "gain_power")

def objective_value(m:dict) -> float:
  """What a trial maximizes: the ordering (tau) and the picks (top-1, top-5) with equal weight."""
  return m["kendall_tau"] + m["top1_score"] + m["top5_score"]

def tune(X:np.ndarray, time_s:np.ndarray, kernel:np.ndarray, trials:int, name:str, storage:str=STORAGE, seed:int=0,
         folds:int=3, threads:int=0) -> dict:
  """Best Ranker parameters for these rows after `trials` finished trials in study `name` (resumed if it exists)."""
  if trials <= 0: return dict(Ranker.DEFAULTS)
  optuna.logging.set_verbosity(logging.WARNING)
  if storage.startswith("sqlite:///"): Path(storage[len("sqlite:///"):]).parent.mkdir(parents=True, exist_ok=True)   # sqlite makes no folders
  study = optuna.create_study(study_name=name, storage=storage, direction="maximize", load_if_exists=True,
                              sampler=optuna.samplers.TPESampler(seed=seed, n_startup_trials=8))
  done = sum(t.state == optuna.trial.TrialState.COMPLETE for t in study.trials)
  if not study.trials:   # the defaults are the first candidate
    study.enqueue_trial({k: v for k, v in Ranker.DEFAULTS.items() if k in SPACE})
  splits = list(kernel_kfold(kernel, folds, seed + 1000))   # inner folds: a different shuffle than any outer split
  def objective(trial:optuna.Trial) -> float:
    p = suggest(trial)
    s = np.full(len(time_s), np.nan)
    for tr, va in splits: s[va] = Ranker(seed=seed, threads=threads, **p).fit(X[tr], time_s[tr], kernel[tr]).predict(X[va])
    m = average(per_kernel(s, time_s, kernel))
    for k, v in m.items(): trial.set_user_attr(k, v)
    return objective_value(m)
  if trials > done: study.optimize(objective, n_trials=trials - done)
  return {**Ranker.DEFAULTS, **study.best_params}
