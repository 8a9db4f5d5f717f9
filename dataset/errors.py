"""What a user sees of an exception: one line; and where it was raised, for a record a long run keeps."""
import os, traceback

def one_line(e:BaseException, limit:int|None=None) -> str:
  """`Type: first line of the message`, the message cut at `limit` characters."""
  return f"{type(e).__name__}: {(str(e).splitlines() or [''])[0][:limit]}"

def where(e:BaseException) -> str:
  """`path:line in function` of the frame that raised `e` (the path relative to the working directory when under it): a crash a
  long run records and goes on from is found from its log alone."""
  if not (tb := traceback.extract_tb(e.__traceback__)): return "?"
  f = tb[-1]
  path = os.path.relpath(f.filename) if os.path.abspath(f.filename).startswith(os.getcwd() + os.sep) else f.filename
  return f"{path}:{f.lineno} in {f.name}"
