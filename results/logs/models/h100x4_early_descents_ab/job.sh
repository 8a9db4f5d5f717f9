#!/usr/bin/env bash
# one nvidia-h100-x4 call (carry .whl, out/call): the six unseen networks tuned with the model descents started while the
# defaults are timed, their window refilled as each ends, every kernel guessing its next round as before (GPUs 0-1),
# (out/call/old: HEAD's search/ files, GPUs 2-3), side by side at equal load; BEAM=2 from results/unseen_models_cache
bash results/logs/models/code_ab.sh   # new code on GPUs 0-1, old on 2-3
