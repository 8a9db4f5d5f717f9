"""Drop-in tuning (search.dropin): a tinygrad program's kernels are tuned at first sight, cached, and replayed by a second run; a
kernel gets what its share of the runtime is worth; a search stopped on its budget goes on in a later run; KERNTUNE=1 works in a
program that never imports kerntune (search.hook); scripts/bench_dropin.py runs end to end on the CPU (slow)."""
import json, os, subprocess, sys
from pathlib import Path
import numpy as np
import pytest
from tinygrad import Tensor, Variable
from search.cache import TunedCache, tuned
from search.dropin import Tuner
from search.task_scheduler import schedule

ROOT = Path(__file__).resolve().parents[1]

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
  fwd = Tuner(budget=4, kernel_s=20, quiet=True)
  with tuned(path, tuner=fwd): _forward(w0, x0)
  forward_keys = {r["key"] for r in fwd.rows}
  t1 = Tuner(budget=4, kernel_s=20, quiet=True)
  with tuned(path, tuner=t1): loss, new_w = _step(w0, x0)
  np.testing.assert_allclose(loss, ref_loss, rtol=1e-4)
  np.testing.assert_allclose(new_w, ref_w, rtol=1e-4, atol=1e-6)
  rows = fwd.rows + t1.rows
  # every kernel is searched (and verified) or, where its share of the step is too small to pay for a search, keeps its default
  assert {r["status"] for r in rows} <= {"tuned", "small"}, [r["status"] for r in rows]
  entries = TunedCache(path).entries
  assert len(entries) == len({r["key"] for r in rows}) == len(rows)   # one entry per distinct kernel, a kept default's too
  step_new = [r for r in t1.rows if r["key"] not in forward_keys]   # the step's new kernels: backward and the update
  assert len(step_new) >= 2 and any(r["status"] == "tuned" for r in step_new), [(r["kernel"], r["status"]) for r in t1.rows]
  # a second run searches nothing and computes the same
  t2 = Tuner(budget=4, kernel_s=20, quiet=True)
  with tuned(path, tuner=t2): loss2, new_w2 = _step(w0, x0)
  assert t2.rows == [] and t2.spent_s == 0.0 and {r["key"] for r in t1.rows} <= t2.replayed
  np.testing.assert_allclose(new_w2, ref_w, rtol=1e-4, atol=1e-6)
  summary = t1.summary(path)
  assert "kernel(s) tuned" in summary and str(path) in summary

def test_dropin_searches_with_the_beam_parameters_it_is_given(tmp_path, monkeypatch):
  # Tuner.strategy_args (KERNTUNE_BEAM) reach the beam that searches the program's kernels, over the scheduler's own parameters
  import search.beam, search.strategies
  made = []
  class Spy(search.beam.Beam):
    def __init__(self, *a, **kw): super().__init__(*a, **kw); made.append(self)
  monkeypatch.setitem(search.strategies.STRATEGIES, "beam", Spy)
  rng = np.random.default_rng(0)
  w0, x0 = rng.standard_normal((24, 16)).astype(np.float32), rng.standard_normal((32, 24)).astype(np.float32)
  t = Tuner(budget=4, kernel_s=20, quiet=True, strategy_args={"group_best": False, "near_k": 0})
  with tuned(tmp_path / "tuned.json", tuner=t): _forward(w0, x0)
  assert any(r["status"] == "tuned" for r in t.rows) and made and t.report(tmp_path / "tuned.json")["strategy_args"] == {"group_best": False, "near_k": 0}
  assert all(not b.group_best and b.near_k == 0 and not b.adaptive for b in made)   # the scheduler's rules stay: the rounds are its

def test_kernels_tuned_at_their_second_sight(tmp_path):
  # KERNTUNE_WHEN=second: a kernel's first run is tinygrad's default, neither searched nor cached; the second LINEAR that runs it
  # tunes it; a kernel that runs once is never searched
  rng = np.random.default_rng(0)
  w0, x0 = rng.standard_normal((24, 16)).astype(np.float32), rng.standard_normal((32, 24)).astype(np.float32)
  ref = _forward(w0, x0)
  path, t = tmp_path / "tuned.json", Tuner(budget=4, kernel_s=20, quiet=True, when="second")
  with tuned(path, tuner=t):
    once = Tensor(rng.standard_normal((7, 5)).astype(np.float32)).exp2().sum().numpy()   # runs once
    first = _forward(w0, x0)
    assert t.rows == [] and not path.exists() and t.once   # first sight: nothing searched, nothing cached
    second = _forward(w0, x0)
  np.testing.assert_allclose([first, second], [ref, ref], rtol=1e-4)
  assert t.rows and {r["status"] for r in t.rows} <= {"tuned", "small"} and len(TunedCache(path).entries) == len(t.rows)
  assert t.report(path)["seen_once"] == len(t.once) >= 1 and not t.once & {r["key"] for r in t.rows}   # the exp2 sum: default
  with pytest.raises(ValueError, match="KERNTUNE_WHEN"): Tuner(when="third")

def test_only_what_tinyjit_captures_is_tuned(tmp_path):
  # KERNTUNE_WHEN=jit: kernels run outside a TinyJit capture (a one-off op, the jitted function's first call) keep tinygrad's
  # default, uncached; the capture (its second call) tunes and caches the step's kernels, which the replays run
  from tinygrad import TinyJit
  rng = np.random.default_rng(0)
  w0 = rng.standard_normal((24, 16)).astype(np.float32)
  xs = [rng.standard_normal((32, 24)).astype(np.float32) for _ in range(3)]
  refs = [_forward(w0, x) for x in xs]
  w = Tensor(w0).realize()
  fwd = lambda x: ((x @ w).relu() @ Tensor.ones(16, 1)).square().mean().realize()
  step = TinyJit(fwd)
  path, t = tmp_path / "tuned.json", Tuner(budget=4, kernel_s=20, quiet=True, when="jit")
  with tuned(path, tuner=t):
    Tensor(rng.standard_normal((7, 5)).astype(np.float32)).exp2().sum().numpy()   # outside any TinyJit
    got = [step(Tensor(xs[0])).numpy()]
    assert t.rows == [] and not path.exists() and t.once   # the first call runs as a plain call: nothing searched, nothing cached
    got += [step(Tensor(x)).numpy() for x in xs[1:]]      # the capture, then a replay
  np.testing.assert_allclose(got, refs, rtol=1e-4)
  assert t.rows and {r["status"] for r in t.rows} <= {"tuned", "small"} and len(TunedCache(path).entries) == len(t.rows)
  assert t.once - {r["key"] for r in t.rows}   # the exp2 sum stays default
  assert "outside TinyJit" in t.summary(path)
  # the search ran inside the capture: none of its own work was captured, the jitted step runs as many kernels as an untuned one's
  plain = TinyJit(fwd)
  for x in xs: plain(Tensor(x)).numpy()
  assert len(step.captured._linear.src) == len(plain.captured._linear.src)
  # a program without TinyJit gets nothing tuned, and the summary says what to use instead
  t2 = Tuner(budget=4, kernel_s=20, quiet=True, when="jit")
  with tuned(tmp_path / "none.json", tuner=t2): _forward(w0, xs[0])
  assert t2.rows == [] and t2.once and "KERNTUNE_WHEN=first" in t2.summary(tmp_path / "none.json") and "KERNTUNE_WHEN=first" not in t.summary(path)

def test_the_scheduler_gives_a_small_kernel_nothing():
  # kernel 1 is 0.1% of the time: no round of it is expected to save STOP_GAIN of the whole
  searched = []
  def search(i, b): searched.append(i); return b, [500.0, 0.5][i], False
  alloc = schedule([1, 1], [1000.0, 1.0], search, total=40)
  assert alloc[1] == 0 and alloc[0] > 0 and 1 not in searched
  # the same kernel beside cached kernels that hold the time (drop-in's `rest`) gets nothing either, alone as it is
  assert schedule([1], [1.0], lambda i, b: (b, 0.5, False), total=40, rest=1000.0) == [0]
  # a kernel's later rounds go by next_gain: at 0.1% expected of a second round it keeps its first, at 10% it gets more
  assert schedule([1, 1], [900.0, 100.0], lambda i, b: (b, [600.0, 90.0][i], False), total=100, first=8, next_gain=0.001) == [8, 8]
  assert schedule([1, 1], [900.0, 100.0], lambda i, b: (b, [600.0, 90.0][i], False), total=100, first=8, next_gain=0.1)[0] > 8

def test_a_stop_gain_no_kernel_reaches_leaves_every_kernel_small(tmp_path):
  # the summary's "small" goes by the Tuner's own stop gain: at 1.0 no round of the GEMM is worth it either, and it says so
  rng = np.random.default_rng(0)
  a, b, c = [Tensor(rng.standard_normal(s).astype(np.float32)).realize() for s in ((256, 256), (256, 256), (4,))]
  t = Tuner(budget=2, quiet=True, stop_gain=1.0)
  with tuned(tmp_path / "tuned.json", tuner=t): Tensor.realize(a @ b, c + 1)
  assert len(t.rows) == 2 and {r["status"] for r in t.rows} == {"small"} and t.timed == 0

def test_budget_by_share_and_retune(tmp_path):
  rng = np.random.default_rng(0)
  a, b, c = [Tensor(rng.standard_normal(s).astype(np.float32)).realize() for s in ((512, 512), (512, 512), (4,))]
  prog = lambda: Tensor.realize(a @ b, c + 1)   # one LINEAR: a 512^3 GEMM, thousands of times the time of a 4-wide add
  path = tmp_path / "tuned.json"
  t1 = Tuner(budget=2, quiet=True)
  with tuned(path, tuner=t1): prog()
  by = {r["kernel"]: r for r in t1.rows}
  gemm, add = by["r_512_512_512"], by["E_4"]
  assert gemm["status"] == "tuned" and gemm["stopped"] == "budget" and add["status"] == "small"
  # what of its first batch the search never timed is reported (a straggler or a failure is lost evidence), opts as the cache keeps them
  assert isinstance(gemm["first_untimed"], list) and all(isinstance(o, list) and len(o) == 3 for p in gemm["first_untimed"] for o in p)
  # the phases split the tuning seconds: each one ran, and together they are no more than the whole
  assert all(v > 0 for v in t1.phases.values()) and sum(t1.phases.values()) <= t1.spent_s and t1.report(path)["phases"].keys() == t1.phases.keys()
  # and where this process waited: the GEMM on its compiles and timings, each compile of it counted; the totals are the rows'
  assert gemm["compile_wait_s"] > 0 and gemm["timing_s"] > 0 and gemm["compiled"] >= gemm["timed"] + 1
  assert t1.report(path)["waits"] == {k: round(gemm[k] + add[k], 3) for k in ("compile_wait_s", "timing_s")}
  assert sum(t1.waits().values()) <= t1.spent_s
  entries = {e["name"]: e for e in TunedCache(path).entries.values()}
  assert entries["E_4"]["strategy"] == "default" and entries["E_4"]["stopped"] == "small"   # cached: a rerun decides nothing
  old = entries["r_512_512_512"]
  # the same budget again: everything replays
  t2 = Tuner(budget=2, quiet=True)
  with tuned(path, tuner=t2): prog()
  assert t2.rows == [] and len(t2.replayed) == 2
  # retune: the GEMM, whose search stopped on its budget, is searched further from its cached configs; the small add is not
  t3 = Tuner(budget=2, retune=True, quiet=True)
  with tuned(path, tuner=t3): prog()
  assert [r["kernel"] for r in t3.rows] == ["r_512_512_512"] and t3.rows[0]["status"] == "tuned" and t3.rows[0]["timed"] > 0
  new = TunedCache(path).get(t3.rows[0]["key"], "CPU")
  assert old["opts"] in new["top"]   # its first batch held the cached answer
  # more budget than it was tuned with does the same
  t4 = Tuner(budget=3, quiet=True)
  with tuned(path, tuner=t4): prog()
  assert [r["kernel"] for r in t4.rows] == ["r_512_512_512"]

def test_hold_small_keeps_a_small_kernels_first_batch_back(tmp_path):
  # with hold_small (KERNTUNE_HOLD_SMALL=1) a kernel too small for a round at the defaults' time is held (its first batch compiles
  # only if the scheduler comes to it); the large one is searched as before, and the program computes the same
  rng = np.random.default_rng(0)
  a, b, c = [Tensor(rng.standard_normal(s).astype(np.float32)).realize() for s in ((512, 512), (512, 512), (4,))]
  ref = [x.numpy() for x in (a @ b, c + 1)]
  t = Tuner(budget=2, workers=2, hold_small=True, quiet=True)
  with tuned(tmp_path / "tuned.json", tuner=t):
    x, y = a @ b, c + 1
    Tensor.realize(x, y)   # one LINEAR, as the program's
    out = [x.numpy(), y.numpy()]
  by = {r["kernel"]: r for r in t.rows}
  gemm, add = by["r_512_512_512"], by["E_4"]
  assert add.get("held") and add["status"] == "small" and not gemm.get("held") and gemm["status"] == "tuned"
  for x, y in zip(out, ref): np.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-5)
  assert not Tuner().hold_small   # off by default

def test_first_batches_sized_by_share(tmp_path):
  # first_share: a kernel's first batch in proportion to its share of the LINEAR's time (full from that share, at least
  # MIN_PER_KERNEL picks); without it every kernel gets the beam's full batch
  from search.beam import Beam
  from search.task_scheduler import MIN_PER_KERNEL
  rng = np.random.default_rng(2)
  a, b, c = [Tensor(rng.standard_normal(s).astype(np.float32)).realize() for s in ((128, 128), (128, 128), (128, 128))]
  t = Tuner(budget=9, total=1, quiet=True, first_share=0.5)   # (one timed candidate: the batches are what is checked)
  with tuned(tmp_path / "t.json", tuner=t): Tensor.realize(a @ b, c * 2 + 1)   # a GEMM, and an elementwise kernel a few % of its time
  gemm, ew = (next(r for r in t.rows if r["kernel"] == k) for k in ("r_128_128_128", "E_16384"))
  assert gemm["first_picks"] == Beam().seed_picks and ew["first_picks"] == MIN_PER_KERNEL, (gemm, ew)
  assert ew["first_batch"] <= MIN_PER_KERNEL + 1 < gemm["first_batch"]   # the batches themselves (the hand-coded config too)
  assert Tuner().first_share is None   # off by default

def test_a_symbolic_kernel_is_tuned_at_a_bound(tmp_path):
  rng = np.random.default_rng(0)
  q0, k0 = rng.standard_normal((4, 64)).astype(np.float32), rng.standard_normal((32, 64)).astype(np.float32)
  q, k = Tensor(q0).realize(), Tensor(k0).realize()
  scores = lambda n: (q @ k[:Variable("n", 1, 32).bind(n)].T).realize()   # (4, n): n is known only at run time, as GPT-2's position
  t = Tuner(budget=4, quiet=True)
  with tuned(tmp_path / "tuned.json", tuner=t): out = scores(5)
  np.testing.assert_allclose(out.shrink(((0, 4), (0, 5))).numpy(), q0 @ k0[:5].T, rtol=1e-4, atol=1e-4)
  # searched as itself, timed at the middle of n's range as tinygrad's BEAM times it: every config it measures leaves n's axis whole,
  # so its answer is one of them and runs at every n
  (row,) = t.rows
  assert row["kernel"] == "r_4_n_64" and row["status"] == "tuned" and row["at"] == {"n": 16} and row["timed"] > 0
  assert "at n=16" in t.summary(tmp_path / "tuned.json")
  assert (hit := TunedCache(tmp_path / "tuned.json").get(row["key"], "CPU")) is not None and hit["time_us"] == row["us"]
  with tuned(tmp_path / "tuned.json"):   # replayed at other values of n
    for n in (1, 29):
      np.testing.assert_allclose(scores(n).shrink(((0, 4), (0, n))).numpy(), q0 @ k0[:n].T, rtol=1e-4, atol=1e-4)

PROG = """
import numpy as np
from tinygrad import Tensor
x = Tensor(np.arange(48, dtype=np.float32).reshape(6, 8))
print(((x @ x.T).relu() + 1).sum(1).numpy().tolist())
"""

def test_kerntune_env_tunes_a_program_that_never_imports_it(tmp_path):
  # a virtual environment over this one, with kerntune.pth installed (search.hook): what a user's environment holds
  venv = tmp_path / "venv"
  subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], check=True)
  py = str(venv / "bin" / "python")
  purelib = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], capture_output=True, text=True, check=True).stdout.strip()
  subprocess.run([py, "-m", "search.hook", "install", purelib], check=True, cwd=ROOT, capture_output=True)
  (prog := tmp_path / "prog.py").write_text(PROG)
  env = {k: v for k, v in os.environ.items() if not k.startswith("KERNTUNE")} | {"KERNTUNE_CACHE": str(tmp_path / "tuned.json")}
  run = lambda **e: subprocess.run([py, str(prog)], cwd=tmp_path, env=env | e, capture_output=True, text=True, timeout=300)
  plain = run()
  assert plain.returncode == 0 and "kerntune" not in plain.stderr and not (tmp_path / "tuned.json").exists()
  # with compile workers, as on a GPU: the program has no __main__ guard, and its body runs once (spawn would run it in each worker)
  first = run(KERNTUNE="1", KERNTUNE_BUDGET="2", KERNTUNE_WORKERS="2", KERNTUNE_REPORT=str(tmp_path / "report.json"))
  assert first.returncode == 0 and first.stdout == plain.stdout, (first.stdout, first.stderr[-3000:])
  rep = json.loads((tmp_path / "report.json").read_text())
  assert rep["tuned"] + sum(rep["left_default"].values()) == len(rep["kernels"]) > 0 and rep["tuned"] > 0, rep
  assert len(TunedCache(tmp_path / "tuned.json").entries) == len(rep["kernels"])
  assert f"kerntune: {rep['tuned']} kernel(s) tuned" in first.stderr and str(tmp_path / "tuned.json") in first.stderr
  again = run(KERNTUNE="1", KERNTUNE_BUDGET="2", KERNTUNE_QUIET="1", KERNTUNE_REPORT=str(tmp_path / "again.json"))
  assert again.returncode == 0 and again.stdout == plain.stdout and "kerntune" not in again.stderr, again.stderr[-3000:]
  rep2 = json.loads((tmp_path / "again.json").read_text())
  assert rep2["tuned"] == 0 and rep2["search_s"] == 0 and rep2["replayed"] == len(rep["kernels"])   # a second run searches nothing

@pytest.mark.slow
def test_bench_dropin_small_end_to_end(tmp_path):
  # scripts/bench_dropin.py on the CPU at tiny sizes (3-4 min on 2 cores): plain, KERNTUNE=1 and BEAM=2 each in a process of its own
  bench_cmd = [sys.executable, str(ROOT / "scripts" / "bench_dropin.py"), "--device", "CPU", "--small", "--programs", "vit_infer", "--steps", "3", "--out", str(tmp_path)]
  bench = lambda: subprocess.run([*bench_cmd, "--modes", "default,kerntune,beam2,beam2_replay"], capture_output=True, text=True, timeout=1500, cwd=ROOT)
  r = bench()
  assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
  rep = json.loads((tmp_path / "dropin.json").read_text())
  assert {"device", "date", "command", "programs"} <= rep.keys()
  (p,) = rep["programs"]
  fields = ("kerntune_step_ms", "beam2_step_ms", "kerntune_search_s", "beam2_search_s", "kerntune_first_result_s", "beam2_first_result_s")
  assert p["name"] == "vit_infer" and all(p[f] > 0 for f in fields) and p["missing"] == [] and p["same_call"], p
  assert all(d < 1e-3 for d in p["output_vs_default"].values()), p["output_vs_default"]   # tuned kernels compute what plain ones do
  assert "| vit_infer |" in (tmp_path / "dropin.md").read_text()
  # BEAM=2's picks are kept keyed as drop-in tuning keys its kernels, and replay to BEAM=2's outputs
  picks = {k.split("|")[0] for k in TunedCache(tmp_path / "runs" / "vit_infer.beam2.picks.json").entries}
  assert {k["key"] for k in json.loads((tmp_path / "runs" / "vit_infer.kerntune.report.json").read_text())["kernels"]} <= picks
  replay = json.loads((tmp_path / "runs" / "vit_infer.beam2_replay.json").read_text())
  assert replay["done"] and replay["output"] == json.loads((tmp_path / "runs" / "vit_infer.beam2.json").read_text())["output"]
  again = bench()   # a second call finds every run done
  assert again.returncode == 0 and again.stdout.count("done before") == 4, again.stdout[-2000:]
  # --modes kernels: each kernel timed alone with KERNTUNE's config and BEAM=2's pick, and the worst gaps listed
  k = subprocess.run([*bench_cmd, "--modes", "kernels"], capture_output=True, text=True, timeout=600, cwd=ROOT)
  rows = json.loads((tmp_path / "runs" / "vit_infer.kernels.json").read_text())["kernels"]
  assert k.returncode == 0 and len(rows) == p["kerntune_tuned"] + sum((p["kerntune_left_default"] or {}).values()), k.stdout[-2000:]
  assert all(r[f"{w}_{t}_us"] > 0 for r in rows for w in ("default", "kerntune", "beam2") for t in ("cold", "warm"))
  assert "Where KERNTUNE loses most" in (tmp_path / "dropin.md").read_text()
  # --modes turns: KERNTUNE's kernels and BEAM=2's picks replayed in pairs of processes, the first of each pair alternating; "met"
  # takes the pairs' median, and a later call keeps the pairs it finds
  turns = lambda: subprocess.run([*bench_cmd, "--modes", "turns", "--turns", "2"], capture_output=True, text=True, timeout=600, cwd=ROOT)
  t = turns()
  pairs = json.loads((tmp_path / "runs" / "vit_infer.turns.json").read_text())["pairs"]
  assert t.returncode == 0 and [q["order"] for q in pairs] == [["replay", "beam2_replay"], ["beam2_replay", "replay"]], t.stdout[-2000:]
  assert all(q["ratio"] == q["replay"]/q["beam2_replay"] > 0 for q in pairs)
  (p2,) = json.loads((tmp_path / "dropin.json").read_text())["programs"]
  assert p2["turns"] == [round(q["ratio"], 4) for q in pairs] and p2["step_vs_beam2_turns"] == sum(q["ratio"] for q in pairs)/2
  assert p2["met"] == (p2["step_vs_beam2_turns"] <= 1.0 and p2["search_vs_beam2"] <= 0.10)
  t2 = turns()
  assert t2.returncode == 0 and "=== vit_infer replay" not in t2.stdout and "2 pairs" in t2.stdout, t2.stdout[-2000:]

def test_tuner_settings_from_the_environment(monkeypatch):
  from search.dropin import from_env
  monkeypatch.setenv("KERNTUNE_TIMING", "warm")
  monkeypatch.setenv("KERNTUNE_NEXT_GAIN", "0.05")
  monkeypatch.setenv("KERNTUNE_STOP_GAIN", "0.001")
  monkeypatch.setenv("KERNTUNE_FIRST_SHARE", "0.05")
  t = from_env()
  assert t.timing == "warm" and t.next_gain == 0.05 and t.stop_gain == 0.001 and Tuner().timing == "cold" and Tuner().next_gain == 0.03
  assert t.first_share == 0.05 and Tuner().first_share is None and t.when == "first"
  monkeypatch.setenv("KERNTUNE_LATER_SHARE", "0.25")
  from search.task_scheduler import LATER_SHARE
  from search.dropin import LATER_SHARE as DROPIN_LATER_SHARE
  assert from_env().later_share == 0.25 and Tuner().later_share == LATER_SHARE == DROPIN_LATER_SHARE
  monkeypatch.setenv("KERNTUNE_LATER_SHARE", "off")
  assert from_env().later_share is None
  with pytest.raises(ValueError, match="KERNTUNE_LATER_SHARE"): Tuner(later_share=-1.0)
  monkeypatch.setenv("KERNTUNE_WHEN", "second")
  assert from_env().when == "second"
  monkeypatch.setenv("KERNTUNE_WHEN", "jit")
  assert from_env().when == "jit"
  with pytest.raises(ValueError, match="timing 'tepid' is not one of cold, warm, auto"): Tuner(timing="tepid")
  # budgets out of range are refused, not run: a negative KERNTUNE_BUDGET left every kernel default, "failed: BudgetExhausted"
  for var, bad in (("KERNTUNE_BUDGET", "-3"), ("KERNTUNE_TOTAL", "-1"), ("KERNTUNE_WORKERS", "-1"), ("KERNTUNE_KERNEL_S", "0"), ("KERNTUNE_TOTAL_S", "-5")):
    monkeypatch.setenv(var, bad)
    with pytest.raises(ValueError, match=f"{var} must be"): from_env()
    monkeypatch.delenv(var)
  # KERNTUNE_BEAM: the beam's parameters, as tune-model's --strategy-args; a bad one is refused before anything is tuned
  monkeypatch.setenv("KERNTUNE_BEAM", '{"group_best": false}')
  assert from_env().strategy_args == {"group_best": False} and Tuner().strategy_args is None
  for bad, why in (('{"group_best": fals', "not JSON"), ('[1]', "JSON object"), ('{"no_such": 1}', "no_such")):
    monkeypatch.setenv("KERNTUNE_BEAM", bad)
    with pytest.raises(ValueError, match=f"KERNTUNE_BEAM.*{why}"): from_env()
  monkeypatch.delenv("KERNTUNE_BEAM")
  # through the hook, as `KERNTUNE=1 python prog.py` starts: a bad setting is one line, and the program runs untuned
  env = {k: v for k, v in os.environ.items() if not k.startswith("KERNTUNE")} | {"KERNTUNE": "1", "KERNTUNE_TIMING": "tepid"}
  r = subprocess.run([sys.executable, "-c", "import sys, search.hook as h; h.arm(); import tinygrad; print('search.cache' in sys.modules)"],
                     env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
  err = r.stderr.strip().splitlines()
  assert r.returncode == 0 and r.stdout.strip() == "False" and len(err) == 1 and "not enabled" in err[0] and "KERNTUNE_TIMING" in err[0], r

def test_hook_install_into_an_unwritable_place_is_one_line(tmp_path, capsys):
  from search.hook import NAME, main
  (blocker := tmp_path / "file").write_text("")
  assert main(["install", str(blocker / "site")]) == 2   # a file where the directory would be
  err = capsys.readouterr().err.strip().splitlines()
  assert len(err) == 1 and err[0].startswith(f"kerntune: error: cannot write {NAME}"), err
  assert main(["install", str(tmp_path / "site")]) == 0 and (tmp_path / "site" / NAME).is_file()

def test_a_missing_cost_model_leaves_the_program_running_on_defaults(tmp_path):
  # the model loads after the Measurers start (the pool's start and the defaults' compiles overlap it): one that cannot load fails
  # the kernels' rows with its reason, caches nothing, and the program's results are tinygrad's own
  rng = np.random.default_rng(1)
  w0, x0 = rng.standard_normal((24, 16)).astype(np.float32), rng.standard_normal((32, 24)).astype(np.float32)
  t = Tuner(budget=4, kernel_s=20, quiet=True, model=str(tmp_path / "nope.txt"))
  with tuned(tmp_path / "tuned.json", tuner=t): out = _forward(w0, x0)
  np.testing.assert_allclose(out, _forward(w0, x0), rtol=1e-5)
  assert t.rows and all(r["status"].startswith("failed: ") and "nope.txt" in r["status"] for r in t.rows)
  assert not TunedCache(tmp_path / "tuned.json").entries

def test_a_cuda_program_starts_its_compile_pool_while_it_builds_its_model(monkeypatch):
  # drop-in on DEV=CUDA starts the compile pool in a thread at enable, for the driver's arch, without opening the program's device;
  # on any other device nothing starts (no GPU here: the driver's arch and the pool are stand-ins that record the call)
  import search.measure as M
  from tinygrad.helpers import Context as TGContext
  started = []
  monkeypatch.setattr("dataset.device.cuda_arch", lambda index=0: "sm_90")
  monkeypatch.setattr(M, "renderer_for", lambda dev, arch=None: ("renderer", dev, arch))
  monkeypatch.setattr(M, "shared_pool", lambda dev, workers, ren=None: started.append((dev, workers, ren)))
  assert M.prestart(4) is None and started == []   # the CPU
  with TGContext(DEV="CUDA"):
    (t := M.prestart(4)).join(10)
    assert M.prestart(1) is None   # no pool for fewer than two workers
  assert started == [("CUDA", 4, ("renderer", "CUDA", "sm_90"))]
  started.clear()
  with TGContext(DEV="CUDA"):   # enable() does it for a tuner, with the workers its search would use
    with tuned(tune=True, tuner=Tuner(workers=3, quiet=True)): pass
    for th in [x for x in __import__("threading").enumerate() if x.name == "kerntune-pool-start"]: th.join(10)
  assert started == [("CUDA", 3, ("renderer", "CUDA", "sm_90"))]

def test_bench_dropin_refuses_another_devices_runs_before_any_work(tmp_path):
  # a BEAM=2 seed from another card (an H100's search in an H200 call) would compare KERNTUNE with picks tuned for that card: one line,
  # exit 2, nothing run; the same seed recorded as this device's is taken ("done before")
  (runs := tmp_path / "runs").mkdir()
  seed = {"program": "vit_infer", "mode": "beam2", "device": "NVIDIA H100 80GB HBM3", "done": True, "step_ms": 1.0, "search_s": 2.0, "output": None}
  (runs / "vit_infer.beam2.json").write_text(json.dumps(seed))
  cmd = [sys.executable, str(ROOT / "scripts" / "bench_dropin.py"), "--device", "CPU", "--small", "--programs", "vit_infer", "--modes", "beam2",
         "--out", str(tmp_path)]
  r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=ROOT)
  err = r.stderr.strip().splitlines()
  assert r.returncode == 2 and len(err) == 1 and "another device" in err[0] and "H100" in err[0], r
  assert sorted(p.name for p in runs.iterdir()) == ["vit_infer.beam2.json"]   # nothing ran
  here = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, 'scripts'); import bench_dropin; print(bench_dropin._device_name('CPU'))"],
                        capture_output=True, text=True, timeout=60, cwd=ROOT).stdout.strip()
  (runs / "vit_infer.beam2.json").write_text(json.dumps({**seed, "device": here}))
  r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=ROOT)
  assert "done before" in r.stdout and "another device" not in r.stderr, r

def _inplace(acc:Tensor, a:np.ndarray, b:np.ndarray):
  """An in-place update (the LINEAR reads and writes acc) by a bmm whose reduce axis of 33 PADTO can pad to 48."""
  acc.assign(acc + Tensor(a) @ Tensor(b)).realize()

def test_the_guard_finds_a_config_that_breaks_a_linear_and_leaves_its_buffers_as_they_were(tmp_path):
  # tinygrad 0.14.0 computes wrong when a PADTO'd reduce axis is unrolled (results/tinygrad_bugs/padded_reduce.py): the guard runs
  # the LINEAR with it and with tinygrad's default on the program's own buffers, finds it, and puts the default (or a right
  # alternate) in its place; the buffer it writes (acc, read and written in place) holds after what it held before
  import tinygrad.engine.realize as R
  from search.guard import check_linear
  from dataset.kernel import TINYGRAD_VERSION, opts_from_json, with_opts
  rng = np.random.default_rng(0)
  a, b = rng.standard_normal((3, 64, 33)).astype(np.float32), rng.standard_normal((3, 33, 16)).astype(np.float32)
  acc = Tensor(rng.standard_normal((3, 64, 16)).astype(np.float32)).realize()
  acc0 = acc.numpy()
  linear = acc.assign(acc + Tensor(a) @ Tensor(b)).schedule_linear()
  run = getattr(R.run_linear, "__wrapped__", R.run_linear)
  keys = [c.src[0].key.hex() for c in linear.src if c.src[0].op.name == "SINK" and any(u.op.name == "REDUCE" for u in c.src[0].toposort())]
  assert len(keys) == 1   # the bmm (the assign's copy is another kernel)
  key, cache, bad = keys[0], TunedCache(tmp_path / "t.json"), [["PADTO", 3, 16], ["UNROLL", 0, 4]]
  cache.put(key, "CPU", bad, time_us=1.0, hand_coded_us=2.0, name="bmm")
  table = {key: tuple(opts_from_json(bad))}
  assert check_linear(linear, [key], cache, "CPU", table, run, lambda s: None) == [key]
  np.testing.assert_array_equal(acc.numpy(), acc0)   # every probe's writes undone
  e = json.loads((tmp_path / "t.json").read_text())[f"{key}|CPU|{TINYGRAD_VERSION}"]
  assert e["status"] == "rejected" and e["rejected"] == bad and table[key] == tuple(opts_from_json(e["opts"]))
  # with the search's next-fastest configs kept, the first that is right takes its place (another broken one does not)
  good = [["UPCAST", 1, 4]]
  cache.put(key, "CPU", bad, time_us=1.0, hand_coded_us=2.0, name="bmm", alternates=[[[["PADTO", 3, 16], ["UNROLL", 0, 2]], 1.2], [good, 1.5]])
  table = {key: tuple(opts_from_json(bad))}
  assert check_linear(linear, [key], cache, "CPU", table, run, lambda s: None) == [key]
  e = json.loads((tmp_path / "t.json").read_text())[f"{key}|CPU|{TINYGRAD_VERSION}"]
  assert e["status"] == "alternate" and e["opts"] == good and e["time_us"] == 1.5 and table[key] == tuple(opts_from_json(good))
  np.testing.assert_array_equal(acc.numpy(), acc0)
  assert check_linear(linear, [key], cache, "CPU", table, run, lambda s: None) == []   # a right config: nothing to fix
  cache.put(key, "CPU", [["UPCAST", 9, 4]], time_us=1.0, hand_coded_us=2.0, name="bmm")   # one tinygrad cannot apply: the run raises
  assert check_linear(linear, [key], cache, "CPU", {key: tuple(opts_from_json([["UPCAST", 9, 4]]))}, run, lambda s: None) == [key]
  np.testing.assert_array_equal(acc.numpy(), acc0)
  run(with_opts(linear, table))   # the program's own run, once
  np.testing.assert_allclose(acc.numpy(), acc0 + a @ b, rtol=1e-4, atol=1e-4)

def test_dropin_checks_what_it_tuned_and_runs_an_inplace_update_once(tmp_path):
  rng = np.random.default_rng(1)
  a, b = rng.standard_normal((3, 64, 33)).astype(np.float32), rng.standard_normal((3, 33, 16)).astype(np.float32)
  acc0 = rng.standard_normal((3, 64, 16)).astype(np.float32)
  acc = Tensor(acc0).realize()
  t = Tuner(budget=4, kernel_s=20, quiet=True)
  with tuned(tmp_path / "tuned.json", tuner=t): _inplace(acc, a, b)
  np.testing.assert_allclose(acc.numpy(), acc0 + a @ b, rtol=1e-4, atol=1e-4)   # the update ran once, right
  tuned_rows = [r for r in t.rows if r["status"] == "tuned"]
  assert tuned_rows and all(r["checked"] is True for r in tuned_rows) and t.phases["guard"] > 0
  # each tuned entry keeps its next-fastest timed configs (the guard's fallbacks): not its pick, fastest first
  for r in tuned_rows:
    e = TunedCache(tmp_path / "tuned.json").get(r["key"], "CPU")
    assert e["alternates"] and all(o != e["opts"] for o, _ in e["alternates"]) and [us for _, us in e["alternates"]] == sorted(us for _, us in e["alternates"])
  assert not Tuner(guard=False).guard and Tuner().guard

def test_the_summary_names_the_kernels_the_guard_changed():
  t = Tuner(quiet=True)
  base = {"runs": 1, "default_us": 4.0, "timed": 3, "search_s": 0.5, "stopped": "budget", "kernel": "r_8_8"}
  t.rows = [{**base, "name": "kernel 1", "key": "a", "status": "rejected", "guard": "rejected", "us": 4.0},
            {**base, "name": "kernel 2", "key": "b", "status": "tuned", "guard": "alternate", "us": 2.0},
            {**base, "name": "kernel 3", "key": "c", "status": "tuned", "us": 1.0}]
  s = t.summary("c.json")
  assert "kernel 1: its tuned config changed the program's outputs: left default" in s and "(1 rejected)" in s
  assert "kernel 2: its tuned config changed the program's outputs: its next-fastest" in s and "2 kernel(s) tuned" in s
  assert "kernel 3: its tuned" not in s

def test_the_program_runs_the_binaries_its_search_compiled(tmp_path, monkeypatch):
  """Each kernel's answer (tuned or default) goes into tinygrad's compile cache as the search compiled it: the program's own run
  after the search compiles nothing (on the GPU the tuned compiles were 5-6 s of a CNN step's first result)."""
  import tinygrad.codegen as cg
  import tinygrad.engine.realize as R
  from tinygrad.uop.ops import Ops
  rng = np.random.default_rng(2)
  w0, x0 = rng.standard_normal((24, 16)).astype(np.float32), rng.standard_normal((32, 24)).astype(np.float32)
  ref = _forward(w0, x0)
  missing, lower = [], R.lower_and_compile
  def spy(linear):
    calls = [a for c in linear.toposort() if c.op is Ops.CALL and (a := R._get_call_to_compile(c)) is not None]
    missing.extend(a[0].arg.name for a in calls if cg.to_program_key(*a) not in cg.to_program_cache)
    return lower(linear)
  monkeypatch.setattr(R, "lower_and_compile", spy)
  t = Tuner(budget=4, kernel_s=20, quiet=True, guard=False)
  with tuned(tmp_path / "tuned.json", tuner=t): out = _forward(w0, x0)
  assert t.rows and {r["status"] for r in t.rows} <= {"tuned", "small"} and missing == [], missing
  np.testing.assert_allclose(out, ref, rtol=1e-4)

def test_a_low_precision_config_an_older_check_verified_runs_default_until_searched_again(tmp_path, capsys):
  """A cache written before the check bounded a low-precision output's rms (dataset.check.VERSION 2) may hold an fp16 config that
  computes wrong (the LLaMA gate/up one passed version 1): replay runs such a kernel at tinygrad's default and says so once; drop-in
  searches it again and its new entry carries the check's version. A float32 kernel's entry replays as it is."""
  from tinygrad import dtypes
  from dataset.check import VERSION
  from dataset.kernel import TINYGRAD_VERSION, kernel_asts
  import search.cache as C
  C._said_stale.clear()
  rng = np.random.default_rng(0)
  a, b = (rng.standard_normal((32, 32)).astype(np.float16) for _ in range(2))
  f16, f32 = lambda: (Tensor(a) @ Tensor(b)).numpy(), lambda: (Tensor(a.astype(np.float32)) @ Tensor(b.astype(np.float32))).numpy()
  keys = [kernel_asts(Tensor.empty(32, 32, dtype=dt) @ Tensor.empty(32, 32, dtype=dt))[0].key.hex() for dt in (dtypes.half, dtypes.float)]
  path = tmp_path / "tuned.json"   # entries without "check": an older check's
  path.write_text(json.dumps({f"{k}|CPU|{TINYGRAD_VERSION}": {"opts": [["UPCAST", 0, 4]], "v": 2} for k in keys}))
  before = C.stats()
  with tuned(path): r16, r32 = f16(), f32()
  assert {k: C.stats()[k] - before[k] for k in before} == {"tuned": 1, "default": 1}
  assert "verified by an older check" in capsys.readouterr().err
  np.testing.assert_allclose(r16.astype(np.float32), r32, rtol=2e-2, atol=2e-2)
  t = Tuner(budget=4, kernel_s=20, quiet=True)
  with tuned(path, tuner=t): f16()
  assert [r["key"] for r in t.rows] == [keys[0]] and TunedCache(path).get(keys[0], "CPU")["check"] == VERSION
  before = C.stats()
  with tuned(path): f16()
  assert C.stats()["tuned"] - before["tuned"] == 1 and "older check" not in capsys.readouterr().err
