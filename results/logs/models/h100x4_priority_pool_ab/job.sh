#!/usr/bin/env bash
# one nvidia-h100-x4 call (carry .whl, out/call): the six unseen networks tuned with the compile pool's queue ranked by priority
# (search.pool: a round's own work, then rounds readied ahead, then speculative guesses; GPUs 0-1) and with the previous code
# (out/call/old: search/beam.py, context.py, measure.py at 00cd948, a first-come-first-served queue; GPUs 2-3), side by side at equal load; BEAM=2 from
# results/unseen_models_cache
bash results/logs/models/code_ab.sh   # new code on GPUs 0-1, old on 2-3
