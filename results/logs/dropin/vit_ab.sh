#!/usr/bin/env bash
# one nvidia-h200 call (carry .whl, out/call; this file as out/call/vit_ab.sh): ViT-Ti/16 drop-in (KERNTUNE_WHEN=jit) with KTENV (one
# KEY=VALUE, runs tagged TAG) and at the defaults (def), in ORDER (default "$TAG def"), each in fresh processes with empty caches,
# BEAM=2's picks replayed beside each; BEAM=2's search and the plain run from call A of results/dropin_h200_jit.md (its archive), so
# nothing is searched twice. Each run's files come back as $OUT/vit_TAG.tgz as it ends. First, here (for TAG and def):
#   mkdir -p /tmp/a && tar xzf results/logs/dropin/h200_when_jit/all.tgz -C /tmp/a && \
#   for d in vit_$TAG vit_def; do mkdir -p out/call/$d && cp -r /tmp/a/jit_vit_infer_4/runs out/call/$d/ && rm -f out/call/$d/runs/vit_infer.kerntune*; done
# Beam.overlap (2026-11-29, code 3af9822; h200_overlap/): TAG=ov KTENV=KERNTUNE_OVERLAP=1 (its archive packed both runs at the end).
# Beam.spare (code 798d857; h200_spare/): TAG=sp KTENV=KERNTUNE_SPARE=1 ORDER="def sp"
# The later-round cap, before it was the default (c1-c3 of h200_later_share/): TAG=ls KTENV=KERNTUNE_LATER_SHARE=0.25; def ran uncapped then
# (KTENV=KERNTUNE_LATER_SHARE=off now, with TAG=off and ORDER="off ls").
# A model: TAG=nm KTENV=KERNTUNE_MODEL=out/noopts/cost_model_sm_90.txt (carry out/noopts too)
set -u
source scripts/gpu_host.sh > /tmp/host.txt 2>&1
for v in ${ORDER:-$TAG def}; do
  d=out/call/vit_$v; E=(--kt-env KERNTUNE_WHEN=jit); [ $v = $TAG ] && E+=(--kt-env $KTENV)
  CUDA_VISIBLE_DEVICES=0 timeout 140 python3 scripts/bench_dropin.py --device CUDA --out $d --deadline 130 --workers $W \
    --programs vit_infer --modes default,kerntune,beam2,beam2_replay,turns --turns 2 "${E[@]}" > $d/log 2>&1
  grep -E "^\| vit_infer" $d/dropin.md
  cp /tmp/host.txt $d/; tar czf $OUT/vit_$v.tgz -C out/call vit_$v
done
