"""tune-model: tune every kernel of a whole model (an ONNX file, or a torch.nn.Module exported through torch.onnx) under one global
budget, store the results in the tuned-kernel cache, and report end-to-end latency against tinygrad's default, tinygrad's BEAM,
PyTorch eager and torch.compile, each measured in the same run.

  tune-model model.onnx --budget 200 --compare-beam 2 --out out/models

The model and its kernels: search.onnx_model. The budget, shared out over the kernels by expected gain: search.schedule.
BEAM=N for comparison (--compare-beam): search.beam_compare. Latency and the output check: search.latency. Kernels already in the
cache are not searched again (--retune to search them anyway): a rerun with every kernel cached does no search and no per-kernel
measurement."""
from __future__ import annotations
import argparse, json, sys, tempfile, time
from pathlib import Path
from typing import Any, Callable
from dataset.argtypes import at_least, count, natural, positive
from dataset.errors import one_line
from dataset.paths import cannot_write
from dataset.device import DeviceError, default_device, device_info, open_device
from dataset.kernel import TINYGRAD_VERSION
from dataset.history import History, HistoryError
from search.api import load_model
from search.cache import CacheError, TunedCache, DEFAULT as DEFAULT_CACHE, tuned
from search.measure import TIMINGS, shared_pool
from search.onnx_model import ModelError, open_model, parse_shapes
from search.latency import ROUNDS, check, interleaved, tinygrad_latency, torch_latency
from search.schedule import NEXT_GAIN, PER_KERNEL_DEFAULT, tune_kernels
from search.task_scheduler import FIRST_SHARE, LATER_SHARE, SECOND_SHARE, bad_later_share, read_later_share, scheduled
from search.beam_compare import beam_kernels
from search.guard import fix

LEARNED = ("beam", "mcts", "pure-model")

def load_history(history:str|Path|bool|None, device:str, arch:str) -> History|None:
  try: return History.resolve(history, device, arch)
  except HistoryError as e: raise ModelError(str(e)) from None

def tune_model(model:str|Path|Any, example_inputs:tuple|None=None, *, name:str|None=None, device:str|None=None, budget:int|None=None,
               time_budget:float|None=None, strategy:str="beam", cost_model:str|None=None, allow_device_mismatch:bool=False,
               cache:str|Path|None=None, compare_beam:int=0, beam_cache:str|Path|None=None, search_beam:bool=True,
               torch_compile:bool=True, runs:int=20, input_shapes:dict|None=None, retune:bool=False, workers:int=0, seed:int=0,
               compile_penalty:bool=True, strategy_args:dict|None=None, next_gain:float=NEXT_GAIN, history:str|Path|bool|None=None,
               out:str|Path|None=None, timing:str="cold", first_share:float|None=None, later_share:float|None=LATER_SHARE,
               second_share:float|None=SECOND_SHARE, log:Callable=lambda s: print(s, file=sys.stderr)) -> dict:
  """Tune `model` (an ONNX path, or a torch.nn.Module with `example_inputs`) and return the report; with `out`, also write it to
  OUT/NAME.json. Raises ModelError, DeviceError, CacheError or CostModelError for what the user must fix.

  tune_s is what tuning this model's kernels cost: the sum over kernels of the seconds spent measuring its default and searching
  it, whenever that happened (kept in the cache entries, so a run resumed after a cut-off counts the earlier calls' work too);
  tune_wall_s is this call's own tuning time (about zero when every kernel is cached). compare_beam=N measures tinygrad's BEAM=N
  the same way, kernel by kernel (beam_kernels), into `beam_cache` (default: a fresh temporary one); search_beam=False only reads it,
  and the BEAM latency is measured only once every kernel has its result. history: a dataset.history file (None: the shipped one for
  the device's arch, if there is one; False: none)."""
  for p, is_dir in ((out, True), (cache or DEFAULT_CACHE, False), (beam_cache, False)):   # before the work, not after it
    if p is not None and (why := cannot_write(p, is_dir)): raise ModelError(why)
  device = device or default_device()
  open_device(device)
  if strategy not in LEARNED: raise ModelError(f"unknown strategy {strategy!r}: choose one of {', '.join(LEARNED)}")
  if why := bad_later_share(later_share): raise ModelError(f"--later-share {why}")
  try: scheduled(strategy, strategy_args)
  except ValueError as e: raise ModelError(f"--strategy-args: {e}") from None
  dev_name, arch, props = device_info(device)
  notes: list[str] = []   # the model's note waits until the inputs are known good: a bad input's error is the only line
  cm, cm_path = load_model(cost_model, device, dev_name, arch, allow_device_mismatch, notes.append)
  hist = load_history(history, device, arch)
  tc = TunedCache(cache or DEFAULT_CACHE)
  name, m, kernels, counts, module = open_model(model, example_inputs, device, name, input_shapes, seed)
  for s in notes: log(s)
  log(f"tune-model: {name}: {len(kernels)} distinct kernels, {sum(counts.values())} launches, on {dev_name} ({arch}), strategy {strategy}, "
      f"model {Path(cm_path).name}")
  rep: dict[str, Any] = {"model": name, "source": str(model) if module is None else f"torch module {name}", "device": f"{dev_name} ({arch})",
                         "backend": device, "date": time.strftime("%Y-%m-%d"), "tinygrad": TINYGRAD_VERSION, "strategy": strategy,
                         "strategy_args": strategy_args or {}, "next_gain": next_gain, "timing": timing, "first_share": first_share,
                         "later_share": later_share, "second_share": second_share, "cost_model": cm_path, "history": hist.meta.get("path") if hist else None,
                         "cache": str(tc.path), "inputs": {k: [list(v.shape), str(v.dtype)] for k, v in m.arrays.items()},
                         "kernels_distinct": len(kernels), "kernel_launches": sum(counts.values()), "runs": runs}
  # the search's compile workers start (spawned, each importing tinygrad) while the default latency is measured, which the run
  # waits for anyway, instead of at the start of the tuning
  if workers > 1: shared_pool(device, workers)
  default = tinygrad_latency(m, runs)
  rep["default_ms"], rep["default_first_s"] = default["ms"], default["first_s"]
  st = time.perf_counter()
  rep["compile_penalty"] = compile_penalty and cm.compile_model is not None
  rows = tune_kernels(kernels, counts, device, tc, strategy, budget, time_budget, cm.scorer(props, compile_penalty), Path(cm_path).name,
                      retune, workers, seed, log, strategy_args, next_gain, hist, timing, first_share, later_share, second_share)
  rep["tune_wall_s"], rep["tune_s"] = time.perf_counter() - st, sum(r["tune_s"] or 0.0 for r in rows)
  rep["kernels_searched"] = sum(r["status"] not in ("cached", "default") for r in rows)
  rep["budget"], rep["time_budget"] = sum(r["budget"] for r in rows), time_budget
  tuned_run, gst = tinygrad_latency(m, runs, lambda: tuned(tc.path)), time.perf_counter()
  # a config that passed its kernel's check can still break the model (search.guard): such kernels take their next-fastest config
  # that does not, or the default. The tuned run's outputs are the first probe; only where they differ is there more to run
  rejected = [] if check(tuned_run["outputs"], default["outputs"])[0] is None else repair(m, kernels, tc, device, default["outputs"], log)
  for r in rows:
    if r["key"] in rejected:
      e = tc.get(r["key"], device)
      r.update(status=f"{e['status']}: its config broke the model's outputs", tuned_us=e["time_us"] if e["status"] == "alternate" else r["default_us"])
  if rejected: tuned_run = tinygrad_latency(m, runs, lambda: tuned(tc.path))
  rep["guard_s"], rep["rejected"] = time.perf_counter() - gst, len(rejected)
  rep["tuned_ms"], rep["tuned_first_s"], rep["tuned_launches"] = tuned_run["ms"], tuned_run["first_s"], tuned_run["applied"][0]
  # what follows only compares: a failure there is recorded, and the tuning above is never lost to it
  n, beam = compare_beam or 2, None
  rep[f"beam{n}_ms"] = rep[f"beam{n}_tune_s"] = rep[f"beam{n}_error"] = None
  if compare_beam:
    with tempfile.TemporaryDirectory(prefix="tune_model_beam_") as tmp:
      try:
        bc = TunedCache(beam_cache or Path(tmp) / "beam.json")
        brows = beam_kernels(kernels, device, bc, compare_beam, workers, search_beam, log)
        for r, b in zip(rows, brows): r.update(beam_us=b["beam_us"], beam_s=b["beam_s"], beam_timed=b["beam_timed"])
        done = sum(b["done"] for b in brows)
        rep[f"beam{n}_tune_s"], rep[f"beam{n}_kernels_done"] = sum(b["beam_s"] or 0.0 for b in brows), done
        if done < len(brows): rep[f"beam{n}_error"] = f"BEAM={n} has searched {done} of {len(brows)} kernels so far"
        else:
          beam = tinygrad_latency(m, runs, lambda: tuned(bc.path))
          rep[f"beam{n}_ms"] = beam["ms"]
      except Exception as e: rep[f"beam{n}_error"] = one_line(e, 300)
  # the final figures: default, tuned and BEAM taking turns (interleaved); the back-to-back medians above stay in first_pass_ms
  jits = {"default_ms": default["jit"], "tuned_ms": tuned_run["jit"], **({f"beam{n}_ms": beam["jit"]} if beam is not None else {})}
  rep["first_pass_ms"] = {k: rep[k] for k in jits}
  rep.update(interleaved(m, jits, runs))
  rep["latency"] = f"median of {ROUNDS} rounds x {runs} TinyJit runs, default, tuned and BEAM taking turns round by round, after 2 warm-up calls each, device synchronized after each run"
  rep["torch_eager_ms"] = rep["torch_compile_ms"] = rep["torch_eager_error"] = rep["torch_compile_error"] = None
  ref, rep["reference"] = default["outputs"], "tinygrad default"
  if module is not None:
    import torch
    cuda = device == "CUDA" and torch.cuda.is_available()
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False   # fp32 stays fp32, as tinygrad's
    try:
      tm = module.to("cuda" if cuda else "cpu")
      xs = [torch.from_numpy(m.arrays[f"input{i}"]).to("cuda" if cuda else "cpu") for i in range(len(m.arrays))]
      rep["torch_eager_ms"], ref = torch_latency(tm, xs, runs, cuda)
      rep["reference"] = "torch eager"
    except Exception as e: rep["torch_eager_error"] = one_line(e, 300)
    if not torch_compile: rep["torch_compile_error"] = "not run (torch_compile=False)"
    elif rep["torch_eager_ms"] is not None:
      try: rep["torch_compile_ms"] = torch_latency(torch.compile(tm), xs, runs, cuda)[0]
      except Exception as e: rep["torch_compile_error"] = one_line(e, 300)
  err, rep["max_abs_err"] = check(tuned_run["outputs"], ref)
  rep["outputs_match"], rep["check"] = err is None, err
  rep["default_max_abs_err"] = check(default["outputs"], ref)[1]
  if beam is not None: rep[f"beam{n}_max_abs_err"] = check(beam["outputs"], ref)[1]
  rep["kernels"] = rows
  if out is not None:
    Path(out).mkdir(parents=True, exist_ok=True)
    (Path(out) / f"{name}.json").write_text(json.dumps(rep, indent=1, default=float))
  log(table(rep))
  return rep

def repair(model, kernels:list, cache:TunedCache, device:str, reference:list, log:Callable) -> list[str]:
  """Where the model with `cache`'s configs computes other outputs than `reference` (tinygrad's default run): the kernels whose
  configs break them, each put back in the cache to the next-fastest config its search timed that passes (status `alternate`) or
  else to its hand-coded config, its own kept as `rejected` (search.guard.fix). Returns their keys."""
  def differs(keys:list[str], instead:dict[str, list]) -> bool:   # instead: other opts for some of them
    with tempfile.TemporaryDirectory(prefix="kerntune_guard_") as tmp:
      p = Path(tmp) / "subset.json"
      p.write_text(json.dumps({k: {**v, "opts": instead.get(k.split("|")[0], v["opts"])} for k, v in cache.entries.items()
                               if k.split("|")[0] in keys}))
      return check(tinygrad_latency(model, 1, lambda: tuned(p))["outputs"], reference)[0] is not None
  return fix(kernels, [k.key for k in kernels if cache.get(k.key, device) is not None], cache, device, differs, log)

def table(rep:dict) -> str:
  lines = [f"{'#':>3} {'kernel':24} {'runs':>4} {'share':>6} {'default_us':>10} {'hand_us':>8} {'tuned_us':>9} {'budget':>6} {'timed':>5}  status"]
  for r in sorted(rep["kernels"], key=lambda r: -(r["share"] or 0)):
    f = lambda x: "-" if x is None else f"{x:.1f}"
    lines.append(f"{r['index']:>3} {r['kernel'][:24]:24} {r['occurrences']:>4} {(r['share'] or 0):>6.1%} {f(r['default_us']):>10} "
                 f"{f(r['hand_coded_us']):>8} {f(r['tuned_us']):>9} {r['budget']:>6} {r['timed']:>5}  {r['status']}")
  ms = lambda k: "-" if rep.get(k) is None else f"{rep[k]:.3f}"
  beam = next((k for k in rep if k.startswith("beam") and k.endswith("_ms")), None)
  lines.append(f"latency ms: default {ms('default_ms')}, tuned {ms('tuned_ms')} (tuning {rep['tune_s']:.1f} s)"
               + (f", BEAM {ms(beam)} (tuning {rep[beam[:-3] + '_tune_s']:.1f} s)" if rep.get(beam) is not None else "")
               + f", torch eager {ms('torch_eager_ms')}, torch.compile {ms('torch_compile_ms')}"
               + f"; outputs {'match' if rep['outputs_match'] else 'DIFFER: ' + str(rep['check'])} {rep['reference']} (max abs err {rep['max_abs_err']:.2e})")
  return "\n".join(lines)

def parse_args(argv=None):
  ap = argparse.ArgumentParser("tune-model", description=__doc__.split("\n")[0])
  ap.add_argument("onnx", help="ONNX model file")
  ap.add_argument("--device", default=None, help="CUDA or CPU (default: CUDA if present, else CPU)")
  ap.add_argument("--input-shape", action="append", default=[], metavar="NAME=D,D,...", help="shape of an input with symbolic dims")
  ap.add_argument("--budget", type=count, default=None, help=f"timed candidates in all, shared out by the scheduler (default {PER_KERNEL_DEFAULT} per kernel)")
  ap.add_argument("--time-budget", type=positive, default=None, help="seconds of tuning in all, a limit: from the first default measured to the last final check")
  ap.add_argument("--strategy", choices=LEARNED, default="beam")
  ap.add_argument("--next-gain", type=at_least(0.0, float), default=NEXT_GAIN, help=f"a kernel's second round is expected to gain this share of its "
                  f"time (default {NEXT_GAIN}): higher spends more of the budget on later rounds")
  ap.add_argument("--strategy-args", type=json.loads, default=None, metavar="JSON",
                  help='the strategy\'s parameters, e.g. \'{"descent_width": 8}\' (search.beam.Beam\'s fields)')
  ap.add_argument("--model", default=None, help="cost model (default: the shipped model for the device's arch)")
  ap.add_argument("--history", default=None, help="dataset.history file: first batches start from the configs measured fastest on kernels "
                  "of the same loop nest (default: the shipped one for the device's arch, models/history_<arch>.json, if present)")
  ap.add_argument("--no-history", action="store_true", help="search from the cost model alone")
  ap.add_argument("--allow-device-mismatch", action="store_true")
  ap.add_argument("--cache", default=None, help=f"tuned-kernel cache (default {DEFAULT_CACHE})")
  ap.add_argument("--compare-beam", type=count, default=0, metavar="N", help="also measure tinygrad's BEAM=N (latency and tuning time)")
  ap.add_argument("--beam-cache", default=None, help="where --compare-beam keeps BEAM's per-kernel results (a rerun resumes from it)")
  ap.add_argument("--runs", type=natural, default=20, help="timed runs per latency")
  ap.add_argument("--retune", action="store_true", help="search kernels the cache already has")
  ap.add_argument("--workers", type=count, default=0, help="compile processes (0: in this process)")
  ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--out", default="out/tune_model", help="directory for NAME.json")
  ap.add_argument("--no-compile-penalty", action="store_true", help="rank by the cost model alone, not less its penalty for slow compiles")
  ap.add_argument("--timing", choices=TIMINGS, default="cold", help="cold (default): the L2 flushed before each timed run; warm: not "
                  "flushed, as a kernel runs inside a network; auto: warm where the kernel's buffers fit in half the L2")
  ap.add_argument("--first-share", type=at_least(0.0, float), default=0.0, metavar="S", help="a kernel under this share of the model's default time "
                  f"gets a first batch and a model descent in proportion (e.g. {FIRST_SHARE}; default 0: every kernel the full one)")
  ap.add_argument("--later-share", type=read_later_share, default=LATER_SHARE, metavar="S", help="the kernels' rounds after their first "
                  f"take at most this share of the tuning's other seconds (default {LATER_SHARE}; off: each round taken by its expected gain)")
  ap.add_argument("--second-share", type=at_least(0.0, float), default=SECOND_SHARE, metavar="S", help="a kernel of at least this share "
                  "of the model's time gets a second round before any kernel a third (default: off, rounds by expected gain alone)")
  return ap.parse_args(argv)

def main(argv=None) -> int:
  a = parse_args(argv)
  try:
    tune_model(a.onnx, device=a.device, budget=a.budget, time_budget=a.time_budget, strategy=a.strategy, cost_model=a.model,
               allow_device_mismatch=a.allow_device_mismatch, cache=a.cache, compare_beam=a.compare_beam, beam_cache=a.beam_cache, runs=a.runs,
               input_shapes=parse_shapes(a.input_shape), retune=a.retune, workers=a.workers, seed=a.seed,
               compile_penalty=not a.no_compile_penalty, strategy_args=a.strategy_args, next_gain=a.next_gain,
               history=False if a.no_history else a.history, out=a.out, timing=a.timing,
               first_share=a.first_share or None, later_share=a.later_share, second_share=a.second_share)
  except (ModelError, DeviceError, CacheError) as e: return fail(str(e))
  except Exception as e:
    if type(e).__name__ == "CostModelError": return fail(str(e))
    raise
  return 0

def fail(msg:str) -> int:
  print(f"tune-model: error: {msg}", file=sys.stderr); return 2

if __name__ == "__main__": sys.exit(main())
