"""Tests of dplit.dirichlet: inputs, statistics, likelihood, special functions, MLE, draws."""

import numpy as np
import pytest
from numba import njit
from scipy import optimize, special, stats

from dplit import dirichlet as dr
from dplit import dirichlet_fit as fit
from dplit import dirichlet_random
from dplit.dirichlet import (
    censored_stat,
    check_compositions,
    close,
    dirichlet_draws,
    dirichlet_mle,
    fisher_information,
    in_stat_range,
    loglik,
    logx_cov,
    logx_mean,
    sufficient_stat,
)

EPS = np.finfo(float).eps


# ---------------------------------------------------------------- inputs and statistics
def test_check_compositions_accepts_and_returns_float():
    X = check_compositions([[1, 0], [0.25, 0.75]])
    assert X.dtype == float and X.shape == (2, 2)


@pytest.mark.parametrize(
    "X, exc, match",
    [
        ([[0.5, 0.5], [0.3, 0.6]], ValueError, "row 1"),
        ([[0.5, 0.5], [0.5, 0.5], [1.5, -0.5]], ValueError, "row 2"),
        ([[np.inf, 0.0]], ValueError, "row 0"),
        ([[np.nan, 1.0]], ValueError, "non-finite"),
        ([0.5, 0.5], ValueError, "2-D"),
        ([[1.0]], ValueError, "2 columns"),
        (np.empty((0, 3)), ValueError, "at least 1 row"),
        ([["a", "b"]], TypeError, "real numbers"),
        ([[True, False]], TypeError, "real numbers"),
        ([[1 + 0j, 0j]], TypeError, "real numbers"),
    ],
)
def test_check_compositions_rejects(X, exc, match):
    with pytest.raises(exc, match=match):
        check_compositions(X)


def test_check_compositions_tol_and_name():
    X = [[0.5, 0.5 + 1e-6]]
    with pytest.raises(ValueError, match="D1 row 0"):
        check_compositions(X, name="D1")
    assert check_compositions(X, tol=1e-5).shape == (1, 2)
    with pytest.raises(ValueError, match="tol"):
        check_compositions(X, tol=-1.0)


def test_close():
    A = np.array([[480.0, 600.0, 360.0], [0.0, 1.0, 3.0]])
    X = close(A)
    assert np.allclose(X.sum(axis=1), 1) and np.allclose(X[1], [0, 0.25, 0.75])
    assert np.allclose(close([1, 3]), [0.25, 0.75])
    with pytest.raises(ValueError, match="row 1 sums to 0"):
        close([[1.0, 1.0], [0.0, 0.0]])
    with pytest.raises(ValueError, match="negative"):
        close([[1.0, -1.0]])
    with pytest.raises(ValueError, match="non-finite"):
        close([[1.0, np.nan]])
    with pytest.raises(ValueError, match="2 parts"):
        close([1.0])
    with pytest.raises(ValueError, match="1-D or 2-D"):
        close(np.ones((2, 2, 2)))
    with pytest.raises(TypeError):
        close([["1", "2"]])


def test_statistics():
    rng = np.random.default_rng(0)
    X = rng.dirichlet([1.0, 2.0, 3.0], size=100)
    s0 = sufficient_stat(X)
    assert np.allclose(s0, np.log(X).mean(axis=0))
    a = 0.05
    assert np.allclose(censored_stat(X, a), np.log(np.maximum(X, a)).mean(axis=0))
    assert np.all(censored_stat(X, a) >= s0)
    Xz = np.array([[1.0, 0.0], [0.5, 0.5]])
    assert np.allclose(censored_stat(Xz, 0.1), [np.log(0.5) / 2, (np.log(0.1) + np.log(0.5)) / 2])
    with pytest.raises(ValueError, match="row 0 has a zero"):
        sufficient_stat(Xz)
    with pytest.raises(ValueError, match="row 1"):
        sufficient_stat([[0.5, 0.5], [0.2, 0.2]])
    for bad in (0.0, 1.0, -0.1, np.nan):
        with pytest.raises(ValueError, match="a must lie in"):
            censored_stat(X, bad)
    with pytest.raises(TypeError):
        censored_stat(X, "0.1")
    with pytest.raises(TypeError):
        censored_stat(X, True)


def test_in_stat_range():
    assert in_stat_range(logx_mean([1.0, 2.0]))
    assert not in_stat_range(np.log([0.5, 0.5]))  # the boundary: no MLE
    assert not in_stat_range([-0.5, -0.5])
    assert not in_stat_range([-np.inf, -1.0]) and not in_stat_range([np.inf, -1.0])
    assert dr.in_stat_range_kernel(np.array([-1.0, -2.0]))
    with pytest.raises(ValueError, match="NaN"):
        in_stat_range([np.nan, -1.0])
    with pytest.raises(ValueError, match="d >= 2"):
        in_stat_range([-1.0])
    with pytest.raises(ValueError, match="1-D"):
        in_stat_range([[-1.0, -1.0]])


def test_loglik_matches_scipy_and_broadcasts():
    rng = np.random.default_rng(1)
    alpha = np.array([0.7, 2.0, 5.0, 1.1])
    X = rng.dirichlet(alpha, size=30)
    s = sufficient_stat(X)
    assert np.isclose(loglik(alpha, s, 30), stats.dirichlet.logpdf(X.T, alpha).sum(), rtol=1e-12)
    grid = np.array([alpha, 2 * alpha, alpha / 3])
    vals = loglik(grid, s, 30)
    assert vals.shape == (3,) and np.isclose(vals[1], loglik(2 * alpha, s, 30))
    assert np.isclose(loglik(alpha, s, 7.5), 7.5 / 30 * loglik(alpha, s, 30))


@pytest.mark.parametrize(
    "args, exc",
    [
        (([1.0, 0.0], [-1.0, -1.0], 5), ValueError),
        (([1.0, np.inf], [-1.0, -1.0], 5), ValueError),
        (([1.0, 1.0], [-1.0, -np.inf], 5), ValueError),
        (([1.0, 1.0, 1.0], [-1.0, -1.0], 5), ValueError),
        (([1.0, 1.0], [-1.0, -1.0], 0), ValueError),
        (([1.0, 1.0], [-1.0, -1.0], np.nan), ValueError),
        (([1.0, 1.0], [-1.0, -1.0], "5"), TypeError),
        ((["x", "y"], [-1.0, -1.0], 5), TypeError),
        (([1.0], [-1.0], 5), ValueError),
    ],
)
def test_loglik_rejects(args, exc):
    with pytest.raises(exc):
        loglik(*args)


# ---------------------------------------------------------------- special functions
def test_digamma_trigamma_match_scipy():
    xs = np.concatenate([np.logspace(-10, 12, 1500), np.linspace(0.01, 30, 1500)])
    psi = np.array([fit._digamma(v) for v in xs])
    psi1 = np.array([dr.trigamma_kernel(v) for v in xs])
    ref, ref1 = special.digamma(xs), special.polygamma(1, xs)
    near_root = np.abs(xs - 1.4616321449683622) < 0.05
    assert np.max(np.abs(psi - ref)[near_root]) < 1e-15
    assert np.max(np.abs(psi / ref - 1)[~near_root]) < 1e-14
    assert np.max(np.abs(psi1 / ref1 - 1)) < 1e-14
    big = np.logspace(3, 12, 50)
    dml = np.array([fit._digamma_minus_log(v) for v in big])
    assert np.allclose(dml * big, -0.5 - 1 / (12 * big), rtol=1e-10, atol=0)


# ---------------------------------------------------------------- moments
def test_moments_are_derivatives_of_the_cumulant():
    alpha = np.array([0.3, 1.5, 8.0])
    h = 1e-6

    def cum(a):
        return special.gammaln(a).sum() - special.gammaln(a.sum())

    grad = [(cum(alpha + h * e) - cum(alpha - h * e)) / (2 * h) for e in np.eye(3)]
    assert np.allclose(logx_mean(alpha), grad, atol=1e-6)
    hess = [(logx_mean(alpha + h * e) - logx_mean(alpha - h * e)) / (2 * h) for e in np.eye(3)]
    assert np.allclose(logx_cov(alpha), hess, atol=1e-5)
    assert np.allclose(fisher_information(alpha, n=3), 3 * logx_cov(alpha))
    assert np.all(np.linalg.eigvalsh(logx_cov(alpha)) > 0)
    batch = np.array([alpha, 2 * alpha])
    assert np.allclose(logx_cov(batch)[1], logx_cov(2 * alpha))
    assert np.allclose(logx_mean(batch)[1], logx_mean(2 * alpha))


@pytest.mark.parametrize("fn", [logx_mean, logx_cov, fisher_information])
@pytest.mark.parametrize("alpha", [[1.0, -1.0], [1.0, np.nan], [1.0], 3.0, [["a", "b"]]])
def test_moments_reject(fn, alpha):
    with pytest.raises((ValueError, TypeError)):
        fn(alpha)


def test_fisher_information_rejects_n():
    with pytest.raises(ValueError):
        fisher_information([1.0, 2.0], n=0)
    with pytest.raises(TypeError):
        fisher_information([1.0, 2.0], n="3")


# ---------------------------------------------------------------- MLE
def _scipy_mle(s):
    """Independent MLE: BFGS on -loglik in log alpha, polished by a root of the score."""

    def score(u):
        return special.digamma(np.exp(u).sum()) - special.digamma(np.exp(u)) + s

    res = optimize.minimize(lambda u: -loglik(np.exp(u), s, 1.0), np.zeros(len(s)),
                            jac=lambda u: -np.exp(u) * score(u), method="BFGS",
                            options={"gtol": 1e-12, "maxiter": 10_000})
    return np.exp(optimize.root(score, res.x, method="hybr", options={"xtol": 1e-14}).x)


def test_mle_matches_scipy_reference_and_kernel():
    rng = np.random.default_rng(2)
    for _ in range(40):
        d = int(rng.integers(2, 11))
        alpha = np.exp(rng.uniform(np.log(0.1), np.log(100), d))
        X = np.clip(rng.dirichlet(alpha, size=int(rng.integers(20, 200))), 1e-300, None)
        s = np.log(X).mean(axis=0)
        a_hat = dirichlet_mle(s)
        assert np.allclose(_scipy_mle(s), a_hat, rtol=1e-8, atol=0)
        a_ref, _, status = dr.dirichlet_mle_reference(s)
        assert status == 0 and np.allclose(a_ref, a_hat, rtol=1e-10, atol=0)
        assert np.array_equal(dr.dirichlet_mle_kernel(s, 1e-10, 100), a_hat)


def test_minka_fixed_point_agrees_and_crawls_near_the_edge():
    """The paper's cited fixed point reaches the same MLE; its step count grows like alpha_0 near the edge."""
    rng = np.random.default_rng(5)
    for _ in range(10):
        alpha = np.exp(rng.uniform(np.log(0.5), np.log(20), int(rng.integers(2, 6))))
        a_fp, steps = fit.minka_fixed_point(logx_mean(alpha))
        assert steps < 100_000 and np.allclose(a_fp, alpha, rtol=1e-7)
    steps = [fit.minka_fixed_point(np.log([0.3, 0.7]) + np.log1p(-delta))[1] for delta in (1e-1, 1e-2)]
    assert steps[1] > 5 * steps[0]
    assert fit.minka_fixed_point(np.log([0.3, 0.7]) + np.log1p(-1e-3), max_iter=10)[1] == 10   # capped
    for bad, err in (([0.0, 0.0], ValueError), ([-1.0], ValueError), ([-1.0, np.nan], ValueError)):
        with pytest.raises(err, match="s "):
            fit.minka_fixed_point(bad)
    with pytest.raises((ValueError, TypeError), match="max_iter"):
        fit.minka_fixed_point([-1.0, -1.0], max_iter=0)


def test_mle_exact_answer_over_a_wide_range():
    rng = np.random.default_rng(3)
    for _ in range(300):
        d = int(rng.integers(2, 12))
        alpha = np.exp(rng.uniform(np.log(1e-3), np.log(1e4), d))
        a_hat, info = dirichlet_mle(logx_mean(alpha), return_info=True)
        assert info.converged and info.n_iter <= 15
        assert np.allclose(a_hat, alpha, rtol=1e-9 + 100 * EPS / info.distance, atol=0)


@pytest.mark.parametrize("delta", [1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8])
@pytest.mark.parametrize("d", [2, 5, 10])
def test_mle_near_the_boundary(delta, d):
    rng = np.random.default_rng(int(-np.log10(delta)) * 100 + d)
    m = rng.dirichlet(np.ones(d))
    s = np.log(m) + np.log1p(-delta)
    a_hat, info = dirichlet_mle(s, return_info=True)
    assert info.converged and info.n_iter <= 6 and abs(info.distance / delta - 1) < 1e-6
    assert np.isclose(a_hat.sum(), (d - 1) / (2 * delta), rtol=1 / a_hat.min())
    a_ref, _, status = dr.dirichlet_mle_reference(s)
    assert status == 0 and np.allclose(a_ref, a_hat, rtol=1e-13 / delta, atol=0)
    # exact answer: alpha = c m with mu computed without cancellation
    alpha = (d - 1) / (2 * delta) * rng.dirichlet(np.full(d, 3.0))
    mu = np.log(alpha / alpha.sum()) + np.array(
        [fit._digamma_minus_log(a) - fit._digamma_minus_log(alpha.sum()) for a in alpha])
    a_hat, info = dirichlet_mle(mu, return_info=True)
    assert info.n_iter <= 6
    assert np.allclose(a_hat, alpha, rtol=20 * EPS / info.distance + 1e-12, atol=0)


def test_mle_bad_input_and_cap():
    with pytest.raises(ValueError, match="outside Range"):
        dirichlet_mle([-0.1, -0.1])
    with pytest.raises(ValueError, match="outside Range"):
        dirichlet_mle([-np.inf, -1.0])
    with pytest.raises(ValueError, match="NaN"):
        dirichlet_mle([np.nan, -1.0])
    with pytest.raises(ValueError, match="d >= 2"):
        dirichlet_mle([-1.0])
    with pytest.raises(ValueError, match="tol"):
        dirichlet_mle([-1.0, -1.0], tol=0.0)
    with pytest.raises(ValueError, match="max_iter"):
        dirichlet_mle([-1.0, -1.0], max_iter=0)
    with pytest.raises(TypeError, match="max_iter"):
        dirichlet_mle([-1.0, -1.0], max_iter=3.0)
    with pytest.raises(TypeError):
        dirichlet_mle(["a", "b"])
    s = logx_mean([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="converge"):
        dirichlet_mle(s, max_iter=1)
    a, info = dirichlet_mle(s, max_iter=1, return_info=True)
    assert not info.converged and np.isnan(a).all()
    assert np.isnan(dr.dirichlet_mle_kernel(np.array([-0.1, -0.1]), 1e-10, 100)).all()
    assert np.isnan(dr.dirichlet_mle_kernel(s, 1e-10, 1)).all()


@njit
def _mle_and_draws_inside_numba(alpha, n, rng):
    x = dr.dirichlet_draws_kernel(alpha, n, rng)
    s = np.zeros(alpha.shape[0])
    for i in range(n):
        for j in range(alpha.shape[0]):
            s[j] += np.log(x[i, j]) / n
    return dr.dirichlet_mle_kernel(s, 1e-10, 100), s


def test_kernels_are_callable_from_numba():
    alpha = np.array([2.0, 3.0, 4.0])
    a_hat, s = _mle_and_draws_inside_numba(alpha, 2000, np.random.default_rng(4))
    assert np.allclose(a_hat, dirichlet_mle(s), rtol=1e-14)
    assert np.allclose(a_hat, alpha, rtol=0.2)


def test_mle_recovers_alpha_from_large_samples():
    """Mahalanobis distances of the MLE under the Fisher information are ~ chi2_d."""
    rng = np.random.default_rng(5)
    n = 3000
    for alpha in (np.array([3.3, 4.4]), np.array([0.5, 0.5, 0.5]), np.array([2.0, 20.0, 2.0])):
        est = np.array([dirichlet_mle(sufficient_stat(dirichlet_draws(alpha, n, rng=rng)))
                        for _ in range(60)])
        info = fisher_information(alpha, n=n)
        maha = np.einsum("ij,jk,ik->i", est - alpha, info, est - alpha)
        assert stats.kstest(maha, stats.chi2(len(alpha)).cdf).pvalue > 1e-3
        off = est - 1.05 * alpha
        wrong = np.einsum("ij,jk,ik->i", off, info, off)
        assert stats.kstest(wrong, stats.chi2(len(alpha)).cdf).pvalue < 1e-3


# ---------------------------------------------------------------- draws
def test_draws_seeded_and_shaped():
    a = dirichlet_draws([1.0, 2.0, 3.0], 100, rng=7)
    assert a.shape == (100, 3) and np.allclose(a.sum(axis=1), 1)
    assert np.array_equal(a, dirichlet_draws([1.0, 2.0, 3.0], 100, rng=np.random.default_rng(7)))
    assert not np.array_equal(a, dirichlet_draws([1.0, 2.0, 3.0], 100, rng=8))
    assert dirichlet_draws([1.0, 1.0], 0, rng=0).shape == (0, 2)
    tiny = dirichlet_draws([0.01, 0.005, 0.02], 5000, rng=9)
    assert np.all(np.isfinite(tiny)) and np.allclose(tiny.sum(axis=1), 1)


@pytest.mark.parametrize(
    "alpha, n, exc",
    [([1.0, 0.0], 5, ValueError), ([1.0, np.nan], 5, ValueError), ([1.0], 5, ValueError),
     ([[1.0, 1.0]], 5, ValueError), ([1.0, 1.0], -1, ValueError), ([1.0, 1.0], 2.0, TypeError),
     ([1.0, 1.0], True, TypeError), (["a", "b"], 5, TypeError)],
)
def test_draws_reject(alpha, n, exc):
    with pytest.raises(exc):
        dirichlet_draws(alpha, n, rng=0)


def test_draws_reject_bad_rng():
    with pytest.raises(TypeError):
        dirichlet_draws([1.0, 1.0], 5, rng="seed")


@pytest.mark.parametrize("alpha", [[3.3, 4.4], [0.5, 0.5, 0.5], [0.05, 2.0, 20.0], [2.2, 3.3, 4.4, 5.5, 6.6]])
def test_draws_beta_margins(alpha):
    alpha = np.array(alpha)
    rng = np.random.default_rng(10)

    def min_p(x):
        a0 = alpha.sum()
        return min(stats.kstest(x[:, j], stats.beta(alpha[j], a0 - alpha[j]).cdf).pvalue
                   for j in range(len(alpha)))

    wrong = alpha.copy()
    wrong[0] *= 1.1
    for kernel in (dr.dirichlet_draws_kernel, dr.dirichlet_draws_fast_kernel):
        assert min_p(kernel(alpha, 20_000, rng)) > 1e-3 / len(alpha)
        assert min_p(kernel(wrong, 20_000, rng)) < 1e-3


@pytest.mark.parametrize("fast", [False, True])
@pytest.mark.parametrize("alpha", [[3.3, 4.4], [0.5, 0.5, 0.5], [2.0, 20.0, 2.0]])
def test_monte_carlo_moments_of_log_x(alpha, fast):
    alpha = np.array(alpha)
    n = 50_000
    kernel = dr.dirichlet_draws_fast_kernel if fast else dr.dirichlet_draws_kernel
    L = np.log(kernel(alpha, n, np.random.default_rng(11)))
    S = logx_cov(alpha)
    diff = L.mean(axis=0) - logx_mean(alpha)
    assert stats.chi2(len(alpha)).sf(n * diff @ np.linalg.solve(S, diff)) > 1e-3
    diff_w = L.mean(axis=0) - logx_mean(1.05 * alpha)
    assert stats.chi2(len(alpha)).sf(n * diff_w @ np.linalg.solve(S, diff_w)) < 1e-3
    se = np.sqrt((np.outer(np.diag(S), np.diag(S)) + S**2) / n)
    assert np.all(np.abs(np.cov(L.T) - S) < (18 if alpha.min() < 1 else 6) * se)
    assert np.any(np.abs(np.cov(L.T) - logx_cov(1.2 * alpha)) > 6 * se)


def test_default_kernel_matches_numpy_stream():
    """With every alpha_j >= 1 the default kernel uses rng exactly like standard_gamma(alpha, (n, d))."""
    alpha = np.array([1.0, 2.5, 7.0])
    g = np.random.default_rng(14).standard_gamma(alpha, size=(500, 3))
    x = dr.dirichlet_draws_kernel(alpha, 500, np.random.default_rng(14))
    assert np.allclose(x, g / g.sum(axis=1, keepdims=True), rtol=1e-14)
    assert np.array_equal(dirichlet_random.gamma_draws_kernel(alpha, 500, np.random.default_rng(14)), g)
    assert np.array_equal(dirichlet_draws(alpha, 500, rng=14), x)


def test_fast_kernel_is_seeded():
    a = dr.dirichlet_draws_fast_kernel(np.array([0.3, 2.0]), 100, np.random.default_rng(15))
    b = dr.dirichlet_draws_fast_kernel(np.array([0.3, 2.0]), 100, np.random.default_rng(15))
    assert np.array_equal(a, b) and np.allclose(a.sum(axis=1), 1)


@pytest.mark.parametrize("shape", [0.02, 0.5, 1.0, 2.5, 60.0])
def test_gamma_kernels(shape):
    rng = np.random.default_rng(12)
    g = dirichlet_random.gamma_draws_fast_kernel(np.array([shape, 1.0]), 20_000, rng)[:, 0]
    assert stats.kstest(g, stats.gamma(shape).cdf).pvalue > 1e-3
    assert stats.kstest(g, stats.gamma(1.1 * shape).cdf).pvalue < 1e-3
    lg = np.array([dr.log_gamma_draw_kernel(shape, rng) for _ in range(20_000)])
    assert stats.kstest(np.exp(lg), stats.gamma(shape).cdf).pvalue > 1e-3
    assert np.all(np.isfinite(lg))


def test_numba_twins_of_statistics_likelihood_and_moments():
    rng = np.random.default_rng(13)
    for alpha in (np.array([0.3, 2.0]), np.array([1.5, 4.0, 0.7, 30.0])):
        X = rng.dirichlet(alpha, size=200)
        X[0, 0] = 0.0
        X = close(X)
        assert np.allclose(dr.censored_stat_kernel(X, 1e-3), censored_stat(X, 1e-3), rtol=1e-14)
        s = censored_stat(X, 1e-3)
        assert np.isclose(dr._loglik_kernel(alpha, s, 200.0), loglik(alpha, s, 200), rtol=1e-12)
        assert np.allclose(dr.logx_mean_kernel(alpha), logx_mean(alpha), rtol=1e-13)
        assert np.allclose(dr.logx_cov_kernel(alpha), logx_cov(alpha), rtol=1e-13)


def test_a_transposed_data_set_is_named():
    from dplit.dirichlet import check_compositions

    X = np.random.default_rng(0).dirichlet([2.0, 3.0, 4.0], size=50)
    with pytest.raises(ValueError, match=r"X looks transposed: its 50 columns sum to 1.*pass X\.T"):
        check_compositions(X.T)
    with pytest.raises(ValueError, match="row 0 sums to"):  # rows of amounts: the usual message
        check_compositions(X * 24.0)
