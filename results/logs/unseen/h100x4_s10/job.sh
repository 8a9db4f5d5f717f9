#!/usr/bin/env bash
# one nvidia-h100-x4 call (carry .whl, out/call): fresh split 10 of the unseen kernels on GPUs 0-3, the shipped model with a user's
# defaults, two learned runs per kernel (for the spread), 8 configurations searched together as tune-model does; RESUME=1 on a
# later call measures what this one did not reach (carry results/unseen_s10*.json in the tree); 330 s a GPU: this call fits the
# device time left, and a cut split goes on from its results
set -u
GPUS=0,1,2,3 SPLIT=10 RESUME=${RESUME:-0} bash scripts/gpu_unseen.sh 330 "" --shuffle 0 --rounds 3 --together 8 --repeats 2
