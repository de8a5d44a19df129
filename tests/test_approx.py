"""Tests of dplit.approx (DPapprox): full conditionals against brute force, limits, results, bad input."""

import warnings

import numpy as np
import pytest
from scipy import integrate, special, stats

from dplit import approx as A
from dplit.dirichlet import censored_stat, dirichlet_draws, logx_cov, logx_mean, sufficient_stat
from dplit.priors import PRIOR_GAMMA, GammaPrior
from dplit.release import Release
from dplit.sampling import ConvergenceWarning
from dplit.testing import py_func, rank_uniformity_pvalues

FAST = dict(n_iter=1_000, n_warmup=300, n_chains=2, thin=2, progress=False)
G3 = (PRIOR_GAMMA, np.ones(3), np.full(3, 0.1), np.zeros((3, 3)))


def _release(n=1000, eps=1.0, a=1e-4, alpha=(2.2, 3.3, 4.4), n1=0, seed=0):
    rng = np.random.default_rng(seed)
    X = dirichlet_draws(np.array(alpha), n, rng=rng)
    d = len(alpha)
    if n1 == 0:
        return Release.from_statistic(censored_stat(X, a) + rng.laplace(0, -d * np.log(a) / (n * eps), d),
                                      n, a, eps), X
    s_L1 = censored_stat(X[:n1], a) + rng.laplace(0, -d * np.log(a) / (n1 * eps), d)
    s_L2 = censored_stat(X[n1:], a) + rng.laplace(0, -d * np.log(a) / ((n - n1) * eps), d)
    return Release.from_statistic(s_L2, n, a, eps, s_L1=s_L1, n1=n1), X


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fn(*args, **kw)


# ---------------------------------------------------------------- the Gaussian and the alpha target
@pytest.mark.parametrize("n, extra", [(1.0, 0.0), (500.0, 0.0), (500.0, 3e-3)])
def test_log_normal_kernel_equals_scipy(n, extra):
    alpha, y = np.array([0.3, 1.7, 6.0]), np.array([-4.0, -1.1, -0.3])
    c = np.full(3, extra)
    ours = A._log_normal_kernel(y, logx_mean(alpha), special.polygamma(1, alpha) / n + c,
                                special.polygamma(1, alpha.sum()) / n)
    assert np.isclose(ours, stats.multivariate_normal(logx_mean(alpha), logx_cov(alpha) / n + np.diag(c)).logpdf(y))


def test_log_alpha_kernel_two_blocks_equals_direct():
    y = np.array([[-1.5, -1.2, -0.8], [-1.4, -1.1, -0.9]])
    n, c = np.array([250.0, 750.0]), np.array([[1e-3, 2e-3, 5e-4], [0.0, 0.0, 0.0]])

    def direct(alpha):
        out = sum(stats.multivariate_normal(logx_mean(alpha), logx_cov(alpha) / nk + np.diag(ck)).logpdf(yk)
                  for yk, nk, ck in zip(y, n, c))
        return out + stats.expon.logpdf(alpha, scale=10).sum() + np.log(alpha).sum()

    ta, tb = np.log([2.0, 3.0, 4.0]), np.log([1.0, 6.0, 2.0])
    ours = A._log_alpha_kernel(ta, y, n, c, *G3) - A._log_alpha_kernel(tb, y, n, c, *G3)
    assert np.isclose(ours, direct(np.exp(ta)) - direct(np.exp(tb)), rtol=1e-10)
    assert A._log_alpha_kernel(np.array([-800.0, 0.0, 0.0]), y, n, c, *G3) == -np.inf


def test_alpha_step_stationary_law_matches_quadrature():
    """Step 3 (Gibbs form, c = 0) against the normalised target on a grid, d = 2."""
    y, n, c = np.array([[-0.9, -0.55]]), np.array([60.0]), np.zeros((1, 2))
    args = (PRIOR_GAMMA, np.ones(2), np.full(2, 0.1), np.zeros((2, 2)))
    t = np.linspace(-3, 5, 250)
    logp = np.array([[A._log_alpha_kernel(np.array([u, w]), y, n, c, *args) for w in t] for u in t])
    p = np.exp(logp - logp.max())
    p /= p.sum()
    m1 = (p.sum(1) * np.exp(t)).sum()
    sd1 = np.sqrt((p.sum(1) * np.exp(2 * t)).sum() - m1**2)
    th, rng = np.log([m1, m1]), np.random.default_rng(2)
    chain = np.empty(20_000)
    for i in range(chain.size):
        A._alpha_mh_kernel(th, 2, 1.7, np.diag([0.2, 0.2]), y, n, c, *args, rng)
        chain[i] = np.exp(th[0])
    import arviz as az
    ess = float(az.ess(chain[None, :]))
    assert abs(chain.mean() - m1) < 4 * sd1 / np.sqrt(ess) and np.isclose(chain.std(), sd1, rtol=0.1)


def test_alpha_kernel_equals_its_python_function():
    y, n, c = np.array([[-1.5, -1.2, -0.8]]), np.array([300.0]), np.array([[1e-4, 2e-4, 3e-4]])
    t1, t2 = np.log([2.0, 3.0, 4.0]), np.log([2.0, 3.0, 4.0])
    k = A._alpha_mh_kernel(t1, 100, 0.5, 0.1 * np.eye(3), y, n, c, *G3, np.random.default_rng(4))
    r = py_func(A._alpha_mh_kernel)(t2, 100, 0.5, 0.1 * np.eye(3), y, n, c, *G3, np.random.default_rng(4))
    assert k == r and np.allclose(t1, t2, rtol=1e-12)


# ---------------------------------------------------------------- steps 1 and 2 against brute force
def test_residual_step_matches_brute_force_density():
    alpha, n, b, v = np.array([3.3, 4.4]), 100.0, 0.05, np.array([0.7, 2.5])
    s_L = logx_mean(alpha) + np.array([0.04, -0.03])
    rng = np.random.default_rng(5)
    draws = np.array([A._residual_kernel(alpha, s_L, n, b, v, rng) for _ in range(20_000)])
    g = np.linspace(-7, 7, 801) * np.sqrt(v)[:, None]
    R1, R2 = np.meshgrid(g[0], g[1], indexing="ij")
    pts = np.stack([R1.ravel(), R2.ravel()], 1)
    logp = (stats.multivariate_normal(logx_mean(alpha), logx_cov(alpha) / n).logpdf(s_L - b * pts)
            + stats.norm.logpdf(pts, 0, np.sqrt(v)).sum(1)).reshape(R1.shape)
    p = np.exp(logp - logp.max())
    p /= p.sum()
    for j, marg in enumerate((p.sum(1), p.sum(0))):
        h = (g[j][1] - g[j][0]) / 2
        cdf = lambda x, m=marg, gj=g[j], h=h: np.interp(x, gj + h, np.cumsum(m))  # noqa: E731
        assert stats.kstest(draws[:, j], cdf).pvalue > 1e-3
    assert np.array_equal(A._residual_kernel(alpha, s_L, n, b, v, np.random.default_rng(1)),
                          py_func(A._residual_kernel)(alpha, s_L, n, b, v, np.random.default_rng(1)))


@pytest.mark.parametrize("rho", [4.0, 0.3, 1e-6])
def test_mixing_step_matches_brute_force_density(rho):
    f = lambda t: np.exp(0.5 * t - rho**2 / (2 * np.exp(t)) - np.exp(t) / 2)   # noqa: E731  density of log v
    ts = np.linspace(-60, 6, 20001)
    cdf = integrate.cumulative_trapezoid(f(ts), ts, initial=0.0)
    rng, r, v = np.random.default_rng(6), np.full(1, rho), np.ones(1)
    draws = np.empty(20_000)
    for i in range(draws.size):
        A._mixing_kernel(r, v, rng)
        draws[i] = v[0]
    assert stats.kstest(np.log(draws), lambda x: np.interp(x, ts, cdf / cdf[-1])).pvalue > 1e-3
    assert stats.kstest(1 / draws, stats.invgauss(mu=1 / rho).cdf).pvalue > 1e-3


def test_mixing_step_stays_finite_at_extreme_residuals():
    v = np.ones(4)
    for _ in range(1000):
        A._mixing_kernel(np.array([0.0, 1e-300, 1e-150, 1e8]), v, np.random.default_rng(_))
        assert np.all(np.isfinite(v) & (v > 0))


# ---------------------------------------------------------------- the public sampler
def test_result_format_matches_dp_mcmc():
    rel, _ = _release()
    res = _quiet(A.dp_approx, rel, rng=1, **FAST)
    assert set(res.posterior.data_vars) == {"alpha", "mean_composition"}
    assert res.posterior["alpha"].dims == ("chain", "draw", "component") and res.posterior["alpha"].shape == (2, 500, 3)
    assert np.allclose(res.posterior["mean_composition"].sum("component"), 1.0)
    attrs = res.posterior.attrs
    assert attrs["method"] == "DPapprox" and attrs["prior"] == "p1" and attrs["update"] == "blocked"
    assert attrs["parts"] == "D" and attrs["n"] == 1000 and {"rhat_max", "mpsrf", "converged"} <= set(attrs)
    assert 0.05 < float(res.sample_stats["alpha_acceptance"].mean()) < 0.8


def test_same_seed_same_draws_for_any_n_jobs():
    rel, _ = _release()
    a = _quiet(A.dp_approx, rel, rng=3, n_jobs=1, **FAST).posterior["alpha"].values
    b = _quiet(A.dp_approx, rel, rng=3, n_jobs=2, **FAST).posterior["alpha"].values
    assert np.array_equal(a, b)


def test_split_release_priors():
    rel, _ = _release(n=2000, n1=500)
    assert _quiet(A.dp_approx, rel, rng=1, **FAST).posterior.attrs["parts"] == "D1+D2"
    res = _quiet(A.dp_approx, rel, prior="p3", rng=2, **FAST)
    assert res.posterior.attrs["parts"] == "D2" and res.posterior.attrs["prior"] == "p3"
    assert np.all(np.isfinite(res.posterior["alpha"].values))


@pytest.mark.parametrize("bad, err, match", [
    (dict(prior="p2"), ValueError, "no density"), (dict(prior="p5"), ValueError, "p5"),
    (dict(prior="p7"), ValueError, "prior must be one of"), (dict(prior="p3"), ValueError, "split release"),
    (dict(update="slice"), ValueError, "update must be one of"), (dict(n_mh=0), ValueError, "n_mh"),
    (dict(n_iter=0), ValueError, "n_iter"), (dict(thin=2.0), TypeError, "thin"),
    (dict(progress="yes"), TypeError, "progress"), (dict(prior=GammaPrior(1.0, 0.1, d=2)), ValueError, "d = 2"),
])
def test_bad_input_names_the_argument(bad, err, match):
    rel, _ = _release(n=200)
    with pytest.raises(err, match=match):
        A.dp_approx(rel, **dict(FAST, **bad))


def test_release_must_be_a_release():
    with pytest.raises(TypeError, match="dplit.release.Release"):
        A.dp_approx({"s_L": [-1.0, -1.0, -1.0], "n": 100})


def test_small_release_warns():
    rel, _ = _release(n=A.MIN_N - 1)
    with pytest.warns(A.ApproximationWarning, match="MIN_N"):
        _quiet(A.dp_approx, rel, rng=1, **FAST)


def test_huge_epsilon_stays_finite_and_matches_the_non_private_posterior():
    from dplit.mcmc import mcmc

    rng = np.random.default_rng(8)
    X = dirichlet_draws(np.array([2.2, 3.3, 4.4]), 5000, rng=rng)
    ref = _quiet(mcmc, sufficient_stat(X), 5000, rng=1, **dict(FAST, n_iter=4000)).posterior["alpha"].values
    for eps in (1e10, 1e300):
        rel = Release.from_statistic(censored_stat(X, 1e-300), 5000, 0.5, eps, check=False)  # a nominal
        got = _quiet(A.dp_approx, rel, rng=2, **dict(FAST, n_iter=4000)).posterior["alpha"].values
        assert np.all(np.isfinite(got))
        sd = ref.reshape(-1, 3).std(0)
        assert np.all(np.abs(got.reshape(-1, 3).mean(0) - ref.reshape(-1, 3).mean(0)) < 0.1 * sd)
        assert np.allclose(got.reshape(-1, 3).std(0), sd, rtol=0.1)


# ---------------------------------------------------------------- statistical checks
@pytest.mark.slow
def test_sbc_blocked_is_calibrated_and_catches_a_wrong_scale():
    good = A._sbc_ranks(200, n=200, d=2, a=1e-2, eps=1.0, rng=31)
    bad = A._sbc_ranks(200, n=200, d=2, a=1e-2, eps=1.0, scale_factor=0.3, rng=33)
    assert rank_uniformity_pvalues(good).min() > 1e-3 and rank_uniformity_pvalues(bad).min() < 1e-3


@pytest.mark.slow
def test_sbc_gibbs_is_calibrated():
    ranks = A._sbc_ranks(200, n=200, d=2, a=1e-2, eps=1.0, update="gibbs", thin=100, rng=32)
    assert rank_uniformity_pvalues(ranks).min() > 1e-3


@pytest.mark.slow
def test_gibbs_and_blocked_agree_and_large_n_agrees_with_dp_mcmc():
    from dplit.mcmc import dp_mcmc

    rel, _ = _release(n=5000, eps=1.0, a=1e-5, seed=4)
    kw = dict(n_iter=6000, n_warmup=1000, n_chains=2, thin=5, progress=False)
    ex = _quiet(dp_mcmc, rel, rng=1, **kw).posterior["alpha"].values.reshape(-1, 3)
    bl = _quiet(A.dp_approx, rel, rng=2, **kw).posterior["alpha"].values.reshape(-1, 3)
    gi = _quiet(A.dp_approx, rel, update="gibbs", rng=3, **dict(kw, n_iter=30_000, thin=25)).posterior["alpha"]
    gi = gi.values.reshape(-1, 3)
    sd = ex.std(0)
    assert np.all(np.abs(bl.mean(0) - ex.mean(0)) < 0.25 * sd) and np.allclose(bl.std(0), sd, rtol=0.2)
    assert np.all(np.abs(gi.mean(0) - bl.mean(0)) < 0.25 * sd) and np.allclose(gi.std(0), bl.std(0), rtol=0.2)
