#!/usr/bin/env bash
# one nvidia-h100-x1 call (carry .whl and out/call): drop-in tuning only what TinyJit captures (KERNTUNE_WHEN=jit) on an idle H100:
# GPT-2 generation with 3 replay pairs (KERNTUNE's kernels and BEAM=2's picks in fresh processes, alternating which goes first),
# then the CNN training step; runs seeded with each program's plain and BEAM=2 runs, BEAM=2's picks replayed beside each
set -u
source scripts/gpu_host.sh > $OUT/host.txt 2>&1
run() {   # program deadline modes
  d=$OUT/jit_$1; mkdir -p $d/runs; cp results/dropin_gpt2_seed/* results/dropin_cnn_seed/* out/call/vitseed/* $d/runs/
  CUDA_VISIBLE_DEVICES=0 timeout $(( $2 + 10 )) python3 scripts/bench_dropin.py --device CUDA --out $d --deadline $2 --workers $W \
    --programs $1 --modes $3 --turns 3 --kt-env KERNTUNE_WHEN=jit > $d/log 2>&1
  grep -E "^\| $1" $d/dropin.md
  python3 -c "import json; r=json.load(open('$d/runs/$1.kerntune.report.json')); print('$1', r['search_s'], r['phases'], r['waits'], r['timed'], sum(k.get('compiled', 0) for k in r['kernels']), {k: v for k, v in r.items() if k in ('tuned', 'replayed', 'default', 'seen_once')})" 2>&1 | cut -c1-600
}
run gpt2_gen 280 default,kerntune,beam2,beam2_replay,turns
run cnn_train 220 default,kerntune,beam2,beam2_replay
tar czf /tmp/all.tgz -C $OUT . && find $OUT -mindepth 1 -maxdepth 1 -exec rm -rf {} + && mv /tmp/all.tgz $OUT/all.tgz
