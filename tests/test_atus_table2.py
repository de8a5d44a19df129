"""The resumable Table 2 runner (benchmarks/atus_table2.py) on a tiny synthetic input, never on the ATUS data."""

import json

import numpy as np
import pytest
from _helpers import benchmark_script


@pytest.fixture(scope="module")
def runner():
    return benchmark_script("atus_table2")


@pytest.fixture(scope="module")
def groups():
    g = np.random.default_rng(7)     # made-up compositions with a clear difference in the first component
    return {"male": g.dirichlet([12.0, 2.0, 14.0], 60), "female": g.dirichlet([10.0, 2.0, 16.0], 60)}


def _quiet(*_):
    pass


def test_resume_adds_nothing_and_extends(runner, groups, tmp_path):
    path = tmp_path / "t2.jsonl"
    assert runner.run(groups, path, methods=("boots", "dpboots"), reps=2, seed=3, log=_quiet) == 4
    first = path.read_text()
    # the same settings again: every key is present, nothing is run or written
    assert runner.run(groups, path, methods=("boots", "dpboots"), reps=2, seed=3, log=_quiet) == 0
    assert path.read_text() == first
    # more repetitions extend the table by the missing ones only
    assert runner.run(groups, path, methods=("boots", "dpboots"), reps=3, seed=3, log=_quiet) == 2
    rows = runner.read_rows(path)
    assert path.read_text().startswith(first)
    assert sorted((r["method"], r["rep"]) for r in rows) == [(m, i) for m in ("boots", "dpboots") for i in range(3)]
    assert len({runner.key_of(r) for r in rows}) == len(rows) == 6


def test_seed_and_effort_are_keys(runner, groups, tmp_path):
    path = tmp_path / "t2.jsonl"
    assert runner.run(groups, path, methods=("boots",), reps=1, seed=3, log=_quiet) == 1
    assert runner.run(groups, path, methods=("boots",), reps=1, seed=4, log=_quiet) == 1
    assert runner.run(groups, path, methods=("boots",), reps=1, seed=3, effort="full", log=_quiet) == 1
    assert runner.run(groups, path, methods=("boots",), reps=1, seed=3, eps=1.0, log=_quiet) == 1
    rows = runner.read_rows(path)
    assert [(r["seed"], r["effort"], r["eps"]) for r in rows] == [(3, "quick", 0.5), (4, "quick", 0.5),
                                                                  (3, "full", 0.5), (3, "quick", 1.0)]
    # different seeds give different rows; the interval has one (low, high) pair per component
    assert rows[0]["mean"] != rows[1]["mean"]
    assert np.shape(rows[0]["interval"]) == (3, 2) and rows[0]["prob"] is None


def test_row_depends_on_its_key_only(runner, groups, tmp_path):
    """A row is the same whatever ran before it (another machine, another order): its seed comes from its key."""
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    runner.run(groups, a, methods=("boots", "dpboots"), reps=2, seed=3, log=_quiet)
    runner.run(groups, b, methods=("dpboots",), reps=2, seed=3, log=_quiet)
    drop = {"cpu_s"}
    ra = {runner.key_of(r): {k: v for k, v in r.items() if k not in drop} for r in runner.read_rows(a)}
    rb = {runner.key_of(r): {k: v for k, v in r.items() if k not in drop} for r in runner.read_rows(b)}
    assert rb and all(ra[k] == v for k, v in rb.items())
    row = next(iter(rb.values()))
    assert set(row["release"]["male"]) == {"a", "scale"} and row["release"]["male"]["scale"] > 0
    assert json.loads(json.dumps(row)) == row


def test_summary_and_bad_input(runner, groups, tmp_path):
    path = tmp_path / "t2.jsonl"
    runner.run(groups, path, methods=("boots",), reps=2, seed=3, log=_quiet)
    s = runner.summary(runner.read_rows(path), seed=3)
    assert list(s) == ["boots"] and s["boots"]["reps"] == 2 and len(s["boots"]["reject"]) == 3
    assert runner.summary(runner.read_rows(path), seed=4) == {}
    with pytest.raises(ValueError, match="effort"):
        runner.row_key("boots", 0, 0.5, "medium", 1)
    assert runner.read_rows(tmp_path / "absent.jsonl") == []
