# %% [markdown]
# # The simulation study: every method on the paper's grid, resumable
#
# Guo et al.'s simulation study (Sec. 5.1, Figures 1-2, S5) as a runner: a scenario grid, one task per (scenario, replicate, method), seeds derived from the task's settings, results written at once to one store (nothing lost, nothing redone: a text table of JSON lines to commit and share, or a SQLite file), any `concurrent.futures` executor (a local process pool, or Dask).
#
# * **For:** comparing the methods of Guo et al. on simulated data, or rerunning the paper's study.
# * **You need:** a scenario grid (the paper's, or yours) and some CPU time; nothing to download.
# * **You get:** `dplit.study`: the settings (`StudyConfig`), the tasks and their seeds, the measures (`mse`, `predictive_coverage`) and the runner (`run_study`): MSEs, coverages and convergence diagnostics per task in one resumable store. Its summaries and Figures 1-2, S2, S3 are `dplit.study_summary` (notebook `64_study_summary`); the paper's grid, run this way, is in `80_guo_simulation_study`.

# %%
#| default_exp study
#| internal CHAIN_FAMILIES SELECTED KEY_VERSION Task derive_seed NO_PRIVACY_EPS make_releases
#| internal simulate_replicate run_method run_task
#| internal check_max_mpsrf
#| internal make_tasks

# %% [markdown]
# ## Parameters
#
# Sizes come from the size switch (`DPLIT_QUICK=1`: the test suite's). The notebook runs small studies only, to show
# and check the machinery; the paper's grid is the job of `dplit study run` (section 7).

# %%
import json
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from dplit.config import size

SEED = 20261126
rng = np.random.default_rng(SEED)
n_cover = size(full=4000, quick=1000)            # draws in the coverage checks

# %% [markdown]
# ## The result first: a small study's summary
#
# What the machinery gives, from the finished module `dplit.study` (sections 1-6 build it): a study of one cell of
# Guo et al.'s grid (Sec. 5.1: $\boldsymbol\alpha_3 = (2.2, 3.3, 4.4)$, $n = 1000$, $\epsilon = 1$), a few data sets, the
# non-private Boots beside DPBoots and DPMCMC$_{p1}$ at the quick effort, run by `run_study` into a text table and
# summarised per method: the median over the data sets of the MSE of $\boldsymbol\alpha$ and of
# $E[\mathbf x \mid \boldsymbol\alpha]$ and of the 95% predictive ellipsoid's coverage (the measures of the paper's
# Figures 1-2, section 4), and the seconds per task. The check: every task ran and was stored, each private method's
# MSE of $\boldsymbol\alpha$ is many times Boots' (the price of $\epsilon = 1$ lies in the precision
# $\sum_j \alpha_j$), and every coverage is a plausible share. Notebook `64_study_summary` reads such tables at scale.

# %%
import pandas as pd

from dplit.study import SerialExecutor, StudyConfig, open_store, run_study

cfg_first = StudyConfig.from_dict({"alpha_true": [[2.2, 3.3, 4.4]], "n": [1000], "eps": [1.0],
                                   "methods": ["boots", "dpboots", "dpmcmc_p1"],
                                   "replicates": size(full=4, quick=2), "seed": 1, "quick": True})
store_first = Path(tempfile.mkdtemp()) / "first.jsonl"
run_first = run_study(cfg_first, store_first, executor=SerialExecutor(), progress=False)
rows_first = pd.DataFrame(open_store(store_first).rows())
assert run_first.ran == len(rows_first) == 3 * cfg_first.replicates and rows_first["error"].isna().all()
tab_first = rows_first.groupby("method", sort=False).agg(
    data_sets=("replicate", "size"), mse_alpha=("mse_alpha", "median"), mse_mean=("mse_mean", "median"),
    coverage=("coverage", "median"), seconds=("runtime", "median")).reindex(list(cfg_first.methods))
assert (tab_first.loc[["dpboots", "dpmcmc_p1"], "mse_alpha"] > 10 * tab_first.loc["boots", "mse_alpha"]).all()
assert tab_first["coverage"].between(0.5, 1).all()
print(f"{run_first.ran} tasks in {run_first.seconds:.0f} s; medians over the data sets:")
print(tab_first.to_string(float_format="{:.3g}".format))

# %% [markdown]
# ## The design (Guo et al., Sec. 5.1)
#
# **Scenarios.** The paper's five true parameters $\boldsymbol\alpha_1 = (3.3, 4.4)$, $\boldsymbol\alpha_2 = (0.5, 0.5, 0.5)$,
# $\boldsymbol\alpha_3 = (2.2, 3.3, 4.4)$, $\boldsymbol\alpha_4 = (2, 20, 2)$, $\boldsymbol\alpha_5 = (2.2, 3.3, 4.4, 5.5, 6.6)$; sample
# sizes $n \in \{1000, 5000\}$; budgets $\epsilon \in \{0.25, 0.5, 1.5, 10^{10}\}$ ($10^{10}$: no privacy to speak of, so
# only the approximations of each method show); 50 data sets per scenario. The threshold $a$ is chosen from
# $(0.1, 10^{-2}, \dots, 10^{-6})$ by Alg. 1 with $t_c = 0.01$ and $\epsilon_2 = 0.25\epsilon$; the statistic is released with
# $\epsilon_1 = 0.75\epsilon$. Methods that learn a prior from a part of the data split it, $n_1 = 0.25n$, $n_2 = 0.75n$, and
# release both parts at the same $a$ with $\epsilon_1$ each (parallel composition).
#
# **Methods** (Table 1): the non-private benchmarks Boots (parametric bootstrap of the MLE) and MCMC$_{p1}$ (the
# posterior given $S_0(\mathbf D)$); DPBoots; DPMCMC, DPreMCMC and DPapprox with p1 (on the unsplit release) and p3, p4
# (learnt from $\mathbf D_1$, conditioning on $\mathbf D_2$); DPABC with p1-p5. Each method has a name such as
# `dpmcmc_p4`.
#
# **What is measured, per data set and method.**
# * MSE of $\boldsymbol\alpha$: the posterior (or bootstrap) expected squared error $\frac1d\sum_j E[(\alpha_j - \alpha^{\rm true}_j)^2]$
#   over the draws, the squared error of the mean plus the spread of the draws (the paper does not spell out its MSE;
#   the point estimate's squared error is stored too); likewise for $E[\mathbf x \mid \boldsymbol\alpha] = \boldsymbol\alpha / \sum_j\alpha_j$.
# * The **95% posterior-predictive ellipsoid coverage**: draw $\tilde{\mathbf x}^{(s)} \sim \mathrm{Dirichlet}(\boldsymbol\alpha^{(s)})$, one
#   per posterior draw; in the first $d - 1$ coordinates (all $d$ have a singular covariance) the ellipsoid is
#   $\{\mathbf z: (\mathbf z - \bar{\mathbf z})^\top \hat\Sigma^{-1}(\mathbf z - \bar{\mathbf z}) \le q\}$, $q$ the 95% quantile of the predictive
#   sample's own Mahalanobis distances; the coverage, near 0.95 if all is well, is the share of true records inside it.
# * Runtime, and the **multivariate Gelman-Rubin statistic** (Brooks and Gelman 1998) of $\boldsymbol\alpha$ over the
#   chains, from the sampler's report. The paper discards runs whose statistic is above 1.1 (its text says "below",
#   a slip) and reports the fraction kept (Figure S2); we store every run and filter when summarising.
#
# **S5 variant: a fixed threshold.** `threshold = 1e-6` (or `0.1`) skips Alg. 1 and gives the whole budget to the
# Laplace release ($\epsilon_1 = \epsilon$); `threshold = "dp"` is Alg. 1 as above. Figure S3 compares the two.

# %% [markdown]
# ## 1. The settings of a study
#
# A study is a small frozen record: the grid, the methods, the replicates, a seed, and the effort of each method
# (`quick = true` gives short chains and few bootstrap replicates, for trials and tests). It reads the TOML of the
# command line; unknown keys are refused by name, so a typo does not silently run the default.
#
# At full effort DPMCMC runs **until converged** (`until_converged = ["dpmcmc"]`: `n_iter="auto"`, chains extended
# until alpha and $E[\mathbf x \mid \boldsymbol\alpha]$ reach bulk and tail ESS >= 400 and R-hat <= 1.01), not for a fixed
# 20,000 iterations: where those would have converged (most cells) it stops after 2,000 with the same MSE and coverage;
# where not ($\epsilon = 10^{10}$, some small budgets) it runs on, up to 200,000, instead of keeping an unconverged chain
# (`benchmarks/study_cost.py --auto-vs-fixed`, shown in `80_guo_simulation_study`). The rule is part of each task's key.
#
# One exception, `max_iter_no_privacy`: at $\epsilon \ge 10^9$ (the paper's $10^{10}$) the records freeze where the
# warm-up leaves them (notebook 74), so $\hat R$ can stay above 1.01 at any length and the rule would run to its cap for
# nothing. In the paper-scale table's first replicates (notebook 80), 4 of the 12 DPMCMC runs at that budget stopped
# at the cap (600,000 draws, R-hat 1.14-2.37) and took three quarters of all DPMCMC's record updates; the other 8
# converged within their first 2,000 iterations. That table caps them at 20,000 (`benchmarks/sec51.toml`). The cap is
# part of the key too; `None` (the default) keeps `max_iter`.

# %%
#| export
import hashlib
import json
import time
import tomllib
import warnings
from dataclasses import asdict, dataclass, field, fields

import numpy as np

from dplit import _validate as V
from dplit import results
from dplit.censoring import PAPER_ALPHAS as PAPER_ALPHAS
from dplit.methods import fit
from dplit.methods import method as method_entry
from dplit.release import PAPER_CANDIDATES as PAPER_CANDIDATES

# The stores and the runner (notebook 61) live in dplit.study_store; their public names are importable from here
# too (``name as name`` marks a re-export).
from dplit.study_store import ResultStore as ResultStore
from dplit.study_store import SerialExecutor as SerialExecutor
from dplit.study_store import StudyRun as StudyRun
from dplit.study_store import TableStore as TableStore
from dplit.study_store import dask_executor as dask_executor
from dplit.study_store import export_table as export_table
from dplit.study_store import open_store as open_store
from dplit.study_store import run_tasks as run_tasks

#: Every method of Sec. 5.1: name -> (family, prior). p1 methods use the unsplit release, the others the split one.
#: DPapprox appears twice with p4: ``dpapprox_p4`` (dplit's blocked update) and ``dpapprox_gibbs_p4`` (the paper's).
METHODS = {
    "boots": ("boots", None), "dpboots": ("dpboots", None), "mcmc_p1": ("mcmc", "p1"),
    **{f"dpmcmc_{p}": ("dpmcmc", p) for p in ("p1", "p3", "p4")},
    **{f"dpremcmc_{p}": ("dpremcmc", p) for p in ("p1", "p3", "p4")},
    **{f"dpabc_{p}": ("dpabc", p) for p in ("p1", "p2", "p3", "p4", "p5")},
    **{f"dpapprox_{p}": ("dpapprox", p) for p in ("p1", "p3", "p4")},
    "dpapprox_gibbs_p4": ("dpapprox", "p4"),
}
#: The methods whose entry point runs with a setting other than its default. DPapprox has two samplers of one
#: posterior (notebook 23): ``dpapprox_*`` run dplit's blocked update, ``dpapprox_gibbs_p4`` the paper's Gibbs sampler
#: (Sec. 4.2.4), so that the paper's statements about how DPapprox converges can be checked on the paper's sampler.
METHOD_SETTINGS = {"dpapprox_gibbs_p4": {"update": "gibbs"}}
#: The families that run Markov chains (their effort is ``n_iter``, ``n_warmup``, ``n_chains``).
CHAIN_FAMILIES = ("mcmc", "dpmcmc", "dpremcmc", "dpapprox")
#: The methods the paper keeps after Sec. 5.1 (Figure 2, Sec. 5.2).
SELECTED = ("boots", "dpboots", "mcmc_p1", "dpmcmc_p1", "dpremcmc_p1", "dpabc_p4", "dpabc_p5")

# %%
#| export
@dataclass(frozen=True)
class StudyConfig:
    """The settings of a study (the defaults are the paper's full grid, Sec. 5.1).

    Attributes
    ----------
    alpha_true, n, eps : tuples
        The grid; every combination is a scenario.
    methods : tuple of str
        Keys of :data:`METHODS`.
    replicates : int
        Data sets per scenario.
    seed : int
        Root of every seed (each task's seed is derived from its settings and this).
    quick : bool
        Short chains, few bootstrap replicates and ABC draws (trials, tests).
    candidates, tc : the threshold selection (Alg. 1); ``threshold`` is ``"dp"`` (Alg. 1, eps2 = 0.25 eps) or a
        fixed ``a`` in (0, 1) (S5: all the budget to the Laplace part).
    split : float
        Fraction of records in D1 for the methods whose prior is learnt from D1.
    n_boot, n_iter, n_warmup, n_chains, n_accept, accept_rate, b, n_pred, n_true : the effort of each method
        and of the coverage (``None``: the quick or full default).
    until_converged : tuple of str
        Chain families (of ``mcmc``, ``dpmcmc``, ``dpremcmc``, ``dpapprox``) that run with ``n_iter="auto"``:
        chains extended until alpha and E[x | alpha] reach bulk and tail ESS >= ``target_ess`` and R-hat <= 1.01,
        or ``max_iter`` iterations. Default: ``("dpmcmc",)`` at full effort, none in quick mode.
    target_ess, max_iter : int
        The stopping rule of ``until_converged``.
    max_iter_no_privacy : int or None
        The rule's cap at ``eps >= 1e9`` (no privacy to speak of), where the records freeze and R-hat need not reach
        1.01 at any length; ``None``: ``max_iter``.
    max_mpsrf : float
        Runs whose multivariate PSRF exceeds this are counted as not converged (paper: 1.1).
    """

    alpha_true: tuple = PAPER_ALPHAS
    n: tuple = (1000, 5000)
    eps: tuple = (0.25, 0.5, 1.5, 1e10)
    methods: tuple = tuple(METHODS)
    replicates: int = 50
    seed: int = 1
    quick: bool = False
    candidates: tuple = PAPER_CANDIDATES
    tc: float = 0.01
    threshold: object = "dp"
    split: float = 0.25
    n_boot: int = None
    n_iter: int = None
    n_warmup: int = None
    n_chains: int = 3
    n_accept: int = None
    accept_rate: float = 0.1
    b: int = 5
    n_pred: int = None
    n_true: int = 20000
    until_converged: tuple = None
    target_ess: int = 400
    max_iter: int = 200_000
    max_iter_no_privacy: int = None
    max_mpsrf: float = 1.1

    def __post_init__(self):
        q = bool(self.quick)
        defaults = dict(n_boot=(1000, 200), n_iter=(20000, 2000), n_warmup=(2000, 500),
                        n_accept=(1000, 200), n_pred=(3000, 1000))
        for k, (full, quick) in defaults.items():
            if getattr(self, k) is None:
                object.__setattr__(self, k, quick if q else full)
        if self.until_converged is None:
            object.__setattr__(self, "until_converged", () if q else ("dpmcmc",))
        object.__setattr__(self, "until_converged", tuple(self.until_converged))
        _check_config(self)

    @classmethod
    def from_dict(cls, d):
        """Build from a dict (e.g. the ``[study]`` table of a TOML file); unknown keys raise."""
        d = dict(d.get("study", d))
        known = {f.name for f in fields(cls)}
        bad = sorted(set(d) - known)
        if bad:
            raise ValueError(f"unknown study setting(s) {bad}; known: {sorted(known)}")
        for k in ("alpha_true", "n", "eps", "methods", "candidates", "until_converged"):
            if k in d:
                try:
                    d[k] = tuple(tuple(float(x) for x in v) if k == "alpha_true" else v for v in d[k])
                except (TypeError, ValueError):
                    what = "a list of lists of numbers" if k == "alpha_true" else "a list"
                    raise TypeError(f"{k} must be {what}, got {d[k]!r}"[:300]) from None
        return cls(**d)

    @classmethod
    def from_toml(cls, path):
        """Read a TOML file with a ``[study]`` table (a file that is not TOML: ValueError naming it and the line)."""
        with open(path, "rb") as fh:
            try:
                table = tomllib.load(fh)
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
                raise ValueError(f"{path} is not a TOML file: {err}") from None
        return cls.from_dict(table)

    def scenarios(self):
        """The grid: a list of (alpha_true, n, eps)."""
        return [(tuple(a), int(n), float(e)) for a in self.alpha_true for n in self.n for e in self.eps]

# %%
#| export
def _check_config(c):
    """Raise ValueError/TypeError naming the first bad setting of a StudyConfig (a helper of dplit._validate per rule)."""
    if not c.alpha_true:
        raise ValueError("alpha_true must list at least one parameter vector")
    for a in c.alpha_true:
        arr = V.finite_array(a, "alpha_true", ndim=1)
        if arr.size < 2 or np.any(arr <= 0):
            raise ValueError(f"alpha_true entries must have >= 2 components, all > 0, got {list(a)}")
    for n in c.n:
        V.count(n, "n", minimum=8)
    for e in c.eps:
        V.epsilon(e, "eps")
    bad = [m for m in c.methods if m not in METHODS]
    if bad or not c.methods:
        raise ValueError(f"methods must be keys of dplit.study.METHODS {sorted(METHODS)}, got {bad or 'none'}")
    V.count(c.replicates, "replicates")
    V.count(c.seed, "seed", minimum=0)
    V.unit_interval_array(c.candidates, "candidates")
    V.unit_interval(c.tc, "tc")
    if c.threshold != "dp":
        V.threshold(c.threshold, "threshold")
    V.unit_interval(c.split, "split")
    for k in ("n_boot", "n_iter", "n_warmup", "n_chains", "n_accept", "b", "n_pred", "n_true", "target_ess",
              "max_iter"):
        V.count(getattr(c, k), k, minimum=2 if k == "n_chains" else 1)
    if c.max_iter_no_privacy is not None:
        V.count(c.max_iter_no_privacy, "max_iter_no_privacy")
    bad = [f for f in c.until_converged if f not in CHAIN_FAMILIES]
    if bad:
        raise ValueError(f"until_converged must list chain families {list(CHAIN_FAMILIES)}, got {bad}")
    V.unit_interval(c.accept_rate, "accept_rate", closed_high=True)
    check_max_mpsrf(c.max_mpsrf)


def check_max_mpsrf(value, name="max_mpsrf"):
    """Return a convergence cut-off for the multivariate PSRF as a float: > 1 (it is >= 1 by construction, so
    a cut-off <= 1 would count every run as not converged), inf allowed (every run counts), NaN refused."""
    value = V.real(value, name)
    if not value > 1.0:
        raise ValueError(f"{name} must be > 1 (the multivariate PSRF is >= 1, 1.1 in the paper), got {value}")
    return value


# %% [markdown]
# Checks: the small TOML works as written; the defaults are the paper's grid (5 x 2 x 4 = 40 scenarios,
# its 17 methods, with DPapprox by dplit's blocked update, and the paper's own DPapprox$_{p4}$ sampler, Gibbs, as an
# 18th). (A typo or a bad value is refused by name: `tests/test_study.py`.)

# %%
from dplit.study import StudyConfig, METHODS, SELECTED  # noqa: E402

SMALL_TOML = """
[study]
alpha_true = [[2.0, 2.0, 2.0]]
n = [200]
eps = [1.0]
methods = ["dpboots", "dpmcmc_p1"]
replicates = 2
seed = 1
quick = true   # short chains and few bootstrap replicates
"""
tmp = Path(tempfile.mkdtemp())
(tmp / "study.toml").write_text(SMALL_TOML)
small = StudyConfig.from_toml(tmp / "study.toml")
assert small.scenarios() == [((2.0, 2.0, 2.0), 200, 1.0)] and small.n_iter == 2000 and small.n_boot == 200
paper = StudyConfig()
assert len(paper.scenarios()) == 40 and len(paper.methods) == 18 and paper.n_iter == 20000
print(small)

# %% [markdown]
# ## 2. Tasks, keys and seeds
#
# A **task** is one (scenario, replicate, method). Its **key** is the canonical JSON of everything that determines its
# result: the scenario, the replicate, the method, the threshold rule, the candidates, $t_c$, the split, the method's
# effort, the study seed and the key's version. Two seeds come from hashing parts of the key (SHA-256, so they do
# not depend on Python's hash randomisation, the order of the tasks, or the worker that runs them):
# * the **data seed** from the scenario, the replicate, the release settings and the study seed only, so that the
#   methods of a replicate see the same data set and release (compared on the same data, as in the paper);
# * the **method seed** from the whole key.

# %%
#| export
KEY_VERSION = 1

_DATA_FIELDS = ("alpha_true", "n", "eps", "replicate", "candidates", "tc", "split", "seed")


@dataclass(frozen=True)
class Task:
    """One (scenario, replicate, method): its settings and its canonical key."""

    settings: dict = field(hash=False)
    key: str = ""

    @property
    def data_seed(self):
        """Seed of the data set and release: shared by every method of a replicate."""
        return derive_seed({k: self.settings[k] for k in _DATA_FIELDS})

    @property
    def method_seed(self):
        """Seed of the method's randomness: a function of the whole key."""
        return derive_seed(self.key)


def derive_seed(obj):
    """A 63-bit seed from the SHA-256 of the canonical JSON of ``obj`` (stable across runs and machines)."""
    text = obj if isinstance(obj, str) else json.dumps(obj, sort_keys=True, separators=(",", ":"))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


NO_PRIVACY_EPS = 1e9   # a budget this large releases the statistic all but exactly (the paper's 1e10)


def _effort(config, method, eps):
    """The settings of the config that the method's result depends on (at budget ``eps``)."""
    fam, chains = METHODS[method][0], ("n_iter", "n_warmup", "n_chains")
    keys = {"boots": ("n_boot",), "dpboots": ("n_boot",), "dpabc": ("n_accept", "accept_rate"),
            "dpremcmc": chains + ("b",)}.get(fam, chains)          # mcmc, dpmcmc, dpapprox: the chains' effort
    out = {k: getattr(config, k) for k in keys + ("n_pred", "n_true")}
    if fam in config.until_converged:   # the run's length is the stopping rule's, so the key holds the rule
        cap = config.max_iter_no_privacy if eps >= NO_PRIVACY_EPS and config.max_iter_no_privacy else config.max_iter
        out.update(n_iter="auto", target_ess=config.target_ess, max_iter=cap)
    return out


def make_tasks(config):
    """Every task of a study, in a fixed order: replicate, then scenario, then method.

    Replicate first, so that a study stopped at any point (or run in slices with ``max_tasks``) holds about as
    many data sets in every cell of its grid.
    """
    out = []
    for rep in range(config.replicates):
        for alpha, n, eps in config.scenarios():
            for m in config.methods:
                s = {"version": KEY_VERSION, "alpha_true": list(alpha), "n": n, "eps": eps, "replicate": rep,
                     "method": m, "threshold": config.threshold, "candidates": list(config.candidates),
                     "tc": config.tc, "split": config.split, "seed": config.seed, **_effort(config, m, eps)}
                out.append(Task(s, json.dumps(s, sort_keys=True, separators=(",", ":"))))
    return out


# %% [markdown]
# Checks: the small study has 2 tasks per replicate; keys are unique; the data seed is shared by the methods of a
# replicate and differs between replicates. (That a key, and so a seed, does not change when the grid around it
# grows or is reordered: `tests/test_study.py`.)

# %%
from dplit.study import derive_seed, make_tasks  # noqa: E402

ts = make_tasks(small)
assert len(ts) == 4 and len({t.key for t in ts}) == 4
assert ts[0].data_seed == ts[1].data_seed != ts[2].data_seed
assert len({t.method_seed for t in ts}) == 4 and ts[0].method_seed == derive_seed(ts[0].key)
print(ts[0].key)

# %% [markdown]
# ## 3. One replicate: the data set and its releases
#
# From the data seed: $n$ records from $\mathrm{Dirichlet}(\boldsymbol\alpha^{\rm true})$; the unsplit release (Alg. 1:
# $a$ by the geometric mechanism with $\epsilon_2$, $\mathbf s_L$ with $\epsilon_1$); and the split release, a random
# $\mathbf D_1$ of $n_1$ records and $\mathbf D_2$ of the rest, censored **at the same $a$** and released with $\epsilon_1$ each.
# A fixed threshold has no selection, and $\epsilon_1 = \epsilon$. Noise is the seeded fast path (`secure=False`): a study
# must be reproducible, and it publishes nothing.

# %%
#| export
def make_releases(X, eps, *, candidates=PAPER_CANDIDATES, tc=0.01, split=0.25, threshold="dp", rng=None):
    """The unsplit and split releases of records ``X`` at budget ``eps`` (Sec. 5.1): dict ``unsplit``, ``split``.

    ``threshold="dp"``: Alg. 1 with eps2 = 0.25 eps, eps1 = 0.75 eps; a number: that fixed ``a``, eps1 = eps. The
    split release censors D1 (``split`` of the records, at random) and D2 at the same ``a``, eps1 each.
    """
    from dplit.dirichlet import censored_stat
    from dplit.mechanisms import laplace_mechanism
    from dplit.release import Release, censored_sensitivity, release

    g = V.rng(rng)
    n, d = X.shape
    if threshold != "dp":
        a, eps1, sel = V.threshold(threshold, "threshold"), eps, {}
        unsplit = Release.from_statistic(laplace_mechanism(censored_stat(X, a), censored_sensitivity(d, a, n), eps1,
                                                           rng=g, secure=False), n, a, eps1)
    else:
        eps1 = 0.75 * eps
        unsplit = release(X, eps1=eps1, eps2=0.25 * eps, candidates=candidates, tc=tc, rng=g, secure=False)
        a = unsplit.a
        sel = dict(eps2=unsplit.eps2, s_G=unsplit.s_G, candidates=unsplit.candidates, tc=unsplit.tc)
    n1 = max(2, min(n - 2, int(round(split * n))))
    perm = g.permutation(n)
    parts = [X[perm[:n1]], X[perm[n1:]]]
    noisy = [laplace_mechanism(censored_stat(P, a), censored_sensitivity(d, a, len(P)), eps1, rng=g, secure=False)
             for P in parts]
    return {"unsplit": unsplit, "split": Release.from_statistic(noisy[1], n, a, eps1, s_L1=noisy[0], n1=n1, **sel)}


def simulate_replicate(settings):
    """The data set and releases of one replicate: dict with ``X``, ``unsplit``, ``split`` (a Release each)."""
    from dplit.dirichlet import dirichlet_draws

    g = np.random.default_rng(derive_seed({k: settings[k] for k in _DATA_FIELDS}))
    X = dirichlet_draws(np.asarray(settings["alpha_true"], float), int(settings["n"]), rng=g)
    rel = make_releases(X, float(settings["eps"]), candidates=settings["candidates"], tc=settings["tc"],
                        split=settings["split"], threshold=settings["threshold"], rng=g)
    return {"X": X, **rel}


# %% [markdown]
# Checks: the same settings give the same data set; the split release shares the unsplit one's $a$ and its parts
# have the right sizes and Laplace scales. (At $\epsilon = 10^{10}$ the statistic is the exact censored statistic,
# and a fixed threshold spends the whole budget on the Laplace part: `tests/test_study.py`.)

# %%
from dplit.dirichlet import censored_stat  # noqa: E402
from dplit.release import laplace_scale  # noqa: E402
from dplit.study import simulate_replicate  # noqa: E402

s0 = dict(ts[0].settings)
rep1, rep2 = simulate_replicate(s0), simulate_replicate(s0)
assert np.array_equal(rep1["X"], rep2["X"]) and np.array_equal(rep1["unsplit"].s_L, rep2["unsplit"].s_L)
u, sp = rep1["unsplit"], rep1["split"]
assert sp.a == u.a and sp.n1 == 50 and sp.n2 == 150 and sp.eps1 == u.eps1 == 0.75
assert np.isclose(sp.scale, laplace_scale(3, u.a, 150, 0.75)) and np.isclose(sp.scale1, laplace_scale(3, u.a, 50, 0.75))
print(f"a = {u.a:g}, s_L = {np.round(u.s_L, 3)}, exact S0(D, a) = {np.round(censored_stat(rep1['X'], u.a), 3)}")

# %% [markdown]
# ## 4. The measures: MSE and the predictive ellipsoid's coverage

# %%
#| export
def mse(draws, truth):
    """Expected squared error over the draws, averaged over components: mean_j E[(draw_j - truth_j)^2].

    ``draws`` has shape (N, d) (or (d,)) and ``truth`` shape (d,); other shapes are refused, naming both.
    """
    draws, truth = V.real_array(draws, "draws"), V.real_array(truth, "truth", ndim=1)
    if draws.ndim not in (1, 2) or draws.shape[-1] != truth.size:
        raise ValueError(f"truth must have one entry per component of draws: draws has shape {draws.shape}, "
                         f"truth {truth.shape}")
    return float(np.mean((draws - truth) ** 2))


def predictive_coverage(alpha_draws, alpha_true, *, n_pred=3000, n_true=20000, level=0.95, rng=None):
    """Coverage of the posterior-predictive Mahalanobis ellipsoid (Guo et al., Sec. 5.1).

    One predictive record per (resampled) draw of alpha; the ellipsoid in the first d - 1 coordinates holds the
    ``level`` fraction of the predictive sample; returns the fraction of ``n_true`` records from
    Dirichlet(alpha_true) inside it.
    """
    g = V.rng(rng)
    n_pred, n_true = V.count(n_pred, "n_pred", 2), V.count(n_true, "n_true", 2)
    level = V.unit_interval(level, "level")
    alpha_true = V.finite_array(alpha_true, "alpha_true", ndim=1)
    if alpha_true.size < 2 or not np.all(alpha_true > 0):
        raise ValueError(f"alpha_true must have >= 2 components, all > 0, got {alpha_true.tolist()}")
    A = np.atleast_2d(V.real_array(alpha_draws, "alpha_draws"))
    if A.ndim != 2 or A.shape[1] != alpha_true.size:
        raise ValueError(f"alpha_draws must have shape (N, d) with d = {alpha_true.size} (the length of alpha_true), "
                         f"got {A.shape}")
    V.work_size(8 * (n_pred + n_true) * (alpha_true.size + 2), f"{n_pred:,} + {n_true:,} records (n_pred + n_true)",
                "lower n_pred or n_true")
    A = A[np.all(np.isfinite(A), axis=1)]
    if A.shape[0] == 0:
        return float("nan")
    A = A[g.integers(0, A.shape[0], n_pred)]
    pred = g.gamma(A)
    pred /= pred.sum(axis=1, keepdims=True)
    truth = g.dirichlet(np.asarray(alpha_true, float), n_true)
    z, zt = pred[:, :-1], truth[:, :-1]
    m = z.mean(axis=0)
    prec = np.linalg.inv(np.atleast_2d(np.cov(z, rowvar=False)))
    dist = np.einsum("ij,jk,ik->i", z - m, prec, z - m)
    q = np.quantile(dist, level)
    return float(np.mean(np.einsum("ij,jk,ik->i", zt - m, prec, zt - m) <= q))


# %% [markdown]
# Checks: draws equal to the truth have MSE 0, and $E[(\alpha - \alpha^{\rm true})^2]$ is the squared bias plus the variance.
# With the true $\boldsymbol\alpha$ as the only "posterior draw" the predictive *is* the truth, so the coverage is 0.95 up
# to Monte Carlo error ($\approx 0.95 \pm 3\sqrt{0.95\cdot0.05\,(1/n_{\rm pred} + 1/n_{\rm true})}$); an over-dispersed posterior
# covers too much. (The same in $d = 2, 5$, and a planted bug, the ellipsoid centred 0.1 away from the predictive mean,
# caught: `tests/test_study.py`.)

# %%
from dplit.study import mse, predictive_coverage  # noqa: E402

truth = np.array([2.2, 3.3, 4.4])
assert mse(np.tile(truth, (5, 1)), truth) == 0.0
D = rng.normal(truth + 0.2, 0.5, (20000, 3))
assert abs(mse(D, truth) - (0.2**2 + 0.5**2)) < 0.01
tol = 3 * np.sqrt(0.95 * 0.05 * (1 / n_cover + 1 / 20000)) + 0.005
cov = predictive_coverage([truth], truth, n_pred=n_cover, rng=rng)
assert abs(cov - 0.95) < tol, cov
wide = truth * np.exp(rng.normal(0, 0.8, (2000, 1)))            # alpha_0 far too uncertain: heavier predictive tails
assert predictive_coverage(wide, truth, n_pred=n_cover, rng=rng) > 0.95 + tol
print(f"coverage at the truth: {cov:.3f} (tolerance {tol:.3f})")

# %% [markdown]
# What the coverage looks at, for $\boldsymbol\alpha_3 = (2.2, 3.3, 4.4)$ in the plane of the first two coordinates: grey,
# records from the true Dirichlet; the curve, the 95% ellipsoid of a posterior predictive sample. Left, the
# "posterior" is the truth; right, $\alpha_0$ is far too uncertain (`wide` above): the ellipsoid is too large.

# %%
def predictive_ellipse(alpha_draws, level=0.95, n_pred=4000, rng=None, k=200):
    """Boundary (k, 2) of the level-ellipsoid of a predictive sample in the first two coordinates (d = 3)."""
    g = np.random.default_rng(rng)
    A = np.asarray(alpha_draws, float)[g.integers(0, len(alpha_draws), n_pred)]
    z = g.gamma(A)
    z = (z / z.sum(axis=1, keepdims=True))[:, :2]
    m, S = z.mean(axis=0), np.cov(z, rowvar=False)
    q = np.quantile(np.einsum("ij,jk,ik->i", z - m, np.linalg.inv(S), z - m), level)
    u = np.linspace(0, 2 * np.pi, k)
    return m + np.sqrt(q) * (np.c_[np.cos(u), np.sin(u)] @ np.linalg.cholesky(S).T)


records = np.random.default_rng(SEED).dirichlet(truth, 1500)
fig_cov, axes = plt.subplots(1, 2, figsize=(7.5, 3.4), sharex=True, sharey=True)
for ax, draws, label in ((axes[0], [truth], "posterior = truth"), (axes[1], wide, "alpha_0 too uncertain")):
    ring, c = predictive_ellipse(draws, rng=SEED), predictive_coverage(draws, truth, n_pred=n_cover, rng=SEED)
    ax.scatter(records[:, 0], records[:, 1], s=2, color="0.6", label="true records")
    ax.plot(ring[:, 0], ring[:, 1], color="C3" if c > 0.95 + tol else "C0", lw=2, label="95% predictive ellipsoid")
    ax.set(title=f"{label}: coverage {c:.3f}", xlabel="x1")
axes[0].set_ylabel("x2")
axes[0].legend(fontsize=9, loc="upper right")
fig_cov.tight_layout()

# %% [markdown]
# ## 5. One task: run a method on a replicate and measure it
#
# Every method gets the release its prior needs (p1, DPBoots: unsplit; p2-p5: split), runs single-threaded
# (`n_jobs=1`: the study's parallelism is over tasks) and is reduced to its draws of $\boldsymbol\alpha$. A method that
# raises is recorded as failed, with its message; a run that warns about convergence is recorded with its diagnostics
# (filtering is the summary's job: notebook 64). `run_method` is public: notebook 63 runs the same methods on the ATUS releases.

# %%
#| export
def run_method(method, replicate, config_like, rng):
    """Run one method of :data:`METHODS` on a replicate; returns ``(alpha_draws (m, d), attrs dict)``.

    The method runs through the registry's dispatcher (:func:`dplit.methods.fit`) with the study's effort.

    Parameters
    ----------
    method : str
        A key of :data:`METHODS`.
    replicate : dict
        ``X`` (the records, for the non-private benchmarks), ``unsplit`` and ``split`` (Release objects).
    config_like : dict or StudyConfig
        The effort: ``n_boot``, ``n_iter``, ``n_warmup``, ``n_chains``, ``n_accept``, ``accept_rate``, ``b``.
    rng : int or numpy.random.Generator
        The method's randomness.

    Returns
    -------
    (ndarray, dict)
        The draws of alpha, and the measures kept from the result's attrs: ``mpsrf``, ``rhat_max``,
        ``ess_bulk_min`` (chains), ``n_failed`` (DPBoots), ``tolerance`` (DPABC).
    """
    c = config_like if isinstance(config_like, dict) else asdict(config_like)
    fam, prior = METHODS[V.choice(method, "method", tuple(METHODS))]
    rel = replicate["unsplit"] if prior in (None, "p1") else replicate["split"]
    # the study's effort under the names the registry lists for the method; one thread per task (the study
    # runs tasks in parallel); the non-private chain is thinned, as it is cheap and long
    effort = {k: c[k] for k in method_entry(fam).options if k in c}
    if fam in c.get("until_converged", ()):          # a config (a task's settings carry n_iter="auto" already)
        effort["n_iter"] = "auto"
    if effort.get("n_iter") == "auto":
        effort.update({k: c[k] for k in ("target_ess", "max_iter") if k in c})
    effort.update(n_jobs=1, **({"thin": 10} if fam == "mcmc" else {}), **METHOD_SETTINGS.get(method, {}))
    data = replicate["X"] if fam in ("boots", "mcmc") else rel
    res = fit(data, fam, prior=prior, rng=rng, progress=False, **effort)   # the runner's bar reports
    at = dict(res.posterior.attrs)
    keep = {k: float(at[k]) for k in ("mpsrf", "rhat_max", "ess_bulk_min", "n_failed", "tolerance") if k in at}
    return results.draws(res, "alpha"), keep

# %%
#| export
def run_task(task):
    """Run one task (a :class:`Task`, its key or its settings) and return its record: a dict of measures."""
    s = json.loads(task) if isinstance(task, str) else dict(task if isinstance(task, dict) else task.settings)
    key = json.dumps(s, sort_keys=True, separators=(",", ":"))
    g = np.random.default_rng(derive_seed(key))
    alpha = np.asarray(s["alpha_true"], float)
    # A replicate's release may warn (censoring far above tc at small n): that is what the study measures,
    # and it stays in rep["unsplit"].warnings; printed once per task it would bury the study's own output.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = simulate_replicate(s)
    out = {"a": float(rep["unsplit"].a), "error": None}
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            draws, info = run_method(s["method"], rep, s, g)
    except Exception as err:  # a failed method is a result too (counted, with its message)
        out.update(runtime=time.perf_counter() - t0, error=f"{type(err).__name__}: {err}")
        return out
    out["runtime"] = time.perf_counter() - t0
    ok = draws[np.all(np.isfinite(draws) & (draws > 0), axis=1)]
    mean_true = alpha / alpha.sum()
    mx = ok / ok.sum(axis=1, keepdims=True)
    out.update({k: (None if v is None or not np.isfinite(v) else float(v)) for k, v in info.items()})
    out.update(n_draws=int(ok.shape[0]), mse_alpha=mse(ok, alpha), mse_mean=mse(mx, mean_true),
               se_alpha=mse(ok.mean(axis=0, keepdims=True), alpha),
               se_mean=mse(mx.mean(axis=0, keepdims=True), mean_true),
               coverage=predictive_coverage(ok, alpha, n_pred=s["n_pred"], n_true=s["n_true"], rng=g))
    return out

# %% [markdown]
# Check: the small study's tasks on its first replicate (DPBoots, DPMCMC$_{p1}$) give finite measures. (Every family at
# $\epsilon = 10^{10}$, where all agree on $E[\mathbf x]$, and a method that raises: `tests/test_study.py`.)

# %%
from dplit.study import run_task  # noqa: E402

probe_out = {t.settings["method"]: run_task(t) for t in ts[:2]}
assert all(o["error"] is None and np.isfinite(o["mse_alpha"]) and 0.5 < o["coverage"] <= 1 for o in probe_out.values())
print({m: (round(o["mse_alpha"], 3), round(o["coverage"], 3), round(o["runtime"], 2)) for m, o in probe_out.items()})

# %% [markdown]
# ## 6. The store and the runner (notebook 61)
#
# Each finished task goes at once to a store, and only the tasks not in it yet run, on any `concurrent.futures`
# executor. Neither needs the study's model (a task is its key, a result a JSON-able dict), so both live in
# `dplit.study_store` (notebook `61_study_store`, names importable from `dplit.study` too): a text table of JSON lines
# (`TableStore`, to commit and share) or a SQLite file (`ResultStore`), chosen by the path in `open_store`;
# `export_table`; the executors `SerialExecutor` and `dask_executor`; the resumable runner `run_tasks`. `run_study` is
# that runner on the keys of `make_tasks(config)`, each run by `run_task`. Since a task's seeds come from its key, a
# study resumes after any interruption, and its results do not depend on where, when or in which order tasks ran.

# %%
#| export
def run_study(config, store, *, executor=None, progress=True, workers=None, max_tasks=None):
    """Run every task of a study that is not in the store yet, writing each result as it finishes.

    Parameters
    ----------
    config : StudyConfig, dict or path of a TOML file
        The study.
    store : ResultStore, TableStore, str or Path
        Where finished tasks go: a text table for a path ending in ``.jsonl`` (:class:`TableStore`, the form to
        commit), else a SQLite file (:class:`ResultStore`).
    executor, progress, workers, max_tasks
        Where tasks run (default: a local process pool of ``workers`` processes), a progress bar, and at most
        how many of the remaining tasks to run: as in ``dplit.study_store.run_tasks``.

    Returns
    -------
    StudyRun
        What ``run_tasks`` returns: the tasks run now, those found done, the seconds.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> cfg = {"alpha_true": [[2.0, 2.0, 2.0]], "n": [200], "eps": [1.0], "methods": ["dpboots"],
    ...        "replicates": 2, "seed": 1, "quick": True}
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "study.sqlite"
    >>> run_study(cfg, path, executor=SerialExecutor(), progress=False).ran
    2
    >>> run_study(cfg, path, executor=SerialExecutor(), progress=False)[:2]    # nothing left to do
    (0, 2)
    """
    keys = [t.key for t in make_tasks(_as_config(config))]
    return run_tasks(keys, run_task, store, executor=executor, progress=progress, workers=workers,
                     max_tasks=max_tasks)


def _as_config(config):
    """A StudyConfig from a StudyConfig, a dict or a TOML path."""
    if isinstance(config, StudyConfig):
        return config
    return StudyConfig.from_dict(config) if isinstance(config, dict) else StudyConfig.from_toml(config)


# %% [markdown]
# Checks: `run_study` in slices (`max_tasks`) runs the small study's first task into a text table, then with no
# slice left runs nothing and finds it done, and the stored measures are those of `run_task` run directly (runtime
# apart).

# %%
from dplit.study import SerialExecutor, open_store, run_study  # noqa: E402

one = run_study(small, tmp / "one.jsonl", executor=SerialExecutor(), progress=False, max_tasks=1)
assert one[:2] == (1, 0) and run_study(small, tmp / "one.jsonl", progress=False, max_tasks=0)[:2] == (0, 1)
stored = dict(open_store(tmp / "one.jsonl").records())
assert {k: v for k, v in stored[ts[0].key].items() if k != "runtime"} == {
    k: v for k, v in run_task(ts[0].key).items() if k != "runtime"}
print(one, len(stored))

# %% [markdown]
# ## 7. The study at the paper's scale, from the command line
#
# The paper's grid runs outside the notebook, into a committed text table that any machine extends:
# `benchmarks/sec51.toml` holds its settings (all 40 cells, the two benchmarks, every method of Figure 1 but
# DPMCMC$_{p3,p4}$, and the paper's own DPapprox$_{p4}$ sampler, 50 data sets per cell) and `benchmarks/results/sec51_study.jsonl` what is done. What a store holds is read, summarised and drawn
# by `dplit.study_summary` (notebook `64_study_summary`: medians over the converged runs, Figures 1-2, S2, S3's
# numbers); notebook `80_guo_simulation_study` draws Figures 1-2, S2 and S3 from that table (and, for S3, a second one
# with the threshold fixed, `benchmarks/sec51_fixed_a.toml`) and checks each of the paper's statements about them.
#
# ```bash
# dplit study run --config study.toml --store results.jsonl --workers 8        # local process pool
# dplit study run --config study.toml --store results.jsonl --scheduler tcp://host:8786   # a Dask cluster
# dplit study report --store results.jsonl --out figures/                     # tables and Figures 1, 2, S2
# dplit study export --store results.sqlite --out results.jsonl             # a SQLite store as a text table
# ```
#
# `study.toml` holds a `[study]` table with the keys of `StudyConfig` (an empty table is the paper's full grid); a
# store ending in `.jsonl` is a text table, any other path a SQLite file. Run a stopped command again to resume it.
#
# ## When to use this
#
# * To compare methods on **your** $n$, $d$ and $\epsilon$ before spending a budget: a study of a few scenarios at the
#   quick effort takes minutes and tells which methods converge and how wide they are.
# * To reproduce or extend Sec. 5.1: the runner is resumable and scales out, so the 20,000 tasks of the paper's grid
#   are a matter of CPU hours, not of babysitting.
# * Read a store with `dplit.study_summary` (notebook `64_study_summary`), the convergence counts before the medians:
#   as in the paper, the medians are over converged runs only.
