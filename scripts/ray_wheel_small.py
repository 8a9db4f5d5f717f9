"""Shrink the trimmed Ray wheel (../shared/gpu-host/ray-wheel.sh) for the GPU host, whose carried tree is capped at 64 MiB: its
ELF binaries stripped of their symbols (Ray runs the same without them), the dashboard's source maps dropped, and every member
LZMA-compressed (pip reads any zip method Python's zipfile reads). Ray 2.60.0 for Python 3.12: 42 MB -> 25 MB.

  python scripts/ray_wheel_small.py .whl/ray-2.60.0-cp312-cp312-manylinux2014_x86_64.whl   # rewritten in place"""
import base64, hashlib, os, subprocess, sys, tempfile, zipfile

def small(path:str):
  tmp = path + ".tmp"
  with zipfile.ZipFile(path) as zi, zipfile.ZipFile(tmp, "w", zipfile.ZIP_LZMA) as zo:
    rec_name = next(n for n in zi.namelist() if n.endswith(".dist-info/RECORD"))
    rows = []
    for i in zi.infolist():
      if i.filename == rec_name or i.filename.endswith(".js.map"): continue
      b = zi.read(i)
      if b[:4] == b"\x7fELF":   # strip a copy: the symbols are most of a binary's size, and nothing at run time reads them
        with tempfile.NamedTemporaryFile(delete=False) as f: f.write(b)
        subprocess.run(["strip", "--strip-unneeded", f.name], check=True)
        b = open(f.name, "rb").read(); os.unlink(f.name)
      info = zipfile.ZipInfo(i.filename, i.date_time)
      info.external_attr, info.compress_type = i.external_attr, zipfile.ZIP_LZMA   # keeps the executables' mode bits
      zo.writestr(info, b)
      rows.append(f"{i.filename},sha256={base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b'=').decode()},{len(b)}")
    zo.writestr(rec_name, "\n".join(rows + [f"{rec_name},,"]) + "\n")
  os.replace(tmp, path)
  print(f"{path}: {os.path.getsize(path)/1e6:.1f} MB")

if __name__ == "__main__":
  for p in sys.argv[1:]: small(p)
