"""Open every page of the built site (build/site) in headless Chromium and check it as a reader would.

`make check-docs` runs this after `make docs`. Per page: no console error and no uncaught exception,
no request outside the site (it must work offline: theme, scripts, fonts and MathJax come from the
site itself), every internal link points to an existing page and anchor, every image is decoded
with a non-zero size, and every formula was typeset by MathJax without error. Screenshots of three
pages go to build/site-shots/.

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
SCREENSHOTS = {"index.html": "index.png", "notebooks/04_release.html": "notebook-04_release.png",
               "api/release.html": "api-release.png"}


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


def link_problems(page: str, hrefs: list[str], base: str) -> list[str]:
    """Internal links of one page whose target file or anchor does not exist."""
    problems = []
    for href in hrefs:
        url = urljoin(base + page, href)
        parts = urlparse(url)
        if not url.startswith(base) or parts.scheme not in ("http", "https"):
            continue
        rel = unquote(parts.path[len(urlparse(base).path):]) or "index.html"
        target = SITE / rel
        if target.is_dir():
            target = target / "index.html"
        if not target.exists():
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


def _harmless(message) -> bool:
    """A console error that is not the site's: the browser's own favicon request."""
    return (message.location or {}).get("url", "").endswith("favicon.ico")


def check_page(context, base: str, page: str) -> tuple[list[str], dict]:
    """Open one page; returns its problems and facts."""
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
    problems += link_problems(page, facts["hrefs"], base)
    problems += [f"image not decoded: {i['src']}" for i in facts["images"] if not i["ok"]]
    if facts["mathUnrendered"] or facts["mathErrors"]:
        problems.append(f"math: {facts['mathUnrendered']} of {facts['math']} formulas not typeset, "
                        f"{facts['mathErrors']} MathJax errors")
    if page in SCREENSHOTS:
        tab.screenshot(path=str(SHOTS / SCREENSHOTS[page]), full_page=False)
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
    subprocess.run(cli + ["compare", str(rel), "--seed", "1", "--n-iter", "1000", "--out", str(out), "--force"],
                   check=True, capture_output=True)
    return out


def expected_figures(page: str) -> int:
    """Images in the committed notebook behind a notebook page, 1 for a compare report (0 for other pages)."""
    if page.startswith("reports/"):
        return 1
    if not page.startswith("notebooks/"):
        return 0
    nb = ROOT / "notebooks" / (Path(page).stem + ".ipynb")
    if not nb.exists():
        return 0
    cells = json.loads(nb.read_text())["cells"]
    return sum("image/png" in out.get("data", {}) for c in cells for out in c.get("outputs", []))


def main() -> int:
    from playwright.sync_api import sync_playwright

    if not (SITE / "index.html").exists():
        sys.exit("check-docs: build/site/index.html is missing: run `make docs` first")
    executable = ensure_chromium()
    SHOTS.mkdir(parents=True, exist_ok=True)
    write_compare_report(SITE / "reports")
    pages = sorted(str(p.relative_to(SITE)) for p in SITE.rglob("*.html"))
    server, base = serve(SITE)
    profile = tempfile.mkdtemp(prefix="dplit-chromium-")
    failures, external = {}, []
    try:
        with sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(
                profile, executable_path=executable, headless=True, args=FLAGS,
                viewport={"width": 1280, "height": 860})

            def only_local(route):  # the site must not need anything from outside
                if route.request.url.startswith(base) or route.request.url.startswith("data:"):
                    return route.continue_()
                external.append(route.request.url)
                return route.abort()

            context.route("**/*", only_local)
            n_images = n_math = 0
            for page in pages:
                problems, facts = check_page(context, base, page)
                want = expected_figures(page)
                got = sum(1 for i in facts["images"] if i["ok"] and i["w"] > 0 and i["h"] > 0)
                if got < want:
                    problems.append(f"{got} decoded images, but the notebook holds {want} figures")
                n_images += got
                n_math += facts["math"]
                if problems:
                    failures[page] = problems
            context.close()
    finally:
        server.shutdown()
        shutil.rmtree(profile, ignore_errors=True)
    for url in sorted(set(external)):
        failures.setdefault("(any page)", []).append(f"request outside the site: {url}")
    print(f"check-docs: {len(pages)} pages, {n_images} images decoded, {n_math} formulas typeset; "
          f"screenshots in {SHOTS.relative_to(ROOT)}/")
    for page, problems in failures.items():
        for p in problems[:10]:
            print(f"  {page}: {p}")
    if failures:
        print(f"check-docs: {len(failures)} page(s) with problems")
        return 1
    print("check-docs: every page passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
