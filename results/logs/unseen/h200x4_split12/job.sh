#!/usr/bin/env bash
# one nvidia-h200-x4 call (carry .whl, out/call): the fresh split 12 of the unseen kernels with the shipped code and model on the
# issue's own card kind, BEAM=2's searches first on every GPU and the learned searches (two runs each) after a barrier
set -u
BEAM_FIRST=1 GPUS=0,1,2,3 SPLIT=12 bash scripts/gpu_unseen.sh 440 "" --shuffle 0 --rounds 3 --together 8 --repeats 2 > /tmp/job.log 2>&1; cp /tmp/job.log $OUT/job.log
tail -60 $OUT/job.log
