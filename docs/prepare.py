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
    ``FOLD_LINES`` = 10 non-blank lines once the markers are gone: long checks, long figure code)
    is folded behind a "Show code" toggle (myst-nb's ``hide-input`` tag); their outputs stay shown;
  - machine paths in outputs (a warning's ``/tmp/ipykernel_.../...py:12:`` prefix, the checkout's
    own path, other temporary folders) are removed or shortened;
* ``api/<module>.md``: one page per module of ``dplit.LAYERS`` listing every name of its
  ``__all__`` (autodoc: signature and docstring), and ``api/index.md``.
"""

from __future__ import annotations

import io
import json
import os
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
FOLD_LINES = 10
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


# Plumbing a reader of the site does not need: the notebook's backend line and the size switch's report (the site
# always shows the full size). Removed from the copies' code and printed output.
_PLUMBING_SOURCE = re.compile(r"^\s*(%matplotlib\s+inline|print\(f?[\"']quick mode:.*\)\s*(#.*)?)$")
_PLUMBING_OUTPUT = re.compile(r"^quick mode: .*$\n?", re.M)


def strip_plumbing(source: str) -> str:
    """Cell source without ``%matplotlib inline`` and without the line printing "quick mode: ..."."""
    lines = [line for line in source.splitlines() if not _PLUMBING_SOURCE.match(line)]
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(lines)


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
# Any absolute path into the package (another clone's, an installed copy's): a warning's location prefix.
_PACKAGE = re.compile(r"(?:/[^\s'\"/:]+)+/(?=dplit/[\w/]+\.py\b)")


def scrub_paths(text: str, root: str = str(ROOT)) -> str:
    """Machine paths out of an output's text: a warning's kernel location prefix goes, the checkout's
    path (or any other path into the package) becomes relative, another temporary folder becomes ``<temporary folder>/``."""
    text = _KERNEL_LOCATION.sub("", text)
    text = text.replace(root.rstrip("/") + "/", "")
    text = _PACKAGE.sub("", text)
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
    """Strip markers and plumbing, fold export and long cells, scrub machine paths (in place); returns counts."""
    counts = {"folded export": 0, "folded long": 0, "removed empty": 0, "plumbing lines": 0}
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source = _text(cell.get("source", ""))
        reason = fold_reason(strip_plumbing(source))
        cell["source"] = strip_plumbing(strip_markers(source))
        for out in cell.get("outputs", []):
            _scrub_output(out)
            if out.get("output_type") == "stream":
                text = _text(out.get("text", ""))
                kept = _PLUMBING_OUTPUT.sub("", text)
                if kept != text:
                    out["text"] = kept
                    counts["plumbing lines"] += 1
        cell["outputs"] = [o for o in cell.get("outputs", [])
                           if not (o.get("output_type") == "stream" and not _text(o.get("text", "")))]
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


def api_modules() -> list[str]:
    """The documented modules: those of ``dplit.LAYERS`` with a file, a public name and a non-empty ``__all__``."""
    import importlib

    sys.path.insert(0, str(ROOT))
    import dplit

    found = []
    for layer in dplit.LAYERS:
        for name in layer:
            if not (ROOT / "dplit" / f"{name}.py").exists() or name.startswith("_"):
                continue
            if getattr(importlib.import_module(f"dplit.{name}"), "__all__", []):
                found.append(name)
    return found


def module_notebooks(root: Path = ROOT) -> dict[str, str]:
    """Module name -> the notebook page (``notebooks/NN_topic``) it is generated from (hand-written modules: none)."""
    out = {}
    for path in sorted((root / "dplit").glob("*.py")):
        m = re.match(r"# AUTOGENERATED from (notebooks/\S+)\.py", path.read_text().split("\n", 1)[0])
        if m:
            out[path.stem] = m.group(1)
    return out


def public_names() -> dict[str, tuple[str, str]]:
    """Text of a code span that names public dplit API -> (role, target): each documented module as
    ``dplit.module``; every name of a module's ``__all__`` as ``dplit.module.name``, bare (when only one module holds
    it), and wherever the package or another documented module re-exports it (``dplit.dp_mcmc``,
    ``dplit.release.Release``)."""
    import importlib

    modules = api_modules()   # puts the checkout first on sys.path
    import dplit

    out: dict[str, tuple[str, str]] = {f"dplit.{mod}": ("py:mod", f"dplit.{mod}") for mod in modules}
    holders: dict[str, list[str]] = {}
    canonical: dict[int, str] = {}
    for mod in modules:
        module = importlib.import_module(f"dplit.{mod}")
        for name in module.__all__:
            target = f"dplit.{mod}.{name}"
            out[target] = ("py:obj", target)
            holders.setdefault(name, []).append(target)
            value = getattr(module, name)
            if not isinstance(value, (int, float, str, bool, tuple, type(None))):  # small values are shared objects
                canonical.setdefault(id(value), target)
    for name, targets in holders.items():
        if len(targets) == 1 and not name.startswith("_"):
            out.setdefault(name, ("py:obj", targets[0]))
    for prefix, module in [("dplit", dplit)] + [(f"dplit.{m}", importlib.import_module(f"dplit.{m}")) for m in modules]:
        for name in dir(module):   # dir: the package's entry points are loaded on first access
            if name.startswith("_"):
                continue
            target = canonical.get(id(getattr(module, name, None)))
            if target:
                out.setdefault(f"{prefix}.{name}", ("py:obj", target))
    return out


def notebook_titles(pages) -> dict[str, str]:
    """Page -> the title of its notebook (the first heading, without the ``#``)."""
    titles = {}
    for page in pages:
        nb = json.loads((ROOT / f"{page}.ipynb").read_text())
        for cell in nb.get("cells", []):
            m = re.search(r"^#\s+(.+)$", _text(cell.get("source", "")), re.M) if cell.get("cell_type") == "markdown" \
                else None
            if m:
                titles[page] = m.group(1).strip()
                break
    return titles


# A mention of a notebook in prose: "notebook 21" (the words link), "papers/80" or "checks/73_mcmc_checks" (a folder
# and a number), "21_mcmc" (a name). check_site's BOOK_FACTS counts the same mentions on the rendered pages.
_MENTION = re.compile(r"\b[Nn]otebooks? (?P<num>\d\d)\b(?![.,]\d)|\b(?:papers|checks|howto)/(?P<fnum>\d\d)(?:_[a-z0-9_]+)?\b"
                      r"|\b(?P<name>\d\d_[a-z][a-z0-9_]*)\b")
# What is never rewritten in Markdown: fenced code, display math, MyST roles, code spans, links and images, raw HTML
# links, inline math, URLs. Code spans are looked at (a notebook or a public name becomes a link).
_FENCE = re.compile(r"^(```|~~~)[^\n]*\n.*?^\1[ \t]*$|^\$\$.*?\$\$", re.M | re.S)
_TOKEN = re.compile(r"(?P<role>\{[\w:.-]+\}`[^`]*`)|(?P<code>(?P<ticks>`+)(?P<ctext>(?:[^\n]|\n(?![ \t]*\n))+?)(?<!`)(?P=ticks)(?!`))"
                    r"|(?P<link>!?\[(?:[^\[\]]|\[[^\]]*\])*\]\([^)]*\))|(?P<html><a\b.*?</a>)"
                    r"|(?P<math>\$[^$\n]+\$)|(?P<url>https?://\S+)")
_DISPLAY_LINE = re.compile(r"^[ \t]*\$\$[^\n]*\S[^\n]*\$\$[ \t]*$", re.M)
_MD_LINK = re.compile(r"\[(?P<text>[^\]]+)\]\((?P<href>(?:\.\./|\./)*(?:[a-z]+/)*\d\d_[a-z0-9_]+)\.ipynb\)")


class Linker:
    """Turns the mentions of notebooks and public dplit names in a page's Markdown into links (MyST: a relative
    link to the notebook's ``.ipynb`` and the ``py:obj``/``py:mod`` roles), counted in ``self.count``."""

    def __init__(self, pages, names: dict | None = None):
        self.pages = list(pages)
        self.by_name = {Path(pg).name: pg for pg in self.pages}
        self.by_number = {Path(pg).name[:2]: pg for pg in self.pages}
        self.names = public_names() if names is None else names
        self.count = 0

    def _href(self, page: str, target: str) -> str:
        return os.path.relpath(target, os.path.dirname(page) or ".") + ".ipynb"

    def _notebook(self, text: str) -> str | None:
        bare = re.sub(r"^(notebooks/)?((papers|checks|howto)/)?", "", text)
        bare = re.sub(r"\.(py|ipynb)$", "", bare)
        return self.by_name.get(bare)

    def _code(self, page: str, m) -> str:
        code, text = m.group(0), m.group("ctext").strip()
        target = self._notebook(text)
        if target:
            self.count += 1
            return f"[{code}]({self._href(page, target)})"
        key = text[:-2] if text.endswith("()") else text
        if key in self.names and "<" not in text and "`" not in text:
            role, obj = self.names[key]
            self.count += 1
            return f"{{{role}}}`{text} <{obj}>`"
        return code

    def _prose(self, page: str, text: str) -> str:
        def one(m):
            if m.group("num"):
                target = self.by_number.get(m.group("num"))
            elif m.group("fnum"):
                target = self.by_number.get(m.group("fnum"))
            else:
                target = self.by_name.get(m.group("name"))
            if not target:
                return m.group(0)
            self.count += 1
            return f"[{m.group(0)}]({self._href(page, target)})"
        return _MENTION.sub(one, text)

    def _pending(self, page: str, m) -> str:
        """A Markdown link to a notebook page that does not exist yet (a how-to being written) becomes a plain HTML
        link to its future page (docs/check_site_allow.toml allows it while it is missing)."""
        target = os.path.normpath(os.path.join(os.path.dirname(page), m.group("href")))
        if target in self.pages:
            return m.group(0)
        return f'<a href="{m.group("href")}.html">{m.group("text")}</a>'

    def markdown(self, page: str, text: str) -> str:
        """The Markdown of one page (``notebooks/21_mcmc``) with its mentions linked (and a one-line display formula
        ``$$...$$`` inside a paragraph made a block of its own, as MyST needs to typeset it)."""
        text = _DISPLAY_LINE.sub(lambda m: "\n" + m.group(0) + "\n", text)
        out, last = [], 0
        for block in _FENCE.finditer(text):
            out.append(self._inline(page, text[last:block.start()]))
            out.append(block.group(0))
            last = block.end()
        out.append(self._inline(page, text[last:]))
        return "".join(out)

    def _inline(self, page: str, text: str) -> str:
        text = _MD_LINK.sub(lambda m: self._pending(page, m), text)
        out, last = [], 0
        for m in _TOKEN.finditer(text):
            out.append(self._prose(page, text[last:m.start()]))
            out.append(self._code(page, m) if m.group("code") else m.group(0))
            last = m.end()
        out.append(self._prose(page, text[last:]))
        return "".join(out)


def link_notebook(nb: dict, page: str, linker: Linker) -> None:
    """Link the mentions in the Markdown cells and in the Markdown outputs of one notebook (in place)."""
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            cell["source"] = linker.markdown(page, _text(cell.get("source", "")))
        for out in cell.get("outputs", []):
            md = out.get("data", {}).get("text/markdown")
            if md is not None:
                out["data"]["text/markdown"] = linker.markdown(page, _text(md))


def number_title(nb: dict, page: str) -> None:
    """The notebook's title carries its number (``# 21 · MCMC from a release ...``), as the prose names it."""
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            number = Path(page).name[:2]
            cell["source"] = re.sub(r"^#\s+(?!\d\d ·)", f"# {number} · ", _text(cell["source"]), count=1)
            return


def add_api_link(nb: dict, page: str, module: str | None) -> None:
    """A line under the title of a library notebook: the module it exports and its API page."""
    if module is None:
        return
    href = os.path.relpath(f"api/{module}.md", os.path.dirname(page))
    line = (f"**In the library:** the code exported here is the module [`dplit.{module}`]({href}); its API page "
            f"lists every public name with its signature and docstring.")
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") == "markdown":
            nb["cells"].insert(i + 1, {"cell_type": "markdown", "id": "dplit-api-link", "metadata": {}, "source": line})
            return


def dedupe_outputs(nb: dict) -> int:
    """Drop an output whose text the page already showed (a note printed by two cells); returns how many."""
    seen, dropped = set(), 0
    for cell in nb.get("cells", []):
        kept = []
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            text = _text(out.get("text", "")) or _text(data.get("text/markdown", "")) or ""
            key = " ".join(text.split())
            if len(key) > 40 and key in seen and "image/png" not in data:
                dropped += 1
                continue
            seen.add(key)
            kept.append(out)
        if "outputs" in cell:
            cell["outputs"] = kept
    return dropped


def first_sentence(doc: str | None) -> str:
    """The first sentence of a module docstring, on one line."""
    text = " ".join((doc or "").strip().split("\n\n")[0].split())
    m = re.match(r"(.+?[.:])(\s|$)", text)
    return (m.group(1) if m else text).rstrip(":.") + "." if text else ""


def api_pages(dest: Path, pages=None) -> list[str]:
    """Write api/<module>.md for each documented module, each linked to its notebook, and api/index.md (one line
    per module, grouped by the parts of the book); returns the module names in the order of the book."""
    import importlib

    sys.path.insert(0, str(ROOT))

    pages = notebook_pages() if pages is None else pages
    titles = notebook_titles(pages)
    homes = module_notebooks()
    (dest / "api").mkdir(parents=True, exist_ok=True)
    modules = api_modules()
    # The book's order: by the number of the notebook a module comes from; the hand-written modules after.
    ordered = sorted(modules, key=lambda m: (m not in homes, int(Path(homes[m]).name[:2]) if m in homes else 0))
    for name in ordered:
        module = importlib.import_module(f"dplit.{name}")
        lines = [f"# `dplit.{name}`", ""]
        if name in homes:
            page = homes[name]
            lines += [f"Derived, implemented and checked in the notebook "
                      f"[{Path(page).name[:2]} · {titles.get(page, page)}](../{page}.ipynb), which this module is "
                      f"exported from.", ""]
        else:
            lines += ["A hand-written module (not generated from a notebook).", ""]
        lines += ["```{eval-rst}", f".. automodule:: dplit.{name}",
                  "   :no-members:", "", f".. currentmodule:: dplit.{name}", ""]
        for obj in module.__all__:
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
    index = ["# API reference", "",
             "Every public name (each module's `__all__`) with its signature and docstring, one page per module, in "
             "the order of the book: each module under the part of the notebook it is exported from. The main entry "
             "points are also importable from `dplit` itself (e.g. `from dplit import dp_mcmc, Release`).", ""]
    for caption, (lo, hi) in PARTS:
        inside = [m for m in ordered if m in homes and lo <= int(Path(homes[m]).name[:2]) <= hi]
        if inside:
            index += [f"## {caption}", ""]
            index += [f"* [`dplit.{m}`]({m}.md): {first_sentence(importlib.import_module(f'dplit.{m}').__doc__)}"
                      for m in inside] + [""]
    rest = [m for m in ordered if m not in homes]
    if rest:
        index += ["## Hand-written modules: configuration, data sets, results, diagnostics, testing, the command line",
                  ""]
        index += [f"* [`dplit.{m}`]({m}.md): {first_sentence(importlib.import_module(f'dplit.{m}').__doc__)}"
                  for m in rest] + [""]
    index += ["```{toctree}", ":hidden:", ":maxdepth: 1", ""] + ordered + ["```", ""]
    (dest / "api" / "index.md").write_text("\n".join(index))
    return ordered


# The parts of the book, by the notebooks' numbers: the folders and numbers of notebooks/ show them. The order is the
# reading order (the sidebar's, and Next/Previous): the how-to guides come before the checks and the papers.
PARTS = (
    ("Start here", (0, 0)),
    ("Foundations: mechanisms, accounting, the sampler core", (1, 9)),
    ("Compositional data: the model and the curator's release", (10, 16)),
    ("Compositional data: the analyst's inference", (17, 29)),
    ("The Dirichlet mechanism", (30, 39)),
    ("Data augmentation for any privatised statistic (dapper)", (40, 49)),
    ("Latent classes from noisy margins", (50, 59)),
    ("Methods and studies", (60, 69)),
    ("How-to guides", (90, 99)),
    ("Checks", (70, 79)),
    ("The papers reproduced", (80, 89)),
)


def notebook_pages() -> list[str]:
    """``notebooks/[folder/]NN_topic`` of every committed notebook, in the order of the numbers."""
    sys.path.insert(0, str(ROOT))
    from dplit.export import notebook_paths

    return [str(p.with_suffix("").relative_to(ROOT)) for p in notebook_paths(ROOT)
            if p.with_suffix(".ipynb").exists()]


def notebook_names() -> list[str]:
    return [Path(page).name for page in notebook_pages()]


def toc(pages) -> str:
    """One toctree per part of the book that holds a page, in the reading order."""
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
    pages = notebook_pages()
    linker = Linker(pages)
    for src in (ROOT / "docs").glob("*.md"):
        (dest / src.name).write_text(linker.markdown(src.stem, src.read_text()))
    documented = set(api_modules())   # a private module (_mcmc_moves) has no API page
    homes = {page: module for module, page in module_notebooks().items() if module in documented}
    widgets, folded, dropped = 0, {}, 0
    for page in pages:
        nb = json.loads((ROOT / f"{page}.ipynb").read_text())
        widgets += strip_widgets(nb)
        for key, n in prepare_cells(nb).items():
            folded[key] = folded.get(key, 0) + n
        dropped += dedupe_outputs(nb)
        link_notebook(nb, page, linker)
        number_title(nb, page)
        add_api_link(nb, page, homes.get(page))
        (dest / page).parent.mkdir(parents=True, exist_ok=True)
        (dest / f"{page}.ipynb").write_text(json.dumps(nb))
    index = (dest / "index.md").read_text()
    (dest / "index.md").write_text(index.replace("<!-- NOTEBOOKS -->", toc(pages)))
    modules = api_pages(dest, pages)
    print(f"docs sources in {dest}: {len(pages)} notebooks ({widgets} widget cells with a static note; "
          f"code folded in {folded['folded export']} export and {folded['folded long']} long cells, "
          f"{folded['removed empty']} emptied cells removed, {folded['plumbing lines']} plumbing lines and "
          f"{dropped} repeated outputs dropped; {linker.count} mentions linked), API pages for {len(modules)} modules")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "docs-src")
