"""`make check-docs` on a machine without chromium: one install command, a non-zero exit, no system change."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_check_docs_stops_before_building_when_chromium_is_missing(tmp_path):
    missing = tmp_path / "no-chromium"
    # -n would not run the recipe; run the real target with a browser path that does not exist
    proc = subprocess.run(["make", "--no-print-directory", "check-docs", f"CHROMIUM={missing}"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "sudo apt-get install -y chromium" in proc.stdout
    assert "sphinx" not in proc.stdout + proc.stderr        # stopped before building anything


def test_check_site_never_installs(monkeypatch, tmp_path):
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import check_site
    finally:
        sys.path.pop(0)
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: calls.append(a))
    monkeypatch.setattr(check_site, "CHROMIUM", str(tmp_path / "no-chromium"))
    with pytest.raises(SystemExit, match="apt-get install -y chromium"):
        check_site.ensure_chromium()
    assert calls == []
