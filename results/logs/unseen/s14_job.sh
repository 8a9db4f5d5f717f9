#!/usr/bin/env bash
# one nvidia-h200-x4 call (carry .whl, out/call): the fresh split 14 at the new defaults (group_branch, noise_k 1.0), two runs, and
# two at the old ones (neither), BEAM=2's searches first on every GPU
set -u
BEAM_FIRST=1 GPUS=0,1,2,3 SPLIT=14 bash scripts/gpu_unseen.sh 480 "" --shuffle 0 --rounds 3 --together 8 --repeats 4 \
  --variant '[{"group_branch": false, "noise_k": 0.0}, {"group_branch": false, "noise_k": 0.0}]' > /tmp/job.log 2>&1; cp /tmp/job.log $OUT/job.log
grep -vE "Exception ignored|Traceback|ops.py|__del__|^ *kernel" $OUT/job.log | tail -40
