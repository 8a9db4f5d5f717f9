#!/usr/bin/env bash
# one nvidia-h200-x2 call (carry .whl, out/call; run from the repository root): the CNN training step's drop-in at the defaults (def,
# GPU 0) and with KERNTUNE_STOP_GAIN=0.0018 (sg, GPU 1) side by side, each arm's KERNTUNE kernels replayed against BEAM=2's picks
# in three pairs of turns on its own GPU. 0.0018 is 0.003 x 2,734/4,550: the step's per-kernel cold times sum to 4,550 us where 153
# launches at an 11.9-us floor are 1,820 us of it, so STOP_GAIN x that sum overstates what a round must save; at 0.0018 the
# 601-us backward conv's third round (expected 9 us) is taken (c1). TAG=off KTENV=KERNTUNE_LATER_SHARE=off: the arm on GPU 1 without
# the later-round cap instead (c2). BEAM=2's search comes from results/logs/dropin/h200_cnn/all.tgz
# (2026-11-28, 435.8 s), so nothing is searched twice. First, here:
#   mkdir -p /tmp/a && tar xzf results/logs/dropin/h200_cnn/all.tgz -C /tmp/a && for v in def ${TAG:-sg}; do mkdir -p out/call/cnn_$v && \
#   cp -r /tmp/a/cnn_h200/runs out/call/cnn_$v/ && rm -f out/call/cnn_$v/runs/cnn_train.{kerntune,replay,turns,beam2_replay}*; done
set -u
source scripts/gpu_host.sh > /tmp/host.txt 2>&1
i=0
T=${TAG:-sg}
for v in def $T; do
  d=out/call/cnn_$v; E=(); [ $v = $T ] && E=(--kt-env ${KTENV:-KERNTUNE_STOP_GAIN=0.0018})
  (CUDA_VISIBLE_DEVICES=$i timeout 230 python3 scripts/bench_dropin.py --device CUDA --out $d --deadline 220 --workers $W \
    --programs cnn_train --modes default,kerntune,beam2,beam2_replay,turns --turns 3 "${E[@]}" > $d/log 2>&1; echo "exit $?" >> $d/log) &
  i=$((i+1))
done
wait
for v in def $T; do grep -E "^\| cnn_train" out/call/cnn_$v/dropin.md; done
cp /tmp/host.txt out/call/; tar czf $OUT/all.tgz -C out/call cnn_def cnn_$T host.txt
