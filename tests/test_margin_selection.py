"""Tests of dplit.margin_selection: mutual information and its sensitivity, the exponential mechanism, the
greedy network (budget, determinism, law, recovery), select_and_release, two_way_report, bad input."""

import itertools
import math
import warnings

import numpy as np
import pytest

from dplit.accounting import BudgetExceededError, PrivacyBudget
from dplit.latent_class import MarginRelease, fit_latent_class, release_margins
from dplit.margin_selection import (
    MarginSelection,
    TwoWayReport,
    _mi_kernel,
    _mi_reference,
    _mi_sensitivity_reference,
    exponential_mechanism,
    mi_sensitivity,
    mutual_information,
    sample_network,
    select_and_release,
    select_margins,
    selection_probabilities,
    two_way_report,
)
from dplit.testing import chisq_gof

TRUE_NET = [(0, ()), (1, (0,)), (2, (0, 1)), (3, (1, 2)), (4, (2, 3)), (5, (3, 4)), (6, (4, 5))]


def _categorical(prob):
    logp = np.log(prob)
    return lambda k: np.where((k >= 0) & (k < logp.size), logp[np.clip(k, 0, logp.size - 1)], -np.inf)


@pytest.fixture(scope="module")
def records():
    return np.random.default_rng(0).integers(0, 3, size=(2000, 6))


# --- mutual information ------------------------------------------------------------------------------------

def test_mi_kernel_matches_reference_and_py_func():
    g = np.random.default_rng(1)
    levels = (3, 2, 4, 2, 5)
    x = np.column_stack([g.integers(0, d, 3000) for d in levels])
    x[:, 1] = np.where(g.random(3000) < 0.7, x[:, 0] % 2, x[:, 1])
    xt = np.ascontiguousarray(x.T)
    for child, parents in [(1, (0,)), (2, (0, 1)), (4, (3, 2, 1)), (0, (4,))]:
        ref = _mi_reference(x, levels, child, parents)
        args = (xt, np.array(levels), np.array([child]), np.array([parents]))
        assert _mi_kernel(*args)[0] == pytest.approx(ref, abs=1e-12)
        plain = getattr(_mi_kernel, "py_func", _mi_kernel)          # the JIT may be off (make coverage)
        assert plain(*args)[0] == pytest.approx(ref, abs=1e-12)
        assert mutual_information(x, child, parents, levels=levels) == pytest.approx(ref, abs=1e-12)


def test_mi_closed_forms():
    g = np.random.default_rng(2)
    a, b = g.integers(0, 2, 100_000), g.integers(0, 2, 100_000)
    x = np.column_stack([a, a, a ^ b, b])
    h = -sum(q * math.log(q) for q in np.bincount(a) / a.size)
    assert mutual_information(x, 0, (1,)) == pytest.approx(h, abs=1e-12)
    assert mutual_information(x, 2, (0,)) < 1e-4
    assert mutual_information(x, 2, (0, 3)) == pytest.approx(math.log(2), abs=1e-4)


@pytest.mark.parametrize("n, dx, dp, binary", [(6, 2, 2, True), (7, 2, 3, True), (6, 3, 3, False)])
def test_mi_sensitivity_bounds_brute_force(n, dx, dp, binary):
    assert _mi_sensitivity_reference(n, dx, dp) <= mi_sensitivity(n, binary) + 1e-12


def test_mi_sensitivity_values():
    n = 21_574
    assert mi_sensitivity(n) == pytest.approx(math.log(n) / n + (n - 1) / n * math.log(n / (n - 1)))
    assert mi_sensitivity(n, False) == pytest.approx(2 / n * math.log((n + 1) / 2) + (n - 1) / n * math.log((n + 1) / (n - 1)))
    assert mi_sensitivity(n) < mi_sensitivity(n, False)
    with pytest.raises(ValueError, match="n"):
        mi_sensitivity(1)


# --- exponential mechanism ---------------------------------------------------------------------------------

def test_exponential_mechanism_law_chisq():
    scores, sens, eps = np.array([0.1, 0.9, 2.0, 0.5]), np.array([1.0, 0.5, 1.0, 2.0]), 1.7
    prob = selection_probabilities(scores, sens, eps)
    w = np.exp(eps * scores / (2 * sens))
    assert np.allclose(prob, w / w.sum(), rtol=1e-12)
    g = np.random.default_rng(3)
    draws = np.array([exponential_mechanism(scores, sens, eps, rng=g) for _ in range(20_000)])
    assert chisq_gof(draws, _categorical(prob)) > 1e-3
    wrong = np.exp(eps * scores / sens)
    assert chisq_gof(draws, _categorical(wrong / wrong.sum())) < 1e-6


def test_exponential_mechanism_uniform_at_tiny_eps():
    g = np.random.default_rng(4)
    scores = np.array([0.0, 5.0, 50.0])
    draws = np.array([exponential_mechanism(scores, 1.0, 1e-12, rng=g) for _ in range(15_000)])
    assert chisq_gof(draws, _categorical(np.full(3, 1 / 3))) > 1e-3


def test_exponential_mechanism_no_overflow_and_bad_input():
    assert selection_probabilities(np.array([0.0, 1.0]), 1e-6, 1e5)[1] == 1.0
    with pytest.raises(ValueError, match="eps"):
        selection_probabilities(np.array([0.0, 1.0]), 1.0, 0.0)
    with pytest.raises(ValueError, match="sensitivity"):
        selection_probabilities(np.array([0.0, 1.0]), 0.0, 1.0)
    with pytest.raises(ValueError, match="scores"):
        selection_probabilities(np.array([]), 1.0, 1.0)


# --- select_margins ----------------------------------------------------------------------------------------

def test_spends_exactly_the_budget_it_reports(records):
    for eps in (0.3, 1.0, 7.0):
        ledger = PrivacyBudget(eps)
        sel = select_margins(records, eps, rng=1, budget=ledger)
        assert sel.eps == eps and ledger.spent == pytest.approx(eps, rel=1e-12)
        assert len(ledger.entries) == records.shape[1] - 1
        assert all(e.eps == pytest.approx(eps / 5) for e in ledger.entries)
        assert ledger.remaining == pytest.approx(0.0, abs=1e-12)


def test_budget_refused_up_front(records):
    ledger = PrivacyBudget(1.0)
    ledger.spend(0.5)
    with pytest.raises(BudgetExceededError, match="budget"):
        select_margins(records, 0.6, rng=1, budget=ledger)
    assert len(ledger.entries) == 1
    with pytest.raises(TypeError, match="budget"):
        select_margins(records, 0.6, budget=0.6)


def test_deterministic_for_a_seed(records):
    a = select_margins(records, 1.0, rng=11)
    assert select_margins(records, 1.0, rng=11) == a
    assert select_margins(records, 1.0, rng=np.random.default_rng(11)) == a
    assert len({select_margins(records, 0.5, rng=s).network for s in range(10)}) > 1


def test_network_shape(records):
    for degree in (1, 2, 3):
        sel = select_margins(records, 2.0, degree=degree, rng=3)
        order = [a for a, _ in sel.network]
        assert sorted(order) == list(range(6))
        for i, (_, pa) in enumerate(sel.network):
            assert len(pa) == min(degree, i) and set(pa) <= set(order[:i]) and list(pa) == sorted(pa)
        assert len(sel.pairs) == sum(min(degree, i) for i in range(6)) == len(set(sel.pairs))
        assert sel.margins == tuple(tuple(sorted((a,) + pa)) for a, pa in sel.network)
        assert set(sel.maximal_margins) <= set(sel.margins)
        assert not any(set(m) < set(o) for m in sel.maximal_margins for o in sel.margins)


@pytest.mark.slow
def test_recovers_a_known_degree_two_network():
    true_pairs = MarginSelection.from_network(TRUE_NET, (2,) * 7, 1, 1.0, 2).pairs
    x = sample_network(TRUE_NET, 50_000, rng=5)
    firsts = set()
    for s in range(25):
        sel = select_margins(x, 1e4, rng=s)
        firsts.add(sel.network[0][0])
        assert sel.pairs == true_pairs, sel.network
    assert len(firsts) == 7


@pytest.mark.slow
def test_whole_selection_law_p3():
    """(first, second) of a p = 3 selection: uniform first, then the exponential mechanism on I(X; first)."""
    g = np.random.default_rng(6)
    x = g.integers(0, 2, size=(300, 3))
    x[:, 2] = np.where(g.random(300) < 0.75, x[:, 0], x[:, 2])
    S = mi_sensitivity(300)
    for eps in (0.4, 1e-10):
        law = np.zeros(9)
        for f in range(3):
            others = [a for a in range(3) if a != f]
            prob = selection_probabilities(np.array([mutual_information(x, a, (f,)) for a in others]), S, eps / 2)
            law[[3 * f + a for a in others]] = prob / 3
        gen = np.random.default_rng(7)
        codes = np.array([3 * s.network[0][0] + s.network[1][0]
                          for s in (select_margins(x, eps, rng=gen) for _ in range(3000))])
        with np.errstate(divide="ignore"):
            assert chisq_gof(codes, _categorical(law)) > 1e-3
    assert law[[1, 2, 3, 5, 6, 7]] == pytest.approx(np.full(6, 1 / 6))


@pytest.mark.slow
def test_uniform_at_eps_to_zero():
    x = sample_network(TRUE_NET, 5000, rng=8)
    gen = np.random.default_rng(9)
    nets = [select_margins(x, 1e-10, rng=gen).network for _ in range(4000)]
    codes = np.array([7 * net[0][0] + net[1][0] for net in nets])      # (first, second): 42 equally likely
    law = np.where(np.eye(7).ravel() == 1, 0.0, 1 / 42)
    with np.errstate(divide="ignore"):
        assert chisq_gof(codes, _categorical(law)) > 1e-3


@pytest.mark.parametrize("kw, err, word", [
    (dict(eps=0.0), ValueError, "eps"),
    (dict(eps=-1.0), ValueError, "eps"),
    (dict(eps=math.inf), ValueError, "eps"),
    (dict(eps=1.0, degree=0), ValueError, "degree"),
    (dict(eps=1.0, degree=2.0), TypeError, "degree"),
    (dict(eps=1.0, levels=(3, 3, 3)), ValueError, "levels"),
    (dict(eps=1.0, levels=(2,) * 6), ValueError, "records"),
    (dict(eps=1.0, levels=(3, 3, 3, 3, 3, 1)), ValueError, "levels"),
    (dict(eps=1.0, rng="seed"), TypeError, "rng"),
])
def test_bad_arguments(records, kw, err, word):
    with pytest.raises(err, match=word):
        select_margins(records, **kw)


@pytest.mark.parametrize("bad, err", [
    (np.array([[0.0, 1.0], [1.0, 0.0]]), TypeError),
    (np.array([[True, False], [False, True]]), TypeError),
    (np.array([[0, -1], [1, 0]]), ValueError),
    (np.array([0, 1, 1]), ValueError),
    (np.array([[0, 1, 2]]), ValueError),
])
def test_bad_records(bad, err):
    with pytest.raises(err, match="records"):
        select_margins(bad, 1.0)


def test_sample_network_checks_and_marginals():
    x = sample_network(TRUE_NET, 20_000, weight=0.0, rng=1)
    assert x.shape == (20_000, 7) and set(np.unique(x)) == {0, 1}
    assert np.allclose(x.mean(axis=0), 0.5, atol=0.02)
    with pytest.raises(ValueError, match="network"):
        sample_network([(1, (0,)), (0, ())], 10)


# --- select_and_release, two_way_report --------------------------------------------------------------------

def test_select_and_release_budget_and_margins():
    x = sample_network([(0, ())] + [(j, tuple(range(max(0, j - 2), j))) for j in range(1, 16)], 4000, rng=2)
    ledger = PrivacyBudget(2.0)
    sel, rel = select_and_release(x, 2.0, rng=3, secure=False, budget=ledger)
    assert len(sel.pairs) == 29 and rel.margins == sel.pairs and isinstance(rel, MarginRelease)
    assert sel.eps == pytest.approx(0.5) and rel.eps == pytest.approx(1.5)
    assert ledger.spent == pytest.approx(2.0, rel=1e-12) and len(ledger.entries) == 15 + 29
    sel2, rel2 = select_and_release(x, 2.0, rng=3, secure=False)
    assert sel2 == sel and rel2 == rel
    with pytest.raises(ValueError, match="share"):
        select_and_release(x, 1.0, share=1.0)
    with pytest.raises(BudgetExceededError):
        select_and_release(x, 1.0, budget=ledger)


@pytest.mark.filterwarnings("ignore::dplit.sampling.ConvergenceWarning")
def test_two_way_report_at_eps_inf():
    x = sample_network(TRUE_NET[:5], 5000, rng=4)
    pairs = list(itertools.combinations(range(5), 2))
    fit = fit_latent_class(release_margins(x, pairs, eps=np.inf), k=4, n_iter=400, n_warmup=300, n_chains=1, rng=5,
                           progress=False)
    rep = two_way_report(fit, x, [(1, 0), (2, 3)])
    assert isinstance(rep, TwoWayReport) and rep.truth.size == 40 and rep.used.sum() == 8
    assert np.all(rep.lower <= rep.mean) and np.all(rep.mean <= rep.upper)
    s = rep.summary()
    assert s["mae_all"] < 0.02 and set(s) >= {"mae_used", "mae_held_out", "coverage_used", "coverage_held_out"}


def test_candidate_counts_and_small_cases():
    from dplit.margin_selection import _candidates

    steps = [_candidates(16, set(range(c)), min(2, c)) for c in range(1, 16)]
    assert sum(map(len, steps)) == 2395 and len({c for s in steps for c in s}) == 575
    x = np.random.default_rng(3).integers(0, 2, size=(500, 2))
    ledger = PrivacyBudget(0.4)
    sel = select_margins(x, 0.4, rng=1, budget=ledger)           # p = 2: one step, one candidate
    assert len(sel.network) == 2 and sel.pairs == ((0, 1),) and len(ledger.entries) == 1
    wide = select_margins(x, 0.4, levels=(4, 3), rng=1)          # declared levels beyond those seen
    assert wide.levels == (4, 3)


def test_selection_size_counts_the_distinct_candidates_and_refuses_up_front(monkeypatch):
    import time

    from dplit.margin_selection import _candidates, _check_selection_size

    for p, k in [(16, 2), (7, 1), (9, 3)]:                      # the closed form against the enumeration
        distinct = {c for s in range(1, p) for c in _candidates(p, set(range(s)), min(k, s))}
        assert _check_selection_size((2,) * p, 10_000, k) == len(distinct)
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"166,167,999 candidate .* p = 1000 variables with degree = 2 .* GiB"
                                         r".*lower degree"):
        select_margins(np.random.default_rng(0).integers(0, 2, size=(10, 1000)), 1.0)
    assert time.perf_counter() - t0 < 5                         # refused, not run
    with pytest.raises(ValueError, match=r"count table of up to 1,000,000,000,000 cells"):
        select_margins(np.array([[0, 0, 0], [1, 1, 1]]), 1.0, levels=(10**4,) * 3)
    x = np.random.default_rng(1).integers(0, 2, size=(300, 20))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        select_margins(x, 1.0, rng=1)                            # p < n and small: no warning, no refusal
    monkeypatch.setenv("DPLIT_MAX_BYTES", "10000")
    with pytest.raises(ValueError, match="DPLIT_MAX_BYTES"):
        select_margins(x, 1.0, rng=1)


def test_more_variables_than_records_warns_of_a_transposed_table(records):
    with pytest.warns(UserWarning, match=r"more variables \(p = 40\) than records \(n = 6\).*transposed"):
        sel = select_margins(records[:40].T, 1.0, rng=1)
    assert len(sel.network) == 40
