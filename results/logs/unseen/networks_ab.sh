#!/usr/bin/env bash
# one nvidia-h200 call (carry .whl, out/call; this file as out/call/networks_ab.sh): BERT-base and ViT-B/16 (the two unseen networks
# over the tuning-time target on the H200) tuned with tune-model strategy args ARGS (a JSON object, runs tagged TAG), then at the
# defaults (def), one after the other on the one GPU; ORDER="def $TAG" runs them the other way round. BEAM=2's picks and seconds come
# from results/unseen_models_cache_h200, its picks re-timed in each run. Beam.overlap (2026-11-29, code 3af9822; its logs in
# h200_networks_overlap/): TAG=ov ARGS='{"overlap":true}'. A model: TAG=nm XARGS="--model out/noopts/cost_model_sm_90.txt" (carry out/noopts). Beam.spare: TAG=sp ARGS='{"spare":true}' (logs to h200_networks_spare/)
set -u
for v in ${ORDER:-$TAG def}; do
  E=""; [ $v = $TAG ] && E="${XARGS:---strategy-args $ARGS}"   # XARGS: other bench_models options in place of ARGS
  GPUS=0 OUT=$OUT/$v SRC=results/unseen_models_cache_h200 FINAL= bash scripts/gpu_models.sh bert_base_s128_fp32,vit_b_16_b1_fp16 260 40 "$E" > $OUT/$v.log 2>&1
  grep -E "^latency|tune-model:|tune .*: [0-9.]+ s|measure " $OUT/$v.log | cut -c1-220
done
