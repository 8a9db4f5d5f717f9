#!/usr/bin/env bash
# One GPU-host call (device tool): resume the Hopper dataset for BUDGET seconds. Everything it writes lands in $OUT;
# copy $OUT/cuda.sqlite back to dataset/data/cuda.sqlite and commit it before the next call.
#   usage: bash scripts/gpu_generate.sh BUDGET_S SAMPLES_PER_KERNEL
set -u
BUDGET=${1:-440}; SPK=${2:-70}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/tinygrad-*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee $OUT/gpu.txt
nproc | tee -a $OUT/gpu.txt
cp dataset/data/cuda.sqlite $OUT/cuda.sqlite
count() { python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"select count(*) from measurements where status='ok'\").fetchone()[0])" $OUT/cuda.sqlite; }
before=$(count)
if [ "$before" -eq 0 ]; then
  # fail fast on a new store: a short run on one kernel family must produce ok measurements before the long run starts
  python3 -m dataset.generate --device CUDA --kernels gemm --samples-per-kernel 6 --time-budget 60 --out $OUT/cuda.sqlite --no-progress 2>&1 | tee $OUT/smoke.log
  after=$(count); echo "smoke: ok $before -> $after"
  [ "$after" -gt "$before" ] || { echo "smoke run produced no ok measurement: stopping"; exit 1; }
fi
python3 -m dataset.generate --device CUDA --kernels all --samples-per-kernel $SPK --time-budget $BUDGET --out $OUT/cuda.sqlite --no-progress 2>&1 | tee $OUT/generate.log
echo "ok measurements: $(count)"
