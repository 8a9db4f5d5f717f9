#!/usr/bin/env bash
# One GPU-host call (device tool): measure the shard stores in out/shards (python -m dataset.shard split; --shards 1 for one GPU),
# one generate-dataset per GPU, for BUDGET seconds; the shards come back in $OUT. Merge them here afterwards:
#   python -m dataset.shard merge dataset/data/cuda.sqlite <files_at>/shard*.sqlite.gz
#   usage: bash scripts/gpu_generate_shards.sh BUDGET_S SAMPLES_PER_KERNEL [SHARD_DIR=out/shards [GENERATE_ARGS...]]   (carry SHARD_DIR and .whl)
# More of the measured kernels, steered by a cost model (the shards are split on the host: the dataset travels in the tree):
#   python3 -m dataset.shard split --base dataset/data/cuda.sqlite --measured --shards 4 --out-dir /tmp/sh &&
#   bash scripts/gpu_generate_shards.sh 480 100 /tmp/sh --model models/cost_model_sm_90_nosuite.txt
set -u
BUDGET=${1:-440}; SPK=${2:-70}; DIR=${3:-out/shards}; shift $(( $# < 3 ? $# : 3 ))
source scripts/gpu_host.sh   # wheels, environment, $OUT/gpu.txt; GPUS (ids), N, W (compile workers per GPU)
IDS=(${GPUS//,/ })
# generate-dataset's module: models.generate loads --model's cost model (dataset imports nothing from models)
GEN=$(python3 -c "import importlib.util as u; print('models.generate' if u.find_spec('models.generate') else 'dataset.generate')")
echo "gpus $GPUS cores $(nproc) workers per GPU $W" | tee $OUT/gen.log
pids=()
for f in $DIR/shard*.sqlite; do
  i=$(basename $f .sqlite); i=${i#shard}
  cp "$f" $OUT/
  CUDA_VISIBLE_DEVICES=${IDS[$(( i % N ))]} python3 -m $GEN --device CUDA --kernels "$(cat $DIR/shard$i.txt)" \
    --samples-per-kernel $SPK --time-budget $BUDGET --workers $W --out $OUT/shard$i.sqlite --no-progress "$@" > /tmp/shard$i.log 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait $p; done
rm -f $OUT/*.lock $OUT/*.heartbeat   # the host returns at most 8 files: the stores, gpu.txt and one log (at most 6 shards)
for f in $OUT/shard*.sqlite; do   # one log back (the host returns at most 8 files)
  n=$(basename $f .sqlite)
  { echo "== $n: $(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"select count(*) from measurements where status='ok'\").fetchone()[0])" $f) ok"; cat /tmp/$n.log; } | tee -a $OUT/gen.log | tail -2 | cut -c1-400
done
# the host returns no file over 16 MiB: a shard of a 2-GPU split holds half the dataset (~23 MB), so every store comes back gzipped
# (a store over the limit is lost with the call's measurements); dataset.shard merge reads .sqlite.gz
for f in $OUT/shard*.sqlite; do gzip -1 "$f"; done
