"""The Makefile's setup targets, read by make itself (`make -n`: nothing runs, nothing is installed).

A setup target whose prerequisite variable is defined below the rule gets no prerequisite (make expands them as it
reads the rule) and silently does nothing: CI then installs the newest Python's venv (or the site's extras) later, on
the critical path.
"""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def dry_run(target: str, tmp_path: Path, makefile: Path = ROOT / "Makefile") -> str:
    """What `make target` would run in a checkout without venvs (both venv folders point into tmp_path)."""
    proc = subprocess.run(["make", "--no-print-directory", "-n", "-f", str(makefile), target,
                           f"VENV={tmp_path / 'venv'}", f"VENV_NEWEST={tmp_path / 'venv-newest'}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("target, venv", [("setup", "venv"), ("setup-newest", "venv-newest"), ("setup-docs", "venv")])
def test_each_setup_target_creates_its_venv_and_installs(tmp_path, target, venv):
    commands = dry_run(target, tmp_path)
    assert f"-m venv {tmp_path / venv}" in commands
    # pip byte-compiles what it installs: with PYTHONDONTWRITEBYTECODE set (CI) nothing else writes a .pyc
    assert "pip install" in commands and "--no-compile" not in commands
    if target == "setup-docs":          # .ci/run installs the site's extras here, while the 3.13 suite runs
        assert '-e ".[dev,docs]"' in commands


def test_the_check_catches_a_setup_target_above_its_stamp(tmp_path):
    # The rule placed above the variable it names: make finds nothing to do.
    text = (ROOT / "Makefile").read_text()
    rule = "setup-newest: $(STAMP_NEWEST)\n"
    assert text.count(rule) == 1
    planted = tmp_path / "Makefile"
    planted.write_text(text.replace(rule, "").replace("setup: $(STAMP)\n", "setup: $(STAMP)\n" + rule, 1))
    assert "-m venv" not in dry_run("setup-newest", tmp_path, planted)
