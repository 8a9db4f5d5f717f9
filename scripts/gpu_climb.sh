#!/usr/bin/env bash
# One GPU-host call (device tool; carry .whl and the shard's folder): a measured climb from the root (generate-dataset --mix beam=1)
# on some kernels of a shard made here with
#   python -m dataset.shard split --base dataset/data/cuda.sqlite --measured --kernels VARIANTS --shards 1 --out-dir out/shards_x
# The store comes back as $OUT/shard.sqlite.gz (with $OUT/gen.log); merge it here with
#   python -m dataset.shard merge dataset/data/cuda.sqlite shard.sqlite.gz   (then python -m dataset.history dataset/data/cuda.sqlite)
#   bash scripts/gpu_climb.sh out/shards_x/shard0.sqlite VARIANTS NAME,NAME,... [SECONDS]
set -u
source scripts/gpu_host.sh >/dev/null
cp $1 /tmp/s.sqlite
# the run's start (network graphs, pool, buffers) and the store's compaction come on top of --time-budget, and the call's 600 s
# must cover them all: session 19 lost a run's rows when they did not (dataset/logs/gpu_s19_beam_b32_call6_lost.log)
timeout $(( ${4:-420} + 100 )) python3 -m dataset.generate --device CUDA --kernels "$2" --only-kernels "$3" --samples-per-kernel 600 \
  --mix beam=1 --time-budget ${4:-420} --no-progress --out /tmp/s.sqlite > $OUT/gen.log 2>&1
tail -1 $OUT/gen.log
python3 -c "from dataset.store import Store; Store('/tmp/s.sqlite').close(compact=True)"   # a killed run's WAL folded in
gzip -c /tmp/s.sqlite > $OUT/shard.sqlite.gz
