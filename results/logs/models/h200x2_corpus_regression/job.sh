#!/usr/bin/env bash
# one nvidia-h200-x2 call (carry .whl; run on two H200s on 2026-11-30 with the code of that day, the H100 run of 2026-11-28 is ../h100x2_corpus_regression): the corpus networks' regression, tune-model at a user's defaults on the six networks of
# results/models.md, three per GPU; BEAM=2's picks and seconds from results/models_cache (H200 hosts, 2026-11-21 to 2026-11-24)
set -u
GPUS=0,1 OUT=$OUT/m bash scripts/gpu_models.sh resnet50_b32_fp16,resnet50_b32_fp32,resnet50_b1_fp16,resnet50_b1_fp32,cvt13_b1_fp32,gpt2_s512_fp32 560 25 > $OUT/job.log 2>&1
tail -40 $OUT/job.log
