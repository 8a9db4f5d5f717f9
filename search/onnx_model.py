"""A whole model on a tinygrad device, for tune-model: an ONNX file (or a torch.nn.Module exported to one through torch.onnx) run by
tinygrad's ONNX runner with one fixed set of inputs, and the kernels of one forward pass, deduplicated by AST key and counted."""
from __future__ import annotations
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any
import numpy as np
from tinygrad import Tensor
from tinygrad.dtype import _to_np_dtype
from tinygrad.helpers import Context
from dataset.errors import one_line
from dataset.kernel import Kernel, kernel_asts

class ModelError(RuntimeError): pass

def parse_shapes(specs:list[str]) -> dict[str|None, tuple[int, ...]]:
  """--input-shape NAME=1,3,224,224 (or just 1,3,224,224 for a model with one input)."""
  out: dict[str|None, tuple[int, ...]] = {}
  for s in specs:
    name, _, dims = s.rpartition("=")
    try: out[name or None] = tuple(int(d) for d in dims.split(","))
    except ValueError: raise ModelError(f"bad --input-shape {s!r}: expected NAME=D,D,... or D,D,...") from None
  return out

def _patch_onnx_consts():
  """tinygrad's ONNX runner folds scalar initializers into device-less CONSTs and reads some back with tolist(), which realizes a
  device-less tensor on the CPU device: on a GPU host without clang that fails (the CvT export hits it). Such a constant's value
  is its arg: read it without realizing anything."""
  import tinygrad.nn.onnx as O
  from tinygrad.uop.ops import Ops
  if getattr(O._to_python_const, "kerntune", False): return
  orig = O._to_python_const
  def to_python_const(t:Tensor): return t.uop.arg if t.device is None and t.uop.op is Ops.CONST else orig(t)
  to_python_const.kerntune = True   # type: ignore[attr-defined]
  O._to_python_const = to_python_const

class OnnxModel:
  """An ONNX file on a tinygrad device: the runner with its weights realized there, and one fixed set of inputs."""
  def __init__(self, path:str|Path, device:str, inputs:dict[str, np.ndarray]|None=None, shapes:dict|None=None, seed:int=0):
    from tinygrad.nn.onnx import OnnxRunner
    self.path, self.device = Path(path), device
    if not self.path.is_file(): raise ModelError(f"no such ONNX file: {self.path}")
    _patch_onnx_consts()
    try:
      with Context(DEV=device):   # the runner puts weights and the constants its ops make on the default device
        self.runner = OnnxRunner(self.path)
        # weights realized once: scheduling a forward pass without running it (kernel_asts) would otherwise rebind them unfilled
        Tensor.realize(*[v for v in self.runner.graph_values.values() if isinstance(v, Tensor)],
                       *[v for n in self.runner.graph_nodes for v in n.opts.values() if isinstance(v, Tensor)])
    except Exception as e: raise ModelError(f"{self.path} is not a valid ONNX model ({one_line(e, 300)})") from None
    self.names = list(self.runner.graph_inputs)
    self.arrays = inputs if inputs is not None else random_inputs(self.runner.graph_inputs, shapes or {}, seed)
    self.inputs = [Tensor(self.arrays[n], device=device).realize() for n in self.names]

  def forward(self, *xs:Tensor) -> list[Tensor]:
    """Lazy outputs of one forward pass."""
    with Context(DEV=self.device): outs = self.runner(dict(zip(self.names, xs)))
    return [outs[n] for n in self.runner.graph_outputs]

  def kernels(self, name:str) -> tuple[list[Kernel], Counter]:
    """The distinct kernels of one forward pass, in schedule order, and how many times each runs."""
    try: asts = kernel_asts(*self.forward(*self.inputs))
    except Exception as e: raise ModelError(f"tinygrad cannot run {self.path} ({one_line(e, 300)})") from None
    counts = Counter(a.key.hex() for a in asts)
    uniq = list({a.key.hex(): a for a in asts}.values())
    return [Kernel(a.key.hex(), a, f"{name}#{i}", "onnx", name) for i, a in enumerate(uniq)], counts

def random_inputs(specs:dict, shapes:dict, seed:int) -> dict[str, np.ndarray]:
  rng, out = np.random.default_rng(seed), {}
  for unknown in set(shapes) - set(specs) - {None}: raise ModelError(f"--input-shape names {unknown!r}, the model's inputs are {', '.join(specs)}")
  for name, spec in specs.items():
    shape = shapes.get(name, shapes.get(None) if len(specs) == 1 else None) or spec.shape
    if any(not isinstance(d, int) for d in shape):
      raise ModelError(f"input {name} has symbolic dims {spec.shape}: give --input-shape {name}=D,D,...")
    dt = _to_np_dtype(spec.dtype)
    # integer inputs (ids, masks) stay in {0, 1}, valid for any embedding or mask
    out[name] = rng.standard_normal(shape).astype(dt) if np.issubdtype(dt, np.floating) else rng.integers(0, 2, shape).astype(dt)
  return out

def export_torch(module, example_inputs:tuple, path:Path) -> Path:
  """The module through the legacy TorchScript exporter (the dynamo one needs onnxscript), opset 17."""
  import torch, warnings
  with warnings.catch_warnings():   # the legacy exporter's deprecation notice and tracer warnings, on every export
    warnings.simplefilter("ignore")
    # not under no_grad: there nn.MultiheadAttention takes its fused fast path, which has no ONNX export
    export = lambda m, xs: torch.onnx.export(m, tuple(xs), str(path), dynamo=False, opset_version=17,
                                             input_names=[f"input{i}" for i in range(len(xs))])
    try: export(module, example_inputs)
    except RuntimeError as e:
      # the exporter's constant folding can put a folded buffer on the CPU next to CUDA weights (GPT-2's causal mask on the
      # H200): export a CPU copy then; the weights are the same
      if "same device" not in str(e): raise
      import copy
      export(copy.deepcopy(module).cpu(), [x.cpu() for x in example_inputs])
  return path

def open_model(model:str|Path|Any, example_inputs:tuple|None, device:str, name:str|None=None, input_shapes:dict|None=None,
               seed:int=0) -> tuple[str, OnnxModel, list[Kernel], Counter, Any]:
  """(name, the model on `device`, its distinct kernels, their counts, the torch module or None) of an ONNX path or a torch module."""
  module = None
  with tempfile.TemporaryDirectory(prefix="tune_model_") as tmp:
    if isinstance(model, (str, Path)): path, arrays = Path(model), None
    else:
      module, example_inputs = model.eval(), tuple(example_inputs or ())
      try: path = export_torch(module, example_inputs, Path(tmp) / "model.onnx")
      except Exception as e: raise ModelError(f"torch.onnx cannot export {type(module).__name__} ({one_line(e, 300)})") from None
      arrays = {f"input{i}": x.detach().cpu().numpy() for i, x in enumerate(example_inputs)}
    name = name or (path.stem if module is None else type(module).__name__)
    m = OnnxModel(path, device, arrays, input_shapes, seed)
    kernels, counts = m.kernels(name)
  return name, m, kernels, counts, module
