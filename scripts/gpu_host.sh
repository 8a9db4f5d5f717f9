# Sourced by the scripts/gpu_*.sh host calls (device tool, .whl carried, or the folder WHEELS names): the carried wheels installed,
# the environment set, the GPUs and cores recorded in $OUT/gpu.txt; GPUS (comma list) is the GPUs this job may use (default: all),
# N their count, W the compile workers of one GPU's share of the cores (less the process that times).
# once per host: jobs of one call that run side by side source this after the first has installed (a marker says it has)
[ -f /tmp/site/.installed ] || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
  ${WHEELS:-.whl}/*.whl && touch /tmp/site/.installed; } || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 PARALLEL=16   # tinygrad BEAM's compile pool: the 16 cores of one GPU's share
nvidia-smi --query-gpu=index,name,driver_version,memory.total,clocks.max.sm --format=csv | tee $OUT/gpu.txt
nproc | tee -a $OUT/gpu.txt
{ nvidia-smi topo -m; lscpu | grep -iE "^(model name|numa)"; } >> $OUT/gpu.txt 2>&1   # which cores sit by which GPU (a process's step level)
# the host's single-core speed (dataset.device.host_probe): the same search takes up to 1.7x longer on some hosts of one kind
python3 -c "from dataset.device import host_probe; print(f'cpu probe: python {host_probe():.3f} s')" | tee -a $OUT/gpu.txt
GPUS=${GPUS:-$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd,)}
N=$(echo $GPUS | tr , '\n' | wc -l)
W=$(( $(nproc) / $(nvidia-smi -L | wc -l) - 1 ))
# run rather than sourced, with a command: that command in this environment, on the first of GPUS, e.g. the fuzzer as a host job:
#   bash scripts/gpu_host.sh python3 -m search.fuzz --device CUDA --seconds 120 --workers 15 --out $OUT/fuzz.md
# ALL=1: on all of GPUS at once (the command shares them out itself), e.g. the search suite, one op per GPU at a time:
#   ALL=1 bash scripts/gpu_host.sh python3 scripts/bench_search.py --model models/cost_model_sm_90_nosuite.txt --device CUDA --gpus 2 \
#     --workers 15 --ops OPS --no-plot --out $OUT --verbose   (then, here: python scripts/bench_search.py --replot results/search_bench.json)
# EACH=1: once per GPU of GPUS, side by side, with I (0..N-1) and N exported, e.g. dataset.retime's selection in N shards (resumable:
# carry earlier retimed.I.json back in RESUME and copy them to $OUT first; then, here, python -m dataset.retime apply STORE retimed.*.json):
#   EACH=1 bash scripts/gpu_host.sh bash -c 'python3 -m dataset.retime run SELECTION --device CUDA --workers $W --time-budget 480 \
#     --shard $I/$N --out $OUT/retimed.$I.json > $OUT/retime.$I.log 2>&1'
if [ "${BASH_SOURCE[0]}" = "$0" ] && [ $# -gt 0 ]; then
  [ -n "${ALL:-}" ] && CUDA_VISIBLE_DEVICES=$GPUS exec "$@"
  [ -z "${EACH:-}" ] && CUDA_VISIBLE_DEVICES=${GPUS%%,*} exec "$@"
  export I N W OUT; I=0
  for g in ${GPUS//,/ }; do CUDA_VISIBLE_DEVICES=$g "$@" & I=$((I+1)); done
  wait
fi
