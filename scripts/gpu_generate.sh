#!/usr/bin/env bash
# One GPU-host call (device tool): resume the Hopper dataset for BUDGET seconds. Everything it writes lands in $OUT;
# copy $OUT/cuda.sqlite back to dataset/data/cuda.sqlite and commit it before the next call.
#   usage: bash scripts/gpu_generate.sh BUDGET_S SAMPLES_PER_KERNEL
set -u
BUDGET=${1:-440}; SPK=${2:-70}
source scripts/gpu_host.sh   # wheels, environment, $OUT/gpu.txt
cp dataset/data/cuda.sqlite $OUT/cuda.sqlite
count() { python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"select count(*) from measurements where status='ok'\").fetchone()[0])" $OUT/cuda.sqlite; }
before=$(count)
# fail fast: a short run on a scratch store must produce ok measurements before the long run starts
V="gemm:k=1024:m=1024:n=1024:fp16"
python3 -m dataset.generate --device CUDA --kernels "$V" --samples-per-kernel 8 --time-budget 30 --out /tmp/smoke.sqlite --no-progress 2>&1 | tee $OUT/smoke.log
python3 -c "import sqlite3; n=sqlite3.connect('/tmp/smoke.sqlite').execute(\"select count(*) from measurements where status='ok'\").fetchone()[0]; print('smoke ok:', n); exit(n == 0)" || { echo "smoke run produced no ok measurement: stopping"; exit 1; }
python3 -m dataset.generate --device CUDA --kernels all --samples-per-kernel $SPK --time-budget $BUDGET --out $OUT/cuda.sqlite --no-progress 2>&1 | tee $OUT/generate.log
echo "ok measurements: $(count)"
