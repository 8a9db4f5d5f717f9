#!/usr/bin/env bash
# One GPU-host job (device tool, carry .whl): the fuzzer on CUDA for SECONDS, its report in $OUT/fuzz.md, its log in $OUT/fuzz.log;
# then, here: cp $OUT/fuzz.md results/fuzz.md. With other jobs of the same call, GPUS picks its GPU (e.g. GPUS=1).
#   bash scripts/gpu_fuzz.sh SECONDS [SEED]
set -u
source scripts/gpu_host.sh
CUDA_VISIBLE_DEVICES=${GPUS%%,*} python3 -m search.fuzz --device CUDA --seconds ${1:-120} --seed ${2:-0} --workers $W --out $OUT/fuzz.md \
  2>&1 | tee -a $OUT/fuzz.log | tail -20
