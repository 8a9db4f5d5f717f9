"""tune-model's output guard (search.guard) on the GPU: the LLaMA block with every kernel cached from c1's run r4.warm (its fused
gate/up GEMM's config breaks the block under TinyJit), so nothing is searched; the guard should put that kernel back to the
default and the block's outputs should match torch.
  python3 results/logs/models/h200_llama_timing/guard.py OUT_DIR"""
import json, sys, os
from pathlib import Path
sys.path.insert(0, "scripts")
from bench_models import build
from dataset.kernel import TINYGRAD_VERSION
from search.tune_model import tune_model
D, out = Path(__file__).parent, Path(sys.argv[1])
cache = out / "r4.tuned.json"
cache.write_text(json.dumps({f"{r['key']}|CUDA|{TINYGRAD_VERSION}": {"opts": r["opts"], "name": r["name"], "time_us": r["tuned_us"],
                             "hand_coded_us": r["hand_coded_us"], "v": 2} for r in json.loads((D / "r4_warm.tune.json").read_text())}))
mod, xs = build("llama_block_s512_fp16", "CUDA")
rep = tune_model(mod, xs, name="llama_block_s512_fp16", device="CUDA", cache=cache, runs=5, torch_compile=False, out=out, workers=15)
print(json.dumps({k: rep.get(k) for k in ("guard_s", "rejected", "outputs_match", "check", "max_abs_err", "tuned_ms", "default_ms")}))
print([(r["index"], r["kernel"], r["status"]) for r in rep["kernels"]])
