"""argparse types for the command lines' counts and seconds: a value out of range is argparse's one-line usage error (exit 2),
before any work starts, not a traceback or a silent no-op minutes in."""
import argparse
from typing import Callable

def _number(s:str, kind:type) -> int|float:
  try: return kind(s)
  except ValueError: raise argparse.ArgumentTypeError(f"not {'an integer' if kind is int else 'a number'}: {s!r}") from None

def at_least(lo:float, kind:type=int) -> Callable[[str], int|float]:
  """A number of `kind` (int or float) that is >= lo; NaN is refused."""
  def parse(s:str):
    if not (v := _number(s, kind)) >= lo: raise argparse.ArgumentTypeError(f"must be >= {lo:g}, got {s}")
    return v
  return parse

def positive(s:str) -> float:
  """Seconds (or a share) that must be > 0; NaN is refused."""
  if not (v := _number(s, float)) > 0: raise argparse.ArgumentTypeError(f"must be > 0, got {s}")
  return v

count, natural = at_least(0), at_least(1)   # a count that may be 0 (0 often means "the default" or "none"); one that must be >= 1
