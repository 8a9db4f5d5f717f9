"""The tuned model's outputs against tinygrad's default: a config that passes its kernel's own check (random inputs, one launch) can
still break the model. A Llama block's fused gate/up GEMM on the H200 passed its check 20 times of 20 and computed right without
TinyJit, and under it (CUDA graphs or not, memory planner or not) left 80% of the block's outputs off (max abs error 0.70;
results/logs/models/h200_llama_timing). Where the tuned outputs differ, the kernels that break them are found by halving, each
probe a run of the model with only some kernels' configs; each takes the next-fastest config its search timed that passes its own
check and leaves the model's outputs right, or else tinygrad's hand-coded config."""
from __future__ import annotations
import json, tempfile
from pathlib import Path
from typing import Callable
from dataset.device import renderer_for
from dataset.kernel import Kernel, opts_from_json, opts_to_json, scheduler
from dataset.sampler import hand_coded
from search.cache import TunedCache, tuned
from search.latency import check, tinygrad_latency
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

def repair(model, kernels:list[Kernel], cache:TunedCache, device:str, reference:list, log:Callable) -> list[str]:
  """Where the model with `cache`'s configs computes other outputs than `reference` (tinygrad's default run): the kernels whose
  configs break them, each put back in the cache to the next-fastest config its search timed that passes (status `alternate`) or
  else to its hand-coded config, its own kept as `rejected`. Returns their keys."""
  def run(keys:list[str], instead:dict[str, list]|None=None) -> str|None:   # instead: other opts for some of them
    with tempfile.TemporaryDirectory(prefix="kerntune_guard_") as tmp:
      p, instead = Path(tmp) / "subset.json", instead or {}
      p.write_text(json.dumps({k: {**v, "opts": instead.get(k.split("|")[0], v["opts"])} for k, v in cache.entries.items()
                               if k.split("|")[0] in keys}))
      return check(tinygrad_latency(model, 1, lambda: tuned(p))["outputs"], reference)[0]
  keys, bad, ren = [k.key for k in kernels if cache.get(k.key, device) is not None], [], renderer_for(device)
  # halving finds what breaks the outputs alone or together (its first probe: all that are left); what still breaks them once
  # those are out is looked for again
  while more := culprits([k for k in keys if k not in bad], lambda ks: run(ks) is not None): bad += more
  was = {k.key: cache.get(k.key, device) for k in kernels if k.key in bad}
  hand = {k.key: opts_to_json(hand_coded(scheduler(k.ast, ren))) for k in kernels if k.key in bad}
  for key, e in was.items():   # every culprit at its default first: an alternate is tried with none of them in the model
    cache.put(key, device, hand[key], **{**{x: e[x] for x in ("name",) if x in e}, "time_us": e.get("hand_coded_us"),
              "hand_coded_us": e.get("hand_coded_us"), "status": "rejected", "rejected": e["opts"]})
  for k in kernels:
    if (e := was.get(k.key)) is None: continue
    # its next-fastest configs (schedule.ALTERNATES), each checked alone and then in the model, before the default stands
    alt = next(((o, t) for o, t in e.get("alternates", []) if o != hand[k.key] and works(k, device, o, lambda: run(keys, {k.key: o}))), None)
    if alt is not None:
      info = {x: v for x, v in cache.get(k.key, device).items() if x not in ("opts", "v")}
      cache.put(k.key, device, alt[0], **{**info, "time_us": alt[1], "status": "alternate"})
    log(f"  {k.name}: its config {e['opts']} breaks the model's outputs: "
        + ("back to tinygrad's hand-coded config" if alt is None else f"its next-fastest that does not, {alt[0]} ({alt[1]:.1f} us)"))
  return bad

def works(k:Kernel, device:str, opts:list, in_model:Callable[[], str|None]) -> bool:
  """Whether `opts` passes kernel k's own check and then leaves the model's outputs as the default's (in_model: what differs)."""
  m = Measurer(k, device, Budget(), workers=0)
  try: return m.verify(opts_from_json(opts)) is None and in_model() is None
  finally: m.close()
