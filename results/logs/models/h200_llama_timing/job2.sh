#!/usr/bin/env bash
# one nvidia-h200 call (carry .whl; run from the repository root), after job.sh's (c1): bisect.py (which kernel of c1's run r4.warm
# made the block's output differ from torch), then tune-model on the block, each run fresh, with --second-share 0.05 (s2: a kernel of
# 5% of the block or more gets a second round before any kernel a third) and at the defaults (def), in ORDER, BEAM=2's cached picks
# re-timed in each run (a development use of an unseen network)
set -u
timeout 200 python3 results/logs/models/h200_llama_timing/bisect.py $OUT/bisect.json > $OUT/bisect.log 2>&1; grep -v Warn $OUT/bisect.log | tail -25
i=0
for v in ${ORDER:-s2 def def s2}; do
  i=$((i+1)); E=""; [ $v = s2 ] && E="--second-share ${S2:-0.05}"
  GPUS=0 OUT=$OUT/r$i.$v SRC=results/unseen_models_cache_h200 FINAL= bash scripts/gpu_models.sh llama_block_s512_fp16 200 30 "$E" > $OUT/r$i.$v.log 2>&1
  grep -E "^latency|tune-model:" $OUT/r$i.$v.log | cut -c1-220
done
cd $OUT && tar czf all.tgz r* bisect.* && rm -rf r*.s2 r*.def r*.log
