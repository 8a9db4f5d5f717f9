"""fuzz: random kernels (a workload at a random small shape and dtype) under random valid opt sequences, each checked against the
unoptimized kernel. Every failure is kept with a minimal reproduction (kernel spec, opts, error): its opts are shrunk, one dropped
at a time, while it still fails the same way. Writes a markdown report.

  python -m search.fuzz --seconds 60 --device CPU --out results/fuzz.md --seed 0"""
from __future__ import annotations
import argparse, contextlib, json, math, random, re, sys, time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable
from tinygrad.codegen.opt import Opt
from dataset.argtypes import count, natural, positive
from dataset.corpus import ShapeError, V, parse_variant
from dataset.device import DeviceError, default_device, device_info
from dataset.errors import one_line
from dataset.kernel import Kernel, kernel_asts, opts_from_json, opts_to_json, scheduler
from dataset.paths import cannot_write
from dataset.sampler import ACTIONS, EXTENDED, random_walk, replay
from dataset.workloads import BUILDERS
from search.measure import Budget, Measurer

def _div(r:random.Random, n:int) -> int: return r.choice([d for d in range(1, n+1) if n % d == 0])

# per workload, random parameters at sizes the CPU runs in milliseconds, odd sizes among them (tails, masks, padding)
SHAPES: dict[str, Callable[[random.Random], dict]] = {
  "conv2d": lambda r: (lambda c, k: dict(n=r.choice([1, 2]), c=c, h=(h := r.choice([5, 8, 12, 16])), w=h, k=k, ks=r.choice([1, 3, 5]),
                                         stride=r.choice([1, 2]), padding=r.choice([0, 1, 2]), dilation=r.choice([1, 2]),
                                         groups=_div(r, math.gcd(c, k))))(r.choice([3, 4, 8, 16]), r.choice([4, 8, 12, 16])),
  "conv2d_bias_relu": lambda r: dict(n=r.choice([1, 2]), c=r.choice([3, 8, 16]), h=(h := r.choice([6, 8, 16])), w=h, k=r.choice([4, 8, 16]),
                                     ks=r.choice([1, 3]), stride=r.choice([1, 2]), padding=r.choice([0, 1])),
  "conv2d_backward": lambda r: dict(n=r.choice([1, 2]), c=r.choice([4, 8]), h=(h := r.choice([6, 8])), w=h, k=r.choice([4, 8]), ks=3,
                                    stride=r.choice([1, 2]), padding=1),
  "bmm": lambda r: dict(b=r.choice([1, 3, 4]), m=r.choice([16, 17, 32, 64]), k=r.choice([8, 32, 33]), n=r.choice([16, 31, 64])),
  "gemm": lambda r: dict(m=r.choice([16, 33, 64, 128]), k=r.choice([16, 48, 64, 127]), n=r.choice([16, 32, 65, 128]),
                         alpha=r.choice([1.0, 1.5]), beta=r.choice([0.0, 0.5]), trans_a=r.random() < 0.3, trans_b=r.random() < 0.3),
  "softmax": lambda r: dict(rows=r.choice([1, 7, 64, 128]), cols=r.choice([16, 100, 256]), log=r.random() < 0.5),
  "softmax_backward": lambda r: dict(rows=r.choice([4, 32, 64]), cols=r.choice([16, 100, 128])),
  "layernorm": lambda r: dict(rows=r.choice([3, 64, 256]), cols=r.choice([32, 100, 256])),
  "layernorm_backward": lambda r: dict(rows=r.choice([8, 64]), cols=r.choice([32, 96, 128])),
  "attention": lambda r: dict(b=1, heads=r.choice([1, 2]), seq=r.choice([8, 17, 32, 64]), dim=r.choice([8, 16, 32]), causal=r.random() < 0.5),
  "maxpool": lambda r: dict(n=r.choice([1, 2]), c=r.choice([3, 8, 16]), h=(h := r.choice([7, 16, 32])), w=h, ks=r.choice([2, 3]),
                            stride=r.choice([1, 2]), padding=r.choice([0, 1])),
  "conv1d": lambda r: dict(n=r.choice([1, 2]), c=r.choice([4, 16]), l=r.choice([31, 64, 100]), k=r.choice([8, 16]), ks=r.choice([1, 3, 5]),
                           stride=r.choice([1, 2]), padding=r.choice([0, 1, 2])),
  "rmsnorm": lambda r: dict(rows=r.choice([4, 64, 128]), cols=r.choice([32, 100, 256])),
  "reduce": lambda r: dict(a=r.choice([1, 4, 16]), b=r.choice([7, 32, 49]), c=r.choice([16, 64, 100]), axis=r.choice([0, 1, 2]),
                           op=r.choice(["sum", "mean", "max"])),
  "gelu_bias": lambda r: dict(rows=r.choice([4, 64, 128]), cols=r.choice([32, 100, 256])),
  "swiglu": lambda r: dict(rows=r.choice([4, 64, 128]), cols=r.choice([32, 100, 256])),
  "gated_mlp": lambda r: dict(rows=r.choice([4, 33, 64]), dim=r.choice([16, 32, 48]), hidden=r.choice([16, 33, 64])),
}
assert set(SHAPES) == set(BUILDERS), "every workload has its fuzz shapes"
DTYPES = ("fp32", "fp16")

@dataclass
class Failure:
  spec: str              # parse_variant's form of the workload at its shape
  index: int             # which of its kernels
  opts: tuple[Opt, ...]  # shrunk
  stage: str             # 'compile' | 'run' | 'wrong' | 'crash'
  error: str
  found: tuple[Opt, ...] = ()   # before shrinking
  count: int = 1                # failures of this kind seen
  @property
  def kind(self) -> str: return kind(self.stage, self.error)

def kind(stage:str, error:str) -> str:
  """What tells failures apart: the stage and the error's first line, numbers and opt lists taken out."""
  first = (error.strip().splitlines() or [""])[0]
  return f"{stage}: " + re.sub(r"\[.*?\]|\(.*?\)|\d+(\.\d+)?(e[-+]?\d+)?", "N", first)[:100]

def check(m:Measurer, opts:tuple[Opt, ...]) -> tuple[str, str]|None:
  """(stage, error) if `opts` fails: does not compile, does not run, or computes something else than the unoptimized kernel."""
  try:
    if m.measure([opts])[0] == math.inf:
      err = m.errors.get(opts, "does not run")
      return ("run" if opts in m.progs or err.startswith("timeout") else "compile"), err
    return None if (err := m.verify(opts)) is None else ("wrong", err)
  except Exception as e: return "crash", one_line(e, 300)

def shrink(m:Measurer, opts:tuple[Opt, ...], fail:tuple[str, str], deadline:float) -> tuple[tuple[Opt, ...], tuple[str, str]]:
  """The shortest sequence found by dropping one opt at a time from `opts` while what is left still applies and fails as `fail`
  does (its kind), with its failure."""
  base, want, shrunk = scheduler(m.kernel.ast, m.ren), kind(*fail), True
  while shrunk and time.perf_counter() < deadline:
    shrunk = False
    for i in range(len(opts)):
      if replay(base, cand := opts[:i] + opts[i+1:]) is None: continue
      if (f := check(m, cand)) is not None and kind(*f) == want: opts, fail, shrunk = cand, f, True; break
  return opts, fail

def draw(rng:random.Random, workloads:list[str], dtypes:tuple[str, ...], device:str) -> tuple[str, int, Kernel]:
  """A random kernel: (spec, index, Kernel) of a workload at a random shape and dtype (a shape its builder refuses is redrawn)."""
  while True:
    w = rng.choice(workloads)
    try:
      v = parse_variant(V(w, None, False, **SHAPES[w](rng), dtype=rng.choice(dtypes)).name)
      spec, asts = v.name, kernel_asts(*v.build(device))
    except ShapeError: continue
    i = rng.randrange(len(asts))
    return spec, i, Kernel(asts[i].key.hex(), asts[i], f"{spec}#{i}", w, w)

def reproduce(spec:str, index:int, opts:list, device:str="CPU") -> str|None:
  """A failure again: None if the kernel `index` of `spec` with `opts` (as JSON) passes now, else 'stage: error'."""
  k = kernel_asts(*parse_variant(spec).build(device))[index]
  m = Measurer(Kernel(k.key.hex(), k, f"{spec}#{index}", "fuzz", "fuzz"), device, Budget(), workers=0)
  try: return None if (f := check(m, opts_from_json(opts))) is None else f"{f[0]}: {f[1]}"
  finally: m.close()

@dataclass
class Run:
  kernels: int = 0
  configs: int = 0
  failed: int = 0
  failures: dict[str, Failure] = field(default_factory=dict)   # by kind
  skipped: list[str] = field(default_factory=list)              # kernels whose setup failed
  tried: Counter = field(default_factory=Counter)               # kernels by workload and dtype

def fuzz(seconds:float, device:str, seed:int=0, workloads:list[str]|None=None, dtypes:tuple[str, ...]=DTYPES, per_kernel:int=4,
         max_depth:int=8, workers:int=0, log:Callable[[str], None]=lambda s: None) -> Run:
  """Draw kernels and `per_kernel` random opt sequences each (half over the extended actions: PADTO, every tensor-core shape) for
  `seconds`; a kernel's configs compile together (in parallel with `workers`), then each is checked; each failure of a new kind is
  shrunk (within the time left)."""
  rng, run, end = random.Random(seed), Run(), time.perf_counter() + seconds
  workloads = workloads or sorted(SHAPES)
  while time.perf_counter() < end:
    spec, idx, k = draw(rng, workloads, dtypes, device)
    try: m = Measurer(k, device, Budget(), workers=workers)
    except Exception as e: run.skipped.append(f"{spec}#{idx}: {one_line(e, 200)}"); continue
    run.kernels += 1
    run.tried[f"{k.workload} {spec.rsplit(':', 1)[1]}"] += 1
    try:
      base = scheduler(k.ast, m.ren)
      walks = [random_walk(base, rng, rng.randint(1, max_depth), actions=EXTENDED if rng.random() < 0.5 else ACTIONS) for _ in range(per_kernel)]
      with contextlib.suppress(Exception): m.measure(walks := [w for w in dict.fromkeys(walks) if w])   # each is checked below
      for opts in walks:
        if time.perf_counter() >= end: break
        run.configs += 1
        if (f := check(m, opts)) is None: continue
        run.failed += 1
        if (seen := run.failures.get(kd := kind(*f))) is not None: seen.count += 1; continue
        small, f = shrink(m, opts, f, end)
        run.failures[kd] = Failure(spec, idx, small, *f, found=opts)
        log(f"fuzz: {kd}: {spec}#{idx} {json.dumps(opts_to_json(small))}")
    finally: m.close()
  return run

def report(run:Run, command:str, device:str, dev_name:str, seconds:float, seed:int) -> str:
  rate = run.failed/run.configs if run.configs else 0.0
  out = [f"# Fuzzing kerntune's opt sequences on {device}", "",
         f"- command: `{command}`", f"- device: {dev_name} ({device})", f"- date: {time.strftime('%Y-%m-%d')}", f"- seed: {seed}, {seconds:.0f} s",
         f"- kernels tried: {run.kernels} ({', '.join(f'{w} {n}' for w, n in sorted(run.tried.items()))})", f"- configs tried: {run.configs}", f"- configs failed: {run.failed} ({100*rate:.2f}%)",
         f"- distinct failures: {len(run.failures)}", "",
         "Each config is a random valid opt sequence (dataset.sampler.random_walk over tinygrad's BEAM actions, or the extended ones:",
         "PADTO and every tensor-core shape) of a random kernel: a workload of dataset.workloads at a random small shape, fp32 or fp16.",
         "A config fails if it does not compile, does not run, or computes something other than the unoptimized kernel (search.measure's",
         "check). Each distinct failure (by stage and error) is shrunk to fewer opts while it fails the same way.", ""]
  if run.skipped: out += [f"Kernels whose setup failed ({len(run.skipped)}):", ""] + [f"- {s}" for s in run.skipped[:20]] + [""]
  if not run.failures: out += ["No failures."]
  for i, f in enumerate(sorted(run.failures.values(), key=lambda f: -f.count), 1):
    opts = json.dumps(opts_to_json(f.opts))
    out += [f"## {i}. {f.kind} ({f.count} config{'s' if f.count > 1 else ''})", "",
            f"- kernel: `{f.spec}`, kernel {f.index}", f"- opts ({len(f.opts)}, shrunk from {len(f.found)}): `{opts}`",
            "- error:", "", "```", f.error.strip()[:1500], "```", "", "Reproduce:", "", "```python",
            "from search.fuzz import reproduce",
            f"print(reproduce({f.spec!r}, {f.index}, {opts}, device={device!r}))", "```", ""]
  return "\n".join(out) + "\n"

def main(argv=None) -> int:
  ap = argparse.ArgumentParser("fuzz", description=__doc__.split("\n")[0])
  ap.add_argument("--seconds", type=positive, default=60.0, help="how long to draw kernels and configs")
  ap.add_argument("--device", choices=["CUDA", "CPU"], default=None, help="default: CUDA if present, else CPU")
  ap.add_argument("--out", default="results/fuzz.md", help="the markdown report")
  ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--workloads", default=None, help="comma list of workloads (default: all of dataset.workloads)")
  ap.add_argument("--dtypes", default=",".join(DTYPES), help="comma list of fp32, fp16")
  ap.add_argument("--per-kernel", type=natural, default=4, help="configs per kernel drawn")
  ap.add_argument("--workers", type=count, default=0, help="compile processes (0: in this process)")
  a = ap.parse_args(argv)
  device = a.device or default_device()
  workloads = a.workloads.split(",") if a.workloads else None
  dtypes = tuple(a.dtypes.split(","))
  if bad := [w for w in workloads or [] if w not in SHAPES]: ap.error(f"unknown workload {bad[0]!r}; known: {', '.join(sorted(SHAPES))}")
  if bad := [d for d in dtypes if d not in DTYPES]: ap.error(f"unknown dtype {bad[0]!r}; known: {', '.join(DTYPES)}")
  if why := cannot_write(a.out): print(f"fuzz: error: {why}", file=sys.stderr); return 2
  try: dev_name = device_info(device)[0]
  except DeviceError as e: print(f"fuzz: error: {e}", file=sys.stderr); return 2
  command = "python -m search.fuzz " + " ".join(sys.argv[1:] if argv is None else argv)
  st = time.perf_counter()
  run = fuzz(a.seconds, device, a.seed, workloads, dtypes, a.per_kernel, workers=a.workers, log=lambda s: print(s, file=sys.stderr, flush=True))
  Path(a.out).write_text(report(run, command, device, dev_name, time.perf_counter() - st, a.seed))
  print(f"fuzz: {run.kernels} kernels, {run.configs} configs, {run.failed} failed, {len(run.failures)} distinct: wrote {a.out}", file=sys.stderr)
  return 0

if __name__ == "__main__": sys.exit(main())
