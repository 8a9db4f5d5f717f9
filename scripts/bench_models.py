"""Whole-model benchmark (issue 5), for the GPU host: ResNet-50 (torchvision's definition; batch 1 and 32, fp32 and fp16), CvT-13
and a GPT-2-small block stack at sequence length 512, all with random weights, each exported through torch.onnx and tuned by
tune-model, against tinygrad's BEAM=2 on the same kernels. BEAM=2 on ResNet-50 at batch 32 takes far longer than one 10-minute
call of the host, so the run is a queue of per-kernel jobs (below) that resumes from OUT/cache: run it again, with that folder,
until every model is measured; the last call takes --final. Writes OUT/models.json (merged as reports arrive), OUT/models.md,
OUT/tuned.json (every model's tuned kernels) and, where matplotlib imports, OUT/models.png.

  python scripts/bench_models.py --device CUDA --workers 15 --gpus 4 --seconds 540 --out results/models_run [--final]
  python scripts/bench_models.py --device CPU --models gpt2_tiny --seconds 300 --out /tmp/models --final   # a small whole run
  python scripts/bench_models.py --replot results/models.json        # the markdown and plot again, anywhere with matplotlib"""
from __future__ import annotations
import argparse, functools, json, math, os, sqlite3, subprocess, sys, tempfile, time
from pathlib import Path
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from dataset.errors import one_line  # noqa: E402
from search.beam_cache import beam_done, drop_beam, merge_beam, model_keys  # noqa: E402

# ***** CvT-13 (Wu et al. 2021, microsoft/CvT lib/models/cls_cvt.py, config cvt-13-224x224) *****

def cvt13(num_classes:int=1000):
  import torch, torch.nn as nn
  class ConvEmbed(nn.Module):   # overlapping conv patch embedding, LayerNorm over channels
    def __init__(self, cin, dim, k, stride, pad):
      super().__init__()
      self.proj, self.norm = nn.Conv2d(cin, dim, k, stride, pad), nn.LayerNorm(dim)
    def forward(self, x):
      x = self.proj(x)
      return self.norm(x.flatten(2).transpose(1, 2)), x.shape[2], x.shape[3]
  class ConvAttention(nn.Module):   # q/k/v through depthwise 3x3 conv + BN on the token map ("dw_bn"), k/v subsampled by 2
    def __init__(self, dim, heads):
      super().__init__()
      self.heads, self.scale = heads, dim ** -0.5   # CvT scales by the full dim
      self.conv = nn.ModuleList(nn.Sequential(nn.Conv2d(dim, dim, 3, s, 1, groups=dim, bias=False), nn.BatchNorm2d(dim)) for s in (1, 2, 2))
      self.lin, self.proj = nn.ModuleList(nn.Linear(dim, dim) for _ in range(3)), nn.Linear(dim, dim)   # qkv_bias=True
    def forward(self, x, h, w, cls:bool):
      if cls: c, x = x[:, :1], x[:, 1:]   # the cls token skips the conv projection
      b, d = x.shape[0], x.shape[2]
      fmap = x.transpose(1, 2).reshape(b, d, h, w)
      qkv = [conv(fmap).flatten(2).transpose(1, 2) for conv in self.conv]
      if cls: qkv = [torch.cat([c, y], 1) for y in qkv]
      q, k, v = [lin(y).reshape(b, -1, self.heads, d // self.heads).transpose(1, 2) for lin, y in zip(self.lin, qkv)]
      att = (q @ k.transpose(-2, -1) * self.scale).softmax(-1)
      return self.proj((att @ v).transpose(1, 2).reshape(b, -1, d))
  class Block(nn.Module):
    def __init__(self, dim, heads):
      super().__init__()
      self.norm1, self.attn, self.norm2 = nn.LayerNorm(dim), ConvAttention(dim, heads), nn.LayerNorm(dim)
      self.mlp = nn.Sequential(nn.Linear(dim, 4*dim), nn.GELU(), nn.Linear(4*dim, dim))   # exact (erf) GELU
    def forward(self, x, h, w, cls):
      x = x + self.attn(self.norm1(x), h, w, cls)
      return x + self.mlp(self.norm2(x))
  class CvT(nn.Module):
    # CvT-13: 3 stages, depths 1, 2, 10; dims 64, 192, 384; heads 1, 3, 6; embeddings 7x7 s4 p2, 3x3 s2 p1, 3x3 s2 p1; cls token in stage 3
    def __init__(self):
      super().__init__()
      cfg = [(3, 64, 1, 1, 7, 4, 2), (64, 192, 3, 2, 3, 2, 1), (192, 384, 6, 10, 3, 2, 1)]
      self.embed = nn.ModuleList(ConvEmbed(cin, d, k, s, p) for cin, d, _, _, k, s, p in cfg)
      self.stages = nn.ModuleList(nn.ModuleList(Block(d, hd) for _ in range(n)) for _, d, hd, n, *_ in cfg)
      self.cls_token = nn.Parameter(torch.randn(1, 1, 384) * 0.02)
      self.norm, self.head = nn.LayerNorm(384), nn.Linear(384, num_classes)
    def forward(self, x):
      for i, (embed, blocks) in enumerate(zip(self.embed, self.stages)):
        t, h, w = embed(x)
        cls = i == len(self.stages) - 1
        if cls: t = torch.cat([self.cls_token.expand(t.shape[0], -1, -1), t], 1)
        for blk in blocks: t = blk(t, h, w, cls)
        if cls: return self.head(self.norm(t[:, 0]))
        x = t.transpose(1, 2).reshape(t.shape[0], -1, h, w)
  return CvT()

# ***** GPT-2 small: 12 blocks (HF GPT2Block: pre-LN, causal attention, gelu_new = tanh GELU), final LayerNorm; no embeddings *****

def gpt2_stack(layers:int=12, dim:int=768, heads:int=12, seq:int=512):
  import torch, torch.nn as nn, torch.nn.functional as F
  class Block(nn.Module):
    def __init__(self):
      super().__init__()
      self.ln_1, self.c_attn, self.c_proj = nn.LayerNorm(dim), nn.Linear(dim, 3*dim), nn.Linear(dim, dim)
      self.ln_2, self.c_fc, self.mlp_proj = nn.LayerNorm(dim), nn.Linear(dim, 4*dim), nn.Linear(4*dim, dim)
      self.register_buffer("causal", torch.tril(torch.ones(seq, seq, dtype=torch.bool)))
    def forward(self, x):
      # python ints and floats only: arithmetic on traced x.shape makes CPU tensors, which the export of a CUDA module rejects
      q, k, v = [y.reshape(-1, seq, heads, dim // heads).transpose(1, 2) for y in self.c_attn(self.ln_1(x)).split(dim, -1)]
      att = (q @ k.transpose(-2, -1) * (dim // heads) ** -0.5).masked_fill(~self.causal, float("-inf")).softmax(-1)
      x = x + self.c_proj((att @ v).transpose(1, 2).reshape(-1, seq, dim))
      return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))
  class Stack(nn.Module):
    def __init__(self):
      super().__init__()
      self.h, self.ln_f = nn.ModuleList(Block() for _ in range(layers)), nn.LayerNorm(dim)
    def forward(self, x):
      for blk in self.h: x = blk(x)
      return self.ln_f(x)
  return Stack()

def resnet50():
  import torchvision
  return torchvision.models.resnet50(weights=None)

# ***** the unseen networks (scripts/bench_unseen.py): architectures the corpus holds at no shape *****

def torchvision_model(name:str):
  import torchvision
  return getattr(torchvision.models, name)(weights=None)

def encoder(layers:int, dim:int, heads:int, seq:int, mlp:int, pre_norm:bool, front=None):
  """A transformer encoder: BERT's (post-norm, erf GELU) or Whisper's (pre-norm, with its conv front end `front`)."""
  import torch.nn as nn, torch.nn.functional as F
  class Block(nn.Module):
    def __init__(self):
      super().__init__()
      self.qkv, self.proj, self.fc1, self.fc2 = nn.Linear(dim, 3*dim), nn.Linear(dim, dim), nn.Linear(dim, mlp), nn.Linear(mlp, dim)
      self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
    def attn(self, x):
      q, k, v = [y.reshape(-1, seq, heads, dim // heads).transpose(1, 2) for y in self.qkv(x).split(dim, -1)]
      att = (q @ k.transpose(-2, -1) * (dim // heads) ** -0.5).softmax(-1)
      return self.proj((att @ v).transpose(1, 2).reshape(-1, seq, dim))
    def forward(self, x):
      if pre_norm:
        x = x + self.attn(self.ln1(x))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))
      x = self.ln1(x + self.attn(x))
      return self.ln2(x + self.fc2(F.gelu(self.fc1(x))))
  class Encoder(nn.Module):
    def __init__(self):
      super().__init__()
      self.front, self.blocks, self.ln = front, nn.ModuleList(Block() for _ in range(layers)), nn.LayerNorm(dim) if pre_norm else nn.Identity()
    def forward(self, x):
      if self.front is not None: x = self.front(x)
      for b in self.blocks: x = b(x)
      return self.ln(x)
  return Encoder()

def whisper_tiny_encoder():
  """Whisper-tiny's encoder: two convs over 80 mel bins x 3000 frames (the second of stride 2), GELU, sinusoid positions, 4 pre-norm blocks."""
  import torch, torch.nn as nn, torch.nn.functional as F
  class Front(nn.Module):
    def __init__(self):
      super().__init__()
      self.conv1, self.conv2 = nn.Conv1d(80, 384, 3, padding=1), nn.Conv1d(384, 384, 3, stride=2, padding=1)
      t = torch.arange(1500)[:, None] / 10000 ** (torch.arange(192)[None] / 191)
      self.register_buffer("pos", torch.cat([t.sin(), t.cos()], 1))
    def forward(self, x): return F.gelu(self.conv2(F.gelu(self.conv1(x)))).transpose(1, 2) + self.pos
  return encoder(4, 384, 6, 1500, 1536, True, Front())

def llama_block(dim:int=2048, heads:int=32, kv_heads:int=4, mlp:int=5632, seq:int=512):
  """A LLaMA-style decoder block at TinyLlama-1.1B's sizes: RMSNorm, rotary positions, grouped-query causal attention, SwiGLU."""
  import torch, torch.nn as nn, torch.nn.functional as F
  hd = dim // heads
  class RMSNorm(nn.Module):
    def __init__(self): super().__init__(); self.w = nn.Parameter(torch.ones(dim))
    def forward(self, x): return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-5).to(x.dtype) * self.w
  class Block(nn.Module):
    def __init__(self):
      super().__init__()
      self.n1, self.n2 = RMSNorm(), RMSNorm()
      self.q, self.kv, self.o = nn.Linear(dim, dim, bias=False), nn.Linear(dim, 2*kv_heads*hd, bias=False), nn.Linear(dim, dim, bias=False)
      self.gate, self.up, self.down = nn.Linear(dim, mlp, bias=False), nn.Linear(dim, mlp, bias=False), nn.Linear(mlp, dim, bias=False)
      f = torch.arange(seq)[:, None] * 10000 ** (-torch.arange(0, hd, 2)[None] / hd)
      self.register_buffer("cos", torch.cat([f.cos()]*2, -1)); self.register_buffer("sin", torch.cat([f.sin()]*2, -1))
      self.register_buffer("causal", torch.tril(torch.ones(seq, seq, dtype=torch.bool)))
    def rope(self, x): return x * self.cos + torch.cat([-x[..., hd//2:], x[..., :hd//2]], -1) * self.sin
    def forward(self, x):
      h = self.n1(x)
      q = self.rope(self.q(h).reshape(-1, seq, heads, hd).transpose(1, 2))
      k, v = [y.reshape(-1, seq, kv_heads, hd).transpose(1, 2) for y in self.kv(h).split(kv_heads*hd, -1)]
      k, v = self.rope(k).repeat_interleave(heads // kv_heads, 1), v.repeat_interleave(heads // kv_heads, 1)
      att = (q @ k.transpose(-2, -1) * hd ** -0.5).masked_fill(~self.causal, float("-inf")).softmax(-1)
      x = x + self.o((att @ v).transpose(1, 2).reshape(-1, seq, dim))
      h = self.n2(x)
      return x + self.down(F.silu(self.gate(h)) * self.up(h))
  return Block()

# name: (builder, input shape, dtype)
UNSEEN = {
  "mobilenet_v2_b1_fp32": (functools.partial(torchvision_model, "mobilenet_v2"), (1, 3, 224, 224), "fp32"),
  "efficientnet_b0_b1_fp32": (functools.partial(torchvision_model, "efficientnet_b0"), (1, 3, 224, 224), "fp32"),
  "vit_b_16_b1_fp16": (functools.partial(torchvision_model, "vit_b_16"), (1, 3, 224, 224), "fp16"),
  "convnext_tiny_b8_fp16": (functools.partial(torchvision_model, "convnext_tiny"), (8, 3, 224, 224), "fp16"),
  "bert_base_s128_fp32": (lambda: encoder(12, 768, 12, 128, 3072, False), (1, 128, 768), "fp32"),
  "whisper_tiny_encoder_fp32": (whisper_tiny_encoder, (1, 80, 3000), "fp32"),
  "llama_block_s512_fp16": (llama_block, (1, 512, 2048), "fp16"),
}
MODELS = {
  "resnet50_b1_fp32": (resnet50, (1, 3, 224, 224), "fp32"), "resnet50_b32_fp32": (resnet50, (32, 3, 224, 224), "fp32"),
  "resnet50_b1_fp16": (resnet50, (1, 3, 224, 224), "fp16"), "resnet50_b32_fp16": (resnet50, (32, 3, 224, 224), "fp16"),
  "cvt13_b1_fp32": (cvt13, (1, 3, 224, 224), "fp32"), "gpt2_s512_fp32": (gpt2_stack, (1, 512, 768), "fp32"),
  "cvt13_b1_fp16": (cvt13, (1, 3, 224, 224), "fp16"), "gpt2_s512_fp16": (gpt2_stack, (1, 512, 768), "fp16"),   # on request (--models)
  "gpt2_tiny": (lambda: gpt2_stack(layers=2, dim=64, heads=2, seq=32), (1, 32, 64), "fp32"),   # a whole run in minutes on a CPU
  **UNSEEN,
}
# the order a run takes them in: one of each architecture first, the cheapest first
ORDER = ["gpt2_s512_fp32", "resnet50_b1_fp32", "cvt13_b1_fp32", "resnet50_b1_fp16", "resnet50_b32_fp16", "resnet50_b32_fp32"]

def build(name:str, device:str, seed:int=0):
  """The module (eval, random weights: the default init) and its input, on the GPU when there is one (half-precision export runs there)."""
  import torch
  fn, shape, dtype = MODELS[name]
  torch.manual_seed(seed)
  m = fn().eval()
  dev = "cuda" if device == "CUDA" and torch.cuda.is_available() else "cpu"
  dt = torch.float16 if dtype == "fp16" else torch.float32
  return m.to(dev, dt), (torch.randn(*shape, device=dev).to(dt),)

# ***** the run: jobs that one worker per GPU claims, resumable across calls *****
# Per model, in the order workers take them:
#   tune MODEL     the learned search on every kernel, into CACHE/MODEL.tuned.json; the kernels go to CACHE/MODEL.kernels.pkl
#   beam KEY       tinygrad's BEAM=2 on one kernel (search.tune_model.beam_kernels), into CACHE/beam2.gpuG.json (one file per worker)
#   measure MODEL  once BEAM has every kernel of MODEL: tune_model with everything cached, which searches nothing and measures
#                  default, tuned and BEAM=2 latency, PyTorch eager and torch.compile in one process; CACHE/MODEL.report.json
# A job is claimed by creating its file in a directory of this run (O_EXCL), so no two workers take one job; results are kept per
# kernel as found, so a call cut off by its time limit loses at most the jobs in flight, and the next call (with CACHE) goes on.
# Tuning seconds are sums over kernels of the seconds each search took (kept in the cache entries), on whichever call it ran.

def _claim(claims:Path, job:str) -> bool:
  try: os.close(os.open(claims / job.replace("/", "_"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)); return True
  except FileExistsError: return False

def _report_done(cache:Path, n:str) -> bool:
  f = cache / f"{n}.report.json"
  return f.is_file() and json.loads(f.read_text()).get("beam2_ms") is not None

def worker(a, names:list[str], cache:Path, claims:Path, gpu:int):
  import pickle
  from search.cache import TunedCache, _key
  from search.tune_model import NEXT_GAIN, beam_kernels, load_history, open_model, tune_kernels, tune_model
  from search.measure import shared_pool
  from bench_search import warm_pools
  from search.cli import load_model
  from dataset.device import device_info, open_device
  device, next_gain = a.device, NEXT_GAIN if a.next_gain is None else a.next_gain
  first_share = a.first_share or None
  history = False if a.no_history else a.history
  open_device(device)
  log = lambda s: print(f"[gpu{gpu}] {s}", flush=True)
  start, kernels = time.time(), {}
  def loaded(n):
    if n not in kernels and (f := cache / f"{n}.kernels.pkl").is_file(): kernels[n] = pickle.loads(f.read_bytes())
    return kernels.get(n)
  while time.time() - start < a.seconds:
    beam_open, job, done = time.time() - start < a.seconds - a.reserve, None, beam_done(cache)
    # models one after another (all GPUs on one model's BEAM kernels finish it soonest): a model ready to measure first, then
    # the first model in --models order with a job left; with --final, after the BEAM cut-off, every model is measured as it is
    for n in names:
      if loaded(n) is None or _report_done(cache, n): continue
      complete = all(_key(k.key, device) in done for k in kernels[n]["order"])
      if (complete or (a.final and not beam_open)) and _claim(claims, f"measure.{n}"): job = ("measure", n); break
    for n in names if job is None else []:
      if loaded(n) is None:
        if (beam_open or a.final) and _claim(claims, f"tune.{n}"): job = ("tune", n); break
      elif beam_open and (k := next((k for k in kernels[n]["order"] if _key(k.key, device) not in done and _claim(claims, f"beam.{k.key}")), None)):
        job = ("beam", n, k); break
    if job is None:
      waiting = [n for n in names if not _report_done(cache, n) and not (claims / f"measure.{n}").exists()
                 and not (cache / f"{n}.error.json").exists()]
      if not waiting or (not beam_open and not a.final): break
      time.sleep(3); continue
    st = time.time()
    try:
      if job[0] == "tune":
        n = job[1]
        if a.workers > 1: shared_pool(device, a.workers)   # as tune-model starts it: while the model loads, not in the tuning
        module, xs = build(n, device, a.seed)
        _, m, ks, counts, _ = open_model(module, xs, device, n)
        dev_name, arch, props = device_info(device)
        cm, cm_path = load_model(a.model, device, dev_name, arch, False)
        scorer = cm.scorer(props, not a.no_compile_penalty)
        # the pool's workers started and holding the model before the tuning is timed, as bench_search and bench_unseen compare
        # searches: in steady state. Tuned first on its GPU's process, MobileNetV2 and EfficientNet-B0 timed their first default
        # 1.6-5.1 s after the tuning began, the networks after them 0.2-1.5 s (ten 4 x H100 calls of 2026-11-27/28)
        warm_pools(device, a.workers, scorer)
        rows = tune_kernels(ks, counts, device, TunedCache(cache / f"{n}.tuned.json"), a.strategy, a.budget, a.time_budget,
                            scorer, Path(cm_path).name, False, a.workers, a.seed, log, a.strategy_args,
                            next_gain, load_history(history, device, arch), a.timing, first_share, a.later_share,
                            a.second_share)
        (cache / f"{n}.tune.json").write_text(json.dumps(rows, indent=1, default=float))   # per kernel: phases, rounds, trajectory
        share = {r["key"]: r["share"] or 0.0 for r in rows}
        tmp = cache / f".{n}.kernels.pkl.{gpu}"
        tmp.write_bytes(pickle.dumps({"order": sorted(ks, key=lambda k: -share[k.key])}))   # BEAM takes the largest first
        os.replace(tmp, cache / f"{n}.kernels.pkl")
      elif job[0] == "beam":
        beam_kernels([job[2]], device, TunedCache(cache / f"beam2.gpu{gpu}.json"), 2, a.workers, True, log)
      else:
        n = job[1]
        merged = cache / f".beam2.{n}.json"
        merged.write_text(json.dumps(beam_done(cache)))
        module, xs = build(n, device, a.seed)
        rep = tune_model(module, xs, name=n, device=device, budget=a.budget, time_budget=a.time_budget, strategy=a.strategy,
                         cost_model=a.model, cache=cache / f"{n}.tuned.json", compare_beam=2, beam_cache=merged, search_beam=False,
                         runs=a.runs, workers=a.workers, seed=a.seed, compile_penalty=not a.no_compile_penalty, log=log,
                         strategy_args=a.strategy_args, next_gain=next_gain, history=history, timing=a.timing, first_share=first_share,
                         later_share=a.later_share, second_share=a.second_share,
                         torch_compile=device != "CUDA")
        merged.unlink()
        if rep.get("torch_compile_error") and device == "CUDA": rep.update(torch_compiled(a, n, cache))
        (cache / f"{n}.report.json").write_text(json.dumps({**rep, "gpu": gpu}, indent=1, default=float))
      log(f"{job[0]} {job[1]}{' ' + job[2].name if job[0] == 'beam' else ''}: {time.time() - st:.1f} s")
    except Exception as e:   # one job failing (an op tinygrad lacks, memory) loses nothing else; measure records it in the report
      import traceback; traceback.print_exc()
      if job[0] != "beam":
        (cache / f"{job[1]}.{'report' if job[0] == 'measure' else 'error'}.json").write_text(json.dumps({"error": one_line(e)}))

def torch_compiled(a, n:str, cache:Path) -> dict:
  """torch.compile's latency from a fresh process: in one that holds tinygrad's CUDA context, triton's launches fail ("invalid
  resource handle"). The same seed builds the same weights and inputs."""
  f = cache / f".{n}.torch.json"
  try:
    subprocess.run([sys.executable, __file__, "--device", a.device, "--torch-compile", n, "--runs", str(a.runs), "--seed", str(a.seed),
                    "--out", str(f)], timeout=300, check=True)
    return {**json.loads(f.read_text()), "torch_compile_error": None, "torch_compile_process": "separate"}
  except Exception as e: return {"torch_compile_error": f"in a separate process too: {one_line(e)}"}

def torch_compile_latency(a, n:str, out:Path):
  import torch
  from search.tune_model import torch_latency
  module, xs = build(n, a.device, a.seed)
  torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False   # as tune_model: fp32 stays fp32
  out.write_text(json.dumps({"torch_compile_ms": torch_latency(torch.compile(module), list(xs), a.runs, a.device == "CUDA")[0]}))

def merge(a, names:list[str], out:Path, cache:Path):
  """CACHE's reports into OUT/models.json (BEAM incomplete: the report says how far it got), the tuned caches into OUT/tuned.json."""
  path = out / "models.json"
  res = json.loads(path.read_text()) if path.is_file() else {"models": {}}
  for n in names:
    if (f := cache / f"{n}.report.json").is_file(): rep = json.loads(f.read_text())
    elif (f := cache / f"{n}.error.json").is_file(): rep = json.loads(f.read_text())
    else: continue
    if "error" not in rep and (ds := dataset_keys(rep["backend"])) is not None:
      rep["kernels_in_dataset"] = len(ds & {r["key"] for r in rep["kernels"]})
    res["models"][n] = rep
    res.update(device=rep.get("device", res.get("device")), date=time.strftime("%Y-%m-%d"))
  res["command"] = "python scripts/bench_models.py " + " ".join(a.argv)
  res["host_probe_s"] = a.host_probe   # this host's speed, from run(): BEAM=2's seconds may be another host's
  path.write_text(json.dumps(res, indent=1, default=float))
  tuned = {}
  for n in names:
    if (f := cache / f"{n}.tuned.json").is_file(): tuned.update(json.loads(f.read_text()))
  if tuned: (out / "tuned.json").write_text(json.dumps(tuned, indent=1))

def run(a, names:list[str], out:Path) -> int:
  """One worker per GPU (CUDA_VISIBLE_DEVICES) until the jobs run out or --seconds pass, then merge."""
  from dataset.device import host_probe
  a.host_probe = host_probe()   # once, before the workers load the host's cores (merge runs every 5 s while they tune)
  cache = Path(a.cache or out / "cache"); cache.mkdir(parents=True, exist_ok=True)
  for f in cache.glob("*.error.json"): f.unlink()   # a failed tune job is tried again
  claims = Path(tempfile.mkdtemp(prefix="bench_models_claims_"))
  log = open(out / "bench_models.log", "a")
  args = [*_drop(a.argv, ("--gpus", "--cache", "--out")), "--cache", str(cache), "--out", str(out)]
  procs = [subprocess.Popen([sys.executable, __file__, *args, "--worker", str(g), "--claims", str(claims)], stdout=log, stderr=subprocess.STDOUT,
                            env={**os.environ, "CUDA_VISIBLE_DEVICES": str(g)} if a.device == "CUDA" else None) for g in a.gpus]
  while any(p.poll() is None for p in procs):
    time.sleep(5); merge(a, names, out, cache)
  merge(a, names, out, cache)
  res = json.loads((out / "models.json").read_text())["models"]
  return 0 if all(n in res and "error" not in res[n] and res[n].get("beam2_ms") is not None for n in names) else 1

@functools.cache
def dataset_keys(device:str) -> set[str]|None:
  """Kernel keys of the shipped dataset the cost model was trained on: kernels of these models it has seen were not held out.
  None if the dataset is not here (a GPU-host call leaves it out of the tree): unknown, not zero."""
  db = ROOT / "dataset" / "data" / ("cuda.sqlite" if device == "CUDA" else "cpu.sqlite")
  if not db.is_file(): return None
  with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c: return {k for (k,) in c.execute("SELECT key FROM kernels")}

def _gpus(s:str) -> list[int]:
  """--gpus: N (the first N GPUs) or a comma list of GPU ids, so that two runs can share a host on disjoint GPUs."""
  ids = [int(x) for x in s.split(",") if x]
  return ids if "," in s else list(range(ids[0]))

def _drop(argv:list[str], flags:tuple[str, ...]) -> list[str]:
  """argv without `flags` and their values (--flag VALUE or --flag=VALUE)."""
  out, skip = [], False
  for x in argv:
    if skip: skip = False; continue
    if x in flags: skip = True; continue
    if x.split("=")[0] in flags: continue
    out.append(x)
  return out

# ***** report *****

def write_markdown(res:dict, path:Path):
  f = lambda x, p=2: "-" if x is None else f"{x:.{p}f}"
  lines = [f"# Whole models: {res.get('device')}, {res.get('date')}", "", f"`{res.get('command')}`", "",
           "Latency in ms (default, BEAM=2 and tuned: median of TinyJit runs, device synchronized, the three taking turns where the report says so in its latency field; PyTorch: median of synchronized runs), tuning in seconds.", "",
           "| model | default | BEAM=2 | tuned | torch eager | torch.compile | BEAM=2 tuning s | tuned tuning s | tuned / BEAM=2 | tuning / BEAM=2's | max abs err | outputs |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
  for name, r in res["models"].items():
    if "error" in r: lines.append(f"| {name} | error: {r['error']} |" + " |"*11); continue
    b, bt = r.get("beam2_ms"), r.get("beam2_tune_s") if r.get("beam2_ms") is not None else None
    lines.append(f"| {name} | {f(r['default_ms'])} | {f(b)} | {f(r['tuned_ms'])} | {f(r['torch_eager_ms'])} | {f(r['torch_compile_ms'])} | "
                 f"{f(bt, 1)} | {f(r['tune_s'], 1)} | {f(r['tuned_ms']/b if b else None, 3)} | {f(r['tune_s']/bt if bt else None, 3)} | "
                 f"{r['max_abs_err']:.2e} | {'match' if r['outputs_match'] else 'DIFFER'} |")
  notes = [f"- {n}: torch.compile: {r['torch_compile_error']}" for n, r in res["models"].items() if r.get("torch_compile_error")]
  notes += [f"- {n}: no BEAM=2 latency: {r['beam2_error']} ({r['beam2_tune_s']:.0f} s of BEAM=2 search so far)"
            for n, r in res["models"].items() if r.get("beam2_error")]
  indata = lambda r: f"; {r['kernels_in_dataset']} of them in the cost model's training data" if "kernels_in_dataset" in r else ""
  notes += [f"- {n}: {r['kernels_distinct']} distinct kernels ({r['kernel_launches']} launches{indata(r)}); the learned search timed "
            f"{sum(k['timed'] for k in r['kernels'])} candidates in all "
            f"(BEAM=2: {sum(k.get('beam_timed') or 0 for k in r['kernels'])}), strategy {r['strategy']}, cost model "
            f"{Path(r['cost_model']).name}" for n, r in res["models"].items() if "error" not in r]
  notes += [f"- {x}" for x in res.get("notes", [])]
  head = [f"Host: {res['host']}", "", f"Reproduce: {res['reproduce']}", ""] if res.get("host") else []
  if res.get("logs"): head += ["Logs of the calls (each host call's log, its GPUs and per-kernel tuning rows): " + ", ".join(f"`{l}`" for l in res["logs"]), ""]
  path.write_text("\n".join(lines + [""] + head + notes) + "\n")

def plot(res:dict, path:Path):
  """Latency per model relative to tinygrad's default (left), and tuning seconds, BEAM=2 against tune-model (right)."""
  import matplotlib; matplotlib.use("Agg")
  import matplotlib.pyplot as plt
  rows = {n: r for n, r in res["models"].items() if "error" not in r}
  if not rows: return
  fig, (ax, bx) = plt.subplots(1, 2, figsize=(14, 4.5))
  keys = [("beam2_ms", "BEAM=2"), ("tuned_ms", "tuned"), ("torch_eager_ms", "torch eager"), ("torch_compile_ms", "torch.compile")]
  width = 0.8/len(keys)
  for j, (k, label) in enumerate(keys):
    ax.bar([i + j*width for i in range(len(rows))], [(r[k] or math.nan)/r["default_ms"] for r in rows.values()], width, label=label)
  ax.axhline(1, color="gray", ls="--", label="tinygrad default")
  ax.set_xticks([i + 0.4 - width/2 for i in range(len(rows))], list(rows), rotation=30, ha="right")
  ax.set_ylabel("latency / tinygrad default"); ax.legend(fontsize=8)
  for j, (k, label) in enumerate([("beam2_tune_s", "BEAM=2"), ("tune_s", "tune-model")]):
    bx.bar([i + j*0.4 for i in range(len(rows))], [r[k] or math.nan for r in rows.values()], 0.4, label=label)
  bx.set_xticks([i + 0.2 for i in range(len(rows))], list(rows), rotation=30, ha="right")
  bx.set_yscale("log"); bx.set_ylabel("tuning seconds"); bx.legend(fontsize=8)
  fig.suptitle(f"{res.get('device')}, {res.get('date')}"); fig.tight_layout(); fig.savefig(path, dpi=90)

def finish(res_path:Path, no_plot:bool):
  res = json.loads(res_path.read_text())
  write_markdown(res, res_path.with_suffix(".md"))
  if no_plot: return
  try: import matplotlib  # noqa: F401
  except ImportError: print("no matplotlib: no plot (run --replot where it is installed)", file=sys.stderr); return
  plot(res, res_path.with_suffix(".png"))

def phases(paths:list[Path], first:int=9) -> list[dict]:
  """Offline: where a tune-model run's tuning went, from its MODEL.tune.json rows (a host call's results.tgz holds them under cache/):
  the seconds (tune_s sums to the wall), candidates compiled and timed, when the last kernel's first `first` timings (its default
  and its first batch) were done and when its last timing was (seconds since its Measurer started: they start within the setup's
  first second or so), and what the timings after those bought: the tuned model's time they saved, as a share of it. Where the
  folder also holds BEAM=2's results (beam2.*.json, as a host call's cache/ does): the kernels whose tuned time lies furthest behind
  the time BEAM=2's own search measured (often another call's: a guide to where a network's gap lies, not a figure)."""
  out = []
  for p in paths:
    rows = json.loads(Path(p).read_text())
    beam = {k.split("|")[0]: v for b in Path(p).parent.glob("beam2.*.json") for k, v in json.loads(b.read_text()).items()}
    lost = sorted(((r["occurrences"]*(r["tuned_us"] - b["time_us"]), r, b) for r in rows if r.get("tuned_us") is not None
                   and (b := beam.get(r.get("key", ""))) and b.get("time_us")), key=lambda x: -x[0])
    runs = [r for r in rows if r.get("trajectory")]
    model_us = sum(r["occurrences"]*r["tuned_us"] for r in rows if r.get("tuned_us") is not None)
    saved = sum(r["occurrences"]*(r["trajectory"][first - 1][2] - r["trajectory"][-1][2]) for r in runs if len(r["trajectory"]) > first)
    out.append({"file": str(p), "kernels": len(rows), "tune_s": round(sum(r["tune_s"] or 0.0 for r in rows), 1),
                "compiled": sum(r["compiled"] for r in rows), "timed": sum(r["timed"] for r in rows),
                "first_rounds_done_s": round(max((r["trajectory"][min(first, len(r["trajectory"])) - 1][1] for r in runs), default=0.0), 1),
                "last_timing_s": round(max((r["trajectory"][-1][1] for r in runs), default=0.0), 1),
                "kernels_timed_later": sum(len(r["trajectory"]) > first for r in runs),
                "later_saved_share": round(saved/model_us, 4) if model_us else None,
                **({"behind_beam2": [{"kernel": r["kernel"], "share": r.get("share"), "tuned_us": round(r["tuned_us"], 1),
                    "beam2_us": round(b["time_us"], 1), "timed": r["timed"], "beam2_timed": b.get("timed"), "lost_us": round(x, 1)}
                   for x, r, b in lost[:5] if x > 0]} if beam else {})})
  return out

def main(argv=None) -> int:
  ap = argparse.ArgumentParser("bench_models")
  ap.add_argument("--models", default=",".join(ORDER), help="comma list of: " + ", ".join(MODELS) + "; or 'unseen' (scripts/bench_unseen.py's networks)")
  ap.add_argument("--model", default=None, help="cost model (default: the shipped one for the device's arch)")
  ap.add_argument("--device", default=None)
  ap.add_argument("--budget", type=int, default=None, help="timed candidates per model (default: tune-model's)")
  ap.add_argument("--time-budget", type=float, default=None, help="search seconds per model")
  ap.add_argument("--strategy", default="beam")
  ap.add_argument("--next-gain", type=float, default=None, help="tune-model's --next-gain (default: its own)")
  ap.add_argument("--strategy-args", type=json.loads, default=None, metavar="JSON", help="the learned strategy's parameters (tune-model's)")
  ap.add_argument("--first-share", type=float, default=0.0, help="tune-model's --first-share (default 0: off)")
  ap.add_argument("--second-share", type=float, default=None, help="tune-model's --second-share (default: off)")
  ap.add_argument("--later-share", default=None, help="tune-model's --later-share (default: its own; off: no limit)")
  ap.add_argument("--no-compile-penalty", action="store_true", help="the learned search ranks by the cost model alone")
  ap.add_argument("--timing", choices=("cold", "warm", "auto"), default="cold", help="tune-model's --timing")
  ap.add_argument("--history", default=None, help="tune-model's --history (default: the shipped one for the arch)")
  ap.add_argument("--no-history", action="store_true", help="tune-model's --no-history: search from the cost model alone")
  ap.add_argument("--runs", type=int, default=20)
  ap.add_argument("--workers", type=int, default=0, help="compile processes for the learned search")
  ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--gpus", type=_gpus, default=[0], help="workers, one per GPU: a count N (GPUs 0..N-1) or GPU ids with a comma (2,3 or 3,)")
  ap.add_argument("--seconds", type=float, default=540, help="stop taking jobs after this long (the host's call limit)")
  ap.add_argument("--reserve", type=float, default=150, help="no new BEAM jobs in the last this many seconds: time to measure")
  ap.add_argument("--final", action="store_true", help="then measure every model, BEAM incomplete or not (the last call)")
  ap.add_argument("--cache", default=None, help="per-model caches, kernels and reports, kept across calls (default OUT/cache)")
  ap.add_argument("--out", default="results")
  ap.add_argument("--no-plot", action="store_true")
  ap.add_argument("--replot", metavar="JSON", help="write the markdown and plot of an existing models.json and exit")
  ap.add_argument("--phases", nargs="+", type=Path, metavar="TUNE_JSON", help="offline: where each MODEL.tune.json's tuning went, and exit")
  ap.add_argument("--merge-beam", metavar="DIR", help="merge a host call's BEAM=2 results (DIR/beam2.gpu*.json) into --cache and exit")
  ap.add_argument("--drop-beam", action="store_true", help="drop --models' BEAM=2 results from --cache (searched again next run) and exit")
  ap.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
  ap.add_argument("--torch-compile", default=None, help=argparse.SUPPRESS)
  ap.add_argument("--claims", default=None, help=argparse.SUPPRESS)
  a = ap.parse_args(argv)
  a.argv = list(sys.argv[1:] if argv is None else argv)
  if a.replot: finish(Path(a.replot), False); return 0
  from search.task_scheduler import LATER_SHARE, bad_later_share, read_later_share   # here, not at the top: it imports the search (0.4 s) that --phases and --replot need not
  try: a.later_share = LATER_SHARE if a.later_share is None else read_later_share(a.later_share)
  except ValueError: ap.error(f"--later-share {a.later_share}: a share of seconds or off")
  if why := bad_later_share(a.later_share): ap.error(f"--later-share {why}")
  if a.phases:
    try: print(json.dumps(phases(a.phases), indent=1)); return 0
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError) as e: ap.error(f"--phases: not a MODEL.tune.json's rows: {one_line(e, 200)}")
  cache = Path(a.cache or ROOT / "results" / "models_cache")
  if a.merge_beam: print(f"{merge_beam(Path(a.merge_beam), cache)} BEAM=2 results new or replaced"); return 0
  names = list(UNSEEN) if a.models == "unseen" else a.models.split(",")
  if unknown := [n for n in names if n not in MODELS]: ap.error(f"unknown models {unknown}: choose from {', '.join(MODELS)}")
  if a.drop_beam:
    # found by name too: the unseen networks' cache holds no tuned.json. Nothing to drop is an error, so that a host call does not
    # go on to time BEAM=2's cached picks, from another card maybe, as if searched there
    if not (keys := model_keys(cache, names)): ap.error(f"no BEAM=2 results of {', '.join(names)} in {cache}")
    print(f"{drop_beam(cache, keys)} BEAM=2 results of {len(keys)} kernels dropped from {cache}"); return 0
  if a.torch_compile: torch_compile_latency(a, a.torch_compile, Path(a.out)); return 0
  out = Path(a.out); out.mkdir(parents=True, exist_ok=True)
  if a.device is None:
    from dataset.device import default_device
    a.device = default_device()
  if a.worker is not None: worker(a, names, Path(a.cache), Path(a.claims), a.worker); return 0
  rc = run(a, names, out)
  if (out / "models.json").is_file(): finish(out / "models.json", a.no_plot)
  return rc

if __name__ == "__main__": sys.exit(main())
