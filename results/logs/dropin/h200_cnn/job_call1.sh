#!/usr/bin/env bash
# nvidia-h200 call 1 of 2 (carry .whl, out/call): beautiful_mnist's CNN training step, plain and BEAM=2 (BEAM=2 takes over one call:
# the run is cut at the deadline and its CACHEDB, in out/call/cnn_h200, carries it on in call 2, job59.sh)
set -u
source scripts/gpu_host.sh > /tmp/host.txt 2>&1
d=out/call/cnn_h200; mkdir -p $d
CUDA_VISIBLE_DEVICES=0 timeout 545 python3 scripts/bench_dropin.py --device CUDA --out $d --deadline 530 --workers $W \
  --programs cnn_train --modes default,beam2 > $d/log.call1 2>&1
tail -5 $d/log.call1; ls -la $d $d/runs; cp /tmp/host.txt $d/host1.txt; tar czf $OUT/all.tgz -C out/call cnn_h200
