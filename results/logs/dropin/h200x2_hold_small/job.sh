#!/usr/bin/env bash
# one nvidia-h200-x2 call (carry .whl, out/call; run from the repository root): drop-in's CNN training step (KERNTUNE=1 at first
# sight) at the defaults (def) and with KERNTUNE_HOLD_SMALL=1 (hold: kernels too small for a round at the defaults' time keep their
# first batches uncompiled until the scheduler comes to them), each arm on its own GPU side by side (SWAP=1: each on the other GPU,
# the second call), in fresh processes with empty caches, each arm's kernels replayed against BEAM=2's picks in 3 pairs of turns.
# Why: at the defaults its 43 kernels left small compiled 409 configs nobody timed, 39% of the step's 1,055 compiles, and its search
# waited 23.2 of 40.1 s on compiles (results/logs/dropin/h200x2_later_expect/c2). BEAM=2's search (435.8 s) and plain run come from
# results/logs/dropin/h200_cnn/all.tgz. First, here:
#   mkdir -p /tmp/a && tar xzf results/logs/dropin/h200_cnn/all.tgz -C /tmp/a && for v in def hold; do mkdir -p out/call/cnn_$v && \
#   cp -r /tmp/a/cnn_h200/runs out/call/cnn_$v/ && rm -f out/call/cnn_$v/runs/*.{kerntune,replay,turns,beam2_replay,kernels}* \
#   out/call/cnn_$v/runs/*.lock; done
set -u
source scripts/gpu_host.sh > /tmp/host.txt 2>&1
arm() {   # arm TAG GPU [bench_dropin args]
  local d=$PWD/out/call/cnn_$1
  CUDA_VISIBLE_DEVICES=$2 timeout 230 python3 scripts/bench_dropin.py --device CUDA --out $d --deadline 220 --workers $W \
    --programs cnn_train --modes default,kerntune,beam2,beam2_replay,turns --turns 3 "${@:3}" > $d/log 2>&1
  echo "exit $?" >> $d/log
}
a=0 b=1; [ -n "${SWAP:-}" ] && a=1 b=0
arm def $a & arm hold $b --kt-env KERNTUNE_HOLD_SMALL=1 & wait
for d in cnn_def cnn_hold; do echo "$d $(grep -E "^\| cnn_train" out/call/$d/dropin.md | head -1)"; done
cp /tmp/host.txt out/call/; tar czf $OUT/all.tgz -C out/call cnn_def cnn_hold host.txt
