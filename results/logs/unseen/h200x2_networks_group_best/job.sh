#!/usr/bin/env bash
# one nvidia-h200-x2 call (carry .whl): the six unseen networks with Beam.group_best on (the first batch times group_branch's best
# config even where a shallow pick groups a reduction), three a GPU, as ../h200x4_networks_defaults/job.sh runs them at the
# defaults: its latency and tuning seconds beside two default calls (../h200x2_networks_defaults/c1-c2). BEAM=2's picks re-timed
# here, its seconds from the 4 x H200 call of ../h200x4_networks.
set -u
M=bert_base_s128_fp32,vit_b_16_b1_fp16,whisper_tiny_encoder_fp32,mobilenet_v2_b1_fp32,llama_block_s512_fp16,efficientnet_b0_b1_fp32
GPUS=0,1 OUT=/tmp/net CACHE=/tmp/netcache SRC=results/unseen_models_cache_h200 FINAL= bash scripts/gpu_models.sh $M 330 40 \
  '--strategy-args {"group_best":true}' > /tmp/net.log 2>&1
grep -E "^latency|tune-model:" /tmp/net.log | cut -c1-220 | tail -20
cp /tmp/net.log $OUT/net.log; cp /tmp/net/results.tgz $OUT/results.tgz
