#!/usr/bin/env python3
"""python scripts/train_cost_model.py DATASET [...]: the train-cost-model command without installing the package."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from models.train import main

if __name__ == "__main__": sys.exit(main())
