"""Test-suite settings: quick sizes for the notebooks and unit tests (the size switch)."""

import os

# A bare `pytest` runs everything at quick size; the kernels nbval starts inherit this.
os.environ.setdefault("DPLIT_QUICK", "1")
