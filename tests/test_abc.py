"""Tests of dplit.abc: the simulator kernel, reproducible blocks, rejection, the adjustment, dp_abc."""

import math
import warnings

import numpy as np
import pytest
from _helpers import noisy_release

from dplit import abc as A
from dplit.censoring import censored_logx_moments
from dplit.dirichlet import dirichlet_draws, sufficient_stat
from dplit.priors import DrawsPrior, GammaPrior, Prior
from dplit.testing import py_func

QUICK = dict(progress=False)


def _release(n=400, a=1e-4, **kw):
    """This file's releases: larger n, smaller a than the shared default."""
    return noisy_release(n=n, a=a, **kw)


# ---------------------------------------------------------------- the simulator kernel
@pytest.mark.parametrize("alpha", [[2.2, 3.3, 4.4], [0.3, 0.8, 5.0]])
def test_kernel_equals_its_python_function(alpha):
    alpha = np.array(alpha)
    s_k = A._censored_stat_sim_kernel(alpha, 150, math.log(1e-2), np.random.default_rng(1))
    s_p = py_func(A._censored_stat_sim_kernel)(alpha, 150, math.log(1e-2), np.random.default_rng(1))
    assert np.allclose(s_k, s_p, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("alpha, a", [([1.2, 3.0, 6.0], 0.05), ([0.4, 0.7, 2.0], 1e-3)])
def test_simulated_statistic_has_the_censored_moments(alpha, a):
    alpha, n, reps = np.array(alpha), 10, 5000
    g = np.random.default_rng(2)
    S = np.array([A._censored_stat_sim_kernel(alpha, n, math.log(a), g) for _ in range(reps)])
    mean1, var1 = censored_logx_moments(alpha, a)
    z = (S.mean(0) - mean1) / np.sqrt(var1 / n / reps)
    assert np.all(np.abs(z) < 4), z
    assert np.allclose(S.var(0, ddof=1) / (var1 / n), 1, atol=0.1)


def test_tiny_threshold_and_huge_alpha_stay_finite():
    g = np.random.default_rng(3)
    for alpha, a in [([2.0, 3.0], 1e-300), ([1e6, 2e6, 3e6], 0.5), ([1e-3, 1e-3, 5.0], 1e-12)]:
        s = A._censored_stat_sim_kernel(np.array(alpha), 100, math.log(a), g)
        assert np.all(np.isfinite(s)) and np.all(s >= math.log(a) - 1e-12) and np.all(s <= 0)


def test_reference_twin_agrees_in_law():
    alpha, a, n = np.array([1.2, 3.0, 6.0]), 0.05, 10
    g = np.random.default_rng(4)
    ref = np.array([A._censored_stat_sim_reference(alpha, n, a, g) for _ in range(4000)])
    mean1, var1 = censored_logx_moments(alpha, a)
    assert np.all(np.abs(ref.mean(0) - mean1) < 4 * np.sqrt(var1 / n / 4000))


# ---------------------------------------------------------------- blocks
def test_simulate_releases_is_the_same_for_any_number_of_threads():
    alphas = np.random.default_rng(5).gamma(1.0, 10.0, size=(3 * A.BLOCK_SIZE + 7, 3))
    one = A.simulate_releases(alphas, [50, 80], [0.1, 0.05], 1e-3, rng=6, n_jobs=1)
    two = A.simulate_releases(alphas, [50, 80], [0.1, 0.05], 1e-3, rng=6, n_jobs=2)
    assert one.shape == (len(alphas), 6) and np.array_equal(one, two)
    assert A.simulate_releases(alphas[:0], [50], [0.1], 1e-3, rng=6).shape == (0, 3)


def test_simulate_releases_noise_has_the_laplace_variance():
    fixed = np.tile([2.0, 3.0, 4.0], (6000, 1))
    noisy = A.simulate_releases(fixed, [40], [0.2], 1e-3, rng=7)
    quiet = A.simulate_releases(fixed, [40], [1e-12], 1e-3, rng=7)
    assert np.all(np.isfinite(quiet))
    assert np.allclose((noisy.var(0) - quiet.var(0)) / (2 * 0.2**2), 1, atol=0.1)


@pytest.mark.parametrize("kw, err, word", [
    (dict(alphas=[[1.0, -2.0]]), ValueError, "alphas"),
    (dict(alphas=[1.0, 2.0]), ValueError, "alphas"),
    (dict(alphas=[[1.0, np.nan]]), ValueError, "alphas"),
    (dict(n_parts=[0]), ValueError, "n_parts"),
    (dict(n_parts=[1.5]), TypeError, "n_parts"),
    (dict(scales=[-1.0]), ValueError, "scales"),
    (dict(scales=[0.1, 0.2]), ValueError, "n_parts and scales"),
    (dict(a=0.0), ValueError, "a must"),
    (dict(n_jobs=0), ValueError, "n_jobs"),
    (dict(progress="yes"), TypeError, "progress"),
])
def test_simulate_releases_bad_input(kw, err, word):
    args = dict(dict(alphas=[[1.0, 2.0]], n_parts=[10], scales=[0.1], a=1e-3), **kw)
    with pytest.raises(err, match=word):
        A.simulate_releases(args.pop("alphas"), args.pop("n_parts"), args.pop("scales"), args.pop("a"), **args)


# ---------------------------------------------------------------- rejection and adjustment
def test_reject_keeps_the_smallest_in_simulation_order():
    keep, delta = A._reject(np.array([0.5, 0.1, np.nan, 0.3, 0.1, np.inf, 2.0]), 3)
    assert keep.tolist() == [1, 3, 4] and delta == 0.3
    with pytest.raises(RuntimeError, match="finite distance"):
        A._reject(np.array([0.1, np.nan]), 2)


def test_loclinear_removes_an_exact_linear_relation():
    g = np.random.default_rng(8)
    S = g.uniform(-1, 1, size=(3000, 3))
    B = g.normal(size=(3, 2))
    theta = np.array([1.0, -1.0]) + S @ B + 0.02 * g.standard_normal((3000, 2))
    adj, w = A._loclinear(theta, S, np.zeros(3), np.linalg.norm(S, axis=1), np.sqrt(3.0))
    assert np.allclose(adj.std(0), 0.02, rtol=0.1) and np.allclose(adj.mean(0), [1.0, -1.0], atol=0.01)
    assert np.all((w >= 0) & (w <= 1))


# ---------------------------------------------------------------- dp_abc
def test_dp_abc_result_shape_attrs_and_reproducibility():
    rel, _ = _release()
    r1 = A.dp_abc(rel, n_accept=100, accept_rate=0.2, rng=9, n_jobs=1, **QUICK)
    r2 = A.dp_abc(rel, n_accept=100, accept_rate=0.2, rng=9, n_jobs=2, **QUICK)
    assert np.array_equal(r1.posterior["alpha"].values, r2.posterior["alpha"].values)
    assert r1.posterior["alpha"].shape == (1, 100, 3) and r1.posterior["alpha"].dims[-1] == "component"
    m = r1.posterior["mean_composition"].values
    assert np.allclose(m.sum(-1), 1)
    at = r1.posterior.attrs
    assert at["method"] == "DPABC" and at["prior"] == "p1" and at["parts"] == "D" and at["n_simulations"] == 500
    assert at["tolerance"] == pytest.approx(float(r1.sample_stats["distance"].max()))
    assert at["runtime"] > 0 and "/" in at["seeds"]


def test_accept_rate_one_keeps_every_simulation():
    rel, _ = _release(n=100)
    res = A.dp_abc(rel, n_accept=50, accept_rate=1.0, rng=10, **QUICK)
    assert res.posterior.attrs["n_simulations"] == 50


def test_parts_follow_table_1():
    rel, _ = _release(n1=100)
    assert A.dp_abc(rel, n_accept=20, rng=1, **QUICK).posterior.attrs["parts"] == "D1+D2"
    draws = np.random.default_rng(2).gamma(5.0, 0.6, size=(500, 3))
    for prior in ("p3", DrawsPrior(draws, name="mine")):
        res = A.dp_abc(rel, prior=prior, n_accept=20, rng=1, **QUICK)
        assert res.posterior.attrs["parts"] == "D2"
    assert A.dp_abc(rel, prior=GammaPrior(1.0, 0.1, d=3, name="p1"), n_accept=20, rng=1,
                    **QUICK).posterior.attrs["parts"] == "D1+D2"


def test_p5_is_built_from_d1():
    rel, _ = _release(n=200, n1=50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = A.dp_abc(rel, prior="p5", n_accept=20, rng=3, **QUICK)
    assert res.posterior.attrs["prior"] == "p5" and res.posterior.attrs["parts"] == "D2"


class _NoDraws(Prior):
    """A prior that cannot be sampled."""


class _BadDraws(Prior):
    """A prior whose draws are negative."""

    def sample(self, size, rng=None):
        return -np.ones((size, self.d))


@pytest.mark.parametrize("kw, err, word", [
    (dict(accept_rate=0.0), ValueError, "accept_rate"),
    (dict(accept_rate=1.01), ValueError, "accept_rate"),
    (dict(accept_rate=np.nan), ValueError, "accept_rate"),
    (dict(n_accept=0), ValueError, "n_accept"),
    (dict(n_accept=5.0), TypeError, "n_accept"),
    (dict(adjust="ridge"), ValueError, "adjust"),
    (dict(prior="p2"), ValueError, "split release"),
    (dict(prior="p6"), ValueError, "prior"),
    (dict(prior=object()), TypeError, "prior"),
    (dict(prior=_NoDraws(3, name="nodraws")), TypeError, "cannot be sampled"),
    (dict(prior=_BadDraws(3, name="bad")), ValueError, "cannot be sampled"),
    (dict(prior=GammaPrior(1.0, 0.1, d=4)), ValueError, "d = 4"),
    (dict(n_jobs=0), ValueError, "n_jobs"),
    (dict(progress=1), TypeError, "progress"),
    (dict(rng="seed"), TypeError, "rng"),
    (dict(adjust="loclinear", n_accept=3), ValueError, "n_accept"),
])
def test_dp_abc_bad_input(kw, err, word):
    rel, _ = _release(n=100)
    with pytest.raises(err, match=word):
        A.dp_abc(rel, **dict(dict(n_accept=10, progress=False), **kw))


def test_dp_abc_refuses_simulations_beyond_memory_up_front(monkeypatch):
    rel, _ = _release(n=100)
    with pytest.raises(ValueError, match=r"1,000,000,000,000 simulations.*TiB.*raise accept_rate or lower n_accept"):
        A.dp_abc(rel, n_accept=1000, accept_rate=1e-9, progress=False)       # 2.9 TiB before the check
    monkeypatch.setenv("DPLIT_MAX_BYTES", str(8 * 100 * (3 * 2 + 2)))        # exactly 100 simulations fit
    A.dp_abc(rel, n_accept=10, accept_rate=0.1, progress=False)
    with pytest.raises(ValueError, match="101 simulations"):
        A.dp_abc(rel, n_accept=101, accept_rate=1.0, progress=False)


def test_dp_abc_refuses_a_non_release():
    with pytest.raises(TypeError, match="Release"):
        A.dp_abc({"s_L": [-1.0, -1.0]})


def test_eps_1e10_stays_finite_and_is_near_the_truth():
    rel, X = _release(n=500, eps=1e10, a=1e-6)
    assert rel.scale < 1e-10
    res = A.dp_abc(rel, n_accept=200, accept_rate=0.02, rng=11, adjust="loclinear", **QUICK)
    m = res.posterior["mean_composition"].values[0]
    assert np.all(np.isfinite(res.posterior["alpha"].values)) and np.isfinite(res.posterior.attrs["tolerance"])
    assert np.all(np.abs(m.mean(0) - np.array([2.2, 3.3, 4.4]) / 9.9) < 0.03)


@pytest.mark.slow
def test_small_rate_approaches_the_non_private_posterior():
    """eps = 1e10, an informative prior: the ABC error of mean and sd shrinks with the rate (notebook 22, sec. 6)."""
    from dplit.mcmc import mcmc

    rel, X = _release(n=600, eps=1e10, a=1e-6, seed=12)
    prior = GammaPrior([40.0, 60.0, 80.0], [18.0, 18.0, 18.0], name="informative")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = mcmc(sufficient_stat(X), 600, prior=prior, n_iter=8000, n_warmup=1000, n_chains=2, rng=13,
                   progress=False)
    ra = ref.posterior["alpha"].values.reshape(-1, 3)
    errs = {}
    for rate in (0.2, 0.01, 0.002):
        for adjust in (None, "loclinear"):
            d = A.dp_abc(rel, prior=prior, n_accept=400, accept_rate=rate, rng=14, adjust=adjust,
                         **QUICK).posterior["alpha"].values[0]
            errs[rate, adjust] = (np.max(np.abs(d.mean(0) - ra.mean(0)) / ra.std(0)),
                                  np.max(np.abs(np.log(d.std(0) / ra.std(0)))))
    print(errs)
    assert errs[0.002, None][0] < errs[0.2, None][0] and errs[0.002, None][1] < errs[0.2, None][1]
    assert errs[0.002, None][0] < 0.3 and errs[0.002, None][1] < 0.3
    assert all(e[0] < 0.4 and e[1] < 0.2 for k, e in errs.items() if k[1] == "loclinear")


@pytest.mark.slow
def test_dpabc_p4_lies_within_dpmcmc_p1_at_eps_1():
    """Dirichlet(2.2, 3.3, 4.4), n = 1000, eps = 1 (split): DPABC_p4's E[x] is within 2 sd of DPMCMC_p1's."""
    from dplit.mcmc import dp_mcmc
    from dplit.release import release

    X = dirichlet_draws([2.2, 3.3, 4.4], 1000, rng=15)
    rel = release(X, eps1=0.75, eps2=0.25, candidates=[1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6], tc=0.01, n1=250, rng=16, secure=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mc = dp_mcmc(rel, n_iter=10_000, n_warmup=2000, n_chains=2, thin=10, rng=17, progress=False)
    ab = A.dp_abc(rel, prior="p4", n_accept=1000, accept_rate=0.1, rng=18, **QUICK)
    m_mc = mc.posterior["mean_composition"].values.reshape(-1, 3)
    m_ab = ab.posterior["mean_composition"].values.reshape(-1, 3)
    assert np.all(np.abs(m_ab.mean(0) - m_mc.mean(0)) < 2 * m_mc.std(0))
