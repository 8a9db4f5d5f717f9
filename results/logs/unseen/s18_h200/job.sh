#!/usr/bin/env bash
# nvidia-h200 calls (carry .whl, out/call; this file run from results/logs/unseen/s18_h200/), until the split is measured: fresh split 18 on ONE H200
# in one part, BEAM=2 first, then four learned runs per kernel, groups of 8 configurations searched together: runs 0-1 at the
# defaults, 2-3 with Beam.spare (guessed rounds compile only on idle workers), unless V says otherwise (V=none: every run at the
# defaults; Beam.spare is removed since, so V=none reruns it). BEAM_ONLY=1: the BEAM=2 searches only (bench_unseen --beam-only), as many as T seconds allow; a cut-off call resumes:
# copy $OUT/unseen_s18*.json into results/ and call again with RESUME=1 (BEAM_ONLY=1 until every BEAM=2 search is cached, then without)
set -u
[ -n "${V:-}" ] || V='[{"spare": true}, {"spare": true}]'
VA=(--variant "$V"); [ "$V" = none ] && VA=(); [ -n "${BEAM_ONLY:-}" ] && VA+=(--beam-only)
BEAM_FIRST=1 SPLIT=${SPLIT:-18} bash scripts/gpu_unseen.sh ${T:-540} "" --shuffle 0 --rounds 3 --together 8 --repeats ${R:-4} "${VA[@]}" > $OUT/job.log 2>&1
grep -vE "Exception ignored|Traceback|ops.py|__del__|^ *kernel|^ *$" $OUT/job.log | tail -30
