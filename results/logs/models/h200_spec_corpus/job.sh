#!/usr/bin/env bash
# one nvidia-h200 call (carry .whl; run from the repository root): the corpus network ResNet-50 b1 fp32 tuned without Beam's
# speculation (nospec: a round does not guess and compile the next round's picks while it is timed) and at the defaults (def),
# one after the other on the one GPU, BEAM=2's cached picks (results/models_cache) re-timed in each run. The question: the two
# runs of 2026-11-30 (../h200_bf_corpus) compiled 418-421 candidates to time 270 and reached their first batches' last timing
# 7-9 s later than the table's run of code a497f80; do the guesses' compiles delay the other kernels' first batches?
set -u
for v in ${ORDER:-nospec def}; do
  E=""; [ $v = nospec ] && E="--strategy-args {\"speculate\":false}"
  GPUS=0 OUT=$OUT/$v FINAL= bash scripts/gpu_models.sh resnet50_b1_fp32 200 30 "$E" > $OUT/$v.log 2>&1
  grep -E "^latency|tune-model:" $OUT/$v.log | cut -c1-220
done
