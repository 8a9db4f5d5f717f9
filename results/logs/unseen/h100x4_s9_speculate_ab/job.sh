#!/usr/bin/env bash
# one nvidia-h100-x4 call (carry .whl, out/call): split 9 again (BEAM=2's picks re-timed from results/unseen_s9_beam2.json, not
# searched), three learned runs per kernel side by side: runs 0-1 the default (speculation only while compile workers are idle),
# run 2 with speculate_idle off (the earlier behaviour); 8 configurations searched together, as before
set -u
GPUS=0,1,2,3 SPLIT=9 bash scripts/gpu_unseen.sh 500 "" --shuffle 0 --rounds 3 --together 8 --repeats 3 --variant '{"speculate_idle": false}'
