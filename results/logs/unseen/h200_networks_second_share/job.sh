#!/usr/bin/env bash
# one nvidia-h200 call (carry .whl; run from the repository root): the six unseen networks with tune-model --second-share S2 (0.05:
# a kernel of 5% of its model's time or more gets a second round before any kernel a third), all six in turn on the one GPU, as
# ../h200x2_networks_tc_branch/job.sh runs them (BEAM=2's picks re-timed here, its seconds from the 4 x H200 call of
# ../h200x4_networks); then results/logs/models/h200_llama_timing/wrong.py (why a gate/up config that passes its own check makes
# the LLaMA block's output wrong). Merge: python3 scripts/bench_unseen.py --out results --networks MODELS_JSON "COMMAND (description)"
set -u
M=bert_base_s128_fp32,vit_b_16_b1_fp16,whisper_tiny_encoder_fp32,mobilenet_v2_b1_fp32,llama_block_s512_fp16,efficientnet_b0_b1_fp32
GPUS=0 OUT=/tmp/net CACHE=/tmp/netcache SRC=results/unseen_models_cache_h200 FINAL= bash scripts/gpu_models.sh $M ${SECONDS_:-520} 40 \
  "--second-share ${S2:-0.05}" > /tmp/net.log 2>&1
grep -E "^latency|tune-model:" /tmp/net.log | cut -c1-220 | tail -20
cp /tmp/net.log $OUT/net.log; cp /tmp/net/results.tgz $OUT/results.tgz
timeout ${WRONG_S:-150} python3 results/logs/models/h200_llama_timing/wrong.py $OUT/wrong.json > $OUT/wrong.log 2>&1; grep -v Warn $OUT/wrong.log | tail -12
