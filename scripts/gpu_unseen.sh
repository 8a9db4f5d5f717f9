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
#   usage: [SPLIT=S] [RESUME=1] [BEAM_FIRST=1] [PARTS="I J .." NPARTS=M] bash scripts/gpu_unseen.sh SECONDS [LO:HI] [BENCH_ARGS...]
set -u
source scripts/gpu_host.sh
NAME=unseen${SPLIT:+_s$SPLIT}; S=(${SPLIT:+--split $SPLIT})
R=${2:-0:$(python3 scripts/bench_unseen.py "${S[@]}" --list | grep -c "^ *[0-9]")}; LO=${R%%:*}; HI=${R##*:}
# PARTS="0 2" NPARTS=4: these parts of NPARTS, one per GPU of GPUS (default: part i of N on the i-th GPU), so that a split too long
# for one call runs in several (each measures its kernels' BEAM=2 and learned searches in itself); parts not run here count as done
# at the BEAM_FIRST barrier
NP=${NPARTS:-$N}; P=(${PARTS:-$(seq 0 $((N-1)))}); [ ${#P[@]} -le $N ] || { echo "gpu_unseen: ${#P[@]} parts for $N GPUs" >&2; exit 2; }
G=(${GPUS//,/ }); B=()
if [ -n "${BEAM_FIRST:-}" ]; then
  b=$(mktemp -d /tmp/unseen_barrier.XXXX); B=(--beam-first $b)
  for ((p=0; p<NP; p++)); do [[ " ${P[*]} " == *" $p "* ]] || touch $b/beam_done.$p; done
fi
for i in "${!P[@]}"; do p=${P[$i]}
  d=$OUT; [ $NP -gt 1 ] && d=$OUT/g$p; mkdir -p $d
  [ -f results/${NAME}_beam2.json ] && cp results/${NAME}_beam2.json $d/
  A=; [ "${RESUME:-0}" = 1 ] && [ -f results/$NAME.json ] && cp results/$NAME.json $d/ && A=--resume
  (CUDA_VISIBLE_DEVICES=${G[$i]} PYTHONFAULTHANDLER=1 timeout ${1:-540} python3 scripts/bench_unseen.py "${S[@]}" --device CUDA --workers $W --out $d \
    --beam-cache $d/${NAME}_beam2.json --range $LO:$HI --part $p/$NP $A "${B[@]}" "${@:3}" > $d/$NAME.log 2>&1; \
    echo "bench_unseen exit $?" >> $d/$NAME.log) &
done
wait
for f in $(ls $OUT/$NAME.log $OUT/g*/$NAME.log 2>/dev/null); do echo "== $f"; grep -v "^ *kernel" $f | tail -25; done
if [ $NP -gt 1 ]; then T=$(mktemp /tmp/unseen.XXXX.tgz) && tar czf $T -C $OUT . && rm -rf $OUT/* && mv $T $OUT/unseen.tgz; fi
