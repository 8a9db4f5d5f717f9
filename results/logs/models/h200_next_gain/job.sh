#!/usr/bin/env bash
# one nvidia-h200 call (carry .whl; run from the repository root): tune-model with later rounds valued as measured on the published
# unseen splits 1-40 (ng: --next-gain 0.05, the mean gain of a kernel's next 6 timings after its first batch, and a budget of 16 timed
# candidates a kernel in place of 10) against the defaults (def), one after the other on the one GPU, each network in its own run,
# BEAM=2's cached picks re-timed in each. NETS: "name:kernels ..." (the corpus pair by default); ORDER="def ng": the other way
# round (the run that goes second tends to tune longer: swap the order between calls). Then, here: unpack each archive and
# python scripts/bench_models.py --phases .../cache/*.tune.json
# c3 (ngoff: --next-gain 0.05 with no cap on the later rounds' seconds, --later-share off; one run each, no A/B in the call):
# ORDER=ngoff SRC=results/unseen_models_cache_h200 NETS="llama_block_s512_fp16:10" (the models_cache lacks LLaMA: GPT-2 is not run)
# ra (2026-12-02, logs ../../unseen/h200_ready_any/; a development use of two unseen networks): Beam.ready_any (removed since, git
# show bdd210d:search/beam.py) against the defaults,
# ORDER="ra def" SRC=results/unseen_models_cache_h200 NETS="llama_block_s512_fp16:0 mobilenet_v2_b1_fp32:0"
# so (Beam.second_opinion=3, results/second_opinion.md) against the defaults on the two unseen networks it bears on, the one it
# may help and the one nearest the 10% line: ORDER="so def" SRC=results/unseen_models_cache_h200 NETS="llama_block_s512_fp16:0 vit_b_16_b1_fp16:0"
set -u
for v in ${ORDER:-ng def}; do
  for nk in ${NETS:-resnet50_b1_fp32:27 gpt2_s512_fp32:11}; do
    n=${nk%%:*}; E=""; [ $v = ng ] && E="--next-gain ${G:-0.05} --budget $(( ${PK:-16} * ${nk##*:} ))"
    [ $v = ngoff ] && E="--next-gain ${G:-0.05} --later-share off"
    [ $v = ra ] && E='--strategy-args {"ready_any":true}'
    [ $v = so ] && E='--strategy-args {"second_opinion":3}'
    GPUS=0 OUT=$OUT/$v.$n SRC=${SRC:-results/models_cache} FINAL= bash scripts/gpu_models.sh $n 200 30 "$E" > $OUT/$v.$n.log 2>&1
    grep -E "^latency|tune-model:" $OUT/$v.$n.log | cut -c1-220
  done
done
