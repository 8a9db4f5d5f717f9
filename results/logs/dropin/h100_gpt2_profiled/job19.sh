#!/usr/bin/env bash
# one nvidia-h100-x1 call (carry .whl and out/call): GPT-2 drop-in at the defaults, its tuning process profiled
set -u
source scripts/gpu_host.sh > $OUT/host.txt 2>&1
DEV=CUDA timeout 300 python3 -u out/call/prof_dropin.py > $OUT/log 2>&1
tail -5 $OUT/log; head -60 $OUT/prof_cumulative.txt | tail -48
tar czf /tmp/all.tgz -C $OUT . && find $OUT -mindepth 1 -maxdepth 1 -exec rm -rf {} + && mv /tmp/all.tgz $OUT/all.tgz
