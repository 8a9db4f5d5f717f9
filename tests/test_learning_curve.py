"""The learning curve (models.learning_curve) on the committed CPU dataset: no held-out kernel's row is in any training selection,
both strategies label each kernel's budget at each fraction, active rounds choose only unlabelled rows once, and the CLI writes the
documented results. Small rankers: seconds, no GPU."""
import json
from pathlib import Path
import numpy as np
import pytest
from models.data import load
from models.learning_curve import KEYS, budget, learning_curve, pick, schedule
from models.evaluate import METRICS
from models.train import main as train_main

pytestmark = pytest.mark.slow   # the learning-curve tool's runs train models (~32 s on 2 cores with the fixtures)

CPU_DATA = Path(__file__).resolve().parents[1] / "dataset" / "data" / "cpu.sqlite"
SMALL = dict(n_estimators=20, num_leaves=7, min_data_in_leaf=3, learning_rate=0.2)
FRACTIONS = [0.1, 0.3, 1.0]

@pytest.fixture(scope="module")
def ds(): return load(CPU_DATA, workers=1)   # conftest points the feature cache at the test run's temporary directory

@pytest.fixture(scope="module")
def run(ds):
  trace: list = []
  return learning_curve(ds, FRACTIONS, folds=3, seeds=[0], threads=1, committee=2, params=SMALL, trace=trace), trace

def test_budget_and_schedule():
  assert budget(np.array([1, 2, 3, 10, 100]), 0.05).tolist() == [1, 2, 2, 2, 5]   # a pair at least, never more than the kernel has
  assert budget(np.array([7, 100]), 1.0).tolist() == [7, 100]
  s = schedule([0.05, 0.2, 1.0], start=0.02, growth=1.5)
  assert s[0] == 0.02 and 0.05 in s and s[-1] == 0.2 and all(b/a <= 1.5 + 1e-9 for a, b in zip(s, s[1:]))

def test_pick_mixes_top_and_disagreement():
  # member scores of 6 rows: row 5 is everyone's top, row 0 the one they disagree on most, rows 2-3 agreed slow
  s = np.array([[5.0, 1, 0, 0.5, 2, 9], [-5, 1, 0, 0.5, 2, 9]])
  assert pick(s, 2, top_share=0.5).tolist() == [5, 0]
  assert pick(s, 1, top_share=0.0).tolist() == [0]
  assert sorted(pick(s, 9).tolist()) == list(range(6))

def test_selections_never_hold_a_test_kernel_and_match_the_budget(ds, run):
  res, trace = run
  sel = [x for x in trace if x["strategy"] != "round"]
  assert {(x["strategy"], x["fraction"]) for x in sel} == {("random", 0.1), ("random", 0.3), ("active", 0.1), ("active", 0.3), ("both", 1.0)}
  for x in sel:
    rows, te = x["rows"], x["test"]
    assert len(np.unique(rows)) == len(rows) and not te[rows].any()
    assert not set(ds.kernel[rows].tolist()) & set(ds.kernel[te].tolist())
    # every training kernel holds exactly its budget at this fraction, whichever strategy chose the rows
    kt, n = np.unique(ds.kernel[~te], return_counts=True)
    ks, got = np.unique(ds.kernel[rows], return_counts=True)
    assert ks.tolist() == kt.tolist() and got.tolist() == budget(n, x["fraction"]).tolist()
  for s in ("random", "active"):
    assert [c["fraction"] for c in res["curve"][s]] == FRACTIONS
    assert all(len(c["kendall_tau"]["runs"]) == 3 for c in res["curve"][s])
  # the two strategies label the same rows per kernel but not the same rows
  r, a = ({(x["fold"], x["fraction"]): set(x["rows"].tolist()) for x in sel if x["strategy"] == s} for s in ("random", "active"))
  assert any(r[k] != a[k] for k in r)

def test_active_rounds_pick_from_the_pool_once(ds, run):
  _, trace = run
  rounds = [x for x in trace if x["strategy"] == "round"]
  assert rounds and any(len(x["picked"]) for x in rounds)
  for x in rounds:
    p = x["picked"]
    assert len(np.unique(p)) == len(p) and x["train"][p].all() and not np.isin(p, x["before"]).any()
  for fold in {x["fold"] for x in rounds}:   # a round's labelled rows are the last round's plus its picks
    rs = [x for x in rounds if x["fold"] == fold]
    for a, b in zip(rs, rs[1:]): assert sorted(b["before"].tolist()) == sorted(a["before"].tolist() + a["picked"].tolist())

def test_cli_writes_the_documented_results(ds, tmp_path):
  out = tmp_path / "res"
  rc = train_main([str(CPU_DATA), "--learning-curve", "--fractions", "0.05,1", "--folds", "2", "--seeds", "1", "--committee", "2",
                   "--threads", "1", "--results", str(out), "--quiet"])
  assert rc == 0
  res = json.loads((out / "learning_curve_cpu.json").read_text())
  assert set(KEYS) <= set(res) and res["fractions"] == [0.05, 1.0] and res["folds"] == 2
  for s in ("random", "active"):
    for c in res["curve"][s]: assert {"fraction", "rows", *METRICS} <= set(c) and {"mean", "std", "runs"} <= set(c["kendall_tau"])
  assert [p["fraction"] for p in res["paired"]] == [0.05] and "wins" in res["paired"][0]["top1_score"]
  md = (out / "learning_curve_cpu.md").read_text()
  assert res["command"] in md and res["dataset"]["hash"][:16] in md and (out / "learning_curve_cpu.png").stat().st_size > 0

def test_cli_refuses_an_unwritable_results_path_first(tmp_path, capsys):
  (f := tmp_path / "file").write_text("")
  assert train_main([str(CPU_DATA), "--learning-curve", "--results", str(f)]) == 2
  err = capsys.readouterr().err.strip()
  assert len(err.splitlines()) == 1 and "not a directory" in err
  with pytest.raises(SystemExit) as e: train_main([str(CPU_DATA), "--learning-curve", "--fractions", "0,0.5"])
  assert e.value.code == 2

def test_kernels_arm_takes_every_row_of_a_nested_share_of_the_training_kernels(ds, tmp_path):
  trace: list = []
  res = learning_curve(ds, FRACTIONS, folds=3, seeds=[0], threads=1, params=SMALL, trace=trace, against="kernels")
  assert set(res["curve"]) == {"random", "kernels"} and [p["fraction"] for p in res["paired"]] == [0.1, 0.3]
  sel = [x for x in trace if x["strategy"] == "kernels"]
  assert {x["fraction"] for x in sel} == {0.1, 0.3} and not any(x["strategy"] == "round" for x in trace)
  for fold in range(3):
    got = {}
    for x in (x for x in sel if x["fold"] == fold):
      rows, te = x["rows"], x["test"]
      ks = set(ds.kernel[rows].tolist())
      train_ks = set(ds.kernel[~te].tolist())
      assert not te[rows].any() and ks <= train_ks and len(ks) == int(np.ceil(x["fraction"]*len(train_ks) - 1e-9))
      assert sorted(rows.tolist()) == np.flatnonzero(np.isin(ds.kernel, list(ks)) & ~te).tolist()   # every row of those kernels
      got[x["fraction"]] = ks
    assert got[0.1] < got[0.3]   # nested
  out = tmp_path / "res"
  assert train_main([str(CPU_DATA), "--learning-curve", "--against", "kernels", "--fractions", "0.3,1", "--folds", "2", "--seeds", "1",
                     "--threads", "1", "--results", str(out), "--quiet"]) == 0
  r = json.loads((out / "learning_curve_kernels_cpu.json").read_text())
  assert r["protocol"]["against"] == "kernels" and set(r["curve"]) == {"random", "kernels"}
  assert "| kernels |" in (out / "learning_curve_kernels_cpu.md").read_text()
