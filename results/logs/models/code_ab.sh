#!/usr/bin/env bash
# one nvidia-h100-x4 call (carry .whl, out/call; run from the repository root): the six unseen networks tuned with this tree's code
# (GPUs NEW, default 0,1) and with the previous code (out/call/old: the search/ files of the commit the calling job names; GPUs OLD,
# default 2,3), side by side at equal load; BEAM=2 from results/unseen_models_cache. Each A/B job beside it (h100x4_*/job*.sh) says
# what it compares and calls this. Everything comes back as $OUT/all.tgz.
set -u
source scripts/gpu_host.sh > /tmp/host.txt 2>&1   # the wheels installed once, before the two runs start
rm -rf /tmp/old && mkdir /tmp/old && cp -a dataset models search scripts results pyproject.toml /tmp/old/ && cp out/call/old/search/*.py /tmp/old/search/
M=mobilenet_v2_b1_fp32,efficientnet_b0_b1_fp32,llama_block_s512_fp16,whisper_tiny_encoder_fp32,bert_base_s128_fp32,vit_b_16_b1_fp16
( GPUS=${NEW:-0,1} OUT=/tmp/new SRC=results/unseen_models_cache FINAL= bash scripts/gpu_models.sh $M 420 40 > /tmp/new.log 2>&1 ) &
( cd /tmp/old && GPUS=${OLD:-2,3} OUT=/tmp/old_out SRC=results/unseen_models_cache FINAL= bash scripts/gpu_models.sh $M 420 40 > /tmp/old.log 2>&1 ) &
wait
for f in /tmp/new.log /tmp/old.log; do echo "== $f"; grep -E "^latency|tune-model:|tune .*: [0-9.]+ s|setup of" $f | cut -c1-220; done
mkdir -p /tmp/pack && cp -r /tmp/new /tmp/old_out /tmp/new.log /tmp/old.log /tmp/host.txt /tmp/pack/ && tar czf $OUT/all.tgz -C /tmp/pack .
