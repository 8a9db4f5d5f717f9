"""The action space search expands: tinygrad 0.14's BEAM actions, optionally widened with more amounts, PADTO and TC variants,
which a cost model makes affordable since scoring a child costs far less than compiling it."""
from __future__ import annotations
from tinygrad.codegen.opt import Opt, OptOps
from tinygrad.codegen.opt.postrange import Scheduler
from dataset.sampler import ACTIONS, try_apply

EXTRA: list[Opt] = [Opt(OptOps.UPCAST, ax, amt) for amt in (6, 8, 16) for ax in range(8)]
EXTRA += [Opt(OptOps.UNROLL, ax, amt) for amt in (2, 3, 8, 16) for ax in range(5)]
EXTRA += [Opt(OptOps.LOCAL, ax, amt) for amt in (6, 12, 32, 64) for ax in range(6)]
EXTRA += [Opt(OptOps.GROUPTOP, ax, amt) for amt in (4, 8, 128) for ax in range(3)]
EXTRA += [Opt(OptOps.PADTO, ax, 32) for ax in range(7)]
EXTRA += [Opt(OptOps.TC, ax, (-1, lvl, 1)) for lvl in (0, 1) for ax in range(9)]
WIDE: list[Opt] = ACTIONS + [a for a in EXTRA if a not in ACTIONS]

def children(k:Scheduler, actions:list[Opt]=ACTIONS) -> list[tuple[Opt, Scheduler]]:
  """Every valid child of `k` under BEAM's size limits, one per distinct resulting kernel (different actions often give the same
  scheduled AST: UPCAST of the whole axis by its size and by 0, say)."""
  out, seen = [], {k.ast.key}
  for a in actions:
    if (k2 := try_apply(k, a)) is not None and k2.ast.key not in seen:
      seen.add(k2.ast.key)
      out.append((a, k2))
  return out
