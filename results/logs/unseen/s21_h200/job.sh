#!/usr/bin/env bash
# nvidia-h200 calls (carry .whl and out/rtm; run from the repository root): fresh split 21, whose BEAM=2 searches ran in a first call
# (`SPLIT=21 BEAM_ONLY=1 T=290 bash results/logs/unseen/s19_h200/job.sh`, results/unseen_s21_beam2.json, re-timed here). Two learned
# runs with the shipped model (a) and two with the model retrained on the store whose 185 kernels under 20 us were timed again (b:
# out/rtm/cost_model_sm_90.*, made here by `python -m dataset.retime apply COPY_OF_cuda.sqlite results/logs/retime_small20_h200/retimed.json.gz`
# and the shipped model's own command, models/cost_model_sm_90.json "command", on that copy with the shards beside it), each model in
# a process of its own (both with the shipped history), in ORDER (default "a b"; the second call "b a"), each into $OUT/TAG.
set -u
base=$OUT
for t in ${ORDER:-a b}; do
  M=models/cost_model_sm_90.txt; [ $t = b ] && M=out/rtm/cost_model_sm_90.txt
  mkdir -p $base/$t
  OUT=$base/$t BEAM_FIRST=1 SPLIT=21 bash scripts/gpu_unseen.sh ${T:-270} "" --shuffle 0 --rounds 3 --together 8 --repeats ${R:-2} \
    --model $M > $base/$t.log 2>&1
  grep -E "geomean|wall|verified" $base/$t/unseen_s21.md | head -6
done
