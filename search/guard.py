"""The tuned outputs against tinygrad's default: a config that passes its kernel's own check (random inputs, one launch) can still
break a model. A Llama block's fused gate/up GEMM on the H200 passed its check 20 times of 20 and computed right without TinyJit,
and under it (CUDA graphs or not, memory planner or not) left 80% of the block's outputs off (max abs error 0.70;
results/logs/models/h200_llama_timing). Where the tuned outputs differ, the kernels that break them are found by halving, each
probe a run with only some kernels' configs; each takes the next-fastest config its search timed that passes its own check and
leaves the outputs right, or else tinygrad's hand-coded config. tune-model checks the whole model (search.tune_model.repair),
drop-in tuning each LINEAR whose kernels it has just tuned, on the program's own data, before the program runs it (check_tuned)."""
from __future__ import annotations
import sys, time
from typing import Callable
import numpy as np
from tinygrad.uop.ops import Ops, UOp
from dataset.device import renderer_for
from dataset.kernel import Kernel, opts_from_json, opts_to_json, scheduler, with_opts
from dataset.sampler import hand_coded
from dataset.check import compare
from dataset.timing import _copyin, _copyout
from search.measure import Budget, Measurer

def culprits(keys:list[str], breaks:Callable[[list[str]], bool]) -> list[str]:
  """The keys whose configs break the outputs, where breaks(subset) says whether the model with only those configs (the rest at
  tinygrad's default) differs: halving, about 2 log2(len(keys)) probes a culprit. Where neither half breaks them alone, the
  configs that do only together are found as in delta debugging: each half's, with the other half's held."""
  if len(keys) == 0 or not breaks(keys): return []
  if len(keys) == 1: return list(keys)
  a, b = keys[:len(keys)//2], keys[len(keys)//2:]
  if found := culprits(a, breaks) + culprits(b, breaks): return found
  fb = culprits(b, lambda ks: breaks(a + ks))
  return culprits(a, lambda ks: breaks(ks + fb)) + fb

def fix(kernels:list[Kernel], keys:list[str], cache, device:str, differs:Callable[[list[str], dict], bool], log:Callable) -> list[str]:
  """The configs of `keys` (cached) that break the outputs, found and put back as repair says. differs(ks, instead): whether the
  outputs with the cached configs of ks only (the other keys' kernels at tinygrad's default; instead: other opts for some) differ."""
  bad, ren = [], renderer_for(device)
  # halving finds what breaks the outputs alone or together (its first probe: all that are left); what still breaks them once
  # those are out is looked for again
  while more := culprits([k for k in keys if k not in bad], lambda ks: differs(ks, {})): bad += more
  was = {k.key: cache.get(k.key, device) for k in kernels if k.key in bad}
  hand = {k.key: opts_to_json(hand_coded(scheduler(k.ast, ren))) for k in kernels if k.key in bad}
  for key, e in was.items():   # every culprit at its default first: an alternate is tried with none of them in the model
    cache.put(key, device, hand[key], **{**{x: e[x] for x in ("name",) if x in e}, "time_us": e.get("hand_coded_us"),
              "hand_coded_us": e.get("hand_coded_us"), "status": "rejected", "rejected": e["opts"]})
  for k in kernels:
    if (e := was.get(k.key)) is None: continue
    # its next-fastest configs (tune-model's `alternates`, with times; drop-in's `top`, fastest first), each checked alone and
    # then in the outputs, before the default stands
    alts = e.get("alternates") or [[o, None] for o in e.get("top", []) if o != e["opts"]]
    alt = next(((o, t) for o, t in alts if o != hand[k.key] and works(k, device, o, lambda: differs(keys, {k.key: o}))), None)
    if alt is not None:
      info = {x: v for x, v in cache.get(k.key, device).items() if x not in ("opts", "v")}
      cache.put(k.key, device, alt[0], **{**info, "time_us": alt[1], "status": "alternate"})
    log(f"  {k.name}: its config {e['opts']} breaks the outputs: "
        + ("back to tinygrad's hand-coded config" if alt is None else f"its next-fastest that does not, {alt[0]}" + (f" ({alt[1]:.1f} us)" if alt[1] else "")))
  return bad

def works(k:Kernel, device:str, opts:list, differs:Callable[[], bool]) -> bool:
  """Whether `opts` passes kernel k's own check and then leaves the outputs as the default's (differs: whether they differ)."""
  m = Measurer(k, device, Budget(), workers=0)
  try: return m.verify(opts_from_json(opts)) is None and not differs()
  finally: m.close()

def written(linear:UOp) -> list:
  """The Buffers a LINEAR writes: each kernel's stored-to arguments, and the first of any other call's (a copy's destination)."""
  out: dict[int, object] = {}
  for c in linear.src:
    args = c.src[1:2]
    if c.src[0].op is Ops.SINK:
      args = c.src[1:]
      args = [args[s] for s in sorted({st.src[0].src[0].arg.slot for st in c.src[0].toposort() if st.op is Ops.STORE}) if s < len(args)]
    for u in args:
      if (b := getattr(u, "buffer", None)) is not None and hasattr(b, "ensure_allocated"): out[id(b)] = b
  return list(out.values())

def check_linear(linear:UOp, new:list[str], cache, device:str, table:dict, run:Callable[[UOp], None], log:Callable,
                 hand:dict[str, UOp]|None=None) -> list[str]:
  """Drop-in's guard: whether `linear` computes what it does with tinygrad's defaults for the kernels `new` (just tuned, cached),
  on the program's own data, every buffer it writes compared; the configs that break it are fixed as repair does (their new opts
  in `table` too). Every buffer it writes holds, after, what it held before: the program's own run comes next. Returns their keys.
  hand: kernels' defaults compiled already (PROGRAMs, the search's), run in their place, so the program compiles no default here
  (on the CPU, 3 s of a CNN training step's 11-s guard; results/dropin_guard.md). The tuned kernels the tuned run finds compiled
  too: drop-in put its search's programs in tinygrad's compile cache (dataset.compile.precompiled)."""
  bufs = [b.ensure_allocated() for b in written(linear)]
  saved = [_copyout(b) for b in bufs]
  def outputs(opts:dict) -> list[np.ndarray]:
    for b, x in zip(bufs, saved): _copyin(b, x)
    progs = {k: p for k, p in (hand or {}).items() if k not in opts and p is not None}
    run(with_opts(linear.replace(src=tuple(c.replace(src=(progs[k], *c.src[1:])) if (k := c.src[0].key.hex()) in progs else c
                                         for c in linear.src)), opts))
    return [_copyout(b) for b in bufs]
  trusted = {k: o for k, o in table.items() if k not in new}
  try:
    ref = outputs(trusted)
    def differs(keys:list[str], instead:dict) -> bool:   # a run that raises differs too: the program's own would raise
      opts = {**trusted, **{k: opts_from_json(instead.get(k, cache.get(k, device)["opts"])) for k in keys}}
      try: got = outputs(opts)
      except Exception: return True
      return any(compare(g, r) is not None for g, r in zip(got, ref))
    if not differs(new, {}): return []
    asts = {c.src[0].key.hex(): c.src[0] for c in linear.src if c.src[0].op is Ops.SINK}
    kernels = [Kernel(k, asts[k], (cache.get(k, device) or {}).get("name", k[:12]), "dropin", "dropin") for k in new if k in asts]
    bad = fix(kernels, [k.key for k in kernels], cache, device, differs, log)
    for k in bad: table[k] = opts_from_json(cache.get(k, device)["opts"])
    return bad
  finally:
    for b, x in zip(bufs, saved): _copyin(b, x)

def check_tuned(tuner, linear:UOp, device:str, table:dict, cache, run:Callable[[UOp], None]) -> None:
  """check_linear over the kernels of `linear` that drop-in tuning (search.dropin.Tuner) has just tuned, before the program runs
  it; a guard that fails leaves the tuned configs in place, said in the kernels' rows. Its seconds count in the tuning's."""
  keys = {c.src[0].key.hex() for c in linear.src if c.src[0].op is Ops.SINK}
  rows = [r for r in tuner.rows if r["key"] in keys and r["status"] == "tuned" and "checked" not in r]
  if not rows: return
  say = (lambda s: None) if tuner.quiet else (lambda s: print(f"kerntune: {s}", file=sys.stderr, flush=True))
  st, bad = time.perf_counter(), []
  try: bad = check_linear(linear, [r["key"] for r in rows], cache, device, table, run, say, {r["key"]: tuner._hand.pop(r["key"], None) for r in rows})
  except Exception as e:
    from dataset.errors import one_line
    for r in rows: r["checked"] = f"failed: {one_line(e, 200)}"
  for r in rows:
    r.setdefault("checked", True)
    if r["key"] in bad:   # an alternate is still a tuned config (at its own time); a rejected one leaves the default
      e = cache.get(r["key"], device)
      r.update(guard=e["status"], **({"us": e["time_us"]} if e["status"] == "alternate" and e["time_us"] else {"status": "rejected", "us": r["default_us"]}))
  tuner.phases["guard"] += (dt := time.perf_counter() - st)
  tuner.spent_s += dt
