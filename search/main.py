"""kerntune: one command for the whole loop; each subcommand is the console script of the same job, with the same arguments.

  kerntune generate ARGS      generate-dataset: measure configs of corpus kernels into a store
  kerntune train ARGS         train-cost-model: a cost model from a store
  kerntune search ARGS        search: tune one workload's kernels, guided by the model
  kerntune tune-model ARGS    tune-model: tune every kernel of a whole model under one budget
  kerntune run PROG.py ARGS   tuned-run: run a program with the tuned kernels
  kerntune install-hook       KERNTUNE=1 python prog.py tunes any tinygrad program (an editable install needs it once)
  kerntune fuzz ARGS          random kernels under random valid opts, each checked against its unoptimized kernel (search.fuzz)
  kerntune quickstart         generate -> train -> search on this machine's CPU in under 10 minutes"""
from __future__ import annotations
import argparse, importlib, json, math, sys, time
from pathlib import Path
from typing import Callable
from dataset.argtypes import count, natural, positive

# subcommand -> its console script's main, imported on use: the jobs' imports (torch, LightGBM, onnx) take seconds the others need not pay
COMMANDS = {"generate": "models.generate:main", "train": "models.train:main", "search": "search.cli:main",
            "tune-model": "search.tune_model:main", "run": "search.cache:run_main"}
TOOLS = {"fuzz": "search.fuzz:main", "install-hook": "search.hook:install_main"}   # subcommands without a console script of their own

def command(name:str) -> Callable[[list[str]], int]:
  mod, fn = {**COMMANDS, **TOOLS}[name].split(":")
  return getattr(importlib.import_module(mod), fn)

# *** quickstart ***

# The loop on a CPU, sized for a 2-core machine (about 1.2 measured configs a second there): the small corpus's 39 op kernels (its
# networks' 50-odd more would take the budget), few configs per kernel so that most of them are measured. On the committed CPU
# dataset, rankers trained on 18-39 of these kernels with their first 10-16 configs rank held-out kernels at pairwise accuracy
# 0.63-0.69 (the shipped model, 94 kernels of 40 configs: 0.70). generate's compile workers stay at cores - 1: one more on the
# core that times runs more configs but makes their times noisier.
QS_KERNELS = ("conv2d,conv2d_bias_relu,gemm,bmm,softmax,layernorm,attention,maxpool,conv2d_backward,softmax_backward,"
              "layernorm_backward")
QS_SAMPLES, QS_GENERATE_S, QS_SEARCH_BUDGET = 12, 360.0, 16

def quickstart_steps(out:Path, device:str, samples:int, generate_s:float, workers:int|None, search_budget:int) -> list[tuple[str, list[str]]]:
  store, model = out / f"{device.lower()}.sqlite", out / f"cost_model_{device.lower()}.txt"
  return [("generate", ["--device", device, "--kernels", QS_KERNELS, "--samples-per-kernel", str(samples), "--time-budget", str(generate_s),
                        *(["--workers", str(workers)] if workers else []), "--out", str(store), "--no-progress"]),
          ("train", [str(store), "--device", device, "--out", str(model)]),
          ("search", ["--kernel", "conv2d", "--device", device, "--model", str(model), "--budget", str(search_budget), "--out", str(out / "search")])]

def quickstart(argv:list[str]) -> int:
  ap = argparse.ArgumentParser("kerntune quickstart", description="generate a small dataset, train a cost model on it, and search a "
                               "conv2d with that model: the whole loop on this machine, in under 10 minutes on 2 CPU cores")
  ap.add_argument("--out", default="out/quickstart", help="directory for the dataset, the model and the search's kernels")
  ap.add_argument("--device", choices=["CPU", "CUDA"], default="CPU")
  ap.add_argument("--samples-per-kernel", type=natural, default=QS_SAMPLES)
  ap.add_argument("--time-budget", type=positive, default=QS_GENERATE_S, help="seconds of measuring (a rerun resumes the store)")
  ap.add_argument("--workers", type=count, default=None, help="generate's compile processes (default: cores - 1)")
  ap.add_argument("--search-budget", type=count, default=QS_SEARCH_BUDGET, help="timed candidates per conv2d kernel")
  a = ap.parse_args(argv)
  out, st, done = Path(a.out), time.perf_counter(), []
  steps = quickstart_steps(out, a.device, a.samples_per_kernel, a.time_budget, a.workers, a.search_budget)
  for i, (name, args) in enumerate(steps):
    print(f"\n[{i+1}/{len(steps)}] kerntune {name} {' '.join(args)}", flush=True)
    t0 = time.perf_counter()
    # search exits 1 when a kernel's pick fails its correctness check: its result still says which
    if (rc := command(name)(args)) not in ((0, 1) if name == "search" else (0,)):
      print(f"kerntune quickstart: {name} failed (exit {rc}); what is done so far is in {out}", file=sys.stderr)
      return rc
    done.append(time.perf_counter() - t0)
  print("\n" + "\n".join(summary(out, a.device, done, time.perf_counter() - st)))
  return 0

def summary(out:Path, device:str, secs:list[float], total:float) -> list[str]:
  """What the quickstart produced and where, in a few lines."""
  from dataset.stats import stats
  from search.cache import DEFAULT
  store, model = out / f"{device.lower()}.sqlite", out / f"cost_model_{device.lower()}.txt"
  ds, meta = stats(str(store)), json.loads(model.with_suffix(".json").read_text())
  m, res = meta["metrics"], json.loads((out / "search" / "result.json").read_text())
  ks = res["kernels"]
  geo = math.exp(sum(math.log(k["speedup_vs_hand"]) for k in ks)/len(ks)) if all(k["speedup_vs_hand"] for k in ks) else float("nan")
  lines = [f"kerntune quickstart: done in {total:.0f} s (generate {secs[0]:.0f} s, train {secs[1]:.0f} s, search {secs[2]:.0f} s)",
           f"  dataset  {store}: {ds['measurements_ok']} measured configs ({ds['measurements_failed']} failed) of {ds['kernels_with_ok']} kernels",
           f"  model    {model} (+ .json, {model.with_name(model.stem.replace('cost_model', 'history', 1) + '.json').name}): held-out "
           f"({m['protocol']}) pairwise accuracy {m['pairwise_acc']:.3f}, top-1 {m['top1_score']:.3f}, Kendall tau {m['kendall_tau']:.3f}",
           f"  search   {out / 'search'}/: {res['workload']}, {len(ks)} kernel(s), {geo:.2f}x hand-coded (geomean), "
           f"{sum(k['verified'] for k in ks)}/{len(ks)} verified; per kernel its opts (kernelN.opts.json), source and result.json"]
  lines += [f"           {k['name']}: {k['time_us']:.1f} us vs hand-coded {k['hand_coded_us']:.1f} us" for k in ks]
  lines += [f"  cache    {DEFAULT}: the verified kernels, which tuned-run and tune-model replay"]
  lines += [f"  next     kerntune search --kernel gemm --device {device} --model {model}   (or tune-model, tuned-run: see the README)"]
  return lines

def main(argv=None) -> int:
  argv = sys.argv[1:] if argv is None else argv
  usage = "usage: kerntune COMMAND ARGS (kerntune COMMAND --help for its arguments)\n" + __doc__.split("\n", 1)[1].strip("\n")
  if argv[:1] in (["-h"], ["--help"]): print(usage); return 0
  if not argv or argv[0] not in (*COMMANDS, *TOOLS, "quickstart"):
    print(usage + (f"\nkerntune: error: unknown command {argv[0]!r}" if argv else ""), file=sys.stderr); return 2
  return quickstart(argv[1:]) if argv[0] == "quickstart" else command(argv[0])(argv[1:])

if __name__ == "__main__": sys.exit(main())
