"""Sphinx configuration of the dplit documentation site (`make docs` -> build/site/).

Pages: the index (docs/index.md), every committed, executed notebook (copied by docs/prepare.py into
build/docs-src/, never re-executed), and the API reference generated from the docstrings of every
name in each module's ``__all__``. Nothing is fetched at build or view time: the theme (furo) and
MathJax 3 (shipped by the PyPI package sphinx-mathjax-offline) are served from the site's own _static/.
"""

import importlib.util
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import dplit  # noqa: E402

project = "dplit"
author = "dplit developers"
release = version = dplit.__version__
copyright = "dplit developers, MIT licence"

extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.mathjax",
              "sphinx.ext.viewcode"]
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3  # [the map](#map-of-the-notebooks) links to a heading of the same page, as in JupyterLab
# A docstring's `name` (single backticks) is a cross-reference, linked when it names documented API.
default_role = "py:obj"
nb_execution_mode = "off"  # the committed notebooks carry their outputs (and figures)
nb_merge_streams = True
# Markdown that cells display (tables, formulas, links made by docs/prepare.py) is parsed as MyST, like the cells'
# own Markdown: tables render as tables and $...$ is typeset.
nb_render_markdown_format = "myst"
exclude_patterns = ["_build", "**.ipynb_checkpoints", "jupyter_execute"]
# "ref.python": numpydoc types such as "ndarray, shape (n, d)" name attributes of several classes.
suppress_warnings = ["mystnb.unknown_mime_type", "myst.header", "misc.highlighting_failure", "ref.python"]

autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_inherit_docstrings = False  # e.g. concurrent.futures docstrings, not written for Sphinx
autodoc_typehints = "signature"
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_ivar = True  # dataclass Attributes sections as fields, not a second description of each member

html_theme = "furo"
html_title = f"dplit {version}"
# MathJax 3 with its fonts, from the PyPI package sphinx-mathjax-offline (its static/ folder is copied
# into _static/ like the theme's files): no CDN at build or view time. An online reader of the
# published site gets these same files from the site, so offline and online look alike.
_MATHJAX = Path(importlib.util.find_spec("sphinx-mathjax-offline").submodule_search_locations[0]) / "static"
html_static_path = [str(_MATHJAX), str(ROOT / "docs" / "_static")]
mathjax_path = "mathjax/tex-chtml.js"
# The tutorial first (issue 29, item 2): docs/prepare.py tags export cells and long cells hide-input;
# their toggle reads "Show code (...)" (the reason is set per cell). dplit.css keeps wide outputs and
# equations inside the column; dplit.js opens figures full size on click.
nb_code_prompt_show = "Show code"
nb_code_prompt_hide = "Hide code"
html_css_files = ["dplit.css"]
html_js_files = ["dplit.js"]
html_show_sourcelink = False
html_last_updated_fmt = None


def _escape_bars(app, what, name, obj, options, lines):
    """Docstrings here write conditional probabilities as ``E[x | alpha]`` and absolute values as
    ``|a - b|``; reStructuredText would read ``|...|`` as a substitution. Escape the bars (outside
    line blocks and tables, which start with ``|`` or ``+``)."""
    for i, line in enumerate(lines):
        if "|" in line and not line.lstrip().startswith(("|", "+")):
            lines[i] = line.replace("\\|", "|").replace("|", "\\|")


sys.path.insert(0, str(ROOT / "docs"))
import prepare  # noqa: E402

_NAMES = prepare.public_names()
_PAGES = prepare.notebook_pages()
_LITERAL = re.compile(r"``([^`]+)``")
_DEFAULT_ROLE = re.compile(r"(?<![:`\w>])`([^`]+)`(?![`_])")
_PY_ROLE = re.compile(r":(?:py:)?(func|class|obj|meth|data|mod|attr|exc):`([^`<]+)`")
_INLINE_MATH = re.compile(r"(?<![\\$])\$([^$\s][^$]*?[^$\s\\]|[^$\s])\$(?!\$)")
_NOTEBOOK = re.compile(r"\b[Nn]otebooks? (\d\d)\b(?![.,]\d)")


def _math_role(m, line: str) -> str:
    """``$x$`` as :math:, joined to a word it touches by reStructuredText's escaped space (MCMC$_{p1}$)."""
    before = "\\ " if m.start() > 0 and line[m.start() - 1].isalnum() else ""
    after = "\\ " if m.end() < len(line) and line[m.end()].isalnum() else ""
    return f"{before}:math:`{m.group(1)}`{after}"


def _link_names(app, what, name, obj, options, lines):
    """A docstring's mentions link to their pages, as in the notebooks (docs/prepare.py links those): ````dp_mcmc````,
    `dp_mcmc` and :func:`dp_mcmc` name their target in full (so that a name of another module resolves), "notebook
    21" and `21_mcmc` link to the notebook; ``$...$`` (Markdown's inline math) becomes :math:. Doctest lines are
    left alone."""
    by_number = {Path(p).name[:2]: p for p in _PAGES}
    by_name = {Path(p).name: p for p in _PAGES}

    def target(text):
        key = text.lstrip("~.").removesuffix("()")
        return _NAMES.get(key)

    def literal(m):
        text = m.group(1).strip()
        if text in by_name:
            return f":doc:`{text} </{by_name[text]}>`"
        found = target(text)
        if found is None or "<" in text:
            return m.group(0)
        return f":{found[0]}:`{text} <{found[1]}>`"

    def role(m):
        kind, text = m.group(1), m.group(2).strip()
        found = target(text)
        if found is None:
            return m.group(0)
        return f":py:{'mod' if found[0] == 'py:mod' else kind}:`{text.lstrip('~')} <{found[1]}>`"

    def notebook(m):
        page = by_number.get(m.group(1))
        return f":doc:`{m.group(0)} </{page}>`" if page else m.group(0)

    for i, line in enumerate(lines):
        if line.lstrip().startswith((">>>", "...")):
            continue
        line = _DEFAULT_ROLE.sub(literal, line)
        line = _PY_ROLE.sub(role, line)
        line = _LITERAL.sub(literal, line)
        line = _INLINE_MATH.sub(lambda m, text=line: _math_role(m, text), line)
        lines[i] = _NOTEBOOK.sub(notebook, line)


def setup(app):
    app.connect("autodoc-process-docstring", _escape_bars)
    app.connect("autodoc-process-docstring", _link_names)
