#!/usr/bin/env bash
# one nvidia-h200 call (carry .whl; run from the repository root): first the LLaMA gate/up question (jitdiff.py, ~60 s), then
# drop-in's guard on the GPU: the CNN training step with KERNTUNE=1 in fresh processes with empty caches, at the defaults (guard on)
# and with KERNTUNE_GUARD=0, alternating (on, off, on, off) while T seconds last; each run's search seconds, first result and
# steady step in $OUT/all.tgz (cnn_on1, cnn_off1, ...). ViT-Ti and GPT-2 tune under a TinyJit capture, where the guard does not run.
#   T=280 bash results/logs/dropin/h200_guard_ab/job.sh   (logs c1; jitdiff.py's in results/logs/models/h200_llama_timing/c5_jitdiff)
set -u
source scripts/gpu_host.sh > /tmp/host.txt 2>&1
mkdir -p out/call
timeout 150 python3 results/logs/models/h200_llama_timing/jitdiff.py out/call/jitdiff.json > out/call/jitdiff.log 2>&1; echo "jitdiff exit $?" >> out/call/jitdiff.log
tail -5 out/call/jitdiff.log
end=$((SECONDS + ${T:-300}))
for i in 1 2; do for g in on off; do
  left=$((end - SECONDS)); [ $left -lt 60 ] && break 2
  d=out/call/cnn_$g$i; mkdir -p $d; E=(); [ $g = off ] && E=(--kt-env KERNTUNE_GUARD=0)
  timeout $((left + 10)) python3 scripts/bench_dropin.py --device CUDA --out $d --deadline $left --workers $W --programs cnn_train \
    --modes kerntune "${E[@]}" > $d/log 2>&1; echo "exit $?" >> $d/log
  echo "$d $(grep -E "^\| cnn_train" $d/dropin.md | head -1)"
done; done
cp /tmp/host.txt out/call/; tar czf $OUT/all.tgz -C out call
