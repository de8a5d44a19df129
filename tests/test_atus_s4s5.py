"""The resumable Figures S4-S5 runner (benchmarks/atus_s4s5.py) on a tiny synthetic input, never on the ATUS data."""

import json

import numpy as np
import pytest
from _helpers import benchmark_script


@pytest.fixture(scope="module")
def runner():
    return benchmark_script("atus_s4s5")


@pytest.fixture(scope="module")
def groups():
    g = np.random.default_rng(7)     # made-up compositions near the ATUS fit
    return {"male": g.dirichlet([11.0, 1.5, 15.0], 80), "female": g.dirichlet([11.5, 1.5, 14.8], 80)}


def _quiet(*_):
    pass


@pytest.fixture(scope="module")
def table(runner, groups, tmp_path_factory):
    path = tmp_path_factory.mktemp("s45") / "s45.jsonl"
    assert runner.run(groups, path, runs=1, eps=(0.5,), seed=3, log=_quiet) == 6   # 2 data, 2 benchmark, 2 runs
    return path


def test_resume_adds_nothing_and_extends(runner, groups, table, tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(table.read_text())
    first = path.read_text()
    assert runner.run(groups, path, runs=1, eps=(0.5,), seed=3, log=_quiet) == 0
    assert path.read_text() == first
    assert runner.run(groups, path, runs=2, eps=(0.5,), seed=3, log=_quiet) == 2     # run 1 of each sex only
    rows = runner.read_rows(path)
    assert path.read_text().startswith(first)
    assert sorted((r["sex"], r["run"]) for r in rows if r["method"] == runner.METHOD) == [
        ("female", 0), ("female", 1), ("male", 0), ("male", 1)]
    assert len({runner.key_of(r) for r in rows}) == len(rows) == 8


def test_row_depends_on_its_key_only(runner, groups, table, tmp_path):
    """A run is the same whatever ran before it: its release and chains are seeded from its key."""
    key = runner.row_key(runner.METHOD, 0.5, "female", 0, "quick", 3)
    stored = next(r for r in runner.read_rows(table) if runner.key_of(r) == runner.key_of(key))
    again = runner.run_row(groups["female"], key)
    drop = {"cpu_s"}
    assert {k: v for k, v in again.items() if k not in drop} == {k: v for k, v in stored.items() if k not in drop}
    assert json.loads(json.dumps(again)) == again
    other = runner.run_row(groups["female"], {**key, "run": 1})
    assert other["grid"] != again["grid"]


def test_rows_hold_densities_on_the_grids(runner, groups, table):
    rows = runner.read_rows(table)
    data = next(r for r in rows if r["method"] == "data" and r["sex"] == "male")
    assert [len(h["density"]) for h in data["hist"]] == [runner.BINS] * 3
    for r in (r for r in rows if "grid" in r):
        assert [len(v) for v in r["grid"]] == [n for _, _, n in runner.GRIDS]
        assert [len(v) for v in r["bins"]] == [runner.BINS] * 3
        for j in range(3):
            mass = np.trapezoid(r["grid"][j], runner.grid(j))
            assert min(r["grid"][j]) >= 0 and mass < 1.05             # a density (80 private records: may be off-grid)
            if r["method"] == runner.BENCHMARK:                        # the non-private fit sits on the grid
                assert mass > 0.9, (j, mass)
    assert all(r["release"] is None for r in rows if r["method"] == runner.BENCHMARK)
    s = runner.summary(rows, seed=3)
    assert s[(runner.METHOD, 0.5, "male")]["runs"] == 1


def test_bad_keys(runner):
    with pytest.raises(ValueError, match="effort"):
        runner.row_key(runner.METHOD, 0.5, "male", 0, "paper", 1)
    with pytest.raises(ValueError, match="sex"):
        runner.row_key(runner.METHOD, 0.5, "men", 0, "quick", 1)
