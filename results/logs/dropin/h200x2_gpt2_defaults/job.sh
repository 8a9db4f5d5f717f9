#!/usr/bin/env bash
# one nvidia-h200-x2 call (carry .whl, out/call; run from the repository root): GPT-2 generation's drop-in (KERNTUNE_WHEN=jit) at the
# defaults, two runs side by side, one per GPU, in fresh processes with empty caches, each replayed against BEAM=2's picks in 5 pairs
# of turns: the spread of the one run at these defaults (results/logs/dropin/h200_when_jit/job_gpt2_defaults.sh), seeded with that
# call's H200 plain run and BEAM=2 search (92.8 s). First, here:
#   mkdir -p /tmp/s && tar xzf results/logs/dropin/h200_when_jit/all_gpt2_defaults.tgz -C /tmp/s && for v in a b; do
#   mkdir -p out/call/gpt2_$v/runs && cp /tmp/s/gpt2_h200/runs/gpt2_gen.{default,beam2,beam2.picks,beam2.searched}.json out/call/gpt2_$v/runs/; done
# Its call of 2026-11-30 (logs c1) was seeded from results/dropin_gpt2_seed instead, an H100 run (BEAM=2 79.6 s): its BEAM=2 picks
# were tuned on an H100, so its KT/BEAM step ratios (turns 0.934, 0.940) compare against those, not against BEAM=2 on the H200.
# Its second call (logs c2, 2026-11-30), seeded as above: turns 0.951 and 0.986 at 6.6% and 7.0% of BEAM=2's search (results/dropin.md).
set -u
source scripts/gpu_host.sh > /tmp/host.txt 2>&1
arm() {   # arm TAG GPU
  local d=$PWD/out/call/gpt2_$1
  CUDA_VISIBLE_DEVICES=$2 timeout 400 python3 scripts/bench_dropin.py --device CUDA --out $d --deadline 390 --workers $W \
    --programs gpt2_gen --modes default,kerntune,beam2,beam2_replay,turns --turns 5 --kt-env KERNTUNE_WHEN=jit > $d/log 2>&1
  echo "exit $?" >> $d/log
}
arm a 0 & arm b 1 & wait
for d in gpt2_a gpt2_b; do echo "$d $(grep -E "^\| gpt2_gen" out/call/$d/dropin.md | head -1)"; done
cp /tmp/host.txt out/call/; tar czf $OUT/all.tgz -C out/call gpt2_a gpt2_b host.txt
