#!/usr/bin/env bash
# nvidia-h200 calls (carry .whl; run from the repository root): fresh split 25, the A/B of a model descent without SWAP steps
# (Beam.descent_swaps=False: the model orders a SWAP step at chance, results/model_steps_sm_90.json) against the defaults, in the same
# process, kernel by kernel. c1: `BEAM_ONLY=1 T=540 bash results/logs/unseen/s25_h200/job.sh` (BEAM=2 first; copy
# $OUT/unseen_s25_beam2.json into results/); c2: `T=540 bash results/logs/unseen/s25_h200/job.sh`: four learned runs, the last two
# with the variant (runs 0-1 defaults, 2-3 descent_swaps off), every run re-timed side by side. c3 (the same A/B interleaved, BEAM=2
# from c1's JSON): `V='[{"descent_swaps": false}, {}, {"descent_swaps": false}]' T=540 bash results/logs/unseen/s25_h200/job.sh`
# (runs 0 and 2 defaults, 1 and 3 descent_swaps off).
set -u
D='[{"descent_swaps": false}, {"descent_swaps": false}]'; VA=(--variant "${V:-$D}"); [ -n "${BEAM_ONLY:-}" ] && VA=(--beam-only)
BEAM_FIRST=1 SPLIT=25 bash scripts/gpu_unseen.sh ${T:-540} "" --shuffle 0 --rounds 3 --together 8 --repeats 4 "${VA[@]}" > $OUT/job.log 2>&1
grep -vE "Exception ignored|Traceback|ops.py|__del__|^ *kernel|^ *$|search.py|TimeoutException|raise " $OUT/job.log | tail -30
tar czf /tmp/s25.tgz -C $OUT . && rm -rf $OUT/* && mv /tmp/s25.tgz $OUT/s25.tgz   # the host returns 8 files at most
