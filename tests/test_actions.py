"""The extended action space (dataset.sampler.EXTENDED): PADTO for dims with no small factors and more tensor-core variants apply,
replay, and verify against the unoptimized kernel; search --actions extended returns a verified answer."""
from tinygrad.codegen.opt import Opt, OptOps
from dataset.corpus import parse_variant
from dataset.device import renderer_for
from dataset.kernel import Kernel, kernel_asts, scheduler
from dataset.sampler import ACTIONS, EXTENDED, children, replay
from search.measure import Budget, Measurer

def _kernel(spec:str, device:str) -> Kernel:
  ast = kernel_asts(*parse_variant(spec).build(device))[0]
  return Kernel(ast.key.hex(), ast, spec, "test", "test")

def test_padto_configs_replay_and_verify():
  k = _kernel("bmm:b=2:m=197:k=64:n=197:fp32", "CPU")
  base = scheduler(k.ast, renderer_for("CPU"))
  kids = {a for a, _ in children(base, EXTENDED)} - set(ACTIONS)
  assert any(a.op is OptOps.PADTO for a in kids)   # 197 has no small factors: only PADTO opens it to 32-wide tiles
  m = Measurer(k, "CPU", Budget(), workers=0)
  try:
    for opts in [(Opt(OptOps.PADTO, 1, 32), Opt(OptOps.UPCAST, 1, 4)), (Opt(OptOps.PADTO, 2, 16), Opt(OptOps.UPCAST, 2, 8), Opt(OptOps.UNROLL, 0, 4))]:
      assert replay(base, opts) is not None
      assert m.measure([opts])[0] < float("inf") and m.verify(opts) is None, m.errors.get(opts)
  finally: m.close()

def test_tensor_core_variants_apply_on_hopper():
  """fp16 GEMM on the sm_90 renderer (built offline, no GPU): a tensor-core shape BEAM never picks (m16n8k8) gives another kernel."""
  k = _kernel("gemm:m=256:k=256:n=256:fp16", "CUDA")
  base = scheduler(k.ast, renderer_for("CUDA", "sm_90", compiler=False))
  default = {c.ast.key for a, c in children(base, ACTIONS) if a.op is OptOps.TC}
  extended = {c.ast.key for a, c in children(base, EXTENDED) if a.op is OptOps.TC}
  assert default and extended - default

def test_search_with_extended_actions(tmp_path):
  import json
  from search.cli import main
  rc = main(["--kernel", "bmm", "--shape", "2,49,32,49", "--dtype", "fp32", "--device", "CPU", "--budget", "6", "--actions", "extended",
             "--no-cache", "--out", str(tmp_path)])
  r = json.loads((tmp_path / "result.json").read_text())
  assert rc == 0 and all(kk["verified"] for kk in r["kernels"])

def test_first_batch_holds_a_tensor_core_config(monkeypatch):
  """A model that ranks every tensor-core config last still gets one measured in the first batch of a half-precision GEMM on
  sm_90 (built offline, no GPU) where the hand-coded config has none (as on a fused two-reduction GEMM); an fp32 GEMM, where
  none applies, gets none."""
  import numpy as np
  import search.beam
  from search.beam import Beam
  monkeypatch.setattr(search.beam, "hand_coded", lambda base: ())
  from search.context import Context
  no_tc = lambda ks: np.array([-float(any(o.op is OptOps.TC for o in k.applied_opts)) - 0.01*len(k.applied_opts) for k in ks])
  for dtype, want in (("fp16", True), ("fp32", False)):
    k = _kernel(f"gemm:m=256:k=512:n=256:{dtype}", "CUDA")
    base = scheduler(k.ast, renderer_for("CUDA", "sm_90", compiler=False))
    seeds = Beam()._seed(Context(base, None, no_tc))
    assert any(o.op is OptOps.TC for opts, _ in seeds for o in opts) == want, dtype
    assert len(seeds) <= Beam().seed_picks + 1

def test_a_padded_axis_is_not_unrolled_after():
  # the fuzzer's failures on the CPU: each a PADTO'd axis unrolled after it (wrong outputs, unwritten outputs, a failed lowering)
  from dataset.corpus import parse_variant
  from dataset.kernel import kernel_asts, scheduler
  from dataset.sampler import replay
  from tinygrad.codegen.opt import Opt, OptOps
  from tinygrad import Device
  v = parse_variant("conv1d:c=16:k=16:ks=5:l=31:n=1:padding=2:stride=2:fp16")
  base = scheduler(kernel_asts(*v.build("CPU"))[0], Device["CPU"].renderer)
  pad = Opt(OptOps.PADTO, 2, 32)
  assert replay(base, (pad,)) is not None and replay(base, (Opt(OptOps.UNROLL, 0, 0),)) is not None
  assert replay(base, (pad, Opt(OptOps.UNROLL, 0, 0))) is None
  assert replay(base, (pad, Opt(OptOps.UPCAST, 0, 4))) is not None   # another axis: still a child

def test_a_padded_reduce_is_not_grouped_in_either_order():
  """The GPU fuzzer's 4 distinct failures (results/fuzz.md, H100): a reduce axis padded and grouped computes wrong or leaves outputs
  unwritten. On the sm_90 renderer (offline), none of them replays, and their group-free parts (the padding kept) still do."""
  from dataset.kernel import opts_from_json
  ren = renderer_for("CUDA", "sm_90", compiler=False)
  for spec, i, opts in [("rmsnorm:cols=100:rows=64:fp32", 0, [["LOCAL", 0, 8], ["GROUP", 0, 0], ["PADTO", 2, 32]]),
                        ("layernorm:cols=100:rows=3:fp16", 1, [["UNROLL", 0, 4], ["PADTO", 1, 16], ["GROUPTOP", 0, 32]]),
                        ("layernorm:cols=100:rows=256:fp16", 1, [["LOCAL", 0, 2], ["PADTO", 2, 16], ["GROUP", 0, 4], ["GROUP", 0, 0]])]:
    base = scheduler(kernel_asts(*parse_variant(spec).build("CUDA"))[i], ren)
    o = opts_from_json(opts)
    assert replay(base, o) is None, spec
    assert replay(base, [x for x in o if x.op not in (OptOps.GROUP, OptOps.GROUPTOP)]) is not None
