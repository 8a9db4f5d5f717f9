#!/usr/bin/env bash
# nvidia-h200, fresh split 23 in two calls (carry .whl; run from the repository root), the shipped code and model:
#   c1: SPLIT=23 BEAM_ONLY=1 T=530 bash results/logs/unseen/s19_h200/job.sh   (BEAM=2 for all 20 kernels, 263 s; -> results/unseen_s23_beam2.json)
#   c2: SPLIT=23 R=2 T=500 bash results/logs/unseen/s19_h200/job.sh           (two learned runs, BEAM=2's picks re-timed beside them)
SPLIT=23 BEAM_ONLY=${BEAM_ONLY:-} R=${R:-2} T=${T:-500} bash results/logs/unseen/s19_h200/job.sh
