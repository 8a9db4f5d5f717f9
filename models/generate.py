"""generate-dataset's entry point: dataset.generate's command line with --model's cost model loaded here, since dataset imports
nothing from models. The supervised child runs this module too, so a resumed run still has the loader."""
from __future__ import annotations
import sys
from dataset import generate

def load_scorer(path:str, arch:str, props:dict):
  """The model's favourite configs, slow compiles too: a dataset measures what the search would only penalize."""
  from models.cost_model import CostModel, CostModelError   # on use: a run without --model (and its spawned compile workers) needs no LightGBM
  try: return CostModel.load(path, arch=arch).scorer(props, compile_penalty=False)
  except CostModelError as e: raise ValueError(str(e)) from None

def main(argv=None) -> int: return generate.main(argv, load_scorer, entry="models.generate")

if __name__ == "__main__": sys.exit(main())
