#!/usr/bin/env bash
# one nvidia-h100-x1 call (carry .whl, out/call): GPT-2 generation's kernels timed alone (cold and warm) with tinygrad's default,
# KERNTUNE's configs and BEAM=2's picks from the idle-H100 drop-in run (results/logs/dropin/h100_gpt2_turns), the decode step's
# symbolic kernels included: where KERNTUNE's steady state loses to BEAM=2's
set -u
source scripts/gpu_host.sh > $OUT/host.txt 2>&1
d=$OUT/g; mkdir -p $d/runs; cp out/call/gpt2runs/* $d/runs/
CUDA_VISIBLE_DEVICES=0 timeout 420 python3 scripts/bench_dropin.py --device CUDA --out $d --deadline 410 --workers $W --programs gpt2_gen \
  --modes kernels > $d/log 2>&1
tail -30 $d/dropin.md
tar czf /tmp/all.tgz -C $OUT . && find $OUT -mindepth 1 -maxdepth 1 -exec rm -rf {} + && mv /tmp/all.tgz $OUT/all.tgz
