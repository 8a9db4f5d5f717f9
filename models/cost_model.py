"""The shipped cost model: a trained Ranker plus the metadata that says what it may score, and the API search uses.

On disk: NAME.txt (LightGBM text format) and NAME.json (feature-schema version, feature names, tinygrad version, device and arch,
device properties, dataset hash, held-out metrics, and a sha256 of NAME.txt); optionally NAME.resources.json (models.resources: its
predictions are ranker inputs), NAME.compile.txt (models.compile_cost) and NAME.mlp.npz (the MLP of a models.blend blend: its weight and
fixed scales are in NAME.json), each recorded with its sha256. Loading checks all of it: a model is only ever used with the features,
tinygrad and arch it was trained for.

  m = CostModel.load("models/cost_model_sm_90.txt", arch="sm_90")
  scores = m.score_opts(ast, candidate_opts, ren)   # higher = predicted faster; -inf where the opts do not apply
  search_scorer = m.scorer(props)                   # Schedulers in, scores out"""
from __future__ import annotations
import functools, hashlib, json, math
from typing import Callable
from pathlib import Path
import numpy as np
from tinygrad.uop.ops import UOp
from tinygrad.codegen.opt import Opt
from tinygrad.codegen.opt.postrange import Scheduler
from tinygrad.renderer import Renderer
from dataset.errors import one_line
from dataset.kernel import TINYGRAD_VERSION
from models.features import FEATURES, SCHEMA_VERSION, featurize
from models.schedulers import schedulers
from models.ranker import Ranker
from models.baselines import Regressor
from models.compile_penalty import PENALTY_CAP_S, PENALTY_WEIGHT, penalty
from models.resources import ResourceModel, COLUMNS as RESOURCE_COLUMNS, augment
from models.mlp_forward import NumpyMLP
from models.blend import Blend

FORMAT = "kerntune-cost-model"
MODELS = Path(__file__).parent

class CostModelError(RuntimeError): pass

_COLUMN = {f: i for i, f in enumerate(FEATURES)}   # a name's column, without a scan of FEATURES on every scoring call

def mask_columns(X:np.ndarray, names:list[str]) -> np.ndarray:
  """X with the named feature columns held at 0 (a copy): what a model trained with train-cost-model --mask sees."""
  X = np.array(X, dtype=np.float32, copy=True)
  X[:, [_COLUMN[f] for f in names]] = 0.0
  return X

def default_model_path(device:str, arch:str|None=None) -> Path:
  """The shipped model for a tinygrad device: models/cost_model_<arch>.txt for CUDA (e.g. sm_90), models/cost_model_cpu.txt for the CPU."""
  return MODELS / (f"cost_model_{arch or 'sm_90'}.txt" if device == "CUDA" else f"cost_model_{device.lower()}.txt")

def file_sha256(path:Path) -> str: return hashlib.sha256(path.read_bytes()).hexdigest()

def ranker_params(model:str|Path) -> dict:
  """The Ranker parameters a cost model (NAME.txt or NAME.json) was trained with, without its seed and threads: what an experiment
  that refits it on other rows starts from."""
  return {k: v for k, v in json.loads(Path(model).with_suffix(".json").read_text())["params"].items() if k in Ranker.DEFAULTS}

class CostModel:
  def __init__(self, ranker:Ranker, meta:dict, path:Path|None=None, compile_model:Regressor|None=None, resource_model:ResourceModel|None=None,
               mlp:NumpyMLP|None=None):
    """mlp: the blend's MLP (numpy forward pass); its weight and scales are meta["blend"]."""
    self.ranker, self.meta, self.path, self.compile_model, self.resource_model, self.mlp = ranker, meta, path, compile_model, resource_model, mlp
    self.blend = Blend(ranker, mlp, meta["blend"]["weight"], tuple(meta["blend"]["scales"])) if mlp is not None else None
  @property
  def props(self) -> dict: return self.meta["device_props"]

  # *** scoring: higher = predicted faster. Scores compare configs of one kernel; across kernels they mean nothing ***
  def score(self, X:np.ndarray) -> np.ndarray: return self.opinions(X)[0]
  def opinions(self, X:np.ndarray) -> tuple[np.ndarray, np.ndarray|None]:
    """The model's scores and a second opinion: a blend's MLP alone, in the blend's units (None where it is no blend)."""
    X = np.asarray(X, dtype=np.float32)
    if X.ndim != 2 or X.shape[1] != len(FEATURES): raise ValueError(f"expected a (n, {len(FEATURES)}) feature matrix, got {X.shape}")
    if masked := self.meta.get("masked_features"): X = mask_columns(X, masked)   # trained with them at 0 (train-cost-model --mask)
    Xa = augment(X, self.resource_model)
    if self.blend is None: return self.ranker.predict(Xa), None
    parts = self.blend.parts(Xa)
    return parts["blend"], parts["mlp"]/self.blend.scales[1]
  def score_schedulers(self, ks:list[Scheduler], props:dict|None=None, compile_penalty:bool=False) -> np.ndarray:
    """Candidates as Schedulers with their opts applied. `props`: the device's properties (default: those it was trained with).
    compile_penalty: less models.compile_cost.penalty of their predicted compile seconds (if the model has a compile model)."""
    return self.score_pair(ks, props, compile_penalty)[0]
  def score_pair(self, ks:list[Scheduler], props:dict|None=None, compile_penalty:bool=False) -> tuple[np.ndarray, np.ndarray|None]:
    """score_schedulers' scores and opinions' second opinion of the same candidates. The second opinion takes no compile penalty:
    on the unseen splits it alone ranks BEAM=2's picks of strided convs high, and with the penalty it ranks them as low as the
    blend (split 43's 1.43x conv: 3rd of 503 configs, 169th with it; results/logs/ranker_limits/all_ranks.txt)."""
    if not ks: return np.zeros(0), None
    X = np.stack([featurize(k, self.props if props is None else props) for k in ks])
    s, alt = self.opinions(X)
    if compile_penalty and self.compile_model is not None:
      s = s - self.penalty_unit*penalty(self.compile_model.predict_log_time(X), *self.penalty_params)
    return s, alt
  @property
  def penalty_params(self) -> tuple[float, float]:
    """(cap_s, weight) of the compile penalty: what the model's metadata records with its compile model, so that a model file
    says how it ranks (a copy with another penalty is a variant a benchmark can run beside it); the module's defaults where it
    records none."""
    p = (self.meta.get("compile_model") or {}).get("penalty") or {}
    return float(p.get("cap_s", PENALTY_CAP_S)), float(p.get("weight", PENALTY_WEIGHT))
  @property
  def penalty_unit(self) -> float:
    """The compile penalty's weight is in the ranker's score units (it was tuned on the ranker's held-out scores). A blend scores in
    units of each part's within-kernel spread, where one ranker unit is 1/scales[0]; unconverted, its penalty would weigh ~5x as much
    against the model's own preference."""
    return 1.0/self.blend.scales[0] if self.blend is not None else 1.0
  def score_opts(self, ast:UOp, opts_list:list[tuple[Opt, ...]], ren:Renderer, props:dict|None=None) -> np.ndarray:
    """Candidates of one kernel as opt sequences: -inf where they do not apply."""
    ks = schedulers(ast, ren, opts_list)
    ok = [i for i, k in enumerate(ks) if k is not None]
    out = np.full(len(ks), -math.inf)
    if ok: out[ok] = self.score_schedulers([ks[i] for i in ok], props)
    return out
  def scorer(self, props:dict|None=None, compile_penalty:bool=True) -> Callable[[list[Scheduler]], np.ndarray]:
    """What search calls: Schedulers in, scores out (higher = predicted faster; by default less the penalty for a slow compile,
    which is what a search's measurements cost). It pickles as the model's path, so a compile worker can score too (it loads the
    model once per process)."""
    return Scorer(self, props, compile_penalty)

  # *** persistence ***
  def save(self, path:str|Path):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    self.ranker.save(path)
    self.meta.update(format=FORMAT, model_file=path.name, model_sha256=file_sha256(path))
    if self.resource_model is not None:
      self.resource_model.save(rp := path.with_suffix(".resources.json"))
      self.meta["resource_model"] = {**self.meta.get("resource_model", {}), "file": rp.name, "sha256": file_sha256(rp), "columns": list(RESOURCE_COLUMNS)}
    if self.mlp is not None:
      self.mlp.save(mp := path.with_suffix(".mlp.npz"))
      self.meta["blend"] = {**self.meta["blend"], "file": mp.name, "sha256": file_sha256(mp)}
    path.with_suffix(".json").write_text(json.dumps(self.meta, indent=1, sort_keys=False) + "\n")

  @classmethod
  def load(cls, path:str|Path, arch:str|None=None, device:str|None=None, allow_device_mismatch:bool=False) -> CostModel:
    """Load NAME.txt + NAME.json. Raises CostModelError (one line) on a missing or corrupt file, or a model trained for another
    feature schema, tinygrad version or arch (`arch`, if given); and for another device (`device`: a measured device name such as
    "NVIDIA H200" or a tinygrad backend such as "CUDA", if given) unless allow_device_mismatch."""
    given = Path(path)   # every message names the file the user gave, then what of the model is wrong
    path = given.with_suffix(".txt") if given.suffix == ".json" else given
    mj = path.with_suffix(".json")
    if not given.exists(): raise CostModelError(f"no cost model file {given}: no such file")
    if given.is_dir(): raise CostModelError(f"{given} is a directory, not a cost model (NAME.txt with NAME.json beside it)")
    for f, what in ((path, "model file"), (mj, "metadata file")):
      if not f.is_file(): raise CostModelError(f"{given} is not a cost model: its {what} {f.name} is missing (a cost model is NAME.txt with NAME.json beside it)")
    try: meta = json.loads(mj.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e: raise CostModelError(f"{given} is corrupt: its metadata {mj.name} is not valid JSON ({e})") from None
    except OSError as e: raise CostModelError(f"{given}: cannot read {mj.name}: {e.strerror or e}") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT: raise CostModelError(f"{given} is not a cost model: {mj.name} is not a kerntune cost model's metadata")
    try: sha = file_sha256(path)
    except OSError as e: raise CostModelError(f"{given}: cannot read {path.name}: {e.strerror or e}") from None
    if meta.get("model_sha256") != sha:
      raise CostModelError(f"{path} is corrupt: its sha256 does not match the one recorded in {mj.name}")
    if meta.get("feature_schema") != SCHEMA_VERSION or meta.get("features") != FEATURES:
      raise CostModelError(f"{path} was trained on feature schema v{meta.get('feature_schema')}, this kerntune computes "
                           f"v{SCHEMA_VERSION}: retrain it with train-cost-model")
    if meta.get("tinygrad") != TINYGRAD_VERSION:
      raise CostModelError(f"{path} was trained with tinygrad {meta.get('tinygrad')}, this is tinygrad {TINYGRAD_VERSION}: retrain it")
    if arch is not None and meta.get("arch") != arch:
      raise CostModelError(f"{path} was trained for arch {meta.get('arch')}, not {arch}")
    if device is not None and device not in (meta.get("device"), meta.get("backend")) and not allow_device_mismatch:
      raise CostModelError(f"{path} was trained on {meta.get('device')!r} ({meta.get('backend')}), not {device!r} "
                           "(allow_device_mismatch to use it anyway)")
    try: ranker = Ranker.load(path, **{k: v for k, v in meta.get("params", {}).items() if k in Ranker.DEFAULTS or k in ("seed", "threads")})
    except Exception as e: raise CostModelError(f"{path} is corrupt: LightGBM cannot read it ({one_line(e)})") from None
    side = {}
    for what, load in (("compile_model", Regressor.load), ("resource_model", ResourceModel.load), ("blend", NumpyMLP.load)):   # optional parts, each checked
      if (cm := meta.get(what)) is None: continue
      f = path.parent / cm.get("file", "")
      if not f.is_file() or file_sha256(f) != cm.get("sha256"):
        raise CostModelError(f"{f} is missing or corrupt: its sha256 does not match the one recorded in {mj.name}")
      try: side[what] = load(f)
      except Exception as e: raise CostModelError(f"{f} is corrupt: it cannot be read ({one_line(e)})") from None
    if not isinstance(masked := meta.get("masked_features", []), list) or set(masked) - set(FEATURES):
      raise CostModelError(f"{path} is corrupt: its masked_features are not this schema's feature names")
    want = len(FEATURES) + (len(RESOURCE_COLUMNS) if "resource_model" in side else 0)
    if ranker.booster.num_feature() != want:
      raise CostModelError(f"{path} expects {ranker.booster.num_feature()} inputs, the schema (and resource model) give {want}")
    if (mlp := side.get("blend")) is not None and (mlp.weights[0].shape[1] != want or not isinstance(meta["blend"].get("weight"), (int, float))
                                                   or len(meta["blend"].get("scales") or []) != 2):
      raise CostModelError(f"{path}: its blend's MLP or its weight and scales do not fit this model (retrain it with train-cost-model)")
    return cls(ranker, meta, path, side.get("compile_model"), side.get("resource_model"), mlp)

_LOADED: dict[str, CostModel] = {}
@functools.cache   # made once per process: it inspects the loaded libraries (about a millisecond)
def _blas():
  from threadpoolctl import ThreadpoolController
  return ThreadpoolController()

def one_blas_thread():
  """A context in which this process's BLAS runs one thread: a search's batches are small (tens to hundreds of rows) and its
  compile workers load every core. A blend's MLP on 26 rows took 48 ms with an OpenBLAS thread per core on a loaded 2-core machine,
  0.8 ms on one; the compile workers cap theirs for good (dataset.compile), the process a search runs in (a user's, under drop-in)
  only while it scores."""
  return _blas().limit(limits=1, user_api="blas")

class Scorer:
  """A cost model with the device properties it scores for: Schedulers in, scores out. Pickles as the model file's path."""
  def __init__(self, model:CostModel, props:dict|None, compile_penalty:bool=True):
    self.model, self.props, self.compile_penalty = model, props, compile_penalty
  def __call__(self, ks) -> np.ndarray:
    with one_blas_thread(): return self.model.score_schedulers(list(ks), self.props, self.compile_penalty)
  def pair(self, ks) -> tuple[np.ndarray, np.ndarray|None]:   # the scores and CostModel.score_pair's second opinion
    with one_blas_thread(): return self.model.score_pair(list(ks), self.props, self.compile_penalty)
  def portable(self) -> bool: return self.model.path is not None   # can score in another process (search's compile pool)
  def __getstate__(self) -> dict:
    if self.model.path is None: raise TypeError("a cost model that was not loaded from a file cannot be sent to another process")
    return {"path": str(self.model.path), "props": self.props, "compile_penalty": self.compile_penalty}
  def __setstate__(self, st:dict):
    if st["path"] not in _LOADED: _LOADED[st["path"]] = CostModel.load(st["path"])
    self.model, self.props, self.compile_penalty = _LOADED[st["path"]], st["props"], st["compile_penalty"]
