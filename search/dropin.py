"""Drop-in tuning: every kernel a tinygrad program runs that the tuned-kernel cache lacks is tuned at first sight, where tinygrad's
BEAM would search it (at first compile); the verified answer goes to the cache and runs at once, so a second run of the program
replays the cache and searches nothing. Backward and optimizer kernels, and kernels captured by TinyJit, pass through the same hook
(search.cache._apply).

The new kernels of one LINEAR (what one realize runs; a TinyJit's first call holds a whole step) are tuned together, as tune-model
tunes a model's: each one's default is timed once, then a pool of `budget` timed candidates per kernel is shared out round by round
by expected gain (search.task_scheduler), so a kernel gets what its share of the LINEAR's runtime is worth and a small one keeps its
default (cached as such). A kernel whose search stopped on its budget is marked so in the cache: a later run searches it further,
starting from its cached configs, with `retune` or a larger `budget`. A kernel with a symbolic shape (a Variable: GPT-2's position
under TinyJit) is searched as itself, as tinygrad's BEAM searches it: timed at each Variable's mid-range, over configs that leave its
symbolic axes whole, so the same code runs at every value (a concrete twin's configs split them: results/logs/dropin/h100_gpt2_kernels).

With KERNTUNE_WHEN=second (Tuner.when) a kernel is tuned at its second sight instead, so that what a program runs once is
never searched; with KERNTUNE_WHEN=jit only the kernels TinyJit captures are tuned (a jitted step's, at its capture, its second
call), and the rest (weight init, a prompt's prefill, the jitted function's first call) runs on tinygrad's default, uncached.

  with tuned(tune=True): out = model(x).realize()     # or tuned-run --tune prog.py ARGS, or KERNTUNE=1 python prog.py (search.hook)"""
from __future__ import annotations
import atexit, contextlib, json, math, os, random, sys, time
from collections import Counter
from dataclasses import dataclass, field
from tinygrad.uop.ops import Ops, UOp

BUDGET = 10   # timed candidates per kernel, pooled: tune-model's default (search.task_scheduler.PER_KERNEL_DEFAULT)
TOP = 4       # configs a cache entry keeps (its fastest measured): a later search of the kernel starts from them
# a kernel's second round's expected gain: drop-in's kernels are all unseen; on the unseen splits 2-4 the six timings after the
# first batch gained 2.2-4.2% in mean (tune-model's task_scheduler.NEXT_GAIN, 1.5%, is of corpus-shaped kernels). The CNN training
# step on H100 is bimodal either way: at 0.03 1.038-1.071x BEAM=2's step in five runs, 1.155-1.249x in six (results/dropin_h100.md)
NEXT_GAIN = 0.03
SHOWN = 20    # per-kernel lines of the summary (the costliest kernels); KERNTUNE_REPORT has them all
WHEN = ("first", "second", "jit")   # Tuner.when
LATER_SHARE = 0.25   # tune-model's default (search.task_scheduler.LATER_SHARE, not imported: this module loads with tinygrad)

@dataclass
class Tuner:
  budget: int = BUDGET              # timed candidates per new kernel, pooled over a LINEAR's kernels and shared out by expected gain
  kernel_s: float = 60.0            # seconds of search per kernel at most
  total_s: float|None = None        # seconds for the whole program; once spent, kernels the cache lacks keep their default, uncached
  total: int|None = None            # timed candidates for the whole program, likewise
  retune: bool = False              # search further the cached kernels whose search stopped on its budget
  workers: int|None = None          # compile processes (None: every core but one on a GPU, none on the CPU)
  model: str|None = None            # cost model (None: the shipped one for the device)
  timing: str = "cold"              # candidates timed after an L2 flush (cold), without (warm), or warm where they fit (search.measure)
  next_gain: float = NEXT_GAIN      # what a kernel's second round is expected to gain
  stop_gain: float|None = None      # the share of the program's time a round must be expected to save (None: task_scheduler.STOP_GAIN)
  # a kernel's first batch and descent by its share of the LINEAR's time, full from this share up (task_scheduler.first_effort; None:
  # full for all). GPT-2's 37 kernels of 1-16%: 0.05 left its search seconds within their spread (results/dropin_variants.md)
  first_share: float|None = None
  later_share: float|None = LATER_SHARE   # later rounds take at most this share of the tuning's other seconds (None: no limit)
  # kernels whose first round is not worth STOP_GAIN of the program's time at its defaults keep their first batches uncompiled until
  # the scheduler comes to them (Preparing.hold): the CNN training step's 43 kernels left small compiled 409 configs nobody timed, 39%
  # of its compiles, queued in the pool before the larger kernels' rounds (2 x H200, results/logs/dropin/h200x2_later_expect)
  hold_small: bool = False
  guard: bool = True   # a LINEAR just tuned is checked against tinygrad's defaults on the program's data (search.guard.check_tuned)
  strategy_args: dict|None = None   # the beam's parameters (KERNTUNE_BEAM; tune-model's --strategy-args), e.g. {"group_best": False}
  quiet: bool = False               # no progress and no summary
  # when a kernel the cache lacks is tuned: at its first sight (as tinygrad's BEAM), at its second (a TinyJit's capture, a loop's
  # second pass), so that what runs once is never searched, or "jit": only what TinyJit captures, the rest on tinygrad's default.
  # GPT-2's generation: 12.5 of 16.9 s of search before its decode step at first sight, no less at second (its prefill's kernels
  # recur in the next layer), 6.7-6.9 s at "jit" against 17.9 s (results/dropin_when.md, results/dropin_jit.md)
  when: str = "first"
  spent_s: float = 0.0
  timed: int = 0
  rows: list[dict] = field(default_factory=list)      # one per kernel met that was not replayed from the cache
  # where the seconds went, over every realize tuned: defaults (Measurers, pool start, the model's load, the defaults timed), first
  # batches (scored and compiled), rounds (the scheduler's), finish (final checks, the cache), guard (search.guard.check_tuned)
  phases: dict[str, float] = field(default_factory=lambda: dict.fromkeys(("defaults", "first_batches", "rounds", "finish", "guard"), 0.0))
  replayed: set[str] = field(default_factory=set)     # kernels met that the cache had
  once: set[str] = field(default_factory=set)         # when="second" ("jit"): kernels met once (outside TinyJit), on the default
  _seen: set[str] = field(default_factory=set)
  _scorers: dict = field(default_factory=dict)
  _busy: bool = False
  _hand: dict = field(default_factory=dict)   # key -> the compiled default of a kernel just tuned: the guard's reference runs it
  _captured: bool = False   # a TinyJit capture was met (when="jit" tunes nothing in a program without one: the summary says so)

  def __post_init__(self):
    from search.measure import TIMINGS
    from search.task_scheduler import bad_later_share
    if self.timing not in TIMINGS: raise ValueError(f"timing {self.timing!r} is not one of {', '.join(TIMINGS)} (KERNTUNE_TIMING)")
    if self.when not in WHEN: raise ValueError(f"when {self.when!r} is not one of {', '.join(WHEN)} (KERNTUNE_WHEN)")
    if why := bad_later_share(self.later_share): raise ValueError(f"later_share {why} (KERNTUNE_LATER_SHARE)")
    for var, v, pos in (("BUDGET", self.budget, 0), ("TOTAL", self.total, 0), ("WORKERS", self.workers, 0), ("KERNEL_S", self.kernel_s, 1), ("TOTAL_S", self.total_s, 1)):
      if v is not None and not (v > 0 if pos else v >= 0): raise ValueError(f"KERNTUNE_{var} must be {'> 0' if pos else '>= 0'}, got {v}")
    if self.strategy_args:
      from search.task_scheduler import scheduled
      try: scheduled("beam", self.strategy_args)
      except ValueError as e: raise ValueError(f"KERNTUNE_BEAM: {e}") from None

  def _scorer(self, device:str):
    if device not in self._scorers:
      from dataset.device import device_info
      from search.api import load_model
      name, arch, props = device_info(device)
      self._scorers[device] = load_model(self.model, device, name, arch, False)[0].scorer(props)
    return self._scorers[device]

  def again(self, hit:dict) -> bool:
    """Whether a cached kernel is searched further: its search stopped on its budget, and this run retunes or has more budget."""
    return hit.get("stopped") == "budget" and (self.retune or self.budget > hit.get("kernel_budget", self.budget))

  def over(self) -> bool:
    return (self.total_s is not None and self.spent_s >= self.total_s) or (self.total is not None and self.timed >= self.total)

  def tune(self, linear:UOp, device:str, table:dict, cache, captured:bool=False) -> None:
    """Tune the kernels of `linear` that `table` lacks (or that `again` picks); put the answers in `cache` and `table` (ast key -> opts).
    captured: TinyJit is capturing `linear` (its add_linear), which when="jit" waits for."""
    if self._busy: return   # a search's own runs are not tuned
    self._captured |= captured
    from dataset.kernel import describe
    asts = [c.src[0] for c in linear.src if c.src[0].op is Ops.SINK]
    runs, todo, rest = Counter(a.key.hex() for a in asts), [], 0.0
    for key, a in {a.key.hex(): a for a in asts}.items():
      hit = cache.get(key, device)
      if key in self._seen or (hit is not None and not self.again(hit) and key in table):   # not in it: search.cache.current
        # kernels not tuned now count in the LINEAR's time, by their cached time: a new kernel's share is of the whole LINEAR
        if hit is not None and hit.get("time_us") is not None: rest += runs[key]*hit["time_us"]
        if key not in self._seen: self._seen.add(key); self.replayed.add(key)
        continue
      if hit is None and ((self.when == "second" and key not in self.once) or (self.when == "jit" and not captured)):
        self.once.add(key); continue   # its first sight (outside a capture): tinygrad's default, neither searched nor cached
      self._seen.add(key); self.once.discard(key)
      s = _scheduler(a, device)   # None: a kernel the Scheduler cannot take is not searched either
      row = {"name": f"kernel {len(self.rows) + 1}", "key": key, "kernel": "?" if s is None else describe(s), "runs": runs[key], "status": None}
      self.rows.append(row)
      symbolic = s is None or not all(isinstance(d, int) for d in s.full_shape)   # its loop sizes are known only at run time
      if symbolic and s is not None: row["at"] = {v.expr: (v.vmin + v.vmax)//2 for v in a.variables()}   # where it is timed
      if symbolic and s is None: row["status"] = "symbolic"
      elif self.over(): row["status"] = "over budget"
      else: todo.append((row, a, hit))
    if not todo: return
    try: self._search(todo, device, table, cache, rest)
    except Exception as e:   # a search that breaks leaves the program running, with tinygrad's defaults where nothing was found
      from dataset.errors import one_line
      for row, *_ in todo:
        if row["status"] is None: row["status"] = f"failed: {one_line(e, 300)}"

  def pool_workers(self, device:str) -> int:
    """Compile workers a search on `device` uses: `workers`, or on a GPU every core but the one that times."""
    return self.workers if self.workers is not None else (0 if device == "CPU" else max(0, (os.cpu_count() or 1) - 1))

  def _search(self, todo:list[tuple[dict, UOp, dict|None]], device:str, table:dict, cache, rest:float):
    """Each todo item: its row, the kernel's AST and its cache entry (a retune)."""
    from tqdm import tqdm
    from dataset.errors import one_line
    from dataset.kernel import Kernel, opts_from_json, scheduler
    from search.first_batches import Preparing
    from search.context import Context
    from search.measure import Budget, Measurer
    from search.task_scheduler import MIN_PER_KERNEL, first_effort, pooled, readiness, schedule, scheduled, work_of
    workers = self.pool_workers(device)
    strat, ctxs, st = scheduled("beam", self.strategy_args), {}, time.perf_counter()   # the scheduler's rounds, not the beam's
    say = (lambda s: None) if self.quiet else (lambda s: print(f"kerntune: {s}", file=sys.stderr, flush=True))
    say(f"{len(todo)} new kernel(s) on {device}: timing their defaults")
    self._busy = True
    try:
      for i, (row, a, hit) in enumerate(todo):
        try:
          m = Measurer(Kernel(a.key.hex(), a, row["name"], "dropin", "dropin"), device, Budget(), workers=workers, timing=self.timing)
          ctxs[i] = Context(scheduler(a, m.ren), m, None, random.Random(0))
          if hit is not None: ctxs[i].history = [opts_from_json(o) for o in hit.get("top") or [hit["opts"]]]   # retune: from its configs
        except Exception as e: row["status"] = f"failed: {one_line(e, 300)}"
      # the model loads here while the pool starts and compiles the defaults (the Measurers began both): a program's first tuning
      # pays for the pool's start, and the cost model's load need not wait for it
      try: scorer = self._scorer(device)
      except Exception as e:   # no cost model for this device: the program runs on with tinygrad's defaults
        for row, *_ in todo: row["status"] = f"failed: {one_line(e, 300)}"
        return
      for c in ctxs.values(): c.score = scorer
      if self.budget <= strat.seed_picks:   # a budget too small for the beam's first batch: one round of what it pays for (Beam.one_round)
        for c in ctxs.values(): c.measurer.budget.measurements = c.measurer.timed + self.budget
      # the first batches, costliest kernel first (as tune-model); their model descents start in the pool while the defaults are
      # timed here (as tune-model's: a window at a time, by the default once timed), and the rounds start as soon as one is ready,
      # while the other kernels' descents go on. With first_share a descent goes by its kernel's share: they start after the defaults
      live, first, sizes = [], [], {}
      def admit(ready:list):
        for p, batch in ready:
          i = ids[p]
          if isinstance(batch, Exception): todo[i][0]["status"] = f"failed: search setup ({one_line(batch, 300)})"; continue
          sizes[i], ctxs[i].first_batch = len(set(batch) - {ctxs[i].measurer.hand}) or MIN_PER_KERNEL, list(batch)
          todo[i][0]["first_batch"] = len(batch)
          if i in live: first[live.index(i)] = sizes[i]
      early = not self.first_share and workers > 1 and (self.total is None or self.timed < self.total)
      ids = list(ctxs) if early else []
      timed = lambda p: (todo[ids[p]][0]["runs"], todo[ids[p]][0].get("default_us"))   # a kernel's runs and its default, once timed
      prep = Preparing(strat, [ctxs[i] for i in ids], timed, workers) if early else None
      for i, c in ctxs.items():   # the defaults (their compiles started with the Measurers): the shares go by them
        row, m = todo[i][0], c.measurer
        try: row["default_us"] = m.measure([m.hand])[0]*1e6
        except Exception as e: row["status"] = f"failed: {one_line(e, 300)}"
        else:
          if row["default_us"] == math.inf: row["status"] = f"failed: the default does not run ({m.errors.get(m.hand, '?')})"
        if prep is not None: admit(prep.poll())
      t_phase = self._phase("defaults", st)
      live += sorted((i for i in ctxs if todo[i][0]["status"] is None), key=lambda i: -todo[i][0]["runs"]*todo[i][0]["default_us"])
      seconds = None if self.total_s is None else max(0.0, self.total_s - self.spent_s - (time.perf_counter() - st))
      cost = {i: todo[i][0]["runs"]*todo[i][0]["default_us"] for i in live}   # each kernel's time in the program at its default
      whole = rest + sum(cost.values())
      if self.first_share and live:
        for i in live: ctxs[i].seed_picks, ctxs[i].descent_width = first_effort(strat, cost[i]/whole, self.first_share)
      if self.hold_small and prep is not None:
        for p, i in enumerate(ids):
          if i in cost and self._small(cost[i], whole):
            prep.withhold(p); todo[i][0]["held"] = True
            for o in ctxs[i].first_batch: ctxs[i].measurer.drop(o)   # compiles of it still queued are taken back
      for i in live: todo[i][0]["first_picks"] = strat.first_batch(ctxs[i])
      total = pooled(self.budget, strat, [ctxs[i] for i in live])
      if self.total is not None: total = min(total, max(0, self.total - self.timed))
      first += [sizes.get(i, MIN_PER_KERNEL) for i in live]
      if prep is None: ids, prep = list(live) if total else [], Preparing(strat, [ctxs[i] for i in live] if total else [])
      elif not total: prep.close()
      spot = {i: p for p, i in enumerate(ids)}
      admit(prep.wait())
      t_phase = self._phase("first_batches", t_phase)
      setup = (time.perf_counter() - st)/max(1, len(ctxs))
      for i in ctxs: todo[i][0]["search_s"] = setup
      base = {i: ctxs[i].measurer.timed for i in live}   # the default's timing is no search
      bar = tqdm(total=total, desc=f"kerntune {device} {len(live)} kernels", unit="timed", file=sys.stderr, disable=self.quiet or not live,
                 mininterval=1.0, leave=False)
      def search(j:int, b:int) -> tuple[int, float, bool]:
        i = live[j]
        c, m, row = ctxs[i], ctxs[i].measurer, todo[i][0]
        spent = row["search_s"] - setup
        if not c.state.get("stopped") and row["status"] is None and spent < self.kernel_s:
          t0, n0 = time.perf_counter(), m.timed
          c.round_size = b - (m.timed - base[i])   # this round's candidates: one batch
          m.budget.measurements, m.budget.seconds = base[i] + b, m.elapsed + self.kernel_s - spent
          try: strat.run(c)
          except Exception as e: row["status"] = f"failed: {one_line(e, 300)}"
          row["search_s"] += time.perf_counter() - t0
          bar.update(m.timed - n0)
          bar.set_postfix_str(f"{row['name']} {row['kernel']} {row['default_us']/max(m.best*1e6, 1e-9):.2f}x", refresh=False)
        return m.timed - base[i], m.best*1e6, bool(c.state.get("stopped")) or row["status"] is not None or row["search_s"] - setup >= self.kernel_s
      def ahead(order:list[int], size:int):
        # the next kernels' rounds get ready (children scored and compiling in the pool) while this one's is timed
        for j in order:
          if todo[i := live[j]][0]["status"] is None:
            t0, ctxs[i].round_size = time.perf_counter(), size
            with contextlib.suppress(Exception): strat.ahead(ctxs[i])
            todo[i][0]["search_s"] += time.perf_counter() - t0
      end = None if seconds is None else time.perf_counter() + seconds
      alloc = dict(zip(live, schedule([todo[i][0]["runs"] for i in live], [todo[i][0]["default_us"] for i in live], search, total,
                                      None if end is None else lambda i: end - time.perf_counter(),
                                      first, ahead, slots=workers, rest=rest,
                                      work=[work_of(ctxs[i].base) for i in live], next_gain=self.next_gain,
                                      stop=self._stop_gain(),
                                      pending=lambda j: (admit(prep.poll()), spot.get(live[j]) in prep.left)[1],
                                      wait=lambda: admit(prep.wait()),
                                      again=lambda j, likely: setattr(ctxs[live[j]], "again", likely),
                                      later_share=self.later_share, since=st,
                                      ready=readiness(strat, [ctxs[i] for i in live])))) if live else {}
      prep.close()
      bar.close()
      t_phase = self._phase("rounds", t_phase)
      best = {i: min(ctxs[i].measurer.best*1e6, todo[i][0]["default_us"]) for i in live}
      now_us = rest + sum(todo[i][0]["runs"]*best[i] for i in live)
      for i, c in ctxs.items():
        try: self._finish(todo[i], c, alloc.get(i, 0), base.get(i, 0), now_us, device, table, cache)
        except Exception as e: todo[i][0]["status"] = f"failed: {one_line(e, 300)}"
        # where this process waited for the kernel: on its compiles (the default's and the final checks' too) and on timing it;
        # the rest of a search's seconds is scoring and scheduling here
        m = c.measurer
        todo[i][0].update(compile_wait_s=round(m.compile_s, 3), timing_s=round(m.time_s, 3), compiled=m.compiled)
      self._phase("finish", t_phase)
      tuned = [todo[i][0] for i in ctxs if todo[i][0]["status"] == "tuned"]
      say(f"{len(todo)} kernel(s) in {time.perf_counter() - st:.1f} s: {len(tuned)} tuned ({_geomean(tuned):.2f}x, geomean)" +
          "".join(f", {n} {s}" for s, n in Counter(_kind(todo[i][0]["status"]) for i in ctxs if todo[i][0]["status"] != "tuned").items()))
    finally:
      self._busy = False
      self.spent_s += time.perf_counter() - st
      for c in ctxs.values(): c.measurer.close()

  def _stop_gain(self) -> float:
    from search.task_scheduler import STOP_GAIN
    return STOP_GAIN if self.stop_gain is None else self.stop_gain

  def _small(self, cost_us:float, whole_us:float) -> bool:
    """A kernel taking cost_us of the program's whole_us whose first round is not expected to save the stop gain's share of it."""
    from search.task_scheduler import FIRST_GAIN
    return cost_us*FIRST_GAIN < self._stop_gain()*whole_us

  def _phase(self, name:str, since:float) -> float:
    self.phases[name] += (now := time.perf_counter()) - since
    return now

  def _finish(self, item:tuple, c, alloc:int, base:int, now_us:float, device:str, table:dict, cache):
    """A kernel's answer into the cache and `table`: its search's fastest verified config, or its default where no round was worth it."""
    from dataset.kernel import opts_to_json
    from search.strategies import finish
    row, a, hit = item
    m, t0 = c.measurer, time.perf_counter()
    if row["status"] is None and alloc > 0:
      o = finish(c, "beam", row["search_s"])
      row.update(timed=o.timed - base, budget=alloc, stopped="converged" if c.state.get("stopped") and c.state.get("max_rounds", 0) > 1 else "budget")
      # what the search could not use: its first batch's configs never timed (stragglers, failures), and why candidates failed
      row["first_untimed"] = [opts_to_json(p) for p in c.first_batch if m.times.get(p, math.inf) == math.inf]
      if m.errors: row["errors"] = dict(Counter(e.split(":")[0][:60] for e in m.errors.values()))
      self.timed += row["timed"]
      row["search_s"] += time.perf_counter() - t0
      if not o.verified: row["status"] = f"failed: {o.check}"
      else:
        row.update(status="tuned", us=m.times[o.opts]*1e6, default_us=o.hand_time_s*1e6)
        top = [p for p in sorted((p for p, t in m.times.items() if t < math.inf), key=m.times.get)][:TOP]
        cache.put(row["key"], device, opts_to_json(o.opts), time_us=row["us"], hand_coded_us=row["default_us"], name=row["kernel"],
                  strategy="dropin", tune_s=round(row["search_s"], 3), timed=row["timed"], compiled=o.compiled, stopped=row["stopped"],
                  kernel_budget=self.budget, top=[opts_to_json(p) for p in top],
                  alternates=m.alternates(o.opts), **({"at": row["at"]} if "at" in row else {}))
        table[row["key"]], self._hand[row["key"]] = o.opts, m.program(m.hand)
    elif row["status"] is None and hit is not None: self.rows.remove(row); self.replayed.add(row["key"])   # a retune with no round: as cached
    elif row["status"] is None:   # no round was worth it (or the pool ran out first): the default, cached so a rerun decides nothing
      small = self._small(row["runs"]*row["default_us"], now_us)
      row.update(status="small" if small else "over budget", us=row["default_us"], stopped="small" if small else "budget")
      cache.put(row["key"], device, opts_to_json(m.hand), time_us=row["default_us"], hand_coded_us=row["default_us"], name=row["kernel"],
                strategy="default", tune_s=round(row["search_s"], 3), timed=0, stopped=row["stopped"], kernel_budget=self.budget)
      table[row["key"]] = m.hand
    if row["key"] in table: m.precompile(table[row["key"]])   # the program's run finds the answer compiled

  def report(self, cache_path) -> dict:
    """The whole run: counts, seconds, and every kernel's row (KERNTUNE_REPORT writes it as JSON)."""
    tuned = [r for r in self.rows if r["status"] == "tuned"]
    return {"tuned": len(tuned), "replayed": len(self.replayed), "left_default": dict(Counter(_kind(r["status"]) for r in self.rows if r["status"] != "tuned")),
            "seen_once": len(self.once),
            "search_s": round(self.spent_s, 3), "phases": {k: round(v, 3) for k, v in self.phases.items()}, "waits": self.waits(),
            "timed": self.timed, "gain": _geomean(tuned), "cache": str(cache_path), "strategy_args": self.strategy_args or {}, "kernels": self.rows}

  def waits(self) -> dict[str, float]:
    """Seconds this process waited on compiles and on timing, over every kernel searched (the rest of the search is its own CPU)."""
    return {k: round(sum(r.get(k, 0.0) for r in self.rows), 3) for k in ("compile_wait_s", "timing_s")}

  def summary(self, cache_path) -> str:
    rep, tuned = self.report(cache_path), [r for r in self.rows if r["status"] == "tuned"]
    left = rep["left_default"]
    ran, later = ("outside TinyJit", "tuned when TinyJit captures them") if self.when == "jit" else ("once", "tuned at a second sight")
    lines = [f"kerntune: {len(tuned)} kernel(s) tuned in {self.spent_s:.1f} s ({rep['gain']:.2f}x over tinygrad's default, geomean), "
             f"{len(self.replayed)} replayed from the cache, {sum(left.values())} left default" +
             (f" ({', '.join(f'{n} {s}' for s, n in left.items())})" if left else "") +
             (f", {len(self.once)} run {ran} on their default ({later})" if self.once else "") + f"; cache {cache_path}",
             "  seconds: " + ", ".join(f"{k.replace('_', ' ')} {v:.1f}" for k, v in self.phases.items()) +
             "; waiting on compiles {compile_wait_s:.1f}, timing {timing_s:.1f}".format(**rep["waits"])]
    saved = lambda r: r["runs"]*(r["default_us"] - r["us"])
    for r in sorted(tuned, key=saved, reverse=True)[:SHOWN]:
      at = "".join(f" at {k}={v}" for k, v in r.get("at", {}).items())
      lines.append(f"  {r['name']}: {r['default_us']:.1f} -> {r['us']:.1f} us ({r['default_us']/r['us']:.2f}x), {r['kernel']}{at} x{r['runs']}, "
                   f"{r['timed']} timed in {r['search_s']:.1f} s, stopped {'on its budget' if r['stopped'] == 'budget' else 'converged'}")
    if len(tuned) > SHOWN: lines.append(f"  ... {len(tuned) - SHOWN} more tuned (KERNTUNE_REPORT=FILE.json writes every kernel)")
    lines += [f"  {r['name']}: " + (f"its tuned config changed the program's outputs: {'its next-fastest' if r['guard'] == 'alternate' else 'left default'}"
              if r.get("guard") else f"{r['status']} (left default)") + f", {r['kernel']}" for r in self.rows if r.get("guard") or r["status"] == "symbolic" or r["status"].startswith("failed")]
    if self.when == "jit" and not self._captured and self.once:
      lines.append("  KERNTUNE_WHEN=jit tunes what TinyJit captures, and this program captured nothing: KERNTUNE_WHEN=first tunes every kernel")
    return "\n".join(lines)

def _kind(status:str) -> str: return "failed" if status.startswith("failed") else status
def _geomean(rows:list[dict]) -> float:
  return math.exp(sum(math.log(r["default_us"]/r["us"]) for r in rows)/len(rows)) if rows else 1.0

def _scheduler(ast:UOp, device:str):
  from dataset.device import renderer_for
  from dataset.kernel import scheduler
  try: return scheduler(ast, renderer_for(device, compiler=False))
  except Exception: return None

def _flag(v:str|None) -> bool: return v not in (None, "", "0")

def from_env() -> Tuner:
  """A Tuner from the environment: KERNTUNE_BUDGET (timed candidates per kernel, pooled), KERNTUNE_KERNEL_S (seconds per kernel),
  KERNTUNE_TOTAL_S and KERNTUNE_TOTAL (seconds and timed candidates for the program), KERNTUNE_RETUNE=1, KERNTUNE_MODEL,
  KERNTUNE_QUIET=1, KERNTUNE_WORKERS (compile processes), KERNTUNE_TIMING (cold, warm, auto),
  KERNTUNE_NEXT_GAIN (a second round's expected gain), KERNTUNE_STOP_GAIN (the share of the program's time a round must be
  expected to save), KERNTUNE_FIRST_SHARE (the share from which a kernel's first batch is full size), KERNTUNE_LATER_SHARE (the
  share of the other tuning seconds later rounds may take, or off), KERNTUNE_WHEN (first, second, jit:
  a kernel tuned at its first sight, its second, or when TinyJit captures it), KERNTUNE_HOLD_SMALL=1 (Tuner.hold_small),
  KERNTUNE_BEAM (the beam's parameters, JSON, as tune-model's --strategy-args), KERNTUNE_GUARD=0 (no Tuner.guard)."""
  from search.task_scheduler import read_later_share
  env = os.environ.get
  return Tuner(budget=int(env("KERNTUNE_BUDGET") or BUDGET), kernel_s=float(env("KERNTUNE_KERNEL_S") or 60),
               total_s=float(env("KERNTUNE_TOTAL_S")) if env("KERNTUNE_TOTAL_S") else None,
               total=int(env("KERNTUNE_TOTAL")) if env("KERNTUNE_TOTAL") else None,
               retune=_flag(env("KERNTUNE_RETUNE")), model=env("KERNTUNE_MODEL"), quiet=_flag(env("KERNTUNE_QUIET")),
               workers=int(env("KERNTUNE_WORKERS")) if env("KERNTUNE_WORKERS") else None, timing=env("KERNTUNE_TIMING") or "cold",
               next_gain=float(env("KERNTUNE_NEXT_GAIN") or NEXT_GAIN),
               stop_gain=float(env("KERNTUNE_STOP_GAIN")) if env("KERNTUNE_STOP_GAIN") else None,
               first_share=float(env("KERNTUNE_FIRST_SHARE")) if env("KERNTUNE_FIRST_SHARE") else None,
               later_share=read_later_share(env("KERNTUNE_LATER_SHARE")) if env("KERNTUNE_LATER_SHARE") else LATER_SHARE, when=env("KERNTUNE_WHEN") or "first",
               hold_small=_flag(env("KERNTUNE_HOLD_SMALL")), strategy_args=_json(env("KERNTUNE_BEAM"), "KERNTUNE_BEAM"),
               guard=env("KERNTUNE_GUARD", "1") != "0")

def _json(v:str|None, var:str) -> dict|None:
  try: d = json.loads(v) if v else None
  except json.JSONDecodeError as e: raise ValueError(f"{var} is not JSON: {e}") from None
  if d is None or isinstance(d, dict): return d
  raise ValueError(f"{var} must be a JSON object, got {v}")

def report_at_exit(tuner:Tuner, cache_path):
  """At exit: the summary on stderr (unless quiet), and with KERNTUNE_REPORT=FILE every kernel's row as JSON there."""
  def say():
    if not (tuner.rows or tuner.replayed or tuner.once): return
    if not tuner.quiet: print(tuner.summary(cache_path), file=sys.stderr, flush=True)
    if path := os.environ.get("KERNTUNE_REPORT"):
      with open(path, "w") as f: json.dump(tuner.report(cache_path), f, indent=1, default=str)
  atexit.register(say)
