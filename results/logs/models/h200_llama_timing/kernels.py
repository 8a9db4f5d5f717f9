"""The LLaMA block's kernels, each with tinygrad's hand-coded config, the learned pick of an earlier call (learned_c3.tune.json:
the networks call of 2026-12-02, c3) and BEAM=2's pick (beam2_llama.json), timed side by side in one process on the GPU, cold (L2
flushed before each run, tune-model's protocol) and warm (not flushed): where the block's 1.09-1.11x against BEAM=2 lies, and
whether the timing protocol ranks the two picks as the network does.
  python3 results/logs/models/h200_llama_timing/kernels.py OUT.json"""
import json, os, sys, math
from pathlib import Path
sys.path.insert(0, "scripts")
from bench_models import build
from dataset.kernel import opts_from_json
from search.onnx_model import open_model
from search.measure import Measurer, Budget
D, DEV = Path(__file__).parent, os.environ.get("DEV", "CUDA")
learned = {r["key"]: r for r in json.loads((D / "learned_c3.tune.json").read_text())}
beam = {k.split("|")[0]: v for k, v in json.loads((D / "beam2_llama.json").read_text()).items()}
mod, inputs = build("llama_block_s512_fp16", DEV)
_, _, kernels, counts, _ = open_model(mod, inputs, DEV, "llama_block_s512_fp16")
rows = []
for k in kernels:
  if k.key not in learned: print("no learned row", k.key, flush=True); continue
  m = Measurer(k, DEV, Budget(), workers=0)
  cfg = {"hand": m.hand, "learned": tuple(opts_from_json(learned[k.key]["opts"])), "beam2": tuple(opts_from_json(beam[k.key]["opts"])) if k.key in beam else None}
  cfg = {n: o for n, o in cfg.items() if o is not None}
  m.measure(list(cfg.values()))
  progs = {n: m.progs.get(o) for n, o in cfg.items()}
  cold = m.bench.side_by_side(progs, 7)
  flush, m.bench.flush = m.bench.flush, lambda: None
  warm = m.bench.side_by_side(progs, 7)
  m.bench.flush = flush
  r = {"kernel": learned[k.key]["kernel"], "index": learned[k.key]["index"], "runs": counts[k.key] if k.key in counts else None,
       **{f"{n}_cold_us": cold[n]*1e6 for n in cfg}, **{f"{n}_warm_us": warm[n]*1e6 for n in cfg}}
  rows.append(r); print(json.dumps({a: round(b, 1) if isinstance(b, float) else b for a, b in r.items()}), flush=True)
  m.close()
Path(sys.argv[1]).write_text(json.dumps(rows, indent=1))
