#!/usr/bin/env bash
# one nvidia-h200 call (carry .whl and out/call; run from the repository root): drop-in's CNN training step with Beam.group_best off
# (KERNTUNE_BEAM='{"group_best": false}') and on (today's default), in turn on one GPU (ORDER="off on", or "on off" for the next
# call), each in fresh processes with empty caches, its kernels replayed against BEAM=2's picks in 3 pairs of turns. BEAM=2's search
# and plain run come from the H200 call of ../h200_cnn (435.8 s): nothing is searched again. First, here:
#   mkdir -p /tmp/a && tar xzf results/logs/dropin/h200_cnn/all.tgz -C /tmp/a && for v in off on; do mkdir -p out/call/cnn_$v && \
#   cp -r /tmp/a/cnn_h200/runs out/call/cnn_$v/ && rm -f out/call/cnn_$v/runs/*.{kerntune,replay,turns,beam2_replay,kernels}* \
#   out/call/cnn_$v/runs/*.lock; done
set -u
source scripts/gpu_host.sh > /tmp/host.txt 2>&1
arm() {   # arm TAG KERNTUNE_BEAM
  local d=$PWD/out/call/cnn_$1
  CUDA_VISIBLE_DEVICES=0 timeout 260 python3 scripts/bench_dropin.py --device CUDA --out $d --deadline 250 --workers $W --programs cnn_train \
    --modes default,kerntune,beam2,beam2_replay,turns --turns 3 --kt-env "KERNTUNE_BEAM=$2" > $d/log 2>&1
  echo "exit $?" >> $d/log
}
# Any other A/B of Beam parameters: TAGS, A and B, e.g. TAGS="def rf" A='{}' B='{"ready_first": true}' (the set-up above with those
# tags in place of "off on"); ORDER then names the tags. Beam.ready_first's call (logs ../h200_cnn_ready_first/c1) was that example.
T=(${TAGS:-off on}); A=${A:-'{"group_best": false}'}; B=${B:-'{}'}
for v in ${ORDER:-${T[*]}}; do if [ $v = ${T[0]} ]; then arm $v "$A"; else arm $v "$B"; fi; done
for t in ${T[*]}; do echo "cnn_$t $(grep -E "^\| cnn_train" out/call/cnn_$t/dropin.md | head -1)"; done
cp /tmp/host.txt out/call/; tar czf $OUT/all.tgz -C out/call $(for t in ${T[*]}; do echo cnn_$t; done) host.txt
