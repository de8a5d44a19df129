"""The documentation check: `make check-docs` without chromium (one install command, a non-zero exit, no system
change), and the pure functions of docs/prepare.py (marker stripping, folding, machine paths) and docs/check_site.py
(the reader checks), each with a planted case."""

import json
import re
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


def _docs_module(name):
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        return __import__(name)
    finally:
        sys.path.pop(0)


def test_prepare_strips_tool_markers():
    prepare = _docs_module("prepare")
    source = ("# NBVAL_IGNORE_OUTPUT\n#| export\n\nimport pandas as pd  # noqa: E402\n"
              "f = lambda t: t   # noqa: E731  density of t = log v\n"
              "except_ = 1  # noqa: BLE001 - handed to the caller\n"
              "g = 2  # noqa: NPY002 (the peer's global state)\n"
              "# noqa: F401\n"
              "text = \"# noqa: E501 inside a string stays\"\n"
              "# NBVAL_SKIP\ny = 3")
    shown = prepare.strip_markers(source)
    assert shown.splitlines() == [
        "import pandas as pd",
        "f = lambda t: t  # density of t = log v",
        "except_ = 1  # handed to the caller",
        "g = 2  # the peer's global state",
        "text = \"# noqa: E501 inside a string stays\"",
        "y = 3",
    ]
    assert prepare.strip_markers("#| default_exp mechanisms") == ""
    # a cell that does not tokenize (an unclosed string) is still stripped, line by line
    assert prepare.strip_markers("x = '''\n#| export\nimport a  # noqa: F401") == "x = '''\nimport a"


def test_prepare_folds_export_and_long_cells():
    prepare = _docs_module("prepare")
    short = "x = 1\n" * prepare.FOLD_LINES
    long = "x = 1\n" * (prepare.FOLD_LINES + 1)
    assert prepare.fold_reason(short) is None
    assert prepare.fold_reason("# NBVAL_IGNORE_OUTPUT\n" + short) is None     # markers are not counted
    assert prepare.fold_reason(long) == f"{prepare.FOLD_LINES + 1} lines"
    assert prepare.fold_reason("#| export\ndef f():\n    return 1\n") == "library code, 2 lines"
    nb = {"cells": [
        {"cell_type": "markdown", "metadata": {}, "source": "#| export is only prose here"},
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": "#| default_exp mechanisms"},
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": ["#| export\n", "def f():\n", "    pass\n"]},
        {"cell_type": "code", "metadata": {"tags": ["remove-input"]}, "outputs": [], "source": "#| export\nx = 1"},
        {"cell_type": "code", "metadata": {}, "source": long,
         "outputs": [{"output_type": "stream", "name": "stdout", "text": "x\n"}]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "source": "# NBVAL_IGNORE_OUTPUT\nplt.plot(x)"},
    ]}
    counts = prepare.prepare_cells(nb)
    assert counts == {"folded export": 1, "folded long": 1, "removed empty": 1, "plumbing lines": 0}
    md, exp_dir, export, kept, longc, usage = nb["cells"]
    assert md["source"] == "#| export is only prose here" and "tags" not in md["metadata"]
    assert exp_dir["metadata"]["tags"] == ["remove-cell"]
    assert export["metadata"]["tags"] == ["hide-input"] and export["source"] == "def f():\n    pass"
    assert export["metadata"]["mystnb"]["code_prompt_show"] == "Show code (library code, 2 lines)"
    assert kept["metadata"]["tags"] == ["remove-input"]                      # a tag already set is kept
    assert longc["metadata"]["tags"] == ["hide-input"] and longc["outputs"][0]["text"] == "x\n"
    assert usage["source"] == "plt.plot(x)" and "tags" not in usage["metadata"]


def test_prepare_scrubs_machine_paths():
    prepare = _docs_module("prepare")
    warning = ("/tmp/ipykernel_12345/2873465.py:3: ConvergenceWarning: lbfgs failed\n"
               "  fit = model.fit(X)\n")
    assert prepare.scrub_paths(warning) == "ConvergenceWarning: lbfgs failed\n  fit = model.fit(X)\n"
    assert prepare.scrub_paths("/srv/dplit/dplit/release.py:12: UserWarning: x", root="/srv/dplit") == \
        "dplit/release.py:12: UserWarning: x"
    # a clone elsewhere (CI's) or an installed copy: the package path still becomes relative
    assert prepare.scrub_paths("/work/main/dplit/study.py:290: UserWarning: x", root="/ci/clone") == \
        "dplit/study.py:290: UserWarning: x"
    assert prepare.scrub_paths("/usr/lib/python3/site-packages/dplit/_files.py:9: W") == "dplit/_files.py:9: W"
    assert prepare.scrub_paths("wrote /tmp/tmpab12cd/release.json") == "wrote <temporary folder>/release.json"
    assert prepare.scrub_paths("/tmp/release.json and /tmp/a/b/c.nc") == \
        "<temporary folder>/release.json and <temporary folder>/c.nc"
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "source": "warn()", "outputs": [
        {"output_type": "stream", "name": "stderr", "text": [warning]},
        {"output_type": "error", "ename": "E", "evalue": "", "traceback": ["File /tmp/ipykernel_1/2.py:1: here"]}]}]}
    prepare.prepare_cells(nb)
    text = json.dumps(nb)
    check_site = _docs_module("check_site")
    assert not check_site.MACHINE_PATH.search(text)


def test_check_site_catches_markers_and_machine_paths():
    check_site = _docs_module("check_site")
    clean = "A derivation. import numpy as np  print(x)"
    assert check_site.text_problems("notebooks/17_bootstrap.html", clean, clean) == []
    # planted: a marker in a code cell, a machine path in an output
    cell = "# NBVAL_IGNORE_OUTPUT fig, ax = plt.subplots() import pandas as pd  # noqa: E402 #| export def f(): pass"
    found = check_site.text_problems("notebooks/17_bootstrap.html", cell, cell)
    assert sum(p.startswith("tool marker") for p in found) == 3
    found = check_site.text_problems("notebooks/63_atus.html", "/tmp/ipykernel_77/1.py:3: Warning", "")
    assert found and all(p.startswith("machine path") for p in found)
    # prose that names the convention is not a marker shown in code; viewcode's source pages are exempt
    assert check_site.text_problems("notebooks/00_index.html", "cells marked #| export become a module", "") == []
    assert check_site.text_problems("_modules/dplit/release.html", "x = 1  # noqa: E402", "x  # noqa: E402") == []
    assert check_site.text_problems("_modules/dplit/x.html", "/work/main/dplit", "") != []


def test_check_site_reports_clipped_elements_and_the_table():
    check_site = _docs_module("check_site")
    clipped = [{"what": "pre", "content": 1346, "box": 736, "text": "method sex runs"}]
    assert check_site.clip_problems(clipped) == [
        "clipped pre (content 1346 px in a 736 px box): 'method sex runs'"]
    rows = [{"page": "notebooks/17_bootstrap.html", "clipped": 0, "scrolled": 3, "markers": 0, "paths": 0,
             "height": 14145, "firstFigure": 0.83, "codeShare": 0.33},
            {"page": "notebooks/00_index.html", "clipped": 1, "scrolled": 0, "markers": 2, "paths": 1,
             "height": 6000, "firstFigure": None, "codeShare": 0.1}]
    table = check_site.reader_table(rows).splitlines()
    assert table[0].split() == ["page", "clipped", "scroll", "markers", "paths", "height", "px", "1st", "fig", "code"]
    assert table[1].split() == ["notebooks/17_bootstrap.html", "0", "3", "0", "0", "14145", "0.83", "0.33"]
    assert table[2].split()[-2] == "-"
    assert check_site.METHOD_PAGE.match("notebooks/53_peers.html")
    assert check_site.METHOD_PAGE.match("notebooks/60_methods.html")
    assert not check_site.METHOD_PAGE.match("notebooks/00_index.html")


def test_compressed_screenshot_is_a_small_palette_png(tmp_path):
    check_site = _docs_module("check_site")
    image = pytest.importorskip("PIL.Image")
    rgb = image.new("RGB", (300, 2000), "white")
    for y in range(0, 2000, 40):
        rgb.paste((31, 119, 180), (20, y, 280, y + 12))           # bars of a figure's blue
    rgb.save(tmp_path / "shot.png")
    out = check_site.compress_shot(tmp_path / "shot.png", tmp_path / "out" / "shot.png")
    with image.open(out) as small:
        assert small.mode == "P" and small.size == (300, 2000)
        assert small.convert("RGB").getpixel((100, 5)) == (31, 119, 180)



def test_saved_screenshots_are_the_current_set(tmp_path, monkeypatch):
    """--save-screenshots writes the shots this run took (of pages the site has) and removes an old name (a planted
    notebook-07_mcmc.png), so docs/screenshots/ holds exactly the current set."""
    check_site = _docs_module("check_site")
    image = pytest.importorskip("PIL.Image")
    shots, saved = tmp_path / "shots", tmp_path / "saved"
    shots.mkdir()
    saved.mkdir()
    monkeypatch.setattr(check_site, "SHOTS", shots)
    for name in ("index.png", "notebook-21_mcmc.png"):
        image.new("RGB", (40, 40), "white").save(shots / name)
    image.new("RGB", (40, 40), "white").save(saved / "notebook-07_mcmc.png")
    written = check_site.save_screenshots(["index.html", "notebooks/21_mcmc.html", "notebooks/63_atus.html"], saved)
    assert [p.name for p in written] == ["index.png", "notebook-21_mcmc.png"]
    assert sorted(p.name for p in saved.iterdir()) == ["index.png", "notebook-21_mcmc.png"]
    assert "notebooks/howto/90_analyse_a_release.html" in check_site.FULL_SHOTS   # taken once the how-to exists


PLANTED_PAGE = """<!doctype html><html><body style="margin:0"><div style="width:900px">
<article role="main" style="width:600px">
<p>cells marked #| export become the module (prose: not a marker shown in code)</p>
<div class="cell"><div class="cell_input"><pre># NBVAL_IGNORE_OUTPUT
x = 1</pre></div>
<div class="cell_output"><div class="output"><pre id="clipped" style="overflow: visible">{wide}</pre></div>
<div class="output"><pre id="scrolls" style="overflow-x: auto">{wide}</pre></div>
<div class="output"><pre style="white-space: pre-wrap">{wide}</pre></div>
<div class="output" style="overflow-x: auto"><table style="width: 900px"><tr><td>a</td></tr></table></div>
<div class="output"><table id="past" style="width: 900px"><tr><td>b</td></tr></table></div>
<div class="output"><pre>/tmp/ipykernel_1/2.py:3: UserWarning</pre></div></div></div>
<details><summary>Show code</summary><pre style="overflow: visible"># noqa folded: counted as text {wide}</pre></details>
<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" width="10" height="10">
</article></div></body></html>"""


def test_reader_facts_catch_planted_clipping_in_chromium(tmp_path):
    check_site = _docs_module("check_site")
    if not Path(check_site.CHROMIUM).exists():
        pytest.skip("needs Debian's chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    page = tmp_path / "page.html"
    page.write_text(PLANTED_PAGE.format(wide="a wide line " * 40))
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=check_site.CHROMIUM, headless=True, args=check_site.FLAGS)
        try:
            tab = browser.new_page(viewport={"width": 1280, "height": 860})
            tab.goto(page.as_uri())
            facts = tab.evaluate(check_site.READER_FACTS)
        finally:
            browser.close()
    # the visible-overflow pre and the table past the column, each once (not the output boxes around them)
    what = [c["what"] for c in facts["clipped"]]
    assert sorted(what) == ["pre", "table"], facts["clipped"]
    assert facts["scrolled"] == 2                           # the scrolling pre and the scrolling output box
    found = check_site.text_problems("notebooks/99_planted.html", facts["text"], facts["cellText"])
    assert sum(p.startswith("tool marker") for p in found) == 2      # NBVAL in code, noqa in folded code
    assert sum(p.startswith("machine path") for p in found) >= 1
    assert 0 < facts["firstFigure"] < 1 and 0 < facts["codeShare"] < 1


# --- the book (issue 44): plumbing out, mentions linked, titles numbered, the allow-list, the planted page ----------

def test_prepare_drops_plumbing_lines_and_repeated_outputs():
    prepare = _docs_module("prepare")
    nb = {"cells": [
        {"cell_type": "code", "metadata": {}, "source": "%matplotlib inline\nimport numpy as np",
         "outputs": []},
        {"cell_type": "code", "metadata": {}, "source": 'n = 3\nprint(f"quick mode: {is_quick()}; n = {n}")',
         "outputs": [{"output_type": "stream", "name": "stdout", "text": "quick mode: False; n = 3\n"}]},
        {"cell_type": "code", "metadata": {}, "source": "print(note)",
         "outputs": [{"output_type": "stream", "name": "stdout", "text": "quick mode: True\nthe result is 4\n"}]},
    ]}
    counts = prepare.prepare_cells(nb)
    backend, quick, kept = nb["cells"]
    assert backend["source"] == "import numpy as np"
    assert quick["source"] == "n = 3" and quick["outputs"] == []
    assert kept["outputs"][0]["text"] == "the result is 4\n" and counts["plumbing lines"] == 2
    note = {"output_type": "display_data", "metadata": {}, "data": {"text/markdown": "**Live widget.** " + "x" * 60}}
    twice = {"cells": [{"cell_type": "code", "source": "", "metadata": {}, "outputs": [dict(note)]},
                       {"cell_type": "code", "source": "", "metadata": {}, "outputs": [dict(note)]}]}
    assert prepare.dedupe_outputs(twice) == 1 and twice["cells"][1]["outputs"] == []


PAGES = ["notebooks/00_index", "notebooks/15_release", "notebooks/21_mcmc", "notebooks/checks/73_mcmc_checks",
         "notebooks/papers/80_guo_simulation_study"]
NAMES = {"dp_mcmc": ("py:obj", "dplit.mcmc.dp_mcmc"), "dplit.mcmc.dp_mcmc": ("py:obj", "dplit.mcmc.dp_mcmc"),
         "dplit.mcmc": ("py:mod", "dplit.mcmc")}


def test_linker_links_notebook_and_api_mentions_and_leaves_code_alone():
    prepare = _docs_module("prepare")
    linker = prepare.Linker(PAGES, NAMES)
    text = ("As in notebook 21 and `21_mcmc`, see papers/80 and checks/73; `dp_mcmc()` is in `dplit.mcmc`.\n"
            "Already linked: [notebook 15](../15_release.ipynb); notebook 99 is none; $x_{21}$ and `x = 21_mcmc` stay.\n"
            "```python\nfrom dplit.mcmc import dp_mcmc  # notebook 21\n```\n"
            "[Analyse a release](howto/90_analyse_a_release.ipynb)\n")
    out = linker.markdown("notebooks/papers/80_guo_simulation_study", text)
    assert "[notebook 21](../21_mcmc.ipynb)" in out
    assert "[`21_mcmc`](../21_mcmc.ipynb)" in out
    assert "[papers/80](80_guo_simulation_study.ipynb)" in out and "[checks/73](../checks/73_mcmc_checks.ipynb)" in out
    assert "{py:obj}`dp_mcmc() <dplit.mcmc.dp_mcmc>`" in out and "{py:mod}`dplit.mcmc <dplit.mcmc>`" in out
    assert "[notebook 15](../15_release.ipynb)" in out and "notebook 99 is none" in out
    assert "$x_{21}$" in out and "`x = 21_mcmc`" in out
    assert "from dplit.mcmc import dp_mcmc  # notebook 21\n```" in out             # fenced code untouched
    # a page not written yet: a plain HTML link to its future page (allowed by check_site_allow.toml)
    assert '<a href="howto/90_analyse_a_release.html">Analyse a release</a>' in out
    assert linker.count == 6


def test_titles_carry_their_numbers_and_library_notebooks_link_their_api_page():
    prepare = _docs_module("prepare")
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": "# MCMC from a release\n\n* **For:** x"}]}
    prepare.number_title(nb, "notebooks/21_mcmc")
    prepare.number_title(nb, "notebooks/21_mcmc")                              # once only
    assert nb["cells"][0]["source"].startswith("# 21 · MCMC from a release\n")
    prepare.add_api_link(nb, "notebooks/21_mcmc", "mcmc")
    assert "[`dplit.mcmc`](../api/mcmc.md)" in nb["cells"][1]["source"]
    assert prepare.module_notebooks()["mcmc"] == "notebooks/21_mcmc"


def test_parts_cover_every_number_once_in_reading_order():
    prepare = _docs_module("prepare")
    numbers = [n for _, (lo, hi) in prepare.PARTS for n in range(lo, hi + 1)]
    assert sorted(numbers) == list(range(0, 100))
    captions = [c for c, _ in prepare.PARTS]
    assert captions.index("How-to guides") < captions.index("Checks") < captions.index("The papers reproduced")
    toc = prepare.toc(PAGES + ["notebooks/howto/90_analyse_a_release"])
    assert toc.index("howto/90_analyse_a_release") < toc.index("checks/73_mcmc_checks")


def test_allow_list_only_shrinks(tmp_path):
    check_site = _docs_module("check_site")
    allow = {"figures": {"notebooks/63_atus.html": 2}, "pending": ["notebooks/howto/90_x.html"]}
    assert check_site.allow_problems({"notebooks/63_atus.html": 2}, allow, tmp_path) == {}
    more = check_site.allow_problems({"notebooks/63_atus.html": 3, "notebooks/21_mcmc.html": 1}, allow, tmp_path)
    assert set(more) == {"notebooks/63_atus.html", "notebooks/21_mcmc.html"}
    fewer = check_site.allow_problems({"notebooks/63_atus.html": 1}, allow, tmp_path)
    assert "lower the count" in fewer["notebooks/63_atus.html"][0]
    (tmp_path / "notebooks" / "howto").mkdir(parents=True)
    (tmp_path / "notebooks" / "howto" / "90_x.html").write_text("<html></html>")
    done = check_site.allow_problems({"notebooks/63_atus.html": 2}, allow, tmp_path)
    assert "remove it" in done["notebooks/howto/90_x.html"][0]
    assert check_site.read_allow()["pending"] or check_site.read_allow()["figures"] is not None
    allow["text"] = {"notebooks/63_atus.html": 1}
    text = check_site.allow_problems({"notebooks/63_atus.html": 2}, allow, tmp_path / "x", {"notebooks/82.html": 1})
    assert set(text) == {"notebooks/63_atus.html", "notebooks/82.html"}
    assert "lower the count" in text["notebooks/63_atus.html"][0] and "text below" in text["notebooks/82.html"][0]


def test_text_size_estimate_fails_a_planted_small_legend(tmp_path):
    """The smallest text of a figure, estimated from the code that drew it: a 6 pt legend at 72 dpi shown whole is
    6 px (fails), 10 pt shown at 0.3 is 4.2 px (fails), 7 pt through a notebook function at 100 dpi is 9.7 px
    (passes); a ``size=`` of numpy is not a font, and an image with no notebook figure of its size is skipped."""
    from PIL import Image

    check_site = _docs_module("check_site")
    for name, size in {"wide": (2000, 40), "narrow": (200, 40), "legend": (300, 60)}.items():
        Image.new("RGB", size, "white").save(tmp_path / f"{name}.png")
    fonts = check_site.figure_fonts(check_site.planted_notebook(tmp_path))
    assert [(f["w"], f["pt"], f["dpi"]) for f in fonts] == [(2000, 10, 100), (200, 7, 100), (300, 6, 72)]
    shown = [{"natural": 2000, "naturalHeight": 40, "ratio": 0.3}, {"natural": 640, "naturalHeight": 480, "ratio": 1},
             {"natural": 200, "naturalHeight": 40, "ratio": 1.0}, {"natural": 300, "naturalHeight": 60, "ratio": 1.0}]
    small = check_site.small_text(shown, fonts)
    assert [(f["natural"], round(f["px"], 1)) for f in small] == [(2000, 4.2), (300, 6.0)]
    assert check_site.font_sizes("ax.legend(fontsize='small'); ax.tick_params(labelsize=7.5); "
                                 "plt.rcParams['font.size'] = 8; rng.normal(size=3)") == pytest.approx([8.33, 7.5, 8.0])
    assert check_site.small_text(shown[:1], []) == []


def test_book_checks_catch_each_planted_class_in_chromium():
    """The planted page of check_site's self-check: a pipe table and TeX source shown as text, two unlinked mentions,
    a missing anchor and a missing page, a scrollbar, a figure shown at 0.3 of its width, two figures whose text is
    below 9 px on screen; each caught, and nothing
    that is fine beside them (typeset math, code, linked mentions, a pending page, a wrapped output)."""
    check_site = _docs_module("check_site")
    if not Path(check_site.CHROMIUM).exists():
        pytest.skip("needs Debian's chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=check_site.CHROMIUM, headless=True, args=check_site.FLAGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 860})
            counts, problems = check_site.self_check(context)
        finally:
            browser.close()
    assert counts == check_site.PLANTED_COUNTS, problems


def test_docstrings_link_their_mentions_on_the_api_pages():
    """docs/conf.py rewrites a docstring's mentions as the notebooks' are rewritten: a name of another module resolves
    in full, a notebook links to its page, Markdown's $...$ becomes :math:, doctest lines stay as they are."""
    import importlib.util

    if importlib.util.find_spec("sphinx-mathjax-offline") is None:   # docs/conf.py serves MathJax from it
        pytest.skip("the site's tools are not installed here (make docs installs them; make test-newest does not)")
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import conf
    finally:
        sys.path.pop(0)
    lines = ["See `household_summaries`, :func:`release` and ``dplit.mechanisms.audit_epsilon`` (notebook 62, "
             "`62_study`); MCMC$_{p1}$ costs $5 or $6, `n_iter` is a parameter.", ">>> f(`dp_mcmc`)  # notebook 21"]
    conf._link_names(None, "function", "x", None, None, lines)
    line, doctest = lines
    assert ":py:obj:`household_summaries <dplit.nested_model.household_summaries>`" in line
    assert ":py:func:`release <dplit.release.release>`" in line
    assert ":py:obj:`dplit.mechanisms.audit_epsilon <dplit.audit.audit_epsilon>`" in line
    assert ":doc:`notebook 62 </notebooks/62_study>`" in line and ":doc:`62_study </notebooks/62_study>`" in line
    assert "MCMC\\ :math:`_{p1}`" in line and "$5 or $6" in line and "`n_iter`" in line
    assert doctest == ">>> f(`dp_mcmc`)  # notebook 21"


def _missing_screenshots(text):
    """Links to docs/screenshots/ in a text whose file is not committed."""
    return [m for m in re.findall(r"\((docs/screenshots/[^)\s]+)\)", text) if not (ROOT / m).exists()]


def test_readme_links_only_committed_screenshots():
    text = (ROOT / "README.md").read_text()
    assert "docs/screenshots/notebook-21_mcmc.png" in text and _missing_screenshots(text) == []
    assert _missing_screenshots(text + "\n[old](docs/screenshots/notebook-07_mcmc.png)") == [
        "docs/screenshots/notebook-07_mcmc.png"]
    links = set(re.findall(r"docs/screenshots/([\w.-]+\.png)", text))
    assert links == {p.name for p in (ROOT / "docs" / "screenshots").glob("*.png")}   # every shot is linked



def _output_texts(nb):
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            for value in [out.get("text", "")] + [v for k, v in out.get("data", {}).items() if k.startswith("text/")]:
                yield "".join(value) if isinstance(value, list) else str(value)


def test_committed_outputs_hold_no_machine_path():
    """The site scrubs paths of the machine that builds it, not of the machine that executed a notebook: the
    committed outputs must not carry one (a warning's location prefix is the usual way in). A path into a checkout
    is what docs/prepare.py makes relative on the site (its ``_PACKAGE``), or this machine's ``/work/``; the
    kernel's own "/tmp/ipykernel_..." prefix is the same on every machine and the site scrubs it."""
    checkout = re.compile(_docs_module("prepare")._PACKAGE.pattern + "|/work/")
    found = []
    for path in sorted((ROOT / "notebooks").rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        for text in _output_texts(json.loads(path.read_text())):
            found += [f"{path.relative_to(ROOT)}: {m.group(0)}" for m in checkout.finditer(text)]
    assert found == []
    planted = {"cells": [{"outputs": [{"text": ["/home/me/dplit/dplit/study.py:290: UserWarning: x\n"]}]}]}
    assert any(checkout.search(t) for t in _output_texts(planted))
