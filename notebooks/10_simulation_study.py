# %% [markdown]
# # The simulation study: every method on the paper's grid, resumable
#
# Guo et al.'s simulation study (Sec. 5.1, Figures 1-2, S5) as a runner: a scenario grid, one task per (scenario, replicate, method), seeds derived from the task's settings, results written at once to one store (nothing lost, nothing redone: a text table of JSON lines to commit and share, or a SQLite file), any `concurrent.futures` executor (a local process pool, or Dask), and the paper's figures from the stored results.
#
# * **For:** comparing the methods of Guo et al. on simulated data, or rerunning the paper's study.
# * **You need:** a scenario grid (the paper's, or yours) and some CPU time; nothing to download.
# * **You get:** MSEs, coverages and convergence rates per method in one resumable store, and Figures 1-2, S2, S3. The paper's grid, run this way, is in `10b_simulation_results`.

# %%
#| default_exp study

# %% [markdown]
# ## Parameters
#
# Sizes come from the size switch (`DPLIT_QUICK=1` gives the quick sizes of the test suite). The notebook runs small
# studies only, to show and check the machinery; the paper's grid is the job of `dplit study run` (section 9).

# %%
# %matplotlib inline
import json
import os
import sqlite3
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from dplit.config import is_quick, size

SEED = 20261126
rng = np.random.default_rng(SEED)
n_cover = size(full=4000, quick=1000)            # draws in the coverage checks
print(f"quick mode: {is_quick()}")

# %% [markdown]
# ## The design (Guo et al., Sec. 5.1)
#
# **Scenarios.** Five true parameters $\boldsymbol\alpha_1 = (3.3, 4.4)$, $\boldsymbol\alpha_2 = (0.5, 0.5, 0.5)$,
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
# * MSE of $\boldsymbol\alpha$: the posterior (or bootstrap) expected squared error
#   $\frac1d\sum_j E[(\alpha_j - \alpha^{\rm true}_j)^2]$ over the draws, which is the squared error of the mean plus the
#   spread of the draws. (The paper does not spell out its MSE; the point estimate's squared error is stored too.)
#   Likewise for $E[\mathbf x \mid \boldsymbol\alpha] = \boldsymbol\alpha / \sum_j\alpha_j$.
# * The **95% posterior-predictive ellipsoid coverage**: draw $\tilde{\mathbf x}^{(s)} \sim \mathrm{Dirichlet}(\boldsymbol\alpha^{(s)})$, one
#   per posterior draw; take the first $d - 1$ coordinates (the last is determined by them, so the covariance of all
#   $d$ is singular); the ellipsoid is $\{\mathbf z: (\mathbf z - \bar{\mathbf z})^\top \hat\Sigma^{-1}(\mathbf z - \bar{\mathbf z}) \le q\}$ with
#   $q$ the 95% quantile of the predictive sample's own Mahalanobis distances; the coverage is the fraction of a
#   large sample from the true Dirichlet inside it. It should be near 0.95.
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
# until alpha and $E[\mathbf x \mid \boldsymbol\alpha]$ reach bulk and tail ESS >= 400 and R-hat <= 1.01) rather than for a
# fixed 20,000 iterations. Where 20,000 iterations would have converged (most cells), the rule stops after 2,000 with
# the same MSE and coverage at a fraction of the CPU time; where they would not (the latent records barely move at
# $\epsilon = 10^{10}$, and some small-budget cells), it runs on, up to 200,000 iterations, instead of keeping an
# unconverged chain (`benchmarks/study_cost.py --auto-vs-fixed`, shown in `10b_simulation_results`). The stopping
# rule is part of each task's key, so a study at one effort never mixes with another.

# %%
#| export
import concurrent.futures as cf
import hashlib
import json
import os
import sqlite3
import time
import tomllib
import warnings
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import NamedTuple

import numpy as np

from dplit import _validate as V
from dplit import results
from dplit.methods import fit
from dplit.methods import method as method_entry

#: The five true parameters of Sec. 5.1.
PAPER_ALPHAS = ((3.3, 4.4), (0.5, 0.5, 0.5), (2.2, 3.3, 4.4), (2.0, 20.0, 2.0), (2.2, 3.3, 4.4, 5.5, 6.6))
#: The candidate thresholds of Sec. 5.1.
PAPER_CANDIDATES = (0.1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6)

#: Every method of Sec. 5.1: name -> (family, prior). p1 methods use the unsplit release, the others the split one.
METHODS = {
    "boots": ("boots", None), "dpboots": ("dpboots", None), "mcmc_p1": ("mcmc", "p1"),
    **{f"dpmcmc_{p}": ("dpmcmc", p) for p in ("p1", "p3", "p4")},
    **{f"dpremcmc_{p}": ("dpremcmc", p) for p in ("p1", "p3", "p4")},
    **{f"dpabc_{p}": ("dpabc", p) for p in ("p1", "p2", "p3", "p4", "p5")},
    **{f"dpapprox_{p}": ("dpapprox", p) for p in ("p1", "p3", "p4")},
}
#: The families that run Markov chains (their effort is ``n_iter``, ``n_warmup``, ``n_chains``).
CHAIN_FAMILIES = ("mcmc", "dpmcmc", "dpremcmc", "dpapprox")
#: The methods the paper keeps after Sec. 5.1 (Figure 2, Sec. 5.2).
SELECTED = ("boots", "dpboots", "mcmc_p1", "dpmcmc_p1", "dpremcmc_p1", "dpabc_p4", "dpabc_p5")


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
        or ``max_iter`` iterations. Default: ``("dpmcmc",)`` at full effort, none in quick mode. Where 20,000
        iterations would have converged, the chains stop after 2,000 with the same MSE and coverage at a fraction
        of the CPU time; where they would not, they run on (up to ``max_iter``) instead of reporting an
        unconverged chain (``benchmarks/study_cost.py --auto-vs-fixed``, shown in ``10b_simulation_results``).
    target_ess, max_iter : int
        The stopping rule of ``until_converged``.
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
                d[k] = tuple(tuple(float(x) for x in v) if k == "alpha_true" else v for v in d[k])
        return cls(**d)

    @classmethod
    def from_toml(cls, path):
        """Read a TOML file with a ``[study]`` table."""
        with open(path, "rb") as fh:
            return cls.from_dict(tomllib.load(fh))

    def scenarios(self):
        """The grid: a list of (alpha_true, n, eps)."""
        return [(tuple(a), int(n), float(e)) for a in self.alpha_true for n in self.n for e in self.eps]


# %% [markdown]
# The checks of the settings, one helper per rule from `dplit._validate`.

# %%
#| export
def _check_config(c):
    """Raise ValueError/TypeError naming the first bad setting of a StudyConfig."""
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
# 17 methods); a typo and a bad value are refused by name.

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
assert len(paper.scenarios()) == 40 and len(paper.methods) == 17 and paper.n_iter == 20000
for bad, word in [({"replicate": 2}, "replicate"), ({"methods": ["dpmcmc_p2"]}, "methods"),
                  ({"eps": [0.0]}, "eps"), ({"threshold": 2.0}, "threshold"), ({"max_mpsrf": -1.0}, "max_mpsrf must be > 1"),
                  ({"max_mpsrf": 1.0}, "max_mpsrf")]:
    try:
        StudyConfig.from_dict(bad)
        raise AssertionError(f"{bad} was accepted")
    except ValueError as err:
        assert word in str(err), err
print(small)

# %% [markdown]
# ## 2. Tasks, keys and seeds
#
# A **task** is one (scenario, replicate, method). Its **key** is the canonical JSON of everything that determines its
# result: the scenario, the replicate, the method, the threshold rule, the candidates, $t_c$, the split, the method's
# effort, the study seed and the key's version. Two seeds come from hashing parts of the key (SHA-256, so they do
# not depend on Python's hash randomisation, the order of the tasks, or the worker that runs them):
# * the **data seed** from the scenario, the replicate, the release settings and the study seed only, so that every
#   method of a replicate sees the same data set and the same release (methods are compared on the same data, as in
#   the paper);
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


def _effort(config, method):
    """The settings of the config that the method's result depends on."""
    fam = METHODS[method][0]
    keys = {"boots": ("n_boot",), "dpboots": ("n_boot",), "dpabc": ("n_accept", "accept_rate"),
            "mcmc": ("n_iter", "n_warmup", "n_chains"), "dpmcmc": ("n_iter", "n_warmup", "n_chains"),
            "dpremcmc": ("n_iter", "n_warmup", "n_chains", "b"),
            "dpapprox": ("n_iter", "n_warmup", "n_chains")}[fam]
    out = {k: getattr(config, k) for k in keys + ("n_pred", "n_true")}
    if fam in config.until_converged:   # the run's length is the stopping rule's, so the key holds the rule
        out.update(n_iter="auto", target_ess=config.target_ess, max_iter=config.max_iter)
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
                     "tc": config.tc, "split": config.split, "seed": config.seed, **_effort(config, m)}
                out.append(Task(s, json.dumps(s, sort_keys=True, separators=(",", ":"))))
    return out


# %% [markdown]
# Checks: the small study has 2 tasks per replicate; keys are unique; the data seed is shared by the methods of a
# replicate and differs between replicates; a key (and so a seed) does not change when the grid around it grows
# or is reordered.

# %%
from dplit.study import derive_seed, make_tasks  # noqa: E402

ts = make_tasks(small)
assert len(ts) == 4 and len({t.key for t in ts}) == 4
assert ts[0].data_seed == ts[1].data_seed != ts[2].data_seed
assert len({t.method_seed for t in ts}) == 4
bigger = StudyConfig.from_dict({**json.loads(json.dumps(vars(small), default=list)),
                                "methods": ["dpmcmc_p1", "dpabc_p4", "dpboots"], "eps": [0.5, 1.0], "replicates": 3})
keys_big = {t.key for t in make_tasks(bigger)}
assert {t.key for t in ts} <= keys_big          # the same task in a larger study has the same key and seeds
assert derive_seed({"b": 1, "a": 2}) == derive_seed({"a": 2, "b": 1})
print(ts[0].key)

# %% [markdown]
# ## 3. One replicate: the data set and its releases
#
# From the data seed: $n$ records from $\mathrm{Dirichlet}(\boldsymbol\alpha^{\rm true})$; the unsplit release (Alg. 1:
# $a$ by the geometric mechanism with $\epsilon_2$, $\mathbf s_L$ with $\epsilon_1$); and the split release, a random
# $\mathbf D_1$ of $n_1$ records and $\mathbf D_2$ of the rest, censored **at the same $a$** and released with $\epsilon_1$ each.
# Under a fixed threshold there is no selection and $\epsilon_1 = \epsilon$. Noise is the seeded fast path
# (`secure=False`): a study must be reproducible, and it publishes nothing.

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
                                                           rng=g), n, a, eps1)
    else:
        eps1 = 0.75 * eps
        unsplit = release(X, eps1, 0.25 * eps, candidates, tc, rng=g, secure=False)
        a = unsplit.a
        sel = dict(eps2=unsplit.eps2, s_G=unsplit.s_G, candidates=unsplit.candidates, tc=unsplit.tc)
    n1 = max(2, min(n - 2, int(round(split * n))))
    perm = g.permutation(n)
    parts = [X[perm[:n1]], X[perm[n1:]]]
    noisy = [laplace_mechanism(censored_stat(P, a), censored_sensitivity(d, a, len(P)), eps1, rng=g) for P in parts]
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
# have the right sizes and Laplace scales; at $\epsilon = 10^{10}$ the statistic is the exact censored statistic; a fixed
# threshold spends the whole budget on the Laplace part.

# %%
from dplit.dirichlet import censored_stat, sufficient_stat  # noqa: E402
from dplit.release import laplace_scale  # noqa: E402
from dplit.study import simulate_replicate  # noqa: E402

s0 = dict(ts[0].settings)
rep1, rep2 = simulate_replicate(s0), simulate_replicate(s0)
assert np.array_equal(rep1["X"], rep2["X"]) and np.array_equal(rep1["unsplit"].s_L, rep2["unsplit"].s_L)
u, sp = rep1["unsplit"], rep1["split"]
assert sp.a == u.a and sp.n1 == 50 and sp.n2 == 150 and sp.eps1 == u.eps1 == 0.75
assert np.isclose(sp.scale, laplace_scale(3, u.a, 150, 0.75)) and np.isclose(sp.scale1, laplace_scale(3, u.a, 50, 0.75))
big_eps = simulate_replicate({**s0, "eps": 1e10})
assert np.allclose(big_eps["unsplit"].s_L, censored_stat(big_eps["X"], big_eps["unsplit"].a), atol=1e-8)
fixed = simulate_replicate({**s0, "threshold": 1e-6})
assert fixed["unsplit"].a == 1e-6 and fixed["unsplit"].eps1 == 1.0 and fixed["unsplit"].eps2 == 0.0
print(f"a = {u.a:g}, s_L = {np.round(u.s_L, 3)}, exact S0(D, a) = {np.round(censored_stat(rep1['X'], u.a), 3)}")

# %% [markdown]
# ## 4. The measures: MSE and the predictive ellipsoid's coverage

# %%
#| export
def mse(draws, truth):
    """Expected squared error over the draws, averaged over components: mean_j E[(draw_j - truth_j)^2]."""
    draws = np.asarray(draws, float)
    return float(np.mean((draws - np.asarray(truth, float)) ** 2))


def predictive_coverage(alpha_draws, alpha_true, *, n_pred=3000, n_true=20000, level=0.95, rng=None):
    """Coverage of the posterior-predictive Mahalanobis ellipsoid (Guo et al., Sec. 5.1).

    One predictive record per (resampled) draw of alpha; the ellipsoid in the first d - 1 coordinates holds the
    ``level`` fraction of the predictive sample; returns the fraction of ``n_true`` records from
    Dirichlet(alpha_true) inside it.
    """
    g = V.rng(rng)
    A = np.asarray(alpha_draws, float)
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
# to Monte Carlo error ($\approx 0.95 \pm 3\sqrt{0.95\cdot0.05\,(1/n_{\rm pred} + 1/n_{\rm true})}$), in $d = 2, 3, 5$. A planted bug, the
# ellipsoid centred on the truth's mode rather than the predictive mean (shift by 0.1), is caught; so is an
# over-dispersed posterior (coverage too high).

# %%
from dplit.study import mse, predictive_coverage  # noqa: E402

truth = np.array([2.2, 3.3, 4.4])
assert mse(np.tile(truth, (5, 1)), truth) == 0.0
D = rng.normal(truth + 0.2, 0.5, (20000, 3))
assert abs(mse(D, truth) - (0.2**2 + 0.5**2)) < 0.01
tol = 3 * np.sqrt(0.95 * 0.05 * (1 / n_cover + 1 / 20000)) + 0.005
for at in ([3.3, 4.4], [2.2, 3.3, 4.4], [2.2, 3.3, 4.4, 5.5, 6.6], [0.5, 0.5, 0.5]):
    cov = predictive_coverage([at], at, n_pred=n_cover, rng=rng)
    assert abs(cov - 0.95) < tol, (at, cov)


def _coverage_bug(alpha_draws, alpha_true, shift=0.1, rng=None):
    """Planted bug: the ellipsoid is centred 0.1 away from the predictive mean."""
    g = np.random.default_rng(rng)
    pred = g.dirichlet(alpha_draws[0], n_cover)[:, :-1]
    zt = g.dirichlet(alpha_true, 20000)[:, :-1]
    m, prec = pred.mean(0) + shift, np.linalg.inv(np.cov(pred, rowvar=False))
    q = np.quantile(np.einsum("ij,jk,ik->i", pred - pred.mean(0), prec, pred - pred.mean(0)), 0.95)
    return np.mean(np.einsum("ij,jk,ik->i", zt - m, prec, zt - m) <= q)


assert abs(_coverage_bug([truth], truth, rng=1) - 0.95) > 5 * tol
wide = truth * np.exp(rng.normal(0, 0.8, (2000, 1)))            # alpha_0 far too uncertain: heavier predictive tails
assert predictive_coverage(wide, truth, n_pred=n_cover, rng=rng) > 0.95 + tol
print(f"coverage at the truth: {cov:.3f} (tolerance {tol:.3f}); bug: {_coverage_bug([truth], truth, rng=1):.3f}")

# %% [markdown]
# What the coverage looks at, for $\boldsymbol\alpha_3 = (2.2, 3.3, 4.4)$ in the plane of the first two coordinates: the
# grey points are records from the true Dirichlet, the curve the 95% ellipsoid of a posterior predictive sample. On
# the left the "posterior" is the truth itself; on the right $\alpha_0$ is far too uncertain (the `wide` draws of the
# check above), so the predictive is over-dispersed, its ellipsoid too large, and the coverage too high.

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
    ring = predictive_ellipse(draws, rng=SEED)
    c = predictive_coverage(draws, truth, n_pred=n_cover, rng=SEED)
    ax.scatter(records[:, 0], records[:, 1], s=2, color="0.6", label="true records")
    ax.plot(ring[:, 0], ring[:, 1], color="C3" if c > 0.95 + tol else "C0", lw=2, label="95% predictive ellipsoid")
    ax.set_title(f"{label}: coverage {c:.3f}", fontsize=10)
    ax.set_xlabel("x1", fontsize=9)
axes[0].set_ylabel("x2", fontsize=9)
axes[0].legend(fontsize=8, loc="upper right")
fig_cov.tight_layout()

# %% [markdown]
# ## 5. One task: run a method on a replicate and measure it
#
# Every method gets the release its prior needs (p1, DPBoots: unsplit; p2-p5: split), runs single-threaded
# (`n_jobs=1`: the study's parallelism is over tasks) without a progress bar, and is reduced to its draws of
# $\boldsymbol\alpha$ (bootstrap replicates, or posterior draws pooled over chains). A method that fails (an exception) is
# recorded as failed, with its message, rather than stopping the study; a run that warns about convergence is
# recorded with its diagnostics (filtering is the summary's job). `run_method` is public: notebook 11 runs the same
# methods on the ATUS releases.

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
    effort.update(n_jobs=1, **({"thin": 10} if fam == "mcmc" else {}))
    data = replicate["X"] if fam in ("boots", "mcmc") else rel
    res = fit(data, fam, prior=prior, rng=rng, **effort)
    at = dict(res.posterior.attrs)
    keep = {k: float(at[k]) for k in ("mpsrf", "rhat_max", "ess_bulk_min", "n_failed", "tolerance") if k in at}
    return results.draws(res, "alpha"), keep


def run_task(task):
    """Run one task (a :class:`Task`, its key or its settings) and return its record: a dict of measures."""
    s = json.loads(task) if isinstance(task, str) else dict(task if isinstance(task, dict) else task.settings)
    key = json.dumps(s, sort_keys=True, separators=(",", ":"))
    g = np.random.default_rng(derive_seed(key))
    alpha = np.asarray(s["alpha_true"], float)
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
# Checks: each family runs on a small replicate and returns finite measures; the non-private benchmarks at
# $\epsilon = 10^{10}$ and DPMCMC$_{p1}$ agree on $E[\mathbf x]$; a method that raises is recorded, not fatal.

# %%
from dplit.study import run_task  # noqa: E402

probe = StudyConfig(alpha_true=((2.2, 3.3, 4.4),), n=(500,), eps=(1e10,), replicates=1, quick=True,
                    methods=("boots", "dpboots", "mcmc_p1", "dpmcmc_p1", "dpremcmc_p1", "dpabc_p4", "dpapprox_p4"))
probe_out = {t.settings["method"]: run_task(t) for t in make_tasks(probe)}
for m, o in probe_out.items():
    assert o["error"] is None and np.isfinite(o["mse_alpha"]) and 0.5 < o["coverage"] <= 1, (m, o)
assert max(o["se_mean"] for o in probe_out.values()) < 1e-3
broken = run_task({**make_tasks(probe)[0].settings, "n_boot": -1})
assert broken["error"] and "n_boot" in broken["error"]
print({m: (round(o["mse_alpha"], 3), round(o["coverage"], 3), round(o["runtime"], 2)) for m, o in probe_out.items()})

# %% [markdown]
# ## 6. The store: nothing lost, nothing redone
#
# A store holds finished tasks under their keys; the process that drives the study writes each one as soon as it
# finishes (workers only compute). Two forms, chosen by the path (`open_store`):
#
# * **A text table** (`*.jsonl`, `TableStore`): one line per task, `{"settings": {...}, "result": {...}}`, appended
#   and synced to disk. This is the form to commit: a diff shows the tasks added, and any machine extends the same
#   study from a clone. A run killed while writing leaves at most one line without its newline; it is not a task,
#   and the next write drops it (with a warning) so that its task runs again. A damaged line elsewhere is an error
#   naming the line, never skipped in silence.
# * **SQLite** (any other path, `ResultStore`): one table, `results(key PRIMARY KEY, method, record, finished)`.
#   Its transactions make each write all-or-nothing; `INSERT OR IGNORE` on the primary key makes a duplicate
#   impossible; reading opens the file read-only (`mode=ro`), so a complete study does not touch it at all.
#
# `export_table` (and `dplit study export`) copies a SQLite store into a text table, adding only the tasks it lacks,
# in key order.

# %%
#| export
_SCHEMA = ("CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, method TEXT NOT NULL, "
           "record TEXT NOT NULL, finished REAL NOT NULL)")


class ResultStore:
    """Finished tasks of one or more studies in a SQLite file, keyed by the task key.

    Parameters
    ----------
    path : str or Path
        The file (created with its table at the first write).
    """

    def __init__(self, path):
        self.path = Path(path)

    def check(self, *, write=False):
        """Refuse, in one line (ValueError naming the path), a path that cannot be a store: a folder, a file that
        is not a SQLite database or has no ``results`` table, and with ``write`` a missing or read-only folder.
        An absent file (or an empty one) is an empty store. Reads nothing but SQLite's table list; returns self."""
        p = self.path
        if p.is_dir():
            raise ValueError(f"{p} is a folder, not a store; give a file such as {p / 'results.sqlite'}")
        if not p.exists():
            if write and not p.parent.is_dir():
                raise ValueError(f"{p}: the folder {p.parent} does not exist (create it first)")
            if write and not os.access(p.parent, os.W_OK):
                raise ValueError(f"{p}: the folder {p.parent} is not writable")
            return self
        try:
            con = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
            try:
                tables = {name for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            finally:
                con.close()
        except sqlite3.Error as err:
            raise ValueError(f"{p} is not a study store (SQLite says: {err})") from None
        if tables and "results" not in tables:
            raise ValueError(f"{p} is a SQLite file without a 'results' table, not a study store")
        return self

    def _read(self):
        if not self.check().path.exists():
            return None
        return sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)

    def done_keys(self):
        """The set of keys already stored (opens the file read-only; an absent file is empty)."""
        con = self._read()
        if con is None:
            return set()
        try:
            return {k for (k,) in con.execute("SELECT key FROM results")}
        except sqlite3.OperationalError:   # a file without the table yet
            return set()
        finally:
            con.close()

    def put(self, key, record):
        """Write one finished task at once (committed); a key already stored is left as it is."""
        con = sqlite3.connect(self.check(write=True).path, timeout=60)
        try:
            with con:
                con.execute(_SCHEMA)
                con.execute("INSERT OR IGNORE INTO results VALUES (?, ?, ?, ?)",
                            (key, json.loads(key)["method"], json.dumps(record), time.time()))
        finally:
            con.close()

    def rows(self):
        """Every stored task as one flat dict: its settings and its measures."""
        con = self._read()
        if con is None:
            return []
        try:
            return [{**json.loads(k), **json.loads(r)} for k, r in con.execute("SELECT key, record FROM results")]
        except sqlite3.OperationalError:   # a file without the table yet (e.g. empty)
            return []
        finally:
            con.close()

    def records(self):
        """(key, record) of every stored task."""
        con = self._read()
        if con is None:
            return []
        try:
            return [(k, json.loads(r)) for k, r in con.execute("SELECT key, record FROM results")]
        except sqlite3.OperationalError:   # a file without the table yet
            return []
        finally:
            con.close()

    def __len__(self):
        return len(self.done_keys())


class TableStore:
    """Finished tasks in a text table: JSON lines, one task per line, ``{"settings": ..., "result": ...}``.

    The form to commit and share: a diff shows the tasks added, any machine can extend the same study, and
    :func:`run_study` resumes from it as from a SQLite store. Each line is appended and flushed to disk as its
    task finishes. A line cut short by a killed run (the last line, without its newline) is not a task: it is
    dropped at the next write, with a warning, and its task runs again.

    Parameters
    ----------
    path : str or Path
        The file, ending in ``.jsonl`` (created at the first write).
    """

    def __init__(self, path):
        self.path = Path(path)

    def check(self, *, write=False):
        """Refuse a path that cannot be a text table (ValueError naming it, one line); returns self."""
        p = self.path
        if p.is_dir():
            raise ValueError(f"{p} is a folder, not a store; give a file such as {p / 'results.jsonl'}")
        if not p.exists():
            if write and not p.parent.is_dir():
                raise ValueError(f"{p}: the folder {p.parent} does not exist (create it first)")
            if write and not os.access(p.parent, os.W_OK):
                raise ValueError(f"{p}: the folder {p.parent} is not writable")
        return self

    def _lines(self):
        """(key, settings, result) of every whole line, first occurrence of a key kept; a bad line raises."""
        if not self.check().path.exists():
            return []
        text = self.path.read_text()
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        elif lines:            # a last line without its newline: cut short by a killed run, not a task
            lines.pop()
        out, seen = [], set()
        for i, line in enumerate(lines, 1):
            try:
                row = json.loads(line)
                s, r = row["settings"], row["result"]
            except (ValueError, KeyError, TypeError):
                raise ValueError(f"{self.path}, line {i}: not a task row ({{'settings': ..., 'result': ...}})") from None
            key = json.dumps(s, sort_keys=True, separators=(",", ":"))
            if key not in seen:
                seen.add(key)
                out.append((key, s, r))
        return out

    def done_keys(self):
        """The set of keys already stored."""
        return {k for k, _, _ in self._lines()}

    def records(self):
        """(key, record) of every stored task."""
        return [(k, r) for k, _, r in self._lines()]

    def put(self, key, record):
        """Append one finished task (flushed and synced to disk); a key already stored is left as it is."""
        self.put_many([(key, record)])

    def put_many(self, pairs):
        """Append finished tasks ``(key, record)`` in one write; keys already stored are left as they are."""
        p = self.check(write=True).path
        have = self.done_keys()
        new = []
        for key, record in pairs:
            if key not in have:
                have.add(key)
                new.append({"settings": json.loads(key), "result": record})
        if not new:
            return
        with open(p, "a+b") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            if size:
                fh.seek(max(0, size - 65536))
                tail = fh.read()
                if not tail.endswith(b"\n"):          # drop a line cut short by a killed run
                    cut = tail.rfind(b"\n")
                    fh.truncate(size - len(tail) + cut + 1 if cut >= 0 else 0)
                    warnings.warn(f"{p}: dropped an unfinished last line (a run killed while writing)",
                                  stacklevel=2)
            fh.seek(0, os.SEEK_END)
            fh.write("".join(json.dumps(row, sort_keys=True, separators=(",", ":")) + "\n" for row in new).encode())
            fh.flush()
            os.fsync(fh.fileno())

    def rows(self):
        """Every stored task as one flat dict: its settings and its measures."""
        return [{**s, **r} for _, s, r in self._lines()]

    def __len__(self):
        return len(self._lines())


def open_store(store):
    """The store at a path: a :class:`TableStore` for ``*.jsonl``, else a :class:`ResultStore` (SQLite)."""
    if isinstance(store, (ResultStore, TableStore)):
        return store
    return TableStore(store) if Path(store).suffix == ".jsonl" else ResultStore(store)


def export_table(store, out):
    """Copy every task of a store into a text table (``*.jsonl``), adding only the tasks it lacks.

    Returns the number of tasks added. They are added in key order, so two exports of one store give one file.
    """
    dst = open_store(out)
    if not isinstance(dst, TableStore):
        raise ValueError(f"out must be a text table ending in .jsonl, got {out}")
    have = dst.check(write=True).done_keys()
    todo = sorted((k, r) for k, r in open_store(store).check().records() if k not in have)
    dst.put_many(todo)
    return len(todo)


# %% [markdown]
# Checks: a write is visible at once, a second write of the same key changes nothing, the rows are the task's
# settings joined with its record, and reading a store leaves the file's bytes and time stamp unchanged.

# %%
from dplit.study import ResultStore  # noqa: E402

st = ResultStore(tmp / "check.sqlite")
assert len(st) == 0 and st.rows() == [] and not st.path.exists()
st.put(ts[0].key, {"mse_alpha": 1.0})
st.put(ts[0].key, {"mse_alpha": 2.0})
assert st.done_keys() == {ts[0].key} and st.rows()[0]["mse_alpha"] == 1.0 and st.rows()[0]["method"] == "dpboots"
before = (st.path.read_bytes(), st.path.stat().st_mtime_ns)
st.done_keys(), st.rows()
assert (st.path.read_bytes(), st.path.stat().st_mtime_ns) == before
# A path that cannot be a store is refused in one line naming it, before any task runs: a folder, a file that is
# not a SQLite database, a database of something else, a store in a folder that does not exist.
(tmp / "not_db.sqlite").write_text("hello")
sqlite3.connect(tmp / "other.sqlite").execute("CREATE TABLE t (x)").connection.close()
for bad_store, word in [(tmp, "is a folder"), (tmp / "not_db.sqlite", "not a study store"),
                        (tmp / "other.sqlite", "without a 'results' table"), (tmp / "no" / "s.sqlite", "does not exist")]:
    try:
        ResultStore(bad_store).check(write=True)
    except ValueError as e:
        assert word in str(e) and "\n" not in str(e), e
    else:
        raise AssertionError(f"{bad_store} accepted")

# %% [markdown]
# The text table keeps the same promises: the same task twice is one line, a line cut short by a kill is dropped at
# the next write (and its task is not counted as done), and the export of the SQLite store above is the same rows.

# %%
from dplit.study import TableStore, export_table, open_store  # noqa: E402

tab = open_store(tmp / "check.jsonl")
assert isinstance(tab, TableStore) and len(tab) == 0
tab.put(ts[0].key, {"mse_alpha": 1.0})
tab.put(ts[0].key, {"mse_alpha": 2.0})
tab.put(ts[1].key, {"mse_alpha": 3.0})
assert len(tab) == 2 and tab.rows()[0]["mse_alpha"] == 1.0
tab.path.write_bytes(tab.path.read_bytes()[:-5])           # a run killed while writing the second line
assert tab.done_keys() == {ts[0].key}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    tab.put(ts[1].key, {"mse_alpha": 3.0})
assert len(tab) == 2 and tab.path.read_text().count("\n") == 2 and "unfinished last line" in str(caught[0].message)
assert export_table(st, tmp / "export.jsonl") == 1 and TableStore(tmp / "export.jsonl").rows() == st.rows()
print(tab.path.read_text().splitlines()[0][:120], "...")

# %% [markdown]
# ## 7. The runner: any executor, resumable
#
# `run_study(config, store, executor=...)` lists the tasks, drops those already in the store, submits the rest to a
# `concurrent.futures.Executor` and writes each result as it arrives. With nothing left it returns at once without
# creating an executor or touching the store. The default executor is a local process pool (`workers` processes);
# Dask runs the same study on a cluster through `distributed.Client(address).get_executor()` (optional extra
# `distributed`; imported only when asked for, by `dask_executor`). Tasks are submitted in a bounded window (twice
# the workers) rather than all at once, so that a study of 20,000 tasks does not queue them all and an interrupted
# run loses at most the tasks in flight. A small `SerialExecutor` runs tasks one by one
# in the calling process (no start-up cost: the notebook's checks and tests use it). Each worker runs a task
# single-threaded; the task's seeds come from its key, so where and in which order it runs does not change its
# result.

# %%
#| export
class SerialExecutor(cf.Executor):
    """A ``concurrent.futures.Executor`` that runs each task at submission, in the calling process."""

    _max_workers = 1

    def submit(self, fn, /, *args, **kwargs):
        fut = cf.Future()
        try:
            fut.set_result(fn(*args, **kwargs))
        except BaseException as err:  # noqa: BLE001 - handed to the caller through the future
            fut.set_exception(err)
        return fut


def dask_executor(scheduler=None, **client_options):
    """A ``concurrent.futures`` executor on a Dask cluster (``scheduler``: address, or None for a local cluster).

    Needs the optional extra ``distributed`` (``pip install 'dplit[distributed]'``). Returns ``(executor, client)``;
    close the client when done.
    """
    try:
        from distributed import Client
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("the Dask executor needs the optional extra: pip install 'dplit[distributed]'") from err
    client = Client(scheduler, **client_options) if scheduler else Client(processes=True, **client_options)
    return client.get_executor(), client


class StudyRun(NamedTuple):
    """What :func:`run_study` did: tasks run now, tasks found done, wall time in seconds."""

    ran: int
    found: int
    seconds: float


def run_study(config, store, *, executor=None, progress=True, workers=None, max_tasks=None):
    """Run every task of a study that is not in the store yet, writing each result as it finishes.

    Parameters
    ----------
    config : StudyConfig, dict or path of a TOML file
        The study.
    store : ResultStore, TableStore, str or Path
        Where finished tasks go: a text table for a path ending in ``.jsonl`` (:class:`TableStore`, the form to
        commit), else a SQLite file (:class:`ResultStore`).
    executor : concurrent.futures.Executor, optional
        Where tasks run (a process pool, a Dask ``client.get_executor()``, :class:`SerialExecutor`). Default: a
        local process pool of ``workers`` processes (default: the CPU count), shut down at the end.
    progress : bool, default True
        A progress bar over the tasks run now.
    workers : int, optional
        Processes of the default pool.
    max_tasks : int, optional
        Run at most this many of the remaining tasks (a study in slices).

    Returns
    -------
    StudyRun
        ``ran`` (tasks run now), ``found`` (already done), ``seconds``.

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
    config = _as_config(config)
    store = open_store(store).check(write=True)  # a bad store fails here, before any task
    if workers is not None:
        V.count(workers, "workers")
    t0 = time.perf_counter()
    done = store.done_keys()
    todo = [t for t in make_tasks(config) if t.key not in done]
    found = len(make_tasks(config)) - len(todo)
    if max_tasks is not None:
        todo = todo[: V.count(max_tasks, "max_tasks", minimum=0)]
    if not todo:
        return StudyRun(0, found, time.perf_counter() - t0)
    own = executor is None
    if own:
        executor = cf.ProcessPoolExecutor(max_workers=workers)
    bar = _bar(progress, len(todo))
    window = 2 * (getattr(executor, "_max_workers", None) or os.cpu_count() or 1)
    queue, pending = list(reversed(todo)), {}
    try:
        while queue or pending:   # keep a bounded window in flight; write each result as it arrives
            while queue and len(pending) < window:
                t = queue.pop()
                pending[executor.submit(run_task, t.key)] = t
            finished, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
            for fut in finished:
                store.put(pending.pop(fut).key, fut.result())
                bar.update(1)
    finally:
        bar.close()
        if own:
            executor.shutdown(wait=True, cancel_futures=True)
    return StudyRun(len(todo), found, time.perf_counter() - t0)


def _as_config(config):
    """A StudyConfig from a StudyConfig, a dict or a TOML path."""
    if isinstance(config, StudyConfig):
        return config
    if isinstance(config, dict):
        return StudyConfig.from_dict(config)
    return StudyConfig.from_toml(config)


def _bar(progress, total):
    """A tqdm bar, or a stand-in with the same two methods."""
    if progress:
        from tqdm.auto import tqdm

        return tqdm(total=total, desc="tasks")

    class _Null:
        def update(self, k):
            pass

        def close(self):
            pass

    return _Null()


# %% [markdown]
# Checks. The small study of the issue runs (4 tasks); run again it does nothing and leaves the file untouched. An
# **interrupted** study (the executor is stopped by a `KeyboardInterrupt` at the third task, as Ctrl-C would) keeps
# the two finished rows; rerun, it runs only the two missing tasks, and the store then holds each task once with the
# same measures as an uninterrupted run in a process pool (runtimes apart): a result does not depend on where, when
# or in which order it ran.

# %%
from dplit.study import SerialExecutor, run_study  # noqa: E402

path_a = tmp / "a.sqlite"
first = run_study(small, path_a, executor=SerialExecutor(), progress=False)
assert first[:2] == (4, 0)
before = (path_a.read_bytes(), path_a.stat().st_mtime_ns)
again = run_study(small, path_a, executor=SerialExecutor(), progress=False)
assert again[:2] == (0, 4) and (path_a.read_bytes(), path_a.stat().st_mtime_ns) == before


class Interrupted(SerialExecutor):
    """Raises KeyboardInterrupt at the k-th submission (a study stopped by Ctrl-C)."""

    def __init__(self, k):
        self.k = k

    def submit(self, fn, /, *args, **kwargs):
        self.k -= 1
        if self.k == 0:
            raise KeyboardInterrupt
        return super().submit(fn, *args, **kwargs)


path_b = tmp / "b.sqlite"
try:
    run_study(small, path_b, executor=Interrupted(3), progress=False)
except KeyboardInterrupt:
    pass
assert len(ResultStore(path_b)) == 2
resumed = run_study(small, path_b, executor=SerialExecutor(), progress=False)
assert resumed[:2] == (2, 2) and len(ResultStore(path_b)) == 4


def _measures(store):
    return {json.dumps({k: v for k, v in r.items() if k != "runtime"}, sort_keys=True) for r in store.rows()}


from concurrent.futures import ProcessPoolExecutor  # noqa: E402

with ProcessPoolExecutor(2) as pool:
    run_study(small, tmp / "c.sqlite", executor=pool, progress=False)
assert _measures(ResultStore(path_b)) == _measures(ResultStore(tmp / "c.sqlite")) == _measures(ResultStore(path_a))
print(first, again, resumed)

# %% [markdown]
# ## 8. From the store to the paper's figures
#
# `load_results` reads a store into a pandas table (one row per task: settings and measures). `summarise` groups
# by (alpha, n, eps, threshold, method) and reports the runs, the failures (a method that raised), the fraction
# **converged** (multivariate PSRF <= `max_mpsrf`, 1.1 as in the paper; bootstrap and ABC have no chains and count as
# converged), and the medians of the measures **over the converged runs**, as the paper discards the others.
# Figure 1 rescales the median MSEs of a true $\boldsymbol\alpha$ by their largest value over all its (eps, n, method), so
# that they lie in (0, 1] and the trends in eps and n stay visible, and draws each bar from 1 down to its value on a
# log scale: a longer bar is a smaller MSE; the non-private benchmarks are the wide black bars.

# %%
#| export
def load_results(store):
    """A pandas DataFrame of a store: one row per task, its settings and measures (``alpha`` as a label)."""
    import pandas as pd

    store = open_store(store)
    df = pd.DataFrame(store.rows())
    if len(df):
        df["alpha"] = df["alpha_true"].map(lambda a: "(" + ", ".join(f"{x:g}" for x in a) + ")")
        df["threshold"] = df["threshold"].astype(str)
    return df


_MEASURES = ("mse_alpha", "mse_mean", "se_alpha", "se_mean", "coverage")


def summarise(df, *, max_mpsrf=1.1, intervals=False, level=0.9, n_boot=1000, min_runs=5, rng=None):
    """Medians per (alpha, n, eps, threshold, method) over the converged runs, with run, failure and convergence counts.

    Parameters
    ----------
    df : pandas.DataFrame
        From :func:`load_results`.
    max_mpsrf : float, default 1.1
        Runs above this multivariate PSRF are not converged (and left out of the medians), as in the paper.
    intervals : bool, default False
        Add the Monte Carlo error of each median: columns ``<measure>_lo`` and ``<measure>_hi``, the percentile
        bootstrap interval (``level``, ``n_boot`` resamples of the data sets of the cell), and ``converged_lo``,
        ``converged_hi`` (the same for the fraction converged). A cell with fewer than ``min_runs`` values has
        NaN intervals: a bootstrap of one or two values says nothing about their error.
    rng : None, int or numpy.random.Generator
        The bootstrap's randomness.
    """
    import pandas as pd

    max_mpsrf = check_max_mpsrf(max_mpsrf)
    df = df.copy()
    df["failed"] = df["error"].notna()
    mp = df["mpsrf"] if "mpsrf" in df else pd.Series(np.nan, index=df.index)
    df["converged"] = ~df["failed"] & ~(mp.astype(float) > max_mpsrf)
    keys = ["alpha", "n", "eps", "threshold", "method"]
    g = df.groupby(keys)
    out = g.agg(runs=("method", "size"), failed=("failed", "sum"), converged=("converged", "mean"),
                runtime=("runtime", "median")).reset_index()
    good = df[df["converged"]].groupby(keys)
    med = good[list(_MEASURES)].median().reset_index()
    out = out.merge(med, on=keys, how="left")
    if intervals:
        level = V.unit_interval(level, "level")
        g = V.rng(rng)
        ci = []
        for key, sub in df.groupby(keys):
            row = dict(zip(keys, key))
            ok = sub[sub["converged"]]
            for col, values, stat in [(c, ok[c], np.median) for c in _MEASURES] + [
                    ("converged", sub["converged"], np.mean)]:
                v = values.astype(float).to_numpy()
                v = v[np.isfinite(v)]
                lo = hi = np.nan
                if len(v) >= V.count(min_runs, "min_runs"):
                    boot = stat(v[g.integers(0, len(v), (V.count(n_boot, "n_boot"), len(v)))], axis=1)
                    lo, hi = np.quantile(boot, [(1 - level) / 2, (1 + level) / 2])
                row[f"{col}_lo"], row[f"{col}_hi"] = float(lo), float(hi)
            ci.append(row)
        out = out.merge(pd.DataFrame(ci), on=keys, how="left")
    return out


def _bars(ax, sub, methods, value, *, log, base):
    """Grouped bars: one group per (eps, n), one bar per method; benchmarks wide and black."""
    groups = sorted({(e, n) for e, n in zip(sub["eps"], sub["n"])})
    width = 0.8 / max(len(methods), 1)
    colors = _colors(len(methods))
    for k, m in enumerate(methods):
        bench = m in ("boots", "mcmc_p1")
        for gi, (e, n) in enumerate(groups):
            row = sub[(sub["method"] == m) & (sub["eps"] == e) & (sub["n"] == n)]
            if row.empty or not np.isfinite(row[value].iloc[0]):
                continue
            v = float(row[value].iloc[0])
            x = gi + (k - (len(methods) - 1) / 2) * width
            ax.bar(x, v - base, bottom=base, width=width * (1.6 if bench else 0.9),
                   color="k" if bench else colors[k], label=m if gi == 0 else None, zorder=1 if bench else 2)
            if f"{value}_lo" in row:     # the Monte Carlo error of the median (summarise(..., intervals=True))
                lo, hi = float(row[f"{value}_lo"].iloc[0]), float(row[f"{value}_hi"].iloc[0])
                if np.isfinite(lo) and np.isfinite(hi):
                    ax.plot([x, x], [lo, hi], color="0.35" if bench else "k", lw=0.8, zorder=3)
    ax.set_xticks(range(len(groups)), [f"eps={e:g}\nn={n}" for e, n in groups], fontsize=8)
    if log:
        ax.set_yscale("log")


def _colors(k):
    """k distinct colours from matplotlib's tab20."""
    import matplotlib.pyplot as plt

    return [plt.get_cmap("tab20")(i % 20) for i in range(k)]


# %% [markdown]
# The figures: Figure 1 (MSE of $\boldsymbol\alpha$), Figure 2 (MSE of $E[\mathbf x]$ and predictive coverage), Figure S2 (fraction
# of runs converged) and Figure S3 (fraction of data sets on which DP $a$ beats a fixed $a$), one panel per true
# $\boldsymbol\alpha$.

# %%
#| export
def figure_mse(summary, *, metric="mse_alpha", methods=None, threshold="dp"):
    """Figure 1 (``metric="mse_alpha"``) or the left of Figure 2 (``"mse_mean"``): rescaled median MSE, log scale."""
    import matplotlib.pyplot as plt

    s = summary[summary["threshold"] == str(threshold)]
    alphas = list(dict.fromkeys(s["alpha"]))
    methods = [m for m in (methods or METHODS) if m in set(s["method"])]
    fig, axes = plt.subplots(len(alphas), 1, figsize=(7.5, 2.1 * len(alphas) + 1.0), squeeze=False)
    for ax, al in zip(axes[:, 0], alphas):
        sub = s[s["alpha"] == al].copy()
        top = sub[metric].max()
        sub["scaled"] = sub[metric] / top
        if f"{metric}_lo" in sub:
            sub["scaled_lo"], sub["scaled_hi"] = sub[f"{metric}_lo"] / top, sub[f"{metric}_hi"] / top
        _bars(ax, sub, methods, "scaled", log=True, base=1.0)
        ax.set_ylabel("rescaled median MSE", fontsize=9)
        ax.set_title(f"alpha_true = {al}", fontsize=9)
    _legend(fig, axes)
    fig.suptitle({"mse_alpha": "Figure 1: MSE of alpha", "mse_mean": "Figure 2 (left): MSE of E[x | alpha]"}
                 .get(metric, metric) + " (longer bar = smaller MSE)", fontsize=10)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


def figure_coverage(summary, *, methods=SELECTED, threshold="dp"):
    """Figure 2 (right): median coverage of the 95% posterior-predictive ellipsoid."""
    return _figure_level(summary, "coverage", methods, threshold, 0.95, "Figure 2 (right): predictive coverage")


def figure_convergence(summary, *, methods=None, threshold="dp"):
    """Figure S2: fraction of runs whose multivariate PSRF is at most the study's ``max_mpsrf``."""
    methods = [m for m in (methods or METHODS) if METHODS[m][0] in ("mcmc", "dpmcmc", "dpremcmc", "dpapprox")]
    return _figure_level(summary, "converged", methods, threshold, 1.0, "Figure S2: fraction converged (MPSRF <= 1.1)")


def _figure_level(summary, value, methods, threshold, ref, title):
    import matplotlib.pyplot as plt

    s = summary[summary["threshold"] == str(threshold)]
    alphas = list(dict.fromkeys(s["alpha"]))
    methods = [m for m in methods if m in set(s["method"])]
    fig, axes = plt.subplots(len(alphas), 1, figsize=(7.5, 2.0 * len(alphas) + 1.0), squeeze=False)
    for ax, al in zip(axes[:, 0], alphas):
        _bars(ax, s[s["alpha"] == al], methods, value, log=False, base=0.0)
        ax.axhline(ref, c="r", ls="--", lw=1)
        ax.set_ylim(0, 1.05)
        ax.set_title(f"alpha_true = {al}", fontsize=9)
    _legend(fig, axes)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


def _legend(fig, axes):
    """One legend under the panels, in rows, so the figure fits a page column."""
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 5), fontsize=8, frameon=False)


def fixed_vs_dp(df, *, fixed, metric="mse_alpha"):
    """Figure S3's numbers: per (alpha, n, eps, method), the fraction of data sets where DP a gives the smaller MSE."""
    keys = ["alpha", "n", "eps", "method", "replicate"]
    a = df[(df["threshold"] == "dp") & df["error"].isna()].set_index(keys)[metric]
    b = df[(df["threshold"] == str(fixed)) & df["error"].isna()].set_index(keys)[metric]
    both = a.to_frame("dp").join(b.to_frame("fixed"), how="inner")
    both["dp_better"] = both["dp"] < both["fixed"]
    return both.groupby(level=["alpha", "n", "eps", "method"])["dp_better"].agg(["mean", "size"]).reset_index()

# %% [markdown]
# ## 9. The study at the paper's scale
#
# The paper's grid runs outside the notebook, into a committed text table that any machine extends:
# `benchmarks/sec51.toml` holds its settings (all 40 cells, the two benchmarks and one method per family, 50 data sets
# per cell) and `benchmarks/results/sec51_study.jsonl` what is done. Notebook `10b_simulation_results` draws Figures
# 1-2 and S2 from that table with Monte Carlo error bars and checks each of the paper's statements about them.

# %% [markdown]
# ## The full study from the command line
#
# ```bash
# dplit study run --config study.toml --store results.jsonl --workers 8        # local process pool
# dplit study run --config study.toml --store results.jsonl --scheduler tcp://host:8786   # a Dask cluster
# dplit study report --store results.jsonl --out figures/                     # tables and Figures 1, 2, S2
# dplit study export --store results.sqlite --out results.jsonl             # a SQLite store as a text table
# ```
#
# `study.toml` holds a `[study]` table with the keys of `StudyConfig` (an empty table is the paper's full grid). A
# store ending in `.jsonl` is a text table to commit and share; any other path is a SQLite file. Stop a run at any
# time and run the same command again: it resumes where it stopped; once complete it writes nothing.
#
# ## When to use this
#
# * To compare methods on **your** $n$, $d$ and $\epsilon$ before spending a budget: a study of a few scenarios at the
#   quick effort takes minutes and tells which methods converge and how wide they are.
# * To reproduce or extend Sec. 5.1: the runner is resumable and scales out, so the 20,000 tasks of the paper's grid
#   are a matter of CPU hours, not of babysitting.
# * Read the convergence counts (`summarise(...)["converged"]`) before the medians: as in the paper, the medians are
#   over converged runs only, and a method that rarely converges has medians over a few, lucky, runs.
