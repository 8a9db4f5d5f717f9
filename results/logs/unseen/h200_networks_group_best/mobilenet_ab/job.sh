#!/usr/bin/env bash
# one nvidia-h200 call (carry .whl): MobileNetV2 b1 fp32 tuned three times in turn, Beam.group_best off, on, off (na, nb, na2),
# each re-timing BEAM=2's cached picks beside it: whether group_best is what doubled its tuning seconds in ../c1 (20.9 s against
# 10.1-10.5 s on the 2 x H200 host), or the host. Logs nV.log, results rV.tgz.
set -u
for v in a b a2; do A='{"group_best":true}'; [ $v != b ] && A='{"group_best":false}'
  GPUS=0 OUT=/tmp/n$v CACHE=/tmp/nc$v SRC=results/unseen_models_cache_h200 FINAL= bash scripts/gpu_models.sh mobilenet_v2_b1_fp32 200 40 \
    "--strategy-args $A" > $OUT/n$v.log 2>&1
  cp /tmp/n$v/results.tgz $OUT/r$v.tgz; grep -E "^latency" $OUT/n$v.log | cut -c1-150
done
