"""The convergence report of fit_latent_class, computed fast, against ArviZ (issue 33, delivery 3).

At p = 30 the report reads 1,740 cells of 4 x 5,000 draws. Its rank step (argsort, normal scores, the folded
draws' scores) runs in compiled kernels (``dplit.diagnostics._rank_normal`` / ``_folded_rank_normal``: a radix sort of
the draws' bits and a merge); the autocovariances stay one batch of FFTs. Checked here:

- each kernel gives exactly (``array_equal``) what its NumPy twin gives, on rows built to break a sort: ties,
  -0.0 and 0.0, constants, negatives, subnormals, values spanning 600 orders of magnitude, binary draws;
- on a fit_latent_class posterior (40 cells, rows long enough for the kernels) the report's R-hat equals
  ``az.rhat(method="rank")``, its bulk ESS ``az.ess(method="bulk")`` and its tail ESS ArviZ's at the 5% / 95%
  quantiles, to a relative RTOL = 1e-9 (observed: 1e-13 or less), under whichever ArviZ is installed (0.23 in
  ``.venv``, 1.x in ``.venv-newest``);
- two planted bugs are caught: the bulk ESS without rank normalisation, and the ESS with its autocorrelation sum
  cut at a fixed lag instead of Geyer's initial monotone sequence. Each disagrees with ArviZ by more than 10% on
  the case built to show it, where the genuine code agrees to RTOL.
"""

import itertools
import logging
import warnings

import arviz as az
import numpy as np
import pytest
import xarray as xr

from dplit import _arviz, diagnostics
from dplit.latent_class import fit_latent_class, release_margins
from dplit.sampling import ConvergenceWarning

RTOL = 1e-9
GEN1 = _arviz.arviz_generation() == 1
pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning:arviz.*"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning:arviz_stats.*")]


@pytest.fixture(autouse=True)
def _quiet_arviz():
    lg = logging.getLogger("arviz")
    level = lg.level
    lg.setLevel(logging.ERROR)
    yield
    lg.setLevel(level)


def rows_that_break_a_sort():
    """(label, rows (k, N)) with N >= diagnostics._RADIX_MIN, so that the kernels (not the twins) run."""
    g = np.random.default_rng(33)
    n = 2 * diagnostics._RADIX_MIN
    signed_zeros = np.concatenate([-np.zeros(n // 4), np.zeros(n // 4), g.normal(size=n // 2)])
    return [
        ("uniform", g.random((4, 4000))),
        ("ties (rounded normals)", np.round(g.normal(size=(3, n)), 1)),
        ("binary", (g.random((3, n)) > 0.9).astype(float)),
        ("constant", np.full((2, n), 0.25)),
        ("-0.0 and 0.0", g.permutation(signed_zeros)[None]),
        ("cauchy", g.standard_cauchy((3, n))),
        ("subnormal", g.normal(size=(2, n)) * 1e-310),
        ("300 orders of magnitude either way", np.exp(g.uniform(-690, 690, (2, n))) * g.choice([-1, 1], (2, n))),
        ("narrow (cell probabilities)", 0.3 + 1e-6 * g.random((3, n))),
    ]


@pytest.mark.parametrize("label,x", rows_that_break_a_sort(), ids=[c[0] for c in rows_that_break_a_sort()])
def test_the_rank_kernels_equal_their_numpy_twins(label, x):
    z, order, ys = diagnostics._rank_normal(x)
    z0, order0, ys0 = diagnostics._rank_normal_numpy(x)
    assert np.array_equal(z, z0) and np.array_equal(ys, ys0)
    assert np.array_equal(np.take_along_axis(x, order, axis=1), ys)        # order is an argsort of each row
    assert np.array_equal(diagnostics._folded_rank_normal(order, ys), diagnostics._folded_rank_normal_numpy(order0, ys0))


def test_short_rows_take_the_numpy_twins(monkeypatch):
    # below _RADIX_MIN draws the kernels are not built or called
    monkeypatch.setattr(diagnostics, "_rank_kernels", lambda: pytest.fail("kernels called on a short row"))
    x = np.random.default_rng(1).normal(size=(2, diagnostics._RADIX_MIN - 2))
    z, order, ys = diagnostics._rank_normal(x)
    assert np.array_equal(z, diagnostics._rank_normal_numpy(x)[0])
    diagnostics._folded_rank_normal(order, ys)


@pytest.fixture(scope="module")
def lcm_draws():
    """margin_probs (4 chains, 600 draws, 40 cells) and log_lik of a fit at the defaults but the run length."""
    g = np.random.default_rng(5)
    z = g.random(4000) < 0.4
    x = (g.random((4000, 5)) < np.where(z[:, None], 0.8, 0.25)).astype(int)
    rel = release_margins(x, list(itertools.combinations(range(5), 2)), eps=1.0, rng=g, secure=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = fit_latent_class(rel, n_iter=600, n_warmup=300, rng=2, progress=False, n_jobs=1)
    return res


def arviz(x, kind):
    ds = xr.Dataset({"x": (("chain", "draw", "cell"), x)})
    if kind == "rhat":
        out = az.rhat(ds, method="rank")
    elif kind == "tail":
        out = az.ess(ds, method="tail", prob=(0.05, 0.95)) if GEN1 else az.ess(ds, method="tail")
    else:
        out = az.ess(ds, method="bulk")
    return np.asarray(out["x"].values, dtype=float)


def rel_diff(a, b):
    assert np.array_equal(np.isnan(a), np.isnan(b))
    ok = ~np.isnan(a)
    return float(np.max(np.abs(a[ok] - b[ok]) / np.abs(b[ok]), initial=0.0))


def test_the_report_of_a_fit_equals_arviz(lcm_draws):
    x = lcm_draws.posterior["margin_probs"].values
    assert x.shape == (4, 600, 40) and 8 * 300 >= diagnostics._RADIX_MIN       # the kernels' path
    r, b, t = diagnostics.diagnostics(x)
    assert rel_diff(r, arviz(x, "rhat")) <= RTOL
    assert rel_diff(b, arviz(x, "bulk")) <= RTOL
    assert rel_diff(t, arviz(x, "tail")) <= RTOL
    attrs = lcm_draws.posterior.attrs            # ... and the report stored on the result is made of them
    ll = lcm_draws.posterior["log_lik"].values[..., None]
    assert attrs["rhat_max"] == pytest.approx(max(r.max(), arviz(ll, "rhat").max()), rel=RTOL)
    assert attrs["ess_bulk_min"] == pytest.approx(min(b.min(), arviz(ll, "bulk").min()), rel=RTOL)


def _disagreement(x, kind, monkeypatch, **planted):
    assert rel_diff(diagnostics.diagnostics(x)[("rhat", "bulk", "tail").index(kind)], arviz(x, kind)) <= RTOL
    with monkeypatch.context() as m:
        for name, fn in planted.items():
            m.setattr(diagnostics, name, fn)
        got = diagnostics.diagnostics(x)[("rhat", "bulk", "tail").index(kind)]
    return rel_diff(got, arviz(x, kind))


def test_a_planted_bulk_ess_without_rank_normalisation_is_caught(monkeypatch, lcm_draws):
    # log-odds of the rarest cells, cubed: heavy tails, where the raw draws' autocorrelations are not the ranks'
    x = lcm_draws.posterior["margin_probs"].values
    x = np.log(x / (1 - x)) ** 3
    real = diagnostics._rank_normal

    def raw(flat):
        _, order, ys = real(flat)
        return np.array(flat, dtype=float), order, ys

    assert _disagreement(x, "bulk", monkeypatch, _rank_normal=raw) > 0.1


def test_a_planted_ess_cut_at_a_fixed_lag_is_caught(monkeypatch):
    # AR(1) chains with phi = 0.95 (tau = 39): an autocorrelation sum stopped at lag 10 overstates the ESS
    g = np.random.default_rng(7)
    e = g.standard_normal((4, 2000, 5))
    x = np.empty_like(e)
    x[:, 0] = e[:, 0] / np.sqrt(1 - 0.95 ** 2)
    for i in range(1, 2000):
        x[:, i] = 0.95 * x[:, i - 1] + e[:, i]

    def cut_at_lag_10(y, const, pad, mean=None):
        k, m, n = y.shape
        c = y - y.mean(axis=2, keepdims=True)
        f = np.fft.rfft(c, n=2 * n, axis=2)
        acov = np.fft.irfft(np.sum(np.abs(f) ** 2, axis=1), n=2 * n, axis=1)[:, :11] / (n * m)
        chain_var = np.var(np.mean(y, axis=2), axis=1, ddof=1)
        var_plus = acov[:, 0] + chain_var
        rho = 1 - (acov[:, :1] * n / (n - 1) - acov) / var_plus[:, None]
        tau = -1 + 2 * np.sum(rho[:, :11], axis=1)
        return m * n / tau

    assert _disagreement(x, "bulk", monkeypatch, _ess_rows=cut_at_lag_10) > 0.1
