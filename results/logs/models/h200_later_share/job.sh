#!/usr/bin/env bash
# one nvidia-h200 call (carry .whl; run from the repository root): tune-model --later-share S (ls; default 0.25) against the
# no cap (def: --later-share off, the default before), one after the other on the one GPU, BEAM=2's cached picks re-timed in each run. NETS: the corpus pair by default;
# the unseen pair with SRC=results/unseen_models_cache_h200 NETS=bert_base_s128_fp32,vit_b_16_b1_fp16 (c3, then c4 with ORDER="def ls",
# after the cap became the default). ORDER="def ls": the other
# way round (in each of three calls of 2026-11-30 the run that went second tuned longer: swap the order between calls; each run's
# results.tgz has the host's load before and after it, load.txt). Then, here: unpack each results.tgz and python
# scripts/bench_models.py --phases .../cache/*.tune.json
set -u
for v in ${ORDER:-ls def}; do
  E="--later-share off"; [ $v = ls ] && E="--later-share ${S:-0.25}"   # def: no cap, the default when c1-c2 ran (results/later_share_h200.md)
  GPUS=0 OUT=$OUT/$v SRC=${SRC:-results/models_cache} FINAL= bash scripts/gpu_models.sh ${NETS:-resnet50_b1_fp32,gpt2_s512_fp32} 200 30 "$E" > $OUT/$v.log 2>&1
  grep -E "^latency|tune-model:" $OUT/$v.log | cut -c1-220
done
