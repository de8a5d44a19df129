"""Test-suite settings: quick sizes for the notebooks and unit tests (the size switch)."""

import os

# A bare `pytest` runs everything at quick size; the kernels nbval starts inherit this.
os.environ.setdefault("DPLIT_QUICK", "1")

# `make test` adds `--doctest-modules dplit` to the one parallel run; only the package's modules hold doctests (the
# notebooks' .py twins are scripts that run a whole notebook when imported, and the tests are collected as tests)
collect_ignore_glob = ["notebooks/*.py", "notebooks/*/*.py"]
