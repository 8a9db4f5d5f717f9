"""Where a whole-model tuning lost to BEAM=2: for each kernel of a bench_models report whose tuned time is --slower x BEAM's or more,
how the cost model scores BEAM's config, the tuned pick and tinygrad's hand-coded one (higher = predicted faster), and the score of
its own model descent's top pick. If it scores BEAM's config below its pick, the model is wrong there; if above, the search never
reached it.
  python scripts/cost_model_picks.py results/logs/models_s10_call4.json results/logs/models_s10_call4.tuned.json resnet50_b32_fp32"""
import argparse, glob, json, pickle, sys
from pathlib import Path
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from dataset.kernel import opts_from_json, scheduler
from dataset.sampler import hand_coded
from models.cost_model import CostModel, schedulers
from models.data import renderer
from search.cache import _key
from search.strategies import Beam, Context

def main():
  ap = argparse.ArgumentParser("cost_model_picks")
  ap.add_argument("report"); ap.add_argument("tuned"); ap.add_argument("model_name")
  ap.add_argument("--model", default=str(ROOT / "models" / "cost_model_sm_90.txt"))
  ap.add_argument("--cache", default=str(ROOT / "results" / "models_cache"), help="holds MODEL.kernels.pkl and beam2.gpu*.json")
  ap.add_argument("--slower", type=float, default=1.2)
  a = ap.parse_args()
  cm = CostModel.load(a.model)
  score, ren = cm.scorer(cm.meta["device_props"]), renderer(cm.meta["backend"], cm.meta["arch"])
  beam, tuned = {}, json.loads(Path(a.tuned).read_text())
  for f in sorted(glob.glob(f"{a.cache}/beam2.gpu*.json")): beam.update(json.loads(Path(f).read_text()))
  rows = {k["key"]: k for k in json.loads(Path(a.report).read_text())["models"][a.model_name]["kernels"]}
  below = n = 0
  print(f"# {a.model_name}: kernels {a.slower}x slower than BEAM=2 or more, scored by {Path(a.model).name}")
  for k in pickle.loads((Path(a.cache) / f"{a.model_name}.kernels.pkl").read_bytes())["order"]:
    r, key = rows[k.key], _key(k.key, cm.meta["backend"])
    if r["beam_us"] is None or r["tuned_us"] < a.slower*r["beam_us"] or key not in tuned or key not in beam: continue
    base = scheduler(k.ast, ren)
    ss = schedulers(k.ast, ren, [opts_from_json(beam[key]["opts"]), opts_from_json(tuned[key]["opts"]), hand_coded(base)])
    if any(s is None for s in ss): continue
    sb, st, sh = score(ss)
    picks, _ = Beam().descend(Context(base, None, score))
    top = float(score(schedulers(k.ast, ren, [picks[0][0]]))[0]) if picks else float("nan")
    n, below = n + 1, below + (sb < st)
    print(f"{r['kernel']:26s} x{r['occurrences']}  BEAM {r['beam_us']:7.1f} us score {sb:6.3f} | tuned {r['tuned_us']:7.1f} us score {st:6.3f} | "
          f"hand {r['hand_coded_us']:7.1f} us score {sh:6.3f} | descent top score {top:6.3f}", flush=True)
  print(f"# BEAM's config scored below the tuned pick on {below} of {n} kernels")

if __name__ == "__main__": main()
