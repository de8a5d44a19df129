"""Tests of dplit.bootstrap: the truncated-noise step, Boots, DPBoots, intervals and the two-sample test."""

import warnings

import numpy as np
import pytest
from scipy import stats

from dplit._truncated_noise import feasible_start as _feasible_start
from dplit._truncated_noise import gibbs_kernel as _gibbs_kernel
from dplit._truncated_noise import gibbs_reference as _gibbs_reference
from dplit._truncated_noise import rejection_reference as _rejection_reference
from dplit._truncated_noise import trunc_laplace_upper_kernel as _trunc_laplace_upper_kernel
from dplit.bootstrap import (
    BootResult,
    TwoSampleTest,
    _boots_kernel,
    _boots_reference,
    _rejection_kernel,
    boots,
    dp_boots,
    truncated_statistic,
    two_sample_test,
)
from dplit.dirichlet import dirichlet_draws, logx_mean
from dplit.release import Release, release
from dplit.results import draws

ALPHA = np.array([2.2, 3.3, 4.4])
CANDS = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1]
S_EDGE = np.log(np.array([0.22, 0.25, 0.27, 0.15, 0.14]))  # sum(exp) = 1.03, just outside the range


def min_ks(x, y):
    """Smallest two-sample KS p-value over the columns and the sum of exp."""
    cols = [(x[:, j], y[:, j]) for j in range(x.shape[1])]
    cols.append((np.exp(x).sum(axis=1), np.exp(y).sum(axis=1)))
    return min(stats.ks_2samp(a, b).pvalue for a, b in cols)


# ---------------------------------------------------------------- the truncated-noise step
@pytest.mark.parametrize("upper", [0.7, -0.4, -30.0])
def test_truncated_laplace_draw_has_the_truncated_law(upper):
    g = np.random.default_rng(1)
    x = np.array([_trunc_laplace_upper_kernel(0.0, 0.5, upper, g) for _ in range(5000)])
    assert x.max() < upper
    cdf = lambda v: np.minimum(stats.laplace.cdf(v, 0, 0.5) / stats.laplace.cdf(upper, 0, 0.5), 1)  # noqa: E731
    assert stats.kstest(x, cdf).pvalue > 1e-3
    assert stats.kstest(x, lambda v: stats.laplace.cdf(v - (upper - 0.3), 0, 0.5)).pvalue < 1e-6  # wrong law


def test_kernels_match_their_reference_twins():
    s = np.log(np.array([0.3, 0.3, 0.45]))
    a = _rejection_kernel(s, 0.05, 100, 10**6, np.random.default_rng(3))
    b = _rejection_reference(s, 0.05, 100, 10**6, np.random.default_rng(3))
    assert a[1] == b[1] and np.allclose(a[0], b[0], atol=1e-12)
    start = _feasible_start(s)
    g1 = _gibbs_kernel(s, 0.05, start, 100, 5, 3, np.random.default_rng(4))
    g2 = _gibbs_reference(s, 0.05, start, 100, 5, 3, np.random.default_rng(4))
    assert np.allclose(g1[0], g2[0], atol=1e-12)


def test_feasible_start_is_the_water_filling_mode():
    s = np.array([-0.9, -1.0, -1.1, -1.5])
    start = _feasible_start(s)
    assert np.exp(start).sum() < 1 and np.exp(start).sum() > 1 - 1e-8
    assert np.allclose(start[:3], start[0]) and start[3] == s[3]  # top three lowered to a common level
    inside = np.array([-1.2, -1.2, -1.2])
    assert np.array_equal(_feasible_start(inside), inside)


@pytest.mark.parametrize("m, expected", [(0.05, "rejection"), (0.015, "gibbs")])
def test_rejection_and_gibbs_have_the_same_law(m, expected):
    rej = truncated_statistic(S_EDGE, m, 4000, rng=1, method="rejection")
    gib = truncated_statistic(S_EDGE, m, 4000, rng=2, method="gibbs")
    auto, info = truncated_statistic(S_EDGE, m, 4000, rng=3, return_info=True)
    assert info["method"] == expected
    assert min_ks(rej, gib) > 1e-3 and min_ks(rej, auto) > 1e-3
    assert np.all(np.exp(gib).sum(axis=1) < 1)
    untruncated = S_EDGE - np.random.default_rng(4).laplace(0, m, size=(4000, 5))
    assert min_ks(rej, untruncated) < 1e-6


def test_gibbs_is_exact_where_rejection_is_hopeless():
    # all coordinates pushed outside: exact check by rejection from Dirichlet(1/m, ..., 1/m, 1)
    d, m = 4, 0.004
    s = np.full(d, -np.log(d) + 0.08)
    draws, info = truncated_statistic(s, m, 3000, rng=5, return_info=True)
    assert info["method"] == "gibbs" and info["acceptance_rate"] == 0.0
    g = np.random.default_rng(6)
    y = g.dirichlet(np.r_[np.full(d, 1 / m), 1.0], size=20000)[:, :d]
    keep = np.log(g.random(len(y))) < (2 / m) * np.minimum(0, s - np.log(y)).sum(axis=1)
    exact = np.log(y[keep])[:3000]
    assert len(exact) == 3000
    assert min_ks(draws, exact) > 1e-3
    # the same chain without burn-in and thinning is not the law
    lazy, _ = _gibbs_kernel(s, m, _feasible_start(s), 3000, 0, 1, np.random.default_rng(7))
    assert min_ks(lazy, exact) < 1e-6


def test_s5_case_finishes_with_gibbs():
    g = np.random.default_rng(8)
    X = g.dirichlet([2.0, 20.0, 2.0], 5000)
    m = -3 * np.log(0.1) / (5000 * 0.75 * 1.5)
    s_L = np.log(np.maximum(X, 0.1)).mean(axis=0) + g.laplace(0, m, 3)
    kept, tries = _rejection_kernel(s_L, m, 10, 200_000, g)
    assert len(kept) == 0 and tries == 200_000
    draws, info = truncated_statistic(s_L, m, 500, rng=g, return_info=True)
    assert info["method"] == "gibbs" and draws.shape == (500, 3)
    assert np.all(np.exp(draws).sum(axis=1) < 1)


def test_truncated_statistic_is_reproducible_and_checks_input():
    a = truncated_statistic(S_EDGE, 0.015, 50, rng=11)
    b = truncated_statistic(S_EDGE, 0.015, 50, rng=11)
    assert np.array_equal(a, b)
    with pytest.raises(ValueError, match="method"):
        truncated_statistic(S_EDGE, 0.1, 5, method="slice")
    with pytest.raises(ValueError, match="scale"):
        truncated_statistic(S_EDGE, -1.0, 5)
    with pytest.raises(ValueError, match="s_L"):
        truncated_statistic([np.nan, -1.0], 0.1, 5)
    with pytest.raises(TypeError, match="size"):
        truncated_statistic(S_EDGE, 0.1, 2.5)


# ---------------------------------------------------------------- the bootstrap loop
def test_boots_kernel_matches_reference():
    tilde = truncated_statistic(np.array([-1.6, -1.2, -0.9]), 0.01, 10, rng=1)
    k = _boots_kernel(tilde, 300, 1e-3, 0, 5, 1e-10, 100, False, np.random.default_rng(9))
    r = _boots_reference(tilde, 300, 1e-3, 0, 5, 1e-10, 100, np.random.default_rng(9))
    assert np.array_equal(k[1], r[1]) and k[2] == r[2] and np.allclose(k[0], r[0], rtol=1e-7)


def test_out_of_range_policies_are_counted():
    s_heavy = np.log(np.maximum(np.random.default_rng(2).dirichlet([2.0, 20.0, 2.0], 5000), 0.1)).mean(axis=0)
    tilde = truncated_statistic(s_heavy, 1e-3, 20, rng=2)
    counts = {}
    for policy, name in enumerate(("redraw", "nan", "uncensored")):
        al, per_rep, n_fail = _boots_kernel(tilde, 5000, 0.1, policy, 3, 1e-10, 100, True, np.random.default_rng(3))
        counts[name] = (per_rep.sum(), n_fail)
        assert np.all(per_rep <= (4 if name == "redraw" else 1))
        assert np.isnan(al).any(axis=1).sum() == n_fail
    assert counts["nan"][0] == counts["nan"][1] > 0
    assert counts["uncensored"][1] == 0
    assert counts["redraw"][1] <= counts["nan"][1] and counts["redraw"][0] >= 4 * counts["redraw"][1]


def test_boots_centres_on_the_mle_with_the_asymptotic_variance():
    from dplit.dirichlet import fisher_information

    res = BootResult.of(boots(logx_mean(ALPHA), n_boot=800, n=4000, rng=3))
    cov = np.linalg.inv(fisher_information(ALPHA)) / 4000
    ratio = np.diag(np.cov(res.alpha.T)) / np.diag(cov)
    assert np.all(np.abs(ratio - 1) < 0.2)
    assert np.all(np.abs(res.alpha.mean(axis=0) - ALPHA) < 5 * np.sqrt(np.diag(cov) / 800) + 0.01 * ALPHA)
    wrong = BootResult.of(boots(logx_mean(ALPHA), n_boot=800, n=2000, rng=3))
    assert np.all(np.diag(np.cov(wrong.alpha.T)) / np.diag(cov) > 1.5)


def test_dp_boots_with_huge_epsilon_matches_boots():
    g = np.random.default_rng(4)
    X = dirichlet_draws(ALPHA, 3000, rng=g)
    rel = release(X, eps1=0.75e10, eps2=0.25e10, candidates=CANDS, tc=0.01, rng=g, secure=False)
    dp = BootResult.of(dp_boots(rel, n_boot=600, rng=5))
    same = BootResult.of(boots(X, n_boot=600, a=rel.a, rng=6))
    wrong = BootResult.of(boots(X, n_boot=600, n=750, a=rel.a, rng=7))
    p_same = min(stats.ks_2samp(dp.alpha[:, j], same.alpha[:, j]).pvalue for j in range(3))
    p_wrong = min(stats.ks_2samp(dp.alpha[:, j], wrong.alpha[:, j]).pvalue for j in range(3))
    assert p_same > 1e-3 and p_wrong < 1e-6


def test_intervals_cover_near_nominal_at_eps_1_reduced_size():
    g = np.random.default_rng(10)
    n_rep, hits = 40, np.zeros(3)
    truth = ALPHA / ALPHA.sum()
    for _ in range(n_rep):
        X = dirichlet_draws(ALPHA, 5000, rng=g)
        rel = release(X, eps1=0.75, eps2=0.25, candidates=CANDS, tc=0.01, rng=g, secure=False)
        lo_hi = BootResult.of(dp_boots(rel, n_boot=150, rng=g)).interval(0.95)
        hits += (lo_hi[:, 0] <= truth) & (truth <= lo_hi[:, 1])
    assert all(stats.binomtest(int(h), n_rep, 0.95).pvalue > 1e-3 for h in hits)
    # too-narrow intervals (level 0.5) must be caught by the same check
    narrow = 0
    for _ in range(n_rep):
        X = dirichlet_draws(ALPHA, 5000, rng=g)
        rel = release(X, eps1=0.75, eps2=0.25, candidates=CANDS, tc=0.01, rng=g, secure=False)
        lo_hi = BootResult.of(dp_boots(rel, n_boot=150, rng=g)).interval(0.5)
        narrow += int((lo_hi[0, 0] <= truth[0]) & (truth[0] <= lo_hi[0, 1]))
    assert stats.binomtest(narrow, n_rep, 0.95).pvalue < 1e-3


def test_dp_boots_on_parts_of_a_split_release_and_reproducibility():
    g = np.random.default_rng(12)
    rel = release(dirichlet_draws(ALPHA, 4000, rng=g), eps1=0.75, eps2=0.25, candidates=CANDS, tc=0.01, n1=1000, rng=g, secure=False)
    r1 = BootResult.of(dp_boots(rel, n_boot=50, part="D1", rng=1))
    r2 = BootResult.of(dp_boots(rel, n_boot=50, part="D2", rng=1))
    assert r1.n == 1000 and r2.n == 3000
    assert np.array_equal(r1.alpha, BootResult.of(dp_boots(rel, n_boot=50, part="D1", rng=1)).alpha)
    assert np.std(r1.mean_composition[:, 0]) > np.std(r2.mean_composition[:, 0])
    with pytest.raises(ValueError):
        BootResult.of(dp_boots(rel, n_boot=10, part="D"))
    with pytest.raises(TypeError, match="release"):
        BootResult.of(dp_boots({"s_L": [0, 0]}, n_boot=10))
    with pytest.raises(ValueError, match="out_of_range"):
        BootResult.of(dp_boots(rel, n_boot=10, out_of_range="clip"))
    with pytest.raises(ValueError, match="part must be"):
        BootResult.of(dp_boots(rel, n_boot=10, part="D3"))
    with pytest.raises(ValueError, match="tol"):
        BootResult.of(dp_boots(rel, n_boot=10, tol=-1e-10))
    with pytest.raises(TypeError, match="max_iter"):
        BootResult.of(dp_boots(rel, n_boot=10, max_iter=2.5))
    with pytest.raises(ValueError, match="min_acceptance"):
        BootResult.of(dp_boots(rel, n_boot=10, min_acceptance=5.0))


def test_bootresult_interval_and_summary():
    res = BootResult.of(boots(logx_mean(ALPHA), n_boot=200, n=1000, rng=1))
    assert isinstance(res, BootResult) and res.method == "boots" and res.n_failed == 0
    iv = res.interval(0.9, of="alpha")
    assert iv.shape == (3, 2) and np.all(iv[:, 0] < ALPHA) and np.all(ALPHA < iv[:, 1])
    assert np.allclose(res.mean_composition.sum(axis=1), 1)
    assert "boots bootstrap" in res.summary()
    with pytest.raises(ValueError, match="level"):
        res.interval(1.5)
    with pytest.raises(ValueError, match="of"):
        res.interval(0.9, of="median")


def test_too_few_replicates_for_the_interval_refuse_or_warn():
    from dplit.bootstrap import min_replicates

    rel = Release.from_statistic(logx_mean(ALPHA), 2000, 1e-3, 1.0)
    with pytest.raises(ValueError, match=r"95% interval needs at least 2 valid replicates, got 1; use n_boot >= 40"):
        BootResult.of(dp_boots(rel, n_boot=1, rng=1)).interval(0.95)                  # was a zero-width "95%" interval
    few = BootResult.of(dp_boots(rel, n_boot=10, rng=1))
    with pytest.warns(UserWarning, match=r"only 10 valid replicates for a 95% .*n_boot >= 40"):
        few.interval(0.95)
    with pytest.warns(UserWarning, match="only 10 pairs of valid replicates"):
        two_sample_test(few, few)
    with pytest.raises(ValueError, match="at least 2 pairs"):
        two_sample_test(few, BootResult.of(dp_boots(rel, n_boot=1, rng=2)))
    assert [min_replicates(v) for v in (0.95, 0.9, 0.99, 0.5)] == [40, 20, 200, 4]
    enough = BootResult.of(dp_boots(rel, n_boot=40, rng=1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enough.interval(0.95)
        few.interval(0.5)                                        # 10 >= 4: silent


def test_boots_rejects_bad_input():
    with pytest.raises(ValueError, match="n is required"):
        BootResult.of(boots(logx_mean(ALPHA), n_boot=10))
    with pytest.raises(ValueError, match="outside Range"):
        BootResult.of(boots(np.log([0.6, 0.6]), n_boot=10, n=100))
    with pytest.raises(ValueError, match="a must"):
        BootResult.of(boots(logx_mean(ALPHA), n_boot=10, n=100, a=2.0))
    with pytest.raises(TypeError, match="a must"):
        BootResult.of(boots(logx_mean(ALPHA), n_boot=10, n=100, a="0.01"))
    with pytest.raises(ValueError, match="max_iter"):
        BootResult.of(boots(logx_mean(ALPHA), n_boot=10, n=100, max_iter=0))


def test_two_sample_test_detects_differences_and_respects_delta():
    a = BootResult.of(boots(logx_mean(ALPHA), n_boot=500, n=5000, rng=1))
    b = BootResult.of(boots(logx_mean(np.array([2.2, 3.3, 5.0])), n_boot=500, n=5000, rng=2))
    t = two_sample_test(a, b, delta=0.01)
    assert isinstance(t, TwoSampleTest) and t.n_pairs == 500
    assert t.reject[2] and np.all((t.p_value < 0.05) == t.reject)
    wide = two_sample_test(a, b, delta=0.2)
    assert not wide.reject.any()
    same = two_sample_test(a, a, delta=0.0)
    assert not same.reject.any()
    with pytest.raises(ValueError, match="delta"):
        two_sample_test(a, b, delta=-1)
    with pytest.raises(TypeError, match="result_b"):
        two_sample_test(a, "b")


def test_two_sample_test_size_under_the_null():
    # delta = 0 is the least favourable null; Boots draws of two samples of one population
    g = np.random.default_rng(13)
    rejections, reps = 0, 60
    for _ in range(reps):
        ra = BootResult.of(boots(dirichlet_draws(ALPHA, 1000, rng=g), n_boot=200, rng=g))
        rb = BootResult.of(boots(dirichlet_draws(ALPHA, 1000, rng=g), n_boot=200, rng=g))
        rejections += int(two_sample_test(ra, rb, delta=0.0).reject[0])
    assert stats.binomtest(rejections, reps, 0.05, alternative="greater").pvalue > 1e-3


def test_from_statistic_release_works():
    rel = Release.from_statistic(logx_mean(ALPHA), 2000, 1e-3, 1.0)
    res = BootResult.of(dp_boots(rel, n_boot=100, rng=1))
    assert res.alpha.shape == (100, 3) and res.n_failed == 0 and res.method in ("rejection", "gibbs", "rejection+gibbs")
    assert res.n_out_of_range == res.n_replicates_out_of_range == 0


def test_dp_boots_reports_out_of_range_replicates_in_the_s5_case():
    g = np.random.default_rng(14)
    X = g.dirichlet([2.0, 20.0, 2.0], 5000)
    s_L = np.log(np.maximum(X, 0.1)).mean(axis=0)
    rel = Release.from_statistic(s_L, 5000, 0.1, 1.0)
    with pytest.warns(RuntimeWarning, match="replicates failed"):
        res = BootResult.of(dp_boots(rel, n_boot=40, rng=15, max_redraw=2))
    assert res.method == "gibbs" and res.n_replicates_out_of_range > 0
    assert res.n_out_of_range >= res.n_replicates_out_of_range >= res.n_failed
    assert len(res.alpha) == 40 - res.n_failed and np.isfinite(res.alpha).all()   # failed ones left out
    with pytest.warns(RuntimeWarning, match="replicates failed"):
        nan_policy = BootResult.of(dp_boots(rel, n_boot=40, rng=15, out_of_range="nan"))
    assert nan_policy.n_failed == nan_policy.n_replicates_out_of_range == nan_policy.n_out_of_range


def test_first_user_slips_seed_keyword_and_failed_replicates():
    import warnings

    X = np.random.default_rng(0).dirichlet([2.0, 3.0, 4.0], size=1000)
    rel = release(X, eps1=0.75e10, eps2=0.25e10, candidates=[1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1], tc=0.01, rng=0, secure=False)
    with pytest.raises(TypeError, match=r"seed.*rng=seed"):
        BootResult.of(dp_boots(rel, n_boot=10, seed=1))
    with pytest.raises(TypeError, match="min_acceptance"):
        BootResult.of(dp_boots(rel, n_boot=10, n_pilots=5))
    with pytest.warns(RuntimeWarning, match="20 of 20 replicates failed"), \
            pytest.raises(ValueError, match="every bootstrap replicate failed"):
        dp_boots(rel, n_boot=20, rng=0, max_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert BootResult.of(dp_boots(rel, n_boot=20, rng=0)).n_failed == 0  # no warning when every replicate succeeds


def test_dp_boots_method_keyword_is_deprecated_for_truncation():
    """``method`` names the algorithm in every result; the noise sampler's option is ``truncation``."""
    rel = Release.from_statistic(np.log([0.2, 0.3, 0.4]) - 0.3, 500, 1e-3, 1.0)
    new = dp_boots(rel, n_boot=40, rng=3, truncation="rejection", progress=False)
    with pytest.warns(DeprecationWarning, match="truncation"):
        old = dp_boots(rel, n_boot=40, rng=3, method="rejection", progress=False)
    assert np.array_equal(draws(new, "alpha"), draws(old, "alpha"))
