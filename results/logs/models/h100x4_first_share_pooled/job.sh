#!/usr/bin/env bash
# one nvidia-h100-x4 call (carry .whl, out/call): the six unseen networks tuned again with the faster model descents (BEAM=2 from
# results/unseen_models_cache): the default (--first-share off) on GPUs 0-1, --first-share 0.05 with the pooled budget shrinking
# with it on GPUs 2-3, side by side at equal load
set -u
source scripts/gpu_host.sh > /tmp/host.txt 2>&1   # the wheels installed once, before the two runs start
M=mobilenet_v2_b1_fp32,efficientnet_b0_b1_fp32,llama_block_s512_fp16,whisper_tiny_encoder_fp32,bert_base_s128_fp32,vit_b_16_b1_fp16
( GPUS=0,1 OUT=/tmp/off SRC=results/unseen_models_cache FINAL= bash scripts/gpu_models.sh $M 420 40 > /tmp/off.log 2>&1 ) &
( GPUS=2,3 OUT=/tmp/on SRC=results/unseen_models_cache FINAL= bash scripts/gpu_models.sh $M 420 40 "--first-share 0.05" > /tmp/on.log 2>&1 ) &
wait
for f in /tmp/off.log /tmp/on.log; do echo "== $f"; grep -E "^latency|tune-model:|tune .*: [0-9.]+ s" $f | cut -c1-220; done
mkdir -p /tmp/pack && cp -r /tmp/on /tmp/off /tmp/on.log /tmp/off.log /tmp/host.txt /tmp/pack/ && tar czf $OUT/all.tgz -C /tmp/pack .
