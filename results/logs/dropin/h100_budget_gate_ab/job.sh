#!/usr/bin/env bash
# one nvidia-h100-x1 call (carry .whl and out/call): drop-in at the defaults on an idle H100, GPT-2 generation and ViT-Ti/16
# inference, with rounds prepared only where the pooled budget pays for them and descents started while the defaults are timed
# (new) and with the previous code (old: out/call/old, HEAD's search/ files before them), alternating; runs seeded with each
# program's plain and BEAM=2 runs, BEAM=2's picks replayed beside each
set -u
source scripts/gpu_host.sh > $OUT/host.txt 2>&1
rm -rf /tmp/old && mkdir /tmp/old && cp -a dataset models search scripts results pyproject.toml /tmp/old/ && cp out/call/old/search/*.py /tmp/old/search/
run() {   # variant tree program
  d=$OUT/$1_$3; mkdir -p $d/runs; cp results/dropin_gpt2_seed/* out/call/vitseed/* $d/runs/
  ( cd $2 && PYTHONPATH=/tmp/site:$2 CUDA_VISIBLE_DEVICES=0 timeout 200 python3 scripts/bench_dropin.py --device CUDA --out $d --deadline 190 --workers $W \
    --programs $3 --modes default,kerntune,beam2,beam2_replay > $d/log 2>&1 )
  grep -E "^\| $3" $d/dropin.md | sed "s/^/$1 /"
  python3 -c "import json; r=json.load(open('$d/runs/$3.kerntune.report.json')); print('$1 $3', r['search_s'], r['phases'], r['waits'], r['timed'], sum(k.get('compiled', 0) for k in r['kernels']))"
}
for p in gpt2_gen vit_infer; do run new $PWD $p; run old /tmp/old $p; done
tar czf /tmp/all.tgz -C $OUT . && find $OUT -mindepth 1 -maxdepth 1 -exec rm -rf {} + && mv /tmp/all.tgz $OUT/all.tgz
