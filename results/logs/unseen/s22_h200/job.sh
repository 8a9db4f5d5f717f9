#!/usr/bin/env bash
# nvidia-h200 calls (carry .whl and out/old; run from the repository root): fresh split 22. BEAM=1: first its BEAM=2
# searches (BT seconds), their cache copied into results/ for the learned runs after them. Then, in ORDER (e.g. "new old"), two
# learned runs (R) of each code with the model retrained on the store whose 185 kernels under 20 us were timed again
# (models/cost_model_sm_90.*; as run, its byte-identical copy out/rtm): new: this tree (a reordering of commuting opts takes its twin's compile,
# search.commute; a candidate under 50 us timed over 10 runs, not 3); old: the code before them (out/old holds its search/ and
# dataset/timing.py: `mkdir -p out/old && git archive 58b383a search dataset/timing.py | tar x -C out/old`), in a copy of this tree.
# Everything goes back as $OUT/s22.tgz, written again after each step (a killed call returns what was done).
set -u
base=$OUT; src=$PWD
pack() { tar czf /tmp/s22.tgz -C $base --exclude=s22.tgz . && mv /tmp/s22.tgz $base/s22.tgz; }
if [ -n "${BEAM:-}" ]; then
  mkdir -p $base/beam; OUT=$base/beam BEAM_ONLY=1 SPLIT=22 T=${BT:-300} bash results/logs/unseen/s19_h200/job.sh
  cp $base/beam/unseen_s22_beam2.json results/; pack
fi
[ -d /tmp/old ] || { mkdir -p /tmp/old && cp -a . /tmp/old/ && cp -a out/old/. /tmp/old/; }
for t in ${ORDER:-new old}; do
  d=$src; [ $t = old ] && d=/tmp/old; cp results/unseen_s22_beam2.json $d/results/ 2>/dev/null
  mkdir -p $base/$t; cd $d
  OUT=$base/$t BEAM_FIRST=1 SPLIT=22 bash scripts/gpu_unseen.sh ${T:-270} "" --shuffle 0 --rounds 3 --together 8 --repeats ${R:-2} \
    --cached-beam-only --model models/cost_model_sm_90.txt > $base/$t.log 2>&1
  cd $src; rm -f $base/$t/*.png; grep -E "geomean|wall|verified" $base/$t/unseen_s22.md | head -6; pack
done
