"""Tests of dplit._validate: each check accepts what it should, rejects every bad kind, names the argument."""

import ast
import fractions
import math
from pathlib import Path

import numpy as np
import pytest

from dplit import _validate as v

JUNK = [None, "1.0", [1.0], {"a": 1}, object(), True, np.bool_(False)]


def test_imports_nothing_from_dplit():
    tree = ast.parse(Path(v.__file__).read_text())
    names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 0]
    assert not any(n == "dplit" or n.startswith("dplit.") for n in names)
    assert not any(isinstance(n, ast.ImportFrom) and n.level > 0 for n in ast.walk(tree))


def test_a_private_module_has_no_public_surface():
    """Every dplit module imports the checks it needs by name; none of them is API."""
    assert v.__all__ == []
    assert {"real", "epsilon", "rng", "run_settings"} <= {k for k, f in vars(v).items() if callable(f)}


# ---- scalars -------------------------------------------------------------------------------

@pytest.mark.parametrize("x", [2, 2.5, -3, np.int64(4), np.float32(0.5), np.array(1.5), fractions.Fraction(1, 2),
                               math.inf, math.nan])
def test_real_accepts_real_scalars(x):
    out = v.real(x, "w")
    assert isinstance(out, float)
    assert out == float(x) or (math.isnan(out) and math.isnan(float(x)))


@pytest.mark.parametrize("x", JUNK + [1 + 2j, np.array([1.0, 2.0])])
def test_real_rejects_non_reals_naming_the_argument(x):
    with pytest.raises(TypeError, match="^w must be a real number"):
        v.real(x, "w")


def test_finite():
    assert v.finite(-2, "w") == -2.0
    for bad in (math.inf, -math.inf, math.nan):
        with pytest.raises(ValueError, match="^w must be finite, got"):
            v.finite(bad, "w")
    with pytest.raises(TypeError, match="^w must be a real number"):
        v.finite("1", "w")


def test_positive():
    assert v.positive(1e-300, "scale") == 1e-300
    assert v.positive(np.int32(3), "scale") == 3.0
    for bad in (0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match=r"^scale must be finite and > 0, got"):
            v.positive(bad, "scale")
    with pytest.raises(TypeError, match="^scale must be a real number"):
        v.positive(True, "scale")


def test_nonnegative():
    assert v.nonnegative(0, "delta") == 0.0 and v.nonnegative(2.5, "delta") == 2.5
    for bad in (-1e-9, math.inf, math.nan):
        with pytest.raises(ValueError, match=r"^delta must be finite and >= 0, got"):
            v.nonnegative(bad, "delta")
    with pytest.raises(TypeError, match="^delta must be a real number"):
        v.nonnegative(None, "delta")


def test_epsilon_default_rule():
    assert v.epsilon(0.5) == 0.5
    assert v.epsilon(2, "eps1") == 2.0
    for bad in (0, -0.1, math.inf, math.nan):
        with pytest.raises(ValueError, match=r"^eps1 must be finite and > 0, got"):
            v.epsilon(bad, "eps1")
    with pytest.raises(TypeError, match="^epsilon must be a real number"):
        v.epsilon("1")


def test_epsilon_allowing_zero_or_inf():
    assert v.epsilon(0, allow_zero=True) == 0.0
    with pytest.raises(ValueError, match=r"^epsilon must be finite and >= 0, got -1.0"):
        v.epsilon(-1, allow_zero=True)
    with pytest.raises(ValueError, match=r"finite and >= 0, got inf"):
        v.epsilon(math.inf, allow_zero=True)
    assert v.epsilon(math.inf, allow_inf=True) == math.inf
    with pytest.raises(ValueError, match=r"^epsilon must be > 0 \(inf allowed\), got 0.0"):
        v.epsilon(0, allow_inf=True)
    assert v.epsilon(0, allow_zero=True, allow_inf=True) == 0.0
    for bad in (math.nan, -math.inf):
        with pytest.raises(ValueError, match=r"^epsilon must be >= 0 \(inf allowed\)"):
            v.epsilon(bad, allow_zero=True, allow_inf=True)


@pytest.mark.parametrize("check, default", [(v.delta, "delta"), (v.threshold, "a"), (v.level, "level")])
def test_open_unit_checks(check, default):
    assert check(0.25) == 0.25
    assert check(np.float32(0.5), "q") == 0.5
    for bad in (0, 1, -0.5, 1.5, math.nan, math.inf):
        with pytest.raises(ValueError, match=rf"^{default} must lie in the open interval \(0, 1\), got"):
            check(bad)
    with pytest.raises(TypeError, match=rf"^{default} must be a real number"):
        check("0.5")
    with pytest.raises(ValueError, match=r"^q must lie in the open interval"):
        check(2.0, "q")


def test_unit_interval_ends():
    assert v.unit_interval(0.5, "p") == 0.5
    assert v.unit_interval(0, "p_keep", closed_low=True) == 0.0
    assert v.unit_interval(1, "p", closed_high=True) == 1.0
    assert v.unit_interval(1, "p", closed_low=True, closed_high=True) == 1.0
    with pytest.raises(ValueError, match=r"^p_keep must lie in \[0, 1\), got 1.0"):
        v.unit_interval(1, "p_keep", closed_low=True)
    with pytest.raises(ValueError, match=r"^p must lie in \(0, 1\], got 0.0"):
        v.unit_interval(0, "p", closed_high=True)
    with pytest.raises(ValueError, match=r"^p must lie in \[0, 1\], got nan"):
        v.unit_interval(math.nan, "p", closed_low=True, closed_high=True)
    with pytest.raises(ValueError, match=r"^p must lie in the open interval \(0, 1\)"):
        v.unit_interval(0, "p")
    with pytest.raises(TypeError, match="^p must be a real number"):
        v.unit_interval(None, "p")


# ---- integers, choices, booleans, rng ------------------------------------------------------

def test_count():
    assert v.count(3, "n_boot") == 3
    assert type(v.count(np.int64(3), "n_boot")) is int
    assert v.count(0, "n_warmup", 0) == 0
    assert v.count(-2, "k", minimum=-5) == -2
    for bad in (3.0, 2.5, np.float64(2.0), "3", None, True, np.bool_(True), [3]):
        with pytest.raises(TypeError, match="^n_boot must be an int, got"):
            v.count(bad, "n_boot")
    with pytest.raises(ValueError, match="^n_boot must be >= 1, got 0"):
        v.count(0, "n_boot")
    with pytest.raises(ValueError, match="^n_warmup must be >= 0, got -1"):
        v.count(-1, "n_warmup", 0)


def test_choice():
    assert v.choice("D2", "part", ("D1", "D2")) == "D2"
    for bad in ("d2", None, 2, ["D2"]):
        with pytest.raises(ValueError, match=r"^part must be one of \('D1', 'D2'\), got"):
            v.choice(bad, "part", ("D1", "D2"))
    with pytest.raises(ValueError, match=r"must be one of \('x',\)"):
        v.choice([1], "m", {"x"})


def test_boolean():
    assert v.boolean(True, "progress") is True
    assert v.boolean(np.bool_(False), "progress") is False
    for bad in (0, 1, None, "yes", 1.0):
        with pytest.raises(TypeError, match="^progress must be True or False, got"):
            v.boolean(bad, "progress")


def test_rng():
    g = np.random.default_rng(5)
    assert v.rng(g) is g
    assert isinstance(v.rng(None), np.random.Generator)
    a, b = v.rng(7), v.rng(np.int64(7))
    assert a.random() == b.random() == np.random.default_rng(7).random()
    assert isinstance(v.rng(np.random.SeedSequence(3)), np.random.Generator)
    assert isinstance(v.rng([1, 2, 3]), np.random.Generator)
    for bad in ("seed", 1.5, True, object(), {"a": 1}, b"x"):
        with pytest.raises(TypeError, match="^rng must be None, an int seed"):
            v.rng(bad)
    with pytest.raises(TypeError, match="^random_state must be"):
        v.rng("x", "random_state")
    with pytest.raises(ValueError, match="^rng must be a non-negative seed, got -1"):
        v.rng(-1)


# ---- arrays ----------------------------------------------------------------------------------

def test_real_array():
    out = v.real_array([1, 2], "x")
    assert out.dtype == float and out.tolist() == [1.0, 2.0]
    assert v.real_array([np.inf, np.nan], "x").shape == (2,)
    assert v.real_array(3, "x").shape == ()
    for bad in ([True, False], ["a"], [object()], [1 + 1j]):
        with pytest.raises(TypeError, match="^x must be an array of real numbers, got dtype"):
            v.real_array(bad, "x")
    with pytest.raises(ValueError, match=r"^s must be 1-D, got an array of shape \(2, 2\)"):
        v.real_array(np.ones((2, 2)), "s", ndim=1)


def test_finite_array():
    assert v.finite_array([[1.0, -2.0]], "x", ndim=2).shape == (1, 2)
    for bad in ([1.0, np.nan], [np.inf], [[-np.inf]]):
        with pytest.raises(ValueError, match=r"^value must be finite \(no NaN or inf\)"):
            v.finite_array(bad, "value")
    with pytest.raises(TypeError, match="^value must be an array of real numbers"):
        v.finite_array(["1"], "value")
    with pytest.raises(ValueError, match="^value must be 2-D"):
        v.finite_array([1.0], "value", ndim=2)


def test_unit_interval_array():
    assert v.unit_interval_array(0.5, "a").shape == ()
    np.testing.assert_array_equal(v.unit_interval_array([[0.1, 0.9]], "a"), [[0.1, 0.9]])
    for bad in ([0.1, 1.0], [0.0], [np.nan, 0.5], -0.2, [np.inf]):
        with pytest.raises(ValueError, match=r"^candidates must lie in the open interval \(0, 1\), got"):
            v.unit_interval_array(bad, "candidates")
    for bad in (["a"], [0.1j], True):
        with pytest.raises(TypeError, match="^candidates must be an array of real numbers"):
            v.unit_interval_array(bad, "candidates")


# ---- the run settings of every sampler ---------------------------------------------------------

def test_run_settings_accepts_and_returns_ints():
    assert v.run_settings(10, 0, 1, 10, False) == (10, 0, 1, 10, False, None)
    out = v.run_settings(np.int64(5), np.int32(2), 3, 1, np.bool_(True), n_jobs=2)
    assert out == (5, 2, 3, 1, True, 2)
    assert [type(x) for x in out] == [int, int, int, int, bool, int]


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(n_iter=0), ValueError, "^n_iter must be >= 1"),
    (dict(n_iter=10.0), TypeError, "^n_iter must be an int"),
    (dict(n_warmup=-1), ValueError, "^n_warmup must be >= 0"),
    (dict(n_warmup=True), TypeError, "^n_warmup must be an int"),
    (dict(n_chains=0), ValueError, "^n_chains must be >= 1"),
    (dict(n_chains=2.0), TypeError, "^n_chains must be an int"),
    (dict(thin=0), ValueError, "^thin must be >= 1"),
    (dict(thin=11), ValueError, "^thin must be <= n_iter = 10"),
    (dict(progress=1), TypeError, "^progress must be True or False"),
    (dict(n_jobs=0), ValueError, "^n_jobs must be >= 1"),
    (dict(n_jobs=1.0), TypeError, "^n_jobs must be an int"),
])
def test_run_settings_rejects(kwargs, exc, match):
    args = dict(n_iter=10, n_warmup=5, n_chains=2, thin=1, progress=False, n_jobs=None) | kwargs
    with pytest.raises(exc, match=match):
        v.run_settings(**args)


def test_work_size_names_the_size_the_limit_and_the_argument(monkeypatch):
    monkeypatch.delenv("DPLIT_MAX_BYTES", raising=False)
    assert v.max_work_bytes() == v.MAX_WORK_BYTES == 4 * 2**30
    assert v.work_size(v.MAX_WORK_BYTES, "x", "y") == v.MAX_WORK_BYTES
    with pytest.raises(ValueError, match=r"^f: 3 things would need about 2\.91 TiB .* limit of 4 GiB .*: lower m$"):
        v.work_size(3.2e12, "f: 3 things", "lower m")
    monkeypatch.setenv("DPLIT_MAX_BYTES", "1e3")
    assert v.max_work_bytes() == 1000
    with pytest.raises(ValueError, match="1e\\+03 B"):
        v.work_size(1001, "x", "y")
    for bad in ("-5", "lots"):
        monkeypatch.setenv("DPLIT_MAX_BYTES", bad)
        with pytest.raises(ValueError, match="DPLIT_MAX_BYTES must be a positive number of bytes"):
            v.max_work_bytes()
