"""Open every page of the built site (build/site) in headless Chromium and check it as a reader would.

`make check-docs` runs this after `make docs`. Per page: no console error and no uncaught exception,
no request outside the site (it must work offline: theme, scripts, fonts and MathJax come from the
site itself), every internal link points to an existing page and anchor, every image is decoded
with a non-zero size, and every formula was typeset by MathJax without error.

Then what the reader meets (issue 29, item 2), measured at the 1280 px viewport:

(a) no clipped element: a ``pre``, output, table, image or display equation fails when its content is
    wider than its box (``scrollWidth > clientWidth``) and the box does not scroll (``overflow-x``
    auto/scroll), or when its box reaches past the article column; an element inside a scrolling box
    (within the column) is that box's business. Folded code (a closed ``<details>``) is not measured.
    Boxes that scroll with content wider than they are (an output or equation partly behind a
    scrollbar) are counted and reported, not failed;
(b) no machine path (``/work/``, ``/tmp/``, ``ipykernel_``) in the text of the page, folded code included;
(c) no tool marker (``NBVAL_*``, ``noqa``, ``#| export``, ``#| default_exp``) in the code and outputs
    (notebook cells and ``pre`` blocks, folded code included; prose may name a marker to explain it); the
    module source pages of viewcode (``_modules/``) are exempt: they show the library's source as it is;
(d) on the library notebooks (pages 01-64), where the first figure starts, as a fraction of the page
    height, and the share of the page height taken by displayed code. Reported in a table, never a failure.

Figures (issue 44, item 6): each is shown at MIN_SCALE (0.8) of its natural width or more, and its smallest text is
at least MIN_TEXT_PX (9) CSS px on screen. A PNG does not say how large its text is, so the text size is an estimate
from the code that drew the figure, read from the committed notebook behind the page (``figure_fonts``): the
smallest font size the code names (``fontsize=``, ``labelsize=``, ``titlesize=``, ``font.size``, as a
number or as matplotlib's named sizes), in the cell that shows the figure and in the notebook's functions that cell
calls (transitively), else matplotlib's default of 10 pt (ticks, labels and legends are "medium"); the dots per
inch are a ``dpi=`` the code names, else matplotlib's 100 (the inline backend draws at ``figure.dpi``). On screen:
``px = pt * dpi / 72 * min(1, shown width / natural width)``. Page images are matched to the notebook's PNG
outputs in order, by natural size; an image with no match (a picture in the prose) is not estimated. What the
estimate misses: a size held in a variable or set in another way (``plt.rc`` in an earlier cell, a style sheet),
and text that matplotlib shrinks itself; it is a floor on what the code asks for, not a reading of the pixels.

Screenshots go to build/site-shots/: the top of three pages (index, 15, an API page) and the whole
article column of the how-to "Analyse a release you were given" (when the site has it), notebooks 17, 21, 51, 63 and
papers/80 as a reader sees them (code folded); with ``--save-screenshots`` all of them are also written, compressed,
to docs/screenshots/ (committed; issue 44, item 8), and a screenshot there that this run no longer takes is removed.

The browser is Debian's ``chromium`` driven by Playwright's Python package through
``executable_path`` (Playwright never downloads a browser here). When /usr/bin/chromium is missing,
the script stops with the command that installs it; it installs nothing itself.
"""

from __future__ import annotations

import functools
import http.server
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "build" / "site"
SHOTS = ROOT / "build" / "site-shots"
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SCREENSHOTS = {"index.html": "index.png", "notebooks/15_release.html": "notebook-15_release.png",
               "api/release.html": "api-release.png"}
# Whole pages (full_page=True): what a reader scrolls through, code folded.
FULL_SHOTS = {f"notebooks/{n}.html": f"notebook-{n.split('/')[-1]}.png"
              for n in ("howto/90_analyse_a_release", "17_bootstrap", "21_mcmc", "51_latent_class", "63_atus",
                        "papers/80_guo_simulation_study")}
MACHINE_PATH = re.compile(r"/work/|/tmp/|ipykernel_")
MARKER = re.compile(r"NBVAL_|\bnoqa\b|#\|\s*(?:export|default_exp)\b")
# The allow-list (issue 44): figures shown below MIN_SCALE of their natural width, as a count per page (the current
# offenders, which their notebooks' owners fix by drawing them narrower: a count may only go down), and pages
# linked before they exist. An entry no longer needed fails the check, so the list can only shrink.
ALLOW = ROOT / "docs" / "check_site_allow.toml"
MIN_SCALE = 0.8
# The classes of what a reader should never meet, counted over the site (each must be 0).
MIN_TEXT_PX = 9
CLASSES = ("raw pipe tables", "raw TeX", "unlinked mentions", "broken links/anchors", "scrollbars",
           f"figures below {MIN_SCALE}", f"text below {MIN_TEXT_PX} px")
# matplotlib's defaults: font.size 10 pt (tick labels, axis labels and legends are "medium"), figure.dpi 100, and its
# named sizes relative to font.size.
FONT_PT, FIG_DPI = 10.0, 100.0
NAMED_SIZES = {"xx-small": 0.579, "x-small": 0.694, "small": 0.833, "medium": 1.0, "large": 1.2, "x-large": 1.44,
               "xx-large": 1.728, "smaller": 0.833, "larger": 1.2}
FONT_ARG = re.compile(r"""\b(?:fontsize|labelsize|titlesize|title_fontsize)\s*=\s*(?:(\d+(?:\.\d+)?)\b|["']([a-z-]+)["'])"""
                      r"""|["'](?:font\.size|[a-z]+\.(?:labelsize|titlesize|fontsize))["']\s*[:,\]]\s*=?\s*(\d+(?:\.\d+)?)""")
DPI_ARG = re.compile(r"\bdpi\s*=\s*(\d+(?:\.\d+)?)")
METHOD_PAGE = re.compile(r"^notebooks/(0[1-9]|[1-6][0-9])_")   # the library notebooks (not checks/, papers/)


def ensure_chromium() -> str:
    """Path of Debian's chromium; when it is missing, stop with the command that installs it.

    A documentation check never changes the system: only CI's own script (.ci/run) installs packages.
    """
    if Path(CHROMIUM).exists():
        return CHROMIUM
    sys.exit(f"check-docs: {CHROMIUM} is missing. Install Debian's package, then run again:\n"
             f"  sudo apt-get install -y chromium")


def serve(folder: Path):
    """A static HTTP server on a free loopback port, in a thread; returns (server, base URL)."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    class Server(http.server.ThreadingHTTPServer):
        def handle_error(self, request, client_address):  # a page closed mid-transfer: not a site error
            if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
                super().handle_error(request, client_address)

    handler = functools.partial(Quiet, directory=str(folder))
    server = Server(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


@functools.cache
def anchors(path: Path) -> frozenset:
    """The ids and names of one HTML file."""
    text = path.read_text(errors="replace")
    return frozenset(re.findall(r'\b(?:id|name)="([^"]+)"', text))


def link_problems(page: str, hrefs: list[str], base: str, site: Path | None = None,
                  pending: frozenset = frozenset()) -> list[str]:
    """Internal links of one page whose target file or anchor does not exist (a page of ``pending``, linked before
    it is written, is allowed while it is missing)."""
    site = SITE if site is None else site
    problems = []
    for href in hrefs:
        url = urljoin(base + page, href)
        parts = urlparse(url)
        if not url.startswith(base) or parts.scheme not in ("http", "https"):
            continue
        rel = unquote(parts.path[len(urlparse(base).path):]) or "index.html"
        target = site / rel
        if target.is_dir():
            target = target / "index.html"
        if not target.exists():
            if rel not in pending:
                problems.append(f"broken link {href!r} -> {rel}")
        elif parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in anchors(target):
            problems.append(f"missing anchor {href!r}")
    return problems


MATH_DONE = """async () => {
  if (!document.querySelector('.math.notranslate')) return true;
  for (let i = 0; i < 600 && !(window.MathJax && MathJax.startup && MathJax.startup.promise); i++)
    await new Promise(r => setTimeout(r, 50));
  await MathJax.startup.promise;
  return true;
}"""

PAGE_FACTS = """() => ({
  hrefs: Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href')),
  images: Array.from(document.images).map(i => ({src: i.getAttribute('src'), ok: i.complete && i.naturalWidth > 0,
                                                  w: i.naturalWidth, h: i.naturalHeight})),
  math: document.querySelectorAll('.math.notranslate').length,
  mathUnrendered: Array.from(document.querySelectorAll('.math.notranslate')).filter(
      m => !m.querySelector('mjx-container')).length,
  mathErrors: document.querySelectorAll('mjx-merror, [data-mjx-error]').length,
})"""


# What the reader meets: clipped elements, the page's text (folded code included, scripts and styles not),
# where the first figure starts and how much of the page displayed code takes.
READER_FACTS = """() => {
  const col = document.querySelector('article[role="main"]') || document.body;
  const colBox = col.getBoundingClientRect();
  const scrolls = el => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
  const insideScroller = el => { for (let a = el.parentElement; a && a !== col; a = a.parentElement)
                                   if (scrolls(a)) return true;
                                 return false; };
  const shown = el => !el.closest('details:not([open])') && el.getClientRects().length > 0;
  const clipped = [];
  const sel = 'pre, div.output, div.cell_output, table, div.table-wrapper, img, div.math-wrapper, div.math, ' +
              'mjx-container[display="true"]';
  for (const el of col.querySelectorAll(sel)) {
    if (!shown(el) || insideScroller(el)) continue;  // inside a scroller, that box is the one that must fit
    const box = el.getBoundingClientRect();
    const wider = el.scrollWidth > el.clientWidth + 1 && !scrolls(el), past = box.right > colBox.right + 1;
    if (wider || past) clipped.push(el);
  }
  // One report per offender: the innermost (an output box is wide because the pre in it is).
  const offenders = clipped.filter(a => !clipped.some(b => b !== a && a.contains(b))).map(el => ({
      what: el.tagName.toLowerCase() + (el.className ? '.' + String(el.className).trim().split(/\\s+/).join('.') : ''),
      content: el.scrollWidth, box: el.clientWidth,
      text: (el.textContent || el.getAttribute('src') || '').trim().slice(0, 60)}));
  // Outputs and equations wider than their box that scroll: not clipped, but partly behind a scrollbar.
  const scrolled = Array.from(col.querySelectorAll('*')).filter(el => el.scrollWidth > el.clientWidth + 1
      && scrolls(el) && shown(el) && !el.closest('div.cell_input')).length;
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {acceptNode: n =>
      n.parentElement.closest('script, style, noscript') ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
  const parts = [], cellParts = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    parts.push(n.data);
    if (n.parentElement.closest('div.cell, pre')) cellParts.push(n.data);
  }
  const height = document.documentElement.scrollHeight;
  const img = Array.from(col.querySelectorAll('img')).find(shown);
  const code = Array.from(col.querySelectorAll('div.cell_input')).filter(shown)
      .reduce((s, el) => s + el.getBoundingClientRect().height, 0);
  return {clipped: offenders, scrolled, text: parts.join(' '), cellText: cellParts.join(' '), height,
          column: [colBox.left + window.scrollX, colBox.width],
          firstFigure: img ? (img.getBoundingClientRect().top + window.scrollY) / height : null,
          codeShare: code / height};
}"""


# What a book's reader also needs (issue 44): generated Markdown rendered (no pipe table, no TeX source outside
# typeset math), every mention of a notebook or of a public dplit name a link, no horizontal scrollbar in code or
# outputs, figures shown at 0.8 of their natural width or more. ``known`` is passed in: the notebook names and
# numbers of the site and the public dplit names.
BOOK_FACTS = r"""(known) => {
  const col = document.querySelector('article[role="main"]') || document.body;
  const shown = el => !el.closest('details:not([open])') && el.getClientRects().length > 0;
  const BLOCK = 'p, li, td, th, dd, dt, h1, h2, h3, h4, h5, h6, blockquote, div';
  // (1) Source text that should have been rendered: prose and rendered outputs, not code and not math.
  const CODE = 'pre, code, kbd, samp, script, style, mjx-container, .math, div.cell_input, .highlight, .sig';
  const blocks = new Map();
  const walker = document.createTreeWalker(col, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.parentElement.closest(CODE)) continue;
    const block = n.parentElement.closest(BLOCK) || col;
    blocks.set(block, (blocks.get(block) || '') + n.data);
  }
  // A pipe table's separator row (its dashes may have become em dashes) or two lines that start and end with a bar.
  const PIPE = /\|\s*:?(?:-{3,}|[\u2013\u2014]+):?\s*(\||$)|^\s*\|.*\|\s*\n\s*\|.*\|\s*$/m, TEX = /\$[^$\s][^$]*\$|\\[A-Za-z]{2,}|_\{/;
  const raw = [];
  for (const [block, text] of blocks) {
    const m = PIPE.exec(text) ? ['pipe table', PIPE.exec(text)] : TEX.exec(text) ? ['TeX source', TEX.exec(text)] : null;
    if (m) raw.push({kind: m[0], text: text.slice(Math.max(0, m[1].index - 30), m[1].index + 40).replace(/\s+/g, ' ')});
  }
  // (2) Mentions of a notebook (prose: "notebook 21", "21_mcmc", "papers/80", "checks/73"; a code span holding
  // exactly such a name) and of a public dplit name (a code span: `dplit.mcmc.dp_mcmc`, `dp_mcmc`, `dp_mcmc()`)
  // that are not inside a link.
  const names = new Set(known.notebooks), numbers = new Set(known.numbers), api = new Set(known.api);
  const MENTION = /\b[Nn]otebooks? (\d\d)\b(?![.,]\d)|\b(?:papers|checks|howto)\/(\d\d)(?:_[a-z0-9_]+)?\b|\b(\d\d_[a-z][a-z0-9_]*)\b/g;
  const isMention = m => m[1] ? numbers.has(m[1]) : m[2] ? numbers.has(m[2]) : names.has(m[3]);
  const SKIP = 'a, pre, script, style, mjx-container, .math, div.cell_input, .highlight, .sig, nav, .headerlink, h1';
  const unlinked = [];
  const w2 = document.createTreeWalker(col, NodeFilter.SHOW_TEXT);
  for (let n = w2.nextNode(); n; n = w2.nextNode()) {
    const el = n.parentElement;
    if (el.closest(SKIP)) continue;
    const code = el.closest('code');
    if (code) {
      if (code.firstChild !== n && code.textContent !== n.data) continue;   // one verdict per code span
      const t = code.textContent.trim().replace(/\(\)$/, '');
      const nb = t.replace(/^(notebooks\/)?((papers|checks|howto)\/)?/, '').replace(/\.(py|ipynb)$/, '');
      if (names.has(nb) || api.has(t) || (t.startsWith('dplit.') && api.has(t)))
        unlinked.push({what: t, text: t});
      continue;
    }
    for (const m of n.data.matchAll(MENTION))
      if (isMention(m)) unlinked.push({what: m[0], text: n.data.slice(Math.max(0, m.index - 30), m.index + 40).trim()});
  }
  // (3) Horizontal scrollbars (and clipped content) in code and outputs: every pre, table and output box whose
  // content is wider than its box, wherever it sits; one report per nest (the innermost).
  const WIDE = 'pre, table, div.highlight, div.cell_input, div.cell_output, div.output, div.table-wrapper, ' +
               'div.output.text_html, div.output.text_markdown';
  const wide = Array.from(col.querySelectorAll(WIDE)).filter(el => shown(el) && el.scrollWidth > el.clientWidth + 1);
  const scrollbars = wide.filter(a => !wide.some(b => b !== a && a.contains(b))).map(el => ({
      what: el.tagName.toLowerCase() + (el.className ? '.' + String(el.className).trim().split(/\s+/).join('.') : ''),
      content: el.scrollWidth, box: el.clientWidth, text: (el.textContent || '').trim().slice(0, 60)}));
  const equations = Array.from(col.querySelectorAll('div.math-wrapper, div.math'))
      .filter(el => shown(el) && el.scrollWidth > el.clientWidth + 1 && !el.querySelector('div.math-wrapper, div.math')).length;
  // (4) Figures: the displayed width against the natural width.
  const figures = Array.from(col.querySelectorAll('img')).filter(i => shown(i) && i.naturalWidth > 0).map(i => ({
      src: i.getAttribute('src'), natural: i.naturalWidth, naturalHeight: i.naturalHeight,
      shownWidth: Math.round(i.getBoundingClientRect().width),
      ratio: i.getBoundingClientRect().width / i.naturalWidth}));
  return {raw, unlinked, scrollbars, equations, figures};
}"""


def book_page(page: str) -> bool:
    """Pages held to the book's checks (rendered Markdown, links): the index, the notebooks and the API pages."""
    return page == "index.html" or page.startswith(("notebooks/", "api/"))


def book_problems(page: str, book: dict) -> list[str]:
    """Source text shown unrendered, unlinked mentions and scrollbars of one page, one line each."""
    problems = [f"raw {r['kind']}: ...{r['text']}..." for r in book["raw"]]
    problems += [f"unlinked mention {u['what']!r}: ...{u['text']}..." for u in book["unlinked"]]
    problems += [f"scrollbar {b['what']} (content {b['content']} px in a {b['box']} px box): {b['text']!r}"
                 for b in book["scrollbars"]]
    return problems


def small_figures(book: dict) -> list[dict]:
    """The figures of one page shown below MIN_SCALE of their natural width."""
    return [f for f in book["figures"] if f["ratio"] < MIN_SCALE - 1e-9]


def _cell_source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def font_sizes(code: str) -> list[float]:
    """The font sizes in points that a piece of matplotlib code names (numbers and named sizes)."""
    sizes = []
    for number, named, rc_number in FONT_ARG.findall(code):
        if number or rc_number:
            sizes.append(float(number or rc_number))
        elif named in NAMED_SIZES:
            sizes.append(NAMED_SIZES[named] * FONT_PT)
    return sizes


def figure_fonts(nb: dict) -> list[dict]:
    """Per PNG output of a notebook, in order: its natural size and the estimate of its smallest text (see the
    module's docstring): ``{"w", "h", "pt", "dpi"}``. ``pt`` is the smallest size named by the cell that shows the
    figure or by a function of the notebook it calls (transitively), else FONT_PT; ``dpi`` likewise, else FIG_DPI."""
    import base64
    import io

    from PIL import Image

    sources = [_cell_source(c) for c in nb.get("cells", []) if c.get("cell_type") == "code"]
    defs: dict[str, str] = {}
    for src in sources:   # each top-level function's body: from its def to the next top-level line
        for m in re.finditer(r"^def (\w+)\(.*?(?=^\S|\Z)", src, flags=re.M | re.S):
            defs[m.group(1)] = m.group(0)
    out = []
    for cell in nb.get("cells", []):
        pngs = [o["data"]["image/png"] for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
        if not pngs:
            continue
        code, seen, todo = _cell_source(cell), set(), [_cell_source(cell)]
        while todo:   # the cell and every notebook function it reaches
            for name in re.findall(r"\b(\w+)\(", todo.pop()):
                if name in defs and name not in seen:
                    seen.add(name)
                    todo.append(defs[name])
                    code += "\n" + defs[name]
        pt = min(font_sizes(code) + [FONT_PT])
        dpis = [float(d) for d in DPI_ARG.findall(code)]
        for png in pngs:
            data = png if isinstance(png, str) else "".join(png)
            with Image.open(io.BytesIO(base64.b64decode(data))) as image:
                w, h = image.size
            out.append({"w": w, "h": h, "pt": pt, "dpi": min(dpis) if dpis else FIG_DPI})
    return out


def small_text(figures: list[dict], fonts: list[dict]) -> list[dict]:
    """The page's figures whose smallest text is shown below MIN_TEXT_PX: each page image is matched, in order, to
    the next notebook figure of the same natural size (``fonts``, from figure_fonts); unmatched images are skipped."""
    out, start = [], 0
    for f in figures:
        for k in range(start, len(fonts)):
            if (fonts[k]["w"], fonts[k]["h"]) == (f["natural"], f.get("naturalHeight", fonts[k]["h"])):
                px = fonts[k]["pt"] * fonts[k]["dpi"] / 72 * min(1.0, f["ratio"])
                if px < MIN_TEXT_PX - 1e-9:
                    out.append({**f, "pt": fonts[k]["pt"], "dpi": fonts[k]["dpi"], "px": px})
                start = k + 1
                break
    return out


def page_fonts(page: str, source_root: Path = ROOT) -> list[dict]:
    """figure_fonts of the committed notebook behind a notebook page (empty for other pages)."""
    nb = source_root / Path(page).with_suffix(".ipynb")
    if not page.startswith("notebooks/") or not nb.exists():
        return []
    return figure_fonts(json.loads(nb.read_text()))


def read_allow(path: Path = ALLOW) -> dict:
    """The allow-list: ``{"figures": {page: count}, "text": {page: count}, "pending": [page, ...]}`` (empty when the
    file is missing)."""
    import tomllib

    if not path.exists():
        return {"figures": {}, "text": {}, "pending": []}
    data = tomllib.loads(path.read_text())
    return {"figures": dict(data.get("figures", {})), "text": dict(data.get("text", {})),
            "pending": list(data.get("pending", {}).get("pages", []))}


def allow_problems(small: dict[str, int], allow: dict, site: Path,
                   text: dict[str, int] | None = None) -> dict[str, list[str]]:
    """Figures below MIN_SCALE, and figures with text below MIN_TEXT_PX (``text``), beyond a page's allowance,
    allowances no longer needed, and pending pages that now exist (each must leave the allow-list); by page."""
    out: dict[str, list[str]] = {}
    for found, section, what in ((small, "figures", f"figures shown below {MIN_SCALE} of their natural width"),
                                 (text or {}, "text", f"figures with text below {MIN_TEXT_PX} px on screen")):
        allowed_by_page = allow.get(section, {})
        for page in sorted(set(found) | set(allowed_by_page)):
            have, allowed = found.get(page, 0), int(allowed_by_page.get(page, 0))
            if have > allowed:
                out.setdefault(page, []).append(f"{have} {what} ({allowed} allowed in [{section}] of {ALLOW.name})")
            elif have < allowed:
                out.setdefault(page, []).append(f"[{section}] of {ALLOW.name} allows {allowed}, the page has {have}: "
                                                f"lower the count (the list only shrinks)")
    for page in allow["pending"]:
        if (site / page).exists():
            out.setdefault(page, []).append(f"the page exists now: remove it from the pending pages of {ALLOW.name}")
    return out


def count_classes(problems: list[str], n_small: int = 0, n_text: int = 0) -> dict[str, int]:
    """Problem lines of one page counted by class (CLASSES)."""
    def n(prefix):
        return sum(p.startswith(prefix) for p in problems)
    return {"raw pipe tables": n("raw pipe table"), "raw TeX": n("raw TeX"), "unlinked mentions": n("unlinked mention"),
            "broken links/anchors": n("broken link") + n("missing anchor"), "scrollbars": n("scrollbar"),
            f"figures below {MIN_SCALE}": n_small, f"text below {MIN_TEXT_PX} px": n_text}


def text_problems(page: str, text: str, cell_text: str) -> list[str]:
    """Machine paths in the text of one page, tool markers in its code and outputs (``cell_text``: notebook
    cells and ``pre`` blocks; prose may name a marker, as 00_index does to explain the export); each
    distinct one once, with its context."""
    problems, seen = [], set()
    checks = [("machine path", MACHINE_PATH, text)]
    if not page.startswith("_modules/"):
        checks.append(("tool marker", MARKER, cell_text))
    for label, pattern, where in checks:
        for m in pattern.finditer(where):
            around = " ".join(where[max(0, m.start() - 40):m.end() + 40].split())
            if (label, around) not in seen:
                seen.add((label, around))
                problems.append(f"{label} {m.group(0)!r} in: ...{around}...")
    return problems


def clip_problems(clipped: list[dict]) -> list[str]:
    """One line per clipped element."""
    return [f"clipped {c['what']} (content {c['content']} px in a {c['box']} px box): {c['text']!r}"
            for c in clipped]


def reader_table(rows: list[dict]) -> str:
    """The per-page table: clipped and scrolled elements, markers, machine paths, page height, first-figure
    fraction, code share."""
    lines = [f"{'page':<40s} {'clipped':>7s} {'scroll':>6s} {'markers':>7s} {'paths':>5s} {'height px':>9s} "
             f"{'1st fig':>7s} {'code':>5s}"]
    for r in rows:
        fig = "-" if r["firstFigure"] is None else f"{r['firstFigure']:.2f}"
        lines.append(f"{r['page']:<40s} {r['clipped']:>7d} {r['scrolled']:>6d} {r['markers']:>7d} {r['paths']:>5d} "
                     f"{r['height']:>9d} {fig:>7s} {r['codeShare']:>5.2f}")
    return "\n".join(lines)


def compress_shot(src: Path, dest: Path, colors: int = 48) -> Path:
    """A screenshot as a palette PNG (text, code and figures stay legible; a page of 23,000 px is ~1.4 MB)."""
    from PIL import Image

    with Image.open(src) as image:
        small = image.convert("RGB").quantize(colors=colors, method=Image.Quantize.MEDIANCUT,
                                              dither=Image.Dither.NONE)
    dest.parent.mkdir(parents=True, exist_ok=True)
    small.save(dest, "PNG", optimize=True)
    return dest


def save_screenshots(pages: list[str], folder: Path | None = None) -> list[Path]:
    """Compressed copies of this run's screenshots (of the pages the site has) in docs/screenshots/; a PNG there that
    the run does not take (an old name) is removed, so the folder holds exactly the current set."""
    folder = ROOT / "docs" / "screenshots" if folder is None else folder
    taken = {name: page for page, name in {**SCREENSHOTS, **FULL_SHOTS}.items()
             if page in pages and (SHOTS / name).exists()}
    written = []
    for name in sorted(taken):
        dest = compress_shot(SHOTS / name, folder / name)
        written.append(dest)
        print(f"  {dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest}: {dest.stat().st_size // 1024} KB")
    for old in sorted(folder.glob("*.png")):
        if old.name not in taken:
            old.unlink()
            print(f"  removed {old.name} (no longer taken)")
    return written


def _harmless(message) -> bool:
    """A console error that is not the site's: the browser's own favicon request."""
    return (message.location or {}).get("url", "").endswith("favicon.ico")


def check_page(context, base: str, page: str, known: dict | None = None, site: Path | None = None,
               pending: frozenset = frozenset(), shots: bool = True,
               source_root: Path = ROOT) -> tuple[list[str], dict]:
    """Open one page; returns its problems and facts (``facts["book"]``: what BOOK_FACTS found, on a book page, with
    ``"text"``: its figures whose smallest text is below MIN_TEXT_PX, from the notebook under ``source_root``)."""
    problems: list[str] = []
    tab = context.new_page()
    tab.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
           if m.type == "error" and not _harmless(m) else None)
    tab.on("pageerror", lambda e: problems.append(f"uncaught exception: {e}"))
    tab.on("requestfailed", lambda r: problems.append(f"request failed: {r.url} ({r.failure})")
           if r.url.startswith(base) else None)
    tab.on("response", lambda r: problems.append(f"HTTP {r.status}: {r.url}")
           if r.status >= 400 and not r.url.endswith("/favicon.ico") else None)
    tab.goto(base + page, wait_until="load")
    tab.evaluate(MATH_DONE)
    facts = tab.evaluate(PAGE_FACTS)
    problems += link_problems(page, facts["hrefs"], base, site, pending)
    problems += [f"image not decoded: {i['src']}" for i in facts["images"] if not i["ok"]]
    if facts["mathUnrendered"] or facts["mathErrors"]:
        problems.append(f"math: {facts['mathUnrendered']} of {facts['math']} formulas not typeset, "
                        f"{facts['mathErrors']} MathJax errors")
    reader = tab.evaluate(READER_FACTS)
    found = text_problems(page, reader["text"], reader["cellText"])
    reader_row = {"page": page, "clipped": len(reader["clipped"]), "scrolled": reader["scrolled"],
                  "height": reader["height"],
                  "markers": sum(p.startswith("tool marker") for p in found),
                  "paths": sum(p.startswith("machine path") for p in found),
                  "firstFigure": reader["firstFigure"], "codeShare": reader["codeShare"]}
    problems += clip_problems(reader["clipped"]) + found
    facts["reader"] = reader_row
    facts["book"] = {"raw": [], "unlinked": [], "scrollbars": [], "equations": 0, "figures": []}
    if book_page(page):
        facts["book"] = tab.evaluate(BOOK_FACTS, known or {"notebooks": [], "numbers": [], "api": []})
        problems += book_problems(page, facts["book"])
    facts["book"]["text"] = small_text(facts["book"]["figures"], page_fonts(page, source_root))
    reader_row["equations"] = facts["book"]["equations"]
    if shots and page in SCREENSHOTS:
        tab.screenshot(path=str(SHOTS / SCREENSHOTS[page]), full_page=False)
    if shots and page in FULL_SHOTS:  # the article column (with a margin), top to bottom
        left, width = reader["column"]
        tab.screenshot(path=str(SHOTS / FULL_SHOTS[page]), full_page=True,
                       clip={"x": max(0, left - 16), "y": 0, "width": width + 32, "height": reader["height"]})
    tab.close()
    return problems, facts


def write_compare_report(folder: Path) -> Path:
    """Run `dplit release` and `dplit compare` on the shipped example as a user would; the report goes into the
    site folder, so that it is opened and checked like every page (its figure must decode)."""
    folder.mkdir(parents=True, exist_ok=True)
    rel, out = folder / "release.json", folder / "compare.html"
    cli = [sys.executable, "-m", "dplit"]
    subprocess.run(cli + ["release", str(ROOT / "examples" / "minutes.csv"), "--close", "--eps1", "0.75", "--eps2",
                          "0.25", "--seed", "1", "--out", str(rel), "--force"], check=True, capture_output=True)
    # every method with its own default length (--n-iter would be refused: DPBoots and DPABC run no chain)
    subprocess.run(cli + ["compare", str(rel), "--seed", "1", "--out", str(out), "--force"],
                   check=True, capture_output=True)
    return out


def expected_figures(page: str) -> int:
    """Images in the committed notebook behind a notebook page, 1 for a compare report (0 for other pages)."""
    if page.startswith("reports/"):
        return 1
    if not page.startswith("notebooks/"):
        return 0
    nb = ROOT / Path(page).with_suffix(".ipynb")
    if not nb.exists():
        return 0
    cells = json.loads(nb.read_text())["cells"]
    return sum("image/png" in out.get("data", {}) for c in cells for out in c.get("outputs", []))


def known_names() -> dict:
    """What BOOK_FACTS counts as a mention: the notebook names and numbers, and the public dplit names (bare and
    dotted), as docs/prepare.py links them."""
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import prepare
    finally:
        sys.path.pop(0)
    names = prepare.notebook_names()
    return {"notebooks": names, "numbers": sorted({n[:2] for n in names}), "api": sorted(prepare.public_names())}


# The planted pages of the self-check: one of each class the site must never show, and what is fine beside it.
PLANTED = """<!doctype html><html><body style="margin:0"><div style="width:900px">
<article role="main" style="width:600px">
<h1>99 · A planted page</h1>
<p>| method | verdict |
|---|---|
| DPMCMC_p1 | holds |</p>
<p>The weight of category j is $\\alpha_j$ and the null is P(H_{0,2}).</p>
<p>Typeset math is fine: <span class="math">\\(\\alpha_j\\)</span>; so is code: <code>f"$\\alpha_{j}$"</code>.</p>
<p>The chain of notebook 21 runs <code>dp_mcmc</code>; <a href="21_mcmc.html">notebook 21</a> and
   <a href="21_mcmc.html"><code>dp_mcmc</code></a> are linked; notebook 99 is not a notebook of this site.</p>
<p><a href="../index.html#nowhere">a missing anchor</a>, <a href="gone.html">a missing page</a>,
   <a href="howto/90_pending.html">a page being written</a>.</p>
<div class="cell"><div class="cell_output"><div class="output">
<pre style="overflow-x: auto; white-space: pre">{wide}</pre></div>
<div class="output"><pre style="white-space: pre-wrap; overflow-wrap: anywhere">{wide}</pre></div>
<div class="output"><img src="wide.png" style="max-width: 100%"><img src="narrow.png"></div>
<div class="output"><img src="legend.png"></div></div></div>
</article></div></body></html>"""
PLANTED_COUNTS = {"raw pipe tables": 1, "raw TeX": 1, "unlinked mentions": 2, "broken links/anchors": 2,
                  "scrollbars": 1, f"figures below {MIN_SCALE}": 1, f"text below {MIN_TEXT_PX} px": 2}


def planted_notebook(folder: Path) -> dict:
    """The notebook behind the planted page: its three figures' PNGs in the order the page shows them, drawn by code
    that names its fonts. The wide one (default 10 pt, shown at 0.3: 4.2 px) and the legend one (6 pt at 72 dpi,
    shown whole: 6 px, the 4 px legends of issue 44) fail the text rule; the narrow one (7 pt through a helper
    function, 9.7 px) passes."""
    import base64

    def png(name):
        return {"output_type": "display_data", "metadata": {},
                "data": {"image/png": base64.b64encode((folder / f"{name}.png").read_bytes()).decode()}}

    def code(source, *outputs):
        return {"cell_type": "code", "metadata": {}, "execution_count": None, "source": source,
                "outputs": list(outputs)}
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        code("def style(ax):\n    ax.legend(fontsize=7)\n"),
        code("fig, ax = plt.subplots(figsize=(20, 0.4))\nx = rng.normal(size=3)\n", png("wide")),
        code("fig, ax = plt.subplots(figsize=(2, 0.4))\nstyle(ax)\n", png("narrow")),
        code("fig, ax = plt.subplots(figsize=(300 / 72, 60 / 72), dpi=72)\nax.legend(fontsize='x-small')\n"
             "ax.set_title('t', fontsize=6)\n", png("legend")),
    ]}


def self_check(context) -> tuple[dict, list[str]]:
    """Run the page checks on the planted pages (a folder served like the site); returns the counts by class and
    the problem lines. Every class must be caught exactly as planted (PLANTED_COUNTS)."""
    from PIL import Image

    folder = Path(tempfile.mkdtemp(prefix="dplit-planted-"))
    try:
        (folder / "notebooks").mkdir()
        (folder / "index.html").write_text("<!doctype html><html><body><p id='top'>index</p></body></html>")
        (folder / "notebooks" / "21_mcmc.html").write_text("<!doctype html><html><body>21</body></html>")
        (folder / "notebooks" / "99_planted.html").write_text(PLANTED.replace("{wide}", "a wide line " * 40))
        sizes = {"wide": (2000, 40), "narrow": (200, 40), "legend": (300, 60)}
        for name, size in sizes.items():
            Image.new("RGB", size, "white").save(folder / "notebooks" / f"{name}.png")
        (folder / "notebooks" / "99_planted.ipynb").write_text(json.dumps(planted_notebook(folder / "notebooks")))
        known = {"notebooks": ["21_mcmc"], "numbers": ["21"], "api": ["dp_mcmc", "dplit.mcmc.dp_mcmc"]}
        server, base = serve(folder)
        try:
            problems, facts = check_page(context, base, "notebooks/99_planted.html", known, folder,
                                         frozenset({"notebooks/howto/90_pending.html"}), shots=False,
                                         source_root=folder)
        finally:
            server.shutdown()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return count_classes(problems, len(small_figures(facts["book"])), len(facts["book"]["text"])), problems


def class_table(counts: dict[str, dict[str, int]]) -> str:
    """Pages with any count, one row each, and the total."""
    short = ["tables", "TeX", "unlinked", "links", "scroll", f"fig<{MIN_SCALE}", f"txt<{MIN_TEXT_PX}"]
    lines = [f"{'page':<52s} " + " ".join(f"{h:>8s}" for h in short)]
    total = {c: 0 for c in CLASSES}
    for page, row in sorted(counts.items()):
        for c in CLASSES:
            total[c] += row[c]
        if any(row.values()):
            lines.append(f"{page:<52s} " + " ".join(f"{row[c]:>8d}" for c in CLASSES))
    lines.append(f"{'total':<52s} " + " ".join(f"{total[c]:>8d}" for c in CLASSES))
    return "\n".join(lines)


def main(save_shots: bool = False, site: Path | None = None) -> int:
    """Check every page of ``site`` (build/site); with ``save_shots`` (``--save-screenshots``), also write compressed
    copies of the screenshots into docs/screenshots/ (committed, for the README and the issue tracker).
    The planted pages are checked first: a class they do not show caught fails the run."""
    from playwright.sync_api import sync_playwright

    site = SITE if site is None else site
    if not (site / "index.html").exists():
        sys.exit(f"check-docs: {site}/index.html is missing: run `make docs` first")
    executable = ensure_chromium()
    SHOTS.mkdir(parents=True, exist_ok=True)
    write_compare_report(site / "reports")
    pages = sorted(str(p.relative_to(site)) for p in site.rglob("*.html"))
    allow = read_allow()
    known = known_names()
    server, base = serve(site)
    profile = tempfile.mkdtemp(prefix="dplit-chromium-")
    failures, external, counts, small, tiny = {}, [], {}, {}, {}
    try:
        with sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(
                profile, executable_path=executable, headless=True, args=FLAGS,
                viewport={"width": 1280, "height": 860})
            planted, _ = self_check(context)
            if planted != PLANTED_COUNTS:
                failures["(self-check)"] = [f"the planted page gives {planted}, expected {PLANTED_COUNTS}"]
            print(f"check-docs: the planted page is caught in every class: {planted}")

            def only_local(route):  # the site must not need anything from outside
                if route.request.url.startswith(base) or route.request.url.startswith("data:"):
                    return route.continue_()
                external.append(route.request.url)
                return route.abort()

            context.route("**/*", only_local)
            n_images = n_math = 0
            rows = []
            for page in pages:
                problems, facts = check_page(context, base, page, known, site, frozenset(allow["pending"]))
                want = expected_figures(page)
                got = sum(1 for i in facts["images"] if i["ok"] and i["w"] > 0 and i["h"] > 0)
                if got < want:
                    problems.append(f"{got} decoded images, but the notebook holds {want} figures")
                n_images += got
                n_math += facts["math"]
                rows.append(facts["reader"])
                few = small_figures(facts["book"])
                if few:
                    small[page] = few
                if facts["book"]["text"]:
                    tiny[page] = facts["book"]["text"]
                if book_page(page):
                    counts[page] = count_classes(problems, len(few), len(facts["book"]["text"]))
                if problems:
                    failures[page] = problems
            context.close()
    finally:
        server.shutdown()
        shutil.rmtree(profile, ignore_errors=True)
    for url in sorted(set(external)):
        failures.setdefault("(any page)", []).append(f"request outside the site: {url}")
    for page, problems in allow_problems({p: len(f) for p, f in small.items()}, allow, site,
                                         {p: len(f) for p, f in tiny.items()}).items():
        failures.setdefault(page, []).extend(problems)
    print(f"check-docs: {len(pages)} pages, {n_images} images decoded, {n_math} formulas typeset; "
          f"screenshots in {SHOTS.relative_to(ROOT)}/")
    shown = [r for r in rows if r["page"].startswith("notebooks/") or r["clipped"] or r["markers"] or r["paths"]]
    print("What the reader meets (scroll: outputs and equations wider than their box, which scroll;"
          " 1st fig: top of the first figure / page height; code: displayed code / page height):")
    print(reader_table(shown))
    late = [r["page"] for r in rows if METHOD_PAGE.match(r["page"]) and (r["firstFigure"] or 0) > 1 / 3]
    if late:
        print(f"first figure below the first third (reported, not a failure): {', '.join(late)}")
    wide_eq = sum(r.get("equations", 0) for r in rows)
    print(f"display equations wider than the column (they scroll; reported, not a failure): {wide_eq}")
    print("The book's classes by page (each total must be 0; figures: beyond the allow-list "
          f"{ALLOW.relative_to(ROOT)}):")
    print(class_table(counts))
    if small:
        print(f"figures shown below {MIN_SCALE} of their natural width (page: shown/natural px):")
        for page, few in sorted(small.items()):
            print(f"  {page}: " + ", ".join(f"{f['shownWidth']}/{f['natural']} ({f['ratio']:.2f})" for f in few))
    if tiny:
        print(f"figures whose smallest text is below {MIN_TEXT_PX} px on screen (page: pt at dpi, scale -> px):")
        for page, few in sorted(tiny.items()):
            print(f"  {page}: " + ", ".join(f"{f['pt']:g} pt at {f['dpi']:g} dpi, {min(1, f['ratio']):.2f} -> "
                                            f"{f['px']:.1f} px" for f in few))
    for page, problems in failures.items():
        for p in problems[:10]:
            print(f"  {page}: {p}")
        if len(problems) > 10:
            print(f"  {page}: ... and {len(problems) - 10} more")
    if save_shots:
        save_screenshots(pages)
    if failures:
        print(f"check-docs: {len(failures)} page(s) with problems")
        return 1
    print("check-docs: every page passed")
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(main(save_shots="--save-screenshots" in args,
                  site=Path(args[args.index("--site") + 1]).resolve() if "--site" in args else None))
