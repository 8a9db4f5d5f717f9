#!/usr/bin/env bash
# one nvidia-h200-x4 call (carry .whl, out/call): split 14's parts 0 and 2 of 4, which the call before ran out on in BEAM=2's
# long searches (two of 155 and 210 s), each in halves (0/8 4/8, 2/8 6/8) on the four GPUs; BEAM=2's picks of that call
# (results/unseen_s14_beam2.json) re-timed, not searched again, any missing searched first; same runs as the call before
set -u
source scripts/gpu_host.sh > /tmp/host.txt 2>&1
B=$(mktemp -d /tmp/unseen_barrier.XXXX); for p in 1 3 5 7; do touch $B/beam_done.$p; done
g=0
for p in 0 4 2 6; do d=$OUT/h$p; mkdir -p $d; cp results/unseen_s14_beam2.json $d/
  CUDA_VISIBLE_DEVICES=$g timeout 420 python3 scripts/bench_unseen.py --split 14 --device CUDA --workers $W --out $d \
    --beam-cache $d/unseen_s14_beam2.json --range 0:44 --part $p/8 --beam-first $B --shuffle 0 --rounds 3 --together 8 --repeats 4 \
    --variant '[{"group_branch": false, "noise_k": 0.0}, {"group_branch": false, "noise_k": 0.0}]' > $d/unseen_s14.log 2>&1 &
  g=$((g+1))
done
wait
cp /tmp/host.txt $OUT/
for f in $OUT/h*/unseen_s14.log; do echo "== $f"; grep -vE "Exception ignored|Traceback|ops.py|__del__|^ *kernel|^ *$" $f | tail -8; done
P=$(mktemp /tmp/unseen.XXXX.tgz) && tar czf $P -C $OUT . && rm -rf $OUT/* && mv $P $OUT/unseen.tgz
