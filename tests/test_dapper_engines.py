"""Tests of dapper_sample's engines for plain Python modules: automatic compilation (probe, fallback notice,
cache), the compiled record sweep, record-slot statistics (dapper's Example 1 style) and batch st_f modules.
Each engine must run the same Markov chain as the Python loop, and sample the exact posterior."""

import math
import warnings

import numpy as np
import pytest
from dapper_examples import example1_model
from scipy import special, stats

from dplit.augmentation import EngineNotice, PrivacyModel, _python_chain, _statistic, dapper_sample
from dplit.sampling import ConvergenceWarning
from dplit.testing import rank_uniformity_pvalues, sbc_ranks

QUIET = dict(progress=False)
CELLS = np.array([[1.0, 1.0], [1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])


def _run(model, sdp, init, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", EngineNotice)
        return dapper_sample(model, sdp, np.asarray(init, float), **(QUIET | kw))


def _same_draws(a, b):
    return all(np.array_equal(a.posterior[v].values, b.posterior[v].values) for v in a.posterior.data_vars) and \
        np.array_equal(a.sample_stats["acceptance"].values, b.sample_stats["acceptance"].values)


# ---- a normal mean released with Laplace noise: plain Python modules that numba compiles -------------------------
N, SCALE = 6, 0.4


def latent(theta, rng):
    out = np.empty((N, 1))
    for i in range(N):
        out[i, 0] = theta[0] + rng.standard_normal()
    return out


def post(dmat, theta, rng):
    return np.array([dmat.sum() / (N + 1.0) + rng.standard_normal() / math.sqrt(N + 1.0)])


def priv(sdp, sx):
    return -abs(sdp - sx) / SCALE


def st(xi, sdp, i):
    return xi[0] / N


def test_auto_compiles_plain_python_modules_and_runs_the_python_chain():
    model = PrivacyModel(latent, post, priv, st, 1, ["mu"])
    kw = dict(n_iter=300, n_warmup=50, n_chains=2, rng=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", EngineNotice)        # all four compile: no notice
        auto = _run(model, 0.5, [0.0], **kw)
    py = _run(model, 0.5, [0.0], engine="python", **kw)
    sweep = _run(model, 0.5, [0.0], engine="sweep", **kw)
    assert auto.posterior.attrs["engine"] == "numba" and py.posterior.attrs["engine"] == "python"
    assert sweep.posterior.attrs["engine"] == "sweep"
    assert _same_draws(auto, py) and _same_draws(sweep, py)
    assert len(model._probes) == 1                          # compiled and probed once per model
    _run(model, 0.7, [0.0], **kw)
    assert len(model._probes) == 1


def test_fallback_names_the_module_and_forcing_numba_raises():
    def latent_choice(theta, rng):                          # Generator.choice: not in numba
        return CELLS[rng.choice(4, size=5, p=theta / theta.sum())]

    def post_d(dmat, theta, rng):
        t = rng.standard_gamma(np.array([np.sum((dmat == c).all(axis=1)) for c in CELLS]) + 1.0)
        return t / t.sum()

    def priv_scipy(sdp, sx):                                # a SciPy call: not in numba
        return float(stats.binom.logpmf(int(sx), 10, 0.75))

    def st_agree(xi, sdp, i):
        return np.sum(xi == sdp[i])

    def priv_agree(sdp, sx):
        return sx * math.log(0.75) + (sdp.size - sx) * math.log(0.25)

    sdp = CELLS[[0, 1, 1, 2, 3]]
    m_sweep = PrivacyModel(latent_choice, post_d, priv_agree, st_agree, 4, same_shape=False)
    m_python = PrivacyModel(latent_choice, post_d, priv_scipy, st_agree, 4, same_shape=False)
    with pytest.warns(EngineNotice, match=r"latent_f did not compile.*choice.*engine 'sweep'"):
        r = dapper_sample(m_sweep, sdp, np.full(4, 0.25), n_iter=50, n_warmup=10, n_chains=1, rng=1, **QUIET)
    assert r.posterior.attrs["engine"] == "sweep"
    with warnings.catch_warnings():
        warnings.simplefilter("error", EngineNotice)        # said once per model
        _run(m_sweep, sdp, np.full(4, 0.25), n_iter=20, n_warmup=0, n_chains=1, rng=2)
    with pytest.warns(EngineNotice, match=r"latent_f did not compile.*engine 'python'"):
        r = dapper_sample(m_python, sdp, np.full(4, 0.25), n_iter=20, n_warmup=0, n_chains=1, rng=1, **QUIET)
    assert r.posterior.attrs["engine"] == "python"
    assert m_python._probes[(2, (5, 2))]["why"]["priv_f"] is not None
    with pytest.raises(ValueError, match=r"engine='numba': latent_f does not compile"):
        dapper_sample(m_sweep, sdp, np.full(4, 0.25), engine="numba", **QUIET)
    with pytest.raises(ValueError, match=r"engine='sweep': priv_f does not compile"):
        dapper_sample(m_python, sdp, np.full(4, 0.25), engine="sweep", **QUIET)


def test_a_compiled_module_that_disagrees_with_python_is_not_used():
    def priv_overflow(sdp, sx):                             # 2**70 % 3: 1 in Python, 0 in numba's int64
        k = 1
        for _ in range(70):
            k *= 2
        return -abs(sdp - sx) / SCALE + k % 3

    model = PrivacyModel(latent, post, priv_overflow, st, 1)
    with pytest.warns(EngineNotice, match="priv_f did not compile.*differs from the Python module"):
        r = dapper_sample(model, 0.5, [0.0], n_iter=20, n_warmup=0, n_chains=1, rng=1, **QUIET)
    assert r.posterior.attrs["engine"] == "python"


# ---- dapper's Example 1 style: a term that is zero but its record's slot -------------------------------------------
def rr_model(n, style):
    """dapper's Example 1 for n records (examples/dapper_examples.py): dapper's own modules, the compact ones, batch
    modules, or dapper's st_f through the one-line adapter."""
    return example1_model(style, n=n, varnames=None)


def test_record_slots_are_detected_and_keep_the_chain():
    n = 9
    sdp = CELLS[[0, 1, 1, 2, 3, 3, 0, 2, 1]]
    kw = dict(n_iter=150, n_warmup=20, n_chains=1, rng=4)
    slot = _run(rr_model(n, "dapper"), sdp, np.full(4, 0.25), **kw)            # probe: slots, compiled sweep
    plain = _run(rr_model(n, "dapper"), sdp, np.full(4, 0.25), engine="python", **kw)   # no probe: full update
    compact = _run(rr_model(n, "compact"), sdp, np.full(4, 0.25), engine="python", **kw)
    assert slot.posterior.attrs["record_slots"] and slot.posterior.attrs["engine"] == "sweep"
    assert not plain.posterior.attrs["record_slots"]
    assert _same_draws(slot, plain) and _same_draws(slot, compact)
    assert not _run(rr_model(n, "compact"), sdp, np.full(4, 0.25), **kw).posterior.attrs["record_slots"]
    # the Python sweep with and without the slot update: the same draws
    m = rr_model(n, "dapper")
    out = []
    for use_slot in (True, False):
        g = np.random.default_rng(7)
        theta = np.full(4, 0.25)
        dmat = m.latent_f(theta, g)
        s = _statistic(m, dmat, sdp)
        state = {"theta": theta, "dmat": dmat, "st": s, "cur": m.priv_f(sdp, s), "slot": use_slot}
        out.append(_python_chain(m, state, 80, 1, sdp, g)[0])
        assert np.array_equal(state["st"], _statistic(m, state["dmat"], sdp))
    assert np.array_equal(out[0], out[1])


def test_a_term_that_leaves_its_slot_is_caught():
    n = 9

    def st_leaky(xi, sdp, i):                               # in its slot for the probed records only
        x = np.zeros((n, 2))
        x[i] = xi
        if i == 3:
            x[0] += xi
        return x

    def priv(sdp, sx):
        return -0.1 * np.abs(sdp - sx).sum()

    base = rr_model(n, "dapper")
    model = PrivacyModel(base.latent_f, base.post_f, priv, st_leaky, 4)
    with pytest.raises(RuntimeError, match="slot"):
        _run(model, np.zeros((n, 2)), np.full(4, 0.25), n_iter=40, n_warmup=0, n_chains=1, rng=1, engine="sweep")


def test_batch_modules_run_the_same_chain_and_check_their_shape():
    n = 9
    sdp = CELLS[[0, 1, 1, 2, 3, 3, 0, 2, 1]]
    kw = dict(n_iter=150, n_warmup=20, n_chains=1, rng=4)
    ref = _run(rr_model(n, "compact"), sdp, np.full(4, 0.25), engine="python", **kw)
    for style in ("batch", "adapter"):
        for engine in ("auto", "python"):
            r = _run(rr_model(n, style), sdp, np.full(4, 0.25), engine=engine, **kw)
            assert _same_draws(r, ref), (style, engine)
            assert r.posterior.attrs["engine"] == ("sweep" if engine == "auto" else "python")
    with pytest.raises(ValueError, match="engine='numba'"):
        dapper_sample(rr_model(n, "batch"), sdp, np.full(4, 0.25), engine="numba", **QUIET)
    base = rr_model(n, "batch")
    bad = PrivacyModel(base.latent_f, base.post_f, base.priv_f, lambda X, sdp, idx: X[:2, 0], 4, same_shape=False,
                       batch=True)
    with pytest.raises(ValueError, match="one row per record"):
        dapper_sample(bad, sdp, np.full(4, 0.25), **QUIET)
    with pytest.raises(ValueError, match="additive"):
        PrivacyModel(base.latent_f, base.post_f, base.priv_f, base.st_f, 4, additive=False, batch=True)


# ---- exactness of every engine ---------------------------------------------------------------------------------------
EXACT1 = np.array([0.2823, 0.3357, 0.1095, 0.2725])       # Example 1's exact posterior means (notebook 41)
SD1 = np.array([0.061, 0.064, 0.055, 0.060])


@pytest.mark.slow
def test_example_1_exact_posterior_means():
    sdp = np.repeat(CELLS, [104, 120, 74, 102], axis=0)
    r = _run(rr_model(400, "batch"), sdp, np.full(4, 0.25), n_iter=12_000, n_warmup=1000, n_chains=2, rng=11,
             engine="sweep")
    assert r.posterior.attrs["engine"] == "sweep"
    names = list(r.posterior.data_vars)
    means = np.array([r.posterior[v].values.mean() for v in names])
    ess = np.array([float(r.posterior.attrs["ess_bulk_min"])] * 4)
    assert np.all(np.abs(means - EXACT1) < 4.5 * SD1 / np.sqrt(ess) + 2e-3), (means, ess)


def test_example_1_with_dapper_modules_runs_the_exact_chain_of_the_batch_modules():
    """dapper's own modules (one Python call per record, found to stay in their slots) give the draws of the batch
    modules at Example 1's size, seed for seed, so the exact means checked above hold for them too, without a
    second long run."""
    sdp = np.repeat(CELLS, [104, 120, 74, 102], axis=0)
    kw = dict(n_iter=300, n_warmup=50, n_chains=2, rng=11, engine="sweep")
    slot, batch = (_run(rr_model(400, style), sdp, np.full(4, 0.25), **kw) for style in ("dapper", "batch"))
    assert slot.posterior.attrs["engine"] == "sweep" and slot.posterior.attrs["record_slots"]
    assert _same_draws(slot, batch)


@pytest.mark.parametrize("engine", ["python", "sweep", "numba"])
def test_randomized_response_posterior_is_exact_for_every_engine(engine):
    """Three binary records released by randomized response, plain Python modules: a mixture of Beta laws."""
    y = np.array([1.0, 0.0, 1.0])

    def lat(theta, rng):
        out = np.empty((3, 1))
        for i in range(3):
            out[i, 0] = 1.0 if rng.random() < theta[0] else 0.0
        return out

    def pst(dmat, theta, rng):
        k = dmat.sum()
        return np.array([rng.beta(1 + k, 4 - k)])

    def prv(sdp, sx):
        return sx * math.log(0.75) + (sdp.size - sx) * math.log(0.25)

    def stt(xi, sdp, i):
        return 1.0 if xi[0] == sdp[i] else 0.0

    n_iter = {"python": 6000, "sweep": 6000, "numba": 20_000}[engine]
    res = _run(PrivacyModel(lat, pst, prv, stt, 1, ["p"], same_shape=False), y, [0.5], n_iter=n_iter,
               n_warmup=500, n_chains=2, thin=5, rng=8, engine=engine)
    assert res.posterior.attrs["engine"] == engine
    xs = np.array(np.meshgrid([0, 1], [0, 1], [0, 1])).reshape(3, -1).T
    k = xs.sum(1)
    logw = special.betaln(1 + k, 4 - k) + np.where(xs == y, math.log(0.75), math.log(0.25)).sum(1)
    w = np.exp(logw - logw.max())
    w /= w.sum()

    def cdf(t):
        return sum(wk * stats.beta.cdf(t, 1 + kk, 4 - kk) for wk, kk in zip(w, k))

    assert stats.kstest(res.posterior["p"].values.ravel(), cdf).pvalue > 1e-3


@pytest.mark.slow
def test_sbc_of_the_compiled_sweep_and_a_planted_bug():
    def prv_bug(sdp, sx):
        return abs(sdp - sx) / SCALE

    def simulate(g):
        theta = g.normal()
        return theta, g.normal(theta, 1.0, N).mean() + g.laplace(0.0, SCALE)

    def posterior(model):
        def draw(sdp, L, g):
            return _run(model, sdp, [0.0], n_iter=10 * L, n_warmup=100, thin=10, n_chains=1, rng=g,
                        engine="sweep").posterior["mu"].values[0]
        return draw

    good = rank_uniformity_pvalues(sbc_ranks(simulate, posterior(PrivacyModel(latent, post, priv, st, 1, ["mu"])),
                                             150, rng=4))[0]
    bug = rank_uniformity_pvalues(sbc_ranks(simulate, posterior(PrivacyModel(latent, post, prv_bug, st, 1, ["mu"])),
                                            150, rng=4))[0]
    assert good > 1e-3 and bug < 1e-3
