"""The unseen benchmark's contents: single-op kernel configurations and whole networks that nothing in kerntune is trained or tuned
on (scripts/bench_unseen.py measures them against tinygrad's BEAM=2). The kernels were drawn once by a seeded sampler over shapes
real networks run (odd sizes 7, 49, 197, 577, 1500, 3000; batch 1 and large; fp16 and fp32; strided, grouped and dilated convs;
matmuls and bmm; attention, causal too; norms, reductions, elementwise chains). Frozen: tests/test_unseen.py pins the fingerprint
and asserts that no benchmark kernel is in the shipped stores, shards or histories, nor in the corpus. Never change it to flatter a
result; a new benchmark gets a new seed."""
from __future__ import annotations
import hashlib, random
from pathlib import Path
SEED = 29

# Seeds from WIDE on draw from wider lists: each family's own (the first) plus sizes of networks outside them (CLIP's 50 and 77
# tokens, ViT-L's 257, Swin's 49-token windows, MobileNetV3's and ConvNeXt's channels and 7x7 depthwise, ResNet's 7x7 s2 stem,
# DeepLab's 33/65-wide dilation maps, LLaMA's and Whisper's widths). By split 30 the first lists were nearly exhausted: 57 of its
# 70 kernels had been measured by earlier splits, so a fresh split held 12-21 new kernels where the benchmark needs 40.
WIDE = 33

def _x(w:bool, base:list, extra:list) -> list: return base + extra if w else base

def _conv(r:random.Random, w:bool=False) -> str:
  kind = r.choice(["depthwise", "pointwise", "strided", "dilated", "grouped", "stem"])
  n, dt = r.choice([1, 8, 32]), r.choice(["fp16", "fp32"])
  if kind == "depthwise":
    c, h = r.choice(_x(w, [96, 144, 240, 480, 672], [72, 120, 184, 200, 384, 768, 960])), r.choice(_x(w, [7, 14, 28, 56], [10, 19, 112]))
    ks, s = r.choice(_x(w, [3, 5], [7])), r.choice([1, 2])
    return f"conv2d:n={n}:c={c}:h={h}:w={h}:k={c}:ks={ks}:stride={s}:padding={ks//2}:dilation=1:groups={c}:{dt}"
  if kind == "pointwise":
    c, k = r.choice(_x(w, [24, 40, 80, 112, 192, 320], [16, 64, 160, 384, 960])), r.choice(_x(w, [96, 144, 240, 480, 1152], [64, 200, 640, 1280]))
    h = r.choice(_x(w, [7, 14, 28, 56], [10, 17, 35]))
    return f"conv2d:n={n}:c={c}:h={h}:w={h}:k={k}:ks=1:stride=1:padding=0:dilation=1:groups=1:{dt}"
  if kind == "strided":
    c, h = r.choice(_x(w, [48, 96, 192, 384], [32, 64, 128, 256])), r.choice(_x(w, [14, 28, 56], [7, 35, 112]))
    return f"conv2d:n={n}:c={c}:h={h}:w={h}:k={2*c}:ks=3:stride=2:padding=1:dilation=1:groups=1:{dt}"
  if kind == "dilated":
    c, h, d = r.choice(_x(w, [64, 128, 256], [48, 96, 512])), r.choice(_x(w, [28, 49, 56], [33, 65])), r.choice(_x(w, [2, 4], [6, 12]))
    return f"conv2d:n={n}:c={c}:h={h}:w={h}:k={c}:ks=3:stride=1:padding={d}:dilation={d}:groups=1:{dt}"
  if kind == "grouped":
    c, h, g = r.choice(_x(w, [128, 256, 512], [192, 384, 1024])), r.choice(_x(w, [14, 28, 49], [7, 56])), r.choice(_x(w, [8, 16, 32], [4, 64]))
    return f"conv2d:n={n}:c={c}:h={h}:w={h}:k={c}:ks=3:stride=1:padding=1:dilation=1:groups={g}:{dt}"
  # ConvNeXt, SegFormer, ViT-S patch, EfficientNet stems; wider: ResNet's, Swin-B's, ViT-L/14's, DINO's 8x8 patches
  ks, s, k = r.choice(_x(w, [(4, 4, 96), (7, 4, 64), (16, 16, 384), (3, 2, 32)], [(7, 2, 64), (4, 4, 128), (14, 14, 1024), (8, 8, 384)]))
  return f"conv2d:n={n}:c=3:h=224:w=224:k={k}:ks={ks}:stride={s}:padding={ks//2 if s < ks else 0}:dilation=1:groups=1:{dt}"

def _conv1d(r:random.Random, w:bool=False) -> str:
  c, k, s = r.choice(_x(w, [(80, 384, 1), (384, 384, 2), (80, 512, 1)], [(80, 768, 1), (512, 512, 2), (768, 768, 2)]))   # Whisper-style front ends
  n = r.choice([1, 4])
  return f"conv1d:n={n}:c={c}:l={r.choice([3000, 1500]) if w else 3000}:k={k}:ks=3:stride={s}:padding=1:{r.choice(['fp16', 'fp32'])}"

def _tokens(r:random.Random, w:bool=False) -> int: return r.choice(_x(w, [1, 2, 8], [4])) * r.choice(_x(w, [49, 197, 577, 1500], [50, 77, 257, 1024]))

def _gemm(r:random.Random, w:bool=False) -> str:
  m = _tokens(r, w)
  k, n = r.choice(_x(w, [(384, 1536), (768, 2304), (1024, 4096), (3072, 768), (4096, 11008), (1536, 384)],
                     [(512, 2048), (2048, 512), (1280, 5120), (5120, 1280), (768, 3072), (1024, 3072)]))
  return f"gemm:m={m}:k={k}:n={n}:{r.choice(['fp16', 'fp32'])}"

def _bmm(r:random.Random, w:bool=False) -> str:
  heads = r.choice(_x(w, [(6, 1500, 64), (12, 197, 64), (16, 577, 64), (12, 49, 32)], [(8, 77, 64), (12, 50, 64), (16, 257, 64), (4, 49, 32)]))
  seq, d = r.choice(_x(w, [1, 4], [2, 8])), r.choice([False, True])
  b, s, dim = heads[0]*seq, heads[1], heads[2]
  return f"bmm:b={b}:m={s}:k={s}:n={dim}:{r.choice(['fp16', 'fp32'])}" if d else f"bmm:b={b}:m={s}:k={dim}:n={s}:{r.choice(['fp16', 'fp32'])}"

def _attention(r:random.Random, w:bool=False) -> str:
  heads, seq, dim, causal = r.choice(_x(w, [(12, 197, 64, 0), (6, 1500, 64, 0), (16, 577, 64, 0), (32, 2048, 128, 1), (12, 1024, 64, 1)],
                                        [(8, 77, 64, 0), (12, 50, 64, 0), (16, 257, 64, 0), (16, 512, 64, 1), (32, 512, 128, 1)]))
  return f"attention:b={r.choice(_x(w, [1, 4], [2]))}:heads={heads}:seq={seq}:dim={dim}:causal={causal}:{r.choice(['fp16', 'fp32'])}"

def _norm(r:random.Random, w:bool=False) -> str:
  op = r.choice(['layernorm', 'rmsnorm'])
  return f"{op}:rows={_tokens(r, w)}:cols={r.choice(_x(w, [384, 768, 1024, 4096], [512, 1280, 2048, 3072]))}:{r.choice(['fp16', 'fp32'])}"

def _softmax(r:random.Random, w:bool=False) -> str:
  s = r.choice(_x(w, [49, 197, 577, 1500], [50, 77, 257, 1024]))
  return f"softmax:rows={r.choice(_x(w, [12, 96], [8, 48]))*s}:cols={s}:log=0:{r.choice(['fp16', 'fp32'])}"

def _reduce(r:random.Random, w:bool=False) -> str:
  a, b, c, axis = r.choice(_x(w, [(8, 197, 768, 1), (32, 49, 1280, 1), (64, 7, 3000, 2), (16, 1500, 384, 2), (1, 577, 1024, 1)],
                               [(8, 50, 768, 1), (16, 77, 512, 1), (2, 4096, 320, 2), (4, 1024, 1024, 2), (32, 10, 1280, 1)]))
  return f"reduce:a={a}:b={b}:c={c}:axis={axis}:op={r.choice(['sum', 'mean', 'max'])}:{r.choice(['fp16', 'fp32'])}"

def _elementwise(r:random.Random, w:bool=False) -> str:
  f = r.choice(["gelu_bias", "swiglu"])
  rows = _tokens(r, w)
  cols = r.choice(_x(w, [1536, 3072, 11008], [2816, 5632]) if f == "swiglu" else _x(w, [1536, 3072, 4096], [2048, 5120]))
  return f"{f}:rows={rows}:cols={cols}:{r.choice(['fp16', 'fp32'])}"

SPECS = (
  "conv2d:n=1:c=512:h=49:w=49:k=512:ks=3:stride=1:padding=1:dilation=1:groups=16:fp32",
  "conv2d:n=32:c=480:h=56:w=56:k=480:ks=3:stride=1:padding=1:dilation=1:groups=480:fp32",
  "conv2d:n=8:c=240:h=7:w=7:k=240:ks=5:stride=2:padding=2:dilation=1:groups=240:fp16",
  "conv2d:n=32:c=512:h=14:w=14:k=512:ks=3:stride=1:padding=1:dilation=1:groups=16:fp32",
  "conv2d:n=1:c=112:h=14:w=14:k=1152:ks=1:stride=1:padding=0:dilation=1:groups=1:fp32",
  "conv2d:n=32:c=256:h=28:w=28:k=256:ks=3:stride=1:padding=1:dilation=1:groups=32:fp32",
  "conv2d:n=8:c=192:h=28:w=28:k=144:ks=1:stride=1:padding=0:dilation=1:groups=1:fp32",
  "conv2d:n=32:c=384:h=56:w=56:k=768:ks=3:stride=2:padding=1:dilation=1:groups=1:fp32",
  "conv2d:n=32:c=144:h=28:w=28:k=144:ks=3:stride=2:padding=1:dilation=1:groups=144:fp32",
  "conv2d:n=32:c=144:h=56:w=56:k=144:ks=5:stride=2:padding=2:dilation=1:groups=144:fp32",
  "conv2d:n=32:c=192:h=56:w=56:k=384:ks=3:stride=2:padding=1:dilation=1:groups=1:fp16",
  "conv2d:n=32:c=3:h=224:w=224:k=384:ks=16:stride=16:padding=0:dilation=1:groups=1:fp16",
  "conv1d:n=1:c=80:l=3000:k=384:ks=3:stride=1:padding=1:fp32",
  "conv1d:n=1:c=384:l=3000:k=384:ks=3:stride=2:padding=1:fp32",
  "gemm:m=577:k=384:n=1536:fp16",
  "gemm:m=392:k=1536:n=384:fp32",
  "gemm:m=49:k=1536:n=384:fp16",
  "gemm:m=49:k=768:n=2304:fp16",
  "gemm:m=12000:k=1024:n=4096:fp16",
  "gemm:m=3000:k=384:n=1536:fp16",
  "bmm:b=12:m=197:k=64:n=197:fp16",
  "bmm:b=12:m=49:k=32:n=49:fp16",
  "bmm:b=48:m=197:k=64:n=197:fp16",
  "bmm:b=24:m=1500:k=1500:n=64:fp16",
  "attention:b=1:heads=32:seq=2048:dim=128:causal=1:fp32",
  "attention:b=4:heads=32:seq=2048:dim=128:causal=1:fp16",
  "attention:b=4:heads=16:seq=577:dim=64:causal=0:fp16",
  "attention:b=1:heads=6:seq=1500:dim=64:causal=0:fp32",
  "rmsnorm:rows=98:cols=1024:fp16",
  "rmsnorm:rows=1500:cols=768:fp16",
  "rmsnorm:rows=577:cols=768:fp16",
  "layernorm:rows=12000:cols=384:fp32",
  "rmsnorm:rows=49:cols=1024:fp16",
  "softmax:rows=6924:cols=577:log=0:fp16",
  "softmax:rows=2364:cols=197:log=0:fp16",
  "softmax:rows=4704:cols=49:log=0:fp32",
  "reduce:a=64:b=7:c=3000:axis=2:op=sum:fp16",
  "reduce:a=16:b=1500:c=384:axis=2:op=sum:fp32",
  "reduce:a=64:b=7:c=3000:axis=2:op=max:fp32",
  "reduce:a=64:b=7:c=3000:axis=2:op=mean:fp32",
  "swiglu:rows=49:cols=11008:fp16",
  "gelu_bias:rows=4616:cols=1536:fp16",
  "gelu_bias:rows=197:cols=1536:fp32",
  "swiglu:rows=4616:cols=11008:fp16",
)

# family sampler and how many configurations of it the benchmark holds
FAMILIES = [(_conv, 12), (_conv1d, 2), (_gemm, 6), (_bmm, 4), (_attention, 4), (_norm, 5), (_softmax, 3), (_reduce, 4), (_elementwise, 4)]

def draw(seed:int) -> list[str]:
  """Single-op configurations (corpus-style variant specs) drawn from `seed`: distinct, never a corpus variant's shape nor (for a
  seed other than SEED) one of the frozen list's. A new benchmark is a new seed; SPECS is what seed 29 drew against the corpus of
  its day, kept literally so a growing corpus cannot change it."""
  from dataset.corpus import CORPUS, parse_variant
  corpus, r, out = {v.name for v in CORPUS}, random.Random(seed), []
  for fam, n in FAMILIES:
    got = 0
    while got < n:
      spec = fam(r, seed >= WIDE)
      # a fresh split holds none of the frozen list either: design choices were made looking at that one
      if spec in out or parse_variant(spec).name in corpus or (seed != SEED and spec in SPECS): continue
      out.append(spec); got += 1
  return out

def kernel_specs() -> list[str]: return list(SPECS)

def fingerprint(specs:list[str]) -> str: return hashlib.sha256("\n".join(specs).encode()).hexdigest()[:16]

# Whole networks (torch -> ONNX -> tune-model, against BEAM=2, torch and torch.compile), none of which the corpus holds at any shape:
# scripts/bench_models.py's UNSEEN holds their definitions (bench_models.py --models unseen: resumable host runs)
NETWORKS = ["mobilenet_v2_b1_fp32", "efficientnet_b0_b1_fp32", "vit_b_16_b1_fp16", "convnext_tiny_b8_fp16", "bert_base_s128_fp32",
            "whisper_tiny_encoder_fp32", "llama_block_s512_fp16"]

def kernels_of(spec:str, device:str) -> list:
  from dataset.corpus import parse_variant
  from dataset.kernel import Kernel, kernel_asts
  v = parse_variant(spec)
  return [Kernel(ast.key.hex(), ast, f"{v.name}#{i}", v.family, v.workload) for i, ast in enumerate(kernel_asts(*v.build(device)))]

def benchmark_keys(device:str, specs:list[str]|None=None) -> dict[str, str]:
  """AST key -> kernel name, of every benchmark kernel (or of `specs`: a split drawn by draw()) on `device` (no GPU needed)."""
  return {k.key: k.name for spec in (kernel_specs() if specs is None else specs) for k in kernels_of(spec, device)}

def shipped_keys(root:Path|None=None) -> set[str]:
  """Every kernel AST key that training, offline search or a search's history has seen: the stores of dataset/data, their shards and
  the shipped histories (models/history_*.json). A held-out split must hold none of them."""
  import json, sqlite3, tempfile
  from dataset.shard import _unpack
  root = root or Path(__file__).resolve().parents[1]
  keys: set[str] = set()
  data = root / "dataset" / "data"
  with tempfile.TemporaryDirectory() as d:
    for store in [*data.glob("*.sqlite"), *data.glob("*.sqlite.gz"), *(data / "shards").glob("*.sqlite.gz")]:   # bases, gzipped bases, shards
      db = sqlite3.connect(f"file:{_unpack(store, d)}?mode=ro", uri=True)
      try: keys.update(r[0] for r in db.execute("SELECT key FROM kernels"))
      finally: db.close()
  for hist in (root / "models").glob("history_*.json"):
    keys.update(e[2] for rows in json.loads(hist.read_text())["nests"].values() for e in rows)
  return keys

SPLITS = 50   # fresh splits kept out of every new corpus store: 1-40 are measured, the rest are for later judgements

def held_out_keys(device:str, splits:int=SPLITS) -> dict[str, str]:
  """AST key -> name of the frozen list's kernels and of splits 1..`splits` (draw(s)) on `device`: what no store may hold. A split's
  kernel the shipped stores already hold (a wide split drawing a shape the sampled corpus drew) is left out: it is not unseen, and
  bench_unseen skips it."""
  out, shipped = benchmark_keys(device), shipped_keys()
  for s in range(1, splits + 1): out |= {k: n for k, n in benchmark_keys(device, draw(s)).items() if k not in shipped}
  return out

def drop_held_out(path:str) -> list[str]:
  """Delete from a store every kernel of the benchmark or of its splits (dataset.corpus.held_out, as committed), with its rows; their
  names. For stores extracted before extraction skipped them."""
  import sqlite3
  from dataset.corpus import held_out
  db = sqlite3.connect(path)
  try:
    keys = {dev: held_out(dev) for dev, in db.execute("SELECT DISTINCT device FROM kernels").fetchall()}
    hit = [(k, n) for k, dev, n in db.execute("SELECT key, device, name FROM kernels").fetchall() if k in keys[dev]]
    with db:
      for k, _ in hit:
        for t, c in (("measurements", "kernel"), ("picks", "kernel"), ("kernels", "key")): db.execute(f"DELETE FROM {t} WHERE {c}=?", (k,))
    return [n for _, n in hit]
  finally: db.close()

if __name__ == "__main__":
  # python -m dataset.unseen keys: dataset.corpus.HELD_OUT written again (after a tinygrad or a benchmark change)
  # python -m dataset.unseen drop STORE: a store's held-out kernels removed
  import json, sys
  from dataset.corpus import HELD_OUT
  if sys.argv[1:] == ["keys"]:
    HELD_OUT.write_text(json.dumps({d: sorted(held_out_keys(d)) for d in ("CUDA", "CPU")}, indent=0) + "\n"); print(f"wrote {HELD_OUT}")
  elif len(sys.argv) == 3 and sys.argv[1] == "drop":
    gone = drop_held_out(sys.argv[2])
    print(f"{sys.argv[2]}: dropped {len(gone)} held-out benchmark kernels{': ' + ', '.join(gone[:5]) if gone else ''}")
  else: sys.exit("usage: python -m dataset.unseen keys | drop STORE")
