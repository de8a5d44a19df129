"""Widgets in a real JupyterLab, moved in a real browser.

Starts ``jupyter lab`` on a free loopback port with a random token (quick size), opens notebooks in
Debian's headless Chromium through Playwright, runs all cells, presses a slider's arrow key and
checks that the figure under the widget changed (its image bytes). One real notebook per widget
kind (sliders only; sliders with a dropdown), plus a made-up notebook whose callback ignores the
slider: the same check must fail on it. The server is shut down at the end.

Run by `make check-docs` (which installs the browser and Playwright); elsewhere it is skipped when
Playwright or /usr/bin/chromium is missing, unless DPLIT_REQUIRE_BROWSER=1.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
REAL = ["15_release", "13_censoring"]  # sliders; sliders + a dropdown


def _need_browser():
    missing = []
    try:
        import playwright  # noqa: F401
    except ImportError:
        missing.append("playwright (pip install -e '.[docs]')")
    if not Path(CHROMIUM).exists():
        missing.append(f"{CHROMIUM} (apt-get install chromium)")
    if missing:
        if os.environ.get("DPLIT_REQUIRE_BROWSER") == "1":
            pytest.fail("missing: " + ", ".join(missing))
        pytest.skip("missing: " + ", ".join(missing))


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _toy(path: Path, connected: bool):
    import nbformat

    body = "ax.plot([0, 1], [0, k])" if connected else "ax.plot([0, 1], [0, 1])  # ignores k: disconnected"
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import matplotlib.pyplot as plt\nfrom ipywidgets import IntSlider, interactive"),
        nbformat.v4.new_code_cell(f"def show(k=2):\n    fig, ax = plt.subplots(figsize=(3, 2))\n    {body}\n"),
        nbformat.v4.new_code_cell("interactive(show, k=IntSlider(value=2, min=1, max=5))"),
    ])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """(base URL, token, folder) of a JupyterLab server on a loopback port, closed afterwards."""
    _need_browser()
    folder = tmp_path_factory.mktemp("lab")
    for name in REAL:
        shutil.copy(ROOT / "notebooks" / f"{name}.ipynb", folder / f"{name}.ipynb")
    _toy(folder / "toy_connected.ipynb", True)
    _toy(folder / "toy_disconnected.ipynb", False)
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(os.environ, DPLIT_QUICK="1", MPLBACKEND="module://matplotlib_inline.backend_inline")
    log = open(folder / "server.log", "w")  # noqa: SIM115 (closed below)
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={folder}", "--LabApp.expose_app_in_browser=True",
         "--ServerApp.port_retries=0", *(["--allow-root"] if os.geteuid() == 0 else [])], cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        import urllib.request

        for _ in range(240):
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if server.poll() is not None:
                    raise RuntimeError((folder / "server.log").read_text()[-2000:]) from None
                time.sleep(0.5)
        else:
            raise RuntimeError("jupyter lab did not start in 120 s")
        yield base, token, folder
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


@pytest.fixture(scope="module")
def browser_context(lab, tmp_path_factory):
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(str(profile), executable_path=CHROMIUM, headless=True,
                                                        args=FLAGS, viewport={"width": 1280, "height": 900})
        yield context
        context.close()


BUSY = """() => Array.from(document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-InputPrompt'))
            .some(p => p.textContent.includes('*'))"""
KERNEL_IDLE = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const s = w && w.sessionContext;
  return !!(s && s.isReady && s.session && s.session.kernel && s.session.kernel.status === 'idle');
}"""
FIGURE = """() => {
  const boxes = document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .widget-interact');
  const box = boxes[boxes.length - 1];
  if (!box) return null;
  const img = Array.from(box.querySelectorAll('img')).pop();
  return img ? img.getAttribute('src') : null;
}"""


def run_and_move_slider(context, base, token, notebook, *, wait_change=60.0):
    """Open the notebook, run all cells, press ArrowLeft on the last widget's first slider.

    Returns (figure before, figure after, errors shown in outputs).
    """
    page = context.new_page()
    try:
        page.goto(f"{base}/lab/tree/{notebook}?reset&token={token}", wait_until="domcontentloaded")
        page.wait_for_function("() => window.jupyterapp && document.querySelector('.jp-Notebook .jp-Cell')",
                               timeout=120_000)
        page.wait_for_function(KERNEL_IDLE, timeout=180_000, polling=500)
        # not awaited: the command's promise may outlive the page's evaluate call
        page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); return true; }")
        page.wait_for_timeout(1000)
        page.wait_for_function(f"() => !({BUSY})() && ({KERNEL_IDLE})()", timeout=600_000, polling=500)
        errors = page.evaluate("""() => Array.from(document.querySelectorAll(
            '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'))
            .map(e => e.textContent).filter(t => t.includes('Traceback') || t.includes('Error:'))""")
        page.wait_for_function(f"() => ({FIGURE})() !== null", timeout=120_000)
        page.wait_for_timeout(2000)  # let the first rendering of the widget settle
        before = page.evaluate(FIGURE)
        slider = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .widget-interact").last.locator(".widget-slider").first
        readout = slider.locator(".widget-readout")
        start = readout.text_content()
        for _ in range(5):  # focus the handle and press the arrow key until the slider has moved
            slider.locator(".noUi-handle").first.evaluate("h => { h.scrollIntoView({block: 'center'}); h.focus(); }")
            page.keyboard.press("ArrowLeft")  # what a reader's keyboard does to a focused slider
            page.wait_for_timeout(1000)
            if readout.text_content() != start:
                break
        else:
            raise AssertionError(f"{notebook}: the slider did not move (readout {start!r})")
        after = before
        deadline = time.monotonic() + wait_change
        while time.monotonic() < deadline and after == before:
            page.wait_for_timeout(500)
            after = page.evaluate(FIGURE) or before
        return before, after, errors
    finally:
        page.close()


@pytest.mark.slow
@pytest.mark.parametrize("name", REAL)
def test_slider_changes_the_figure_in_jupyterlab(lab, browser_context, name):
    base, token, _ = lab
    before, after, errors = run_and_move_slider(browser_context, base, token, f"{name}.ipynb")
    assert not errors, errors
    assert before.startswith("data:image/png") and after != before, f"{name}: the figure did not change"


@pytest.mark.slow
def test_a_disconnected_callback_fails_the_check(lab, browser_context):
    base, token, _ = lab
    before, after, _ = run_and_move_slider(browser_context, base, token, "toy_connected.ipynb")
    assert after != before  # the check passes on a widget that works ...
    before, after, _ = run_and_move_slider(browser_context, base, token, "toy_disconnected.ipynb", wait_change=5)
    assert after == before  # ... and fails on one whose callback ignores the slider
