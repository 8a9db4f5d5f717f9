"""Which scored configs a beam round or a first batch takes: the model's ranking of new children, a round's turn-taking between
parents, and the first batch's places for a tensor-core or a grouped-reduction config (search.beam)."""
from __future__ import annotations
import numpy as np
from tinygrad.codegen.opt import Opt, OptOps
from search.adapt import Correction
from search.context import Scored

def rank(rows:list[Scored], seen:set[bytes], fix:Correction|None=None, info:dict|None=None,
         alt:dict|None=None) -> tuple[list[tuple[tuple[Opt, ...], bytes]], np.ndarray]:
  """The children not seen before, one per distinct kernel (different actions often give the same one), best score first, and
  their sorted scores; marks them seen. fix: the kernel's online correction of the model's scores; info: where each child's model
  score and shape terms are kept (opts -> (score, terms)), for the correction's next fit; alt: where their second opinions are
  (key -> (second opinion, opts)), for Beam.second_opinion."""
  new: dict[bytes, Scored] = {}
  for r in rows:
    if r[2] not in seen and r[2] not in new: new[r[2]] = r
  seen.update(new)
  kept = list(new.values())
  if info is not None: info.update((o, (sc, terms)) for sc, o, _, terms, _ in kept)
  if alt is not None: alt.update((key, (y, o)) for _, o, key, _, y in kept)
  sc = np.array([r[0] for r in kept], np.float64)
  if fix is not None and kept: sc = fix(sc, np.array([r[3] for r in kept], np.float64))
  order = np.argsort(-sc, kind="stable")
  return [(kept[i][1], kept[i][2]) for i in order], sc[order]

def round_robin(ranked:list, parents:list[tuple[Opt, ...]], k:int) -> list:
  """k children, each parent's best-scored in turn, fastest parent first: scores are most reliable among siblings, and the
  measured order of the parents is not the model's to overrule."""
  by_parent: dict[tuple[Opt, ...], list] = {p: [] for p in parents}
  for c in ranked: by_parent.setdefault(c[0][:-1], []).append(c)
  out, queues = [], [by_parent[p] for p in parents]
  while len(out) < k and any(queues):
    for q in queues:
      if q and len(out) < k: out.append(q.pop(0))
  return out

def tensor_cores(opts:tuple[Opt, ...]) -> bool: return any(o.op is OptOps.TC for o in opts)
def grouped(opts:tuple[Opt, ...]) -> bool: return any(o.op in (OptOps.GROUP, OptOps.GROUPTOP) for o in opts)

def with_tensor_cores(seeds:list, pool:list, size:int) -> list:
  """The first batch holds a tensor-core config wherever one applies: its best-scored one takes the model's last pick's place if no
  pick has one. Tensor cores are a half-precision matmul's largest single step (BEAM=2's pick of an unseen LLaMA block's fused
  gate/up GEMM ran 1.6x faster with them), and the hand-coded heuristic misses them on kernels of two reductions, while a model
  trained on few such kernels can rank every tensor-core child below plain upcasts: one measurement settles it."""
  return seeds if any(tensor_cores(o) for o, _ in seeds) or (tc := next((c for c in pool if tensor_cores(c[0])), None)) is None \
    else second(seeds, tc, size)

def second(seeds:list, c, size:int) -> list: return (seeds[:1] + [c] + seeds[1:])[:max(size, 2)]   # after the hand-coded one
