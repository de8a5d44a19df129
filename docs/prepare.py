"""Prepare the sources of the documentation site in build/docs-src/ (run by `make docs`).

* docs/*.md are copied as they are;
* every committed notebook ``notebooks/NN_topic.ipynb`` is copied with its outputs (nothing is
  executed); a widget cell's output (a live ipywidgets view, which a static page cannot run and
  would show as ``interactive(children=...)``) is replaced by a note on how to get the live widget,
  and the figure of the callback's default call, shown by the checked cell just before it, stays;
* ``api/<module>.md``: one page per module of ``dplit.LAYERS`` listing every name of its
  ``__all__`` (autodoc: signature and docstring), and ``api/index.md``.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WIDGET = "application/vnd.jupyter.widget-view+json"
NOTE = ("**Live widget.** This page is static: the figure above is the widget's default view. To move the "
        "sliders, run the notebook in JupyterLab (`make lab` in a clone of dplit, then *Run All*).")


def strip_widgets(nb: dict) -> int:
    """Replace widget-view outputs by the note (in place); returns how many were replaced."""
    count = 0
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        outs = cell.get("outputs", [])
        if any(WIDGET in o.get("data", {}) for o in outs):
            kept = [o for o in outs if WIDGET not in o.get("data", {})]
            note = {"output_type": "display_data", "metadata": {}, "data": {"text/markdown": NOTE}}
            cell["outputs"] = kept + [note]
            count += 1
    nb.get("metadata", {}).pop("widgets", None)  # the saved widget state: not rendered statically
    return count


def api_pages(dest: Path) -> list[str]:
    """Write api/<module>.md for each module with a non-empty ``__all__``; returns the module names."""
    import importlib

    sys.path.insert(0, str(ROOT))
    import dplit

    (dest / "api").mkdir(parents=True, exist_ok=True)
    done = []
    for layer in dplit.LAYERS:
        for name in layer:
            if not (ROOT / "dplit" / f"{name}.py").exists() or name.startswith("_"):
                continue
            module = importlib.import_module(f"dplit.{name}")
            names = list(getattr(module, "__all__", []))
            if not names:
                continue
            lines = [f"# `dplit.{name}`", "", "```{eval-rst}", f".. automodule:: dplit.{name}",
                     "   :no-members:", "", f".. currentmodule:: dplit.{name}", ""]
            for obj in names:
                value = getattr(module, obj)
                if isinstance(value, type):
                    lines += [f".. autoclass:: {obj}", ""]
                elif callable(value):
                    lines += [f".. autofunction:: {obj}", ""]
                else:  # a constant: its value (autodata would show the docstring of its type)
                    text = repr(value) if len(repr(value)) < 200 else f"<{type(value).__name__}>"
                    lines += [f".. py:data:: {obj}", f"   :value: {text}", ""]
            lines += ["```", ""]
            (dest / "api" / f"{name}.md").write_text("\n".join(lines))
            done.append(name)
    index = ["# API reference", "",
             "Every public name (each module's `__all__`) with its signature and docstring, module by module in "
             "the order of `dplit.LAYERS` (a module imports only modules above it in this list). The main entry "
             "points are also importable from `dplit` itself (e.g. `from dplit import dp_mcmc, Release`).", "",
             "```{toctree}", ":maxdepth: 1", ""] + [f"{m}" for m in done] + ["```", ""]
    (dest / "api" / "index.md").write_text("\n".join(index))
    return done


def notebook_names() -> list[str]:
    return sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))


def main(dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "notebooks").mkdir(parents=True)
    for src in (ROOT / "docs").glob("*.md"):
        shutil.copy(src, dest / src.name)
    widgets = 0
    for name in notebook_names():
        nb = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text())
        widgets += strip_widgets(nb)
        (dest / "notebooks" / f"{name}.ipynb").write_text(json.dumps(nb))
    index = (dest / "index.md").read_text()
    toc = "\n".join(f"notebooks/{n}" for n in notebook_names())
    (dest / "index.md").write_text(index.replace("<!-- NOTEBOOKS -->", toc))
    modules = api_pages(dest)
    print(f"docs sources in {dest}: {len(notebook_names())} notebooks ({widgets} widget cells with a static note), "
          f"API pages for {len(modules)} modules")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "docs-src")
