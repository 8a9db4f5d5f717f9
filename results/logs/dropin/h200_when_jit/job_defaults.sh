#!/usr/bin/env bash
# one nvidia-h200 call (carry .whl, out/call): ViT-Ti/16 drop-in with KERNTUNE_WHEN=jit at the search's new defaults (group_branch,
# noise_k 1.0), seeded with call A's plain and BEAM=2 runs (out/call/vit_h200), and its replay pairs
set -u
source scripts/gpu_host.sh > /tmp/host.txt 2>&1
d=out/call/vit_h200
CUDA_VISIBLE_DEVICES=0 timeout 118 python3 scripts/bench_dropin.py --device CUDA --out $d --deadline 110 --workers $W \
  --programs vit_infer --modes default,kerntune,beam2,beam2_replay,turns --turns 2 --kt-env KERNTUNE_WHEN=jit > $d/log.defaults 2>&1
grep -E "^\| vit_infer" $d/dropin.md; mkdir -p /tmp/pack && cp -r $d /tmp/pack/
cp /tmp/host.txt /tmp/pack/; tar czf $OUT/all.tgz -C /tmp/pack .
