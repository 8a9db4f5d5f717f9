"""Caches a test run writes (featurized matrices, optuna studies, tuned kernels) go to one temporary directory for the whole test run:
never the package or the user's ~/.cache. Set here, at import, so modules that read them at import and every subprocess see it."""
import os, shutil, tempfile, atexit

CACHE = tempfile.mkdtemp(prefix="kerntune-tests-")
os.environ["KERNTUNE_CACHE_DIR"] = CACHE                                # models.data (features), models.tune (optuna)
os.environ["KERNTUNE_CACHE"] = os.path.join(CACHE, "tuned.json")        # search.cache
atexit.register(shutil.rmtree, CACHE, True)
