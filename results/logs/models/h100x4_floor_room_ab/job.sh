#!/usr/bin/env bash
# one nvidia-h100-x4 call (carry .whl, out/call): the six unseen networks tuned with the forward look's room bounded by the model's
# fastest kernel (search.task_scheduler.room; GPUs 0-1) and with the previous scheduler (out/call/old: search/task_scheduler.py
# at 2102ab6; GPUs 2-3), side by side at equal load; both with the compile pool warmed before the tuning is timed (bench_models);
# BEAM=2 from results/unseen_models_cache
bash results/logs/models/code_ab.sh   # new code on GPUs 0-1, old on 2-3
