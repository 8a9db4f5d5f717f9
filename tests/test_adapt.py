"""The online correction (search.adapt): a kernel's own measurements correct the cost model's ranking of its other configs."""
import math
from pathlib import Path
import numpy as np
from dataset.device import renderer_for
from dataset.kernel import Kernel, opts_from_json, scheduler
from dataset.sampler import replay
from dataset.store import Store
from search.adapt import Correction, kendall, shape_terms

STORE = Path(__file__).resolve().parents[1] / "dataset" / "data" / "cpu.sqlite"

def _kernels(n:int=12) -> list[tuple[np.ndarray, np.ndarray]]:
  """(shape terms, times) of the measured configs of n kernels of the shipped CPU store."""
  s = Store(STORE, readonly=True)
  dev = next(iter(s.devices()))
  measured, ren, out = s.measured(dev), renderer_for("CPU", compiler=False), []
  for k in s.kernels("CPU"):
    rows = [(opts_from_json(o), t) for o, st, t, _ in measured.get(k["key"], []) if st == "ok" and t]
    base = scheduler(Kernel.ast_from_blob(k["ast"]), ren)
    got = [(shape_terms(c), t) for o, t in rows if (c := replay(base, o)) is not None]
    if len(got) >= 30 and len({round(t, 9) for _, t in got}) > 20: out.append((np.array([g for g, _ in got]), np.array([t for _, t in got])))
    if len(out) >= n: break
  s.close()
  return out

def test_correction_improves_ranking_as_measurements_arrive():
  """A cost model that ranks a kernel's configs badly (noise plus a wrong preference: less parallel work is faster) is corrected by
  the kernel's measured configs: on the configs not measured yet, Kendall's tau against the measured times grows with the number
  measured, well past the model's own."""
  rng = np.random.default_rng(0)
  taus: dict[int, list[float]] = {0: [], 6: [], 12: [], 24: []}
  for terms, times in _kernels():
    model = -terms[:, 4] - terms[:, 2] + rng.normal(0, 1.0, len(times))   # wrong: prefers the least global and local work
    order = rng.permutation(len(times))
    test, speed = order[24:], -np.log(times)
    for n in taus:
      fit = Correction().fit(model[order[:n]], terms[order[:n]], times[order[:n]])
      taus[n].append(kendall(fit(model[test], terms[test]), speed[test]))
  mean = {n: float(np.mean(v)) for n, v in taus.items()}
  assert mean[0] < 0.2                       # the model alone is poor here
  assert mean[6] > mean[0] + 0.1             # a first batch's measurements already correct it
  assert mean[24] > mean[12] > mean[6] and mean[24] > mean[0] + 0.2, mean

def test_correction_keeps_a_good_model():
  """Where the model already ranks as measured, a few measurements keep its ranking (the prior on its score)."""
  rng = np.random.default_rng(1)
  for terms, times in _kernels(4):
    model = -np.log(times) + rng.normal(0, 0.05, len(times))
    fit = Correction().fit(model[:8], terms[:8], times[:8])
    assert kendall(fit(model[8:], terms[8:]), model[8:]) > 0.8

def test_kendall():
  assert kendall(np.array([1, 2, 3, 4]), np.array([10, 20, 30, 40])) == 1.0
  assert kendall(np.array([1, 2, 3, 4]), np.array([4, 3, 2, 1])) == -1.0
  assert math.isnan(kendall(np.array([1, 2]), np.array([1, 2])))
