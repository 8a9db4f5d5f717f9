#!/usr/bin/env bash
# one nvidia-h200-x2 call (carry .whl): the six unseen networks with Beam.tc_branch on (a first-batch config on a tensor-core axis
# none of the model's picks uses), three a GPU, as ../h200x4_networks_defaults/job.sh runs them at the defaults: what its extra
# descents cost tune-model, the question that kept it off (Beam.tc_branch's comment). BEAM=2's picks re-timed here, its seconds from
# the 4 x H200 call of ../h200x4_networks. ARGS: other Beam parameters in place of tc_branch's, e.g. the next call's
# ARGS='{"group_best":true}' (Beam.group_best; its logs go in ../h200x2_networks_group_best/). On one nvidia-h200, all six in turn:
# GPUS=0 SECONDS_=520 (logs of ARGS='{"group_best":true}' in ../h200_networks_group_best/, of ARGS='{"ready_first":true}' in
# ../h200_networks_ready_first/).
set -u
M=bert_base_s128_fp32,vit_b_16_b1_fp16,whisper_tiny_encoder_fp32,mobilenet_v2_b1_fp32,llama_block_s512_fp16,efficientnet_b0_b1_fp32
GPUS=${GPUS:-0,1} OUT=/tmp/net CACHE=/tmp/netcache SRC=results/unseen_models_cache_h200 FINAL= bash scripts/gpu_models.sh $M ${SECONDS_:-330} 40 \
  "--strategy-args ${ARGS:-{\"tc_branch\":true\}}" > /tmp/net.log 2>&1
grep -E "^latency|tune-model:" /tmp/net.log | cut -c1-220 | tail -20
cp /tmp/net.log $OUT/net.log; cp /tmp/net/results.tgz $OUT/results.tgz
