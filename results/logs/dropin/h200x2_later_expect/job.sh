#!/usr/bin/env bash
# one nvidia-h200-x2 call (carry .whl, out/call; run from the repository root): the later-round cap's estimate of a kernel's first
# later round, this tree's (new: the mean later round's seconds) against 5459fa2's (old: its first round's seconds), each arm on
# its own GPU side by side, in fresh processes with empty caches, each arm's KERNTUNE kernels replayed against BEAM=2's picks in
# pairs of turns on its GPU: the CNN training step (KERNTUNE=1 at first sight, 3 pairs; new on GPU 0), then ViT-Ti/16 under
# TinyJit (KERNTUNE_WHEN=jit, 2 pairs; new on GPU 1). BEAM=2's searches and plain runs come from earlier H200 calls, so nothing is
# searched again: results/logs/dropin/h200_cnn/all.tgz (435.8 s) and h200_when_jit/all.tgz (jit_vit_infer_4, 109.0 s). First, here:
#   mkdir -p out/call/old /tmp/a /tmp/b && git show 5459fa2:search/task_scheduler.py > out/call/old/task_scheduler.py && \
#   tar xzf results/logs/dropin/h200_cnn/all.tgz -C /tmp/a && tar xzf results/logs/dropin/h200_when_jit/all.tgz -C /tmp/b && \
#   for v in new old; do mkdir -p out/call/cnn_$v out/call/vit_$v && cp -r /tmp/a/cnn_h200/runs out/call/cnn_$v/ && \
#   cp -r /tmp/b/jit_vit_infer_4/runs out/call/vit_$v/ && rm -f out/call/*_$v/runs/*.{kerntune,replay,turns,beam2_replay,kernels}* \
#   out/call/*_$v/runs/*.lock; done
set -u
source scripts/gpu_host.sh > /tmp/host.txt 2>&1
R=$PWD; rm -rf /tmp/old && mkdir /tmp/old && cp -a dataset models search scripts pyproject.toml /tmp/old/ && cp out/call/old/task_scheduler.py /tmp/old/search/
arm() {   # arm PROGRAM TAG GPU SECONDS TURNS [bench_dropin args]
  local d=$R/out/call/$1_$2 w=$R; [ $2 = old ] && w=/tmp/old
  (cd $w && PYTHONPATH=/tmp/site:$w CUDA_VISIBLE_DEVICES=$3 timeout $(($4 + 10)) python3 scripts/bench_dropin.py --device CUDA --out $d \
    --deadline $4 --workers $W --programs ${P[$1]} --modes default,kerntune,beam2,beam2_replay,turns --turns $5 "${@:6}" > $d/log 2>&1
   echo "exit $?" >> $d/log)
}
declare -A P=([cnn]=cnn_train [vit]=vit_infer)
a=0 b=1; [ -n "${SWAP:-}" ] && a=1 b=0   # SWAP=1: each arm on the other GPU (c2)
arm cnn new $a 220 3 & arm cnn old $b 220 3 & wait
arm vit old $a 130 2 --kt-env KERNTUNE_WHEN=jit & arm vit new $b 130 2 --kt-env KERNTUNE_WHEN=jit & wait
for d in cnn_new cnn_old vit_new vit_old; do echo "$d $(grep -E "^\| (cnn_train|vit_infer)" out/call/$d/dropin.md | head -1)"; done
cp /tmp/host.txt out/call/; tar czf $OUT/all.tgz -C out/call cnn_new cnn_old vit_new vit_old host.txt
