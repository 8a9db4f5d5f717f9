"""Per-kernel tuned times of several tune-model runs of one model, side by side: the kernels where the runs' picks differ, and each
run's sum of occurrences x tuned time (what the model's latency is made of). Each run is a directory with MODEL.tune.json (what
scripts/gpu_models.sh returns in cache/, or a results/logs/models_s22/call* folder).

  python scripts/tune_runs_diff.py resnet50_b32_fp16 ranker=results/logs/models_s22/s21_call2_ranker14_b32 blend=results/logs/models_s22/call8_blend07_blas1_b32"""
from __future__ import annotations
import argparse, json
from pathlib import Path

def rows(run:Path, model:str) -> dict[str, dict]:
  f = next((p for p in (run / f"{model}.tune.json", run / "cache" / f"{model}.tune.json") if p.is_file()), None)
  if f is None: raise SystemExit(f"{run}: no {model}.tune.json")
  return {r["key"]: r for r in json.loads(f.read_text())}

def main(argv=None) -> int:
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("model"); ap.add_argument("runs", nargs="+", metavar="NAME=DIR")
  ap.add_argument("--min-diff", type=float, default=0.05, help="show kernels whose runs differ by more than this share")
  a = ap.parse_args(argv)
  if bad := [r for r in a.runs if "=" not in r]: ap.error(f"runs are NAME=DIR, got {bad[0]!r}")
  runs = {n: rows(Path(d), a.model) for n, d in (r.split("=", 1) for r in a.runs)}
  first = next(iter(runs.values()))
  print(f"{a.model}: tuned us per kernel (search seconds)\n{'':39s}" + "".join(f" {n:>19s}" for n in runs))
  for k, r in first.items():
    v = [rr[k]["tuned_us"] for rr in runs.values()]
    if (max(v) - min(v))/min(v) > a.min_diff:
      print(f"  {r['kernel']:32s} x{r['occurrences']:<3d}" + "".join(f" {rr[k]['tuned_us']:11.1f} ({rr[k]['tune_s']:4.1f}s)" for rr in runs.values()))
  print(f"  {'sum of occurrences x tuned us':37s}" + "".join(f"{sum(x['tuned_us']*x['occurrences'] for x in rr.values()):20.1f}" for rr in runs.values()))
  print(f"  {'sum of search seconds':37s}" + "".join(f"{sum(x['tune_s'] for x in rr.values()):20.1f}" for rr in runs.values()))
  return 0

if __name__ == "__main__": raise SystemExit(main())
