#!/usr/bin/env python3
"""Drop-in tuning against tinygrad's BEAM=2 on whole tinygrad programs (issue 30): each program runs in a fresh process, once plain
(tinygrad's defaults), once with BEAM=2, once with KERNTUNE=1, each with empty caches; per run: the seconds from process start to
the first result, the seconds of search, and the steady-state step time (median of --steps device-synchronized steps after warm-up).

Programs, written with tinygrad's own nn, weights from numpy (no random-init kernels):
  cnn_train   beautiful_mnist's CNN (4 convs, BatchNorm, max-pool, linear) training step, batch 256: forward, backward, Adam, TinyJit
  gpt2_gen    GPT-2 small (12 layers, d=768, vocab 50257) greedy generation: a 16-token prompt, then one token per step under TinyJit
              with the position a bound Variable (symbolic start_pos, as tinygrad's examples/gpt2.py), KV cache of 1024
  vit_infer   ViT-Ti/16 forward (12 layers, d=192, 3 heads) at batch 8, 224x224, TinyJit
  resnet18_infer  ResNet-18 forward at batch 8, 224x224, TinyJit (not in the default set: BEAM=2 on its convs takes long)
--small shrinks each to seconds on a CPU.

Search seconds: BEAM=2's are the wall seconds inside tinygrad's beam_search (timed here, per kernel); KERNTUNE's are the drop-in
Tuner's (search.dropin: defaults timed, searches, final checks). Each (program, mode) result lands in OUT/runs/PROG.MODE.json as it
finishes, and a rerun skips what is there: a host call has minutes, and BEAM=2 on a training step can take longer. A run cut by
--deadline is taken up again by the next call: BEAM=2's tinygrad cache (CACHEDB) keeps what it had searched, and its earlier
seconds are added; a cut KERNTUNE run starts over. Where BEAM=2 finishes in a later call than KERNTUNE tuned, KERNTUNE's cached
kernels are replayed and timed in that call too, so the two steady states always come from one call on one device.
OUT/dropin.json and OUT/dropin.md hold every program's result so far. BEAM=2's picks are kept (PROG.beam2.picks.json, a kerntune
cache): `--modes ...,beam2_replay` times them beside a later call's runs (a KERNTUNE variant, `--kt-env`) without searching again, and
`--modes kernels` times every kernel alone with KERNTUNE's config and BEAM=2's pick, to show where a step's gap comes from.
`--modes ...,turns` replays KERNTUNE's kernels and BEAM=2's picks in --turns pairs of processes, back to back, alternating which goes
first: a host-bound program's step (GPT-2's) moves with the host between processes more than with its kernels.

  python scripts/bench_dropin.py --device CUDA --out $OUT --deadline 540              # then again with the same OUT to resume
  python scripts/bench_dropin.py --device CPU --small --out /tmp/dropin               # end to end on a CPU, in minutes"""
from __future__ import annotations
import argparse, json, math, os, shlex, signal, statistics, subprocess, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if __name__ == "__main__" and any(os.environ.get(v, "0") not in ("", "0") for v in ("KERNTUNE", "KERNTUNE_TUNED")):
  # what kerntune.pth does at startup (search.hook): the host's packages are on PYTHONPATH, whose .pth files Python does not read
  sys.path.insert(0, str(ROOT))
  import search.hook
  search.hook.arm()

PROGRAMS = {"cnn_train": "beautiful_mnist's CNN training step (forward, backward, Adam) at batch 256, TinyJit",
            "gpt2_gen": "GPT-2 small (12 layers, d=768) greedy generation, one token per step, TinyJit, symbolic start_pos",
            "vit_infer": "ViT-Ti/16 forward at batch 8, 224x224, TinyJit",
            "resnet18_infer": "ResNet-18 forward at batch 8, 224x224, TinyJit"}
DEFAULT_PROGRAMS = ("vit_infer", "gpt2_gen", "cnn_train")   # by BEAM=2's expected seconds: 13, 37 (5 symbolic) and 100 distinct kernels
MODES = ("default", "kerntune", "beam2")   # per program in this order: the cheap runs first
# "replay": KERNTUNE's tuned kernels replayed (KERNTUNE_TUNED, no search), to time its steady state in the call where BEAM=2 finished;
# "beam2_replay" (asked for in --modes): BEAM=2's picks replayed likewise, to time them beside a later call's KERNTUNE runs
REPLAYS = ("replay", "beam2_replay")
# "kernels" (asked for in --modes, after both searches): each kernel timed with KERNTUNE's config and BEAM=2's pick (kernels_child)
# "turns" (likewise): --turns pairs of processes replaying KERNTUNE's kernels and BEAM=2's picks, alternating (run_turns)
EXTRA = ("beam2_replay", "kernels", "turns")
WARMUP = 3   # steps before timing: a TinyJit captures on its second call

# *** the programs: each returns (first, step, outputs): first() runs to the program's first result, step() one more step (realized),
# outputs() what is compared between the modes, at the end ***

def _init(model, seed:int=0):
  """Weights from numpy: 1-D ones (a norm's weight) or zeros, others normal with 1/sqrt(fan-in) (no random-init kernels to tune)."""
  import numpy as np
  from tinygrad import Tensor, dtypes
  from tinygrad.nn.state import get_state_dict
  rng = np.random.default_rng(seed)
  for name, t in get_state_dict(model).items():
    if not dtypes.is_float(t.dtype): continue
    if len(t.shape) <= 1: a = np.full(t.shape, 1.0 if name.endswith(("weight", "running_var")) else 0.0, np.float32)
    else: a = rng.standard_normal(t.shape).astype(np.float32) / math.sqrt(math.prod(t.shape[1:]))
    t.replace(Tensor(a, device=t.device).cast(t.dtype).realize())

def cnn_train(small:bool):
  import numpy as np
  from tinygrad import Context, Tensor, TinyJit, nn
  bs, c1, c2 = (8, 4, 8) if small else (256, 32, 64)
  class Model:
    def __init__(self):
      self.layers = [nn.Conv2d(1, c1, 5), Tensor.relu, nn.Conv2d(c1, c1, 5), Tensor.relu, nn.BatchNorm(c1), Tensor.max_pool2d,
                     nn.Conv2d(c1, c2, 3), Tensor.relu, nn.Conv2d(c2, c2, 3), Tensor.relu, nn.BatchNorm(c2), Tensor.max_pool2d,
                     lambda x: x.flatten(1), nn.Linear(c2*9, 10)]
    def __call__(self, x:Tensor) -> Tensor: return x.sequential(self.layers)
  model = Model()
  _init(model)
  opt = nn.optim.Adam(nn.state.get_parameters(model))
  rng = np.random.default_rng(1)
  x, y = Tensor(rng.standard_normal((bs, 1, 28, 28)).astype(np.float32)).realize(), Tensor(rng.integers(0, 10, bs).astype(np.int32)).realize()
  @TinyJit
  def step() -> Tensor:
    with Context(TRAINING=1):
      opt.zero_grad()
      loss = model(x).sparse_categorical_crossentropy(y).backward()
      return loss.realize(*opt.schedule_step())
  losses = []
  return (lambda: losses.append(step().item())), step, (lambda: losses)

def gpt2_gen(small:bool):
  import numpy as np
  from tinygrad import Tensor, TinyJit, Variable, nn
  layers, dim, heads, vocab, ctx, prompt = (2, 64, 2, 256, 64, 4) if small else (12, 768, 12, 50257, 1024, 16)
  class Attention:
    def __init__(self):
      self.c_attn, self.c_proj, self.hd = nn.Linear(dim, 3*dim), nn.Linear(dim, dim), dim // heads
      self.cache_kv = Tensor.zeros(2, 1, ctx, heads, self.hd).contiguous().realize()
    def __call__(self, x:Tensor, start_pos, mask:Tensor|None) -> Tensor:
      seqlen = x.shape[1]
      xq, xk, xv = [y.reshape(1, seqlen, heads, self.hd) for y in self.c_attn(x).chunk(3, dim=2)]
      self.cache_kv[:, :, start_pos:start_pos+seqlen].assign(Tensor.stack(xk, xv)).realize()
      keys, values = (xk, xv) if seqlen > 1 else (self.cache_kv[0, :, 0:start_pos+seqlen], self.cache_kv[1, :, 0:start_pos+seqlen])
      out = xq.transpose(1, 2).scaled_dot_product_attention(keys.transpose(1, 2), values.transpose(1, 2), mask)
      return self.c_proj(out.transpose(1, 2).reshape(1, seqlen, dim))
  class Block:
    def __init__(self): self.attn, self.ln_1, self.ln_2, self.c_fc, self.c_proj = Attention(), nn.LayerNorm(dim), nn.LayerNorm(dim), nn.Linear(dim, 4*dim), nn.Linear(4*dim, dim)
    def __call__(self, x:Tensor, start_pos, mask) -> Tensor:
      h = x + self.attn(self.ln_1(x), start_pos, mask)
      return h + self.c_proj(self.c_fc(self.ln_2(h)).gelu())
  class GPT2:
    def __init__(self):
      self.wte, self.wpe, self.h, self.ln_f = nn.Embedding(vocab, dim), nn.Embedding(ctx, dim), [Block() for _ in range(layers)], nn.LayerNorm(dim)
      self.lm_head, self.allpos = nn.Linear(dim, vocab, bias=False), Tensor.arange(ctx).reshape(1, -1).realize()
      self.decode = TinyJit(self.forward)
    def forward(self, tokens:Tensor, start_pos) -> Tensor:
      seqlen = tokens.shape[1]
      h = self.wte(tokens) + self.wpe(self.allpos[:, start_pos:start_pos+seqlen])
      mask = Tensor.full((1, 1, seqlen, seqlen), float("-inf")).triu(1) if seqlen > 1 else None   # the prompt starts at 0
      for b in self.h: h = b(h, start_pos, mask)
      return self.lm_head(self.ln_f(h))[:, -1, :].argmax(-1).realize()   # greedy: the same tokens in every mode
  model = GPT2()
  _init(model)
  toks = [int(t) for t in np.random.default_rng(1).integers(0, vocab, prompt)]
  def next_token() -> int:
    pos = len(toks) - 1
    toks.append(int(model.decode(Tensor([[toks[-1]]]), Variable("start_pos", 1, ctx - 1).bind(pos)).item()))
    return toks[-1]
  def first(): toks.append(int(model.forward(Tensor([toks]), 0).item()))
  return first, next_token, (lambda: toks[prompt:])   # every generated token: the symbolic decode kernels' output too

def _inference(model, bs:int, img:int):
  """An image model's forward under TinyJit on one fixed batch: (first, step, outputs) as every program returns them."""
  import numpy as np
  from tinygrad import Tensor, TinyJit
  _init(model)
  x = Tensor(np.random.default_rng(1).standard_normal((bs, 3, img, img)).astype(np.float32)).realize()
  jit, out = TinyJit(model.__call__), []
  return (lambda: out.extend(jit(x).numpy()[0, :8].tolist())), (lambda: jit(x)), (lambda: out)

def vit_infer(small:bool):
  from tinygrad import Tensor, nn
  bs, img, patch, dim, depth, heads, classes = (2, 32, 8, 32, 2, 2, 10) if small else (8, 224, 16, 192, 12, 3, 1000)
  n = (img // patch)**2 + 1
  class Block:
    def __init__(self): self.ln1, self.ln2, self.qkv, self.proj, self.fc1, self.fc2 = nn.LayerNorm(dim), nn.LayerNorm(dim), nn.Linear(dim, 3*dim), nn.Linear(dim, dim), nn.Linear(dim, 4*dim), nn.Linear(4*dim, dim)
    def __call__(self, x:Tensor) -> Tensor:
      q, k, v = self.qkv(self.ln1(x)).reshape(bs, n, 3, heads, dim // heads).permute(2, 0, 3, 1, 4)
      x = x + self.proj(q.scaled_dot_product_attention(k, v).transpose(1, 2).reshape(bs, n, dim))
      return x + self.fc2(self.fc1(self.ln2(x)).gelu())
  class ViT:
    def __init__(self):
      self.patch, self.cls, self.pos = nn.Conv2d(3, dim, patch, stride=patch), Tensor.zeros(1, 1, dim), Tensor.zeros(1, n, dim)
      self.blocks, self.norm, self.head = [Block() for _ in range(depth)], nn.LayerNorm(dim), nn.Linear(dim, classes)
    def __call__(self, x:Tensor) -> Tensor:
      x = self.cls.expand(bs, 1, dim).cat(self.patch(x).flatten(2).transpose(1, 2), dim=1) + self.pos
      return self.head(self.norm(x.sequential(self.blocks))[:, 0]).realize()
  return _inference(ViT(), bs, img)

def resnet18_infer(small:bool):
  from tinygrad import Tensor, nn
  bs, img, width, classes = (2, 32, 8, 10) if small else (8, 224, 64, 1000)
  class Basic:
    def __init__(self, cin:int, cout:int, stride:int):
      self.c1, self.b1, self.c2, self.b2 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm(cout), nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm(cout)
      self.down = [nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm(cout)] if stride != 1 or cin != cout else []
    def __call__(self, x:Tensor) -> Tensor: return (self.b2(self.c2(self.b1(self.c1(x)).relu())) + x.sequential(self.down)).relu()
  class ResNet18:
    def __init__(self):
      ws = [width, 2*width, 4*width, 8*width]
      self.stem, self.bn = nn.Conv2d(3, width, 7, 2, 3, bias=False), nn.BatchNorm(width)
      self.blocks = [Basic(cin, cout, s) for cin, cout, s in zip([width, width, ws[0], ws[1], ws[1], ws[2], ws[2], ws[3]], [ws[0], ws[0], ws[1], ws[1], ws[2], ws[2], ws[3], ws[3]], [1, 1, 2, 1, 2, 1, 2, 1])]
      self.fc = nn.Linear(ws[3], classes)
    def __call__(self, x:Tensor) -> Tensor:
      x = self.bn(self.stem(x)).relu().max_pool2d(3, 2, padding=1)
      return self.fc(x.sequential(self.blocks).mean((2, 3))).realize()
  return _inference(ResNet18(), bs, img)

# *** one run, in its own process ***

def _time_beam(log:Path, picks:Path):
  """Wall seconds inside tinygrad's beam_search, per kernel, written after each search (a run cut off keeps what it spent); and its
  picks as a kerntune cache (`picks`), keyed as drop-in tuning keys a kernel (its SINK before BEAM marks it), so beam2_replay can
  time BEAM=2's kernels in a later call, beside other runs."""
  import dataclasses, tinygrad.codegen as CG, tinygrad.codegen.opt.search as S
  from dataset.kernel import opts_to_json
  from search.cache import TunedCache
  orig, rewrite, spent, cur, cache = S.beam_search, CG.full_rewrite_to_sink, {}, [None], TunedCache(picks)
  def full_rewrite_to_sink(ast, *args, **kwargs):
    if ast.arg is not None and ast.arg.beam and ast.arg.opts_to_apply is None: cur[0] = ast.replace(arg=dataclasses.replace(ast.arg, beam=0)).key.hex()
    return rewrite(ast, *args, **kwargs)
  def beam_search(s, *args, **kwargs):
    st, pick_key = time.perf_counter(), cur[0]   # the kernel being lowered: its candidates' lowerings come after this
    try:
      k = orig(s, *args, **kwargs)
      if pick_key is not None: cache.put(pick_key, s.ren.target.device.split(":")[0], opts_to_json(k.applied_opts), strategy="beam2")
      return k
    finally:
      key = s.ast.key.hex()
      spent[key] = spent.get(key, 0.0) + time.perf_counter() - st
      log.write_text(json.dumps(spent))
  S.beam_search, CG.full_rewrite_to_sink = beam_search, full_rewrite_to_sink   # both looked up in their modules at each use
  return spent

def kernels_child(a) -> int:
  """Every kernel of the program's first result that both KERNTUNE's cache and BEAM=2's picks hold, timed in isolation with each
  (and tinygrad's default), cold (L2 flushed) and warm: where KERNTUNE's kernels lose to BEAM=2's, the gap of a step's time."""
  import search.cache as C
  from dataset.kernel import Kernel, opts_from_json
  from search.measure import Budget, Measurer
  runs_dir, asts, runs, phase = Path(a.result).parent, {}, {}, {}
  class Capture:   # a drop-in tuner that only records the kernels it is shown, how often each runs in its LINEAR, and where
    where = "first"
    def tune(self, linear, device, table, cache, captured=False):
      ks = [c.src[0] for c in linear.src if c.src[0].op.name == "SINK"]
      for u in ks:
        if (k := u.key.hex()) not in asts: asts[k], runs[k], phase[k] = (u, device), sum(x is u for x in ks), self.where
  C.enable(runs_dir / f"{a.child}.kernels.empty.json", tuner=(cap := Capture()))
  first, step, _ = globals()[a.child](a.small)
  first()
  # the steady state's kernels too: GPT-2's decode step compiles its own (symbolic) kernels, which the first result never runs
  cap.where = "step"
  for _ in range(2): step()
  kt, bm, rows = C.TunedCache(runs_dir / f"{a.child}.kerntune.tuned.json"), C.TunedCache(runs_dir / f"{a.child}.beam2.picks.json"), []
  workers = int(os.environ.get("KERNTUNE_WORKERS") or 0)
  for key, (ast, dev) in asts.items():
    if (k := kt.get(key, dev)) is None or (b := bm.get(key, dev)) is None: continue
    row = {"key": key, "runs": runs[key], "phase": phase[key], "kernel": k.get("name"), "kerntune_opts": k["opts"], "beam2_opts": b["opts"]}
    for timing in ("cold", "warm"):
      m = Measurer(Kernel(key, ast, row["kernel"] or "?", "dropin", "dropin"), dev, Budget(), workers=workers, timing=timing)
      try: row.update({f"{w}_{timing}_us": t*1e6 for w, t in zip(("default", "kerntune", "beam2"), m.measure([m.hand, opts_from_json(k["opts"]), opts_from_json(b["opts"])]))})
      except Exception as e: row["error"] = f"{type(e).__name__}: {e}"[:300]
      finally: m.close()
    rows.append(row)
  Path(a.result).write_text(json.dumps({"program": a.child, "mode": "kernels", "device": _device_name(), "done": True, "kernels": rows, "output": None}, indent=1))
  print(f"[{a.child} kernels] {len(rows)} kernels timed with KERNTUNE's and BEAM=2's configs", flush=True)
  return 0

def child(a) -> int:
  if a.mode == "kernels": return kernels_child(a)
  from tinygrad import Device
  t0 = float(os.environ["BENCH_T0"])
  spent = _time_beam(Path(a.beam_log), Path(a.result).with_name(f"{a.child}.beam2.picks.json")) if a.mode == "beam2" else None
  first, step, outputs = globals()[a.child](a.small)
  first()
  Device[Device.DEFAULT].synchronize()
  first_s = time.time() - t0
  print(f"[{a.child} {a.mode}] first result after {first_s:.1f} s", flush=True)
  for _ in range(WARMUP): step()
  dev, ts = Device[Device.DEFAULT], []
  dev.synchronize()
  for _ in range(a.steps):
    st = time.perf_counter(); step(); dev.synchronize()
    ts.append(time.perf_counter() - st)
  res = {"program": a.child, "mode": a.mode, "device": _device_name(), "first_result_s": first_s, "step_ms": statistics.median(ts)*1e3,
         "step_ms_all": [round(t*1e3, 4) for t in ts], "where": _where(), "output": outputs(), "done": True}
  if spent is not None: res.update(search_s=sum(spent.values()), searched=len(spent))
  if a.mode == "kerntune":
    import search.cache as C
    t = C.active_tuner()
    rep = t.report(C.DEFAULT)
    res.update(search_s=t.spent_s, tuned=rep["tuned"], left_default=rep["left_default"], timed=rep["timed"], gain=rep["gain"], phases=rep["phases"],
               waits=rep["waits"])
    res["env"] = {k: v for k, v in os.environ.items() if k.startswith("KERNTUNE_") and k not in ("KERNTUNE_CACHE", "KERNTUNE_REPORT")}
  Path(a.result).write_text(json.dumps(res, indent=1))
  print(f"[{a.child} {a.mode}] step {res['step_ms']:.3f} ms, search {res.get('search_s', 0):.1f} s", flush=True)
  return 0

def _where() -> dict:
  """Where a run's steps ran, to tell its step level by: replaying the same kernels, GPT-2's processes stepped at 7.4 or 11.4 ms
  (an H200, results/dropin_h200_jit.md), each steady at its own. The CPU it ended on and how many it may use, the kernels its LINEARs
  ran tuned and on tinygrad's default (search.cache.stats), and the GPU's clocks, power state and temperature right after."""
  import search.cache as C
  w = {"cpu": int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[36]), "cpus": len(os.sched_getaffinity(0)), **C.stats()}
  if gpu := _smi("clocks.sm,clocks.mem,pstate,temperature.gpu,power.draw"): w["gpu"] = gpu
  return w

def _smi(query:str) -> str:
  """nvidia-smi's answer to --query-gpu=QUERY for this process's GPU ("" without one)."""
  with __import__("contextlib").suppress(Exception):
    return subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader", "-i", os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0]],
                          capture_output=True, text=True, timeout=30).stdout.strip()
  return ""

def _device_name(dev:str|None=None) -> str:
  """The device a run's steps ran on, as its result records it; `dev` (--device) names it without initializing tinygrad's device in
  the parent process, which only starts the runs."""
  if dev is None:
    from tinygrad import Device
    dev = Device.DEFAULT
  if dev.upper() == "CUDA": return _smi("name") or "CUDA"
  import platform
  return f"{dev.upper()} ({platform.processor() or platform.machine()})"

# *** the benchmark ***

def run_one(a, prog:str, mode:str, out:Path, budget_s:float, tag:str="") -> dict:
  """One (program, mode) in a fresh process with empty caches, cut at budget_s; its result (or why there is none), in
  runs/PROG.MODE{tag}.json."""
  runs = out / "runs"
  res_p, beam_log, cachedb = runs / f"{prog}.{mode}{tag}.json", runs / f"{prog}.beam2.searched.json", runs / f"{prog}.{mode}{tag}.cachedb"
  prev = json.loads(res_p.read_text()) if res_p.is_file() else {}
  env = {k: v for k, v in os.environ.items() if not k.startswith(("KERNTUNE", "BEAM"))}
  # tinygrad's cache in a file of the run's own, without compiled programs (CCACHE=0): BEAM=2 neither reuses another run's work nor
  # pays for writing each candidate it compiles, and the file stays small enough to travel to the next call
  env.update(DEV=a.device, PYTHONUNBUFFERED="1", CACHEDB=str(cachedb), CCACHE="0", PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])))
  earlier = {}
  if mode == "beam2":
    env["BEAM"] = "2"
    # a run cut before takes up its search where it stopped: tinygrad's cache has its picks, the log its seconds
    if prev.get("cut") and beam_log.is_file(): earlier = json.loads(beam_log.read_text())
    else: cachedb.unlink(missing_ok=True); beam_log.unlink(missing_ok=True)
  else: cachedb.unlink(missing_ok=True)
  kc = runs / f"{prog}.kerntune.tuned.json"
  if mode == "kerntune":
    kc.unlink(missing_ok=True)
    env.update(KERNTUNE="1", KERNTUNE_CACHE=str(kc), KERNTUNE_REPORT=str(runs / f"{prog}.kerntune.report.json"))
    if a.workers is not None: env["KERNTUNE_WORKERS"] = str(a.workers)
    env.update(dict(kv.split("=", 1) for kv in a.kt_env))
  if mode == "replay": env["KERNTUNE_TUNED"] = str(kc)
  if mode == "beam2_replay": env["KERNTUNE_TUNED"] = str(runs / f"{prog}.beam2.picks.json")
  if mode == "kernels" and a.workers is not None: env["KERNTUNE_WORKERS"] = str(a.workers)
  res_p.unlink(missing_ok=True)
  cmd = [sys.executable, str(Path(__file__).resolve()), "--child", prog, "--mode", mode, "--steps", str(a.steps), "--result", str(res_p),
         "--beam-log", str(beam_log)] + (["--small"] if a.small else [])
  print(f"\n=== {prog} {mode}: " + (f"at most {budget_s:.0f} s" if budget_s < math.inf else "no deadline"), flush=True)
  env["BENCH_T0"] = str(time.time())
  p = subprocess.Popen(cmd, env=env, start_new_session=True)   # its own group: a cut kills its compile workers too
  try: rc = p.wait(timeout=max(1.0, budget_s) if budget_s < math.inf else None)
  except subprocess.TimeoutExpired:
    os.killpg(p.pid, signal.SIGKILL); p.wait()
    rc = None
  if rc == 0 and res_p.is_file():
    res = {**json.loads(res_p.read_text()), "call": a.call}
    if earlier:   # the seconds BEAM=2 searched in the runs cut before this one (its first result waited for them too)
      res["search_s_earlier"] = sum(s for k, s in earlier.items())
      res["search_s"] += res["search_s_earlier"]; res["first_result_s"] += res["search_s_earlier"]
  else:
    res = {"program": prog, "mode": mode, "done": False, "cut": rc is None, "rc": rc, "budget_s": budget_s, "call": a.call}
    if mode == "beam2" and beam_log.is_file():   # kept for the next call: what it searched so far, with the earlier cuts'
      beam_log.write_text(json.dumps({**earlier, **{k: s + earlier.get(k, 0.0) for k, s in json.loads(beam_log.read_text()).items()}}))
      res["searched_so_far"] = len(json.loads(beam_log.read_text()))
  res_p.write_text(json.dumps(res, indent=1))
  if mode != "beam2" or res.get("done"):   # only a cut BEAM=2 run's tinygrad cache is needed again
    for f in runs.glob(f"{cachedb.name}*"): f.unlink()
  return res

def run_turns(a, prog:str, out:Path, left) -> list[dict]:
  """--turns pairs of fresh processes, one replaying KERNTUNE's kernels and one BEAM=2's picks, back to back, the first of each pair
  alternating: a host-bound step moves with the host from one process to the next (GPT-2's sits near 7-8 or near 11-12 ms in either
  mode), so each pair gives a ratio and the pairs a spread. Pairs already in runs/PROG.turns.json are kept (a later call adds to
  them). left(): the seconds this call has left."""
  path = out / "runs" / f"{prog}.turns.json"
  pairs = json.loads(path.read_text())["pairs"] if path.is_file() else []
  while len(pairs) < a.turns:
    j = len(pairs)
    pair = {"call": a.call, "order": ["replay", "beam2_replay"][::1 if j % 2 == 0 else -1]}
    for mode in pair["order"]:
      if left() < 30: print(f"=== {prog} turns: no time left in this call for pair {j}", flush=True); return pairs
      r = run_one(a, prog, mode, out, left(), tag=f".turn{j}")
      if not r.get("done"): print(f"=== {prog} turns: {mode} of pair {j} {'cut' if r.get('cut') else 'failed, rc ' + str(r.get('rc'))}", flush=True); return pairs
      pair[mode] = r["step_ms"]
    pairs.append({**pair, "ratio": pair["replay"]/pair["beam2_replay"]})
    path.write_text(json.dumps({"program": prog, "pairs": pairs}, indent=1))
  return pairs

def _ratio(a, b) -> float|None: return a/b if a is not None and b else None

def summarize(out:Path, programs:list[str], command:str) -> dict:
  """OUT/dropin.json and dropin.md from the runs there."""
  rows, devices = [], set()
  for prog in programs:
    r = {m: json.loads(p.read_text()) for m in (*MODES, *REPLAYS) if (p := out / "runs" / f"{prog}.{m}.json").is_file()}
    done = {m: x for m, x in r.items() if x.get("done")}
    # KERNTUNE's steady state from the call BEAM=2's was timed in: its tuning run's, or a replay of its kernels there
    if {"replay", "beam2", "kerntune"} <= done.keys() and done["replay"].get("call") == done["beam2"].get("call") != done["kerntune"].get("call"):
      done["kerntune"] = {**done["kerntune"], "step_ms": done["replay"]["step_ms"], "step_ms_tuning_run": done["kerntune"]["step_ms"], "call": done["replay"]["call"]}
    # BEAM=2's steady state from a call after its search, beside KERNTUNE's: its picks replayed there
    if {"beam2_replay", "beam2", "kerntune"} <= done.keys() and done["beam2_replay"].get("call") == done["kerntune"].get("call") != done["beam2"].get("call"):
      done["beam2"] = {**done["beam2"], "step_ms": done["beam2_replay"]["step_ms"], "step_ms_search_run": done["beam2"]["step_ms"], "call": done["beam2_replay"]["call"]}
    for m in REPLAYS: done.pop(m, None)
    devices |= {x["device"] for x in done.values()}
    g = lambda m, k: done[m].get(k) if m in done else None
    row = {"name": prog, "kerntune_step_ms": g("kerntune", "step_ms"), "beam2_step_ms": g("beam2", "step_ms"), "default_step_ms": g("default", "step_ms"),
           "kerntune_search_s": g("kerntune", "search_s"), "beam2_search_s": g("beam2", "search_s"),
           "kerntune_first_result_s": g("kerntune", "first_result_s"), "beam2_first_result_s": g("beam2", "first_result_s"),
           "default_first_result_s": g("default", "first_result_s"), "devices": sorted({x["device"] for x in done.values()}),
           "kerntune_tuned": g("kerntune", "tuned"), "kerntune_left_default": g("kerntune", "left_default"), "beam2_searched": g("beam2", "searched"),
           "missing": [m for m in MODES if m not in done],
           "same_call": "kerntune" in done and "beam2" in done and done["kerntune"].get("call") == done["beam2"].get("call")}
    outs = {m: x["output"] for m, x in done.items()}
    # each mode's outputs against the plain run's: generated tokens, the share equal before the first that differs (a near-tie in
    # float32 can flip one, and the rest follows a new context); numbers, the largest relative difference
    if "default" in outs:
      ref, same = outs["default"], lambda o: next((i for i, (u, v) in enumerate(zip(o, ref)) if u != v), len(ref))
      row["output_vs_default"] = {m: (same(o)/max(1, len(ref)) if prog == "gpt2_gen" else max((abs(u - v)/max(abs(v), 1e-3) for u, v in zip(o, ref)), default=0.0))
                                  for m, o in outs.items() if m != "default"}
    kt, bm = _ratio(row["kerntune_step_ms"], row["beam2_step_ms"]), _ratio(row["kerntune_search_s"], row["beam2_search_s"])
    row.update(step_vs_beam2=kt, search_vs_beam2=bm)
    # the steady state from the alternated replays, where there are any: each pair's two processes ran back to back, in one call
    step, same = kt, row["same_call"]
    if (tp := out / "runs" / f"{prog}.turns.json").is_file() and (pairs := json.loads(tp.read_text())["pairs"]):
      step, same = statistics.median(p["ratio"] for p in pairs), True
      row.update(turns=[round(p["ratio"], 4) for p in pairs], step_vs_beam2_turns=step)
    # runs of two devices (a summary of another card's seeds) compare nothing: not met, nor unmet
    row["met"] = None if step is None or bm is None or len(row["devices"]) > 1 else bool(step <= 1.0 and bm <= 0.10 and same)
    rows.append(row)
  rep = {"device": " / ".join(sorted(devices)) or None, "date": time.strftime("%Y-%m-%d %H:%M"), "command": command, "programs": rows}
  (out / "dropin.json").write_text(json.dumps(rep, indent=1))
  f = lambda x, d=1: "-" if x is None else f"{x:.{d}f}"
  lines = [f"# Drop-in tuning vs BEAM=2: {rep['device']}, {rep['date']}", "", f"`{command}`", "",
           "Each program in fresh processes with empty caches: plain, BEAM=2, KERNTUNE=1 (drop-in, default budgets). Step: median "
           "steady-state step, device synchronized. Search: BEAM=2's seconds in beam_search; KERNTUNE's Tuner seconds. First: process "
           "start to the first result. Met: KERNTUNE step <= BEAM=2's at <= 10% of its search seconds, both steps timed in one call (where "
           "BEAM=2 finished in a later call than KERNTUNE tuned, KERNTUNE's cached kernels are replayed and timed in BEAM=2's call). "
           "Turns: pairs of processes replaying KERNTUNE's kernels and BEAM=2's picks back to back, alternating which goes first; "
           "where there are any, met takes their median ratio.", "",
           *[f"- {p}: {PROGRAMS[p]}{' (--small: tiny sizes)' if '--small' in command else ''}" for p in programs], "",
           "| program | plain ms | BEAM=2 ms | KERNTUNE ms | KT/BEAM | KT/BEAM turns: median (each) | BEAM=2 search s | KT search s | KT/BEAM search | first result s (plain / BEAM=2 / KT) | KT tuned (left default) | same call | met |",
           "|---|---:|---:|---:|---:|---|---:|---:|---:|---|---|---|---|"]
  for r in rows:
    left = ", ".join(f"{n} {k}" for k, n in (r["kerntune_left_default"] or {}).items())
    lines.append(f"| {r['name']} | {f(r['default_step_ms'], 3)} | {f(r['beam2_step_ms'], 3)} | {f(r['kerntune_step_ms'], 3)} | {f(r['step_vs_beam2'], 3)} | "
                 f"{f(r.get('step_vs_beam2_turns'), 3)}{' (' + ', '.join(f'{x:.3f}' for x in r['turns']) + ')' if r.get('turns') else ''} | "
                 f"{f(r['beam2_search_s'])} | {f(r['kerntune_search_s'])} | {f(r['search_vs_beam2'], 3)} | {f(r['default_first_result_s'])} / "
                 f"{f(r['beam2_first_result_s'])} / {f(r['kerntune_first_result_s'])} | {r['kerntune_tuned'] if r['kerntune_tuned'] is not None else '-'}"
                 f"{f' ({left})' if left else ''} | {'yes' if r['same_call'] else 'no'} | {'-' if r['met'] is None else 'yes' if r['met'] else 'no'}{' (missing: ' + ', '.join(r['missing']) + ')' if r['missing'] else ''} |")
  for prog in programs:   # where KERNTUNE's kernels lose to BEAM=2's (the kernels mode), by runs x time
    if not (p := out / "runs" / f"{prog}.kernels.json").is_file(): continue
    ks = [k for k in json.loads(p.read_text())["kernels"] if "error" not in k]
    tot = {f"{w}_{t}": sum(k["runs"]*k[f"{w}_{t}_us"] for k in ks) for w in ("default", "kerntune", "beam2") for t in ("cold", "warm")}
    # kernels the steady-state step compiled (GPT-2's decode step): the step time is theirs, not the first result's
    st = [k for k in ks if k.get("phase") == "step"]
    stt = {w: sum(k["runs"]*k[f"{w}_warm_us"] for k in st) for w in ("default", "kerntune", "beam2")}
    step_line = (f" Of these, the {len(st)} that only the steady-state step runs, summed warm: default {stt['default']:.0f}, KERNTUNE "
                 f"{stt['kerntune']:.0f}, BEAM=2 {stt['beam2']:.0f} us." if st else "")
    lines += ["", f"{prog}: {len(ks)} kernels timed alone with each config, runs x us summed: default {tot['default_cold']:.0f} cold / {tot['default_warm']:.0f} warm, "
              f"KERNTUNE {tot['kerntune_cold']:.0f} / {tot['kerntune_warm']:.0f}, BEAM=2 {tot['beam2_cold']:.0f} / {tot['beam2_warm']:.0f}.{step_line} Where KERNTUNE loses most (warm):", "",
              "| kernel | runs | in | default us | KERNTUNE us | BEAM=2 us | KERNTUNE opts | BEAM=2 opts |", "|---|---:|---|---:|---:|---:|---|---|"]
    lines += [f"| {k['kernel']} | {k['runs']} | {k.get('phase', 'first')} | {k['default_warm_us']:.1f} | {k['kerntune_warm_us']:.1f} | {k['beam2_warm_us']:.1f} | {k['kerntune_opts']} | {k['beam2_opts']} |"
              for k in sorted(ks, key=lambda k: k["runs"]*(k["beam2_warm_us"] - k["kerntune_warm_us"]))[:8]]
  if len(devices) > 1: lines += ["", f"Runs on different devices ({', '.join(sorted(devices))}): the step times do not compare."]
  (out / "dropin.md").write_text("\n".join(lines) + "\n")
  return rep

def main(argv=None) -> int:
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--device", default="CUDA")
  ap.add_argument("--programs", default=",".join(DEFAULT_PROGRAMS), help=f"comma list of {', '.join(PROGRAMS)}")
  ap.add_argument("--modes", default=",".join(MODES))
  ap.add_argument("--out", default="out/dropin")
  ap.add_argument("--small", action="store_true", help="tiny sizes: the whole benchmark on a CPU in minutes")
  ap.add_argument("--steps", type=int, default=50, help="timed steady-state steps per run")
  ap.add_argument("--cap", type=float, default=1800, help="seconds one run may take in all (BEAM=2 over several calls included)")
  ap.add_argument("--deadline", type=float, default=None, help="seconds this invocation may take: no run starts, or goes on, past it")
  ap.add_argument("--workers", type=int, default=None, help="KERNTUNE's compile workers (default: cores - 1 on a GPU)")
  ap.add_argument("--kt-env", action="append", default=[], metavar="KEY=VALUE", help="KERNTUNE's environment beyond the defaults "
                  "(search.dropin.from_env: KERNTUNE_BUDGET, KERNTUNE_TIMING, ...), for a variant of the drop-in run")
  ap.add_argument("--turns", type=int, default=3, help="pairs of replay processes --modes turns runs (KERNTUNE's kernels, BEAM=2's picks)")
  ap.add_argument("--summarize", action="store_true", help="only rebuild dropin.json/.md from OUT/runs")
  for hidden in ("--child", "--mode", "--result", "--beam-log"): ap.add_argument(hidden, help=argparse.SUPPRESS)   # one run's process
  a = ap.parse_args(argv)
  if a.child: return child(a)
  out, st = Path(a.out), time.time()
  a.call = f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"   # this invocation: which runs were timed beside each other
  (out / "runs").mkdir(parents=True, exist_ok=True)
  programs, modes = a.programs.split(","), a.modes.split(",")
  if bad := [p for p in programs if p not in PROGRAMS] + [m for m in modes if m not in (*MODES, *EXTRA)]: ap.error(f"unknown: {', '.join(bad)}")
  command = "python scripts/bench_dropin.py " + " ".join(map(shlex.quote, sys.argv[1:] if argv is None else argv))
  if a.summarize and (out / "dropin.json").is_file(): command = json.loads((out / "dropin.json").read_text())["command"]   # the runs' own
  runs = lambda prog, mode: json.loads(p.read_text()) if (p := out / "runs" / f"{prog}.{mode}.json").is_file() else {}
  call_left = lambda: math.inf if a.deadline is None else a.deadline - (time.time() - st)   # seconds this invocation has left
  # seeding a benchmark with another card's runs compares KERNTUNE with picks tuned for that card (GPT-2 seeded with an H100's BEAM=2
  # on an H200): refused before any work
  here = None if a.summarize else _device_name(a.device)
  if bad := [f"{out / 'runs' / f'{prog}.{m}.json'} ({r['device']})" for prog in programs for m in (*MODES, *REPLAYS)
             if here and (r := runs(prog, m)).get("done") and r.get("device") not in (None, here)]:
    print(f"bench_dropin: error: {len(bad)} run(s) in {out / 'runs'} were made on another device than this {here}: {', '.join(bad[:2])}",
          file=sys.stderr); return 2
  for prog in ([] if a.summarize else programs):
    for mode in [m for m in (*MODES, *EXTRA) if m in modes]:
      need = {"beam2_replay": ["beam2.picks"], "kernels": ["beam2.picks", "kerntune.tuned"], "turns": ["beam2.picks", "kerntune.tuned"]}.get(mode, [])
      if miss := [n for n in need if not (out / "runs" / f"{prog}.{n}.json").is_file()]: print(f"=== {prog} {mode}: no {', '.join(miss)}, skipped", flush=True); continue
      if mode == "turns":
        if len(pairs := run_turns(a, prog, out, call_left)) >= a.turns:
          print(f"=== {prog} turns: {len(pairs)} pairs, replayed KERNTUNE / BEAM=2 " + ", ".join(f"{p['ratio']:.3f}" for p in pairs), flush=True)
        summarize(out, programs, command); continue
      prev = runs(prog, mode)
      if prev.get("done"): print(f"=== {prog} {mode}: done before (step {prev['step_ms']:.3f} ms)", flush=True); continue
      spent = sum(json.loads(b.read_text()).values()) if mode == "beam2" and prev.get("cut") and (b := out / "runs" / f"{prog}.beam2.searched.json").is_file() else 0.0
      left = min(a.cap - spent, call_left())
      if prev and not prev.get("cut"): print(f"=== {prog} {mode}: failed before (rc {prev.get('rc')}): again", flush=True)
      if left < 30: print(f"=== {prog} {mode}: {'over its cap' if a.cap - spent < 30 else 'no time left in this call'}, skipped", flush=True); continue
      res = run_one(a, prog, mode, out, left)
      if not res.get("done"): print(f"=== {prog} {mode}: {'cut at ' + format(left, '.0f') + ' s' if res.get('cut') else 'failed, rc ' + str(res.get('rc'))}", flush=True)
      summarize(out, programs, command)
    # BEAM=2 done in a later call than KERNTUNE: KERNTUNE's kernels are timed again here, replayed, beside it
    kt, bm = runs(prog, "kerntune"), runs(prog, "beam2")
    if kt.get("done") and bm.get("call") == a.call and kt.get("call") != a.call and runs(prog, "replay").get("call") != a.call:
      if (left := call_left()) >= 30: run_one(a, prog, "replay", out, left); summarize(out, programs, command)
  rep = summarize(out, programs, command)
  print((out / "dropin.md").read_text())
  return 0 if all(not r["missing"] for r in rep["programs"]) else 1

if __name__ == "__main__": sys.exit(main())
