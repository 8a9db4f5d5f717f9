"""The unseen benchmark (scripts/bench_unseen.py) is frozen and held out: its list never changes, and none of its kernels is in the
shipped measurement stores or histories (so in no training data, offline search or history a search starts from)."""
import json, sqlite3, sys
from pathlib import Path
import pytest
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import bench_unseen

def test_benchmark_is_frozen():
  specs = bench_unseen.kernel_specs()
  assert bench_unseen.fingerprint(specs) == "67959cf1dd66e266"   # changing the benchmark needs a new seed and a new name
  assert len(specs) >= 40 and len(set(specs)) == len(specs)
  assert len(bench_unseen.NETWORKS) >= 6

@pytest.mark.parametrize("device", ["CUDA", "CPU"])
def test_no_benchmark_kernel_in_stores_or_histories(device):
  keys = bench_unseen.benchmark_keys(device)
  assert len(keys) >= 40
  shipped: set[str] = set()
  for store in (ROOT / "dataset" / "data").glob("*.sqlite"):
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    shipped |= {r[0] for r in db.execute("SELECT key FROM kernels")}
    db.close()
  for hist in (ROOT / "models").glob("history_*.json"):
    shipped |= {e[2] for rows in json.loads(hist.read_text())["nests"].values() for e in rows}
  assert len(shipped) > 800   # the stores and histories were read
  assert not (hit := set(keys) & shipped), f"benchmark kernels in the training data: {[keys[k] for k in hit]}"
