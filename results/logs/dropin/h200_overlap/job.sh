#!/usr/bin/env bash
# one nvidia-h200 call (carry .whl, out/call; this file as out/call/job68.sh): ViT-Ti/16 drop-in (KERNTUNE_WHEN=jit) with Beam.overlap (KERNTUNE_OVERLAP=1), then at
# the defaults, each in fresh processes with empty caches, BEAM=2's picks replayed beside each; BEAM=2's search and the plain run
# from call A of results/dropin_h200_jit.md (its archive), so nothing is searched twice. First, here:
#   mkdir -p /tmp/a && tar xzf results/logs/dropin/h200_when_jit/all.tgz -C /tmp/a && mkdir -p out/call/vit_ov out/call/vit_def && \
#   for d in vit_ov vit_def; do cp -r /tmp/a/jit_vit_infer_4/runs out/call/$d/ && rm -f out/call/$d/runs/vit_infer.kerntune*; done
set -u
source scripts/gpu_host.sh > /tmp/host.txt 2>&1
for v in ov def; do
  d=out/call/vit_$v; E=(--kt-env KERNTUNE_WHEN=jit); [ $v = ov ] && E+=(--kt-env KERNTUNE_OVERLAP=1)
  CUDA_VISIBLE_DEVICES=0 timeout 140 python3 scripts/bench_dropin.py --device CUDA --out $d --deadline 130 --workers $W \
    --programs vit_infer --modes default,kerntune,beam2,beam2_replay,turns --turns 2 "${E[@]}" > $d/log 2>&1
  grep -E "^\| vit_infer" $d/dropin.md
done
mkdir -p /tmp/pack && cp -r out/call/vit_ov out/call/vit_def /tmp/host.txt /tmp/pack/; tar czf $OUT/all.tgz -C /tmp/pack .
