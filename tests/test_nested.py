"""Tests of dplit.nested: the nested model's parameters, the summary probabilities against enumeration of every
household, households and their summaries, the release, each sampler block against brute force, fits (recovery,
seeds), synthesis, and bad input."""

import math
import warnings

import numpy as np
import pytest
from scipy import integrate, stats

from dplit import _arviz
from dplit.mechanisms import two_sided_geometric_logpmf
from dplit.nested import (
    PARAM_NAMES,
    SIMULATED_TRUTH,
    NestedParams,
    SummaryRelease,
    _composite_loglik,
    _nested_sampler,
    _row_lengths,
    _summary_probs_kernel,
    _unpack,
    _update_row,
    _update_true_counts,
    fit_nested,
    household_probs,
    household_summaries,
    household_table,
    release_summaries,
    simulate_households,
    summary_counts,
    summary_probs,
    synthesize_households,
)
from dplit.nested_model import summary_probs_paper
from dplit.sampling import ConvergenceWarning, run_chains
from dplit.testing import chisq_gof, py_func, rank_uniformity_pvalues, sbc_ranks

TRUE = SIMULATED_TRUTH


def _good():
    return {k: getattr(TRUE, k) for k in PARAM_NAMES}


# --- the summary probabilities against enumeration --------------------------------------------------------------

@pytest.mark.parametrize("G, M, R, K, size, seed", [(2, 2, 3, 3, 3, 0), (2, 2, 3, 3, 3, 1), (3, 2, 2, 3, 3, 2),
                                                    (1, 1, 3, 2, 3, 3), (2, 3, 3, 2, 2, 4), (2, 2, 2, 2, 4, 5)])
def test_each_summary_matches_enumeration_of_every_household(G, M, R, K, size, seed):
    p = NestedParams.random(G, M, R, K, rng=seed)
    records, probs = household_table(p, size=size)
    assert len(records) == 4 * R * (2 * R * K) ** (size - 1)
    assert abs(probs.sum() - 1) < 1e-12
    brute = probs @ household_summaries(records)
    closed = summary_probs(p, size=size)
    for i in range(5):                                   # each formula separately
        assert abs(closed[i] - brute[i]) < 1e-12, (i, closed[i], brute[i])
    if size == 3:
        np.testing.assert_allclose(summary_probs_paper(p), brute, rtol=0, atol=1e-12)


def test_summary_kernel_equals_its_python_twin():
    p = NestedParams.random(2, 3, 4, 3, rng=9)
    G, M, R, _ = p.shape
    out_py = py_func(_summary_probs_kernel)(p.pack(), G, M, R, 2, np.empty(5))
    np.testing.assert_allclose(out_py, summary_probs(p), rtol=1e-14)


def test_household_probs_is_eq1_for_one_household():
    p = TRUE
    x = np.array([[0, 1, 2, 1, 2, 0, 0, 1, 3]])
    want = sum(p.pi[g] * p.lam_own[g, 0] * p.lam_gender[g, 1] * p.lam_race[g, 2]
               * sum(p.w[g, m] * p.phi_gender[g, m, 1] * p.phi_race[g, m, 2] * p.phi_rel[g, m, 0] for m in range(2))
               * sum(p.w[g, m] * p.phi_gender[g, m, 0] * p.phi_race[g, m, 1] * p.phi_rel[g, m, 3] for m in range(2))
               for g in range(2))
    assert abs(household_probs(p, x)[0] - want) < 1e-15


def test_simulated_households_match_the_summary_probabilities():
    x = simulate_households(TRUE, 40_000, rng=3)
    truth = summary_probs(TRUE)
    z = (summary_counts(x) / 40_000 - truth) / np.sqrt(truth * (1 - truth) / 40_000)
    assert np.all(np.abs(z) < 4.5)
    assert np.array_equal(simulate_households(TRUE, 50, rng=1), simulate_households(TRUE, 50, rng=1))


def test_pack_and_unpack_round_trip():
    p = NestedParams.random(3, 2, 4, 5, rng=4)
    theta = p.pack()
    assert theta.shape == (_row_lengths(3, 2, 4, 5).size, 5)
    back = _unpack(theta, 3, 2, 4, 5)
    assert all(np.array_equal(back[k], getattr(p, k)) for k in PARAM_NAMES)


def test_household_summaries_on_hand_made_households():
    x = np.array([[0, 1, 0, 0, 0, 0, 1, 0, 1], [1, 0, 2, 1, 2, 1, 0, 2, 2], [0, 0, 1, 0, 1, 0, 0, 3, 1]])
    assert household_summaries(x).astype(int).tolist() == [[1, 1, 1, 1, 1], [0, 0, 1, 0, 0], [0, 1, 0, 1, 1]]
    assert summary_counts(x).tolist() == [1, 2, 2, 2, 2]


# --- bad input ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("change, word", [
    (dict(pi=[0.6, 0.3]), "pi must hold probability vectors"),
    (dict(pi=[1.2, -0.2]), "pi must hold probability vectors"),
    (dict(lam_own=[[1.2, -0.2], [0.5, 0.5]]), "lam_own"),
    (dict(lam_gender=[[0.5, 0.5, 0.0], [0.5, 0.5, 0.0]]), "lam_gender must have shape"),
    (dict(w=[[0.5, 0.5]]), "w must have shape"),
    (dict(phi_race=np.full((2, 2, 3), 1 / 3)), "race levels"),
    (dict(phi_rel=np.full((2, 3, 4), 0.25)), "phi_rel must have shape"),
    (dict(lam_race=[[1.0], [1.0]]), "lam_race must have shape"),
    (dict(phi_gender=np.full((2, 2, 2), np.nan)), "phi_gender must be finite"),
])
def test_bad_parameters_are_refused_naming_the_argument(change, word):
    with pytest.raises(ValueError, match=word):
        NestedParams(**dict(_good(), **change))


def test_non_numeric_parameters_raise_type_error():
    with pytest.raises(TypeError, match="pi"):
        NestedParams(**dict(_good(), pi=["a", "b"]))
    with pytest.raises(TypeError, match="params"):
        summary_probs({"pi": [1.0]})
    with pytest.raises(TypeError, match="params"):
        simulate_households("TRUE", 10)


@pytest.mark.parametrize("records, kwargs, word", [
    (np.zeros((3, 8), dtype=int), {}, r"3 \+ 3 \(size - 1\) columns"),
    (np.zeros((3, 9), dtype=int), dict(size=4), "size = 4"),
    (np.zeros((3, 9), dtype=int), dict(size=1), "size must be >= 2"),
    (-np.ones((3, 9), dtype=int), {}, "must lie in|>= 0"),
    (np.zeros((3, 9)), {}, "array of integers"),
    (np.zeros((0, 9), dtype=int), {}, "non-empty"),
    (np.zeros(9, dtype=int), {}, "2-D"),
])
def test_bad_households_are_refused(records, kwargs, word):
    with pytest.raises((ValueError, TypeError), match=word):
        summary_counts(records, **kwargs)


def test_household_size_and_levels_mismatches():
    x = simulate_households(TRUE, 2000, rng=1)
    with pytest.raises(ValueError, match="size = 2"):
        household_summaries(x, size=2)
    with pytest.raises(ValueError, match="race code must lie in 0..1"):
        release_summaries(x, 1.0, n_race=2, secure=False)
    with pytest.raises(ValueError, match="rel code"):
        household_probs(NestedParams.random(2, 2, 4, 2, rng=0), x)
    with pytest.raises(TypeError, match="n_race"):
        release_summaries(x, 1.0, n_race="4", secure=False)
    with pytest.raises(ValueError, match="2\\*\\*21"):
        household_table(NestedParams.random(2, 2, 9, 12, rng=0), size=4)


@pytest.mark.parametrize("eps", [0.0, -1.0, float("nan")])
def test_bad_epsilon_is_refused(eps):
    x = simulate_households(TRUE, 20, rng=1)
    with pytest.raises(ValueError, match="eps"):
        release_summaries(x, eps, secure=False)
    with pytest.raises(ValueError, match="eps"):
        SummaryRelease(counts=[1, 2, 3, 4, 5], n=20, eps=eps, n_race=4, n_rel=4)


@pytest.mark.parametrize("bad, exc, word", [
    (dict(counts=[1, 2, 3]), ValueError, "5 integers"),
    (dict(counts=[1, 2, 3, 4, 30], eps=math.inf), ValueError, r"counts\[4\] = 30 is impossible.*\[0, 20\]"),
    (dict(counts=[1, 2, 3, 4, -1], eps=math.inf), ValueError, r"counts\[4\] = -1 is impossible"),
    (dict(n_race=1), ValueError, "n_race"),
    (dict(size=1), ValueError, "size"),
    (dict(n=2.5), TypeError, "n must be an int"),
])
def test_bad_release_is_refused(bad, exc, word):
    with pytest.raises(exc, match=word):
        SummaryRelease(**dict(dict(counts=[1, 2, 3, 4, 5], n=20, eps=1.0, n_race=4, n_rel=4), **bad))


@pytest.mark.parametrize("kwargs, exc, word", [
    (dict(G=0), ValueError, "G"), (dict(M=1.5), TypeError, "M"), (dict(a=-1.0), ValueError, "a must"),
    (dict(weight=2.0), ValueError, "weight"), (dict(n_chains=0), ValueError, "n_chains"),
])
def test_bad_fit_settings_are_refused(kwargs, exc, word):
    rel = release_summaries(simulate_households(TRUE, 50, rng=1), math.inf)
    with pytest.raises(exc, match=word):
        fit_nested(rel, n_iter=10, n_warmup=0, progress=False, **kwargs)
    with pytest.raises(TypeError, match="release"):
        fit_nested(rel.counts, n_iter=10, n_warmup=0, progress=False)


# --- the release --------------------------------------------------------------------------------------------------

def test_release_noise_has_the_geometric_law_and_budget():
    x = simulate_households(TRUE, 300, rng=2)
    exact = release_summaries(x, math.inf)
    assert exact.t == 0.0 and exact.budget is None and exact.size == 3 and exact.n_race == 4
    assert np.array_equal(exact.counts, summary_counts(x))
    noise = np.concatenate([release_summaries(x, 0.5, rng=s, secure=False).counts - exact.counts for s in range(1500)])
    assert chisq_gof(noise, lambda k: two_sided_geometric_logpmf(k, math.exp(-0.1))) > 1e-3
    r = release_summaries(x, 1.0, rng=3, secure=False)
    assert abs(r.t - math.exp(-0.2)) < 1e-15 and abs(r.budget.spent - 1.0) < 1e-12 and r.eps_per_count == 0.2


# --- each block against brute force -------------------------------------------------------------------------------

def test_true_count_block_keeps_its_conditional():
    t, n, P, noisy = 0.6, 6, 0.3, 2
    s = np.arange(n + 1)
    lw = np.abs(s - noisy) * math.log(t) + stats.binom.logpmf(s, n, P)

    def logpmf(k):
        return np.where((k >= 0) & (k <= n), lw[np.clip(k, 0, n)] - np.logaddexp.reduce(lw), -np.inf)

    def chain(shift, n_it=40_000):
        S, gen, out = np.array([0]), np.random.default_rng(1), np.empty(n_it, dtype=np.int64)
        for it in range(n_it):
            _update_true_counts(S, np.array([P]), np.array([noisy + shift]), n, t, 1.0, gen)
            out[it] = S[0]
        return out[::2]

    assert chisq_gof(chain(0), logpmf) > 1e-3
    assert chisq_gof(chain(1), logpmf) < 1e-4


def test_simplex_row_block_keeps_its_conditional():
    base = NestedParams.random(2, 2, 3, 3, rng=7)
    S, n = np.array([3, 5, 6, 2, 1]), 8
    edges = np.linspace(0, 1, 11)

    def pdf(x):
        theta = base.pack()
        theta[0, :2] = (x, 1 - x)
        return np.exp(_composite_loglik(S, _summary_probs_kernel(theta, 2, 2, 3, 2, np.empty(5)), n))

    bins = np.array([integrate.quad(pdf, a, b)[0] for a, b in zip(edges[:-1], edges[1:])])
    bins /= bins.sum()
    theta, gen = base.pack(), np.random.default_rng(11)
    P, P_new = _summary_probs_kernel(theta, 2, 2, 3, 2, np.empty(5)), np.empty(5)
    out = np.empty(40_000)
    for it in range(out.size):
        _update_row(theta, 0, 2, 2, 2, 3, 2, S, n, 1.0, 1.0, 2.0, P, P_new, gen)
        out[it] = theta[0, 0]
    codes = np.clip(np.searchsorted(edges, out[::10]) - 1, 0, 9)
    assert chisq_gof(codes, lambda c: np.where((c >= 0) & (c < 10), np.log(bins)[np.clip(c, 0, 9)], -np.inf)) > 1e-3


@pytest.mark.slow
def test_whole_sampler_passes_sbc():
    def simulate(gen):
        p = NestedParams.random(2, 2, 3, 3, rng=gen)
        P = summary_probs(p)
        S = gen.binomial(40, P)
        tt = math.exp(-2.0 / 5)
        noisy = S + gen.geometric(1 - tt, 5) - gen.geometric(1 - tt, 5)
        return P, SummaryRelease(counts=noisy, n=40, eps=2.0, n_race=3, n_rel=3)

    def posterior(rel, L, gen):
        sampler = _nested_sampler(rel, 2, 2, 1.0, 1.0, 5)
        draws, _, _, _ = run_chains(sampler, n_iter=20 * L, n_warmup=500, n_chains=1, thin=20, rng=gen)
        return draws["summary_probs"][0]

    p = rank_uniformity_pvalues(sbc_ranks(simulate, posterior, 100, rng=5))
    assert p.min() > 1e-3


# --- fits ---------------------------------------------------------------------------------------------------------

def test_recovery_at_eps_inf_with_many_households():
    x = simulate_households(TRUE, 20_000, rng=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)    # R-hat about 1.02 at the supplement's run length
        res = fit_nested(release_summaries(x, math.inf), n_iter=10_000, n_warmup=10_000, n_chains=2, rng=1,
                         progress=False)
    est = res.posterior["summary_probs"].mean(("chain", "draw")).values
    assert np.abs(est - summary_probs(TRUE)).max() < 0.01
    assert res.posterior.attrs["rhat_max"] < 1.05 and res.posterior.attrs["ess_bulk_min"] > 100
    assert set(_arviz.groups(res)) == {"posterior", "latent", "sample_stats", "observed_data"}
    assert list(res.posterior["summary_stat"].values) == ["S1", "S2", "S3", "S4", "S5"]
    assert res.latent["phi_rel"].shape[2:] == (2, 2, 4) and res.posterior.attrs["method"] == "nested"


def test_noisy_fit_has_counts_and_its_posterior_moves_towards_the_data():
    x = simulate_households(TRUE, 3000, rng=6)
    rel = release_summaries(x, 2.0, rng=7, secure=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = fit_nested(rel, n_iter=4000, n_warmup=4000, n_chains=2, rng=2, progress=False)
    assert "counts" in res.latent and "acceptance_counts" in res.sample_stats
    est = res.posterior["summary_probs"].mean(("chain", "draw")).values
    assert np.abs(est - summary_counts(x) / 3000).max() < 0.05


@pytest.mark.filterwarnings("ignore::dplit.sampling.ConvergenceWarning")
def test_same_seed_same_draws_any_number_of_threads():
    rel = release_summaries(simulate_households(TRUE, 500, rng=1), 1.0, rng=2, secure=False)
    kw = dict(n_iter=500, n_warmup=200, n_chains=2, progress=False)
    a = fit_nested(rel, rng=3, **kw)
    b = fit_nested(rel, rng=3, n_jobs=1, **kw)
    c = fit_nested(rel, rng=4, **kw)
    assert np.array_equal(a.posterior["summary_probs"].values, b.posterior["summary_probs"].values)
    assert np.array_equal(a.latent["counts"].values, b.latent["counts"].values)
    assert not np.array_equal(a.posterior["summary_probs"].values, c.posterior["summary_probs"].values)


# --- synthesis ----------------------------------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore::dplit.sampling.ConvergenceWarning")
def test_synthesize_households():
    x = simulate_households(TRUE, 5000, rng=8)
    res = fit_nested(release_summaries(x, math.inf), n_iter=4000, n_warmup=4000, n_chains=2, rng=1,
                     progress=False)
    syn = synthesize_households(res, 10_000, 4, rng=5)
    assert syn.shape == (4, 10_000, 9) and syn.dtype == np.int64
    props = np.array([summary_counts(s) for s in syn]) / 10_000
    assert np.abs(props.mean(axis=0) - summary_counts(x) / 5000).max() < 0.03
    assert np.array_equal(syn, synthesize_households(res, 10_000, 4, rng=5))
    with pytest.raises(ValueError, match="m must be"):
        synthesize_households(res, 10, 10**9)
    with pytest.raises(ValueError, match="n_households"):
        synthesize_households(res, 0, 2)
    for not_a_result in (res.posterior, res.posterior.attrs):
        with pytest.raises(TypeError, match="fit_nested"):
            synthesize_households(not_a_result, 10, 2)


# --- plausibility: counts no households give under the stated noise (issue 28, item 1) ---

@pytest.mark.parametrize("size", [2, 3, 4])
def test_genuine_summary_releases_pass_the_plausibility_check(size):
    rng = np.random.default_rng(size)
    for n in (1, 3, 40, 500):
        params = NestedParams.random(2, 2, 3, 3, rng=rng)
        x = simulate_households(params, n, size=size, rng=rng)
        exact = release_summaries(x, math.inf)
        assert exact.checked and exact.t == 0.0
        for eps in (1e-3, 0.1, 1.0, 10.0, 200.0):
            for seed in range(40):
                assert release_summaries(x, eps, rng=seed, secure=False).checked


def test_every_event_vector_of_real_households_is_feasible_exactly():
    # the feasible set is the one real households give: enumerate small populations at eps = inf
    rng = np.random.default_rng(7)
    for size in (2, 3):
        for _ in range(300):
            x = simulate_households(NestedParams.random(2, 2, 2, 2, rng=rng), int(rng.integers(1, 6)), size=size, rng=rng)
            SummaryRelease(counts=household_summaries(x).sum(0), n=x.shape[0], eps=math.inf, n_race=2, n_rel=2,
                           size=size)


@pytest.mark.parametrize("counts, eps, word", [
    ([10, 12, 8, 10, 5], math.inf, r"S1 - S3 = 2 is impossible"),
    ([5, 12, 8, 10, 11], math.inf, r"S5 - S4 = 1 is impossible"),
    ([5, 12, 15, 15, 9], math.inf, r"S3 \+ S4 - S5 = 21 is impossible"),
    ([5, 12, 8, 10, -1], math.inf, r"counts\[4\] = -1 is impossible"),
    ([5, 21, 8, 10, 5], math.inf, r"counts\[1\] = 21 is impossible"),
    ([5, 10**6, 8, 10, 5], 1.0, r"counts\[1\] = 1e\+06 is impossible"),
    ([5, 12, 8, 10, -500], 1.0, r"counts\[4\] = -500 is impossible"),
    ([130, 12, -100, 10, 5], 1.0, r"S1 - S3 = 230 is impossible"),
])
def test_planted_impossible_summaries_are_refused(counts, eps, word):
    with pytest.raises(ValueError, match=word) as info:
        SummaryRelease(counts=counts, n=20, eps=eps, n_race=4, n_rel=4)
    assert "must lie in [" in str(info.value)
    assert not SummaryRelease(counts=counts, n=20, eps=eps, n_race=4, n_rel=4, checked=False).checked


def test_size_two_has_s5_within_s3_and_the_reach_is_exact_at_its_edge():
    with pytest.raises(ValueError, match=r"S5 - S3 = 2"):
        SummaryRelease(counts=[5, 5, 10, 12, 12], n=20, eps=math.inf, n_race=2, n_rel=2, size=2)
    SummaryRelease(counts=[5, 5, 10, 12, 12], n=20, eps=math.inf, n_race=2, n_rel=2, size=3)
    from dplit.mechanisms import geometric_reach
    w = geometric_reach(math.exp(-1.0 / 5), 5)
    SummaryRelease(counts=[5, 5, 5, 500, 500 + 2 * w], n=1000, eps=1.0, n_race=2, n_rel=2)
    with pytest.raises(ValueError, match="S5 - S4"):
        SummaryRelease(counts=[5, 5, 5, 500, 501 + 2 * w], n=1000, eps=1.0, n_race=2, n_rel=2)


def test_fit_records_whether_the_release_was_checked():
    x = simulate_households(TRUE, 30, rng=1)
    rel = release_summaries(x, math.inf)
    kw = dict(n_iter=20, n_warmup=0, n_chains=1, progress=False, rng=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert fit_nested(rel, **kw).posterior.attrs["plausibility_checked"] == 1
        bad = SummaryRelease(counts=[30, 30, 10, 5, 5], n=30, eps=math.inf, n_race=4, n_rel=4, checked=False)
        assert fit_nested(bad, **kw).posterior.attrs["plausibility_checked"] == 0


def test_default_prior_and_paper_settings():
    """The default prior is the sparser a = 0.25 (intervals that cover S3); paper=True gives the supplement's a = 1."""
    rel = release_summaries(simulate_households(NestedParams.random(2, 2, 3, 3, rng=0), 200, rng=1), math.inf)
    kw = dict(n_iter=10, n_warmup=0, n_chains=1, thin=1, progress=False)
    assert (fit_nested(rel, **kw).posterior.attrs["a"], fit_nested(rel, **kw).posterior.attrs["paper"]) == (0.25, 0)
    assert fit_nested(rel, paper=True, **kw).posterior.attrs["a"] == 1.0
    assert fit_nested(rel, paper=True, a=0.5, **kw).posterior.attrs["a"] == 0.5
    with pytest.raises(TypeError, match="paper"):
        fit_nested(rel, paper=1.5, **kw)
