"""Bad inputs to the entry points outside the compositional methods (issue 46, items 3, 5, 8, 9).

Each test plants one bad input that used to give a silent answer, a raw numpy/json error or no warning, and
checks the refusal names the argument and the rule.
"""

import inspect
import math

import numpy as np
import pytest

from dplit import mechanisms as M


# ---------------------------------------------------------------- secure by default (item 8)
@pytest.mark.parametrize("fn, args", [(M.laplace_mechanism, ([1.0, 2.0], 1.0, 1.0)),
                                      (M.geometric_mechanism, ([1, 2], 1.0, 1.0)),
                                      (M.sample_discrete_gaussian, (2.0, 3))])
def test_mechanisms_default_to_the_exact_sampler(fn, args):
    assert inspect.signature(fn).parameters["secure"].default is True
    # the default draws from the operating system: one seed twice gives two different releases
    big = fn(np.zeros(200), 1.0, 1.0, rng=1) if fn is not M.sample_discrete_gaussian else fn(2.0, 200, rng=1)
    big2 = fn(np.zeros(200), 1.0, 1.0, rng=1) if fn is not M.sample_discrete_gaussian else fn(2.0, 200, rng=1)
    assert not np.array_equal(big, big2)
    assert np.array_equal(fn(*args, rng=1, secure=False), fn(*args, rng=1, secure=False))


@pytest.mark.parametrize("bad", [None, "no", 1, 0, "True"])
@pytest.mark.parametrize("fn, args", [(M.laplace_mechanism, ([1.0], 1.0, 1.0)),
                                      (M.geometric_mechanism, ([1], 1.0, 1.0)),
                                      (M.sample_discrete_gaussian, (2.0, 3))])
def test_secure_must_be_a_bool(fn, args, bad):
    with pytest.raises(TypeError, match="secure must be True or False"):
        fn(*args, secure=bad)


# ---------------------------------------------------------------- the Dirichlet mechanism and its models (item 3)
def test_baseline_noise_scale_refuses_a_fractional_cell_count():
    from dplit.dirichlet_mechanism import baseline_noise_scale
    with pytest.raises(TypeError, match="cells_changed must be an int"):
        baseline_noise_scale("gaussian", 1, 2, cells_changed=2.5)          # was 1.58
    with pytest.raises(ValueError, match="cells_changed must be >= 1"):
        baseline_noise_scale("laplace", 1, 2, cells_changed=0)
    assert baseline_noise_scale("gaussian", 1, 2, cells_changed=2) == pytest.approx(math.sqrt(2.0))


@pytest.mark.parametrize("g", [lambda r: -r, lambda r: r * math.nan, lambda r: "x"])
def test_one_rule_for_g_in_the_bound_and_the_calibration(g):
    from dplit.dirichlet_mechanism import dirichlet_mechanism_params, dirichlet_rdp_bound
    for fn in (dirichlet_rdp_bound, dirichlet_mechanism_params):
        with pytest.raises((ValueError, TypeError), match=r"g\(r\)"):
            fn(1.0, 2.0, g=g)
    with pytest.raises(TypeError, match="g must be callable"):
        dirichlet_rdp_bound(1.0, 2.0, g=3.0)
    ok = lambda r: 0.5 * r  # noqa: E731
    r, _ = dirichlet_mechanism_params(1.0, 2.0, g=ok)
    assert dirichlet_rdp_bound(r, 2.0, g=ok) == pytest.approx(1.0)


def test_naive_bayes_log_proba_refuses_codes_out_of_range():
    from dplit.dirichlet_mechanism import naive_bayes_log_proba, private_naive_bayes
    codes, y = np.array([[0, 1], [1, 0], [1, 1]]), np.array([0, 1, 1])
    model = private_naive_bayes(codes, y, [2, 2], 2, rng=0)
    for bad in ([[-1, 0]], [[0, 2]]):                                     # -1 read the table from its end
        with pytest.raises(ValueError, match=r"codes\[:, k\] must lie in 0 \.\. n_levels\[k\] - 1"):
            naive_bayes_log_proba(model, np.array(bad), [2, 2])
    with pytest.raises(TypeError, match="codes must be an array of integers"):
        naive_bayes_log_proba(model, np.array([[0.0, 1.0]]), [2, 2])
    with pytest.raises(ValueError, match="log_theta must have shape"):
        naive_bayes_log_proba(model, np.array([[0, 1, 0]]), [2, 2, 2])
    with pytest.raises(TypeError, match="model must be the pair"):
        naive_bayes_log_proba(model[0], np.array([[0, 1]]), [2, 2])
    with pytest.raises(ValueError, match="n_levels must be >= 1"):
        private_naive_bayes(codes, y, [2, 0], 2, rng=0)
    with pytest.raises(TypeError, match="y must be an array of integers"):
        private_naive_bayes(codes, y.astype(float), [2, 2], 2, rng=0)
    with pytest.raises(ValueError, match="lam"):
        private_naive_bayes(codes, y, [2, 2], 2, lam=0.5, rng=0)
    assert np.allclose(np.exp(naive_bayes_log_proba(model, codes, [2, 2])).sum(axis=1), 1.0)


@pytest.mark.parametrize("parents, match", [([[-1], []], r"parents\[0\] must hold nodes in 0 \.\. 1"),
                                            ([[2], []], r"parents\[0\] must hold nodes"),
                                            ([[0], []], "other than 0 itself"),
                                            ([[1], [0]], "DAG"),
                                            ([[1, 1], []], "twice"),
                                            ([[1.0], []], "int node indices"),
                                            ([[1]], "one sequence of parent columns")])
def test_bayes_net_cpts_refuses_bad_parents(parents, match):
    from dplit.dirichlet_mechanism import bayes_net_cpts, bayes_net_loglik
    codes = np.array([[0, 1], [1, 0], [1, 1]])
    with pytest.raises((ValueError, TypeError), match=match):
        bayes_net_cpts(codes, [2, 2], parents, rng=0)
    cpts = bayes_net_cpts(codes, [2, 2], [[1], []], rng=0)
    with pytest.raises((ValueError, TypeError), match=match):
        bayes_net_loglik(cpts, codes, [2, 2], parents)
    assert math.isfinite(bayes_net_loglik(cpts, codes, [2, 2], [[1], []]))


def test_bayes_net_cpts_bounds_the_table_before_counting():
    from dplit.dirichlet_mechanism import bayes_net_cpts
    codes = np.zeros((2, 3), dtype=int)
    with pytest.raises(ValueError, match=r"node 2's table .* above the limit"):
        bayes_net_cpts(codes, [100_000, 100_000, 2], [[], [], [0, 1]], rng=0)


def test_kl_divergence_and_tail_bound_name_their_arguments():
    from dplit.dirichlet_mechanism import kl_divergence, kl_tail_bound
    with pytest.raises(TypeError, match="p must be an array of real numbers"):
        kl_divergence("ab", [0.5, 0.5])
    with pytest.raises(ValueError, match="q must be an array of probabilities"):
        kl_divergence([0.5, 0.5], [1.5, -0.5])
    with pytest.raises(ValueError, match="same number of categories"):
        kl_divergence([0.5, 0.5], [0.2, 0.3, 0.5])
    with pytest.raises(TypeError, match="eta must be an array of real numbers"):
        kl_tail_bound("a", 1.0, 2, 1.0)
    with pytest.raises(ValueError, match="p must sum to 1"):
        kl_divergence([0.5, 0.9], [0.5, 0.5])                 # a histogram is not a distribution
    with pytest.raises(ValueError, match="q must sum to 1"):
        kl_divergence([[0.5, 0.5]], [[3.0, 1.0]])
    assert kl_divergence([0.5, 0.5], [0.5, 0.5]) == 0.0


def test_dirichlet_mechanism_refuses_a_three_way_array_and_the_bound_r_zero():
    from dplit.dirichlet_mechanism import dirichlet_mechanism, dirichlet_rdp_bound
    with pytest.raises(ValueError, match=r"counts must be a histogram.*shape \(2, 2, 2\)"):
        dirichlet_mechanism(np.ones((2, 2, 2)), 1.0, 5.0, rng=0)
    assert dirichlet_mechanism(np.ones((3, 2)), 1.0, 5.0, rng=0).shape == (3, 2)
    with pytest.raises(ValueError, match="r must be > 0"):
        dirichlet_rdp_bound(0.0, 5.0)
    assert dirichlet_rdp_bound(0.1, 5.0) > 0


# ---------------------------------------------------------------- latent class: JSON, cells, classes, warnings
def _margin_release():
    from dplit.latent_class import release_margins
    x = np.random.default_rng(0).integers(0, 2, size=(50, 3))
    return release_margins(x, [(0, 1), (1, 2)], eps=1.0, rng=1, secure=False)


def test_margin_release_from_json_names_the_missing_field_and_refuses_non_json():
    import json

    from dplit.latent_class import MarginRelease
    rel = _margin_release()
    data = json.loads(rel.to_json())
    for field in ("eps", "n", "counts", "margins", "levels"):
        with pytest.raises(ValueError, match=f"lacks the field\\(s\\) {field}"):            # was a bare KeyError
            MarginRelease.from_json(json.dumps({k: v for k, v in data.items() if k != field}))
    with pytest.raises(ValueError, match="text is not JSON"):                              # was a JSONDecodeError
        MarginRelease.from_json("{not json")
    with pytest.raises(ValueError, match="unknown field\\(s\\) surplus"):
        MarginRelease.from_json(json.dumps({**data, "surplus": 1}))
    with pytest.raises(ValueError, match="field margins must be a JSON list"):
        MarginRelease.from_json(json.dumps({**data, "margins": "01"}))
    with pytest.raises(TypeError, match="text must be the JSON text"):
        MarginRelease.from_json(data)
    with pytest.raises(ValueError, match=r"n must fit in a 64-bit integer"):
        MarginRelease.from_json(json.dumps({**data, "n": 10**30}))
    with pytest.raises(ValueError, match=r"counts of margin \(0, 1\) must lie within \+-2\*\*62"):
        MarginRelease.from_json(json.dumps({**data, "counts": [[1e30, 1, 1, 1], data["counts"][1]]}))
    assert MarginRelease.from_json(rel.to_json()) == rel


def test_margins_of_too_many_cells_are_refused_before_work():
    from dplit.latent_class import release_margins
    with pytest.raises(ValueError, match=r"margins: 1e\+18 cells .* above the limit"):
        release_margins(np.zeros((5, 18), dtype=int), [tuple(range(18))], eps=1.0, levels=[10] * 18)


def test_fit_latent_class_bounds_the_classes():
    from dplit.latent_class import fit_latent_class
    with pytest.raises(ValueError, match=r"k = 1,000,000,000 classes .* lower k"):
        fit_latent_class(_margin_release(), k=10**9, n_iter=10, n_warmup=0, n_chains=1, progress=False)


def test_transposed_records_warn_when_releasing_margins():
    from dplit.latent_class import release_margins
    with pytest.warns(UserWarning, match="1000 variables .* only 3 records .* transposed"):
        release_margins(np.zeros((3, 1000), dtype=int), [(0, 1)], eps=1.0, rng=0, secure=False)


def test_margin_counts_and_ipf_name_their_arguments():
    from dplit.latent_class import cell_intervals, ipf_table, margin_counts
    x = np.random.default_rng(0).integers(0, 2, size=(20, 3))
    with pytest.raises(TypeError, match="records must be an array of integers"):
        margin_counts(x.astype(float), [(0, 1)])
    with pytest.raises(ValueError, match="records: every code must lie in 0..levels"):
        margin_counts(x - 1, [(0, 1)])
    with pytest.raises(ValueError, match="targets must hold one array per margin"):
        ipf_table([2, 2], [(0,), (1,)], [[1, 1]])
    with pytest.raises(ValueError, match=r"targets\[0\] must be finite"):
        ipf_table([2, 2], [(0,), (1,)], [[1, np.nan], [1, 1]])
    with pytest.raises(ValueError, match="max_iter must be >= 1"):
        ipf_table([2, 2], [(0,), (1,)], [[1, 1], [1, 1]], max_iter=0)
    with pytest.raises(TypeError, match="draws must be an array of real numbers"):
        cell_intervals("abc")
    assert ipf_table([2, 2], [(0,), (1,)], [[1, 1], [1, 3]]).sum() == pytest.approx(1.0)


# ---------------------------------------------------------------- nested: households, classes, counts
def test_nested_sizes_are_bounded_before_work():
    from dplit.nested import SIMULATED_TRUTH, fit_nested, release_summaries, simulate_households
    from dplit.nested_model import NestedParams
    with pytest.raises(ValueError, match=r"n = 1,000,000,000,000 households .* lower n"):
        simulate_households(SIMULATED_TRUTH, 10**12)
    with pytest.raises(ValueError, match=r"n must fit in a 64-bit integer"):
        simulate_households(SIMULATED_TRUTH, 10**19)
    with pytest.raises(ValueError, match=r"G = 100000 x M = 100000 classes"):
        NestedParams.random(10**5, 10**5, 3, 3)
    with pytest.raises(ValueError, match="R must be >= 2"):
        NestedParams.random(2, 2, 1, 3)
    rel = release_summaries(simulate_households(SIMULATED_TRUTH, 100, rng=1), eps=np.inf)
    with pytest.raises(ValueError, match=r"G = 40 household x M = 40 individual classes over 1,600 kept draws"):
        fit_nested(rel, G=40, M=40, n_iter=2000, n_warmup=0, n_chains=4, thin=5, progress=False)


def test_summary_counts_past_int64_are_refused_not_wrapped():
    from dplit.nested import SummaryRelease
    with pytest.raises(ValueError, match=r"counts must lie within \+-2\*\*62"):
        SummaryRelease(counts=[1e30, 1, 1, 1, 1], n=100, eps=1.0, n_race=2, n_rel=2)


# ---------------------------------------------------------------- the release record and the bootstrap
def test_release_record_refuses_s_G_past_int64_and_n_past_int64():
    import json

    from dplit.release import Release
    rel = Release.from_statistic(np.log([0.3, 0.3, 0.3]), 100, 0.01, 1.0, eps2=0.5, s_G=[10, 90], candidates=[0.01],
                                 tc=0.5, check=False)
    data = json.loads(rel.to_json())
    with pytest.raises(ValueError, match=r"s_G must lie within \+-2\*\*62"):       # was "negative" (int64 wrap)
        Release.from_json(json.dumps({**data, "s_G": [1e30, 90]}))
    with pytest.raises(ValueError, match=r"n must fit in a 64-bit integer"):     # was an OverflowError in the chain
        Release.from_statistic(np.log([0.3, 0.3, 0.3]), 10**19, 0.01, 1.0, check=False)


def test_bootstrap_sizes_are_bounded_and_one_replicate_warns():
    from dplit.bootstrap import dp_boots
    from dplit.release import Release
    rel = Release.from_statistic(np.log([0.3, 0.3, 0.3]), 100, 0.01, 1.0)
    with pytest.raises(ValueError, match=r"n_boot = 10,000,000,000 replicates .* lower n_boot"):
        dp_boots(rel, n_boot=10**10)
    big = Release.from_statistic(np.log([0.3, 0.3, 0.3]), 10**12, 0.01, 1.0)
    with pytest.raises(ValueError, match=r"n = 1,000,000,000,000 records x d = 3 simulated per replicate"):
        dp_boots(big, n_boot=10, n_jobs=1)
    with pytest.warns(UserWarning, match="n_boot = 1: one replicate has no spread"):
        dp_boots(rel, n_boot=1, rng=0, progress=False, n_jobs=1)


# ---------------------------------------------------------------- margin selection and the peers
def test_selection_and_peers_name_their_arguments():
    from dplit.margin_selection import mutual_information, sample_network, select_and_release
    from dplit.peers import PeerEstimate, compare_methods, estimate_errors
    x = np.random.default_rng(0).integers(0, 2, size=(30, 3))
    with pytest.raises(TypeError, match="parents must be a tuple of variable indices"):
        mutual_information(x, 0, 1)
    with pytest.raises(ValueError, match="network must be a list of .* pairs"):
        sample_network([(0, (-1,))], 10)
    with pytest.raises(ValueError, match=r"sample_network: n = 1,000,000,000,000 records"):
        sample_network([(0, ())], 10**12)
    with pytest.raises(TypeError, match="secure must be True or False"):
        select_and_release(x, 1.0, secure="no")
    est = PeerEstimate("pgm", 1.0, (2, 2), np.full((2, 2), 0.25))
    with pytest.raises(TypeError, match="truth must be an array of real numbers"):
        estimate_errors(est, np.full((2, 2), "a"))
    with pytest.raises(TypeError, match="margin must be a tuple of int"):
        est.margin(("a",))
    with pytest.raises(ValueError, match="truth must be probabilities"):         # before any method runs
        compare_methods(x, 1.0, truth=np.ones((2, 2, 2)), methods="latent_class")
    with pytest.raises(ValueError, match="methods must be a non-empty subset"):
        compare_methods(x, 1.0, methods="dpabc")


def test_log_densities_name_a_non_numeric_argument():
    from dplit.nested_model import summary_probs_paper
    with pytest.raises(TypeError, match="x must be an array of real numbers"):
        M.laplace_logpdf("a", 0.0, 1.0)
    with pytest.raises(TypeError, match="loc must be an array of real numbers"):
        M.laplace_logpdf(0.0, "a", 1.0)
    with pytest.raises(TypeError, match="k must be an array of real numbers"):
        M.two_sided_geometric_logpmf(["x"], 0.5)
    with pytest.raises(TypeError, match="k must be an array of real numbers"):
        M.discrete_gaussian_logpmf("k", 1.0)
    with pytest.raises(TypeError, match="p must be a NestedParams"):
        summary_probs_paper({"w": 1})


# ---------------------------------------------------------------- convergence thresholds and variables
def _normal_result():
    from dplit.sampling import Sampler, run

    def run_chain(state, n_steps, thin, rng):
        return {"x": rng.standard_normal(n_steps)[thin - 1::thin]}, {}
    return run(Sampler(init=lambda rng: None, run_chain=run_chain), n_iter=400, n_warmup=0, n_chains=2, rng=1,
               progress=False)


def test_convergence_thresholds_are_checked_with_a_fixed_n_iter_too():
    from dplit.sampling import Sampler, convergence_report, mpsrf, run
    res = _normal_result()
    with pytest.raises(TypeError, match="max_rhat"):
        convergence_report(res, max_rhat="1.01")
    with pytest.raises(ValueError, match="max_rhat must be > 1"):
        convergence_report(res, max_rhat=0.99)      # R-hat is never below 1: the bound could never be met
    with pytest.raises(ValueError, match="target_ess"):
        convergence_report(res, target_ess=-5)
    with pytest.raises(ValueError, match="max_rhat must be > 1"):
        run(Sampler(init=lambda rng: None, run_chain=lambda s, n, t, rng: ({"x": np.zeros(n)}, {})), n_iter=10,
            n_warmup=0, n_chains=2, rng=1, progress=False, max_rhat=0.99)
    with pytest.raises(ValueError, match=r"var must name a posterior variable of result, one of \['x'\]"):
        mpsrf(res, var="theta")
    assert convergence_report(res, warn=False)["converged"]


def test_dp_remcmc_refuses_b_above_the_release_size():
    from dplit.mcmc import dp_remcmc
    from dplit.release import release
    rel = release(np.random.default_rng(0).dirichlet([2.0, 3.0, 4.0], 300), eps1=1.0, eps2=1.0, rng=1, secure=False)
    with pytest.raises(ValueError, match=r"b must be <= n = 300.*got 1,000,000"):
        dp_remcmc(rel, b=10**6, n_iter=20, progress=False)


def test_the_registry_names_the_argument_that_is_wrong():
    from dplit.methods import applies, compare, fit, method
    from dplit.release import release
    rel = release(np.random.default_rng(0).dirichlet([2.0, 3.0, 4.0], 300), eps1=1.0, eps2=1.0, rng=1, secure=False)
    with pytest.raises(ValueError, match=r"name \(the method\) must be one of"):
        method("dpgibbs")
    with pytest.raises(ValueError, match=r"name \(the method\) must be one of"):
        fit(rel, "dp_boots")
    with pytest.raises(ValueError, match="needs a Release as data, got a records"):
        fit([[0.2, 0.8]], "dpmcmc", n_iter=20, progress=False)
    with pytest.raises(ValueError, match="prior must be one of"):
        applies(rel, "dpmcmc", prior="p9")                  # not a prior at all
    assert applies(rel, "dpboots", prior="p1") == "method dpboots takes no prior, got 'p1'"   # a prior, not this one's
    with pytest.raises(ValueError, match="methods must be one of"):
        compare(rel, methods=("dpboots", "dpmcmcc"), progress=False)
    with pytest.raises(ValueError, match="methods must name at least one method"):
        compare(rel, methods=(), progress=False)


def test_latent_class_selection_peers_and_households_refuse_what_they_cannot_mean():
    from dplit.latent_class import combine
    from dplit.margin_selection import sample_network, select_margins, two_way_report
    from dplit.nested_model import household_summaries
    from dplit.peers import PeerEstimate
    with pytest.raises(ValueError, match="variances must be >= 0"):
        combine(np.ones((5, 3)), -np.ones((5, 3)))
    x = np.random.default_rng(0).integers(0, 2, size=(200, 3))
    with pytest.raises(ValueError, match=r"degree must be <= p - 1 = 2"):
        select_margins(x, 1.0, degree=5, rng=1)
    assert select_margins(x[:, :2], 1.0, rng=1).degree == 1          # the default: min(2, p - 1)
    assert select_margins(x, 1.0, rng=1).degree == 2
    with pytest.raises(TypeError, match="fit must be the result of fit_latent_class"):
        two_way_report(None, x, [(0, 1)])
    with pytest.raises(ValueError, match="records must be a non-empty 2-D array"):
        household_summaries(np.arange(5))
    with pytest.raises(ValueError, match="table must hold probabilities"):
        PeerEstimate("pgm", 1.0, (2, 2), -np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"table must have the shape levels = \(2, 3\)"):
        PeerEstimate("pgm", 1.0, (2, 3), np.full((2, 2), 0.25))
    # a weight above 1 is a stronger dependence, not an error: the children follow their parents more often
    net = [(0, ()), (1, (0,))]
    agree = [np.mean(r[:, 0] == r[:, 1]) for r in (sample_network(net, 4000, weight=w, rng=2) for w in (0.6, 2.0))]
    assert agree[1] > agree[0] + 0.1


def _tiny_model(**change):
    from dplit.augmentation import PrivacyModel
    mods = dict(latent_f=lambda theta: np.zeros((5, 1)), post_f=lambda dmat, theta: np.array([0.0]),
                priv_f=lambda sdp, sx: -0.5 * float(np.sum((sdp - sx) ** 2)), st_f=lambda xi, sdp, i: xi)
    mods.update(change)
    return PrivacyModel(npar=1, **mods)


@pytest.mark.parametrize("change, module, exc", [
    (dict(latent_f=lambda data, theta: np.zeros((5, 1))), "latent_f", TypeError),       # a wrong signature
    (dict(post_f=lambda dmat, theta: {}["oops"]), "post_f", ValueError),                 # the user's bug
    (dict(priv_f=lambda sdp, sx: 1 / 0), "priv_f", ValueError),
    (dict(st_f=lambda xi, sdp, i: xi.undefined), "st_f", ValueError),
])
def test_a_failing_module_is_named(change, module, exc):
    from dplit.augmentation import dapper_sample
    with pytest.raises(exc, match=rf"^{module}, the model's module, failed when called as {module}\(") as info:
        dapper_sample(_tiny_model(**change), np.zeros(1), [0.0], n_iter=10, n_warmup=0, n_chains=1, rng=0,
                      progress=False)
    assert info.value.__cause__ is not None          # the user's own traceback stays chained


def test_summaries_and_stores_refuse_what_they_cannot_read(tmp_path):
    from dplit.augmentation import summary
    from dplit.release import Release
    from dplit.study_summary import load_results, summarise
    with pytest.raises(TypeError, match="result must be a dplit result"):
        summary({"alpha": [1, 2]})
    with pytest.raises(ValueError, match="df must be the rows of a study store.*check the path"):
        summarise(load_results(tmp_path / "none.jsonl"))       # a mistyped path reads as an empty store
    rel = Release.from_statistic([-1.0, -1.2], 100, 1e-3, 1.0)
    with pytest.raises(TypeError, match="path must be a file name"):
        rel.save(3)
