"""Time again, in full, configs whose stored time is one early-stopped warm-up run (a config whose warm-up is slower than 4x the best
known is timed once): every one of the cost model's 10 worst held-out top-1 picks on the Hopper dataset is such a row, one of them
the kernel's best config plus two SWAPs of global axes at 52x its time. Whether those
single runs are real is what this measures: three steps, the middle one on the GPU host.

  python -m models.retime select dataset/data/cuda.sqlite --model models/cost_model_sm_90.txt --top 3 --held-out 5 --out out/retime.json.gz
  python -m dataset.retime run out/retime.json.gz --out $OUT/retimed.json --time-budget 400    # on the device; resumes
  python -m dataset.retime apply dataset/data/cuda.sqlite retimed.json

Consolidate (--best K): a kernel's configs were timed in several runs, on several GPUs, and its fastest stored time is the
minimum over ~100 noisy measurements; timed again in one run, the kernels' best configs ran a median 1.06x and a tenth of them
> 1.38x their stored times (controls timed beside them), and the kernels whose best moved most are those the cost model ranks worst
(held-out top-1 0.79 where it moved >= 1.4x, 0.88 where < 1.05x). So per kernel its K fastest configs, the model's top picks and a
few random configs are timed together in one run and all written back, scaled to the kernel's other rows by the median ratio of
the ones chosen without looking at their stored times (kernel_scale).

Whole kernels (--under-us X): every ok row of each kernel whose fastest stored time is under X us, timed again in one run and
written back unscaled (the kernel's rows then all come from that run). Rows timed before 2026-11-29 ran on a thread started for
each run, which put 1-11 us of the host's launch into a GPU time (results/timing_ab.md): for a kernel of 10-40 us that is the size
of the differences its configs are ranked by, so such kernels are timed again whole, not scaled.

  python -m models.retime select dataset/data/cuda.sqlite --model models/cost_model_sm_90.txt --under-us 20 --no-shards --out out/small.json.gz

select: per kernel, the `top` early-stopped configs the model ranks highest, `random` more drawn at random from the rest (a
reference group: how often an early stop the model does not favour was wrong too), and the kernel's best config as a control (timed
again in the same run, so the new times of the others compare with it there). run: the dataset's protocol without the early stop
(warm-up, then 3 runs, each after an L2 flush); each kernel's results are written as they come. apply: early-stopped rows get the
full times divided by their kernel's control ratio (new / stored time of the control: the rest of the kernel's rows were timed in
other runs), early_stop 0, the ratio and the old warm-up kept in `error`; controls are reported, not written, and
when their median moved more than DRIFT from the stored times apply refuses (--force): the new times would not compare."""
from __future__ import annotations
import argparse, base64, gzip, json, os, sys, time
from pathlib import Path
from typing import Any, Callable
import numpy as np
from dataset.errors import one_line
from dataset.shard import resolve
from dataset.store import Store, StoreError

DRIFT = 0.15   # apply refuses results whose controls' median moved more than this from their stored times
# select's ranking, passed in by models.retime (dataset imports nothing from models): (store, model, measured device or None,
# held-out folds, seed, threads, with the store's shards) -> (rows, scores): the store's ok rows (a models.data.Dataset: arrays
# kernel, opts, name, time_s; device) and the model's score of each, out of fold when held-out folds > 0
Rank = Callable[[str, str, str|None, int, int, int, bool], tuple[Any, np.ndarray]]

def _read(path:Path):
  raw = path.read_bytes()
  return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)

def consolidated(db, device:str|None=None) -> set[tuple[str, str]]:
  """(kernel, opts) of the ok rows a consolidation wrote (apply's `error` message starts with "consolidated"), on `device` or all."""
  q = "SELECT kernel, opts FROM measurements WHERE status='ok' AND error LIKE 'consolidated%'"
  return {(k, o) for k, o in (db.execute(q + " AND device=?", (device,)) if device else db.execute(q))}

def select(store:str, ds, score:np.ndarray, top:int, random:int=0, seed:int=0, best:int=0, skip_consolidated:bool=False,
           shards:bool=True, under_us:float=0.0) -> dict:
  """ds, score: the store's ok rows and the model's score of each (Rank). best=0: per kernel, its `top` early-stopped configs the
  model ranks highest, `random` early-stopped ones as a reference, and its best config as the control. best=K (consolidate): its K
  fastest stored configs, the model's `top` among the rest, and `random` fully timed ones as a reference; all are written back,
  scaled by the median new/old time of the model's and random configs (chosen without looking at their stored times, so unlike the
  fastest ones they carry no winner's curse). skip_consolidated: leave out kernels whose K fastest rows all come from an earlier
  consolidation (rows measured since then are what a new one is for). shards: the store is read with its shards (dataset.shard), as
  ds was. under_us > 0 (whole): every row of each kernel whose fastest stored time is under it, in the model's order, the fastest
  the control."""
  s = Store(resolve(store, shards).path, readonly=True)
  try:
    early = {(k, o) for k, o in s.db.execute("SELECT kernel, opts FROM measurements WHERE status='ok' AND early_stop=1 AND device=?", (ds.device,))}
    done = consolidated(s.db, ds.device)
    blobs = {r["key"]: r["ast"] for r in s.kernels()}
  finally: s.close()
  rng, kernels = np.random.default_rng(seed), []
  for k in np.unique(ds.kernel):
    ix = np.flatnonzero(ds.kernel == k)
    by_score, by_time = ix[np.argsort(-score[ix], kind="stable")], ix[np.argsort(ds.time_s[ix], kind="stable")]
    is_early = lambda i: (k, ds.opts[i]) in early
    if under_us:
      if ds.time_s[by_time[0]] >= under_us*1e-6: continue
      fast, picked, rest = [int(by_time[0])], [int(i) for i in by_score if i != by_time[0]], []
    elif best:
      fast = [int(i) for i in by_time[:best]]
      if skip_consolidated and all((k, ds.opts[i]) in done for i in fast): continue
      picked = [int(i) for i in by_score if i not in fast][:top]
      rest = [int(i) for i in ix if i not in fast and i not in picked and not is_early(i)]
    else:
      fast = [int(by_time[0])]
      es = [int(i) for i in by_score if is_early(i)]
      picked, rest = es[:top], es[top:]
    drawn = [int(i) for i in rng.choice(rest, min(random, len(rest)), replace=False)] if rest and random else []
    if not picked: continue
    cfg = lambda i, group: {"opts": json.loads(ds.opts[i]), "old_s": float(ds.time_s[i]), "control": bool(i == by_time[0]), "group": group,
                            "early": bool(is_early(i))}
    groups = ([(i, "whole") for i in [*fast, *picked]] if under_us else
              [(i, "model") for i in picked] + [(i, "random") for i in drawn] + [(i, "best" if best else "control") for i in fast])
    kernels.append({"key": str(k), "name": str(ds.name[ix[0]]), "ast": base64.b64encode(blobs[k]).decode(), "configs": [cfg(i, g) for i, g in groups]})
  return {"store": str(store), "device": ds.device, "top": top, "random": random, "best": best, "under_us": under_us,
          "mode": "whole" if under_us else "consolidate" if best else "early", "kernels": kernels}

COMPILE_S = 20   # a config's compile alarm in seconds (dataset.compile: signal.alarm takes whole seconds)

def _hung(task, limit_s:float):
  """A done future holding a hung compile's result: a timeout."""
  from concurrent.futures import Future
  from dataset.compile import Compiled
  f: Future = Future(); f.set_result(Compiled(task, task.parent, "timeout", error=f"compile hung: no result in {limit_s:g} s"))
  return f

def run(sel:dict, out:Path, device:str="CUDA", workers:int=0, time_budget:float|None=None, shard:tuple[int, int]=(0, 1), log=print) -> dict:
  """Compile (in a pool) and time every selected config without the early stop; resumes from `out`. shard (i, n): every n-th
  kernel from the i-th, so n GPUs of one host share a selection."""
  from concurrent.futures import wait
  from dataset.compile import Overdue, Task, hang_limit, kill_pool, make_pool, run_task, configure
  from dataset.device import L2Flush, device_info, renderer_for
  from dataset.kernel import Kernel, opts_from_json
  from dataset.timing import Bench
  dev_name, arch, _ = device_info(device)
  if dev_name != sel["device"]: log(f"retime: selected on {sel['device']}, timing on {dev_name}: apply will refuse it")
  res = json.loads(out.read_text()) if out.is_file() else {"device": dev_name, "arch": arch, "kernels": {}}
  res["mode"] = sel.get("mode", "early")   # what apply writes
  todo = [k for k in sel["kernels"][shard[0]::shard[1]] if k["key"] not in res["kernels"]]
  ren, flush, st = renderer_for(device), L2Flush(device), time.perf_counter()
  blobs = {k["key"]: base64.b64decode(k["ast"]) for k in todo}
  new_pool = lambda: make_pool(workers, ren, [{"key": k, "ast": b} for k, b in blobs.items()], COMPILE_S)
  pool = new_pool() if workers > 1 else None
  if pool is None: configure(ren, blobs, COMPILE_S)
  overdue = Overdue(hang_limit(COMPILE_S))
  try:
    tasks = lambda k: [Task(k["key"], "fixed", opts_from_json(c["opts"])) for c in k["configs"]]
    ahead: dict[int, list] = {}   # the next `workers` kernels' compiles in flight while one kernel is timed: the pool stays full
    for n, k in enumerate(todo):
      if time_budget is not None and time.perf_counter() - st > time_budget: log(f"retime: time budget spent, {n} of {len(todo)} kernels done"); break
      if pool is None: compiled = [run_task(t) for t in tasks(k)]
      else:
        for j in range(n, min(n + workers, len(todo))):
          if j not in ahead: ahead[j] = [pool.submit(run_task, t) for t in tasks(todo[j])]
        while not all(f.done() for f in ahead[n]):   # bounded: a compile hung in native code is a timeout, its pool replaced
          wait(ahead[n], 1.0)
          if hung := overdue(ahead[n]):
            log(f"retime: {len(hung)} compile(s) of {k['name']} hung: the pool is replaced")
            kill_pool(pool); pool = new_pool()
            keep = lambda f: f.done() and not f.cancelled() and f.exception() is None
            ahead = {j: [f if keep(f) else _hung(t, hang_limit(COMPILE_S)) if f in hung else pool.submit(run_task, t)
                         for f, t in zip(fs, tasks(todo[j]))] for j, fs in ahead.items()}
        compiled = [f.result() for f in ahead.pop(n)]
      rows = []
      try:
        bench = Bench(Kernel.ast_from_blob(blobs[k["key"]]), device, flush)
        for c, cc in zip(k["configs"], compiled):
          if cc.prg is None or cc.status != "ok": rows.append({**c, "new": None, "error": cc.error or cc.status}); continue
          try: ts, _ = bench.time(cc.prg)
          except Exception as e: rows.append({**c, "new": None, "error": one_line(e)}); continue
          rows.append({**c, "new": ts})
        bench.release()
      except Exception as e: rows = [{**c, "new": None, "error": one_line(e)} for c in k["configs"]]
      res["kernels"][k["key"]] = {"name": k["name"], "configs": rows}
      tmp = out.with_suffix(".tmp"); tmp.write_text(json.dumps(res)); os.replace(tmp, out)   # a cut-off run keeps what it timed
  finally:
    if pool is not None: pool.shutdown(cancel_futures=True)
  return res

def control_ratio(k:dict) -> float|None:
  """How much faster (<1) or slower this run ran the kernel's control than its stored time."""
  return next((min(c["new"])/c["old_s"] for c in k["configs"] if c["control"] and c.get("new")), None)

def kernel_scale(k:dict) -> float|None:
  """What a kernel's new times are divided by to compare with its other rows (timed in other runs): the median new/old ratio of
  its configs chosen without regard to their stored times (the model's and the random ones, fully timed before) when it has >= 2 of
  them (consolidate), else its control's ratio (a retime of early-stopped rows, whose old times are single warm-up runs); 1 for a
  whole kernel timed again (every row from the one run)."""
  if any(c.get("group") == "whole" for c in k["configs"]): return 1.0
  ref = [min(c["new"])/c["old_s"] for c in k["configs"] if c.get("new") and not c["control"] and not c.get("early", True) and c.get("group") in ("model", "random")]
  return float(np.median(ref)) if len(ref) >= 2 else control_ratio(k)

def summary(res:dict) -> dict:
  """Per group (the model's picks, the random reference draws, the controls or the fastest stored configs): new min / old time, and
  that ratio divided by the kernel's scale (kernel_scale: how this run's timing compares with the stored one); `scale` is the
  scales themselves."""
  r: dict[str, list[float]] = {}
  for k in res["kernels"].values():
    if sc := kernel_scale(k): r.setdefault("scale", []).append(sc)
    for c in k["configs"]:
      if not c.get("new"): continue
      g = c.get("group", "control" if c["control"] else "model")
      r.setdefault(f"{g}_new_over_old", []).append(min(c["new"])/c["old_s"])
      if sc and not c["control"]: r.setdefault(f"{g}_over_control", []).append(min(c["new"])/c["old_s"]/sc)
  q = lambda v: {"n": len(v), "median": float(np.median(v)), "p10": float(np.percentile(v, 10)), "p90": float(np.percentile(v, 90)),
                 "below_0.5": float(np.mean(np.array(v) < 0.5)), "below_0.25": float(np.mean(np.array(v) < 0.25))}
  return {g: q(v) for g, v in sorted(r.items())}

def apply(store:str, res:dict) -> int:
  """Write the full times of the retimed rows, each scaled by its kernel's scale (kernel_scale: the kernel's other rows were timed
  in other runs, what ranks against them is the time relative to theirs); returns the rows updated. A retime of early-stopped
  rows writes those rows and leaves the controls as stored; a consolidation writes every config it timed, the fastest included.
  A kernel without a scale is left as it is."""
  if not Path(store).is_file(): raise StoreError(f"no dataset at {store}")
  consolidate, whole = res.get("mode") in ("consolidate", "whole"), res.get("mode") == "whole"
  s = Store(store)
  try:
    # the UPDATE matches rows by device: results timed elsewhere would write nothing and look applied
    if res["device"] not in (devs := s.devices()):
      raise StoreError(f"results timed on {res['device']}, the store holds {', '.join(sorted(devs)) or 'no rows'}: time them on its device")
    n = 0
    with s.db:
      s.db.execute("BEGIN")
      for key, k in res["kernels"].items():
        if not (sc := kernel_scale(k)): continue
        for c in k["configs"]:
          if (c["control"] and not consolidate) or not c.get("new"): continue
          scaled = [t/sc for t in c["new"]]
          why = (f"whole kernel timed again in one run ({len(k['configs'])} configs); stored was {c['old_s']:.6g} s" if whole else
                 f"consolidated with {len(k['configs']) - 1} more of its kernel's configs in one run, scaled by {sc:.4g}; stored was {c['old_s']:.6g} s"
                 if consolidate else f"retimed, scaled by the control's {sc:.4g}; warm-up was {c['old_s']:.6g} s")
          n += s.db.execute("UPDATE measurements SET time_s=?, runtimes=?, early_stop=0, error=?, ts=? WHERE kernel=? AND opts=? AND "
                            "device=? AND status='ok'" + ("" if consolidate else " AND early_stop=1"), (min(scaled), json.dumps(scaled),
                            why, time.time(), key, json.dumps(c["opts"]), res["device"])).rowcount
  finally: s.close(compact=True)
  return n

def main(argv=None, rank:Rank|None=None) -> int:
  """rank: select's ranking (models.retime passes it); run and apply need none."""
  ap = argparse.ArgumentParser("retime", description=__doc__.split("\n")[0])
  sub = ap.add_subparsers(dest="cmd", required=True)
  p = sub.add_parser("select"); p.add_argument("store"); p.add_argument("--model", required=True); p.add_argument("--top", type=int, default=3)
  p.add_argument("--random", type=int, default=0, help="also this many random early-stopped configs per kernel: a reference group")
  p.add_argument("--held-out", type=int, default=0, metavar="K", help="rank by out-of-fold scores: the model's ranker refitted K times, by kernel")
  p.add_argument("--threads", type=int, default=0)
  p.add_argument("--best", type=int, default=0, metavar="K", help="consolidate: time each kernel's K fastest configs again with the model's top and random ones")
  p.add_argument("--skip-consolidated", action="store_true", help="with --best: leave out kernels whose K fastest rows are all consolidated already")
  p.add_argument("--seed", type=int, default=0); p.add_argument("--device", default=None, help="measured device name, if the store holds several"); p.add_argument("--out", required=True)
  p.add_argument("--no-shards", action="store_true", help="the store alone, without the shards beside it (dataset.shard)")
  p.add_argument("--under-us", type=float, default=0.0, metavar="X", help="whole: every row of each kernel whose fastest is under X us (with --no-shards)")
  p = sub.add_parser("run"); p.add_argument("selection"); p.add_argument("--out", required=True); p.add_argument("--device", default="CUDA")
  p.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) - 1)); p.add_argument("--time-budget", type=float, default=None)
  p.add_argument("--shard", default="0/1", help="I/N: every N-th kernel from the I-th (N GPUs, one run each)")
  p = sub.add_parser("apply"); p.add_argument("store"); p.add_argument("results", nargs="+", help="run's outputs (one per shard)")
  p.add_argument("--force", action="store_true", help=f"write even if the controls moved more than {DRIFT:.0%} from their stored times")
  a = ap.parse_args(argv)
  try:
    if a.cmd == "select":
      if rank is None: raise ValueError("select ranks with a cost model: run python -m models.retime select")
      if a.under_us < 0: raise ValueError(f"--under-us {a.under_us:g}: a time in microseconds must be positive")
      if a.under_us and not a.no_shards: raise ValueError("--under-us writes every row of a kernel to the store: pass --no-shards")
      ds, score = rank(a.store, a.model, a.device, a.held_out, a.seed, a.threads, not a.no_shards)
      sel = {**select(a.store, ds, score, a.top, a.random, a.seed, a.best, a.skip_consolidated, not a.no_shards, a.under_us), "model": a.model,
             "held_out": a.held_out}
      Path(a.out).parent.mkdir(parents=True, exist_ok=True)
      Path(a.out).write_bytes(gzip.compress(json.dumps(sel).encode()) if a.out.endswith(".gz") else json.dumps(sel).encode())
      print(f"retime: {sum(len(k['configs']) for k in sel['kernels'])} configs of {len(sel['kernels'])} kernels -> {a.out}")
    elif a.cmd == "run":
      i, n = (int(x) for x in a.shard.split("/"))
      res = run(_read(Path(a.selection)), Path(a.out), a.device, a.workers, a.time_budget, (i, n), log=lambda s: print(s, file=sys.stderr))
      print(json.dumps(summary(res)))
    else:
      parts = [_read(Path(f)) for f in a.results]
      if len({p["device"] for p in parts}) > 1: raise ValueError(f"results from several devices: {sorted({p['device'] for p in parts})}")
      res = {**parts[0], "kernels": {k: v for p in parts for k, v in p["kernels"].items()}}
      print(json.dumps(sm := summary(res)))
      ctl = sm.get("scale", {}).get("median", 1.0)
      if abs(ctl - 1) > DRIFT and not a.force:   # the new times would not compare with the rows left as they are
        raise ValueError(f"the kernels ran {ctl:.2f}x their stored times: this run's timing is not the dataset's (--force to write anyway)")
      print(f"retime: {apply(a.store, res)} rows of {a.store} now hold times of this run ({res.get('mode', 'early')})")
  except (StoreError, OSError, ValueError, KeyError) as e: print(f"retime: error: {one_line(e)}", file=sys.stderr); return 2
  except Exception as e:
    if type(e).__name__ in ("CostModelError", "DeviceError"): print(f"retime: error: {e}", file=sys.stderr); return 2
    raise
  return 0

if __name__ == "__main__": sys.exit(main())
