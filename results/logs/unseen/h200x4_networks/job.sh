#!/usr/bin/env bash
# one nvidia-h200-x4 call (carry .whl, out/call): the six unseen networks on the H200 the unseen issue names, from an empty cache:
# each network's learned tuning (the four GPUs first tune four networks side by side), tinygrad's BEAM=2 on every kernel spread
# over the GPUs (cheapest network first), then latencies; a network whose BEAM=2 is incomplete is left to a later call (its cache
# comes back: results/unseen_models_cache_h200)
set -u
M=bert_base_s128_fp32,vit_b_16_b1_fp16,whisper_tiny_encoder_fp32,mobilenet_v2_b1_fp32,llama_block_s512_fp16,efficientnet_b0_b1_fp32
( sleep 530; tar czf $OUT/partial.tgz -C /tmp netcache net.log ) &   # if the call is cut off: the cache so far
W=$!
GPUS=0,1,2,3 OUT=/tmp/net CACHE=/tmp/netcache SRC=results/unseen_models_cache_h200 FINAL= bash scripts/gpu_models.sh $M 450 60 > /tmp/net.log 2>&1
grep -E "^latency|tune-model:|tune .*: [0-9.]+ s|setup of|measure " /tmp/net.log | cut -c1-220 | tail -40
kill $W 2>/dev/null; pkill -f "sleep 530"; cp /tmp/net.log $OUT/net.log; cp /tmp/net/results.tgz $OUT/results.tgz
