"""The packages layer one way, dataset <- models <- search, and no modules import each other in a circle. Every import counts, those
inside functions too: an import deferred to dodge a circle is still a circle."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("dataset", "models", "search")   # each may import only the ones before it

def imports() -> dict[str, set[str]]:
  """Every module of the packages -> the package modules it imports (a name imported from a package module counts as that module)."""
  # subpackages too (dataset.networks): a module's name is its path, a package's its folder's
  mods = {".".join(f.relative_to(ROOT).with_suffix("").parts[:-1 if f.stem == "__init__" else None]): f
          for p in LAYERS for f in sorted((ROOT / p).rglob("*.py")) if "__pycache__" not in f.parts}
  out: dict[str, set[str]] = {}
  for name, f in mods.items():
    pkg = (name if f.stem == "__init__" else name.rsplit(".", 1)[0]).split(".")
    deps: set[str] = set()
    for n in ast.walk(ast.parse(f.read_text(), str(f))):
      if isinstance(n, ast.Import): deps |= {a.name for a in n.names}
      elif isinstance(n, ast.ImportFrom):   # `from .x import y` resolves against the module's package
        base = ".".join(pkg[:len(pkg)-n.level+1] + [n.module] if n.level else [n.module]) if n.module else ".".join(pkg[:len(pkg)-n.level+1])
        deps |= {base} | {f"{base}.{a.name}" for a in n.names}
    out[name] = {d for d in deps if d in mods and d != name}
  return out

def test_no_import_runs_up_the_layers():
  up = [(m, d) for m, deps in imports().items() for d in deps if LAYERS.index(d.split(".")[0]) > LAYERS.index(m.split(".")[0])]
  assert not up, f"imports that run up the layers {' <- '.join(LAYERS)}: " + ", ".join(f"{m} imports {d}" for m, d in sorted(up))

def test_no_import_cycles():
  g = imports()
  state: dict[str, int] = {}   # 1: on the current path, 2: done
  def visit(m:str, path:list[str]) -> list[str]|None:
    state[m] = 1
    for d in sorted(g[m]):
      if state.get(d) == 1: return path[path.index(d):] + [d]
      if d not in state and (c := visit(d, path + [d])): return c
    state[m] = 2
    return None
  for m in sorted(g):
    if m not in state and (c := visit(m, [m])): raise AssertionError(f"import cycle: {' -> '.join(c)}")

def test_the_checks_see_what_they_check():
  # the parser finds imports inside functions too, and the three packages' modules are all there
  g = imports()
  assert {"dataset.generate", "models.cost_model", "search.cli", "dataset.networks", "dataset.networks.layers"} <= set(g) and len(g) > 40
  assert "dataset.networks" in g["dataset.stats"] and "dataset.networks.layers" in g["dataset.networks.resnets"]
  assert "models.schedulers" in g["models.cost_model"] and "models.cost_model" in g["search.api"]   # search.api imports it inside load_model
