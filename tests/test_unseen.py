"""The unseen benchmark (dataset/unseen.py; scripts/bench_unseen.py measures it) is frozen and held out: its list never changes, and
none of its kernels is in the shipped stores, their shards or the histories (so in no training data, offline search or history a
search starts from)."""
import gzip, json, shutil, sqlite3
from pathlib import Path
import pytest
from dataset import unseen as bench_unseen
ROOT = Path(__file__).resolve().parents[1]

def test_benchmark_is_frozen():
  specs = bench_unseen.kernel_specs()
  assert bench_unseen.fingerprint(specs) == "67959cf1dd66e266"   # changing the benchmark needs a new seed and a new name
  assert len(specs) >= 40 and len(set(specs)) == len(specs)
  assert len(bench_unseen.NETWORKS) >= 6

@pytest.mark.parametrize("device", ["CUDA", "CPU"])
def test_no_benchmark_kernel_in_stores_or_histories(device, tmp_path):
  keys = bench_unseen.benchmark_keys(device)
  assert len(keys) >= 40
  shipped: set[str] = set()
  stores = list((ROOT / "dataset" / "data").glob("*.sqlite"))
  for i, shard in enumerate((ROOT / "dataset" / "data" / "shards").glob("*.sqlite.gz")):   # the per-run shards load with the stores
    with gzip.open(shard) as f, open(tmp := tmp_path / f"shard{i}.sqlite", "wb") as g: shutil.copyfileobj(f, g)
    stores.append(tmp)
  assert len(stores) > 2
  for store in stores:
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    shipped |= {r[0] for r in db.execute("SELECT key FROM kernels")}
    db.close()
  for hist in (ROOT / "models").glob("history_*.json"):
    shipped |= {e[2] for rows in json.loads(hist.read_text())["nests"].values() for e in rows}
  assert len(shipped) > 800   # the stores and histories were read
  assert not (hit := set(keys) & shipped), f"benchmark kernels in the training data: {[keys[k] for k in hit]}"
