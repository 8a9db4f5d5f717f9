"""The searches the learned ones are measured against: random walks (the dataset's sampler), optuna's TPE, and tinygrad's own
BEAM, unchanged."""
from __future__ import annotations
import math
from dataclasses import dataclass
from dataset.sampler import random_walk, replay
from dataset.tinygrad_beam import tinygrad_beam
from search.measure import BudgetExhausted
from search.context import Context

@dataclass
class RandomSearch:
  batch: int = 4
  name: str = "random"
  def run(self, ctx:Context):
    tries = 0
    try:
      while ctx.measurer.has_budget() and tries < 100:
        walks = [w for w in (random_walk(ctx.base, ctx.rng, ctx.rng.randint(1, 8)) for _ in range(self.batch)) if w]
        new = [w for w in dict.fromkeys(walks) if w not in ctx.measurer.times]
        tries = tries + 1 if not new else 0
        if new: ctx.measurer.measure(new)
    except BudgetExhausted: return

@dataclass
class TPE:
  """optuna's TPE over sequences: a depth and one categorical action index per position; sequences that do not apply are
  pruned without a measurement."""
  max_depth: int = 6
  name: str = "tpe"
  def run(self, ctx:Context):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=ctx.rng.randrange(2**31), multivariate=True))
    idx = list(range(len(ctx.actions)))
    def objective(trial):
      depth = trial.suggest_int("depth", 1, self.max_depth)
      opts = tuple(ctx.actions[trial.suggest_categorical(f"a{i}", idx)] for i in range(self.max_depth))[:depth]
      if replay(ctx.base, opts, limits=True) is None: raise optuna.TrialPruned()
      t = ctx.measurer.measure([opts])[0]
      return math.log(t) if t < math.inf else 10.0
    trials = 0
    while ctx.measurer.has_budget() and trials < 5000:
      try: study.optimize(objective, n_trials=25, catch=())
      except BudgetExhausted: return
      trials += 25

@dataclass
class TinygradBeam:
  """tinygrad's BEAM, unchanged (dataset.tinygrad_beam). The budget does not apply: BEAM runs to its own end."""
  amt: int = 2
  name: str = "tinygrad-beam"
  def run(self, ctx:Context):
    m = ctx.measurer
    def compiled(n:int): m.compiled += n
    def timed(): m.timed += 1
    ctx.final_picks = [tinygrad_beam(ctx.base, m.device, self.amt, compiled, timed)]
