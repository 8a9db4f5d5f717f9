#!/usr/bin/env bash
# one nvidia-h100-x1 call (carry .whl and out/call): drop-in at the defaults on an idle H100, with the compile pool started at
# enable, for ViT-Ti/16 inference and GPT-2 generation (runs seeded with each one's plain and BEAM=2 runs), BEAM=2's picks replayed
# beside each
set -u
source scripts/gpu_host.sh > $OUT/host.txt 2>&1
d=$OUT/g; mkdir -p $d/runs; cp results/dropin_gpt2_seed/* out/call/vitseed/* $d/runs/
CUDA_VISIBLE_DEVICES=0 timeout 500 python3 scripts/bench_dropin.py --device CUDA --out $d --deadline 490 --workers $W --programs vit_infer,gpt2_gen \
  --modes default,kerntune,beam2,beam2_replay > $d/log 2>&1
grep -E '^\| (vit|gpt2)' $d/dropin.md
for p in vit_infer gpt2_gen; do python3 -c "import json; r=json.load(open('$d/runs/$p.kerntune.json')); print('$p', r['phases'], r['waits'], r['timed'])"; done
tar czf /tmp/all.tgz -C $OUT . && find $OUT -mindepth 1 -maxdepth 1 -exec rm -rf {} + && mv /tmp/all.tgz $OUT/all.tgz
