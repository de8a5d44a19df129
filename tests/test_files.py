"""Files in and out (issue 46, items 1, 2, 10; issue 45, item 6): one rule for every writer, CSV that cannot shift.

Writers: a file is written whole or not at all, an existing file is kept without ``--force`` / ``overwrite=True``
(even one created while the run worked), an input of the run is never written over, and a failure (a full disk,
simulated with ``RLIMIT_FSIZE`` in a subprocess) prints one line, exits 2 and leaves the target and its folder as
they were. Readers: hypothesis on CSV bytes (BOM, header or not, numeric header, ragged rows, other delimiters)
and on edits of a saved release's JSON. Each property is also run on a planted bad implementation (a writer that
writes in place, the reader before this rule, a loader without checks) to show that it can fail.
"""

import csv
import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dplit._files import atomic_write, check_target, same_file
from dplit.cli import main, read_compositions
from dplit.release import Release

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "minutes.csv"
FUZZ = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


# ---------------------------------------------------------------------------------------------------------------
# The writers' rule, on the library function and on a planted in-place writer

def in_place_write(path, data, *, overwrite=False, inputs=(), flag="overwrite=True"):
    """The planted bad writer: checks first, then writes straight into the target (the rule before this one)."""
    path = Path(path)
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path} exists (use {flag} to overwrite it)")
    if callable(data):
        data(path)
    else:
        path.write_bytes(data.encode() if isinstance(data, str) else bytes(data))
    return path


def failure_problems(write, tmp_path):
    """What a writer does wrong when its data source fails half-way: the target changed, or a file left behind."""
    target = tmp_path / "out.txt"
    target.write_text("the old report")

    def half_then_fail(p):
        Path(p).write_text("half of the new")
        raise RuntimeError("the writer failed")

    problems = []
    with pytest.raises(RuntimeError):
        write(target, half_then_fail, overwrite=True)
    if target.read_text() != "the old report":
        problems.append("target changed")
    if sorted(p.name for p in tmp_path.iterdir()) != ["out.txt"]:
        problems.append("a file left behind")
    return problems


def meanwhile_problems(write, tmp_path):
    """A file created while the writer works (another run) must be kept without overwrite."""
    target = tmp_path / "r.json"

    def slow(p):
        target.write_text("the other run's")        # another run finishes first
        Path(p).write_text("this run's")

    try:
        write(target, slow)
    except FileExistsError as err:
        assert "exists (use overwrite=True" in str(err)
    problems = [] if target.read_text() == "the other run's" else ["the other run's file was overwritten"]
    leftovers = [p.name for p in tmp_path.iterdir() if p != target]
    return problems + ([f"left {leftovers}"] if leftovers else [])


def test_a_failed_write_leaves_the_target_and_no_temporary_file(tmp_path):
    assert failure_problems(atomic_write, tmp_path) == []


def test_the_failure_check_catches_an_in_place_writer(tmp_path):
    assert failure_problems(in_place_write, tmp_path) == ["target changed"]


def test_a_file_created_meanwhile_is_kept(tmp_path):
    assert meanwhile_problems(atomic_write, tmp_path) == []


def test_the_meanwhile_check_catches_an_in_place_writer(tmp_path):
    assert meanwhile_problems(in_place_write, tmp_path) == ["the other run's file was overwritten"]


def test_an_oserror_names_the_target_once(tmp_path):
    def full(p):
        raise OSError(27, "File too large", str(p))

    with pytest.raises(OSError, match=r"^cannot write .*out\.bin: File too large; .*out\.bin was left as it was$"):
        atomic_write(tmp_path / "out.bin", full)
    assert list(tmp_path.iterdir()) == []


def test_overwrite_replaces_whole_and_keeps_the_mode(tmp_path):
    target = tmp_path / "a.json"
    atomic_write(target, "one")
    os.chmod(target, 0o640)
    with pytest.raises(FileExistsError, match="a.json exists \\(use overwrite=True to overwrite it\\)"):
        atomic_write(target, "two")
    atomic_write(target, b"two", overwrite=True)
    assert target.read_text() == "two" and (target.stat().st_mode & 0o777) == 0o640
    new = atomic_write(tmp_path / "b.json", "x")
    mask = os.umask(0)
    os.umask(mask)
    assert (new.stat().st_mode & 0o777) == 0o666 & ~mask       # what open() gives, not mkstemp's 0o600


def test_an_input_is_never_written_over(tmp_path, monkeypatch):
    data = tmp_path / "rel.json"
    data.write_text("input")
    os.link(data, tmp_path / "hard.json")
    os.symlink(data, tmp_path / "soft.json")
    monkeypatch.chdir(tmp_path)
    for name in ("rel.json", "./rel.json", str(data), "hard.json", "soft.json"):
        with pytest.raises(ValueError, match="is the input .*rel.json.* never writes over an input"):
            atomic_write(name, "output", overwrite=True, inputs=("rel.json",))
    assert data.read_text() == "input"
    assert check_target("other.json", overwrite=True, inputs=("rel.json",)) == Path("other.json")


def test_same_file_compares_inodes_not_names(tmp_path):
    a = tmp_path / "a"
    a.write_text("x")
    os.link(a, tmp_path / "b")
    os.symlink(a, tmp_path / "c")
    others = [tmp_path / "b", tmp_path / "c", os.path.join(tmp_path, ".", "a"), os.path.join(tmp_path, "..",
                                                                                            tmp_path.name, "a")]
    assert all(same_file(a, other) for other in others)
    assert not same_file(a, tmp_path / "missing") and not same_file(tmp_path / "missing", tmp_path / "missing")
    # the planted check, names compared as text, misses every other name of the same file
    assert not any(str(a) == str(other) for other in others)


def test_two_writers_race_one_wins(tmp_path):
    target = tmp_path / "out.json"
    barrier, outcomes = threading.Barrier(2), []

    def run(k, write):
        def slow(p):
            barrier.wait(timeout=10)                # both have checked the target and are working
            Path(p).write_text(f"writer {k}")
        try:
            write(target, slow)
            outcomes.append("ok")
        except FileExistsError:
            outcomes.append("exists")

    for write in (atomic_write, in_place_write):
        target.unlink(missing_ok=True)
        outcomes.clear()
        threads = [threading.Thread(target=run, args=(k, write)) for k in (1, 2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if write is atomic_write:
            assert sorted(outcomes) == ["exists", "ok"] and target.read_text() in ("writer 1", "writer 2")
        else:                                        # the planted writer: both "win", one result is lost
            assert outcomes == ["ok", "ok"]


# ---------------------------------------------------------------------------------------------------------------
# The library's writers: one rule, one keyword

def _small_release():
    return Release.from_statistic([-1.2, -1.0, -1.4], 500, 1e-3, 1.0, names=["sleep", "work", "leisure"])


def test_every_library_writer_refuses_an_existing_file(tmp_path):
    from dplit import _arviz, results
    from dplit.methods import Comparison

    rel = _small_release()
    idata = _arviz.to_arviz({"alpha": np.ones((1, 5, 3))}, dims={"alpha": ["component"]})
    import pandas as pd

    cmp = Comparison(table=pd.DataFrame({"method": ["DPBoots"] * 3, "component": ["a", "b", "c"],
                                         "mean": [1.0, 2, 3], "sd": [0.1] * 3, "lower": [0.5, 1.5, 2.5],
                                         "upper": [1.5, 2.5, 3.5], "rhat": [np.nan] * 3, "ess": [5.0] * 3,
                                         "seconds": [0.1] * 3, "eps_total": [1.0] * 3, "converged": [True] * 3,
                                         "note": [""] * 3}),
                     results={"DPBoots": idata})
    writers = {"release.json": lambda p, **k: rel.save(p, **k),
               "result.nc": lambda p, **k: results.to_netcdf(idata, p, **k),
               "report.html": lambda p, **k: cmp.to_html(p, **k)}
    for name, write in writers.items():
        target = tmp_path / name
        target.write_text("keep")
        with pytest.raises(FileExistsError, match=f"{name} exists \\(use overwrite=True to overwrite it\\)"):
            write(target)
        assert target.read_text() == "keep"
        write(target, overwrite=True)
        assert target.stat().st_size > 4
    assert Release.load(tmp_path / "release.json") == rel
    assert results.from_netcdf(tmp_path / "result.nc").posterior["alpha"].shape == (1, 5, 3)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(writers)     # no temporary file left


# ---------------------------------------------------------------------------------------------------------------
# The command line: a full disk, a race, an input as --out

HARNESS = textwrap.dedent('''
    import os, resource, sys, time
    from pathlib import Path
    import dplit.cli as cli
    limit, mode, ready, argv = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
    real = cli.atomic_write

    def write(path, data, **kw):
        if ready != "-":                        # a race: wait until the other run has done its work too
            Path(ready + os.environ["WHO"]).touch()
            others = [ready + w for w in "12"]
            deadline = time.time() + 60
            while not all(os.path.exists(p) for p in others) and time.time() < deadline:
                time.sleep(0.05)
        if limit:                               # the disk fills up now
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
        if mode == "in-place":                  # the planted bad writer, straight into the target
            with open(path, "wb") as fh:
                fh.write(data.encode() if isinstance(data, str) else bytes(data))
            return path
        return real(path, data, **kw)

    cli.atomic_write = write
    sys.exit(cli.main(argv))
''')


def _cli(tmp_path, argv, *, limit=0, mode="rule", ready="-", env=None):
    script = tmp_path / "harness.py"
    script.write_text(HARNESS)
    return subprocess.Popen([sys.executable, str(script), str(limit), mode, ready, *map(str, argv)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


@pytest.fixture(scope="module")
def rel_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("files") / "release.json"
    assert main(["release", str(EXAMPLE), "--close", "--eps1", "0.75", "--eps2", "0.25", "--out", str(path)]) == 0
    return path


def full_disk_problems(tmp_path, argv, mode):
    """Run a command whose --out exists (given --force) with the disk full at the write; what went wrong."""
    out = tmp_path / argv[argv.index("--out") + 1]
    out.write_text("the previous report")
    before = sorted(p.name for p in tmp_path.iterdir() if p.name != "harness.py")
    proc = _cli(tmp_path, [*argv, "--force"], limit=100, mode=mode)
    _, err = proc.communicate(timeout=600)
    problems = []
    if proc.returncode != 2:
        problems.append(f"exit {proc.returncode}")
    errors = [line for line in err.splitlines() if "error" in line.lower() or "Traceback" in line]
    if len(errors) != 1 or "File too large" not in errors[0] or "Traceback" in err:
        problems.append(f"not one line: {errors}")
    if out.read_text() != "the previous report":
        problems.append("target changed")
    if sorted(p.name for p in tmp_path.iterdir()) != sorted(before + ["harness.py"]):
        problems.append("a file left behind")
    return problems


@pytest.mark.parametrize("command", ["release", "analyse", "compare"])
def test_a_full_disk_leaves_the_target_one_line_exit_2(tmp_path, rel_file, command):
    argv = {"release": ["release", EXAMPLE, "--close", "--eps1", "1", "--eps2", "1", "--out", "r.json"],
            "analyse": ["analyse", rel_file, "--method", "dpboots", "--n-boot", "40", "--quiet", "--out", "o.nc"],
            "compare": ["compare", rel_file, "--methods", "dpboots", "--out", "report.html"]}[command]
    assert full_disk_problems(tmp_path, argv, "rule") == []
    if command == "release":        # the planted in-place writer fails the same check (once: the check is the same)
        assert full_disk_problems(tmp_path, argv, "in-place") == ["target changed"]


NETCDF_SCRIPT = textwrap.dedent('''
    import resource, sys
    import numpy as np
    from dplit import _arviz, results
    idata = _arviz.to_arviz({"alpha": np.random.default_rng(0).random((4, 5000, 4))}, dims={"alpha": ["component"]})
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]), resource.RLIM_INFINITY))
    try:
        if sys.argv[3] == "arviz":      # the planted writer: HDF5 straight into the file (ArviZ's own to_netcdf)
            idata.to_netcdf(sys.argv[1])
        else:
            results.to_netcdf(idata, sys.argv[1], overwrite=True)
    except OSError as err:
        print("refused:", str(err).splitlines()[0])
''')


def netcdf_problems(tmp_path, writer, limit):
    script, out = tmp_path / "nc.py", tmp_path / "o.nc"
    script.write_text(NETCDF_SCRIPT)
    out.write_text("the previous result")
    proc = subprocess.run([sys.executable, str(script), str(out), str(limit), writer], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    problems = [] if proc.returncode == 0 else [f"exit {proc.returncode}"]
    if "refused: cannot write" not in proc.stdout:
        problems.append("no clear message")
    if out.read_text(errors="replace") != "the previous result":
        problems.append("target changed")
    if sorted(p.name for p in tmp_path.iterdir()) != ["nc.py", "o.nc"]:
        problems.append("a file left behind")
    return problems


@pytest.mark.parametrize("limit", [1000, 200_000])
def test_netcdf_on_a_full_disk_no_segfault_target_kept(tmp_path, limit):
    assert netcdf_problems(tmp_path, "dplit", limit) == []


def test_the_netcdf_check_catches_hdf5_writing_in_place(tmp_path):
    problems = netcdf_problems(tmp_path, "arviz", 200_000)    # ArviZ: a half-written file (and often exit 139)
    assert "target changed" in problems


def test_two_cli_runs_to_one_out_one_wins(tmp_path):
    for mode in ("rule", "in-place"):
        for p in tmp_path.glob("r.json"):
            p.unlink()
        argv = ["release", EXAMPLE, "--close", "--eps1", "1", "--eps2", "1", "--out", "r.json"]
        runs = [_cli(tmp_path, argv, mode=mode, ready=str(tmp_path / f"ready-{mode}-"), env={"WHO": w})
                for w in "12"]
        results = [(p.wait(timeout=600), p.stderr.read()) for p in runs]
        codes = sorted(code for code, _ in results)
        if mode == "rule":
            assert codes == [0, 2], results
            err = next(e for code, e in results if code == 2).strip().splitlines()
            assert err[-1].startswith("dplit release: error:") and "r.json exists (use --force" in err[-1]
            assert Release.load(tmp_path / "r.json").n == 600
        else:                                   # the planted writer: both exit 0, one release silently lost
            assert codes == [0, 0]
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("ready-")) == ["harness.py", "r.json"]


@pytest.mark.parametrize("command", ["release", "analyse", "compare"])
def test_out_equal_to_the_input_is_refused_even_with_force(tmp_path, rel_file, capsys, command):
    data = tmp_path / "data.csv"
    data.write_bytes(EXAMPLE.read_bytes())
    rel = tmp_path / "rel.json"
    rel.write_bytes(rel_file.read_bytes())
    os.link(rel, tmp_path / "alias.json")
    argv = {"release": ["release", str(data), "--close", "--eps1", "1", "--eps2", "1", "--out", str(data)],
            "analyse": ["analyse", str(rel), "--method", "dpboots", "--out", str(tmp_path / "alias.json")],
            "compare": ["compare", str(rel), "--methods", "dpboots", "--out", str(rel)]}[command]
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert main([*argv, "--force"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is the input" in err[0] and "--force never writes over an input" in err[0], err
    named = str(data) if command == "release" else str(rel)
    assert err[0].count(named) >= 1 + (command != "analyse")      # both names (the alias: the input named once)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_force_help_points_to_the_rule(capsys):
    with pytest.raises(SystemExit):
        main(["analyse", "--help"])
    assert "Files dplit writes" in " ".join(capsys.readouterr().out.split())
    assert "**Files dplit writes.**" in (ROOT / "README.md").read_text()


# ---------------------------------------------------------------------------------------------------------------
# CSV bytes: a clear error or the right n and names, never a shift

def old_read_compositions(path, close=False, with_names=False, header=None):
    """The planted reader: the rule before this one (no BOM stripping; any non-number in row 1 makes a header)."""
    with open(path, newline="") as fh:
        rows = [r for r in csv.reader(fh) if r and any(c.strip() for c in r)]
    if not rows:
        raise ValueError(f"{path}: no records")
    names = None
    try:
        [float(c) for c in rows[0]]
    except ValueError:
        names, rows = [c.strip() for c in rows[0]], rows[1:]
    if not rows or len({len(r) for r in rows}) != 1:
        raise ValueError(f"{path}: line ?")
    X = np.array([[float(c) for c in r] for r in rows])
    if close:
        X = X / X.sum(1, keepdims=True)
    return (X, names) if with_names else X


@st.composite
def csv_files(draw):
    """CSV bytes and what a correct reader makes of them: (n, names) or the words of the error."""
    d, n = draw(st.integers(1, 4)), draw(st.integers(1, 6))
    amounts = draw(st.lists(st.lists(st.integers(0, 999), min_size=d, max_size=d), min_size=n, max_size=n))
    kind = draw(st.sampled_from(["none", "names", "years", "mixed"]))
    flag = draw(st.sampled_from([None, True, False]))
    delim = draw(st.sampled_from([",", ",", ",", ";", "\t"]))
    bom, crlf = draw(st.booleans()), draw(st.booleans())
    ragged = draw(st.booleans()) and n >= 2 and d >= 2
    head = {"none": None, "names": [f"part{j}" for j in range(d)], "years": [str(2019 + j) for j in range(d)],
            "mixed": ["x"] + [str(j) for j in range(1, d)]}[kind]
    rows = ([head] if head else []) + [[str(v) for v in r] for r in amounts]
    if ragged:
        k = draw(st.integers(1, len(rows) - 1))       # never the first row: it fixes the width
        rows[k] = rows[k][:-1]
    text = ("\r\n" if crlf else "\n").join(delim.join(r) for r in rows) + "\n"
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    # what a correct reader makes of it
    first = rows[0]
    numeric = [_number(v) for v in first]
    if d < 2:
        return data, flag, "error"
    if delim != ",":
        return data, flag, "error: delimiter"
    if flag is None and any(numeric) and not all(numeric):
        return data, flag, "error: mixes"
    header = first if flag or (flag is None and not any(numeric)) else None
    records = rows[1:] if header is not None else rows
    if header is not None and len(set(header)) < d or not records or ragged:
        return data, flag, "error"
    if not all(_number(v) for r in records for v in r) or any(sum(map(float, r)) == 0 for r in records):
        return data, flag, "error"
    return data, flag, (len(records), header)


def _number(v):
    try:
        float(v)
    except ValueError:
        return False
    return True




CLEAR_WORDS = ("line", "column", "record", "empty")


def csv_problems(reader, data, flag, expect, tmp_path):
    path = tmp_path / "data.csv"
    path.write_bytes(data)
    try:
        X, names = reader(path, close=True, with_names=True, header=flag)
    except ValueError as err:
        msg = str(err)
        if not isinstance(expect, str):
            return [f"refused a good file: {msg}"]
        problems = []
        if "np." in msg or "array(" in msg or not any(w in msg for w in CLEAR_WORDS):
            problems.append(f"unclear: {msg}")
        if expect == "error: delimiter" and "comma-separated" not in msg:
            problems.append(f"no delimiter hint: {msg}")
        if expect == "error: mixes" and not ("--header" in msg and "--no-header" in msg and "line 1" in msg):
            problems.append(f"mixed row not named: {msg}")
        return problems
    if isinstance(expect, str):
        return [f"accepted a bad file ({expect}): n = {len(X)}, names = {names}"]
    n, want = expect
    problems = [] if len(X) == n else [f"n = {len(X)}, expected {n}"]
    if names != want:
        problems.append(f"names {names}, expected {want}")
    return problems


@FUZZ
@given(case=csv_files())
@example(case=(b"\xef\xbb\xbf1,2,3\n4,5,6\n", None, (2, None)))            # a BOM, no header
@example(case=(b"2019,2020,2021\n1,2,3\n", None, (2, None)))               # years are a record
@example(case=(b"2019,2020,2021\n1,2,3\n", True, (1, ["2019", "2020", "2021"])))
def test_csv_bytes_parse_right_or_fail_clearly(tmp_path, case):
    assert csv_problems(read_compositions, *case, tmp_path) == []


def test_the_csv_property_catches_the_old_reader(tmp_path):
    assert csv_problems(old_read_compositions, b"\xef\xbb\xbf1,2,3\n4,5,6\n", None, (2, None), tmp_path) == [
        "n = 1, expected 2", "names ['\\ufeff1', '2', '3'], expected None"]
    assert csv_problems(old_read_compositions, b"a,2\n1,2\n", None, "error: mixes", tmp_path) == [
        "accepted a bad file (error: mixes): n = 1, names = ['a', '2']"]


def test_csv_messages_name_line_and_column_and_the_flags(tmp_path, capsys):
    cases = [
        ("a,b,c\n0.2,0.3,0.5\n0.1,0.2,0.7\n0.3,0.3,0.4\n0.3,0.3,0.4\n0.2,0.2,0.6\n0.5,0.5,0.001\n",
         [], "line 7: the record sums to 1.001, not 1 within 1e-6"),
        ("a,b\n0.5,0.5\n0.3,\n", [], "line 3, column 2: the cell is empty"),
        ("a,b\n0.5,0.5\n0.3,x\n", [], "line 3, column 2: 'x' is not a number"),
        ("a;b\n0,5;0,5\n", [], "dplit reads comma-separated values"),
        ("0.5\t0.5\n", [], "the line has tabs"),
        ("a,0.5\n0.5,0.5\n", [], "line 1 mixes numbers and text (column 1 is 'a', column 2 is a number): give "
                                 "--header if it names the components, --no-header if it is a record"),
        ("a,b\n0.5,0.5\n", ["--no-header"], "line 1, column 1: 'a' is not a number (--no-header"),
        ("a,b\n0.5,0.5,0\n", [], "line 2 has 3 columns, but the header (line 1) has 2"),
        ("a,a\n0.5,0.5\n", [], "the header names 'a' twice (columns 1 and 2)"),
        ("a,b\n0.5,-0.5\n", ["--close"], "line 2, column 2: -0.5 is negative"),
        ("a,b\n0,0\n", ["--close"], "line 2: --close: the amounts sum to 0"),
        ("a,b\nnan,1\n", ["--close"], "line 2, column 1: 'nan' is not a finite number"),
    ]
    for text, flags, words in cases:
        data = tmp_path / "d.csv"
        data.write_text(text)
        assert main(["release", str(data), *flags, "--eps1", "1", "--eps2", "1", "--out",
                     str(tmp_path / "r.json")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and words in err[0] and "np." not in err[0], (text, err)
    assert not (tmp_path / "r.json").exists()


def test_header_flags_in_the_cli(tmp_path, capsys):
    years = tmp_path / "years.csv"
    rows = np.random.default_rng(0).integers(1, 100, size=(400, 3))   # enough records for the pre-spend check
    years.write_text("2019,2020,2021\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n")
    for flags, n, names in ([], 401, None), (["--header"], 400, ("2019", "2020", "2021")), (["--no-header"], 401, None):
        out = tmp_path / f"r{len(flags)}{flags[:1]}.json"
        assert main(["release", str(years), "--close", *flags, "--eps1", "1", "--eps2", "1", "--out", str(out)]) == 0
        rel = Release.load(out)
        assert rel.n == n and rel.names == names
    with pytest.raises(SystemExit):
        main(["release", str(years), "--header", "--no-header", "--eps1", "1", "--eps2", "1", "--out", "x.json"])
    capsys.readouterr()


# ---------------------------------------------------------------------------------------------------------------
# JSON edits of a saved release: a clear error naming the file, never a raw JSONDecodeError or KeyError

def _release_json():
    from dplit.release import release

    X = np.random.default_rng(0).dirichlet([2.0, 3.0, 4.0], size=400)
    return release(X, eps1=1.0, eps2=1.0, n1=100, rng=1, secure=False, names=["a", "b", "c"]).to_json()


TEXT = _release_json()
FIELDS = list(json.loads(TEXT))
VALUES = st.one_of(st.none(), st.booleans(), st.integers(-10**30, 10**30), st.floats(allow_nan=True),
                   st.text(max_size=5), st.lists(st.integers(-5, 5), max_size=7), st.just({"a": 1}),
                   st.lists(st.text(max_size=3), max_size=4))


@st.composite
def json_edits(draw):
    kind = draw(st.sampled_from(["truncate", "value", "drop", "bytes"]))
    if kind == "truncate":
        return TEXT[:draw(st.integers(0, len(TEXT) - 2))]
    if kind == "bytes":
        i = draw(st.integers(0, len(TEXT) - 1))
        return TEXT[:i] + draw(st.sampled_from(["\x00", "}", "{", '"', ",", "]", "\ufeff"])) + TEXT[i + 1:]
    data = json.loads(TEXT)
    key = draw(st.sampled_from(FIELDS))
    if kind == "drop":
        del data[key]
    else:
        data[key] = draw(VALUES)
    return json.dumps(data)


def json_problems(load, text, tmp_path):
    path = tmp_path / "rel.json"
    path.write_text(text, encoding="utf-8")
    try:
        load(path)
    except (ValueError, TypeError) as err:
        msg = str(err)
        if type(err) is json.JSONDecodeError or not msg.startswith(str(path)) or "object is not" in msg:
            return [f"unclear {type(err).__name__}: {msg[:100]}"]
        return []
    except Exception as err:                         # KeyError, AttributeError, ...: raw
        return [f"raw {type(err).__name__}: {err}"]
    return []                                        # an edit that leaves a valid release (e.g. names)


@FUZZ
@given(text=json_edits())
def test_json_edits_of_a_saved_release_fail_clearly(tmp_path, text):
    assert json_problems(Release.load, text, tmp_path) == []


def test_the_json_property_catches_a_loader_without_checks(tmp_path):
    def raw_load(path):
        data = json.loads(Path(path).read_text())
        return Release(**{k: data[k] for k in ("s_L", "n")})

    assert json_problems(raw_load, TEXT[:50], tmp_path)[0].startswith("unclear JSONDecodeError")
    assert json_problems(raw_load, "{}", tmp_path)[0].startswith("raw KeyError")


def test_cli_json_edits_one_line(tmp_path, capsys):
    for text in (TEXT[:40], TEXT.replace('"n":', '"m":'), json.dumps({**json.loads(TEXT), "names": 7})):
        bad = tmp_path / "bad.json"
        bad.write_text(text)
        assert main(["analyse", str(bad), "--method", "dpboots", "--out", str(tmp_path / "o.nc")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err[-1].startswith(f"dplit analyse: error: {bad}:") and "Traceback" not in "".join(err)
    assert not (tmp_path / "o.nc").exists()



def test_overwrite_must_be_a_bool_and_out_must_name_the_right_kind(tmp_path, capsys):
    """overwrite='yes' is truthy: a writer must refuse it rather than replace a file; and an analyse --out ending in
    .json (a release's suffix) would put netCDF in a file every reader takes for a release."""
    from dplit._files import atomic_write
    from dplit.cli import main

    target = tmp_path / "new.json"
    with pytest.raises(TypeError, match="overwrite must be True or False"):
        atomic_write(target, "{}", overwrite="yes")
    assert not target.exists()
    rel = _small_release()
    with pytest.raises(TypeError, match="overwrite must be True or False"):
        rel.save(target, overwrite="no")
    rel.save(tmp_path / "rel.json")
    assert main(["analyse", str(tmp_path / "rel.json"), "--method", "dpboots", "--out", str(tmp_path / "o.json")]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "writes a result (netCDF), not a release (JSON)" in err and "o.nc" in err
    assert not (tmp_path / "o.json").exists()
