#!/usr/bin/env bash
# One GPU-host call (device tool; carry .whl and the shard's folder): generate-dataset on some kernels of a shard made here with
#   python -m dataset.shard split --base dataset/data/cuda.sqlite --measured --kernels VARIANTS --shards 1 --out-dir out/shards_x
# by default a measured climb from the root (--mix beam=1); other generate-dataset flags after SECONDS replace that, e.g.
# --tinygrad-beam 2 --samples-per-kernel 1 (tinygrad's BEAM pick and its prefixes only). The store comes back as
# $OUT/shard.sqlite.gz (with $OUT/gen.log); merge it here with
#   python -m dataset.shard merge dataset/data/cuda.sqlite shard.sqlite.gz   (then python -m dataset.history dataset/data/cuda.sqlite)
#   bash scripts/gpu_climb.sh out/shards_x/shard0.sqlite VARIANTS NAME,NAME,... [SECONDS [FLAGS...]]
set -u
source scripts/gpu_host.sh >/dev/null
SHARD=$1 VARIANTS=$2 NAMES=$3 SECONDS_=${4:-420}; shift $(( $# < 4 ? $# : 4 ))
FLAGS=("$@"); [ ${#FLAGS[@]} -gt 0 ] || FLAGS=(--mix beam=1 --samples-per-kernel 600)
cp $SHARD /tmp/s.sqlite
# the run's start (network graphs, pool, buffers) and the store's compaction come on top of --time-budget, and the call's 600 s
# must cover them all: session 19 lost a run's rows when they did not (dataset/logs/gpu_s19_beam_b32_call6_lost.log)
timeout $(( SECONDS_ + 100 )) python3 -m dataset.generate --device CUDA --kernels "$VARIANTS" --only-kernels "$NAMES" "${FLAGS[@]}" \
  --time-budget $SECONDS_ --no-progress --out /tmp/s.sqlite > $OUT/gen.log 2>&1
tail -1 $OUT/gen.log
python3 -c "from dataset.store import Store; Store('/tmp/s.sqlite').close(compact=True)"   # a killed run's WAL folded in
gzip -c /tmp/s.sqlite > $OUT/shard.sqlite.gz
