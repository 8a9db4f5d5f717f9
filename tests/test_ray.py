"""generate-dataset --ray on the CPU, with a local Ray cluster of 2 CPUs: the same store as a local run, and crash safety: a worker
killed mid-run is started again on its shard, a driver killed mid-run leaves shards that the next run merges; nothing is lost or
duplicated. The merge rules themselves (dataset.store) need no Ray."""
import json, os, signal, sqlite3, subprocess, sys, time
from pathlib import Path
import pytest
from dataset.kernel import Kernel
from dataset.store import MEASURE_COLS, Store

ROOT = Path(__file__).resolve().parents[1]
KERNELS, N = "softmax:rows=64:cols=128:fp32,gemm:m=32:k=32:n=32:fp32", 10   # 4 kernels

def test_merge_keeps_finished_rows_and_replaces_only_pending(tmp_path):
  a, b = Store(tmp_path / "a.sqlite"), Store(tmp_path / "b.sqlite")
  for s in (a, b): s.db.execute("INSERT INTO kernels (key, device, name, variant) VALUES ('k', 'CPU', 'v#0', 'v')")
  meta = dict(kernel="k", device="dev", arch="x", tinygrad="0.14.0", source="random")
  a.record(opts=[1], status="ok", time_s=1.0, **meta)
  pend = a.begin(opts=[2], **meta)
  b.record(opts=[1], status="ok", time_s=9.0, **meta); b.record(opts=[2], status="ok", time_s=2.0, **meta)
  b.begin(opts=[3], **meta)
  assert a.low_mark() == pend - 1 and b.low_mark() == 2   # rows above may still finish
  rows, low = b.rows_after(0)
  assert [r[1] for r in rows] == ["[1]", "[2]"] and low == 2 and b.rows_after(0, limit=1)[1] == 1
  assert a.merge_rows(rows) == ["ok"] and a.merge_rows(rows) == []   # [2] finishes a's pending row; [1] is kept as a had it
  got = dict(a.db.execute("SELECT opts, time_s FROM measurements").fetchall())
  assert got == {"[1]": 1.0, "[2]": 2.0}
  a.begin(opts=[4], **meta); b.close()
  assert a.merge(tmp_path / "b.sqlite") == 0 and a.count("pending") == 1            # b's pending row is not merged without pending=True
  assert a.merge(tmp_path / "b.sqlite", pending=True) == 0 and a.count("pending") == 2
  c = Store(tmp_path / "c.sqlite")
  assert c.merge(tmp_path / "b.sqlite", since=time.time() + 60) == 0 and not c.kernel_keys()   # nothing new since then
  assert c.merge(tmp_path / "b.sqlite", kernels={"k"}) == 2 and c.kernel_keys() == {"k"}
  assert len(MEASURE_COLS) == len(rows[0])

def _rows(path) -> set[tuple]:
  db = sqlite3.connect(path)
  try: return set(db.execute("SELECT kernel, opts, status, time_s FROM measurements WHERE status != 'pending'").fetchall())
  except sqlite3.Error: return set()
  finally: db.close()

def _check(path, n:int=N):
  """Every kernel measured to its target, no row twice, none pending, the device recorded and every kernel's flops set."""
  db = sqlite3.connect(path)
  try:
    per_kernel = dict(db.execute("SELECT kernel, COUNT(*) FROM measurements WHERE status != 'pending' GROUP BY kernel").fetchall())
    assert db.execute("SELECT COUNT(*) FROM measurements").fetchone()[0] == sum(per_kernel.values())   # no pending row
    assert len(db.execute("SELECT DISTINCT kernel, opts, device FROM measurements").fetchall()) == sum(per_kernel.values())
    assert len(per_kernel) == db.execute("SELECT COUNT(*) FROM kernels").fetchone()[0] == 4 and min(per_kernel.values()) >= n
    assert db.execute("SELECT COUNT(*) FROM devices").fetchone()[0] == 1
    assert db.execute("SELECT COUNT(*) FROM kernels WHERE flops IS NULL").fetchone()[0] == 0
    return per_kernel
  finally: db.close()

@pytest.fixture(scope="module")
def cluster():
  ray = pytest.importorskip("ray")
  ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
  try: yield ray, ray.get_runtime_context().gcs_address
  finally: ray.shutdown()

def _gen(out, *args, ray:str|None=None, **kw):
  extra = ["--ray", ray, "--ray-workers", "2"] if ray else []
  return subprocess.Popen([sys.executable, "-m", "dataset.generate", "--device", "CPU", "--out", str(out), "--no-progress", "--workers", "1",
                           "--kernels", KERNELS, *extra, *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)

def _wait_rows(paths, n:int, p, timeout:float=180):
  deadline = time.time() + timeout
  while sum(len(_rows(f)) for f in paths()) < n:
    assert time.time() < deadline and p.poll() is None, "the run did not get that far"
    time.sleep(0.3)

@pytest.mark.slow   # a local run and a 2-worker Ray run of the generator side by side (30 s on 2 cores)
def test_ray_run_fills_the_store_as_a_local_run_does(tmp_path, cluster, capsys):
  ray, address = cluster
  loc, out = _gen(tmp_path / "local.sqlite", "--samples-per-kernel", "6"), _gen(tmp_path / "ray.sqlite", "--samples-per-kernel", "6", ray=address)
  assert loc.wait(timeout=300) == 0, loc.stdout.read()
  log = out.stdout.read()
  assert out.wait(timeout=300) == 0, log
  summary = json.loads(next(l for l in log.splitlines() if l.startswith('{"summary"')))["summary"]
  assert summary["ray_workers"] == 2 and len(summary["per_worker"]) == 2 and summary["restarts"] == 0
  assert _check(tmp_path / "local.sqlite", 6).keys() == _check(tmp_path / "ray.sqlite", 6).keys()
  # the same kernels (every column; each AST by its key: the driver extracts in worker processes, whose pickles may differ in bytes),
  # variants, device and flops
  ast_key = lambda r: (*r[:-1], Kernel.ast_from_blob(r[-1]).key.hex())
  tables = lambda p: {t: [ast_key(r) if t == "kernels" else r for r in sqlite3.connect(p).execute(f"SELECT * FROM {t} ORDER BY 1")]
                      for t in ("kernels", "variants", "devices")}
  assert tables(tmp_path / "local.sqlite") == tables(tmp_path / "ray.sqlite")
  assert summary["ok"] == sqlite3.connect(tmp_path / "ray.sqlite").execute("SELECT COUNT(*) FROM measurements WHERE status='ok'").fetchone()[0]
  assert not (tmp_path / "ray.ray").exists()   # the merged shards are gone
  # in this process, on its Ray connection: a second run finds nothing to do; bad input is one line, exit 2, before any work
  from dataset.generate import main
  args = ["--device", "CPU", "--kernels", KERNELS, "--out", str(tmp_path / "ray.sqlite"), "--samples-per-kernel", "6", "--no-progress", "--ray", address]
  assert main(args) == 0 and '"ok": 0' in capsys.readouterr().out
  for extra, msg in [(["--ray-workers", "3"], "the Ray cluster has 2"), (["--only-kernels", "nope#0"], "no such kernel"),
                     (["--device", "CUDA"], "need as many GPUs"), (["--model", str(tmp_path / "nope.txt")], "run generate-dataset")]:
    assert main(args + extra) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("generate-dataset: error:") and msg in err[0], err
  with pytest.raises(SystemExit): main(["--ray-workers", "2"])
  assert "--ray-workers takes --ray" in capsys.readouterr().err

def test_bad_kernels_are_refused_before_a_cluster_starts(tmp_path, capsys, monkeypatch):
  import types
  from dataset.generate import main
  class NoRay(types.ModuleType):   # Ray, had the run reached it: any use fails the run
    def __getattr__(self, name): raise AssertionError(f"ray.{name} used before the kernels were checked")
  monkeypatch.setitem(sys.modules, "ray", NoRay("ray"))
  for kernels, msg in [("nosuch", "unknown kernel 'nosuch'"), ("conv2d:n=0:fp32", "")]:
    assert main(["--kernels", kernels, "--out", str(tmp_path / "r.sqlite"), "--ray", "local", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("generate-dataset: error:") and msg in err[0], err

@pytest.mark.slow   # two runs of the generator on 2 Ray workers, one killed mid-run
def test_killed_worker_is_restarted_and_a_rerun_adds_nothing(tmp_path, cluster):
  ray, address = cluster
  out = tmp_path / "k.sqlite"
  p = _gen(out, "--samples-per-kernel", str(N), ray=address)
  _wait_rows(lambda: [out, *(tmp_path / "k.ray").glob("*.sqlite")], 6, p)
  names = [a["name"] for a in ray.util.list_named_actors(all_namespaces=True) if a["name"].startswith(f"generate:{out.resolve()}")]
  assert names, "no worker found"
  ray.kill(ray.get_actor(sorted(names)[0], namespace="kerntune"))
  before = _rows(out) | {r for f in (tmp_path / "k.ray").glob("*.sqlite") for r in _rows(f)}
  log = p.stdout.read()
  assert p.wait(timeout=300) == 0, log
  assert "died" in log and json.loads(next(l for l in log.splitlines() if l.startswith('{"summary"')))["summary"]["restarts"] >= 1
  after = _rows(out)
  assert before <= after   # nothing its shard held is lost
  per_kernel = _check(out)
  again = _gen(out, "--samples-per-kernel", str(N), ray=address)
  assert again.wait(timeout=120) == 0 and _rows(out) == after and _check(out) == per_kernel   # nothing added, nothing twice

@pytest.mark.slow   # a run whose driver is killed, then the rerun that merges its shards and finishes
def test_killed_driver_leaves_shards_that_the_rerun_merges(tmp_path, cluster):
  ray, address = cluster
  out, run_dir = tmp_path / "d.sqlite", tmp_path / "d.ray"
  p = _gen(out, "--samples-per-kernel", str(N), ray=address)
  _wait_rows(lambda: list(run_dir.glob("*.sqlite")), 8, p)
  os.kill(p.pid, signal.SIGKILL); p.wait()   # the job ends: Ray kills its workers, and their generators die with them
  before = _rows(out) | {r for f in run_dir.glob("*.sqlite") for r in _rows(f)}
  assert len(before) >= 8 and len(_rows(out)) < len(before) + 4*N
  p = _gen(out, "--samples-per-kernel", str(N), ray=address)
  log = p.stdout.read()
  assert p.wait(timeout=300) == 0, log
  assert "left by an earlier run" in log and not run_dir.exists()
  assert before <= _rows(out)
  _check(out)

def test_scaling_report_says_what_the_runs_measured():
  # scripts/gpu_ray.sh's table: the scaling job's runs each on a third of the kernels; a FULL=1 run on every kernel selected
  from dataset.ray_generate import report
  run = lambda name, gpus, ok: {"name": name, "gpus": gpus, "ok": ok, "ok_per_s": ok/100}
  res = {"device": "GPU", "date": "2026-01-01", "command": "c", "seconds": 100.0, "merge": {"before": 0, "delta": 9, "after": 9, "ok": True}}
  three = report({**res, "runs": [run("local_1", 1, 300), run("ray_1", 1, 200), run("ray_N", 2, 400)], "ratios": {"ray_N / ray_1 (ok/s)": 2.0}})
  assert "own third of the kernels" in three and "| ray_N | 2 | 400 | 4.00 | 2.00 |" in three and "- ray_N / ray_1 (ok/s): 2.000" in three
  full = report({**res, "runs": [run("ray_N", 4, 800)], "ratios": {}})
  assert "own third" not in full and "every kernel selected" in full and "| ray_N | 4 | 800 | 8.00 | 2.00 |" in full
