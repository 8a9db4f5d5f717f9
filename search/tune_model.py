"""tune-model: tune every kernel of a whole model (an ONNX file, or a torch.nn.Module exported through torch.onnx) under one global
budget, store the results in the tuned-kernel cache, and report end-to-end latency against tinygrad's default, tinygrad's BEAM,
PyTorch eager and torch.compile, each measured in the same run.

  tune-model model.onnx --budget 200 --compare-beam 2 --out out/models

The model runs through tinygrad's ONNX runner; its kernels are those of one forward pass, deduplicated by AST key and counted.

Budget (Ansor's task scheduler, by expected gain: schedule()): kernel i runs n_i times per forward pass and takes t_i, first with
tinygrad's hand-coded opts, then with the best config its search has found. Every kernel's default is measured; then, round after
round, the kernel whose next round is expected to save the most model time, n_i * t_i * g_i, gets it: g_i is FIRST_GAIN before its
first round (the batch its search compiled ahead: every kernel's at once, so the compile pool stays full), NEXT_GAIN before its
second, and after that the mean of the last round's relative gain and the previous expectation (its search goes on from where it
stopped: search.strategies keeps the state in the context). So every kernel that matters gets its first round before any gets a
third, a kernel that stopped improving falls back, and tuning stops once no round is expected to save STOP_GAIN of the model's
current time, when --budget timed candidates are spent (default PER_KERNEL_DEFAULT per distinct kernel), --time-budget seconds
pass, or every search has stopped on its own. Before each round the next AHEAD kernels in the queue get their next round ready
(Beam.ahead: children scored in the pool, batch compiling), so a round starts by timing. Kernels of one loop nest (sibling_picks)
then trade their fastest configs: each one's final check times its siblings' too, on top of the budget (siblings_timed).
Measuring the defaults and the final correctness checks come on top of the budget. A static split by the default's shares (the
first version) spent most of the budget on kernels that became fast after a few candidates: on ResNet-50 (H200, 2026-11-21) the
tuned model stayed 1.56x slower than BEAM=2, most of the gap in mid-size kernels that got nothing; the greedy form that followed
(the largest n_i * t_i first, its budget doubled each time) gave later rounds to kernels already tuned while small kernels that had
become 2-4% of the tuned model kept their default (ResNet-50 b1 fp32, 2026-11-22: 5 such kernels cost ~70 us of 1.43 ms).

BEAM=N for comparison (--compare-beam): tinygrad's beam_search on each kernel (beam_kernels), as BEAM=N runs it inside tinygrad's
pipeline; its latency is measured with those opts applied through the same cache hook, its tuning time is the sum of its searches.

Kernels already in the cache are not searched again (--retune to search them anyway): a rerun with every kernel cached does no search
and no per-kernel measurement. Kernels that keep the default are cached with tinygrad's hand-coded opts (status "default") for the
same reason. A kernel whose search fails keeps the default and is reported with status "failed: ..." (not cached, so a rerun tries
it again); results cached before a failure stay.

Latency: a TinyJit of the runner (its python interpretation and scheduling are captured once, as any deployed tinygrad model would
run), after the JIT's two warm-up calls, with the device synchronized after every run; each configuration's JIT is first timed
--runs times as it is captured (first_pass_ms), then default, tuned and BEAM take turns for ROUNDS rounds of --runs runs and the
median of those is the figure (interleaved). The tuned JIT gets the cached opts at capture time, through search.cache's TinyJit
hook. Outputs are checked against PyTorch when a module is given, else against tinygrad's default run, with the dataset's dtype
tolerance (dataset.timing.compare)."""
from __future__ import annotations
import argparse, contextlib, json, math, random, statistics, sys, tempfile, time
from collections import Counter
from pathlib import Path
from typing import Any, Callable
import numpy as np
from tinygrad import Device, Tensor, TinyJit
from tinygrad.dtype import _to_np_dtype
from tinygrad.helpers import Context
from dataset.errors import one_line
from dataset.paths import cannot_write
from dataset.device import DeviceError, default_device, device_info, open_device, renderer_for
from dataset.kernel import Kernel, TINYGRAD_VERSION, kernel_asts, opts_to_json, scheduler
from dataset.sampler import hand_coded, replay
from dataset.timing import compare
from search.cache import CacheError, TunedCache, DEFAULT as DEFAULT_CACHE, tuned, stats as cache_stats
from search.cli import load_model, tune_kernel
from search.strategies import AHEAD, STRATEGIES, Context as SearchContext, finish, prepare_all
from search.measure import Budget, Measurer, shared_pool
from dataset.history import History, HistoryError

MIN_PER_KERNEL = 3        # timed candidates of a kernel's first round, for a strategy with no batch compiled ahead (MCTS)
ROUND = 6                 # timed candidates of a later round (Beam.k, MCTS.batch)
PER_KERNEL_DEFAULT = 10   # --budget default: this many per distinct kernel (beam's first batch is 8: the rest goes where it pays)
# expected relative gain of a kernel's first round over tinygrad's hand-coded config (the H200 search bench of 2026-11-22: learned
# beam 3.19x hand-coded in geomean, ~0.7; kept below what was seen, so a kernel must matter), and of its second round: the mean of
# what second rounds found, 1.4% over 22 kernels (the search bench, results/logs/search_bench_s6_call1.log: nothing faster on 13 of
# 18 kernels, 0.1-2.7% on 4, 11% on one; ResNet-50 b1 fp32 in tune-model, results/logs/models_s15_call2.resnet50_b1_fp32.tune.json: 14.6% on one of
# 4, for 9.3 s of its 34.3 s, and nothing on 3, for 4.9 s). At 0.05 later rounds took ~40% of that model's tuning time.
FIRST_GAIN, NEXT_GAIN = 0.5, 0.015
STOP_GAIN = 0.003         # a round must be expected to save this share of the model's current time
LEARNED = ("beam", "mcts", "pure-model")

class ModelError(RuntimeError): pass

# *** the model ***

def parse_shapes(specs:list[str]) -> dict[str|None, tuple[int, ...]]:
  """--input-shape NAME=1,3,224,224 (or just 1,3,224,224 for a model with one input)."""
  out: dict[str|None, tuple[int, ...]] = {}
  for s in specs:
    name, _, dims = s.rpartition("=")
    try: out[name or None] = tuple(int(d) for d in dims.split(","))
    except ValueError: raise ModelError(f"bad --input-shape {s!r}: expected NAME=D,D,... or D,D,...") from None
  return out

def _patch_onnx_consts():
  """tinygrad's ONNX runner folds scalar initializers into device-less CONSTs and reads some back with tolist(), which realizes a
  device-less tensor on the CPU device: on a GPU host without clang that fails (the CvT export hits it). Such a constant's value
  is its arg: read it without realizing anything."""
  import tinygrad.nn.onnx as O
  from tinygrad.uop.ops import Ops
  if getattr(O._to_python_const, "kerntune", False): return
  orig = O._to_python_const
  def to_python_const(t:Tensor): return t.uop.arg if t.device is None and t.uop.op is Ops.CONST else orig(t)
  to_python_const.kerntune = True   # type: ignore[attr-defined]
  O._to_python_const = to_python_const

class OnnxModel:
  """An ONNX file on a tinygrad device: the runner with its weights realized there, and one fixed set of inputs."""
  def __init__(self, path:str|Path, device:str, inputs:dict[str, np.ndarray]|None=None, shapes:dict|None=None, seed:int=0):
    from tinygrad.nn.onnx import OnnxRunner
    self.path, self.device = Path(path), device
    if not self.path.is_file(): raise ModelError(f"no such ONNX file: {self.path}")
    _patch_onnx_consts()
    try:
      with Context(DEV=device):   # the runner puts weights and the constants its ops make on the default device
        self.runner = OnnxRunner(self.path)
        # weights realized once: scheduling a forward pass without running it (kernel_asts) would otherwise rebind them unfilled
        Tensor.realize(*[v for v in self.runner.graph_values.values() if isinstance(v, Tensor)],
                       *[v for n in self.runner.graph_nodes for v in n.opts.values() if isinstance(v, Tensor)])
    except Exception as e: raise ModelError(f"{self.path} is not a valid ONNX model ({one_line(e, 300)})") from None
    self.names = list(self.runner.graph_inputs)
    self.arrays = inputs if inputs is not None else random_inputs(self.runner.graph_inputs, shapes or {}, seed)
    self.inputs = [Tensor(self.arrays[n], device=device).realize() for n in self.names]

  def forward(self, *xs:Tensor) -> list[Tensor]:
    """Lazy outputs of one forward pass."""
    with Context(DEV=self.device): outs = self.runner(dict(zip(self.names, xs)))
    return [outs[n] for n in self.runner.graph_outputs]

  def kernels(self, name:str) -> tuple[list[Kernel], Counter]:
    """The distinct kernels of one forward pass, in schedule order, and how many times each runs."""
    try: asts = kernel_asts(*self.forward(*self.inputs))
    except Exception as e: raise ModelError(f"tinygrad cannot run {self.path} ({one_line(e, 300)})") from None
    counts = Counter(a.key.hex() for a in asts)
    uniq = list({a.key.hex(): a for a in asts}.values())
    return [Kernel(a.key.hex(), a, f"{name}#{i}", "onnx", name) for i, a in enumerate(uniq)], counts

def random_inputs(specs:dict, shapes:dict, seed:int) -> dict[str, np.ndarray]:
  rng, out = np.random.default_rng(seed), {}
  for unknown in set(shapes) - set(specs) - {None}: raise ModelError(f"--input-shape names {unknown!r}, the model's inputs are {', '.join(specs)}")
  for name, spec in specs.items():
    shape = shapes.get(name, shapes.get(None) if len(specs) == 1 else None) or spec.shape
    if any(not isinstance(d, int) for d in shape):
      raise ModelError(f"input {name} has symbolic dims {spec.shape}: give --input-shape {name}=D,D,...")
    dt = _to_np_dtype(spec.dtype)
    # integer inputs (ids, masks) stay in {0, 1}, valid for any embedding or mask
    out[name] = rng.standard_normal(shape).astype(dt) if np.issubdtype(dt, np.floating) else rng.integers(0, 2, shape).astype(dt)
  return out

def export_torch(module, example_inputs:tuple, path:Path) -> Path:
  """The module through the legacy TorchScript exporter (the dynamo one needs onnxscript), opset 17."""
  import torch, warnings
  with warnings.catch_warnings():   # the legacy exporter's deprecation notice and tracer warnings, on every export
    warnings.simplefilter("ignore")
    # not under no_grad: there nn.MultiheadAttention takes its fused fast path, which has no ONNX export
    export = lambda m, xs: torch.onnx.export(m, tuple(xs), str(path), dynamo=False, opset_version=17,
                                             input_names=[f"input{i}" for i in range(len(xs))])
    try: export(module, example_inputs)
    except RuntimeError as e:
      # the exporter's constant folding can put a folded buffer on the CPU next to CUDA weights (GPT-2's causal mask on the
      # H200): export a CPU copy then; the weights are the same
      if "same device" not in str(e): raise
      import copy
      export(copy.deepcopy(module).cpu(), [x.cpu() for x in example_inputs])
  return path

# *** timing ***

def _timed(jit:TinyJit, model:OnnxModel, runs:int) -> tuple[list[float], list[Tensor]]:
  """Seconds of `runs` calls of a captured JIT, the device synchronized after each, and the last call's outputs."""
  dev, ts = Device[model.device], []
  for _ in range(runs):
    st = time.perf_counter(); outs = jit(*model.inputs); dev.synchronize()
    ts.append(time.perf_counter() - st)
  return ts, outs

def tinygrad_latency(model:OnnxModel, runs:int, ctx=contextlib.nullcontext) -> dict:
  """Median ms of `runs` JIT runs, the first (unjitted) call's seconds, the outputs, and how many of the captured JIT's kernel
  launches the tuned-kernel cache gave opts to (search.cache hooks TinyJit's capture)."""
  jit, dev = TinyJit(model.forward), Device[model.device]
  with ctx():
    st = time.perf_counter(); jit(*model.inputs); dev.synchronize()
    first_s = time.perf_counter() - st
    before = cache_stats()
    jit(*model.inputs); dev.synchronize()   # capture
    after = cache_stats()
  ts, outs = _timed(jit, model, runs)
  applied = [after["tuned"] - before["tuned"], after["tuned"] + after["default"] - before["tuned"] - before["default"]]
  return {"ms": statistics.median(ts)*1e3, "first_s": first_s, "outputs": [o.numpy() for o in outs], "applied": applied, "jit": jit}

ROUNDS = 5   # interleaved() alternates the captured JITs this many times
def interleaved(model:OnnxModel, jits:dict[str, TinyJit], runs:int, rounds:int=ROUNDS) -> dict[str, float]:
  """Median ms per captured JIT over `rounds` rounds of `runs` runs each, the JITs taking turns round by round: what drifts while
  they are measured one after another (GPU clocks, the host's load) falls on all of them alike, so their ratios hold still. Measured
  back to back instead, BEAM=2's latency of ResNet-50 b1 (the same cached opts) ranged 1.37-1.50 ms over four calls (2026-11-22)."""
  ts: dict[str, list[float]] = {k: [] for k in jits}
  for _ in range(rounds):
    for k, jit in jits.items(): ts[k] += _timed(jit, model, runs)[0]
  return {k: statistics.median(v)*1e3 for k, v in ts.items()}

def torch_latency(fn:Callable, inputs:list, runs:int, cuda:bool) -> tuple[float, list[np.ndarray]]:
  import torch
  sync = torch.cuda.synchronize if cuda else (lambda: None)
  with torch.inference_mode():
    for _ in range(3): out = fn(*inputs)
    sync()
    ts = []
    for _ in range(runs):
      st = time.perf_counter(); out = fn(*inputs); sync()
      ts.append(time.perf_counter() - st)
  return statistics.median(ts)*1e3, [t.detach().cpu().numpy() for t in _flat(out)]

def _flat(x) -> list:
  if isinstance(x, dict): x = list(x.values())
  return [t for y in x for t in _flat(y)] if isinstance(x, (list, tuple)) else [x]

def check(got:list[np.ndarray], ref:list[np.ndarray]) -> tuple[str|None, float]:
  """(None or what differs, max abs error) over every output, with the dataset's dtype tolerance."""
  if len(got) != len(ref) or any(g.size != r.size for g, r in zip(got, ref)):
    return f"output shapes {[g.shape for g in got]} != reference {[r.shape for r in ref]}", math.inf
  got = [g.reshape(r.shape).astype(r.dtype) for g, r in zip(got, ref)]
  err = next((f"output {i}: {e}" for i, (g, r) in enumerate(zip(got, ref)) if (e := compare(g, r)) is not None), None)
  return err, max(float(np.max(np.abs(g.astype(np.float64) - r)[np.isfinite(r)], initial=0.0)) for g, r in zip(got, ref))

# *** tuning ***

def schedule(runs:list[int], times:list[float], search:Callable[[int, int], tuple[int, float, bool]], total:int|None,
             seconds:float|None=None, first:int|list[int]=MIN_PER_KERNEL, ahead:Callable[[list[int], int], None]|None=None,
             step:int=ROUND, stop:float=STOP_GAIN, slots:int=0, next_gain:float=NEXT_GAIN) -> list[int]:
  """Ansor's task scheduler by expected gain: give the kernel whose next round is expected to save the most model time (runs x best
  time so far x expected relative gain: FIRST_GAIN, then next_gain, then the mean of the last round's gain and the expectation
  before it) another round, `first` timed candidates the first time (one number, or one per kernel: the batch its search has
  compiled ahead) and `step` after, until no round is expected to save `stop` of the model's current time, `total` timed
  candidates are spent, `seconds` pass, or every kernel's search has stopped on its own. With `slots` compile workers, a later round
  takes at least its share of them: a round costs one compile latency however many it compiles, and once only a kernel or two are
  still worth rounds (GPT-2's largest GEMM: 4 rounds of 6 for 8.7 s of its 16.5 s, H200 2026-11-23) rounds of 6 left most
  workers idle.
  search(i, budget) searches kernel i on to `budget` timed candidates in all and returns (timed so far, best time, stopped).
  ahead(order, size), if given, is told the AHEAD kernels it will search next, in order, and the size of their next rounds,
  before each round: their next rounds can compile while this one is timed. Returns the budget each kernel was given."""
  n, st = len(runs), time.perf_counter()
  firsts = first if isinstance(first, list) else [first]*n
  alloc, used, rounds, best, gain = [0]*n, [0]*n, [0]*n, list(times), [FIRST_GAIN]*n
  stopped = [not (t < math.inf) for t in times]
  saves = lambda i: runs[i]*best[i]*gain[i]
  while (total is None or sum(used) < total) and (seconds is None or time.perf_counter() - st < seconds):
    if not (cand := sorted((i for i in range(n) if not stopped[i]), key=lambda i: -saves(i))): break
    i, model_time = cand[0], sum(r*b for r, b in zip(runs, best) if b < math.inf)
    if saves(i) < stop*model_time: break
    live = sum(saves(j) >= stop*model_time for j in cand)   # kernels still worth a round: up to 1+AHEAD of them compile at once
    size = max(step, slots//min(live, 1 + AHEAD))
    if ahead is not None: ahead(cand[:AHEAD], size)
    more = max(1, firsts[i]) if rounds[i] == 0 else size
    alloc[i] += more if total is None else min(more, total - sum(used))
    before, rounds[i] = best[i], rounds[i] + 1
    used[i], t, stopped[i] = search(i, alloc[i])
    best[i] = min(best[i], t)
    gain[i] = next_gain if rounds[i] == 1 else ((before - best[i])/before + gain[i])/2
    stopped[i] = stopped[i] or used[i] < alloc[i]   # it stopped short of its budget: more would not help
  return alloc

def sibling_picks(ctxs:dict[int, SearchContext], searched:list[int]) -> dict[int, list[tuple]]:
  """Per searched kernel, the fastest measured config of each other searched kernel of the same loop nest (full shape and axis
  types) that it has not measured and that applies to it. A nest that occurs more than once in a model (ResNet's repeated blocks
  and their stage's first, CvT's heads) is searched once per kernel, and the searches can end far apart: ResNet-50 b32 fp32 on the
  H200 (2026-11-22), the 7x7x512 3x3 conv tuned to 758 us in one block and 451 us in the other."""
  nest = lambda i: (tuple(ctxs[i].base.full_shape), tuple(ctxs[i].base.axis_types))
  best = {i: min((o for o, t in ctxs[i].measurer.times.items() if t < math.inf), key=ctxs[i].measurer.times.get, default=None) for i in searched}
  return {i: list(dict.fromkeys(o for j in searched if j != i and nest(j) == nest(i) and (o := best[j]) is not None
                                and o not in ctxs[i].measurer.times and replay(ctxs[i].base, o) is not None)) for i in searched}

def _args(strategy:str, strategy_args:dict|None) -> dict:
  """The strategy's parameters: the beam's own stopping rule (Beam.adaptive) stays off here, where the budget scheduler decides
  each kernel's rounds by their expected gain."""
  return {**({"adaptive": False} if strategy in ("beam", "pure-model") else {}), **(strategy_args or {})}

def tune_kernels(kernels:list[Kernel], counts:Counter, device:str, cache:TunedCache, strategy:str, budget:int|None,
                 time_budget:float|None, scorer, model_name:str|None, retune:bool, workers:int, seed:int, log:Callable,
                 strategy_args:dict|None=None, next_gain:float=NEXT_GAIN, history:History|None=None) -> list[dict]:
  """One row per kernel. Every kernel's default is measured, schedule() shares the budget out, and each searched kernel's answer
  (its fastest config that passes the correctness check) goes to the cache, with tinygrad's default for the rest.

  Setup compiles ahead, for every kernel at once: its default, then (costliest default first) the first batch its search will
  measure (Beam.prepare), so the compile pool stays full instead of waiting on one kernel's batch at a time (as BEAM does). Its
  seconds are shared out evenly over the kernels set up; each kernel's tune_s adds its own search rounds and final check, so the
  sum is the tuning's wall time. With `history`, each kernel's first batch starts from the configs measured fastest on kernels of
  its loop nest (dataset.history); the row's `history` counts those that apply."""
  ren = renderer_for(device)
  rows = [{"index": i, "key": k.key, "name": k.name, "kernel": _describe(k, ren), "occurrences": counts[k.key], "share": None,
           "default_us": None, "hand_coded_us": None, "tuned_us": None, "budget": 0, "timed": 0, "compiled": 0,
           "search_s": 0.0, "tune_s": None, "siblings_timed": 0, "from_sibling": False, "history": 0, "status": None}
          for i, k in enumerate(kernels)]
  strat = STRATEGIES[strategy](**_args(strategy, strategy_args))
  ctxs: dict[int, SearchContext] = {}
  first: dict[int, int] = {}
  st = time.perf_counter()
  for i, (r, k) in enumerate(zip(rows, kernels)):
    if (hit := cache.get(k.key, device)) is not None and not retune:
      r.update(status="cached", default_us=hit.get("hand_coded_us"), hand_coded_us=hit.get("hand_coded_us"), tuned_us=hit.get("time_us"),
               tune_s=hit.get("tune_s"), timed=hit.get("timed", 0), compiled=hit.get("compiled", 0))
      if r["default_us"] is not None: continue
    try:   # not cached, or cached without its default time (the search CLI's entries): measure it
      m = Measurer(k, device, Budget(), workers=workers)
      ctxs[i] = SearchContext(scheduler(k.ast, ren), m, scorer, random.Random(seed))
      if history is not None: ctxs[i].history = history.candidates(ctxs[i].base, k.key); r["history"] = len(ctxs[i].history)
    except Exception as e:
      r["status"] = f"failed: default not measurable ({one_line(e, 300)})"
      if i in ctxs: ctxs.pop(i).measurer.close()
  marks = [time.perf_counter()]   # setup's phases: Measurers started (pool, buffers, reference and hand-coded compiling), defaults timed, descents
  for i in list(ctxs):   # the defaults first (their compiles started with the Measurers): the search setup goes by their shares
    try:
      m = ctxs[i].measurer   # its hand-coded config has compiled since the Measurer started
      rows[i]["default_us"] = m.measure([m.hand])[0]*1e6
      if rows[i]["default_us"] == math.inf: raise RuntimeError(m.errors.get(m.hand, "it does not run"))
    except Exception as e: rows[i]["status"] = f"failed: default not measurable ({one_line(e, 300)})"
  marks.append(time.perf_counter())
  weights = [r["default_us"]*r["occurrences"] if r["default_us"] not in (None, math.inf) else 0.0 for r in rows]
  for r, w in zip(rows, weights): r["share"] = w/sum(weights) if sum(weights) > 0 else None
  # the first batches (the beam's model descents in the compile pool, then compiling there too), costliest kernel first: the
  # scheduler times the costliest kernels' first rounds first, and their batches must not compile behind the small kernels' (ResNet-50
  # b1 fp16, 2026-11-22, in schedule order: the 25%-share kernel, the last one, waited 9 s for its first batch)
  searchable = sorted((i for i in ctxs if rows[i]["status"] is None), key=lambda i: -weights[i])
  for i, batch in zip(searchable, prepare_all(strat, [ctxs[i] for i in searchable])):
    if isinstance(batch, Exception): batch, rows[i]["status"] = [], f"failed: search setup ({one_line(batch, 300)})"
    first[i] = len(set(batch) - {ctxs[i].measurer.hand}) or MIN_PER_KERNEL
  marks.append(time.perf_counter())
  if history is not None and ctxs:
    log(f"  history: {sum(rows[i]['history'] > 0 for i in ctxs)} of {len(ctxs)} kernels have configs measured on their loop nest")
  if ctxs: log(f"  setup of {len(ctxs)} kernels: {marks[0] - st:.1f} s starting their measurers, {marks[1] - marks[0]:.1f} s timing their "
               f"defaults, {marks[2] - marks[1]:.1f} s for the model descents and first batches of {len(searchable)}")
  for i in ctxs: rows[i]["tune_s"] = (time.perf_counter() - st)/len(ctxs)
  todo = [i for i, r in enumerate(rows) if r["status"] is None and i in ctxs]
  for i in set(ctxs) - set(todo): ctxs.pop(i).measurer.close()   # cached, or its default failed: nothing to search
  n = budget if budget is not None else (None if time_budget else PER_KERNEL_DEFAULT*len(todo))

  k_name = lambda i: f"{kernels[i].name} {rows[i]['kernel']}"
  base = {i: ctxs[i].measurer.timed for i in todo}   # the default's timing counts in m.timed, not in the search budget
  def search(j:int, b:int) -> tuple[int, float, bool]:
    i = todo[j]
    c, m, r = ctxs[i], ctxs[i].measurer, rows[i]
    if not c.state.get("stopped") and r["status"] is None:
      st = time.perf_counter()
      c.round_size = b - (m.timed - base[i])   # this round's candidates: one batch, not several rounds of the strategy's own size
      m.budget.measurements = base[i] + b
      try: strat.run(c)
      except Exception as e: r["status"] = f"failed: {one_line(e, 300)}"; log(f"  {k_name(i)}: search failed, keeps the default: {one_line(e, 300)}")
      r["search_s"] += time.perf_counter() - st
    return m.timed - base[i], m.best*1e6, bool(c.state.get("stopped")) or r["status"] is not None
  def ahead(order:list[int], size:int):
    # a kernel's next round (its children scored in the pool, then its batch compiling) is made ready before the scheduler gets to
    # it, so its round starts by timing instead of waiting a compile latency; a failure here is search()'s to record
    for j in order:
      if rows[i := todo[j]]["status"] is None and hasattr(strat, "ahead"):
        st, ctxs[i].round_size = time.perf_counter(), size
        with contextlib.suppress(Exception): strat.ahead(ctxs[i])
        rows[i]["search_s"] += time.perf_counter() - st   # its tuning time: tune_s still sums to the wall time
  alloc = schedule([rows[i]["occurrences"] for i in todo], [rows[i]["default_us"] for i in todo], search, n, time_budget,
                   [first[i] for i in todo], ahead, slots=workers, next_gain=next_gain)
  # each kernel's final check also times its siblings' fastest configs (all compiling at once, now); the answer may be one of them
  sib = sibling_picks(ctxs, [i for j, i in enumerate(todo) if alloc[j] > 0 and rows[i]["status"] is None])
  for i, ps in sib.items():
    ctxs[i].final_picks += ps
    ctxs[i].measurer.prefetch(ps)
  for j, i in enumerate(todo):
    r, k, c = rows[i], kernels[i], ctxs[i]
    m, r["budget"] = c.measurer, alloc[j]
    # where a kernel's tuning seconds went: its share of the setup, waiting on compiles, timing on the device, the final check;
    # the rest of search_s is the search's own CPU (scoring children) and waiting for the pool (compile_wait_s counts the default's)
    r["phases"] = {"setup_s": r["tune_s"], "compile_wait_s": m.compile_s, "timing_s": m.time_s}
    r["marks"] = dict(m.marks)   # seconds since its measurer started at which it reached its phases (e.g. first_batch)
    if alloc[j] == 0 or r["status"] is not None:   # never searched (or failed): the default, cached too so a rerun has nothing left to decide
      r.update(status=r["status"] or "default", hand_coded_us=r["default_us"], tuned_us=r["default_us"], timed=m.timed - base[i],
               compiled=m.compiled, tune_s=r["tune_s"] + r["search_s"])
      if r["status"] == "default":
        cache.put(k.key, device, opts_to_json(m.hand), time_us=r["default_us"], hand_coded_us=r["default_us"], name=k.name,
                  strategy="default", model=None, tune_s=r["tune_s"])
      m.close(); continue
    st = time.perf_counter()
    o = finish(c, strategy, r["search_s"])
    m.close()
    r["phases"]["verify_s"] = time.perf_counter() - st
    # what each round bought: (timed so far, seconds since its measurer started, best us so far) per timed candidate
    r["rounds"], r["trajectory"] = c.state.get("rounds"), [(n, s, round(b*1e6, 3)) for n, s, b in m.trajectory]
    r["tune_s"] += r["search_s"] + time.perf_counter() - st   # measuring its default, searching, and the final check
    r.update(timed=o.timed - base[i], compiled=o.compiled, search_s=round(o.search_s, 3), hand_coded_us=o.hand_time_s*1e6)
    if not o.verified:
      r.update(status=f"failed: {o.check}", tuned_us=r["default_us"])
      log(f"  {k_name(i)}: nothing verified, keeps the default: {o.check}"); continue
    r.update(status="tuned", tuned_us=o.time_s*1e6, opts=opts_to_json(o.opts), siblings_timed=len(sib.get(i, [])), from_sibling=o.opts in sib.get(i, []))
    cache.put(k.key, device, opts_to_json(o.opts), time_us=o.time_s*1e6, hand_coded_us=o.hand_time_s*1e6, name=k.name,
              strategy=strategy, model=model_name, tune_s=r["tune_s"], timed=r["timed"], compiled=o.compiled)
    log(f"  {k_name(i)} x{r['occurrences']} ({r['share']:.1%}): {r['hand_coded_us']:.1f} -> {r['tuned_us']:.1f} us, "
        f"budget {alloc[j]}, {r['timed']} timed{' (a sibling kernel config)' if r['from_sibling'] else ''}, {r['tune_s']:.1f} s (" + ", ".join(f"{ph[:-2]} {v:.1f}" for ph, v in r["phases"].items()) + ")")
  return rows

def beam_kernels(kernels:list[Kernel], device:str, cache:TunedCache, amt:int, workers:int, search:bool=True,
                 log:Callable=lambda s: None) -> list[dict]:
  """tinygrad's BEAM=amt (search.strategies.TinygradBeam: its beam_search, unchanged) on each kernel the cache lacks, one at a time,
  as BEAM=amt does inside tinygrad's pipeline; every result is cached as found with its search seconds, so a run cut off resumes
  where it stopped and the tuning time is the sum over kernels. A pick that fails the correctness check is replaced by the
  fastest config that passes (hand-coded at worst), which can only flatter BEAM. search=False: only what the cache has.
  One row per kernel: key, beam_us (None: not searched yet), beam_s."""
  rows = []
  for k in kernels:
    if (hit := cache.get(k.key, device)) is None and search:
      st = time.perf_counter()
      try:
        o, m = tune_kernel(k, device, "tinygrad-beam", Budget(), None, 0, workers, amt=amt)
        m.close()
        opts, t, status = (o.opts, o.time_s, "ok") if o.verified else (o.hand_opts, o.hand_time_s, f"failed: {o.check}")
        hit = dict(opts=opts_to_json(opts), time_us=t*1e6, tune_s=o.search_s, timed=o.timed, compiled=o.compiled, status=status, ts=time.time())
      except Exception as e:   # tinygrad's own run would stop here; the kernel keeps its default and the seconds still count
        hit = dict(opts=opts_to_json(hand_coded(scheduler(k.ast, renderer_for(device)))), time_us=None,
                   tune_s=time.perf_counter() - st, timed=0, compiled=0, status=f"failed: {one_line(e, 300)}")
      cache.put(k.key, device, name=k.name, strategy=f"tinygrad BEAM={amt}", **hit)
      log(f"  BEAM={amt} {k.name}: {hit['status']}, {hit['timed']} timed, {hit['tune_s']:.1f} s")
    rows.append({"key": k.key, "beam_us": None if hit is None else hit["time_us"], "beam_s": None if hit is None else hit["tune_s"],
                 "beam_timed": None if hit is None else hit["timed"], "done": hit is not None})
  return rows

def _describe(k:Kernel, ren) -> str:
  """tinygrad's kind of name: r(educe)/E(lementwise) and the loop sizes."""
  s = scheduler(k.ast, ren)
  return ("r" if s.reduceop is not None else "E") + "".join(f"_{d}" for d in s.full_shape)

# *** the command ***

def open_model(model:str|Path|Any, example_inputs:tuple|None, device:str, name:str|None=None, input_shapes:dict|None=None,
               seed:int=0) -> tuple[str, OnnxModel, list[Kernel], Counter, Any]:
  """(name, the model on `device`, its distinct kernels, their counts, the torch module or None) of an ONNX path or a torch module."""
  module = None
  with tempfile.TemporaryDirectory(prefix="tune_model_") as tmp:
    if isinstance(model, (str, Path)): path, arrays = Path(model), None
    else:
      module, example_inputs = model.eval(), tuple(example_inputs or ())
      try: path = export_torch(module, example_inputs, Path(tmp) / "model.onnx")
      except Exception as e: raise ModelError(f"torch.onnx cannot export {type(module).__name__} ({one_line(e, 300)})") from None
      arrays = {f"input{i}": x.detach().cpu().numpy() for i, x in enumerate(example_inputs)}
    name = name or (path.stem if module is None else type(module).__name__)
    m = OnnxModel(path, device, arrays, input_shapes, seed)
    kernels, counts = m.kernels(name)
  return name, m, kernels, counts, module

def load_history(history:str|Path|bool|None, device:str, arch:str) -> History|None:
  try: return History.resolve(history, device, arch)
  except HistoryError as e: raise ModelError(str(e)) from None

def tune_model(model:str|Path|Any, example_inputs:tuple|None=None, *, name:str|None=None, device:str|None=None, budget:int|None=None,
               time_budget:float|None=None, strategy:str="beam", cost_model:str|None=None, allow_device_mismatch:bool=False,
               cache:str|Path|None=None, compare_beam:int=0, beam_cache:str|Path|None=None, search_beam:bool=True,
               torch_compile:bool=True, runs:int=20, input_shapes:dict|None=None, retune:bool=False, workers:int=0, seed:int=0,
               compile_penalty:bool=True, strategy_args:dict|None=None, next_gain:float=NEXT_GAIN, history:str|Path|bool|None=None,
               out:str|Path|None=None,
               log:Callable=lambda s: print(s, file=sys.stderr)) -> dict:
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
  try: STRATEGIES[strategy](**_args(strategy, strategy_args))
  except TypeError as e: raise ModelError(f"bad --strategy-args for {strategy}: {e}") from None
  dev_name, arch, props = device_info(device)
  cm, cm_path = load_model(cost_model, device, dev_name, arch, allow_device_mismatch)
  hist = load_history(history, device, arch)
  tc = TunedCache(cache or DEFAULT_CACHE)
  name, m, kernels, counts, module = open_model(model, example_inputs, device, name, input_shapes, seed)
  log(f"tune-model: {name}: {len(kernels)} distinct kernels, {sum(counts.values())} launches, on {dev_name} ({arch}), strategy {strategy}, "
      f"model {Path(cm_path).name}")
  rep: dict[str, Any] = {"model": name, "source": str(model) if module is None else f"torch module {name}", "device": f"{dev_name} ({arch})",
                         "backend": device, "date": time.strftime("%Y-%m-%d"), "tinygrad": TINYGRAD_VERSION, "strategy": strategy,
                         "strategy_args": strategy_args or {}, "next_gain": next_gain,
                         "cost_model": cm_path, "history": hist.meta.get("path") if hist else None,
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
                      retune, workers, seed, log, strategy_args, next_gain, hist)
  rep["tune_wall_s"], rep["tune_s"] = time.perf_counter() - st, sum(r["tune_s"] or 0.0 for r in rows)
  rep["kernels_searched"] = sum(r["status"] not in ("cached", "default") for r in rows)
  rep["budget"], rep["time_budget"] = sum(r["budget"] for r in rows), time_budget
  tuned_run = tinygrad_latency(m, runs, lambda: tuned(tc.path))
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
  ap.add_argument("--budget", type=int, default=None, help=f"timed candidates in all, shared out by the scheduler (default {PER_KERNEL_DEFAULT} per kernel)")
  ap.add_argument("--time-budget", type=float, default=None, help="search seconds in all (the scheduler's rounds stop after)")
  ap.add_argument("--strategy", choices=LEARNED, default="beam")
  ap.add_argument("--next-gain", type=float, default=NEXT_GAIN, help=f"a kernel's second round is expected to gain this share of its "
                  f"time (default {NEXT_GAIN}): higher spends more of the budget on later rounds")
  ap.add_argument("--strategy-args", type=json.loads, default=None, metavar="JSON",
                  help='the strategy\'s parameters, e.g. \'{"descent_width": 8}\' (search.strategies.Beam\'s fields)')
  ap.add_argument("--model", default=None, help="cost model (default: the shipped model for the device's arch)")
  ap.add_argument("--history", default=None, help="dataset.history file: first batches start from the configs measured fastest on kernels "
                  "of the same loop nest (default: the shipped one for the device's arch, models/history_<arch>.json, if present)")
  ap.add_argument("--no-history", action="store_true", help="search from the cost model alone")
  ap.add_argument("--allow-device-mismatch", action="store_true")
  ap.add_argument("--cache", default=None, help=f"tuned-kernel cache (default {DEFAULT_CACHE})")
  ap.add_argument("--compare-beam", type=int, default=0, metavar="N", help="also measure tinygrad's BEAM=N (latency and tuning time)")
  ap.add_argument("--beam-cache", default=None, help="where --compare-beam keeps BEAM's per-kernel results (a rerun resumes from it)")
  ap.add_argument("--runs", type=int, default=20, help="timed runs per latency")
  ap.add_argument("--retune", action="store_true", help="search kernels the cache already has")
  ap.add_argument("--workers", type=int, default=0, help="compile processes (0: in this process)")
  ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--out", default="out/tune_model", help="directory for NAME.json")
  ap.add_argument("--no-compile-penalty", action="store_true", help="rank by the cost model alone, not less its penalty for slow compiles")
  return ap.parse_args(argv)

def main(argv=None) -> int:
  a = parse_args(argv)
  try:
    tune_model(a.onnx, device=a.device, budget=a.budget, time_budget=a.time_budget, strategy=a.strategy, cost_model=a.model,
               allow_device_mismatch=a.allow_device_mismatch, cache=a.cache, compare_beam=a.compare_beam, beam_cache=a.beam_cache, runs=a.runs,
               input_shapes=parse_shapes(a.input_shape), retune=a.retune, workers=a.workers, seed=a.seed,
               compile_penalty=not a.no_compile_penalty, strategy_args=a.strategy_args, next_gain=a.next_gain,
               history=False if a.no_history else a.history, out=a.out)
  except (ModelError, DeviceError, CacheError) as e: return fail(str(e))
  except Exception as e:
    if type(e).__name__ == "CostModelError": return fail(str(e))
    raise
  return 0

def fail(msg:str) -> int:
  print(f"tune-model: error: {msg}", file=sys.stderr); return 2

if __name__ == "__main__": sys.exit(main())
