"""The fuzzer (search/fuzz.py): a bounded run on the CPU writes a consistent report; a failure is shrunk to the opts that cause it."""
import random, re, time
import pytest
from tinygrad.codegen.opt import OptOps
from dataset.corpus import parse_variant
from dataset.device import renderer_for
from dataset.kernel import Kernel, kernel_asts, scheduler
from dataset.sampler import random_walk, replay

@pytest.mark.slow   # a 20 s fuzzing run end to end (CI's slow step); the shrinking below runs in the default suite
def test_fuzz_writes_a_consistent_report(tmp_path):
  from search.fuzz import main
  out = tmp_path / "fuzz.md"
  st = time.perf_counter()
  assert main(["--seconds", "20", "--device", "CPU", "--out", str(out), "--seed", "0"]) == 0
  assert time.perf_counter() - st < 90   # bounded: the last kernel's configs finish, no new one starts
  md = out.read_text()
  num = lambda what: int(re.search(rf"- {what}: (\d+)", md).group(1))
  kernels, configs, failed, distinct = num("kernels tried"), num("configs tried"), num("configs failed"), num("distinct failures")
  assert "--device CPU" in md and kernels >= 1 and configs >= kernels and 0 <= failed <= configs
  sections = re.findall(r"^## \d+\. .* \((\d+) configs?\)$", md, re.M)
  assert len(sections) == distinct <= failed and sum(map(int, sections)) == failed
  assert md.count("from search.fuzz import reproduce") == distinct

def test_a_failure_is_shrunk_to_the_opts_that_cause_it(monkeypatch):
  import search.fuzz as F
  from search.measure import Budget, Measurer
  spec = "gemm:m=32:k=64:n=32:fp32"
  ast = kernel_asts(*parse_variant(spec).build("CPU"))[0]
  base, rng = scheduler(ast, renderer_for("CPU")), random.Random(0)
  opts = next(w for w in (random_walk(base, rng, 6) for _ in range(200)) if len(w) >= 3 and sum(o.op is OptOps.UPCAST for o in w) == 1)
  # a stand-in bug: any config with an UPCAST computes a wrong result (the count in the message differs: the same kind)
  monkeypatch.setattr(F, "check", lambda m, o: ("wrong", f"{len(o)}/1024 elements off") if any(x.op is OptOps.UPCAST for x in o) else None)
  m = Measurer(Kernel(ast.key.hex(), ast, spec, "t", "t"), "CPU", Budget())
  small, fail = F.shrink(m, opts, F.check(m, opts), time.perf_counter() + 60)
  m.close()
  assert fail == ("wrong", f"{len(small)}/1024 elements off") and F.kind(*fail) == F.kind(*F.check(m, opts))
  assert len(small) < len(opts) and replay(base, small) is not None and any(o.op is OptOps.UPCAST for o in small)
  assert all(replay(base, small[:i] + small[i+1:]) is None or not any(o.op is OptOps.UPCAST for o in small[:i] + small[i+1:])
             for i in range(len(small)))   # minimal: no opt can be dropped while it still fails
