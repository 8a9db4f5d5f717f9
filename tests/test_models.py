"""The cost model on the committed CPU dataset: deterministic features, held-out ranking that beats random, clear errors for schema,
version, arch and device mismatches and for corrupt files. Runs on tinygrad's CPU device, no GPU."""
import json, os, shutil
from pathlib import Path
import numpy as np
import pytest
from tinygrad.codegen.opt import Opt, OptOps
from dataset.store import Store
from dataset.kernel import Kernel, scheduler, opts_from_json
from dataset.device import renderer_for
import models.data
from models.data import load
from models.features import FEATURES, FEATURE_GROUPS, SCHEMA_VERSION, featurize
from models.evaluate import kernel_kfold, kernel_metrics, per_kernel, average
from models.ranker import Ranker, relevance
from models.baselines import RandomRanker, Regressor
from models.cost_model import CostModel, CostModelError, schedulers, default_model_path
from models.resources import ResourceModel, COLUMNS as RESOURCE_COLUMNS, augment
from models.train import main as train_main

ROOT = Path(__file__).resolve().parents[1]
CPU_DATA = ROOT / "dataset" / "data" / "cpu.sqlite"
CPU = renderer_for("CPU")
SMALL = dict(n_estimators=60, num_leaves=15, learning_rate=0.1)   # a CI-sized ranker

@pytest.fixture(scope="module")
def cache():
  # featurized matrices go to the test run's temporary cache (conftest), shared by every test that loads a store (the CLI tests reuse them)
  assert models.data.CACHE.is_relative_to(os.environ["KERNTUNE_CACHE_DIR"]) and not models.data.CACHE.is_relative_to(ROOT)
  return models.data.CACHE

@pytest.fixture(scope="module")
def ds(cache): return load(CPU_DATA, workers=1)

@pytest.fixture(scope="module")
def kernels():
  s = Store(CPU_DATA, readonly=True)
  try: return {r["key"]: r for r in s.kernels()}, s.devices()
  finally: s.close()

@pytest.fixture(scope="module")
def trained(ds, tmp_path_factory):
  path = tmp_path_factory.mktemp("model") / "cost_model_cpu.txt"
  meta = {"model": Ranker.name, "params": {**Ranker.DEFAULTS, **SMALL}, "feature_schema": SCHEMA_VERSION, "features": FEATURES,
          "tinygrad": ds.tinygrad, "device": ds.device, "arch": ds.arch, "backend": ds.backend, "device_props": ds.props,
          "dataset": {"hash": ds.hash}, "metrics": {}}
  CostModel(Ranker(threads=1, **SMALL).fit(ds.X, ds.time_s, ds.kernel), meta).save(path)
  return path

def _some_configs(ds, kernels, n=12):
  rows = np.random.default_rng(0).choice(len(ds), n, replace=False)
  return [(Kernel.ast_from_blob(kernels[0][ds.kernel[i]]["ast"]), opts_from_json(json.loads(ds.opts[i]))) for i in rows]

def test_features_deterministic(ds, kernels):
  props = next(iter(kernels[1].values()))
  for ast, opts in _some_configs(ds, kernels):
    a, b = featurize(scheduler(ast, CPU, opts), props), featurize(scheduler(ast, CPU, opts), props)
    assert a.shape == (len(FEATURES),) and np.isfinite(a).all() and np.array_equal(a, b)
    # built from a shared prefix (as search and the data loader do) or from scratch: the same features
    assert np.array_equal(featurize(schedulers(ast, CPU, [opts[:1], opts])[1], props), a)
  # the relative columns are the candidate's less its kernel's unoptimized Scheduler's: zero for that Scheduler itself
  k = scheduler(ast, CPU)
  rel = np.array([f.startswith("rel_") for f in FEATURES])
  assert rel.sum() > 100 and not featurize(k, props)[rel].any()
  with pytest.raises(TypeError, match="root"): featurize(k.root, props)   # a bare Scheduler has no root to compare with
  # the cached matrix is what featurizing again gives
  i = 7
  ast, opts = Kernel.ast_from_blob(kernels[0][ds.kernel[i]]["ast"]), opts_from_json(json.loads(ds.opts[i]))
  assert np.array_equal(featurize(scheduler(ast, CPU, opts), ds.props), ds.X[i])

def test_relevance_and_metrics():
  t, k = np.array([1.0, 1.05, 2.0, 10.0, 3.0, 3.0]), np.array(["a", "a", "a", "a", "b", "b"])
  y = relevance(t, k, 1.1, 20)
  assert y[0] == 19 and y[1] == 19 and y[0] > y[2] > y[3] >= 0 and y[4] == y[5] == 19
  t = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
  good, bad = kernel_metrics(-t, t), kernel_metrics(t, t)
  assert good == pytest.approx({"kendall_tau": 1.0, "pairwise_acc": 1.0, "top1_score": 1.0, "top5_score": 1.0})
  assert bad["kendall_tau"] == pytest.approx(-1.0) and bad["pairwise_acc"] == 0.0 and bad["top1_score"] == pytest.approx(1/6) and bad["top5_score"] == 0.5

def test_step_accuracy_scores_each_opt_types_parent_child_pairs():
  from models.evaluate import step_accuracy
  up, sw, lo = '["UPCAST", 0, 4]', '["SWAP", 0, 1]', '["LOCAL", 0, 2]'
  # kernel a: [] -> UPCAST (faster, scored up: right), UPCAST -> UPCAST+SWAP (slower, scored up: wrong), [] -> LOCAL (within noise);
  # kernel b: its UPCAST child has no measured parent. The opts JSON's spacing does not matter
  k = np.array(["a", "a", "a", "a", "b"])
  o = np.array(["[]", f"[{up}]", f"[{up},{sw}]".replace(" ", ""), f"[{lo}]", f"[{up}]"])
  t, s = np.array([10.0, 5.0, 6.0, 10.1, 1.0]), np.array([0.0, 1.0, 2.0, 5.0, 0.0])
  r = step_accuracy(s, t, k, o)
  assert set(r) == {"UPCAST", "SWAP"}
  assert r["UPCAST"] == {"pairs": 1, "right": 1.0, "child_up": 1.0, "up_slower": 0.0, "faster": 1.0, "within_level": 0.0}
  assert r["SWAP"] == {"pairs": 1, "right": 0.0, "child_up": 1.0, "up_slower": 1.0, "faster": 0.0, "within_level": 0.0}
  assert step_accuracy(s, t, k, o, level=1.5)["SWAP"]["within_level"] == 1.0   # 6.0 against 5.0: within a factor 1.5
  r = step_accuracy(-s, t, k, o)   # scored down: the SWAP's order right, the UPCAST's wrong, no step taken
  assert r["SWAP"]["right"] == 1.0 and r["UPCAST"]["right"] == 0.0 and r["SWAP"]["child_up"] == 0.0 and np.isnan(r["SWAP"]["up_slower"])
  # apart with and without a tensor core: a TC config's UNROLL child is on the "tc" side, the TC step itself on neither
  from models.evaluate import steps_by_tc
  tc, un = '["TC", 0, [-1, 2, 1]]', '["UNROLL", 0, 0]'
  k2, o2 = np.array(["c"]*3), np.array(["[]", f"[{tc}]", f"[{tc},{un}]"])
  r = steps_by_tc(np.array([0.0, 1.0, 2.0]), np.array([10.0, 2.0, 3.0]), k2, o2)
  assert set(r["tc"]) == {"UNROLL"} and r["tc"]["UNROLL"]["up_slower"] == 1.0 and r["no_tc"] == {}

def test_out_of_fold_never_scores_a_kernel_with_a_model_that_saw_it():
  from types import SimpleNamespace
  from models.evaluate import out_of_fold
  kernel = np.repeat(np.arange(10), 3)
  class Seen:   # scores each row by whether its kernel was in the training rows: 1 would be a leak
    def fit(self, X, t, k): self.k = set(k.tolist()); return self
    def predict(self, X): return np.array([float(k in self.k) for k in X[:, 0]])
  ds = SimpleNamespace(X=kernel[:, None].astype(float), time_s=np.ones(len(kernel)), kernel=kernel)
  s = out_of_fold(Seen, ds, folds=5, seed=3)
  assert not np.isnan(s).any() and (s == 0).all()
  trained = []
  class Rows(Seen):
    def fit(self, X, t, k): trained.append(len(k)); return super().fit(X, t, k)
  out_of_fold(Rows, ds, folds=5, seed=3, rows=kernel < 5)   # training limited to kernels 0-4
  assert sum(trained) == 4*15

def test_cpu_model_beats_random_on_held_out_kernels(ds):
  assert len(np.unique(ds.kernel)) >= 60
  s_model, s_rand = np.full(len(ds), np.nan), np.full(len(ds), np.nan)
  for tr, te in kernel_kfold(ds.kernel, 3, 0):
    assert not set(ds.kernel[tr]) & set(ds.kernel[te])   # grouped: no kernel on both sides
    s_model[te] = Ranker(threads=1, **SMALL).fit(ds.X[tr], ds.time_s[tr], ds.kernel[tr]).predict(ds.X[te])
    s_rand[te] = RandomRanker(0).predict(ds.X[te])
  model, rand = average(per_kernel(s_model, ds.time_s, ds.kernel)), average(per_kernel(s_rand, ds.time_s, ds.kernel))
  assert model["pairwise_acc"] > rand["pairwise_acc"] + 0.1, (model, rand)
  assert model["pairwise_acc"] > 0.65

def test_throughput_regressor_ranks_within_kernels(ds):
  # Ansor's target (kernel best / time): per kernel, not across kernels, so a held-out kernel's configs still rank
  tr, te = next(iter(kernel_kfold(ds.kernel, 3, 0)))
  r = Regressor(threads=1, target="throughput", n_estimators=60).fit(ds.X[tr], ds.time_s[tr], ds.kernel[tr])
  assert average(per_kernel(r.predict(ds.X[te]), ds.time_s[te], ds.kernel[te]))["pairwise_acc"] > 0.65

def test_load_and_score(trained, ds, kernels):
  m = CostModel.load(trained, arch=ds.arch, device="CPU")
  assert np.allclose(m.score(ds.X[:50]), CostModel.load(trained).score(ds.X[:50]))
  ast, opts = _some_configs(ds, kernels, 1)[0]
  ks = schedulers(ast, CPU, [(), opts])
  s = m.scorer(ds.props)(ks)
  assert s.shape == (2,) and np.isfinite(s).all()
  bad = (Opt(OptOps.UPCAST, 63, 4),)   # no such axis
  out = m.score_opts(ast, [opts, bad], CPU)
  assert np.isfinite(out[0]) and out[1] == -np.inf
  # a search scores with one BLAS thread (its compile workers load every core), and leaves the process's setting as it was
  from threadpoolctl import threadpool_info
  blas = lambda: [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
  before, seen, inner = blas(), [], m.score_schedulers
  m.score_schedulers = lambda *a, **kw: (seen.append(blas()), inner(*a, **kw))[1]
  m.scorer(ds.props)(ks)
  assert before and seen == [[1]*len(before)] and blas() == before

def _edited(trained, tmp_path, **changes) -> Path:
  for f in (trained, trained.with_suffix(".json")): shutil.copy(f, tmp_path / f.name)
  p = tmp_path / trained.name
  meta = json.loads(p.with_suffix(".json").read_text())
  meta.update(changes)
  p.with_suffix(".json").write_text(json.dumps(meta))
  return p

@pytest.mark.parametrize("change, message", [({"feature_schema": SCHEMA_VERSION + 1}, "feature schema"),
                                             ({"tinygrad": "0.0.1"}, "tinygrad 0.0.1"),
                                             ({"features": FEATURES[:-1]}, "feature schema")])
def test_schema_and_version_mismatch(trained, tmp_path, change, message):
  with pytest.raises(CostModelError, match=message): CostModel.load(_edited(trained, tmp_path, **change))

def test_arch_and_device_mismatch(trained, ds):
  with pytest.raises(CostModelError, match="arch"): CostModel.load(trained, arch="sm_90")
  with pytest.raises(CostModelError, match="allow_device_mismatch"): CostModel.load(trained, device="CUDA")
  with pytest.raises(CostModelError, match="allow_device_mismatch"): CostModel.load(trained, device="NVIDIA H200")
  assert CostModel.load(trained, device="CUDA", allow_device_mismatch=True).meta["device"] == ds.device
  assert CostModel.load(trained, device=ds.device).meta["backend"] == "CPU"

def test_corrupt_model_files(trained, tmp_path):
  p = _edited(trained, tmp_path)
  txt = p.read_text()
  p.write_text(txt[:len(txt)//2])   # truncated
  with pytest.raises(CostModelError, match="corrupt"): CostModel.load(p)
  p.write_bytes(b"\x00garbage" * 100)
  with pytest.raises(CostModelError, match="corrupt"): CostModel.load(p)
  p = _edited(trained, tmp_path)
  p.with_suffix(".json").write_text("{not json")
  with pytest.raises(CostModelError, match="corrupt"): CostModel.load(p)
  with pytest.raises(CostModelError, match="no cost model"): CostModel.load(tmp_path / "missing.txt")
  # the checksum catches a model file that parses but is not the one the metadata describes
  p = _edited(trained, tmp_path)
  p.write_text(p.read_text().replace("num_leaves=", "num_leaves=1", 1))
  with pytest.raises(CostModelError, match="sha256"): CostModel.load(p)

class _Rows:   # what compile_cost.tradeoff reads of a dataset
  def __init__(self, **kw): self.__dict__.update(kw)
  def __len__(self): return len(self.X)

def test_compile_tradeoff_reports_the_slowest_compile_a_batch_waits_on_and_honours_a_mask():
  from models.compile_cost import tradeoff
  rng = np.random.default_rng(0)
  X = rng.random((30*20, 4)).astype(np.float32)   # FEATURES[0], the column masked below, is column 0
  # 30 kernels of 20 configs: the time follows the first column, the compile seconds (0.2-11 s) the second
  rows = _Rows(X=X, time_s=1e-5*np.exp(2*X[:, 0]), kernel=np.repeat(np.arange(30), 20).astype(str), compile_s=0.2*np.exp(4*X[:, 1]))
  small = dict(n_estimators=30, min_data_in_leaf=5)
  res = tradeoff(rows, small, threads=1, log=lambda *_: None)
  plain, heavy = res["penalties"][0], next(r for r in res["penalties"] if r["cap_s"] == 0.5 and r["weight"] == 2.0)
  assert plain["weight"] == 0.0 and plain["compile_s"]/(30*8) < plain["batch_wait_s"] <= rows.compile_s.max()   # the slowest, not the mean
  assert heavy["batch_wait_s"] < 0.7*plain["batch_wait_s"]   # the penalty picks configs that compile faster
  masked = tradeoff(rows, small, threads=1, log=lambda *_: None, masked=[FEATURES[0]])["penalties"][0]
  assert masked["top1_score"] < plain["top1_score"] - 0.1   # the time's column held at 0: the ranker no longer sees it

def test_compile_model_learns_and_penalizes_slow_compiles(trained, ds, kernels, tmp_path):
  from models.compile_cost import attach, fit, penalty, compile_path
  tr, te = next(kernel_kfold(ds.kernel, 3, 0))
  reg = fit(ds.X[tr], ds.compile_s[tr], threads=1)
  m = np.isfinite(ds.compile_s[te]) & (ds.compile_s[te] > 0)
  y, pred = np.log(ds.compile_s[te][m]), reg.predict_log_time(ds.X[te][m])
  assert np.mean((y - pred)**2) < 0.8*np.var(y)   # held-out kernels: better than predicting the mean
  assert np.array_equal(penalty(np.log([0.1, 1.0, 4.0]), 1.0, 1.0), [0.0, 0.0, 2.0])
  p = _edited(trained, tmp_path)
  attach(p, reg, int(tr.sum()))
  cm = CostModel.load(p)
  i = np.flatnonzero(ds.kernel == ds.kernel[te][0])[:5]   # one held-out kernel's configs: the search's scorer subtracts exactly the penalty of their predicted compile
  ks = schedulers(Kernel.ast_from_blob(kernels[0][ds.kernel[i[0]]]["ast"]), CPU, [opts_from_json(json.loads(ds.opts[j])) for j in i])
  with_pen, without = cm.score_schedulers(ks, compile_penalty=True), cm.score_schedulers(ks, compile_penalty=False)
  logc = reg.predict_log_time(np.stack([featurize(k, cm.props) for k in ks]))
  assert np.allclose(without - with_pen, penalty(logc))
  assert np.allclose(cm.scorer(compile_penalty=True)(ks), with_pen)
  # the penalty the model's metadata records is the one it ranks with: a copy with another is a variant, not the same model
  mj = p.with_suffix(".json"); meta = json.loads(mj.read_text())
  meta["compile_model"]["penalty"] = {"cap_s": 0.05, "weight": 3.0}; mj.write_text(json.dumps(meta))
  strong = CostModel.load(p).score_schedulers(ks, compile_penalty=True)
  assert np.allclose(without - strong, penalty(logc, 0.05, 3.0)) and (without - strong > without - with_pen).any()
  compile_path(p).write_text("garbage")   # a compile model that is not the recorded one
  with pytest.raises(CostModelError, match="sha256"): CostModel.load(p)

@pytest.mark.slow   # fits a ranker and an MLP, then six pools of fresh processes
def test_speed_is_measured_end_to_end_with_the_models_that_ship(ds):
  # the evaluation's featurize+predict rate: held-out kernels' candidates from (AST, opts JSON) to a score; a blend adds its MLP
  from models.speed import measure_speed, speed_kernels
  ks = speed_kernels(ds, 3, 0)[:2]
  n = int(np.isin(ds.kernel, ks).sum())
  for blend in (False, True):
    sp = measure_speed(ds, str(CPU_DATA), ks, 0, 1, max_candidates=n, blend=blend)
    assert sp["models"] == ("ranker + MLP (blend)" if blend else "ranker")
    assert all(sp[m]["candidates"] == n and sp[m]["seconds"] > 0 for m in ("batched", "scratch", "batched_all_cores"))

def test_cli_trains_and_refuses_device_mismatch(cache, tmp_path, capsys):
  out = tmp_path / "m.txt"
  assert train_main([str(CPU_DATA), "--device", "CUDA", "--out", str(out), "--quiet"]) == 2
  assert "--allow-device-mismatch" in capsys.readouterr().err and not out.exists()
  assert train_main([str(CPU_DATA), "--device", "CPU", "--out", str(out), "--folds", "2", "--threads", "2", "--quiet"]) == 0
  m = CostModel.load(out, device="CPU")
  assert m.meta["feature_schema"] == SCHEMA_VERSION and m.meta["dataset"]["hash"] and m.meta["metrics"]["pairwise_acc"] > 0.6
  from dataset.history import History
  assert History.load(tmp_path / "m.history.json", "x86_64").meta["kernels"] > 0   # the search's history, next to the model
  assert train_main([str(tmp_path / "nope.sqlite"), "--quiet"]) == 2

@pytest.mark.slow   # a second CLI training: CI's slow step runs it, the default run stays under 8 minutes on 2 cores
def test_cli_trains_the_shipped_recipe_on_new_data(tmp_path):
  # another model's parameters, no held-out check (its metadata says so)
  m = CostModel.load(default_model_path("CPU", None), device="CPU")
  m.meta["params"]["num_leaves"] = 7; (tmp_path / "p.json").write_text(json.dumps(m.meta))
  out2 = tmp_path / "m2.txt"
  assert train_main([str(CPU_DATA), "--device", "CPU", "--out", str(out2), "--params", str(tmp_path / "p.json"), "--no-check", "--threads", "1", "--quiet"]) == 0
  m2 = CostModel.load(out2, device="CPU")
  assert m2.meta["params"]["num_leaves"] == 7 and m2.meta["metrics"] == {"protocol": "none (--no-check)"}
  # --mask: trained with the opt-sequence columns at 0, so the ranker never splits on them
  out3 = tmp_path / "m3.txt"
  assert train_main([str(CPU_DATA), "--device", "CPU", "--out", str(out3), "--params", str(tmp_path / "p.json"), "--no-check", "--threads", "1", "--quiet", "--mask", "opts"]) == 0
  m3 = CostModel.load(out3, device="CPU")
  used = m3.ranker.booster.feature_importance("split")[:len(FEATURES)]
  assert m3.meta["masked_features"] == FEATURE_GROUPS["opts"] and not any(used[FEATURES.index(f)] for f in FEATURE_GROUPS["opts"]) and used.sum() > 0
  for bad in (["--params", str(tmp_path / "nope.json")], ["--params", str(tmp_path / "p.json"), "--trials", "2"]):
    with pytest.raises(SystemExit): train_main([str(CPU_DATA), "--out", str(tmp_path / "w.txt"), *bad])

def test_a_masked_model_scores_with_its_masked_columns_at_zero(trained, ds, tmp_path):
  for f in trained.parent.glob(trained.stem + ".*"): shutil.copy(f, tmp_path / f.name)
  p, mj = tmp_path / trained.name, tmp_path / (trained.stem + ".json")
  meta = json.loads(mj.read_text())
  mj.write_text(json.dumps({**meta, "masked_features": FEATURE_GROUPS["opts"]}))
  m, plain = CostModel.load(p), CostModel.load(trained)
  X = ds.X[:200].copy(); cols = [FEATURES.index(f) for f in FEATURE_GROUPS["opts"]]
  Y = X.copy(); Y[:, cols] = np.random.default_rng(0).random((len(Y), len(cols)))*10
  Z = X.copy(); Z[:, cols] = 0
  assert np.array_equal(m.score(X), m.score(Y)) and np.array_equal(m.score(X), plain.score(Z))   # the columns count as 0, whatever they hold
  assert not np.array_equal(plain.score(X), plain.score(Y))   # (the plain model does read them)
  mj.write_text(json.dumps({**meta, "masked_features": ["no_such_feature"]}))
  with pytest.raises(CostModelError, match="masked_features"): CostModel.load(p)

@pytest.mark.slow   # two rankers trained: CI's slow step runs it
def test_model_steps_kfold_orders_steps_out_of_fold_with_a_group_masked(cache, capsys):
  from models.steps import main
  assert main([str(CPU_DATA), "--kfold", "2", "--mask", "opts", "--threads", "1"]) == 0
  r = json.loads(capsys.readouterr().out)
  assert r["kfold"] == 2 and r["mask"] == ["opts"] and r["metrics"]["kendall_tau"] > 0.2   # better than chance (0) on held-out kernels
  assert r["steps"] and all(0 <= v["right"] <= 1 and v["pairs"] > 0 and 0 <= v["within_level"] <= 1 for v in r["steps"].values())

@pytest.mark.parametrize("device, arch", [("CPU", None), ("CUDA", "sm_90")])
def test_shipped_models_match_this_schema(device, arch):
  p = default_model_path(device, arch)
  if not p.is_file(): pytest.skip(f"{p} not shipped")
  m = CostModel.load(p, device=device)   # schema, tinygrad version and checksums are checked on load
  assert m.meta["metrics"] and m.ranker.booster.num_feature() == len(FEATURES) + (len(RESOURCE_COLUMNS) if m.resource_model else 0)
  assert (m.resource_model is not None) == (device == "CUDA")   # compile labels (registers, spills) exist for sm_90 only

def test_resource_model_stacks_into_the_cost_model(trained, ds, tmp_path):
  # labels as dataset.resources writes them would come from CUBINs; here a synthetic function of the features, half the rows labelled
  up = ds.X[:, FEATURES.index("upcast_size")]
  regs = np.where(np.arange(len(ds)) % 2 == 0, 16 + 8*(2**up - 1), np.nan)
  frame = np.where(up > 3, 64.0, 0.0)
  rm = ResourceModel(threads=1).fit(ds.X, regs, frame)
  pred = rm.predict(ds.X)
  assert pred.shape == (len(ds), len(RESOURCE_COLUMNS)) and np.corrcoef(pred[:, 0], np.log(16 + 8*(2**up - 1)))[0, 1] > 0.9
  with pytest.raises(ValueError, match="too few"): ResourceModel().fit(ds.X[:10], regs[:10], frame[:10])
  Xa = augment(ds.X, rm)
  p = tmp_path / "m.txt"
  meta = {**json.loads(trained.with_suffix(".json").read_text())}
  CostModel(Ranker(threads=1, **SMALL).fit(Xa, ds.time_s, ds.kernel), meta, resource_model=rm).save(p)
  cm = CostModel.load(p)
  assert cm.resource_model is not None and np.allclose(cm.resource_model.predict(ds.X[:20]), pred[:20])
  assert np.allclose(cm.score(ds.X[:20]), cm.ranker.predict(Xa[:20]))
  p.with_suffix(".resources.json").write_text("{}")   # not the recorded file
  with pytest.raises(CostModelError, match="sha256"): CostModel.load(p)

def test_lightgbm_loads_without_sklearn_and_leaves_it_importable():
  # a fresh interpreter: models.lgb must not import scikit-learn or pandas (compile workers pay every import) and must not leave
  # them blocked for code that needs them later
  import subprocess, sys
  code = ("import sys, models.lgb as m; assert 'sklearn' not in sys.modules and 'pandas' not in sys.modules, sorted(sys.modules); "
          "import numpy as np; b = m.lgb.train({'verbosity': -1, 'objective': 'regression'}, m.lgb.Dataset(np.random.rand(50, 3), np.random.rand(50)), 2); "
          "import sklearn.metrics, pandas; print(b.num_trees())")
  out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1], timeout=120)
  assert out.returncode == 0, out.stderr[-2000:]
  assert out.stdout.strip() == "2"

@pytest.mark.slow   # train-cost-model end to end with the MLP (test_cli_trains_and_refuses_device_mismatch covers the ranker's)
def test_blend_trains_ships_and_scores_without_torch(cache, kernels, tmp_path):
  from models.blend import Blend
  from models.compile_cost import penalty
  out = tmp_path / "b.txt"
  assert train_main([str(CPU_DATA), "--device", "CPU", "--out", str(out), "--folds", "3", "--threads", "1", "--quiet", "--blend", "0.6"]) == 0
  m = CostModel.load(out, device="CPU")
  assert m.meta["model"] == Blend.name and m.blend is not None and m.meta["metrics"]["pairwise_acc"] > 0.6
  w, (sr, sm) = m.meta["blend"]["weight"], m.meta["blend"]["scales"]
  ds = load(CPU_DATA, workers=1)
  X = augment(ds.X[:40], m.resource_model)
  assert w == 0.6 and sr > 0 and sm > 0
  assert np.allclose(m.score(X), w*m.ranker.predict(X)/sr + (1 - w)*m.mlp.predict(X)/sm)   # what search ranks by
  # its compile penalty is the ranker's, converted to the blend's units (one ranker unit is 1/sr)
  k = ds.kernel[np.nanargmax(ds.compile_s)]   # the slowest compile's kernel: its slowest-compiling configs are past the penalty's cap
  i = np.flatnonzero(ds.kernel == k)
  i = i[np.argsort(-np.nan_to_num(ds.compile_s[i]))[:5]]
  ks = schedulers(Kernel.ast_from_blob(kernels[0][k]["ast"]), CPU, [opts_from_json(json.loads(ds.opts[j])) for j in i])
  assert m.compile_model is not None and m.penalty_unit == 1/sr
  pen = penalty(m.compile_model.predict_log_time(np.stack([featurize(s, m.props) for s in ks])))
  assert pen.max() > 0 and np.allclose(m.score_schedulers(ks, compile_penalty=False) - m.score_schedulers(ks, compile_penalty=True), pen/sr)
  # the shipped blend scores with numpy alone: a compile worker that loads it never imports torch
  import subprocess, sys
  code = f"import sys; from models.cost_model import CostModel; CostModel.load({str(out)!r}); assert 'torch' not in sys.modules"
  r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
  assert r.returncode == 0, r.stderr[-2000:]
  out.with_suffix(".mlp.npz").write_bytes(b"not the recorded MLP")
  with pytest.raises(CostModelError, match="sha256"): CostModel.load(out)
  with pytest.raises(SystemExit) as e: train_main([str(CPU_DATA), "--out", str(tmp_path / "w.txt"), "--blend", "2"])   # a weight outside [0, 1]: one line, exit 2
  assert e.value.code == 2 and not (tmp_path / "w.txt").exists()

def test_transfer_scores_another_devices_data_and_caps_what_it_adds(trained, cache, tmp_path, capsys):
  # models.transfer (the corpus issue's H100 questions): the model on another device's data, and the other data's rows added to
  # training capped at a share of the base's, whole kernels only, each half of its kernels held out in turn
  import sqlite3
  from models.transfer import main as transfer_main
  shutil.copy(CPU_DATA, other := tmp_path / "other.sqlite")
  db = sqlite3.connect(other)
  db.execute("UPDATE measurements SET device = 'Other CPU'"); db.execute("UPDATE devices SET device = 'Other CPU'")
  db.execute("DELETE FROM measurements WHERE kernel NOT IN (SELECT key FROM kernels ORDER BY key LIMIT 16)")   # 16 kernels: a quick test
  db.commit(); db.close()
  out = tmp_path / "t"
  assert transfer_main([str(CPU_DATA), str(other), "--model", str(trained), "--max-share", "0.2", "--threads", "1", "--out", str(out)]) == 0
  res = json.loads(out.with_suffix(".json").read_text())
  base_rows = res["base"]["rows"]
  assert res["other"]["device"] == "Other CPU" and len(res["halves"]) == 2
  assert all(0 < h["added_rows"] <= 0.2*base_rows and h["test_kernels"] > 0 for h in res["halves"])
  assert all(-1 <= h[w]["kendall_tau"] <= 1 for h in res["halves"] for w in ("base_only", "with_other"))
  assert "as shipped" in out.with_suffix(".md").read_text() and res["command"].startswith("python -m models.transfer")
  assert transfer_main([str(CPU_DATA), str(other), "--model", str(tmp_path / "nope.txt"), "--out", str(out)]) == 2
  assert "models.transfer: error:" in capsys.readouterr().err

@pytest.mark.slow   # a training run of its own (~13 s on 2 cores)
def test_train_with_another_cards_store_adds_its_kernels_as_groups_of_their_own(ds, cache, tmp_path, capsys):
  # train-cost-model --with: another device of the same arch joins training; a kernel measured on both is two query groups
  import sqlite3
  from models.data import concat
  shutil.copy(CPU_DATA, other := tmp_path / "other.sqlite")
  db = sqlite3.connect(other)
  db.execute("UPDATE measurements SET device = 'Other CPU'"); db.execute("UPDATE devices SET device = 'Other CPU'")
  db.execute("DELETE FROM measurements WHERE kernel NOT IN (SELECT key FROM kernels ORDER BY key LIMIT 8)")
  db.commit(); db.close()
  o = load(other, workers=1)
  both = concat(ds, [o])
  assert len(both) == len(ds) + len(o) and both.device == ds.device and both.props == ds.props
  assert len(np.unique(both.kernel)) == len(np.unique(ds.kernel)) + len(np.unique(o.kernel))   # the same keys, other groups
  assert (both.kernel[len(ds):] == np.char.add(o.kernel, "@Other CPU")).all()
  out = tmp_path / "m.txt"
  assert train_main([str(CPU_DATA), "--with", str(other), "--device", "CPU", "--out", str(out), "--params", str(ROOT / "models" / "cost_model_cpu.json"),
                     "--no-check", "--threads", "1", "--quiet"]) == 0
  m = CostModel.load(out, device="CPU")
  assert m.meta["dataset"]["with"] == [str(other)] and m.meta["dataset"]["rows"] == len(both) and m.meta["device"] == ds.device
  assert train_main([str(CPU_DATA), "--with", str(tmp_path / "nope.sqlite"), "--out", str(tmp_path / "w.txt"), "--quiet"]) == 2
  assert "nope.sqlite" in capsys.readouterr().err and not (tmp_path / "w.txt").exists()

def test_a_column_constant_in_training_does_not_move_the_mlps_scores():
  # a Llama block's fused gate/up GEMM has rel_loads_n 1 where every training row had 0: scaled by the std floor, it scored
  # -8,562 against 2-5 for every other kernel's configs, and the blend ranked its first batch by that one column
  from models.mlp import MLPRanker
  rng = np.random.default_rng(0)
  X = rng.normal(size=(60, 5)).astype(np.float32); X[:, 2] = 0.0   # column 2 is constant in training
  t, kernel = np.exp(X[:, 0] - X[:, 1]).astype(np.float64), np.repeat(np.arange(6), 10)
  m = MLPRanker(epochs=2, hidden=8, layers=2).fit(X, t, kernel)
  off = X.copy(); off[:, 2] = 1.0
  np_m = m.numpy_forward()
  assert np.allclose(m.predict(off), m.predict(X)) and np.allclose(np_m.predict(off), np_m.predict(X))
  assert np.allclose(np_m.predict(X), m.predict(X), atol=1e-5) and not np.allclose(m.predict(X[::-1]), m.predict(X))
  moved = X.copy(); moved[:, 0] += 1.0   # a column that varied in training still counts
  assert not np.allclose(np_m.predict(moved), np_m.predict(X))
