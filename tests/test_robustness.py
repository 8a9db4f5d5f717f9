"""Robustness: data files that only load as kernel ASTs, compile workers that die with their parent (a forked child starts its
own), output paths checked before the work, declared dependencies, cost-model load errors that name the given file, a tuned-kernel
cache safe for concurrent writers."""
import ast, importlib.metadata, json, os, pickle, re, signal, sqlite3, subprocess, sys, time, tomllib, warnings, zlib
from pathlib import Path
import pytest
from tinygrad import Tensor
from dataset.kernel import ASTError, Kernel, kernel_asts
from dataset.store import Store

ROOT = Path(__file__).resolve().parents[1]

class _Touch:   # what a malicious data file would hold: unpickling it runs os.system
  def __init__(self, path:Path): self.path = path
  def __reduce__(self): return (os.system, (f"touch {self.path}",))

def _poisoned(marker:Path) -> bytes: return zlib.compress(pickle.dumps(_Touch(marker)))

def test_every_stored_ast_loads_and_a_malicious_pickle_is_refused(tmp_path):
  for name in ("cpu", "cuda"):
    db = sqlite3.connect(f"file:{ROOT / 'dataset/data' / name}.sqlite?mode=ro", uri=True)
    rows = db.execute("SELECT key, ast FROM kernels").fetchall()
    assert rows and all(Kernel.ast_from_blob(b).key.hex() == k for k, b in rows), name
  with pytest.raises(ASTError, match=r"names (posix|os)\.system, which no tinygrad AST is made of"):
    Kernel.ast_from_blob(_poisoned(marker := tmp_path / "pwned"))
  assert not marker.exists()
  with pytest.raises(ASTError, match="corrupt"): Kernel.ast_from_blob(b"not zlib")

def test_a_poisoned_shard_is_refused_by_merge(tmp_path, capsys):
  from dataset import shard
  ks = [Kernel(a.key.hex(), a, f"v#{i}", "test", "test") for i, a in enumerate(kernel_asts(Tensor.empty(8, 16).softmax(-1)))]
  for name in ("good", "bad"):
    s = Store(tmp_path / f"{name}.sqlite"); s.add_variant("v", "CPU", ks, [(None, None)]*len(ks)); s.close()
  db = sqlite3.connect(tmp_path / "bad.sqlite")
  with db: db.execute("UPDATE kernels SET ast=? WHERE key=?", (_poisoned(marker := tmp_path / "pwned"), ks[0].key))
  db.close()
  assert shard.main(["merge", str(dst := tmp_path / "dst.sqlite"), str(tmp_path / "good.sqlite"), str(tmp_path / "bad.sqlite")]) == 2
  err = capsys.readouterr().err.strip().splitlines()
  assert len(err) == 1 and "bad.sqlite" in err[0] and ks[0].key in err[0] and re.search(r"(posix|os)\.system", err[0]), err
  assert not marker.exists() and not dst.exists()   # nothing of any shard was merged
  assert shard.main(["merge", str(dst), str(tmp_path / "good.sqlite")]) == 0

_HOLD = """
import os, time
from pathlib import Path
def hold(d): Path(d, str(os.getpid())).touch(); time.sleep(120)
"""
_POOL = """
import sys, time
from holdmod import hold   # by module: compile workers start without the program's __main__ (dataset.compile._Worker)
if __name__ == "__main__":
  from dataset.compile import make_pool
  from dataset.device import renderer_for
  pool = make_pool(2, renderer_for("CPU"), [])
  for _ in range(2): pool.submit(hold, sys.argv[1])
  time.sleep(120)
"""

def _children(pid:int) -> set[int]:
  out = set()
  for p in Path("/proc").iterdir():
    try:
      if p.name.isdigit() and int((p / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid: out.add(int(p.name))
    except (OSError, IndexError): pass
  return out

def _alive(pid:int) -> bool:
  try: return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"   # a zombie has exited
  except OSError: return False

def test_compile_workers_die_with_their_parent(tmp_path):
  (script := tmp_path / "pool.py").write_text(_POOL)
  (tmp_path / "holdmod.py").write_text(_HOLD)
  p = subprocess.Popen([sys.executable, str(script), str(tmp_path)], cwd=ROOT, env={**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path}"})
  try:
    deadline = time.time() + 60
    while len(list(tmp_path.glob("[0-9]*"))) < 2:   # both workers initialized and busy
      assert time.time() < deadline and p.poll() is None, "the pool did not start"
      time.sleep(0.2)
    kids = _children(p.pid)   # the workers and multiprocessing's resource_tracker
    assert {int(f.name) for f in tmp_path.glob("[0-9]*")} <= kids
  finally: p.kill(); p.wait()
  deadline = time.time() + 10
  while (left := {k for k in kids if _alive(k)}) and time.time() < deadline: time.sleep(0.2)
  for k in left: os.kill(k, signal.SIGKILL)
  assert not left, f"still running 10 s after their parent was killed: {left}"

def _one_line_error(capsys, *want:str):
  err = capsys.readouterr().err.strip().splitlines()
  assert len(err) == 1 and "error:" in err[0] and all(w in err[0] for w in want), err

@pytest.mark.parametrize("cli,args", [
  ("models.train", ["dataset/data/cpu.sqlite", "--out", "/proc/nope/cm.txt"]),
  ("models.train", ["dataset/data/cpu.sqlite", "--evaluate", "--out", "{tmp}/cm.txt", "--results", "/proc/nope"]),
  ("search.tune_model", ["{tmp}/model.onnx", "--device", "CPU", "--out", "/proc/nope"]),
  ("search.tune_model", ["{tmp}/model.onnx", "--device", "CPU", "--out", "{tmp}", "--cache", "/proc/nope/tuned.json"]),
  ("dataset.stats", ["dataset/data/cpu.sqlite", "--parquet", "/proc/nope/x.parquet"]),
  ("models.compile_cost", ["dataset/data/cpu.sqlite", "models/cost_model_cpu.txt", "--tradeoff", "--out", "/proc/nope/t.json"]),
  ("dataset.generate", ["--device", "CPU", "--kernels", "softmax", "--extract-only", "--out", "/proc/nope/d.sqlite"]),
  ("search.cli", ["--kernel", "softmax", "--device", "CPU", "--strategy", "random", "--out", "/proc/nope/s"]),
])
def test_unwritable_outputs_fail_before_the_work(cli, args, tmp_path, capsys, monkeypatch):
  import importlib
  monkeypatch.chdir(ROOT)
  main = importlib.import_module(cli).main
  st = time.perf_counter()
  assert main([a.replace("{tmp}", str(tmp_path)) for a in args]) == 2
  assert time.perf_counter() - st < 10   # no training, tuning or extraction first
  _one_line_error(capsys, "/proc/nope", "cannot write")

@pytest.mark.parametrize("args,want", [(["dataset/data/cpu.sqlite", "/nope/cm.txt"], "no cost model file /nope/cm.txt"),
                                       (["/nope/d.sqlite", "models/cost_model_cpu.txt"], "no dataset at /nope/d.sqlite")])
def test_model_steps_refuses_a_missing_model_or_store_in_one_line(args, want, capsys, monkeypatch):
  from models.steps import main
  monkeypatch.chdir(ROOT)
  assert main(args) == 2
  _one_line_error(capsys, want)

@pytest.mark.parametrize("args", [["dataset/data/cpu.sqlite"], ["dataset/data/cpu.sqlite", "models/cost_model_cpu.txt", "--kfold", "2"],
                                  ["dataset/data/cpu.sqlite", "--kfold", "1"], ["dataset/data/cpu.sqlite", "models/cost_model_cpu.txt", "--mask", "opts"]])
def test_model_steps_wants_a_model_or_a_kfold(args, capsys, monkeypatch):
  from models.steps import main
  monkeypatch.chdir(ROOT)
  with pytest.raises(SystemExit) as e: main(args)
  assert e.value.code == 2 and "models.steps: error:" in capsys.readouterr().err

@pytest.mark.parametrize("cli,args,flag", [
  ("search.cli", ["--kernel", "softmax", "--device", "CPU", "--budget", "-3"], "--budget"),
  ("search.cli", ["--kernel", "softmax", "--device", "CPU", "--time-budget", "0"], "--time-budget"),
  ("search.cli", ["--kernel", "softmax", "--device", "CPU", "--workers", "-1"], "--workers"),
  ("search.tune_model", ["x.onnx", "--time-budget", "nan"], "--time-budget"),
  ("search.tune_model", ["x.onnx", "--runs", "0"], "--runs"),
  ("dataset.generate", ["--kernels", "softmax", "--workers", "-1"], "--workers"),
  ("dataset.generate", ["--kernels", "softmax", "--time-budget", "-5"], "--time-budget"),
  ("dataset.generate", ["--kernels", "softmax", "--samples-per-kernel", "x"], "--samples-per-kernel"),
  ("models.train", ["dataset/data/cpu.sqlite", "--folds", "1"], "--folds"),
])
def test_a_number_out_of_range_is_a_usage_error_before_any_work(cli, args, flag, capsys, monkeypatch):
  # a negative budget searched as if none were given, a negative --workers crashed generate-dataset with a traceback
  import importlib
  monkeypatch.chdir(ROOT)
  with pytest.raises(SystemExit) as e: importlib.import_module(cli).main(args)
  err = capsys.readouterr().err.strip().splitlines()
  assert e.value.code == 2 and f"argument {flag}:" in err[-1] and ("must be" in err[-1] or "not an integer" in err[-1]), err

def test_cannot_write(tmp_path):
  from dataset.paths import cannot_write
  assert cannot_write(tmp_path / "new" / "dir" / "f.txt") is None and (tmp_path / "new" / "dir").is_dir()
  assert cannot_write(tmp_path / "d", is_dir=True) is None and (tmp_path / "d").is_dir() and not list((tmp_path / "d").iterdir())
  assert "is a directory" in cannot_write(tmp_path)
  (f := tmp_path / "f").write_text("")
  assert "not a directory" in cannot_write(f, is_dir=True)
  assert "cannot create the directory /proc/nope" in cannot_write("/proc/nope/x")

def test_every_imported_package_is_declared():
  project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
  build = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]   # search.build_hook runs in the build
  deps = project["dependencies"] + [d for extra in project["optional-dependencies"].values() for d in extra] + build   # ray: kerntune[ray]
  norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()
  declared = {norm(re.split(r"[<>=!~\[ ;]", d, maxsplit=1)[0]) for d in deps}
  dists = importlib.metadata.packages_distributions()
  missing = set()
  for f in [f for d in ("dataset", "models", "search") for f in (ROOT / d).rglob("*.py")]:
    for node in ast.walk(ast.parse(f.read_text())):
      names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
      for top in {n.split(".")[0] for n in names}:
        if top in sys.stdlib_module_names or top in ("dataset", "models", "search"): continue
        if not {norm(d) for d in dists.get(top, [top])} & declared: missing.add(f"{top} ({f.relative_to(ROOT)})")
  assert not missing, f"imported but not in pyproject.toml's dependencies: {sorted(missing)}"

def test_a_bad_cost_model_names_the_given_file(tmp_path, capsys, monkeypatch):
  from search.cli import main
  from models.cost_model import CostModel, CostModelError
  monkeypatch.chdir(tmp_path)
  (garbage := tmp_path / "garbage.sqlite").write_bytes(b"SQLite format 3\x00" + os.urandom(100))
  run = lambda p: main(["--kernel", "softmax", "--device", "CPU", "--model", str(p), "--out", str(tmp_path / "out")])
  assert run(garbage) == 2
  _one_line_error(capsys, f"{garbage} is not a cost model", "garbage.json is missing")
  assert run(missing := tmp_path / "missing.sqlite") == 2
  _one_line_error(capsys, f"no cost model file {missing}: no such file")
  (tmp_path / "m.json").write_text("{}")
  with pytest.raises(CostModelError, match=f"{tmp_path / 'm.json'} is not a cost model: its model file m.txt is missing"): CostModel.load(tmp_path / "m.json")
  (tmp_path / "m.txt").write_text("x")
  with pytest.raises(CostModelError, match=f"{tmp_path / 'm.txt'} is not a cost model: m.json is not a kerntune"): CostModel.load(tmp_path / "m.txt")
  with pytest.raises(CostModelError, match="is a directory"): CostModel.load(tmp_path)

_PUTS = """
import sys, time
from pathlib import Path
from search.cache import TunedCache
c, tag, go = TunedCache(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
while not go.exists(): time.sleep(0.01)
for i in range(50): c.put(f"{tag}{i:02d}", "CPU", [["UPCAST", 0, 4]], time_us=float(i), hand_coded_us=2.0*i, name=f"{tag}{i}")
"""

def test_tuned_cache_concurrent_writers_keep_every_entry(tmp_path):
  path, go = tmp_path / "tuned.json", tmp_path / "go"
  ps = [subprocess.Popen([sys.executable, "-c", _PUTS, str(path), tag, str(go)], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
        for tag in ("a", "b")]
  time.sleep(3); go.touch()   # both imported and waiting: their puts overlap
  assert [p.wait(timeout=60) for p in ps] == [0, 0]
  from search.cache import TunedCache, VERSION
  entries = json.loads(path.read_text())
  assert len(entries) == 100 and all(e["v"] == VERSION and "time_us" in e for e in entries.values())
  assert {k.split("|")[0] for k in TunedCache(path).entries} == {f"{t}{i:02d}" for t in "ab" for i in range(50)}

def test_tuned_cache_reads_the_old_format_and_writes_one(tmp_path):
  from search.cache import TunedCache, VERSION, _key
  path = tmp_path / "tuned.json"
  path.write_text(json.dumps({_key("old", "CPU"): {"opts": [], "time_s": 1e-3, "hand_time_s": 2e-3, "name": "old"}}))   # the search CLI's
  c = TunedCache(path)
  assert c.get("old", "CPU") == {"opts": [], "time_us": 1000.0, "hand_coded_us": 2000.0, "name": "old", "v": VERSION}
  c.put("new", "CPU", [], time_s=5e-6)
  on_disk = json.loads(path.read_text())
  from dataset.check import VERSION as CHECK   # a new entry carries the check's version that verified it, an old one none
  assert on_disk[_key("new", "CPU")] == {"opts": [], "time_us": pytest.approx(5.0), "check": CHECK, "v": VERSION}
  assert on_disk[_key("old", "CPU")]["time_us"] == 1000.0 and "check" not in on_disk[_key("old", "CPU")]
  from search.cache import CacheError
  with pytest.raises(CacheError, match="cannot write tuned-kernel cache /proc/nope/tuned.json"): TunedCache("/proc/nope/tuned.json").put("k", "CPU", [])

def test_a_forked_child_gets_its_own_compile_pool():
  # a tuned program that forks (its own worker processes) must not submit to the parent's pool: those workers would answer the parent
  from search.measure import shared_pool
  p = shared_pool("CPU", 2)
  assert p.submit(int, "3").result(timeout=60) == 3
  r, w = os.pipe()
  with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)   # Python 3.12+: fork() of a process with threads (the pool's manager)
    pid = os.fork()
  if pid == 0:
    try: ok = (q := shared_pool("CPU", 2)) is not p and q.submit(int, "4").result(timeout=60) == 4
    except BaseException: ok = False
    os.write(w, b"1" if ok else b"0"); os._exit(0)
  os.waitpid(pid, 0)
  assert os.read(r, 1) == b"1" and p.submit(int, "5").result(timeout=60) == 5

def test_a_low_precision_entry_an_older_check_verified_is_stale(tmp_path):
  """dataset.check.VERSION 2 bounds a low-precision output's rms: an fp16 entry without it may compute wrong (tune-model and
  drop-in search it again, replay runs the default); a float32 one, a rejected one (tinygrad's own config) and a new one are not."""
  from tinygrad import Tensor, dtypes
  from dataset.kernel import kernel_asts
  from search.cache import TunedCache, _key
  h, f = (kernel_asts(Tensor.empty(8, 8, dtype=dt).exp2())[0] for dt in (dtypes.half, dtypes.float))
  path = tmp_path / "tuned.json"
  c = TunedCache(path)
  for a in (h, f): c.put(a.key.hex(), "CPU", [["UPCAST", 0, 4]])
  assert not c.stale(h, "CPU") and not c.stale(f, "CPU")
  old = {k: {x: v for x, v in e.items() if x != "check"} for k, e in json.loads(path.read_text()).items()}
  path.write_text(json.dumps(old))
  c = TunedCache(path)
  assert c.stale(h, "CPU") and not c.stale(f, "CPU") and not c.stale(h, "CUDA")   # CUDA: no entry
  path.write_text(json.dumps({**old, _key(h.key.hex(), "CPU"): {**old[_key(h.key.hex(), "CPU")], "status": "rejected"}}))
  assert not TunedCache(path).stale(h, "CPU")
  # BEAM=2's picks replayed as the baseline (search.beam_compare): an older one ran at the default, and BEAM=2 looked no faster
  path.write_text(json.dumps({**old, _key(h.key.hex(), "CPU"): {**old[_key(h.key.hex(), "CPU")], "strategy": "tinygrad BEAM=2"}}))
  assert not TunedCache(path).stale(h, "CPU")
