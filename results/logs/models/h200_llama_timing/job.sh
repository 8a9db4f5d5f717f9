#!/usr/bin/env bash
# one nvidia-h200 call (carry .whl; run from the repository root): where the LLaMA block's 1.09-1.11x against BEAM=2 lies, and whether
# timing candidates warm closes it. First kernels.py (each kernel's hand-coded config, the learned pick of the 2026-12-02 networks
# call c3 and BEAM=2's pick, side by side, cold and warm: kernels.json); then tune-model on the block, each run fresh, with
# --timing warm (warm) and at the defaults (def), in ORDER, BEAM=2's cached picks re-timed in each run (a development use of an
# unseen network). Then, here: unpack each archive; python scripts/bench_models.py --phases .../cache/*.tune.json
set -u
python3 results/logs/models/h200_llama_timing/kernels.py $OUT/kernels.json > $OUT/kernels.log 2>&1; tail -12 $OUT/kernels.log
i=0
for v in ${ORDER:-warm def def warm}; do
  i=$((i+1)); E=""; [ $v = warm ] && E="--timing warm"
  GPUS=0 OUT=$OUT/r$i.$v SRC=results/unseen_models_cache_h200 FINAL= bash scripts/gpu_models.sh llama_block_s512_fp16 200 30 "$E" > $OUT/r$i.$v.log 2>&1
  grep -E "^latency|tune-model:" $OUT/r$i.$v.log | cut -c1-220
done
cd $OUT && tar czf all.tgz r* kernels.* && rm -rf r*.warm r*.def
