"""The unseen benchmark: kernels and networks that nothing in kerntune was trained or tuned on, measured against tinygrad's BEAM=2.

The kernels are single-op configurations drawn once by a seeded sampler over shapes real networks run (odd sizes 7, 49, 197, 577,
1500, 3000; batch 1 and large; fp16 and fp32; strided, grouped and dilated convs; matmuls and bmm; attention, causal too; norms,
reductions, elementwise chains): dataset/unseen.py holds the list, frozen.

Per kernel, in one process on one device: the learned search with a user's defaults (`search`'s), tinygrad's BEAM=2, tinygrad's
hand-coded config, and torch for the whole op; the three tinygrad answers are timed again side by side at the end of each op.
  python scripts/bench_unseen.py --list                            # the benchmark, no device needed
  python scripts/bench_unseen.py --print-keys CUDA                 # its kernels' AST keys (no GPU needed)
  python scripts/bench_unseen.py --out results --workers 15        # on the GPU host (scripts/gpu_unseen.sh)
A fresh split (--split SEED: what dataset.unseen.draw(SEED) draws, held out as the frozen list is) gives a figure nothing was tuned
to; its files are unseen_sSEED.* and its BEAM=2 cache results/unseen_sSEED_beam2.json. It is refused before any work if one of its
kernels is in the stores, their shards or the histories, and for the frozen list's own seed (dataset.unseen.SEED); it skips kernels
another split or the frozen list measured. Two GPUs run halves of it (--range, each its own --out) and --merge joins
them:
  python scripts/bench_unseen.py --split 1 --merge a/unseen_s1.json b/unseen_s1.json --out results
A search change is measured against the defaults in one call with --repeats 2 --variant '{"speculate": true}' (the last run's Beam
parameters; a list of objects: the last runs'): every run re-timed side by side, each run's geomean and wall in the report. A
variant's "model" (a cost model file) replaces the model for its run: '{"model": "out/m/cost_model_sm_90.txt"}' measures a retrained
model against the shipped one, kernel by kernel, in one process.
Each kernel is searched alone by default; --together N searches N configurations' kernels at once, interleaved as tune-model and
drop-in tuning search a model's (one kernel's round is timed while the others' compile), each kernel under its own budget.
BEAM=2's picks and search cost are kept in results/unseen_beam2.json, so a later call re-times BEAM=2's pick beside a new learned
search instead of searching again (the JSON says which call each BEAM=2 search ran in)."""
from __future__ import annotations
import argparse, json, math, random, re, statistics, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from dataset.errors import one_line, where  # noqa: E402
from dataset.unseen import NETWORKS, SEED, SPLITS, benchmark_keys, draw, fingerprint, kernel_specs, kernels_of, shipped_keys  # noqa: E402

def torch_us(spec:str, reps:int=30) -> float|None:
  """The whole op through torch (cuDNN / cuBLAS / fused attention), median of CUDA-event timings with the L2 flushed before each."""
  import torch
  import torch.nn.functional as F
  from dataset.corpus import parse_variant
  if not torch.cuda.is_available(): return None
  v, w = dict(parse_variant(spec).params), spec.split(":")[0]
  dt = torch.float16 if v["dtype"] == "fp16" else torch.float32
  r = lambda *s: torch.randn(*s, device="cuda", dtype=dt)
  if w == "conv2d":
    x, wt = r(v["n"], v["c"], v["h"], v["w"]), r(v["k"], v["c"]//v["groups"], v["ks"], v["ks"])
    fn = lambda: F.conv2d(x, wt, stride=v["stride"], padding=v["padding"], dilation=v["dilation"], groups=v["groups"])
  elif w == "conv1d": x, wt = r(v["n"], v["c"], v["l"]), r(v["k"], v["c"], v["ks"]); fn = lambda: F.conv1d(x, wt, stride=v["stride"], padding=v["padding"])
  elif w == "bmm": a, b = r(v["b"], v["m"], v["k"]), r(v["b"], v["k"], v["n"]); fn = lambda: torch.bmm(a, b)
  elif w == "gemm": a, b = r(v["m"], v["k"]), r(v["k"], v["n"]); fn = lambda: a @ b
  elif w == "softmax": x = r(v["rows"], v["cols"]); fn = lambda: torch.softmax(x, -1)
  elif w == "layernorm": x, g, b = r(v["rows"], v["cols"]), r(v["cols"]), r(v["cols"]); fn = lambda: F.layer_norm(x, (v["cols"],), g, b)
  elif w == "rmsnorm": x, g = r(v["rows"], v["cols"]), r(v["cols"]); fn = lambda: F.rms_norm(x, (v["cols"],), g, 1e-6)
  elif w == "attention":
    q, k, vv = (r(v["b"], v["heads"], v["seq"], v["dim"]) for _ in range(3))
    fn = lambda: F.scaled_dot_product_attention(q, k, vv, is_causal=bool(v["causal"]))
  elif w == "reduce": x = r(v["a"], v["b"], v["c"]); fn = lambda: (x.amax(v["axis"]) if v["op"] == "max" else getattr(x, v["op"])(v["axis"]))
  elif w == "gelu_bias": x, b = r(v["rows"], v["cols"]), r(v["cols"]); fn = lambda: F.gelu(x + b)
  elif w == "swiglu": x, y = r(v["rows"], v["cols"]), r(v["rows"], v["cols"]); fn = lambda: F.silu(x) * y
  else: return None
  from bench_search import cuda_median_us
  return cuda_median_us(fn, reps)

def run(a) -> int:
  from dataset.device import default_device, device_info, host_probe
  from search.cli import load_model, DEFAULT_BUDGET
  from bench_search import warm_pools
  device = a.device or default_device()
  dev_name, arch, props = device_info(device)
  model, model_path = load_model(a.model, device, dev_name, arch, False)
  scorer = model.scorer(props)
  out = Path(a.out); out.mkdir(parents=True, exist_ok=True)
  res_path, beam_path = out / f"{a.name}.json", Path(a.beam_cache)
  specs = a.specs
  res = json.loads(res_path.read_text()) if a.resume and res_path.is_file() else {}
  a.host_probe = host_probe()   # BEAM=2's cache entries record it too: a later call re-times their picks but takes their seconds
  res.update(device=f"{dev_name} ({arch})", date=time.strftime("%Y-%m-%d"), command="python scripts/bench_unseen.py " + " ".join(a.argv),
             model=model_path, fingerprint=fingerprint(specs), split=a.split if a.split is not None else SEED, budget=DEFAULT_BUDGET,
             workers=a.workers, variant=a.variant, host_probe_s=a.host_probe)
  res.setdefault("kernels", []); res.setdefault("networks", [])
  done = {e["key"] for e in res["kernels"]}
  # a fresh split measures only kernels no earlier split evaluated (two splits share common kernels: split 2 holds 8 of split 1's)
  seen = evaluated_keys([Path(__file__).resolve().parent.parent / "results", out], res_path) if a.split is not None else set()
  if trained := a.trained:
    res["skipped_trained"] = sorted(trained); seen |= trained
    print(f"{len(trained)} of the split's kernels are in the training data (held before the split was held out): skipped", flush=True)
  beam = json.loads(beam_path.read_text()) if beam_path.is_file() else {}
  # a variant's own cost model (--variant's "model"), loaded before any work: a bad file fails here, not after the first kernel
  a.scorers = {v["model"]: load_model(v["model"], device, dev_name, arch, False)[0].scorer(props) for v in a.variant or [] if "model" in v}
  warm_pools(device, a.workers, scorer)
  lo, hi = (int(x) for x in a.range.split(":")) if a.range else (0, len(specs))
  order = list(range(lo, hi))[a.part[0]::a.part[1]] if a.part else list(range(lo, hi))
  if a.shuffle is not None: random.Random(a.shuffle).shuffle(order)   # a call cut off by its time limit leaves a random subset, not a tail
  if a.together > 1: res["together"] = a.together
  if a.beam_first is not None:   # every kernel's BEAM=2 before any learned search: each is timed under the load of its own kind
    res["beam_first"] = True
    until = time.perf_counter() + (a.beam_s if a.beam_s is not None else math.inf)
    for oi in order:
      if time.perf_counter() > until: a.cached_beam_only = True; break   # --beam-s spent: learned runs where BEAM=2 is complete
      for k in kernels_of(specs[oi], device):
        if k.key not in done and k.key not in seen and (k.key not in beam or a.beam_again):
          try: beam_search(a, k, device, beam, beam_path, f"{dev_name} ({arch})")
          except Exception as ex: print(f"[{oi}] {k.name}: BEAM=2 failed: {one_line(ex, 300)}", flush=True)
    if a.beam_first: barrier(Path(a.beam_first), a.part or (0, 1), a.barrier_s)
    a.beam_again = False   # searched just now
    print(f"BEAM=2 phase done: {len(beam)} kernels in the cache, {len(seen)} kernels skipped (other splits' or the training data's)", flush=True)
    if a.beam_only: return 0   # a one-GPU host whose split's BEAM=2 outlasts a call: the learned runs in the next, from the cache
  for ci in range(0, len(order), a.together):
    ops = [(oi, specs[oi], [k for k in kernels_of(specs[oi], device) if k.key not in done and k.key not in seen]) for oi in order[ci:ci + a.together]]
    ops = [(oi, spec, ks) for oi, spec, ks in ops if ks and not (a.cached_beam_only and any(k.key not in beam for k in ks))]
    learned = None
    if a.together > 1 and ops:
      try: learned = learn_together(a, [k for *_, ks in ops for k in ks], device, scorer, ci // a.together)
      except Exception as ex: learned = ex
    for oi, spec, kernels in ops:
      try:
        if isinstance(learned, Exception): raise learned
        measure_op(a, oi, spec, kernels, device, scorer, beam, beam_path, res, res_path, f"{dev_name} ({arch})", learned)
      except Exception as ex:   # one op's crash is recorded (a resumed run tries it again) and the run goes on to the next
        crash = {"op": spec, "keys": [k.key for k in kernels], "error": one_line(ex, 300), "at": where(ex)}
        res.setdefault("crashed", []).append(crash)
        res_path.write_text(json.dumps(res, indent=1))
        print(f"[{oi}] {spec}: CRASHED: {crash['error']} (at {crash['at']})", flush=True)
  write_markdown(res, res_path.with_suffix(".md"))
  if not a.no_plot: plot(res, res_path.with_suffix(".png"))
  return 0

def split_results(d:Path) -> list[Path]:
  """The fresh splits' result files in `d` (unseen_sS.json; not their BEAM=2 caches)."""
  return sorted(p for p in Path(d).glob("unseen_s*.json") if re.fullmatch(r"unseen_s\d+\.json", p.name))

def evaluated_keys(dirs:list[Path], own:Path) -> set[str]:
  """Kernel keys that another split's results (unseen_sS.json in `dirs`; not `own`'s split, wherever it is: a split measured again
  measures all of its kernels) or the frozen list's (unseen.json, evaluated at every change) already measured."""
  files = {p.resolve() for d in dirs for p in [*split_results(d), Path(d) / "unseen.json"] if p.name != own.name and p.is_file()}
  return {e["key"] for p in files for e in json.loads(p.read_text()).get("kernels", [])}

def run_variant(a, r:int) -> dict:
  """Run r's --variant object: the last runs have one each, the others the defaults ({})."""
  return a.variant[r - (a.repeats - len(a.variant))] if a.variant and r >= a.repeats - len(a.variant) else {}

def run_params(a, r:int) -> dict:
  """Run r's Beam parameters (its variant's, without the variant's "model")."""
  return {k: x for k, x in run_variant(a, r).items() if k != "model"}

def run_scorer(a, r:int, scorer):
  """Run r's cost model scorer: its variant's "model", or the benchmark's."""
  return a.scorers[v["model"]] if "model" in (v := run_variant(a, r)) else scorer

def learn_together(a, kernels:list, device:str, scorer, rot:int) -> dict[str, list]:
  """--together: several ops' kernels in one interleaved learned search per run, as tune-model and drop-in tuning search a model's
  (search_kernels), each kernel under its own budget. Per kernel and run: (outcome, measurer, its share of the run's wall, the wall);
  the shares are even, so they sum to the wall."""
  from search.cli import search_kernels, DEFAULT_BUDGET
  from search.measure import Budget
  reps: dict[str, list] = {k.key: [None]*a.repeats for k in kernels}
  for r in ((rot + i) % a.repeats for i in range(a.repeats)):   # each group starts its runs at another, as each kernel does alone
    st = time.perf_counter()
    outs = search_kernels(kernels, device, "beam", Budget(DEFAULT_BUDGET), run_scorer(a, r, scorer), r, a.workers, **run_params(a, r))
    wall = time.perf_counter() - st
    for k, (o, m) in zip(kernels, outs): reps[k.key][r] = (o, m, wall/len(kernels), wall); m.close()
  return reps

def beam_search(a, k, device:str, beam:dict, beam_path:Path, dev:str) -> dict:
  """tinygrad's BEAM=2 on kernel k: its pick and search cost, into the cache (written at once: a cut-off call keeps it)."""
  from dataset.kernel import opts_to_json
  from search.cli import search_kernels
  from search.measure import Budget
  (ob, mb), = search_kernels([k], device, "tinygrad-beam", Budget(), None, 0, a.workers, amt=2)
  mb.close()
  b = beam[k.key] = {"opts": opts_to_json(ob.opts), "search_s": round(ob.search_s, 3), "timed": ob.timed, "compiled": ob.compiled,
                     "verified": ob.verified, "device": dev, "date": time.strftime("%Y-%m-%d %H:%M"), "host_probe_s": getattr(a, "host_probe", None)}
  beam_path.write_text(json.dumps(beam, indent=1))
  return b

def barrier(d:Path, part:tuple[int, int], limit_s:float) -> None:
  """Mark this part's BEAM=2 phase done in d and wait (at most limit_s) until every part's is: no learned search starts while
  another GPU's BEAM=2 still runs."""
  d.mkdir(parents=True, exist_ok=True)
  (d / f"beam_done.{part[0]}").touch()
  end = time.time() + limit_s
  while len(list(d.glob("beam_done.*"))) < part[1] and time.time() < end: time.sleep(1)

def measure_op(a, oi:int, spec:str, kernels:list, device:str, scorer, beam:dict, beam_path:Path, res:dict, res_path:Path, dev:str,
               learned:dict|None=None):
  """One op's kernels: the learned search (or its runs in `learned`, from learn_together), BEAM=2 (or its cached pick), re-timed
  side by side; rows appended to res, written."""
  from dataset.kernel import opts_from_json, opts_to_json
  from search.cli import search_kernels, DEFAULT_BUDGET
  from search.measure import Budget
  from bench_search import retime
  # "learned" is the first run; with --repeats, learned_rI are further runs of the same search (seed I), re-timed beside it: the
  # spread between search runs, not only between timings
  extra, t_op = [f"learned_r{r}" for r in range(1, a.repeats)], time.perf_counter()
  row: dict[str, dict] = {n: {"opts": [], "kernel_us": 0.0} for n in ("learned", "beam2", "hand", *extra)}
  entries = []
  for k in kernels:
    reps: list = learned[k.key] if learned else [None]*a.repeats
    # each kernel starts its runs at another one (the i-th kernel with run i mod R): a process's first search of a kernel finds its compile
    # pool, and whatever the runs share, cold; the later ones warm
    first = len(res["kernels"]) + len(entries)
    for r in ([] if learned else (ix % a.repeats for ix in range(first, first + a.repeats))):
      st = time.perf_counter()
      (o_r, m_r), = search_kernels([k], device, "beam", Budget(DEFAULT_BUDGET), run_scorer(a, r, scorer), r, a.workers, **run_params(a, r))
      s = time.perf_counter() - st
      reps[r] = (o_r, m_r, s, s)   # alone, a kernel's share of its search's wall is all of it
      m_r.close()
    for r in range(1, a.repeats): row[extra[r - 1]]["opts"].append(opts_to_json(reps[r][0].opts))
    (o, m, learned_s, wall) = reps[0]
    b = beam[k.key] if k.key in beam and not a.beam_again else beam_search(a, k, device, beam, beam_path, dev)
    for n, opts in (("learned", o.opts), ("beam2", tuple(opts_from_json(b["opts"]))), ("hand", o.hand_opts)): row[n]["opts"].append(opts_to_json(opts))
    entries.append({"name": k.name, "key": k.key, "op": spec, "learned_s": round(learned_s, 3), "learned_timed": o.timed,
                    "learned_compiled": o.compiled, "beam2_s": b["search_s"], "beam2_timed": b["timed"], "beam2_compiled": b["compiled"],
                    "beam2_searched": b["date"], "beam2_host_probe_s": b.get("host_probe_s"), "verified": o.verified, "check": o.check, "beam2_verified": b["verified"],
                    "learned_search_us": o.time_s*1e6, "marks": m.marks, "learned_opts": opts_to_json(o.opts), "beam2_opts": b["opts"],
                    "trajectory": o.trajectory, "phases": {"compile_wait_s": round(m.compile_s, 3), "timing_s": round(m.time_s, 3), "reference_s": round(m.reference_s, 3),
                                                           "after_search_s": round(wall - m.marks.get("verify", wall), 3)},
                    "repeats": [{"s": round(t, 3), "timed": x.timed, "compiled": x.compiled, "wait_s": round(mx.compile_s, 3), "verified": x.verified,
                                 "opts": opts_to_json(x.opts)} for x, mx, t, _ in reps],   # each run's answer: what an A/B's runs chose
                    **({"together_wall_s": round(wall, 3)} if learned else {})})
    print(f"{k.name}: learned {o.time_s*1e6:.1f} us in {learned_s:.1f} s ({o.timed} timed); BEAM=2 {b['search_s']:.1f} s "
          f"({b['timed']} timed); hand {o.hand_time_s*1e6:.1f} us; {'verified' if o.verified else 'NOT VERIFIED: ' + str(o.check)}", flush=True)
  retime(kernels, device, row, a.rounds, a.workers)   # side by side: kernel_us per strategy, summed; per kernel below
  for i, (k, e) in enumerate(zip(kernels, entries)):
    for n in ("learned", "beam2", "hand"): e[f"{n}_us"] = row[n]["per_kernel_us"][i]
    for r, n in enumerate(extra, 1): e["repeats"][r]["us"] = row[n]["per_kernel_us"][i]
    if extra: e["repeats"][0]["us"] = e["learned_us"]
  try: t_us = torch_us(spec)
  except Exception as ex: t_us = None; print(f"{spec}: torch failed: {ex}", flush=True)
  for e in entries: e["torch_us"], e["op_s"] = t_us, round(time.perf_counter() - t_op, 1)   # the whole op's torch time and bench wall
  res["kernels"] += entries
  res["crashed"] = [c for c in res.get("crashed", []) if c["op"] != spec]   # measured now: an earlier call's crash is history
  res_path.write_text(json.dumps(res, indent=1))   # after every op: a cut-off call keeps what it measured
  print(f"[{oi}] {spec}: learned {row['learned']['kernel_us']:.1f} us, BEAM=2 {row['beam2']['kernel_us']:.1f} us, hand "
        f"{row['hand']['kernel_us']:.1f} us, torch {t_us if t_us is None else round(t_us, 1)} us; {entries[0]['op_s']} s", flush=True)

def merge(paths:list[Path], out:Path, beam_cache:Path) -> dict:
  """Runs of one benchmark on disjoint kernels (one per GPU of a host, or calls on several device kinds) as one result: the same
  fingerprint; each row keeps its run's device, the command is each run's, and a kernel measured twice keeps its first run. The
  BEAM=2 caches beside them (NAME_beam2.json) join `beam_cache`."""
  runs = [json.loads(p.read_text()) for p in paths]
  if len({r["fingerprint"] for r in runs}) != 1:   # before anything is written
    raise ValueError(f"--merge takes runs of one benchmark (fingerprints {sorted({r['fingerprint'] for r in runs})})")
  for r in runs:   # each row keeps the device its run had: a row's ratio is within one run on one device, never across kinds
    for e in r["kernels"]: e.setdefault("device", r["device"])
  beam = json.loads(beam_cache.read_text()) if beam_cache.is_file() else {}
  for p in paths:
    if (bp := p.with_name(f"{p.stem}_beam2.json")).is_file(): beam.update({k: v for k, v in json.loads(bp.read_text()).items() if k not in beam})
  beam_cache.write_text(json.dumps(beam, indent=1))
  devices = list(dict.fromkeys(d for r in runs for d in r["device"].split(" + ")))
  res, seen = {**runs[0], "device": " + ".join(devices), "command": " ; ".join(r["command"] for r in runs), "kernels": [],
               "merged": [str(p) for p in paths]}, set()
  for r in runs:
    res["kernels"] += [e for e in r["kernels"] if e["key"] not in seen]; seen |= {e["key"] for e in r["kernels"]}
  res["crashed"] = [c for r in runs for c in r.get("crashed", []) if not set(c["keys"]) <= seen]
  out.write_text(json.dumps(res, indent=1)); write_markdown(res, out.with_suffix(".md")); plot(res, out.with_suffix(".png"))
  return res

def measured(results:list[Path], keep, ren):
  """(result file, kernel entry, its kernel's Scheduler) of every verified kernel in the results with both times that keep(entry) takes."""
  from dataset.corpus import parse_variant
  from dataset.kernel import kernel_asts, scheduler
  for p in results:
    for e in json.loads(p.read_text())["kernels"]:
      if e.get("verified") and e.get("learned_us") and e.get("beam2_us") and keep(e):
        yield p, e, scheduler(kernel_asts(*parse_variant(e["op"]).build("CUDA"))[int(e["name"].split("#")[1])], ren)

def rank_pairs(model_path:str, results:list[Path], min_ratio:float=1.05) -> dict:
  """Offline, no GPU: on every kernel of the measured results where the learned answer and BEAM=2's differ by min_ratio or more, does
  the cost model score the faster one higher? Scored with the device properties the model was trained with: within a kernel they are constant."""
  from dataset.device import renderer_for
  from dataset.kernel import opts_from_json
  from dataset.sampler import replay
  from models.cost_model import CostModel
  model, ren = CostModel.load(model_path), renderer_for("CUDA", "sm_90", compiler=False)
  score = model.scorer()
  rows, hits, below = [], 0, 0
  for p, e, base in measured(results, lambda e: max(e["learned_us"], e["beam2_us"])/min(e["learned_us"], e["beam2_us"]) >= min_ratio, ren):
    ks = [replay(base, tuple(opts_from_json(e[n]))) for n in ("learned_opts", "beam2_opts")]
    if None in ks: continue
    sl, sb = (float(x) for x in score(ks))
    right = (sl > sb) == (e["learned_us"] < e["beam2_us"])
    hits += right; below += e["learned_us"] > e["beam2_us"] and sb < sl
    rows.append({"name": e["name"], "split": p.name, "learned_over_beam2": round(e["learned_us"]/e["beam2_us"], 3), "score_learned": round(sl, 3),
                 "score_beam2": round(sb, 3), "ordered_right": bool(right)})
  return {"model": model_path, "min_ratio": min_ratio, "kernels": len(rows), "ordered_right": hits,
          "beam2_faster_scored_lower": below, "beam2_faster": sum(r["learned_over_beam2"] > 1 for r in rows), "rows": rows}

def descent_reach(model_path:str, results:list[Path], min_ratio:float=1.2, params:dict|None=None) -> dict:
  """Offline, no GPU: on every kernel of the measured results whose learned answer is min_ratio or more slower than BEAM=2's, where the
  search lost BEAM=2's config. "batch": it is in the beam's first batch (the search had it, and timing or later rounds lost it);
  "myopic": the model scores it among its first batch's size of everything its descent scored, yet the descent never scored it (a
  wrong turn at a shallower depth); "ranked": scored directly, the model puts it below that (a ranking the search cannot fix).
  `params`: the Beam's (--variant), e.g. {"descent_swaps": false}; each descent's CPU seconds are in its row and summed."""
  from dataset.device import renderer_for
  from dataset.kernel import opts_from_json
  from dataset.sampler import replay
  from models.cost_model import CostModel
  from search.beam import Beam
  from search.context import Context, _KIDS
  model, ren, beam = CostModel.load(model_path), renderer_for("CUDA", "sm_90", compiler=False), Beam(**(params or {}))
  score, rows = model.scorer(), []
  for p, e, base in measured(results, lambda e: e["learned_us"] >= min_ratio*e["beam2_us"], ren):
    if (b := replay(base, tuple(opts_from_json(e["beam2_opts"])))) is None: continue
    ctx, st = Context(base, None, score), time.perf_counter()
    _KIDS.clear()   # no children kept from the kernel before: each descent's seconds are its own
    descent, secs = beam.descend(ctx), time.perf_counter() - st
    batch, pool = {key for _, key in beam._seed(ctx, descent)}, descent[1]
    scored = {key for _, key in pool}
    sb = float(score([b])[0])
    up = [o for (o, _), x in zip(pool, score([replay(base, o) for o, _ in pool]) if pool else []) if float(x) > sb]
    above, above_swap = len(up), sum(any(x.op.name == "SWAP" for x in o) for o in up)   # SWAP steps: see Beam.descent_swaps
    kind = "batch" if b.ast.key in batch else "myopic" if b.ast.key not in scored and above < beam.seed_picks else "ranked"
    rows.append({"name": e["name"], "split": p.name, "learned_over_beam2": round(e["learned_us"]/e["beam2_us"], 3), "kind": kind,
                 "beam2_scored_in_descent": b.ast.key in scored, "scored_above_beam2": above, "above_with_swap": above_swap,
                 "descent_scored": len(pool), "descent_s": round(secs, 3)})
  return {"model": model_path, "params": params or {}, "min_ratio": min_ratio, "kernels": len(rows), **{k: sum(r["kind"] == k for r in rows) for k in ("batch", "myopic", "ranked")},
          **{k: sum(r[k] for r in rows) for k in ("scored_above_beam2", "above_with_swap")},
          "median_above_beam2": statistics.median(r["scored_above_beam2"] for r in rows) if rows else None,
          "descent_s": round(sum(r["descent_s"] for r in rows), 1), "rows": rows}

def anytime(results:list[Path], at:tuple[int, ...]=(9, 16, 23, 30)) -> list[dict]:
  """Offline: had each kernel's search stopped after N timings, its answer's ratio to BEAM=2 (its final ratio, scaled by the search's
  own best at N over its final best) and the wall spent by then (the N-th timing's time) over BEAM=2's, summed; N=0 is the whole
  search. Kernels searched together (--together) share their group's wall: the group's wall by then is its kernels' latest N-th
  timing (their trajectories count from the group's start), not their sum. What the rounds after the first batch buy, and cost."""
  out = []
  for p in results:
    ks = [e for e in json.loads(p.read_text())["kernels"] if e.get("verified") and e.get("trajectory") and e.get("beam2_us")]
    for n in (*at, 0):
      pick = [e["trajectory"][min(n, len(e["trajectory"])) - 1] if n else e["trajectory"][-1] for e in ks]
      r = [t[2]/e["trajectory"][-1][2]*e["learned_us"]/e["beam2_us"] for t, e in zip(pick, ks)]
      groups: dict = {}   # a kernel searched alone is a group of its own
      for i, e in enumerate(ks): groups.setdefault(e.get("together_wall_s", ("alone", i)), []).append(i)
      wall = sum(max(pick[i][1] for i in g) if n else sum(ks[i]["learned_s"] for i in g) for g in groups.values())
      out.append({"split": p.name, "timings": n or "all", "geomean_vs_beam2": round(geomean(r), 3), "over_1.2x": sum(x > 1.2 for x in r),
                  "wall_share": round(wall/sum(e["beam2_s"] for e in ks), 3)})
  return out

def geomean(xs:list[float]) -> float: return math.exp(sum(math.log(x) for x in xs)/len(xs)) if xs else math.nan

def summary(res:dict) -> dict:
  # a kernel whose answer (or BEAM=2's) failed the check has no tuned time: it counts against `verified`, not in the ratios
  ks = [e for e in res["kernels"] if e.get("verified") and e.get("beam2_verified", True) and e.get("learned_us") and e.get("beam2_us")]
  ratios = [e["learned_us"]/e["beam2_us"] for e in ks]
  return {"kernels": len(ks), "geomean_vs_beam2": geomean(ratios), "worst_vs_beam2": max(ratios, default=math.nan),
          "over_1.2x": sum(r > 1.2 for r in ratios), "wall_share": sum(e["learned_s"] for e in ks)/max(1e-9, sum(e["beam2_s"] for e in ks)),
          "wall_share_geomean": geomean([e["learned_s"]/e["beam2_s"] for e in ks if e["beam2_s"] > 0]),
          "verified": sum(bool(e["verified"]) for e in res["kernels"]), "all": len(res["kernels"]),
          "crashed": sum(len(c["keys"]) for c in res.get("crashed", [])),
          "hand_vs_beam2": geomean([e["hand_us"]/e["beam2_us"] for e in ks]),
          **_repeats(ks)}

def _repeats(ks:list[dict]) -> dict[str, list[float]]:
  """Of each run of the learned search (--repeats), where every kernel has every run verified: the learned / BEAM=2 geomean
  (repeats), worst kernel (repeats_worst) and count over 1.2x (repeats_over), its search wall / BEAM=2's, summed (repeats_wall), the
  configs it compiled and the seconds the searches waited on compiles (repeats_compiled, repeats_wait; where every run recorded them)."""
  n = min((len(e.get("repeats", [])) for e in ks), default=0)
  if n < 2 or not all(x.get("us") and x["verified"] for e in ks for x in e["repeats"][:n]):
    return {"repeats": [], "repeats_worst": [], "repeats_over": [], "repeats_wall": [], "repeats_compiled": [], "repeats_wait": []}
  beam_s, runs = max(1e-9, sum(e["beam2_s"] for e in ks)), [[e["repeats"][r]["us"]/e["beam2_us"] for e in ks] for r in range(n)]
  return {"repeats": [geomean(r) for r in runs], "repeats_worst": [max(r) for r in runs], "repeats_over": [sum(x > 1.2 for x in r) for r in runs],
          "repeats_wall": [sum(e["repeats"][r]["s"] for e in ks)/beam_s for r in range(n)],
          **{f"repeats_{name}": [sum(e["repeats"][r][key] for e in ks) for r in range(n)] if all(key in x for e in ks for x in e["repeats"][:n]) else []
             for name, key in (("compiled", "compiled"), ("wait", "wait_s"))}}

def network_entry(rep:dict, command:str) -> dict:
  """A bench_models.py report (one model of its models.json) as an unseen.json network entry; its own device, date and command:
  the networks run on other host calls than the kernels."""
  return {"model": rep["model"], "tuned_ms": rep.get("tuned_ms"), "beam2_ms": rep.get("beam2_ms"), "tune_s": rep.get("tune_s"),
          "beam2_tune_s": rep.get("beam2_tune_s"), "torch_ms": rep.get("torch_eager_ms"), "torch_compile_ms": rep.get("torch_compile_ms"),
          "outputs_match": rep.get("outputs_match"), "default_ms": rep.get("default_ms"), "kernels": rep.get("kernels_distinct"),
          "device": rep.get("device"), "date": rep.get("date"), "command": command, "error": rep.get("error")}

def merge_networks(res:dict, models_json:Path, command:str) -> list[str]:
  """bench_models.py's models.json (a host call's, --models unseen) into res["networks"]: replaces the models it holds."""
  reps = json.loads(models_json.read_text())["models"]
  new = [network_entry({"model": n, **r}, command) for n, r in reps.items() if n in NETWORKS and r.get("tuned_ms")]
  old = {e["model"]: e for e in res.get("networks", [])}
  for e in new:   # a network measured again keeps its earlier runs: the spread between runs is part of the result
    if (o := old.get(e["model"])) is not None:
      e["earlier"] = o.pop("earlier", []) + [{k: o[k] for k in ("tuned_ms", "beam2_ms", "tune_s", "beam2_tune_s", "device", "date", "command")}]
  res["networks"] = [e for e in res.get("networks", []) if e["model"] not in {n["model"] for n in new}] + new
  res["networks"].sort(key=lambda e: NETWORKS.index(e["model"]))
  return [e["model"] for e in new]

def network_lines(res:dict) -> list[str]:
  nets = [e for e in res.get("networks", []) if e.get("tuned_ms") and e.get("beam2_ms")]
  if not nets: return []
  lines = ["", "## Networks", "", "Each network on its own host call (device, date and command per row): tune-model with the defaults "
           "against tinygrad's BEAM=2 on every kernel, latencies in one process, taking turns.", "",
           "| network | device | kernels | default ms | BEAM=2 ms | tuned ms | tuned/BEAM=2 | all runs on this card | torch ms | torch.compile ms | tune s | BEAM=2 s | tune/BEAM=2 | outputs |",
           "|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---|"]
  f = lambda v, d=2: "-" if v is None else f"{v:.{d}f}"
  # times compare only on one kind of card: the runs listed are the row's card's, the others counted
  def runs(e:dict) -> str:
    same = [r for r in [*e.get("earlier", []), e] if r.get("device") == e["device"]]
    other = len(e.get("earlier", [])) + 1 - len(same)
    return ", ".join(f"{r['tuned_ms']/r['beam2_ms']:.3f}" for r in same) + (f" (+{other} on other cards)" if other else "")
  for e in nets:
    lines.append(f"| {e['model']} | {e['device']}, {e['date']} | {e['kernels']} | {f(e['default_ms'])} | {f(e['beam2_ms'])} | {f(e['tuned_ms'])} | "
                 f"{e['tuned_ms']/e['beam2_ms']:.3f} | {runs(e)} | {f(e['torch_ms'])} | {f(e['torch_compile_ms'])} | {f(e['tune_s'], 1)} | "
                 f"{f(e['beam2_tune_s'], 1)} | {e['tune_s']/e['beam2_tune_s']:.3f} | {'match' if e['outputs_match'] else 'DIFFER'} |")
  lines += ["", "Commands (a network's earlier runs: its entry's `earlier` in unseen.json):"] + sorted({f"- {e['model']}: `{e['command']}`" for e in nets})
  return lines

def variants_said(variant:dict|list|None, runs:int) -> str:
  """Which runs had which Beam parameters and cost model (a single object: an earlier JSON's one variant, the last run's)."""
  vs = [variant] if isinstance(variant, dict) else variant or []
  said = lambda v: " and ".join(([f"Beam({', '.join(f'{k}={x!r}' for k, x in v.items() if k != 'model')})"] if set(v) - {"model"} else [])
                                + ([f"the model {v['model']}"] if "model" in v else []))
  return "".join(f"; run {runs - len(vs) + i} with {said(v)}" for i, v in enumerate(vs) if v)   # {}: the defaults, as the first runs

def beam_probes(res:dict) -> str:
  """The CPU probes of the hosts BEAM=2's seconds come from (its cache entries' host_probe_s), as a range: '' where none recorded one."""
  ps = sorted({e["beam2_host_probe_s"] for e in res["kernels"] if e.get("beam2_host_probe_s")})
  return "" if not ps else f"{ps[0]:.3f} s" if len(ps) == 1 else f"{ps[0]:.3f}-{ps[-1]:.3f} s"

def write_markdown(res:dict, path:Path):
  s = summary(res)
  together = (f"; {res['together']} configurations searched together at a time, interleaved as tune-model does (a kernel's learned "
              "seconds: an even share of its group's wall)") if res.get("together", 1) > 1 else ""
  lines = [f"# Unseen benchmark: {res['device']}, {res['date']}", "", f"`{res['command']}`", "",
           f"Model `{res['model']}`; benchmark fingerprint `{res['fingerprint']}` (split {res.get('split', SEED)}{', the frozen list' if res.get('split', SEED) == SEED else ', fresh'}); learned search with `search`'s defaults "
           f"(budget {res['budget']}, {res['workers']} compile workers){together}. BEAM=2's search seconds: see each row's `beam2_searched`."
           + (f" This host's CPU probe (dataset.device.host_probe): {res['host_probe_s']:.3f} s" + (f"; BEAM=2's searches': {probes}" if (probes := beam_probes(res)) else "")
              + "." if res.get("host_probe_s") else ""), "",
           f"- kernels: {s['all']}, verified {s['verified']} (the ratios are over the {s['kernels']} verified ones)"
           + (f"; {s['crashed']} more crashed: " + "; ".join(f"{c['op']}: {c['error']}" for c in res["crashed"]) if s["crashed"] else ""),
           f"- learned / BEAM=2 kernel time: geomean {s['geomean_vs_beam2']:.3f}x, worst {s['worst_vs_beam2']:.2f}x, {s['over_1.2x']} over 1.20x",
           f"- hand-coded / BEAM=2: geomean {s['hand_vs_beam2']:.3f}x",
           *([f"- {len(s['repeats'])} runs of the learned search (seeds 0..{len(s['repeats']) - 1}), geomean per run: "
              + ", ".join(f"{g:.3f}x" for g in s["repeats"]) + f" (spread {max(s['repeats']) - min(s['repeats']):.3f}); worst per run: "
              + ", ".join(f"{w:.2f}x" for w in s["repeats_worst"]) + "; over 1.2x per run: " + ", ".join(map(str, s["repeats_over"])) + "; search wall / BEAM=2's "
              + "per run: " + ", ".join(f"{w:.3f}" for w in s["repeats_wall"])
              + ("; configs compiled per run: " + ", ".join(map(str, s["repeats_compiled"])) if s.get("repeats_compiled") else "")
              + ("; seconds waited on compiles per run: " + ", ".join(f"{w:.1f}" for w in s["repeats_wait"]) if s.get("repeats_wait") else "")
              + variants_said(res.get("variant"), len(s["repeats"]))]
             if len(s["repeats"]) > 1 else []),
           f"- learned search wall / BEAM=2's: {s['wall_share']:.3f} summed, {s['wall_share_geomean']:.3f} geomean per kernel"]
  if len(devs := list(dict.fromkeys(e["device"] for e in res["kernels"] if e.get("device")))) > 1:   # a run per device kind: each apart
    for d in devs:
      t = summary({"kernels": [e for e in res["kernels"] if e.get("device") == d]})
      lines.append(f"  - on {d}: {t['all']} kernels, geomean {t['geomean_vs_beam2']:.3f}x, worst {t['worst_vs_beam2']:.2f}x, "
                   f"{t['over_1.2x']} over 1.20x, wall {t['wall_share']:.3f} summed")
  lines += ["",
           "| kernel | learned us | BEAM=2 us | hand us | torch op us | learned/BEAM=2 | learned s (timed) | BEAM=2 s (timed) | verified |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
  for e in res["kernels"]:
    t = f"{e['torch_us']:.1f}" if e.get("torch_us") else "-"
    if not e["verified"]:
      lines.append(f"| {e['name']} | - | - | {e['hand_us']:.1f} | {t} | - | {e['learned_s']:.1f} ({e['learned_timed']}) | {e['beam2_s']:.1f} ({e['beam2_timed']}) | NO: {e['check']} |"); continue
    lines.append(f"| {e['name']} | {e['learned_us']:.1f} | {e['beam2_us']:.1f} | {e['hand_us']:.1f} | {t} | {e['learned_us']/e['beam2_us']:.2f} | "
                 f"{e['learned_s']:.1f} ({e['learned_timed']}) | {e['beam2_s']:.1f} ({e['beam2_timed']}) | {'yes' if e['verified'] else 'NO: ' + str(e['check'])} |")
  logs = ["", "Logs of the calls: " + ", ".join(f"`{l}`" for l in res["logs"])] if res.get("logs") else []
  path.write_text("\n".join(lines + network_lines(res) + logs) + "\n")

def plot(res:dict, path:Path):
  """Per kernel: learned / BEAM=2 kernel time (bars, sorted) and learned / BEAM=2 search wall (dots), both on log scales."""
  import matplotlib; matplotlib.use("Agg")
  import matplotlib.pyplot as plt
  ks = sorted([e for e in res["kernels"] if e.get("verified") and e.get("beam2_verified", True)], key=lambda e: e["learned_us"]/e["beam2_us"])
  fig, ax = plt.subplots(figsize=(max(8, 0.18*len(ks)), 4.5))
  x = range(len(ks))
  ax.bar(x, [e["learned_us"]/e["beam2_us"] for e in ks], color=["tab:red" if e["learned_us"] > 1.2*e["beam2_us"] else "tab:blue" for e in ks],
         label="kernel time, learned / BEAM=2")
  ax.scatter(x, [e["learned_s"]/e["beam2_s"] for e in ks], color="black", s=10, label="search wall, learned / BEAM=2")
  ax.axhline(1.0, color="gray", lw=0.8); ax.axhline(1.2, color="tab:red", lw=0.6, ls=":"); ax.axhline(0.1, color="black", lw=0.6, ls=":")
  ax.set_yscale("log"); ax.set_xticks([]); ax.set_xlabel(f"{len(ks)} unseen kernels, sorted by kernel-time ratio")
  s = summary(res)
  ax.set_title(f"{res['device']}, {res['date']}: kernel time {s['geomean_vs_beam2']:.3f}x BEAM=2 (geomean), search wall {s['wall_share']:.3f} of BEAM=2's (summed)", fontsize=9)
  ax.legend(fontsize=8); fig.tight_layout(); fig.savefig(path, dpi=90); plt.close(fig)

def main(argv=None) -> int:
  ap = argparse.ArgumentParser("bench_unseen", description=__doc__.split("\n")[0])
  ap.add_argument("--list", action="store_true", help="print the benchmark's kernel configurations and networks and exit")
  ap.add_argument("--print-keys", metavar="DEVICE", help="print its kernels' AST keys on DEVICE and exit")
  ap.add_argument("--model", default=None, help="cost model (default: the shipped one for the device)")
  ap.add_argument("--device", default=None)
  ap.add_argument("--workers", type=int, default=15)
  ap.add_argument("--out", default="results")
  ap.add_argument("--split", type=int, default=None, metavar="SEED", help="a fresh split: the kernels dataset.unseen.draw(SEED) draws, "
                  "instead of the frozen list (refused if any of its kernels was seen in training)")
  ap.add_argument("--beam-cache", default=None, help="BEAM=2's picks and search cost per kernel key (default "
                  "results/unseen_beam2.json, results/unseen_sSEED_beam2.json for a --split)")
  ap.add_argument("--merge", nargs="+", metavar="JSON", help="join runs of disjoint kernels (e.g. one per GPU) into OUT and exit")
  ap.add_argument("--beam-again", action="store_true", help="run BEAM=2's search even where the cache has its pick")
  ap.add_argument("--beam-first", nargs="?", const="", default=None, metavar="BARRIER_DIR", help="every kernel's BEAM=2 search before "
                  "any learned one, so that each is timed under the load of its own kind; with BARRIER_DIR, the --part processes of one "
                  "host wait there for each other's BEAM=2 phase before their learned searches start")
  ap.add_argument("--beam-only", action="store_true", help="with --beam-first: stop after the BEAM=2 searches (their cache is the result)")
  ap.add_argument("--barrier-s", type=float, default=1800, help="the longest --beam-first waits for the other parts (seconds)")
  ap.add_argument("--cached-beam-only", action="store_true", help="only the configurations whose kernels all have a BEAM=2 pick in the cache")
  ap.add_argument("--beam-s", type=float, default=None, metavar="SECONDS", help="with --beam-first: no configuration's BEAM=2 searches start "
                  "after this many seconds of them; the learned runs then measure the configurations whose BEAM=2 picks are all cached (a split "
                  "whose BEAM=2 outlasts a call: the next call goes on from the cache)")
  ap.add_argument("--range", default=None, metavar="LO:HI", help="only these configurations (indices into --list)")
  ap.add_argument("--part", default=None, metavar="I/N", help="only every N-th configuration from the I-th (0-based) of --range: one GPU's "
                  "share, dealt round-robin so that the heavy ones (the list is grouped by family) spread over the GPUs")
  ap.add_argument("--shuffle", type=int, default=None, metavar="SEED", help="measure the configurations in a random order")
  ap.add_argument("--resume", action="store_true", help="keep OUT/unseen.json's kernels and measure the rest")
  ap.add_argument("--rounds", type=int, default=5, help="rounds of the side-by-side re-timing")
  ap.add_argument("--together", type=int, default=1, metavar="N", help="search N configurations' kernels at once, interleaved as "
                  "tune-model does (default 1: each kernel alone); each kernel's seconds are an even share of its group's wall")
  ap.add_argument("--repeats", type=int, default=1, help="runs of the learned search per kernel (seeds 0..R-1), all re-timed side by "
                  "side: the report gives the spread of the geomean between runs")
  ap.add_argument("--variant", type=json.loads, default=None, metavar="JSON", help="Beam parameters of the last of the --repeats runs "
                  "(a JSON object), or of the last runs (a list of objects), e.g. '{\"speculate\": true}': search changes measured against "
                  "the defaults in the same call, side by side; with --descent: the descent's Beam parameters (an object)")
  ap.add_argument("--no-plot", action="store_true", help="skip the plot (plot later with --replot)")
  ap.add_argument("--rank-pairs", metavar="MODEL", help="offline (no GPU): over the results/unseen_s*.json kernels where the learned answer "
                  "and BEAM=2's differ by 5%% or more, how often MODEL scores the faster one higher; JSON to stdout, and exit")
  ap.add_argument("--descent", metavar="MODEL", help="offline (no GPU): over the results/unseen_s*.json kernels 1.2x or more behind BEAM=2, "
                  "whether BEAM=2's config was in the first batch, out of the model's descent though scored high, or ranked low; JSON to stdout, and exit")
  ap.add_argument("--anytime", action="store_true", help="offline: over --out's measured splits, the answers and wall had each search "
                  "stopped after 9, 16, 23, 30 timings; JSON to stdout, and exit")
  ap.add_argument("--replot", metavar="JSON", help="rewrite the markdown of an existing unseen.json and exit")
  ap.add_argument("--networks", nargs=2, metavar=("MODELS_JSON", "COMMAND"), help="merge a host call's bench_models.py models.json "
                  "(--models unseen) into --out's unseen.json as its networks, with the host command that made it, and exit")
  a = ap.parse_args(argv)
  if a.repeats < 1 or a.rounds < 1 or a.together < 1: ap.error("--repeats, --rounds and --together take 1 or more")
  if (a.beam_only or a.beam_s is not None) and a.beam_first is None: ap.error("--beam-only and --beam-s go with --beam-first")
  if a.split == SEED: ap.error(f"--split {SEED} draws the frozen list itself (dataset.unseen.SEED), measured many times: no fresh split; run without --split, or another seed")
  if a.variant is not None:   # before any work: a typo would otherwise fail on the first kernel, after the setup
    from dataclasses import fields
    from search.beam import Beam
    vs = [a.variant] if isinstance(a.variant, dict) else a.variant
    if (not isinstance(vs, list) or not vs or (a.repeats <= len(vs) and not a.descent) or (a.descent and (len(vs) != 1 or "model" in vs[0]))
        or any(not isinstance(v, dict) or set(v) - {f.name for f in fields(Beam)} - {"model"} for v in vs)):
      ap.error(f"--variant: a JSON object of Beam parameters and/or a \"model\" (or a list of them), with --repeats more than the variants; with --descent, one object of Beam parameters (got {a.variant!r})")
    if missing := [v["model"] for v in vs if "model" in v and not Path(v["model"]).is_file()]: ap.error(f"--variant: no model file {missing[0]}")
    a.variant = vs
  if a.part is not None:
    try: a.part = tuple(int(x) for x in a.part.split("/")); assert len(a.part) == 2 and 0 <= a.part[0] < a.part[1]
    except (ValueError, AssertionError): ap.error(f"--part: I/N with 0 <= I < N, got {a.part!r}")
  a.argv = sys.argv[1:] if argv is None else argv
  a.specs = kernel_specs() if a.split is None else draw(a.split)
  a.trained = set()   # a split's kernels the training data held before the split was held out (below): skipped
  a.name = "unseen" if a.split is None else f"unseen_s{a.split}"
  a.beam_cache = a.beam_cache or f"results/{a.name}_beam2.json"
  if a.rank_pairs:
    from models.cost_model import CostModelError
    try: res = rank_pairs(a.rank_pairs, split_results(Path(a.out)))
    except (CostModelError, OSError, ValueError) as e: print(f"bench_unseen: error: {one_line(e, 300)}", file=sys.stderr); return 2
    print(json.dumps(res, indent=1)); return 0
  if a.descent:
    from models.cost_model import CostModelError
    try: res = descent_reach(a.descent, split_results(Path(a.out)), params=a.variant[0] if a.variant else None)
    except (CostModelError, OSError, ValueError, TypeError) as e: print(f"bench_unseen: error: {one_line(e, 300)}", file=sys.stderr); return 2
    print(json.dumps(res, indent=1)); return 0
  if a.anytime:
    print(json.dumps(anytime(split_results(Path(a.out))), indent=1)); return 0
  if a.list:
    for i, s in enumerate(a.specs): print(f"{i:3d} {s}")
    print(f"networks: {', '.join(NETWORKS)}\nfingerprint {fingerprint(a.specs)}"); return 0
  if a.print_keys:
    for key, name in sorted(benchmark_keys(a.print_keys, a.specs).items(), key=lambda kv: kv[1]): print(key, name)
    return 0
  if a.merge:
    try: s = summary(merge([Path(p) for p in a.merge], Path(a.out) / f"{a.name}.json", Path(a.beam_cache)))
    except (OSError, ValueError, KeyError) as e: print(f"bench_unseen: error: {e}", file=sys.stderr); return 2
    print(f"merged {s['all']} kernels: {s['geomean_vs_beam2']:.3f}x BEAM=2, wall {s['wall_share']:.3f}"); return 0
  if a.split is not None and not (a.networks or a.replot):   # held out means unseen: checked here, before any work
    from dataset.device import default_device
    from dataset.corpus import held_out
    dev = a.device or default_device()
    if a.split > SPLITS:
      print(f"bench_unseen: error: split {a.split} is not held out (dataset.unseen.SPLITS is {SPLITS}): no store excluded it", file=sys.stderr); return 2
    keys, held = benchmark_keys(dev, a.specs), held_out(dev)
    if hit := sorted(keys[k] for k in set(keys) & held & shipped_keys()):
      print(f"bench_unseen: error: split {a.split} holds {len(hit)} held-out kernels the training data holds now ({', '.join(hit[:3])}...)",
            file=sys.stderr); return 2
    # a wide split's kernel the stores held before its split was held out (dataset.unseen.held_out_keys leaves it out) is not unseen
    a.trained = set(keys) - held
  if a.networks:
    path = Path(a.out) / f"{a.name}.json"
    res = json.loads(path.read_text())
    print("networks merged:", ", ".join(merge_networks(res, Path(a.networks[0]), a.networks[1])))
    path.write_text(json.dumps(res, indent=1)); write_markdown(res, path.with_suffix(".md")); return 0
  if a.replot:
    res = json.loads(Path(a.replot).read_text())
    write_markdown(res, Path(a.replot).with_suffix(".md")); plot(res, Path(a.replot).with_suffix(".png")); return 0
  return run(a)

if __name__ == "__main__": sys.exit(main())
