#!/usr/bin/env bash
# one nvidia-h200-x4 call (carry .whl, out/call): the six unseen networks tuned again at the new search defaults (group_branch,
# noise_k 1.0); BEAM=2's picks and seconds from the earlier 4 x H200 call's cache (results/unseen_models_cache_h200), re-timed here
# (GPUS=0,1 on nvidia-h200-x2: three networks a GPU; its 2026-11-30 calls' logs: ../h200x2_networks_defaults/c*)
set -u
M=bert_base_s128_fp32,vit_b_16_b1_fp16,whisper_tiny_encoder_fp32,mobilenet_v2_b1_fp32,llama_block_s512_fp16,efficientnet_b0_b1_fp32
( sleep 380; tar czf $OUT/partial.tgz -C /tmp netcache net.log ) &
W=$!
GPUS=${GPUS:-0,1,2,3} OUT=/tmp/net CACHE=/tmp/netcache SRC=results/unseen_models_cache_h200 FINAL= bash scripts/gpu_models.sh $M 330 40 > /tmp/net.log 2>&1
grep -E "^latency|tune-model:|tune .*: [0-9.]+ s|setup of|measure " /tmp/net.log | cut -c1-220 | tail -40
kill $W 2>/dev/null; pkill -f "sleep 380"; cp /tmp/net.log $OUT/net.log; cp /tmp/net/results.tgz $OUT/results.tgz
