"""Helpers shared by the test files (imported as `_helpers`: pytest puts tests/ on sys.path)."""

import contextlib
import http.server
import importlib.util
import threading
from pathlib import Path

import numpy as np

from dplit.dirichlet import censored_stat, dirichlet_draws
from dplit.release import Release


def noisy_release(n=200, eps=1.0, a=1e-3, alpha=(2.2, 3.3, 4.4), n1=0, seed=0):
    """(Release, X): Dirichlet records released at a fixed threshold a with Laplace noise (split when n1 > 0)."""
    rng = np.random.default_rng(seed)
    X = dirichlet_draws(np.array(alpha), n, rng=rng)
    d = len(alpha)
    if n1 == 0:
        s_L = censored_stat(X, a) + rng.laplace(0, -d * np.log(a) / (n * eps), d)
        return Release.from_statistic(s_L, n, a, eps), X
    s_L1 = censored_stat(X[:n1], a) + rng.laplace(0, -d * np.log(a) / (n1 * eps), d)
    s_L2 = censored_stat(X[n1:], a) + rng.laplace(0, -d * np.log(a) / ((n - n1) * eps), d)
    return Release.from_statistic(s_L2, n, a, eps, s_L1=s_L1, n1=n1), X


class _Files(http.server.BaseHTTPRequestHandler):
    """Serves ``files`` (path -> bytes); answers 503 while ``fail[path]`` > 0; records (path, User-Agent) in ``seen``."""

    files: dict = {}
    fail: dict = {}
    seen: list = []

    def do_GET(self):  # noqa: N802 - the http.server API
        self.seen.append((self.path, self.headers.get("User-Agent")))
        if self.fail.get(self.path, 0) > 0:
            self.fail[self.path] -= 1
            self.send_error(503)
            return
        body = self.files.get(self.path)
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def file_server(monkeypatch):
    """An HTTP file server on 127.0.0.1 in a thread, for download tests with no network: ``(base_url, handler)``.

    Set ``handler.files`` / ``handler.fail``, read ``handler.seen``. Proxies are switched off for loopback and
    pooch's waits between attempts are skipped.
    """
    for var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setattr("pooch.core.time.sleep", lambda s: None)
    handler = type("Files", (_Files,), {"files": {}, "fail": {}, "seen": []})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", handler
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def benchmark_script(name):
    """``benchmarks/<name>.py`` loaded as a module (the scripts are not a package); skips where benchmarks/ is absent
    (an installed copy)."""
    import pytest

    path = Path(__file__).resolve().parent.parent / "benchmarks" / f"{name}.py"
    if not path.exists():
        pytest.skip("benchmarks/ is not part of this install")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
