"""dplit.mechanisms: samplers against their laws, secure vs fast paths, bad input, the audit."""

import math

import numpy as np
import pytest
from scipy import stats

from dplit import mechanisms as M
from dplit.testing import chisq_gof, chisq_homogeneity, py_func


# ---------------------------------------------------------------- Laplace
def test_laplace_logpdf_matches_scipy():
    x = np.linspace(-10, 10, 101)
    np.testing.assert_allclose(M.laplace_logpdf(x, 0.5, 1.7), stats.laplace.logpdf(x, 0.5, 1.7))


@pytest.mark.parametrize("sens, eps", [(1.0, 1.0), (2.0, 0.3)])
def test_laplace_mechanism_law(sens, eps):
    y = M.laplace_mechanism(np.full(50_000, 4.0), sens, eps, rng=11, secure=False) - 4.0
    assert stats.kstest(y, stats.laplace(0, sens / eps).cdf).pvalue > 1e-3
    # a wrong scale (10% off) must be detected
    assert stats.kstest(y, stats.laplace(0, 1.1 * sens / eps).cdf).pvalue < 1e-4


def test_laplace_mechanism_shape_and_seed():
    v = np.arange(6.0).reshape(2, 3)
    out = M.laplace_mechanism(v, 1.0, 1.0, rng=3, secure=False)
    assert out.shape == (2, 3) and out.dtype == float
    np.testing.assert_array_equal(out, M.laplace_mechanism(v, 1.0, 1.0, rng=np.random.default_rng(3), secure=False))


def test_laplace_secure_path_same_law():
    fast = M.laplace_mechanism(np.full(20_000, 1.0), 1.0, 0.5, rng=5, secure=False)
    secure = M.laplace_mechanism(np.full(20_000, 1.0), 1.0, 0.5, secure=True)
    assert secure.shape == fast.shape
    # the OpenDP draws cannot be seeded: p > 1e-6 fails by chance once in a million runs, and the
    # wrong-epsilon variant below sits near p = 1e-15
    assert stats.ks_2samp(fast, secure).pvalue > 1e-6
    # and the test has power: a different epsilon is told apart
    other = M.laplace_mechanism(np.full(20_000, 1.0), 1.0, 0.4, rng=6, secure=False)
    assert stats.ks_2samp(other, secure).pvalue < 1e-9


@pytest.mark.parametrize("kwargs, word", [
    (dict(sensitivity=1.0, eps=0.0), r"\beps\b"),
    (dict(sensitivity=1.0, eps=-2.0), r"\beps\b"),
    (dict(sensitivity=0.0, eps=1.0), "sensitivity"),
    (dict(sensitivity=math.nan, eps=1.0), "sensitivity"),
])
def test_laplace_bad_input(kwargs, word):
    with pytest.raises(ValueError, match=word):
        M.laplace_mechanism([1.0], **kwargs)


@pytest.mark.parametrize("call, word", [
    (lambda: M.laplace_mechanism([1.0], 1e300, 1e-300, rng=0, secure=False), "sensitivity / eps "),  # scale overflows
    (lambda: M.geometric_mechanism([1, 2], 1.0, 1e-20, rng=0, secure=False), "eps / sensitivity"),  # t rounds to 1
    (lambda: M.geometric_mechanism([1, 2], 1.0, 1e-20, secure=True), "eps / sensitivity"),
    (lambda: M.sample_discrete_gaussian(1e-200, 3, rng=0, secure=False), "sigma"),                      # sigma**2 underflows
])
def test_extreme_parameters_raise_naming_them(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_laplace_rejects_nonfinite_value():
    with pytest.raises(ValueError, match="value"):
        M.laplace_mechanism([1.0, np.nan], 1.0, 1.0)


# ---------------------------------------------------------------- two-sided geometric
@pytest.mark.parametrize("t", [0.1, math.exp(-0.5), 0.97])
def test_two_sided_geometric_sampler_law(t):
    g = M.sample_two_sided_geometric(t, 60_000, rng=21)
    assert g.dtype == np.int64
    assert chisq_gof(g, lambda k: M.two_sided_geometric_logpmf(k, t)) > 1e-3
    wrong = t**0.9  # the rate -log(t) 10% off
    assert chisq_gof(g, lambda k: M.two_sided_geometric_logpmf(k, wrong)) < 1e-4


def test_two_sided_geometric_pmf_sums_to_one():
    k = np.arange(-2000, 2001)
    assert math.isclose(np.exp(M.two_sided_geometric_logpmf(k, 0.9)).sum(), 1.0, rel_tol=1e-12)


def test_two_sided_geometric_kernel_matches_reference():
    t = 0.6
    a = M._two_sided_geometric_kernel(t, 500, np.random.default_rng(9))
    b = py_func(M._two_sided_geometric_kernel)(t, 500, np.random.default_rng(9))
    np.testing.assert_array_equal(a, b)


def test_geometric_mechanism_parameter_and_paths():
    counts = np.full(30_000, 10)
    fast = M.geometric_mechanism(counts, 2, 1.0, rng=4, secure=False)
    t = math.exp(-1.0 / 2)
    assert chisq_gof(fast - 10, lambda k: M.two_sided_geometric_logpmf(k, t)) > 1e-3
    secure = M.geometric_mechanism(counts, 2, 1.0, secure=True)
    assert secure.dtype == np.int64 and secure.shape == counts.shape
    assert chisq_homogeneity(fast, secure) > 1e-6  # unseeded OpenDP draws: see the Laplace test
    assert chisq_homogeneity(M.geometric_mechanism(counts, 2, 0.8, rng=5, secure=False), secure) < 1e-9


def test_geometric_mechanism_accepts_integer_valued_floats():
    out = M.geometric_mechanism(np.array([[1.0, 2.0]]), 1, 1, rng=0, secure=False)
    assert out.dtype == np.int64 and out.shape == (1, 2)


@pytest.mark.parametrize("call, word", [
    (lambda: M.geometric_mechanism([1.5, 2], 1, 1), "counts"),
    (lambda: M.geometric_mechanism([1, 2], 1, 0), r"\beps\b"),
    (lambda: M.geometric_mechanism([1, 2], 0, 1), "sensitivity"),
    (lambda: M.sample_two_sided_geometric(1.0, 3), "t"),
    (lambda: M.sample_two_sided_geometric(-0.1, 3), "t"),
    (lambda: M.sample_two_sided_geometric(0.5, -3), "size"),
])
def test_geometric_bad_input(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_geometric_rejects_non_numeric_counts():
    with pytest.raises(TypeError, match="counts"):
        M.geometric_mechanism(["a"], 1, 1)
    with pytest.raises(TypeError, match="counts"):
        M.geometric_mechanism([1 + 0j, 2], 1, 1)


@pytest.mark.parametrize("counts", [np.array([1e20]), np.array([2**63 + 5], dtype=np.uint64), [-(2**62) - 1]])
def test_geometric_rejects_counts_beyond_int64(counts):
    """Counts that int64 cannot hold (or that the noise could push over) raise, not wrap or clip."""
    with pytest.raises(ValueError, match="counts"):
        M.geometric_mechanism(counts, 1, 1, rng=0, secure=False)
    assert M.geometric_mechanism([2**62], 1, 50, rng=0, secure=False)[0] > 2**61  # the limit itself is accepted


# ---------------------------------------------------------------- audit
@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_audit_laplace_correct_and_half_noise(eps):
    rng = np.random.default_rng(100 + int(10 * eps))
    n = 200_000
    ok = M.audit_epsilon(M.laplace_mechanism(np.zeros(n), 1.0, eps, rng=rng, secure=False),
                         M.laplace_mechanism(np.ones(n), 1.0, eps, rng=rng, secure=False))
    bug = M.audit_epsilon(M.laplace_mechanism(np.zeros(n), 1.0, 2 * eps, rng=rng, secure=False),
                          M.laplace_mechanism(np.ones(n), 1.0, 2 * eps, rng=rng, secure=False))
    assert ok.eps_lower <= eps
    assert ok.eps_lower > 0.8 * eps  # and the audit is not vacuous
    assert bug.eps_lower > eps
    assert bug.eps_lower > 1.7 * eps and bug.eps_lower <= 2 * eps


def test_audit_geometric_correct_and_half_noise():
    rng = np.random.default_rng(7)
    n, eps = 200_000, 1.0
    za, zb = np.zeros(n, dtype=int), np.full(n, 2)
    ok = M.audit_epsilon(M.geometric_mechanism(za, 2, eps, rng=rng, secure=False), M.geometric_mechanism(zb, 2, eps, rng=rng, secure=False))
    bug = M.audit_epsilon(M.geometric_mechanism(za, 1, eps, rng=rng, secure=False), M.geometric_mechanism(zb, 1, eps, rng=rng, secure=False))
    assert 0.8 * eps < ok.eps_lower <= eps
    assert 1.7 * eps < bug.eps_lower <= 2 * eps


def test_audit_coverage_over_many_repetitions():
    """The bound exceeds the true epsilon in at most ~5% of independent audits."""
    rng = np.random.default_rng(2024)
    eps, n, reps = 1.0, 4000, 300
    over = 0
    for _ in range(reps):
        a = rng.laplace(0.0, 1.0 / eps, n)
        b = rng.laplace(1.0, 1.0 / eps, n)
        over += M.audit_epsilon(a, b, rng=rng).eps_lower > eps
    # binomial(300, 0.05): mean 15; P(X > 30) < 1e-4
    assert over <= 30


def test_audit_identical_laws_gives_small_bound():
    rng = np.random.default_rng(8)
    res = M.audit_epsilon(rng.normal(size=100_000), rng.normal(size=100_000))
    assert res.eps_lower < 0.05
    assert isinstance(res, M.AuditResult) and res.n_a == 100_000


def test_audit_finds_disjoint_supports_large():
    rng = np.random.default_rng(1)
    res = M.audit_epsilon(rng.uniform(0, 1, 10_000), rng.uniform(2, 3, 10_000))
    assert res.eps_lower > 5


def test_audit_bad_input():
    with pytest.raises(ValueError, match="sample_a"):
        M.audit_epsilon(np.zeros((10, 2)), np.zeros(100))
    with pytest.raises(ValueError, match="sample_b"):
        M.audit_epsilon(np.zeros(100), np.zeros(5))
    with pytest.raises(ValueError, match="confidence"):
        M.audit_epsilon(np.zeros(100), np.zeros(100), confidence=1.5)
    with pytest.raises(ValueError, match="sample_a"):
        M.audit_epsilon(np.array([np.nan] * 30), np.zeros(100))


# ---------------------------------------------------------------- discrete Gaussian
@pytest.mark.parametrize("sigma", [0.4, 1.0, 2.5, 6.32])
def test_discrete_gaussian_sampler_law(sigma):
    x = M.sample_discrete_gaussian(sigma, 60_000, rng=31, secure=False)
    assert x.dtype == np.int64
    assert chisq_gof(x, lambda k: M.discrete_gaussian_logpmf(k, sigma)) > 1e-3
    assert chisq_gof(x, lambda k: M.discrete_gaussian_logpmf(k, 1.04 * sigma)) < 1e-4


def test_discrete_gaussian_kernel_matches_reference():
    for sigma in [0.5, 3.3]:
        a = M._discrete_gaussian_kernel(sigma, 300, np.random.default_rng(2))
        b = M._discrete_gaussian_reference(sigma, 300, np.random.default_rng(2))
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("sigma", [0.2, 0.999, 1.0, 3.0, 50.0])
def test_discrete_gaussian_normaliser(sigma):
    j = np.arange(-5000, 5001)
    p = np.exp(M.discrete_gaussian_logpmf(j, sigma))
    assert math.isclose(p.sum(), 1.0, rel_tol=1e-13)
    np.testing.assert_allclose(M.discrete_gaussian_logpmf(j[:10], sigma, normalize=False),
                               -(j[:10] ** 2) / (2 * sigma**2))


def test_discrete_gaussian_logpmf_non_integer_and_mu():
    assert M.discrete_gaussian_logpmf(0.5, 2.0) == -np.inf
    assert M.discrete_gaussian_logpmf(3, 2.0, mu=3) == M.discrete_gaussian_logpmf(0, 2.0)
    with pytest.raises(ValueError, match="mu"):
        M.discrete_gaussian_logpmf(0, 2.0, mu=0.5)
    with pytest.raises(TypeError, match="mu"):
        M.discrete_gaussian_logpmf(0, 2.0, mu="3")


def test_discrete_gaussian_secure_same_law():
    fast = M.sample_discrete_gaussian(4.0, 20_000, rng=12, secure=False)
    secure = M.sample_discrete_gaussian(4.0, 20_000, secure=True)
    assert chisq_homogeneity(fast, secure) > 1e-6  # unseeded OpenDP draws: see the Laplace test
    assert chisq_homogeneity(M.sample_discrete_gaussian(4.6, 20_000, rng=13, secure=False), secure) < 1e-9


@pytest.mark.parametrize("sigma", [0.0, -1.0, math.inf])
def test_discrete_gaussian_bad_sigma(sigma):
    with pytest.raises(ValueError, match="sigma"):
        M.sample_discrete_gaussian(sigma, 10)
    with pytest.raises(ValueError, match="sigma"):
        M.discrete_gaussian_logpmf(0, sigma)


def test_seed_reproducibility_of_integer_samplers():
    for f in [lambda r: M.sample_two_sided_geometric(0.5, 50, rng=r),
              lambda r: M.sample_discrete_gaussian(2.0, 50, rng=r, secure=False),
              lambda r: M.randomized_response(np.ones(50, dtype=int), rng=r)]:
        np.testing.assert_array_equal(f(17), f(np.random.default_rng(17)))


# ---------------------------------------------------------------- randomized response
def test_randomized_response_rates_and_epsilon():
    n = 100_000
    r1 = M.randomized_response(np.ones(n, dtype=int), rng=1)
    r0 = M.randomized_response(np.zeros(n, dtype=bool), rng=2)
    assert stats.binomtest(int(r1.sum()), n, 0.75).pvalue > 1e-3
    assert stats.binomtest(int(r0.sum()), n, 0.25).pvalue > 1e-3
    assert stats.binomtest(int(r1.sum()), n, 0.735).pvalue < 1e-4
    assert math.isclose(M.randomized_response_epsilon(), math.log(3))
    assert math.isclose(M.randomized_response_epsilon(0.8), math.log(9))
    res = M.audit_epsilon(r1, r0)
    assert 0.9 * math.log(3) < res.eps_lower <= math.log(3)


def test_randomized_response_p_keep():
    r = M.randomized_response(np.ones(50_000, dtype=int), p_keep=0.8, rng=3)
    assert stats.binomtest(int(r.sum()), r.size, 0.9).pvalue > 1e-3
    np.testing.assert_allclose(np.exp(M.randomized_response_logpmf([1, 0], [1, 1], 0.8)), [0.9, 0.1])


def test_randomized_response_bad_input():
    with pytest.raises(ValueError, match="x"):
        M.randomized_response([0, 1, 2])
    with pytest.raises(ValueError, match="^y must"):
        M.randomized_response_logpmf([0, 2], [0, 1])
    with pytest.raises(ValueError, match="^x must"):
        M.randomized_response_logpmf([0, 1], [0, 2])
    with pytest.raises(ValueError, match="p_keep"):
        M.randomized_response([0, 1], p_keep=1.0)
    with pytest.raises(ValueError, match="p_keep"):
        M.randomized_response_epsilon(-0.1)


def test_scalar_arguments_types():
    out = M.laplace_mechanism(1.0, np.array(1.0), np.float32(0.5), rng=0, secure=False)
    assert out.shape == ()
    with pytest.raises(TypeError, match=r"\beps\b"):
        M.laplace_mechanism([1.0], 1.0, "1")
    with pytest.raises(TypeError, match="sensitivity"):
        M.geometric_mechanism([1], True, 1.0)


class _Rejected(Exception):
    """The kernel rejected its scripted proposal and asked for another."""


class _ScriptedRng:
    """Stands in for the Generator of the kernel's plain-Python body (``py_func``): its two exponentials
    make the proposal ``y`` (``floor(E t) = g`` for ``E = (g + 1/2) / t``) and its uniform is ``u``; a second
    proposal (the kernel rejected ``y``) raises ``_Rejected``."""

    def __init__(self, t, y, u):
        g1, g2 = (y, 0) if y >= 0 else (0, -y)
        self._exponentials = [(g1 + 0.5) / t, (g2 + 0.5) / t]
        self._u = u

    def standard_exponential(self):
        if not self._exponentials:
            raise _Rejected
        return self._exponentials.pop(0)

    def random(self):
        return self._u


def _kernel_accepts(sigma, y, u):
    """Whether the discrete Gaussian kernel itself keeps the proposal ``y`` when its uniform draw is ``u``."""
    kernel = py_func(M._discrete_gaussian_kernel)
    try:
        out = kernel(sigma, 1, _ScriptedRng(math.floor(sigma) + 1.0, y, u))
    except _Rejected:
        return False
    assert out[0] == y
    return True


def _kernel_acceptance(sigma, y):
    """The float ``p`` the kernel compares its uniform with (it keeps ``y`` iff ``u < p``), found by bisecting
    the bit patterns of the doubles in [0, 1]: the smallest uniform it rejects."""
    if not _kernel_accepts(sigma, y, 0.0):
        return 0.0
    lo, hi = 0, int(np.float64(1.0).view(np.int64))     # the kernel accepts at lo and rejects at hi
    assert not _kernel_accepts(sigma, y, 1.0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _kernel_accepts(sigma, y, float(np.int64(mid).view(np.float64))):
            lo = mid
        else:
            hi = mid
    return float(np.int64(hi).view(np.float64))


def _float_acceptance_error(sigma, ys):
    """Largest relative error of the kernel's float acceptance probability over the proposals ``ys``, against
    ``exp(-(|y| - sigma^2 / t)^2 / (2 sigma^2))`` (CKS 2020, Algorithm 3, ``t = floor(sigma) + 1``) in 40 digits."""
    import decimal
    ctx = decimal.Context(prec=40)
    S2 = ctx.multiply(decimal.Decimal(sigma), decimal.Decimal(sigma))
    T = decimal.Decimal(math.floor(sigma) + 1)
    worst = 0.0
    for y in ys:
        D = ctx.subtract(decimal.Decimal(abs(y)), ctx.divide(S2, T))
        exact = ctx.exp(ctx.divide(-ctx.multiply(D, D), 2 * S2))
        fast = _kernel_acceptance(sigma, y)
        worst = max(worst, abs(float(ctx.divide(decimal.Decimal(fast), exact)) - 1.0))
    return worst


@pytest.mark.parametrize("sigma", [0.6, 1.7, 6.32, 100.3])
def test_discrete_gaussian_fast_path_is_close_not_exact(sigma):
    # the fast path runs CKS Algorithm 3 in floating point: its acceptance probabilities differ from
    # the exact ones by rounding (nonzero, so "exact" would be false) of order 1e-14 at most. The
    # probabilities are read off the kernel itself (its plain-Python body driven by scripted draws), and
    # the compiled kernel is the same code: it makes the same choices on the same stream of draws.
    y_max = int(20 * sigma)
    err = _float_acceptance_error(sigma, list(range(-3, y_max + 1)))
    assert 0.0 < err < 1e-12
    compiled = M._discrete_gaussian_kernel(sigma, 2000, np.random.default_rng(5))
    np.testing.assert_array_equal(compiled, py_func(M._discrete_gaussian_kernel)(sigma, 2000, np.random.default_rng(5)))
    # and the documentation says so: only the secure (OpenDP) path is called exact
    doc = M.sample_discrete_gaussian.__doc__
    assert not doc.lstrip().lower().startswith("exact")
    assert "not exactly" in doc and "``secure=True`` is the exact sampler" in doc
    assert "not exact" in py_func(M._discrete_gaussian_kernel).__doc__
