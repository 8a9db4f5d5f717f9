#!/usr/bin/env bash
# one nvidia-h200 call (carry .whl, out/call): new H200 training rows, active learning (generate-dataset --model: the shipped model
# proposes half the configs, its favourite unmeasured children of each kernel's best measured ones, so its mistakes become rows) on 80
# shapes of the sampled tier's seed-17 draw (sampled_tier(2000, 17)): 40 dilated convs (the store holds 4 dilated-conv kernels, all
# c=64 56x56), 15 stride-2 convs, 15 gemms, 10 bmms; results/logs/ray/h200_2026-11-29_active/al_kernels.txt lists them. Held-out kernels (the benchmark and splits
# 1-24) are skipped at extraction. Returns $OUT/al.sqlite.gz (here: dataset/data/cuda_h200_active.sqlite.gz, via python -m dataset.shard export) and the log.
set -u
source scripts/gpu_host.sh
timeout -k 10 530 python3 -m models.generate --device CUDA --kernels "$(cat results/logs/ray/h200_2026-11-29_active/al_kernels.txt)" --model models/cost_model_sm_90.txt \
  --samples-per-kernel 64 --time-budget 470 --workers $W --seed 17 --out /tmp/al.sqlite --no-progress > $OUT/gen.log 2>&1
echo "generate exited $?"; tail -3 $OUT/gen.log | cut -c1-400
python3 -c "import sqlite3; db = sqlite3.connect('/tmp/al.sqlite'); print(db.execute('SELECT status, COUNT(*) FROM measurements GROUP BY status').fetchall(), db.execute('SELECT COUNT(*) FROM kernels').fetchone())"
gzip -c /tmp/al.sqlite > $OUT/al.sqlite.gz; ls -la $OUT
