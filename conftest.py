"""Test-suite settings: quick sizes for the notebooks and unit tests (the size switch)."""

import os

# A bare `pytest` runs everything at quick size; the kernels nbval starts inherit this.
os.environ.setdefault("DPLIT_QUICK", "1")

# `make test` runs `pytest --doctest-modules dplit tests notebooks` (docstring examples in the one parallel run). Only
# the package's modules hold doctests: the notebooks' .py twins are scripts that run a whole notebook when imported.
collect_ignore_glob = ["notebooks/*.py", "notebooks/*/*.py"]
