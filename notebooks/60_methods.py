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
# %matplotlib inline
import inspect
import json
import math
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np

from dplit.config import is_quick, size
from dplit.dirichlet import dirichlet_draws
from dplit.release import release
from dplit.results import CONTRACT_ATTRS, check_contract, ledger
from dplit.sampling import RUN_DEFAULTS, RUN_SETTINGS

SEED = 20261125
rng = np.random.default_rng(SEED)
n_rec = size(full=2_000, quick=500)            # records of the simulated release
effort = size(full=1.0, quick=0.1)             # fraction of each method's default effort in the live comparison
print(f"quick mode: {is_quick()}; n = {n_rec} records, effort {effort:g} of the defaults")

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
    return REGISTRY[V.choice(name, "method", tuple(REGISTRY))]

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
    kind = _kind(data)
    if kind != m.needs:
        return f"method {name} needs a {m.needs}, got a {kind}"
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
    unknown = sorted(k for k in settings if k not in params and not (name == "dpboots" and k in _NOISE_OPTIONS))
    if unknown:
        takes = ", ".join(k for k in params if k not in ("release", "data", "statistic", "n", "model"))
        raise TypeError(f"method {name} does not take {', '.join(unknown)}; it takes {takes}")
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
# results themselves, a figure (one row of intervals per method, one panel per component) and an HTML report. The
# same seed gives each method the same draws, whichever others run beside it. On the command line: `dplit compare release.json --out report.html`.

# %%
#| export
def _applicable(data, names, priors):
    """[(label, name, prior)] of the methods to run on ``data``."""
    runs = []
    for name in names:
        m = REGISTRY[name]
        for p in (priors if m.priors else (None,)):
            if p is not None and p not in m.priors:
                continue
            if applies(data, name, p) is None:
                runs.append((f"{m.label}_{p}" if p else m.label, name, p))
    return runs

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
        ``eps_total``, ``converged``.
    results : dict
        The results, by method label (``"DPMCMC_p1"``).
    level : float
        Level of the intervals.
    truth : ndarray or None
        The true estimand, when known (a simulation), marked in the figure.
    """

    table: object
    results: dict
    level: float = 0.95
    truth: object = None
    release_text: str = ""

    def plot(self, ax=None):
        """Intervals per component, one row per method (the truth dashed when known); returns the figure."""
        import matplotlib.pyplot as plt

        comps = list(dict.fromkeys(self.table["component"]))
        labels = list(dict.fromkeys(self.table["method"]))
        fig, axes = plt.subplots(1, len(comps), figsize=(2.6 * len(comps) + 1.5, 0.45 * len(labels) + 1.4),
                                 sharey=True, squeeze=False)
        for j, (c, a) in enumerate(zip(comps, axes[0])):
            sub = self.table[self.table["component"] == c].set_index("method").loc[labels]
            y = np.arange(len(labels))[::-1]
            a.hlines(y, sub["lower"], sub["upper"], color="C0", lw=2)
            a.plot(sub["mean"], y, "o", color="C0", ms=4)
            if self.truth is not None:
                a.axvline(float(np.asarray(self.truth)[j]), color="k", ls="--", lw=1)
            a.set_title(str(c), fontsize=9)
            a.tick_params(labelsize=8)
        axes[0][0].set_yticks(np.arange(len(labels))[::-1], labels, fontsize=8)
        fig.suptitle(f"{100 * self.level:g}% intervals" + (" (dashed: truth)" if self.truth is not None else ""),
                     fontsize=9)
        fig.tight_layout()
        return fig

    def to_html(self, path=None):
        """A self-contained HTML report (the table and the figure); written to ``path`` when given. Returns the text."""
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

        table = self.table.to_html(index=False, float_format=lambda v: f"{v:.4g}", border=0, classes="comparison")
        text = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>dplit compare</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:#222}}
table.comparison{{border-collapse:collapse;font-size:0.85em}}table.comparison td,table.comparison th{{padding:0.2em 0.6em;
border-bottom:1px solid #ddd;text-align:right}}pre{{background:#f6f6f6;padding:0.6em;overflow-x:auto}}
img{{max-width:100%}}</style></head><body>
<h1>Every method on one release</h1>
<p>dplit {html.escape(__version__)}: {len(self.results)} methods; {100 * self.level:g}% intervals of each method's
estimand per component; inference spends no privacy beyond the release's.</p>
<h2>The release</h2><pre>{html.escape(self.release_text)}</pre>
<h2>Intervals</h2><img alt="intervals per component, one row per method" src="data:image/png;base64,{img}">
<h2>Table</h2>{table}
</body></html>
"""
        if path is not None:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
        return text

# %%
#| export
def compare(release, methods="all", *, priors=("p1",), rng=None, level=0.95, truth=None, progress=True,
            settings=None):
    """Run every method that applies to ``release`` and summarise them side by side.

    Parameters
    ----------
    release : Release, MarginRelease or SummaryRelease
        The release (the non-private benchmarks, which need the records, are left out).
    methods : "all" or list of str
        Keys of :data:`REGISTRY`; ``"all"``: every one that applies.
    priors : tuple of str, default ("p1",)
        The priors to run each Bayesian method with (those a method or an unsplit release cannot
        take are skipped).
    rng : None, int or numpy.random.Generator
        Each method gets its own stream, derived from ``rng``'s seed and the method's label: the same
        seed gives each method the same draws whichever other methods are compared.
    level : float, default 0.95
        Level of the intervals.
    truth : array_like, optional
        The true estimand (a simulation), kept for the figure.
    progress : bool, default True
        Progress bars of the methods.
    settings : dict, optional
        Per-method keywords, ``{name: {...}}`` (e.g. ``{"dpmcmc": {"n_iter": "auto"}}``).

    Returns
    -------
    Comparison
    """
    import pandas as pd

    names = list(REGISTRY) if isinstance(methods, str) and methods == "all" else list(methods)
    for name in names:
        method(name)
    level = V.level(level)
    settings = dict(settings or {})
    unknown = sorted(set(settings) - set(names))
    if unknown:
        raise ValueError(f"settings name methods not compared: {unknown}")
    runs = _applicable(release, names, tuple(priors))
    if not runs:
        raise ValueError(f"no method of {names} applies to a {type(release).__name__}")
    seq = V.rng(rng).bit_generator.seed_seq
    gens = [np.random.default_rng(np.random.SeedSequence(seq.entropy, spawn_key=(*seq.spawn_key, zlib.crc32(
        label.encode())))) for label, _, _ in runs]
    rows, out = [], {}
    q = [(1 - level) / 2, (1 + level) / 2]
    for (label, name, prior), g in zip(runs, gens):
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
        lo, hi = np.quantile(x, q, axis=0)
        for j, c in enumerate(post.coords[dim].values):
            rows.append({"method": label, "component": str(c), "mean": x[:, j].mean(), "sd": x[:, j].std(ddof=1),
                         "lower": lo[j], "upper": hi[j], "rhat": float(rhat[j]), "ess": float(ess[j]),
                         "seconds": seconds, "eps_total": float(at["eps_total"]),
                         "converged": int(at["converged"])})
    text = release.summary() if hasattr(release, "summary") else repr(release)
    return Comparison(table=pd.DataFrame(rows), results=out, level=level,
                      truth=None if truth is None else np.asarray(truth, dtype=float), release_text=text)

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
