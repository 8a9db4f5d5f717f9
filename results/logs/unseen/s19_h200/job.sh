#!/usr/bin/env bash
# nvidia-h200 calls (carry .whl; run from the repository root), until the split is measured: fresh split 19 on ONE H200 in one part,
# BEAM=2 first, then four learned runs per kernel at the defaults, groups of 8 configurations searched together. At 9742703 each
# run's answer before its finalists were timed again side by side (Measurer.retime, since removed) was re-timed beside it
# (bench_unseen's NAME_pre rows): the re-timing's A/B within the same searches. R=2: the second look (results/timing_ab.md).
# BEAM_ONLY=1: the BEAM=2 searches only (bench_unseen --beam-only), as many as T seconds
# allow; then copy $OUT/unseen_s19_beam2.json into results/ and call again (RESUME=1 while BEAM=2 is incomplete, then without BEAM_ONLY)
set -u
VA=(); [ -n "${BEAM_ONLY:-}" ] && VA+=(--beam-only)
BEAM_FIRST=1 SPLIT=${SPLIT:-19} bash scripts/gpu_unseen.sh ${T:-540} "" --shuffle 0 --rounds 3 --together 8 --repeats ${R:-4} ${VA[@]+"${VA[@]}"} > $OUT/job.log 2>&1
grep -vE "Exception ignored|Traceback|ops.py|__del__|^ *kernel|^ *$|search.py|TimeoutException|raise " $OUT/job.log | tail -30
