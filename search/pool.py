"""The compile pool's queue, by priority: what a caller waits on now (a round's own compiles and expansions, model descents, first
batches, final checks) runs before a round made ready ahead of the scheduler (AHEAD), which runs before a guess of a round the
scheduler may never give (GUESS: Beam's speculation). ProcessPoolExecutor serves its queue first come first served, so a kernel's
guesses queued ahead of other kernels' first batches: tune-model compiled 187 candidates of BERT-base to time 110, 13-15 of them
for each of three kernels whose first round was their last. Ranked this way a guess takes a worker only when nothing surer
waits, and one that is needed after all is moved to the front (hurry)."""
from __future__ import annotations
import heapq, itertools, threading
from concurrent.futures import Executor, Future

NOW, AHEAD, GUESS = 0, 1, 2

class PriorityPool:
  """`pool` (a ProcessPoolExecutor) fed from a queue ranked by priority, first come first served within one, with at most `slots`
  calls in it at once (its workers and one more, as its own call queue holds). A future is running once handed to `pool`, and can
  be cancelled until then. Other attributes are `pool`'s."""
  def __init__(self, pool:Executor, slots:int):
    self.pool, self.slots, self.inside, self.closed = pool, slots, 0, False
    self._heap: list[list] = []
    self._queued: dict[Future, list] = {}   # each queued future's live entry: [priority, order, future, fn, args]
    self._order, self._cv = itertools.count(), threading.Condition()
    threading.Thread(target=self._feed, daemon=True, name="kerntune-pool-queue").start()

  def __getattr__(self, name):   # _processes, _broken, map: kill_pool and the callers read them
    if name == "pool": raise AttributeError(name)
    return getattr(self.pool, name)

  def submit(self, fn, /, *args, priority:int=NOW) -> Future:
    f: Future = Future()
    with self._cv:
      if self.closed: raise RuntimeError("cannot schedule new futures after shutdown")
      self._push(priority, f, fn, args)
      self._cv.notify_all()
    return f

  def _push(self, priority:int, f:Future, fn, args):
    heapq.heappush(self._heap, entry := [priority, next(self._order), f, fn, args])
    self._queued[f] = entry

  def hurry(self, futs, priority:int=NOW):
    """These futures' calls to `priority` where they still queue lower: a caller is about to wait on them."""
    with self._cv:
      for f in futs:
        if (e := self._queued.get(f)) is not None and e[0] > priority:
          e[2] = None   # the old entry is skipped when it comes up
          self._push(priority, f, e[3], e[4])

  def _feed(self):
    while True:
      with self._cv:
        while not self.closed and (self.inside >= self.slots or not self._heap): self._cv.wait()
        if self.closed: return
        _, _, f, fn, args = heapq.heappop(self._heap)
        if f is None or not f.set_running_or_notify_cancel(): continue   # moved up, or cancelled while it queued
        del self._queued[f]
        self.inside += 1
      try: inner = self.pool.submit(fn, *args)
      except Exception as e:   # a broken pool: the caller sees it in the result, as a crashed worker's
        self._left()
        f.set_exception(e)
        continue
      inner.add_done_callback(lambda i, f=f: self._done(i, f))

  def _left(self):
    with self._cv:
      self.inside -= 1
      self._cv.notify_all()

  def _done(self, inner:Future, f:Future):
    self._left()
    if inner.cancelled(): f.set_exception(RuntimeError("cancelled by the pool's shutdown"))
    elif (e := inner.exception()) is not None: f.set_exception(e)
    else: f.set_result(inner.result())

  def shutdown(self, wait:bool=True, *, cancel_futures:bool=False):
    with self._cv:
      self.closed = True
      queued, self._heap, self._queued = list(self._queued), [], {}
      self._cv.notify_all()
    for f in queued: f.cancel()   # never handed to the pool: it would have been cancelled there
    self.pool.shutdown(wait=wait, cancel_futures=cancel_futures)
