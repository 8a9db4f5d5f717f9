"""What a user sees of an exception: one line."""

def one_line(e:BaseException, limit:int|None=None) -> str:
  """`Type: first line of the message`, the message cut at `limit` characters."""
  return f"{type(e).__name__}: {(str(e).splitlines() or [''])[0][:limit]}"
