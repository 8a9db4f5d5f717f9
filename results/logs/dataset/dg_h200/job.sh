#!/usr/bin/env bash
# nvidia-h200 call (carry .whl; run from the repository root): measure the corpus's sampled-tier dilated and grouped convs (58
# variants; splits 1-23 put these families over 1.2x BEAM=2 most often and the H200 store held 4 dilated, no grouped ones) into
# $OUT/dg.sqlite, half the configs proposed by the shipped model. Everything goes back as $OUT/dg.tgz. As run, 2026-11-29 (T=470, 15
# workers): 3,021 rows (2,990 ok, 6.8 ok/s), 36 of the 58 variants done (dg.log); kept as a store beside the base, not a shard:
#   python -m dataset.shard export dg.sqlite --out dataset/data/cuda_h200_dilated_grouped.sqlite.gz
# The model retrained with it did not beat the shipped one on fresh split 24 (results/logs/unseen/s24_h200/job.sh).
set -u
N=$(python3 -c "from dataset.corpus import CORPUS; print(','.join(v.name for v in CORPUS if v.tier=='sampled' and v.workload=='conv2d' and (dict(v.params).get('dilation',1)>1 or 1<dict(v.params).get('groups',1)<dict(v.params).get('c',0))))")
mkdir -p /tmp/dg
timeout ${T:-480} python3 -m models.generate --device CUDA --kernels "$N" --samples-per-kernel ${S:-100} --time-budget $((${T:-480}-30)) \
  --workers 15 --model models/cost_model_sm_90.txt --out /tmp/dg/dg.sqlite --no-progress > /tmp/dg/dg.log 2>&1
tail -20 /tmp/dg/dg.log; tar czf $OUT/dg.tgz -C /tmp/dg .
