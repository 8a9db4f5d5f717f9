#!/usr/bin/env bash
# One GPU-host call (device tool, carry .whl): scripts/bench_dropin.py on one GPU, drop-in tuning (KERNTUNE=1) against BEAM=2 on
# whole tinygrad programs, into $OUT: dropin.json/.md (every program's result so far), dropin.log, gpu.txt, runs.tgz (each run's
# result, BEAM=2's partial tinygrad cache and seconds, KERNTUNE's cache and per-kernel report). A call runs what fits in SECONDS,
# cheap runs first (every program plain, then KERNTUNE=1, then BEAM=2); the next call goes on from the last one's runs:
#   bash scripts/gpu_dropin.sh 560                                          # call 1
#   mkdir -p results/dropin_runs && tar xzf FILES_AT/runs.tgz -C results/dropin_runs --strip-components=1
#   RESUME=results/dropin_runs bash scripts/gpu_dropin.sh 560               # call 2, 3, ...: until dropin.md has no "missing"
# then here: cp FILES_AT/dropin.json FILES_AT/dropin.md results/ (and results/dropin_runs can go).
#   usage: [RESUME=DIR] bash scripts/gpu_dropin.sh [SECONDS] [PROGRAMS] [BENCH_ARGS...]
set -u
source scripts/gpu_host.sh
mkdir -p $OUT/runs
[ -n "${RESUME:-}" ] && cp -r $RESUME/. $OUT/runs/
export CUDA_VISIBLE_DEVICES=${GPUS%%,*}   # one GPU: every program and mode on the same card
S=${1:-560}
timeout $S python3 scripts/bench_dropin.py --device CUDA --out $OUT --deadline $((S - 25)) --workers $W ${2:+--programs $2} "${@:3}" 2>&1 \
  | tee -a $OUT/dropin.log | grep --line-buffered -v "timed/s"
# the host returns a few files: the runs go back as one archive
tar czf /tmp/dropin_runs.tgz -C $OUT runs && rm -rf $OUT/runs && mv /tmp/dropin_runs.tgz $OUT/runs.tgz
