"""tune-model on tinygrad's CPU device: a small exported torch model (conv, norms, attention) tuned under a global budget, run
again from the cache with no search, checked against PyTorch; malformed ONNX files; the budget split."""
import argparse, json, subprocess, sys
from pathlib import Path
import numpy as np
import pytest
from conftest import script
import torch
import torch.nn as nn
import search.beam_compare as BC, search.schedule as SC
from search.onnx_model import OnnxModel, export_torch
from search.schedule import NEXT_GAIN, schedule, sibling_picks
from search.tune_model import tune_model

ROOT = Path(__file__).resolve().parents[1]

class ConvAttn(nn.Module):
  def __init__(self, c=8, heads=2):
    super().__init__()
    self.conv, self.bn = nn.Conv2d(3, c, 3, padding=1), nn.BatchNorm2d(c)
    self.norm, self.attn, self.fc = nn.LayerNorm(c), nn.MultiheadAttention(c, heads, batch_first=True), nn.Linear(c, 4)
  def forward(self, x):
    t = self.bn(self.conv(x)).relu().flatten(2).transpose(1, 2)   # (b, h*w, c) tokens
    h = self.norm(t)
    t = t + self.attn(h, h, h, need_weights=False)[0]
    return self.fc(t.mean(1))

def _module():
  torch.manual_seed(0)
  m = ConvAttn()
  with torch.no_grad(): m.bn.running_mean.normal_(); m.bn.running_var.uniform_(0.5, 2)   # a BatchNorm that is not the identity
  return m.eval(), (torch.randn(2, 3, 6, 6),)

@pytest.mark.slow   # tune-model end to end, BEAM=2's comparison included: minutes on 2 cores
def test_tune_then_run_from_the_cache_with_no_search(tmp_path, monkeypatch):
  def no_compiler(*a, **kw): raise RuntimeError("no C++ compiler here")
  monkeypatch.setattr(torch, "compile", no_compiler)   # torch.compile failing is recorded, never fatal
  module, x = _module()
  cache = tmp_path / "tuned.json"
  def no_repair(*a, **kw): raise AssertionError("the tuned outputs differed from the default's")
  monkeypatch.setattr("search.tune_model.repair", no_repair)   # the tuned run is the guard's only probe where they match
  rep = tune_model(module, x, device="CPU", budget=24, cache=cache, runs=3, out=tmp_path, name="convattn", log=lambda s: None)
  for k in ("default_ms", "beam2_ms", "beam2_tune_s", "tuned_ms", "tune_s", "torch_eager_ms", "torch_compile_ms", "max_abs_err", "device", "date"):
    assert k in rep, k
  assert rep["rejected"] == 0 and rep["guard_s"] >= 0   # the tuned outputs matched the default's: nothing to repair (and no repair run)
  assert json.loads((tmp_path / "convattn.json").read_text())["kernels_distinct"] == rep["kernels_distinct"]
  assert set(rep["first_pass_ms"]) == {"default_ms", "tuned_ms"} and rep["tuned_ms"] > 0 and "taking turns" in rep["latency"]
  assert rep["compile_penalty"]   # the shipped CPU model carries a compile-time model
  assert rep["history"].endswith("history_cpu.json") and all(r["history"] >= 0 for r in rep["kernels"])   # the shipped CPU history
  assert rep["torch_compile_ms"] is None and "no C++ compiler" in rep["torch_compile_error"] and rep["torch_eager_ms"] > 0
  assert rep["reference"] == "torch eager" and rep["outputs_match"] and rep["max_abs_err"] < 1e-4, rep["check"]
  rows = rep["kernels"]
  assert rep["kernels_distinct"] == len(rows) >= 5 and sum(r["occurrences"] for r in rows) == rep["kernel_launches"]
  assert 0 < sum(r["timed"] for r in rows) <= 24 + sum(r["siblings_timed"] for r in rows) and abs(sum(r["share"] for r in rows) - 1) < 1e-9   # the budget holds; siblings' configs come on top
  assert {r["status"] for r in rows} <= {"tuned", "default"} and any(r["status"] == "tuned" for r in rows)
  searched = [r for r in rows if r["status"] == "tuned"]
  assert max(rows, key=lambda r: r["share"])["status"] == "tuned"   # the largest kernel is searched first
  assert all(0 < r["timed"] <= r["budget"] + r["siblings_timed"] and r["tuned_us"] <= r["hand_coded_us"] for r in searched)
  assert rep["tune_s"] >= sum(r["search_s"] for r in rows) > 0
  assert all(r["budget"] == 0 and r["timed"] == 0 for r in rows if r["status"] == "default")
  assert len(json.loads(cache.read_text())) == len(rows)   # every kernel is cached: tuned, or with its default opts
  assert rep["tuned_launches"] == rep["kernel_launches"]   # the tuned JIT ran every launch with cached opts

  # again, with every kernel cached: no search and no per-kernel measurement at all
  def forbidden(*a, **kw): raise AssertionError("searched or measured a cached kernel")
  monkeypatch.setattr(BC, "tune_kernel", forbidden)
  monkeypatch.setattr(SC, "Measurer", forbidden)
  again = tune_model(module, x, device="CPU", budget=24, cache=cache, runs=3, torch_compile=False, compile_penalty=False, log=lambda s: None)
  assert again["compile_penalty"] is False
  assert {r["status"] for r in again["kernels"]} == {"cached"} and again["budget"] == 0 and again["kernels_searched"] == 0
  assert again["tune_s"] == rep["tune_s"]   # what tuning cost, read back from the cache entries
  assert again["tuned_launches"] == again["kernel_launches"] and again["outputs_match"], again["check"]

  # and any tinygrad program that runs the model inside tuned() gets the cached opts (here: the ONNX runner without a JIT)
  from search.cache import tuned, stats
  onnx = tmp_path / "m.onnx"
  export_torch(module, x, onnx)
  m = OnnxModel(onnx, "CPU", {"input0": x[0].numpy()})
  before = stats()["tuned"]
  with tuned(cache): (out,) = [t.numpy() for t in m.forward(*m.inputs)]
  assert stats()["tuned"] - before == rep["kernel_launches"]
  with torch.no_grad(): np.testing.assert_allclose(out, module(*x).numpy(), rtol=1e-4, atol=1e-5)

@pytest.mark.parametrize("content", ["garbage", "truncated", "missing"])
def test_malformed_onnx_is_one_line_and_exit_2(tmp_path, content):
  f = tmp_path / "model.onnx"
  if content == "garbage": f.write_bytes(b"this is not an ONNX model\x07\xff")
  elif content == "truncated": f.write_bytes(export_torch(*_module(), tmp_path / "full.onnx").read_bytes()[:1500])
  r = subprocess.run([sys.executable, "-m", "search.tune_model", str(f), "--device", "CPU", "--cache", str(tmp_path / "c.json"),
                      "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=120)
  err = r.stderr.strip().splitlines()
  assert r.returncode == 2 and len(err) == 1 and err[0].startswith("tune-model: error: "), r.stderr
  assert ("no such ONNX file" if content == "missing" else "is not a valid ONNX model") in err[0]
  assert not (tmp_path / "c.json").exists()

def test_corrupt_history_is_one_line(tmp_path):
  (h := tmp_path / "h.json").write_text("{oops")
  r = subprocess.run([sys.executable, "-m", "search.tune_model", str(export_torch(*_module(), tmp_path / "m.onnx")), "--device", "CPU",
                      "--history", str(h), "--cache", str(tmp_path / "c.json")], cwd=ROOT, capture_output=True, text=True, timeout=300)
  err = r.stderr.strip().splitlines()
  assert r.returncode == 2 and len(err) == 1 and "is not a history file" in err[0], r.stderr

def test_unknown_device_is_one_line(tmp_path):
  r = subprocess.run([sys.executable, "-m", "search.tune_model", str(tmp_path / "m.onnx"), "--device", "TPU"], cwd=ROOT,
                     capture_output=True, text=True, timeout=120)
  assert r.returncode == 2 and r.stderr.strip() == "tune-model: error: unknown device 'TPU': choose one of CUDA, CPU", r.stderr

def test_later_share_reads_off_and_defaults():
  from search.tune_model import parse_args
  from search.task_scheduler import LATER_SHARE
  assert parse_args(["m.onnx"]).later_share == LATER_SHARE and parse_args(["m.onnx", "--later-share", "off"]).later_share is None
  assert parse_args(["m.onnx", "--later-share", "0.5"]).later_share == 0.5

def test_negative_later_share_is_one_line(tmp_path):
  r = subprocess.run([sys.executable, "-m", "search.tune_model", str(tmp_path / "m.onnx"), "--device", "CPU", "--later-share", "-0.5",
                      "--cache", str(tmp_path / "c.json")], cwd=ROOT, capture_output=True, text=True, timeout=120)
  assert r.returncode == 2 and r.stderr.strip() == "tune-model: error: --later-share -0.5: a share of seconds is 0 or more", r.stderr

def test_sibling_picks_trade_the_fastest_config_within_one_loop_nest():
  from types import SimpleNamespace
  from tinygrad import Tensor
  from tinygrad.codegen.opt import Opt, OptOps
  from dataset.device import renderer_for
  from dataset.kernel import kernel_asts, scheduler
  ren = renderer_for("CPU")
  e = lambda *s: Tensor.empty(*s)   # fresh inputs per graph: kernel_asts rebinds what it schedules
  # two reductions of one loop nest (64x64 summed over 64) and one of another (32x64 over 64)
  asts = [kernel_asts((e(64, 64) @ e(64, 64)).contiguous())[0], kernel_asts(((e(64, 64) @ e(64, 64)) + 1).relu().contiguous())[0],
          kernel_asts((e(32, 64) @ e(64, 64)).contiguous())[0]]
  bases = [scheduler(x, ren) for x in asts]
  assert bases[0].full_shape == bases[1].full_shape != bases[2].full_shape
  fast, slow, other = (Opt(OptOps.UPCAST, 0, 4),), (Opt(OptOps.UNROLL, 0, 4),), (Opt(OptOps.UPCAST, 1, 4),)
  times = [{fast: 1e-5, slow: 3e-5}, {slow: 2e-5, (): float("inf")}, {other: 1e-6}]
  ctxs = {i: SimpleNamespace(base=s, measurer=SimpleNamespace(times=t)) for i, (s, t) in enumerate(zip(bases, times))}
  picks = sibling_picks(ctxs, [0, 1, 2])
  # kernel 1 gets kernel 0's fastest; kernel 0 has measured kernel 1's fastest already; the other nest trades with nobody
  assert picks == {0: [], 1: [fast], 2: []}
  assert sibling_picks(ctxs, [1, 2]) == {1: [], 2: []}   # only searched kernels trade

def test_schedule_prepares_only_rounds_its_budget_pays_for():
  # two kernels at 100 us with first rounds of 3 and later rounds of 3: a guess of a kernel's next round (again) and another's
  # round made ready (ahead) are compiles that are lost unless the pooled budget pays for that round
  def run(total):
    tips, told = [], []
    schedule([1, 1], [100.0, 100.0], lambda i, b: (b, 50.0, False), total=total, first=3, step=3,
             again=lambda i, likely: tips.append((i, likely)), ahead=lambda o, n: told.append(o))
    return tips, told
  told = []
  schedule([1, 1], [100.0, 100.0], lambda i, b: (b, 50.0, False), total=7, first=3, step=3, ahead=lambda o, n: told.append(o))
  assert told[0] == [0, 1]   # without again (tune-model's), ahead is told of the next kernels whatever the budget
  tips, told = run(7)   # both first rounds and 1 more: no later round of 3 fits
  assert tips[:2] == [(0, False), (1, False)] and all(o == o[:1] for o in told)
  tips, told = run(12)   # 6 left after the first rounds: two later rounds, one each
  assert tips[:2] == [(0, True), (1, True)] and told[0] == [0, 1]
  tips, told = run(None)   # no cap: expected wherever a round is worth it
  assert tips[0] == (0, True)

def test_schedule_later_rounds_take_at_most_their_share_of_the_seconds():
  # two kernels that gain 10% every round; each round takes 1 s of a fake clock. Later rounds go to kernel 0 (it keeps gaining) only
  # while the later seconds, the next one's included, stay within later_share of the rest
  def run(later_share, since=None, total=None):
    now, best, calls = [10.0], [100.0, 80.0], []
    def search(i, b):
      now[0] += 1.0; calls.append(i); best[i] *= 0.9
      return b, best[i], False
    schedule([1, 1], [100.0, 80.0], search, total=total, first=3, step=3, later_share=later_share, since=since, clock=lambda: now[0])
    return calls
  assert len(run(None, total=30)) == 10   # no cap: the whole budget, 8 later rounds
  assert run(0.5) == [0, 1, 0]   # 2 s of first rounds: a later second fits, a second one (2 of 3 - 1) does not
  assert run(1.0) == [0, 1, 0, 0]   # 2 later seconds of 2
  assert run(0.5, since=6.0) == [0, 1, 0, 0, 0]   # the 4 s before the rounds (setup) count among the rest: 3 later of 6

def test_second_share_gives_a_large_kernel_its_second_round_before_any_third():
  # a Llama block in small: kernel 0 (60% of the time) gains 20% a round, kernel 1 (15%) found nothing to expect from a second
  # round (NEXT_GAIN of 15% is under STOP_GAIN), kernel 2 (1%) is too small for one either way
  def run(second_share):
    best, calls = [600.0, 150.0, 10.0], []
    def search(i, b):
      calls.append(i); best[i] *= 0.8 if i == 0 else 1.0
      return b, best[i], False
    schedule([1, 1, 1], list(best), search, total=40, first=4, step=4, second_share=second_share)
    return calls
  assert 1 not in run(None)[3:]   # by expected gain alone, kernel 0 takes every later round
  calls = run(0.1)
  assert calls[:5] == [0, 1, 0, 2, 1] and calls[5:] and set(calls[5:]) == {0}   # kernel 1's second before kernel 0's third

def test_schedule_first_later_round_is_not_expected_to_take_the_first_rounds_seconds():
  # kernel 0 (the largest, 10% a round) waits 5 s on its first round's compiles, queued behind the pool; its later rounds, like
  # kernel 1's, take 1 s. Under the cap its first later round is expected to take the mean later round's seconds (none yet: 0),
  # so it gets one before kernel 1, and then no more than the cap pays for
  now, best, calls = [0.0], [100.0, 80.0], []
  def search(i, b):
    now[0] += 5.0 if i == 0 and not calls.count(0) else 1.0; calls.append(i); best[i] *= 0.9
    return b, best[i], False
  schedule([1, 1], [100.0, 80.0], search, total=None, first=3, step=3, later_share=0.5, since=0.0, clock=lambda: now[0])
  assert calls == [0, 1, 0, 0, 0]   # 6 s of first rounds: later rounds while theirs, the next one included, stay within 3 s

def test_schedule_times_a_compiled_round_of_the_next_kernels_before_one_that_would_wait():
  # ready (Beam.ready_first): kernel 0 is expected to save most, but its first round still compiles; kernel 1's (next in line) is
  # compiled, so it goes first; kernel 2, too small to be worth a round, never goes
  calls, ready_at = [], {0: 1}   # kernel 0's round is compiled once one other round has been timed
  def search(i, b):
    calls.append(i)
    return b, 50.0, True
  schedule([1, 1, 1], [100.0, 80.0, 0.01], search, total=None, first=3, step=3, ready=lambda j: len(calls) >= ready_at.get(j, 0))
  assert calls == [1, 0]
  calls.clear()
  schedule([1, 1, 1], [100.0, 80.0, 0.01], search, total=None, first=3, step=3, ready=lambda j: j == 2)
  assert calls == [0, 1]   # no kernel worth a round is ready: the order of expected savings

def test_schedule_gives_the_round_expected_to_save_most():
  # kernel 0: 100 us once per pass, its first round gets it to 10 us, later ones find nothing; kernel 1: 30 us x 2 runs, every
  # round makes it 20% faster; kernel 2: 0.01 us, never worth a round; kernel 3: 50 us, finds nothing and stops after 4 candidates
  state = {0: [0, 100.0], 1: [0, 30.0], 2: [0, 0.01], 3: [0, 50.0]}
  calls = []
  def search(i, b):
    calls.append((i, b))
    t, best = state[i]
    if i == 0: best = 10.0 if b >= 3 else best
    if i == 1: best = best * 0.8**((b - t) / 3)
    if i == 3: b = min(b, 4)
    state[i] = [b, best]
    return b, best, i == 3 and b >= 4
  told = []
  alloc = schedule([1, 2, 1, 1], [100.0, 30.0, 0.01, 50.0], search, total=30, first=3, step=3, ahead=lambda o, n: told.append(o))
  assert calls[:3] == [(0, 3), (1, 3), (3, 3)]    # every kernel that matters gets its first round before any gets a second, largest first
  assert told[0] == [0, 1, 3] and len(told) == len(calls) and all(o[0] == i for o, (i, _) in zip(told, calls))   # the next ones, in order
  assert calls[3] == (3, 6)                       # a second round where the most time is (3 at 50 us, 1 at 2 x 24 us)
  assert sum(used for used, _ in state.values()) == 30 and state[3][0] == 4   # what 3 left unused went to the others
  assert alloc[2] == 0                            # never mattered: keeps the default
  assert alloc[1] > alloc[0] == 3                 # the kernel that keeps improving gets the rest; 0 stopped improving
  assert [b for i, b in calls if i == 1] == sorted(b for i, b in calls if i == 1)   # budgets only grow: a search goes on
  assert [i for i, _ in calls].count(3) == 2 and calls[-1][0] != 3   # 3 stopped on its own: never searched again
  # no budget cap: rounds that find nothing lower what the next is expected to save, until none is worth `stop` of the model's time
  flat = lambda i, b: (b, 50.0, False)
  # (each: a first round to 50 us, then rounds expected to save 50 x NEXT_GAIN and half that; a third half again is below 0.3 us)
  assert NEXT_GAIN == 0.015 and schedule([1, 1], [100.0, 100.0], flat, total=None, first=3, step=3) == [9, 9]
  assert schedule([1, 1], [100.0, 100.0], flat, total=None, first=3, step=3, stop=0.1) == [3, 3]   # after the first rounds
  # compile slots: a later round takes its share of the workers, the kernels still worth a round (up to 1+AHEAD) splitting them
  better = lambda i, b: (b, 100.0*0.8**(b/3), False)
  calls = []
  assert schedule([1], [100.0], lambda i, b: calls.append(b) or better(i, b), total=27, first=3, step=3, slots=12) == [27]
  assert calls == [3, 15, 27]                     # one kernel left: rounds of 12, not four rounds of 3
  sizes = []
  schedule([1, 1], [100.0, 100.0], better, total=40, first=3, step=3, slots=12, ahead=lambda o, n: sizes.append(n))
  assert set(sizes[2:]) == {6}                    # two kernels worth rounds: 6 each
  # first batches still in the pool: the rounds go to the kernels that are ready, and the scheduler waits only when none is; a
  # batch that comes later brings its own size
  ready, firsts, calls, told, waits = {1}, [3, 3, 3], [], [], []
  def wait():
    waits.append(len(calls)); ready.add(min({0, 2} - ready)); firsts[0] = 5
  alloc = schedule([1, 1, 1], [100.0, 50.0, 30.0], lambda i, b: calls.append((i, b)) or flat(i, b), total=None, first=firsts, step=3,
                   pending=lambda i: i not in ready, wait=wait, ahead=lambda o, n: told.append(o))
  assert calls[:2] == [(1, 3), (1, 6)] and waits[0] == 2   # the largest kernel (0) is pending: 1's rounds, until none is worth one
  assert calls[2] == (0, 5) and (2, 3) in calls and alloc[0] >= 5   # then 0 with its batch's size, and 2 in its turn
  assert all(i in ready for o in told for i in o)       # nothing pending is made ready ahead
  # a round that times one fewer than asked (a straggler, timed next round) does not stop a kernel that keeps improving; one that
  # times nothing does
  short = lambda i, b: (b - 1, 100.0*0.8**(min(b, 15)/3), False)   # better each round up to 15 candidates
  assert schedule([1], [100.0], short, total=None, first=3, step=3)[0] >= 15
  calls = []
  assert schedule([1], [100.0], lambda i, b: calls.append(b) or (3, 50.0, False), total=None, first=3, step=3) == [6] and calls == [3, 6]
  # the forward look: a kernel at a quarter of the throughput of its class's best keeps getting rounds that find nothing, each
  # expected to save half the last's, where the backward rule alone gives it one; without a class to compare with, the rule alone
  stuck = lambda i, b: (b, [1000.0, 100.0][i], False)   # kernel 0: 4 GFLOP at 1000 us; kernel 1: 1 GFLOP at 100 us, twice the work rate
  work = [("tc2", 4e9), ("tc2", 1e9)]
  alone = schedule([1, 1], [2000.0, 200.0], stuck, total=None, first=3, step=3)
  ahead_ = schedule([1, 1], [2000.0, 200.0], stuck, total=None, first=3, step=3, work=work)
  assert ahead_[0] > alone[0] and ahead_[1] == alone[1] and ahead_[0] < 60   # it falls back: halved per fruitless round
  assert schedule([1, 1], [2000.0, 200.0], stuck, total=None, first=3, step=3, work=[("tc2", 4e9), ("mem", 1e9)]) == alone
  # no kernel is expected to run faster than the model's fastest: a 20-us kernel beside an 18-us one, at a thousandth of its class's
  # best throughput, has 10% of room, not 99.9%, and the forward look gives it nothing the backward rule does not
  flat3 = lambda i, b: (b, [1000.0, 20.0, 18.0][i], False)
  work3 = [("mem", 1e9), ("mem", 2e4), ("mem", 1e4)]
  runs3, t3 = [1, 100, 1], [4000.0, 40.0, 18.0]
  assert schedule(runs3, t3, flat3, total=None, first=3, step=3, work=work3)[1] == schedule(runs3, t3, flat3, total=None, first=3, step=3)[1]
  far, t3 = (lambda i, b: (b, [1000.0, 20.0, 1.0][i], False)), [4000.0, 40.0, 1.0]   # beside a 1-us kernel it has room: more rounds
  assert schedule(runs3, t3, far, total=None, first=3, step=3, work=work3)[1] > schedule(runs3, t3, far, total=None, first=3, step=3)[1]
  # no budget left after the first round, or nothing left to search: it stops
  assert schedule([1], [5.0], lambda i, b: (b, 1.0, False), total=2, first=3) == [2]
  assert schedule([1], [float("inf")], lambda i, b: (b, 1.0, False), total=10) == [0]

def test_merge_beam_replaces_each_kernel_once(tmp_path):
  """A host call's BEAM=2 results go into the committed cache: a kernel searched again replaces its entry wherever it was, and
  every kernel stays in one file (bench_models reads all of them, so a stale twin could win)."""
  from search import beam_cache
  cache, src = tmp_path / "cache", tmp_path / "src"
  cache.mkdir(); src.mkdir()
  (cache / "beam2.gpu0.json").write_text(json.dumps({"a": {"tune_s": 1.0}}))
  (cache / "beam2.gpu1.json").write_text(json.dumps({"b": {"tune_s": 2.0}, "c": {"tune_s": 3.0}}))
  (src / "beam2.gpu3.json").write_text(json.dumps({"a": {"tune_s": 1.0}, "b": {"tune_s": 5.0}, "d": {"tune_s": 4.0}}))
  assert beam_cache.merge_beam(src, cache) == 2   # b replaced, d new; a unchanged
  files = [json.loads(f.read_text()) for f in sorted(cache.glob("beam2.gpu*.json"))]
  assert beam_cache.beam_done(cache) == {"a": {"tune_s": 1.0}, "b": {"tune_s": 5.0}, "c": {"tune_s": 3.0}, "d": {"tune_s": 4.0}}
  assert sorted(k for d in files for k in d) == ["a", "b", "c", "d"]
  assert beam_cache.merge_beam(src, cache) == 0
  assert beam_cache.drop_beam(cache, {"b", "c", "x"}) == 2 and beam_cache.beam_done(cache) == {"a": {"tune_s": 1.0}, "d": {"tune_s": 4.0}}

def test_a_models_beam_results_are_found_by_name_without_its_tuned_json(tmp_path):
  # BEAM_AGAIN=1 on the unseen networks' cache (no tuned.json there) once dropped nothing: BEAM=2's results from another card were
  # timed as if searched on this one
  from search import beam_cache
  (tmp_path / "beam2.gpu0.json").write_text(json.dumps({"k1": {"name": "vit_b_16_b1_fp16#0"}, "k2": {"name": "llama_block_s512_fp16#3"},
                                                         "k3": {"name": "llama_block_s512_fp16#8"}}))
  (tmp_path / "beam2.gpu1.json").write_text(json.dumps({"k4": {"name": "resnet50_b1_fp32#2"}}))
  (tmp_path / "resnet50_b1_fp32.tuned.json").write_text(json.dumps({"k4": {}, "k1": {}}))   # k1: a kernel the two models share
  assert beam_cache.model_keys(tmp_path, ["llama_block_s512_fp16"]) == {"k2", "k3"}
  assert beam_cache.model_keys(tmp_path, ["resnet50_b1_fp32"]) == {"k1", "k4"}
  r = subprocess.run([sys.executable, "scripts/bench_models.py", "--drop-beam", "--models", "llama_block_s512_fp16", "--cache", str(tmp_path)],
                     capture_output=True, text=True)
  assert r.returncode == 0 and set(beam_cache.beam_done(tmp_path)) == {"k1", "k4"}, r.stderr
  r = subprocess.run([sys.executable, "scripts/bench_models.py", "--drop-beam", "--models", "llama_block_s512_fp16", "--cache", str(tmp_path)],
                     capture_output=True, text=True)
  assert r.returncode == 2 and "no BEAM=2 results of llama_block_s512_fp16" in r.stderr   # nothing to drop: an error, not a silent run

def test_phases_reports_what_later_rounds_bought(tmp_path):
  """bench_models --phases: a tune-model run's seconds, when the first rounds and the last timing were, and the share of the tuned
  model's time that the timings after each kernel's first batch saved (here 2 x (50 - 40) us of 2 x 40 + 100 us)."""
  traj = lambda *best: [[n + 1, 0.5*(n + 1), b] for n, b in enumerate(best)]
  rows = [{"occurrences": 2, "tuned_us": 40.0, "tune_s": 3.0, "compiled": 14, "timed": 11, "trajectory": traj(*[90.0] + [50.0]*8 + [45.0, 40.0])},
          {"occurrences": 1, "tuned_us": 100.0, "tune_s": 1.0, "compiled": 9, "timed": 8, "trajectory": traj(*[120.0] + [100.0]*8)},
          {"occurrences": 1, "tuned_us": 7.0, "tune_s": None, "compiled": 0, "timed": 0}]   # cached: no trajectory
  (f := tmp_path / "m.tune.json").write_text(json.dumps(rows))
  r = subprocess.run([sys.executable, "scripts/bench_models.py", "--phases", str(f)], capture_output=True, text=True)
  assert r.returncode == 0, r.stderr
  (p,) = json.loads(r.stdout)
  assert (p["kernels"], p["tune_s"], p["compiled"], p["timed"], p["kernels_timed_later"]) == (3, 4.0, 23, 19, 1)
  assert (p["first_rounds_done_s"], p["last_timing_s"]) == (4.5, 5.5) and p["later_saved_share"] == round(20/187, 4)
  assert "behind_beam2" not in p   # no BEAM=2 results beside the rows
  # with BEAM=2's results beside them (a host call's cache/): the kernels behind its times, most model time lost first
  rows[0]["key"], rows[1]["key"], rows[0]["kernel"], rows[1]["kernel"] = "a", "b", "r_a", "r_b"
  f.write_text(json.dumps(rows))
  (tmp_path / "beam2.gpu0.json").write_text(json.dumps({"a|CPU|0.14.0": {"time_us": 38.0, "timed": 50},
                                                        "b|CPU|0.14.0": {"time_us": 80.0, "timed": 60}}))
  r = subprocess.run([sys.executable, "scripts/bench_models.py", "--phases", str(f)], capture_output=True, text=True)
  behind = json.loads(r.stdout)[0]["behind_beam2"]
  assert [(b["kernel"], b["lost_us"]) for b in behind] == [("r_b", 20.0), ("r_a", 4.0)]
  (bad := tmp_path / "bad.json").write_text("{")
  r = subprocess.run([sys.executable, "scripts/bench_models.py", "--phases", str(bad)], capture_output=True, text=True)
  assert r.returncode == 2 and len(r.stderr.strip().splitlines()[-1]) < 300 and "--phases" in r.stderr

def test_bench_models_merge_records_the_hosts_cpu_probe(tmp_path):
  """bench_models' models.json holds each model's report and this host's CPU probe (dataset.device.host_probe): BEAM=2's seconds may
  come from another call's host, and a tuning share across two hosts says how comparable they were only beside it."""
  mod = script("bench_models")
  (cache := tmp_path / "cache").mkdir()
  (cache / "m1.error.json").write_text(json.dumps({"model": "m1", "error": "BEAM=2 cut off", "device": "CPU"}))
  from dataset.device import host_probe
  a = argparse.Namespace(argv=["--models", "m1"], host_probe=host_probe())   # run() measures it once, before its workers start
  mod.merge(a, ["m1", "m2"], tmp_path, cache)   # m2: no report, left out
  res = json.loads((tmp_path / "models.json").read_text())
  assert list(res["models"]) == ["m1"] and res["models"]["m1"]["error"] == "BEAM=2 cut off"
  assert res["host_probe_s"] == a.host_probe > 0 and res["command"] == "python scripts/bench_models.py --models m1"

def test_culprits_halves_down_to_the_configs_that_break_the_outputs():
  from search.guard import culprits
  probes = []
  def breaks(ks):
    probes.append(ks); return "k5" in ks or {"k1", "k2"} <= set(ks)   # k5 alone, k1 and k2 only together
  keys = [f"k{i}" for i in range(8)]
  assert sorted(culprits(keys, breaks)) == ["k1", "k2", "k5"] and len(probes) < 2*len(keys)
  assert culprits(keys, lambda ks: False) == []

def test_a_config_that_breaks_the_model_gives_way_to_its_next_fastest_right_one_or_the_default(tmp_path):
  # tinygrad 0.14.0 computes wrong when a PADTO'd reduce axis is unrolled (results/tinygrad_bugs/padded_reduce.py): a cached config
  # that does is found by the model's outputs and replaced by the hand-coded one, which computes right
  from search.cache import TunedCache, tuned
  from search.tune_model import repair
  from search.latency import check, tinygrad_latency
  from search.onnx_model import open_model
  class Bmm(nn.Module):
    def forward(self, a, b): return (a @ b) * 2
  torch.manual_seed(0)
  _, m, kernels, _, _ = open_model(Bmm(), (torch.randn(3, 64, 33), torch.randn(3, 33, 16)), "CPU", "bmm")
  default, cache, path = tinygrad_latency(m, 1), TunedCache(tmp_path / "t.json"), tmp_path / "t.json"
  assert repair(m, kernels, cache, "CPU", default["outputs"], lambda s: None) == []   # nothing cached: nothing to repair
  bad = [["PADTO", 3, 16], ["UNROLL", 0, 4]]
  cache.put(kernels[0].key, "CPU", bad, time_us=1.0, hand_coded_us=2.0, name="bmm#0")
  assert check(tinygrad_latency(m, 1, lambda: tuned(path))["outputs"], default["outputs"])[0] is not None   # the bug, still there
  assert repair(m, kernels, cache, "CPU", default["outputs"], lambda s: None) == [kernels[0].key]
  key = f"{kernels[0].key}|CPU|{__import__('dataset.kernel').kernel.TINYGRAD_VERSION}"
  e = json.loads(path.read_text())[key]
  assert e["status"] == "rejected" and e["rejected"] == bad and e["opts"] != bad and e["time_us"] == 2.0   # no alternates: the default
  assert check(tinygrad_latency(m, 1, lambda: tuned(path))["outputs"], default["outputs"])[0] is None
  # with the search's next-fastest configs kept: the first that is right in the model takes its place (another broken one does not)
  good, bad2 = [["UPCAST", 1, 4]], [["PADTO", 3, 16], ["UNROLL", 0, 2]]
  cache.put(kernels[0].key, "CPU", bad, time_us=1.0, hand_coded_us=2.0, name="bmm#0", alternates=[[bad2, 1.2], [good, 1.5]])
  assert repair(m, kernels, cache, "CPU", default["outputs"], lambda s: None) == [kernels[0].key]
  e = json.loads(path.read_text())[key]
  assert e["status"] == "alternate" and e["opts"] == good and e["time_us"] == 1.5 and e["rejected"] == bad
  assert check(tinygrad_latency(m, 1, lambda: tuned(path))["outputs"], default["outputs"])[0] is None
