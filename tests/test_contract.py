"""One contract for every inference entry point (notebook 60): arguments, results, ledger, dispatch.

Each entry point runs on one small case. For each: the same seed gives the same draws whatever
``n_jobs``; the result carries every key of ``CONTRACT_ATTRS`` with the registry's method name and
the release's ledger; a misspelt keyword is refused by name; a netCDF round trip keeps draws and
attrs. The checkers themselves are shown to catch planted deviations (the last tests), so a
passing run means something.
"""

import inspect
import json
import math
import warnings

import numpy as np
import pytest
from numba import njit

from dplit import _arviz, results
from dplit.abc import dp_abc
from dplit.accounting import PrivacyBudget
from dplit.approx import dp_approx
from dplit.augmentation import PrivacyModel, dapper_sample
from dplit.bootstrap import boots, dp_boots
from dplit.cli import analyse as cli_analyse
from dplit.dirichlet import dirichlet_draws, sufficient_stat
from dplit.latent_class import fit_latent_class, release_margins
from dplit.mcmc import dp_mcmc, dp_remcmc, mcmc
from dplit.methods import REGISTRY, compare, fit
from dplit.nested import NestedParams, fit_nested, release_summaries, simulate_households
from dplit.release import release
from dplit.sampling import RUN_DEFAULTS, RUN_SETTINGS
from dplit.study import run_method

X = dirichlet_draws([2.2, 3.3, 4.4], 400, rng=1)
REL = release(X, eps1=0.75, eps2=0.25, candidates=[1e-1, 1e-2, 1e-3, 1e-4], tc=0.01, rng=2, secure=False, names=["a", "b", "c"])
TAB = np.random.default_rng(3).integers(0, 2, size=(400, 3))
MREL = release_margins(TAB, [(0, 1), (0, 2), (1, 2)], eps=1.0, rng=4, secure=False)
SREL = release_summaries(simulate_households(NestedParams.random(2, 2, 3, 3, rng=5), 300, rng=6), 1.0, rng=7,
                         secure=False)
CHAINS = dict(n_iter=200, n_warmup=100, n_chains=2, progress=False)


@njit(cache=True)
def _nb_latent(theta, rng):
    return (rng.random((20, 1)) < theta[0]).astype(np.float64)


@njit(cache=True)
def _nb_post(dmat, theta, rng):
    return np.array([rng.beta(1.0 + dmat.sum(), 1.0 + 20 - dmat.sum())])


@njit(cache=True)
def _nb_priv(sdp, sx):
    return -abs(sdp[0] - sx[0]) / 0.5


@njit(cache=True)
def _nb_st(xi, sdp, i):
    return np.array([xi[0] / 20.0])


DAPPER_BUDGET = PrivacyBudget(0.5)
DAPPER_BUDGET.spend(0.5, "mean of 20 bits (Laplace, scale 0.1)")

# name -> (call(rng, **extra) -> result, the method's attrs name, the release or budget it must report)
CASES = {
    "dp_boots": (lambda rng, **kw: dp_boots(REL, n_boot=120, rng=rng, **kw), "DPBoots", REL),
    "boots": (lambda rng, **kw: boots(X, n_boot=120, rng=rng, **kw), "Boots", None),
    "mcmc": (lambda rng, **kw: mcmc(sufficient_stat(X), len(X), rng=rng, **CHAINS, **kw), "MCMC", None),
    "dp_mcmc": (lambda rng, **kw: dp_mcmc(REL, rng=rng, thin=2, **CHAINS, **kw), "DPMCMC", REL),
    "dp_remcmc": (lambda rng, **kw: dp_remcmc(REL, b=20, rng=rng, thin=2, **CHAINS, **kw), "DPreMCMC", REL),
    "dp_abc": (lambda rng, **kw: dp_abc(REL, n_accept=100, accept_rate=0.2, rng=rng, progress=False, **kw),
               "DPABC", REL),
    "dp_approx": (lambda rng, **kw: dp_approx(REL, rng=rng, **CHAINS, **kw), "DPapprox", REL),
    "dapper_sample": (lambda rng, **kw: dapper_sample(
        PrivacyModel(_nb_latent, _nb_post, _nb_priv, _nb_st, 1), [0.4], [0.5], rng=rng, budget=DAPPER_BUDGET,
        **CHAINS, **kw), "dapper", DAPPER_BUDGET),
    "fit_latent_class": (lambda rng, **kw: fit_latent_class(MREL, k=2, rng=rng, **CHAINS, **kw), "latent_class",
                         MREL),
    "fit_nested": (lambda rng, **kw: fit_nested(SREL, rng=rng, **CHAINS, **kw), "nested", SREL),
    "cli.analyse": (lambda rng, **kw: cli_analyse(REL, "dpmcmc", seed=rng, n_iter=200, n_warmup=100, n_chains=2,
                                                  progress=False, **kw), "DPMCMC", REL),
}


def _run(name, rng, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # short chains: the contract, not convergence, is checked
        return CASES[name][0](rng, **kw)


def _first_draws(res):
    post = results.posterior(res)
    return np.asarray(post[next(iter(post.data_vars))].values)


def same_draws_any_n_jobs(call):
    """Problems with reproducibility: the same seed must give the same draws for n_jobs = 1 and 2."""
    a, b = call(n_jobs=1), call(n_jobs=2)
    return [] if np.array_equal(_first_draws(a), _first_draws(b)) else ["draws differ between n_jobs=1 and 2"]


def ledger_problems(res, method, source):
    """Problems with the method name and the privacy ledger of a result."""
    at = _arviz.group(res, "posterior").attrs
    out = [] if at["method"] == method else [f"method {at['method']!r} != {method!r}"]
    if source is None:
        if at["eps_total"] != math.inf:
            out.append(f"a non-private method reports eps_total {at['eps_total']}")
        return out
    budget = getattr(source, "budget", source)
    total = float(getattr(source, "eps_total", budget.spent))
    if not math.isclose(float(at["eps_total"]), total):
        out.append(f"eps_total {at['eps_total']} != the release's {total}")
    if results.ledger(res) != {e.label: e.eps for e in budget.entries}:
        out.append(f"eps_by_part {results.ledger(res)} is not the release's ledger")
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_same_seed_same_draws_for_any_n_jobs(name):
    assert same_draws_any_n_jobs(lambda **kw: _run(name, 11, **kw)) == []
    assert not np.array_equal(_first_draws(_run(name, 11)), _first_draws(_run(name, 12)))


@pytest.mark.parametrize("name", list(CASES))
def test_attrs_keys_and_meanings_are_the_contract(name):
    res = _run(name, 5)
    assert results.check_contract(res) == []
    _, method, source = CASES[name]
    assert ledger_problems(res, method, source) == []
    at = _arviz.group(res, "posterior").attrs
    assert at["delta"] == 0.0 and int(at["converged"]) in (0, 1) and at["runtime"] > 0 and at["seeds"]


@pytest.mark.parametrize("name", [n for n in CASES if n != "cli.analyse"])
def test_unknown_keywords_are_refused_by_name(name):
    with pytest.raises(TypeError, match="n_chain"):
        _run(name, 1, n_chain=3)


@pytest.mark.parametrize("name", list(CASES))
def test_netcdf_round_trip_keeps_draws_and_attrs(name, tmp_path):
    res = _run(name, 3)
    path = results.to_netcdf(res, tmp_path / "r.nc")
    back = results.from_netcdf(path)
    assert np.array_equal(_first_draws(back), _first_draws(res))
    assert results.check_contract(back) == []
    assert results.ledger(back) == results.ledger(res)


def test_every_sampler_takes_the_run_settings_with_the_shared_defaults():
    for m in REGISTRY.values():
        params = inspect.signature(m.function).parameters
        if m.sampler:
            assert all(k in params for k in RUN_SETTINGS), m.name
            assert all(params[k].default == v for k, v in RUN_DEFAULTS.items()), m.name
        assert "progress" in params and "n_jobs" in params and "rng" in params, m.name
        for key, value in m.defaults.items():
            assert params[key].default == value, (m.name, key)


def test_study_and_cli_dispatch_through_the_registry():
    rep = {"X": X, "unsplit": REL, "split": REL}
    effort = dict(n_boot=100, n_iter=200, n_warmup=100, n_chains=2, n_accept=100, accept_rate=0.2, b=20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        alpha, info = run_method("dpmcmc_p1", rep, effort, 4)
        direct = fit(REL, "dpmcmc", prior="p1", rng=4, n_iter=200, n_warmup=100, n_chains=2, n_jobs=1)
    assert np.array_equal(alpha, results.draws(direct, "alpha"))
    assert {"rhat_max", "ess_bulk_min"} <= set(info)


def test_compare_ledger_is_the_releases_and_streams_do_not_depend_on_the_others():
    small = {"dpboots": {"n_boot": 100}, "dpabc": {"n_accept": 100, "accept_rate": 0.2}}
    a = compare(REL, ["dpboots", "dpabc"], rng=1, settings=small)
    b = compare(REL, ["dpabc"], rng=1, settings={"dpabc": small["dpabc"]})
    assert set(a.table["eps_total"]) == {REL.eps_total}
    assert np.array_equal(a.table[a.table["method"] == "DPABC_p1"]["mean"].values, b.table["mean"].values)
    with pytest.raises(ValueError, match="cannot run DPBoots .method dpboots needs a Release"):
        compare(MREL, ["dpboots"])               # named, before any work


# --- the checkers catch planted deviations -------------------------------------------------------------

def test_reproducibility_check_catches_a_sampler_that_depends_on_n_jobs():
    def careless(n_jobs=1, **kw):           # seeds its chains from the thread count: not reproducible
        return _run("dp_approx", 11 + n_jobs, **kw)

    assert same_draws_any_n_jobs(careless) != []


def test_contract_check_catches_a_missing_attrs_key():
    res = _run("dp_abc", 5)
    for name in _arviz.groups(res):
        del res[name].attrs["eps_by_part"]
    assert any("eps_by_part" in p for p in results.check_contract(res))


def test_ledger_check_catches_an_eps_total_that_disagrees_with_the_release():
    res = _run("dp_mcmc", 5)
    _arviz.update_attrs(res, eps_total=REL.eps1)             # eps1 alone: the selection's eps2 forgotten
    assert any("eps_total" in p for p in ledger_problems(res, "DPMCMC", REL))
    res2 = _run("dp_boots", 5)
    _arviz.update_attrs(res2, eps_by_part=json.dumps({"statistic": REL.eps_total}))
    assert any("ledger" in p for p in ledger_problems(res2, "DPBoots", REL))


# --- names that moved out of dplit.results: found there for one release ------------------------------------------

def test_from_results_import_rhat_warns_and_gives_dplit_diagnostics_rhat():
    from dplit import diagnostics

    with pytest.warns(DeprecationWarning, match=r"dplit\.diagnostics\.rhat"):
        from dplit.results import rhat
    assert rhat is diagnostics.rhat
    for name in ("ess", "diagnostics"):
        with pytest.warns(DeprecationWarning, match=rf"dplit\.diagnostics\.{name}"):
            assert getattr(results, name) is getattr(diagnostics, name)


def test_results_lists_what_a_user_calls_and_still_finds_the_adapters_helpers():
    assert set(results.__all__) == {"CONTRACT_ATTRS", "check_contract", "ledger", "posterior", "draws", "attrs_of",
                                    "to_netcdf", "from_netcdf", "summary", "release_warnings"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")                    # plumbing moved to dplit._arviz: no warning
        for name in ("to_arviz", "groups", "group", "set_group", "update_attrs", "move_to_group", "is_result",
                     "name_components", "clean_attrs", "arviz_generation"):
            assert getattr(results, name) is getattr(_arviz, name)
        assert callable(results.privacy_attrs) and callable(results.composition_draws)   # the contract's own
    with pytest.raises(AttributeError, match="no_such_name"):
        results.no_such_name  # noqa: B018
