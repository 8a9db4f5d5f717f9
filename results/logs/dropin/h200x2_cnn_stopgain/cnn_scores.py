"""The CNN step's second-largest kernel (r_32_32_5_5_128_2_20_20, a backward conv), no GPU: the shipped sm_90 model's scores of
the configs the drop-in runs chose (c1, c2 here; 2026-11-28's in ../h200_cnn/all.tgz) and BEAM=2's pick, beside their measured
times, and the model-only descent's top pick at widths 4 and 8. The kernel's AST is taken from the program built on the CPU (its
key differs from CUDA's: it is found by its shape) and scored for CUDA. Output: cnn_scores.txt beside this file.
  DEV=CPU python results/logs/dropin/h200x2_cnn_stopgain/cnn_scores.py > results/logs/dropin/h200x2_cnn_stopgain/cnn_scores.txt"""
import json, sys, tarfile
from pathlib import Path
sys.path.insert(0, "scripts")
import search.cache as C
from bench_dropin import cnn_train
from dataset.device import renderer_for
from dataset.kernel import opts_from_json, scheduler
from models.cost_model import CostModel
here, name, shape = Path(__file__).parent, "r_32_32_5_5_128_2_20_20", [32, 32, 5, 5, 128, 2, 20, 20]
def member(tgz:Path, suffix:str) -> dict:
  with tarfile.open(tgz) as t: return json.load(t.extractfile(next(m for m in t.getmembers() if m.name.endswith(suffix))))
asts = []
class Capture:   # a drop-in tuner that only records the kernels it is shown
  def tune(self, linear, device, table, cache, captured=False): asts.extend(c.src[0] for c in linear.src if c.src[0].op.name == "SINK")
C.enable("/tmp/cnn_scores_empty.json", tuner=Capture())
cnn_train(False)[0]()
ren, model = renderer_for("CUDA", "sm_90", compiler=False), CostModel.load("models/cost_model_sm_90.txt")
ast = next(u for u in asts if list(scheduler(u, ren).full_shape) == shape)
old = next(r for r in member(here.parent/"h200_cnn/all.tgz", "cnn_train.kernels.json")["kernels"] if r["kernel"] == name)
cfgs = [("2026-11-28 drop-in", old["kerntune_opts"], old["kerntune_cold_us"]), ("BEAM=2", old["beam2_opts"], old["beam2_cold_us"])]
for call, arms in (("c1", ("def", "sg")), ("c2", ("def", "off"))):
  for arm in arms:
    e = next(v for k, v in member(here/call/"all.tgz", f"cnn_{arm}/runs/cnn_train.kerntune.tuned.json").items() if k.startswith(old["key"]))
    cfgs.append((f"{call} {arm}", e["opts"], e["time_us"]))
print(f"{name}: the shipped model's score (higher = predicted faster), the measured cold us (its run's), the config")
for (who, opts, us), s in zip(cfgs, model.score_opts(ast, [opts_from_json(o) for _, o, _ in cfgs], ren)): print(f"{s:+.2f} {us:6.1f} us  {who:18} {opts}")
pre = [[["GROUP", 2, 0], ["UPCAST", a, 0]] for a in (2, 3)]
for o, s in zip(pre, model.score_opts(ast, [opts_from_json(o) for o in pre], ren)): print(f"{s:+.2f} prefix {o}")
from search.beam import Beam
from search.context import Context, _KIDS
for w in (4, 8):   # the model-only descent's top pick at its default width and at 8
  _KIDS.clear(); ctx = Context(scheduler(ast, ren), None, model.scorer())
  top = Beam(descent_width=w)._descent(ctx, [()], {ctx.base.ast.key}, Beam.max_depth, None)[0][0][0]
  print(f"{model.score_opts(ast, [top], ren)[0]:+.2f} descent width {w}'s top pick {[[o.op.name, o.axis, o.arg] for o in top]}")
