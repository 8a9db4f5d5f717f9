#!/usr/bin/env bash
# nvidia-h200 call 2 of 2 (carry .whl, out/call with call 1's cnn_h200 unpacked in it): BEAM=2 finished from its CACHEDB, then
# KERNTUNE=1 drop-in at the defaults, BEAM=2's picks replayed, three replay pairs
set -u
source scripts/gpu_host.sh > /tmp/host.txt 2>&1
d=out/call/cnn_h200
CUDA_VISIBLE_DEVICES=0 timeout 445 python3 scripts/bench_dropin.py --device CUDA --out $d --deadline 430 --workers $W \
  --programs cnn_train --modes default,kerntune,beam2,beam2_replay,turns --turns 3 > $d/log.call2 2>&1
grep -E "^\| cnn_train" $d/dropin.md; cp /tmp/host.txt $d/host2.txt; tar czf $OUT/all.tgz -C out/call cnn_h200
