"""Cost-model features of one candidate, read from tinygrad's Scheduler after its opts are applied. Nothing is lowered or compiled:
a buffer's index expression is evaluated numerically on a few hundred points (thread 0's register tile, the first warp, a unit step
along every axis), which gives exact strides, coalescing and vector widths, also through the div/mod of convolutions and tensor cores.
Every per-config column is repeated as its difference from the same column of the kernel's unoptimized Scheduler (dataset.kernel's
`root`): a ranker orders configs within a kernel, and trees split on absolute values, so the differences carry the within-kernel
scale (with the register model of models.resources, on the Hopper dataset: kernel-held-out tau 0.770 -> 0.773, top-1 and top-5
within seed noise; results/cost_model.md).

One fixed-length vector per candidate, with the device's properties as inputs, so a single schema spans devices."""
from __future__ import annotations
import math
from dataclasses import dataclass
import numpy as np
from tinygrad.uop.ops import UOp, Ops, AxisType, GroupOp
from tinygrad.codegen.opt import OptOps
from tinygrad.codegen.opt.postrange import Scheduler

# bump on any change to what a column means or to the column list: models and cached matrices are keyed by it
SCHEMA_VERSION = 2

DEVICE_KEYS = ("sm_count", "clock_mhz", "mem_bw_gbs", "l2_bytes", "smem_per_block", "fp32_tflops", "fp16_tc_tflops")
AXES: dict[str, tuple[AxisType, ...]] = {"global": (AxisType.GLOBAL,), "thread": (AxisType.THREAD,), "warp": (AxisType.WARP,),
  "local": (AxisType.LOCAL,), "group": (AxisType.GROUP_REDUCE,), "upcast": (AxisType.UPCAST,), "unroll": (AxisType.UNROLL,),
  "reduce": (AxisType.REDUCE,), "loop": (AxisType.WEAK, AxisType.LOOP)}
_AX_OF = {t: name for name, ts in AXES.items() for t in ts}
OPS = tuple(OptOps)
SEQ_LEN = 8          # opt slots encoded one by one (the sequence itself); the counts cover longer sequences
BUF_SLOTS = ("out", "in0", "in1", "in2")   # the first store, then the three loads that move the most bytes
TILE_MAX = 1024      # points of thread 0's upcast/unroll tile that are evaluated
TRANSCENDENTAL = {Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.SQRT, Ops.RECIPROCAL, Ops.FDIV, Ops.POW}

def _topo(u:UOp) -> dict[UOp, None]:
  # u.toposort() from tinygrad's cached backward slice: a candidate's AST had its slice computed for its ranges, and most of its
  # buffers' index expressions are shared with its parent's
  return {**u.backward_slice, u: None}

def _l2(x) -> float: return math.log2(1.0 + max(float(x), 0.0))

# *** column names: built once, in the order featurize emits them ***

_BUF_COLS = ("present", "store", "itemsize", "numel", "valid_terms", "idx_ops", "idx_divmod", "dep_axes", "stride_tx", "stride_bx", "stride_inner_red",
             "stride_inner_up", "warp_sectors", "warp_elems", "warp_eff", "vec_sectors", "tile_elems", "tile_runs", "vec", "vec_insts",
             "trips", "insts_thread", "elems_thread", "sectors_total", "l1_bytes", "block_foot", "l2_bytes", "reuse")
_AX_BUF_COLS = ("min_stride", "contig", "bcast")
_AGG_COLS = ("n", "l1_bytes", "l2_bytes", "dram_bytes", "max_warp_sectors", "mean_warp_eff", "min_warp_eff", "uncoalesced",
             "insts_thread", "elems_thread", "tile_elems", "vec_mean", "reuse_max", "idx_ops", "l1_reuse")

def _names() -> list[str]:
  n = [f"dev_{k}" for k in DEVICE_KEYS]
  n += ["k_flops", "k_bytes", "k_ai", "k_params", "k_loads", "k_stores", "k_reduceops", "k_alu", "k_transc", "k_where",
        "k_out_numel", "k_reduce_numel", "k_itemsize_max", "k_acc_itemsize", "k_tc_eligible"]
  for a in AXES: n += [f"ax_{a}_n", f"ax_{a}_prod", f"ax_{a}_max"]
  n += ["n_axes", "n_valid", "threads_block", "warps_block", "blocks", "threads_total", "warps_total", "upcast_size", "acc_size",
        "unroll_size", "reduce_len", "loop_trips", "smem_bytes", "smem_frac", "regs_est", "regs_spill", "blocks_per_sm", "occupancy",
        "waves", "wave_eff", "sm_util", "flops_thread", "bytes_thread", "nolocals",
        "tc", "tc_n", "tc_m", "tc_k", "tc_threads", "tc_ept", "tc_in_itemsize", "tc_select", "tc_opt", "tc_use",
        "t_compute", "t_dram", "t_l2", "t_l1", "t_bound", "t_issue", "body_alu", "body_loads", "flops_per_load", "active_warps",
        "inflight_bytes", "bw_achieved", "t_lat_dram", "t_lat_l1", "t_lat_compute", "t_model",
        "fma_eff", "t_fma", "t_lsu", "t_sm"]
  n += [f"opt_n_{o.name}" for o in OPS] + [f"opt_amt_{o.name}" for o in OPS] + ["opt_len"]
  n += [f"seq{i}_{f}" for i in range(SEQ_LEN) for f in ("op", "axis", "amt")]
  for s in BUF_SLOTS:
    n += [f"{s}_{c}" for c in _BUF_COLS] + [f"{s}_{a}_{c}" for a in AXES for c in _AX_BUF_COLS]
  n += [f"loads_{c}" for c in _AGG_COLS]
  return n

# per-config columns: everything but the device, kernel and opt-sequence columns (the root has no opts) and the buffer columns that
# only depend on the kernel
_ABS = _names()
_REL = [i for i, f in enumerate(_ABS) if not f.startswith(("dev_", "k_", "opt_", "seq")) and not f.endswith(("_present", "_store", "_itemsize", "_numel"))]
FEATURES: list[str] = _ABS + [f"rel_{_ABS[i]}" for i in _REL]
FEATURE_GROUPS: dict[str, list[str]] = {
  "device": [f for f in FEATURES if f.startswith("dev_")], "kernel": [f for f in FEATURES if f.startswith("k_")],
  "axes": [f for f in FEATURES if f.startswith("ax_") or f in ("n_axes", "n_valid")],
  "derived": FEATURES[FEATURES.index("threads_block"):FEATURES.index("tc")],
  "tensor_core": [f for f in FEATURES if f.startswith("tc")], "roofline": [f for f in FEATURES if f.startswith("t_")],
  "opts": [f for f in FEATURES if f.startswith(("opt_", "seq"))],
  "buffers": [f for f in FEATURES if f.startswith(BUF_SLOTS) or f.startswith("loads_")],
  "relative": [f for f in FEATURES if f.startswith("rel_")]}

def group_features(groups:list[str]) -> list[str]:
  """The feature names of FEATURE_GROUPS' `groups`, in order (what train-cost-model --mask holds at 0)."""
  return [f for g in groups for f in FEATURE_GROUPS[g]]

# *** kernel-level facts: the same for every config of a kernel ***

@dataclass(frozen=True)
class KernelStats:
  flops: float; bytes: float; params: int; loads: int; stores: int; reduceops: int; alu: int; transc: int; where: int
  out_numel: float; reduce_numel: float; itemsize_max: int; acc_itemsize: int; tc_eligible: int
  def row(self) -> list[float]:
    return [_l2(self.flops), _l2(self.bytes), _l2(self.flops/max(self.bytes, 1.0)), self.params, self.loads, self.stores, self.reduceops,
            self.alu, self.transc, self.where, _l2(self.out_numel), _l2(self.reduce_numel), self.itemsize_max, self.acc_itemsize,
            self.tc_eligible]

def _size(r:UOp) -> int: return int(r.vmax) + 1

def _points(u:UOp) -> float:
  """How often the value-graph op u runs: once per point of the ranges it depends on. A WMMA stands for a whole tensor-core tile:
  its ranges hide the tile's tagged upcast/unroll ranges, so it counts prod(dims)/threads multiply-adds per thread per point of the
  ranges it names, divided by those ranges' sizes."""
  n = float(math.prod(_size(r) for r in u.ranges))
  if u.op is Ops.WMMA:
    dims, threads, ups = u.arg[0], u.arg[3], u.arg[-1]
    named: dict = {}
    for axes in ups:
      for rid, sz in axes: named[rid] = max(named.get(rid, 1), sz)
    n *= math.prod(dims)/threads/math.prod(named.values())
  return n

def kernel_stats(k:Scheduler, topo:dict|None=None, bufs:list|None=None, idx_nodes:set|None=None) -> KernelStats:
  """Facts of the kernel, computed from any of its Schedulers: every number comes out the same whatever opts were applied (up to
  PADTO's padding), so a candidate carries its kernel's facts without a reference to the unoptimized kernel. FLOPs count each ALU op
  of the value graph (index math excluded) once per point of the iteration space it depends on; a tensor-core WMMA as its MACs."""
  topo = _topo(k.ast) if topo is None else topo
  bufs = [u for u in topo if u.op is Ops.INDEX][::-1] if bufs is None else bufs   # = k.bufs
  idx_nodes = {u for b in bufs for u in _topo(b.src[1])} if idx_nodes is None else idx_nodes
  value = [u for u in topo if u not in idx_nodes]
  ops = [u for u in value if u.op in GroupOp.ALU or u.op is Ops.WMMA]
  pts = [_points(u) for u in ops]
  params = [u for u in topo if u.op is Ops.PARAM]
  stores = [s.src[0] for s in topo if s.op is Ops.STORE]
  reds = [u for u in value if u.op is Ops.REDUCE]
  wmma = [u for u in value if u.op is Ops.WMMA]
  in_red = {r.src[0] for r in reds}
  acc = reds[0].dtype.itemsize if reds else wmma[0].dtype.scalar().itemsize if wmma else 0
  r0 = reds[0] if reds else None
  tc_eligible = int(bool(wmma) or (r0 is not None and r0.arg[0] is Ops.ADD and (r0.src[0].op is Ops.MUL or
                (r0.src[0].op is Ops.CAST and r0.src[0].src[0].op is Ops.MUL))))
  out_numel = float(max((s.src[0].max_numel() for s in stores), default=1))
  return KernelStats(flops=float(sum(pts)), bytes=float(sum(p.max_numel()*p.dtype.itemsize for p in params)), params=len(params),
    loads=len(bufs) - len(stores), stores=len(stores), reduceops=len(reds) + sum(w not in in_red for w in wmma), alu=len(ops),
    transc=sum(1 for u in value if u.op in TRANSCENDENTAL), where=sum(1 for u in value if u.op is Ops.WHERE), out_numel=out_numel,
    reduce_numel=max(pts, default=1.0)/out_numel, itemsize_max=max((p.dtype.itemsize for p in params), default=0),
    acc_itemsize=acc, tc_eligible=tc_eligible)

# *** numeric evaluation of index expressions ***

_BIN = {Ops.ADD: np.add, Ops.MUL: np.multiply, Ops.SUB: np.subtract, Ops.FLOORDIV: np.floor_divide, Ops.FLOORMOD: np.mod,
        Ops.CDIV: lambda a, b: np.trunc(np.divide(a, b)).astype(np.int64), Ops.CMOD: np.fmod, Ops.MAX: np.maximum,
        Ops.CMPLT: np.less, Ops.CMPNE: np.not_equal, Ops.CMPEQ: np.equal, Ops.AND: np.bitwise_and, Ops.OR: np.bitwise_or,
        Ops.XOR: np.bitwise_xor, Ops.SHL: np.left_shift, Ops.SHR: np.right_shift}

def _evaluate(u:UOp, env:dict[UOp, np.ndarray], topo:dict|None=None) -> np.ndarray:
  """u at every point of env (one int64 array per RANGE). Ranges not in env are 0, like the first iteration of a loop. `topo`: a
  toposort that holds u's (it may hold more)."""
  vals: dict[UOp, object] = {}
  for x in (_topo(u) if topo is None else topo):
    if x is u and x in vals: break
    if x in env: v = env[x]
    elif x.op is Ops.CONST: v = x.arg if isinstance(x.arg, (int, bool)) else 0
    elif x.op is Ops.RANGE: v = 0
    elif x.op in _BIN: v = _BIN[x.op](vals[x.src[0]], vals[x.src[1]])
    elif x.op is Ops.WHERE: v = np.where(vals[x.src[0]], vals[x.src[1]], vals[x.src[2]])
    elif x.op in (Ops.CAST, Ops.BITCAST): v = vals[x.src[0]]
    elif x.op is Ops.NEG: v = np.negative(vals[x.src[0]])
    else: v = 0
    vals[x] = v
    if x is u: break
  out = vals[u]
  return np.broadcast_to(np.asarray(out, dtype=np.int64), next(iter(env.values())).shape) if env else np.asarray(out, dtype=np.int64)

def _mixed_radix(n:int, sizes:list[int]) -> np.ndarray:
  """Coordinates of the first n linear ids over `sizes`, the first size varying fastest: shape (len(sizes), n)."""
  ids, out = np.arange(n, dtype=np.int64), []
  for s in sizes: out.append(ids % s); ids = ids // s
  return np.array(out, dtype=np.int64).reshape(len(sizes), n)

def _thread_order(k:Scheduler, rngs:list[UOp]) -> list[int]:
  """Positions (into rngs) of the launch's local dims, threadIdx.x's fastest coordinate first. Mirrors gpudims.add_gpudims: local
  dims sorted by range id, adjacent ones merged (the later one fastest) until three remain that fit the renderer's local_max."""
  loc = sorted((i for i, r in enumerate(rngs) if r.arg[-1] in (AxisType.WARP, AxisType.LOCAL, AxisType.GROUP_REDUCE)), key=lambda i: rngs[i].arg[:-1])
  if not loc: return []
  groups, maxs = [[i] for i in loc], tuple(k.ren.local_max or (1 << 30,)*3)
  size = lambda g: math.prod(_size(rngs[i]) for i in g)
  while len(groups) > len(maxs) or any(size(g) > m for g, m in zip(groups, maxs)):
    for j, m in enumerate(maxs):
      if j < len(groups)-1 and size(groups[j])*size(groups[j+1]) <= m: groups[j:j+2] = [groups[j]+groups[j+1]]; break
    else: break
  return [i for g in groups for i in reversed(g)]

# *** the feature vector ***

def featurize(k:Scheduler, device:dict) -> np.ndarray:
  """Features of the candidate `k` (a dataset.kernel.Rooted Scheduler with its opts applied) on a device with properties `device`
  (Store.devices() values: sm_count, clock_mhz, mem_bw_gbs, l2_bytes, smem_per_block, fp32_tflops, fp16_tc_tflops; missing ones
  count as 0): its own columns, then the per-config ones less the root's (computed once per root and device)."""
  root = getattr(k, "root", None)
  if root is None: raise TypeError("featurize needs a Scheduler built by dataset.kernel.scheduler (it carries the kernel's root)")
  f = _absolute(k, device)
  cache = root.__dict__.setdefault("_kt_features", {})
  if (dk := tuple(sorted(device.items()))) not in cache: cache[dk] = _absolute(root, device)[_REL]
  return np.concatenate([f, f[_REL] - cache[dk]])

def _absolute(k:Scheduler, device:dict) -> np.ndarray:
  topo = _topo(k.ast)
  kbufs = [u for u in topo if u.op is Ops.INDEX][::-1]   # = k.bufs, without a second toposort
  itopos = [_topo(b.src[1]) for b in kbufs]           # index and validity of each buffer access
  if any(o.op in (OptOps.PADTO, OptOps.TC) for o in k.applied_opts): stats = kernel_stats(k, topo, kbufs, {u for t in itopos for u in t})
  else:   # the same as the root's (checked on every child of several kernels three deep; padded and tensor-core ones can differ)
    root = getattr(k, "root", k)   # (the root itself is featurized too)
    if (stats := root.__dict__.get("_kt_stats")) is None: stats = root.__dict__["_kt_stats"] = kernel_stats(root)
  rngs = k.rngs
  sizes = [_size(r) for r in rngs]
  types = [r.arg[-1] for r in rngs]
  ax = [_AX_OF.get(t, "loop") for t in types]
  n = len(rngs)
  dev = [float(device.get(key, 0.0) or 0.0) for key in DEVICE_KEYS]
  sms, bw, smem_max, fp32, tcpk = max(dev[0], 1.0), dev[2], dev[4], dev[5], dev[6]
  gpu = bool(k.ren.has_local)
  f: list[float] = [_l2(dev[0]), _l2(dev[1]), _l2(dev[2]), _l2(dev[3]), _l2(dev[4]), _l2(dev[5]), _l2(dev[6])] + stats.row()

  prod_of = lambda names: math.prod(s for s, a in zip(sizes, ax) if a in names)
  for a in AXES:
    ss = [s for s, b in zip(sizes, ax) if b == a]
    f += [len(ss), _l2(math.prod(ss)), _l2(max(ss, default=0))]
  f += [n, sum(b.src[1].get_valid().op is not Ops.CONST for b in kbufs)]

  # launch geometry. GPU: blocks of threads (local, warp, group); CPU: THREAD axes are cores, everything else is loops
  tpb = prod_of(("local", "warp", "group")) if gpu else 1
  blocks = prod_of(("global",)) if gpu else prod_of(("thread",))
  wpb = -(-tpb // 32) if gpu else 1
  threads = tpb*blocks
  warps = wpb*blocks
  upcast, unroll = prod_of(("upcast",)), prod_of(("unroll",))
  reduce_len, loop_trips = prod_of(("reduce",)), prod_of(("reduce", "loop"))
  tc = getattr(k, "tensor_core", None)
  acc = upcast*max(1, stats.reduceops) if stats.reduceops else 0
  grp = prod_of(("group",))
  smem = grp*prod_of(("upcast", "warp", "local"))*stats.acc_itemsize if grp > 1 else 0

  # per buffer: exact addresses at a few points. columns: origin, a unit step per axis, the first warp, thread 0's register tile
  torder = _thread_order(k, rngs) if gpu else []
  nwarp = min(32, tpb)
  tile_axes = [i for i, a in enumerate(ax) if a in ("upcast", "unroll")]
  ntile = min(math.prod(sizes[i] for i in tile_axes), TILE_MAX)
  pts = np.zeros((n, 1+n+nwarp+ntile), dtype=np.int64)
  pts[np.arange(n), 1+np.arange(n)] = 1
  if torder: pts[torder, 1+n:1+n+nwarp] = _mixed_radix(nwarp, [sizes[i] for i in torder])
  if tile_axes: pts[tile_axes[::-1], 1+n+nwarp:] = _mixed_radix(ntile, [sizes[i] for i in tile_axes[::-1]])
  env = {r: pts[i] for i, r in enumerate(rngs)}
  stores = {s.src[0] for s in topo if s.op is Ops.STORE}
  bx = max((i for i, a in enumerate(ax) if a == "global"), default=None) if gpu else None   # blockIdx.x: the last global dim
  inner_red = max((i for i, a in enumerate(ax) if a in ("reduce", "loop")), default=None)
  inner_up = max(tile_axes, default=None)
  bufs = []
  for b, itopo in zip(kbufs, itopos):
    idx, valid = b.src[1].get_idx(), b.src[1].get_valid()
    if idx is not b.src[1]: itopo = _topo(idx)   # a gated access: strides and dependences are of the index alone
    isz, numel = b.src[0].dtype.itemsize, b.src[0].max_numel()
    addr = np.broadcast_to(_evaluate(idx, env, itopo), pts.shape[1:])   # an index of no range (a loop-less kernel) is one value
    dep = {x for x in itopo if x.op is Ops.RANGE}
    iops = sum(1 for x in itopo if x.op in GroupOp.ALU)
    idivmod = sum(1 for x in itopo if x.op in (Ops.FLOORDIV, Ops.FLOORMOD, Ops.CDIV, Ops.CMOD))
    deps = [r in dep for r in rngs]
    stride = addr[1:1+n] - addr[0]
    w = addr[1+n:1+n+nwarp]
    t = np.unique(addr[1+n+nwarp:]) if ntile else addr[:1]
    warp_sectors = len(np.unique((w*isz) // 32)) if nwarp else 1
    warp_elems = len(np.unique(w)) if nwarp else 1
    runs = np.diff(np.flatnonzero(np.diff(t) != 1), prepend=-1, append=len(t)-1) if len(t) > 1 else np.array([1])
    vmax = max(1, 16 // isz)
    vec = int(min(runs[0], vmax))
    vec_insts = int(np.sum(-(-runs // vmax)))
    vec_sectors = len(np.unique(((w[:, None] + np.arange(vec)[None]).ravel()*isz) // 32)) if nwarp else -(-vec*isz // 32)
    trips = math.prod(s for s, a, d in zip(sizes, ax, deps) if d and a in ("reduce", "loop"))
    insts = vec_insts*trips
    # memory traffic: L1 requests (every warp's every vector instruction, in 32-byte sectors), the unique footprint of one block
    # (what L2 serves when L1 reuses perfectly within a block), and the buffer itself (what DRAM serves at best)
    sectors_total = (warps if gpu else threads)*insts*(vec_sectors if gpu else max(1, -(-vec*isz // 64)))
    foot = min(math.prod(s for s, a, d in zip(sizes, ax, deps) if d and a not in ("global", "thread")), numel)
    l2b = foot*isz*blocks
    # per axis kind: the smallest nonzero stride of the axes the address depends on, whether one is 1, the size it is broadcast over
    smin, contig, bcast = {}, set(), {}
    for st, sz, a, d in zip(stride.tolist(), sizes, ax, deps):
      if not d: bcast[a] = bcast.get(a, 1)*sz
      elif st:
        smin[a] = min(smin.get(a, abs(st)), abs(st))
        if abs(st) == 1: contig.add(a)
    per_ax = [v for a in AXES for v in (_l2(smin.get(a, 0)), float(a in contig), _l2(bcast.get(a, 1)))]
    tx = torder[0] if torder else None
    weff = min(1.0, nwarp*isz/(32.0*warp_sectors)) if nwarp else 1.0   # bytes the warp asks for / bytes it moves (broadcasts count as 1)
    bufs.append(dict(store=b in stores, isz=isz, numel=numel, bytes=numel*isz, l1=sectors_total*32, l2=l2b, wsec=warp_sectors,
      weff=weff, insts=insts, elems=len(t)*trips, tile=len(t), vec=vec, body=vec_insts, body_bytes=vec_insts*vec_sectors*32, iops=iops,
      reuse=l2b/max(numel*isz, 1), row=[1.0, float(b in stores), isz, _l2(numel), _valid_terms(valid), iops, idivmod, float(sum(deps)),
      _l2(abs(int(stride[tx]))) if tx is not None else 0.0, _l2(abs(int(stride[bx]))) if bx is not None else 0.0,
      _l2(abs(int(stride[inner_red]))) if inner_red is not None else 0.0, _l2(abs(int(stride[inner_up]))) if inner_up is not None else 0.0,
      warp_sectors, warp_elems, weff, vec_sectors, _l2(len(t)), len(runs), vec,
      _l2(vec_insts), _l2(trips), _l2(insts), _l2(len(t)*trips), _l2(sectors_total), _l2(sectors_total*32), _l2(foot), _l2(l2b),
      _l2(l2b/max(numel*isz, 1))] + per_ax))

  # registers: accumulators plus the loaded tile (in 4-byte registers); occupancy from the Hopper-class per-SM limits
  loads = [b for b in bufs if not b["store"]]
  regs = acc*max(stats.acc_itemsize, 4)/4 + sum(b["tile"]*b["isz"]/4 for b in loads)
  if gpu:
    regs_thread = min(255, max(32, 16+regs))
    bps = min(32, 64 // max(wpb, 1), 65536 // max(regs_thread*32*wpb, 1), int(smem_max // smem) if smem else 32)
  else: bps = 1
  occ = bps*wpb/64 if gpu else 1.0
  waves = blocks/(sms*max(bps, 1))
  wave_eff = waves/math.ceil(waves) if waves > 0 else 0.0
  flops_th = stats.flops/max(threads, 1)
  l1_total, l2_total = sum(b["l1"] for b in bufs), sum(b["l2"] for b in bufs)
  dram = sum(b["bytes"] for b in bufs)
  f += [_l2(tpb), _l2(wpb), _l2(blocks), _l2(threads), _l2(warps), _l2(upcast), _l2(acc), _l2(unroll), _l2(reduce_len), _l2(loop_trips),
        _l2(smem), smem/smem_max if smem_max else 0.0, _l2(regs), _l2(max(0.0, regs-255)), bps, occ, _l2(waves), wave_eff,
        min(1.0, blocks/sms), _l2(flops_th), _l2(dram/max(threads, 1)), float(k.dont_use_locals)]
  tco = next((o for o in k.applied_opts if o.op is OptOps.TC), None)
  if tc is not None:
    f += [1.0, tc.dims[0], tc.dims[1], tc.dims[2], tc.threads, tc.elements_per_thread[2], tc.dtype_in.itemsize]
  else: f += [0.0]*7
  f += list(tco.arg) if tco is not None else [0.0, 0.0, 0.0]

  # roofline-style times (log2 ns); they use the device's peaks, so they carry the device into the per-config terms
  peak = (tcpk if tc is not None else fp32) or fp32 or 1.0
  par = min(1.0, blocks/sms)*(occ if gpu else 1.0)
  t_c = stats.flops/(peak*1e12*max(par, 1e-3))*1e9
  t_d = dram/(max(bw, 1.0)*1e9)*1e9
  t_l2 = l2_total/(max(bw, 1.0)*3e9)*1e9
  t_l1 = l1_total/(max(bw, 1.0)*10e9)*1e9
  issue = (sum(b["insts"] for b in bufs) + flops_th)*math.ceil(waves)*wpb if gpu else sum(b["insts"] for b in bufs) + flops_th
  f += [_l2(t_c), _l2(t_d), _l2(t_l2), _l2(t_l1), _l2(max(t_c, t_d, t_l2)), _l2(issue)]
  clk = max(dev[1], 1.0)*1e6
  # latency-bound terms (Little's law): what one unrolled loop body keeps in flight, times the warps that run at once
  body_trips = max(loop_trips, 1)
  body_alu = flops_th/body_trips
  body_loads = sum(b["body"] for b in loads)
  active = min(blocks, sms*max(bps, 1))*wpb if gpu else min(threads, sms)
  inflight = active*sum(b["body_bytes"] for b in loads)
  bw_ach = min(max(bw, 1.0)*1e9, inflight/600e-9) if gpu else max(bw, 1.0)*1e9
  t_ld = dram/max(bw_ach, 1.0)*1e9
  t_ll1 = l1_total/max(min(bw*10e9, inflight/300e-9) if gpu else bw_ach, 1.0)*1e9
  t_lc = math.ceil(max(waves, 1e-9))*flops_th/(2*max(acc, 1))*4/clk*1e9 if gpu else flops_th/(2*max(acc, 1))*4/3e9*1e9
  f += [_l2(body_alu), _l2(body_loads), _l2(flops_th/max(sum(b["insts"] for b in loads), 1)), _l2(active), _l2(inflight), _l2(bw_ach),
        _l2(t_ld), _l2(t_ll1), _l2(t_lc), _l2(max(t_c, t_d, t_l2, t_ld, t_lc))]
  # per-SM issue model: FMA pipes need (warps per scheduler) x (independent accumulators) >= latency (4) to stay busy; the
  # load/store unit moves 4 sectors a cycle. Each SM that holds a block runs ceil(waves) rounds of them
  sms_used = min(sms, blocks) if gpu else min(sms, threads)
  wps = (min(blocks, sms*max(bps, 1))/max(sms_used, 1))*wpb/4 if gpu else 1.0
  fma_eff = min(1.0, wps*max(acc, 1)/4) if gpu else min(1.0, max(acc, 1)/4)
  lanes = (tcpk/fp32 if tc is not None and fp32 else 1.0)*128   # FP32 lanes per SM, scaled by the tensor-core peak ratio
  t_fma = stats.flops/2/(max(sms_used, 1)*lanes*clk*max(fma_eff, 1e-3))*1e9 if gpu else stats.flops/2/(max(sms_used, 1)*8*3e9*fma_eff)*1e9
  t_lsu = l1_total/32/(max(sms_used, 1)*4*clk)*1e9 if gpu else l1_total/(max(sms_used, 1)*64*3e9)*1e9
  tail = math.ceil(max(waves, 1e-9))/max(waves, 1e-9) if gpu else 1.0
  f += [fma_eff, _l2(t_fma), _l2(t_lsu), _l2(max(t_fma, t_lsu, t_d, t_l2)*min(tail, 64.0))]

  # the opt sequence: counts and summed log-amounts per op, then the first SEQ_LEN actions themselves
  opts = k.applied_opts
  f += [sum(o.op is op for o in opts) for op in OPS]
  f += [sum(_l2(o.arg) for o in opts if o.op is op and isinstance(o.arg, int)) for op in OPS] + [len(opts)]
  for i in range(SEQ_LEN):
    o = opts[i] if i < len(opts) else None
    f += [o.op.value, -1 if o.axis is None else o.axis, _l2(o.arg) if isinstance(o.arg, int) else -1.0] if o is not None else [0.0, -2.0, -2.0]

  # buffer slots: the first store and the three largest loads; then aggregates over every load
  out = next((b for b in bufs if b["store"]), None)
  ins = sorted(loads, key=lambda b: (-b["l1"], -b["bytes"]))[:3]   # the loads that move the most first
  width = len(_BUF_COLS) + 3*len(AXES)
  for b in [out] + ins + [None]*(3-len(ins)): f += b["row"] if b is not None else [0.0]*width
  weff = [b["weff"] for b in loads] or [1.0]
  f += [len(loads), _l2(sum(b["l1"] for b in loads)), _l2(sum(b["l2"] for b in loads)), _l2(sum(b["bytes"] for b in loads)),
        max((b["wsec"] for b in loads), default=0), float(np.mean(weff)), min(weff), sum(b["weff"] < 0.5 for b in loads),
        _l2(sum(b["insts"] for b in loads)), _l2(sum(b["elems"] for b in loads)), _l2(sum(b["tile"] for b in loads)),
        float(np.mean([b["vec"] for b in loads])) if loads else 0.0, _l2(max((b["reuse"] for b in loads), default=0)),
        sum(b["iops"] for b in bufs), _l2(sum(b["l1"] for b in loads)/max(sum(b["l2"] for b in loads), 1))]
  return np.asarray(f, dtype=np.float32)

def _valid_terms(v:UOp) -> float: return 0.0 if v.op is Ops.CONST else float(1 + sum(u.op is Ops.AND for u in _topo(v)))

assert len(FEATURES) == len(set(FEATURES))
