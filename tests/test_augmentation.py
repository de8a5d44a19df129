"""Tests of dplit.augmentation: the privacy model, first-call checks, both engines, exactness, summary."""

import math
import warnings

import numpy as np
import pytest
from dapper_examples import CELLS as CELLS_RR
from dapper_examples import table_modules
from numba import njit
from scipy import special, stats

from dplit.augmentation import PrivacyModel, dapper_sample, summary
from dplit.mechanisms import randomized_response_logpmf
from dplit.sampling import ConvergenceWarning
from dplit.testing import rank_uniformity_pvalues, sbc_ranks

N = 6
SCALE = 0.4


@njit
def nb_latent(theta, rng):
    out = np.empty((N, 1))
    for i in range(N):
        out[i, 0] = theta[0] + rng.standard_normal()
    return out


@njit
def nb_post(dmat, theta, rng):          # prior N(0, 1), x_i ~ N(theta, 1)
    return np.array([dmat.sum() / (N + 1.0) + rng.standard_normal() / math.sqrt(N + 1.0)])


@njit
def nb_priv(sdp, sx):                   # Laplace release of the mean
    return -abs(sdp - sx) / SCALE


@njit
def nb_st(xi, sdp, i):
    return xi[0] / N


def py_latent(theta, rng):
    return theta[0] + rng.standard_normal((N, 1))


def py_post(dmat, theta, rng):
    return np.array([dmat.sum() / (N + 1.0) + rng.standard_normal() / math.sqrt(N + 1.0)])


def py_priv(sdp, sx):
    return -abs(sdp - sx) / SCALE


def py_st(xi, sdp, i):
    return xi[0] / N


def nb_model():
    return PrivacyModel(nb_latent, nb_post, nb_priv, nb_st, 1, ["mu"])


def py_model(**kw):
    return PrivacyModel(py_latent, py_post, py_priv, py_st, 1, ["mu"], **kw)


QUIET = dict(progress=False)


def test_model_detects_rng_and_compiled_modules():
    m = nb_model()
    assert m.compiled and m.takes_rng == {"latent_f": True, "post_f": True, "priv_f": False, "st_f": False}
    p = py_model()
    assert not p.compiled and p.varnames == ["mu"]
    assert "numba" in repr(m) and "Python" in repr(p)
    assert PrivacyModel(py_latent, py_post, py_priv, py_st, 2).varnames == ["theta_0", "theta_1"]


@pytest.mark.parametrize("kw, word", [
    (dict(latent_f=None), "latent_f"), (dict(st_f="f"), "st_f"), (dict(npar=0), "npar"),
    (dict(npar=2.0), "npar"), (dict(varnames=["a", "b"]), "varnames"), (dict(varnames=["a", "a"], npar=2), "distinct"),
    (dict(additive="yes"), "additive"), (dict(same_shape=None), "same_shape")])
def test_model_bad_input_names_the_argument(kw, word):
    args = dict(latent_f=py_latent, post_f=py_post, priv_f=py_priv, st_f=py_st, npar=1) | kw
    with pytest.raises((TypeError, ValueError), match=word):
        PrivacyModel(**args)


def test_numba_modules_must_pass_the_generator_through():
    @njit
    def latent_no_rng(theta):
        return np.zeros((3, 1))

    @njit
    def priv_with_rng(sdp, sx, rng):
        return 0.0

    with pytest.raises(ValueError, match="latent_f"):
        PrivacyModel(latent_no_rng, nb_post, nb_priv, nb_st, 1)
    with pytest.raises(ValueError, match="priv_f"):
        PrivacyModel(nb_latent, nb_post, priv_with_rng, nb_st, 1)


@pytest.mark.parametrize("model, sdp, init, word", [
    (py_model(), 0.2, [0.0, 1.0], "init_par"),
    (py_model(), 0.2, [np.inf], "init_par"),
    (py_model(), np.zeros(3), [0.0], "sdp"),
    (py_model(), "0.2", [0.0], "sdp"),
    (py_model(), np.nan, [0.0], "sdp"),
    (PrivacyModel(lambda t: np.zeros(4), py_post, py_priv, py_st, 1), 0.2, [0.0], r"\(n, p\)"),
    (PrivacyModel(lambda t: np.zeros((0, 1)), py_post, py_priv, py_st, 1), 0.2, [0.0], r"\(n, p\)"),
    (PrivacyModel(lambda t: np.zeros((4, 2)), py_post, py_priv, lambda x, s, i: x[: 1 + i % 2], 1), 0.2, [0.0],
     "one shape"),
    (PrivacyModel(py_latent, py_post, lambda s, x: "a", py_st, 1), 0.2, [0.0], "real number"),
    (PrivacyModel(py_latent, py_post, lambda s, x: -np.inf, py_st, 1), 0.2, [0.0], "rules out"),
    (PrivacyModel(py_latent, py_post, lambda s, x: np.inf, py_st, 1), 0.2, [0.0], r"priv_f.*is inf.*below \+inf"),
    (PrivacyModel(py_latent, py_post, lambda s, x: np.nan, py_st, 1), 0.2, [0.0], r"priv_f.*is nan.*below \+inf"),
    (PrivacyModel(py_latent, lambda d, t, rng: np.zeros(2), py_priv, py_st, 1), 0.2, [0.0], "post_f"),
    (PrivacyModel(py_latent, py_post, py_priv, lambda x, s, i: "x", 1), 0.2, [0.0], "st_f"),
])
def test_first_call_checks_the_modules_before_any_chain(model, sdp, init, word):
    with pytest.raises((TypeError, ValueError), match=word):
        dapper_sample(model, sdp, init, n_iter=10, **QUIET)


def test_zero_acceptance_over_the_whole_run_warns():
    seen = []

    def priv_one_state(sdp, sx):         # finite only at the first statistic it is shown (the init_par check)
        if not seen:
            seen.append(sx)
        return 0.0 if sx == seen[0] else -np.inf

    with pytest.warns(UserWarning, match="acceptance was 0 over the whole run.*priv_f"):
        res = dapper_sample(PrivacyModel(py_latent, py_post, priv_one_state, py_st, 1), 0.2, [0.0], n_iter=20,
                            n_chains=2, rng=1, **QUIET)
    assert float(res.sample_stats["acceptance"].max()) == 0.0
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*acceptance was 0")
        ok = dapper_sample(py_model(), 0.2, [0.0], n_iter=200, n_chains=2, rng=1, **QUIET)   # accepts: silent
    assert float(ok.sample_stats["acceptance"].mean()) > 0


@pytest.mark.parametrize("kw, word", [
    (dict(n_iter=0), "n_iter"), (dict(n_warmup=-1), "n_warmup"), (dict(n_chains=0), "n_chains"),
    (dict(thin=0), "thin"), (dict(progress=1), "progress"), (dict(n_jobs=0), "n_jobs"), (dict(engine="R"), "engine"),
    (dict(rng=-1), "rng"), (dict(n_iter="auto", n_chains=1), "n_chains")])
def test_run_settings_are_checked(kw, word):
    with pytest.raises((TypeError, ValueError), match=word):
        dapper_sample(nb_model(), 0.2, [0.0], **(QUIET | kw))


def test_engine_numba_needs_modules_that_compile_and_an_additive_statistic():
    def py_latent_list(theta, rng):                 # a list comprehension of Generator draws: numba refuses it
        return np.array([[theta[0] + rng.standard_normal()] for _ in range(N)])

    with pytest.raises(ValueError, match="engine='numba': latent_f does not compile"):
        dapper_sample(PrivacyModel(py_latent_list, py_post, py_priv, py_st, 1), 0.2, [0.0], engine="numba", **QUIET)
    full = PrivacyModel(nb_latent, nb_post, nb_priv, njit(lambda d, s: d.sum() / N), 1, additive=False)
    with pytest.raises(ValueError, match="numba"):
        dapper_sample(full, 0.2, [0.0], engine="numba", **QUIET)


def test_python_and_numba_engines_give_identical_draws_for_any_threads():
    kw = dict(n_iter=400, n_warmup=100, n_chains=2, thin=2, rng=5, **QUIET)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = dapper_sample(nb_model(), 0.7, [0.0], engine="python", n_jobs=1, **kw)
        b = dapper_sample(nb_model(), 0.7, [0.0], n_jobs=2, **kw)
        c = dapper_sample(py_model(), 0.7, [0.0], **kw)        # Python modules, same streams
    assert a.posterior.attrs["engine"] == "python" and b.posterior.attrs["engine"] == "numba"
    assert np.array_equal(a.posterior["mu"].values, b.posterior["mu"].values)
    assert np.array_equal(a.posterior["mu"].values, c.posterior["mu"].values)
    assert b.posterior["mu"].shape == (2, 200) and b.sample_stats["acceptance"].shape == (2, 200)
    acc = b.sample_stats["acceptance"].values
    assert np.all((acc >= 0) & (acc <= 1)) and 0.1 < acc.mean() < 1.0


def test_an_iteration_is_dappers():
    """dapper's iteration, written out: theta from post_f given the records, one latent_f database of proposals,
    then the records in order, each accepted by the ratio of mechanism densities. dapper keeps theta before the
    iteration's post_f, dapper_sample after it: the same sequence, one iteration apart."""
    n_steps, sdp = 60, 0.7
    g = np.random.default_rng(11).spawn(1)[0]            # the chain's Generator, as dapper_sample spawns it
    theta = np.array([0.0])
    dmat = py_latent(theta, g)
    st = sum(py_st(dmat[i], sdp, i) for i in range(N))
    kept_before, kept_after, acc = [], [], []
    for _ in range(n_steps):
        kept_before.append(theta[0])
        theta = py_post(dmat, theta, g)
        prop = py_latent(theta, g)
        n_acc = 0
        for i in range(N):
            sn = st - py_st(dmat[i], sdp, i) + py_st(prop[i], sdp, i)
            a = py_priv(sdp, sn) - py_priv(sdp, st)
            if a >= 0.0 or g.random() < math.exp(a):     # a uniform only when the ratio is below 1
                dmat[i], st, n_acc = prop[i], sn, n_acc + 1
        kept_after.append(theta[0])
        acc.append(n_acc / N)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = dapper_sample(py_model(), sdp, [0.0], n_iter=n_steps, n_warmup=0, n_chains=1,
                            rng=np.random.default_rng(11), **QUIET)
    draws = res.posterior["mu"].values[0]
    assert np.allclose(draws, kept_after, rtol=0, atol=1e-12)
    assert np.allclose(draws[:-1], kept_before[1:], rtol=0, atol=1e-12) and kept_before[0] == 0.0
    assert np.allclose(res.sample_stats["acceptance"].values[0], acc)


def test_dapper_module_style_runs_the_compact_chain():
    """dapper's Example 1 style (the term of record i is an n x 2 matrix, zero but row i; priv_f counts the
    entries that agree with the release) and the compact style (the term is record i's agreements) give the
    same log density on every database, so the same draws, bit for bit."""
    n = 7
    sdp = CELLS_RR[[0, 1, 1, 2, 3, 3, 0]].astype(float)
    m = table_modules(n)
    latent, post, st_dapper, priv_dapper = m["latent"], m["post"], m["st_dapper"], m["priv_dapper"]
    st_compact, priv_compact = m["st_compact"], m["priv_compact"]
    kw = dict(n_iter=150, n_warmup=20, n_chains=1, rng=4, **QUIET)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = dapper_sample(PrivacyModel(latent, post, priv_dapper, st_dapper, 4), sdp, np.full(4, 0.25), **kw)
        b = dapper_sample(PrivacyModel(latent, post, priv_compact, st_compact, 4, same_shape=False), sdp,
                          np.full(4, 0.25), **kw)
    for v in a.posterior.data_vars:
        assert np.array_equal(a.posterior[v].values, b.posterior[v].values)
    assert np.array_equal(a.sample_stats["acceptance"].values, b.sample_stats["acceptance"].values)


def test_general_path_equals_the_additive_path_on_integer_statistics():
    """A count statistic recomputed from the whole database gives the same draws as the running sum."""
    def latent(theta, rng):
        return (rng.random((5, 1)) < theta[0]).astype(float)

    def post(dmat, theta, rng):
        k = dmat.sum()
        return np.array([rng.beta(1 + k, 6 - k)])

    def priv(sdp, sx):
        return -abs(sdp - sx) * 0.7

    add = PrivacyModel(latent, post, priv, lambda x, s, i: x[0], 1)
    full = PrivacyModel(latent, post, priv, lambda d, s: d.sum(), 1, additive=False)
    kw = dict(n_iter=300, n_warmup=0, n_chains=1, rng=3, **QUIET)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ra, rf = dapper_sample(add, 3.0, [0.5], **kw), dapper_sample(full, 3.0, [0.5], **kw)
    assert np.array_equal(ra.posterior["theta_0"].values, rf.posterior["theta_0"].values)
    assert rf.posterior.attrs["additive"] == 0


def test_randomized_response_posterior_is_exact():
    """Three binary records released by randomized response: a mixture of Beta laws, by enumeration."""
    y = np.array([1.0, 0.0, 1.0])

    @njit
    def latent(theta, rng):
        out = np.empty((3, 1))
        for i in range(3):
            out[i, 0] = 1.0 if rng.random() < theta[0] else 0.0
        return out

    @njit
    def post(dmat, theta, rng):
        k = dmat.sum()
        return np.array([rng.beta(1 + k, 4 - k)])

    @njit
    def priv(sdp, sx):
        return sx * math.log(0.75) + (sdp.size - sx) * math.log(0.25)

    @njit
    def st(xi, sdp, i):
        return 1.0 if xi[0] == sdp[i] else 0.0

    res = dapper_sample(PrivacyModel(latent, post, priv, st, 1, ["p"], same_shape=False), y, [0.5],
                        n_iter=20_000, n_warmup=500, n_chains=2, thin=5, rng=8, **QUIET)
    xs = np.array(np.meshgrid([0, 1], [0, 1], [0, 1])).reshape(3, -1).T
    k = xs.sum(1)
    logw = special.betaln(1 + k, 4 - k) + randomized_response_logpmf(np.broadcast_to(y, xs.shape), xs).sum(1)
    w = np.exp(logw - logw.max())
    w /= w.sum()
    cdf = lambda t: sum(wk * stats.beta.cdf(t, 1 + kk, 4 - kk) for wk, kk in zip(w, k))  # noqa: E731
    assert stats.kstest(res.posterior["p"].values.ravel(), cdf).pvalue > 1e-3


def test_same_shape_rule_and_its_escape():
    y = np.array([1.0, 0.0, 1.0])
    kw = dict(latent_f=lambda t, rng: (rng.random((3, 1)) < t[0]).astype(float),
              post_f=lambda d, t, rng: np.array([rng.beta(1 + d.sum(), 4 - d.sum())]),
              priv_f=lambda s, x: x * math.log(0.75) + (3 - x) * math.log(0.25),
              st_f=lambda xi, s, i: float(xi[0] == s[i]), npar=1)
    with pytest.raises(ValueError, match="same_shape"):
        dapper_sample(PrivacyModel(**kw), y, [0.5], n_iter=10, **QUIET)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = dapper_sample(PrivacyModel(**kw, same_shape=False), y, [0.5], n_iter=50, n_chains=1, **QUIET)
    assert res.posterior["theta_0"].shape == (1, 50)


def test_summary_has_dappers_columns_and_values():
    res = dapper_sample(nb_model(), 0.7, [0.0], n_iter=3000, n_warmup=300, n_chains=2, rng=2, **QUIET)
    tab = summary(res)
    assert list(tab.columns) == ["mean", "median", "sd", "mad", "q5", "q95", "rhat", "ess_bulk", "ess_tail"]
    x = res.posterior["mu"].values.ravel()
    assert tab.loc["mu", "mean"] == pytest.approx(x.mean())
    assert tab.loc["mu", "q95"] == pytest.approx(np.quantile(x, 0.95))
    assert tab.loc["mu", "mad"] == pytest.approx(1.4826 * np.median(np.abs(x - np.median(x))))
    assert 0.99 < tab.loc["mu", "rhat"] < 1.02 and tab.loc["mu", "ess_bulk"] > 200


def test_one_chain_report_reads_its_two_halves():
    res = dapper_sample(nb_model(), 0.7, [0.0], n_iter=4000, n_chains=1, rng=3, **QUIET)
    attrs = res.posterior.attrs
    assert attrs["converged"] == 1 and 1.0 <= attrs["rhat_max"] < 1.01 and attrs["n_warmup"] == 1000
    assert np.isfinite(summary(res).loc["mu", "rhat"])
    with pytest.warns(ConvergenceWarning, match="not converged"):
        dapper_sample(nb_model(), 0.7, [0.0], n_iter=20, n_chains=1, rng=3, **QUIET)


def test_same_seed_same_draws_and_modules_get_the_chain_generator():
    seen = []

    def latent(theta, rng):
        seen.append(rng)
        return theta[0] + rng.standard_normal((N, 1))

    m = PrivacyModel(latent, py_post, py_priv, py_st, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = dapper_sample(m, 0.1, [0.0], n_iter=50, rng=9, **QUIET)
        b = dapper_sample(m, 0.1, [0.0], n_iter=50, rng=np.random.default_rng(9), **QUIET)
    assert np.array_equal(a.posterior["theta_0"].values, b.posterior["theta_0"].values)
    assert all(isinstance(g, np.random.Generator) for g in seen)


@pytest.mark.slow
def test_sbc_through_the_generic_interface_and_a_planted_bug():
    @njit
    def priv_bug(sdp, sx):
        return abs(sdp - sx) / SCALE

    def simulate(g):
        theta = g.normal()
        return theta, g.normal(theta, 1.0, N).mean() + g.laplace(0.0, SCALE)

    def posterior(model):
        def draw(sdp, L, g):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                r = dapper_sample(model, sdp, [0.0], n_iter=10 * L, n_warmup=100, thin=10, rng=g, **QUIET)
            return r.posterior["mu"].values[0]
        return draw

    good = rank_uniformity_pvalues(sbc_ranks(simulate, posterior(nb_model()), 200, rng=4))[0]
    bug = rank_uniformity_pvalues(sbc_ranks(
        simulate, posterior(PrivacyModel(nb_latent, nb_post, priv_bug, nb_st, 1, ["mu"])), 200, rng=4))[0]
    assert good > 1e-3 and bug < 1e-3
