"""Opt-sequence proposals over tinygrad 0.14's action space. Actions are drawn lazily, one valid child at a time, rather than
enumerating every child with get_kernel_actions (0.03-0.2 s a call): a proposal costs a few apply_opt calls."""
from __future__ import annotations
import random
from typing import Callable
import numpy as np
from tinygrad.codegen.opt import Opt, OptOps, KernelOptError
from tinygrad.codegen.opt.postrange import Scheduler
from tinygrad.codegen.opt.search import actions as TG_ACTIONS
from tinygrad.codegen.opt.heuristic import hand_coded_optimizations
from tinygrad.uop.ops import AxisType
from tinygrad.helpers import prod

ACTIONS: list[Opt] = list(TG_ACTIONS)
TC_ACTIONS: list[Opt] = [a for a in ACTIONS if a.op is OptOps.TC]
# Beyond BEAM's default space: PADTO (BEAM_PADTO's 32, and 16) lets a dim with no small factors (197, 49, 3000) take LOCAL, UPCAST
# and tensor cores, padded and masked; each of the renderer's tensor-core shapes by index (BEAM only takes the first that fits: on
# sm_90, m16n8k16 before m16n8k8). search --actions extended
EXTENDED: list[Opt] = ACTIONS + [a for a in [Opt(OptOps.PADTO, ax, amt) for amt in (16, 32) for ax in range(7)] +
                                 [Opt(OptOps.TC, ax, (sel, 2, 1)) for sel in range(6) for ax in range(9)] if a not in ACTIONS]
ACTION_SETS: dict[str, list[Opt]] = {"default": ACTIONS, "extended": EXTENDED}
MAX_UPCAST, MAX_LOCAL = 256, 1024   # get_kernel_actions' BEAM_UPCAST_MAX / BEAM_LOCAL_MAX defaults

def _sizes(k:Scheduler) -> tuple[int, int, int]:
  """(upcast and unroll product, local product, a tensor core's own upcast): what the size limits count."""
  tc = getattr(k, "tensor_core", None)
  return (prod(s for s, t in zip(k.full_shape, k.axis_types) if t in (AxisType.UPCAST, AxisType.UNROLL)),
          prod(s for s, t in zip(k.full_shape, k.axis_types) if t in (AxisType.WARP, AxisType.LOCAL, AxisType.GROUP_REDUCE)),
          prod(tc.dims)//tc.threads if tc is not None else 1)

def within_limits(k:Scheduler) -> bool:
  """The size limits get_kernel_actions puts on BEAM's children."""
  up, lcl, tc_up = _sizes(k)
  return up//tc_up <= MAX_UPCAST and lcl <= MAX_LOCAL

_UPS, _LOCALS = (OptOps.UPCAST, OptOps.UNROLL), (OptOps.LOCAL, OptOps.GROUP, OptOps.GROUPTOP)
_SPLITS = _UPS + _LOCALS
def _cannot(k:Scheduler, a:Opt, sizes:tuple[int, int, int]) -> bool:
  """Whether try_apply(k, a) is None for sure, known without applying it (a copy and tinygrad's checks, ~20 us): THREAD needs a
  renderer with threads; a split by a set amount needs an axis to split that the amount divides (tinygrad's last check, so any
  other failing check fails it too), and adds an axis of that size to the products the size limits count (the axis it splits is of
  another type). Most of a parent's ~190 actions fail, and an upcast past the limits cost a whole split (~0.3 ms) before it was
  refused."""
  if a.op is OptOps.THREAD: return not k.ren.has_threads
  if a.op not in _SPLITS or not isinstance(a.arg, int) or a.arg <= 0: return False
  try: size = k.full_shape[k.real_axis(a.op, a.axis)]
  except (KernelOptError, IndexError): return True
  if isinstance(size, int) and size % a.arg: return True
  up, lcl, tc_up = sizes
  return (a.op in _UPS and up*a.arg//tc_up > MAX_UPCAST) or (a.op in _LOCALS and lcl*a.arg > MAX_LOCAL)

def _range_id(k:Scheduler, opt:Opt) -> int|None:
  try: return k.rngs[k.real_axis(opt.op, opt.axis)].arg[0]
  except (KernelOptError, IndexError): return None

def _pads_a_grouped_reduce(k:Scheduler, opt:Opt) -> bool:
  """PADTO of a reduce axis in a kernel with a grouped (shared-memory) reduce, or GROUP/GROUPTOP of a padded range."""
  if opt.op in (OptOps.GROUP, OptOps.GROUPTOP): return bool(getattr(k, "padded", None)) and _range_id(k, opt) in k.padded
  if opt.op is not OptOps.PADTO: return False
  try: t = k.axis_types[k.real_axis(opt.op, opt.axis)]
  except (KernelOptError, IndexError): return False
  return t is AxisType.GROUP_REDUCE or (t is AxisType.REDUCE and AxisType.GROUP_REDUCE in k.axis_types)

def try_apply(k:Scheduler, opt:Opt, limits:bool=True) -> Scheduler|None:
  # tinygrad 0.14 refuses to pad an upcast or unrolled axis ("cannot pad upcasted") but not the reverse: a reduce axis PADTO'd and
  # then unrolled computes wrong, leaves outputs unwritten or fails to lower (every failure of the fuzzer, search.fuzz, on the CPU:
  # results/fuzz_cpu.md). A padded reduce that is also grouped (GROUP/GROUPTOP, either order) computes wrong or leaves outputs
  # unwritten on CUDA (all 4 distinct failures of the GPU fuzzer: results/fuzz.md). Such configs are no children. (A padded output
  # axis upcast after is correct: tests/test_actions.py.)
  if opt.op is OptOps.UNROLL and getattr(k, "padded", None) and _range_id(k, opt) in k.padded: return None
  if _pads_a_grouped_reduce(k, opt): return None
  k2 = k.copy()
  try: k2.apply_opt(opt)
  except (KernelOptError, AssertionError, IndexError, ValueError, ZeroDivisionError): return None
  if opt.op is OptOps.PADTO: k2.padded = getattr(k, "padded", frozenset()) | {_range_id(k, opt)}
  return k2 if not limits or within_limits(k2) else None

def replay(base:Scheduler, opts, limits:bool=False) -> Scheduler|None:
  """`opts` applied to `base`, or None if one does not apply. Size limits are for proposals only: tinygrad's hand-coded
  choice itself can exceed them."""
  k = base
  for o in opts:
    if (k := try_apply(k, o, limits)) is None: return None
  return k

def children(k:Scheduler, actions:list[Opt]=ACTIONS) -> list[tuple[Opt, Scheduler]]:
  """Every valid child of `k` under BEAM's size limits, one per distinct resulting kernel (different actions often give the same
  scheduled AST: UPCAST of the whole axis by its size and by 0, say)."""
  out, seen, sizes = [], {k.ast.key}, _sizes(k)
  for a in actions:
    if not _cannot(k, a, sizes) and (k2 := try_apply(k, a)) is not None and k2.ast.key not in seen:
      seen.add(k2.ast.key)
      out.append((a, k2))
  return out

def unmeasured_children(base:Scheduler, parent:tuple[Opt, ...], avoid:frozenset=frozenset()) -> list[tuple[Opt, Scheduler]]:
  """(action, Scheduler) of every child of `parent` whose opts are not in `avoid` (none if `parent` does not replay)."""
  if (k := replay(base, parent)) is None: return []
  return [(a, c) for a, c in children(k) if parent + (a,) not in avoid]

def neighbors(base:Scheduler, opts:tuple[Opt, ...], actions:list[Opt]=ACTIONS, positions:range|None=None) -> list[tuple[tuple[Opt, ...], Scheduler]]:
  """The configs one step from `opts` sideways rather than deeper: one of its opts (at `positions`, default all) with another amount
  (the same op on the same axis: UPCAST 4 -> 2, LOCAL 16 -> 8) or left out, the rest replayed after it. One per distinct kernel
  within the size limits, `opts`'s own kernel excluded; none if `opts` does not replay. Where a cost model misranks a shape it
  has not seen, it is mostly by an amount: the faster config BEAM=2 found is often such a neighbour of the learned answer."""
  prefix = [base]
  for o in opts:
    if (k := try_apply(prefix[-1], o, limits=False)) is None: return []
    prefix.append(k)
  out, seen = [], {prefix[-1].ast.key}
  for i in (positions if positions is not None else range(len(opts))):
    o = opts[i]
    for a in [None] + [a for a in actions if a.op is o.op and a.axis == o.axis and a.arg != o.arg]:
      k = prefix[i] if a is None else try_apply(prefix[i], a, limits=False)
      for s in opts[i+1:]:
        if k is None: break
        k = try_apply(k, s, limits=False)
      if k is None or k.ast.key in seen or not within_limits(k): continue
      seen.add(k.ast.key)
      out.append((opts[:i] + ((a,) if a is not None else ()) + opts[i+1:], k))
  return out

def model_children(base:Scheduler, parent:tuple[Opt, ...], score:Callable[[list[Scheduler]], np.ndarray],
                   avoid:frozenset=frozenset()) -> list[tuple[Opt, ...]]:
  """The children of `parent` not in `avoid`, the cost model's favourite first (active learning, as Ansor's measure loop: what the
  model ranks first is measured, so its mistakes, such as the one-step-too-far upcasts it likes, become training data; and from the
  best measured configs the measurements climb towards BEAM's region, which random walks of a few steps rarely reach)."""
  if not (kids := unmeasured_children(base, parent, avoid)): return []
  s = np.asarray(score([c for _, c in kids]), dtype=np.float64)
  return [parent + (kids[i][0],) for i in np.argsort(-s, kind="stable")]

def shuffled_children(base:Scheduler, parent:tuple[Opt, ...], rng:random.Random, avoid:frozenset=frozenset()) -> list[tuple[Opt, ...]]:
  """Every child of `parent` not in `avoid`, in random order: a measured BEAM step tries them all, as BEAM does. A few random
  children each time (expand) kept proposing what the climb had measured: on ResNet-50 b32 on the H200 1,511
  proposals lowered to measured code for 591 new configs."""
  kids = [parent + (a,) for a, _ in unmeasured_children(base, parent, avoid)]
  rng.shuffle(kids)
  return kids

def random_child(k:Scheduler, rng:random.Random, tc_prob:float=0.0, actions:list[Opt]=ACTIONS) -> tuple[Opt, Scheduler]|None:
  """One valid action from `k`, uniform over the valid ones (drawn without replacement: often only a few percent of the action
  space applies), or None when none does. With tc_prob, a first action is a tensor-core one when any applies."""
  if tc_prob > 0 and not k.applied_opts and rng.random() < tc_prob:
    tcs = TC_ACTIONS if actions is ACTIONS else [a for a in actions if a.op is OptOps.TC]
    for a in rng.sample(tcs, len(tcs)):
      if (k2 := try_apply(k, a)) is not None: return a, k2
  for a in rng.sample(actions, len(actions)):
    if (k2 := try_apply(k, a)) is not None: return a, k2
  return None

def random_walk(base:Scheduler, rng:random.Random, depth:int, tc_prob:float=0.25, actions:list[Opt]=ACTIONS) -> tuple[Opt, ...]:
  k = base
  for _ in range(depth):
    if (step := random_child(k, rng, tc_prob=tc_prob, actions=actions)) is None: break
    k = step[1]
  return tuple(k.applied_opts[len(base.applied_opts):])

def expand(base:Scheduler, parent:tuple[Opt, ...], rng:random.Random, avoid:frozenset=frozenset()) -> tuple[Opt, ...]|None:
  """A BEAM step: the parent plus one valid action, preferring children not in `avoid`."""
  if (k := replay(base, parent)) is None: return None
  for _ in range(8):
    if (step := random_child(k, rng, tc_prob=0.3)) is None: return None
    child = parent + (step[0],)
    if child not in avoid: return child
  return None

def mutate(base:Scheduler, parent:tuple[Opt, ...], rng:random.Random, tries:int=16, avoid:frozenset=frozenset()) -> tuple[Opt, ...]|None:
  """Replace, drop or add one action of `parent`; the result must replay validly and not be in `avoid`."""
  for _ in range(tries):
    op, i = rng.choice(("replace", "drop", "add")), rng.randrange(len(parent)+1)
    if op == "drop" and parent: cand = parent[:i] + parent[i+1:] if i < len(parent) else parent[:-1]
    elif op == "replace" and parent: cand = parent[:min(i, len(parent)-1)] + (rng.choice(ACTIONS),) + parent[min(i, len(parent)-1)+1:]
    else: cand = parent[:i] + (rng.choice(ACTIONS),) + parent[i:]
    if cand != parent and cand not in avoid and replay(base, cand, limits=True) is not None: return cand
  return None

def hand_coded(base:Scheduler) -> tuple[Opt, ...]:
  return tuple(hand_coded_optimizations(base.copy()).applied_opts[len(base.applied_opts):])

def reference_opts(base:Scheduler, threads:int=256) -> tuple[Opt, ...]:
  """The correctness reference's opts: none on a device without local threads; on a GPU, LOCAL only, grouping the unoptimized
  kernel's output threads into blocks (innermost global axes first, up to `threads`, at least 256 blocks where the output allows).
  Each output is computed by the same loops as unoptimized; only the launch differs. Unoptimized, a GPU kernel runs one thread per
  block, and the reference run of a 4096^3 GEMM took 2.5 s on the H200, more than the learned search it checked."""
  if not base.ren.has_local: return ()
  outputs = prod(s for s, t in zip(base.full_shape, base.axis_types) if t is AxisType.GLOBAL)
  threads = min(threads, outputs//256 if isinstance(outputs, int) else 1)
  opts, k = (), base
  for ax in reversed([i for i, t in enumerate(base.axis_types) if t is AxisType.GLOBAL]):
    if threads < 2: break
    size = k.full_shape[ax]
    amt = max((d for d in (2**i for i in range(1, threads.bit_length())) if d <= threads and isinstance(size, int) and size % d == 0), default=1)
    if amt > 1 and (k2 := try_apply(k, o := Opt(OptOps.LOCAL, ax, amt), limits=False)) is not None: k, opts, threads = k2, opts + (o,), threads//amt
  return opts

def propose(base:Scheduler, kind:str, rng:random.Random, parent:tuple[Opt, ...]=(), avoid:frozenset=frozenset()) -> tuple[Opt, ...]|None:
  """One opt sequence of the given kind: 'fixed' or 'tinygrad-beam' (the parent itself), 'hand', 'random', 'expand'/'beam' or 'mutate' ('model' proposals
  are model_children's, in order)."""
  if kind in ("fixed", "tinygrad-beam"): return parent if replay(base, parent) is not None else None
  if kind == "hand": return hand_coded(base)
  if kind == "random":
    for _ in range(4):
      if (seq := random_walk(base, rng, rng.randint(1, 8))) and seq not in avoid: return seq
    return None
  if kind == "expand": return expand(base, parent, rng, avoid)
  if kind == "mutate": return mutate(base, parent, rng, avoid=avoid)
  raise ValueError(f"unknown proposal kind {kind!r}")
