"""The dataset generator on tinygrad's CPU device: corpus, replay, sampler, store, crash safety, failure recording, CLI."""
import json, os, random, re, signal, sqlite3, subprocess, sys, time
from pathlib import Path
import numpy as np
import pytest, torch
from tinygrad import Tensor
from tinygrad.codegen.opt import Opt, OptOps
from tinygrad.uop.ops import Ops
from tinygrad.engine.realize import compile_linear, run_linear
from dataset.corpus import CORPUS, ShapeError, extract, parse_variant, select
from dataset.kernel import Kernel, kernel_asts, scheduler, with_opts, opts_to_json, opts_from_json
from dataset.device import renderer_for
from dataset.sampler import ACTIONS, children, model_children, propose, replay, hand_coded
from dataset.store import Store, StoreError

ROOT = Path(__file__).resolve().parents[1]
CPU = renderer_for("CPU")

def test_corpus_extraction_counts_and_dedup():
  small = select("small", "CPU")
  assert {v.family for v in small} >= {"conv2d", "gemm", "bmm", "softmax", "layernorm", "attention", "maxpool", "backward",
                                       "conv2d_fused", "resnet50", "cvt_block", "gpt2_block"}
  seen: set[str] = set()
  kernels = [k for _, ks in extract(small, "CPU", seen) for k in ks]
  assert len(kernels) >= 80 and len({k.key for k in kernels}) == len(kernels) == len(seen)
  # extracting again against what is known yields nothing new; keys are content hashes, stable across rebuilds
  assert sum(len(ks) for _, ks in extract(small[:5], "CPU", seen)) == 0
  again = [k.key for _, ks in extract(small[:5], "CPU") for k in ks]
  assert again and set(again) <= seen
  # softmax and log_softmax share their max kernel: deduplicated across variants
  sm = [ks for _, ks in extract([v for v in small if v.workload == "softmax"], "CPU")]
  assert len(sm[0]) == 3 and len(sm[1]) == 2

@pytest.mark.slow   # schedules every full-size workload of the grid
def test_full_corpus_has_300_distinct_kernels():
  # the GPU corpus, extracted for CUDA without a GPU: scheduling runs nothing
  n = sum(len(ks) for _, ks in extract(select("default", "CUDA"), "CUDA"))   # the fixed grid: "all" holds every network training step
  assert n >= 300

def test_stored_opts_replay_in_real_run():
  v = parse_variant("conv2d:n=2:c=8:h=12:w=12:k=16:ks=3:stride=1:padding=1:fp32")
  ast = kernel_asts(*v.build("CPU"))[0]
  base = scheduler(ast, CPU)
  rng = random.Random(3)
  walk = next(o for o in (propose(base, "random", rng) for _ in range(50)) if o is not None and len(o) >= 3)
  for opts in (hand_coded(base), walk):
    stored = opts_from_json(json.loads(json.dumps(opts_to_json(opts))))  # through the store's JSON form
    xn, wn = np.random.randn(2, 8, 12, 12).astype(np.float32), np.random.randn(16, 8, 3, 3).astype(np.float32)
    out = Tensor(xn).conv2d(Tensor(wn), padding=1)
    lin = with_opts(out.schedule_linear(), {ast.key.hex(): stored})
    progs = [c.src[0] for c in compile_linear(lin).src if c.src[0].op is Ops.PROGRAM]
    assert [p.src[0].arg.applied_opts for p in progs] == [tuple(stored)]
    run_linear(lin)
    ref = torch.nn.functional.conv2d(torch.tensor(xn), torch.tensor(wn), padding=1).numpy()
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-4, atol=1e-4)

@pytest.mark.parametrize("spec", ["gemm:m=64:k=32:n=48:fp32", "softmax:rows=32:cols=64:fp32", "conv2d:n=1:c=4:h=8:w=8:k=8:ks=3:fp32"])
def test_sampler_proposals_are_valid(spec):
  for ast in kernel_asts(*parse_variant(spec).build("CPU")):
    base = scheduler(ast, CPU)
    rng, seqs = random.Random(0), []
    for _ in range(12):
      if (walk := propose(base, "random", rng)) is None: continue
      assert 1 <= len(walk) <= 8 and all(o in ACTIONS for o in walk) and replay(base, walk) is not None
      seqs.append(walk)
    assert seqs
    parent = max(seqs, key=len)
    if (child := propose(base, "expand", rng, parent)) is not None:
      assert child[:-1] == parent and replay(base, child) is not None
    if (mut := propose(base, "mutate", rng, parent)) is not None:
      assert mut != parent and abs(len(mut) - len(parent)) <= 1 and replay(base, mut) is not None
      seen = frozenset(m for _ in range(20) if (m := propose(base, "mutate", rng, parent)) is not None)
      assert all(m not in seen for _ in range(20) if (m := propose(base, "mutate", rng, parent, seen)) is not None)   # measured ones avoided
    assert propose(base, "random", random.Random(7)) == propose(base, "random", random.Random(7))  # seeded
    assert propose(base, "fixed", rng, hand_coded(base)) == hand_coded(base)

def test_rooted_copies_keep_ranges_that_match_a_plain_scheduler():
  # dataset.kernel.Rooted caches its ranges and reduces while its AST is unchanged and rebuilds the AST itself on shift_to and SWAP: after any
  # opts (padded and tensor-core ones too) the AST must be the very object tinygrad's own Scheduler makes from the same opts, for the
  # CUDA renderer (locals, groups, tensor cores) as for the CPU one. models.features takes an unpadded candidate's kernel facts
  # from its root: they must be the same
  from tinygrad.codegen.opt.postrange import Scheduler
  from dataset.kernel import prepare
  from dataset.sampler import try_apply, EXTENDED
  from models.features import kernel_stats
  asts = [kernel_asts(*parse_variant(v).build("CPU"))[0] for v in ("conv2d:n=2:c=8:h=12:w=12:k=16:ks=3:stride=1:padding=1:fp32",
          "gemm:m=49:k=64:n=197:fp16")]
  rng, checked, swapped = random.Random(0), 0, 0
  for ast in asts:
    for ren in (CPU, renderer_for("CUDA", "sm_90", compiler=False)):
      base = scheduler(ast, ren)
      for _ in range(30):
        k, opts = base, []
        for _ in range(6):
          if (k2 := try_apply(k, a := rng.choice(EXTENDED if rng.random() < 0.5 else ACTIONS), limits=False)) is not None: k, opts = k2, opts + [a]
        plain = Scheduler(prepare(ast), ren)
        plain.convert_loop_to_global()
        for o in opts: plain.apply_opt(o)
        assert k.ast is plain.ast and (k.full_shape, k.axis_types, k.rngs, k.reduceops) == (plain.full_shape, plain.axis_types, plain.rngs, plain.reduceops)
        assert k.root is base.root and base.applied_opts == [] and k.applied_opts == opts   # copies share nothing mutable
        if not any(o.op in (OptOps.PADTO, OptOps.TC) for o in opts): assert kernel_stats(k) == kernel_stats(k.root)
        checked += bool(opts)
        # every SWAP of this config too: Rooted exchanges two ranges in one pass of its own, tinygrad in two rewrites
        for a in (a for a in ACTIONS if a.op is OptOps.SWAP):
          if (k2 := try_apply(k, a, limits=False)) is None: continue
          twin = Scheduler(prepare(ast), ren)
          twin.convert_loop_to_global()
          for o in opts + [a]: twin.apply_opt(o)
          assert k2.ast is twin.ast and k2.rngs == twin.rngs and k2.applied_opts == opts + [a]
          swapped += 1
  assert checked >= 40 and swapped >= 100, (checked, swapped)

def test_children_skip_only_actions_that_would_fail_or_break_the_limits():
  # children() refuses some actions before applying them (dataset.sampler._cannot): the children must be exactly those of applying
  # every action, on random parents of both renderers, padded, tensor-core and over-the-limit parents (replayed without limits) too
  from dataset.sampler import try_apply, EXTENDED, _cannot, _sizes
  asts = [kernel_asts(*parse_variant(v).build("CPU"))[0] for v in ("conv2d:n=2:c=8:h=12:w=12:k=16:ks=3:stride=1:padding=1:fp32",
          "gemm:m=49:k=64:n=197:fp16", "gemm:m=512:k=512:n=512:fp32")]
  rng, skipped, compared = random.Random(1), 0, 0
  for ast in asts:
    for ren in (CPU, renderer_for("CUDA", "sm_90", compiler=False)):
      base = scheduler(ast, ren)
      for _ in range(12):
        k = base
        for _ in range(rng.randrange(0, 6)):
          k = try_apply(k, rng.choice(EXTENDED if rng.random() < 0.5 else ACTIONS), limits=False) or k
        for acts in (ACTIONS, EXTENDED):
          plain, seen = [], {k.ast.key}
          for a in acts:
            if (k2 := try_apply(k, a)) is not None and k2.ast.key not in seen: seen.add(k2.ast.key); plain.append((a, k2.ast.key))
          assert [(a, c.ast.key) for a, c in children(k, acts)] == plain
          skipped += sum(_cannot(k, a, _sizes(k)) for a in acts); compared += 1
  assert compared == 144 and skipped > 1000, skipped

def test_neighbours_change_one_amount_or_leave_one_opt_out():
  from dataset.sampler import neighbors
  base = scheduler(kernel_asts(*parse_variant("conv2d:n=1:c=8:h=8:w=8:k=16:ks=3:stride=1:padding=1:fp32").build("CPU"))[0], CPU)
  opts = hand_coded(base)
  assert len(opts) >= 2
  near = neighbors(base, opts)
  keys = [k.ast.key for _, k in near]
  assert near and len(set(keys)) == len(keys) and replay(base, opts).ast.key not in keys
  for o, k in near:
    assert replay(base, o).ast.key == k.ast.key
    if len(o) == len(opts) - 1: assert any(o == opts[:i] + opts[i+1:] for i in range(len(opts)))
    else:
      diff = [i for i, (a, b) in enumerate(zip(o, opts)) if a != b]
      assert len(o) == len(opts) and len(diff) == 1 and (o[diff[0]].op, o[diff[0]].axis) == (opts[diff[0]].op, opts[diff[0]].axis)
  assert neighbors(base, opts, positions=range(0)) == []
  assert neighbors(base, opts + (Opt(OptOps.UPCAST, 99, 4),)) == []   # a config that does not replay has none

def test_model_proposals_are_unmeasured_children_best_scored_first():
  ast = kernel_asts(*parse_variant("gemm:m=64:k=64:n=64:fp32").build("CPU"))[0]
  base = scheduler(ast, CPU)
  parent = hand_coded(base)[:1]
  kids = [parent + (a,) for a, _ in children(replay(base, parent))]
  # a scorer that likes big upcasts: the ranking must follow it exactly
  score = lambda ks: np.array([float(sum(s for s, t in zip(k.full_shape, k.axis_types) if t.name in ("UPCAST", "UNROLL"))) for k in ks])
  avoid = frozenset(kids[:2])
  got = model_children(base, parent, score, avoid)
  assert sorted(got) == sorted(kids[2:]) and all(replay(base, o) is not None for o in got)
  s = score([replay(base, o) for o in got])
  assert (np.diff(s) <= 0).all() and s[0] > s[-1]

def test_generate_with_model_measures_its_picks(tmp_path):
  out = tmp_path / "m.sqlite"
  # one kernel, 6 configs: 2 of them the model's (softmax's three kernels took 25 s on 2 cores)
  r = _gen(out, "--kernels", "gemm:m=32:k=32:n=32:fp32", "--samples-per-kernel", "6", "--model", str(ROOT / "models/cost_model_cpu.txt"),
           entry="models.generate")   # generate-dataset's entry point: dataset.generate itself loads no cost model
  assert r.wait(timeout=300) == 0, r.stdout.read()
  rows = sqlite3.connect(out).execute("SELECT kernel, opts, source, status FROM measurements").fetchall()
  picks = [(k, opts_from_json(json.loads(o))) for k, o, src, st in rows if src == "model"]
  assert picks and all(st != "pending" for *_, st in rows)
  measured = {(k, opts_from_json(json.loads(o))) for k, o, *_ in rows}
  assert all((k, o[:-1]) in measured for k, o in picks)   # each a child of a measured config

@pytest.mark.slow   # a generate run of its own (~15 s on 2 cores); test_generate_with_model_measures_its_picks stays
def test_generate_mix_climbs_from_the_measured_configs_only(tmp_path):
  out = tmp_path / "c.sqlite"
  r = _gen(out, "--kernels", "softmax:rows=64:cols=128:fp32", "--samples-per-kernel", "10", "--mix", "expand=0.5,mutate=0.5")
  assert r.wait(timeout=300) == 0, r.stdout.read()
  sources = {src for (src,) in sqlite3.connect(out).execute("SELECT source FROM measurements")}
  assert sources <= {"fixed", "hand", "expand", "mutate"} and sources & {"expand", "mutate"}   # no random walks, no model
  bad = _gen(tmp_path / "d.sqlite", "--kernels", "softmax:rows=64:cols=128:fp32", "--mix", "model=1")
  assert bad.wait(timeout=120) == 2 and "needs --model" in bad.stdout.read()

@pytest.mark.slow   # a generate run of its own (~26 s on 2 cores); the model mix's climbs stay in the default run
def test_generate_beam_mix_climbs_from_the_root(tmp_path):
  # --mix beam=1: every proposal is a child of the root or of a config the climb itself measured, never of the hand-coded config
  # (or anything else the store holds), and it goes deeper than one step
  out = tmp_path / "b.sqlite"
  r = _gen(out, "--kernels", "softmax:rows=64:cols=128:fp32", "--samples-per-kernel", "12", "--mix", "beam=1")
  assert r.wait(timeout=300) == 0, r.stdout.read()
  rows = [(opts_from_json(json.loads(o)), src) for o, src in sqlite3.connect(out).execute("SELECT opts, source FROM measurements")]
  beam = {o for o, src in rows if src == "beam"}
  assert {src for _, src in rows} <= {"fixed", "hand", "beam"} and beam
  assert all(o[:-1] == () or o[:-1] in beam for o in beam) and max(len(o) for o in beam) >= 2
  # --only-kernels: a name the variants do not have is a one-line error, not a run that resumes
  bad = _gen(tmp_path / "e.sqlite", "--kernels", "softmax:rows=64:cols=128:fp32", "--only-kernels", "softmax:rows=64:cols=128:fp32#9")
  assert bad.wait(timeout=120) == 2 and "no such kernel" in bad.stdout.read()

def test_store_pending_rows_are_retried_once_then_marked_hang(tmp_path):
  s = Store(tmp_path / "s.sqlite")
  rid = s.begin("k", [["UPCAST", 0, 4]], "dev", "arch", "0.14.0", "random")
  assert s.begin("k", [["UPCAST", 0, 4]], "dev", "arch", "0.14.0", "random") is None  # no duplicates
  assert s.recover_pending("dev") == [("k", [["UPCAST", 0, 4]], "random")]           # died once: retry
  assert s.retry("k", [["UPCAST", 0, 4]], "dev") == rid
  assert s.recover_pending("dev") == []                                               # died twice: a hang
  assert s.db.execute("SELECT status FROM measurements WHERE id=?", (rid,)).fetchone()[0] == "hang"

@pytest.mark.slow   # two generator runs with tinygrad's BEAM: the data tooling, not the loop
def test_generate_tinygrad_beam_measures_its_pick_with_prefixes_once(tmp_path):
  # --tinygrad-beam: BEAM's pick and every prefix of it are measured as source 'tinygrad-beam', the pick is kept in the store, and
  # a rerun measures what is missing of it without running BEAM again
  out, v = tmp_path / "t.sqlite", "gemm:m=32:k=32:n=32:fp32"
  r = _gen(out, "--kernels", v, "--samples-per-kernel", "1", "--tinygrad-beam", "2", env={**os.environ, "PARALLEL": "2"})
  assert r.wait(timeout=300) == 0 and '"tinygrad_beam"' in r.stdout.read()
  db = sqlite3.connect(out)
  (key, pick, secs), = db.execute("SELECT kernel, opts, search_s FROM picks").fetchall()
  pick = opts_from_json(json.loads(pick))
  beam = {opts_from_json(json.loads(o)) for (o,) in db.execute("SELECT opts FROM measurements WHERE source='tinygrad-beam'")}
  assert pick and pick in beam and all(o == pick[:len(o)] for o in beam)
  db.execute("DELETE FROM measurements WHERE opts=?", (json.dumps(opts_to_json(pick)),)); db.commit(); db.close()
  r = _gen(out, "--kernels", v, "--samples-per-kernel", "1", "--tinygrad-beam", "2", env={**os.environ, "PARALLEL": "2"})
  assert r.wait(timeout=300) == 0 and '"tinygrad_beam"' not in (said := r.stdout.read())
  db = sqlite3.connect(out)
  assert db.execute("SELECT search_s FROM picks").fetchall() == [(secs,)]
  # the rerun's own report beside a failure (once the pick, a reordering of the hand-coded config, was dropped as its duplicate: the next test)
  assert db.execute("SELECT source FROM measurements WHERE opts=?", (json.dumps(opts_to_json(pick)),)).fetchall() == [("tinygrad-beam",)], (pick, said[-2000:])
  bad = _gen(tmp_path / "u.sqlite", "--kernels", v, "--tinygrad-beam", "-1")
  assert bad.wait(timeout=120) == 2 and "--tinygrad-beam: must be >= 0" in bad.stdout.read()

@pytest.mark.slow   # two generate-dataset runs (~20 s on 2 cores)
def test_a_given_pick_is_measured_even_where_it_builds_a_config_measured_before(tmp_path):
  # BEAM's pick is often a reordering of the hand-coded config (the same program): where the rerun measures the hand-coded config
  # first, the pick, a given config, still gets its own row (it was dropped as a duplicate binary, a flaky failure of the test above)
  from dataset.store import Store
  from dataset.sampler import hand_coded
  from dataset.kernel import scheduler
  from dataset.device import renderer_for
  from dataset.unseen import kernels_of
  out, v = tmp_path / "t.sqlite", "gemm:m=32:k=32:n=32:fp32"
  assert _gen(out, "--kernels", v, "--samples-per-kernel", "1").wait(timeout=300) == 0
  k = kernels_of(v, "CPU")[0]
  hand = hand_coded(scheduler(k.ast, renderer_for("CPU")))
  assert len(hand) == 2
  pick = hand[::-1]   # commuting opts (an UPCAST and an UNROLL): the same program
  db = sqlite3.connect(out)
  dev, = {d for (d,) in db.execute("SELECT device FROM measurements")}
  db.execute("DELETE FROM measurements WHERE source='hand'"); db.commit(); db.close()
  s = Store(out); s.add_pick(k.key, dev, "tinygrad-beam", opts_to_json(pick), 1.0); s.close()
  r = _gen(out, "--kernels", v, "--samples-per-kernel", "1", "--tinygrad-beam", "2")
  assert r.wait(timeout=300) == 0 and '"tinygrad_beam"' not in (said := r.stdout.read())   # the pick is kept: no BEAM
  db = sqlite3.connect(out)
  got = dict(db.execute("SELECT opts, source FROM measurements WHERE status='ok'").fetchall())
  assert got.get(json.dumps(opts_to_json(hand))) == "hand" and got.get(json.dumps(opts_to_json(pick))) == "tinygrad-beam", (got, said[-2000:])

def test_shards_merge_once(tmp_path):
  # stores measured elsewhere (a GPU host's, gzipped as it returns them) merge into the main store once: finished rows and picks
  # travel, pending rows do not, merging again adds nothing; --since takes only a run's new rows
  from dataset.shard import merge, main
  variants = select("softmax:rows=64:cols=128:fp32,gemm:m=32:k=32:n=32:fp32", "CPU")
  keys = []
  for i, v in enumerate(variants):
    s = Store(tmp_path / f"shard{i}.sqlite")
    ks = next(extract([v], "CPU"))[1]
    s.add_variant(v.name, "CPU", ks, [(None, None)]*len(ks))
    for k in ks: s.record(k.key, [["UPCAST", 0, 2]], "dev", "x86_64", "0.14.0", "random", "ok", time_s=1e-3*(i+1))
    s.begin(ks[0].key, [["LOCAL", 0, 2]], "dev", "x86_64", "0.14.0", "random")   # pending: not merged
    s.add_pick(ks[0].key, "dev", "tinygrad-beam", [["UPCAST", 0, 2]], 1.0)        # a BEAM pick travels with it
    s.close(); keys += [k.key for k in ks]
  import gzip, shutil
  with open(tmp_path / "shard1.sqlite", "rb") as fi, gzip.open(gz := tmp_path / "shard1.sqlite.gz", "wb") as fo: shutil.copyfileobj(fi, fo)
  base = tmp_path / "base.sqlite"
  assert sum(merge(base, [tmp_path / "shard0.sqlite", gz]).values()) == len(keys)
  assert sum(merge(base, [tmp_path / "shard0.sqlite", tmp_path / "shard1.sqlite"]).values()) == 0   # merging again adds nothing
  b = Store(base, readonly=True)
  assert b.kernel_keys() == set(keys) and b.count("ok") == len(keys) and b.count("pending") == 0 and len(b.picks("dev", "tinygrad-beam")) == 2
  b.close()
  s = Store(tmp_path / "shard0.sqlite"); t = time.time()
  s.record(keys[0], [["UPCAST", 0, 4]], "dev", "x86_64", "0.14.0", "random", "ok", time_s=1e-3); s.close()
  assert main(["merge", str(new := tmp_path / "new.sqlite"), str(tmp_path / "shard0.sqlite"), "--since", str(t)]) == 0
  n = Store(new, readonly=True)
  assert n.count() == 1 and n.kernel_keys() == {keys[0]}   # the run's new row and its kernel, nothing else
  n.close()
  with pytest.raises(Exception, match="no dataset"): merge(base, [tmp_path / "missing.sqlite"])
  (bad := tmp_path / "bad.sqlite.gz").write_bytes(b"not gzip")
  for p in (bad, tmp_path / "missing.sqlite.gz"):
    with pytest.raises(StoreError, match="not a readable gzipped store"): merge(base, [p])

def _tiny(path, rows, device="dev"):
  """A store of two small CPU kernels (gemm's, softmax's) with `rows`: (kernel index, opts) measured ok on `device`."""
  s = Store(path)
  try:
    for v in select("gemm:m=32:k=32:n=32:fp32,softmax:rows=64:cols=128:fp32", "CPU"):
      ks = next(extract([v], "CPU"))[1]
      s.add_variant(v.name, "CPU", ks, [(None, None)]*len(ks))
    keys = sorted(s.kernel_keys())
    s.add_device(device, "x86_64", {})
    for i, opts in rows: s.record(keys[i], opts, device, "x86_64", "0.14.0", "random", "ok", time_s=1e-3)
  finally: s.close(compact=True)
  return keys

def _finished(path) -> list[tuple]:
  db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
  try: return db.execute("SELECT kernel, opts, device FROM measurements WHERE status != 'pending'").fetchall()
  finally: db.close()

def test_base_and_its_shards_load_as_one_dataset(tmp_path, monkeypatch, capsys):
  # a base and the shards beside it (dataset/data/shards/ in the repository) read as one store: the union of their rows, each once,
  # in a working copy built once and again when a shard comes; a shard of another device stays out; --no-shards reads the base alone
  from dataset.shard import main, resolve
  from dataset.stats import main as stats_main, stats
  monkeypatch.setenv("KERNTUNE_CACHE_DIR", str(tmp_path / "cache"))
  u = lambda n: [["UPCAST", 0, n]]
  keys = _tiny(base := tmp_path / "data" / "base.sqlite", [(0, []), (0, u(2))])
  (run := tmp_path / "run.sqlite").write_bytes(base.read_bytes()); t = time.time()
  _tiny(run, [(0, u(4)), (1, [])])   # a run resumed from the base: its new rows are the shard
  sh = tmp_path / "data" / "shards"
  assert main(["export", str(run), "--since", str(t), "--out", str(sh / "dev_2026-01-01_a.sqlite.gz")]) == 0
  assert main(["export", str(run), "--out", str(sh / "dev_2026-01-01_a.sqlite.gz")]) == 2   # a shard is written once
  _tiny(b := tmp_path / "b.sqlite", [(1, []), (1, u(2)), (0, u(2))])   # two rows the base and the first shard hold already
  assert main(["export", str(b), "--out", str(sh / "dev_2026-01-02_b.sqlite.gz")]) == 0
  _tiny(o := tmp_path / "o.sqlite", [(0, u(8))], device="other")
  assert main(["export", str(o), "--out", str(sh / "other_2026-01-02_o.sqlite.gz")]) == 0
  capsys.readouterr()
  src = resolve(base)
  assert src.path != base and list(src.shards) == ["dev_2026-01-01_a.sqlite.gz", "dev_2026-01-02_b.sqlite.gz"]
  assert [s["added"] for s in src.shards.values()] == [2, 1] and "measured on other" in src.skipped["other_2026-01-02_o.sqlite.gz"]
  rows = _finished(src.path)
  assert len(rows) == len(set(rows)) == 5 and {r[2] for r in rows} == {"dev"} and {r[0] for r in rows} == set(keys[:2])
  assert len(_finished(base)) == 2 and resolve(base, shards=False).path == base and resolve(base).path == src.path   # built once
  st = stats(str(base))
  assert st["measurements_ok"] == 5 and st["shards"]["dev_2026-01-02_b.sqlite.gz"] == {"devices": ["dev"], "rows": 3, "ok": 3, "added": 1, "added_ok": 1}
  assert stats_main([str(base), "--no-shards", "--json"]) == 0 and json.loads(capsys.readouterr().out)["measurements_ok"] == 2
  assert stats_main([str(base)]) == 0 and "shard dev_2026-01-01_a.sqlite.gz: 2 rows (2 ok) of dev, 2 new (2 ok)" in capsys.readouterr().out
  from models.data import load   # what training reads
  ds, alone = load(base, cache=False, workers=1), load(base, cache=False, workers=1, shards=False)
  assert (len(ds), ds.shards, len(alone), alone.shards) == (5, list(src.shards), 2, [])
  # a second store of the device beside the base reads the same shards: train-cost-model --with it skips those read already
  _tiny(twin := tmp_path / "data" / "twin.sqlite", [(1, []), (1, u(8))])
  both, once = load(twin, cache=False, workers=1), load(twin, cache=False, workers=1, skip=frozenset(ds.shards))
  assert (both.shards, once.shards, len(once)) == (list(src.shards), [], 2) and len(both) > len(once)
  _tiny(c := tmp_path / "c.sqlite", [(1, u(4))])   # a new shard: a new working copy, the old one gone
  assert main(["export", str(c), "--out", str(sh / "dev_2026-01-03_c.sqlite.gz")]) == 0
  new = resolve(base)
  assert new.path != src.path and not src.path.exists() and len(_finished(new.path)) == 6 and len(new.shards) == 3

def test_corrupt_shard_is_a_one_line_error_naming_it(tmp_path, monkeypatch, capsys):
  import gzip
  from dataset.shard import resolve
  from dataset.stats import main as stats_main
  monkeypatch.setenv("KERNTUNE_CACHE_DIR", str(tmp_path / "cache"))
  _tiny(base := tmp_path / "base.sqlite", [(0, [])])
  (sh := tmp_path / "shards").mkdir()
  for name, blob in (("dev_x_notgz.sqlite.gz", b"not gzip"), ("dev_x_notdb.sqlite.gz", gzip.compress(b"not a database" * 100))):
    (bad := sh / name).write_bytes(blob)
    with pytest.raises(StoreError, match=name): resolve(base)
    assert stats_main([str(base)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dataset-stats: error:") and name in err and len(err.strip().splitlines()) == 1
    assert stats_main([str(base), "--no-shards", "--json"]) == 0   # the base alone does not read it
    capsys.readouterr(); bad.unlink()

def test_gzipped_base_loads_with_its_devices_shards(tmp_path, monkeypatch):
  # a device's data committed once as a gzipped store (dataset/data/cuda_h100.sqlite.gz) is a base like any other: read through a
  # working copy with its own device's shards, another device's left out; a corrupt one is an error naming it
  import gzip
  from dataset.shard import main, resolve
  from dataset.stats import stats
  monkeypatch.setenv("KERNTUNE_CACHE_DIR", str(tmp_path / "cache"))
  u = lambda n: [["UPCAST", 0, n]]
  _tiny(plain := tmp_path / "plain.sqlite", [(0, []), (0, u(2)), (1, [])], device="h100")
  (d := tmp_path / "data").mkdir()
  assert main(["export", str(plain), "--out", str(base := d / "h100.sqlite.gz")]) == 0
  src = resolve(base)
  assert src.path != base and src.shards == {} and len(_finished(src.path)) == 3 and stats(str(base))["measurements_ok"] == 3
  _tiny(a := tmp_path / "a.sqlite", [(1, u(4))], device="h100"); _tiny(o := tmp_path / "o.sqlite", [(1, u(8))], device="h200")
  assert main(["export", str(a), "--out", str(d / "shards" / "h100_2026-01-01_a.sqlite.gz")]) == 0
  assert main(["export", str(o), "--out", str(d / "shards" / "h200_2026-01-01_o.sqlite.gz")]) == 0
  src = resolve(base)
  assert list(src.shards) == ["h100_2026-01-01_a.sqlite.gz"] and "h200_2026-01-01_o.sqlite.gz" in src.skipped
  assert len(_finished(src.path)) == 4 and len(_finished(resolve(base, shards=False).path)) == 3
  (bad := d / "bad.sqlite.gz").write_bytes(gzip.compress(b"not a database" * 100))
  with pytest.raises(StoreError, match="bad.sqlite.gz"): resolve(bad, shards=False)

def _gen(out, *args, entry="dataset.generate", **kw):
  return subprocess.Popen([sys.executable, "-m", entry, "--device", "CPU", "--out", str(out), "--no-progress",
                           "--workers", "1", *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)

def _rows(path):
  db = sqlite3.connect(path)
  try: return db.execute("SELECT id, kernel, opts, status, time_s FROM measurements WHERE status != 'pending' ORDER BY id").fetchall()
  finally: db.close()

@pytest.mark.slow   # three generate-dataset runs, one killed mid-run
def test_sigkill_mid_run_then_resume_loses_and_duplicates_nothing(tmp_path):
  out, kernels, n = tmp_path / "d.sqlite", "softmax:rows=64:cols=128:fp32,gemm:m=32:k=32:n=32:fp32", 14
  p = _gen(out, "--kernels", kernels, "--samples-per-kernel", str(n), start_new_session=True)
  deadline = time.time() + 120
  while time.time() < deadline:
    time.sleep(0.5)
    try:
      if len(_rows(out)) >= 8: break
    except sqlite3.Error: pass
  busy = _gen(out, "--kernels", kernels, "--samples-per-kernel", str(n))   # a second writer is refused while the first runs
  assert busy.wait(timeout=60) == 2 and "another generate-dataset is writing" in busy.stdout.read()
  os.killpg(p.pid, signal.SIGKILL)   # supervisor, the measuring child and its compile workers, all at once
  p.wait()
  before = _rows(out)
  assert 8 <= len(before) < 4*n
  p = _gen(out, "--kernels", kernels, "--samples-per-kernel", str(n))
  assert p.wait(timeout=300) == 0, p.stdout.read()
  after = _rows(out)
  assert set(before) <= set(after)                                  # nothing written before the kill is lost
  assert len({(k, o) for _, k, o, _, _ in after}) == len(after)     # no duplicates
  db = sqlite3.connect(out)
  assert db.execute("SELECT COUNT(*) FROM measurements WHERE status='pending'").fetchone()[0] == 0
  per_kernel = db.execute("SELECT kernel, COUNT(*) FROM measurements GROUP BY kernel").fetchall()
  nk = db.execute("SELECT COUNT(*) FROM kernels").fetchone()[0]
  db.close()
  assert len(per_kernel) == nk == 4 and all(c >= n for _, c in per_kernel)

def test_failing_configs_are_recorded_not_crashed(tmp_path):
  from dataset.generate import Generator, extract_into
  from dataset.plan import KernelPlan
  from dataset.device import L2Flush
  from dataset import compile as C
  store = Store(tmp_path / "f.sqlite")
  variants = select("softmax:rows=16:cols=64:log=0:fp32,softmax:rows=16:cols=64:log=1:fp32", "CPU")
  extract_into(store, variants, "CPU", progress=False)
  g = Generator(store, variants, "CPU", samples=10, workers=1, progress=False, check_frac=1.0)
  g.kernels, g.flush, g.benches, g.backlog, g.retry = store.kernels("CPU"), L2Flush("CPU"), {}, {}, {}
  by_name = {k["name"]: k for k in g.kernels}
  soft, logsoft = by_name["softmax:cols=64:log=0:rows=16:fp32#2"], by_name["softmax:cols=64:log=1:rows=16:fp32#1"]
  C.configure(CPU, {k["key"]: k["ast"] for k in g.kernels}, 10)
  p = KernelPlan(soft["key"], 10, random.Random(0))
  g._handle(p, C.run_task(C.Task(soft["key"], "fixed")))                     # the unoptimized reference
  assert g.benches[soft["key"]].ref
  good = C.run_task(C.Task(soft["key"], "hand"))
  g._handle(p, good)
  # log_softmax's last kernel has softmax's buffers and shapes but computes something else: the check must reject it
  other = C.run_task(C.Task(logsoft["key"], "fixed", hand_coded(scheduler(Kernel.ast_from_blob(logsoft["ast"]), CPU))))
  g._handle(p, C.Compiled(C.Task(soft["key"], "random"), (ACTIONS[0],), "ok", other.prg, 0.1, lib_hash="x", ast_key="x"))
  g._handle(p, C.Compiled(C.Task(soft["key"], "random"), (ACTIONS[1],), "compile_error", compile_s=0.2, error="boom", ast_key="y"))
  g._handle(p, C.Compiled(C.Task(soft["key"], "random"), (ACTIONS[2],), "timeout", compile_s=10, error="slow", ast_key="z"))
  broken = good.prg.replace(arg=good.prg.arg.__class__(**{**good.prg.arg.__dict__, "globals": (0, 1, 2, 3, 4, 5)}))
  g._handle(p, C.Compiled(C.Task(soft["key"], "random"), (ACTIONS[3],), "ok", broken, 0.1, lib_hash="w", ast_key="w"))
  got = {o: (st, err) for o, st, err in store.db.execute("SELECT opts, status, error FROM measurements")}
  assert got[json.dumps([])][0] == "ok" and got[json.dumps(opts_to_json(good.opts))][0] == "ok"
  assert got[json.dumps(opts_to_json((ACTIONS[0],)))][0] == "wrong" and "output 0" in got[json.dumps(opts_to_json((ACTIONS[0],)))][1]
  assert got[json.dumps(opts_to_json((ACTIONS[1],)))][0] == "compile_error"
  assert got[json.dumps(opts_to_json((ACTIONS[2],)))][0] == "timeout"
  assert got[json.dumps(opts_to_json((ACTIONS[3],)))][0] == "runtime_error"
  assert p.best == min(t for t, _ in p.ok) and len(p.ok) == 2   # a wrong config never becomes the best

def test_random_inputs_are_tiled_normals_at_random_offsets():
  from dataset.timing import POOL_N, random_normal
  rng = np.random.default_rng(3)
  a, b = random_normal(2*POOL_N + 7, np.float16, rng), random_normal(2*POOL_N + 7, np.float16, rng)
  assert a.shape == (2*POOL_N + 7,) and a.dtype == np.float16 and np.isfinite(a).all() and (a != 0).mean() > 0.99
  assert abs(float(a.astype(np.float32).std()) - 1) < 0.05 and not np.array_equal(a, b)   # each buffer its own window
  assert len(np.unique(random_normal(1000, np.float32, rng))) == 1000

def test_early_stop_needs_two_slow_runs():
  from dataset.timing import Bench
  b = object.__new__(Bench)   # the protocol alone: runs come from a scripted timer
  b.flush = lambda: None
  def timed(*runs):
    b._timer = lambda prg: iter(runs)
    return b.time(None, runs=3, early_stop=1e-3)
  assert timed(4e-3, 1e-4, 2e-4, 3e-4) == ([1e-4, 2e-4, 3e-4], False)   # a slow warm-up alone is an outlier: the run after counts
  assert timed(4e-3, 2e-3) == ([2e-3], True)                             # slow twice: timed once, stopped
  assert timed(1e-4, 1e-4, 2e-4, 3e-4) == ([1e-4, 2e-4, 3e-4], False)   # fast: warm-up, then three runs

def _this_machines_store(tmp_path) -> tuple[Path, str]:
  """A copy of the committed CPU store whose rows are this machine's CPU's (retime times them here, and apply writes only rows of
  the device the results were timed on), and the device the store was measured on."""
  import shutil
  from dataset.device import device_info
  shutil.copy(ROOT / "dataset" / "data" / "cpu.sqlite", store := tmp_path / "cpu.sqlite")
  db = sqlite3.connect(store)
  stored_on, = db.execute("SELECT device FROM measurements LIMIT 1").fetchone()
  with db:
    for table in ("measurements", "devices", "variants", "kernels"): db.execute(f"UPDATE {table} SET device=?", (device_info("CPU")[0],))
  db.close()
  return store, stored_on

@pytest.mark.slow   # three retime runs, one in a pool: the data tooling, not the loop
def test_retime_select_run_apply(tmp_path):
  """Early-stopped rows the model ranks high (and a random reference draw) are timed again in full, scaled by their kernel's control
  (its best config, timed again alongside, reported but not written); shards split the kernels."""
  import gzip
  from dataset import retime
  from models.retime import main as select_main   # select ranks with the cost model: dataset.retime is handed its ranking
  store, _ = _this_machines_store(tmp_path)
  assert retime.main(["select", str(store), "--model", str(ROOT / "models" / "cost_model_cpu.txt"), "--out", str(tmp_path / "x.json")]) == 2
  assert select_main(["select", str(store), "--model", str(ROOT / "models" / "cost_model_cpu.txt"), "--top", "1", "--random", "1",
                      "--out", str(tmp_path / "s.json.gz")]) == 0
  sel = json.loads(gzip.decompress((tmp_path / "s.json.gz").read_bytes()))
  assert sel["kernels"] and all([c["group"] for c in k["configs"]] in (["model", "control"], ["model", "random", "control"]) for k in sel["kernels"])
  assert all([c["control"] for c in k["configs"]][-1] for k in sel["kernels"])
  sel["kernels"] = [k for k in sel["kernels"] if len(k["configs"]) == 3][:3]
  res = retime.run(sel, tmp_path / "r.json", device="CPU", workers=1, shard=(0, 2), log=lambda s: None)   # kernels 0 and 2
  assert list(res["kernels"]) == [sel["kernels"][0]["key"], sel["kernels"][2]["key"]]
  assert all(len(c["new"]) == 3 for k in res["kernels"].values() for c in k["configs"])
  again = retime.run(sel, tmp_path / "r.json", device="CPU", workers=1, shard=(0, 2), log=lambda s: None)   # resumes: nothing left
  assert again == res
  other = retime.run(sel, tmp_path / "p.json", device="CPU", workers=2, shard=(1, 2), log=lambda s: None)   # compiled ahead in a pool
  assert list(other["kernels"]) == [sel["kernels"][1]["key"]] and all(len(c["new"]) == 3 for k in other["kernels"].values() for c in k["configs"])
  assert set(retime.summary({**res, "kernels": {**res["kernels"], **other["kernels"]}})) >= {"model_over_control", "random_over_control", "control_new_over_old"}
  assert retime.main(["apply", str(store), str(tmp_path / "r.json"), str(tmp_path / "p.json"), "--force"]) == 0   # both shards
  db = sqlite3.connect(store)
  for key, k in {**res["kernels"], **other["kernels"]}.items():
    ctl = retime.control_ratio(k)
    for c in k["configs"]:
      t, es, err = db.execute("SELECT time_s, early_stop, error FROM measurements WHERE kernel=? AND opts=?", (key, json.dumps(c["opts"]))).fetchone()
      if c["control"]: assert t == c["old_s"]   # controls stay as stored
      else: assert t == pytest.approx(min(c["new"])/ctl) and es == 0 and err.startswith("retimed, scaled")
  assert retime.main(["apply", str(tmp_path / "missing.sqlite"), str(tmp_path / "r.json")]) == 2
  # controls 3x faster than stored: another run's timing (set from this run's times, which a loaded machine stretches)
  drifted = {**res, "kernels": {k: {**v, "configs": [{**c, "old_s": min(c["new"])*3.0 if c["control"] else c["old_s"]} for c in v["configs"]]}
                                for k, v in res["kernels"].items()}}
  (tmp_path / "d.json").write_text(json.dumps(drifted))
  assert retime.main(["apply", str(store), str(tmp_path / "d.json")]) == 2

def test_retime_whole_kernels_under_a_time(tmp_path):
  """--under-us X: every ok row of each kernel whose fastest stored time is under X us, timed in one run and written unscaled (rows
  timed with the host's launch in them are replaced, not rescaled); it writes to the store alone, so it needs --no-shards."""
  from dataset import retime
  from models.retime import main as select_main
  store, stored_on = _this_machines_store(tmp_path)
  db = sqlite3.connect(store)
  best = dict(db.execute("SELECT kernel, MIN(time_s) FROM measurements WHERE status='ok' GROUP BY kernel"))
  x = sorted(best.values())[2]*1e6   # the two fastest kernels are under it
  args = ["select", str(store), "--model", str(ROOT / "models" / "cost_model_cpu.txt"), "--under-us", f"{x:.6f}", "--out", str(tmp_path / "w.json")]
  assert select_main(args) == 2   # with the shards it would select rows apply cannot write
  assert select_main(args[:5] + ["-1"] + args[6:] + ["--no-shards"]) == 2 and not (tmp_path / "w.json").exists()
  assert select_main(args + ["--no-shards"]) == 0
  sel = json.loads((tmp_path / "w.json").read_text())
  assert sel["mode"] == "whole" and {k["key"] for k in sel["kernels"]} == {k for k, t in best.items() if t < x*1e-6} and len(sel["kernels"]) == 2
  for k in sel["kernels"]:
    n, = db.execute("SELECT COUNT(*) FROM measurements WHERE kernel=? AND status='ok'", (k["key"],)).fetchone()
    assert len(k["configs"]) == n and k["configs"][0]["control"] and k["configs"][0]["old_s"] == best[k["key"]]
    assert {c["group"] for c in k["configs"]} == {"whole"} and not any(c["control"] for c in k["configs"][1:])
    k["configs"] = k["configs"][:4]   # a few configs each keep the run short: run and apply do not look at how many there are
  res = retime.run(sel, tmp_path / "r.json", device="CPU", workers=1, log=lambda s: None)
  (tmp_path / "elsewhere.json").write_text(json.dumps({**res, "device": stored_on + " (another)"}))
  assert retime.main(["apply", str(store), str(tmp_path / "elsewhere.json")]) == 2   # timed on a device the store lacks: refused
  assert retime.main(["apply", str(store), str(tmp_path / "r.json")]) == 0   # scale 1: no drift to refuse
  for key, k in res["kernels"].items():
    assert retime.kernel_scale(k) == 1.0
    for c in k["configs"]:   # the control too, each at this run's time, unscaled
      t, es, err = db.execute("SELECT time_s, early_stop, error FROM measurements WHERE kernel=? AND opts=?", (key, json.dumps(c["opts"]))).fetchone()
      assert t == min(c["new"]) and es == 0 and err.startswith("whole kernel timed again")

@pytest.mark.slow   # select, time, apply, then select again on the rewritten store (featurized anew)
def test_retime_consolidate(tmp_path):
  """--best K: a kernel's K fastest configs, the model's top picks and random fully timed ones are timed together and all written,
  scaled by the median new/old of the model's and random ones (the fastest are chosen by their stored times: the winner's curse)."""
  import gzip, shutil
  from dataset import retime
  from models.retime import main as select_main
  store, _ = _this_machines_store(tmp_path)
  # --held-out refits the model's ranker on each fold: the shipped CPU model's parameters with 40 trees, not 400, do that in seconds
  for f in ("cost_model_cpu.txt", "cost_model_cpu.compile.txt"): shutil.copy(ROOT / "models" / f, tmp_path / f)
  meta = json.loads((ROOT / "models" / "cost_model_cpu.json").read_text())
  (tmp_path / "cost_model_cpu.json").write_text(json.dumps({**meta, "params": {**meta["params"], "n_estimators": 40}}))
  assert select_main(["select", str(store), "--model", str(tmp_path / "cost_model_cpu.txt"), "--best", "2", "--top", "1",
                      "--random", "2", "--held-out", "2", "--out", str(tmp_path / "s.json.gz")]) == 0
  sel = json.loads(gzip.decompress((tmp_path / "s.json.gz").read_bytes()))
  assert sel["mode"] == "consolidate"
  sel["kernels"] = [k for k in sel["kernels"] if len(k["configs"]) == 5]   # kernels with enough fully timed configs
  assert len(sel["kernels"]) >= 2
  db = sqlite3.connect(store)
  for k in sel["kernels"]:
    assert [c["group"] for c in k["configs"]] == ["model", "random", "random", "best", "best"]
    times = sorted(t for (t,) in db.execute("SELECT time_s FROM measurements WHERE kernel=? AND status='ok'", (k["key"],)))
    assert [c["old_s"] for c in k["configs"][-2:]] == times[:2] and k["configs"][-2]["control"]
    assert len({json.dumps(c["opts"]) for c in k["configs"]}) == 5 and not any(c["early"] for c in k["configs"][1:3])
  sel["kernels"] = sel["kernels"][:2]
  res = retime.run(sel, tmp_path / "r.json", device="CPU", workers=1, log=lambda s: None)
  assert retime.main(["apply", str(store), str(tmp_path / "r.json"), "--force"]) == 0
  for key, k in res["kernels"].items():
    sc = np.median([min(c["new"])/c["old_s"] for c in k["configs"] if c["group"] in ("model", "random") and not c["early"]])
    assert retime.kernel_scale(k) == pytest.approx(sc)
    for c in k["configs"]:   # every config written, the fastest included
      t, es, err = db.execute("SELECT time_s, early_stop, error FROM measurements WHERE kernel=? AND opts=?", (key, json.dumps(c["opts"]))).fetchone()
      assert t == pytest.approx(min(c["new"])/sc) and es == 0 and err.startswith("consolidated")
  # a consolidation that reproduced the stored times (scale 1): the 2 fastest rows are again the two "best" configs, now consolidated
  # (the timing above rescales them by this machine's noise, which can reorder them against the kernel's other rows)
  exact = {**res, "kernels": {k: {**v, "configs": [{**c, "new": [c["old_s"]]} for c in v["configs"]]} for k, v in res["kernels"].items()}}
  (tmp_path / "e.json").write_text(json.dumps(exact))
  assert retime.main(["apply", str(store), str(tmp_path / "e.json"), "--force"]) == 0
  # again with --skip-consolidated: only kernels with a row among their 2 fastest that no consolidation timed
  assert select_main(["select", str(store), "--model", str(ROOT / "models" / "cost_model_cpu.txt"), "--best", "2", "--top", "1",
                      "--skip-consolidated", "--out", str(tmp_path / "s2.json")]) == 0
  again = {k["key"] for k in json.loads((tmp_path / "s2.json").read_text())["kernels"]}
  fastest_done = lambda key: all((e or "").startswith("consolidated") for (e,) in db.execute(
    "SELECT error FROM measurements WHERE kernel=? AND status='ok' ORDER BY time_s LIMIT 2", (key,)))
  assert again and all(not fastest_done(k) for k in again)
  assert all(fastest_done(k) for k in res["kernels"]) and not any(k in again for k in res["kernels"])

def test_compare_catches_local_errors_and_nans():
  from dataset.check import compare
  ref = np.random.default_rng(0).standard_normal(100_000).astype(np.float32)
  assert compare(ref + 1e-6, ref) is None
  bad = ref.copy(); bad[12345] += 1.0
  assert "1/100000 elements off" in compare(bad, ref)
  nan = ref.copy(); nan[7] = np.nan
  assert "non-finite" in compare(nan, ref)
  assert compare(ref.astype(np.float16), ref.astype(np.float16)) is None

@pytest.mark.parametrize("args,msg", [
  (["--kernels", "nosuch"], "unknown kernel 'nosuch'"),
  (["--kernels", "conv2d:n=2:c=16:h=8:w=8:k=8:ks=3:groups=3"], "bad shape"),
  (["--kernels", "conv2d:n=0"], "bad shape for conv2d: n=0"),
  (["--kernels", "gemm:m=x"], "bad value 'x'"),
  (["--kernels", "softmax", "--out", "/proc/nope/d.sqlite"], "cannot write"),
  (["--kernels", "softmax", "--model", "/nope/m.txt"], "no cost model file"),
])
def test_cli_errors_are_one_line(args, msg):
  # models.generate is generate-dataset's entry point (it loads --model's cost model); dataset.generate refuses --model in one line
  runs = [("models.generate", msg), ("dataset.generate", "run generate-dataset")] if "--model" in args else [("dataset.generate", msg)]
  for entry, want in runs:
    r = subprocess.run([sys.executable, "-m", entry, "--device", "CPU", *args], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and want in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr

def test_cli_missing_device():
  from dataset.device import available
  if available("CUDA"): pytest.skip("this machine has a CUDA device")
  r = subprocess.run([sys.executable, "-m", "dataset.generate", "--device", "CUDA", "--kernels", "softmax"], cwd=ROOT,
                     capture_output=True, text=True, timeout=120)
  assert r.returncode == 2 and "device CUDA is not available" in r.stderr and len(r.stderr.strip().splitlines()) == 1

def test_dataset_stats_json_and_errors(tmp_path):
  r = subprocess.run([sys.executable, "-m", "dataset.stats", str(ROOT / "dataset/data/cpu.sqlite"), "--json"], capture_output=True, text=True)
  st = json.loads(r.stdout)
  for k in ("measurements_ok", "measurements_failed", "kernels", "devices", "tinygrad_version", "families"):
    assert k in st
  assert st["measurements_ok"] > 1000 and st["tinygrad_version"] == ["0.14.0"]
  assert set(st["networks"]) == {"resnet50", "cvt_block", "gpt2_block"} and all(n > 0 for n in st["networks"].values())
  (tmp_path / "bad.sqlite").write_bytes(b"not a database at all" * 100)
  for path in (tmp_path / "bad.sqlite", tmp_path / "missing.sqlite"):
    r = subprocess.run([sys.executable, "-m", "dataset.stats", str(path)], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.startswith("dataset-stats: error:") and len(r.stderr.strip().splitlines()) == 1

def test_resumed_kernel_at_target_without_hand_coded_gets_it():
  from dataset.plan import KernelPlan
  p = KernelPlan("k", 2, random.Random(0))
  p.load([((), "ok", 1e-3, "fixed"), ((ACTIONS[0],), "ok", 2e-3, "random")])
  assert not p.finished() and p.next_task().kind == "hand"
  assert p.finished() and p.next_task() is None
  p = KernelPlan("k", 2, random.Random(0))
  p.load([((), "ok", 1e-3, "fixed"), ((ACTIONS[0],), "ok", 2e-3, "hand")])
  assert p.finished()

@pytest.mark.slow   # merges the committed H200 and H100 shards into working copies: ~1 min on a fresh cache, as every CI run has
def test_committed_hopper_dataset():
  # the base with its shards and the stores the shipped model was trained --with are what it names (their measurements' hash)
  from dataset.stats import stats
  from models.data import content_hash, joint_hash, measurements
  st = stats(str(base := ROOT / "dataset/data/cuda.sqlite"), shards=False)
  assert st["devices"] == ["NVIDIA H200"] and st["archs"] == ["sm_90"] and st["tinygrad_version"] == ["0.14.0"]
  assert st["kernels_with_ok"] >= 300 and st["measurements_ok"] >= 25_000
  op_families = set(st["families"]) - {"resnet50", "cvt_block", "gpt2_block"}
  assert len(op_families) >= 8 and {"resnet50", "cvt_block", "gpt2_block"} <= set(st["families"])
  trained = json.loads((ROOT / "models/cost_model_sm_90.json").read_text())["dataset"]
  parts = [measurements(ROOT / p) for p in [trained["path"], *trained["with"]]]
  assert [s for *_, read in parts for s in read] == trained["shards"]
  assert joint_hash([content_hash(df) for df, *_ in parts]) == trained["hash"]
  full = stats(str(base))
  assert full["shards"] and full["devices"] == st["devices"]
  assert full["measurements_ok"] == st["measurements_ok"] + sum(s["added_ok"] for s in full["shards"].values()) > st["measurements_ok"]
  # the shards beside it of another device (the H100 dataset's) are left out, said so; that dataset reads them, not the H200 ones
  assert full["shards_skipped"] and all("H100" in why for why in full["shards_skipped"].values())
  h100 = stats(str(ROOT / "dataset/data/cuda_h100.sqlite.gz"))
  assert h100["devices"] == ["NVIDIA H100 80GB HBM3"] and h100["measurements_ok"] >= 20_000 and h100["kernels_with_ok"] >= 1_000
  assert set(h100["shards"]) == set(full["shards_skipped"]) and set(h100["shards_skipped"]) == set(full["shards"])

def test_reference_is_unoptimized_threads_grouped_in_blocks():
  """On a GPU the correctness reference is LOCAL opts only (at most 256 threads, dividing the axes they split, leaving at least
  256 blocks); on the CPU, which has no local threads, it is the unoptimized kernel itself."""
  from tinygrad.codegen.opt import OptOps
  from dataset.sampler import reference_opts
  gpu = renderer_for("CUDA", "sm_90", compiler=False)
  for out in [Tensor.empty(256, 64, device="CPU") @ Tensor.empty(64, 512, device="CPU"),
              Tensor.empty(4096, 512, device="CPU").softmax(-1), Tensor.empty(2, 3, 28, 28, device="CPU").conv2d(Tensor.empty(8, 3, 7, 7, device="CPU"))]:
    for ast in kernel_asts(out):
      assert reference_opts(scheduler(ast, CPU)) == ()
      base = scheduler(ast, gpu)
      opts = reference_opts(base)
      k = replay(base, opts)
      assert k is not None and all(o.op is OptOps.LOCAL for o in opts)
      threads = int(np.prod([o.arg for o in opts]))
      outputs = int(np.prod([s for s, t in zip(base.full_shape, base.axis_types) if t.name == "GLOBAL"]))
      assert threads <= 256 and (threads == 1 or outputs // threads >= 256)
  mm = kernel_asts(Tensor.empty(4096, 4096, device="CPU") @ Tensor.empty(4096, 4096, device="CPU"))[0]
  assert [o.arg for o in reference_opts(scheduler(mm, gpu))] == [256]

def test_resources_export_interleaves_kernels_and_run_needs_nvrtc(tmp_path, monkeypatch):
  import gzip
  import dataset.device, dataset.resources as res
  res.export(str(ROOT / "dataset" / "data" / "cpu.sqlite"), str(t := tmp_path / "tasks.json.gz"), per=3, seed=0)
  d = json.load(gzip.open(t, "rt"))
  keys = [k for k, _ in d["tasks"]]
  n = len(d["asts"])
  assert n >= 60 and len(set(keys[:n])) == n   # a run cut short has still compiled some config of every kernel
  assert max(keys.count(k) for k in set(keys)) <= 3 and len(set(map(tuple, d["tasks"]))) == len(d["tasks"])
  def no_nvrtc(*a, **kw): raise AttributeError("failed to load library nvrtc")
  monkeypatch.setattr(dataset.device, "renderer_for", no_nvrtc)
  with pytest.raises(res.ResourcesError, match="NVRTC_PATH"): res.run(str(t), str(tmp_path / "out.jsonl.gz"), 1, 1.0)

def test_beam_step_tries_every_child_until_new_code():
  # a measured BEAM step: with all but one child's code already measured, the 'beam' proposal still finds that one (a few random
  # children, as 'expand' draws, would mostly come back duplicate); with all measured it comes back empty, for the plan to widen
  from dataset import compile as C
  from dataset.sampler import children
  k = [k for _, ks in extract(select("softmax:rows=64:cols=128:fp32", "CPU"), "CPU") for k in ks][-1]
  C.configure(CPU, {k.key: k.blob()}, 10)
  base = scheduler(k.ast, CPU)
  codes = {}
  for a, _ in children(base):
    try: codes[(a,)] = C.optimized_ast(base, (a,)).key.hex()[:20]
    except Exception: pass
  assert len(set(codes.values())) >= 5
  last = list(codes)[-1]
  seen = frozenset(c for o, c in codes.items() if c != codes[last])
  got = {C.run_task(C.Task(k.key, "beam", (), avoid_asts=seen, seed=s)).opts for s in range(3)}
  assert all(o is not None and codes.get(o, C.optimized_ast(base, o).key.hex()[:20]) == codes[last] for o in got), got
  done = C.run_task(C.Task(k.key, "beam", (), avoid_asts=frozenset(codes.values()), seed=0))
  assert done.opts is None and done.status == "none"

def test_beam_climb_skips_exhausted_parents_and_retires():
  from dataset.plan import KernelPlan
  from dataset.compile import Task
  a = ACTIONS[0]
  p = KernelPlan("k", 100, random.Random(0), mix={"beam": 1.0})
  p.started = True
  for t, o in ((2.0, ()), (1.0, (a,))): p.on_ok(t, o, "beam")
  assert {p.next_task().parent for _ in range(20)} == {(), (a,)}
  p.on_empty(Task("k", "beam", (a,)))          # every child of (a,) lowers to measured code
  assert {p.next_task().parent for _ in range(20)} == {()}
  p.on_empty(Task("k", "beam", ()))
  assert p.next_task() is None and p.finished()   # nothing left to climb: the kernel retires instead of proposing forever

# ***** the corpus' tiers: the fixed grid, the networks, the seeded single-op sampler *****

def test_default_and_small_tiers_hold_the_grid():
  # the shipped data and the quick start were made from these: the networks and sampled tiers join 'all' only
  assert len(select("default", "CUDA")) == len(select("grid", "CUDA")) == 228 and len(select("small", "CPU")) == 24
  assert all(v.tier == "grid" for v in select("default", "CUDA") + select("default", "CPU"))
  everything = select("all", "CUDA")
  assert {v.tier for v in everything} == {"grid", "networks", "sampled"} and not any(v.small for v in everything)
  assert select("resnet50", "CUDA") == [v for v in CORPUS if v.workload == "resnet50" and v.tier == "grid" and not v.small]

def test_networks_tier():
  from dataset.networks import NETWORKS
  nets = select("networks", "CUDA")
  assert {v.workload for v in nets} == set(NETWORKS) and len(NETWORKS) >= 23
  for n in NETWORKS:   # several batches, both dtypes, forward and a training step
    ps = [dict(v.params) for v in nets if v.workload == n]
    assert len({p["batch"] for p in ps}) >= 3 and {p["dtype"] for p in ps} == {"fp16", "fp32"} and {bool(p.get("train")) for p in ps} == {False, True}
  cpu = select("networks", "CPU")
  assert all(v.small for v in cpu) and len(cpu) == 2*len(NETWORKS)
  assert select("resnet18:batch=8:train=1:fp16", "CUDA")[0].tier == "networks"

def test_sampler_is_seeded_and_deterministic():
  from dataset.shape_sampler import MAX_ELEMENTS, MAX_FLOPS, cost, sample
  a, b = sample(300, seed=7), sample(300, seed=7)
  assert a == b and sample(100, seed=7) == a[:100] and sample(300, seed=8) != a
  assert len({(w, tuple(sorted(p.items()))) for w, _, p in a}) == 300
  assert len({w for w, _, _ in a}) >= 12 and {p["dtype"] for _, _, p in a} == {"fp16", "fp32"}
  assert any(p.get("h", 2) % 2 or p.get("c", 2) % 2 for _, _, p in a)   # odd sizes
  assert all(f <= MAX_FLOPS and e <= MAX_ELEMENTS for w, _, p in a for f, e in [cost(w, p)])
  grid = {v.name for v in CORPUS if v.tier == "grid"}
  assert not grid & {v.name for v in CORPUS if v.tier == "sampled"}
  s = select("sampled:40:3", "CPU")
  assert len(s) == 40 and s == select("sampled:40:3", "CUDA") and all(v.tier == "sampled" for v in s)
  for v in s[:8]: assert kernel_asts(*v.build("CPU"))   # each builds and schedules

def test_list_groups_the_corpus(capsys):
  from dataset.generate import main
  assert main(["--list"]) == 0
  out = capsys.readouterr().out
  for g in ("cnn", "transformer", "recurrent", "recommender", "dense-prediction", "op"): assert f"\n{g} " in out
  assert re.search(r"\ncnn +resnet18 +14 ", out) and re.search(r"\nop +conv2d +\d+ +79 ", out)
  assert main(["--list", "--kernels", "gpt2_medium_block,sampled:5:1", "--count-kernels"]) == 0
  out = capsys.readouterr().out
  assert re.search(r"transformer +gpt2_medium_block +2 .* \d+\n", out) and "distinct kernels on CPU" in out

def test_datasheet_throughput_counts_only_time_spent_measuring():
  from dataset.datasheet import IDLE_S, throughput
  ts = np.array([0.0, 1.0, 2.0, 3.0] + [1000.0 + i for i in range(5)])   # two runs, an idle hour-ish gap between them
  rate, hours = throughput(ts)
  assert IDLE_S < 997 and abs(hours*3600 - 7.0) < 1e-9 and abs(rate - 9/(7/60)) < 1e-6

def test_extraction_in_workers_gives_the_serial_kernels(tmp_path):
  # the variants scheduled in worker processes (generate-dataset's extraction: a network's training step takes tens of seconds):
  # the same kernels, names and ASTs in the same order, deduplicated across variants and against what the store already holds
  vs = select("gemm:m=32:k=32:n=32:fp32,softmax:rows=64:cols=128:log=0:fp32,softmax:rows=64:cols=128:log=1:fp32,layernorm:rows=64:cols=128:fp32", "CPU")
  serial = [(v.name, [(k.key, k.name, k.ast) for k in ks]) for v, ks in extract(vs, "CPU")]
  assert sum(len(ks) for _, ks in serial) < sum(len(kernel_asts(*v.build("CPU"))) for v in vs)   # a kernel the variants share: once
  assert [(n, [(a, b, c.key) for a, b, c in ks]) for n, ks in serial] == \
         [(v.name, [(k.key, k.name, k.ast.key) for k in ks]) for v, ks in extract(vs, "CPU", workers=2)]
  seen = {serial[0][1][0][0]}
  assert [k.key for _, ks in extract(vs, "CPU", set(seen), workers=2) for k in ks] == [k for _, ks in serial for k, _, _ in ks][1:]
  from dataset.corpus import extract_into
  for w in (1, 2):   # a store holds the same kernels however it was extracted: every column, and each blob's AST (its bytes may differ)
    s = Store(tmp_path / f"w{w}.sqlite")
    try: extract_into(s, vs, "CPU", progress=False, workers=w)
    finally: s.close()
  rows = lambda w: [(*r[:-1], Kernel.ast_from_blob(r[-1]).key.hex()) for r in sqlite3.connect(tmp_path / f"w{w}.sqlite").execute("SELECT * FROM kernels ORDER BY key")]
  assert rows(1) == rows(2) and len(rows(1)) == sum(len(ks) for _, ks in serial) and all(r[0] == r[-1] for r in rows(1))

def test_a_run_stuck_past_its_time_budget_is_stopped(tmp_path, monkeypatch):
  # the child beats (no hang) but never stops: the supervisor kills it once the budget and OVERRUN_S have passed
  from types import SimpleNamespace
  import dataset.generate as G
  (tmp_path / "stuck_child.py").write_text(
    "import os, sys, time\nfrom pathlib import Path\nout = Path(sys.argv[sys.argv.index('--out') + 1])\n"
    "(out.parent / 'pid').write_text(str(os.getpid()))\nwhile True: out.with_suffix('.heartbeat').touch(); time.sleep(0.2)\n")
  monkeypatch.setenv("PYTHONPATH", str(tmp_path)); monkeypatch.setattr(G, "OVERRUN_S", 1.0)
  out = tmp_path / "d.sqlite"
  Store(out).close()
  import threading
  t, rc = time.time(), []
  th = threading.Thread(target=lambda: rc.append(G.supervise(SimpleNamespace(time_budget=1.0, hang_timeout=60.0), "CPU", out, [],
                                                             entry="stuck_child")), daemon=True)
  th.start(); th.join(30)
  pid = int((tmp_path / "pid").read_text())
  if th.is_alive(): os.kill(pid, signal.SIGKILL)   # the old supervisor waits on it for good
  assert rc == [0] and 2.0 <= time.time() - t < 30
  with pytest.raises(ProcessLookupError): os.kill(pid, 0)
  assert not out.with_suffix(".heartbeat").exists()
