#!/usr/bin/env bash
# One GPU-host call (device tool, carry .whl): scripts/bench_unseen.py on configurations LO:HI (default all), shared out over the
# host's GPUs (or GPUS=0,1), one process per GPU on its own part (every N-th configuration: bench_unseen --part). SPLIT=S measures
# the fresh split S (bench_unseen --split) instead of the frozen list, skipping the kernels other splits' results/unseen_sS.json
# measured (carry them). One GPU writes into $OUT
# (NAME.json/.md, NAME_beam2.json, NAME.log; NAME is unseen or unseen_sS); several write $OUT/gI/, returned as one archive,
# $OUT/unseen.tgz (the host returns 8 files at most). BEAM=2's picks of earlier calls (results/NAME_beam2.json) are re-timed, not
# searched again; RESUME=1 starts from results/NAME.json and measures only the kernels it lacks. Then, here (several GPUs: their runs merged, BEAM=2 caches too):
#   tar xzf FILES_AT/unseen.tgz -C out/u && python scripts/bench_unseen.py [--split S] --merge out/u/g*/NAME.json --out results
#   (one GPU: cp FILES_AT/NAME*.json results/)
# BEAM_FIRST=1: every part runs its BEAM=2 searches first and the parts meet at a barrier before their learned searches (bench_unseen
# --beam-first), so that neither kind is timed while the other loads the host's cores.
#   usage: [SPLIT=S] [RESUME=1] [BEAM_FIRST=1] bash scripts/gpu_unseen.sh SECONDS [LO:HI] [BENCH_ARGS...]
set -u
source scripts/gpu_host.sh
NAME=unseen${SPLIT:+_s$SPLIT}; S=(${SPLIT:+--split $SPLIT})
R=${2:-0:$(python3 scripts/bench_unseen.py "${S[@]}" --list | grep -c "^ *[0-9]")}; LO=${R%%:*}; HI=${R##*:}
i=0; B=()
[ -n "${BEAM_FIRST:-}" ] && B=(--beam-first "$(mktemp -d /tmp/unseen_barrier.XXXX)")
for g in ${GPUS//,/ }; do
  d=$OUT; [ $N -gt 1 ] && d=$OUT/g$i; mkdir -p $d
  [ -f results/${NAME}_beam2.json ] && cp results/${NAME}_beam2.json $d/
  A=; [ "${RESUME:-0}" = 1 ] && [ -f results/$NAME.json ] && cp results/$NAME.json $d/ && A=--resume
  CUDA_VISIBLE_DEVICES=$g timeout ${1:-540} python3 scripts/bench_unseen.py "${S[@]}" --device CUDA --workers $W --out $d \
    --beam-cache $d/${NAME}_beam2.json --range $LO:$HI --part $i/$N $A "${B[@]}" "${@:3}" > $d/$NAME.log 2>&1 &
  i=$((i+1))
done
wait
for f in $(ls $OUT/$NAME.log $OUT/g*/$NAME.log 2>/dev/null); do echo "== $f"; grep -v "^ *kernel" $f | tail -25; done
if [ $N -gt 1 ]; then P=$(mktemp /tmp/unseen.XXXX.tgz) && tar czf $P -C $OUT . && rm -rf $OUT/* && mv $P $OUT/unseen.tgz; fi
