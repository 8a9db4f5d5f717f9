#!/usr/bin/env bash
# one nvidia-h200-x2 call (carry .whl, out/call): half of the fresh split 13 (PARTS="0 2" or "1 3" of 4, one per GPU), BEAM=2's
# searches first on both GPUs, then six learned runs per kernel: two default, two Beam(group_branch=True), two Beam(noise_k=1.0)
set -u
source scripts/gpu_host.sh > /tmp/host.txt 2>&1
B=$(mktemp -d /tmp/unseen_barrier.XXXX); for p in 0 1 2 3; do case " $PARTS " in *" $p "*) ;; *) touch $B/beam_done.$p;; esac; done
g=0
for p in $PARTS; do d=$OUT/g$p; mkdir -p $d
  CUDA_VISIBLE_DEVICES=$g timeout 540 python3 scripts/bench_unseen.py --split 13 --device CUDA --workers $W --out $d \
    --beam-cache $d/unseen_s13_beam2.json --range 0:44 --part $p/4 --beam-first $B --shuffle 0 --rounds 3 --together 8 --repeats 6 \
    --variant '[{"group_branch": true}, {"group_branch": true}, {"noise_k": 1.0}, {"noise_k": 1.0}]' > $d/unseen_s13.log 2>&1 &
  g=$((g+1))
done
wait
cp /tmp/host.txt $OUT/
for f in $OUT/g*/unseen_s13.log; do echo "== $f"; grep -v "^ *kernel" $f | grep -vE "Exception ignored|Traceback|ops.py|__del__" | tail -12; done
P=$(mktemp /tmp/unseen.XXXX.tgz) && tar czf $P -C $OUT . && rm -rf $OUT/* && mv $P $OUT/unseen.tgz
