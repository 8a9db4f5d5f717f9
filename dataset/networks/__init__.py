"""Whole-network graphs built on Tensor.empty like dataset.workloads: nothing runs, scheduling the outputs yields the network's kernels
as they appear in a real forward pass, or with train=True in a training step (forward, backward, an optimizer update)."""
from __future__ import annotations
import inspect
from typing import Callable
from tinygrad import Tensor
from tinygrad.helpers import Context
from tinygrad.nn.optim import SGD, AdamW
from dataset.networks.layers import recording
from dataset.networks import resnets, cnns, dense, transformers, recurrent, recommender

# the reporting group of each network module (generate-dataset --list groups the corpus by it)
GROUP_OF_MODULE = {resnets: "cnn", cnns: "cnn", dense: "dense-prediction", transformers: "transformer", recurrent: "recurrent",
                   recommender: "recommender"}

def train_step(fn:Callable[..., list[Tensor]], group:str) -> Callable[..., list[Tensor]]:
  """fn with a `train` flag. train=True: the outputs meet upstream gradients (data, as a loss's gradient would be), backward runs into
  every weight, and an optimizer steps: SGD with momentum and weight decay for convnets (the torchvision recipe), AdamW otherwise.
  Returns what a training step realizes: the updated weights and the optimizer's state."""
  sig = inspect.signature(fn)
  def build(train:bool=False, **kw) -> list[Tensor]:
    if not train: return fn(**kw)
    with recording() as builds: outs = fn(**kw)
    weights = [w for b in builds for w in b.weights]
    sum((o * Tensor.empty(*o.shape, dtype=o.dtype, device=o.device)).sum() for o in outs).backward()
    opt = SGD(weights, lr=0.1, momentum=0.9, weight_decay=1e-4) if group == "cnn" else AdamW(weights, lr=1e-4, weight_decay=0.01)
    with Context(TRAINING=1): return opt.schedule_step()
  build.__name__, build.__doc__, build.__wrapped_builder__ = fn.__name__, fn.__doc__, fn
  build.__signature__ = sig.replace(parameters=[*sig.parameters.values(), inspect.Parameter("train", inspect.Parameter.KEYWORD_ONLY, default=False)])
  return build

NETWORKS: dict[str, Callable[..., list[Tensor]]] = {}
GROUPS: dict[str, str] = {}   # network -> group
for _m, _g in GROUP_OF_MODULE.items():
  for _n, _f in _m.NETWORKS.items(): NETWORKS[_n], GROUPS[_n] = train_step(_f, _g), _g

resnet50, cvt_block, gpt2_block = NETWORKS["resnet50"], NETWORKS["cvt_block"], NETWORKS["gpt2_block"]
