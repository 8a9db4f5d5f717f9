#!/usr/bin/env bash
# one nvidia-h200 call (carry .whl, out/call; this file as out/call/job70.sh): ViT-Ti/16 drop-in (KERNTUNE_WHEN=jit) at the defaults, then with Beam.spare (KERNTUNE_SPARE=1),
# each in fresh processes with empty caches, BEAM=2's picks replayed beside each; BEAM=2's search and the plain run
# from call A of results/dropin_h200_jit.md (its archive), so nothing is searched twice. First, here:
#   mkdir -p /tmp/a && tar xzf results/logs/dropin/h200_when_jit/all.tgz -C /tmp/a && mkdir -p out/call/vit_sp out/call/vit_def && \
#   for d in vit_sp vit_def; do cp -r /tmp/a/jit_vit_infer_4/runs out/call/$d/ && rm -f out/call/$d/runs/vit_infer.kerntune*; done
set -u
source scripts/gpu_host.sh > /tmp/host.txt 2>&1
for v in def sp; do
  d=out/call/vit_$v; E=(--kt-env KERNTUNE_WHEN=jit); [ $v = sp ] && E+=(--kt-env KERNTUNE_SPARE=1)
  CUDA_VISIBLE_DEVICES=0 timeout 140 python3 scripts/bench_dropin.py --device CUDA --out $d --deadline 130 --workers $W \
    --programs vit_infer --modes default,kerntune,beam2,beam2_replay,turns --turns 2 "${E[@]}" > $d/log 2>&1
  grep -E "^\| vit_infer" $d/dropin.md
  cp /tmp/host.txt $d/; tar czf $OUT/vit_$v.tgz -C out/call vit_$v   # each program's files as it ends: a cut call keeps the first
done
