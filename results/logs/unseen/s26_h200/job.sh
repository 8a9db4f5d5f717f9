#!/usr/bin/env bash
# nvidia-h200 calls (carry .whl and out/noopts; run from the repository root): fresh split 26, the A/B of the shipped model against
# b, the same recipe trained with the opt-sequence columns held at 0 (train-cost-model --mask opts: those columns make the shipped
# model score SWAP children up, CHANGELOG 2026-11-29), in the same process, kernel by kernel. Model b, made here (35 min, 2 cores):
#   train-cost-model dataset/data/cuda.sqlite --with dataset/data/cuda_h100.sqlite.gz --params models/cost_model_sm_90.json --no-check \
#     --blend 0.7 --threads 2 --mask opts --out out/noopts/cost_model_sm_90.txt && rm -f out/noopts/history_sm_90.json out/noopts/train.log
# c1: `BEAM_ONLY=1 T=540 bash results/logs/unseen/s26_h200/job.sh` (BEAM=2 first; copy $OUT's unseen_s26_beam2.json out of s26.tgz
# into results/); c2: `T=540 bash results/logs/unseen/s26_h200/job.sh`: four learned runs, 0 and 2 the shipped model, 1 and 3 model b,
# every run re-timed side by side. V replaces the variants (a JSON list, the last runs').
# SPLIT=27: the fresh split 27's two calls, the same way (logs in ../s27_h200/; $OUT/s27.tgz).
# SPLIT=28 (logs in ../s28_h200/): V='[{"model": "out/pen2/cost_model_sm_90.txt"}, {}, {"model": "out/pen2/cost_model_sm_90.txt"}]',
# out/pen2 the shipped model with its compile penalty at weight 2 (carry out/pen2; made here: mkdir -p out/pen2 && cp
# models/cost_model_sm_90.* out/pen2/, then in out/pen2/cost_model_sm_90.json compile_model.penalty = {"cap_s": 1.0, "weight": 2.0}).
# SPLIT=29 (logs in ../s29_h200/c1-c3; 29 is the frozen list's own seed, not a fresh split: bench_unseen refuses it since): its BEAM=2 outlasted one call, so c1 `BEAM_ONLY=1 SPLIT=29 T=530`, c2 `V='[{}, {}]' SPLIT=29`
# (BEAM_FIRST searched the split's remaining kernels until the limit: no learned run), c3 `CACHED=1 R=2 V='[{}]' SPLIT=29 T=470`: the learned
# runs at the defaults (V: all {}) on the configurations whose kernels all have BEAM=2's pick cached (--cached-beam-only), no BEAM=2.
# BEAM_S=SECONDS: BEAM=2 (what the cache lacks) for that long, then the learned runs on the configurations it completed (--beam-s):
# a split whose BEAM=2 outlasts a call, e.g. `BEAM_ONLY=1 SPLIT=30 T=530`, then `BEAM_S=250 R=2 V='[{}]' SPLIT=30 T=560`.
# SPLIT=30 (logs ../s30_h200/c1-c3): c1 `BEAM_ONLY=1 SPLIT=30 T=530` (289 s: 57 of its 70 kernels are earlier splits' and skipped),
# c2 the same again (its log says so: 'BEAM=2 phase done'), c3 `CACHED=1 R=3 V='[{}]' SPLIT=30 T=420`.
# SPLIT=33 (the first wide split, 58 new kernels on CUDA; BEAM=2 ~1,300 s on one card) on nvidia-h200-x2, a part per GPU: c1
# `BEAM_ONLY=1 SPLIT=33 T=540`, then here join the parts' caches: python3 -c 'import json,sys; d={}; [d.update(json.load(open(p)))
# for p in sys.argv[1:]]; print(json.dumps(d, indent=1))' out/u/g*/unseen_s33_beam2.json > results/unseen_s33_beam2.json; c2
# `CACHED=1 R=4 V='[{"tc_branch": true}, {}, {"tc_branch": true}]' SPLIT=33 T=575` (c1 cached all 58 picks; runs 0 and 2 the
# defaults, 1 and 3 Beam.tc_branch; logs ../s33_h200x2/c1-c2),
# then python scripts/bench_unseen.py --split 33 --merge out/u/g*/unseen_s33.json --out results.
# SPLIT=34 (59 new kernels; logs ../s34_h200x2/c1-c2): the same two calls as split 33 with SPLIT=34.
# SPLIT=35 (48 kernels; logs ../s35_h200x2/c1-c3): c1 `BEAM_ONLY=1 SPLIT=35 T=540` cached 44 of the 48 picks before its limit,
# c2 `CACHED=1 R=4 V='[{}, {}, {}]' SPLIT=35 T=560`: four runs at the defaults on the 44, c3 `BEAM_ONLY=1 SPLIT=35 T=150` the other 4,
# c4 (logs c4) the c2 command again: four runs at the defaults on all 48.
# SPLIT=36 (50 kernels; logs ../s36_h200x2/c1-c2): c1 `BEAM_ONLY=1 SPLIT=36 T=540` (all 50 in 280 s), c2 `CACHED=1 R=4 V='[{}, {}, {}]' SPLIT=36 T=560`.
# SPLIT=37 (49 kernels; logs ../s37_h200x2/c1-c2): c1 `BEAM_ONLY=1 SPLIT=37 T=540` (all 49 in 354 s), c2 `CACHED=1 R=4 V='[{}, {}, {}]' SPLIT=37 T=560`.
# SPLIT=38 (48 kernels; one nvidia-h200; logs ../s38_h200/c1-c3): c1 `BEAM_ONLY=1 SPLIT=38 T=540` (32 picks), c2 `BEAM_ONLY=1 SPLIT=38 T=530` (the other
# 16), c3 `CACHED=1 R=4 V='[{"group_best": true}, {}, {"group_best": true}]' SPLIT=38 T=560`: runs 1 and 3 Beam.group_best, 0 and 2 without (the
# same A/B at today's defaults, where it is on: V='[{"group_best": false}, {}, {"group_best": false}, {}]').
# SPLIT=38, c4 (2026-12-01, a development use of split 38: its figures were published before): `CACHED=1 R=4 V='[{"speculate_gain": false}, {}, {"speculate_gain": false}]' SPLIT=38 T=540`,
# runs 0 and 2 with Beam.speculate_gain, 1 and 3 without.
# SPLIT=39 (45 kernels; one nvidia-h200; logs ../s39_h200/c1-c2): c1 `BEAM_ONLY=1 SPLIT=39 T=540` (all 45 picks), c2 `CACHED=1 R=4 V='[{}, {}, {}]' SPLIT=39 T=560`.
# SPLIT=40 (39 kernels; one nvidia-h200; logs ../s40_h200/c1-c2): c1 `BEAM_ONLY=1 SPLIT=40 T=540` (all 39 picks), c2
# `CACHED=1 R=4 V='[{"ready_first": true}, {}, {"ready_first": true}]' SPLIT=40 T=560`: runs 1 and 3 Beam.ready_first, 0 and 2 without.
# SPLIT=41 (the first of splits 41-50, held out from 2026-12-01: dataset.unseen.SPLITS 50; one nvidia-h200; logs ../s41_h200/): c1
# `BEAM_ONLY=1 SPLIT=41 T=265` (26 picks before its limit; 5 of the split's kernels are in the training data and skipped); next,
# c2 `BEAM_ONLY=1 SPLIT=41 T=540` (the other 14 picks, 196 s), c3 `CACHED=1 R=4 V='[{"early_compile": false}, {}, {"early_compile": false}]' SPLIT=41 T=560`:
# runs 0 and 2 the defaults (Beam.early_compile on), 1 and 3 without it.
# SPLIT=42 (49 kernels; one nvidia-h200; logs ../s42_h200/c1-c3): c1 `BEAM_ONLY=1 SPLIT=42 T=540` (26 picks), c2 `BEAM_ONLY=1 SPLIT=42 T=400` (the other
# 23), c3 `CACHED=1 R=4 V='[{}, {}, {}]' SPLIT=42 T=540`: four runs at the defaults.
# c4 `CACHED=1 R=2 V='[{"second_opinion": 3}]' SPLIT=42 T=225`: run 1 with Beam.second_opinion (results/second_opinion.md).
# SPLIT=43 (41 kernels; one nvidia-h200; logs ../s43_h200/c1-c2): c1 `BEAM_ONLY=1 SPLIT=43 T=540` (all 41 picks, 362 s), c2
# `CACHED=1 R=4 V='[{}, {}, {}]' SPLIT=43 T=540`: four runs at the defaults.
# c3 `CACHED=1 R=4 V='[{"second_opinion": 3}, {}, {"second_opinion": 3}]' SPLIT=43 T=540`: runs 1 and 3 with Beam.second_opinion.
# SPLIT=44 (34 kernels, 3 more in the training data and skipped; one nvidia-h200; logs ../s44_h200/c1-c3): c1 `BEAM_ONLY=1 SPLIT=44 T=540`
# (all 34 picks), c2 `CACHED=1 R=4 V='[{"second_opinion": 3}, {}, {"second_opinion": 3}]' SPLIT=44 T=540`: runs 0 and 2 the defaults, 1 and 3
# Beam.second_opinion (its picks in the first batch, in place of the model's last); c3 the same command, second_opinion's picks timed in
# the round after the first batch (a development use of split 44).
# SPLIT=45 (48 kernels, 4 more in the training data and skipped; one nvidia-h200; logs ../s45_h200/c1-c3): c1 `BEAM_ONLY=1 SPLIT=45 T=540`
# (37 picks), c2 `BEAM_ONLY=1 SPLIT=45 T=450` (the other 11), c3 `CACHED=1 R=4 V='[{}, {}, {}]' SPLIT=45 T=540`: four runs at the defaults.
# SPLIT=46 (40 kernels, 2 more in the training data and skipped; one nvidia-h200; logs ../s46_h200/c1-c2): c1 `BEAM_ONLY=1 SPLIT=46 T=540`
# (23 picks), c2 `BEAM_S=320 R=4 V='[{"second_opinion": 3}, {}, {"second_opinion": 3}]' SPLIT=46 T=570`: BEAM=2 on the other 17, then
# four learned runs, 0 and 2 the defaults, 1 and 3 Beam.second_opinion.
# SPLIT=47 (39 kernels; one nvidia-h200; logs ../s47_h200/c1-c4): c1 `BEAM_ONLY=1 SPLIT=47 T=540` (27 picks), c2 `BEAM_S=320 R=2 V='[{}]' SPLIT=47 T=505`
# (the other 12, then two learned runs at the defaults), c3 `CACHED=1 R=2 V='[{}]' SPLIT=47 T=270`, c4 the same with T=150.
# SPLIT=48 (46 kernels; logs ../s48_h200/c1-c3): c1 `BEAM_ONLY=1 SPLIT=48 T=520` (27 picks), c2 `BEAM_S=320 R=2 V='[{}]' SPLIT=48 T=480`, c3 `CACHED=1 R=2 V='[{}]' SPLIT=48 T=135`.
# SPLIT=49 (26 kernels; logs ../s49_h200/c1-c3): c1 `BEAM_ONLY=1 SPLIT=49 T=520` (all 26 picks), c2 `CACHED=1 R=3 V='[{}, {}]' SPLIT=49 T=420`,
# c3 `CACHED=1 R=2 V='[{}]' SPLIT=49 T=170`.
# Since these calls, b is the model shipped in models/; the other one: git show 25f95ef:models/cost_model_sm_90.txt (and its side files).
set -u
D='[{"model": "out/noopts/cost_model_sm_90.txt"}, {}, {"model": "out/noopts/cost_model_sm_90.txt"}]'; VA=(--variant "${V:-$D}")
[ -n "${BEAM_ONLY:-}" ] && VA=(--beam-only)
S=${SPLIT:-26}; BF=1; [ -n "${CACHED:-}" ] && { BF=; VA+=(--cached-beam-only); }; [ -n "${BEAM_S:-}" ] && VA+=(--beam-s $BEAM_S)
BEAM_FIRST=$BF SPLIT=$S bash scripts/gpu_unseen.sh ${T:-540} "" --shuffle 0 --rounds 3 --together 8 --repeats ${R:-4} "${VA[@]}" > $OUT/job.log 2>&1
grep -vE "Exception ignored|Traceback|ops.py|__del__|^ *kernel|^ *$|search.py|TimeoutException|raise " $OUT/job.log | tail -30
tar czf /tmp/s$S.tgz -C $OUT . && rm -rf $OUT/* && mv /tmp/s$S.tgz $OUT/s$S.tgz   # the host returns 8 files at most
