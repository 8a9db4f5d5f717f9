"""A measurement store as learning data: one feature row per ok measurement, its runtime, and the kernel (query group), family
and network it belongs to. A store is read with the shards beside it (dataset.shard: the base and its device's shards, one
dataset). Featurizing a store takes a minute or two, so matrices are cached on disk in CACHE (dataset.paths.cache_dir:
$KERNTUNE_CACHE_DIR, else ~/.cache/kerntune), keyed by the store's content hash and the feature-schema version."""
from __future__ import annotations
import hashlib, json, multiprocessing, os
from dataclasses import dataclass, field
import numpy as np
import pandas as pd
from dataset.paths import cache_dir
from dataset.shard import resolve
from dataset.store import Store
from dataset.kernel import Kernel, TINYGRAD_VERSION, opts_from_json
from dataset.device import renderer_for
from dataset.resources import labels_path, load_labels
from dataset.networks import NETWORKS as _NETWORKS
from models.features import FEATURES, SCHEMA_VERSION, featurize
from models.schedulers import schedulers

NETWORKS = tuple(_NETWORKS)   # a network's kernels have its name as their family: leave-one-network-out groups by it
CACHE_DIR = cache_dir()
CACHE = CACHE_DIR / "features"

@dataclass
class Dataset:
  X: np.ndarray              # (rows, features) float32
  time_s: np.ndarray         # measured min runtime
  kernel: np.ndarray         # AST key: the query group
  family: np.ndarray         # op family or network
  name: np.ndarray           # kernel name
  source: np.ndarray         # 'fixed' | 'hand' | 'random' | 'expand' | 'mutate'
  opts: np.ndarray           # opts JSON
  compile_s: np.ndarray      # seconds its compile took (nan where not recorded): what models.compile_cost learns
  device: str                # device name as measured ("NVIDIA H200")
  arch: str                  # "sm_90", "x86_64"
  backend: str               # tinygrad device the kernels were scheduled for: "CUDA" | "CPU"
  props: dict                # device properties (featurize's inputs)
  tinygrad: str
  hash: str                  # content hash of the measurements used
  regs: np.ndarray|None = None   # compile labels (models.resources), NaN where a row has none; None: the store has no labels file
  frame: np.ndarray|None = None
  shards: list[str] = field(default_factory=list)   # the shards read with the store (dataset.shard), in merge order

  @property
  def network(self) -> np.ndarray: return np.where(np.isin(self.family, NETWORKS), self.family, "")
  def subset(self, m:np.ndarray) -> Dataset:
    return Dataset(self.X[m], self.time_s[m], self.kernel[m], self.family[m], self.name[m], self.source[m], self.opts[m],
                   self.compile_s[m], self.device, self.arch, self.backend, self.props, self.tinygrad, self.hash,
                   None if self.regs is None else self.regs[m], None if self.frame is None else self.frame[m], self.shards)
  def __len__(self) -> int: return len(self.time_s)

def concat(base:Dataset, others:list[Dataset]) -> Dataset:
  """base with other devices' measurements of the same arch (another card) as more query groups: a ranker orders configs within a
  kernel, and the device's properties are feature columns, so a kernel measured on an H100 teaches the order of its configs as one
  measured on an H200 does. The result is base's device (its properties are what the model scores with); rows without compile labels
  have NaN there, as a store's unlabelled rows do. Another device's kernel keys get "@device": a kernel measured on both cards is
  two query groups, its times never ranked against each other."""
  parts = [base, *others]
  for o in others:
    if (o.arch, o.tinygrad) != (base.arch, base.tinygrad):
      raise ValueError(f"{o.device} ({o.arch}, tinygrad {o.tinygrad}) cannot join {base.device} ({base.arch}, tinygrad {base.tinygrad})")
  cat = lambda f: np.concatenate([getattr(d, f) for d in parts])
  keys = np.concatenate([base.kernel] + [np.char.add(o.kernel, f"@{o.device}") for o in others])
  nan = lambda d, f: getattr(d, f) if getattr(d, f) is not None else np.full(len(d), np.nan)
  lab = base.regs is not None
  return Dataset(cat("X"), cat("time_s"), keys, cat("family"), cat("name"), cat("source"), cat("opts"), cat("compile_s"), base.device,
                 base.arch, base.backend, base.props, base.tinygrad, joint_hash([d.hash for d in parts]),
                 np.concatenate([nan(d, "regs") for d in parts]) if lab else None, np.concatenate([nan(d, "frame") for d in parts]) if lab else None,
                 base.shards + [s for d in others for s in d.shards])

def joint_hash(hashes:list[str]) -> str:
  """The content hash of datasets read together (concat's, in its order)."""
  return hashlib.sha256("".join(hashes).encode()).hexdigest()

def backend_of(arch:str) -> str: return "CUDA" if arch.startswith("sm_") else "CPU"

def renderer(backend:str, arch:str):
  return renderer_for("CUDA", arch, compiler=False) if backend == "CUDA" else renderer_for(backend)

def content_hash(df:pd.DataFrame) -> str:
  """sha256 of what the model learns from: every finished measurement's kernel, opts, device, status and time."""
  h = hashlib.sha256()
  for row in df.sort_values(["kernel", "opts", "device"])[["kernel", "opts", "device", "status", "time_s"]].itertuples(index=False):
    h.update(repr(tuple(row)).encode())
  return h.hexdigest()

# featurizing runs in worker processes, one kernel per task: the kernel's AST preparation is shared by all its configs
_W: dict = {}
def _init(backend:str, arch:str, props:dict): _W.update(ren=renderer(backend, arch), props=props)
def _featurize_kernel(task:tuple[bytes, list[str]]) -> np.ndarray:
  blob, opts = task
  ast, ren = Kernel.ast_from_blob(blob), _W["ren"]
  out = np.full((len(opts), len(FEATURES)), np.nan, dtype=np.float32)
  for i, k in enumerate(schedulers(ast, ren, [opts_from_json(json.loads(o)) for o in opts])):
    if k is not None: out[i] = featurize(k, _W["props"])   # None: opts that no longer apply; the row is dropped
  return out

def measurements(path:str|os.PathLike, device:str|None=None, shards:bool=True,
                 skip:frozenset[str]=frozenset()) -> tuple[pd.DataFrame, dict, dict, str, list[str]]:
  """The finished measurements of `path` (with its shards unless not `shards`) on `device` (the store's only device when None),
  the device's record, the kernels by key, the device's name and the shards read. Raises StoreError for a store or shard it cannot
  read, ValueError for a device or tinygrad version it cannot use. `skip`: shards not to read (dataset.shard.resolve)."""
  src = resolve(path, shards, skip)
  s = Store(src.path, readonly=True)
  try: df, devs, kernels = s.frame(), s.devices(), {r["key"]: r for r in s.kernels()}
  finally: s.close()
  names = sorted(df.device.unique())
  if device is None:
    if len(names) != 1: raise ValueError(f"{path} holds measurements of {names}: choose one with --device")
    device = names[0]
  if device not in names: raise ValueError(f"{path} has no measurements on {device!r} (it has {names})")
  df = df[df.device == device]
  tg = sorted(df.tinygrad.dropna().unique())
  if tg and tg != [TINYGRAD_VERSION]: raise ValueError(f"{path} was measured with tinygrad {tg}, this is tinygrad {TINYGRAD_VERSION}")
  return df, devs[device], kernels, device, list(src.shards)

def load(path:str|os.PathLike, device:str|None=None, cache:bool=True, workers:int|None=None, progress:bool=False,
         shards:bool=True, skip:frozenset[str]=frozenset()) -> Dataset:
  """Every ok measurement of `path` (with the shards beside it unless not `shards`; of `device`, a measured device name, if the
  store holds several) as a Dataset. Kernels with fewer than two ok measurements have nothing to rank and are left out. Raises
  StoreError for a store or shard it cannot read, ValueError for one it cannot learn from. `skip`: shards not to read (read with
  another store already)."""
  df, dev, kernels, device, read = measurements(path, device, shards, skip)
  arch, props = dev["arch"], {k: v for k, v in dev.items() if k != "arch"}
  digest = content_hash(df)
  ok = df[(df.status == "ok") & df.time_s.notna() & (df.time_s > 0)]
  ok = ok[ok.groupby("kernel").kernel.transform("size") >= 2].sort_values(["kernel", "id"]).reset_index(drop=True)
  backend = backend_of(arch)
  f = CACHE / f"{digest[:16]}-v{SCHEMA_VERSION}-{backend}.npy"
  if cache and f.is_file() and (X := np.load(f)).shape == (len(ok), len(FEATURES)): pass
  else:
    groups = [(k, g.opts.tolist()) for k, g in ok.groupby("kernel", sort=True)]
    tasks = [(kernels[k]["ast"], o) for k, o in groups]
    workers = workers or min(len(tasks), os.cpu_count() or 1)
    if workers > 1:
      with multiprocessing.get_context("fork").Pool(workers, _init, (backend, arch, props)) as pool:
        parts = pool.map(_featurize_kernel, tasks, chunksize=1)
    else:
      _init(backend, arch, props)
      parts = [_featurize_kernel(t) for t in tasks]
    X = np.concatenate(parts) if parts else np.zeros((0, len(FEATURES)), np.float32)
    if cache:
      CACHE.mkdir(parents=True, exist_ok=True)
      np.save(tmp := f.with_suffix(".tmp.npy"), X); os.replace(tmp, f)
  keep = ~np.isnan(X).any(axis=1)
  ok, X = ok[keep].reset_index(drop=True), X[keep]
  kern, opts = ok.kernel.to_numpy(str), ok.opts.to_numpy(str)
  regs, frame = load_labels(lp, kern, opts) if (lp := labels_path(path)).is_file() else (None, None)
  return Dataset(X, ok.time_s.to_numpy(np.float64), kern, ok.family.to_numpy(str), ok.name.to_numpy(str), ok.source.to_numpy(str), opts,
                 ok.compile_s.to_numpy(np.float64, na_value=np.nan), device, arch, backend, props, TINYGRAD_VERSION, digest, regs, frame,
                 read)
