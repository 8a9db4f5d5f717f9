#!/usr/bin/env bash
# one nvidia-h200 call (carry .whl and out/before; run from the repository root): the corpus networks ResNet-50 b1 fp32 and GPT-2
# tuned with the model shipped now (def) and the model before it (bf), one after the other on the one GPU, BEAM=2's cached picks
# (results/models_cache) re-timed in each run. The call of 2026-11-30 (nm/, nm.log) ran the model shipped now alone:
#   GPUS=0 OUT=$OUT/nm FINAL= bash scripts/gpu_models.sh resnet50_b1_fp32,gpt2_s512_fp32 200 30 "--model out/noopts/cost_model_sm_90.txt"
# Its run of 2026-11-30 (bf first, then def): logs in ../h200_bf_corpus/ (bf.log, def.log, each run's results.tgz).
# First, here: mkdir -p out/before && for f in txt json compile.txt mlp.npz resources.json; do
#   git show 25f95ef:models/cost_model_sm_90.$f > out/before/cost_model_sm_90.$f; done
set -u
for v in ${ORDER:-bf def}; do
  E=""; [ $v = bf ] && E="--model out/before/cost_model_sm_90.txt"
  GPUS=0 OUT=$OUT/$v FINAL= bash scripts/gpu_models.sh resnet50_b1_fp32,gpt2_s512_fp32 200 30 "$E" > $OUT/$v.log 2>&1
  grep -E "^latency|tune-model:" $OUT/$v.log | cut -c1-220
done
