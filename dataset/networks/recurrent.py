"""Recurrent networks, unrolled over time: elementwise-heavy gate math around small per-step matmuls. The input projection of every
step is one matmul up front (cuDNN's layout); only the hidden-state product is per step."""
from __future__ import annotations
from tinygrad import Tensor
from dataset.networks.layers import params, embedding, linear

def lstm_lm(batch=20, seq=35, vocab=10000, hidden=650, layers=2, dtype="fp16", device=None) -> list[Tensor]:
  """The word-level LSTM language model of Zaremba et al. 2014 (medium; the PyTorch word_language_model example): embedding,
  2 LSTM layers (torch gate order i, f, g, o), a decoder to the vocabulary."""
  p = params(dtype, device)
  x = embedding(p(vocab, hidden), p.idx(batch, seq))
  for _ in range(layers):
    xw, w_hh, b_hh = linear(x, hidden, 4*hidden, p), p(4*hidden, hidden), p(4*hidden)
    h, c, hs = p.x(batch, hidden), p.x(batch, hidden), []   # the carried-over state of truncated BPTT
    for t in range(seq):
      i, f, g, o = (xw[:, t] + h.linear(w_hh.T, b_hh)).chunk(4, -1)
      c = f.sigmoid()*c + i.sigmoid()*g.tanh()
      h = o.sigmoid()*c.tanh()
      hs.append(h)
    x = Tensor.stack(*hs, dim=1)
  return [linear(x, hidden, vocab, p)]

def gru(batch=64, seq=50, inputs=256, hidden=512, layers=2, dtype="fp16", device=None) -> list[Tensor]:
  """A stacked GRU encoder over feature frames (torch nn.GRU equations: gates r, z, n; n sees r * (W_hn h + b_hn))."""
  p = params(dtype, device)
  x, cin = p.x(batch, seq, inputs), inputs
  for _ in range(layers):
    xw, w_hh, b_hh = linear(x, cin, 3*hidden, p), p(3*hidden, hidden), p(3*hidden)
    h, hs = p.x(batch, hidden), []
    for t in range(seq):
      xr, xz, xn = xw[:, t].chunk(3, -1)
      hr, hz, hn = h.linear(w_hh.T, b_hh).chunk(3, -1)
      r, z = (xr + hr).sigmoid(), (xz + hz).sigmoid()
      h = (1 - z)*(xn + r*hn).tanh() + z*h
      hs.append(h)
    x, cin = Tensor.stack(*hs, dim=1), hidden
  return [x]

NETWORKS = {f.__name__: f for f in [lstm_lm, gru]}
