"""Which orders of one config's opts build the same program, so that a search compiles one of them. A beam reaches a config by
several paths (UPCAST then UNROLL, UNROLL then UPCAST): on the learned beam's batches a fifth of the binaries were such reorderings
of a config it had (results/logs/compile/duplicates_cpu.txt). Adjacent opts commute, compiled to sm_90 for the H200 store's configs
(results/logs/compile/commute_sm90.txt), where one works on a reduce axis and the other on a global one as below: UNROLL with
UPCAST and LOCAL (75 of 75 swaps gave the same binary), GROUP and GROUPTOP with UPCAST (23 of 23). LOCAL with GROUP or GROUPTOP
does not (2 of 19): both shape the threads of a block. No other pair commutes every time (commute_all_sm90.txt: UPCAST with LOCAL
on different axes 21 of 23, two UPCASTs on different axes 15 of 27), so none is assumed to. On the CPU device, UNROLL commutes
with THREAD, its threads (commute_thread_cpu.txt: 61 of 61), and UPCAST with THREAD does not always (126 of 136)."""
from tinygrad.codegen.opt import Opt, OptOps

_PAIRS = {frozenset(p) for p in [(OptOps.UNROLL, OptOps.UPCAST), (OptOps.UNROLL, OptOps.LOCAL), (OptOps.GROUP, OptOps.UPCAST),
                                 (OptOps.GROUPTOP, OptOps.UPCAST), (OptOps.UNROLL, OptOps.THREAD)]}

def commute(a:Opt, b:Opt) -> bool: return frozenset((a.op, b.op)) in _PAIRS

def _key(o:Opt) -> tuple: return (o.op.value, o.axis if o.axis is not None else -1, str(o.arg))

def normal_form(opts:tuple[Opt, ...]) -> tuple[Opt, ...]:
  """The least of the orders of `opts` that swaps of adjacent commuting opts reach (the lexicographic normal form of a trace):
  each step takes, of the opts that commute with every opt still before them, the least."""
  rest, out = list(opts), []
  while rest:
    free = [i for i, o in enumerate(rest) if all(commute(p, o) for p in rest[:i])]
    out.append(rest.pop(min(free, key=lambda i: _key(rest[i]))))
  return tuple(out)
