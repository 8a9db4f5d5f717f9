#!/usr/bin/env bash
# nvidia-h200 calls (carry .whl and out/cm_a; run from the repository root): fresh split 21, whose BEAM=2 searches ran in a first call
# (`SPLIT=21 BEAM_ONLY=1 T=290 bash results/logs/unseen/s19_h200/job.sh`, results/unseen_s21_beam2.json, re-timed here). Two learned
# runs with the model shipped before (a) and two with the model retrained on the store whose 185 kernels under 20 us were timed again (b:
# out/rtm/cost_model_sm_90.*), each model in a process of its own (both with the shipped history), in ORDER (default "a b"; the
# second call "b a"), each into $OUT/TAG. The model b, made here (the copy needs the shards and the compile labels beside it, or it
# trains on fewer rows and without the register-pressure inputs):
#   mkdir -p out/rt out/rtm && cp dataset/data/cuda.sqlite out/rt/ && ln -sfn ../../dataset/data/shards out/rt/shards && \
#   ln -sfn ../../dataset/data/cuda.resources.jsonl.gz out/rt/cuda.resources.jsonl.gz && \
#   python -m dataset.retime apply out/rt/cuda.sqlite results/logs/retime_small20_h200/retimed.json.gz && \
#   train-cost-model out/rt/cuda.sqlite --with dataset/data/cuda_h100.sqlite.gz --params models/cost_model_sm_90.json --no-check \
#     --blend 0.7 --threads 2 --out out/rtm/cost_model_sm_90.txt && rm out/rtm/history_sm_90.json
# b has shipped since (models/cost_model_sm_90.*, byte for byte), so the model a is now the one at 58b383a, carried as out/cm_a:
#   mkdir -p out/cm_a && for e in txt json mlp.npz resources.json compile.txt; do git show 58b383a:models/cost_model_sm_90.$e > out/cm_a/cost_model_sm_90.$e; done
# (as run, 2026-11-29: a was models/ and b out/rtm, the same files as these)
set -u
base=$OUT
for t in ${ORDER:-a b}; do
  M=out/cm_a/cost_model_sm_90.txt; [ $t = b ] && M=models/cost_model_sm_90.txt
  mkdir -p $base/$t
  OUT=$base/$t BEAM_FIRST=1 SPLIT=21 bash scripts/gpu_unseen.sh ${T:-270} "" --shuffle 0 --rounds 3 --together 8 --repeats ${R:-2} \
    --model $M > $base/$t.log 2>&1
  grep -E "geomean|wall|verified" $base/$t/unseen_s21.md | head -6
done
