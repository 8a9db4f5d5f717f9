"""Transformer blocks: decoder (GPT-2, OPT), seq2seq (T5), vision (CvT, Swin, MLP-Mixer) and audio (Conformer), at the sequence
lengths they run at. None is BERT-, ViT-, Whisper- or LLaMA-style: those are the unseen benchmark's (scripts/bench_unseen.py)."""
from __future__ import annotations
from tinygrad import Tensor
from dataset.networks.layers import P, params, bn, conv, conv_bn, linear, ln, split_heads, merge_heads, mha

# ***** CvT stage 1 (Wu et al. 2021, microsoft/CvT cls_cvt.py, CvT-13 config) *****

def _conv_proj(x:Tensor, dim:int, stride:int, p:P) -> Tensor:
  # depthwise 3x3 (bias=False) + BN on the token map, then the pointwise 1x1 as a Linear on tokens (proj_q/k/v, qkv_bias=True)
  x = conv_bn(x, dim, dim, 3, p, stride=stride, padding=1, groups=dim, relu=False)
  return linear(x.flatten(2).transpose(1, 2), dim, dim, p)

def cvt_block(batch=1, tokens_hw=56, dim=64, heads=1, dtype="fp16", device=None) -> list[Tensor]:
  p = params(dtype, device)
  # convolutional token embedding: 7x7 s4 p2 maps a 4*t image to a t x t token map (224 -> 56), then LayerNorm over channels
  x = p.x(batch, 3, 4*tokens_hw, 4*tokens_hw).conv2d(p(dim, 3, 7, 7), p(dim), stride=4, padding=2)
  x = ln(x.flatten(2).transpose(1, 2), dim, p)  # (b, t*t, dim)
  # block: x + attn(norm1(x)); q/k/v see the token map through depthwise-separable conv projections, k/v subsampled by 2
  h = ln(x, dim, p).transpose(1, 2).reshape(batch, dim, tokens_hw, tokens_hw)
  q, k, v = [split_heads(_conv_proj(h, dim, s, p), heads) for s in (1, 2, 2)]
  # note: CvT scales by dim**-0.5 rather than head_dim**-0.5; identical for stage 1 (heads=1), and only a constant otherwise
  x = x + linear(merge_heads(q.scaled_dot_product_attention(k, v)), dim, dim, p)
  # x + mlp(norm2(x)); CvT uses nn.GELU, the exact erf form
  return [x + linear(linear(ln(x, dim, p), dim, 4*dim, p).gelu(approximate="none"), 4*dim, dim, p)]

# ***** GPT-2 block (HF GPT2Block; Conv1D weights are stored (in, out), so no transpose): small, medium, large *****

def gpt2_block(batch=1, seq=512, dim=768, heads=12, dtype="fp16", device=None) -> list[Tensor]:
  p = params(dtype, device)
  x = p.x(batch, seq, dim)
  q, k, v = ln(x, dim, p).linear(p(dim, 3*dim), p(3*dim)).split(dim, dim=-1)  # c_attn
  att = split_heads(q, heads).scaled_dot_product_attention(split_heads(k, heads), split_heads(v, heads), is_causal=True)
  x = x + merge_heads(att).linear(p(dim, dim), p(dim))  # c_proj
  return [x + ln(x, dim, p).linear(p(dim, 4*dim), p(4*dim)).gelu().linear(p(4*dim, dim), p(dim))]  # mlp: gelu_new = tanh form

def gpt2_medium_block(batch=1, seq=1024, dim=1024, heads=16, dtype="fp16", device=None) -> list[Tensor]:
  return gpt2_block(batch, seq, dim, heads, dtype, device)
def gpt2_large_block(batch=1, seq=1024, dim=1280, heads=20, dtype="fp16", device=None) -> list[Tensor]:
  return gpt2_block(batch, seq, dim, heads, dtype, device)

# ***** OPT decoder layer (HF OPTDecoderLayer, OPT-1.3b): pre-LayerNorm, separate biased q/k/v, ReLU MLP *****

def opt_block(batch=1, seq=1024, dim=2048, heads=32, ff=8192, dtype="fp16", device=None) -> list[Tensor]:
  p = params(dtype, device)
  x = p.x(batch, seq, dim)
  x = x + mha(ln(x, dim, p), dim, heads, p, causal=True)
  return [x + linear(linear(ln(x, dim, p), dim, ff, p).relu(), ff, dim, p)]

# ***** T5 encoder + decoder layer (HF T5Block, t5-small): RMS LayerNorm, relative position bias, unscaled attention, ReLU MLP *****

def _rms(x:Tensor, c:int, p:P, eps=1e-6) -> Tensor:
  # T5LayerNorm: the variance in fp32, no mean subtraction and no bias; scaled back in the weight's dtype
  return (x.float() * (x.float().square().mean(-1, keepdim=True) + eps).rsqrt()).cast(x.dtype) * p(c)

def _rel_bias(sq:int, sk:int, h:int, p:P) -> Tensor:
  # relative_attention_bias: a (32 buckets, heads) embedding gathered by each query/key pair's bucket id (integer data here)
  return p(32, h)[p.idx(sq, sk)].permute(2, 0, 1).unsqueeze(0)

def _t5_attn(x:Tensor, kv:Tensor, dim:int, h:int, p:P, bias:Tensor|None) -> Tensor:
  q, k, v = [split_heads(linear(t, dim, dim, p, bias=False), h) for t in (x, kv, kv)]
  s = q @ k.transpose(-1, -2)   # T5 folds the 1/sqrt(d) into its initialization: no scale
  if bias is not None: s = s + bias
  return linear(merge_heads(s.float().softmax(-1).cast(x.dtype) @ v), dim, dim, p, bias=False)

def _t5_ff(x:Tensor, dim:int, ff:int, p:P) -> Tensor: return x + linear(linear(_rms(x, dim, p), dim, ff, p, False).relu(), ff, dim, p, False)

def t5_block(batch=1, seq=512, dec_seq=128, dim=512, heads=8, ff=2048, dtype="fp16", device=None) -> list[Tensor]:
  p = params(dtype, device)
  enc = p.x(batch, seq, dim)
  enc = enc + _t5_attn(h := _rms(enc, dim, p), h, dim, heads, p, _rel_bias(seq, seq, heads, p))
  enc = _rms(_t5_ff(enc, dim, ff, p), dim, p)   # the encoder stack's final_layer_norm
  dec = p.x(batch, dec_seq, dim)
  causal = Tensor.full((dec_seq, dec_seq), float("-inf"), dtype=dec.dtype, device=device).triu(1)
  dec = dec + _t5_attn(h := _rms(dec, dim, p), h, dim, heads, p, _rel_bias(dec_seq, dec_seq, heads, p) + causal)
  dec = dec + _t5_attn(_rms(dec, dim, p), enc, dim, heads, p, None)   # cross-attention: no position bias
  return [enc, _t5_ff(dec, dim, ff, p)]

# ***** Swin Transformer stage (Liu et al. 2021, microsoft/Swin-Transformer, Swin-T): a regular and a shifted-window block *****

def _windows(x:Tensor, r:int, w:int) -> Tensor:  # (b, r, r, c) -> (b*nw*nw, w*w, c)
  b, c, n = x.shape[0], x.shape[3], r//w
  return x.reshape(b, n, w, n, w, c).permute(0, 1, 3, 2, 4, 5).reshape(b*n*n, w*w, c)

def _swin_layer(x:Tensor, r:int, c:int, h:int, w:int, shift:int, p:P) -> Tensor:
  b, n, N = x.shape[0], r//w, w*w
  y = ln(x, c, p).reshape(b, r, r, c)
  if shift: y = y.roll((-shift, -shift), (1, 2))
  q, k, v = linear(_windows(y, r, w), c, 3*c, p).reshape(b*n*n, N, 3, h, c//h).permute(2, 0, 3, 1, 4).chunk(3)
  att = (q[0] * (c//h)**-0.5) @ k[0].transpose(-1, -2)
  att = att + p((2*w-1)**2, h)[p.idx(N, N)].permute(2, 0, 1)   # relative position bias table, gathered by a fixed index
  if shift: att = (att.reshape(b, n*n, h, N, N) + p.x(n*n, 1, N, N)).reshape(b*n*n, h, N, N)   # the shifted windows' mask (data)
  y = linear((att.softmax(-1) @ v[0]).transpose(1, 2).reshape(b*n*n, N, c), c, c, p)
  y = y.reshape(b, n, n, w, w, c).permute(0, 1, 3, 2, 4, 5).reshape(b, r, r, c)
  if shift: y = y.roll((shift, shift), (1, 2))
  x = x + y.reshape(b, r*r, c)
  return x + linear(linear(ln(x, c, p), c, 4*c, p).gelu(approximate="none"), 4*c, c, p)

def swin_stage(batch=1, image=224, stage=0, dim=96, heads=3, window=7, dtype="fp16", device=None) -> list[Tensor]:
  """Stage `stage` (0-3) of Swin-T from its token map; all but the last end in patch merging (2x2 neighbours concatenated, LayerNorm,
  a linear 4c -> 2c). Without the 4x4 patch embedding before stage 0: it is ConvNeXt-T's stem (3 -> 96, 4x4 stride 4, then a
  LayerNorm), and ConvNeXt is in the unseen benchmark."""
  p = params(dtype, device)
  r, c, h = image//4//2**stage, dim*2**stage, heads*2**stage
  x = p.x(batch, r*r, c)
  w = min(window, r)   # a window as large as the map is not shifted (Swin's own rule)
  for shift in (0, w//2 if r > window else 0): x = _swin_layer(x, r, c, h, w, shift, p)
  if stage == 3: return [x]
  x = x.reshape(batch, r//2, 2, r//2, 2, c).permute(0, 1, 3, 4, 2, 5).reshape(batch, (r//2)**2, 4*c)
  return [linear(ln(x, 4*c, p), 4*c, 2*c, p, bias=False)]

# ***** MLP-Mixer (Tolstikhin et al. 2021, Mixer-S/16): patch embedding, token- and channel-mixing MLPs, head *****

def mlp_mixer(batch=1, image=224, patch=16, dim=512, tokens_mlp=256, channels_mlp=2048, depth=2, dtype="fp16", device=None) -> list[Tensor]:
  p = params(dtype, device)
  x = conv(p.x(batch, 3, image, image), 3, dim, patch, p, stride=patch).flatten(2).transpose(1, 2)   # (b, s, dim)
  s = x.shape[1]
  for _ in range(depth):   # flax nn.gelu: the tanh form
    x = x + linear(linear(ln(x, dim, p).transpose(1, 2), s, tokens_mlp, p).gelu(), tokens_mlp, s, p).transpose(1, 2)
    x = x + linear(linear(ln(x, dim, p), dim, channels_mlp, p).gelu(), channels_mlp, dim, p)
  return [linear(ln(x, dim, p).mean(1), dim, 1000, p)]

# ***** Conformer (Gulati et al. 2020, Conformer-M): conv subsampling of log-mel frames, then one macaron block *****

def _ffn(x:Tensor, dim:int, p:P) -> Tensor: return linear(linear(ln(x, dim, p), dim, 4*dim, p).swish(), 4*dim, dim, p)

def conformer_block(batch=1, frames=1000, mels=80, dim=256, heads=4, kernel=31, dtype="fp16", device=None) -> list[Tensor]:
  p = params(dtype, device)
  x = conv(conv(p.x(batch, 1, frames, mels), 1, dim, 3, p, stride=2).relu(), dim, dim, 3, p, stride=2).relu()   # 4x subsampling
  x = x.permute(0, 2, 1, 3).flatten(2)
  x = linear(x, x.shape[2], dim, p)   # (b, t/4, dim)
  x = x + 0.5 * _ffn(x, dim, p)
  x = x + mha(ln(x, dim, p), dim, heads, p)   # absolute positions: the relative-position MHSA is a bias term short of this
  a, g = linear(ln(x, dim, p), dim, 2*dim, p).chunk(2, -1)   # pointwise conv + GLU
  y = (a * g.sigmoid()).transpose(1, 2).conv2d(p(dim, 1, kernel), groups=dim, padding=kernel//2)   # depthwise conv1d
  x = x + linear(bn(y, dim, p).swish().transpose(1, 2), dim, dim, p)
  return [ln(x + 0.5 * _ffn(x, dim, p), dim, p)]

NETWORKS = {f.__name__: f for f in [cvt_block, gpt2_block, gpt2_medium_block, gpt2_large_block, opt_block, t5_block, swin_stage, mlp_mixer,
                                    conformer_block]}
