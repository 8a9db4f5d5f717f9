#!/usr/bin/env bash
# One GPU-host call (device tool; wheels: ../shared/gpu-host/wheels.sh, ray-wheel.sh, then --shrink; below): the
# throughput per GPU of generate-dataset's Ray path against its local path, and the new rows for the store. Each run measures for
# SECONDS (--time-budget) on its own third of the store's kernels (disjoint, every family dealt evenly), resuming a copy of the store:
#   local_1: the local path on one GPU; ray_1: --ray with one worker on one GPU; ray_N: --ray with a worker on each of the N GPUs.
# With N >= 2, local_1 and ray_1 run side by side (a GPU and its share of the cores each), then ray_N: both phases load the host
# alike. On one GPU: local_1, then ray_1. Everything comes back as one archive, $OUT/ray.tgz: ray_scaling.json and .md (the table:
# python -m dataset.ray_generate --report ray_scaling.json), ray_new.sqlite.gz (every run's new rows: a shard, dataset.shard export),
# gpu.txt and the logs. Then, here, the new rows become a shard of the dataset, committed once (the job checks that merging them
# into a copy of the store loses and duplicates nothing):
#   python -m dataset.shard export <files_at>/ray_new.sqlite.gz --out dataset/data/shards/h200_<date>_ray.sqlite.gz
#   usage: bash scripts/gpu_ray.sh [SECONDS=180] [SAMPLES_PER_KERNEL=200] [GENERATE_ARGS...]
# STORE (.gz or .xz read too) is the store the runs resume; by default dataset/data/cuda.sqlite as readers load it, with its shards
# (python -m dataset.shard loaded), so that no run measures again what a shard holds. The carried tree is capped at 64
# MiB: Ray's wheel shrunk (--shrink, below), only the wheels this job needs in a folder of their own (WHEELS), the store xz'd:
#   mkdir -p out/whl_ray && cp .whl/tinygrad-* .whl/ray-* .whl/jsonschema* .whl/referencing-* .whl/rpds_py-* out/whl_ray/
#   xz -T2 < $(python -m dataset.shard loaded dataset/data/cuda.sqlite) > out/seed.sqlite.xz   # then carry out/whl_ray and out/seed.sqlite.xz:
#   WHEELS=out/whl_ray STORE=out/seed.sqlite.xz bash scripts/gpu_ray.sh 180 200
# FULL=1: no comparison, one run (ray_N) with a worker on each GPU over every kernel --kernels (KERNELS) selects, e.g. the shape
# sampler's tier on a seed of its extracted kernels (generate-dataset --extract-only --kernels sampled): FULL=1 KERNELS=sampled ...
# DEVICE=CPU KERNELS=small (and an nvidia-smi that lists GPUs) make it a smoke run on a machine without one.
set -u
# bash scripts/gpu_ray.sh --shrink .whl/ray-2.60.0-cp312-cp312-manylinux2014_x86_64.whl (here, rewritten in place): the trimmed Ray
# wheel made small enough to carry: its ELF binaries stripped of their symbols (Ray runs the same without them), the dashboard's
# source maps dropped, every member LZMA-compressed (pip reads any zip method Python's zipfile reads). Ray 2.60.0: 42 MB -> 25 MB.
if [ "${1:-}" = --shrink ]; then shift; exec python3 - "$@" <<'PY'
import base64, hashlib, os, subprocess, sys, tempfile, zipfile

def small(path:str):
  tmp = path + ".tmp"
  with zipfile.ZipFile(path) as zi, zipfile.ZipFile(tmp, "w", zipfile.ZIP_LZMA) as zo:
    rec_name = next(n for n in zi.namelist() if n.endswith(".dist-info/RECORD"))
    rows = []
    for i in zi.infolist():
      if i.filename == rec_name or i.filename.endswith(".js.map"): continue
      b = zi.read(i)
      if b[:4] == b"\x7fELF":   # strip a copy: the symbols are most of a binary's size, and nothing at run time reads them
        with tempfile.NamedTemporaryFile(delete=False) as f: f.write(b)
        subprocess.run(["strip", "--strip-unneeded", f.name], check=True)
        b = open(f.name, "rb").read(); os.unlink(f.name)
      info = zipfile.ZipInfo(i.filename, i.date_time)
      info.external_attr, info.compress_type = i.external_attr, zipfile.ZIP_LZMA   # keeps the executables' mode bits
      zo.writestr(info, b)
      rows.append(f"{i.filename},sha256={base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b'=').decode()},{len(b)}")
    zo.writestr(rec_name, "\n".join(rows + [f"{rec_name},,"]) + "\n")
  os.replace(tmp, path)
  print(f"{path}: {os.path.getsize(path)/1e6:.1f} MB")

for p in sys.argv[1:]: small(p)
PY
fi
S=${1:-180}; SPK=${2:-200}; shift $(( $# < 2 ? $# : 2 ))
mkdir -p "$OUT"; T=/tmp/gpu_ray; rm -rf $T; mkdir -p $T
job() {
echo "gpu_ray: $(date -u +%FT%TZ) seconds $S samples-per-kernel $SPK args: $*"
source scripts/gpu_host.sh   # wheels, environment, $OUT/gpu.txt; GPUS (ids), N, W (compile workers per GPU)
IDS=(${GPUS//,/ })
GEN=$(python3 -c "import importlib.util as u; print('models.generate' if u.find_spec('models.generate') else 'dataset.generate')")
timeout 120 python3 -c "import ray; ray.init(include_dashboard=False); print('ray', ray.__version__, ray.cluster_resources()); ray.shutdown()" ||
  { echo "gpu_ray: error: Ray does not start on this host (ray.init(include_dashboard=False) failed above): nothing measured"; exit 1; }
STORE=${STORE:-$(python3 -m dataset.shard loaded dataset/data/cuda.sqlite)}
python3 -c "import gzip, lzma, shutil, sys; p = sys.argv[1]; shutil.copyfileobj({'.gz': gzip.open, '.xz': lzma.open}.get(p[-3:], open)(p, 'rb'),
  open(sys.argv[2], 'wb'))" $STORE $T/base.sqlite || { echo "gpu_ray: error: cannot read the store $STORE"; exit 1; }
# three disjoint thirds of the kernels, each family dealt round-robin in a seeded random order
python3 - $T/base.sqlite $T ${DEVICE:-CUDA} <<'PY' || exit 1
import random, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
by_family = {}
for name, fam in db.execute("SELECT name, family FROM kernels WHERE device=? ORDER BY name", (sys.argv[3],)): by_family.setdefault(fam, []).append(name)
parts, i = [[], [], []], 0
for fam in sorted(by_family):
  names = by_family[fam]; random.Random(fam).shuffle(names)
  for n in names: parts[i % 3].append(n); i += 1
for j, p in enumerate(parts): open(f"{sys.argv[2]}/part{j}.txt", "w").write(",".join(p))
print("gpu_ray: kernels per part", [len(p) for p in parts])
PY
T0=$(date +%s.%N)
one() {   # NAME GPU_IDS PART [--ray ...]: one run on a copy of the store, for S seconds
  local name=$1 ids=$2 part=$3; shift 3
  cp $T/base.sqlite $T/$name.sqlite
  local t=$(date +%s.%N)
  # bounded, so that the merge and export below run inside the device call whatever the run does (its supervisor stops at S + 30)
  CUDA_VISIBLE_DEVICES=$ids timeout -k 10 $((S + 60)) python3 -m $GEN --device ${DEVICE:-CUDA} --kernels ${KERNELS:-all} ${ONLY---only-kernels $(cat $T/part$part.txt)} \
    --samples-per-kernel $SPK --time-budget $S --workers $W --out $T/$name.sqlite --no-progress "$@" > $OUT/$name.log 2>&1
  local rc=$?
  [ $rc -ge 124 ] && { ray stop --force >/dev/null 2>&1; pkill -f -- "-m $GEN " ; sleep 2; }   # cut: its workers go too
  # a driver cut short leaves its Ray workers' shards unmerged: their committed rows are folded in (merging is idempotent)
  ls $T/$name.ray/*.sqlite >/dev/null 2>&1 && python3 -m dataset.shard merge $T/$name.sqlite $T/$name.ray/*.sqlite
  echo "{\"name\": \"$name\", \"gpus\": $(echo $ids | tr , '\n' | wc -l), \"rc\": $rc, \"start\": $t, \"end\": $(date +%s.%N)}" > $T/$name.run.json
  echo "gpu_ray: $name on GPUs $ids exited $rc; $(grep -c . $OUT/$name.log) log lines"; tail -n 2 $OUT/$name.log | cut -c1-300
}
if [ -n "${FULL:-}" ]; then   # a production run: one Ray worker on each GPU, over every kernel of --kernels, no comparison
  ONLY=; one ray_N $GPUS all --ray --ray-workers $N "$@"
elif [ $N -ge 2 ]; then
  one local_1 ${IDS[0]} 0 "$@" & one ray_1 ${IDS[1]} 1 --ray --ray-workers 1 "$@" & wait
  one ray_N $GPUS 2 --ray --ray-workers $N "$@"
else
  one local_1 ${IDS[0]} 0 "$@"; one ray_1 ${IDS[0]} 1 --ray --ray-workers 1 "$@"
fi
# every run's new rows in one store, and the merge of it into a copy of the store checked: nothing lost, nothing twice
RUNS=$(ls $T/*.run.json | sed 's/\.run\.json$/.sqlite/')
python3 -m dataset.shard merge $T/ray_new.sqlite $RUNS --since $T0
cp $T/base.sqlite $T/check.sqlite && python3 -m dataset.shard merge $T/check.sqlite $T/ray_new.sqlite
python3 - "$T" "$T0" "$S" "$N" "gpu_ray.sh $S $SPK $*" "$OUT/ray_scaling.json" <<'PY'
import json, sqlite3, sys, time, subprocess
from pathlib import Path
T, t0, secs, n, command, out = Path(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
q = lambda p, sql, *a: sqlite3.connect(p).execute(sql, a).fetchall()
new = lambda p: set(q(p, "SELECT kernel, opts, device FROM measurements WHERE status != 'pending' AND ts >= ?", t0))
runs = []
for f in sorted(T.glob("*.run.json")):
  r = json.loads(f.read_text()); db = T / f"{r['name']}.sqlite"
  ok = q(db, "SELECT COUNT(*) FROM measurements WHERE status='ok' AND ts >= ?", r["start"])[0][0]
  log = (Path(out).parent / f"{r['name']}.log").read_text(errors="replace").splitlines()
  summary = next((json.loads(l)["summary"] for l in reversed(log) if l.startswith('{"summary"')), None)
  runs.append({**r, "ok": ok, "ok_per_s": ok/secs, "wall_s": round(r["end"] - r["start"], 1), "new_rows": len(new(db)),
               "summary_ok": summary and summary.get("ok"), "restarts": summary and summary.get("restarts")})
rate = {r["name"]: r["ok_per_s"]/r["gpus"] for r in runs}
ratios = {"ray_1 / local_1 (ok/s per GPU)": rate["ray_1"]/rate["local_1"]} if rate.get("local_1") else {}
if "ray_N" in rate and rate.get("ray_1"): ratios |= {"ray_N / ray_1 (ok/s)": rate["ray_N"]*n/rate["ray_1"], "ray_N / ray_1 (ok/s per GPU)": rate["ray_N"]/rate["ray_1"]}
count = lambda p: q(p, "SELECT COUNT(*) FROM measurements WHERE status != 'pending'")[0][0]
every = set().union(*(new(T / f"{r['name']}.sqlite") for r in runs))
check = set(q(T / "check.sqlite", "SELECT kernel, opts, device FROM measurements WHERE status != 'pending'"))
before, delta, after = count(T / "base.sqlite"), count(T / "ray_new.sqlite"), count(T / "check.sqlite")
dups = q(T / "check.sqlite", "SELECT COUNT(*) - (SELECT COUNT(*) FROM (SELECT DISTINCT kernel, opts, device FROM measurements)) FROM measurements")[0][0]
merge = {"before": before, "delta": delta, "after": after, "new_rows": len(every), "duplicates": dups,
         "ok": after == before + delta == before + len(every) and every <= check and dups == 0}
gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True).stdout.split("\n")[0]
res = {"device": gpu, "date": time.strftime("%Y-%m-%d", time.gmtime(t0)), "command": command, "gpus": n, "seconds": secs,
       "runs": runs, "ratios": ratios, "merge": merge}
Path(out).write_text(json.dumps(res, indent=1))
print(json.dumps({k: res[k] for k in ("runs", "ratios", "merge")}, indent=1))
PY
python3 -m dataset.ray_generate --report $OUT/ray_scaling.json | tee $OUT/ray_scaling.md
python3 -m dataset.shard export $T/ray_new.sqlite --out $OUT/ray_new.sqlite.gz
}
job "$@" 2>&1 | tee -a $OUT/ray.log   # the job's lines reach the log as they come (PYTHONUNBUFFERED: gpu_host.sh)
# the host returns 8 files at most: everything goes back in one archive, whatever happened
P=$(mktemp /tmp/ray_out.XXXX.tgz) && tar czf $P -C $OUT . && rm -rf $OUT/* && mv $P $OUT/ray.tgz
