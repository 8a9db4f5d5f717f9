#!/usr/bin/env bash
# nvidia-h200, after job59.sh (carry .whl, out/call with call 2's cnn_h200): every CNN-step kernel timed alone with KERNTUNE's config
# and BEAM=2's pick (--modes kernels), to show where the 1.13x step gap comes from
set -u
source scripts/gpu_host.sh > /tmp/host.txt 2>&1
d=out/call/cnn_h200
CUDA_VISIBLE_DEVICES=0 timeout 300 python3 scripts/bench_dropin.py --device CUDA --out $d --deadline 290 --workers $W \
  --programs cnn_train --modes kernels > $d/log.call3 2>&1
tail -30 $d/log.call3; cp /tmp/host.txt $d/host3.txt; tar czf $OUT/all.tgz -C out/call cnn_h200
