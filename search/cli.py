"""search: tune every kernel of a corpus workload at any shape, and emit verified tuned kernels.

  search --kernel conv2d --shape 8,64,56,56 --out-channels 64 --kernel-size 3 --padding 1 --dtype fp16 --out out/conv"""
from __future__ import annotations
import argparse, json, math, sys, time
from pathlib import Path
from dataset.argtypes import count, positive
from dataset.corpus import CORPUS, ShapeError, Variant, builder, name_parts, parse_variant
from dataset.device import DeviceError, default_device, device_info, open_device
from dataset.kernel import Kernel, TINYGRAD_VERSION, kernel_asts, opts_to_json
from search.measure import Budget, Measurer
from dataset.history import History, HistoryError
from search.strategies import STRATEGIES, Outcome
from search.api import load_model, search_kernels, tune_kernel

# --shape maps onto each workload's leading parameters
SHAPE = {"conv2d": "n,c,h,w", "conv2d_bias_relu": "n,c,h,w", "conv2d_backward": "n,c,h,w", "maxpool": "n,c,h,w", "bmm": "b,m,k,n",
         "gemm": "m,k,n", "softmax": "rows,cols", "softmax_backward": "rows,cols", "layernorm": "rows,cols",
         "layernorm_backward": "rows,cols", "attention": "b,heads,seq,dim", "resnet50": "batch,image", "cvt_block": "batch,tokens_hw",
         "gpt2_block": "batch,seq", "conv1d": "n,c,l", "rmsnorm": "rows,cols", "reduce": "a,b,c", "gelu_bias": "rows,cols",
         "swiglu": "rows,cols"}
FLAGS = {"out_channels": "k", "kernel_size": "ks", "stride": "stride", "padding": "padding", "dilation": "dilation", "groups": "groups",
         "dtype": "dtype", "alpha": "alpha", "beta": "beta", "trans_a": "trans_a", "trans_b": "trans_b", "causal": "causal", "log": "log",
         "batch": "batch", "seq": "seq", "dim": "dim", "heads": "heads"}

# A cap on timed candidates per kernel when neither --budget nor --time-budget is given, a safety net: the learned beam's own rule
# (Beam.adaptive: stop after a round without a faster time, one more where the model's favourite measured slower than the fastest)
# decides. A cap of 24 cut off the unsure kernels: on the first fresh unseen split, the 23 of 69 kernels that reached it were those
# where the model was unsure, and ended 1.049x BEAM=2's kernel time against 0.998x for the 46 that stopped on their own.
DEFAULT_BUDGET = 48

def variant_from_args(a, device:str) -> Variant:
  """The workload at the asked shape; unspecified parameters take the corpus default for the device (its small tier on the CPU).
  --kernel may be a whole name as the corpus and the benchmarks' reports write it ('conv2d:n=8:c=144:...:fp16'): its parameters
  are taken as --param's, its dtype as --dtype's, and the flags given beside it go over them."""
  kernel = a.kernel.split(":")[0]
  builder(kernel)  # KeyError for an unknown workload
  tier = [v for v in CORPUS if v.workload == kernel and v.small == (device == "CPU")] or [v for v in CORPUS if v.workload == kernel]
  params = {**(dict(tier[0].params) if tier else {}), **name_parts(a.kernel)[1]}
  if a.shape:
    names, vals = SHAPE[kernel].split(","), a.shape.split(",")
    if len(vals) != len(names): raise ShapeError(f"--shape for {kernel} is {','.join(n.upper() for n in names)}: got {a.shape!r}")
    params.update(zip(names, vals))
  for flag, p in FLAGS.items():
    if (v := getattr(a, flag)) is not None: params[p] = v
  params.update(kv.split("=", 1) for kv in a.param)
  if a.kernel_size is not None and a.padding is None and "padding" in params: params["padding"] = int(a.kernel_size)//2  # 'same'

  spec = ":".join([kernel] + [f"{k}={int(v) if isinstance(v, bool) else v}" for k, v in params.items() if k != "dtype"] + [str(params.get("dtype", "fp32"))])
  return parse_variant(spec)

def emit(out:Path, i:int, kernel:Kernel, o:Outcome, m:Measurer, device:str, dev_name:str, arch:str) -> dict:
  prg = m.program(o.opts)
  ext = {"CUDA": "cu", "CPU": "c"}.get(device, "txt")
  if prg is not None: (out / f"kernel{i}.{ext}").write_text(prg.src[2].arg)
  replay = {"kernel_key": kernel.key, "name": kernel.name, "device": device, "device_name": dev_name, "arch": arch,
            "tinygrad": TINYGRAD_VERSION, "opts": opts_to_json(o.opts)}
  (out / f"kernel{i}.opts.json").write_text(json.dumps(replay, indent=1))
  return {**replay, "strategy": o.strategy, "time_us": o.time_s*1e6, "hand_coded_us": o.hand_time_s*1e6,
          "speedup_vs_hand": o.hand_time_s/o.time_s if o.time_s < math.inf else None, "verified": o.verified, "check": o.check,
          "search_s": round(o.search_s, 3), "compiled": o.compiled, "timed": o.timed, "final_timed": o.final_timed, "hand_opts": opts_to_json(o.hand_opts),
          "rejected": o.rejected_json(),
          "trajectory": [{"timed": n, "s": s, "best_us": b*1e6} for n, s, b in o.trajectory], "source": f"kernel{i}.{ext}" if prg is not None else None}

def parse_args(argv=None):
  ap = argparse.ArgumentParser("search", description=__doc__.split("\n")[0])
  ap.add_argument("--kernel", required=True, help="workload: " + ", ".join(SHAPE) + "; or a whole name as reports write it, e.g. gemm:m=512:k=256:n=128:fp16")
  ap.add_argument("--shape", help="comma list; per workload: " + "; ".join(f"{k}: {v.upper()}" for k, v in SHAPE.items()))
  for flag in FLAGS: ap.add_argument("--" + flag.replace("_", "-"), default=None)
  ap.add_argument("--param", action="append", default=[], help="any workload parameter NAME=VALUE")
  ap.add_argument("--device", choices=["CUDA", "CPU"], default=None, help="default: CUDA if present, else CPU")
  ap.add_argument("--strategy", choices=sorted(STRATEGIES), default="beam")
  ap.add_argument("--budget", type=count, default=None, help=f"at most this many timed candidates per kernel (default {DEFAULT_BUDGET}; the learned beam stops sooner once its measurements stop improving; pure-model ignores it)")
  ap.add_argument("--time-budget", type=positive, default=None, help="seconds per kernel")
  ap.add_argument("--model", default=None, help="cost model (default: the shipped model for the device's arch)")
  ap.add_argument("--allow-device-mismatch", action="store_true")
  ap.add_argument("--compare-beam", type=count, default=0, help="also run tinygrad's BEAM=N on each kernel and report its time")
  ap.add_argument("--workers", type=count, default=0, help="compile processes (0: in this process)")
  ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--out", default="out/search", help="directory for opts, sources and result.json")
  ap.add_argument("--history", nargs="?", const=True, default=False, metavar="PATH", help="start from the configs the dataset measured "
                  "fastest on kernels of the same loop nest (dataset.history; no PATH: the shipped models/history_<arch>.json)")
  ap.add_argument("--actions", choices=["default", "extended"], default="default", help="the action space: BEAM's, or extended with "
                  "PADTO and more tensor-core variants (dataset.sampler.EXTENDED; the shipped models were not trained on them)")
  ap.add_argument("--no-cache", action="store_true", help="do not store results in the tuned-kernel cache")
  ap.add_argument("--no-compile-penalty", action="store_true", help="rank by the cost model alone, not less its penalty for slow compiles")
  return ap.parse_args(argv)

def fail(msg:str) -> int:
  print(f"search: error: {msg}", file=sys.stderr); return 2

def main(argv=None) -> int:
  a = parse_args(argv)
  device = a.device or default_device()
  try:
    open_device(device)
    variant = variant_from_args(a, device)
    dev_name, arch, props = device_info(device)
    needs_model = a.strategy in ("beam", "pure-model", "mcts")
    notes: list[str] = []   # the model's note waits until the inputs are known good: a bad input's error is the only line
    model, model_path = load_model(a.model, device, dev_name, arch, a.allow_device_mismatch, notes.append) if needs_model else (None, None)
    scorer = model.scorer(props, not a.no_compile_penalty) if model is not None else None   # this device's properties are model inputs
    history = History.resolve(a.history, device, arch)
    out = Path(a.out); out.mkdir(parents=True, exist_ok=True)
    for n in notes: print(n, file=sys.stderr)
  except (DeviceError, ShapeError, HistoryError) as e: return fail(str(e))
  except KeyError as e: return fail(str(e.args[0]))
  except OSError as e: return fail(f"cannot write {a.out}: {e.strerror or e}")
  except Exception as e:
    if type(e).__name__ == "CostModelError": return fail(str(e))
    raise
  from tqdm import tqdm
  from search.cache import TunedCache
  kernels = [Kernel(ast.key.hex(), ast, f"{variant.name}#{i}", variant.family, variant.workload) for i, ast in enumerate(kernel_asts(*variant.build(device)))]
  budget_n = a.budget if a.budget is not None else (None if a.time_budget else DEFAULT_BUDGET)
  results = []
  print(f"search: {variant.name}: {len(kernels)} kernel(s) on {dev_name} ({arch}), strategy {a.strategy}" + (f", model {model_path}" if model_path else ""), file=sys.stderr)
  bars = {k.key: tqdm(total=budget_n, desc=f"kernel {i+1}/{len(kernels)}", unit="timed", file=sys.stderr, position=i) for i, k in enumerate(kernels)}
  def progress(m):
    bars[m.kernel.key].update(1); bars[m.kernel.key].set_postfix(best_us=f"{m.best*1e6:.1f}", compiled=m.compiled)
  st = time.perf_counter()
  from dataset.sampler import ACTION_SETS
  found = search_kernels(kernels, device, a.strategy, Budget(budget_n, a.time_budget), scorer, a.seed, a.workers, progress, history,
                         ACTION_SETS[a.actions])
  search_s = time.perf_counter() - st
  for b in bars.values(): b.close()
  for i, (k, (o, m)) in enumerate(zip(kernels, found)):
    r = emit(out, i, k, o, m, device, dev_name, arch)
    m.close()
    if a.compare_beam:
      ob, mb = tune_kernel(k, device, "tinygrad-beam", Budget(), None, a.seed, a.workers, amt=a.compare_beam)
      r[f"beam{a.compare_beam}"] = {"time_us": ob.time_s*1e6, "search_s": round(ob.search_s, 3), "compiled": ob.compiled, "timed": ob.timed}
      mb.close()
    if o.verified and not a.no_cache:
      TunedCache().put(k.key, device, opts_to_json(o.opts), time_us=o.time_s*1e6, hand_coded_us=o.hand_time_s*1e6, name=k.name, strategy=a.strategy)
    results.append(r)
    print(f"  {k.name}: {r['time_us']:.1f} us vs hand-coded {r['hand_coded_us']:.1f} us ({r['speedup_vs_hand'] or 0:.2f}x), "
          f"{'verified' if o.verified else 'NOT VERIFIED: ' + str(o.check)}, {o.compiled} compiled, {o.timed} timed (+{o.final_timed} by the final check)", file=sys.stderr)
  print(f"search: {len(kernels)} kernel(s) searched together in {search_s:.1f} s", file=sys.stderr)
  summary = {"workload": variant.name, "device": dev_name, "arch": arch, "strategy": a.strategy, "model": model_path,
             "history": history.meta["path"] if history is not None else None,
             "compile_penalty": scorer is not None and not a.no_compile_penalty,
             "date": time.strftime("%Y-%m-%d"), "command": "search " + " ".join(sys.argv[1:] if argv is None else argv),
             "search_s": round(search_s, 3), "kernels": results}
  (out / "result.json").write_text(json.dumps(summary, indent=1))
  print(f"search: wrote {out}/result.json", file=sys.stderr)
  return 0 if all(r["verified"] for r in results) else 1

if __name__ == "__main__": sys.exit(main())
