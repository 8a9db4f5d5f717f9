#!/usr/bin/env bash
# one nvidia-h100-x1 call (carry .whl and out/call): drop-in at the defaults on an idle H100, tuning only what TinyJit captures
# (KERNTUNE_WHEN=jit) and at first sight (KERNTUNE_WHEN=first, the default), alternating on GPT-2 generation, then ViT-Ti/16
# inference with KERNTUNE_WHEN=jit; runs seeded with each program's plain and BEAM=2 runs, BEAM=2's
# picks replayed beside each
set -u
source scripts/gpu_host.sh > $OUT/host.txt 2>&1
k=0
run() {   # when program deadline
  k=$((k+1)); d=$OUT/$1_$2_$k; mkdir -p $d/runs; cp results/dropin_gpt2_seed/* results/dropin_cnn_seed/* out/call/vitseed/* $d/runs/
  CUDA_VISIBLE_DEVICES=0 timeout $(( $3 + 10 )) python3 scripts/bench_dropin.py --device CUDA --out $d --deadline $3 --workers $W \
    --programs $2 --modes default,kerntune,beam2,beam2_replay --kt-env KERNTUNE_WHEN=$1 > $d/log 2>&1
  grep -E "^\| $2" $d/dropin.md | sed "s/^/$1 /"
  python3 -c "import json; r=json.load(open('$d/runs/$2.kerntune.report.json')); print('$1 $2', r['search_s'], r['phases'], r['waits'], r['timed'], sum(k.get('compiled', 0) for k in r['kernels']), {k: v for k, v in r.items() if k in ('tuned', 'replayed', 'default', 'seen_once')})" 2>&1 | cut -c1-600
}
run jit gpt2_gen 150; run first gpt2_gen 150; run jit gpt2_gen 150; run jit vit_infer 120
tar czf /tmp/all.tgz -C $OUT . && find $OUT -mindepth 1 -maxdepth 1 -exec rm -rf {} + && mv /tmp/all.tgz $OUT/all.tgz
