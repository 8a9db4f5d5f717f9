#!/usr/bin/env bash
# One GPU-host call (device tool, carry .whl; results/models_cache travels in the tree): scripts/bench_models.py on MODELS (comma
# list), spread over the host's GPUs (or GPUS=2,3), every kernel of them tuned again; BEAM=2's per-kernel results come from the cache
# (results/models_cache/beam2.*.json). Results land in $OUT/results.tgz, one archive (models.json/.md, bench_models.log; $OUT/cache: BEAM=2's results and each
# model's per-kernel tuning rows, MODEL.tune.json, with their phases, rounds and trajectories); merge them into results/models.json.
#   bash scripts/gpu_models.sh gpt2_s512_fp32,resnet50_b1_fp32,cvt13_b1_fp32,resnet50_b1_fp16 [SECONDS] [RESERVE] [EXTRA]
# EXTRA: more bench_models options, one string (e.g. "--budget 540 --no-compile-penalty"). Two runs in one call write elsewhere
# and take disjoint GPUs (each has its own cache copy; nothing else carries between them):
#   GPUS=0,1 OUT=$OUT/a bash scripts/gpu_models.sh ... & GPUS=2,3 OUT=$OUT/b bash scripts/gpu_models.sh ... & wait
# FINAL= (empty): models whose BEAM=2 is incomplete are not measured (a later call goes on). BEAM_AGAIN=1 (below): BEAM=2 searches these models again here, instead of its results coming from the cache
set -u
mkdir -p "$OUT"
source scripts/gpu_host.sh
# SRC: the cache this call starts from (the unseen benchmark's networks keep theirs apart: SRC=results/unseen_models_cache); CACHE
# (default a new temp dir): where the run keeps it, e.g. a fixed path that a watchdog of the call can archive if the call is cut off
SRC=${SRC:-results/models_cache}; mkdir -p $SRC
CACHE=${CACHE:-$(mktemp -d /tmp/models_cache.XXXX)} && mkdir -p $CACHE && cp -r $SRC/. $CACHE/
# BEAM_AGAIN=1: these models' kernels lose their cached BEAM=2 results too, so BEAM=2 searches them again in this call and its
# tuning seconds are measured under the same host load as the learned search's (the kernels are those of the cached tuned.json)
if [ -n "${BEAM_AGAIN:-}" ]; then python3 scripts/bench_models.py --drop-beam --models $1 --cache $CACHE || exit 1; fi
for m in ${1//,/ }; do rm -f $CACHE/$m.tuned.json $CACHE/$m.report.json; done
# the host's load before and after (a second run in one call tuned ResNet-50 b1 longer in all three calls of 2026-11-30)
load() { { date; uptime; ps -eo pcpu,pmem,etime,comm --sort=-pcpu | head -8; } >> $OUT/load.txt; }
load
python3 scripts/bench_models.py --device CUDA --gpus $GPUS, --workers 15 --seconds ${2:-440} --reserve ${3:-60} ${FINAL---final} --models $1 \
  --cache $CACHE --out $OUT --no-plot ${4:-}
load
mkdir -p $OUT/cache && { cp $CACHE/*.tune.json $OUT/cache/ 2>/dev/null || true; }   # per-model tuning rows, if a tune job ran
cp $CACHE/beam2.gpu*.json $OUT/cache/   # BEAM=2's results, new ones included: python scripts/bench_models.py --merge-beam DIR puts them in results/models_cache
grep -v "^\[gpu.\]   " $OUT/bench_models.log | tail -60
# the host returns 8 files at most (a run's per-model files are more): everything goes back as one archive
P=$(mktemp /tmp/models_out.XXXX.tgz) && tar czf $P -C $OUT . && rm -rf $OUT/* && mv $P $OUT/results.tgz
