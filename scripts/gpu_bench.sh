#!/usr/bin/env bash
# One GPU-host call (device tool, carry .whl): scripts/bench_search.py on every GPU of the host, one op per GPU at a time, slowest
# ops first. Results land in $OUT (search_bench.json/.md, bench.log); copy them to results/ and plot there with
#   python scripts/bench_search.py --replot results/search_bench.json
set -u
source scripts/gpu_host.sh
# slowest first (BEAM=2 + BEAM=4 seconds per op in the first call: conv3x3_s1 318, attention 277, conv7x7_s2 195, gemm4096 87)
OPS=conv3x3_s1,conv3x3_s2,attention,conv7x7_s2,gemm4096,conv1x1,gemm2048_fp32,bmm,depthwise3x3_fp32,softmax_fp32,layernorm_fp32
timeout ${1:-560} python3 scripts/bench_search.py --model models/cost_model_sm_90_nosuite.txt --device CUDA --gpus $N --workers 15 \
  --ops ${2:-$OPS} --no-plot --out $OUT ${3:-}
tail -40 $OUT/bench.log
