#!/usr/bin/env bash
# nvidia-h200, after job60.sh (carry .whl, out/call with its cnn_h200): a second KERNTUNE=1 run of the CNN training step (the first
# run's kerntune, replay and turns files set aside in cnn_h200/run1), then three replay pairs against BEAM=2's picks of call 1
set -u
source scripts/gpu_host.sh > /tmp/host.txt 2>&1
d=out/call/cnn_h200; mkdir -p $d/run1 && mv $d/runs/cnn_train.kerntune* $d/runs/cnn_train.replay* $d/runs/cnn_train.turns* $d/runs/cnn_train.beam2_replay.turn* $d/run1/
CUDA_VISIBLE_DEVICES=0 timeout 200 python3 scripts/bench_dropin.py --device CUDA --out $d --deadline 190 --workers $W \
  --programs cnn_train --modes default,kerntune,beam2,beam2_replay,turns --turns 3 > $d/log.call4 2>&1
grep -E "^\| cnn_train" $d/dropin.md | head -1; cp /tmp/host.txt $d/host4.txt; tar czf $OUT/all.tgz -C out/call cnn_h200
