"""Every notebook's widgets do something.

Each widget cell of a notebook builds its ``interactive`` as ``explorer``, asserts
``dead_controls(explorer) == []`` (:func:`dplit.testing.dead_controls`: every control is moved one step, or to the
next option, and the output must change: the callback's return value or the PNG bytes of the figures it draws),
and then shows it. The check therefore runs where nbval already runs the notebook, in its kernel, at quick size.
This file checks that every widget cell has that assert on the widget it shows, and that the check catches a
callback that ignores a control, in process and in a kernel. The same check in a real browser:
tests/test_jupyterlab.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ASSERT = "assert dead_controls(explorer) == []"


def widget_cells(nb) -> list[int]:
    """Indices of the code cells that display an ipywidgets interactive."""
    return [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and "interactive(" in c.source
            and c.source.lstrip().startswith("# NBVAL_IGNORE_OUTPUT")]


def notebooks_with_widgets() -> list[str]:
    import jupytext

    from dplit.export import notebook_paths

    return [p.stem for p in notebook_paths(ROOT) if widget_cells(jupytext.read(p))]


def test_there_are_widgets_to_check():
    assert len(notebooks_with_widgets()) >= 15


@pytest.mark.parametrize("name", notebooks_with_widgets())
def test_every_widget_cell_checks_its_controls(name):
    import jupytext

    from dplit.export import notebook_paths

    path = next(p for p in notebook_paths(ROOT) if p.stem == name)
    nb = jupytext.read(path)
    for i in widget_cells(nb):
        src = nb.cells[i].source
        lines = [line for line in src.strip().splitlines() if line.strip()]
        assert re.search(r"(?m)^explorer = (widgets\.)?interactive\(", src), f"{name}, cell {i}: the interactive is not `explorer`"
        assert lines[-1] == "explorer", f"{name}, cell {i}: the cell must show `explorer` last"
        assert any(line.startswith(ASSERT) for line in lines), f"{name}, cell {i}: no `{ASSERT}` before showing it"


def _toy(connected: bool):
    import matplotlib.pyplot as plt
    from ipywidgets import Dropdown, IntSlider, interactive

    def show(k=1, colour="C0"):
        fig, ax = plt.subplots()
        ax.plot([0, 1], [0, k if connected else 1], color=colour)
        return fig
    return interactive(show, k=IntSlider(value=1, min=1, max=5), colour=Dropdown(options=["C0", "C1"]))


def test_dead_controls_catches_an_ignored_control():
    import matplotlib
    matplotlib.use("Agg")
    from dplit.testing import dead_controls
    assert dead_controls(_toy(True)) == []
    assert dead_controls(_toy(False)) == ["k"]          # the colour still changes the figure; k does not
    with pytest.raises(TypeError, match="widget must be an ipywidgets.interactive"):
        dead_controls(None)


def _toy_notebook(connected: bool):
    import nbformat

    body = "ax.plot([0, 1], [0, k])" if connected else "ax.plot([0, 1], [0, 1])  # ignores k: disconnected"
    return nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import matplotlib.pyplot as plt"),
        nbformat.v4.new_code_cell(f"def show(k=1):\n    fig, ax = plt.subplots()\n    {body}\n"),
        nbformat.v4.new_code_cell("# NBVAL_IGNORE_OUTPUT\nfrom ipywidgets import IntSlider, interactive\n"
                                  "from dplit.testing import dead_controls\n\n"
                                  "explorer = interactive(show, k=IntSlider(value=1, min=1, max=5))\n"
                                  f"{ASSERT}\nexplorer"),
    ])


def test_a_disconnected_callback_fails_its_notebook_in_a_kernel(tmp_path):
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    NotebookClient(_toy_notebook(True), timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    with pytest.raises(CellExecutionError, match="dead_controls"):
        NotebookClient(_toy_notebook(False), timeout=120, kernel_name="python3",
                       resources={"metadata": {"path": str(tmp_path)}}).execute()
