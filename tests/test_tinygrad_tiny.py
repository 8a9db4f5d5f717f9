"""tinygrad's own tests with kerntune switched on (issue 33): test/test_tiny.py of tinygrad's source distribution passes as it does
without kerntune, with drop-in tuning (KERNTUNE=1) and with cache replay (KERNTUNE_TUNED=1) (slow: downloads the sdist, 3-4 min on
2 cores). The kernels of test_tiny that drop-in tuning failed on before are searched here too (fast)."""
import os, re, subprocess, sys, tarfile
from pathlib import Path
import pytest
from tinygrad import Tensor, dtypes
from dataset.device import device_info, renderer_for
from dataset.kernel import Kernel, kernel_asts, scheduler

ROOT = Path(__file__).resolve().parents[1]
TINYGRAD = "0.14.0"

def _search(t:Tensor):
  from search.api import load_model, search_kernels
  from search.measure import Budget
  name, arch, props = device_info("CPU")
  scorer = load_model(None, "CPU", name, arch, False)[0].scorer(props)
  ks = [Kernel(a.key.hex(), a, f"k{i}", "t", "t") for i, a in enumerate(kernel_asts(t))]
  found = search_kernels(ks, "CPU", "beam", Budget(2, 60), scorer, 0, 0)
  for _, m in found: m.close()
  return [o for o, _ in found]

def test_an_fp16_kernel_storing_a_constant_is_searched():
  # test_hgemm's Tensor.ones(half): no low-precision value on the way to the output, whose float32 witness (check.widen) is a
  # constant; it was built with UOp.const's arguments swapped, and the Measurer failed
  assert (found := _search(Tensor.ones(16, dtype=dtypes.half).contiguous())) and all(o.verified for o in found)

def test_a_kernel_without_loops_is_searched():
  # test_const's Tensor(2.0).item(): one config, nothing to fit the beam's correction on, so nothing to score (the cost model's
  # features of a kernel without loops: test_features_of_a_kernel_without_loops)
  assert (found := _search(Tensor.full((1,), 2.0).contiguous())) and all(o.verified for o in found)

def test_features_of_a_kernel_without_loops():
  from search.api import load_model
  name, arch, props = device_info("CPU")
  scorer = load_model(None, "CPU", name, arch, False)[0].scorer(props)
  assert len(scorer([scheduler(kernel_asts(Tensor.full((1,), 2.0).contiguous())[0], renderer_for("CPU"))])) == 1

def _test_tiny(tmp:Path) -> Path:
  """test_tiny.py of tinygrad's sdist: KERNTUNE_TINYGRAD_SRC (an unpacked sdist), else downloaded (skipped without one)."""
  if src := os.environ.get("KERNTUNE_TINYGRAD_SRC"): return Path(src) / "test" / "test_tiny.py"
  r = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", f"tinygrad=={TINYGRAD}", "-d", str(tmp)],
                     capture_output=True, text=True, timeout=600)
  if r.returncode != 0 or not (sd := list(tmp.glob(f"tinygrad-{TINYGRAD}.tar.gz"))):
    pytest.skip(f"no tinygrad {TINYGRAD} source distribution: {(r.stderr.strip().splitlines() or ['?'])[-1]}")
  with tarfile.open(sd[0]) as t: t.extract(name := f"tinygrad-{TINYGRAD}/test/test_tiny.py", tmp, filter="data")
  return tmp / name

def _run(test:Path, cwd:Path, **env) -> tuple[int, str, str]:
  # from a directory of its own: the installed tinygrad is imported, not a source tree; search.cache reads KERNTUNE* at import
  code = ("import search.cache, pytest, sys\nrc = pytest.main(['-q', '-p', 'no:cacheprovider', sys.argv[1]])\n"
          "print('replayed', search.cache.stats()['tuned']); sys.exit(rc)")
  e = {k: v for k, v in os.environ.items() if not k.startswith("KERNTUNE")} | {"PYTHONPATH": str(ROOT)} | env
  r = subprocess.run([sys.executable, "-c", code, str(test)], cwd=cwd, env=e, capture_output=True, text=True, timeout=1200)
  counts = " ".join(re.findall(r"\d+ (?:passed|failed|skipped|error)", r.stdout))
  return r.returncode, counts, r.stdout + r.stderr

@pytest.mark.slow
def test_tinygrad_test_tiny_passes_with_kerntune_on(tmp_path):
  test = _test_tiny(tmp_path)
  (run := tmp_path / "run").mkdir()
  cache = tmp_path / "tuned.json"
  rc, plain, out = _run(test, run)
  assert rc == 0 and "passed" in plain, out[-3000:]
  rc, tuning, out = _run(test, run, KERNTUNE="1", KERNTUNE_BUDGET="2", KERNTUNE_CACHE=str(cache))
  assert rc == 0 and tuning == plain, out[-3000:]
  tuned = re.search(r"kerntune: (\d+) kernel\(s\) tuned", out)
  assert tuned and int(tuned.group(1)) > 0 and not re.search(r"^  kernel \d+: failed", out, re.M), out[-3000:]   # every search ended
  rc, replay, out = _run(test, run, KERNTUNE_TUNED="1", KERNTUNE_CACHE=str(cache))
  assert rc == 0 and replay == plain and int(re.search(r"replayed (\d+)", out).group(1)) > 0, out[-3000:]
