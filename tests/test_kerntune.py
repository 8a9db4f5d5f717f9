"""The kerntune umbrella command: its subcommands are the console scripts, and quickstart chains generate -> train -> search."""
import json, os, shutil, tomllib
from pathlib import Path
import pytest
import search.main as K

ROOT = Path(__file__).resolve().parents[1]

def test_subcommands_are_the_console_scripts(capsys):
  scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
  named = {"generate": "generate-dataset", "train": "train-cost-model", "search": "search", "tune-model": "tune-model", "run": "tuned-run"}
  assert set(named) == set(K.COMMANDS) and all(scripts[named[c]] == K.COMMANDS[c] for c in named)
  assert scripts["kerntune"] == "search.main:main"
  assert K.main(["generate", "--list"]) == 0 and "conv2d" in capsys.readouterr().out   # dispatched, arguments passed through
  assert K.main(["--help"]) == 0
  out = capsys.readouterr().out
  assert all(c in out for c in [*K.COMMANDS, *K.TOOLS, "quickstart"]), out
  with pytest.raises(SystemExit) as e: K.main(["fuzz", "--help"])
  assert e.value.code == 0 and "--seconds" in capsys.readouterr().out
  for argv in ([], ["nosuch"]): assert K.main(argv) == 2
  assert "unknown command 'nosuch'" in capsys.readouterr().err

def test_quickstart_chains_the_steps_on_one_store_and_model(tmp_path, monkeypatch, capsys):
  calls = []
  def fake(name):
    def run(args): calls.append((name, args)); return {"train": 2}.get(name, 0) if fail else 0
    return run
  monkeypatch.setattr(K, "command", fake)
  monkeypatch.setattr(K, "summary", lambda out, device, secs, total: [f"summary of {out}"])
  fail = False
  assert K.quickstart(["--out", str(tmp_path), "--time-budget", "7", "--samples-per-kernel", "3", "--workers", "2"]) == 0
  (g, ga), (t, ta), (s, sa) = calls
  assert (g, t, s) == ("generate", "train", "search")
  arg = lambda args, flag: args[args.index(flag) + 1]
  store, model = arg(ga, "--out"), arg(ta, "--out")
  assert store == str(tmp_path / "cpu.sqlite") and ta[0] == store and arg(sa, "--model") == model == str(tmp_path / "cost_model_cpu.txt")
  assert (arg(ga, "--time-budget"), arg(ga, "--samples-per-kernel"), arg(ga, "--workers")) == ("7.0", "3", "2")
  assert arg(sa, "--kernel") == "conv2d" and arg(sa, "--out") == str(tmp_path / "search") and arg(sa, "--device") == "CPU"
  assert f"summary of {tmp_path}" in capsys.readouterr().out
  calls.clear(); fail = True   # a step that fails stops the chain with its exit code, and says where the partial results are
  assert K.quickstart(["--out", str(tmp_path)]) == 2 and [c for c, _ in calls] == ["generate", "train"]
  assert "train failed (exit 2)" in capsys.readouterr().err

def test_quickstart_summary_says_what_was_made_and_where(tmp_path):
  shutil.copy(ROOT / "dataset" / "data" / "cpu.sqlite", tmp_path / "cpu.sqlite")
  shutil.copy(ROOT / "models" / "cost_model_cpu.json", tmp_path / "cost_model_cpu.json")
  (tmp_path / "search").mkdir()
  k = {"name": "conv2d:n=2#0", "time_us": 100.0, "hand_coded_us": 150.0, "speedup_vs_hand": 1.5, "verified": True}
  (tmp_path / "search" / "result.json").write_text(json.dumps({"workload": "conv2d:n=2", "kernels": [k]}))
  text = "\n".join(K.summary(tmp_path, "CPU", [300.0, 30.0, 20.0], 355.0))
  for want in ("done in 355 s", str(tmp_path / "cpu.sqlite"), "of 94 kernels", str(tmp_path / "cost_model_cpu.txt"), "pairwise accuracy",
               "1.50x hand-coded", "1/1 verified", "100.0 us vs hand-coded 150.0 us", os.environ["KERNTUNE_CACHE"]):
    assert want in text, (want, text)

@pytest.mark.slow   # the real loop with tiny budgets: a minute or two of measuring, training and searching
def test_quickstart_runs_the_loop_with_tiny_budgets(tmp_path, capsys):
  assert K.main(["quickstart", "--out", str(tmp_path), "--time-budget", "60", "--samples-per-kernel", "3", "--search-budget", "6"]) == 0
  out = capsys.readouterr().out
  for f in ("cpu.sqlite", "cost_model_cpu.txt", "cost_model_cpu.json", "history_cpu.json", "search/result.json", "search/kernel0.opts.json"):
    assert (tmp_path / f).is_file(), f
  assert "kerntune quickstart: done in" in out and str(tmp_path / "cost_model_cpu.txt") in out
  assert json.loads((tmp_path / "search" / "result.json").read_text())["model"] == str(tmp_path / "cost_model_cpu.txt")
