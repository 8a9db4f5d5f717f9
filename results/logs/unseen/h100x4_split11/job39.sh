#!/usr/bin/env bash
# one nvidia-h100-x4 call (carry .whl): split 11 resumed (RESUME=1: only the configurations the first call did not reach), BEAM=2's
# searches first on every GPU and the learned searches after a barrier, the shipped code and model
set -u
RESUME=1 BEAM_FIRST=1 GPUS=0,1,2,3 SPLIT=11 bash scripts/gpu_unseen.sh 480 "" --shuffle 0 --rounds 3 --together 8 --repeats 2 > /tmp/job.log 2>&1; cp /tmp/job.log $OUT/job.log
tail -60 $OUT/job.log
