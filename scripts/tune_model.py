#!/usr/bin/env python3
"""python scripts/tune_model.py MODEL.onnx [...]: the tune-model command without installing the package."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from search.tune_model import main

if __name__ == "__main__": sys.exit(main())
