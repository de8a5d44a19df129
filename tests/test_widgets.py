"""Every notebook's widgets do something: a kernel-level smoke test.

For each notebook with an ipywidgets explorer, a fresh kernel runs the notebook (quick size) up to
each widget cell; then, for every control of the ``interactive`` that cell displays, the test moves
the control from Python (one step, or the next option) and checks that the output changed: the
callback's return value or the PNG bytes of the figures it draws. A widget whose callback is not
connected to its controls (it ignores them, or nothing observes them) fails; the last test shows it
on a made-up notebook. The same check in a real browser: tests/test_jupyterlab.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"

# Runs in the kernel after a widget cell: moves each control of the interactive in `_` and reports
# for each whether the output (return value and figure bytes) changed.
PROBE = r'''
def _dplit_probe(w):
    import hashlib, io, json, math, re
    import ipywidgets
    import matplotlib.pyplot as plt
    from ipywidgets.widgets import interaction

    if not isinstance(w, ipywidgets.interactive):
        return json.dumps({"error": f"the widget cell shows {type(w).__name__}, not an interactive"})
    shots = []

    def png(fig):
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=40)
        return hashlib.sha1(buf.getvalue()).hexdigest()

    def capture():  # instead of showing the figures inline: keep their bytes
        shots.extend(png(plt.figure(n)) for n in plt.get_fignums())
        plt.close("all")

    def state():
        r = w.result
        figs = [x for x in (r if isinstance(r, (tuple, list)) else [r]) if hasattr(x, "savefig")]
        text = re.sub(r" at 0x[0-9a-f]+", "", repr(r))
        return [text if not figs else "", [png(f) for f in figs], sorted(shots)]

    def moved(c):
        v = c.value
        if getattr(c, "options", None):
            opts = list(c.options)
            return opts[(opts.index(v) + 1) % len(opts)] if v in opts else opts[0]
        if isinstance(v, bool):
            return not v
        if isinstance(v, str):
            digits = [i for i, ch in enumerate(v) if ch.isdigit()]
            i = digits[-1] if digits else None
            return v[:i] + str((int(v[i]) + 1) % 10) + v[i + 1:] if i is not None else v + "x"
        if hasattr(c, "base"):  # FloatLogSlider: value = base ** exponent
            e = math.log(v, c.base)
            e = e - c.step if e - c.step >= c.min - 1e-9 else e + c.step
            return c.base ** e
        step = getattr(c, "step", 1) or 1
        return v - step if v - step >= c.min else v + step

    saved, saved_show = interaction.show_inline_matplotlib_plots, plt.show
    interaction.show_inline_matplotlib_plots = capture
    plt.show = lambda *args, **kwargs: capture()  # callbacks that call plt.show() themselves
    try:
        shots.clear()
        w.update()
        before = state()
        report = []
        for c in w.kwargs_widgets:
            if not isinstance(c, ipywidgets.Widget):  # fixed(...) arguments are not controls
                continue
            old = c.value
            shots.clear()
            c.value = moved(c)  # the observer calls the callback, as a moved slider does
            report.append([c.description or type(c).__name__, state() != before])
            shots.clear()
            c.value = old
    finally:
        interaction.show_inline_matplotlib_plots, plt.show = saved, saved_show
        plt.close("all")
    return json.dumps({"controls": report})
'''


def widget_cells(nb) -> list[int]:
    """Indices of the code cells that display an ipywidgets interactive."""
    return [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and "interactive(" in c.source
            and c.source.lstrip().startswith("# NBVAL_IGNORE_OUTPUT")]


def notebooks_with_widgets() -> list[str]:
    import jupytext

    from dplit.export import notebook_paths

    return [p.stem for p in notebook_paths(ROOT) if widget_cells(jupytext.read(p))]


def _keep_last_expression(source: str) -> str:
    """The cell's source with its last expression also stored in ``_dplit_w``."""
    import ast

    tree = ast.parse(source)
    last = tree.body[-1]
    if not isinstance(last, ast.Expr):
        return source
    lines = source.splitlines()
    head = "\n".join(lines[: last.lineno - 1])
    return f"{head}\n_dplit_w = {ast.get_source_segment(source, last.value)}\n_dplit_w\n"


def probe_notebook(nb, cwd: Path, timeout: int = 900) -> list[dict]:
    """Run ``nb`` in a fresh kernel up to its last widget cell, probing each widget cell."""
    import nbformat
    from nbclient import NotebookClient

    cells = widget_cells(nb)
    assert cells, "no widget cell"
    nb.cells = nb.cells[: cells[-1] + 1]
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(cwd)}})
    reports = []
    n = len(nb.cells)

    def extra(code):  # a cell that is not the notebook's: appended, run, removed
        cell = nbformat.v4.new_code_cell(code)
        nb.cells.append(cell)
        try:
            client.execute_cell(cell, n, store_history=False)
        finally:
            nb.cells.pop()
        return "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")

    with client.setup_kernel(env=dict(os.environ, DPLIT_QUICK="1")):
        extra(PROBE)
        for index, cell in enumerate(nb.cells[:n]):
            if cell.cell_type != "code":
                continue
            if index in cells:  # keep the displayed interactive: `_dplit_w = <last expression>`
                cell.source = _keep_last_expression(cell.source)
            client.execute_cell(cell, index)
            if index in cells:
                text = extra("print(_dplit_probe(_dplit_w))")
                reports.append(json.loads(text.strip().splitlines()[-1]) | {"cell": index})
    return reports


@pytest.mark.slow
@pytest.mark.parametrize("name", notebooks_with_widgets())
def test_every_control_changes_the_output(name):
    import jupytext
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    # a kernel reply is now and then lost (the kernel idle, the client waiting: seen here); no quick-size cell
    # takes minutes, so a cell that does is retried once in a fresh kernel rather than waited on for 15 minutes
    from dplit.export import notebook_paths

    path = next(p for p in notebook_paths(ROOT) if p.stem == name)   # notebooks/ or one of its folders
    try:
        reports = probe_notebook(jupytext.read(path), path.parent, timeout=240)
    except (CellTimeoutError, DeadKernelError):
        reports = probe_notebook(jupytext.read(path), path.parent, timeout=240)
    for rep in reports:
        assert "error" not in rep, f"{name}, cell {rep['cell']}: {rep['error']}"
        dead = [label for label, changed in rep["controls"] if not changed]
        assert rep["controls"] and not dead, (
            f"{name}, cell {rep['cell']}: moving {dead} does not change the output (callback disconnected?)")


def _toy_notebook(connected: bool):
    import nbformat

    body = "ax.plot([0, 1], [0, k])" if connected else "ax.plot([0, 1], [0, 1])  # ignores k: disconnected"
    return nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import matplotlib.pyplot as plt\nfrom ipywidgets import IntSlider, interactive"),
        nbformat.v4.new_code_cell(f"def show(k=1):\n    fig, ax = plt.subplots()\n    {body}\n"),
        nbformat.v4.new_code_cell("# NBVAL_IGNORE_OUTPUT\ninteractive(show, k=IntSlider(value=1, min=1, max=5))"),
    ])


def test_a_disconnected_callback_is_caught(tmp_path):
    ok = probe_notebook(_toy_notebook(True), tmp_path, timeout=120)
    assert ok[0]["controls"] == [["k", True]]
    dead = probe_notebook(_toy_notebook(False), tmp_path, timeout=120)
    assert dead[0]["controls"] == [["k", False]]
