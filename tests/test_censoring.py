"""dplit.censoring: censoring probabilities, bias and the S1 bounds (Guo et al., Supplement S1)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from dplit.censoring import (
    bias_bound,
    censored_logx_moments,
    censoring_bias,
    censoring_prob_bound,
    entry_censoring_prob,
    expected_censored_proportion,
    record_censoring_prob,
)

alphas = st.lists(st.floats(0.05, 60.0), min_size=2, max_size=5).map(np.array)
thresholds = st.floats(1e-7, 0.9)


@settings(max_examples=150, deadline=None, database=None, derandomize=True)
@given(alpha=alphas, a=thresholds)
def test_bernstein_bound_holds(alpha, a):
    assert np.all(entry_censoring_prob(alpha, a) <= censoring_prob_bound(alpha, a) + 1e-12)


@settings(max_examples=60, deadline=None, database=None, derandomize=True)
@given(alpha=alphas, a=st.floats(1e-6, 0.5))
def test_bias_is_positive_and_below_its_bounds(alpha, a):
    b = censoring_bias(alpha, a)
    exact, bern = bias_bound(alpha, a), bias_bound(alpha, a, tail="bernstein")
    assert np.all(b >= 0)
    assert np.all(b <= exact * (1 + 1e-8) + 1e-14) and np.all(exact <= bern * (1 + 1e-8) + 1e-14)
    assert np.all(np.isinf(exact[alpha <= 1]))


def test_printed_s1_constant_is_not_a_bound():
    """The wrong variant: S1's printed sign of c_j fails where the corrected bound holds."""
    aj, bj, a = 20.0, 4.0, 0.6
    s = aj + bj
    m, v, c = aj / s, aj * bj / (s**2 * (s + 1)), 2 * (s - 2 * aj) / (s * (s + 2))
    printed = np.exp(-((m - a) ** 2) / (2 * (v + c * (m - a) / 3)))
    truth = special.betainc(aj, bj, a)
    assert printed < truth <= censoring_prob_bound([2.0, 20.0, 2.0], a)[1]


def _series(p, q, a, n_terms=400):
    k = np.arange(n_terms)
    return np.sum(special.binom(q - 1, k) * (-1.0) ** k * a ** (p + k) / (p + k) ** 2) / special.beta(p, q)


@pytest.mark.parametrize("alpha", [[3.3, 4.4], [0.5, 0.5, 0.5], [2.0, 20.0, 2.0], [0.1, 5.0]])
@pytest.mark.parametrize("a", [1e-6, 1e-3, 0.1, 0.4])
def test_bias_matches_series(alpha, a):
    alpha = np.array(alpha)
    want = [_series(p, alpha.sum() - p, a) for p in alpha]
    assert np.allclose(censoring_bias(alpha, a), want, rtol=1e-7, atol=1e-15)


def test_bias_and_moments_match_monte_carlo():
    rng = np.random.default_rng(3)
    alpha, a = np.array([0.5, 2.0, 4.0]), 0.03
    x = rng.dirichlet(alpha, size=200_000)
    lc = np.log(np.maximum(x, a))
    mean, var = censored_logx_moments(alpha, a)
    assert np.all(np.abs(lc.mean(axis=0) - mean) < 5 * np.sqrt(var / x.shape[0]))
    assert np.allclose(lc.var(axis=0), var, rtol=0.03)
    diff = lc - np.log(x)
    assert np.all(np.abs(diff.mean(axis=0) - censoring_bias(alpha, a)) < 5 * diff.std(axis=0) / np.sqrt(x.shape[0]))
    # wrong variant: the bias at twice the threshold is rejected
    assert np.any(np.abs(diff.mean(axis=0) - censoring_bias(alpha, 2 * a)) > 5 * diff.std(axis=0) / np.sqrt(x.shape[0]))


def test_entry_probabilities():
    assert np.allclose(entry_censoring_prob([1.0, 1.0], [0.1, 0.3]), [[0.1, 0.1], [0.3, 0.3]])
    assert expected_censored_proportion([1.0, 1.0, 1.0], 0.1) == pytest.approx(1 - 0.9**2)


@pytest.mark.parametrize("alpha, a", [([2.2, 3.3, 4.4], 0.05), ([0.5, 0.5, 0.5], 1e-3), ([3.3, 4.4], 0.1)])
def test_record_probability_exact_vs_monte_carlo(alpha, a):
    p, se0 = record_censoring_prob(alpha, a)
    q, se = record_censoring_prob(alpha, a, method="mc", n_mc=200_000, rng=1)
    assert se0 == 0.0 and abs(p - q) < 5 * se


def test_record_probability_closed_forms():
    assert record_censoring_prob(np.ones(3), 0.1)[0] == pytest.approx(0.51)  # 1 - (1 - 3a)^2
    p, se = record_censoring_prob(np.ones(5), 0.05, n_mc=100_000, rng=2)
    assert abs(p - (1 - 0.75**4)) < 5 * se
    assert record_censoring_prob([1.0, 2.0, 3.0, 4.0], 0.3) == (1.0, 0.0)


@pytest.mark.parametrize("call, message", [
    (lambda: entry_censoring_prob([1.0], 0.1), "alpha"),
    (lambda: entry_censoring_prob([1.0, 0.0], 0.1), "alpha"),
    (lambda: censoring_bias([1.0, 2.0], 1.0), "(0, 1)"),
    (lambda: censored_logx_moments([1.0, 2.0], [0.1, 0.2]), "scalar"),
    (lambda: record_censoring_prob(np.ones(4), 0.01, method="exact"), "d <= 3"),
    (lambda: record_censoring_prob(np.ones(3), 0.01, method="fast"), "method"),
    (lambda: bias_bound([2.0, 3.0], 0.1, tail="x"), "tail"),
])
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("call, message", [
    (lambda: entry_censoring_prob(["a", "b"], 0.1), "alpha"),
    (lambda: entry_censoring_prob([True, True], 0.1), "alpha"),
    (lambda: censoring_bias([1.0, 2.0], "0.1"), "a must be"),
    (lambda: record_censoring_prob([1.0, 2.0], [0.1j]), "a must be"),
])
def test_non_numeric_input_names_the_argument(call, message):
    with pytest.raises(TypeError, match=message):
        call()
