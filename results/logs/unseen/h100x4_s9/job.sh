#!/usr/bin/env bash
# one nvidia-h100-x4 call (carry .whl, out/call): fresh split 9 of the unseen kernels on GPUs 0-3, the shipped model with a user's
# defaults, two learned runs per kernel (for the spread), 8 configurations searched together as tune-model does; RESUME=1 on a
# later call measures what this one did not reach (carry results/unseen_s9*.json in the tree)
set -u
GPUS=0,1,2,3 SPLIT=9 RESUME=${RESUME:-0} bash scripts/gpu_unseen.sh 500 "" --shuffle 0 --rounds 3 --together 8 --repeats 2
