"""A round of bad inputs, as a hurried or careless user would type them (issue 46).

Each case is a small Python snippet or a CLI argv (with the files it needs, made in a fresh temporary
folder), run in its own subprocess with a time limit, and classified automatically:

- ``crash``: killed by a signal (e.g. a segfault, exit 139/-11), or died without reporting;
- ``hang``: still running at the time limit;
- ``clear``: refused with a ValueError/TypeError (library; subclasses count; an OSError for a file the
  system would not write or read) raised by dplit itself, whose
  message names one of the argument names the case expects (CLI: exit 2, no traceback, a short message
  naming the flag or the file's field), or, for a case that expects a warning, a warning naming it;
- ``unclear``: refused, but with another exception type, a raw numpy/numba/h5py/json error (raised
  outside dplit), a traceback on the CLI, or a message that names none of the expected names;
- ``silent``: succeeded although the case declares it must fail (or its own check of the answer failed);
- ``lost data``: a file the case declares must be unchanged (or absent) afterwards was changed (or left).

Usage::

    python benchmarks/bad_inputs.py [--only PATTERN] [--json out.json] [--timeout 60] [--jobs 2]

The cases are meant to stay small (DPLIT_QUICK=1, tiny n, few iterations), so most finish in seconds.
This is a script, not a test: it prints the table of classes and the list of the cases that are not
clear; nothing here is asserted.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
CLASSES = ("clear", "unclear", "silent", "hang", "crash", "lost data")


@dataclass
class Case:
    """One bad input: a snippet (``code``) or a CLI argv (``argv``), and what a clear refusal names.

    ``names``: words one of which a clear message contains (the argument, the flag, the field).
    ``expect``: ``"fail"`` (must be refused), ``"warn"`` (may run, but must warn, or be refused),
    ``"nolose"`` (may succeed or fail; only the files are checked).
    ``files``: name -> text (or bytes) written into the case's folder first; ``fixtures``: names of the
    shared fixtures copied in. ``unchanged``: files whose bytes must be the same afterwards (absent stays
    absent). ``absent``: files that must not exist afterwards. ``fsize``: RLIMIT_FSIZE in bytes for the
    child (a full disk). ``twice``: run the argv twice at the same time (two writers). ``readonly``: folders
    made read-only before the run.
    """

    name: str
    area: str
    names: tuple
    code: str | None = None
    argv: list | None = None
    expect: str = "fail"
    files: dict = field(default_factory=dict)
    fixtures: tuple = ()
    unchanged: tuple = ()
    absent: tuple = ()
    fsize: int | None = None
    twice: bool = False
    readonly: tuple = ()
    setup: str = ""
    note: str = ""


CASES: list[Case] = []


def py(name, area, names, code, **kw):
    CASES.append(Case(name, area, tuple([names] if isinstance(names, str) else names),
                      code=textwrap.dedent(code), **kw))


def cli(name, area, names, argv, **kw):
    CASES.append(Case(name, area, tuple([names] if isinstance(names, str) else names), argv=list(argv), **kw))


# ------------------------------------------------------------------------------------------------
# The child: runs one snippet, records the outcome in __result.json.
# ------------------------------------------------------------------------------------------------

CHILD = r'''
import json, os, sys, traceback, warnings
os.environ.setdefault("DPLIT_QUICK", "1")
res = {"ok": None}
try:
    import numpy as np
    import dplit
    from dplit import *
    import dplit.release, dplit.release_record, dplit.mechanisms, dplit.accounting, dplit.dirichlet_mechanism
    import dplit.augmentation, dplit.latent_class, dplit.margin_selection, dplit.peers, dplit.nested
    import dplit.nested_model, dplit.methods, dplit.results, dplit.study, dplit.study_store, dplit.bootstrap
    import dplit.mcmc, dplit.abc, dplit.approx, dplit.priors, dplit.censoring, dplit.dirichlet, dplit.dirichlet_fit
    from dplit.release_record import Release
    from dplit.latent_class import MarginRelease
    from dplit.nested import SummaryRelease
    rng = np.random.default_rng(0)
    RO = "ro" if os.geteuid() != 0 else "/proc"
    def R(path="rel.json"):
        return Release.load(path)
    def X(n=60, d=3, seed=1):
        return np.random.default_rng(seed).dirichlet(np.full(d, 2.0), size=n)
    def REC(n=80, p=4, levels=2, seed=2):
        return np.random.default_rng(seed).integers(0, levels, size=(n, p))
    def HH(n=40, seed=3):
        return dplit.nested_model.simulate_households(dplit.nested_model.SIMULATED_TRUTH, n, rng=seed)
except BaseException as e:
    res = {"ok": False, "stage": "import", "type": type(e).__name__, "msg": str(e)[:2000]}
    json.dump(res, open("__result.json", "w")); sys.exit(0)
code = open("__case.py").read()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        exec(compile(code, "<case>", "exec"), dict(globals()))
        res = {"ok": True}
    except BaseException as e:
        tb = traceback.extract_tb(e.__traceback__)
        where = tb[-1].filename if tb else ""
        res = {"ok": False, "type": type(e).__name__,
               "mro": [c.__name__ for c in type(e).__mro__],
               "msg": str(e)[:4000], "where": where,
               "in_case": where == "<case>"}
res["warnings"] = [f"{w.category.__name__}: {w.message}"[:1000] for w in caught]
json.dump(res, open("__result.json", "w"))
'''


def _limit(fsize):
    def pre():
        os.setsid()
        if fsize is not None:
            import resource
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    return pre


def _snapshot(folder, names):
    out = {}
    for n in names:
        p = folder / n
        out[n] = p.read_bytes() if p.is_file() else None
    return out


def _run(cmd, cwd, env, timeout, fsize):
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=_limit(fsize))
    try:
        out, err = proc.communicate(timeout=timeout)
        return proc.returncode, out.decode(errors="replace"), err.decode(errors="replace"), False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return None, out.decode(errors="replace"), err.decode(errors="replace"), True


def _names_in(text, names):
    """True when ``text`` names one of ``names`` as a word (``n`` is not found inside ``eps_n``)."""
    low = text.lower()
    return any(re.search(r"(?<![a-z0-9_])" + re.escape(n.lower()) + r"(?![a-z0-9_])", low) for n in names)


def classify(case, rc, out, err, timed_out, res, folder, before):
    """Return (class, excerpt)."""
    lost = []
    for n, b in before.items():
        p = folder / n
        now = p.read_bytes() if p.is_file() else None
        if now != b:
            lost.append(f"{n} changed" if b is not None else f"{n} created")
    for n in case.absent:
        if (folder / n).exists():
            lost.append(f"{n} left behind")
    leftovers = [p.name for p in folder.iterdir() if re.search(r"\.tmp|\.part|~$", p.name)]
    if leftovers:
        lost.append(f"temporary files left: {leftovers}")
    if timed_out:
        return "hang", (err or out)[-300:]
    if rc is not None and (rc < 0 or rc in (134, 136, 139)):
        return "crash", f"exit {rc}: " + (err or out)[-300:]
    if lost:
        return "lost data", "; ".join(lost) + " | " + (err or out)[-200:].strip()
    if case.argv is not None:
        return _classify_cli(case, rc, out, err)
    if res is None:
        return "crash", f"exit {rc}, no result: " + (err or out)[-300:]
    return _classify_py(case, res)


def _classify_py(case, res):
    warns = " | ".join(res.get("warnings", []))
    if res.get("stage") == "import":
        return "crash", "import failed: " + res["msg"][:300]
    if res["ok"]:
        if case.expect == "nolose":
            return "clear", "ran; files intact"
        if case.expect == "warn" and _names_in(warns, case.names):
            return "clear", "warned: " + warns[:200]
        return "silent", ("no error" + (f"; warnings: {warns[:200]}" if warns else ""))
    msg = res["msg"]
    excerpt = f"{res['type']}: {msg[:300]}"
    if res.get("in_case") and res["type"] == "AssertionError":
        return "silent", "the answer failed the case's own check: " + excerpt
    if case.expect == "nolose":
        return "clear", excerpt
    mro = res.get("mro", [])
    where = res.get("where", "")
    inside = "/dplit/" in where.replace("\\", "/") or where == "<case>"
    if not ({"ValueError", "TypeError", "OSError"} & set(mro)):
        return "unclear", excerpt + f" [raised in {where}]"
    if not inside:
        return "unclear", excerpt + f" [raw error raised in {where}]"
    if len(msg) > 1500:
        return "unclear", excerpt + " [message over 1500 characters]"
    if not _names_in(msg, case.names):
        return "unclear", excerpt + f" [does not name {case.names}]"
    return "clear", excerpt


def _classify_cli(case, rc, out, err):
    text = (err.strip() or out.strip())
    last = text.splitlines()[-1] if text else ""
    if rc == 0:
        if case.expect == "nolose":
            return "clear", "exit 0; files intact"
        if case.expect == "warn" and _names_in(err + out, case.names):
            return "clear", "warned: " + last[:200]
        return "silent", "exit 0: " + last[:200]
    if case.expect == "nolose":
        return "clear", f"exit {rc}: {last[:200]}"
    if "Traceback (most recent call last)" in err:
        return "unclear", f"exit {rc}, traceback: " + last[:300]
    if rc != 2:
        return "unclear", f"exit {rc} (not 2): " + last[:300]
    if not _names_in(err, case.names):
        return "unclear", f"exit 2 without naming {case.names}: " + err.strip()[-300:]
    return "clear", "exit 2: " + err.strip()[-300:]


def run_case(case, fixtures, timeout):
    folder = Path(tempfile.mkdtemp(prefix="bad_"))
    try:
        for f in case.fixtures:
            shutil.copy(fixtures / f, folder / f)
        for n, content in case.files.items():
            p = folder / n
            p.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                p.write_bytes(content)
            else:
                p.write_text(content)
        if case.setup:
            exec(case.setup, {"folder": folder, "os": os, "json": json})
        before = _snapshot(folder, case.unchanged)
        for d in case.readonly:
            (folder / d).mkdir(exist_ok=True)
            os.chmod(folder / d, 0o555)
        env = dict(os.environ, DPLIT_QUICK="1", PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1",
                   NUMBA_NUM_THREADS="1", MPLBACKEND="Agg")
        res = None
        t0 = time.time()
        if case.argv is not None:
            ro = "ro" if os.geteuid() != 0 else "/proc"   # the superuser ignores permission bits
            cmd = [PY, "-m", "dplit", *[a.replace("{RO}", ro) for a in case.argv]]
            if case.twice:
                procs = [subprocess.Popen(cmd, cwd=folder, env=env, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, preexec_fn=_limit(case.fsize))
                         for _ in range(2)]
                outs = []
                for p in procs:
                    try:
                        o, e = p.communicate(timeout=timeout)
                        outs.append((p.returncode, o.decode(errors="replace"), e.decode(errors="replace")))
                    except subprocess.TimeoutExpired:
                        os.killpg(p.pid, signal.SIGKILL)
                        outs.append((None, "", "timeout"))
                if any(o[0] is None for o in outs):
                    return case, "hang", "timeout", time.time() - t0
                if all(o[0] == 0 for o in outs):
                    return case, "lost data", "both writers succeeded on one --out", time.time() - t0
                if any(o[0] not in (0, 2) for o in outs):
                    bad = [o for o in outs if o[0] not in (0, 2)][0]
                    return case, ("crash" if bad[0] < 0 else "unclear"), f"exit {bad[0]}: {bad[2][-300:]}", \
                        time.time() - t0
                loser = [o for o in outs if o[0] == 2][0]
                ok = _names_in(loser[2], case.names) and "Traceback" not in loser[2]
                return case, ("clear" if ok else "unclear"), "one refused: " + loser[2].strip()[-300:], \
                    time.time() - t0
            rc, out, err, to = _run(cmd, folder, env, timeout, case.fsize)
        else:
            (folder / "__case.py").write_text(case.code)
            (folder / "__child.py").write_text(CHILD)
            rc, out, err, to = _run([PY, "__child.py"], folder, env, timeout, case.fsize)
            rp = folder / "__result.json"
            if rp.is_file():
                try:
                    res = json.loads(rp.read_text())
                except json.JSONDecodeError:
                    res = None
            for f in ("__case.py", "__child.py", "__result.json"):
                (folder / f).unlink(missing_ok=True)
        cls, excerpt = classify(case, rc, out, err, to, res, folder, before)
        return case, cls, excerpt, time.time() - t0
    finally:
        for d in case.readonly:
            if (folder / d).exists():
                os.chmod(folder / d, 0o755)
        shutil.rmtree(folder, ignore_errors=True)


# ------------------------------------------------------------------------------------------------
# Shared fixtures: a release without and with a split, a CSV, a small result, a study config.
# ------------------------------------------------------------------------------------------------

FIXTURE_CODE = r'''
import os, numpy as np
os.environ["DPLIT_QUICK"] = "1"
from dplit.release import release
from dplit.bootstrap import dp_boots
from dplit.results import to_netcdf
from dplit.latent_class import release_margins
from dplit.nested import release_summaries
from dplit.nested_model import simulate_households, SIMULATED_TRUTH
rng = np.random.default_rng(11)
X = rng.dirichlet([3.0, 4.0, 5.0], size=300)
np.savetxt("data.csv", X, delimiter=",", header="work,sleep,play", comments="")
rel = release(X, eps1=2.0, eps2=1.0, rng=1, names=("work", "sleep", "play"))
rel.save("rel.json")
rel2 = release(X, eps1=2.0, eps2=1.0, n1=75, rng=2)
rel2.save("rel_split.json")
res = dp_boots(rel, n_boot=50, rng=3, progress=False)
to_netcdf(res, "res.nc")
recs = rng.integers(0, 2, size=(200, 4))
open("margins.json", "w").write(release_margins(recs, [(0, 1), (2, 3)], 1.0, rng=4).to_json())
hh = simulate_households(SIMULATED_TRUTH, 60, rng=5)
import pickle; pickle.dump(release_summaries(hh, 1.0, rng=6), open("summaries.pkl", "wb"))
'''


def make_fixtures(folder):
    env = dict(os.environ, DPLIT_QUICK="1", PYTHONPATH=str(ROOT))
    subprocess.run([PY, "-c", FIXTURE_CODE], cwd=folder, env=env, check=True)
    (folder / "study.toml").write_text(
        "[study]\nalpha_true = [[2.0, 3.0]]\nn = [200]\neps = [1.0]\nmethods = [\"boots\"]\nreplicates = 1\n")


# ------------------------------------------------------------------------------------------------
# The cases. Library: compositional release and analysis.
# ------------------------------------------------------------------------------------------------

A = "release"
py("release_eps1_string", A, "eps1", "dplit.release.release(X(), eps1='1', eps2=1.0)")
py("release_eps2_negative", A, "eps2", "dplit.release.release(X(), eps1=1.0, eps2=-0.1)")
py("release_eps1_nan", A, "eps1", "dplit.release.release(X(), eps1=float('nan'), eps2=1.0)")
py("release_X_1d", A, "X", "dplit.release.release(np.array([0.2, 0.3, 0.5]), eps1=1.0, eps2=1.0)")
py("release_X_rows_not_closed", A, "X", "dplit.release.release(X() * 2, eps1=1.0, eps2=1.0)")
py("release_X_single_column", A, ("X", "d"), "dplit.release.release(np.ones((10, 1)), eps1=1.0, eps2=1.0)")
py("release_X_strings", A, "X", "dplit.release.release([['0.5', '0.5'], ['0.2', '0.8']], eps1=1.0, eps2=1.0)")
py("release_X_empty", A, ("X", "n"), "dplit.release.release(np.empty((0, 3)), eps1=1.0, eps2=1.0)")
py("release_tc_above_one", A, "tc", "dplit.release.release(X(), eps1=1.0, eps2=1.0, tc=1.5)")
py("release_candidates_above_1_over_d", A, "candidates",
   "dplit.release.release(X(), eps1=1.0, eps2=1.0, candidates=[0.01, 0.5])")
py("release_candidates_unsorted_dupes", A, "candidates",
   "dplit.release.release(X(), eps1=1.0, eps2=1.0, candidates=[0.01, 0.01, -1e-3])")
py("release_n1_equals_n", A, "n1", "dplit.release.release(X(60), eps1=1.0, eps2=1.0, n1=60)")
py("release_n1_float", A, "n1", "dplit.release.release(X(60), eps1=1.0, eps2=1.0, n1=15.0)")
py("release_names_wrong_length", A, "names", "dplit.release.release(X(), eps1=1.0, eps2=1.0, names=('a', 'b'))")
py("release_names_plain_string", A, "names", "dplit.release.release(X(), eps1=1.0, eps2=1.0, names='abc')")
py("release_secure_string", A, "secure", "dplit.release.release(X(), eps1=1.0, eps2=1.0, secure='false')")
py("release_rng_float_seed", A, "rng", "dplit.release.release(X(), eps1=1.0, eps2=1.0, rng=1.5)")
py("release_budget_exceeded", A, ("budget", "eps"),
   "b = dplit.accounting.PrivacyBudget(1.0)\ndplit.release.release(X(), eps1=1.0, eps2=1.0, budget=b)")
py("release_budget_wrong_type", A, "budget", "dplit.release.release(X(), eps1=1.0, eps2=1.0, budget=5.0)")
py("release_mse_alpha_negative", A, "alpha", "dplit.release.release_mse([-1.0, 2.0], 1e-3, 100, 1.0)")
py("release_mse_n_zero", A, "n", "dplit.release.release_mse([1.0, 2.0], 1e-3, 0, 1.0)")
py("neighbouring_move_typo", A, "move", "dplit.release.neighbouring_datasets(10, 3, 1e-3, move='cel')")
py("neighbouring_a_too_big", A, "a", "dplit.release.neighbouring_datasets(10, 3, 0.9)")
py("audit_release_n_runs_zero", A, "n_runs",
   "x = X(20); y = x.copy(); y[0] = y[1]; dplit.release.audit_release(x, y, 1.0, 1.0, [1e-3], 0.01, n_runs=0)")
py("audit_release_confidence_one", A, "confidence",
   "x = X(20); y = x.copy(); y[0] = y[1]\n"
   "dplit.release.audit_release(x, y, 1.0, 1.0, [1e-3], 0.01, n_runs=100, confidence=1.0)")

A = "release_record"
py("Release_from_json_not_json", A, ("json", "release", "text"), "Release.from_json('format: dplit')")
py("Release_from_json_list", A, ("release", "object", "json"), "Release.from_json('[1, 2, 3]')")
py("Release_from_json_missing_scale", A, "scale",
   "import json; d = json.load(open('rel.json')); del d['scale']; Release.from_json(json.dumps(d))",
   fixtures=("rel.json",))
py("Release_from_json_n_string", A, "n",
   "import json; d = json.load(open('rel.json')); d['n'] = '300'; Release.from_json(json.dumps(d))",
   fixtures=("rel.json",))
py("Release_from_json_n_huge", A, "n",
   "import json; d = json.load(open('rel.json')); d['n'] = 10**25; d['n2'] = 10**25; Release.from_json(json.dumps(d))",
   fixtures=("rel.json",))
py("Release_from_json_d_mismatch", A, ("d", "s_L"),
   "import json; d = json.load(open('rel.json')); d['d'] = 4; Release.from_json(json.dumps(d))",
   fixtures=("rel.json",))
py("Release_from_json_sL_nan", A, "s_L",
   "t = open('rel.json').read(); import json; d = json.loads(t); d['s_L'][0] = float('nan'); Release.from_json(json.dumps(d))",
   fixtures=("rel.json",))
py("Release_from_json_sL_strings", A, "s_L",
   "import json; d = json.load(open('rel.json')); d['s_L'] = ['a', 'b', 'c']; Release.from_json(json.dumps(d))",
   fixtures=("rel.json",))
py("Release_from_json_eps1_zero", A, "eps1",
   "import json; d = json.load(open('rel.json')); d['eps1'] = 0; Release.from_json(json.dumps(d))",
   fixtures=("rel.json",))
py("Release_from_json_a_negative", A, ("a", "threshold"),
   "import json; d = json.load(open('rel.json')); d['a'] = -0.001; Release.from_json(json.dumps(d))",
   fixtures=("rel.json",))
py("Release_from_json_format_v9", A, "format",
   "import json; d = json.load(open('rel.json')); d['format'] = 'dplit.release/9'; Release.from_json(json.dumps(d))",
   fixtures=("rel.json",))
py("Release_from_json_n1_n2_dont_add", A, ("n1", "n2"),
   "import json; d = json.load(open('rel.json')); d['n2'] = 7; Release.from_json(json.dumps(d))",
   fixtures=("rel.json",))
py("Release_from_json_scale_tampered", A, "scale",
   "import json; d = json.load(open('rel.json')); d['scale'] = d['scale'] / 10; Release.from_json(json.dumps(d))",
   fixtures=("rel.json",))
py("Release_from_json_names_numbers", A, "names",
   "import json; d = json.load(open('rel.json')); d['names'] = [1, 2, 3]; Release.from_json(json.dumps(d))",
   fixtures=("rel.json",))
py("Release_from_json_extra_key", A, ("key", "field", "unknown", "extra"),
   "import json; d = json.load(open('rel.json')); d['epsilon'] = 3; Release.from_json(json.dumps(d))",
   fixtures=("rel.json",))
py("Release_from_json_bytes", A, ("text", "str", "json"), "Release.from_json(open('rel.json', 'rb').read()[:40])",
   fixtures=("rel.json",))
py("Release_load_missing_file", A, ("path", "no such", "not found", "exist"), "Release.load('nope.json')")
py("Release_load_directory", A, ("path", "directory", "folder"), "import os; os.mkdir('d.json'); Release.load('d.json')")
py("Release_load_empty_file", A, ("path", "empty", "json"), "open('e.json', 'w').close(); Release.load('e.json')")
py("Release_load_latin1", A, ("utf", "encod", "path", "json"),
   "open('l.json', 'wb').write(open('rel.json', 'rb').read().replace(b'\"work\"', b'\"w\\xf6rk\"')); Release.load('l.json')",
   fixtures=("rel.json",))
py("Release_save_over_existing", A, ("exists", "overwrite"), "R().save('rel.json')",
   fixtures=("rel.json",), unchanged=("rel.json",))
py("Release_save_overwrite_string", A, "overwrite", "R().save('new.json', overwrite='yes')", fixtures=("rel.json",),
   absent=("new.json",))
py("Release_save_readonly_folder", A, ("path", "permission", "write", "ro"), "R().save(RO + '/r.json')",
   fixtures=("rel.json",), readonly=("ro",))
py("Release_save_full_disk", A, ("path", "write", "disk", "too large", "space", "r2.json"), "R().save('r2.json')",
   fixtures=("rel.json",), fsize=300, absent=("r2.json",))
py("Release_save_full_disk_overwrite", A, ("path", "write", "disk", "too large", "space", "old.json"),
   "import shutil; R().save('old.json', overwrite=True)", files={"old.json": "keep me\n"}, fixtures=("rel.json",),
   fsize=300, unchanged=("old.json",))
py("Release_save_path_int", A, "path", "R().save(3)", fixtures=("rel.json",))

A = "censoring"
py("zero_advice_tc_zero", A, "tc", "dplit.censoring.zero_advice([0.1, 0.2], [1e-4, 1e-3], 1e-4, 0.0)")
py("zero_advice_phat_above_one", A, "p_hat_G", "dplit.censoring.zero_advice([1.7, 0.2], [1e-4, 1e-3], 1e-4, 0.01)")
py("zero_advice_a_not_candidate", A, "a", "dplit.censoring.zero_advice([0.1, 0.2], [1e-4, 1e-3], 0.5, 0.01)")
py("zero_advice_factor_negative", A, "factor",
   "dplit.censoring.zero_advice([0.1, 0.2], [1e-4, 1e-3], 1e-4, 0.01, factor=-2)")
py("zero_advice_names_short", A, "names",
   "dplit.censoring.zero_advice([0.1, 0.2], [1e-4, 1e-3], 1e-4, 0.01, s_L=[-5.0, -6.0, -7.0], n=100, names=('a',))")
py("amalgamate_group_out_of_range", A, "groups", "dplit.censoring.amalgamate(X(10, 3), [[0, 1], [5]])")
py("amalgamate_group_overlap", A, "groups", "dplit.censoring.amalgamate(X(10, 3), [[0, 1], [1, 2]])")
py("amalgamate_group_missing_column", A, "groups", "dplit.censoring.amalgamate(X(10, 3), [[0], [1]])")
py("amalgamate_group_negative", A, "groups", "dplit.censoring.amalgamate(X(10, 3), [[-1, 0], [1]])")
py("amalgamate_groups_string", A, "groups", "dplit.censoring.amalgamate(X(10, 3), 'ab')")
py("drop_zero_rows_all_zero", A, ("X", "row", "zero"), "dplit.censoring.drop_zero_rows(np.array([[0.0, 1.0], [1.0, 0.0]]))")
py("drop_zero_rows_1d", A, "X", "dplit.censoring.drop_zero_rows(np.array([0.2, 0.8]))")
py("zero_counts_negative", A, "X", "dplit.censoring.zero_counts(np.array([[-0.2, 1.2], [0.5, 0.5]]))")
py("entry_censoring_prob_alpha_zero", A, "alpha", "dplit.censoring.entry_censoring_prob([0.0, 1.0], 1e-3)")
py("bias_bound_tail_typo", A, "tail", "dplit.censoring.bias_bound([1.0, 2.0], 1e-3, tail='exakt')")
py("record_censoring_prob_n_mc_huge", A, "n_mc",
   "dplit.censoring.record_censoring_prob([1.0, 2.0], 1e-3, method='mc', n_mc=10**13)")
py("zero_bias_target_typo", A, "target", "dplit.censoring.zero_bias([1.0, 2.0], 0.1, 1e-3, target='mean')")
py("zero_truth_z_above_one", A, ("z",), "dplit.censoring.zero_truth([1.0, 2.0], 1.5)")

A = "bootstrap"
py("dp_boots_n_boot_float", A, "n_boot", "dplit.bootstrap.dp_boots(R(), n_boot=100.0, progress=False)",
   fixtures=("rel.json",))
py("dp_boots_n_boot_huge", A, "n_boot", "dplit.bootstrap.dp_boots(R(), n_boot=10**12, progress=False)",
   fixtures=("rel.json",))
py("dp_boots_n_boot_one", A, ("n_boot", "replicate"), "dplit.bootstrap.dp_boots(R(), n_boot=1, progress=False)",
   fixtures=("rel.json",), expect="warn")
py("dp_boots_part_D1_unsplit", A, "part", "dplit.bootstrap.dp_boots(R(), part='D1', n_boot=50, progress=False)",
   fixtures=("rel.json",))
py("dp_boots_part_lowercase", A, "part", "dplit.bootstrap.dp_boots(R(), part='d2', n_boot=50, progress=False)",
   fixtures=("rel.json",))
py("dp_boots_truncation_typo", A, "truncation",
   "dplit.bootstrap.dp_boots(R(), truncation='rejekt', n_boot=50, progress=False)", fixtures=("rel.json",))
py("dp_boots_unknown_option", A, ("noise_options", "option", "unexpected", "bogus"),
   "dplit.bootstrap.dp_boots(R(), n_boot=50, progress=False, bogus=3)", fixtures=("rel.json",))
py("dp_boots_release_dict", A, "release", "import json; dplit.bootstrap.dp_boots(json.load(open('rel.json')), n_boot=50)",
   fixtures=("rel.json",))
py("dp_boots_out_of_range_typo", A, "out_of_range",
   "dplit.bootstrap.dp_boots(R(), n_boot=50, out_of_range='clip', progress=False)", fixtures=("rel.json",))
py("boots_data_negative", A, "data", "dplit.bootstrap.boots(X(30) - 0.5, n_boot=20, progress=False)")
py("boots_n_without_data_stat", A, ("n", "a"), "dplit.bootstrap.boots(np.array([-1.0, -2.0, -1.5]), n_boot=20, progress=False)")
py("interval_test_delta_negative", A, "delta", "dplit.bootstrap.interval_test(np.ones((50, 3)) / 3, delta=-0.01)")
py("interval_test_level_percent", A, "level", "dplit.bootstrap.interval_test(np.ones((50, 3)) / 3, level=95)")
py("two_sample_test_of_typo", A, "of",
   "r = dplit.bootstrap.dp_boots(R(), n_boot=50, rng=1, progress=False); dplit.bootstrap.two_sample_test(r, r, of='median')",
   fixtures=("rel.json",))
py("two_sample_test_d_mismatch", A, ("result", "d", "component"),
   "r = dplit.bootstrap.dp_boots(R(), n_boot=50, rng=1, progress=False)\n"
   "b = dplit.bootstrap.boots(X(40, 4), n_boot=50, rng=1, progress=False)\n"
   "dplit.bootstrap.two_sample_test(r, b)", fixtures=("rel.json",))
py("min_replicates_level_one", A, "level", "dplit.bootstrap.min_replicates(1.0)")
py("truncated_statistic_scale_zero", A, "scale", "dplit.bootstrap.truncated_statistic(np.array([-5.0, -6.0]), 0.0, 10)")

A = "mcmc"
py("dp_mcmc_prior_typo", A, "prior", "dplit.mcmc.dp_mcmc(R(), prior='p7', n_iter=50, n_warmup=10, progress=False)",
   fixtures=("rel.json",))
py("dp_mcmc_p3_unsplit", A, ("prior", "split", "D1"),
   "dplit.mcmc.dp_mcmc(R(), prior='p3', n_iter=50, n_warmup=10, progress=False)", fixtures=("rel.json",))
py("dp_mcmc_n_iter_auto_typo", A, "n_iter", "dplit.mcmc.dp_mcmc(R(), n_iter='automatic', progress=False)",
   fixtures=("rel.json",))
py("dp_mcmc_thin_zero", A, "thin", "dplit.mcmc.dp_mcmc(R(), n_iter=50, thin=0, progress=False)", fixtures=("rel.json",))
py("dp_mcmc_n_slice_zero", A, "n_slice", "dplit.mcmc.dp_mcmc(R(), n_iter=50, n_slice=0, progress=False)",
   fixtures=("rel.json",))
py("dp_mcmc_max_rhat_below_one", A, "max_rhat", "dplit.mcmc.dp_mcmc(R(), n_iter=50, max_rhat=0.99, progress=False)",
   fixtures=("rel.json",))
py("dp_mcmc_max_time_negative", A, "max_time", "dplit.mcmc.dp_mcmc(R(), n_iter='auto', max_time=-5, progress=False)",
   fixtures=("rel.json",))
py("dp_mcmc_target_ess_zero", A, "target_ess", "dplit.mcmc.dp_mcmc(R(), n_iter='auto', target_ess=0, progress=False)",
   fixtures=("rel.json",))
py("dp_mcmc_n_chains_huge", A, ("n_chains", "memory"),
   "dplit.mcmc.dp_mcmc(R(), n_iter=10**6, n_chains=10**5, progress=False)", fixtures=("rel.json",))
py("dp_mcmc_progress_int", A, "progress", "dplit.mcmc.dp_mcmc(R(), n_iter=50, progress=2)", fixtures=("rel.json",))
py("dp_mcmc_n_jobs_zero", A, "n_jobs", "dplit.mcmc.dp_mcmc(R(), n_iter=50, n_jobs=0, progress=False)", fixtures=("rel.json",))
py("dp_mcmc_release_path", A, "release", "dplit.mcmc.dp_mcmc('rel.json', n_iter=50, progress=False)",
   fixtures=("rel.json",))
py("mcmc_statistic_wrong_length", A, ("statistic", "n"),
   "dplit.mcmc.mcmc(np.array([-1.0, -2.0]), 0, n_iter=50, progress=False)")
py("mcmc_statistic_positive", A, "statistic",
   "dplit.mcmc.mcmc(np.array([1.0, 2.0, 3.0]), 100, n_iter=50, progress=False)")
py("dp_remcmc_b_zero", A, "b", "dplit.mcmc.dp_remcmc(R(), b=0, n_iter=50, progress=False)", fixtures=("rel.json",))
py("dp_remcmc_b_above_n", A, "b", "dplit.mcmc.dp_remcmc(R(), b=10**6, n_iter=50, progress=False)", fixtures=("rel.json",))
py("dp_remcmc_record_update_typo", A, "record_update",
   "dplit.mcmc.dp_remcmc(R(), record_update='gibbs', n_iter=50, progress=False)", fixtures=("rel.json",))
py("p5_prior_n_draws_zero", A, "n_draws", "dplit.mcmc.p5_prior(R('rel_split.json'), n_draws=0, progress=False)",
   fixtures=("rel_split.json",))
py("p5_prior_unsplit", A, ("release", "split", "D1", "p5"), "dplit.mcmc.p5_prior(R(), n_draws=50, progress=False)",
   fixtures=("rel.json",))

A = "abc"
py("dp_abc_accept_rate_zero", A, "accept_rate", "dplit.abc.dp_abc(R(), n_accept=10, accept_rate=0.0, progress=False)",
   fixtures=("rel.json",))
py("dp_abc_accept_rate_one_plus", A, "accept_rate",
   "dplit.abc.dp_abc(R(), n_accept=10, accept_rate=1.01, progress=False)", fixtures=("rel.json",))
py("dp_abc_n_accept_tiny_rate", A, ("n_accept", "accept_rate", "memory"),
   "dplit.abc.dp_abc(R(), n_accept=10**6, accept_rate=1e-9, progress=False)", fixtures=("rel.json",))
py("dp_abc_adjust_typo", A, "adjust", "dplit.abc.dp_abc(R(), n_accept=10, adjust='linear!', progress=False)",
   fixtures=("rel.json",))
py("dp_abc_prior_object_wrong_d", A, ("prior", "d"),
   "p = dplit.priors.GammaPrior(d=5)\ndplit.abc.dp_abc(R(), prior=p, n_accept=10, progress=False)", fixtures=("rel.json",))
py("simulate_releases_scales_negative", A, "scales",
   "dplit.abc.simulate_releases(np.ones((5, 3)), [100], [-1.0], 1e-3)")
py("simulate_releases_alphas_1d", A, "alphas", "dplit.abc.simulate_releases(np.ones(3), [100], [1.0], 1e-3)")

A = "approx"
py("dp_approx_update_typo", A, "update", "dplit.approx.dp_approx(R(), update='block', n_iter=50, progress=False)",
   fixtures=("rel.json",))
py("dp_approx_n_mh_zero", A, "n_mh", "dplit.approx.dp_approx(R(), n_mh=0, n_iter=50, progress=False)",
   fixtures=("rel.json",))
py("dp_approx_p5", A, "prior", "dplit.approx.dp_approx(R('rel_split.json'), prior='p5', n_iter=50, progress=False)",
   fixtures=("rel_split.json",))
py("dp_approx_thin_above_n_iter", A, "thin", "dplit.approx.dp_approx(R(), thin=100, n_iter=50, progress=False)",
   fixtures=("rel.json",))

A = "priors"
py("GammaPrior_shape_zero", A, "shape", "dplit.priors.GammaPrior(shape=0.0, d=3)")
py("GammaPrior_rate_inf", A, "rate", "dplit.priors.GammaPrior(rate=float('inf'), d=3)")
py("GammaPrior_d_one", A, "d", "dplit.priors.GammaPrior(d=1)")
py("GammaPrior_name_int", A, "name", "dplit.priors.GammaPrior(d=3, name=4)")
py("DrawsPrior_negative_draws", A, "draws", "dplit.priors.DrawsPrior(-np.ones((20, 3)))")
py("DrawsPrior_inf_draws", A, "draws", "a = np.ones((20, 3)); a[3, 1] = np.inf; dplit.priors.DrawsPrior(a)")
py("DrawsPrior_1d", A, "draws", "dplit.priors.DrawsPrior(np.ones(3))")
py("GaussianCopulaPrior_corr_not_pd", A, "corr",
   "dplit.priors.GaussianCopulaPrior([1.0, 1.0], [0.1, 0.1], [[1.0, 2.0], [2.0, 1.0]])")
py("GaussianCopulaPrior_shape_len", A, ("shape", "rate", "corr"),
   "dplit.priors.GaussianCopulaPrior([1.0, 1.0, 1.0], [0.1, 0.1], np.eye(2))")
py("make_prior_unknown", A, "name", "dplit.priors.make_prior('gamma', d=3)")
py("make_prior_p2_without_release", A, "release", "dplit.priors.make_prior('p2', d=3)")
py("make_prior_p1_no_d", A, "d", "dplit.priors.make_prior('p1')")
py("make_prior_n_draws_negative", A, "n_draws", "dplit.priors.make_prior('p3', R('rel_split.json'), n_draws=-5)",
   fixtures=("rel_split.json",))
py("p2_draws_n_draws_huge", A, "n_draws", "dplit.priors.p2_draws(R('rel_split.json'), n_draws=10**13)",
   fixtures=("rel_split.json",))

A = "dirichlet"
py("check_compositions_tol_negative", A, "tol", "dplit.dirichlet.check_compositions(X(), tol=-1)")
py("close_negative_amounts", A, "amounts", "dplit.dirichlet.close(np.array([[1.0, -2.0, 3.0]]))")
py("close_zero_row", A, "amounts", "dplit.dirichlet.close(np.array([[0.0, 0.0], [1.0, 2.0]]))")
py("loglik_n_negative", A, "n", "dplit.dirichlet.loglik([1.0, 2.0], [-1.0, -1.0], -3)")
py("fisher_information_alpha_inf", A, "alpha", "dplit.dirichlet.fisher_information([1.0, float('inf')])")
py("dirichlet_mle_stat_positive", A, ("s", "range", "statistic"), "dplit.dirichlet_fit.dirichlet_mle(np.array([0.5, -1.0]))")
py("dirichlet_mle_max_iter_zero", A, "max_iter", "dplit.dirichlet_fit.dirichlet_mle(np.array([-1.2, -1.0]), max_iter=0)")
py("censored_stat_a_one", A, "a", "dplit.dirichlet.censored_stat(X(), 1.0)")

A = "mechanisms"
py("laplace_mechanism_secure_none", A, "secure", "dplit.mechanisms.laplace_mechanism(1.0, 1.0, 1.0, secure=None)")
py("laplace_mechanism_sensitivity_zero", A, "sensitivity", "dplit.mechanisms.laplace_mechanism(1.0, 0.0, 1.0)")
py("laplace_mechanism_value_string", A, "value", "dplit.mechanisms.laplace_mechanism('3', 1.0, 1.0)")
py("laplace_mechanism_eps_inf", A, "eps", "dplit.mechanisms.laplace_mechanism(1.0, 1.0, float('inf'))")
py("laplace_logpdf_scale_negative", A, "scale", "dplit.mechanisms.laplace_logpdf(0.0, 0.0, -1.0)")
py("geometric_mechanism_float_counts", A, "counts", "dplit.mechanisms.geometric_mechanism([1.5, 2.0], 1, 1.0)")
py("geometric_mechanism_sensitivity_float", A, "sensitivity", "dplit.mechanisms.geometric_mechanism([1, 2], 0.5, 1.0)")
py("geometric_mechanism_counts_past_int64", A, "counts", "dplit.mechanisms.geometric_mechanism([2**70, 1], 1, 1.0)")
py("two_sided_geometric_t_one", A, "t", "dplit.mechanisms.two_sided_geometric_logpmf(0, 1.0)")
py("sample_two_sided_geometric_size_negative", A, "size", "dplit.mechanisms.sample_two_sided_geometric(0.5, -3)")
py("sample_discrete_gaussian_sigma_zero", A, "sigma", "dplit.mechanisms.sample_discrete_gaussian(0.0, 5)")
py("sample_discrete_gaussian_size_huge", A, "size", "dplit.mechanisms.sample_discrete_gaussian(1.0, 10**12)")
# documented: a point off the integers has probability 0 (log pmf -inf), which a likelihood needs
py("discrete_gaussian_logpmf_k_float", A, "k", "assert dplit.mechanisms.discrete_gaussian_logpmf(0.5, 1.0) == -np.inf",
   expect="nolose")
py("randomized_response_p_keep_one", A, "p_keep", "dplit.mechanisms.randomized_response_epsilon(1.0)")
py("randomized_response_x_not_binary", A, "x", "dplit.mechanisms.randomized_response(np.array([0, 1, 2]))")
py("randomized_response_logpmf_y_float", A, "y", "dplit.mechanisms.randomized_response_logpmf(0.5, 1)")

A = "accounting"
py("PrivacyBudget_total_negative", A, "total", "dplit.accounting.PrivacyBudget(-1.0)")
py("PrivacyBudget_total_string", A, "total", "dplit.accounting.PrivacyBudget('1.0')")
py("PrivacyBudget_spend_negative", A, ("eps", "spend"),
   "b = dplit.accounting.PrivacyBudget(1.0)\nm = [n for n in dir(b) if not n.startswith('_') and callable(getattr(b, n))]\n"
   "f = getattr(b, 'spend', None) or getattr(b, 'charge')\nf(-0.5, 'x')")
py("compose_rdp_negative", A, "eps", "dplit.accounting.compose_rdp([0.1, -0.2])")
py("rdp_to_dp_lam_one", A, "lam", "dplit.accounting.rdp_to_dp(0.5, 1.0, 1e-6)")
py("rdp_to_dp_delta_zero", A, "delta", "dplit.accounting.rdp_to_dp(0.5, 5.0, 0.0)")
py("rdp_to_dp_classic_delta_one", A, "delta", "dplit.accounting.rdp_to_dp_classic(0.5, 5.0, 1.0)")
py("best_rdp_to_dp_lengths", A, ("eps", "lams"), "dplit.accounting.best_rdp_to_dp([0.1, 0.2], [2.0, 3.0, 4.0], 1e-6)")
py("best_rdp_to_dp_empty", A, ("eps", "lams"), "dplit.accounting.best_rdp_to_dp([], [], 1e-6)")
py("gaussian_zcdp_rho_sigma_zero", A, "sigma", "dplit.accounting.gaussian_zcdp_rho(0.0, 1.0)")
py("zcdp_to_dp_method_typo", A, "method", "dplit.accounting.zcdp_to_dp(0.1, 1e-6, method='optimal!')")
py("zcdp_to_dp_rho_negative", A, "rho", "dplit.accounting.zcdp_to_dp(-0.1, 1e-6)")
py("discrete_gaussian_delta_shift_empty", A, "shift", "dplit.accounting.discrete_gaussian_delta(1.0, 2.0, shift=())")
py("discrete_gaussian_delta_shift_float", A, "shift", "dplit.accounting.discrete_gaussian_delta(1.0, 2.0, shift=(0.5,))")
py("discrete_gaussian_epsilon_delta_one", A, "delta", "dplit.accounting.discrete_gaussian_epsilon(2.0, 1.5)")
py("RdpBudget_total_bad", A, "total", "dplit.accounting.RdpBudget(total=-3)")

A = "dirichlet_mechanism"
py("kl_divergence_lengths", A, ("p", "q"), "dplit.dirichlet_mechanism.kl_divergence([0.5, 0.5], [0.2, 0.3, 0.5])")
py("kl_divergence_not_prob", A, ("p", "q"), "dplit.dirichlet_mechanism.kl_divergence([0.5, 0.9], [0.5, 0.5])")
py("dirichlet_rdp_bound_r_zero", A, "r", "dplit.dirichlet_mechanism.dirichlet_rdp_bound(0.0, 5.0)")
py("dirichlet_rdp_bound_lam_half", A, "lam", "dplit.dirichlet_mechanism.dirichlet_rdp_bound(1.0, 0.5)")
py("dirichlet_mechanism_params_delta2_neg", A, "delta2",
   "dplit.dirichlet_mechanism.dirichlet_mechanism_params(1.0, 5.0, delta2=-1.0)")
py("dirichlet_mechanism_counts_negative", A, "counts", "dplit.dirichlet_mechanism.dirichlet_mechanism([3, -1, 2], 1.0, 5.0)")
py("dirichlet_mechanism_counts_2d", A, "counts",
   "dplit.dirichlet_mechanism.dirichlet_mechanism(np.ones((2, 2, 2)), 1.0, 5.0)")
py("dirichlet_mechanism_lower_bound_neg", A, "lower_bound",
   "dplit.dirichlet_mechanism.dirichlet_mechanism([3, 1, 2], 1.0, 5.0, lower_bound=-1.0)")
py("renyi_divergence_dirichlet_u_zero", A, "u", "dplit.dirichlet_mechanism.renyi_divergence_dirichlet([0.0, 1.0], [1.0, 1.0], 2.0)")
py("dirichlet_mechanism_dp_delta_big", A, "delta", "dplit.dirichlet_mechanism.dirichlet_mechanism_dp(1.0, 5.0, 2.0)")
py("kl_tail_bound_d_one", A, "d", "dplit.dirichlet_mechanism.kl_tail_bound(0.1, 0.05, 1, [1.0])")
py("sample_complexity_zeta_one", A, "zeta", "dplit.dirichlet_mechanism.sample_complexity(0.1, 1.0, 1.0, 5.0, 3)")
py("laplace_rdp_scale_zero", A, "scale", "dplit.dirichlet_mechanism.laplace_rdp(2.0, 0.0)")
py("baseline_noise_scale_mech_typo", A, "mechanism", "dplit.dirichlet_mechanism.baseline_noise_scale('laplac', 1.0, 2.0)")
py("baseline_noise_scale_cells_zero", A, "cells_changed",
   "dplit.dirichlet_mechanism.baseline_noise_scale('laplace', 1.0, 2.0, cells_changed=0)")
py("private_naive_bayes_y_out_of_range", A, "y",
   "c = REC(30, 3); dplit.dirichlet_mechanism.private_naive_bayes(c, np.full(30, 5), [2, 2, 2], 2, rng=1)")
py("private_naive_bayes_codes_too_big", A, "codes",
   "c = REC(30, 3, levels=4); dplit.dirichlet_mechanism.private_naive_bayes(c, np.zeros(30, int), [2, 2, 2], 2, rng=1)")
py("private_naive_bayes_mechanism_typo", A, "mechanism",
   "c = REC(30, 3); dplit.dirichlet_mechanism.private_naive_bayes(c, c[:, 0], [2, 2, 2], 2, mechanism='dirichlett')")
py("private_naive_bayes_n_levels_len", A, "n_levels",
   "c = REC(30, 3); dplit.dirichlet_mechanism.private_naive_bayes(c, c[:, 0], [2, 2], 2, rng=1)")
py("naive_bayes_log_proba_codes_float", A, "codes",
   "c = REC(30, 3); m = dplit.dirichlet_mechanism.private_naive_bayes(c, c[:, 0], [2, 2, 2], 2, rng=1)\n"
   "dplit.dirichlet_mechanism.naive_bayes_log_proba(m, c + 0.5, [2, 2, 2])")
py("naive_bayes_log_proba_model_none", A, "model",
   "dplit.dirichlet_mechanism.naive_bayes_log_proba(None, REC(5, 3), [2, 2, 2])")
py("bayes_net_cpts_cyclic", A, "parents",
   "dplit.dirichlet_mechanism.bayes_net_cpts(REC(30, 3), [2, 2, 2], [[1], [0], []], rng=1)")
py("bayes_net_cpts_parent_self", A, "parents",
   "dplit.dirichlet_mechanism.bayes_net_cpts(REC(30, 3), [2, 2, 2], [[0], [], []], rng=1)")
py("bayes_net_cpts_parents_short", A, "parents",
   "dplit.dirichlet_mechanism.bayes_net_cpts(REC(30, 3), [2, 2, 2], [[]], rng=1)")
py("bayes_net_loglik_levels_zero", A, "n_levels",
   "dplit.dirichlet_mechanism.bayes_net_loglik([np.zeros(2)] * 2, REC(5, 2), [0, 2], [[], []])")

A = "augmentation"
AUG = ("import numpy as np\n"
       "def lat(theta): return np.random.default_rng().normal(theta[0], 1, size=(5, 1))\n"
       "def post(dmat, theta): return np.array([dmat.mean()])\n"
       "def priv(sdp, sx): return -0.5 * float(np.sum((sdp - sx) ** 2))\n"
       "def st(xi, sdp, i): return np.array([xi.sum()])\n")
py("PrivacyModel_npar_zero", A, "npar", AUG + "dplit.augmentation.PrivacyModel(lat, post, priv, st, 0)")
py("PrivacyModel_latent_not_callable", A, "latent_f", AUG + "dplit.augmentation.PrivacyModel(3, post, priv, st, 1)")
py("PrivacyModel_varnames_len", A, "varnames",
   AUG + "dplit.augmentation.PrivacyModel(lat, post, priv, st, 1, varnames=['a', 'b'])")
py("dapper_sample_init_par_len", A, "init_par",
   AUG + "m = dplit.augmentation.PrivacyModel(lat, post, priv, st, 1)\n"
   "dplit.augmentation.dapper_sample(m, np.array([3.0]), [0.0, 1.0, 2.0], n_iter=20, n_warmup=5, n_chains=1, progress=False)")
py("dapper_sample_engine_typo", A, "engine",
   AUG + "m = dplit.augmentation.PrivacyModel(lat, post, priv, st, 1)\n"
   "dplit.augmentation.dapper_sample(m, np.array([3.0]), [0.0], engine='numba!', n_iter=20, progress=False)")
py("dapper_sample_priv_returns_string", A, ("priv_f", "number"),
   "import numpy as np\n"
   "def lat(theta): return np.zeros((5, 1))\n"
   "def post(dmat, theta): return np.array([0.0])\n"
   "def priv(sdp, sx): return 'high'\n"
   "def st(xi, sdp, i): return np.array([xi.sum()])\n"
   "m = dplit.augmentation.PrivacyModel(lat, post, priv, st, 1)\n"
   "dplit.augmentation.dapper_sample(m, np.array([3.0]), [0.0], n_iter=20, n_warmup=5, n_chains=1, progress=False)")
py("dapper_sample_st_wrong_shape", A, ("st_f", "shape"),
   "import numpy as np\n"
   "def lat(theta): return np.zeros((5, 1))\n"
   "def post(dmat, theta): return np.array([0.0])\n"
   "def priv(sdp, sx): return 0.0\n"
   "def st(xi, sdp, i): return np.zeros(4)\n"
   "m = dplit.augmentation.PrivacyModel(lat, post, priv, st, 1)\n"
   "dplit.augmentation.dapper_sample(m, np.array([3.0]), [0.0], n_iter=20, n_warmup=5, n_chains=1, progress=False)")
py("dapper_sample_post_raises", A, ("post_f",),
   "import numpy as np\n"
   "def lat(theta): return np.zeros((5, 1))\n"
   "def post(dmat, theta): raise KeyError('oops')\n"
   "def priv(sdp, sx): return 0.0\n"
   "def st(xi, sdp, i): return np.array([xi.sum()])\n"
   "m = dplit.augmentation.PrivacyModel(lat, post, priv, st, 1)\n"
   "dplit.augmentation.dapper_sample(m, np.array([3.0]), [0.0], n_iter=20, n_warmup=5, n_chains=1, progress=False)")
py("dapper_sample_latent_wrong_signature", A, "latent_f",
   "import numpy as np\n"
   "def lat(data, theta): return np.zeros((5, 1))\n"
   "def post(dmat, theta): return np.array([0.0])\n"
   "def priv(sdp, sx): return 0.0\n"
   "def st(xi, sdp, i): return np.array([xi.sum()])\n"
   "m = dplit.augmentation.PrivacyModel(lat, post, priv, st, 1)\n"
   "dplit.augmentation.dapper_sample(m, np.array([3.0]), [0.0], n_iter=20, n_warmup=5, n_chains=1, progress=False)")
py("dapper_sample_model_tuple", A, "model",
   "dplit.augmentation.dapper_sample((1, 2), np.array([3.0]), [0.0], n_iter=20, progress=False)")
py("summary_not_a_result", A, "result", "dplit.augmentation.summary({'alpha': [1, 2]})")

A = "latent_class"
py("release_margins_margin_out_of_range", A, "margins", "dplit.latent_class.release_margins(REC(), [(0, 9)], 1.0, rng=1)")
py("release_margins_margin_repeated_var", A, "margins", "dplit.latent_class.release_margins(REC(), [(1, 1)], 1.0, rng=1)")
py("release_margins_records_float", A, "records", "dplit.latent_class.release_margins(REC() + 0.25, [(0, 1)], 1.0, rng=1)")
py("release_margins_records_negative", A, "records", "dplit.latent_class.release_margins(REC() - 1, [(0, 1)], 1.0, rng=1)")
py("release_margins_levels_too_small", A, "levels",
   "dplit.latent_class.release_margins(REC(levels=3), [(0, 1)], 1.0, levels=(2, 2, 2, 2), rng=1)")
py("release_margins_huge_margin", A, ("margins", "levels", "cells", "memory"),
   "dplit.latent_class.release_margins(REC(50, 6), [(0, 1, 2, 3, 4, 5)], 1.0, levels=(10**4,) * 6, rng=1)")
py("release_margins_transposed", A, ("records", "variables"),
   "dplit.latent_class.release_margins(REC(3, 300), [(0, 1)], 1.0, rng=1)", expect="warn")
py("release_margins_sensitivity_zero", A, "sensitivity",
   "dplit.latent_class.release_margins(REC(), [(0, 1)], 1.0, sensitivity=0.0, rng=1)")
py("release_margins_names_len", A, "names",
   "dplit.latent_class.release_margins(REC(), [(0, 1)], 1.0, names=('a',), rng=1)")
py("release_margins_eps_list", A, "eps", "dplit.latent_class.release_margins(REC(), [(0, 1)], [1.0], rng=1)")
py("MarginRelease_from_json_no_eps", A, "eps",
   "import json; d = json.load(open('margins.json')); del d['eps']; MarginRelease.from_json(json.dumps(d))",
   fixtures=("margins.json",))
py("MarginRelease_from_json_garbage", A, ("json", "text", "release"), "MarginRelease.from_json('{not json')")
py("MarginRelease_from_json_counts_short", A, "counts",
   "import json; d = json.load(open('margins.json')); d['counts'][0] = d['counts'][0][:1]; MarginRelease.from_json(json.dumps(d))",
   fixtures=("margins.json",))
py("MarginRelease_from_json_n_negative", A, "n",
   "import json; d = json.load(open('margins.json')); d['n'] = -5; MarginRelease.from_json(json.dumps(d))",
   fixtures=("margins.json",))
MR = "rel = MarginRelease.from_json(open('margins.json').read())\n"
py("fit_latent_class_k_zero", A, "k", MR + "dplit.latent_class.fit_latent_class(rel, k=0, n_iter=20, progress=False)",
   fixtures=("margins.json",))
py("fit_latent_class_k_huge", A, ("k", "memory"),
   MR + "dplit.latent_class.fit_latent_class(rel, k=10**9, n_iter=20, progress=False)", fixtures=("margins.json",))
py("fit_latent_class_pi_strategy_typo", A, "pi_strategy",
   MR + "dplit.latent_class.fit_latent_class(rel, pi_strategy='stick', n_iter=20, progress=False)", fixtures=("margins.json",))
py("fit_latent_class_alpha_negative", A, "alpha",
   MR + "dplit.latent_class.fit_latent_class(rel, alpha=-1.0, n_iter=20, progress=False)", fixtures=("margins.json",))
py("fit_latent_class_weight_zero", A, "weight",
   MR + "dplit.latent_class.fit_latent_class(rel, weight=0.0, n_iter=20, progress=False)", fixtures=("margins.json",))
py("fit_latent_class_release_records", A, "release",
   "dplit.latent_class.fit_latent_class(REC(), n_iter=20, progress=False)")
py("latent_params_not_result", A, "result", "dplit.latent_class.latent_params(42)")
py("cell_intervals_level_zero", A, "level", "dplit.latent_class.cell_intervals(np.ones((10, 4)) / 4, level=0.0)")
py("combine_variances_negative", A, "variances",
   "dplit.latent_class.combine(np.ones((5, 3)), -np.ones((5, 3)))")
py("combine_rule_typo", A, "rule", "dplit.latent_class.combine(np.ones((5, 3)), np.ones((5, 3)), rule='ful')")
py("combine_one_estimate", A, ("estimates", "m"), "dplit.latent_class.combine(np.ones((1, 3)), np.ones((1, 3)))")
py("ipf_table_targets_mismatch", A, "targets",
   "dplit.latent_class.ipf_table((2, 2), [(0,), (1,)], [np.array([0.5, 0.5]), np.array([0.2, 0.3, 0.5])])")
py("ipf_table_targets_negative", A, "targets",
   "dplit.latent_class.ipf_table((2, 2), [(0,), (1,)], [np.array([1.5, -0.5]), np.array([0.5, 0.5])])")
py("table_probs_pi_not_summing", A, "pi",
   "dplit.latent_class.table_probs(np.array([0.9, 0.9]), [np.full((2, 2), 0.5)] * 2, (2, 2))")
py("margin_counts_margin_empty", A, "margins", "dplit.latent_class.margin_counts(REC(), [()])")

A = "margin_selection"
py("mi_sensitivity_n_one", A, "n", "dplit.margin_selection.mi_sensitivity(1)")
py("mutual_information_child_in_parents", A, ("child", "parents"),
   "dplit.margin_selection.mutual_information(REC(), 0, (0, 1))")
py("selection_probabilities_nan", A, "scores", "dplit.margin_selection.selection_probabilities([0.1, float('nan')], 1.0, 1.0)")
py("exponential_mechanism_empty", A, "scores", "dplit.margin_selection.exponential_mechanism([], 1.0, 1.0, rng=1)")
py("select_margins_degree_zero", A, "degree", "dplit.margin_selection.select_margins(REC(), 1.0, degree=0, rng=1)")
py("select_margins_degree_above_p", A, "degree", "dplit.margin_selection.select_margins(REC(p=3), 1.0, degree=5, rng=1)")
py("select_margins_one_variable", A, "records", "dplit.margin_selection.select_margins(REC(p=1), 1.0, rng=1)")
py("select_and_release_share_one", A, "share", "dplit.margin_selection.select_and_release(REC(), 1.0, share=1.0, rng=1)")
# documented: weight is any real (a larger one is a stronger dependence), so 2.0 is a request, not a slip
py("sample_network_weight_two", A, "weight",
   "s = dplit.margin_selection.select_margins(REC(), 1.0, rng=1)\n"
   "x = dplit.margin_selection.sample_network(s.network, 10, weight=2.0, rng=1)\nassert x.shape == (10, REC().shape[1])",
   expect="nolose")
py("sample_network_n_huge", A, "n",
   "s = dplit.margin_selection.select_margins(REC(), 1.0, rng=1)\ndplit.margin_selection.sample_network(s.network, 10**12, rng=1)")
py("two_way_report_used_wrong", A, ("used", "fit"), "dplit.margin_selection.two_way_report(None, REC(), [(0, 1)])")

A = "peers"
py("pgm_fit_iters_zero", A, "iters", MR + "dplit.peers.pgm_fit(rel, iters=0)", fixtures=("margins.json",))
py("privbayes_fit_eps_zero", A, "eps", "dplit.peers.privbayes_fit(REC(), 0.0, rng=1)")
py("privbayes_fit_degree_negative", A, "degree", "dplit.peers.privbayes_fit(REC(), 1.0, degree=-1, rng=1)")
py("latent_class_estimate_max_draws_zero", A, "max_draws",
   MR + "dplit.peers.latent_class_estimate(rel, max_draws=0, n_iter=20, n_warmup=5)", fixtures=("margins.json",))
py("estimate_errors_truth_shape", A, "truth",
   "e = dplit.peers.PeerEstimate('pgm', 1.0, (2, 2), np.full((2, 2), 0.25))\ndplit.peers.estimate_errors(e, np.ones(7))")
py("compare_methods_unknown", A, "methods", "dplit.peers.compare_methods(REC(), 1.0, methods=('pgm', 'mwem'), rng=1)")
py("compare_methods_string_typo", A, "methods", "dplit.peers.compare_methods(REC(), 1.0, methods='pgn', rng=1)")
py("PeerEstimate_table_negative", A, "table", "dplit.peers.PeerEstimate('pgm', 1.0, (2, 2), -np.ones((2, 2)))")

A = "nested"
SR = "import pickle; rel = pickle.load(open('summaries.pkl', 'rb'))\n"
py("release_summaries_households_float", A, "households", "dplit.nested.release_summaries(HH() + 0.5, 1.0, rng=1)")
py("release_summaries_n_race_zero", A, "n_race", "dplit.nested.release_summaries(HH(), 1.0, n_race=0, rng=1)")
py("release_summaries_eps_negative", A, "eps", "dplit.nested.release_summaries(HH(), -1.0, rng=1)")
py("release_summaries_empty", A, "households", "dplit.nested.release_summaries(np.empty((0, 3, 4), int), 1.0, rng=1)")
py("fit_nested_G_zero", A, "G", SR + "dplit.nested.fit_nested(rel, G=0, n_iter=20, n_warmup=5, progress=False)",
   fixtures=("summaries.pkl",))
py("fit_nested_G_M_huge", A, ("G", "M", "memory"),
   SR + "dplit.nested.fit_nested(rel, G=10**6, M=10**6, n_iter=20, n_warmup=5, progress=False)", fixtures=("summaries.pkl",))
py("fit_nested_weight_negative", A, "weight",
   SR + "dplit.nested.fit_nested(rel, weight=-1.0, n_iter=20, n_warmup=5, progress=False)", fixtures=("summaries.pkl",))
py("fit_nested_release_wrong_type", A, "release",
   "dplit.nested.fit_nested(R(), n_iter=20, n_warmup=5, progress=False)", fixtures=("rel.json",))
# both arguments are wrong: the first one checked is named
py("synthesize_households_m_zero", A, ("m", "result"), "dplit.nested.synthesize_households(None, 10, 0)")
py("SummaryRelease_counts_negative_n", A, ("n", "counts"),
   "SummaryRelease(np.ones(5), -3, 1.0, 2, 2)")
py("simulate_households_n_huge", A, "n",
   "dplit.nested_model.simulate_households(dplit.nested_model.SIMULATED_TRUTH, 10**12, rng=1)")
py("simulate_households_size_zero", A, "size",
   "dplit.nested_model.simulate_households(dplit.nested_model.SIMULATED_TRUTH, 10, size=0, rng=1)")
py("household_summaries_records_1d", A, "records", "dplit.nested_model.household_summaries(np.arange(5))")
py("NestedParams_pi_negative", A, "pi",
   "p = dplit.nested_model.SIMULATED_TRUTH\nimport dataclasses\n"
   "q = dataclasses.replace(p, pi=-p.pi)\ndplit.nested_model.summary_probs(q)")

A = "methods"
py("method_unknown_name", A, "name", "dplit.methods.method('dpgibbs')")
py("fit_name_typo", A, "name", "dplit.methods.fit(R(), 'dp_boots')", fixtures=("rel.json",))
py("fit_setting_unknown", A, ("n_bot", "setting", "option"),
   "dplit.methods.fit(R(), 'dpboots', n_bot=50, progress=False)", fixtures=("rel.json",))
py("fit_prior_on_dpboots", A, "prior", "dplit.methods.fit(R(), 'dpboots', prior='p1', n_boot=50, progress=False)",
   fixtures=("rel.json",))
py("fit_data_list", A, "data", "dplit.methods.fit([[0.2, 0.8]], 'dpmcmc', n_iter=20, progress=False)")
py("applies_prior_typo", A, "prior", "dplit.methods.applies(R(), 'dpmcmc', prior='p9')", fixtures=("rel.json",))
py("compare_methods_set_typo", A, "methods",
   "dplit.methods.compare(R(), methods=('dpboots', 'dpmcmcc'), progress=False)", fixtures=("rel.json",))
py("compare_truth_wrong_length", A, "truth",
   "dplit.methods.compare(R(), methods=('dpboots',), truth=[0.5, 0.5], progress=False)", fixtures=("rel.json",))
py("compare_truth_not_summing", A, "truth",
   "dplit.methods.compare(R(), methods=('dpboots',), truth=[0.5, 0.5, 0.5], progress=False)", fixtures=("rel.json",))
py("compare_level_one", A, "level", "dplit.methods.compare(R(), methods=('dpboots',), level=1.0, progress=False)",
   fixtures=("rel.json",))
py("compare_priors_p3_unsplit", A, ("priors", "p3", "split"),
   "dplit.methods.compare(R(), methods=('dpmcmc',), priors=('p3',), progress=False)", fixtures=("rel.json",))
py("compare_settings_unknown_method", A, "settings",
   "dplit.methods.compare(R(), methods=('dpboots',), settings={'dpgibbs': {}}, progress=False)", fixtures=("rel.json",))
py("compare_settings_not_dict", A, "settings",
   "dplit.methods.compare(R(), methods=('dpboots',), settings=[('n_boot', 5)], progress=False)", fixtures=("rel.json",))
py("Comparison_to_html_over_release", A, ("path", "exists", "overwrite"),
   "c = dplit.methods.compare(R(), methods=('dpboots',), settings={'dpboots': {'n_boot': 50}}, rng=1, progress=False)\n"
   "c.to_html('rel.json')", fixtures=("rel.json",), unchanged=("rel.json",))

A = "results"
RES = "r = dplit.results.from_netcdf('res.nc')\n"
py("to_netcdf_over_existing", A, ("path", "exists", "overwrite"), RES + "dplit.results.to_netcdf(r, 'res.nc')",
   fixtures=("res.nc",), unchanged=("res.nc",))
py("to_netcdf_overwrite_string", A, "overwrite", RES + "dplit.results.to_netcdf(r, 'o.nc', overwrite='no')",
   fixtures=("res.nc",), absent=("o.nc",))
py("to_netcdf_not_a_result", A, "result", "dplit.results.to_netcdf({'a': 1}, 'o.nc')", absent=("o.nc",))
py("to_netcdf_full_disk", A, ("path", "write", "disk", "too large", "space", "o.nc"),
   RES + "dplit.results.to_netcdf(r, 'o.nc')", fixtures=("res.nc",), fsize=4000, absent=("o.nc",))
py("to_netcdf_full_disk_overwrite", A, ("path", "write", "disk", "too large", "space", "o.nc"),
   RES + "dplit.results.to_netcdf(r, 'o.nc', overwrite=True)", fixtures=("res.nc",), fsize=4000,
   files={"o.nc": "old result\n"}, unchanged=("o.nc",))
py("to_netcdf_readonly", A, ("path", "permission", "write", "ro"), RES + "dplit.results.to_netcdf(r, RO + '/o.nc')",
   fixtures=("res.nc",), readonly=("ro",))
py("to_netcdf_path_list", A, "path", RES + "dplit.results.to_netcdf(r, ['o.nc'])", fixtures=("res.nc",))
py("from_netcdf_missing", A, ("path", "no such", "not found", "exist"), "dplit.results.from_netcdf('gone.nc')")
py("from_netcdf_text_file", A, ("path", "netcdf", "not a"), "dplit.results.from_netcdf('t.nc')", files={"t.nc": "hello\n"})
py("from_netcdf_truncated", A, ("path", "netcdf", "truncated", "not a", "read"),
   "b = open('res.nc', 'rb').read(); open('t.nc', 'wb').write(b[: len(b) // 2]); dplit.results.from_netcdf('t.nc')",
   fixtures=("res.nc",))
py("from_netcdf_json_release", A, ("path", "netcdf", "not a", "json"), "dplit.results.from_netcdf('rel.json')",
   fixtures=("rel.json",))
py("draws_unknown_var", A, "var", RES + "dplit.results.draws(r, 'beta')", fixtures=("res.nc",))
py("posterior_var_names_string_typo", A, "var_names", RES + "dplit.results.posterior(r, var_names=['alfa'])",
   fixtures=("res.nc",))
py("check_contract_dict", A, "result",
   "p = dplit.results.check_contract({'posterior': None})\nassert p, 'no problem reported'\nraise ValueError(p[0])")
py("ledger_none", A, "result", "dplit.results.ledger(None)")

A = "study"
py("StudyConfig_n_zero", A, "n", "dplit.study.StudyConfig(n=(0,))")
py("StudyConfig_eps_negative", A, "eps", "dplit.study.StudyConfig(eps=(-1.0,))")
py("StudyConfig_alpha_true_one_comp", A, "alpha_true", "dplit.study.StudyConfig(alpha_true=((2.0,),))")
py("StudyConfig_methods_typo", A, "methods", "dplit.study.StudyConfig(methods=('dpmcmc_p9',))")
py("StudyConfig_replicates_zero", A, "replicates", "dplit.study.StudyConfig(replicates=0)")
py("StudyConfig_split_one", A, "split", "dplit.study.StudyConfig(split=1.0)")
py("StudyConfig_threshold_typo", A, "threshold", "dplit.study.StudyConfig(threshold='DP')")
py("StudyConfig_n_string", A, "n", "dplit.study.StudyConfig(n='1000')")
py("StudyConfig_until_converged_typo", A, "until_converged", "dplit.study.StudyConfig(until_converged=('dpmcmcc',))")
py("StudyConfig_max_mpsrf_below_one", A, "max_mpsrf", "dplit.study.StudyConfig(max_mpsrf=0.9)")
py("run_study_config_dict_typo", A, ("nn", "config", "key", "field"),
   "dplit.study.run_study({'nn': [100]}, 's.jsonl', progress=False)", absent=("s.jsonl",))
py("run_study_max_tasks_negative", A, "max_tasks",
   "dplit.study.run_study(dplit.study.StudyConfig(n=(100,), replicates=1, quick=True, methods=('boots',)), 's.jsonl', "
   "max_tasks=-1, progress=False)")
py("run_study_workers_zero", A, "workers",
   "dplit.study.run_study(dplit.study.StudyConfig(n=(100,), replicates=1, quick=True, methods=('boots',)), 's.jsonl', "
   "workers=0, progress=False)")
py("mse_truth_shape", A, "truth", "dplit.study.mse(np.ones((10, 3)), np.ones(2))")
py("predictive_coverage_n_pred_zero", A, "n_pred",
   "dplit.study.predictive_coverage(np.ones((10, 3)), [1.0, 1.0, 1.0], n_pred=0)")
py("open_store_int", A, "store", "dplit.study_store.open_store(7)")
py("open_store_store_is_dir", A, ("store", "directory", "folder"), "import os; os.mkdir('s.jsonl'); dplit.study_store.open_store('s.jsonl')")
py("open_store_corrupt_jsonl", A, ("store", "line", "s.jsonl"), "len(dplit.study_store.open_store('s.jsonl'))",
   files={"s.jsonl": '{"key": "a", "value": 1}\n{"key": "b", "val\n'})
py("open_store_sqlite_garbage", A, ("store", "sqlite", "database", "s.db"),
   "s = dplit.study_store.open_store('s.db'); list(s)", files={"s.db": "this is not sqlite at all\n" * 10})
py("export_table_out_not_jsonl", A, "out",
   "dplit.study_store.export_table('s.jsonl', 'out.csv')", files={"s.jsonl": ""}, absent=("out.csv",))
py("export_table_out_is_store", A, ("out", "store", "same"),
   "dplit.study_store.export_table('s.jsonl', 's.jsonl')", files={"s.jsonl": ""}, unchanged=("s.jsonl",))
py("run_tasks_keys_not_unique", A, "keys",
   "dplit.study_store.run_tasks(['a', 'a'], lambda k: {'x': 1}, 's.jsonl', progress=False)")
py("dask_executor_bad_scheduler", A, ("scheduler", "dask", "distributed"),
   "dplit.study_store.dask_executor(scheduler=12)")
py("summarise_missing_store", A, ("store", "path", "exist"), "dplit.study_summary.summarise(dplit.study_summary.load_results('none.jsonl'))")

A = "sampling"
py("run_chains_n_chains_zero", A, "n_chains",
   "dplit.sampling.run_chains(None, n_iter=10, n_warmup=0, n_chains=0)")
py("map_blocks_block_size_zero", A, "block_size", "dplit.sampling.map_blocks(lambda *a: None, 10, block_size=0)")
py("convergence_report_max_rhat_string", A, "max_rhat",
   "r = dplit.results.from_netcdf('res.nc'); dplit.sampling.convergence_report(r, max_rhat='1.01')", fixtures=("res.nc",))
py("mpsrf_var_missing", A, "var", "r = dplit.results.from_netcdf('res.nc'); dplit.sampling.mpsrf(r, var='theta')",
   fixtures=("res.nc",))
py("diagnostics_rhat_1d", A, ("x", "draws", "chain", "ary"), "dplit.diagnostics.rhat(np.ones(5))")

# ------------------------------------------------------------------------------------------------
# The CLI: release (and its CSV), analyse, compare, study.
# ------------------------------------------------------------------------------------------------

A = "cli-release"
# 120 records: enough that a release at eps1 = 1 is not refused as mostly noise before the flag under test
GOOD = "a,b,c\n" + "0.2,0.3,0.5\n0.1,0.6,0.3\n0.3,0.3,0.4\n0.25,0.25,0.5\n0.4,0.4,0.2\n0.5,0.1,0.4\n" * 20
REL = ["--eps1", "1", "--eps2", "1"]
cli("release_missing_data_file", A, ("no.csv", "data", "exist", "not found"), ["release", "no.csv", *REL, "--out", "r.json"])
cli("release_data_is_dir", A, ("data", "d.csv", "directory", "folder"), ["release", "d.csv", *REL, "--out", "r.json"],
    files={"d.csv/x": "1"})
cli("release_eps1_word", A, "--eps1", ["release", "x.csv", "--eps1", "one", "--eps2", "1", "--out", "r.json"], files={"x.csv": GOOD})
cli("release_eps2_zero", A, "--eps2", ["release", "x.csv", "--eps1", "1", "--eps2", "0", "--out", "r.json"], files={"x.csv": GOOD})
cli("release_eps1_comma_decimal", A, "--eps1", ["release", "x.csv", "--eps1", "0,5", "--eps2", "1", "--out", "r.json"],
    files={"x.csv": GOOD})
cli("release_tc_percent", A, "--tc", ["release", "x.csv", *REL, "--tc", "5%", "--out", "r.json"], files={"x.csv": GOOD})
cli("release_tc_one", A, "--tc", ["release", "x.csv", *REL, "--tc", "1", "--out", "r.json"], files={"x.csv": GOOD})
cli("release_candidates_trailing_comma", A, "--candidates",
    ["release", "x.csv", *REL, "--candidates", "1e-4,1e-3,", "--out", "r.json"], files={"x.csv": GOOD}, expect="nolose")
cli("release_candidates_word", A, "--candidates",
    ["release", "x.csv", *REL, "--candidates", "small", "--out", "r.json"], files={"x.csv": GOOD})
cli("release_split_one", A, "--split", ["release", "x.csv", *REL, "--split", "1", "--out", "r.json"], files={"x.csv": GOOD})
cli("release_split_percent", A, "--split", ["release", "x.csv", *REL, "--split", "25", "--out", "r.json"], files={"x.csv": GOOD})
cli("release_seed_float", A, "--seed", ["release", "x.csv", *REL, "--split", "0.25", "--seed", "1.5", "--out", "r.json"],
    files={"x.csv": GOOD})
cli("release_header_and_no_header", A, ("--header", "--no-header", "not allowed"),
    ["release", "x.csv", *REL, "--header", "--no-header", "--out", "r.json"], files={"x.csv": GOOD})
cli("release_out_equals_data", A, ("--out", "input", "x.csv"), ["release", "x.csv", *REL, "--out", "x.csv", "--force"],
    files={"x.csv": GOOD}, unchanged=("x.csv",))
cli("release_out_hardlink_to_data", A, ("--out", "input", "same"),
    ["release", "x.csv", *REL, "--out", "y.csv", "--force"], files={"x.csv": GOOD},
    unchanged=("x.csv",), setup="os.link(folder / 'x.csv', folder / 'y.csv')")
cli("release_out_exists_no_force", A, ("--out", "exists", "--force"), ["release", "x.csv", *REL, "--out", "r.json"],
    files={"x.csv": GOOD, "r.json": "precious\n"}, unchanged=("r.json",))
cli("release_out_in_missing_folder", A, ("--out", "folder", "directory", "no/"),
    ["release", "x.csv", *REL, "--out", "no/such/r.json"], files={"x.csv": GOOD})
cli("release_out_readonly_folder", A, ("--out", "permission", "write"),
    ["release", "x.csv", *REL, "--out", "{RO}/r.json"], files={"x.csv": GOOD}, readonly=("ro",))
cli("release_full_disk", A, ("--out", "write", "disk", "too large", "space", "r.json"),
    ["release", "x.csv", *REL, "--out", "r.json"], files={"x.csv": GOOD}, fsize=200, absent=("r.json",))
cli("release_full_disk_force", A, ("--out", "write", "disk", "too large", "space", "r.json"),
    ["release", "x.csv", *REL, "--out", "r.json", "--force"], files={"x.csv": GOOD, "r.json": "old release\n"},
    fsize=200, unchanged=("r.json",))
cli("release_two_writers", A, ("--out", "exists", "--force"), ["release", "data.csv", *REL, "--out", "r.json"],
    fixtures=("data.csv",), twice=True)
cli("release_unknown_flag", A, ("--epsilon", "unrecognized"), ["release", "x.csv", "--epsilon", "1", "--out", "r.json"],
    files={"x.csv": GOOD})
cli("release_missing_eps2", A, "--eps2", ["release", "x.csv", "--eps1", "1", "--out", "r.json"], files={"x.csv": GOOD})

A = "csv"
cli("csv_bom_no_header", A, "nolose", ["release", "x.csv", *REL, "--no-header", "--out", "r.json"],
    files={"x.csv": "\ufeff0.2,0.3,0.5\n0.1,0.6,0.3\n0.3,0.3,0.4\n"}, expect="nolose")
cli("csv_typo_in_number", A, ("row", "line", "column"), ["release", "x.csv", *REL, "--out", "r.json"],
    files={"x.csv": GOOD + "0.2,0.3O,0.5\n"})
cli("csv_ragged_row", A, ("row", "line", "column", "field"), ["release", "x.csv", *REL, "--out", "r.json"],
    files={"x.csv": GOOD + "0.2,0.8\n"})
cli("csv_semicolon_separated", A, ("row", "line", "column", "comma", "d >= 2", "component"),
    ["release", "x.csv", *REL, "--out", "r.json"], files={"x.csv": "0.2;0.3;0.5\n0.1;0.6;0.3\n0.3;0.3;0.4\n"})
cli("csv_row_not_summing", A, ("row", "line", "sum"), ["release", "x.csv", *REL, "--out", "r.json"],
    files={"x.csv": GOOD + "0.2,0.3,0.6\n"})
cli("csv_negative_amount_close", A, ("row", "negative", "line"), ["release", "x.csv", *REL, "--close", "--out", "r.json"],
    files={"x.csv": "a,b\n30,40\n-5,20\n10,10\n"})
cli("csv_zero_row_close", A, ("row", "zero", "line", "sum"), ["release", "x.csv", *REL, "--close", "--out", "r.json"],
    files={"x.csv": "a,b\n30,40\n0,0\n10,10\n"})
cli("csv_huge_amounts_close", A, ("row", "finite", "line", "inf", "large"),
    ["release", "x.csv", *REL, "--close", "--out", "r.json"], files={"x.csv": "a,b\n1e308,1e308\n10,10\n3,4\n"})
cli("csv_nan_cell", A, ("row", "nan", "line", "finite"), ["release", "x.csv", *REL, "--out", "r.json"],
    files={"x.csv": GOOD + "nan,0.5,0.5\n"})
cli("csv_empty_file", A, ("empty", "record", "data", "x.csv"), ["release", "x.csv", *REL, "--out", "r.json"],
    files={"x.csv": ""})
cli("csv_header_only", A, ("record", "empty", "data", "x.csv"), ["release", "x.csv", *REL, "--out", "r.json"],
    files={"x.csv": "a,b,c\n"})
cli("csv_one_record", A, ("record", "n", "data"), ["release", "x.csv", *REL, "--out", "r.json"],
    files={"x.csv": "a,b,c\n0.2,0.3,0.5\n"})
cli("csv_one_column", A, ("column", "component", "d"), ["release", "x.csv", *REL, "--out", "r.json"],
    files={"x.csv": "a\n1\n1\n1\n"})
cli("csv_mixed_header", A, ("--header", "--no-header", "row", "header"), ["release", "x.csv", *REL, "--out", "r.json"],
    files={"x.csv": "work,2019,play\n0.2,0.3,0.5\n0.1,0.6,0.3\n"})
cli("csv_duplicate_header_names", A, ("name", "header", "duplicate"), ["release", "x.csv", *REL, "--out", "r.json"],
    files={"x.csv": "a,a,b\n0.2,0.3,0.5\n0.1,0.6,0.3\n0.3,0.3,0.4\n"})
cli("csv_latin1_bytes", A, ("utf", "encod", "x.csv", "byte"), ["release", "x.csv", *REL, "--out", "r.json"],
    files={"x.csv": b"w\xf6rk,b\n0.5,0.5\n0.2,0.8\n0.4,0.6\n"})
cli("csv_utf16", A, ("utf", "encod", "x.csv", "byte"), ["release", "x.csv", *REL, "--out", "r.json"],
    files={"x.csv": ("a,b\n0.5,0.5\n0.2,0.8\n").encode("utf-16")})
cli("csv_quoted_numbers", A, "nolose", ["release", "x.csv", *REL, "--out", "r.json"],
    files={"x.csv": 'a,b\n"0.5","0.5"\n"0.2","0.8"\n"0.4","0.6"\n'}, expect="nolose")
cli("csv_exact_zero_column", A, ("zero", "component", "column", "a,b,c"), ["release", "x.csv", *REL, "--out", "r.json"],
    files={"x.csv": "a,b,c\n" + "0.5,0.5,0\n0.2,0.8,0\n0.4,0.6,0\n0.1,0.9,0\n" * 30}, expect="warn")
cli("csv_blank_lines_inside", A, "nolose", ["release", "x.csv", *REL, "--out", "r.json"],
    files={"x.csv": "a,b\n0.5,0.5\n\n0.2,0.8\n\n0.4,0.6\n"}, expect="nolose")
cli("csv_binary_garbage", A, ("x.csv", "utf", "encod", "row", "byte"), ["release", "x.csv", *REL, "--out", "r.json"],
    files={"x.csv": bytes(range(256)) * 4})

A = "cli-analyse"
AN = ["analyse", "rel.json"]
Q = ["--no-progress"]
cli("analyse_method_typo", A, "--method", [*AN, "--method", "dpmcm", "--out", "o.nc"], fixtures=("rel.json",))
cli("analyse_out_equals_release", A, ("--out", "input", "rel.json"),
    [*AN, "--method", "dpboots", "--n-boot", "50", "--out", "rel.json", "--force", *Q], fixtures=("rel.json",),
    unchanged=("rel.json",))
cli("analyse_out_symlink_to_release", A, ("--out", "input", "same"),
    [*AN, "--method", "dpboots", "--n-boot", "50", "--out", "link.nc", "--force", *Q], fixtures=("rel.json",),
    unchanged=("rel.json",), setup="os.symlink('rel.json', folder / 'link.nc')")
cli("analyse_out_exists", A, ("--out", "exists", "--force"), [*AN, "--method", "dpboots", "--n-boot", "50", "--out", "o.nc", *Q],
    fixtures=("rel.json",), files={"o.nc": "keep"}, unchanged=("o.nc",))
cli("analyse_full_disk", A, ("--out", "write", "disk", "too large", "space", "o.nc"),
    [*AN, "--method", "dpboots", "--n-boot", "200", "--out", "o.nc", *Q], fixtures=("rel.json",), fsize=4000, absent=("o.nc",))
cli("analyse_full_disk_force", A, ("--out", "write", "disk", "too large", "space", "o.nc"),
    [*AN, "--method", "dpboots", "--n-boot", "200", "--out", "o.nc", "--force", *Q], fixtures=("rel.json",),
    files={"o.nc": "old"}, fsize=4000, unchanged=("o.nc",))
cli("analyse_two_writers", A, ("--out", "exists", "--force"),
    [*AN, "--method", "dpboots", "--n-boot", "100", "--seed", "1", "--out", "o.nc", *Q], fixtures=("rel.json",), twice=True)
cli("analyse_n_boot_with_dpmcmc", A, ("--n-boot", "dpboots"), [*AN, "--method", "dpmcmc", "--n-boot", "10", "--out", "o.nc", *Q],
    fixtures=("rel.json",))
cli("analyse_b_with_dpabc", A, ("--b", "dpremcmc"), [*AN, "--method", "dpabc", "--b", "10", "--out", "o.nc", *Q],
    fixtures=("rel.json",))
cli("analyse_n_iter_negative", A, "--n-iter", [*AN, "--method", "dpmcmc", "--n-iter", "-10", "--out", "o.nc", *Q],
    fixtures=("rel.json",))
cli("analyse_n_iter_float", A, "--n-iter", [*AN, "--method", "dpmcmc", "--n-iter", "1e3", "--out", "o.nc", *Q],
    fixtures=("rel.json",))
cli("analyse_n_iter_huge", A, ("--n-iter", "memory"), [*AN, "--method", "dpmcmc", "--n-iter", "99999999999999999999999",
    "--out", "o.nc", *Q], fixtures=("rel.json",))
cli("analyse_thin_above_n_iter", A, "--thin", [*AN, "--method", "dpmcmc", "--n-iter", "20", "--thin", "50", "--out", "o.nc", *Q],
    fixtures=("rel.json",))
cli("analyse_n_chains_zero", A, "--n-chains", [*AN, "--method", "dpmcmc", "--n-chains", "0", "--out", "o.nc", *Q],
    fixtures=("rel.json",))
cli("analyse_prior_p3_unsplit", A, ("--prior", "split", "p3"), [*AN, "--method", "dpmcmc", "--prior", "p3", "--out", "o.nc", *Q],
    fixtures=("rel.json",))
cli("analyse_prior_p5_dpapprox", A, ("--prior", "p5"), ["analyse", "rel_split.json", "--method", "dpapprox", "--prior", "p5",
    "--out", "o.nc", *Q], fixtures=("rel_split.json",))
cli("analyse_prior_upper", A, "--prior", [*AN, "--method", "dpmcmc", "--prior", "P1", "--n-iter", "20", "--out", "o.nc", *Q],
    fixtures=("rel.json",))
cli("analyse_part_D1_unsplit", A, ("--part", "D1", "split"), [*AN, "--method", "dpboots", "--part", "D1", "--out", "o.nc", *Q],
    fixtures=("rel.json",))
cli("analyse_test_wrong_length", A, "--test", [*AN, "--method", "dpboots", "--n-boot", "50", "--test", "0.5,0.5",
    "--out", "o.nc", *Q], fixtures=("rel.json",))
cli("analyse_test_word", A, "--test", [*AN, "--method", "dpboots", "--n-boot", "50", "--test", "a,b,c", "--out", "o.nc", *Q],
    fixtures=("rel.json",))
cli("analyse_delta_without_test", A, ("--delta", "--test"), [*AN, "--method", "dpboots", "--n-boot", "50", "--delta", "0.05",
    "--out", "o.nc", *Q], fixtures=("rel.json",))
cli("analyse_delta_negative", A, "--delta", [*AN, "--method", "dpboots", "--n-boot", "50", "--test", "0.3,0.3,0.4",
    "--delta", "-1", "--out", "o.nc", *Q], fixtures=("rel.json",))
cli("analyse_level_percent", A, "--level", [*AN, "--method", "dpboots", "--n-boot", "50", "--level", "95", "--out", "o.nc", *Q],
    fixtures=("rel.json",))
cli("analyse_accept_rate_zero", A, "--accept-rate", [*AN, "--method", "dpabc", "--accept-rate", "0", "--out", "o.nc", *Q],
    fixtures=("rel.json",))
cli("analyse_n_jobs_zero", A, "--n-jobs", [*AN, "--method", "dpboots", "--n-jobs", "0", "--out", "o.nc", *Q],
    fixtures=("rel.json",))
cli("analyse_seed_negative", A, "--seed", [*AN, "--method", "dpboots", "--seed", "-4", "--out", "o.nc", *Q],
    fixtures=("rel.json",))
cli("analyse_seed_huge", A, "--seed", [*AN, "--method", "dpboots", "--n-boot", "50", "--seed", "1" + "0" * 40,
    "--out", "o.nc", *Q], fixtures=("rel.json",), expect="nolose")
cli("analyse_release_is_csv", A, ("release", "json", "data.csv"), ["analyse", "data.csv", "--method", "dpboots", "--out", "o.nc", *Q],
    fixtures=("data.csv",))
cli("analyse_release_is_netcdf", A, ("release", "json", "res.nc"), ["analyse", "res.nc", "--method", "dpboots", "--out", "o.nc", *Q],
    fixtures=("res.nc",))
cli("analyse_release_truncated_json", A, ("release", "json", "r.json"), ["analyse", "r.json", "--method", "dpboots",
    "--out", "o.nc", *Q], files={"r.json": '{"format": "dplit.release/1", "s_L": [1, '})
cli("analyse_release_sL_tampered", A, ("s_L", "release", "plausib", "impossible"), ["analyse", "r.json", "--method", "dpboots",
    "--out", "o.nc", *Q], fixtures=("rel.json",),
    setup="d = json.loads((folder / 'rel.json').read_text()); d['s_L'] = [50.0] * d['d']; "
          "(folder / 'r.json').write_text(json.dumps(d))")
cli("analyse_release_missing", A, ("nope.json", "release", "exist", "not found"),
    ["analyse", "nope.json", "--method", "dpboots", "--out", "o.nc", *Q])
cli("analyse_out_wrong_suffix", A, ("--out", ".nc", "netcdf", "suffix"), [*AN, "--method", "dpboots", "--n-boot", "50",
    "--out", "o.json", *Q], fixtures=("rel.json",))
cli("analyse_n_boot_huge", A, ("--n-boot", "memory"), [*AN, "--method", "dpboots", "--n-boot", "10000000000000",
    "--out", "o.nc", *Q], fixtures=("rel.json",))
cli("analyse_n_accept_zero", A, "--n-accept", [*AN, "--method", "dpabc", "--n-accept", "0", "--out", "o.nc", *Q],
    fixtures=("rel.json",))

A = "cli-compare"
CO = ["compare", "rel.json"]
cli("compare_methods_typo", A, ("--methods", "dpboot"), [*CO, "--methods", "dpboot,dpmcmc", "--out", "o.html"], fixtures=("rel.json",))
cli("compare_methods_empty", A, "--methods", [*CO, "--methods", "", "--out", "o.html"], fixtures=("rel.json",))
cli("compare_priors_typo", A, ("--priors", "p0"), [*CO, "--priors", "p0", "--out", "o.html"], fixtures=("rel.json",))
cli("compare_truth_short", A, "--truth", [*CO, "--methods", "dpboots", "--truth", "0.5,0.5", "--out", "o.html"],
    fixtures=("rel.json",))
cli("compare_truth_negative", A, "--truth", [*CO, "--methods", "dpboots", "--truth", "-0.2,0.6,0.6", "--out", "o.html"],
    fixtures=("rel.json",))
cli("compare_level_zero", A, "--level", [*CO, "--methods", "dpboots", "--level", "0", "--out", "o.html"], fixtures=("rel.json",))
cli("compare_n_iter_with_dpboots_only", A, ("--n-iter", "dpboots"), [*CO, "--methods", "dpboots", "--n-iter", "50",
    "--out", "o.html"], fixtures=("rel.json",))
cli("compare_out_equals_release", A, ("--out", "input", "rel.json"), [*CO, "--methods", "dpboots", "--out", "rel.json", "--force"],
    fixtures=("rel.json",), unchanged=("rel.json",))
cli("compare_out_exists", A, ("--out", "exists", "--force"), [*CO, "--methods", "dpboots", "--out", "o.html"],
    fixtures=("rel.json",), files={"o.html": "<p>mine</p>"}, unchanged=("o.html",))
cli("compare_full_disk", A, ("--out", "write", "disk", "too large", "space", "o.html"),
    [*CO, "--methods", "dpboots", "--seed", "1", "--out", "o.html"], fixtures=("rel.json",), fsize=4000, absent=("o.html",))
cli("compare_seed_word", A, "--seed", [*CO, "--seed", "abc", "--out", "o.html"], fixtures=("rel.json",))
cli("compare_p3_unsplit", A, ("--priors", "p3", "split"), [*CO, "--methods", "dpmcmc", "--priors", "p3", "--out", "o.html"],
    fixtures=("rel.json",))

A = "cli-study"
cli("study_run_config_missing", A, ("--config", "nope.toml", "exist", "not found"),
    ["study", "run", "--config", "nope.toml", "--store", "s.jsonl", "--no-progress"])
cli("study_run_config_bad_toml", A, ("--config", "toml", "c.toml"), ["study", "run", "--config", "c.toml", "--store", "s.jsonl",
    "--no-progress"], files={"c.toml": "[study\nn = [100\n"})
cli("study_run_config_table_typo", A, ("studdy", "--config", "table"), ["study", "run", "--config", "c.toml", "--store",
    "s.jsonl", "--no-progress"], files={"c.toml": "[studdy]\nn = [100]\n"}, absent=("s.jsonl",))
cli("study_run_config_alpha_words", A, ("alpha_true", "--config"), ["study", "run", "--config", "c.toml", "--store",
    "s.jsonl", "--no-progress"], files={"c.toml": "[study]\nalpha_true = [['a', 'b']]\n"}, absent=("s.jsonl",))
cli("study_run_config_unknown_key", A, ("nn", "key", "field", "unknown"), ["study", "run", "--config", "c.toml",
    "--store", "s.jsonl", "--no-progress"], files={"c.toml": "[study]\nnn = [100]\n"})
cli("study_run_config_n_string", A, ("n", "--config"), ["study", "run", "--config", "c.toml", "--store", "s.jsonl",
    "--no-progress"], files={"c.toml": "[study]\nn = ['100']\nmethods = ['boots']\nreplicates = 1\nquick = true\n"})
cli("study_run_workers_zero", A, "--workers", ["study", "run", "--config", "study.toml", "--store", "s.jsonl", "--workers", "0",
    "--no-progress"], fixtures=("study.toml",))
cli("study_run_max_tasks_negative", A, "--max-tasks", ["study", "run", "--config", "study.toml", "--store", "s.jsonl",
    "--max-tasks", "-2", "--no-progress"], fixtures=("study.toml",))
cli("study_run_methods_not_in_config", A, ("--methods", "dpmcmc_p1"), ["study", "run", "--config", "study.toml", "--store",
    "s.jsonl", "--methods", "dpmcmc_p1", "--no-progress"], fixtures=("study.toml",))
cli("study_run_replicates_above_config", A, "--replicates", ["study", "run", "--config", "study.toml", "--store", "s.jsonl",
    "--replicates", "9", "--no-progress"], fixtures=("study.toml",))
cli("study_run_store_is_config", A, ("--store", "--config", "input"), ["study", "run", "--config", "study.toml", "--store",
    "study.toml", "--no-progress"], fixtures=("study.toml",), unchanged=("study.toml",))
cli("study_run_store_is_csv_data", A, ("--store", "store", "sqlite", "data.csv"), ["study", "run", "--config", "study.toml",
    "--store", "data.csv", "--no-progress"], fixtures=("study.toml", "data.csv"), unchanged=("data.csv",))
cli("study_run_store_corrupt", A, ("--store", "s.jsonl", "line"), ["study", "run", "--config", "study.toml", "--store", "s.jsonl",
    "--max-tasks", "0", "--no-progress"], fixtures=("study.toml",), files={"s.jsonl": '{"key": 1\nnot json\n'},
    unchanged=("s.jsonl",))
cli("study_report_missing_store", A, ("--store", "none.jsonl", "exist", "not found"),
    ["study", "report", "--store", "none.jsonl", "--out", "rep"])
cli("study_report_max_mpsrf_below_one", A, "--max-mpsrf", ["study", "report", "--store", "s.jsonl", "--max-mpsrf", "0.5",
    "--out", "rep"], files={"s.jsonl": ""})
cli("study_report_out_is_file", A, ("--out", "folder", "directory", "rep"), ["study", "report", "--store", "s.jsonl", "--out", "rep"],
    files={"s.jsonl": "", "rep": "a file\n"}, unchanged=("rep",))
cli("study_export_out_csv", A, ("--out", "jsonl"), ["study", "export", "--store", "s.jsonl", "--out", "t.csv"],
    files={"s.jsonl": ""}, absent=("t.csv",))
cli("study_export_out_is_store", A, ("--out", "--store", "same", "input"), ["study", "export", "--store", "s.jsonl",
    "--out", "s.jsonl"], files={"s.jsonl": ""}, unchanged=("s.jsonl",))
cli("study_no_subcommand", A, ("run", "report", "export", "required", "command"), ["study"])
cli("show_missing_release", A, ("nope.json", "release", "exist", "not found"), ["show", "nope.json"])
cli("show_csv_not_release", A, ("data.csv", "release", "json"), ["show", "data.csv"], fixtures=("data.csv",))
cli("cli_no_command", A, ("command", "required", "release"), [])
cli("cli_unknown_command", A, ("shwo", "command", "invalid choice"), ["shwo", "rel.json"], fixtures=("rel.json",))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", help="run only the cases whose name or area matches this regular expression")
    p.add_argument("--json", help="write every outcome to this JSON file")
    p.add_argument("--timeout", type=float, default=60.0)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    a = p.parse_args(argv)
    cases = [c for c in CASES if not a.only or re.search(a.only, c.name) or re.search(a.only, c.area)]
    names = [c.name for c in CASES]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise SystemExit(f"duplicate case names: {sorted(dup)}")
    if a.list:
        for c in cases:
            print(f"{c.area:14s} {c.name}")
        print(len(cases), "cases")
        return 0
    fixtures = Path(tempfile.mkdtemp(prefix="bad_fixtures_"))
    t0 = time.time()
    make_fixtures(fixtures)
    outcomes = []
    with cf.ThreadPoolExecutor(a.jobs) as pool:
        futs = [pool.submit(run_case, c, fixtures, a.timeout) for c in cases]
        for f in cf.as_completed(futs):
            case, cls, excerpt, sec = f.result()
            outcomes.append({"name": case.name, "area": case.area, "class": cls, "excerpt": excerpt,
                             "seconds": round(sec, 1),
                             "input": case.code.strip() if case.code else "dplit " + " ".join(case.argv)})
            print(f"[{len(outcomes):3d}/{len(cases)}] {cls:9s} {case.name}", flush=True)
    shutil.rmtree(fixtures, ignore_errors=True)
    outcomes.sort(key=lambda o: (CLASSES.index(o["class"]), o["area"], o["name"]))
    print(f"\n{len(outcomes)} cases in {time.time() - t0:.0f} s\n")
    print("| class | cases |\n|---|---|")
    for c in CLASSES:
        print(f"| {c} | {sum(o['class'] == c for o in outcomes)} |")
    print(f"| total | {len(outcomes)} |\n")
    bad = [o for o in outcomes if o["class"] != "clear"]
    if bad:
        print("Not clear:")
        for o in bad:
            inp = " ".join(o["input"].split())[:160]
            print(f"- [{o['class']}] {o['area']} / {o['name']}: `{inp}` -> {' '.join(o['excerpt'].split())[:300]}")
    if a.json:
        Path(a.json).write_text(json.dumps(outcomes, indent=1))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
