#!/usr/bin/env bash
# one nvidia-h200 call (carry .whl, out/call): GPT-2 generation's drop-in (KERNTUNE_WHEN=jit) at the search's new defaults, seeded
# with call A's plain and BEAM=2 runs (out/call/gpt2_h200, its earlier kerntune runs set aside), then five replay pairs, each
# process's `where` recorded
set -u
source scripts/gpu_host.sh > /tmp/host.txt 2>&1
d=out/call/gpt2_h200; mkdir -p $d/old && mv $d/runs/gpt2_gen.kerntune* $d/runs/gpt2_gen.replay* $d/runs/gpt2_gen.turns* $d/old/ 2>/dev/null
CUDA_VISIBLE_DEVICES=0 timeout 520 python3 scripts/bench_dropin.py --device CUDA --out $d --deadline 510 --workers $W \
  --programs gpt2_gen --modes default,kerntune,beam2,beam2_replay,turns --turns 5 --kt-env KERNTUNE_WHEN=jit > $d/log.defaults 2>&1
grep -E "^\| gpt2_gen" $d/dropin.md; mkdir -p /tmp/pack && cp -r $d /tmp/pack/ && rm -rf /tmp/pack/gpt2_h200/old
cp /tmp/host.txt /tmp/pack/; tar czf $OUT/all.tgz -C /tmp/pack .
