#!/usr/bin/env bash
# one nvidia-h100-x1 call (carry .whl and out/call): GPT-2 drop-in on an idle H100 at the defaults (symbolic kernels searched as
# themselves), its kernels timed alone beside BEAM=2's picks (--modes kernels), then its steady state against BEAM=2's picks in
# alternating replay pairs (--modes turns)
set -u
source scripts/gpu_host.sh > $OUT/host.txt 2>&1
d=$OUT/g; mkdir -p $d/runs; cp results/dropin_gpt2_seed/* $d/runs/
CUDA_VISIBLE_DEVICES=0 timeout 480 python3 scripts/bench_dropin.py --device CUDA --out $d --deadline 470 --workers $W --programs gpt2_gen \
  --modes default,kerntune,beam2,kernels,turns --turns 3 > $d/log 2>&1
grep '^| gpt2' $d/dropin.md; python3 -c "import json; r=json.load(open('$d/runs/gpt2_gen.kerntune.json')); print(r['phases'], r['waits'], r['timed'])"
tar czf /tmp/all.tgz -C $OUT . && find $OUT -mindepth 1 -maxdepth 1 -exec rm -rf {} + && mv /tmp/all.tgz $OUT/all.tgz
