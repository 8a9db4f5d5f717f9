#!/usr/bin/env bash
# one nvidia-h200 call (carry .whl, out/call; this file as out/call/job71.sh): BERT-base and ViT-B/16 (the two unseen networks over the tuning-time target on the
# H200) tuned with Beam.spare (tune-model strategy args {"spare":true}), then at the defaults, one after the other on the one GPU;
# BEAM=2's picks and seconds from results/unseen_models_cache_h200, re-timed in each run; ORDER="def sp" runs them the other way round
set -u
M=bert_base_s128_fp32,vit_b_16_b1_fp16
for v in ${ORDER:-sp def}; do
  E=""; [ $v = sp ] && E='--strategy-args {"spare":true}'
  GPUS=0 OUT=$OUT/$v SRC=results/unseen_models_cache_h200 FINAL= bash scripts/gpu_models.sh $M 260 40 "$E" > $OUT/$v.log 2>&1
  grep -E "^latency|tune-model:|tune .*: [0-9.]+ s|measure " $OUT/$v.log | cut -c1-220
done
