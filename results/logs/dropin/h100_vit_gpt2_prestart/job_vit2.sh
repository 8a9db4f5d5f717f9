#!/usr/bin/env bash
# one nvidia-h100-x1 call (carry .whl and out/call): two more drop-in runs of ViT-Ti/16 inference on an idle H100, one after the
# other, each in fresh processes with empty caches (runs seeded with ViT's plain and BEAM=2 runs), BEAM=2's picks replayed beside
# each; the first also in two alternating replay pairs
set -u
source scripts/gpu_host.sh > $OUT/host.txt 2>&1
for r in 1 2; do
  d=$OUT/r$r; mkdir -p $d/runs; cp out/call/vitseed/* $d/runs/
  m=default,kerntune,beam2,beam2_replay; [ $r = 1 ] && m=$m,turns
  CUDA_VISIBLE_DEVICES=0 timeout 250 python3 scripts/bench_dropin.py --device CUDA --out $d --deadline 240 --workers $W --programs vit_infer \
    --modes $m --turns 2 > $d/log 2>&1
  grep -E '^\| vit' $d/dropin.md
done
tar czf /tmp/all.tgz -C $OUT . && find $OUT -mindepth 1 -maxdepth 1 -exec rm -rf {} + && mv /tmp/all.tgz $OUT/all.tgz
