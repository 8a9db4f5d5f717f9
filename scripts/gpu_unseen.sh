#!/usr/bin/env bash
# One GPU-host call (device tool, carry .whl): scripts/bench_unseen.py on configurations LO:HI, into $OUT (unseen.json/.md,
# unseen_beam2.json, unseen.log). RESUME=1 starts from results/unseen.json and measures only the kernels it lacks; BEAM=2's picks
# in results/unseen_beam2.json are re-timed, not searched again. Then, here: copy $OUT's unseen*.json to results/ and
#   python scripts/bench_unseen.py --replot results/unseen.json
#   usage: bash scripts/gpu_unseen.sh SECONDS [LO:HI] [BENCH_ARGS...]
set -u
source scripts/gpu_host.sh
[ -f results/unseen_beam2.json ] && cp results/unseen_beam2.json $OUT/
[ "${RESUME:-0}" = 1 ] && [ -f results/unseen.json ] && cp results/unseen.json $OUT/ && R=--resume || R=
timeout ${1:-540} python3 scripts/bench_unseen.py --device CUDA --workers $W --out $OUT --beam-cache $OUT/unseen_beam2.json \
  ${2:+--range $2} $R "${@:3}" 2>&1 | tee -a $OUT/unseen.log | grep -v "^ *kernel"
