"""Offline, no GPU: does Beam.second_opinion's first batch hold BEAM=2's pick where the default's does not? The kernels of the two
networks whose misses are open: the LLaMA block's down projection, attention scores and fused gate/up GEMM (BEAM=2's picks from
results/unseen_models_cache_h200), and the CNN training step's backward conv r_32_32_5_5_128_2_20_20 (BEAM=2's pick from
results/logs/dropin/h200_cnn). The ASTs are built on the CPU and scheduled for sm_90; each pick's rank among the descent's scored
configs by the blend (as search ranks, with its compile penalty) and by its MLP alone (the second opinion).
  DEV=CPU python results/logs/ranker_limits/second_opinion_batches.py > results/logs/ranker_limits/second_opinion_batches.txt"""
import sys
sys.path.insert(0, "scripts")
import search.cache as C
from bench_dropin import cnn_train
from bench_models import build
from search.onnx_model import open_model
from dataset.device import renderer_for
from dataset.kernel import opts_from_json, scheduler
from dataset.sampler import replay
from models.cost_model import CostModel
from search.beam import Beam
from search.context import Context, _KIDS

ren, model = renderer_for("CUDA", "sm_90", compiler=False), CostModel.load("models/cost_model_sm_90.txt")
PICKS = {(512, 2048, 5632): ("LLaMA down projection", [["TC", 0, [-1, 0, 1]], ["UPCAST", 1, 4], ["UPCAST", 0, 2], ["UNROLL", 0, 4]]),
         (32, 512, 512, 2, 32): ("LLaMA attention scores", [["TC", 1, [-1, 2, 1]], ["UPCAST", 0, 4], ["UPCAST", 2, 4], ["UNROLL", 0, 0], ["LOCAL", 0, 4]]),
         (512, 5632, 2048, 2048): ("LLaMA gate/up GEMM", [["TC", 0, [-1, 0, 1]], ["UPCAST", 1, 4], ["UNROLL", 1, 4], ["UNROLL", 1, 4], ["LOCAL", 1, 2], ["UNROLL", 0, 4], ["LOCAL", 1, 2]]),
         (32, 32, 5, 5, 128, 2, 20, 20): ("CNN step backward conv", [["GROUP", 2, 0], ["UPCAST", 2, 0], ["LOCAL", 0, 8], ["UPCAST", 1, 2], ["SWAP", 2, 3], ["UPCAST", 0, 2], ["SWAP", 0, 1]])}
asts = [k.ast for k in open_model(*build("llama_block_s512_fp16", "CPU"), "CPU", name="llama_block_s512_fp16")[2]]
class Capture:   # a drop-in tuner that only records the kernels it is shown
  def tune(self, linear, device, table, cache, captured=False): asts.extend(c.src[0] for c in linear.src if c.src[0].op.name == "SINK")
C.enable("/tmp/second_opinion_batches_empty.json", tuner=Capture())
cnn_train(False)[0]()
done = set()
for ast in asts:
  base = scheduler(ast, ren)
  if (sh := tuple(base.full_shape)) not in PICKS or sh in done: continue
  done.add(sh)
  what, opts = PICKS[sh]
  b = replay(base, tuple(opts_from_json(opts)))
  for so in (0, 3):
    _KIDS.clear(); ctx = Context(base, None, model.scorer())
    batch = {key for _, key in Beam(second_opinion=so)._seed(ctx)}
    s, alt = model.score_pair([replay(base, o) for _, (_, o) in ctx.alt.items()] + [b], compile_penalty=True)
    print(f"{what:24s} second_opinion={so}: BEAM=2's pick in the first batch {b.ast.key in batch}, in the descent {b.ast.key in ctx.alt}; "
          f"ranked {1 + int((s[:-1] > s[-1]).sum())} by the blend, {1 + int((alt[:-1] > alt[-1]).sum())} by the MLP, of {len(s) - 1}")
