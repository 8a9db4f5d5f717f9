#!/usr/bin/env bash
# One GPU-host call (device tool, carry .whl and the selection): dataset.retime run on SELECTION, results in $OUT/retimed.json
# (resumable: carry it back in as RESUME to go on). Then, here: python -m dataset.retime apply dataset/data/cuda.sqlite retimed.json
#   python -m dataset.retime select dataset/data/cuda.sqlite --model models/cost_model_sm_90.txt --top 3 --out out/retime_cuda.json.gz
#   bash scripts/gpu_retime.sh out/retime_cuda.json.gz [SECONDS] [RESUME]
set -u
source scripts/gpu_host.sh
[ -n "${3:-}" ] && cp "$3" $OUT/retimed.json
python3 -m dataset.retime run "$1" --device CUDA --workers 15 --time-budget ${2:-480} --out $OUT/retimed.json
