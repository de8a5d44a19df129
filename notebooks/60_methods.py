# %% [markdown]
# # One contract, every method: a registry, one dispatcher, and all methods on one release
#
# dplit implements ten inference methods: DPBoots, DPMCMC, DPreMCMC, DPABC and DPapprox for compositional data released under DP (Guo, Barrientos and Peña), their non-private benchmarks Boots and MCMC, dapper's data augmentation for any statistic, and the latent-class models of Nixon et al. for contingency tables and households. This notebook states what they share (the same arguments, the same result, the same privacy ledger), lists them in one registry that the command line, the simulation study and the ATUS application all dispatch through, and runs every method that applies to a release in one call, `compare`: a comparison no peer package offers.
#
# * **For:** running any dplit method through one call, and all of them on the same release.
# * **You need:** a release of the kind a method reads.
# * **You get:** each method's posterior or bootstrap in one format, and a side-by-side comparison (`compare`, `dplit compare`).

# %%
#| default_exp methods

# %% [markdown]
# ## Parameters
#
# Sizes come from the size switch (`DPLIT_QUICK=1` gives the quick sizes of the test suite); every random draw comes
# from a generator seeded here.

# %%
import inspect
import json
import math
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np

from dplit.config import size
from dplit.dirichlet import dirichlet_draws
from dplit.release import release
from dplit.results import CONTRACT_ATTRS, check_contract, ledger
from dplit.sampling import RUN_DEFAULTS, RUN_SETTINGS

SEED = 20261125
rng = np.random.default_rng(SEED)
n_rec = size(full=2_000, quick=500)            # records of the simulated release
effort = size(full=1.0, quick=0.1)             # fraction of each method's default effort in the live comparison

# %% [markdown]
# ## The result first: three methods on one release
#
# What an analyst gets, from the finished module `dplit.methods` (its code follows). 1,000 records from
# $\mathrm{Dirichlet}(2.2, 3.3, 4.4)$ are released once by Guo et al.'s Algorithm 1 at $\epsilon = 1$ (Sec. 3.3:
# $\epsilon_1 = 0.75$ for the noisy censored statistic, $\epsilon_2 = 0.25$ for the threshold), and one call of `compare`
# runs DPBoots (Alg. 2), DPMCMC and DPapprox (Sec. 4.2-4.3, prior p1) on that release alone: one table row per method
# and component with the mean and 95% interval of $E[\mathbf x] = \boldsymbol\alpha / \sum_j \alpha_j$, $\hat R$, the
# seconds taken and the budget spent, and one figure. The check: every interval holds the true $E[\mathbf x]$ (the
# dashed line), every chain converged, and every method reports the release's $\epsilon = 1$, no more. Section "All
# methods on one release" runs every method of the registry the same way.

# %%
# NBVAL_IGNORE_OUTPUT
from dplit.methods import compare

alpha_first = np.array([2.2, 3.3, 4.4])
rel_first = release(dirichlet_draws(alpha_first, 1000, rng=SEED + 1), eps1=0.75, eps2=0.25,
                    candidates=[1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6], tc=0.01, rng=SEED + 2, secure=False,
                    names=["x1", "x2", "x3"])
truth_first = alpha_first / alpha_first.sum()
effort_first = {"dpboots": {"n_boot": 500}, "dpmcmc": {"n_iter": 2000, "n_warmup": 1000}, "dpapprox": {"n_iter": 2000}}
first = compare(rel_first, ["dpboots", "dpmcmc", "dpapprox"], rng=SEED + 3, truth=truth_first, progress=False,
                settings=effort_first)
print(first.table[["method", "component", "mean", "lower", "upper", "rhat", "seconds", "eps_total"]]
      .round(4).to_string(index=False))
holds = (first.table["lower"] <= np.tile(truth_first, 3)) & (np.tile(truth_first, 3) <= first.table["upper"])
assert holds.all() and first.not_converged() == []
assert rel_first.eps_total == 1.0 and (first.table["eps_total"] == rel_first.eps_total).all()
fig = first.plot()
fig.set_size_inches(7, 2.6)          # the column's width
fig.tight_layout()

# %% [markdown]
# ## The contract
#
# **Arguments.** Every sampler takes the run settings of `dplit.sampling.run` by the same names: `n_iter` (an
# integer, or `"auto"`: extend the chains until every monitored quantity reaches a bulk and tail ESS of `target_ess`
# and $\hat R \le$ `max_rhat`, or until `max_iter` iterations or `max_time` seconds), `n_warmup`, `n_chains`, `thin`,
# `rng`, `progress` and `n_jobs`. The shared ones have the same defaults everywhere; `n_iter`, `n_warmup` and `thin`
# are each method's own, because an iteration of DPMCMC (a sweep over every latent record) and one of DPapprox (a
# few Gaussian draws) cost very different amounts. The registry below lists them. The same `rng` gives the same draws
# for any `n_jobs`.
#
# **Results.** Every method returns an ArviZ object (`InferenceData` under ArviZ 0.x, an `xarray.DataTree` under
# 1.x) with a `posterior` of `(chain, draw)` draws: the bootstrap's replicates and ABC's accepted draws are one chain
# of independent draws. Its `attrs` carry the keys of `CONTRACT_ATTRS`, with one meaning for every method:

# %%
for key, meaning in CONTRACT_ATTRS.items():
    print(f"{key:>14}: {meaning}")
print("run settings:", ", ".join(RUN_SETTINGS))
print("shared defaults:", RUN_DEFAULTS)

# %% [markdown]
# **The ledger.** A release object (`Release`, `MarginRelease`, `SummaryRelease`) carries its ledger: `budget` is a
# `dplit.accounting.PrivacyBudget` with one entry per charge, and `eps_total` its total. A result copies it into
# `eps_total` and `eps_by_part` (JSON, read back with `dplit.results.ledger`): what a user reads as spent is the
# release's own account, by construction. Inference spends nothing more (post-processing, Guo et al. Prop. 1).
#
# ## The registry
#
# One entry per method: its name, the algorithm's name as it appears in `attrs["method"]`, the function, what it
# needs (a `Release`, the records themselves for the non-private benchmarks, a `MarginRelease`, a `SummaryRelease`,
# or dapper's modules), the priors it takes, its default effort, the quantity its results are compared on, and the
# options the command line passes on. Methods of higher layers (dapper, the latent-class models) are named by
# module and function and imported when first used, so that the registry sits below the study and the ATUS
# application that dispatch through it.

# %%
#| export
import importlib
import inspect
import time
import warnings
import zlib
from dataclasses import dataclass, field

import numpy as np

from dplit import _validate as V
from dplit import diagnostics, results


@dataclass(frozen=True)
class Method:
    """One inference method of dplit, as the registry knows it.

    Attributes
    ----------
    name : str
        The registry's key (``"dpmcmc"``): what the CLI's ``--method`` and the study's method names use.
    label : str
        The algorithm's name in a result's ``attrs["method"]`` (``"DPMCMC"``).
    entry : str
        ``"module:function"`` of the entry point, imported when first used.
    needs : str
        What the entry point takes first: ``"Release"``, ``"records"`` (the confidential data: the
        non-private benchmarks), ``"MarginRelease"``, ``"SummaryRelease"`` or ``"PrivacyModel"``.
    priors : tuple of str
        Prior names it takes (empty: no ``prior`` argument). p3, p4 and p5 need a split release.
    defaults : dict
        Its default effort, as in the entry point's signature (checked by the notebook's test).
    estimand : str
        The posterior variable that :func:`compare` summarises (``"mean_composition"``: E[x | alpha]).
    options : tuple of str
        Keywords the command line passes on besides ``prior``, ``rng`` and ``progress``.
    sampler : bool
        True when it takes the run settings of :data:`dplit.sampling.RUN_SETTINGS`.
    """

    name: str
    label: str
    entry: str
    needs: str
    priors: tuple = ()
    defaults: dict = field(default_factory=dict)
    estimand: str = "mean_composition"
    options: tuple = ()
    sampler: bool = True

    @property
    def function(self):
        """The entry point (imported on first use)."""
        module, name = self.entry.split(":")
        return getattr(importlib.import_module(module), name)

# %%
#| export
_CHAIN_OPTIONS = ("n_iter", "n_warmup", "n_chains", "thin")

#: Every inference method of dplit, by name.
REGISTRY = {m.name: m for m in (
    Method("boots", "Boots", "dplit.bootstrap:boots", "records", defaults={"n_boot": 1000}, options=("n_boot",),
           sampler=False),
    Method("dpboots", "DPBoots", "dplit.bootstrap:dp_boots", "Release", defaults={"n_boot": 1000},
           options=("n_boot", "part"), sampler=False),
    Method("mcmc", "MCMC", "dplit.mcmc:mcmc", "records", ("p1",),
           {"n_iter": 2_000, "n_warmup": 500, "thin": 1}, options=_CHAIN_OPTIONS),
    Method("dpmcmc", "DPMCMC", "dplit.mcmc:dp_mcmc", "Release", ("p1", "p3", "p4", "p5"),
           {"n_iter": "auto", "n_warmup": 2_000, "thin": None}, options=_CHAIN_OPTIONS),
    Method("dpremcmc", "DPreMCMC", "dplit.mcmc:dp_remcmc", "Release", ("p1", "p3", "p4", "p5"),
           {"n_iter": "auto", "n_warmup": 2_000, "thin": None}, options=_CHAIN_OPTIONS + ("b",)),
    Method("dpabc", "DPABC", "dplit.abc:dp_abc", "Release", ("p1", "p2", "p3", "p4", "p5"),
           {"n_accept": 1000, "accept_rate": 0.1}, options=("n_accept", "accept_rate"), sampler=False),
    Method("dpapprox", "DPapprox", "dplit.approx:dp_approx", "Release", ("p1", "p3", "p4"),
           {"n_iter": "auto", "n_warmup": 2_000, "thin": 10}, options=_CHAIN_OPTIONS),
    Method("dapper", "dapper", "dplit.augmentation:dapper_sample", "PrivacyModel",
           defaults={"n_iter": 2_000, "n_warmup": 1_000, "thin": 1}, estimand="", options=_CHAIN_OPTIONS),
    Method("latent_class", "latent_class", "dplit.latent_class:fit_latent_class", "MarginRelease",
           defaults={"n_iter": 5_000, "n_warmup": 2_000, "thin": 1}, estimand="margin_probs",
           options=_CHAIN_OPTIONS),
    Method("nested", "nested", "dplit.nested:fit_nested", "SummaryRelease",
           defaults={"n_iter": 10_000, "n_warmup": 10_000, "thin": 5}, estimand="summary_probs",
           options=_CHAIN_OPTIONS),
)}


def method(name):
    """The registry's entry for ``name`` (a key of :data:`REGISTRY`); a ValueError lists the names."""
    return REGISTRY[V.choice(name, "name (the method)", tuple(REGISTRY))]

# %% [markdown]
# Checks: the registry says what the code does. Every entry point exists; its defaults are the ones its signature
# declares; every sampler takes every run setting by name with the shared defaults; no entry point accepts
# keywords it does not name (no `**kwargs` that would swallow a misspelt `n_chain`), except DPBoots' documented noise
# options.

# %%
for m in REGISTRY.values():
    sig = inspect.signature(m.function)
    params = sig.parameters
    for key, value in m.defaults.items():
        assert params[key].default == value, (m.name, key, params[key].default, value)
    if m.sampler:
        missing = [k for k in RUN_SETTINGS if k not in params]
        assert not missing, (m.name, missing)
        for key, value in RUN_DEFAULTS.items():
            assert params[key].default == value, (m.name, key, params[key].default, value)
    var_kw = [p.name for p in params.values() if p.kind is p.VAR_KEYWORD]
    assert var_kw == ([] if m.name != "dpboots" else ["noise_options"]), (m.name, var_kw)
    assert ("prior" in params) == bool(m.priors), m.name
print(f"{len(REGISTRY)} methods; every sampler takes {len(RUN_SETTINGS)} run settings with the shared defaults")

# %% [markdown]
# ## One dispatcher
#
# `fit(data, method, ...)` runs one method of the registry on what it needs, with the registry's defaults for
# everything not given. It refuses, naming the method and the rule, a release of the wrong kind, a prior the method
# does not take, a prior that needs a split release on an unsplit one, and a keyword the method does not take. The
# command line (`dplit analyse`), the simulation study (`dplit.study.run_method`) and the ATUS application
# (`dplit.atus.analyse`) call it; nothing else in dplit chooses an entry point by name.

# %%
#| export
_SPLIT_PRIORS = ("p2", "p3", "p4", "p5")      # built from the D1 part of a split release


def _kind(data):
    """What ``data`` is, in the registry's terms ('Release', 'MarginRelease', ...; 'records' for an array)."""
    name = type(data).__name__
    if name in ("Release", "MarginRelease", "SummaryRelease", "PrivacyModel"):
        return name
    if isinstance(data, (np.ndarray, list, tuple)):
        return "records"
    return name


def applies(data, name, prior=None):
    """Why method ``name`` (with ``prior``) cannot run on ``data``; None when it can."""
    m = method(name)
    if isinstance(prior, str):
        # imported here: the registry stays light to import (the CLI starts with it)
        from dplit.priors import PRIOR_NAMES

        V.choice(prior, "prior", PRIOR_NAMES)    # not a prior at all (a typo), as against one the method does not take
    kind = _kind(data)
    if kind != m.needs:
        return f"method {name} needs a {m.needs} as data, got a {kind}"
    if prior is not None and not isinstance(prior, str):
        return None                          # a Prior object: the entry point checks it
    if prior is not None and prior not in m.priors:
        return (f"method {name} takes prior {', '.join(m.priors)}, got {prior!r}" if m.priors
                else f"method {name} takes no prior, got {prior!r}")
    if prior in _SPLIT_PRIORS and kind == "Release" and not data.split:
        return f"prior {prior} is built from D1 and needs a split release (n1 > 0); this release is unsplit"
    return None

# %%
#| export
def _check_settings(name, settings):
    """Refuse a keyword that method ``name``'s entry point does not take (before any work), naming both."""
    params = inspect.signature(REGISTRY[name].function).parameters
    unknown = sorted(k for k in settings if k not in params and not (name == "dpboots" and k in _NOISE_OPTIONS))
    if unknown:
        takes = ", ".join(k for k in params if k not in ("release", "data", "statistic", "n", "model", "rng",
                                                          "progress", "prior"))
        raise TypeError(f"method {name} does not take {', '.join(unknown)}; it takes {takes}")


def fit(data, name, *, prior=None, rng=None, progress=True, **settings):
    """Run method ``name`` of the registry on ``data`` and return its result (an ArviZ object of the contract).

    Parameters
    ----------
    data : Release, MarginRelease, SummaryRelease or array_like
        What the method needs (see :attr:`Method.needs`): a release, or the records (n, d) for the
        non-private benchmarks ``boots`` and ``mcmc``.
    name : str
        A key of :data:`REGISTRY`.
    prior : str or Prior, optional
        For the methods that take one (default: the entry point's, p1).
    rng : None, int or numpy.random.Generator
        Randomness; the same seed gives the entry point's own draws.
    progress : bool, default True
        Progress bar (the samplers' and DPABC's).
    **settings
        The method's other keywords (``n_iter``, ``n_boot``, ``b``, ...); the registry's defaults
        apply to what is not given, and a keyword the entry point does not take is refused by name.

    Returns
    -------
    arviz.InferenceData or xarray.DataTree
        The entry point's result; ``attrs`` hold :data:`dplit.results.CONTRACT_ATTRS`.
    """
    m = method(name)
    if m.needs == "PrivacyModel":
        raise ValueError("method dapper takes four modules, a noisy statistic and a start (dapper_sample(model, "
                         "sdp, init_par, ...)), not one release: call dplit.augmentation.dapper_sample")
    problem = applies(data, name, prior)
    if problem:
        raise ValueError(problem)
    told = getattr(data, "all_warnings", None)
    for w in told() if callable(told) else ():   # the curator's warnings reach the analyst (and the result's attrs)
        warnings.warn(f"release warning: {w}", UserWarning, stacklevel=2)
    fn = m.function
    params = inspect.signature(fn).parameters
    _check_settings(name, settings)
    kw = dict(settings, rng=rng)
    if prior is not None:
        kw["prior"] = prior
    if "progress" in params:
        kw["progress"] = progress
    if name == "mcmc":                        # the non-private MCMC: the exact statistic of the records
        from dplit.dirichlet import check_compositions, sufficient_stat

        X = check_compositions(np.asarray(data, dtype=float), name="data")
        return fn(sufficient_stat(X), X.shape[0], **kw)
    return fn(data, **kw)


_NOISE_OPTIONS = ("min_acceptance", "n_pilot", "thin", "burn_in")

# %% [markdown]
# Checks on a small release (Guo et al.'s setting, $\boldsymbol\alpha = (2.2, 3.3, 4.4)$): each method of the registry
# that applies runs through `fit` and keeps the contract; the ledger of every result is the release's; wrong uses are
# refused by name.

# %%
alpha_true = np.array([2.2, 3.3, 4.4])
X = dirichlet_draws(alpha_true, n_rec, rng=rng)
cands = [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6]
rel = release(X, eps1=0.75, eps2=0.25, candidates=cands, tc=0.01, rng=rng, secure=False, names=["x1", "x2", "x3"])
rel_split = release(X, eps1=0.75, eps2=0.25, candidates=cands, tc=0.01, n1=n_rec // 4, rng=rng, secure=False)
small = {"boots": dict(n_boot=200), "dpboots": dict(n_boot=200), "dpabc": dict(n_accept=200, accept_rate=0.2)}
chains = dict(n_iter=400, n_warmup=200, n_chains=2)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")            # short chains: the contract, not convergence, is checked here
    for name in ("boots", "dpboots", "mcmc", "dpmcmc", "dpremcmc", "dpabc", "dpapprox"):
        data = X if REGISTRY[name].needs == "records" else rel
        res = fit(data, name, rng=1, **small.get(name, chains))
        assert check_contract(res) == [], (name, check_contract(res))
        at = res.posterior.attrs
        assert at["method"] == REGISTRY[name].label
        if REGISTRY[name].needs == "Release":
            assert math.isclose(at["eps_total"], rel.eps_total) and ledger(res) == {
                e.label: e.eps for e in rel.budget.entries}
        else:
            assert at["eps_total"] == math.inf and ledger(res) == {}
print("every method keeps the contract; the ledgers are the release's:", json.dumps(ledger(res)))
for bad, word in [(dict(name="dpmcmc", prior="p3"), "split"), (dict(name="dpapprox", prior="p5"), "takes prior"),
                  (dict(name="dpmcmc", n_chain=2), "n_chain"), (dict(name="latent_class"), "MarginRelease"),
                  (dict(name="dpmcmcc"), "method")]:
    try:
        fit(rel, **bad)
    except (TypeError, ValueError) as err:
        assert word in str(err), (bad, err)
    else:
        raise AssertionError(f"{bad} accepted")

# %% [markdown]
# ## All methods on one release
#
# `compare(release, methods="all")` runs every method of the registry that applies to the release (each with p1, or
# the priors given) and returns a `Comparison`: one row per method and component with the posterior (or bootstrap)
# mean, sd and interval of the estimand, $\hat R$ and ESS, the time taken and the budget the release spent, the
# results themselves, a figure (one row of intervals per method, one panel per component) and an HTML report. What
# matters is shown, not hidden: a `converged` column and `warnings()` (one line per method that did not converge,
# drawn red and dashed in the figure and marked in the report), `explanations()` (one sentence per method whose
# interval misses another's: a prior, an approximation, a chain that did not mix), `run_text` (chains, warm-up,
# thinning) and the release's own warnings. Every argument is checked before any method runs: a string is one method
# name, a method and prior that cannot run on the release is refused by name (or listed as a row with
# `unavailable="report"`), `truth` must have one finite value per component, and a setting a method does not take is
# refused. The
# same seed gives each method the same draws, whichever others run beside it. On the command line: `dplit compare release.json --out report.html`.

# %%
#| export
def _runs(data, names, priors, explicit):
    """[(label, name, prior, why)] of the pairs asked for; ``why`` is None when the pair can run, else the reason.

    With ``explicit`` False (``methods="all"``) the methods that need another kind of data are left out.
    """
    runs = []
    for name in names:
        m = REGISTRY[name]
        if not explicit and applies(data, name) is not None:
            continue
        for p in (priors if m.priors else (None,)):
            label = f"{m.label}_{p}" if p else m.label
            runs.append((label, name, p, applies(data, name, p)))
    return runs


# %%
#| export
#: Why a method's answer can differ from the others' (one sentence each), used when intervals do not overlap.
_WHY = {
    "dpboots": "DPBoots gives a frequentist bootstrap interval (no prior): it resamples the noisy statistic, so it "
               "answers a different question than the posteriors",
    "dpmcmc": "DPMCMC samples the exact posterior given the release, so it differs from the others by its prior "
              "({prior}) or by their approximations",
    "dpremcmc": "DPreMCMC is an approximation: b latent records stand for the n records (model (5), each raised to "
                "the power n/b), which can move alpha far from DPMCMC's (its E[x] moves less)",
    "dpabc": "DPABC is an approximation: it accepts prior draws whose simulated statistic falls within a tolerance "
             "of the release, which widens and can shift its posterior",
    "dpapprox": "DPapprox is an approximation: it takes the censored statistic to be normal (the central limit "
                "theorem), poor when n is small or many entries are censored",
}


def _why(label, name, prior, converged, failed):
    """One sentence on why method ``label`` may differ from the others."""
    if not converged:
        return f"{label}: the chain did not mix (see its warning); its interval is not yet the posterior's"
    text = _WHY.get(name, f"{label} is another method")
    if prior not in (None, "p1"):
        text += f"; its prior {prior} is built from D1, not the flat p1"
    return f"{label}: " + text.format(prior=prior or "none")

# %%
#| export
@dataclass
class Comparison:
    """Every method's result on one release, side by side (:func:`compare`).

    Attributes
    ----------
    table : pandas.DataFrame
        One row per method and component: ``method``, ``component``, ``mean``, ``sd``, ``lower``,
        ``upper`` (the ``level`` interval), ``rhat`` (nan for independent draws), ``ess``, ``seconds``,
        ``eps_total``, ``converged`` (0/1) and ``note`` (why a method could not run, with
        ``unavailable="report"``; empty otherwise).
    results : dict
        The results, by method label (``"DPMCMC_p1"``).
    level : float
        Level of the intervals.
    truth : ndarray or None
        The true estimand, when known (a simulation), marked in the figure.
    release_text : str
        The release's summary.
    release_warnings : tuple of str
        The curator's warnings the release carries (shown above the table and in the report).
    runs : dict
        By method label: chains, draws per chain, warm-up and thinning (``None`` where a method has none).
    """

    table: object
    results: dict
    level: float = 0.95
    truth: object = None
    release_text: str = ""
    release_warnings: tuple = ()
    runs: dict = field(default_factory=dict)

    def not_converged(self):
        """Labels of the methods whose run did not converge (in the table's order)."""
        rows = self.table[(self.table["converged"] == 0) & (self.table["note"] == "")]
        return list(dict.fromkeys(rows["method"]))

    def warnings(self):
        """One line per method that did not converge, with what failed."""
        out = []
        for label in self.not_converged():
            failed = str(results.posterior(self.results[label]).attrs.get("failed", ""))
            out.append(f"{label} did not converge ({failed}): its interval is not to be trusted; run it longer "
                       f"(n_iter='auto', or more iterations)")
        return out

    def run_text(self, label):
        """How method ``label`` ran: chains, draws, warm-up and thinning."""
        r = self.runs.get(label)
        if not r:
            return f"{label}: not run"
        if r.get("n_warmup") is None:
            return f"{label}: {r['draws']} independent draws (no chain: no warm-up, no thinning)"
        return (f"{label}: {r['chains']} chains x {r['draws']} draws after a warm-up of {r['n_warmup']} iterations, "
                f"thinned by {r['thin']}")

    def explanations(self):
        """One sentence per method whose interval misses another method's for some component, saying why.

        The reason is the first that applies: a chain that did not mix; a prior other than p1; the method's
        approximation (DPreMCMC, DPABC, DPapprox) or its kind of answer (DPBoots: a bootstrap interval).
        """
        t = self.table[self.table["note"] == ""]
        involved = {}
        for _, sub in t.groupby("component", sort=False):
            rows = list(sub.itertuples())
            for i, a in enumerate(rows):
                for b in rows[i + 1:]:
                    if a.upper < b.lower or b.upper < a.lower:
                        involved[a.method] = involved[b.method] = True
        out = []
        for label in dict.fromkeys(t["method"]):
            if label in involved:
                at = results.posterior(self.results[label]).attrs
                name = next(k for k, m in REGISTRY.items() if m.label == str(at["method"]))
                prior = str(at["prior"]) if "prior" in at else None
                out.append(_why(label, name, prior, int(at["converged"]) == 1, str(at.get("failed", ""))))
        return out

    def plot(self, ax=None):
        """Intervals per component, one row per method (the truth dashed when known); returns the figure.

        A method that did not converge is drawn in red with a dashed interval and "(not converged)" in its label.
        """
        import matplotlib.pyplot as plt

        t = self.table[self.table["note"] == ""]
        comps = list(dict.fromkeys(t["component"]))
        labels = list(dict.fromkeys(t["method"]))
        bad = set(self.not_converged())
        fig, axes = plt.subplots(1, len(comps), figsize=(min(8.6, 2.6 * len(comps) + 1.5), 0.45 * len(labels) + 1.4),
                                 sharey=True, squeeze=False)
        for j, (c, a) in enumerate(zip(comps, axes[0])):
            sub = t[t["component"] == c].set_index("method").loc[labels]
            y = np.arange(len(labels))[::-1]
            for yi, label in zip(y, labels):
                row = sub.loc[label]
                color, ls = ("C3", "--") if label in bad else ("C0", "-")
                a.hlines(yi, row["lower"], row["upper"], color=color, lw=2, ls=ls)
                a.plot(row["mean"], yi, "o", color=color, ms=4)
            if self.truth is not None:
                a.axvline(float(np.asarray(self.truth)[j]), color="k", ls="--", lw=1)
            a.set_title(str(c), fontsize=9)
            a.tick_params(labelsize=8)
        names = [f"{v} (not converged)" if v in bad else v for v in labels]
        axes[0][0].set_yticks(np.arange(len(labels))[::-1], names, fontsize=8)
        for tick, v in zip(axes[0][0].get_yticklabels(), labels):
            tick.set_color("C3" if v in bad else "k")
        fig.suptitle(f"{100 * self.level:g}% intervals" + (" (dashed: truth)" if self.truth is not None else "")
                     + ("; red dashed: not converged" if bad else ""), fontsize=9)
        fig.tight_layout()
        return fig

    def _html_table(self):
        """The table as HTML, the rows of a method that did not converge marked (class ``notconverged``)."""
        import html

        bad = set(self.not_converged())
        cols = list(self.table.columns)
        head = "".join(f"<th>{html.escape(str(c))}</th>" for c in cols)
        body = []
        for _, row in self.table.iterrows():
            cells = "".join(f"<td>{row[c]:.4g}</td>" if isinstance(row[c], float)
                            else f"<td>{html.escape(str(row[c]))}</td>" for c in cols)
            mark = ' class="notconverged"' if row["method"] in bad else ""
            body.append(f"<tr{mark}>{cells}</tr>")
        return f'<table class="comparison"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'

    def to_html(self, path=None, *, overwrite=False):
        """A self-contained HTML report (the table and the figure); written to ``path`` when given. Returns the text.

        The file is written by dplit's one rule for files (README, "Files dplit writes"): whole or not at all, and
        an existing ``path`` is kept unless ``overwrite=True`` (``FileExistsError`` naming the path and the keyword).
        """
        import base64
        import html
        import io

        import matplotlib.pyplot as plt

        fig = self.plot()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
        plt.close(fig)
        img = base64.b64encode(buf.getvalue()).decode("ascii")
        from dplit import __version__

        table = self._html_table()
        items = lambda lines, cls="": "".join(f"<li{cls}>{html.escape(v)}</li>" for v in lines)  # noqa: E731
        told = (f'<h2>Warnings the release carries</h2><ul class="warn">{items(self.release_warnings)}</ul>'
                if self.release_warnings else "")
        unmixed = (f'<h2>Not converged</h2><ul class="warn">{items(self.warnings())}</ul>' if self.not_converged()
                   else "")
        why = self.explanations()
        why = f"<h2>Why the answers differ</h2><ul>{items(why)}</ul>" if why else ""
        runs = f"<h2>How each method ran</h2><ul>{items(self.run_text(v) for v in self.results)}</ul>"
        text = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>dplit compare</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:#222}}
table.comparison{{border-collapse:collapse;font-size:0.85em}}table.comparison td,table.comparison th{{padding:0.2em 0.6em;
border-bottom:1px solid #ddd;text-align:right}}pre{{background:#f6f6f6;padding:0.6em;white-space:pre-wrap;
overflow-wrap:anywhere}}tr.notconverged td{{background:#fde8e8;color:#a00;font-weight:bold}}
ul.warn li{{color:#a00}}img{{max-width:100%}}</style></head><body>
<h1>Every method on one release</h1>
<p>dplit {html.escape(__version__)}: {len(self.results)} methods; {100 * self.level:g}% intervals of each method's
estimand per component; inference spends no privacy beyond the release's.</p>
{told}
<h2>The release</h2><pre>{html.escape(self.release_text)}</pre>
{unmixed}
<h2>Intervals</h2><img alt="intervals per component, one row per method" src="data:image/png;base64,{img}">
<h2>Table</h2>{table}
{why}
{runs}
</body></html>
"""
        if path is not None:
            from dplit._files import atomic_write

            atomic_write(path, text, overwrite=overwrite)
        return text

# %%
#| export
def compare(release, methods="all", *, priors=("p1",), rng=None, level=0.95, truth=None, progress=True,
            settings=None, unavailable="refuse"):
    """Run every method that applies to ``release`` and summarise them side by side.

    Every argument is checked before any method runs: the method names, the priors, ``truth``, and each
    method's ``settings``.

    Parameters
    ----------
    release : Release, MarginRelease or SummaryRelease
        The release (the non-private benchmarks, which need the records, are left out).
    methods : "all", str or list of str
        Keys of :data:`REGISTRY` (a string is one name); ``"all"``: every one that runs on this kind of release.
    priors : str or tuple of str, default ("p1",)
        The priors to run each Bayesian method with.
    rng : None, int or numpy.random.Generator
        Each method gets its own stream, derived from ``rng``'s seed and the method's label: the same
        seed gives each method the same draws whichever other methods are compared.
    level : float, default 0.95
        Level of the intervals.
    truth : array_like, optional
        The true estimand (a simulation), one finite value per component, marked in the figure.
    progress : bool, default True
        Progress bars of the methods.
    settings : dict, optional
        Per-method keywords, ``{name: {...}}`` (e.g. ``{"dpmcmc": {"n_iter": "auto"}}``); a keyword a method does
        not take is refused by name.
    unavailable : {"refuse", "report"}, default "refuse"
        A method and prior that cannot run on this release (a prior the method does not take, a prior built from
        D1 on an unsplit release): ``"refuse"`` raises a ValueError naming each before any work; ``"report"`` runs
        the others and gives each a row whose ``note`` says why.

    Returns
    -------
    Comparison
    """
    import pandas as pd

    explicit = not (isinstance(methods, str) and methods == "all")
    names = [methods] if isinstance(methods, str) and explicit else list(REGISTRY) if not explicit else list(methods)
    for name in names:
        V.choice(name, "methods", tuple(REGISTRY))
    if not names:
        raise ValueError(f"methods must name at least one method (or 'all'), got {methods!r}")
    priors = (priors,) if isinstance(priors, str) else tuple(priors)
    V.choice(unavailable, "unavailable", ("refuse", "report"))
    level = V.level(level)
    runs = _runs(release, names, priors, explicit)
    if not runs:
        raise ValueError(f"no method of {names} applies to a {type(release).__name__}")
    if truth is not None:
        truth = np.asarray(truth, dtype=float)
        d = getattr(release, "d", None)
        if truth.ndim != 1 or not np.all(np.isfinite(truth)) or (d is not None and truth.size != d):
            raise ValueError(f"truth must be {d or 'one'} finite value(s) (one per component), got "
                             f"{truth.tolist()}")
        if d is not None and (np.any((truth <= 0) | (truth >= 1)) or abs(truth.sum() - 1.0) > 1e-6):
            raise ValueError(f"truth is the mean composition E[x]: {d} values in (0, 1) summing to 1, got "
                             f"{truth.tolist()} (sum {truth.sum():.6g})")
    settings = dict(settings or {})
    unknown = sorted(set(settings) - set(names))
    if unknown:
        raise ValueError(f"settings name methods not compared: {unknown}")
    for name, kw in settings.items():
        _check_settings(name, kw)
    cannot = [(label, why) for label, _, _, why in runs if why]
    if cannot and unavailable == "refuse":
        raise ValueError("cannot run " + "; ".join(f"{label} ({why})" for label, why in cannot)
                         + ": leave them out, or pass unavailable='report' to list them as rows")
    if len(cannot) == len(runs):
        raise ValueError("no method can run: " + "; ".join(f"{label} ({why})" for label, why in cannot))
    seq = V.rng(rng).bit_generator.seed_seq
    rows, out, info = [], {}, {}
    q = [(1 - level) / 2, (1 + level) / 2]
    for label, name, prior, why in runs:
        if why:
            rows.append({"method": label, "component": "", "mean": np.nan, "sd": np.nan, "lower": np.nan,
                         "upper": np.nan, "rhat": np.nan, "ess": np.nan, "seconds": 0.0, "eps_total": np.nan,
                         "converged": 0, "note": why})
            continue
        g = np.random.default_rng(np.random.SeedSequence(seq.entropy, spawn_key=(*seq.spawn_key, zlib.crc32(
            label.encode()))))
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # the convergence report is a column of the table
            res = fit(release, name, prior=prior, rng=g, progress=progress, **settings.get(name, {}))
        seconds = time.perf_counter() - t0
        out[label] = res
        est = REGISTRY[name].estimand
        post = results.posterior(res, [est])[est]
        dim = [d for d in post.dims if d not in ("chain", "draw")][0]
        x = np.asarray(post.values, dtype=float).reshape(-1, post.sizes[dim])
        multi = post.sizes["chain"] > 1
        rhat = np.atleast_1d(diagnostics.rhat(post.values)) if multi else np.full(x.shape[1], np.nan)
        ess = np.atleast_1d(diagnostics.ess(post.values)) if post.sizes["draw"] >= 4 else np.full(x.shape[1], np.nan)
        at = results.posterior(res).attrs
        chained = REGISTRY[name].sampler and "n_warmup" in at
        info[label] = {"chains": int(post.sizes["chain"]), "draws": int(post.sizes["draw"]),
                       "n_warmup": int(at["n_warmup"]) if chained else None,
                       "thin": int(at["thin"]) if chained else None}
        lo, hi = np.quantile(x, q, axis=0)
        for j, c in enumerate(post.coords[dim].values):
            rows.append({"method": label, "component": str(c), "mean": x[:, j].mean(), "sd": x[:, j].std(ddof=1),
                         "lower": lo[j], "upper": hi[j], "rhat": float(rhat[j]), "ess": float(ess[j]),
                         "seconds": seconds, "eps_total": float(at["eps_total"]),
                         "converged": int(at["converged"]), "note": ""})
    text = release.summary() if hasattr(release, "summary") else repr(release)
    told = getattr(release, "all_warnings", None)
    return Comparison(table=pd.DataFrame(rows), results=out, level=level, truth=truth, release_text=text,
                      release_warnings=tuple(told()) if callable(told) else (), runs=info)

# %% [markdown]
# **On a simulated release**, with the truth $E[x] = \boldsymbol\alpha / \sum_j \alpha_j$ marked. The comparison runs
# every compositional method with p1 at a fraction `effort` of its default effort (all of it at full size), and each
# interval should cover the truth.

# %%
truth = alpha_true / alpha_true.sum()
scaled = {"dpboots": {"n_boot": max(200, int(1000 * effort))}, "dpabc": {"n_accept": max(200, int(1000 * effort))},
          **{k: {"n_iter": max(1000, int(20_000 * effort))}      # the paper's 20,000 iterations, scaled
             for k in ("dpmcmc", "dpremcmc", "dpapprox")}}
t0 = time.perf_counter()
cmp_sim = compare(rel, rng=7, truth=truth, settings=scaled)
secs_sim = time.perf_counter() - t0
cols = ["method", "component", "mean", "sd", "lower", "upper", "rhat", "ess", "seconds", "eps_total"]
print(cmp_sim.table[cols].round(4).to_string(index=False))
print(f"{len(cmp_sim.results)} methods in {secs_sim:.1f} s")
unsettled = sorted(set(cmp_sim.table.loc[cmp_sim.table["rhat"] > 1.01, "method"]))
print("R-hat above 1.01 (run longer):", ", ".join(unsettled) or "none")
fig = cmp_sim.plot()
plt.show()
covered = (cmp_sim.table["lower"] - 0.01 <= np.tile(truth, len(cmp_sim.results))) & (
    np.tile(truth, len(cmp_sim.results)) <= cmp_sim.table["upper"] + 0.01)
assert covered.all(), cmp_sim.table[~covered]
assert set(cmp_sim.table["eps_total"]) == {rel.eps_total}
again = compare(rel, ["dpboots", "dpabc"], rng=7, settings={k: scaled[k] for k in ("dpboots", "dpabc")})
sub = cmp_sim.table[cmp_sim.table["method"].isin(["DPBoots", "DPABC_p1"])]
assert np.array_equal(again.table["mean"].values, sub["mean"].values)   # a method's draws do not depend on the others
print("\n".join(cmp_sim.warnings()) or "every chain converged")
print("\n".join(cmp_sim.explanations()) or "every pair of intervals overlaps")
print("\n".join(cmp_sim.run_text(v) for v in cmp_sim.results))
# Checks first, then work: a string is one method; a prior that cannot run and a bad truth are refused by name.
assert list(compare(rel, "dpboots", rng=7, settings={"dpboots": scaled["dpboots"]}).results) == ["DPBoots"]
for bad, word in [(dict(methods=["dpmcmc"], priors=("p3",)), "DPMCMC_p3"), (dict(methods=["dpboots"], truth=[0.5]), "truth"),
                  (dict(methods=["dpboots"], settings={"dpboots": {"n_iter": 9}}), "n_iter")]:
    try:
        compare(rel, **bad)
    except (TypeError, ValueError) as err:
        assert word in str(err), (bad, err)
    else:
        raise AssertionError(bad)

# %% [markdown]
# The intervals agree where they should: DPMCMC and DPapprox target (nearly) the same posterior given the release,
# DPreMCMC approximates it with b = 50 latent records standing for the n (model (5)), and DPBoots and DPABC take
# other routes (DPABC's intervals are the widest: its tolerance adds to the noise). The table is also where
# convergence shows: a method whose $\hat R$ exceeds 1.01 at its default effort is named under the table and needs
# a longer run. With a split release the priors p3-p5 join: `compare(rel_split, priors=("p1", "p3", "p4", "p5"))`.
#
# **On the ATUS release** (Guo et al., Sec. 5.2): the female respondents of the 2019 American Time Use Survey
# (personal care, eating and drinking, other), released as in the paper's application. The data are not shipped
# with dplit: `dplit.datasets.load_atus` reads them from `$DPLIT_DATA` or the user cache (notebook 63 says how to get
# them); without them this cell says so and skips the comparison.

# %%
from dplit.atus import atus_compositions  # noqa: E402
from dplit.datasets import load_atus  # noqa: E402

try:
    table = load_atus(download=False)
except (OSError, ValueError):
    print("ATUS 2019 not found in $DPLIT_DATA or the user cache: the comparison on it is skipped (see notebook 63)")
else:
    X_f = atus_compositions(table)["female"]
    rel_atus = release(X_f, eps1=0.75, eps2=0.25, candidates=cands, tc=0.01, rng=rng, secure=False,
                       names=["personal care", "eating", "other"])
    cmp_atus = compare(rel_atus, rng=11, settings=scaled)
    print(f"ATUS 2019, {len(X_f)} women:")
    print(cmp_atus.table[cols].round(4).to_string(index=False))
    unsettled = sorted(set(cmp_atus.table.loc[cmp_atus.table["rhat"] > 1.01, "method"]))
    print("R-hat above 1.01 (run longer, e.g. settings={name: {'n_iter': 'auto'}}):", ", ".join(unsettled) or "none")
    cmp_atus.plot()
    plt.show()
    assert (cmp_atus.table["eps_total"] == rel_atus.eps_total).all()

# %% [markdown]
# **The report.** `Comparison.to_html(path)` writes one self-contained page (the release, the figure, the table);
# `dplit compare release.json --out report.html` does the same from the command line, and the documentation's
# browser check opens one.

# %%
page = cmp_sim.to_html()
assert page.startswith("<!DOCTYPE html>") and "data:image/png;base64," in page and "DPMCMC_p1" in page
print(f"report: {len(page) / 1024:.0f} KiB, self-contained")
