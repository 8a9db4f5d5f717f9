"""Ansor's task scheduler: a budget of timed candidates shared out over a model's kernels, round by round, by expected gain (what
tune-model (search.schedule) and drop-in tuning (search.dropin) share). Kernel i runs n_i times per pass and takes t_i, first with
tinygrad's hand-coded opts, then with the best config its search has found; the kernel whose next round is expected to save the most
model time, n_i * t_i * g_i, gets it. g_i is FIRST_GAIN before its first round, NEXT_GAIN before its second, then the mean of the
last round's relative gain and the expectation before it. Kernels whose rounds are not expected to save STOP_GAIN of the model's
time get none: small kernels keep their default."""
from __future__ import annotations
import math, time
from typing import Callable
from search.strategies import AHEAD, STRATEGIES

SCHEDULED = {"adaptive": False, "patience": 1 << 30}   # a beam under this scheduler: its own stopping rules off (the rounds are ours)
MIN_PER_KERNEL = 3        # timed candidates of a kernel's first round, for a strategy with no batch compiled ahead (MCTS)
ROUND = 6                 # timed candidates of a later round (Beam.k, MCTS.batch)
PER_KERNEL_DEFAULT = 10   # --budget default: this many per distinct kernel (beam's first batch is 8: the rest goes where it pays)
# expected relative gain of a kernel's first round over tinygrad's hand-coded config (the H200 search bench: learned
# beam 3.19x hand-coded in geomean, ~0.7; kept below what was seen, so a kernel must matter), and of its second round: the mean of
# what second rounds found, 1.4% over 22 kernels (the search bench: nothing faster on 13 of 18 kernels, 0.1-2.7% on 4, 11% on
# one; ResNet-50 b1 fp32 in tune-model: 14.6% on one of 4, for 9.3 s of its 34.3 s, and nothing on 3, for 4.9 s). At 0.05 later
# rounds took ~40% of that model's tuning time.
FIRST_GAIN, NEXT_GAIN = 0.5, 0.015
STOP_GAIN = 0.003         # a round must be expected to save this share of the model's current time
# Ansor's forward look: a kernel running at a fraction of the throughput its model's similar kernels reach (work per second: FLOPs
# of tensor-core-shaped reductions, bytes of the rest) has room that a second round's 1.5% does not see. A Llama block's fused
# gate/up GEMM stopped at 1.6x BEAM=2's time, 13 TFLOP/s beside the block's down projection at 50. ROOM_GAIN of that room is
# expected of its next round, halved by each round that finds nothing, so a kernel that cannot close the gap falls back. No kernel
# runs faster than the fastest of its model's kernels (the launch and, timed cold, the refill of L2: 15-22 us on an H100), so its room
# is what lies between that floor, or its class's best throughput where that is slower, and its own time: without the floor, a
# 21-us norm of ViT-B (its floor 17.2 us) was seen with a room of ~0.9 and got four rounds that found 5%, and MobileNetV2's and
# EfficientNet-B0's convs at 18.0-24.4 us (floors 18.0 and 17.4 us) two to four. With the floor, two side-by-side calls on the
# unseen networks tuned in 107.7 and 106.5 s summed against 112.1 and 122.4; it costs MobileNetV2's small convs the 5-20% their
# later rounds had found, +1-8% on its kernels summed (results/networks_floor_room_ab.md)
ROOM_GAIN = 0.1
# later rounds against their seconds (schedule's later_share; tune-model --later-share, drop-in KERNTUNE_LATER_SHARE; "off": no
# limit): the rounds after a kernel's first may take at most this share of the rest of the tuning's seconds. They cost a compile
# latency each and are taken by expected gain alone: on one H200 ResNet-50 b1 fp32's spent 7-17 s of its 29-42 s for 0.4-4.1% of
# its tuned time (CHANGELOG 2026-11-30). At 0.25, in two calls each way round on one H200 (chosen on these, so they are tuned to):
# ResNet-50 b1 and GPT-2 tuned in 15% and 7% fewer seconds, GPT-2 under a tenth of BEAM=2's (9.4-9.8% against 10.2-10.4%), ViT-Ti
# drop-in at 7.2-9.2% of BEAM=2's search against 9.2-12.4%, latencies within the runs' spread (results/later_share_h200.md)
LATER_SHARE = 0.25
# a kernel's first batch and model descent in proportion to its share of the model's default time, full from this share up
# (first_effort; tune-model --first-share, drop-in KERNTUNE_FIRST_SHARE, both off by default). Every kernel's descent runs in the
# compile pool before its first batch compiles, and EfficientNet-B0's tuning (57 kernels, 45 under 1% of its time each) spent 21
# of its 39 s waiting on that pool. Measured on the six unseen networks beside the default (results/first_share_ab.md), with the
# pooled budget shrinking with the smaller batches (pooled): it saves time on every network (EfficientNet 45 -> 20 s) but 3-4 picks
# and a width-1 descent leave a CNN's 1-4% pointwise and depthwise convs 20-50% slower, and together they are most of its time
# (MobileNetV2 0.95x -> 1.04x BEAM=2's latency, EfficientNet 0.98x -> 1.02x): off.
FIRST_SHARE = 0.05
# a kernel of at least this share of the model's current time gets a second round before any kernel gets a third (schedule's
# second_share; tune-model --second-share; None: off, each round by expected gain alone). A second round's expected gain is the
# mean over kernels (NEXT_GAIN), so below a fifth of the model no kernel's is worth one, and a Llama block's fused gate/up GEMM
# took every later round: its down projection (10-15% of the block, 1.33-1.38x BEAM=2's kernel, its pick two steps from BEAM=2's)
# kept its first batch in every call. At 0.05 on one H200 the block came to 1.05x BEAM=2's latency in three runs (1.09-1.10x without),
# and the other five unseen networks tuned longer than in any call without it, four over 10% of BEAM=2's seconds: off
# (results/llama_block_h200.md)
SECOND_SHARE = None

def strategy_params(strategy:str, strategy_args:dict|None) -> dict:
  """The strategy's parameters: the beam's own stopping rules (Beam.adaptive, and patience: a round without a faster time ended
  the search, so a Llama block's 58%-share GEMM got two rounds at 1.6x BEAM=2) stay off here, where the budget scheduler decides
  each kernel's rounds by their expected gain."""
  return {**(SCHEDULED if strategy in ("beam", "pure-model") else {}), **(strategy_args or {})}

def scheduled(strategy:str, strategy_args:dict|None):
  """The strategy under this scheduler (strategy_params); a parameter it does not take is a ValueError naming it, before any work."""
  try: return STRATEGIES[strategy](**strategy_params(strategy, strategy_args))
  except TypeError as e: raise ValueError(f"bad parameters {strategy_args} for {strategy}: {e}") from None

def readiness(strat, ctxs:list) -> Callable[[int], bool]|None:
  """schedule()'s `ready` over these contexts (in schedule's order), where the strategy asks for it (Beam.ready_first)."""
  return (lambda j: strat.ready(ctxs[j])) if getattr(strat, "ready_first", False) else None

def read_later_share(s:str) -> float|None:
  """A later_share setting as given on a command line or in the environment: a share, or off (None: no limit)."""
  return None if s.strip().lower() == "off" else float(s)

def bad_later_share(later_share:float|None) -> str|None:
  """What is wrong with a later_share setting (schedule's), or None: checked where it is read, before any tuning."""
  return None if later_share is None or later_share >= 0 else f"{later_share}: a share of seconds is 0 or more"

def first_effort(strat, share:float|None, first_share:float|None) -> tuple[int|None, int|None]:
  """(model picks in a kernel's first batch, its model descent's width) for a kernel of `share` of the model's time: the beam's own
  from `first_share` up, and below it in proportion (at least MIN_PER_KERNEL picks, a width of 1); (None, None), the beam's own
  too, where either is not set."""
  if not first_share or share is None or not hasattr(strat, "descent_width"): return None, None
  picks = max(MIN_PER_KERNEL, min(strat.seed_picks, round(strat.seed_picks*share/first_share)))
  return picks, max(1, strat.descent_width*picks//strat.seed_picks)

def pooled(per_kernel:int, strat, ctxs:list) -> int:
  """The pooled budget of timed candidates: per_kernel for each kernel, less what first_effort took off its first batch. The
  candidates a small kernel's smaller batch saves are saved, not handed to other kernels' later rounds."""
  full = getattr(strat, "seed_picks", 0)
  return sum(per_kernel if c.seed_picks is None else max(per_kernel - (full - c.seed_picks), min(per_kernel, c.seed_picks)) for c in ctxs)

def work_of(base) -> tuple[str, float]:
  """A kernel's class and work for schedule()'s forward look: a tensor-core-shaped reduction of high arithmetic intensity is
  compute work (its FLOPs, by dtype), the rest memory work (its bytes)."""
  from models.features import kernel_stats
  k = kernel_stats(base)
  return (f"tc{k.itemsize_max}", k.flops) if k.tc_eligible and k.flops >= 16*k.bytes else ("mem", k.bytes)

def schedule(runs:list[int], times:list[float], search:Callable[[int, int], tuple[int, float, bool]], total:int|None,
             left:Callable[[int], float]|None=None, first:int|list[int]=MIN_PER_KERNEL, ahead:Callable[[list[int], int], None]|None=None,
             step:int=ROUND, stop:float=STOP_GAIN, slots:int=0, next_gain:float=NEXT_GAIN, rest:float=0.0,
             work:list[tuple[str, float]]|None=None, pending:Callable[[int], bool]|None=None,
             wait:Callable[[], None]|None=None, again:Callable[[int, bool], None]|None=None, later_share:float|None=None,
             since:float|None=None, clock:Callable[[], float]=time.perf_counter, ready:Callable[[int], bool]|None=None,
             second_share:float|None=SECOND_SHARE) -> list[int]:
  """Ansor's task scheduler by expected gain: give the kernel whose next round is expected to save the most model time (runs x best
  time so far x expected relative gain: FIRST_GAIN, then next_gain, then the mean of the last round's gain and the expectation
  before it) another round, `first` timed candidates the first time (one number, or one per kernel: the batch its search has
  compiled ahead) and `step` after, until no round is expected to save `stop` of the model's current time, `total` timed
  candidates are spent, no time is left, or every kernel's search has stopped on its own. With `slots` compile workers, a later round
  takes at least its share of them: a round costs one compile latency however many it compiles, and once only a kernel or two are
  still worth rounds (GPT-2's largest GEMM on the H200: 4 rounds of 6 for 8.7 s of its 16.5 s) rounds of 6 left most
  workers idle. `rest`: the time of the model's kernels not scheduled here (drop-in tuning's kernels already cached), in the units
  of `times`: a kernel's share counts against them too.
  search(i, budget) searches kernel i on to `budget` timed candidates in all and returns (timed so far, best time, stopped).
  left(i), with a time budget, is the seconds kernel i's next round may take: no round starts unless the last one's duration fits.
  ahead(order, size), if given, is told the AHEAD kernels it will search next, in order, and the size of their next rounds,
  before each round: their next rounds can compile while this one is timed. work, if given: per kernel, its class and its work
  (e.g. ("tc", FLOPs) or ("mem", bytes)); after its first round a kernel is also expected to gain ROOM_GAIN x its room (1 - the
  time at its class's best throughput, or the model's fastest kernel's time if longer, over its own), halved per fruitless round.
  pending(i), if given: kernel i's first batch is not ready yet (its model descent still runs in the pool); the round goes to the
  ready kernel expected to save the most, and wait() blocks until another is ready where none worth a round is (`first`, a list,
  is the caller's to fill as batches come). again(i, likely),
  if given, is told before each round whether kernel i is expected to get another after it: the budget left once this round and
  the first rounds still due are spent pays for later rounds of `size`, and i's next is among the ones expected to save most
  (the search compiles its guess of that round meanwhile only then), and ahead() is told only of kernels whose rounds that budget
  pays for. later_share: a kernel's later round is taken only while the later rounds' seconds, this one's expected (its last later
  round's, or the mean later round's before its first) included, stay within this share of the tuning's other seconds, counted from
  `since` (a clock() time; default: now). second_share: while a kernel of at least this share of the model's current time has had
  one round only, it is worth its second (whatever its expected gain) and no kernel gets a third. ready(j), if given
  (Beam.ready_first): kernel j's next round would start by timing; where the chosen kernel's would wait on compiles, one of the
  next AHEAD worth a round whose round is compiled goes first.
  Returns the budget each kernel was given."""
  n, last = len(runs), 0.0
  firsts = first if isinstance(first, list) else [first]*n
  alloc, used, rounds, best, gain = [0]*n, [0]*n, [0]*n, list(times), [FIRST_GAIN]*n
  stopped = [not (t < math.inf) for t in times]
  fruitless = [0]*n
  # when the tuning's seconds start; each kernel's last round's seconds; the later rounds' seconds and count
  t0, dur, spent_later, n_later = clock() if since is None else since, [0.0]*n, 0.0, 0
  # a kernel's first later round is expected to take what later rounds took so far, not its first round's seconds: those include the
  # wait for its first batch's compiles, queued behind every kernel's first batch (the CNN training step's largest conv waited 6.1-6.8 s
  # on 10 compiles in its first round, 3.1 s on 30 in its next three), and the cap kept that kernel from any later round
  expect = lambda j: dur[j] if rounds[j] > 1 else spent_later/n_later if n_later else 0.0
  fits = lambda j: rounds[j] == 0 or later_share is None or spent_later + expect(j) <= later_share*(clock() - t0 - spent_later)
  def room(i:int) -> float:   # 1 - what kernel i could take (its class's best throughput, the model's fastest kernel) over its time
    if work is None or work[i][1] <= 0: return 0.0
    top = max(work[j][1]/best[j] for j in range(n) if work[j][0] == work[i][0] and 0 < best[j] < math.inf)
    floor = min(b for b in best if 0 < b < math.inf)
    return max(0.0, 1.0 - max(work[i][1]/top, floor)/best[i])
  gained = lambda i: runs[i]*best[i]*(gain[i] if rounds[i] == 0 else max(gain[i], ROOM_GAIN*room(i)*0.5**fruitless[i]))
  model = lambda: rest + sum(r*b for r, b in zip(runs, best) if b < math.inf)
  # second_share: a kernel due its second round is worth it (just), and while one is, none takes a third
  due2 = lambda i: second_share is not None and rounds[i] == 1 and runs[i]*best[i] >= second_share*model()
  saves = lambda i: max(gained(i), stop*model()) if due2(i) else gained(i)
  while total is None or sum(used) < total:
    if not (cand := sorted((i for i in range(n) if not stopped[i] and fits(i)), key=lambda i: -saves(i))): break
    if any(due2(j) for j in cand): cand = [j for j in cand if rounds[j] < 2]
    i, model_time = cand[0], model()
    if saves(i) < stop*model_time: break
    if pending is not None and pending(i):
      if not (avail := [j for j in cand if not pending(j) and saves(j) >= stop*model_time]): wait(); continue
      i = avail[0]
    if ready is not None and not ready(i):
      i = next((j for j in cand[1:1 + AHEAD] if saves(j) >= stop*model_time and (pending is None or not pending(j)) and ready(j)), i)
    if left is not None and left(i) <= last: break
    st, worth = clock(), stop*model_time
    live = sum(saves(j) >= worth for j in cand)   # kernels still worth a round: up to 1+AHEAD of them compile at once
    size = max(step, slots//min(live, 1 + AHEAD))
    more = max(1, firsts[i]) if rounds[i] == 0 else size
    ready_next = AHEAD   # kernels whose next rounds are made ready (this one's first)
    if again is not None:
      # later rounds the budget pays for once this round and the first rounds still due are spent: compiles started ahead for a
      # round that never comes are lost (GPT-2's drop-in compiled 633 candidates and timed 329)
      fit = math.inf if total is None else max(0, total - sum(used) - more -
                                               sum(max(1, firsts[j]) for j in cand if j != i and rounds[j] == 0 and saves(j) >= worth))//size
      nxt = lambda j: runs[j]*best[j]*next_gain if rounds[j] == 0 else saves(j)   # what j's next later round is expected to save
      again(i, fit >= 1 and nxt(i) >= worth and sum(j != i and nxt(j) > nxt(i) and nxt(j) >= worth for j in cand) < fit)
      ready_next = 1 + min(AHEAD - 1, fit)
    if ahead is not None: ahead([j for j in cand if pending is None or not pending(j)][:ready_next], size)
    alloc[i] += more if total is None else min(more, total - sum(used))
    before, had, rounds[i] = best[i], used[i], rounds[i] + 1
    used[i], t, stopped[i] = search(i, alloc[i])
    last = dur[i] = clock() - st   # the round with its ahead(): what the next must fit in
    if rounds[i] > 1: spent_later, n_later = spent_later + last, n_later + 1
    best[i] = min(best[i], t)
    fruitless[i] = 0 if best[i] < before else fruitless[i] + 1
    gain[i] = next_gain if rounds[i] == 1 else ((before - best[i])/before + gain[i])/2
    # a round that timed nothing has nothing left to try; one that timed less than asked has not stopped (a straggling compile is
    # timed next round: the 58%-share kernel of a Llama block was dropped after 13 of 14, at 1.6x BEAM=2's time)
    stopped[i] = stopped[i] or used[i] == had
  return alloc
