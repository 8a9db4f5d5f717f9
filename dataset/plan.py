"""Per-kernel sampling plan: what to propose next, given what has been measured. The mix covers both the bad and the
near-optimal regions: the unoptimized kernel, tinygrad's hand-coded choice and its prefixes, random walks of depth 1-8,
BEAM-style expansion of the best measured configs (so every prefix of a trajectory is measured), and mutations of the best.
With a cost model (MODEL_MIX), half the proposals are its favourite unmeasured child of one of the best measured configs.
'beam' (only by --mix) is a measured climb from the root: the children of the fastest configs it has itself measured, starting
from the unoptimized kernel, whatever the store already holds (which it still does not measure again); each proposal tries every
child of its parent, in random order, until one lowers to code not measured yet (sampler.shuffled_children), as BEAM's step does.
A climb from the store's best stays in that best's region: on ResNet-50 b32's 1x1 convs, 473 configs climbed from it in 460 s on
the H200 improved none, and tinygrad's BEAM=2, starting from the root, ends in another region (LOCAL and UPCAST by 7
on the spatial axis) 1.8-2.3x faster."""
from __future__ import annotations
import math, random
from dataclasses import dataclass, field
from tinygrad.codegen.opt import Opt
from dataset.compile import Task

MIX = {"random": 0.3, "expand": 0.35, "mutate": 0.35}
MODEL_MIX = {"random": 0.15, "expand": 0.15, "mutate": 0.2, "model": 0.5}
BEAM_WIDTH = 3
MAX_MISSES = 60   # proposals in a row that came back empty or duplicate: the kernel has nothing new left to propose

def fastest(rows:list[tuple[float, tuple[Opt, ...]]], n:int) -> list[tuple[Opt, ...]]: return [o for _, o in sorted(rows, key=lambda x: x[0])[:n]]

@dataclass
class KernelPlan:
  key: str
  target: int                                   # records wanted for this kernel
  rng: random.Random
  done: int = 0                                 # finished records (any status)
  inflight: int = 0
  seen: set = field(default_factory=set)        # opt tuples measured or in flight
  libs: set = field(default_factory=set)        # compiled binaries already timed (different opts, same code)
  asts: set = field(default_factory=set)        # optimized-AST keys already compiled, so workers skip them before compiling
  ok: list = field(default_factory=list)        # (time_s, opts) of ok records
  queue: list = field(default_factory=list)     # tasks that must go first (unoptimized, hand-coded, prefixes, retries)
  started: bool = False
  misses: int = 0                               # proposals that came back empty or duplicate, in a row
  mix: dict = field(default_factory=lambda: MIX)  # proposal kinds and their weights once the kernel has measured configs
  climb: list = field(default_factory=list)     # (time_s, opts) of the root and of what 'beam' proposals measured: their parents
  exhausted: set = field(default_factory=set)   # climb parents every child of which lowers to measured code

  def load(self, rows:list[tuple[tuple[Opt, ...], str, float|None, str]]):
    """Resume from stored records; a kernel measured without its hand-coded config gets it first."""
    for opts, status, t, src in rows:
      self.seen.add(opts); self.done += 1
      if status == "ok" and t is not None: self.on_ok(t, opts, src)   # a resumed 'beam' climb goes on from where it was
    self.started = self.done > 0
    if self.started and not any(src == "hand" for *_, src in rows): self.queue.append(Task(self.key, "hand"))

  def on_ok(self, t:float, opts:tuple[Opt, ...], kind:str):
    self.ok.append((t, opts))
    if kind == "beam" or opts == (): self.climb.append((t, opts))

  def on_empty(self, task:Task):
    """A proposal came back with nothing new to measure."""
    self.misses += 1
    if task.kind == "beam": self.exhausted.add(task.parent)

  @property
  def best(self) -> float: return min((t for t, _ in self.ok), default=math.inf)
  def top(self, n:int) -> list[tuple[Opt, ...]]: return fastest(self.ok, n)
  # queued work (a resumed kernel's missing hand-coded config) runs even when the kernel is at its target
  def finished(self) -> bool: return (self.done >= self.target and not self.queue) or self.misses > MAX_MISSES

  def next_task(self) -> Task|None:
    if not self.queue and (self.done + self.inflight >= self.target or self.misses > MAX_MISSES): return None
    seed = self.rng.getrandbits(31)
    if not self.started:
      self.started = True
      self.queue += [Task(self.key, "fixed", (), seed=seed), Task(self.key, "hand", seed=seed+1)]
    if self.queue: return self.queue.pop(0)
    top = self.top(BEAM_WIDTH)
    # a kernel with only its unoptimized config measured starts with random walks, unless the mix has none (a climb: from the root)
    kind = self.rng.choices(list(self.mix), weights=list(self.mix.values()))[0] if any(top) or not self.mix.get("random") else "random"
    # a climb goes on from its fastest parents whose children are not all measured yet (a 'beam' proposal tries every child, so
    # one that comes back empty has exhausted its parent: on_empty); with none left the kernel has climbed as far as it can
    if kind == "beam":
      if not (top := fastest([c for c in self.climb if c[1] not in self.exhausted], BEAM_WIDTH)):
        self.misses = MAX_MISSES + 1; return None
    parent = () if kind == "random" else self.rng.choices(top, weights=([0.5, 0.3, 0.2] + [0.1]*len(top))[:len(top)])[0]
    return Task(self.key, kind, parent, frozenset(self.seen), frozenset(self.asts), seed)

  def on_hand(self, opts:tuple[Opt, ...]):
    """Hand-coded opts arrived: measure every prefix too."""
    self.queue[:0] = [Task(self.key, "fixed", opts[:i], seed=i) for i in range(1, len(opts)) if opts[:i] not in self.seen]
