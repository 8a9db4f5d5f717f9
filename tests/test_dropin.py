"""Drop-in tuning (search.dropin): a tinygrad program's kernels are tuned at first sight, cached, and replayed by a second run."""
import numpy as np
from tinygrad import Tensor, dtypes
from search.cache import TunedCache, tuned
from search.dropin import Tuner

def _step(w0:np.ndarray, x0:np.ndarray) -> tuple[np.ndarray, np.ndarray]:
  """One SGD step of a tiny two-layer net on the CPU: forward, backward and the weight update; returns (loss, new weights)."""
  w = Tensor(w0)
  w.requires_grad = True
  x = Tensor(x0)
  loss = ((x @ w).relu() @ Tensor.ones(16, 1)).square().mean()
  loss.backward()
  new_w = (w - 0.01 * w.grad).realize()
  return loss.numpy(), new_w.numpy()

def _forward(w0:np.ndarray, x0:np.ndarray) -> np.ndarray:
  return ((Tensor(x0) @ Tensor(w0)).relu() @ Tensor.ones(16, 1)).square().mean().numpy()

def test_dropin_tunes_a_training_step_once(tmp_path):
  rng = np.random.default_rng(0)
  w0, x0 = rng.standard_normal((24, 16)).astype(np.float32), rng.standard_normal((32, 24)).astype(np.float32)
  ref_loss, ref_w = _step(w0, x0)   # untuned
  path = tmp_path / "tuned.json"
  fwd = Tuner(budget=3, kernel_s=20, quiet=True)
  with tuned(path, tuner=fwd): _forward(w0, x0)
  forward_keys = {r["key"] for r in fwd.rows}
  t1 = Tuner(budget=3, kernel_s=20, quiet=True)
  with tuned(path, tuner=t1): loss, new_w = _step(w0, x0)
  np.testing.assert_allclose(loss, ref_loss, rtol=1e-4)
  np.testing.assert_allclose(new_w, ref_w, rtol=1e-4, atol=1e-6)
  entries = TunedCache(path).entries
  tuned_keys = {r["key"] for r in fwd.rows + t1.rows if r["status"] == "tuned"}
  assert {r["status"] for r in fwd.rows + t1.rows} == {"tuned"}, [r["status"] for r in fwd.rows + t1.rows]
  assert len(entries) == len(tuned_keys) == len(fwd.rows) + len(t1.rows)   # one entry per distinct kernel
  assert t1.rows and not forward_keys & {r["key"] for r in t1.rows}      # the step's new kernels: backward and the update
  assert len(t1.rows) >= 2
  # a second run searches nothing and computes the same
  t2 = Tuner(budget=3, kernel_s=20, quiet=True)
  with tuned(path, tuner=t2): loss2, new_w2 = _step(w0, x0)
  assert t2.rows == [] and t2.spent_s == 0.0
  np.testing.assert_allclose(new_w2, ref_w, rtol=1e-4, atol=1e-6)
  assert "kernel(s) tuned" in t1.summary(0, 0, path)
