"""tune-model's budget scheduler: every kernel of a model tuned under one global budget, shared out round by round by expected gain.

Ansor's task scheduler (search.task_scheduler.schedule, which drop-in tuning shares): kernel i runs n_i times per forward pass and takes t_i, first with tinygrad's hand-coded opts,
then with the best config its search has found. Every kernel's default is measured; then, round after round, the kernel whose next
round is expected to save the most model time, n_i * t_i * g_i, gets it: g_i is FIRST_GAIN before its first round (the batch its
search compiled ahead: every kernel's at once, so the compile pool stays full), NEXT_GAIN before its second, and after that the
mean of the last round's relative gain and the previous expectation (its search goes on from where it stopped: the strategy keeps
its state in the search context). So every kernel that matters gets its first round before any gets a third, a kernel that
stopped improving falls back, and tuning stops once no round is expected to save STOP_GAIN of the model's current time, when the
budget's timed candidates are spent (default PER_KERNEL_DEFAULT per distinct kernel), the next round does not fit in what is left
of a time budget (a limit, final checks included: tune_kernels), or every search has stopped on its own.
Before each round the next AHEAD kernels in the queue get their next round ready (Beam.ahead: children scored in the pool, batch
compiling), so a round starts by timing. Kernels of one loop nest (sibling_picks) then trade their fastest configs: each one's
final check times its siblings' too, on top of the budget (siblings_timed). Measuring the defaults and the final correctness
checks come on top of a budget of timed candidates, not of a time budget.

A static split by the default's shares (the first version) spent most of the budget on kernels that became fast after a few
candidates: on ResNet-50 (H200) the tuned model stayed 1.56x slower than BEAM=2, most of the gap in mid-size kernels
that got nothing; the greedy form that followed (the largest n_i * t_i first, its budget doubled each time) gave later rounds to
kernels already tuned while small kernels that had become 2-4% of the tuned model kept their default (ResNet-50 b1 fp32:
5 such kernels cost ~70 us of 1.43 ms).

Kernels already in the cache are not searched again (retune to search them anyway). Kernels that keep the default are cached with
tinygrad's hand-coded opts (status "default"), so a rerun has nothing left to decide. A kernel whose search fails keeps the default
and is reported with status "failed: ..." (not cached, so a rerun tries it again)."""
from __future__ import annotations
import contextlib, math, random, time
from collections import Counter
from typing import Callable
from dataset.errors import one_line
from dataset.device import renderer_for
from dataset.kernel import Kernel, describe, opts_to_json, scheduler
from dataset.sampler import replay
from dataset.history import History
from search.cache import TunedCache
from search.context import Context
from search.first_batches import Preparing
from search.strategies import finish
from search.measure import Budget, Measurer

from search.task_scheduler import MIN_PER_KERNEL, NEXT_GAIN, PER_KERNEL_DEFAULT, first_effort, pooled, readiness, schedule, scheduled, work_of

def sibling_picks(ctxs:dict[int, Context], searched:list[int]) -> dict[int, list[tuple]]:
  """Per searched kernel, the fastest measured config of each other searched kernel of the same loop nest (full shape and axis
  types) that it has not measured and that applies to it. A nest that occurs more than once in a model (ResNet's repeated blocks
  and their stage's first, CvT's heads) is searched once per kernel, and the searches can end far apart: ResNet-50 b32 fp32 on the
  H200, the 7x7x512 3x3 conv tuned to 758 us in one block and 451 us in the other."""
  nest = lambda i: (tuple(ctxs[i].base.full_shape), tuple(ctxs[i].base.axis_types))
  best = {i: min((o for o, t in ctxs[i].measurer.times.items() if t < math.inf), key=ctxs[i].measurer.times.get, default=None) for i in searched}
  return {i: list(dict.fromkeys(o for j in searched if j != i and nest(j) == nest(i) and (o := best[j]) is not None
                                and o not in ctxs[i].measurer.times and replay(ctxs[i].base, o) is not None)) for i in searched}

def tune_kernels(kernels:list[Kernel], counts:Counter, device:str, cache:TunedCache, strategy:str, budget:int|None,
                 time_budget:float|None, scorer, model_name:str|None, retune:bool, workers:int, seed:int, log:Callable,
                 strategy_args:dict|None=None, next_gain:float=NEXT_GAIN, history:History|None=None, timing:str="cold",
                 first_share:float|None=None, later_share:float|None=None, second_share:float|None=None) -> list[dict]:
  """One row per kernel. Every kernel's default is measured, schedule() shares the budget out, and each searched kernel's answer
  (its fastest config that passes the correctness check) goes to the cache, with tinygrad's default for the rest.

  Setup compiles ahead, for every kernel at once: its default, then (costliest default first) the first batch its search will
  measure (Beam.prepare), so the compile pool stays full instead of waiting on one kernel's batch at a time (as BEAM does). Its
  seconds are shared out evenly over the kernels set up; each kernel's tune_s adds its own search rounds and final check, so the
  sum is the tuning's wall time. With `history`, each kernel's first batch starts from the configs measured fastest on kernels of
  its loop nest (dataset.history); the row's `history` counts those that apply.

  `time_budget` is a limit on all of it, from the first Measurer to the last final check: a round runs only while it leaves time
  for the final checks of every kernel searched by then (each expected to take what measuring its default took), its search
  stops at that (Measurer's time budget: no candidate started, no compile waited for past it), no round starts unless the last
  round's duration fits in what is left, and siblings' configs are traded only in what is left after the rounds. `timing`: how
  candidates are timed (Measurer.timing); each row's `warm` says how its were. `first_share`: a kernel under this share of the
  model's default time gets a first batch and a model descent in proportion (task_scheduler.first_effort; None: full for all).
  `later_share`: the kernels' later rounds take at most this share of the tuning's other seconds (task_scheduler.schedule; None:
  no such limit). `second_share`: task_scheduler.schedule's (None: off)."""
  ren = renderer_for(device)
  rows = [{"index": i, "key": k.key, "name": k.name, "kernel": describe(scheduler(k.ast, ren)), "occurrences": counts[k.key], "share": None,
           "default_us": None, "hand_coded_us": None, "tuned_us": None, "budget": 0, "timed": 0, "compiled": 0,
           "search_s": 0.0, "tune_s": None, "siblings_timed": 0, "from_sibling": False, "history": 0, "warm": None, "status": None}
          for i, k in enumerate(kernels)]
  strat = scheduled(strategy, strategy_args)
  ctxs: dict[int, Context] = {}
  check_s: dict[int, float] = {}   # what a kernel's final check is expected to take: measuring its default took as long
  st = time.perf_counter()
  end = st + time_budget if time_budget else math.inf
  for i, (r, k) in enumerate(zip(rows, kernels)):
    if (hit := cache.get(k.key, device)) is not None and not retune and not cache.stale(k.ast, device):
      r.update(status="cached", default_us=hit.get("hand_coded_us"), hand_coded_us=hit.get("hand_coded_us"), tuned_us=hit.get("time_us"),
               tune_s=hit.get("tune_s"), timed=hit.get("timed", 0), compiled=hit.get("compiled", 0))
      if r["default_us"] is not None: continue
    try:   # not cached, or cached without its default time (the search CLI's entries): measure it
      m = Measurer(k, device, Budget(), workers=workers, timing=timing)
      r["warm"] = m.warm
      ctxs[i] = Context(scheduler(k.ast, ren), m, scorer, random.Random(seed))
      if history is not None: ctxs[i].history = history.candidates(ctxs[i].base, k.key); r["history"] = len(ctxs[i].history)
    except Exception as e:
      r["status"] = f"failed: default not measurable ({one_line(e, 300)})"
      if i in ctxs: ctxs.pop(i).measurer.close()
  # the first batches (the beam's model descents in the compile pool, then compiling there too), costliest kernel first: the
  # scheduler times the costliest kernels' first rounds first, and their batches must not compile behind the small kernels' (ResNet-50
  # b1 fp16 in schedule order: the 25%-share kernel, the last one, waited 9 s for its first batch). The rounds start as soon as one
  # is ready, while the other kernels' descents go on in the pool (first_batches.Preparing). The descents start now, while the
  # defaults are timed here (EfficientNet-B0's 57 took 5.6 s on an H100, the pool's workers idle once they had compiled them), a
  # window of them at a time, the next by its measured default once timed and a roofline guess before (first_batches.guess_us);
  # with first_share a kernel's descent goes by its share, so they start after the defaults
  todo, firsts, sizes = [], [], {}
  def admit(ready:list):   # first batches that are ready: their sizes are their kernels' first rounds
    for p, batch in ready:
      i = ids[p]
      if isinstance(batch, Exception): batch, rows[i]["status"] = [], f"failed: search setup ({one_line(batch, 300)})"
      sizes[i] = len(set(batch) - {ctxs[i].measurer.hand}) or MIN_PER_KERNEL
      if i in todo: firsts[todo.index(i)] = sizes[i]
  ids = list(ctxs) if first_share is None and workers > 1 else []
  prep = Preparing(strat, [ctxs[i] for i in ids], lambda p: (rows[ids[p]]["occurrences"], rows[ids[p]]["default_us"]), workers) if ids else None
  marks = [time.perf_counter()]   # setup's phases: Measurers started (pool, buffers, reference and hand-coded compiling), defaults timed, descents
  for i in list(ctxs):   # the defaults (their compiles started with the Measurers): the search setup goes by their shares
    try:
      m, t0 = ctxs[i].measurer, time.perf_counter()   # its hand-coded config has compiled since the Measurer started
      rows[i]["default_us"] = m.measure([m.hand])[0]*1e6
      check_s[i] = time.perf_counter() - t0
      if rows[i]["default_us"] == math.inf: raise RuntimeError(m.errors.get(m.hand, "it does not run"))
    except Exception as e: rows[i]["status"] = f"failed: default not measurable ({one_line(e, 300)})"
    if prep is not None: admit(prep.poll())
  marks.append(time.perf_counter())
  weights = [r["default_us"]*r["occurrences"] if r["default_us"] not in (None, math.inf) else 0.0 for r in rows]
  for r, w in zip(rows, weights): r["share"] = w/sum(weights) if sum(weights) > 0 else None
  todo += [i for i, r in enumerate(rows) if r["status"] is None and i in ctxs]
  firsts += [sizes.get(i, MIN_PER_KERNEL) for i in todo]
  for i in todo:
    ctxs[i].seed_picks, ctxs[i].descent_width = first_effort(strat, rows[i]["share"], first_share)
    if ctxs[i].seed_picks is not None: rows[i].update(first_picks=ctxs[i].seed_picks, descent_width=ctxs[i].descent_width)
  searchable = sorted(todo, key=lambda i: -weights[i]) if time.perf_counter() < end else []
  if prep is None: ids, prep = searchable, Preparing(strat, [ctxs[i] for i in searchable])
  elif not searchable: prep.close()
  spot = {i: p for p, i in enumerate(ids)}
  admit(prep.wait())
  marks.append(time.perf_counter())
  if history is not None and ctxs:
    log(f"  history: {sum(rows[i]['history'] > 0 for i in ctxs)} of {len(ctxs)} kernels have configs measured on their loop nest")
  if ctxs: log(f"  setup of {len(ctxs)} kernels: {marks[0] - st:.1f} s starting their measurers, {marks[1] - marks[0]:.1f} s timing their "
               f"defaults, {marks[2] - marks[1]:.1f} s until the first of {len(searchable)} model descents was done")
  for i in ctxs: rows[i]["tune_s"] = (time.perf_counter() - st)/len(ctxs)
  for i in set(ctxs) - set(todo): ctxs.pop(i).measurer.close()   # cached, or its default failed: nothing to search
  n = budget if budget is not None else (None if time_budget else pooled(PER_KERNEL_DEFAULT, strat, [ctxs[i] for i in todo]))

  k_name = lambda i: f"{kernels[i].name} {rows[i]['kernel']}"
  base = {i: ctxs[i].measurer.timed for i in todo}   # the default's timing counts in m.timed, not in the search budget
  searched: set[int] = set()
  checks = lambda ks: sum(check_s[i]*(1 + len(ctxs[i].final_picks)) for i in ks)   # the final checks' seconds (pure-model's picks too)
  def left(j:int) -> float:   # seconds kernel todo[j]'s next round may take: the final checks (its own too) come out of the budget
    return end - time.perf_counter() - checks(searched | {todo[j]})
  def search(j:int, b:int) -> tuple[int, float, bool]:
    i = todo[j]
    c, m, r = ctxs[i], ctxs[i].measurer, rows[i]
    if not c.state.get("stopped") and r["status"] is None:
      st = time.perf_counter()
      c.round_size = b - (m.timed - base[i])   # this round's candidates: one batch, not several rounds of the strategy's own size
      m.budget.measurements = base[i] + b
      if time_budget: m.budget.seconds = m.elapsed + left(j)
      searched.add(i)
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
  # (no `again`: every kernel guesses its next round, as before; told which kernels the budget pays later rounds for, ViT-B took
  # 18.9-21.0 s against 14.3-16.3 s in three side-by-side calls on 4 x H100, its norms' rounds each waiting a compile latency)
  alloc = schedule([rows[i]["occurrences"] for i in todo], [rows[i]["default_us"] for i in todo], search, n, left if time_budget else None,
                   firsts, ahead, slots=workers, next_gain=next_gain, work=[work_of(ctxs[i].base) for i in todo],
                   pending=lambda j: (admit(prep.poll()), spot.get(todo[j]) in prep.left)[1], wait=lambda: admit(prep.wait()),
                   later_share=later_share, since=st, ready=readiness(strat, [ctxs[i] for i in todo]), second_share=second_share)
  prep.close()
  # each kernel's final check also times its siblings' fastest configs (all compiling at once, now); the answer may be one of them
  sib = sibling_picks(ctxs, final := [i for j, i in enumerate(todo) if alloc[j] > 0 and rows[i]["status"] is None])
  spare = end - time.perf_counter() - checks(final)
  for i, ps in sib.items():
    if spare < math.inf: ps = sib[i] = ps[:max(0, min(len(ps), int(spare // max(check_s[i], 1e-6))))]   # what fits of a time budget
    spare -= len(ps)*check_s[i]
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
    r["phases"]["reference_s"] = m.reference_s   # within the phases above (a wait on compiles, or the final check)
    # what each round bought: (timed so far, seconds since its measurer started, best us so far) per timed candidate
    r["rounds"], r["trajectory"] = c.state.get("rounds"), [(n, s, round(b*1e6, 3)) for n, s, b in m.trajectory]
    r["tune_s"] += r["search_s"] + time.perf_counter() - st   # measuring its default, searching, and the final check
    r.update(timed=o.timed - base[i], compiled=o.compiled, search_s=round(o.search_s, 3), hand_coded_us=o.hand_time_s*1e6)
    if not o.verified:
      r.update(status=f"failed: {o.check}", tuned_us=r["default_us"])
      log(f"  {k_name(i)}: nothing verified, keeps the default: {o.check}"); continue
    r.update(status="tuned", tuned_us=o.time_s*1e6, opts=opts_to_json(o.opts), siblings_timed=len(sib.get(i, [])), from_sibling=o.opts in sib.get(i, []))
    cache.put(k.key, device, opts_to_json(o.opts), time_us=o.time_s*1e6, hand_coded_us=o.hand_time_s*1e6, name=k.name,
              strategy=strategy, model=model_name, tune_s=r["tune_s"], timed=r["timed"], compiled=o.compiled,
              alternates=m.alternates(o.opts))   # unverified: what search.guard tries before the default where the answer breaks the model
    log(f"  {k_name(i)} x{r['occurrences']} ({r['share']:.1%}): {r['hand_coded_us']:.1f} -> {r['tuned_us']:.1f} us, "
        f"budget {alloc[j]}, {r['timed']} timed{' (a sibling kernel config)' if r['from_sibling'] else ''}, {r['tune_s']:.1f} s (" + ", ".join(f"{ph[:-2]} {v:.1f}" for ph, v in r["phases"].items()) + ")")
  return rows
