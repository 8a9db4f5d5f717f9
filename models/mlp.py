"""The challenger: a small torch MLP on the same features, trained listwise (ListNet): per kernel, the softmax of its scores is fit to
the softmax of -log2(time/best)/temperature, so like the ranker it only ever compares configs of one kernel."""
from __future__ import annotations
import io, json
from pathlib import Path
import numpy as np
import torch
from torch import nn
from models.mlp_forward import SD_FLOOR, NumpyMLP, standardize

class MLPRanker:
  name = "torch_mlp_listnet"
  DEFAULTS = dict(hidden=256, layers=3, dropout=0.1, lr=1e-3, weight_decay=1e-4, epochs=60, kernels_per_batch=16, temperature=0.5)

  def __init__(self, seed:int=0, threads:int=0, **params):
    self.params, self.seed, self.threads = {**self.DEFAULTS, **params}, seed, threads
    self.net: nn.Module|None = None
    self.mu: np.ndarray|None = None
    self.sd: np.ndarray|None = None

  def get_params(self) -> dict: return {**self.params, "seed": self.seed, "threads": self.threads}

  def _build(self, d:int) -> nn.Module:
    p, layers, w = self.params, [], d
    for _ in range(int(p["layers"]) - 1): layers += [nn.Linear(w, int(p["hidden"])), nn.GELU(), nn.Dropout(p["dropout"])]; w = int(p["hidden"])
    return nn.Sequential(*layers, nn.Linear(w, 1))

  def _norm(self, X:np.ndarray) -> torch.Tensor:
    return torch.from_numpy(standardize(X, self.mu, self.sd))

  def fit(self, X:np.ndarray, time_s:np.ndarray, kernel:np.ndarray) -> MLPRanker:
    if self.threads: torch.set_num_threads(self.threads)
    g = torch.Generator().manual_seed(self.seed)
    torch.manual_seed(self.seed)
    self.mu, self.sd = X.mean(0).astype(np.float32), (X.std(0) + SD_FLOOR).astype(np.float32)
    Xn = self._norm(X)
    # padded per-kernel tensors: (kernels, max configs, features) with a mask
    ks = np.unique(kernel)
    rows = [np.flatnonzero(kernel == k) for k in ks]
    n = max(len(r) for r in rows)
    idx = torch.zeros(len(ks), n, dtype=torch.long)
    mask = torch.zeros(len(ks), n, dtype=torch.bool)
    target = torch.zeros(len(ks), n)
    for i, r in enumerate(rows):
      idx[i, :len(r)], mask[i, :len(r)] = torch.from_numpy(r), True
      target[i, :len(r)] = torch.from_numpy(-np.log2(time_s[r]/time_s[r].min())/self.params["temperature"]).float()
    target = torch.where(mask, target, torch.tensor(-1e9)).softmax(-1)
    self.net = self._build(X.shape[1])
    opt = torch.optim.AdamW(self.net.parameters(), lr=self.params["lr"], weight_decay=self.params["weight_decay"])
    epochs, bs = int(self.params["epochs"]), int(self.params["kernels_per_batch"])
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=self.params["lr"], total_steps=epochs*(-(-len(ks)//bs)))
    self.net.train()
    lens = torch.tensor([len(r) for r in rows])
    for _ in range(epochs):
      for b in torch.randperm(len(ks), generator=g).split(bs):
        # padded to the batch's longest kernel, not the dataset's: the networks shards' kernels have ~32 configs, the grid's up to
        # 502, and a padded row costs a forward and backward like a real one (150k rows: 10x the work padded to 502)
        nb = int(lens[b].max())
        s = self.net(Xn[idx[b, :nb]]).squeeze(-1).masked_fill(~mask[b, :nb], -1e9)
        loss = -(target[b, :nb]*s.log_softmax(-1)).sum(-1).mean()
        opt.zero_grad(); loss.backward(); opt.step(); sched.step()
    self.net.eval()
    return self

  @torch.no_grad()
  def predict(self, X:np.ndarray) -> np.ndarray:
    if self.net is None: raise RuntimeError("MLPRanker is not fitted")
    return self.net(self._norm(X)).squeeze(-1).double().numpy()

  def numpy_forward(self) -> NumpyMLP:
    """The fitted network as numpy arrays: scoring without importing torch (seconds in every search compile worker)."""
    if self.net is None: raise RuntimeError("MLPRanker is not fitted")
    lin = [m for m in self.net if isinstance(m, nn.Linear)]
    return NumpyMLP(self.mu, self.sd, [m.weight.detach().numpy().astype(np.float32) for m in lin], [m.bias.detach().numpy().astype(np.float32) for m in lin])

  def save(self, path:str|Path):
    buf = io.BytesIO()
    torch.save({"state": self.net.state_dict(), "mu": self.mu, "sd": self.sd, "params": self.get_params(), "d": len(self.mu)}, buf)
    Path(path).write_bytes(buf.getvalue())
  @classmethod
  def load(cls, path:str|Path) -> MLPRanker:
    st = torch.load(io.BytesIO(Path(path).read_bytes()), weights_only=False)
    p = dict(st["params"])
    m = cls(seed=p.pop("seed"), threads=p.pop("threads"), **p)
    m.mu, m.sd, m.net = st["mu"], st["sd"], m._build(st["d"])
    m.net.load_state_dict(st["state"]); m.net.eval()
    return m
  def __repr__(self) -> str: return f"MLPRanker({json.dumps(self.params)})"
