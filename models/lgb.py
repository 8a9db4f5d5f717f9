"""LightGBM, imported without its scikit-learn, pandas and dask hooks (lightgbm.compat probes them at import): kerntune only uses
lgb.train and lgb.Booster on numpy arrays, and the probes are most of the import (1.3 s of which scikit-learn 1.0 s on the
development machine; every search compile worker that scores candidates pays it before its first model descent). A module some
code already imported is left as it is; the blocked ones stay importable afterwards."""
import sys

_blocked = [m for m in ("sklearn", "pandas", "dask") if m not in sys.modules]
for m in _blocked: sys.modules[m] = None   # type: ignore[assignment]  # `import m` raises ImportError while lightgbm loads
try: import lightgbm as lgb  # noqa: E402
finally:
  for m in _blocked: sys.modules.pop(m, None)

__all__ = ["lgb"]
