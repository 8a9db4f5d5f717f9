#!/usr/bin/env bash
# One GPU-host call (device tool, carry .whl and the selection): dataset.retime run on SELECTION, one shard per GPU (all, or GPUS=2,3),
# results in $OUT/retimed.I.json (resumable: carry them back in, in RESUME_DIR, to go on). Then, here:
#   python -m dataset.retime apply dataset/data/cuda.sqlite retimed.*.json
#   python -m models.retime select dataset/data/cuda.sqlite --model models/cost_model_sm_90.txt --top 3 --random 1 --out out/retime_cuda.json.gz
#   (consolidate: --best 6 --top 3 --random 3 --held-out 5 [--skip-consolidated], each kernel's 6 fastest configs timed again together)
#   bash scripts/gpu_retime.sh out/retime_cuda.json.gz [SECONDS] [RESUME_DIR]
set -u
mkdir -p "$OUT"
source scripts/gpu_host.sh
i=0; pids=()
for g in ${GPUS//,/ }; do
  [ -n "${3:-}" ] && [ -f "$3/retimed.$i.json" ] && cp "$3/retimed.$i.json" $OUT/
  CUDA_VISIBLE_DEVICES=$g python3 -m dataset.retime run "$1" --device CUDA --workers $W --time-budget ${2:-480} --shard $i/$N \
    --out $OUT/retimed.$i.json > $OUT/retime.$i.log 2>&1 &
  pids+=($!); i=$((i+1))
done
for p in "${pids[@]}"; do wait $p; done
tail -n 3 $OUT/retime.*.log
