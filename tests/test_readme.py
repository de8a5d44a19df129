"""The README's library example runs as printed (a reader copies it first)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_readme_library_example_runs_and_names_components(tmp_path):
    text = (ROOT / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    assert "dp_mcmc" in code and "dp_boots" in code
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # the release's names reach the ArviZ summary without any renaming by the reader
    assert "mean_composition[sleep]" in proc.stdout and "mean_composition[other]" in proc.stdout
