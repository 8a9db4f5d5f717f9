#!/usr/bin/env bash
# one nvidia-h100-x1 call (carry .whl and out/call): GPT-2 generation's steady-state step in fresh processes after drop-in tuning
# at first sight, tuning only TinyJit's captures (KERNTUNE_WHEN=jit), none (plain), and the jit run's cache replayed: the median
# step, then after gc.collect(), with the compile pool shut, gc frozen, gc off; cProfile of 20 steps (out/call/diag_step.py)
set -u
source scripts/gpu_host.sh > $OUT/host.txt 2>&1
d=$OUT/diag; mkdir -p $d
one() {   # label env...
  l=$1; shift
  env "$@" CUDA_VISIBLE_DEVICES=0 KERNTUNE_QUIET=1 timeout 150 python3 out/call/diag_step.py $l $d/$l.json > $d/$l.log 2>&1; tail -1 $d/$l.log
}
one jit1 KERNTUNE=$d/jit1.cache.json KERNTUNE_WHEN=jit
one first1 KERNTUNE=$d/first1.cache.json
one plain1
one jitreplay KERNTUNE_TUNED=$d/jit1.cache.json
one jit2 KERNTUNE=$d/jit2.cache.json KERNTUNE_WHEN=jit
one first2 KERNTUNE=$d/first2.cache.json
tar czf /tmp/all.tgz -C $OUT . && find $OUT -mindepth 1 -maxdepth 1 -exec rm -rf {} + && mv /tmp/all.tgz $OUT/all.tgz
