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
