"""dplit.diagnostics' vectorised R-hat, bulk ESS and tail ESS against ArviZ's, coordinate by coordinate.

``rhat`` / ``ess`` / ``diagnostics`` of ``dplit.diagnostics`` compute the rank-normalised split R-hat and the
bulk and tail ESS of Vehtari et al. (2021) for all coordinates at once; ArviZ loops over coordinates. They must
give ArviZ's figures, so each case below is compared with ``az.rhat(..., method="rank")`` and
``az.ess(..., method="bulk" / "tail")`` of the installed ArviZ, called here directly (not through dplit):

- R-hat and bulk ESS: relative difference <= RTOL (1e-9) under ArviZ 0.x and 1.x (observed: about 1e-15).
- Tail ESS, ArviZ 0.x: <= RTOL. ArviZ 1.x's default tail ESS reads the 11% and 89% quantiles instead of the
  5% and 95%; with ``prob=(0.05, 0.95)`` it must agree to RTOL, and its default must equal ours computed at
  (0.11, 0.89) to RTOL: the quantiles are the only difference.

Observed: about 1e-15 for R-hat and bulk ESS, 1e-13 for the tail ESS (both generations).

Cases: AR(1) chains (phi from -0.6 to 0.99), 1-4 chains (one chain: R-hat of its two halves), 4 to 2,000 draws
(odd counts too), heavy tails (Cauchy, lognormal), ties (rounded and binary draws), constant coordinates, chains
stuck at different values, non-finite draws, and 300 coordinates taken in blocks and threads. Planted bugs (no
rank normalisation, no chain splitting, no folded R-hat) must disagree with ArviZ on cases built to show them,
where the genuine code agrees.
"""

import logging

import arviz as az
import numpy as np
import pytest
import xarray as xr

from dplit import _arviz, diagnostics, results

RTOL = 1e-9
GEN1 = _arviz.arviz_generation() == 1
# ArviZ's own 0 / 0 on constant coordinates (ours is silent)
pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning:arviz.*"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning:arviz_stats.*")]


@pytest.fixture(autouse=True)
def _quiet_arviz():
    """ArviZ logs a line for every NaN coordinate and one-chain R-hat; the comparisons expect them."""
    loggers = [logging.getLogger("arviz"), getattr(az, "_log", None) or logging.getLogger("arviz")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    yield
    for lg, level in zip(loggers, levels):
        lg.setLevel(level)


def ar1(rng, chains, draws, k, phi, shift=None):
    """AR(1) chains (chains, draws, k), stationary start; ``shift``: a per-chain offset."""
    e = rng.standard_normal((chains, draws, k))
    x = np.empty_like(e)
    x[:, 0] = e[:, 0] / np.sqrt(1 - phi ** 2)
    for t in range(1, draws):
        x[:, t] = phi * x[:, t - 1] + e[:, t]
    return x if shift is None else x + np.asarray(shift, float)[:, None, None]


def arviz(x, kind, prob=None):
    """ArviZ's own figure for every coordinate of ``x`` (chain, draw, k)."""
    ds = xr.Dataset({"x": (("chain", "draw", "k"), x)})
    if kind == "rhat":
        out = az.rhat(ds, method="rank")
    elif kind == "tail" and prob is not None:
        out = az.ess(ds, method="tail", prob=prob)
    else:
        out = az.ess(ds, method=kind)
    return np.asarray(out["x"].values, dtype=float)


def ours(x):
    r, b, t = diagnostics.diagnostics(x)
    return {"rhat": r, "bulk": b, "tail": t}


def rel_diff(a, b):
    """Largest relative difference where both are finite; NaN patterns must match."""
    assert np.array_equal(np.isnan(a), np.isnan(b)), (a, b)
    ok = ~np.isnan(a)
    return float(np.max(np.abs(a[ok] - b[ok]) / np.abs(b[ok]), initial=0.0))


def tail_reference(x):
    """ArviZ's tail ESS at 5% / 95%: its default under 0.x, ``prob=(0.05, 0.95)`` under 1.x."""
    return arviz(x, "tail", prob=(0.05, 0.95) if GEN1 else None)


def cases():
    """(label, draws) of the comparison grid."""
    rng = np.random.default_rng(20261125)
    out = []
    for i, (chains, draws, phi) in enumerate([
            (4, 1000, 0.9), (4, 1000, 0.0), (4, 100, 0.99), (3, 333, 0.5), (2, 2000, 0.95), (2, 7, 0.3),
            (4, 4, 0.0), (4, 5, 0.5), (1, 1000, 0.7), (1, 401, 0.0), (1, 9, 0.2), (2, 1001, -0.6),
            (3, 50, 0.8), (4, 21, 0.6)]):
        out.append((f"ar1 c{chains} d{draws} phi{phi}", ar1(rng, chains, draws, 6, phi)))
        if i % 3 == 0:
            out.append((f"lognormal c{chains} d{draws}", np.exp(2 * ar1(rng, chains, draws, 4, phi))))
    out.append(("cauchy", rng.standard_cauchy((4, 500, 6))))
    out.append(("shifted chains", ar1(rng, 4, 300, 5, 0.5, shift=[0, 0, 0.5, 1.0])))
    out.append(("rounded (ties)", np.round(ar1(rng, 4, 200, 6, 0.7))))
    out.append(("thirds (ties)", np.round(3 * ar1(rng, 3, 101, 6, 0.7)) / 3))
    out.append(("binary", (ar1(rng, 4, 250, 6, 0.8) > 0.9).astype(float)))
    special = ar1(rng, 4, 120, 6, 0.5)
    special[..., 0] = 1.5                                  # constant: R-hat NaN, ESS every draw (as ArviZ)
    special[..., 1] = 2.5                                  # constant again (tested apart: chains stuck apart)
    special[..., 2] = np.round(special[..., 2] * 0.2)      # mostly one value
    special[0, 3, 3] = np.nan                              # a NaN draw: NaN
    out.append(("constant / stuck / NaN", special))
    return out


CASES = cases()


@pytest.mark.parametrize("label,x", CASES, ids=[c[0] for c in CASES])
def test_rhat_bulk_and_tail_ess_equal_arviz(label, x):
    got = ours(x)
    assert rel_diff(got["bulk"], arviz(x, "bulk")) <= RTOL
    assert rel_diff(got["tail"], tail_reference(x)) <= RTOL
    if x.shape[0] >= 2:
        assert rel_diff(got["rhat"], arviz(x, "rhat")) <= RTOL
    else:                     # one chain: judged by its two halves (ArviZ would say NaN for one chain)
        t = x.shape[1] // 2
        halves = x[0, :2 * t].reshape(2, t, -1)
        assert rel_diff(got["rhat"], arviz(halves, "rhat")) <= RTOL


@pytest.mark.skipif(not GEN1, reason="ArviZ 1.x's default tail ESS reads other quantiles")
def test_arviz_1_default_tail_ess_differs_only_by_its_quantiles(monkeypatch):
    worst = 0.0
    for _, x in CASES[:8]:
        default = arviz(x, "tail")
        worst = max(worst, rel_diff(ours(x)["tail"], default))
        with monkeypatch.context() as m:
            m.setattr(diagnostics, "_TAIL_PROBS", (0.11, 0.89))
            assert rel_diff(ours(x)["tail"], default) <= RTOL
    assert worst > 1e-3                   # ... and they are different quantiles


def test_the_returned_kinds_follow_the_input():
    rng = np.random.default_rng(1)
    x = ar1(rng, 4, 400, 3, 0.5)
    r, b, t = diagnostics.diagnostics(x)
    assert r.shape == b.shape == t.shape == (3,)
    assert isinstance(diagnostics.rhat(x[..., 0]), float) and isinstance(diagnostics.ess(x[..., 0], method="tail"), float)
    np.testing.assert_array_equal(diagnostics.rhat(x), r)
    np.testing.assert_array_equal(diagnostics.ess(x), b)
    np.testing.assert_array_equal(diagnostics.ess(x, method="tail"), t)
    assert diagnostics.rhat(x.reshape(4, 400, 3, 1)).shape == (3, 1)
    assert diagnostics.ess(np.zeros((2, 10, 0))).shape == (0,)
    res = _arviz.to_arviz({"a": x, "b": x[..., 0], "c": x[..., :2].reshape(4, 400, 2, 1)},
                           dims={"a": ["component"]}, coords={"component": ["u", "v", "w"]}, attrs={"method": "m"})
    rd, bd, td = diagnostics.diagnostics(res)
    assert isinstance(rd, xr.Dataset) and set(rd.data_vars) == {"a", "b", "c"}
    assert list(rd["a"].coords["component"].values) == ["u", "v", "w"] and rd["b"].ndim == 0
    np.testing.assert_array_equal(rd["a"].values, r)
    np.testing.assert_array_equal(bd["c"].values.ravel(), b[:2])
    assert list(diagnostics.rhat(res, var_names=["b"]).data_vars) == ["b"]
    np.testing.assert_array_equal(diagnostics.ess(results.posterior(res), method="tail")["a"].values, t)
    summary = az.summary(res, var_names=["a"])          # ArviZ's own summary still reads a result
    np.testing.assert_allclose(summary["r_hat"].values, r, atol=0.006)
    np.testing.assert_allclose(summary["ess_bulk"].values, b, rtol=1e-6, atol=0.6)


def test_blocks_and_threads_give_each_coordinate_its_own_figures(monkeypatch):
    # 300 coordinates of 4 x 400 draws: four blocks, run in threads; a NaN and a constant coordinate in them
    x = ar1(np.random.default_rng(6), 4, 400, 300, 0.8)
    x[2, 17, 250] = np.nan
    x[..., 100] = 0.25
    monkeypatch.setattr(diagnostics.os, "cpu_count", lambda: 3)
    assert max(1, diagnostics._BLOCK // (4 * 400)) < 300 / 3
    got = ours(x)
    for j in (0, 99, 100, 101, 180, 250, 299):
        alone = ours(x[..., j:j + 1])
        for kind in ("rhat", "bulk", "tail"):
            np.testing.assert_allclose(got[kind][j:j + 1], alone[kind], rtol=1e-12)
    picked = x[..., ::37]
    assert rel_diff(got["rhat"][::37], arviz(picked, "rhat")) <= RTOL
    assert rel_diff(got["bulk"][::37], arviz(picked, "bulk")) <= RTOL
    assert rel_diff(got["tail"][::37], tail_reference(picked)) <= RTOL
    assert np.isnan(got["rhat"][250]) and np.isnan(got["rhat"][100]) and got["bulk"][100] == 1600


def test_chains_stuck_at_different_values_fail_loudly():
    # within-chain variance 0, between-chain variance > 0: R-hat is infinite in exact arithmetic. np.var leaves
    # about 1e-31 (ArviZ 1.x's figure, 3e15, is ours); ArviZ 0.x with numba computes a negative variance and NaN.
    # Both read as failed; the ESS (every draw correlated with its chain) is ArviZ's.
    x = np.repeat(np.arange(4.0)[:, None, None], 120, axis=1)
    r, b, t = ours(x).values()
    assert r[0] > 1e6 or np.isnan(r[0])
    if GEN1 or np.isfinite(arviz(x, "rhat")[0]):
        assert rel_diff(r, arviz(x, "rhat")) <= RTOL
    assert rel_diff(b, arviz(x, "bulk")) <= RTOL and rel_diff(t, tail_reference(x)) <= RTOL


def test_undefined_cases_are_nan():
    rng = np.random.default_rng(2)
    assert all(np.isnan(v) for v in diagnostics.diagnostics(rng.normal(size=(4, 3))))    # fewer than 4 draws
    r, b, t = diagnostics.diagnostics(rng.normal(size=(1, 6)))     # one chain of 6: halves of 3, too short for R-hat
    assert np.isnan(r) and np.isfinite(b) and np.isfinite(t)
    x = rng.normal(size=(2, 50, 3))
    x[1, 7, 0], x[0, 0, 1] = np.inf, -np.inf                    # a non-finite draw: every figure NaN
    r, b, t = diagnostics.diagnostics(x)
    assert np.isnan(r[:2]).all() and np.isnan(b[:2]).all() and np.isnan(t[:2]).all()
    assert np.isfinite([r[2], b[2], t[2]]).all()
    with pytest.raises(ValueError, match="chain, draw"):
        diagnostics.diagnostics(np.zeros(10))


# --- Planted bugs: each must disagree with ArviZ on its case, where the genuine code agrees ----------------


def _disagrees(x, kind, planted, monkeypatch):
    assert rel_diff(ours(x)[kind], arviz(x, kind)) <= RTOL
    with monkeypatch.context() as m:
        for name, fn in planted.items():
            m.setattr(diagnostics, name, fn)
        return rel_diff(ours(x)[kind], arviz(x, kind))


def test_a_planted_rhat_without_rank_normalisation_is_caught(monkeypatch):
    # Cauchy chains, the last shifted by 2: the raw draws' variances are ruled by a few huge draws and hide the
    # shift, their ranks' do not
    x = np.random.default_rng(3).standard_cauchy((4, 400, 5)) + np.array([0, 0, 0, 2.0])[:, None, None]
    assert ours(x)["rhat"].min() > 1.05

    def raw(flat):
        z, order, ys = real(flat)
        return flat.copy(), order, ys

    real = diagnostics._rank_normal
    assert _disagrees(x, "rhat", {"_rank_normal": raw}, monkeypatch) > 0.02
    assert _disagrees(x, "bulk", {"_rank_normal": raw}, monkeypatch) > 0.02


def test_a_planted_rhat_without_split_chains_is_caught(monkeypatch):
    # every chain drifts the same way: the chains agree with each other, their halves do not
    x = ar1(np.random.default_rng(4), 4, 400, 5, 0.5) + np.linspace(0, 2, 400)[None, :, None]
    unsplit = {"_split": lambda xb: np.ascontiguousarray(xb)}
    assert ours(x)["rhat"].min() > 1.05
    assert _disagrees(x, "rhat", unsplit, monkeypatch) > 0.05
    assert _disagrees(x, "bulk", unsplit, monkeypatch) > 0.05


def test_a_planted_rhat_without_the_folded_tail_rhat_is_caught(monkeypatch):
    # same centre, different spread: only the folded (tail) R-hat sees it
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 500, 5)) * np.array([1.0, 1.0, 1.0, 2.0])[:, None, None]
    assert ours(x)["rhat"].min() > 1.05
    same_as_bulk = {"_folded_rank_normal": lambda order, ys: diagnostics._unsort(diagnostics._sorted_scores(ys), order)}
    assert _disagrees(x, "rhat", same_as_bulk, monkeypatch) > 0.03
