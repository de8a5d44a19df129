"""dplit.sampling: the driver every sampler uses (seeds, warm-up, threads, packaging, the report)."""

import warnings

import numpy as np
import pytest

from dplit.sampling import (
    ConvergenceWarning,
    Sampler,
    chain_generators,
    convergence_report,
    map_blocks,
    mpsrf,
    run,
    run_chains,
    warmup_windows,
)
from dplit.testing import rank_uniformity_pvalues, sbc_ranks


def normal_rwm(y, tau=1.0):
    """Random-walk Metropolis for mu | y, mu ~ N(0, tau^2), y_i ~ N(mu, 1), with a Python step."""
    y_sum, k = float(np.sum(y)), float(np.size(y))

    def logp(mu):
        return -0.5 * mu * mu / tau**2 + mu * y_sum - 0.5 * k * mu * mu

    def step(state, rng):
        mu, sd = state
        prop = mu + sd * rng.standard_normal()
        ok = np.log(rng.random()) < logp(prop) - logp(mu)
        mu = prop if ok else mu
        return (mu, sd), {"mu": mu}, {"acceptance": float(ok)}

    def adapt(state, draws, stats):
        return (state[0], 2.4 * max(np.std(draws["mu"]), 1e-3))

    return Sampler.from_step(lambda rng: (rng.normal(0.0, tau), 1.0), step, adapt)


Y = np.random.default_rng(0).normal(1.0, 1.0, size=10)
KW = dict(n_iter=600, n_warmup=200, n_chains=3, thin=2, progress=False)


def test_posterior_of_the_example_is_right_and_attrs_are_complete():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = run(normal_rwm(Y), rng=1, attrs={"method": "RWM"}, **dict(KW, n_iter=4000))
    mu = res.posterior["mu"].values
    assert mu.shape == (3, 2000)
    prec = Y.size + 1.0
    se = mu.std() / np.sqrt(res.posterior.attrs["ess_bulk_min"])
    assert abs(mu.mean() - Y.sum() / prec) < 4 * se
    attrs = res.posterior.attrs
    for key in ("method", "n_iter", "n_warmup", "n_chains", "thin", "seeds", "runtime", "rhat_max",
                "ess_bulk_min", "mpsrf", "converged"):
        assert key in attrs, key
    assert res.sample_stats["acceptance"].shape == (3, 2000)


def test_same_seed_same_draws_for_any_n_jobs():
    a = run_chains(normal_rwm(Y), rng=5, n_jobs=1, **KW)[0]["mu"]
    b = run_chains(normal_rwm(Y), rng=np.random.default_rng(5), n_jobs=3, **KW)[0]["mu"]
    c = run_chains(normal_rwm(Y), rng=6, n_jobs=1, **KW)[0]["mu"]
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert not np.array_equal(a[0], a[1])          # chains have their own streams


def test_chunking_does_not_change_the_draws():
    small = Sampler(**{**normal_rwm(Y).__dict__, "chunk": 7})
    a = run_chains(normal_rwm(Y), rng=2, **KW)[0]["mu"]
    b = run_chains(small, rng=2, **KW)[0]["mu"]
    assert np.array_equal(a, b)


def test_warmup_windows_and_generators():
    assert warmup_windows(1000) == [50, 100, 200, 250, 400]
    assert sum(warmup_windows(13)) == 13 and warmup_windows(0) == []
    gens, labels = chain_generators(3, 4)
    assert len(gens) == 4 == len(set(labels))


def test_short_runs_warn_and_long_runs_do_not():
    with pytest.warns(ConvergenceWarning, match="not converged"):
        run(normal_rwm(Y), rng=1, **dict(KW, n_iter=20, n_warmup=0, thin=1))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = run(normal_rwm(Y), rng=1, **dict(KW, n_iter=6000, n_warmup=500, thin=1))
    assert res.posterior.attrs["converged"] == 1


def test_mpsrf_and_the_report():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 400, 2))
    assert 1.0 <= mpsrf(x) < 1.05
    assert mpsrf(x + np.arange(4)[:, None, None]) > 2
    with pytest.warns(ConvergenceWarning, match="singular"):
        assert mpsrf(np.ones((3, 50, 2))) == np.inf        # every chain frozen: W = 0, no LinAlgError
    frozen = x.copy()
    frozen[2, :, 1] = 0.3                                   # one chain stuck in one coordinate
    with pytest.warns(ConvergenceWarning):
        assert mpsrf(frozen) == np.inf
    with pytest.raises(ValueError, match="2 chains"):
        mpsrf(x[:1])
    from dplit._arviz import to_arviz
    rep = convergence_report(to_arviz({"th": x}), warn=False)
    assert rep["converged"] and rep["rhat_max"] < 1.01


def test_map_blocks_is_reproducible_for_any_n_jobs():
    def fn(start, stop, g):
        return g.random(stop - start)

    one = np.concatenate(map_blocks(fn, 1001, block_size=64, rng=3, n_jobs=1))
    two = np.concatenate(map_blocks(fn, 1001, block_size=64, rng=3, n_jobs=2))
    assert one.shape == (1001,) and np.array_equal(one, two)
    assert map_blocks(fn, 0, block_size=8) == []
    with pytest.raises(ValueError, match="block_size"):
        map_blocks(fn, 5, block_size=0)
    with pytest.raises(ValueError, match="n_jobs"):
        map_blocks(fn, 5, block_size=2, n_jobs=0)


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="Sampler"):
        run(lambda: None, **KW)
    with pytest.raises(ValueError, match="thin"):
        run(normal_rwm(Y), **dict(KW, thin=10_000))
    with pytest.raises(ValueError, match="n_chains"):
        run(normal_rwm(Y), **dict(KW, n_chains=0))
    with pytest.raises(TypeError, match="progress"):
        run(normal_rwm(Y), **dict(KW, progress=1))
    with pytest.raises(TypeError, match="rng"):
        run(normal_rwm(Y), rng="seed", **KW)


@pytest.mark.slow
def test_sbc_of_the_example_sampler_and_a_planted_bug():
    def simulate(g):
        mu = g.normal()
        return mu, g.normal(mu, 1.0, size=5)

    def exact(y, L, g):
        return run_chains(normal_rwm(y), n_iter=10 * L, n_warmup=200, n_chains=1, thin=10, rng=g)[0]["mu"][0]

    def too_narrow(y, L, g):                 # the posterior sd halved: a planted bug
        draws = exact(y, L, g)
        return draws.mean() + 0.5 * (draws - draws.mean())

    assert rank_uniformity_pvalues(sbc_ranks(simulate, exact, 200, rng=4))[0] > 1e-3
    assert rank_uniformity_pvalues(sbc_ranks(simulate, too_narrow, 200, rng=4))[0] < 1e-3


def test_auto_extends_the_same_chains_until_converged():
    kw = dict(n_warmup=200, n_chains=2, thin=1, progress=False, rng=7)
    res = run(normal_rwm(Y), n_iter="auto", target_ess=500, max_iter=50_000, **kw)
    attrs = res.posterior.attrs
    assert attrs["converged"] == 1 and attrs["n_iter_requested"] == "auto"
    assert attrs["ess_bulk_min"] >= 500 and attrs["ess_tail_min"] >= 500 and attrs["rhat_max"] <= 1.01
    n = attrs["n_iter"]
    assert res.posterior["mu"].shape == (2, n) and n < 50_000
    # the chains were extended, not restarted: a fixed run of the same length gives the same draws
    fixed = run(normal_rwm(Y), n_iter=n, **kw)
    assert np.array_equal(fixed.posterior["mu"].values, res.posterior["mu"].values)
    again = run(normal_rwm(Y), n_iter="auto", target_ess=500, max_iter=50_000, **kw)
    assert np.array_equal(again.posterior["mu"].values, res.posterior["mu"].values)


def _last_bar(err):
    """The last state of a tqdm bar written to stderr."""
    return [line for line in err.replace("\r", "\n").splitlines() if "ESS" in line][-1]


def test_auto_progress_counts_toward_the_ess_target(capsys, monkeypatch):
    from dplit import sampling

    monkeypatch.setattr(sampling, "PROGRESS_DELAY", 0.0)    # these runs are short: show their bars at once
    run(normal_rwm(Y), n_iter="auto", target_ess=500, max_iter=50_000, n_warmup=200, n_chains=2, rng=7)
    last = _last_bar(capsys.readouterr().err)
    assert "500/500" in last and "R-hat 1.00" in last and "it/chain" in last, last
    with pytest.warns(ConvergenceWarning):
        run(normal_rwm(Y), n_iter="auto", target_ess=10**5, max_iter=3000, n_warmup=100, n_chains=2, rng=1)
    last = _last_bar(capsys.readouterr().err)
    done = int(last.split("/100000")[0].split()[-1])
    assert 100 < done < 10**5 and "3100 it/chain" in last, last     # the ESS reached; iterations with warm-up


def test_auto_stops_at_its_cap_with_a_warning_naming_what_failed():
    with pytest.warns(ConvergenceWarning, match="mu: .*ESS"):
        res = run(normal_rwm(Y), n_iter="auto", target_ess=10**6, max_iter=3000, n_warmup=100, n_chains=2,
                  progress=False, rng=1)
    assert res.posterior.attrs["n_iter"] == 3000 and res.posterior.attrs["converged"] == 0
    with pytest.raises(ValueError, match="max_rhat"):
        run(normal_rwm(Y), n_iter="auto", max_rhat=0.9, n_warmup=10, progress=False)
    with pytest.raises(ValueError, match="target_ess"):
        run(normal_rwm(Y), n_iter="auto", target_ess=-1, n_warmup=10, progress=False)


def test_one_chain_gets_a_split_rhat():
    from dplit._arviz import to_arviz
    x = np.random.default_rng(0).normal(size=(1, 1000, 2))
    rep = convergence_report(to_arviz({"th": x}), warn=False)
    assert rep["converged"] and np.isfinite(rep["rhat_max"]) and rep["rhat_max"] < 1.01
    drift = x + np.linspace(0, 3, 1000)[None, :, None]       # a chain still moving: its halves differ
    assert convergence_report(to_arviz({"th": drift}), warn=False)["rhat_max"] > 1.1
    res = run(normal_rwm(Y), rng=2, **dict(KW, n_chains=1, n_iter=6000))
    assert res.posterior.attrs["converged"] == 1


def test_mpsrf_of_tied_coordinates_is_finite():
    # E[x | alpha] sums to 1: W is singular in that direction, which is a constraint, not a frozen chain
    x = np.random.default_rng(3).normal(size=(4, 500, 3))
    comp = np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        assert abs(mpsrf(comp) - 1) < 0.02
    assert mpsrf(comp + np.array([0, 0, 0, 0.2])[:, None, None] * np.array([1, -1, 0])) > 1.2


def test_one_kept_draw_per_chain_is_reported_not_a_crash():
    with pytest.warns(ConvergenceWarning, match="R-hat"):
        res = run(normal_rwm(Y), n_iter=10, n_warmup=10, n_chains=2, thin=10, rng=1, progress=False)
    assert res.posterior["mu"].shape == (2, 1) and res.posterior.attrs["converged"] == 0
    with pytest.warns(ConvergenceWarning, match="R-hat"):
        one = run(normal_rwm(Y), n_iter=10, n_warmup=10, n_chains=1, thin=10, rng=1, progress=False)
    assert one.posterior["mu"].shape == (1, 1) and one.posterior.attrs["converged"] == 0


def test_progress_bar_appears_only_once_a_run_takes_a_while(monkeypatch, capsys):
    """progress=True everywhere: a short run makes no bar (no notebook widget either); a long one shows its count."""
    from dplit import sampling

    bar = sampling.LazyBar(total=10, desc="short")
    bar.update(3)
    bar.set_postfix_str("R-hat -", refresh=False)
    bar.close()
    assert bar._bar is None and bar.n == 3
    monkeypatch.setattr(sampling, "PROGRESS_DELAY", 0.0)
    bar = sampling.LazyBar(total=10, desc="long")
    bar.set_postfix_str("R-hat 1.2")
    bar.update(4)
    bar.n = 7
    bar.refresh()
    assert bar._bar is not None and bar._bar.n == 7 and bar._bar.total == 10
    bar.close()
