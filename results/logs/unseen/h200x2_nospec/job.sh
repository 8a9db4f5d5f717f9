#!/usr/bin/env bash
# one nvidia-h200-x2 call (carry .whl; run from the repository root): BERT-base s128 and ViT-B/16 through tune-model at the defaults
# (def) and with Beam(speculate=False) (nospec), each arm on its own GPU side by side (SWAP=1: each on the other GPU, the second
# call); BEAM=2's picks and seconds from results/unseen_models_cache_h200, its picks re-timed in each arm. Why: in the BERT runs of
# results/later_share_h200.md 70-77 of 195-221 compiles went to kernels that never got a later round (guesses of a next round and
# ahead()), and BERT's and ViT-B's tuning is their first rounds, bound by how many configs compile. Returns $OUT/all.tgz.
set -u
source scripts/gpu_host.sh > /tmp/host.txt 2>&1   # installs once; each arm's gpu_models.sh finds it installed
a=0 b=1; [ -n "${SWAP:-}" ] && a=1 b=0
M=bert_base_s128_fp32,vit_b_16_b1_fp16; S=results/unseen_models_cache_h200
GPUS=$a OUT=$OUT/def SRC=$S FINAL= bash scripts/gpu_models.sh $M 260 40 > $OUT/def.log 2>&1 &
GPUS=$b OUT=$OUT/nospec SRC=$S FINAL= bash scripts/gpu_models.sh $M 260 40 '--strategy-args {"speculate":false}' > $OUT/nospec.log 2>&1 &
wait
grep -E "^latency|tune-model:" $OUT/def.log $OUT/nospec.log | cut -c1-220
cp /tmp/host.txt $OUT/; T=$(mktemp /tmp/all.XXXX.tgz) && tar czf $T -C $OUT . && rm -rf $OUT/* && mv $T $OUT/all.tgz   # 8 files at most
