#!/usr/bin/env bash
# one nvidia-h100-x1 call (carry .whl and out/call): drop-in at the defaults on an idle H100 for ViT-Ti/16 inference and the CNN
# training step (runs seeded with each one's plain and BEAM=2 runs: results/dropin_cnn_seed, and ViT's from
# results/logs/dropin/h100_runs.tgz), BEAM=2's picks replayed beside each, then alternating replay pairs (--modes turns)
set -u
source scripts/gpu_host.sh > $OUT/host.txt 2>&1
d=$OUT/g; mkdir -p $d/runs; cp results/dropin_cnn_seed/* out/call/vitseed/* $d/runs/
CUDA_VISIBLE_DEVICES=0 timeout 560 python3 scripts/bench_dropin.py --device CUDA --out $d --deadline 550 --workers $W --programs vit_infer,cnn_train \
  --modes default,kerntune,beam2,beam2_replay,turns --turns 2 > $d/log 2>&1
grep -E '^\| (vit|cnn)' $d/dropin.md
tar czf /tmp/all.tgz -C $OUT . && find $OUT -mindepth 1 -maxdepth 1 -exec rm -rf {} + && mv /tmp/all.tgz $OUT/all.tgz
