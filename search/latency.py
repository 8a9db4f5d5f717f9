"""End-to-end latency of a model, tinygrad's and PyTorch's, and the check of its outputs.

tinygrad: a TinyJit of the runner (its python interpretation and scheduling are captured once, as any deployed tinygrad model would
run), after the JIT's two warm-up calls, with the device synchronized after every run; each configuration's JIT is first timed
`runs` times as it is captured (tinygrad_latency), then the configurations take turns for ROUNDS rounds of `runs` runs and the
median of those is the figure (interleaved). A JIT captured inside search.cache.tuned() gets the cached opts at capture time,
through search.cache's TinyJit hook. Outputs are checked against a reference with the dataset's dtype tolerance
(dataset.check.compare)."""
from __future__ import annotations
import contextlib, math, statistics, time
from typing import Callable
import numpy as np
from tinygrad import Device, Tensor, TinyJit
from dataset.check import compare
from search.cache import stats as cache_stats
from search.onnx_model import OnnxModel

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
  back to back instead, BEAM=2's latency of ResNet-50 b1 (the same cached opts) ranged 1.37-1.50 ms over four calls."""
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
