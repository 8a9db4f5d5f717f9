"""A kernel: one tinygrad kernel AST, and the Scheduler view that opt sequences act on."""
from __future__ import annotations
import functools, importlib.metadata, io, itertools, pickle, zlib
from dataclasses import dataclass, field, replace
from tinygrad import Tensor
from tinygrad.uop.ops import UOp, Ops, AxisType, KernelInfo, ParamArg, graph_rewrite, _rebuild_dtype
from tinygrad.dtype import AddrSpace, ConstFloat, DType, InvalidType
from tinygrad.helpers import Metadata
from tinygrad.renderer import Estimates, Renderer
from tinygrad.codegen.opt import Opt, OptOps, KernelOptError
from tinygrad.codegen.opt.postrange import Scheduler
import tinygrad.codegen as cg
from dataset.store import StoreError

TINYGRAD_VERSION = importlib.metadata.version("tinygrad")

@dataclass(frozen=True)
class Kernel:
  key: str              # ast.key hex: stable content hash of the raw kernel AST within a tinygrad version
  ast: UOp              # raw AST, exactly as the schedule hands it to codegen (what the tuned-kernel cache matches)
  name: str             # variant name and index in its schedule, e.g. "softmax:cols=1024:log=0:rows=4096:fp32#1"
  family: str           # op family ("conv2d", "gemm", ...) or network ("resnet50", ...)
  workload: str         # workload that produced it
  meta: dict = field(default_factory=dict, compare=False, hash=False)

  @staticmethod
  def pack(ast:UOp) -> bytes: return zlib.compress(pickle.dumps(ast), 9)
  def blob(self) -> bytes: return Kernel.pack(self.ast)   # the AST as stored
  @staticmethod
  def ast_from_blob(b:bytes) -> UOp:
    """The AST of a stored blob. Raises ASTError for a corrupt blob, or one whose pickle names anything an AST is not made of."""
    try: return _ASTUnpickler(io.BytesIO(zlib.decompress(b))).load()
    except ASTError: raise
    except (zlib.error, EOFError, pickle.UnpicklingError) as e: raise ASTError(f"a stored kernel AST is corrupt: {e}") from None

class ASTError(StoreError, pickle.UnpicklingError): pass

# what a tinygrad kernel AST pickles into (the classes its UOps, dtypes, args and KernelInfo are made of); a data file comes from other
# hosts (dataset.shard merges them), and a pickle that names anything else (os.system, ...) would run it on load
_AST_GLOBALS = {(c.__module__, c.__qualname__) for c in (UOp, Ops, AxisType, KernelInfo, ParamArg, Estimates, Opt, OptOps, DType, AddrSpace,
                                                         ConstFloat, InvalidType, Metadata, slice, frozenset, set)}
class _ASTUnpickler(pickle.Unpickler):
  def find_class(self, module:str, name:str):
    if (module, name) not in _AST_GLOBALS:
      raise ASTError(f"a stored kernel AST names {module}.{name}, which no tinygrad AST is made of: refused (a foreign or tampered data file)")
    return super().find_class(module, name)

def kernel_asts(*outs:Tensor) -> list[UOp]:
  """Kernel ASTs of realizing `outs`, without running anything. Rebinds the tensors: build them on Tensor.empty."""
  lin = outs[0].schedule_linear(*outs[1:])
  return [c.src[0] for c in lin.src if c.src[0].op is Ops.SINK]

@functools.lru_cache(maxsize=512)
def prepare(ast:UOp) -> UOp:
  """The range passes `full_rewrite_to_sink` runs before its Scheduler: opts chosen on this AST replay on the same axes in a real run."""
  s = graph_rewrite(ast, cg.multi_pm, name="multi_pm")
  s = graph_rewrite(s, cg.pm_mops, name="early movement ops", bottom_up=True)
  s = graph_rewrite(s, cg.pm_load_collapse, name="load collapse")
  s = graph_rewrite(s, cg.pm_split_ranges+cg.pm_flatten_range, ctx={}, name="split ranges")
  s = graph_rewrite(s, cg.sym+cg.pm_flatten_range, name="initial symbolic")
  return graph_rewrite(s, cg.pm_flatten_range+cg.pm_simplify_ranges, ctx={}, name="simplify ranges")

def substitute(root:UOp, subs:dict[UOp, UOp], untagged:bool=False) -> UOp|None:
  """root.substitute(subs), all at once, for replacements that hold none of the replaced, in one pass over root's (cached) backward
  slice, without tinygrad's pattern matching, and so without its care for CALL bodies: a kernel AST that has one takes tinygrad's
  way. untagged: None where this pass is not tinygrad's, or the AST holds a tagged UOp (the caller then takes tinygrad's way, whose
  tag removal this pass does not do)."""
  subs = {o: n for o, n in subs.items() if o is not n}
  if not subs: return root
  theirs = lambda: None if untagged else root.substitute(subs)
  if any(o in n.backward_slice for o in subs for n in subs.values()): return theirs()
  memo: dict[UOp, UOp] = dict(subs)
  for x in (*root.backward_slice, root):
    if untagged and x.tag is not None: return None
    if x in subs: continue
    if x.op in (Ops.CALL, Ops.FUNCTION): return theirs()
    src = tuple(memo.get(s, s) for s in x.src)
    if src != x.src: memo[x] = UOp(x.op, _rebuild_dtype(x, src), src, x.arg, x.tag)
  return memo.get(root, root)

class Rooted(Scheduler):
  """A Scheduler that keeps its kernel's Scheduler before any opt (`root`) through copy(), which search and tinygrad's
  get_kernel_actions use to make children: the cost model featurizes each candidate relative to it.

  It also keeps its ranges for as long as its AST stays the same object: tinygrad's Scheduler sorts them out of the AST's whole
  backward slice on every `rngs` (and so every full_shape, axis_types, real_axis) access, and a copy computed them once more in
  __init__. Expanding a parent tries ~200 actions, each a copy plus a few of those accesses: 10 of 47 s of CPU in GPT-2's model
  descents (cProfile on a development machine)."""
  root: Scheduler
  _shape: list|None = None
  _reduceops: list|None = None
  _rngs_of: UOp|None = None   # the AST that _rngs (and _shape, when set) were computed from
  @property
  def rngs(self) -> list[UOp]:
    if self._rngs_of is not self.ast: self._rngs, self._rngs_of, self._shape, self._reduceops = Scheduler.rngs.fget(self), self.ast, None, None
    return self._rngs
  @property
  def reduceops(self) -> list[UOp]:
    # a scan of the AST's backward slice in tinygrad, on every apply_opt's size checks
    self.rngs
    if self._reduceops is None: self._reduceops = Scheduler.reduceops.fget(self)
    return self._reduceops
  @property
  def full_shape(self) -> list:
    self.rngs   # forgets the shape if the AST has changed
    if self._shape is None: self._shape = Scheduler.full_shape.fget(self)
    return self._shape
  def shift_to(self, rng:UOp, amount:int, new_type:AxisType, top:bool=False, input_new_rng:UOp|None=None):
    # Scheduler.shift_to with the AST rebuilt in one pass (substitute above) instead of tinygrad's pattern-matched graph_rewrite, and
    # its error without the colored shape it formats (an eighth of a parent's failing actions' time). UOps are interned, so the AST
    # is the very object tinygrad's gives (tests/test_dataset.py). With the cached reduces: a GEMM's and a conv's model descents
    # 6.8 -> 5.2 s of CPU here, features unchanged
    if (old_sz := rng.src[0].divides(amount)) is None: raise KernelOptError(f"{amount} can't divide {rng.src[0]}")
    new_rng = UOp.range(amount, next(self.opt_range), new_type, dtype=rng.dtype) if input_new_rng is None else input_new_rng
    replaced_rng = rng.replace(src=(old_sz,))
    sub_axis = (new_rng * old_sz + replaced_rng) if top else (replaced_rng * amount + new_rng)
    self.ast = substitute(self.ast, {rng: sub_axis})
    return replaced_rng, new_rng
  def apply_opt(self, opt:Opt, append_opt:bool=True):
    # SWAP of two global axes as tinygrad does it (the two ranges' ids exchanged), in one pass (substitute above) instead of its two
    # pattern-matched rewrites (a tagged substitute, then every tag removed): the same ASTs (tests/test_dataset.py), and a model
    # descent's children made in 0.72-0.80x the CPU seconds on convs, 0.93x on a GEMM (results/logs/compile/swap_descent_cpu.txt).
    # Any other case, and every error, is tinygrad's own
    if opt.op is OptOps.SWAP and isinstance(opt.axis, int) and isinstance(opt.arg, int) and 0 <= opt.axis < len(self.rngs) and \
       0 <= opt.arg < len(self.rngs) and opt.axis != opt.arg:
      rng, alt = self.rngs[opt.axis], self.rngs[opt.arg]
      if rng.arg[-1] is AxisType.GLOBAL and alt.arg[-1] is AxisType.GLOBAL and (ast := substitute(self.ast,
         {rng: rng.replace(arg=(*alt.arg[:-1], rng.arg[-1])), alt: alt.replace(arg=(*rng.arg[:-1], alt.arg[-1]))}, untagged=True)) is not None:
        self.ast = ast
        if append_opt: self.applied_opts.append(opt)
        return None
    return super().apply_opt(opt, append_opt)
  def copy(self) -> Rooted:
    # Scheduler.copy without its __init__'s range sort: the same AST has the same ranges
    ret = object.__new__(Rooted)
    ret.ast, ret.ren, ret.root, ret.dont_use_locals, ret.applied_opts = self.ast, self.ren, self.root, self.dont_use_locals, self.applied_opts[:]
    ret._rngs, ret._rngs_of, ret._shape, ret._reduceops = self.rngs, self.ast, self.full_shape, self.reduceops
    ret.opt_range = itertools.count(start=max([x.arg[0] for x in ret._rngs], default=0)+1)
    if hasattr(self, "tensor_core"): ret.tensor_core = self.tensor_core
    ret.padded = getattr(self, "padded", frozenset())   # the ranges a PADTO of the opts padded (dataset.sampler.try_apply)
    return ret

def scheduler(ast:UOp, ren:Renderer, opts:tuple[Opt, ...]=()) -> Rooted:
  """Scheduler as the pipeline builds it, with `opts` applied. Raises KernelOptError for an invalid sequence."""
  k = Scheduler(prepare(ast), ren)
  k.convert_loop_to_global()
  root = k.copy()
  k.__class__, k.root = Rooted, root
  for o in opts: k.apply_opt(o)
  return k

def describe(s:Scheduler) -> str:
  """tinygrad's kind of kernel name: r(educe)/E(lementwise) and the loop sizes (a symbolic one rendered: r_12_(start_pos+1))."""
  return ("r" if s.reduceop is not None else "E") + "".join(f"_{d if isinstance(d, int) else d.render()}" for d in s.full_shape)

# opts as plain JSON-able lists: [["UPCAST", 0, 4], ["TC", 0, [-1, 2, 1]], ...]
def opts_to_json(opts) -> list: return [[o.op.name, o.axis, list(o.arg) if isinstance(o.arg, tuple) else o.arg] for o in opts]
def opts_from_json(js) -> tuple[Opt, ...]:
  return tuple(Opt(OptOps[op], axis, tuple(arg) if isinstance(arg, list) else arg) for op, axis, arg in js)

def opts_set(ast:UOp, opts:tuple[Opt, ...]) -> UOp:
  """The kernel SINK a real run compiles for `ast` at `opts` (tinygrad's compile cache is keyed by it: dataset.compile.precompiled)."""
  return ast.replace(arg=replace(ast.arg, opts_to_apply=tuple(opts)))

def with_opts(linear:UOp, opts_by_key:dict[str, tuple[Opt, ...]]) -> UOp:
  """The LINEAR with `opts_to_apply` set on every kernel whose raw-AST key has stored opts; other kernels keep tinygrad's default.
  This is how chosen opts reach a real run: kernels compile in spawned workers, so patching apply_opts would not."""
  def sub(call:UOp) -> UOp:
    ast = call.src[0]
    if ast.op is not Ops.SINK or (opts := opts_by_key.get(ast.key.hex())) is None: return call
    return call.replace(src=(opts_set(ast, opts), *call.src[1:]))
  return linear.replace(src=tuple(sub(c) for c in linear.src))
