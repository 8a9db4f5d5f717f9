#!/usr/bin/env bash
# one nvidia-h200 call (carry .whl), after the search's compiled answers went into tinygrad's compile cache (dataset.compile.precompiled):
# the CNN training step plain and with KERNTUNE=1 at the defaults (guard on; bench_dropin compares the two runs' outputs), then the
# same with KERNTUNE_GUARD=0, while T seconds last; each arm's files into $OUT as one archive, cnn_on.tgz, cnn_off.tgz (the host
# returns 8 files; a call cut short returns what finished). Logs: c2 (--modes kerntune; its cnn_on files did not come back: more
# than 8 files, before the archives; c2/call_output.txt has what the call printed).
#   T=150 bash results/logs/dropin/h200_guard_ab/job2.sh
set -u
source scripts/gpu_host.sh > $OUT/host.txt 2>&1
end=$((SECONDS + ${T:-150}))
for g in on off; do
  left=$((end - SECONDS)); [ $left -lt 55 ] && break
  d=$OUT/cnn_$g; mkdir -p $d; E=(); [ $g = off ] && E=(--kt-env KERNTUNE_GUARD=0)
  timeout $((left + 10)) python3 scripts/bench_dropin.py --device CUDA --out $d --deadline $left --workers $W --programs cnn_train \
    --modes default,kerntune "${E[@]}" > $d/log 2>&1; echo "exit $?" >> $d/log
  echo "$d $(grep -E "^\| cnn_train" $d/dropin.md | head -1)"; grep "seconds:" $d/log
  rm -f $d/runs/*.lock; tar czf $OUT/cnn_$g.tgz -C $OUT cnn_$g && rm -rf $d
done
