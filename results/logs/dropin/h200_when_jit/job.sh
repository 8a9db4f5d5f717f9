#!/usr/bin/env bash
# one nvidia-h200 call (carry .whl and out/call): drop-in on an idle H200 against BEAM=2 searched in the same call: GPT-2 generation
# with KERNTUNE_WHEN=jit (its first run also runs the plain program and BEAM=2; the later runs are seeded with those), at first sight
# (the default), jit again; then ViT-Ti/16 inference with jit, its plain and BEAM=2 runs fresh; BEAM=2's picks replayed beside each
set -u
source scripts/gpu_host.sh > $OUT/host.txt 2>&1
k=0
run() {   # when program deadline seed-dir
  k=$((k+1)); d=$OUT/$1_$2_$k; mkdir -p $d/runs; [ -n "${4:-}" ] && cp $4/$2.default.json $4/$2.beam2*.json $d/runs/
  CUDA_VISIBLE_DEVICES=0 timeout $(( $3 + 10 )) python3 scripts/bench_dropin.py --device CUDA --out $d --deadline $3 --workers $W \
    --programs $2 --modes default,kerntune,beam2,beam2_replay --kt-env KERNTUNE_WHEN=$1 > $d/log 2>&1
  grep -E "^\| $2" $d/dropin.md | sed "s/^/$1 /"
  python3 -c "import json; r=json.load(open('$d/runs/$2.kerntune.report.json')); print('$1 $2', r['search_s'], r['phases'], r['waits'], r['timed'], sum(k.get('compiled', 0) for k in r['kernels']), {k: v for k, v in r.items() if k in ('tuned', 'replayed', 'default', 'seen_once')})" 2>&1 | cut -c1-600
}
run jit gpt2_gen 200; G=$OUT/jit_gpt2_gen_1/runs
run first gpt2_gen 80 $G; run jit gpt2_gen 70 $G; run jit vit_infer 170
tar czf /tmp/all.tgz -C $OUT . && find $OUT -mindepth 1 -maxdepth 1 -exec rm -rf {} + && mv /tmp/all.tgz $OUT/all.tgz
