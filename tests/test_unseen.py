"""The unseen benchmark (dataset/unseen.py; scripts/bench_unseen.py measures it) is frozen and held out: its list never changes, and
none of its kernels is in the shipped stores, their shards or the histories (so in no training data, offline search or history a
search starts from)."""
import gzip, json, shutil, sqlite3, time
from pathlib import Path
import pytest
from conftest import script
from dataset import unseen as bench_unseen
ROOT = Path(__file__).resolve().parents[1]

def test_benchmark_is_frozen():
  specs = bench_unseen.kernel_specs()
  assert bench_unseen.fingerprint(specs) == "67959cf1dd66e266"   # changing the benchmark needs a new seed and a new name
  assert len(specs) >= 40 and len(set(specs)) == len(specs)
  assert len(bench_unseen.NETWORKS) >= 6

@pytest.mark.parametrize("device", ["CUDA", "CPU"])
def test_no_benchmark_kernel_in_stores_or_histories(device):
  keys = bench_unseen.benchmark_keys(device)
  assert len(keys) >= 40
  shipped = bench_unseen.shipped_keys()
  assert len(shipped) > 800   # the stores, the shards and the histories were read
  assert not (hit := set(keys) & shipped), f"benchmark kernels in the training data: {[keys[k] for k in hit]}"
  assert held_out(device) >= set(keys) and not held_out(device) & shipped   # the splits' kernels neither

def test_shipped_keys_reads_stores_shards_and_histories(tmp_path):
  def store(path, key):
    db = sqlite3.connect(path); db.execute("CREATE TABLE kernels (key TEXT)"); db.execute("INSERT INTO kernels VALUES (?)", (key,)); db.commit(); db.close()
  (tmp_path / "dataset" / "data" / "shards").mkdir(parents=True); (tmp_path / "models").mkdir()
  store(tmp_path / "dataset" / "data" / "base.sqlite", "a")
  store(tmp_path / "g.sqlite", "d")
  with open(tmp_path / "g.sqlite", "rb") as f, gzip.open(tmp_path / "dataset" / "data" / "gz.sqlite.gz", "wb") as g: shutil.copyfileobj(f, g)
  store(tmp_path / "s.sqlite", "b")
  with open(tmp_path / "s.sqlite", "rb") as f, gzip.open(tmp_path / "dataset" / "data" / "shards" / "x.sqlite.gz", "wb") as g: shutil.copyfileobj(f, g)
  (tmp_path / "models" / "history_sm_90.json").write_text(json.dumps({"nests": {"n": [[[], 1.0, "c"]]}}))
  assert bench_unseen.shipped_keys(tmp_path) == {"a", "b", "c", "d"}

# ***** the corpus (dataset.corpus: grid, networks, sampled tiers) holds none of the benchmark's networks or kernels *****
import re
from dataset.corpus import CORPUS, held_out, parse_variant
from dataset.kernel import kernel_asts
from dataset.networks import GROUPS, NETWORKS as CORPUS_NETWORKS

# the benchmark's network families, at any size or variant: a corpus network named like one of them is one of them
UNSEEN_FAMILIES = re.compile(r"mobilenet|efficientnet|vit|deit|convnext|bert|whisper|llama")

def test_no_unseen_network_family_in_corpus():
  assert all(UNSEEN_FAMILIES.match(n) for n in bench_unseen.NETWORKS)   # the pattern names every benchmark network
  assert not (hit := [n for n in {*CORPUS_NETWORKS, *(v.workload for v in CORPUS)} if UNSEEN_FAMILIES.search(n)]), hit

def _corpus_keys(variants) -> dict[str, str]: return {a.key.hex(): v.name for v in variants for a in kernel_asts(*v.build("CPU"))}

def _check_keys(variants):
  keys = bench_unseen.benchmark_keys("CPU")
  assert not (hit := set(keys) & set(got := _corpus_keys(variants))), f"benchmark kernels in the corpus: {[(keys[k], got[k]) for k in hit]}"

def test_no_benchmark_shape_in_corpus():
  # every variant by name (a single op's kernels are its shape's), then the kernels of a fast subset by AST key
  specs = {parse_variant(s).name for s in bench_unseen.kernel_specs()}
  assert not (hit := specs & {v.name for v in CORPUS}), hit
  sampled = [v for v in CORPUS if v.tier == "sampled"][:120]
  nets = [v for v in CORPUS if v.tier == "networks" and not v.small and GROUPS[v.workload] in ("transformer", "recommender")
          and dict(v.params)["batch"] in (1, 128) and "train" not in dict(v.params)]
  assert len(nets) >= 16
  _check_keys(sampled + nets)

@pytest.mark.slow
def test_no_benchmark_kernel_in_corpus():
  # every sampled shape, every network forward at its smallest corpus batch and at CPU size; a training step's forward kernels are
  # its forward variant's, and its backward kernels are not single forward ops (the benchmark's)
  first = {}
  for v in CORPUS:
    if v.tier == "networks" and not v.small and not dict(v.params).get("train"): first.setdefault((v.workload, dict(v.params).get("stage")), v)
  _check_keys([v for v in CORPUS if v.tier == "sampled" or (v.tier == "networks" and v.small and not dict(v.params).get("train"))] + list(first.values()))

def test_a_fresh_split_is_new_and_held_out():
  a, b = bench_unseen.draw(1), bench_unseen.draw(1)
  assert a == b and len(a) >= 40
  assert not set(a) & set(bench_unseen.SPECS) and not {parse_variant(s).name for s in a} & {v.name for v in CORPUS}
  keys = bench_unseen.benchmark_keys("CPU", a[:8])
  assert keys and not set(keys) & bench_unseen.shipped_keys()

@pytest.mark.slow   # 30 s of CPU searches: CI's slow step runs it, the default run stays under 8 minutes on 2 cores
def test_an_op_that_crashes_is_recorded_and_the_run_goes_on_and_repeats_give_the_spread(tmp_path, monkeypatch):
  # a long benchmark run never dies on one op: the crash is written down (a resumed run tries it again) and the next op is measured
  import json
  import search.cli
  mod = script("bench_unseen")
  real, params, models = search.cli.search_kernels, [], []
  def flaky(*a, **kw):
    if a[0][0].name.startswith("gelu_bias"): raise KeyError("a search bug")
    params.append(kw)
    if "amt" not in kw: models.append(Path(a[4].model.path).resolve().parent)
    return real(*a, **kw)
  monkeypatch.setattr(search.cli, "search_kernels", flaky)
  ops = [i for i, s in enumerate(bench_unseen.draw(1)) if s.startswith(("rmsnorm:rows=98:", "gelu_bias:rows=98:"))]
  other = tmp_path / "m"   # a variant's own model (a retrained one): here a copy of the shipped CPU model, told apart by its folder
  other.mkdir()
  for f in Path("models").glob("cost_model_cpu.*"): shutil.copy(f, other / f.name)
  variant = json.dumps({"near_k": 0, "model": str(other / "cost_model_cpu.txt")})
  for i in ops:
    assert mod.main(["--split", "1", "--range", f"{i}:{i+1}", "--device", "CPU", "--workers", "2", "--out", str(tmp_path), "--rounds", "1",
                     "--beam-cache", str(tmp_path / "b.json"), "--no-plot", "--resume", "--repeats", "2", "--variant", variant]) == 0
  res = json.loads((tmp_path / "unseen_s1.json").read_text())
  assert [c["error"] for c in res["crashed"]] == ["KeyError: 'a search bug'"] and len(res["kernels"]) == 2 and all(e["verified"] for e in res["kernels"])
  assert res["crashed"][0]["at"].startswith("tests/test_unseen.py:") and res["crashed"][0]["at"].endswith(" in flaky")   # where, from the record alone
  assert f"; {len(res['crashed'][0]['keys'])} more crashed: gelu_bias" in (tmp_path / "unseen_s1.md").read_text()
  # --repeats 2: each kernel searched twice (seeds 0, 1), both picks re-timed beside BEAM=2's, the spread in the report
  assert all(len(e["repeats"]) == 2 and all(x["us"] > 0 and x["verified"] for x in e["repeats"]) for e in res["kernels"])
  assert all(e["repeats"][0]["us"] == e["learned_us"] and e["repeats"][0]["opts"] == e["learned_opts"] for e in res["kernels"])
  assert "2 runs of the learned search (seeds 0..1), geomean per run: " in (md := (tmp_path / "unseen_s1.md").read_text())
  # --variant: the last run's Beam parameters, the first run's the defaults; the report says which, with each run's wall. Each
  # kernel's runs start in turn at another (the second kernel with the variant's), so that no run is always a process's cold one
  assert [kw for kw in params if "amt" not in kw] == [{}, {"near_k": 0}, {"near_k": 0}, {}] and res["variant"] == [json.loads(variant)]
  assert models == [Path("models").resolve(), other.resolve(), other.resolve(), Path("models").resolve()]   # the variant's runs score with its model
  assert f"; run 1 with Beam(near_k=0) and the model {other / 'cost_model_cpu.txt'}" in md and "search wall / BEAM=2's per run: " in md

@pytest.mark.slow   # two configurations searched, BEAM=2 on each, all re-timed: about 50 s on 2 cores
def test_together_searches_several_configurations_kernels_at_once(tmp_path, monkeypatch):
  # --together 2: two configurations' kernels in one interleaved learned search (as tune-model searches a model's), each kernel with
  # its own answer, verified and re-timed beside BEAM=2's; the kernels' seconds share the search's wall evenly
  import json
  import search.cli
  mod = script("bench_unseen")
  real, calls = search.cli.search_kernels, []
  def spy(*a, **kw): calls.append((a[2], [k.name for k in a[0]])); return real(*a, **kw)
  monkeypatch.setattr(search.cli, "search_kernels", spy)
  assert mod.main(["--split", "1", "--range", "38:40", "--together", "2", "--device", "CPU", "--workers", "2", "--out", str(tmp_path),
                   "--rounds", "1", "--beam-cache", str(tmp_path / "b.json"), "--no-plot"]) == 0
  res = json.loads((tmp_path / "unseen_s1.json").read_text())
  learned = [names for strategy, names in calls if strategy == "beam"]
  assert len(learned) == 1 and sorted(learned[0]) == sorted(e["name"] for e in res["kernels"])
  assert {e["op"] for e in res["kernels"]} == set(mod.draw(1)[38:40]) and all(e["verified"] and e["learned_us"] > 0 for e in res["kernels"])
  assert res["together"] == 2 and len({e["together_wall_s"] for e in res["kernels"]}) == 1
  assert sum(e["learned_s"] for e in res["kernels"]) == pytest.approx(res["kernels"][0]["together_wall_s"], abs=0.01)
  assert "2 configurations searched together at a time" in (md := (tmp_path / "unseen_s1.md").read_text())
  # the host's CPU probe beside the walls: the run's, and each BEAM=2 search's in its cache (a later call takes its seconds)
  beam = json.loads((tmp_path / "b.json").read_text())
  assert res["host_probe_s"] > 0 and all(e["beam2_host_probe_s"] == beam[e["key"]]["host_probe_s"] > 0 for e in res["kernels"])
  assert f"This host's CPU probe (dataset.device.host_probe): {res['host_probe_s']:.3f} s; BEAM=2's searches': " in md

def test_wide_splits_draw_new_shapes_and_leave_earlier_splits_alone():
  # seeds from WIDE draw from longer shape lists (by split 30, 57 of a split's 70 kernels were earlier splits'); earlier seeds draw as before
  assert bench_unseen.fingerprint(bench_unseen.draw(30)) == "e0b0026d12418dab" and bench_unseen.fingerprint(bench_unseen.draw(1)) == "2a2695344542e460"
  wide = bench_unseen.draw(bench_unseen.WIDE)
  assert len(wide) >= 40 and len(set(wide) - {s for k in range(1, bench_unseen.WIDE) for s in bench_unseen.draw(k)}) >= 30
  assert any(":seq=77:" in s or ":l=1500:" in s or ":h=35:" in s for s in wide)

def test_a_wide_splits_kernel_the_training_data_held_is_skipped_not_refused(tmp_path, monkeypatch, capsys):
  import dataset.corpus
  mod = script("bench_unseen")
  events, split = [], bench_unseen.WIDE
  monkeypatch.setattr(mod, "beam_search", lambda a, k, *rest: events.append(k.key))
  monkeypatch.setattr(mod, "measure_op", lambda a, oi, spec, kernels, *rest: events.append(oi))
  first = {k.key for k in mod.kernels_of(mod.draw(split)[0], "CPU")}
  real = dataset.corpus.held_out
  monkeypatch.setattr(dataset.corpus, "held_out", lambda device: real(device) - first)   # as if a store held config 0's kernels
  (bar := tmp_path / "barrier").mkdir()
  assert mod.main(["--split", str(split), "--range", "0:2", "--beam-first", str(bar), "--device", "CPU", "--workers", "1",
                   "--out", str(tmp_path), "--no-plot"]) == 0
  assert not first & set(events) and 1 in events and 0 not in events and "in the training data" in capsys.readouterr().out
  assert mod.main(["--split", str(bench_unseen.SPLITS + 1), "--device", "CPU", "--out", str(tmp_path)]) == 2   # not held out: refused
  assert "is not held out" in capsys.readouterr().err

def test_a_fresh_split_skips_kernels_an_earlier_split_measured(tmp_path):
  # splits share common kernels (split 2 holds 8 of split 1's): a split's figure is over kernels no other split evaluated
  import json
  mod = script("bench_unseen")
  with pytest.raises(SystemExit) as e: mod.main(["--split", "2", "--repeats", "0", "--out", str(tmp_path)])
  assert e.value.code == 2   # before any work
  for v in ('{"nope": 1}', '[{"k": 2}, {"k": 3}]', '{"model": "no/such/model.txt"}'):   # an unknown Beam parameter, more variants than runs, a missing model: before any work too
    with pytest.raises(SystemExit) as e: mod.main(["--split", "2", "--repeats", "2", "--variant", v, "--out", str(tmp_path)])
    assert e.value.code == 2
  (tmp_path / "unseen_s1.json").write_text(json.dumps({"kernels": [{"key": "a"}, {"key": "b"}]}))
  (tmp_path / "unseen_s1_beam2.json").write_text(json.dumps({"c": {}}))   # a BEAM=2 cache: no kernel measured
  (tmp_path / "unseen_s2.json").write_text(json.dumps({"kernels": [{"key": "d"}]}))
  assert mod.evaluated_keys([tmp_path], tmp_path / "unseen_s2.json") == {"a", "b"}
  assert mod.evaluated_keys([tmp_path, tmp_path], tmp_path / "unseen_s1.json") == {"d"}
  (tmp_path / "unseen.json").write_text(json.dumps({"kernels": [{"key": "f"}]}))   # the frozen list's: never fresh either
  assert mod.evaluated_keys([tmp_path], tmp_path / "unseen_s2.json") == {"a", "b", "f"}
  with pytest.raises(SystemExit) as e: mod.main(["--split", str(bench_unseen.SEED), "--out", str(tmp_path)])   # the frozen list's own seed
  assert e.value.code == 2
  shared = set(bench_unseen.benchmark_keys("CPU", bench_unseen.draw(1))) & set(bench_unseen.benchmark_keys("CPU", bench_unseen.draw(2)))
  assert shared   # why it matters: the draws overlap

def test_part_deals_configurations_round_robin(tmp_path, monkeypatch):
  # one GPU's share of a split (gpu_unseen.sh: --part I/N) is every N-th configuration, so the heavy family at the list's head spreads
  mod = script("bench_unseen")
  got = []
  monkeypatch.setattr(mod, "measure_op", lambda a, oi, *rest: got.append(oi))
  assert mod.main(["--split", "3", "--range", "0:10", "--part", "1/3", "--device", "CPU", "--workers", "1", "--out", str(tmp_path), "--no-plot"]) == 0
  assert got == [1, 4, 7]
  for bad in ("3/3", "x", "1/0"):
    with pytest.raises(SystemExit) as e: mod.main(["--split", "3", "--part", bad, "--out", str(tmp_path)])
    assert e.value.code == 2

def test_beam_first_searches_every_kernel_with_beam2_before_any_learned_search(tmp_path, monkeypatch):
  # --beam-first: each part's BEAM=2 searches all run before its learned ones, and the parts of one host meet at a barrier between the
  # phases, so that neither kind is timed while the other loads the host's cores
  import json
  mod = script("bench_unseen")
  events = []
  monkeypatch.setattr(mod, "beam_search", lambda a, k, *rest: events.append("beam"))
  monkeypatch.setattr(mod, "measure_op", lambda a, oi, *rest: events.append(oi))
  (bar := tmp_path / "barrier").mkdir()
  (bar / "beam_done.1").touch()   # the other part is done already: no wait
  assert mod.main(["--split", "3", "--range", "0:4", "--part", "0/2", "--beam-first", str(bar), "--device", "CPU", "--workers", "1",
                   "--out", str(tmp_path), "--no-plot"]) == 0
  assert events[events.index(0):] == [0, 2] and set(events[:events.index(0)]) == {"beam"} and (bar / "beam_done.0").is_file()
  events.clear()   # --beam-only: the BEAM=2 searches and nothing after them (a later call runs the learned ones from the cache)
  assert mod.main(["--split", "3", "--range", "0:4", "--part", "0/2", "--beam-first", str(bar), "--beam-only", "--device", "CPU",
                   "--workers", "1", "--out", str(tmp_path), "--no-plot"]) == 0
  assert events and set(events) == {"beam"}
  events.clear()   # --beam-s: no BEAM=2 search starts after it, and the learned runs take the configurations whose picks are all cached
  (cache := tmp_path / "b.json").write_text(json.dumps({k.key: {"opts": []} for k in mod.kernels_of(mod.draw(3)[2], "CPU")}))
  assert mod.main(["--split", "3", "--range", "0:4", "--part", "0/2", "--beam-first", str(bar), "--beam-s", "0", "--beam-cache", str(cache),
                   "--device", "CPU", "--workers", "1", "--out", str(tmp_path), "--no-plot"]) == 0
  assert events == [2]
  with pytest.raises(SystemExit): mod.main(["--split", "3", "--beam-s", "10", "--device", "CPU"])   # without --beam-first
  with pytest.raises(SystemExit): mod.main(["--split", "3", "--beam-only", "--device", "CPU"])
  st = time.time()   # a part whose partner never comes waits no longer than --barrier-s
  mod.barrier(tmp_path / "other", (0, 2), 1.5)
  assert 1.0 < time.time() - st < 10

def test_rank_pairs_scores_the_learned_answer_against_beam2s(tmp_path, capsys):
  # bench_unseen --rank-pairs (offline, no GPU): per measured kernel where the two answers differ by 5% or more, whether the model
  # scores the faster one higher; a pair closer than that, or an unverified row, is left out
  import json
  mod = script("bench_unseen")
  rows = json.loads((ROOT / "results" / "unseen_s1.json").read_text())["kernels"]
  far = [e for e in rows if e["learned_us"] > 1.2*e["beam2_us"]][:2]
  near = {**far[0], "beam2_us": far[0]["learned_us"]*1.01}
  (tmp_path / "unseen_s1.json").write_text(json.dumps({"kernels": [*far, near, {**far[0], "verified": False}]}))
  (tmp_path / "unseen_s1_beam2.json").write_text("{}")   # not a result file: not read
  assert mod.main(["--rank-pairs", str(ROOT / "models" / "cost_model_sm_90.txt"), "--out", str(tmp_path)]) == 0
  res = json.loads(capsys.readouterr().out)
  assert res["kernels"] == 2 and res["beam2_faster"] == 2 and [r["name"] for r in res["rows"]] == [e["name"] for e in far]
  assert res["ordered_right"] == sum(r["score_beam2"] > r["score_learned"] for r in res["rows"]) == 2 - res["beam2_faster_scored_lower"]
  assert mod.main(["--rank-pairs", str(tmp_path / "nope.txt"), "--out", str(tmp_path)]) == 2   # a missing model: one line, no traceback
  err = capsys.readouterr().err
  assert err.startswith("bench_unseen: error:") and len(err.strip().splitlines()) == 1

@pytest.mark.slow   # model descents of three kernels: CI's slow step runs it
def test_descent_tells_a_lost_first_batch_from_a_model_that_ranks_beam2s_config_low(tmp_path, capsys):
  # bench_unseen --descent (offline, no GPU): where a kernel is 1.2x or more behind BEAM=2, was BEAM=2's config in the first batch?
  import json
  from dataset.corpus import parse_variant
  from dataset.device import renderer_for
  from dataset.kernel import kernel_asts, opts_to_json, scheduler
  from models.cost_model import CostModel
  from search.beam import Beam
  from search.context import Context
  mod = script("bench_unseen")
  model = ROOT / "models" / "cost_model_sm_90.txt"
  far = [e for e in json.loads((ROOT / "results" / "unseen_s1.json").read_text())["kernels"] if e["learned_us"] > 1.2*e["beam2_us"]][:2]
  ren = renderer_for("CUDA", "sm_90", compiler=False)
  base = scheduler(kernel_asts(*parse_variant(far[0]["op"]).build("CUDA"))[int(far[0]["name"].split("#")[1])], ren)
  batch = Beam()._seed(Context(base, None, CostModel.load(model).scorer()))
  had = {**far[0], "name": far[0]["name"], "beam2_opts": opts_to_json(batch[1][0])}   # BEAM=2's pick made one of the first batch's
  close = {**far[1], "beam2_us": far[1]["learned_us"]}                                 # not 1.2x behind: left out
  (tmp_path / "unseen_s1.json").write_text(json.dumps({"kernels": [*far, had, close]}))
  assert mod.main(["--descent", str(model), "--out", str(tmp_path)]) == 0
  res = json.loads(capsys.readouterr().out)
  assert res["kernels"] == 3 and res["rows"][2]["kind"] == "batch" and res["batch"] + res["myopic"] + res["ranked"] == 3
  assert all(r["kind"] != "myopic" or (not r["beam2_scored_in_descent"] and r["scored_above_beam2"] < 8) for r in res["rows"])
  # --variant: the descent's Beam parameters; without SWAP steps no config it scored holds one
  assert mod.main(["--descent", str(model), "--out", str(tmp_path), "--variant", '{"descent_swaps": false}']) == 0
  off = json.loads(capsys.readouterr().out)
  assert off["params"] == {"descent_swaps": False} and off["above_with_swap"] == 0 and all(r["descent_s"] > 0 for r in off["rows"])

def test_anytime_gives_the_answer_and_wall_had_a_search_stopped_after_n_timings(tmp_path):
  # what the rounds after the first batch buy and cost, from a split's measured trajectories (timings, seconds, best so far)
  import json
  mod = script("bench_unseen")
  traj = [[i + 1, 0.5*(i + 1), 2e-6 if i < 9 else 1e-6] for i in range(20)]   # halves its time at the 10th timing
  e = {"verified": True, "trajectory": traj, "learned_us": 1.0, "beam2_us": 1.0, "learned_s": 11.0, "beam2_s": 50.0}
  (tmp_path / "unseen_s9.json").write_text(json.dumps({"kernels": [e]}))
  rows = {r["timings"]: r for r in mod.anytime([tmp_path / "unseen_s9.json"])}
  assert rows[9]["geomean_vs_beam2"] == 2.0 and rows[9]["wall_share"] == 0.09 and rows[16]["geomean_vs_beam2"] == 1.0
  assert rows[30]["wall_share"] == 0.2 and rows["all"]["wall_share"] == 0.22   # past its end: its last timing; all: its whole wall
  # two kernels searched together: their trajectories share the group's clock, so the group's wall by then is the later of the two
  both = [{**e, "together_wall_s": 12.0, "learned_s": 6.0, "beam2_s": 25.0}, {**e, "trajectory": traj[:10], "together_wall_s": 12.0, "learned_s": 6.0, "beam2_s": 25.0}]
  (tmp_path / "unseen_s9.json").write_text(json.dumps({"kernels": both}))
  rows = {r["timings"]: r for r in mod.anytime([tmp_path / "unseen_s9.json"])}
  assert rows[9]["wall_share"] == 0.09 and rows[16]["wall_share"] == 0.16 and rows["all"]["wall_share"] == 0.24

def test_summary_gives_each_runs_geomean_worst_and_count_over_1_2x():
  # --repeats: the spread between runs, per run, as the README's table reports it; none where a run of a kernel failed its check
  mod = script("bench_unseen")
  run = lambda us, s=1.0: {"us": us, "s": s, "verified": True}
  ks = [{"verified": True, "learned_us": 10.0, "beam2_us": 10.0, "learned_s": 1.0, "beam2_s": 10.0, "hand_us": 20.0, "repeats": [run(10.0), run(13.0)]},
        {"verified": True, "learned_us": 25.0, "beam2_us": 20.0, "learned_s": 1.0, "beam2_s": 10.0, "hand_us": 40.0, "repeats": [run(25.0), run(20.0, 3.0)]}]
  s = mod.summary({"kernels": ks})
  assert s["repeats_worst"] == [1.25, 1.3] and s["repeats_over"] == [1, 1] and s["repeats_wall"] == [0.1, 0.2]
  assert s["repeats_compiled"] == s["repeats_wait"] == []   # runs of an older report, without their compile counts and waits
  for e, c in zip(ks, (3, 4)): e["repeats"] = [{**x, "compiled": c + i, "wait_s": 0.5*c} for i, x in enumerate(e["repeats"])]
  assert mod.summary({"kernels": ks})["repeats_compiled"] == [7, 9] and mod.summary({"kernels": ks})["repeats_wait"] == [3.5, 3.5]
  assert abs(s["repeats"][0] - 1.25**0.5) < 1e-9 and s["worst_vs_beam2"] == 1.25
  ks[1]["repeats"][1]["verified"] = False
  assert mod.summary({"kernels": ks})["repeats_over"] == []

def test_drop_held_out_removes_the_benchmarks_kernels_from_an_extracted_store(tmp_path):
  from dataset.kernel import Kernel
  from dataset.store import Store
  held, keys = bench_unseen.kernels_of(bench_unseen.kernel_specs()[0], "CPU")[0], held_out("CPU")
  other = next(Kernel(a.key.hex(), a, f"{v.name}#{i}", v.family, v.workload) for v in CORPUS if v.small and v.tier == "grid"
               for i, a in enumerate(kernel_asts(*v.build("CPU"))) if a.key.hex() not in keys)
  s = Store(tmp_path / "x.sqlite")
  s.add_variant("v", "CPU", [held, other], [(None, None)]*2)
  rid = s.begin(held.key, [], "CPU", "x", "0.14.0", "fixed"); s.finish(rid, "ok", 1e-5)
  s.close()
  assert bench_unseen.drop_held_out(str(tmp_path / "x.sqlite")) == [held.name]
  db = sqlite3.connect(tmp_path / "x.sqlite")
  assert [r[0] for r in db.execute("SELECT key FROM kernels")] == [other.key]
  assert db.execute("SELECT COUNT(*) FROM measurements").fetchone()[0] == 0

@pytest.mark.slow
def test_committed_held_out_keys_are_the_benchmarks_and_its_splits():
  for device in ("CUDA", "CPU"): assert held_out(device) == set(bench_unseen.held_out_keys(device))

def test_extraction_skips_held_out_kernels(tmp_path, monkeypatch):
  import dataset.corpus as C
  from dataset.store import Store
  v = next(v for v in CORPUS if v.small and v.tier == "grid" and len(kernel_asts(*v.build("CPU"))) >= 2)
  keys = [a.key.hex() for a in kernel_asts(*v.build("CPU"))]
  monkeypatch.setattr(C, "held_out", lambda device: {keys[0]} if device == "CPU" else set())
  s = Store(tmp_path / "x.sqlite")
  C.extract_into(s, [v], "CPU", progress=False)
  assert s.kernel_keys() == set(keys[1:])
  s.close()
