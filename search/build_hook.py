"""setuptools' build_py, plus kerntune.pth at the top of the wheel, so that a wheel install (pip install .) puts it in site-packages
and `KERNTUNE=1 python prog.py` works at once (search.hook); pip uninstall removes it with the rest. pyproject.toml names it:
[tool.setuptools.cmdclass] build_py = "search.build_hook.BuildPy". setuptools loads this file by its path at build time, when
the project is not importable: the line is read from search/hook.py, which stays free of imports outside the standard library."""
import importlib.util, os
from pathlib import Path
from setuptools.command.build_py import build_py

def _hook():
  spec = importlib.util.spec_from_file_location("_kerntune_hook", Path(__file__).with_name("hook.py"))
  spec.loader.exec_module(mod := importlib.util.module_from_spec(spec))
  return mod

class BuildPy(build_py):
  def run(self):
    super().run()
    hook = _hook()
    if not self.editable_mode:   # an editable wheel carries the packages only: `python -m search.hook install` there
      with open(os.path.join(self.build_lib, hook.NAME), "w") as f: f.write(hook.LINE)
  def get_outputs(self, include_bytecode=True):
    return super().get_outputs(include_bytecode) + ([] if self.editable_mode else [os.path.join(self.build_lib, _hook().NAME)])
