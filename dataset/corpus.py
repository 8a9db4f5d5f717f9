"""The kernel corpus: named variants of workloads and networks, and their extraction to deduplicated kernels."""
from __future__ import annotations
import itertools, json, multiprocessing, sys
from pathlib import Path
from dataclasses import dataclass
from typing import Callable, Iterable
from tqdm import tqdm
from dataset.workloads import BUILDERS
from tinygrad.uop.ops import UOp
from dataset.kernel import Kernel, kernel_asts
from dataset.errors import one_line

@dataclass(frozen=True)
class Variant:
  workload: str            # builder name in workloads.BUILDERS or networks.NETWORKS
  family: str              # reporting family: op family or network
  params: tuple            # sorted (name, value) pairs
  small: bool              # cheap enough for the CPU device
  tier: str = "grid"       # "grid" (the fixed grid the shipped data was measured on), "networks", "sampled" (dataset.shape_sampler)
  @property
  def name(self) -> str:
    p = "".join(f":{k}={_fmt(v)}" for k, v in self.params if k != "dtype")
    return f"{self.workload}{p}:{dict(self.params).get('dtype', 'fp32')}"
  def build(self, device:str|None=None) -> list:
    return builder(self.workload)(**dict(self.params), device=device)

def _fmt(v) -> str: return str(int(v)) if isinstance(v, bool) else str(v)

def builder(workload:str) -> Callable:
  from dataset.networks import NETWORKS
  if (b := BUILDERS.get(workload) or NETWORKS.get(workload)) is None:
    raise KeyError(f"unknown workload {workload!r}; known: {', '.join(sorted([*BUILDERS, *NETWORKS]))}")
  return b

def V(workload:str, family:str|None=None, small=False, tier="grid", **params) -> Variant:
  return Variant(workload, family or workload, tuple(sorted(params.items())), small, tier)

def _grid(workload:str, family:str|None=None, small=False, dtypes=("fp16", "fp32"), **lists) -> list[Variant]:
  keys = list(lists)
  return [V(workload, family, small, dtype=dt, **dict(zip(keys, vals))) for dt in dtypes for vals in itertools.product(*lists.values())]

def _conv(n, c, h, k, ks, s=1, p=None, d=1, g=1, dtypes=("fp16", "fp32"), small=False, workload="conv2d") -> list[Variant]:
  p = (ks//2)*d if p is None else p
  return [V(workload, "conv2d", small, n=n, c=c, h=h, w=h, k=k, ks=ks, stride=s, padding=p, dilation=d, groups=g, dtype=dt) for dt in dtypes]

def build_corpus() -> list[Variant]:
  """Every corpus variant. `small` ones form the CPU corpus; the rest are at the sizes real networks run at."""
  vs: list[Variant] = []
  # conv2d: stride, padding, dilation, groups (incl. depthwise), 1x1 and the 7x7 s2 stem
  for n in (8, 32):
    vs += _conv(n, 64, 56, 64, 3) + _conv(n, 128, 56, 128, 3, s=2) + _conv(n, 256, 56, 64, 1) + _conv(n, 64, 56, 256, 1)
    vs += _conv(n, 3, 224, 64, 7, s=2, p=3) + _conv(n, 192, 28, 192, 3, g=192) + _conv(n, 128, 28, 128, 3, g=4)
    vs += _conv(n, 64, 56, 64, 3, d=2) + _conv(n, 64, 56, 64, 3, p=0) + _conv(n, 96, 56, 96, 5, g=96)
  vs += _conv(8, 512, 14, 512, 3) + _conv(8, 1024, 14, 256, 1) + _conv(8, 256, 28, 256, 3, s=2)
  vs += [V("conv2d_bias_relu", "conv2d_fused", n=n, c=c, h=h, w=h, k=k, ks=ks, stride=1, padding=ks//2, dtype=dt)
         for n in (8, 32) for c, h, k, ks in ((64, 56, 64, 3), (256, 28, 128, 1)) for dt in ("fp16", "fp32")]
  # matrix products: bmm; gemm with alpha/beta and transposed A/B
  vs += _grid("bmm", b=[16, 64], m=[512], k=[64], n=[512]) + _grid("bmm", b=[96], m=[128], k=[128], n=[128])
  vs += _grid("gemm", m=[1024, 2048], k=[1024, 2048], n=[1024])
  vs += _grid("gemm", m=[4096], k=[4096], n=[4096], dtypes=("fp16",)) + _grid("gemm", m=[2048], k=[2048], n=[2048], dtypes=("fp32",))
  vs += [V("gemm", alpha=1.5, beta=0.5, trans_a=ta, trans_b=tb, m=1024, k=1024, n=1024, dtype=dt)
         for ta, tb in ((False, True), (True, False), (True, True)) for dt in ("fp16", "fp32")]
  # normalization
  vs += _grid("softmax", rows=[4096, 16384], cols=[1024, 4096], log=[False, True], dtypes=("fp32", "fp16"))
  vs += _grid("layernorm", rows=[8192, 32768], cols=[768, 1024], dtypes=("fp32", "fp16"))
  # other ops
  vs += _grid("attention", b=[8], heads=[12], seq=[256, 512], dim=[64], causal=[False, True])
  vs += _grid("maxpool", n=[8, 32], c=[64], h=[112], w=[112], ks=[3], stride=[2], padding=[1]) + _grid("maxpool", n=[32], c=[128], h=[56], w=[56], ks=[2], stride=[2], padding=[0])
  # backward kernels
  vs += _grid("conv2d_backward", "backward", n=[8, 32], c=[64], h=[28], w=[28], k=[64], ks=[3], stride=[1], padding=[1])
  vs += _grid("conv2d_backward", "backward", n=[8], c=[128], h=[28], w=[28], k=[128], ks=[3], stride=[2], padding=[1])
  vs += _grid("softmax_backward", "backward", rows=[4096], cols=[1024, 4096])
  vs += _grid("layernorm_backward", "backward", rows=[4096, 8192], cols=[768, 1024])
  # whole networks, several batch sizes, fp32 and fp16
  vs += _grid("resnet50", batch=[1, 16])
  vs += _grid("cvt_block", batch=[1, 16])
  vs += _grid("gpt2_block", batch=[1, 8])
  vs += wider_tier()
  # the CPU corpus: the same workloads at sizes the CPU device times in milliseconds
  vs += _conv(2, 16, 16, 16, 3, dtypes=("fp32",), small=True) + _conv(2, 16, 16, 32, 3, s=2, dtypes=("fp32",), small=True)
  vs += _conv(2, 32, 16, 16, 1, dtypes=("fp32",), small=True) + _conv(2, 32, 16, 32, 3, g=32, dtypes=("fp32",), small=True)
  vs += _conv(1, 3, 64, 16, 7, s=2, p=3, dtypes=("fp32",), small=True) + _conv(2, 16, 16, 16, 3, d=2, dtypes=("fp32",), small=True)
  vs += _conv(2, 16, 16, 16, 3, g=4, dtypes=("fp32",), small=True)
  vs += [V("conv2d_bias_relu", "conv2d_fused", True, n=2, c=16, h=16, w=16, k=16, ks=3, stride=1, padding=1, dtype="fp32")]
  vs += _grid("bmm", small=True, b=[4], m=[64], k=[32], n=[64], dtypes=("fp32",))
  vs += _grid("gemm", small=True, m=[128, 256], k=[128], n=[128], dtypes=("fp32",))
  vs += [V("gemm", small=True, alpha=2.0, beta=0.5, trans_a=True, trans_b=True, m=128, k=64, n=128, dtype="fp32")]
  vs += _grid("softmax", small=True, rows=[256], cols=[256], log=[False, True], dtypes=("fp32",))
  vs += _grid("layernorm", small=True, rows=[512], cols=[256], dtypes=("fp32",))
  vs += _grid("attention", small=True, b=[1], heads=[2], seq=[64], dim=[32], causal=[False, True], dtypes=("fp32",))
  vs += _grid("maxpool", small=True, n=[2], c=[16], h=[32], w=[32], ks=[3], stride=[2], padding=[1], dtypes=("fp32",))
  vs += _grid("conv2d_backward", "backward", True, n=[2], c=[8], h=[8], w=[8], k=[8], ks=[3], stride=[1], padding=[1], dtypes=("fp32",))
  vs += _grid("softmax_backward", "backward", True, rows=[128], cols=[128], dtypes=("fp32",))
  vs += _grid("layernorm_backward", "backward", True, rows=[128], cols=[128], dtypes=("fp32",))
  vs += [V("resnet50", small=True, batch=1, image=32, dtype="fp32"), V("cvt_block", small=True, batch=1, tokens_hw=8, dtype="fp32"),
         V("gpt2_block", small=True, batch=1, seq=32, dim=128, heads=2, dtype="fp32")]
  return vs

def wider_tier() -> list[Variant]:
  """More shapes of every family and the networks at more batch sizes (added once the first tier was measured): the ranker's
  held-out top-1 grows with the number of kernels it learns from, twice as fast as with more configs per kernel (half the
  kernels: 0.8725, half of each kernel's configs: 0.8788, all: 0.8850), and these are shapes real networks run (ResNet stages and bottlenecks, MobileNet
  depthwise, transformer projections and MLPs)."""
  vs: list[Variant] = []
  vs += _conv(16, 128, 28, 128, 3) + _conv(16, 256, 14, 256, 3) + _conv(16, 512, 7, 512, 3)
  vs += _conv(16, 512, 28, 128, 1) + _conv(16, 1024, 14, 256, 1) + _conv(16, 2048, 7, 512, 1) + _conv(16, 256, 56, 512, 1, s=2, p=0)
  vs += _conv(16, 32, 112, 32, 3, g=32) + _conv(16, 144, 56, 144, 3, s=2, g=144) + _conv(16, 384, 14, 384, 3, g=384)
  vs += _conv(16, 3, 224, 32, 3, s=2) + _conv(16, 64, 56, 64, 3, g=8) + _conv(16, 32, 112, 64, 5, s=2)
  vs += [V("conv2d_bias_relu", "conv2d_fused", n=16, c=c, h=h, w=h, k=k, ks=ks, stride=1, padding=ks//2, dtype=dt)
         for c, h, k, ks in ((128, 28, 128, 3), (512, 14, 256, 1)) for dt in ("fp16", "fp32")]
  vs += _grid("bmm", b=[48], m=[256], k=[64], n=[256]) + _grid("bmm", b=[16], m=[1024], k=[128], n=[1024])
  vs += _grid("gemm", m=[2048], k=[768], n=[768, 3072]) + _grid("gemm", m=[2048], k=[3072], n=[768]) + _grid("gemm", m=[512], k=[4096], n=[4096])
  vs += _grid("softmax", rows=[8192], cols=[512, 2048], log=[False], dtypes=("fp32", "fp16")) + _grid("softmax", rows=[1024], cols=[16384], log=[False, True])
  vs += _grid("layernorm", rows=[4096, 16384], cols=[512, 4096], dtypes=("fp32", "fp16"))
  vs += _grid("attention", b=[4], heads=[16], seq=[1024], dim=[64], causal=[False, True]) + _grid("attention", b=[8], heads=[8], seq=[256], dim=[128], causal=[False])
  vs += _grid("maxpool", n=[16], c=[256], h=[28], w=[28], ks=[3], stride=[2], padding=[1])
  vs += _grid("conv2d_backward", "backward", n=[16], c=[128], h=[14], w=[14], k=[128], ks=[3], stride=[1], padding=[1])
  vs += _grid("softmax_backward", "backward", rows=[8192], cols=[2048]) + _grid("layernorm_backward", "backward", rows=[16384], cols=[512])
  vs += _grid("resnet50", batch=[4, 32]) + _grid("cvt_block", batch=[4, 32]) + _grid("gpt2_block", batch=[4, 16])
  return vs

# every network at a size the CPU schedules in seconds (the networks tier's small variants, and tests/test_networks.py)
SMALL_NETWORK: dict[str, dict] = {
  **{n: dict(batch=1, image=32) for n in ("resnet18", "resnet34", "resnet50", "resnet101", "resnext50", "wide_resnet50", "vgg11", "vgg16",
                                          "densenet121", "googlenet", "squeezenet", "shufflenet_v2", "regnet_x")},
  "unet": dict(batch=1, image=32, base=8), "dcgan_generator": dict(batch=2, ngf=8), "yolo_head": dict(batch=1, image=64, classes=3),
  "cvt_block": dict(batch=1, tokens_hw=8), "gpt2_block": dict(batch=1, seq=32, dim=128, heads=2),
  "gpt2_medium_block": dict(batch=1, seq=32, dim=128, heads=2), "gpt2_large_block": dict(batch=1, seq=32, dim=160, heads=2),
  "opt_block": dict(batch=1, seq=32, dim=128, heads=2, ff=256), "t5_block": dict(batch=1, seq=32, dec_seq=16, dim=64, heads=2, ff=128),
  "swin_stage": dict(batch=1, image=56), "mlp_mixer": dict(batch=1, image=64), "conformer_block": dict(batch=1, frames=64, mels=16, dim=32, heads=2),
  "lstm_lm": dict(batch=2, seq=4, vocab=100, hidden=32), "gru": dict(batch=2, seq=4, inputs=16, hidden=32), "dlrm": dict(batch=8)}

# full-size batches per network: 1, 8 and 32 where a training step fits a GPU's memory; the others at the batches they train at
NETWORK_BATCHES: dict[str, tuple[int, ...]] = {"resnet101": (1, 8, 32), "vgg16": (1, 8, 32), "densenet121": (1, 8, 32), "unet": (1, 4, 16),
  "dcgan_generator": (1, 16, 64), "yolo_head": (1, 8, 32), "gpt2_medium_block": (1, 8, 16), "gpt2_large_block": (1, 4, 8),
  "opt_block": (1, 4, 8), "t5_block": (1, 8, 32), "swin_stage": (1, 8, 32), "conformer_block": (1, 8, 32), "lstm_lm": (1, 20, 64),
  "gru": (1, 16, 64), "dlrm": (128, 512, 2048)}
NETWORK_EXTRA: dict[str, list[dict]] = {"swin_stage": [dict(stage=0), dict(stage=2)]}   # Swin's first and third stages are both run

def networks_tier() -> list[Variant]:
  """Every network at several batch sizes, fp16 and fp32, forward and a training step (dataset.networks.train_step), and each once
  at its CPU size (forward and training, fp32). The grid's forward variants of ResNet-50, CvT and GPT-2 are not repeated here."""
  from dataset.networks import NETWORKS
  grid = {v.name for v in build_corpus()}
  vs: list[Variant] = []
  for n in NETWORKS:
    for extra in NETWORK_EXTRA.get(n, [{}]):
      for b in NETWORK_BATCHES.get(n, (1, 8, 32)):
        for dt in ("fp16", "fp32"):
          for train in (False, True):
            v = V(n, None, False, "networks", batch=b, dtype=dt, **extra, **({"train": True} if train else {}))
            if v.name not in grid: vs.append(v)
    vs += [V(n, None, True, "networks", **SMALL_NETWORK[n], dtype="fp32", **({"train": True} if t else {})) for t in (False, True)]
  return vs

SAMPLED_N, SAMPLED_SEED = 1000, 0   # the corpus' sampled tier: sampled:1000:0

def sampled_tier(n:int=SAMPLED_N, seed:int=SAMPLED_SEED) -> list[Variant]:
  """Single-op shapes from the seeded sampler (dataset.shape_sampler), none a grid shape."""
  from dataset.shape_sampler import sample
  return [V(w, fam, False, "sampled", **p) for w, fam, p in sample(n, seed, exclude={(v.workload, v.params) for v in build_corpus()})]

CORPUS: list[Variant] = build_corpus() + networks_tier() + sampled_tier()

class ShapeError(ValueError): pass

def _value(s:str, default):
  """A parameter value parsed to the type of the builder's default."""
  try:
    if isinstance(default, bool): return {"1": True, "0": False, "True": True, "False": False}[s]
    return type(default)(float(s) if isinstance(default, float) else int(s)) if isinstance(default, (int, float)) else s
  except (KeyError, ValueError) as e: raise ShapeError(f"bad value {s!r}: expected {type(default).__name__}") from e

def name_parts(spec:str) -> tuple[str, dict[str, str]]:
  """A name's workload and the parameters it gives, as written ('fp16'/'fp32': the dtype). ShapeError for a part of neither form."""
  workload, *parts = spec.split(":")
  given = {}
  for part in parts:
    if part in ("fp16", "fp32"): given["dtype"] = part; continue
    if "=" not in part: raise ShapeError(f"bad parameter {part!r} in {spec!r}: expected name=value")
    k, v = part.split("=", 1)
    given[k] = v
  return workload, given

def parse_variant(spec:str) -> Variant:
  """An ad-hoc variant, written like corpus names: 'conv2d:n=2:c=16:h=32:w=32:k=32:ks=3:fp16' (omitted params take the
  builder's defaults). Raises KeyError for an unknown workload, ShapeError for bad parameters or shapes."""
  import inspect
  workload = spec.split(":")[0]
  b = builder(workload)
  allowed = {k: v.default for k, v in inspect.signature(b).parameters.items() if k != "device"}
  params = {}
  for k, v in name_parts(spec)[1].items():
    if k == "dtype": params["dtype"] = v; continue
    if k not in allowed: raise ShapeError(f"{workload} has no parameter {k!r}; it takes {', '.join(allowed)}")
    params[k] = _value(v, allowed[k])
    if isinstance(params[k], int) and not isinstance(params[k], bool) and params[k] < (0 if k == "padding" else 1):
      raise ShapeError(f"bad shape for {workload}: {k}={params[k]}")
  v = V(workload, None, False, **{**allowed, **params})
  try: outs = v.build("CPU")
  except Exception as e: raise ShapeError(f"bad shape for {spec!r}: {one_line(e)}") from e
  if any(0 in o.shape for o in outs): raise ShapeError(f"bad shape for {spec!r}: an output is empty {[o.shape for o in outs]}")
  return v

def select(names:str, device:str) -> list[Variant]:
  """Pick variants by a comma list of variant names, workloads, families, tiers or ad-hoc shapes ('gemm:m=512:k=256:n=128:fp32'). Tiers:
  'default' (the fixed grid: full-size on a GPU, 'small' on the CPU), 'small' (the grid at CPU sizes), 'grid' (full-size),
  'networks' (every network, fwd and train: full-size on a GPU, CPU sizes on the CPU), 'sampled' or 'sampled:N:SEED' (seeded
  single-op shapes), 'all' (every full-size variant of every tier). A workload or family name selects the grid's variants where it
  has any, else the networks tier's. Raises KeyError naming what is unknown and ShapeError for a bad ad-hoc shape."""
  out: list[Variant] = []
  for tok in [t.strip() for t in names.split(",") if t.strip()]:
    if tok == "default": tok = "small" if device == "CPU" else "grid"
    if tok == "all": hit = [v for v in CORPUS if not v.small]
    elif tok in ("small", "grid"): hit = [v for v in CORPUS if v.tier == "grid" and v.small == (tok == "small")]
    elif tok == "networks": hit = [v for v in CORPUS if v.tier == "networks" and v.small == (device == "CPU")]
    elif tok == "sampled": hit = [v for v in CORPUS if v.tier == "sampled"]
    elif tok.startswith("sampled:"):
      try: n, seed = (int(x) for x in tok.split(":")[1:])
      except ValueError: raise KeyError(f"bad {tok!r}: expected sampled:N:SEED") from None
      hit = sampled_tier(n, seed)
    else:
      named = [v for v in CORPUS if tok in (v.name, v.workload, v.family)]
      hit = [v for v in named if v.name == tok] or [v for v in named if v.tier == "grid"] or [v for v in named if v.tier == "networks"] or named
      if not hit and ":" in tok: hit = [parse_variant(tok)]
      # a family or workload name selects its tier for the device: full-size on a GPU, small on the CPU
      if len({v.name for v in hit}) > 1 and not any(v.name == tok for v in hit):
        hit = [v for v in hit if v.small == (device == "CPU")] or hit
    if not hit: raise KeyError(f"unknown kernel {tok!r}: use --list to see the corpus (families: {', '.join(sorted({v.family for v in CORPUS}))})")
    out += [v for v in hit if v not in out]
  return out

def _scheduled(args:tuple[Variant, str]) -> list[tuple[str, bytes]]:
  """A variant's kernel ASTs (key, Kernel.pack blob), scheduled in a worker process."""
  v, device = args
  return [(ast.key.hex(), Kernel.pack(ast)) for ast in kernel_asts(*v.build(device))]

def _extract(vs:list[Variant], device:str, seen:set[str], workers:int) -> Iterable[tuple[Variant, list[tuple[Kernel, bytes|None]]]]:
  """extract()'s kernels, each with its blob as packed where it was scheduled (None: here): the store keeps the worker's instead of
  this process pickling and compressing every AST again, one after another. The bytes may differ from a serial extraction's (a
  pickle shares equal objects by identity, which differs between processes), the AST and its key do not."""
  def new(v:Variant, rows:Iterable[tuple[str, UOp|bytes]]) -> list[tuple[Kernel, bytes|None]]:
    ks = []
    for i, (key, a) in enumerate(rows):
      if key in seen: continue
      seen.add(key)
      blob = a if isinstance(a, bytes) else None
      ks.append((Kernel(key, Kernel.ast_from_blob(blob) if blob else a, f"{v.name}#{i}", v.family, v.workload), blob))
    return ks
  if workers <= 1 or len(vs) <= 1:
    for v in vs: yield v, new(v, ((a.key.hex(), a) for a in kernel_asts(*v.build(device))))
    return
  # fork (nothing runs on a device while scheduling), unless this process is a Ray driver: its gRPC threads do not survive a fork
  ray = sys.modules.get("ray")
  ctx = multiprocessing.get_context("spawn" if ray is not None and ray.is_initialized() else "fork")
  with ctx.Pool(min(workers, len(vs))) as pool:
    for v, rows in zip(vs, pool.imap(_scheduled, [(v, device) for v in vs])): yield v, new(v, rows)

def extract(variants:Iterable[Variant], device:str, seen:set[str]|None=None, workers:int=1) -> Iterable[tuple[Variant, list[Kernel]]]:
  """Kernels of each variant, deduplicated by AST key across the whole call (and against `seen`), in the variants' order. With
  workers > 1 the variants are scheduled in that many processes: a network's training step schedules for tens of seconds, and the
  networks tier, one variant after another, took over 20 minutes for 9 of its 28 networks on a 2-core machine."""
  for v, ks in _extract(list(variants), device, set() if seen is None else seen, workers): yield v, [k for k, _ in ks]

HELD_OUT = Path(__file__).with_name("held_out_keys.json")   # dataset.unseen.held_out_keys of each device: `python -m dataset.unseen keys`

def held_out(device:str) -> set[str]:
  """The AST keys of the unseen benchmark's kernels and of its splits' on `device`, as committed (computing them takes seconds)."""
  return set(json.loads(HELD_OUT.read_text()).get(device, []))

def extract_into(store, variants:list[Variant], device:str, progress:bool=True, beat=lambda: None, workers:int=1):
  """Extract the kernels of variants not yet in the store (in `workers` processes). Needs no device: scheduling runs nothing. The
  unseen benchmark's kernels and its splits' are skipped (held_out): a network can hold one (a stride-2 stem conv
  of split 3), and what the corpus holds is measured and trained on."""
  seen = store.kernel_keys() | held_out(device)
  todo = [v for v in variants if not store.has_variant(v.name, device)]
  for v, ks in tqdm(_extract(todo, device, seen, workers), total=len(todo), desc="extracting kernels", disable=not progress or not todo):
    store.add_variant(v.name, device, [k for k, _ in ks], [(None, None)]*len(ks), [b for _, b in ks])
    beat()

def list_corpus(variants:list[Variant]|None=None, device:str="CPU", count_kernels:bool=False) -> str:
  """The corpus (or a selection) grouped by group (an op, or a network's: cnn, transformer, ...) and family or network, with counts of
  variants by tier, size, dtype and forward/train, and the batch sizes; count_kernels adds each row's distinct kernels (scheduled on
  `device`, nothing runs: a minute or more for the whole corpus)."""
  from dataset.networks import GROUPS
  vs = CORPUS if variants is None else variants
  rows: dict[tuple[str, str], list[Variant]] = {}
  for v in vs: rows.setdefault((GROUPS.get(v.workload, "op"), v.family), []).append(v)
  head = f"{'group':<17}{'family/network':<19}{'variants':>8}{'grid':>6}{'nets':>6}{'sampl':>6}{'small':>6}{'fp16':>6}{'train':>6}  batches"
  lines = [f"{len(vs)} variants in {len(rows)} families and networks (tiers: {', '.join(f'{t} {sum(v.tier == t for v in vs)}' for t in ('grid', 'networks', 'sampled'))};"
           f" small {sum(v.small for v in vs)})", head + ("  kernels" if count_kernels else "")]
  total = set()
  for (g, fam), group in sorted(rows.items()):
    ps = [dict(v.params) for v in group]
    batches = sorted({p.get("batch", p.get("n")) for p in ps} - {None})   # networks and convs; an op's other dims are not a batch
    line = (f"{g:<17}{fam:<19}{len(group):>8}{sum(v.tier == 'grid' for v in group):>6}{sum(v.tier == 'networks' for v in group):>6}"
            f"{sum(v.tier == 'sampled' for v in group):>6}{sum(v.small for v in group):>6}{sum(p.get('dtype') == 'fp16' for p in ps):>6}"
            f"{sum(bool(p.get('train')) for p in ps):>6}  {','.join(map(str, batches[:8])) + (',...' if len(batches) > 8 else '')}")
    if count_kernels:
      keys = {a.key for v in group for a in kernel_asts(*v.build(device))}
      total |= keys; line += f"  {len(keys)}"
    lines.append(line)
  if count_kernels: lines.append(f"{len(total)} distinct kernels on {device}")
  return "\n".join(lines)
