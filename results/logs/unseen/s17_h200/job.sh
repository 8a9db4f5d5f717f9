#!/usr/bin/env bash
# nvidia-h200 calls (carry .whl, out/call), until the split is measured: a fresh split (SPLIT, default 17) on ONE H200 in one part,
# BEAM=2 first, then six learned runs per kernel, groups of 8 configurations searched together: runs 0-1 at the defaults, 2-3 with
# models/cost_model_sm_90_active.txt (the model retrained with the 2026-11-29 active-learning shard), 4-5 with Beam overlap on (the
# scheduler times a compiled kernel's round while another's compiles), unless V says otherwise (V=none: every run at the defaults). A cut-off call
# resumes: copy $OUT/unseen_s17*.json into results/ and call again with RESUME=1. BEAM_ONLY=1: the BEAM=2 searches
# only (bench_unseen --beam-only). Split 17's first call (2026-11-29) ran `V=none T=250` before --beam-only existed: cut by its limit in BEAM=2.
# The second ran `BEAM_ONLY=1 RESUME=1 T=540` (the other 23 BEAM=2 searches), the third `RESUME=1 T=550` (every learned run).
set -u
[ -n "${V:-}" ] || V='[{"model": "models/cost_model_sm_90_active.txt"}, {"model": "models/cost_model_sm_90_active.txt"}, {"overlap": true}, {"overlap": true}]'
VA=(--variant "$V"); [ "$V" = none ] && VA=(); [ -n "${BEAM_ONLY:-}" ] && VA+=(--beam-only)
BEAM_FIRST=1 SPLIT=${SPLIT:-17} bash scripts/gpu_unseen.sh ${T:-540} "" --shuffle 0 --rounds 3 --together 8 --repeats ${R:-6} "${VA[@]}" > $OUT/job.log 2>&1
grep -vE "Exception ignored|Traceback|ops.py|__del__|^ *kernel|^ *$" $OUT/job.log | tail -30
