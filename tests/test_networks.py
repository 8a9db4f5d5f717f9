"""Whole-network graphs schedule (nothing runs) and keep their full architecture. Kernel counts are for tinygrad 0.14.0."""
import inspect
import pytest
from tinygrad.uop.ops import Ops
from dataset.networks import GROUPS, NETWORKS, resnet50, cvt_block, gpt2_block
from dataset.kernel import kernel_asts

def _reduces(asts) -> int: return sum(1 for a in asts for u in a.toposort() if u.op is Ops.REDUCE)

@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_resnet50(dtype):
  outs = resnet50(batch=2, image=64, dtype=dtype, device="CPU")
  assert [o.shape for o in outs] == [(2, 1000)]
  asts = kernel_asts(*outs)
  # one reduce per conv (1 stem + 16 bottlenecks * 3 + 4 downsamples = 53), + maxpool, global avgpool, fc.
  # a dropped block/layer or missing downsample changes this count
  assert _reduces(asts) == 53 + 3
  # stem, maxpool, 48 bottleneck convs (downsamples fuse into their block's conv3, avgpool into the last conv3), fc
  assert len(asts) >= 50
  assert len({a.key for a in asts}) >= 15

@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_cvt_block(dtype):
  outs = cvt_block(batch=1, tokens_hw=8, dim=64, heads=1, dtype=dtype, device="CPU")
  assert [o.shape for o in outs] == [(1, 8*8, 64)]
  asts = kernel_asts(*outs)
  # embed conv, 3 depthwise convs, 3 pointwise projections, qk / max / sum / av, out proj, 2 mlp linears = 14; 3 LNs * 2 = 6
  assert _reduces(asts) == 20
  assert len(asts) >= 20

def test_cvt_block_kv_stride():
  # k/v are subsampled 2x: attention scores are 64 queries x 16 keys, never 64x64. dim=32 keeps those sizes unambiguous
  asts = kernel_asts(*cvt_block(tokens_hw=8, dim=32, heads=1, dtype="fp32", device="CPU"))
  sizes = {u.src[0].src[0].src[0].arg for a in asts for u in a.toposort() if u.op is Ops.STORE}  # STORE -> INDEX -> PARAM -> size
  assert 64*16 in sizes and 64*64 not in sizes

def test_cvt_block_multihead():
  outs = cvt_block(tokens_hw=8, dim=64, heads=4, dtype="fp32", device="CPU")
  assert [o.shape for o in outs] == [(1, 64, 64)]
  assert _reduces(kernel_asts(*outs)) == 20

@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_gpt2_block(dtype):
  outs = gpt2_block(batch=2, seq=16, dim=64, heads=2, dtype=dtype, device="CPU")
  assert [o.shape for o in outs] == [(2, 16, 64)]
  asts = kernel_asts(*outs)
  # qkv, qk, max, sum, av, proj, fc, fc2 = 8; 2 LNs * 2 = 4
  assert _reduces(asts) == 12
  assert len(asts) >= 12
  # the causal mask is a WHERE fused into the qk kernel
  assert sum(any(u.op is Ops.WHERE for u in a.toposort()) for a in asts) == 1

def test_registry():
  assert {"resnet50": resnet50, "cvt_block": cvt_block, "gpt2_block": gpt2_block}.items() <= NETWORKS.items()
  assert len(NETWORKS) >= 23 and set(GROUPS) == set(NETWORKS)
  assert set(GROUPS.values()) == {"cnn", "dense-prediction", "transformer", "recurrent", "recommender"}
  for n, f in NETWORKS.items():   # the corpus sets batch, dtype and train on every one; defaults are the sizes they run at
    ps = inspect.signature(f).parameters
    assert {"dtype", "device", "train"} <= set(ps) and ps["dtype"].default == "fp16" and ps["train"].default is False, n
    assert all(isinstance(p.default, (int, str, bool)) or p.default is None for p in ps.values()), n   # corpus names hold no tuples

# every network at a CPU size (the corpus' small variants use the same: dataset.corpus.SMALL_NETWORK)
from dataset.corpus import SMALL_NETWORK
FAST = ["gpt2_medium_block", "t5_block", "swin_stage", "dcgan_generator", "gru", "dlrm"]

def _check(name:str, train:bool):
  outs = NETWORKS[name](**SMALL_NETWORK[name], dtype="fp32", device="CPU", train=train)
  asts = kernel_asts(*outs)
  assert len(asts) >= 5 and all(0 not in o.shape for o in outs)
  if train:   # backward and the optimizer: every weight comes back updated, and far more kernels than the forward pass
    fwd = kernel_asts(*NETWORKS[name](**SMALL_NETWORK[name], dtype="fp32", device="CPU"))
    assert len(asts) > 3*len(fwd) and len(outs) > 3

def test_small_sizes_cover_every_network(): assert set(SMALL_NETWORK) == set(NETWORKS)

@pytest.mark.parametrize("train", [False, True])
@pytest.mark.parametrize("name", FAST)
def test_networks_schedule(name, train): _check(name, train)

@pytest.mark.slow
@pytest.mark.parametrize("train", [False, True])
@pytest.mark.parametrize("name", sorted(set(NETWORKS) - set(FAST)))
def test_networks_schedule_all(name, train): _check(name, train)

def test_fp16_train_step():
  # fp16 weights, fp32 optimizer state (tinygrad's OPTIM_DTYPE default): both dtypes are in the step's kernels
  outs = NETWORKS["gpt2_block"](batch=1, seq=16, dim=64, heads=2, dtype="fp16", device="CPU", train=True)
  assert {str(o.dtype) for o in outs} >= {"dtypes.half", "dtypes.float"}
