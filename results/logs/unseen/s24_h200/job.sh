#!/usr/bin/env bash
# nvidia-h200 calls (carry .whl and out/dg; run from the repository root): fresh split 24, the A/B of the shipped model (a: models/)
# against it retrained with the dilated and grouped convs' rows as a shard (b: out/dg; dataset/data/cuda_h200_dilated_grouped.sqlite.gz,
# from results/logs/dataset/dg_h200/job.sh), both with the shipped code and history. As run, 2026-11-29: c1 `BEAM=1 BT=270 T=140
# ORDER="a b"`, c2 `T=150 ORDER="b a"` (logs c1/, c2/): a 1.002x, 0.972x, 0.982x, 0.973x BEAM=2; b 1.018x, 1.003x, 0.970x, 0.985x; b not shipped. BEAM=1: first split 24's BEAM=2 searches (BT seconds),
# their cache copied into results/ for the learned runs after them. Then, in ORDER (the second call the other order), R learned runs
# per model, each in a process of its own. Model b, made here (the store read as a shard of the base while it trains):
#   cp dataset/data/cuda_h200_dilated_grouped.sqlite.gz dataset/data/shards/h200_2026-11-29_dilated_grouped.sqlite.gz && train-cost-model dataset/data/cuda.sqlite --with dataset/data/cuda_h100.sqlite.gz --params models/cost_model_sm_90.json --no-check \
#     --blend 0.7 --threads 2 --out out/dg/cost_model_sm_90.txt && rm -f out/dg/history_sm_90.json out/dg/train.log && \
#   rm dataset/data/shards/h200_2026-11-29_dilated_grouped.sqlite.gz
# Everything goes back as $OUT/s24.tgz, written again after each step (a killed call returns what was done).
set -u
base=$OUT
pack() { tar czf /tmp/s24.tgz -C $base --exclude=s24.tgz . && mv /tmp/s24.tgz $base/s24.tgz; }
if [ -n "${BEAM:-}" ]; then
  mkdir -p $base/beam; OUT=$base/beam BEAM_ONLY=1 SPLIT=24 T=${BT:-300} bash results/logs/unseen/s19_h200/job.sh
  cp $base/beam/unseen_s24_beam2.json results/; pack
fi
for t in ${ORDER:-a b}; do
  M=models/cost_model_sm_90.txt; [ $t = b ] && M=out/dg/cost_model_sm_90.txt
  mkdir -p $base/$t
  OUT=$base/$t BEAM_FIRST=1 SPLIT=24 bash scripts/gpu_unseen.sh ${T:-200} "" --shuffle 0 --rounds 3 --together 8 --repeats ${R:-2} \
    --cached-beam-only --model $M > $base/$t.log 2>&1
  rm -f $base/$t/*.png; grep -E "geomean|wall|verified" $base/$t/unseen_s24.md | head -6; pack
done
