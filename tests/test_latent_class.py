"""Tests of dplit.latent_class: margins and releases, marginal probabilities, the sampler's blocks, fits,
synthesis and combining rules, bad input; dplit._arviz.move_to_group; the ACS and NLTCS loaders."""

import itertools
import math
import warnings

import numpy as np
import pytest
from scipy import stats

from dplit import _arviz, results
from dplit._latent_class_model import margin_probs_kernel as _margin_probs_kernel
from dplit._latent_class_model import margin_probs_reference as _margin_probs_reference
from dplit._latent_class_model import update_counts as _update_counts
from dplit.datasets import load_acs_counts, load_nltcs
from dplit.latent_class import (
    MarginRelease,
    cell_index,
    cell_intervals,
    combine,
    fit_latent_class,
    margin_counts,
    margin_draws,
    marginal_probs,
    release_margins,
    synthesize,
    table_probs,
    trunc_tsg,
)
from dplit.sampling import ConvergenceWarning
from dplit.testing import chisq_gof

PAIRS5 = list(itertools.combinations(range(5), 2))


def _records(n=3000, seed=0):
    g = np.random.default_rng(seed)
    z = g.random(n) < 0.4
    p1 = np.where(z[:, None], 0.8, 0.25)
    return (g.random((n, 5)) < p1).astype(np.int64)


def _params(k, levels, seed):
    g = np.random.default_rng(seed)
    Psi = np.zeros((k, len(levels), max(levels)))
    for h in range(k):
        for j, d in enumerate(levels):
            Psi[h, j, :d] = g.dirichlet(np.ones(d))
    return g.dirichlet(np.ones(k)), Psi


def test_margin_probs_match_full_table_sums():
    levels, margins = (3, 2, 4, 2), [(2, 0), (1,), (0, 1, 3)]
    pi, Psi = _params(4, levels, 1)
    fast = np.concatenate(marginal_probs(pi, Psi, levels, margins))
    np.testing.assert_allclose(fast, _margin_probs_reference(pi, Psi, levels, margins), rtol=1e-12)
    full = table_probs(pi, Psi, levels)
    np.testing.assert_allclose(full.sum(axis=(1, 3)).T.ravel(), fast[:12], rtol=1e-12)
    idx = cell_index(levels, margins)
    np.testing.assert_allclose(_margin_probs_kernel.py_func(pi, Psi, idx.cell_var, idx.cell_lev, idx.cell_ord), fast)


def test_margin_probs_bad_params():
    pi, Psi = _params(2, (2, 2), 2)
    with pytest.raises(ValueError, match="probability vectors"):
        marginal_probs(pi * 2, Psi, (2, 2), [(0,)])
    with pytest.raises(ValueError, match="Psi must have shape"):
        marginal_probs(pi, Psi[:, :1], (2, 2), [(0,)])


def test_margin_counts_and_bad_margins():
    x = np.array([[0, 1, 2], [1, 1, 0], [1, 0, 2]])
    (c,) = margin_counts(x, [(2, 0)], (2, 2, 3))
    assert c.tolist() == [0, 1, 0, 0, 1, 1]            # C order over (x2, x0)
    for margins, word in [([(0, 5)], "outside"), ([(0, 0)], "repeats"), ([(1,), (1,)], "twice"), ([], "non-empty")]:
        with pytest.raises(ValueError, match=word):
            margin_counts(x, margins)
    with pytest.raises(TypeError, match="margins"):
        margin_counts(x, [(0.5,)])
    with pytest.raises(ValueError, match="records"):
        margin_counts(np.array([[0, -1]]), [(0,)])


def test_release_json_roundtrip_budget_and_noise_law():
    x = _records(500)
    r = release_margins(x, PAIRS5, eps=0.5, rng=3, secure=False, names="ABCDE")
    back = MarginRelease.from_json(r.to_json())
    assert back == r and back.names == tuple("ABCDE")
    assert math.isclose(r.budget.spent, 0.5) and len(r.budget.entries) == 10
    assert math.isclose(r.t, math.exp(-0.05 / 2))
    exact = release_margins(x, PAIRS5, eps=np.inf)
    assert MarginRelease.from_json(exact.to_json()) == exact and exact.budget is None
    noise = np.concatenate([release_margins(x, [(0, 1)], eps=0.4, rng=s, secure=False).counts[0]
                            - margin_counts(x, [(0, 1)])[0] for s in range(2000)])
    assert chisq_gof(noise, lambda k: np.abs(k) * math.log(math.exp(-0.2)) + math.log((1 - math.exp(-0.2))
                                                                                  / (1 + math.exp(-0.2)))) > 1e-3


def test_release_secure_path_runs():
    pytest.importorskip("opendp")
    r = release_margins(_records(200), [(0, 1)], eps=1.0)
    assert r.counts[0].shape == (4,)


@pytest.mark.parametrize("counts, eps, word", [
    ([[-3, 5, 10, 88]], np.inf, r"\[0\] = -3 is impossible"), ([[1, 2, 3]], 1.0, "4 integers"),
    ([[1, 2, 3, 95]], np.inf, "sum to n"),
    ([[1, 2, 3, 94], [1, 1]], 1.0, "counts has 2 arrays"), ([[1.5, 2, 3, 94]], 1.0, "whole numbers")])
def test_marginrelease_bad_counts(counts, eps, word):
    with pytest.raises(ValueError, match=word):
        MarginRelease.from_counts(counts, [(0, 1)], (2, 2), 100, eps)


def test_marginrelease_negative_noisy_counts_allowed_and_bad_scalars():
    MarginRelease.from_counts([[-3, 5, 10, 90]], [(0, 1)], (2, 2), 100, 0.5)
    with pytest.raises(ValueError, match="eps"):
        MarginRelease.from_counts([[1, 2, 3, 94]], [(0, 1)], (2, 2), 100, 0.0)
    with pytest.raises(ValueError, match="levels"):
        MarginRelease.from_counts([[1, 2, 3, 94]], [(0, 1)], (2, 1), 100, 1.0)
    with pytest.raises(ValueError, match="outside"):
        MarginRelease.from_counts([[1, 2, 3, 94]], [(0, 2)], (2, 2), 100, 1.0)
    with pytest.raises(ValueError, match="not a dplit.MarginRelease"):
        MarginRelease.from_json('{"format": "other"}')


def test_trunc_tsg_law():
    g = np.random.default_rng(1)
    for center, lo, hi, t in [(4, 0, 20, 0.75), (-6, 0, 15, 0.8), (30, 0, 18, 0.85)]:
        d = np.array([trunc_tsg(center, lo, hi, t, g) for _ in range(20_000)])
        ms = np.arange(lo, hi + 1)
        w = np.abs(ms - center) * math.log(t)
        w -= np.logaddexp.reduce(w)
        lp = lambda k, w=w, lo=lo, hi=hi: np.where((k >= lo) & (k <= hi), w[np.clip(k - lo, 0, hi - lo)], -np.inf)  # noqa: E731
        assert d.min() >= lo and d.max() <= hi and chisq_gof(d, lp) > 1e-3


def test_counts_block_invariance_exact():
    tables = [m for m in itertools.product(range(6), repeat=3) if sum(m) == 5]
    P, m_tilde, t = np.array([0.3, 0.3, 0.4]), np.array([1, 4, -1]), 0.5
    lw = np.array([np.abs(np.array(m) - m_tilde).sum() * math.log(t) + stats.multinomial.logpmf(m, 5, P)
                   for m in tables])
    lw -= np.logaddexp.reduce(lw)
    M, acc, g = np.array([5, 0, 0]), np.zeros(3, dtype=np.int64), np.random.default_rng(2)
    codes = []
    for _ in range(30_000):
        _update_counts(M, P, m_tilde, t, 1.0, np.array([0, 3]), np.array([1]), g, acc)
        codes.append(tables.index(tuple(M)))
    codes = np.array(codes)
    assert chisq_gof(codes, lambda c: np.where((c >= 0) & (c < len(tables)), lw[np.clip(c, 0, len(tables) - 1)],
                                               -np.inf)) > 1e-3



def _moved_by_s4(strategy, w_used, n_chains=1500, n_moves=8, seed=3):
    """Posterior draws of a two-class model of a 3x2 table (importance sampling from the prior), each moved n_moves
    times by S4 alone; returns P of the first cell after the moves and the posterior deciles of that cell."""
    from dplit._latent_class_model import _class_cell_probs, _regenerate

    idx, levels = cell_index((3, 2), [(0, 1)]), np.array([3, 2])
    M, w, a, a_pi, pi_fixed = np.array([5.0, 1.0, 2.0, 6.0, 0.0, 3.0]), 1 / 3, 0.3, 0.4, np.array([0.6, 0.4])
    g = np.random.default_rng(seed)
    n_draws = 400_000
    Psi = np.zeros((n_draws, 2, 2, 3))
    Psi[:, :, 0, :3] = g.dirichlet(np.full(3, a), size=(n_draws, 2))
    Psi[:, :, 1, :2] = g.dirichlet(np.full(2, a), size=(n_draws, 2))
    eta = g.gamma(a_pi, size=(n_draws, 2)) if strategy == 2 else np.tile(pi_fixed, (n_draws, 1))
    pi = eta / eta.sum(axis=1, keepdims=True)
    P = np.einsum("dh,dhc->dc", pi, Psi[:, :, 0, idx.cell_lev[:, 0]] * Psi[:, :, 1, idx.cell_lev[:, 1]])
    with np.errstate(divide="ignore"):
        logw = w * (M * np.log(P)).sum(axis=1)
    wt = np.exp(logw - logw.max())
    wt /= wt.sum()
    order = np.argsort(P[:, 0])
    deciles = P[order, 0][np.searchsorted(np.cumsum(wt[order]), np.linspace(0.1, 0.9, 9))]
    out = np.empty(n_chains)
    A = np.empty((2, idx.n_cells))
    for i, d in enumerate(g.choice(n_draws, size=n_chains, p=wt)):
        e, ps = eta[d].copy(), Psi[d].copy()
        p_ = e / e.sum()
        _class_cell_probs(ps, idx.cell_var, idx.cell_lev, idx.cell_ord, A)
        Pc = p_ @ A
        for _ in range(n_moves):
            _regenerate(e, p_, ps, A, Pc, M * w_used / w, a_pi, a, w, strategy, levels, idx.cell_var, idx.cell_lev,
                        idx.cell_ord, g)
        out[i] = Pc[0]
    return np.concatenate([[0.0], deciles, [1.0]]), out


@pytest.mark.parametrize("strategy", [2, 1])
def test_regeneration_block_keeps_the_tempered_posterior(strategy):
    """S4 (a class redrawn from its prior) leaves the tempered posterior invariant: posterior draws moved by it are
    still posterior draws; with the weight w forgotten in its ratio they are not."""
    decile = lambda c: np.where((c >= 0) & (c < 10), np.log(0.1), -np.inf)  # noqa: E731
    q, x = _moved_by_s4(strategy, w_used=1 / 3)
    assert chisq_gof(np.searchsorted(q, x) - 1, decile) > 1e-3
    q, x = _moved_by_s4(strategy, w_used=1.0)
    assert chisq_gof(np.searchsorted(q, x) - 1, decile) < 1e-4

def _fit(release, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fit_latent_class(release, **dict(dict(k=4, n_iter=1000, n_warmup=1000, n_chains=2, rng=1,
                                                     progress=False), **kw))


def test_fit_eps_inf_recovers_margins_and_structure(tmp_path):
    x = _records()
    r = release_margins(x, PAIRS5, eps=np.inf, names="ABCDE")
    res = _fit(r, full_table=True)
    est = res.posterior["margin_probs"].mean(("chain", "draw")).values
    np.testing.assert_allclose(est, r.flat_counts / r.n, atol=0.01)
    assert res.observed_data["margin"].values[0] == "A,B" and res.observed_data["level"].values[3] == "1,1"
    assert res.posterior["cell"].values[0] == "A=0,B=0"
    assert "pi" in res.latent and "Psi" in res.latent and "counts" not in res.latent and "pi" not in res.posterior
    assert res.posterior["table_probs"].shape[-1] == 32
    np.testing.assert_allclose(res.posterior["table_probs"].sum("table_cell"), 1.0)
    assert res.posterior.attrs["method"] == "latent_class" and "acceptance_psi" in res.sample_stats
    path = results.to_netcdf(res, tmp_path / "lcm.nc")
    back = results.from_netcdf(path)
    np.testing.assert_array_equal(back.latent["Psi"].values, res.latent["Psi"].values)
    # the same seed gives the same draws, whatever the threads
    again = _fit(r, full_table=True, n_jobs=1)
    np.testing.assert_array_equal(again.posterior["margin_probs"].values, res.posterior["margin_probs"].values)


def test_fit_noisy_has_counts_and_strategies_agree():
    x = _records(5000, seed=3)
    r = release_margins(x, PAIRS5, eps=2.0, rng=4, secure=False)
    a = _fit(r, n_iter=3000)
    b = _fit(r, n_iter=3000, pi_strategy="dirichlet", rng=2)
    assert a.latent["counts"].shape == (2, 3000, 40) and "acceptance_counts" in a.sample_stats
    assert np.all(a.latent["counts"].values >= 0)
    sums = a.latent["counts"].values.reshape(2, 3000, 10, 4).sum(-1)
    assert np.all(sums == 5000)
    ma, mb = (res.posterior["margin_probs"].mean(("chain", "draw")).values for res in (a, b))
    assert np.abs(ma - mb).max() < 0.01
    # S4 leaves the posterior unchanged: the paper's three blocks alone agree, and say so in the attrs
    c = _fit(r, n_iter=3000, regenerate=False, rng=3)
    assert c.posterior.attrs["regenerate"] == 0 and "acceptance_regeneration" not in c.sample_stats
    assert a.posterior.attrs["regenerate"] == 1 and 0 < float(a.sample_stats["acceptance_regeneration"].mean()) < 1
    assert np.abs(c.posterior["margin_probs"].mean(("chain", "draw")).values - ma).max() < 0.01
    truth = np.concatenate(margin_counts(x, PAIRS5)) / 5000
    assert np.abs(ma - truth).max() < 0.02


@pytest.mark.parametrize("kwargs, exc, word", [
    (dict(k=0), ValueError, "k"), (dict(k=2.5), TypeError, "k"), (dict(pi_strategy="normal"), ValueError, "pi_strategy"),
    (dict(alpha=0.0), ValueError, "alpha"), (dict(a=-1.0), ValueError, "a"), (dict(n_iter=0), ValueError, "n_iter"),
    (dict(full_table="yes"), TypeError, "full_table"), (dict(regenerate="yes"), TypeError, "regenerate")])
def test_fit_bad_input(kwargs, exc, word):
    r = release_margins(_records(100), [(0, 1)], eps=1.0, rng=1, secure=False)
    with pytest.raises(exc, match=word):
        fit_latent_class(r, **dict(dict(n_iter=10, n_warmup=0, progress=False), **kwargs))
    with pytest.raises(TypeError, match="MarginRelease"):
        fit_latent_class({"counts": [1, 2]}, n_iter=10)


def test_full_table_bounded_by_memory(monkeypatch):
    wide = release_margins(np.zeros((50, 30), dtype=np.int64), [(0, 1)], eps=np.inf, levels=(2,) * 30)
    with pytest.raises(ValueError, match=r"full_table.*1,073,741,824 cells.*full_table=False"):
        fit_latent_class(wide, full_table=True, n_iter=10, n_warmup=0, progress=False)
    r = release_margins(_records(200), [(0, 1)], eps=np.inf)   # 32 cells: fits, unless the limit is small
    monkeypatch.setenv("DPLIT_MAX_BYTES", "20000")
    with pytest.raises(ValueError, match="DPLIT_MAX_BYTES"):
        fit_latent_class(r, full_table=True, n_iter="auto", n_warmup=0, progress=False)
    fit_latent_class(r, full_table=False, n_iter=10, n_warmup=0, n_chains=1, progress=False)  # no table: no bound


def test_margin_draws_synthesize_and_intervals():
    x = _records(2000, seed=5)
    r = release_margins(x, PAIRS5, eps=np.inf)
    res = _fit(r, k=3)
    np.testing.assert_allclose(margin_draws(res, (0, 1)), res.posterior["margin_probs"].values[..., :4], atol=1e-12)
    mean, lo, hi = cell_intervals(margin_draws(res, (4, 2, 0)))
    assert mean.shape == (8,) and np.all(lo <= mean) and np.all(mean <= hi)
    syn = synthesize(res, 4000, 4, rng=1)
    assert syn.shape == (4, 4000, 5) and set(np.unique(syn)) == {0, 1}
    np.testing.assert_array_equal(syn, synthesize(res, 4000, 4, rng=1))
    assert abs((syn[:, :, 0] == 1).mean() - (x[:, 0] == 1).mean()) < 0.03
    with pytest.raises(ValueError, match="latent"):
        synthesize(_arviz.to_arviz({"x": np.zeros((1, 3))}), 10, 1)


def test_combine_rules():
    q = np.array([0.10, 0.12, 0.11, 0.13])
    u = np.full(4, 1e-4)
    ce = combine(q, u)
    b = q.var(ddof=1)
    assert np.isclose(ce.estimate, q.mean()) and np.isclose(ce.variance, 1e-4 + b / 4)
    assert np.isclose(ce.df, 3 * (1 + 1e-4 / (b / 4)) ** 2)
    half = stats.t.ppf(0.975, ce.df) * np.sqrt(ce.variance)
    assert np.isclose(ce.upper - ce.estimate, half)
    full = combine(q, u, rule="full")
    assert np.isclose(full.variance, max((1 + 1 / 4) * b - 1e-4, 0) or b / 4)
    with pytest.raises(ValueError, match="rule"):
        combine(q, u, rule="other")
    with pytest.raises(ValueError, match="same shape"):
        combine(q, u[:3])


def test_move_to_group():
    res = _arviz.to_arviz({"a": np.zeros((2, 5, 3)), "b": np.ones((2, 5))}, attrs={"method": "m"})
    _arviz.move_to_group(res, ["a"], "latent")
    assert "a" in res.latent and "a" not in res.posterior and res.latent.attrs["method"] == "m"
    with pytest.raises(ValueError, match="not posterior"):
        _arviz.move_to_group(res, ["zz"], "other")
    with pytest.raises(ValueError, match="stay"):
        _arviz.move_to_group(res, ["b"], "other")
    res2 = _arviz.to_arviz({"a": np.zeros((2, 5)), "b": np.ones((2, 5))})
    with pytest.raises(ValueError, match="already exists"):
        _arviz.move_to_group(res2, ["a"], "posterior")


def test_loaders(monkeypatch, tmp_path):
    counts, names = load_acs_counts()
    assert counts.shape == (2,) * 5 and counts.sum() == 165_960 and names[0] == "CIT"
    assert counts[1].sum() == 165_960 - counts[0].sum() and counts.min() > 0
    monkeypatch.setenv("DPLIT_CACHE", str(tmp_path))
    monkeypatch.setenv("DPLIT_DATA", "")             # no local copy (not even one beside a checkout)
    with pytest.raises(FileNotFoundError, match="nltcs"):
        load_nltcs(download=False)


def test_weight_auto_widens_and_bad_weight():
    r = release_margins(_records(4000, seed=7), PAIRS5, eps=np.inf)
    sd1 = _fit(r, k=3, n_iter=2000, weight=1.0).posterior["margin_probs"].std(("chain", "draw")).values
    res = _fit(r, k=3, n_iter=2000, weight="auto")
    assert res.posterior.attrs["weight"] == 0.25
    sdw = res.posterior["margin_probs"].std(("chain", "draw")).values
    assert 1.5 < np.median(sdw / sd1) < 2.6                       # power 1/4: sd about twice as large
    for bad in (0.0, 1.5, "half"):
        with pytest.raises((ValueError, TypeError), match="weight"):
            fit_latent_class(r, weight=bad, n_iter=10, n_warmup=0, progress=False)


# --- plausibility: counts no records give under the stated noise (issue 28, item 1) ---

@pytest.mark.parametrize("n", [1, 4, 300])
def test_genuine_margin_releases_pass_the_plausibility_check(n):
    rng = np.random.default_rng(n)
    x = rng.integers(0, 3, size=(n, 4))
    margins = [(0, 1), (1, 2), (2, 3), (0,)]
    assert release_margins(x, margins, eps=np.inf, levels=(3,) * 4).checked
    for eps in (1e-3, 0.05, 1.0, 20.0, 500.0):
        for seed in range(40):
            assert release_margins(x, margins, eps=eps, levels=(3,) * 4, rng=seed, secure=False).checked


@pytest.mark.parametrize("counts, eps, word", [
    ([[1, 2, 10**6, 94]], 1.0, r"counts of margin \(0, 1\)\[2\] = 1e\+06 is impossible.*must lie in \["),
    ([[-400, 2, 3, 94]], 1.0, r"\[0\] = -400 is impossible"),
    ([[1, 2, 3, 93]], np.inf, r"sum of the counts of margin \(0, 1\) = 99 is impossible"),
    ([[0, 0, 0, 101]], np.inf, r"\[3\] = 101 is impossible.*\[0, 100\]"),
])
def test_planted_impossible_margins_are_refused(counts, eps, word):
    with pytest.raises(ValueError, match=word):
        MarginRelease.from_counts(counts, [(0, 1)], (2, 2), 100, eps)
    r = MarginRelease.from_counts(counts, [(0, 1)], (2, 2), 100, eps, check=False)
    assert not r.checked
    with pytest.raises(ValueError, match="is impossible"):
        MarginRelease.from_json(r.to_json())
    assert not MarginRelease.from_json(r.to_json(), check=False).checked


def test_table_sum_is_checked_with_the_reach_of_its_cells():
    from dplit.mechanisms import geometric_reach

    w = geometric_reach(math.exp(-1.0 / 2), 4)       # one table: eps / (sensitivity T) = 1 / 2
    edge = [[w, w, w, 100 + w]]                       # every cell within reach, the sum 100 + 4w: accepted
    MarginRelease.from_counts(edge, [(0, 1)], (2, 2), 100, 1.0)
    with pytest.raises(ValueError, match="sum of the counts"):
        MarginRelease.from_counts([[w, w, w + 1, 100 + w]], [(0, 1)], (2, 2), 100, 1.0)


def test_fit_records_whether_the_release_was_checked():
    r = release_margins(_records(300), [(0, 1), (1, 2)], eps=1.0, rng=1, secure=False)
    kw = dict(k=2, n_iter=20, n_warmup=0, n_chains=1, progress=False, rng=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert fit_latent_class(r, **kw).posterior.attrs["plausibility_checked"] == 1
        counts = [c.copy() for c in r.counts]
        counts[0][0] = 10**6                                          # the tampered count
        with pytest.raises(ValueError, match="is impossible"):
            MarginRelease.from_counts(counts, r.margins, r.levels, r.n, r.eps)
        bad = MarginRelease.from_counts(counts, r.margins, r.levels, r.n, r.eps, check=False)
        assert fit_latent_class(bad, **kw).posterior.attrs["plausibility_checked"] == 0


def test_defaults_and_paper_settings():
    """The defaults are the calibrated ones (weight "auto", a = 0.1); paper=True gives Nixon et al.'s; explicit wins."""
    r = release_margins(_records(500, seed=3), PAIRS5, eps=np.inf)
    kw = dict(k=2, n_iter=20, n_warmup=0, n_chains=1, progress=False)
    attrs = fit_latent_class(r, **kw).posterior.attrs
    assert (attrs["weight"], attrs["a"], attrs["paper"]) == (0.25, 0.1, 0)
    attrs = fit_latent_class(r, paper=True, **kw).posterior.attrs
    assert (attrs["weight"], attrs["a"], attrs["paper"]) == (1.0, 1.0, 1)
    attrs = fit_latent_class(r, paper=True, a=0.5, weight="auto", **kw).posterior.attrs
    assert (attrs["weight"], attrs["a"]) == (0.25, 0.5)
    with pytest.raises(TypeError, match="paper"):
        fit_latent_class(r, paper="yes", **kw)


def test_paper_settings_narrower_than_sampling_and_the_table3_power_wider():
    """paper=True (power 1) gives intervals shorter than the binomial ones of the sample, centred on the sample's
    proportions; the power 1/24 that describes Nixon et al.'s Table 3 (notebook checks/79) gives them over twice it."""
    x = _records(10_000, seed=5)
    r = release_margins(x, PAIRS5, eps=np.inf)
    sample = r.flat_counts / r.n
    binom = 2 * 1.96 * np.sqrt(sample * (1 - sample) / r.n)
    kw = dict(k=2, n_iter=1000, n_warmup=500, n_chains=1, rng=4, progress=False)
    ratio, holds = {}, {}
    for w in (1.0, 1 / 24):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = fit_latent_class(r, paper=True, weight=w, **kw)
        _, lo, hi = cell_intervals(fit.posterior["margin_probs"].values)
        ratio[w], holds[w] = np.median((hi - lo) / binom), np.mean((lo <= sample) & (sample <= hi))
    assert ratio[1.0] < 0.8 and holds[1.0] >= 0.9
    assert ratio[1 / 24] > 2.0


def test_the_default_and_paper_settings_are_read_only():
    from dplit.latent_class import DEFAULT_SETTINGS, PAPER_SETTINGS

    for settings in (DEFAULT_SETTINGS, PAPER_SETTINGS):
        before = dict(settings)
        with pytest.raises(TypeError):
            settings["a"] = 0.5
        with pytest.raises(TypeError):
            del settings["weight"]
        with pytest.raises(AttributeError):
            settings.update(a=0.5)
        assert dict(settings) == before
    assert dict(DEFAULT_SETTINGS) == {"weight": "auto", "a": 0.1} and dict(PAPER_SETTINGS) == {"weight": 1.0, "a": 1.0}


def test_a_fit_resumes_from_the_generator_state_and_its_spawn_count():
    """A study that stops after some fits resumes exactly (benchmarks/bench_latent_class.py --coverage) when it
    restores its generator's bit state and its seed sequence's spawn count: the chains are spawned from the rng."""
    r = release_margins(_records(300), [(0, 1), (1, 2)], eps=1.0, rng=1, secure=False)
    kw = dict(k=2, n_iter=30, n_warmup=10, n_chains=2, progress=False)

    def draws(gen):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return fit_latent_class(r, rng=gen, **kw).posterior["margin_probs"].values

    gen = np.random.default_rng(5)
    draws(gen)                                                         # the fit done before the stop
    state, spawned = gen.bit_generator.state, gen.bit_generator.seed_seq.n_children_spawned
    after = draws(gen)
    restored = np.random.Generator(np.random.PCG64(np.random.SeedSequence(5, n_children_spawned=spawned)))
    restored.bit_generator.state = state
    np.testing.assert_array_equal(draws(restored), after)
    state_only = np.random.default_rng(5)
    state_only.bit_generator.state = state                             # the spawn count is part of the state
    assert not np.array_equal(draws(state_only), after)
