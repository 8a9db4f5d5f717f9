"""Where the LLaMA block's gate/up config (r4_warm's, wrong.py: right alone and with JIT=0, wrong under TinyJit) goes wrong: the block
runs with r4's configs under JIT=2 (TinyJit without graphs, so each kernel runs through exec_kernel) and under JIT=0; every launch of
the target kernel is intercepted, its arguments read back before and after. Then, on copies of the inputs it really got, the same
program is run alone (does it reproduce its output from those inputs?) and the search's compile of tinygrad's default config (is
the config wrong on the block's real data, which the check's random inputs do not show?); and the two modes' inputs are compared
(does the JIT hand it other data?). Last, which of the config's output and the default's is right: both against the op computed in
float64 (numpy) from the inputs the kernel got under JIT=0. Checked on the CPU device with a small model and a right config (every comparison equal).
  python3 results/logs/models/h200_llama_timing/jitdiff.py OUT.json   (CHECK_ONLY=1: the check's verdicts on the config and the
  default, nothing more)"""
import json, os, re, sys, tempfile
from pathlib import Path
import numpy as np
sys.path.insert(0, "scripts")
import tinygrad.engine.realize as R
from tinygrad import Device
from tinygrad.device import Buffer
from tinygrad.helpers import Context, to_tuple
from tinygrad.uop.ops import Ops, PatternMatcher, UOp, UPat
from tinygrad.engine.realize import time_call
from dataset.kernel import TINYGRAD_VERSION, opts_from_json
from dataset.check import compare
from dataset.timing import _copyin, _copyout
from search.cache import tuned
from search.latency import tinygrad_latency
from search.measure import Budget, Measurer
from search.onnx_model import open_model
D, DEV = Path(__file__).parent, os.environ.get("DEV", "CUDA")
strip = lambda s: re.sub(r"\x1b\[[0-9;]*m", "", str(s))
launches: list[dict] = []
TARGET = {"name": None}

def intercept(ctx, call, ast):
  if strip(getattr(ast.arg, "name", "")) != TARGET["name"]: return R.exec_kernel(ctx, call, ast)
  resolved = R.resolve_params(call, ctx.input_uops)
  (bufs, dv), = list(R.unwrap_multi(call, resolved))[:1]
  bufs = [b.ensure_allocated() for b in bufs]
  before = [_copyout(b) for b in bufs]
  ets = R.exec_kernel(ctx, call, ast)
  Device[DEV].synchronize()
  gs, ls = ast.arg.launch_dims({**ctx.var_vals, **dv})
  launches.append({"prg": ast, "before": before, "after": [_copyout(b) for b in bufs], "vars": {**ctx.var_vals, **dv},
                   "launch": [list(gs), None if ls is None else list(ls)], "outs": list(ast.arg.outs),
                   "bufs": [{"size": b.size, "dtype": b.dtype, "offset": b.offset, "view": b._base is not None} for b in bufs]})
  return ets
R.pm_exec = PatternMatcher([(UPat(Ops.CALL, src=(UPat(Ops.PROGRAM, name="ast"),), name="call", allow_any_len=True), intercept)]) + R.pm_exec

def alone(prg:UOp, inputs:list[np.ndarray], like:list[dict], var_vals:dict) -> list[np.ndarray]:
  """`prg` run once on fresh buffers holding `inputs`; its arguments after."""
  bufs = []
  for x, b in zip(inputs, like):
    nb = Buffer(DEV, b["size"], b["dtype"]).ensure_allocated()
    _copyin(nb, x); bufs.append(nb)
  next(time_call(prg.call(*[UOp.from_buffer(b) for b in bufs]), var_vals))
  return [_copyout(b) for b in bufs]

def src(prg:UOp) -> str|None: return next((u.arg for u in prg.src if u.op is Ops.SOURCE), None)

def differ(a:list[np.ndarray], b:list[np.ndarray], outs:list[int]) -> dict:
  return {i: compare(a[i], b[i]) for i in outs}

def against(got:np.ndarray, ref:np.ndarray) -> dict:
  """An output against a float64 reference: the check's verdict and the error's size."""
  e = np.abs(got.astype(np.float64) - ref)
  return {"check": compare(got, ref.astype(got.dtype)), "max_abs_err": float(e.max()), "mean_abs_err": float(e.mean()),
          "rel_rms_err": float(np.sqrt(np.mean(e ** 2)) / np.sqrt(np.mean(ref ** 2))), "nonfinite": int((~np.isfinite(got)).sum())}

def silu_gemm64(x:np.ndarray, r:np.ndarray, w:np.ndarray, wg:np.ndarray, wu:np.ndarray, s:int, d:int, h:int) -> tuple[np.ndarray, dict]:
  """The LLaMA gate/up kernel's output in float64 from its inputs: silu((x*r*w) @ wg) * ((x*r*w) @ wu), x (s, d), wg wu (d, h)."""
  xn = x.astype(np.float64).reshape(s, d) * r.astype(np.float64).reshape(s, 1) * w.astype(np.float64).reshape(1, d)
  g, u = xn @ wg.astype(np.float64).reshape(d, h), xn @ wu.astype(np.float64).reshape(d, h)
  out = g / (1 + np.exp(-g)) * u
  f16 = lambda a: float(np.abs(a).max())
  return out.ravel(), {"max_abs_x_normed": f16(xn), "max_abs_gate": f16(g), "max_abs_up": f16(u), "max_abs_out": f16(out),
                       "rms_out": float(np.sqrt(np.mean(out ** 2))), "half_max": 65504.0}

if __name__ == "__main__":
  if DEV == "CPU":   # the mechanics: a small model, its bmm kernel at a right config
    import torch
    class Bmm(torch.nn.Module):
      def forward(self, a, b): return (a @ b) * 2
    _, m, kernels, _, _ = open_model(Bmm(), (torch.randn(3, 64, 33), torch.randn(3, 33, 16)), "CPU", "bmm")
    k, opts = kernels[0], [["UPCAST", 1, 4]]
    ref64 = lambda i: (((i[1].astype(np.float64).reshape(3, 64, 33) @ i[2].astype(np.float64).reshape(3, 33, 16)) * 2).ravel(), {})
  else:
    from bench_models import build
    r4 = {r["key"]: r for r in json.loads((D / "r4_warm.tune.json").read_text())}
    mod, inputs = build("llama_block_s512_fp16", DEV)
    _, m, kernels, _, _ = open_model(mod, inputs, DEV, "llama_block_s512_fp16")
    k = next(k for k in kernels if k.key in r4 and r4[k.key]["index"] == 8)
    opts = r4[k.key]["opts"]
    ref64 = lambda i: silu_gemm64(i[1], i[2], i[3], i[4], i[5], 512, 2048, 5632)
  ms = Measurer(k, DEV, Budget(), workers=0)
  o = tuple(opts_from_json(opts))
  ms.measure([ms.hand, o])
  TARGET["name"] = strip(ms.program(o).arg.name)
  p = Path(tempfile.mkdtemp()) / "c.json"
  entries = {f"{k.key}|{DEV}|{TINYGRAD_VERSION}": {"opts": opts, "v": 2}}
  if DEV != "CPU": entries.update({f"{key}|{DEV}|{TINYGRAD_VERSION}": {"opts": r["opts"], "v": 2} for key, r in r4.items()})
  p.write_text(json.dumps(entries))
  res, last = {"target": TARGET["name"], "check": ms.verify(o)}, {}
  if os.environ.get("CHECK_ONLY"):   # the check's verdicts alone: the config's, the default's
    res["hand_check"] = ms.verify(ms.hand); print(json.dumps(res), flush=True); ms.close()
    Path(sys.argv[1]).write_text(json.dumps(res, indent=1)); sys.exit(0)
  for mode in (2, 0):
    launches.clear()
    with Context(JIT=mode): tinygrad_latency(m, 2, lambda: tuned(p))
    if not launches: res[f"jit{mode}"] = "the target never ran through exec_kernel"; continue
    L = last[mode] = launches[-1]
    same = alone(L["prg"], L["before"], L["bufs"], L["vars"])
    ref = alone(ms.program(ms.hand), L["before"], L["bufs"], L["vars"])
    mine = alone(ms.program(o), L["before"], L["bufs"], L["vars"])
    res[f"jit{mode}"] = {"launches": len(launches), "launch": L["launch"], "bufs": L["bufs"],
                         "its_output_vs_the_same_program_alone": differ(L["after"], same, L["outs"]),
                         "its_output_vs_the_default_on_its_inputs": differ(L["after"], ref, L["outs"]),
                         "the_search_compile_vs_the_default_on_its_inputs": differ(mine, ref, L["outs"]),
                         "same_source_as_the_search_compile": src(L["prg"]) == src(ms.program(o)), "source": src(L["prg"])}
    if mode == 0:   # which is right: the config's output and the default's against float64 from the same inputs
      r64, scale = ref64(L["before"])
      res["float64"] = {"scale": scale, "config": against(L["after"][0], r64), "default": against(ref[0], r64)}
      print("float64", json.dumps(res["float64"]), flush=True)
    print(mode, json.dumps(res[f"jit{mode}"], default=str)[:1500], flush=True)
  if 2 in last and 0 in last:
    res["inputs_jit2_vs_jit0"] = {i: compare(a, b) for i, (a, b) in enumerate(zip(last[2]["before"], last[0]["before"])) if i not in last[2]["outs"]}
  print(json.dumps({k: v for k, v in res.items() if not k.startswith("jit")}, default=str), flush=True)
  ms.close()
  Path(sys.argv[1]).write_text(json.dumps(res, indent=1, default=str))
