#!/usr/bin/env bash
# one nvidia-h100-x4 call (carry .whl): the fresh split 11 of the unseen kernels with the shipped code and model, BEAM=2's searches
# first on every GPU and the learned searches after a barrier (no search timed while the other kind loads the host's cores)
set -u
BEAM_FIRST=1 GPUS=0,1,2,3 SPLIT=11 bash scripts/gpu_unseen.sh 450 "" --shuffle 0 --rounds 3 --together 8 --repeats 2 > /tmp/job.log 2>&1; cp /tmp/job.log $OUT/job.log
tail -60 $OUT/job.log
