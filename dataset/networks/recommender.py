"""DLRM (Naumov et al. 2019, facebookresearch/dlrm, its Criteo Kaggle config): a bottom MLP on dense features, embedding bags on
sparse ones, pairwise dot-product interactions, a top MLP. Gathers and tiny matmuls at large batch, unlike any vision or language net."""
from __future__ import annotations
from tinygrad import Tensor
from dataset.networks.layers import params, embedding, linear

def _mlp(x:Tensor, sizes:tuple[int, ...], p) -> Tensor:
  for i, (a, b) in enumerate(zip(sizes, sizes[1:])): x = linear(x, a, b, p).relu() if i < len(sizes) - 2 else linear(x, a, b, p)
  return x

# the sparse features' vocabularies: a few large tables and a tail of small ones, like Criteo's
ROWS = (100000, 20000, 5000, 1000, 500, 100, 30, 10)

def dlrm(batch=2048, dense=13, dim=16, bag=4, dtype="fp16", device=None) -> list[Tensor]:
  p = params(dtype, device)
  x = _mlp(p.x(batch, dense), (dense, 512, 256, 64, dim), p).relu()
  # EmbeddingBag(mode="sum"): `bag` ids per sample and table, looked up and summed
  feats = [x] + [embedding(p(n, dim), p.idx(batch, bag)).sum(1) for n in ROWS]
  t = Tensor.stack(*feats, dim=1)   # (b, f, dim)
  z = t @ t.transpose(1, 2)   # (b, f, f): every pair's dot product; the strictly lower triangle is kept (interact_features)
  f = len(feats)
  li = Tensor([i*f + j for i in range(f) for j in range(i)], device=device)
  z = z.flatten(1)[:, li]
  return [_mlp(x.cat(z, dim=1), (dim + f*(f-1)//2, 512, 256, 1), p).sigmoid()]

NETWORKS = {f.__name__: f for f in [dlrm]}
