"""Prepare the sources of the documentation site in build/docs-src/ (run by `make docs`).

* docs/*.md are copied as they are;
* every committed notebook ``notebooks/NN_topic.ipynb`` is copied with its outputs (nothing is
  executed); a widget cell's output (a live ipywidgets view, which a static page cannot run and
  would show as ``interactive(children=...)``) is replaced by a note on how to get the live widget,
  and the figure of the callback's default call, shown by the checked cell just before it, stays;
* the copies show the tutorial first (the committed notebooks are never changed):
  - tool markers are removed from the displayed code: the lines ``#| export``, ``#| default_exp ...``
    (any ``#|`` directive) and ``# NBVAL_*``, and trailing ``# noqa: CODES`` comments (a reason
    written after the codes stays as a plain comment); a cell left empty with no output is removed;
  - the code of export cells (library code, also on the API pages) and of long cells (more than
    ``FOLD_LINES`` = 25 non-blank lines once the markers are gone: long checks, long figure code)
    is folded behind a "Show code" toggle (myst-nb's ``hide-input`` tag); their outputs stay shown;
  - machine paths in outputs (a warning's ``/tmp/ipykernel_.../...py:12:`` prefix, the checkout's
    own path, other temporary folders) are removed or shortened;
* ``api/<module>.md``: one page per module of ``dplit.LAYERS`` listing every name of its
  ``__all__`` (autodoc: signature and docstring), and ``api/index.md``.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WIDGET = "application/vnd.jupyter.widget-view+json"
NOTE = ("**Live widget.** This page is static: the figure above is the widget's default view. To move the "
        "sliders, run the notebook in JupyterLab (`make lab` in a clone of dplit, then *Run All*).")


# Cells with more non-blank lines than this (markers removed) are folded; an export cell always is.
FOLD_LINES = 25
SHOW_PROMPT = "Show code ({what})"
_MARKER_LINE = re.compile(r"^\s*(#\|.*|#\s*NBVAL_\w*.*)$")
# A noqa comment: the bare word, or with a colon and codes (E402, F401), then an optional reason
# ("- ...", "(...)" or plain words), which is kept as a comment.
_NOQA = re.compile(r"#\s*noqa\b(?::?\s*[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*)?(?P<reason>.*)$")


def _text(source) -> str:
    return "".join(source) if isinstance(source, list) else source


def strip_noqa(line: str, col: int | None = None) -> str:
    """The line without its noqa comment (starting at ``col``, else searched for); a reason written after
    the codes stays as a plain comment."""
    m = _NOQA.match(line, col) if col is not None else _NOQA.search(line)
    if not m:
        return line
    code = line[:m.start()].rstrip()
    reason = m.group("reason").strip()
    reason = reason[2:].strip() if reason.startswith("- ") else reason
    if reason.startswith("(") and reason.endswith(")"):
        reason = reason[1:-1].strip()
    if not reason:
        return code
    return f"{code}  # {reason}" if code else f"# {reason}"


def _noqa_columns(source: str) -> dict[int, int] | None:
    """Line index -> column of each noqa comment, found by Python's tokenizer (so a string that holds
    the word is left alone); None when the cell does not tokenize (then every line is searched)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    return {tok.start[0] - 1: tok.start[1] for tok in tokens
            if tok.type == tokenize.COMMENT and _NOQA.match(tok.string)}


def strip_markers(source: str) -> str:
    """Cell source as a reader should see it: no ``#|`` directives, no ``# NBVAL_*`` lines, no noqa comment."""
    columns = _noqa_columns(source)
    out = []
    for i, line in enumerate(source.splitlines()):
        if _MARKER_LINE.match(line):
            continue
        if columns is None:
            new = strip_noqa(line)
        else:
            new = strip_noqa(line, columns[i]) if i in columns else line
        if new.strip() or not line.strip():  # a line that held only a noqa comment goes
            out.append(new)
    while out and not out[0].strip():
        out.pop(0)
    return "\n".join(out).rstrip()


def is_export(source: str) -> bool:
    """A cell sent to the notebook's module (its directives include ``#| export``)."""
    return any(re.fullmatch(r"\s*#\|\s*export(\s+\w+)?\s*", line) for line in source.splitlines())


def code_lines(source: str) -> int:
    """Non-blank lines of a (stripped) cell source."""
    return sum(1 for line in source.splitlines() if line.strip())


def fold_reason(source: str) -> str | None:
    """Why a code cell (its committed source) is folded on the site, or None when its code stays shown."""
    n = code_lines(strip_markers(source))
    if is_export(source):
        return f"library code, {n} lines"
    if n > FOLD_LINES:
        return f"{n} lines"
    return None


_KERNEL_LOCATION = re.compile(r"(?:[^\s'\"]*/)?ipykernel_\d+/\d+\.py:\d+: ")
_TEMP = re.compile(r"/tmp/(?:[^\s'\"/]+/)*")


def scrub_paths(text: str, root: str = str(ROOT)) -> str:
    """Machine paths out of an output's text: a warning's kernel location prefix goes, the checkout's
    path becomes relative, another temporary folder becomes ``<temporary folder>/``."""
    text = _KERNEL_LOCATION.sub("", text)
    text = text.replace(root.rstrip("/") + "/", "")
    return _TEMP.sub("<temporary folder>/", text)


def _scrub_output(out: dict) -> None:
    if "text" in out:
        out["text"] = scrub_paths(_text(out["text"]))
    for mime, value in out.get("data", {}).items():
        if mime.startswith("text/") and isinstance(value, (str, list)):
            out["data"][mime] = scrub_paths(_text(value))
    if "traceback" in out:
        out["traceback"] = [scrub_paths(line) for line in out["traceback"]]


def prepare_cells(nb: dict) -> dict:
    """Strip markers, fold export and long cells, scrub machine paths (in place); returns counts."""
    counts = {"folded export": 0, "folded long": 0, "removed empty": 0}
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source = _text(cell.get("source", ""))
        reason = fold_reason(source)
        cell["source"] = strip_markers(source)
        for out in cell.get("outputs", []):
            _scrub_output(out)
        meta = cell.setdefault("metadata", {})
        tags = list(meta.get("tags", []))
        if not cell["source"].strip():
            meta["tags"] = tags + ["remove-cell" if not cell.get("outputs") else "remove-input"]
            counts["removed empty"] += 1
        elif reason and not {"hide-input", "remove-input", "remove-cell", "hide-cell"} & set(tags):
            meta["tags"] = tags + ["hide-input"]
            meta.setdefault("mystnb", {})["code_prompt_show"] = SHOW_PROMPT.format(what=reason)
            counts["folded export" if reason.startswith("library") else "folded long"] += 1
    return counts


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


# The parts of the book, by the notebooks' numbers (tens digit): the folders and numbers of notebooks/ show them.
PARTS = (
    ("Start here", (0, 0)),
    ("Foundations: mechanisms, accounting, the sampler core", (1, 9)),
    ("Compositional data (Guo, Barrientos & Peña)", (10, 29)),
    ("The Dirichlet mechanism", (30, 39)),
    ("Data augmentation for any privatised statistic (dapper)", (40, 49)),
    ("Latent classes from noisy margins (Nixon et al.)", (50, 59)),
    ("Every method on one release; the studies", (60, 69)),
    ("Checks", (70, 79)),
    ("The papers reproduced", (80, 89)),
    ("How-to guides", (90, 99)),
)


def notebook_pages() -> list[str]:
    """``notebooks/[folder/]NN_topic`` of every committed notebook, in the order of the numbers."""
    sys.path.insert(0, str(ROOT))
    from dplit.export import notebook_paths

    return [str(p.with_suffix("").relative_to(ROOT)) for p in notebook_paths(ROOT)]


def notebook_names() -> list[str]:
    return [Path(page).name for page in notebook_pages()]


def toc(pages) -> str:
    """One toctree per part of the book that holds a page."""
    blocks = []
    for caption, (lo, hi) in PARTS:
        inside = [pg for pg in pages if lo <= int(Path(pg).name[:2]) <= hi]
        if inside:
            blocks.append("\n".join(["```{toctree}", ":maxdepth: 1", f":caption: {caption}", "", *inside, "```"]))
    return "\n\n".join(blocks)


def main(dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "notebooks").mkdir(parents=True)
    for src in (ROOT / "docs").glob("*.md"):
        shutil.copy(src, dest / src.name)
    widgets, folded = 0, {}
    pages = notebook_pages()
    for page in pages:
        nb = json.loads((ROOT / f"{page}.ipynb").read_text())
        widgets += strip_widgets(nb)
        for key, n in prepare_cells(nb).items():
            folded[key] = folded.get(key, 0) + n
        (dest / page).parent.mkdir(parents=True, exist_ok=True)
        (dest / f"{page}.ipynb").write_text(json.dumps(nb))
    index = (dest / "index.md").read_text()
    (dest / "index.md").write_text(index.replace("<!-- NOTEBOOKS -->", toc(pages)))
    modules = api_pages(dest)
    print(f"docs sources in {dest}: {len(notebook_names())} notebooks ({widgets} widget cells with a static note; "
          f"code folded in {folded['folded export']} export and {folded['folded long']} long cells, "
          f"{folded['removed empty']} emptied cells removed), API pages for {len(modules)} modules")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "docs-src")
