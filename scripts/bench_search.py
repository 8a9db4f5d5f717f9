"""Search benchmark (issue 4), one run on one device: per suite op, the kernel time of tinygrad hand-coded, BEAM=2, BEAM=4, learned
beam, MCTS and pure-model, and torch (cuDNN/cuBLAS) for the same op; per strategy the search wall time and compiled and timed
candidates. An op's time is the sum of its kernels' times. The cost model must not have seen these kernels:
  python scripts/bench_search.py --print-keys CUDA > results/suite_keys.txt      # no GPU needed
  train-cost-model dataset/data/cuda.sqlite --with dataset/data/cuda_h100.sqlite.gz --params models/cost_model_sm_90.json --no-check \
    --blend 0.7 --threads 2 --mask opts --exclude-keys results/suite_keys.txt --out models/cost_model_sm_90_nosuite.txt
  (the shipped model's recipe less the suite's kernels; its ranker parameters are the shipped model's, from a study that saw them)
  python scripts/bench_search.py --model models/cost_model_sm_90_nosuite.txt --out results   (on the GPU host)
A regression run of the learned search alone takes BEAM's answers and seconds from an earlier run on the same kind of card:
  ... --strategies hand-coded,beam2,learned-beam --beam-from results/search_bench_h200_rerun.json"""
from __future__ import annotations
import argparse, json, math, sys, time
from pathlib import Path
from dataset.corpus import parse_variant
from dataset.device import default_device, device_info, renderer_for
from dataset.kernel import Kernel, kernel_asts, opts_to_json, opts_from_json, scheduler
from dataset.sampler import replay
from search.measure import Budget, Measurer, shared_pool
from search.cli import load_model, search_kernels

SUITE = {  # name: (kerntune variant, torch builder args)
  "conv3x3_s1": "conv2d:n=32:c=64:h=56:w=56:k=64:ks=3:stride=1:padding=1:fp16",
  "conv3x3_s2": "conv2d:n=32:c=128:h=56:w=56:k=128:ks=3:stride=2:padding=1:fp16",
  "conv1x1": "conv2d:n=32:c=256:h=56:w=56:k=64:ks=1:stride=1:padding=0:fp16",
  "conv7x7_s2": "conv2d:n=32:c=3:h=224:w=224:k=64:ks=7:stride=2:padding=3:fp16",
  "depthwise3x3_fp32": "conv2d:n=32:c=192:h=28:w=28:k=192:ks=3:stride=1:padding=1:groups=192:fp32",
  "bmm": "bmm:b=64:m=512:k=64:n=512:fp16",
  "gemm4096": "gemm:m=4096:k=4096:n=4096:fp16",
  "gemm2048_fp32": "gemm:m=2048:k=2048:n=2048:fp32",
  "softmax_fp32": "softmax:rows=4096:cols=4096:log=0:fp32",
  "layernorm_fp32": "layernorm:rows=8192:cols=1024:fp32",
  "attention": "attention:b=8:heads=12:seq=512:dim=64:causal=0:fp16",
}
STRATEGIES = {"hand-coded": None, "beam2": ("tinygrad-beam", {"amt": 2}), "beam4": ("tinygrad-beam", {"amt": 4}),
              "learned-beam": ("beam", {}), "mcts": ("mcts", {}), "pure-model": ("pure-model", {})}

def suite_keys(device:str) -> set[str]:
  return {ast.key.hex() for spec in SUITE.values() for ast in kernel_asts(*parse_variant(spec).build(device))}

def torch_us(spec:str, reps:int=50) -> float|None:
  """The same op through torch (cuDNN / cuBLAS), median of CUDA-event timings with the L2 flushed before each run."""
  import torch
  if not torch.cuda.is_available(): return None
  v = dict(parse_variant(spec).params)
  dt = torch.float16 if v["dtype"] == "fp16" else torch.float32
  r = lambda *s: torch.randn(*s, device="cuda", dtype=dt)
  w = spec.split(":")[0]
  if w == "conv2d":
    x, wt = r(v["n"], v["c"], v["h"], v["w"]), r(v["k"], v["c"]//v["groups"], v["ks"], v["ks"])
    fn = lambda: torch.nn.functional.conv2d(x, wt, stride=v["stride"], padding=v["padding"], dilation=v["dilation"], groups=v["groups"])
  elif w == "bmm": a, b = r(v["b"], v["m"], v["k"]), r(v["b"], v["k"], v["n"]); fn = lambda: torch.bmm(a, b)
  elif w == "gemm": a, b = r(v["m"], v["k"]), r(v["k"], v["n"]); fn = lambda: a @ b
  elif w == "softmax": x = r(v["rows"], v["cols"]); fn = lambda: torch.softmax(x, -1)
  elif w == "layernorm":
    x, g, b = r(v["rows"], v["cols"]), r(v["cols"]), r(v["cols"]); fn = lambda: torch.nn.functional.layer_norm(x, (v["cols"],), g, b)
  elif w == "attention":
    q, k, vv = (r(v["b"], v["heads"], v["seq"], v["dim"]) for _ in range(3))
    fn = lambda: torch.nn.functional.scaled_dot_product_attention(q, k, vv, is_causal=bool(v["causal"]))
  else: return None
  return cuda_median_us(fn, reps)

def cuda_median_us(fn, reps:int=50) -> float:
  """Median of CUDA-event timings of fn() in microseconds, the L2 flushed before each, after 5 warm-ups; fp32 without TF32."""
  import torch
  torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False   # fp32 stays fp32, as tinygrad's
  flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
  for _ in range(5): fn()
  ts = []
  for _ in range(reps):
    flush.zero_()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); fn(); e.record(); torch.cuda.synchronize()
    ts.append(s.elapsed_time(e) * 1e3)
  return sorted(ts)[len(ts)//2]

def warm_pools(device:str, workers:int, scorer=None):
  """Both compile pools started before anything is timed: tinygrad's BEAM keeps its pool for the process, as search keeps its
  own (and its workers their copy of the cost model, which scores children there), so the searches are compared in steady state,
  not by who pays the process start-up (a few seconds, once)."""
  from tinygrad.engine.worker import get_worker_pool
  if (p := get_worker_pool()) is not None: p.map(abs, range(64))
  if workers > 1: list(shared_pool(device, workers).map(bool, [scorer]*(4*workers)))   # unpickling a Scorer loads its model

def main(argv=None) -> int:
  ap = argparse.ArgumentParser("bench_search")
  ap.add_argument("--print-keys", metavar="DEVICE", help="print the suite's kernel AST keys on DEVICE (for train-cost-model --exclude-keys) and exit")
  ap.add_argument("--model", help="a cost model trained without the suite's kernels")
  ap.add_argument("--budget", type=int, default=15, help="timed candidates per kernel for learned beam and MCTS (default 15: the beam "
                  "spends it in one batch, the hand-coded and 14 model picks, since every round costs a compile latency)")
  ap.add_argument("--kernel-seconds", type=float, default=60, help="wall-time cap per kernel for learned beam and MCTS")
  ap.add_argument("--rounds", type=int, default=5, help="rounds of the final side-by-side re-timing of every strategy's kernels")
  ap.add_argument("--ops", default=None, help="comma list of suite ops (default: the suite and every --op)")
  ap.add_argument("--op", action="append", default=[], metavar="NAME=VARIANT", help="add an op to the suite (a corpus variant name "
                  "with its shape, e.g. softmax:rows=64:cols=64:log=0:fp32); --ops then picks from the suite and these")
  ap.add_argument("--device", default=None)
  ap.add_argument("--workers", type=int, default=15)
  ap.add_argument("--out", default="results")
  ap.add_argument("--gpus", type=int, default=1, help="run the ops on this many GPUs of the host at once, one process per GPU (each op's "
                  "strategies all run on one GPU, so every comparison stays within one device); results are merged")
  ap.add_argument("--strategies", default=None, help="comma list of the strategies to run (default: all)")
  ap.add_argument("--verbose", action="store_true", help="a line per timed candidate")
  ap.add_argument("--no-plot", action="store_true", help="skip the plot (matplotlib is not on the GPU host; plot later with --replot)")
  ap.add_argument("--beam-from", metavar="JSON", help="tinygrad BEAM's answers and search seconds from an earlier search_bench.json "
                  "on the same kind of device, not searched again: their picks are timed, checked and re-timed side by side here")
  ap.add_argument("--replot", metavar="JSON", help="write the markdown and plot of an existing search_bench.json and exit")
  a = ap.parse_args(argv)
  SUITE.update(x.partition("=")[::2] for x in a.op)
  a.ops = a.ops or ",".join(SUITE)
  if a.replot:
    res = json.loads(Path(a.replot).read_text())
    write_markdown(res, Path(a.replot).with_suffix(".md")); plot(res, Path(a.replot).with_suffix(".png")); return 0
  if a.print_keys:
    print(f"# AST keys of scripts/bench_search.py's suite on {a.print_keys}, tinygrad 0.14.0")
    print("\n".join(sorted(suite_keys(a.print_keys)))); return 0
  if not a.model: ap.error("--model is required")
  if a.gpus > 1: return run_parallel(a, argv if argv is not None else sys.argv[1:])
  strategies = {n: STRATEGIES[n] for n in (a.strategies.split(",") if a.strategies else STRATEGIES)}
  device = a.device or default_device()
  dev_name, arch, props = device_info(device)
  model, model_path = load_model(a.model, device, dev_name, arch, False)
  scorer = model.scorer(props)
  res = {"device": f"{dev_name} ({arch})", "date": time.strftime("%Y-%m-%d"), "model": model_path, "budget": a.budget,
         "command": "python scripts/bench_search.py " + " ".join(sys.argv[1:] if argv is None else argv), "ops": {}}
  prior, note = earlier_beam(a.beam_from, res["device"], a.ops.split(","), [n for n, s in strategies.items() if s and s[0] == "tinygrad-beam"], device)
  if note: res["notes"] = [note]
  out = Path(a.out); out.mkdir(parents=True, exist_ok=True)
  warm_pools(device, a.workers, scorer)
  for op in a.ops.split(","):
    v = parse_variant(SUITE[op])
    kernels = [Kernel(ast.key.hex(), ast, f"{v.name}#{i}", v.family, v.workload) for i, ast in enumerate(kernel_asts(*v.build(device)))]
    row = {}
    for sname, spec in strategies.items():
      tot = {"kernel_us": 0.0, "search_s": 0.0, "compiled": 0, "timed": 0, "failed": 0, "compile_s": 0.0, "time_s": 0.0,
             "verified": True, "opts": [], "trajectories": []}
      if spec is None: answers(kernels, device, None, tot)   # tinygrad's hand-coded choice, measured and checked by the same protocol
      elif sname in prior.get(op, {}):
        p = prior[op][sname]
        tot.update({key: p[key] for key in ("search_s", "compiled", "timed", "failed", "compile_s", "time_s")}, trajectories=[])
        answers(kernels, device, [tuple(opts_from_json(o)) for o in p["opts"]], tot)
      else:
        strat, args = spec
        say = (lambda m: print(f"  {op} {sname} {m.kernel.name}: timed {m.timed} compiled {m.compiled} failed {m.failed} "
                               f"{m.elapsed:.1f} s (compile {m.compile_s:.1f} s, time {m.time_s:.1f} s) best {m.best*1e6:.1f} us", flush=True)) if a.verbose else None
        st = time.perf_counter()
        # the op's kernels are searched together (search.cli.search_kernels; tinygrad's BEAM takes them one after another)
        found = search_kernels(kernels, device, strat, Budget(a.budget, a.kernel_seconds) if strat in ("beam", "mcts") else Budget(),
                               scorer, 0, a.workers, say, **args)
        # the whole cost of the answer: the buffers, the reference runs, the search, and the final measurements and checks
        tot["search_s"] = time.perf_counter() - st
        for o, m in found:
          tot["failed"] += m.failed; tot["compile_s"] += m.compile_s; tot["time_s"] += m.time_s
          tot["kernel_us"] += o.time_s*1e6
          tot["compiled"] += o.compiled; tot["timed"] += o.timed
          tot["opts"].append(opts_to_json(o.opts)); tot["trajectories"].append(o.trajectory)
          tot.setdefault("marks", []).append({**m.marks, "end": round(m.elapsed, 3)})   # where each kernel's search spent its wall
          if a.verbose: print(f"  {op} {sname} {m.kernel.name}: phases {tot['marks'][-1]}", flush=True)
          tot["verified"] &= o.verified
          # a faster config that computed wrong (tinygrad's BEAM can pick one): not the answer, but on record with its error
          tot.setdefault("rejected", []).extend({"kernel": m.kernel.name, **r} for r in o.rejected_json())
          m.close()
      row[sname] = tot
      print(f"{op:18s} {sname:12s} {tot['kernel_us']:10.1f} us  search {tot['search_s']:7.1f} s  {tot['compiled']:5d} compiled {tot['timed']:5d} timed", flush=True)
    retime(kernels, device, row, a.rounds)
    row["torch"] = {"kernel_us": torch_us(SUITE[op])}
    res["ops"][op] = row
    (out / "search_bench.json").write_text(json.dumps(res, indent=1))   # after every op: a cut-off run keeps what it measured
  write_markdown(res, out / "search_bench.md")
  if not a.no_plot: plot(res, out / "search_bench.png")
  return 0

def answers(kernels:list[Kernel], device:str, opts:list|None, tot:dict):
  """Each kernel's config (None: tinygrad's hand-coded one) timed and checked by the search's protocol, into tot."""
  for i, k in enumerate(kernels):
    m = Measurer(k, device, Budget(), workers=0)
    o = m.hand if opts is None else opts[i]
    tot["kernel_us"] += m.measure([o])[0]*1e6
    tot["verified"] &= m.verify(o) is None
    tot["opts"].append(opts_to_json(o))
    m.close()

def earlier_beam(path:str|None, device_name:str, ops:list[str], names:list[str], device:str) -> tuple[dict[str, dict], str|None]:
  """--beam-from: ({op: {strategy: its earlier row}} for the BEAM strategies asked for, the results' note), checked before anything
  runs: the same kind of device, and every pick applies to the op's kernels as built now (else it is an error, not a search)."""
  if path is None: return {}, None
  try: r = json.loads(Path(path).read_text())
  except (OSError, ValueError) as e: raise SystemExit(f"bench_search: error: --beam-from {path}: {e}")
  if r.get("device") != device_name: raise SystemExit(f"bench_search: error: --beam-from {path} ran on {r.get('device')}, not {device_name}")
  out, ren = {}, renderer_for(device)
  for op in ops:
    asts = kernel_asts(*parse_variant(SUITE[op]).build(device))
    for n in names:
      if (p := r.get("ops", {}).get(op, {}).get(n)) is None: continue
      if len(p["opts"]) != len(asts) or any(replay(scheduler(a, ren), tuple(opts_from_json(o))) is None for a, o in zip(asts, p["opts"])):
        raise SystemExit(f"bench_search: error: --beam-from {path}: {op}'s {n} picks do not apply to its kernels as built now")
      out.setdefault(op, {})[n] = p
  reused = sorted({n for row in out.values() for n in row})
  return out, (f"{', '.join(reused)}: answers and search seconds from {path} ({r['device']}, {r['date']}), not searched again; their "
               f"picks timed, checked and re-timed here" if reused else None)

def run_parallel(a, argv:list[str]) -> int:
  """One child process per GPU (CUDA_VISIBLE_DEVICES), each taking the next op from the queue, slowest ops first; after every op
  the merged results are rewritten, so a run cut off by a time limit keeps every finished op. The GPUs are the first `gpus` of
  those this process may see (its CUDA_VISIBLE_DEVICES), so that another job can run beside it on the host's other GPUs."""
  import os, subprocess, tempfile
  ops, out = a.ops.split(","), Path(a.out)
  ids = [i for i in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if i.strip()] or [str(g) for g in range(a.gpus)]
  if len(ids) < a.gpus: raise SystemExit(f"bench_search: error: --gpus {a.gpus}, but CUDA_VISIBLE_DEVICES names {len(ids)} GPUs")
  out.mkdir(parents=True, exist_ok=True)
  rest, skip = [], {"--gpus", "--ops", "--out"}
  it = iter(argv)
  for x in it:
    if x.split("=")[0] in skip: (None if "=" in x else next(it, None))
    else: rest.append(x)
  tmp = Path(tempfile.mkdtemp(prefix="bench_"))
  merged: dict = {}
  running: dict[int, tuple[subprocess.Popen, str]] = {}
  log = open(out / "bench.log", "a")
  while ops or running:
    for g in range(a.gpus):
      if g not in running and ops:
        op = ops.pop(0)
        env = {**os.environ, "CUDA_VISIBLE_DEVICES": ids[g]}
        cmd = [sys.executable, __file__, *rest, "--ops", op, "--out", str(tmp / op), "--no-plot"]
        running[g] = (subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT), op)
    time.sleep(1)
    for g, (p, op) in list(running.items()):
      if p.poll() is None: continue
      del running[g]
      f = tmp / op / "search_bench.json"
      if p.returncode != 0 or not f.is_file():
        print(f"{op}: failed (exit {p.returncode}); see bench.log", file=log, flush=True); continue
      r = json.loads(f.read_text())
      r["ops"][op]["gpu"] = int(ids[g]) if ids[g].isdigit() else ids[g]
      if not merged: merged = {**r, "ops": {}, "command": "python scripts/bench_search.py " + " ".join(argv), "gpus": a.gpus}
      merged["ops"][op] = r["ops"][op]
      (out / "search_bench.json").write_text(json.dumps(merged, indent=1))
  if merged: write_markdown(merged, out / "search_bench.md")
  return 0 if merged and len(merged["ops"]) == len(a.ops.split(",")) else 1

def retime(kernels:list[Kernel], device:str, row:dict, rounds:int, workers:int=0):
  """Every strategy's final kernels timed again side by side, round-robin over `rounds` rounds (min per config), so that the
  comparison between strategies does not rest on timings taken minutes apart. kernel_us becomes this time; the time the search
  itself measured stays as search_us."""
  for tot in row.values(): tot["search_us"], tot["kernel_us"] = tot["kernel_us"], 0.0
  for i, k in enumerate(kernels):
    opts = {n: tuple(opts_from_json(tot["opts"][i])) for n, tot in row.items()}
    m = Measurer(k, device, Budget(), workers=workers)   # with workers: the configs compile in parallel
    uniq = list(dict.fromkeys(opts.values()))
    progs = {o: c.prg for o, c in zip(uniq, m._compile(uniq))}
    best = m.bench.side_by_side(progs, rounds)
    m.close()
    for n, tot in row.items():
      tot["kernel_us"] += best[opts[n]]*1e6
      tot.setdefault("per_kernel_us", []).append(best[opts[n]]*1e6)

def geomean(xs): return math.exp(sum(math.log(x) for x in xs)/len(xs)) if xs else float("nan")

def write_markdown(res:dict, path:Path):
  names = [n for n in list(STRATEGIES) + ["torch"] if any(n in r for r in res["ops"].values())]
  searched = [n for n in names if n not in ("hand-coded", "torch")]
  lines = [f"# Search benchmark: {res['device']}, {res['date']}", "", f"`{res['command']}`; model `{res['model']}` (trained without these kernels).", "",
           "Kernel time in microseconds (sum over the op's kernels); search seconds / compiled / timed per strategy.", "",
           "| op | " + " | ".join(names) + " |", "|---|" + "---:|"*len(names)]
  for op, row in res["ops"].items():
    cells = [f"{row[n]['kernel_us']:.1f}" if row[n]['kernel_us'] else "-" for n in names]
    lines.append(f"| {op} | " + " | ".join(cells) + " |")
  lines += ["", "| op | " + " | ".join(f"{n} s/compiled/timed" for n in searched) + " |", "|---|" + "---:|"*len(searched)]
  for op, row in res["ops"].items():
    lines.append(f"| {op} | " + " | ".join(f"{row[n]['search_s']:.1f} / {row[n]['compiled']} / {row[n]['timed']}" for n in searched) + " |")
  g = {n: geomean([r[n]["kernel_us"] for r in res["ops"].values() if r[n]["kernel_us"]]) for n in names}
  lines += ["", "Geomean kernel time (us): " + ", ".join(f"{n} {v:.1f}" for n, v in g.items())]
  if all(n in names for n in ("hand-coded", "beam2", "beam4")):
    ops = list(res["ops"].values())
    ratio = lambda n, d, key="kernel_us": geomean([o[n][key]/o[d][key] for o in ops])
    lines += ["", "Geomean ratios over the suite (the issue's done-criteria):", "",
              "| strategy | kernel time / BEAM=4 | hand-coded / kernel time | kernel time / BEAM=2 | search s / BEAM=2's | timed / BEAM=2's | ops slower than hand-coded |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for n in [n for n in searched if n not in ("beam2",)]:
      slower = sum(o[n]["kernel_us"] > o["hand-coded"]["kernel_us"] for o in ops)
      lines.append(f"| {n} | {ratio(n, 'beam4'):.3f} | {1/ratio(n, 'hand-coded'):.2f}x | {ratio(n, 'beam2'):.3f} | "
                   f"{ratio(n, 'beam2', 'search_s'):.3f} | {ratio(n, 'beam2', 'timed'):.3f} | {slower} |")
  rejected = [f"{op} {n}: {r['kernel']} {r['opts']} ({r['us']:.1f} us in search) failed the correctness check: {r['error']}"
              for op, row in res["ops"].items() for n in searched for r in row[n].get("rejected", [])]
  if rejected: lines += ["", "Faster configs that computed wrong (never an answer):", ""] + [f"- {x}" for x in rejected]
  lines += [""] + [f"- {x}" for x in res.get("notes", [])]
  path.write_text("\n".join(lines) + "\n")

def plot(res:dict, path:Path):
  """Best op time (sum over its kernels of each kernel's best so far) against timed candidates per kernel, for the learned
  strategies, with hand-coded, BEAM=2 and BEAM=4's final times as lines."""
  import matplotlib; matplotlib.use("Agg")
  import matplotlib.pyplot as plt
  ops = list(res["ops"])
  fig, axes = plt.subplots(math.ceil(len(ops)/4), 4, figsize=(16, 3.2*math.ceil(len(ops)/4)), squeeze=False)
  for ax, op in zip(axes.flat, ops):
    row = res["ops"][op]
    for n in ("learned-beam", "mcts"):
      trs = [tr for tr in row.get(n, {}).get("trajectories", []) if tr]
      if not trs: continue
      steps = range(1, max(len(tr) for tr in trs) + 1)
      ax.plot(list(steps), [sum(tr[min(i, len(tr))-1][2] for tr in trs)*1e6 for i in steps], label=n)
    for n, style in (("hand-coded", "--"), ("beam2", ":"), ("beam4", "-.")):
      if n in row: ax.axhline(row[n]["search_us"] if "search_us" in row[n] else row[n]["kernel_us"], color="gray", ls=style, label=n)
    ax.set_yscale("log"); ax.set_title(f"{op} ({len(row['hand-coded']['opts'])} kernel{'s' if len(row['hand-coded']['opts']) > 1 else ''})")
    ax.set_xlabel("timed candidates per kernel"); ax.set_ylabel("best op time (us)")
  for ax in list(axes.flat)[len(ops):]: ax.axis("off")
  axes.flat[0].legend(fontsize=8)
  fig.tight_layout(); fig.savefig(path, dpi=90)

if __name__ == "__main__": sys.exit(main())
