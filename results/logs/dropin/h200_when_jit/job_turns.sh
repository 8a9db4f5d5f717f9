#!/usr/bin/env bash
# one nvidia-h200 call (carry .whl, out/call): three replay pairs of GPT-2 generation (KERNTUNE_WHEN=jit's kernels from the drop-in
# call before, out/call/gpt2_h200, against BEAM=2's picks, alternating which goes first); then ViT-Ti/16 with KERNTUNE_WHEN=jit
# again (seeded with that call's plain and BEAM=2 runs: out/call/vit_h200) and its replay pairs
set -u
source scripts/gpu_host.sh > /tmp/host.txt 2>&1
for p in gpt2_gen:gpt2_h200:175 vit_infer:vit_h200:95; do IFS=: read prog dir s <<< "$p"; d=out/call/$dir
  CUDA_VISIBLE_DEVICES=0 timeout $((s + 8)) python3 scripts/bench_dropin.py --device CUDA --out $d --deadline $s --workers $W \
    --programs $prog --modes default,kerntune,beam2,beam2_replay,turns --turns 3 --kt-env KERNTUNE_WHEN=jit > $d/log.turns 2>&1
  grep -E "^\| $prog" $d/dropin.md; mkdir -p /tmp/pack && cp -r $d /tmp/pack/
done
cp /tmp/host.txt /tmp/pack/; tar czf $OUT/all.tgz -C /tmp/pack .
