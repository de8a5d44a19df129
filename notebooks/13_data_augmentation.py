# %% [markdown]
# # Data augmentation MCMC for any privatised statistic: dapper in Python
#
# * **For:** the posterior of any model given any noisy statistic whose mechanism has a density (the sampler of Ju et al. 2022, as the R package dapper packages it).
# * **You need:** a release and four functions, dapper's modules (latent data generator, confidential-data posterior step, mechanism log density, record-additive statistic term), in plain Python, as batch (vectorised) functions, or in numba.
# * **You get:** posterior draws (ArviZ, with a convergence report), dapper's summary table, and the engine that ran: plain Python modules are compiled with numba when they can be.
#
# The examples of dapper's paper (Examples 1-3, the mixing study of its Sec. 6, and notebook 07's DPMCMC as an
# instance) are in notebook 13b.

# %%
#| default_exp augmentation

# %% [markdown]
# ## Parameters
#
# Sizes come from the size switch (`DPLIT_QUICK=1` gives the quick sizes of the test suite); every random
# draw comes from a generator seeded here.

# %%
# %matplotlib inline
import math
import time
import warnings

import arviz as az
import matplotlib.pyplot as plt
import numpy as np
from numba import njit
from scipy import special, stats

from dplit.config import is_quick, size
from dplit.mechanisms import randomized_response_logpmf
from dplit.sampling import ConvergenceWarning
from dplit.testing import rank_uniformity_pvalues, sbc_ranks

# which engine ran is read from attrs["engine"]; the notice of a module numba could not compile is shown where the
# engines are compared ("Three ways to write the modules")
warnings.filterwarnings("ignore", message="dapper_sample: .* did not compile", category=UserWarning)
SEED = 20261125
rng = np.random.default_rng(SEED)
n_sbc = size(full=300, quick=60)              # simulation-based calibration replicates
print(f"quick mode: {is_quick()}; n_sbc = {n_sbc}")

# %% [markdown]
# ## The method (dapper, Sec. 3; Ju et al. 2022)
#
# Confidential records $x = (x_1, \dots, x_n)$, $x_i \in \mathbb R^p$, follow a model $f(x \mid \theta)$ with prior
# $p(\theta)$. The curator publishes $s_{dp} \sim \eta(\cdot \mid x)$, a noisy statistic whose mechanism density $\eta$ is
# public. The posterior given the release, $p(\theta \mid s_{dp}) \propto p(\theta)\int \eta(s_{dp} \mid x) f(x \mid \theta)\,dx$,
# rarely has a closed form. Data augmentation samples the joint $p(\theta, x \mid s_{dp})$ instead, alternating
#
# 1. $\theta \sim p(\theta \mid x)$: the **confidential-data posterior** ($s_{dp}$ depends on $\theta$ only through $x$);
# 2. each record $x_i$ by Metropolis-Hastings with the model as proposal, $x_i^* \sim f(\cdot \mid \theta)$: the model
#    density cancels in the ratio, which is the ratio of the mechanism densities
#    $\alpha = \min\{1, \eta(s_{dp} \mid x_i^*, x_{-i}) / \eta(s_{dp} \mid x)\}$.
#
# When the mechanism is **record additive**, $\eta(s_{dp} \mid x) = g\big(s_{dp}, \sum_i t_i(x_i, s_{dp})\big)$, a proposal
# changes the sum by $t_i(x_i^*, s_{dp}) - t_i(x_i, s_{dp})$: an update that costs the size of $t_i$, not $n$.
# dapper asks for four **modules**, in its argument order:
#
# | module | dapper | here | what it does |
# |---|---|---|---|
# | `latent_f(theta)` | the same | `latent_f(theta[, rng])` | draws a whole database $x \sim f(\cdot \mid \theta)$: an $n \times p$ matrix (the proposals of one sweep) |
# | `post_f(dmat, theta)` | the same | `post_f(dmat, theta[, rng])` | one draw (or one valid MCMC step from `theta`) of $p(\theta \mid x)$ |
# | `priv_f(sdp, sx)` | the same | the same | $\log g(s_{dp}, s)$, the log mechanism density given the statistic $s = \sum_i t_i$ |
# | `st_f(xi, sdp, i)` | prose: `(i, xi, sdp)` | `st_f(xi, sdp, i)`, `i` 0-based | the term $t_i(x_i, s_{dp})$ |
#
# The paper's prose lists `st_f`'s arguments as `(i, xi, sdp)` but its code (and the package) calls
# `st_f(xi, sdp, i)`; we follow the code, with Python's 0-based `i`. A module that also takes `rng` is handed the
# chain's `numpy.random.Generator`, so that no module needs a global random state: runs are reproducible from one
# seed, and chains run in parallel threads without sharing a stream.
#
# **Speed.** dapper calls the four R functions $\approx 3n$ times per iteration. Here the modules run in one of three
# engines: the whole chain compiled (numba modules, or plain Python modules that numba compiles), the record sweep
# compiled with `latent_f` and `post_f` in Python, or a Python loop; all three run the same arithmetic in the same
# order, so the same seed gives the same draws (checked below).
#
# **Run settings.** `dapper_sample` runs on `dplit.sampling.run`; dapper's keywords map as follows:
#
# | dapper | dplit | note |
# |---|---|---|
# | `niter` (draws, warm-up included) | `n_iter + n_warmup` | `n_iter` counts kept iterations only |
# | `warmup = floor(niter / 2)` | `n_warmup` (default 1000) | nothing is adapted: warm-up is burn-in; dapper's `niter = 2w` is `n_iter = n_warmup = w` |
# | `chains` | `n_chains` | chains run in threads (`n_jobs`); compiled kernels release the GIL |
# | `seed` (set outside, `furrr`) | `rng` | one seed spawns one stream per chain |
# | `progressr` handlers | `progress=True` | a tqdm bar |
# | (none) | `thin` | keep every `thin`-th iteration |
#
# Like dapper, every chain starts at `init_par` with records drawn by `latent_f(init_par)`.

# %% [markdown]
# ## The privacy model

# %%
#| export
import inspect
import math
import warnings

import numpy as np
from numba import njit
from numba.core.dispatcher import Dispatcher

from dplit import _validate as V
from dplit import results
from dplit.sampling import RHAT_MAX, Sampler, run

_MODULES = ("latent_f", "post_f", "priv_f", "st_f")


def _takes_rng(f):
    """True when callable ``f`` (a Python or numba function) accepts an ``rng`` argument."""
    try:
        params = inspect.signature(f.py_func if isinstance(f, Dispatcher) else f).parameters
    except (TypeError, ValueError):
        return False
    return "rng" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


class PrivacyModel:
    """The four modules of a data-augmentation sampler (dapper's ``new_privacy``).

    Parameters
    ----------
    latent_f : callable
        ``latent_f(theta[, rng])``: a confidential database drawn from the model at ``theta``,
        an ``(n, p)`` array (a matrix even when ``p = 1``).
    post_f : callable
        ``post_f(dmat, theta[, rng])``: one draw of ``theta`` from the confidential-data posterior
        given the database ``dmat`` (or one valid MCMC step for it, started at ``theta``).
    priv_f : callable
        ``priv_f(sdp, sx)``: the log density of the mechanism, a real number, given the release
        ``sdp`` and the statistic ``sx`` (the sum of the ``st_f`` terms).
    st_f : callable
        ``st_f(xi, sdp, i)``: the term ``t_i(x_i, sdp)`` of record ``i`` (0-based); a number or
        an array, of one shape for every record. With ``additive=False``, ``st_f(dmat, sdp)``
        computes the whole statistic from the database instead (general path, see below).
    npar : int
        Dimension of ``theta``.
    varnames : sequence of str, optional
        Names of the parameters (default ``theta_0, theta_1, ...``).
    additive : bool, default True
        False for a statistic that is not record additive: each record proposal then recomputes
        the statistic from the whole database (``O(n)`` per record, ``O(n^2)`` per sweep; Python
        loop only).
    same_shape : bool, default True
        dapper's rule: ``sdp`` must have the shape of the statistic. Set False when the statistic
        is a summary of the records paired with a record-level release (e.g. the number of answers
        that agree with their randomised version, Example 1), where ``priv_f`` reads ``sdp`` itself.
    batch : bool, default False
        True for a vectorised ``st_f(X, sdp, idx)``: the terms of the records ``X`` (a ``(k, p)``
        matrix) with 0-based indices ``idx``, stacked as a ``(k, ...)`` array (row ``j`` is
        ``t_{idx[j]}(X[j], sdp)``). The sampler calls it once per iteration on all proposals.

    Notes
    -----
    A module that also takes ``rng`` receives the chain's Generator. :func:`dapper_sample`
    compiles plain Python modules with numba when it can (``engine="auto"``); numba's ``latent_f``
    and ``post_f`` take ``rng`` as their last argument, ``priv_f`` and ``st_f`` do not (they are
    deterministic).
    """

    def __init__(self, latent_f, post_f, priv_f, st_f, npar, varnames=None, *, additive=True,
                 same_shape=True, batch=False):
        for name, f in zip(_MODULES, (latent_f, post_f, priv_f, st_f)):
            if not callable(f):
                raise TypeError(f"{name} must be a function, got {type(f).__name__}")
        self.latent_f, self.post_f, self.priv_f, self.st_f = latent_f, post_f, priv_f, st_f
        self.npar = V.count(npar, "npar")
        if varnames is None:
            varnames = [f"theta_{k}" for k in range(self.npar)]
        varnames = list(varnames)
        if len(varnames) != self.npar or not all(isinstance(v, str) and v for v in varnames):
            raise ValueError(f"varnames must be {self.npar} (= npar) non-empty strings, got {varnames!r}")
        if len(set(varnames)) != len(varnames):
            raise ValueError(f"varnames must be distinct, got {varnames!r}")
        self.varnames = varnames
        self.additive = V.boolean(additive, "additive")
        self.same_shape = V.boolean(same_shape, "same_shape")
        self.batch = V.boolean(batch, "batch")
        if self.batch and not self.additive:
            raise ValueError("batch=True needs a record-additive statistic (additive=True)")
        self._probes = {}      # the compiled modules and the engines they allow, per shape of sdp
        self.takes_rng = {name: _takes_rng(getattr(self, name)) for name in _MODULES}
        self.compiled = all(isinstance(getattr(self, m), Dispatcher) for m in _MODULES)
        if self.compiled:
            for name in ("latent_f", "post_f"):
                if not self.takes_rng[name]:
                    raise ValueError(f"{name} is a numba function without an rng argument: numba modules "
                                     "draw from the chain's Generator, passed as their last argument 'rng'")
            for name in ("priv_f", "st_f"):
                if self.takes_rng[name]:
                    raise ValueError(f"{name} is a numba function with an rng argument: in the compiled "
                                     "path priv_f and st_f are deterministic")

    def __repr__(self):
        kind = "numba" if self.compiled else "Python"
        stat = "general (non-additive)" if not self.additive else "record additive, batch" if self.batch \
            else "record additive"
        return f"PrivacyModel(npar={self.npar}, varnames={self.varnames}, {kind} modules, {stat} statistic)"

    def call(self, name, *args, rng=None):
        """Call module ``name`` with ``args``, adding the Generator when the module takes ``rng``."""
        f = getattr(self, name)
        return f(*args, rng=rng) if self.takes_rng[name] else f(*args)


# %% [markdown]
# Checks: a model holds its four modules, finds which take `rng`, and refuses what cannot work (a module that is
# not a function, a wrong `npar`, names of the wrong number, numba random modules without a Generator argument).

# %%
def _lat(theta, rng):
    return rng.normal(theta[0], 1.0, size=(5, 1))


def _post(dmat, theta):
    return np.array([dmat.mean()])


m_demo = PrivacyModel(_lat, _post, lambda sdp, sx: -abs(sdp - sx), lambda xi, sdp, i: xi[0], 1)
assert m_demo.takes_rng == {"latent_f": True, "post_f": False, "priv_f": False, "st_f": False}
assert m_demo.varnames == ["theta_0"] and not m_demo.compiled
print(m_demo)
for bad, word in [(dict(latent_f=3), "latent_f"), (dict(npar=0), "npar"), (dict(npar=1.0), "npar"),
                  (dict(varnames=["a", "b"]), "varnames"), (dict(additive=1), "additive")]:
    kw = dict(latent_f=_lat, post_f=_post, priv_f=lambda s, x: 0.0, st_f=lambda x, s, i: x, npar=1) | bad
    try:
        PrivacyModel(**kw)
    except (TypeError, ValueError) as err:
        assert word in str(err), err
    else:
        raise AssertionError(f"{bad} accepted")


@njit
def _lat_nb_no_rng(theta):
    return np.random.normal(theta[0], 1.0, size=(5, 1))   # noqa: NPY002 (global state: refused)


@njit
def _post_nb(dmat, theta, rng):
    return np.array([rng.normal(dmat.mean(), 1.0)])


@njit
def _priv_nb(sdp, sx):
    return -abs(sdp - sx)


@njit
def _st_nb(xi, sdp, i):
    return xi[0]


try:
    PrivacyModel(_lat_nb_no_rng, _post_nb, _priv_nb, _st_nb, 1)
except ValueError as err:
    assert "latent_f" in str(err) and "rng" in str(err)
else:
    raise AssertionError("a numba latent_f without rng accepted")

# %% [markdown]
# ## The first call: what dapper checks before the loop
#
# dapper documents its requirements (Sec. 4): `latent_f(init_par)` returns an $n \times p$ matrix, `sdp` is of the
# same type as `st_f`'s output, `init_par` has `npar` entries. Here each is checked once, before any chain runs, by
# calling the modules at `init_par` exactly as the sampler will, so that a mistake is reported by name rather than
# deep in a loop: the matrix, one shape for every record's term, the statistic's shape against `sdp`, a real
# log density that is not $-\infty$ or NaN at the start, and a `post_f` draw of length `npar`.

# %%
#| export
def _as_real(value, what):
    """A module's output as a float array (or float), or a TypeError saying which module returned what."""
    arr = np.asarray(value)
    if arr.dtype == bool:
        arr = arr.astype(float)
    if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"{what} must return real numbers, got {type(value).__name__} of dtype {arr.dtype}")
    return float(arr) if arr.ndim == 0 else np.ascontiguousarray(arr, dtype=float)


def _latent(model, theta, rng):
    """latent_f(theta) as a C-contiguous float (n, p) matrix, checked."""
    dmat = _as_real(model.call("latent_f", theta, rng=rng), "latent_f")
    if np.ndim(dmat) != 2 or dmat.shape[0] < 1 or dmat.shape[1] < 1:
        raise ValueError(f"latent_f(theta) must return an (n, p) matrix (a matrix even when p = 1: "
                         f"reshape(-1, 1)), got shape {np.shape(dmat)}")
    return dmat


def _statistic(model, dmat, sdp):
    """The statistic of a database: the sum of the st_f terms (one shape for every record), or st_f(dmat, sdp)."""
    if not model.additive:
        return _as_real(model.st_f(dmat, sdp), "st_f(dmat, sdp)")
    if model.batch:
        return _batch_terms(model, dmat, sdp).sum(axis=0)
    s = _as_real(model.st_f(dmat[0], sdp, 0), "st_f") * 1.0
    for i in range(1, dmat.shape[0]):
        t = _as_real(model.st_f(dmat[i], sdp, i), "st_f")
        if np.shape(t) != np.shape(s):
            raise ValueError(f"st_f must return one shape for every record: record 0 gave {np.shape(s)}, "
                             f"record {i} gave {np.shape(t)}")
        s = s + t
    return s


def _batch_terms(model, dmat, sdp):
    """The terms of all records from a batch st_f: a float array with one row per record."""
    n = dmat.shape[0]
    t = np.asarray(_as_real(model.st_f(dmat, sdp, np.arange(n)), "st_f(X, sdp, idx)"), dtype=float)
    if t.ndim == 0 or t.shape[0] != n:
        raise ValueError(f"a batch st_f(X, sdp, idx) must return one row per record of X ({n}), got shape {t.shape}")
    return np.ascontiguousarray(t)


def _log_density(model, sdp, s):
    """priv_f(sdp, s) as a float, checked to be a real number."""
    out = np.asarray(model.priv_f(sdp, s))
    if out.ndim != 0 or not np.issubdtype(out.dtype, np.number) or np.iscomplexobj(out):
        raise TypeError(f"priv_f(sdp, sx) must return a real number (the log density), got shape {out.shape}")
    return float(out)


def _first_call(model, sdp, init_par):
    """Check the modules at init_par as the sampler will call them; returns (sdp, init_par) in checked form."""
    if not isinstance(model, PrivacyModel):
        raise TypeError(f"model must be a PrivacyModel, got {type(model).__name__}")
    theta = V.finite_array(init_par, "init_par")
    if theta.ndim == 0:
        theta = theta.reshape(1)
    if theta.ndim != 1 or theta.size != model.npar:
        raise ValueError(f"init_par must hold npar = {model.npar} numbers, got shape {theta.shape}")
    sdp = V.real_array(sdp, "sdp")
    if np.any(np.isnan(sdp)):
        raise ValueError("sdp must not contain NaN")
    sdp = float(sdp) if sdp.ndim == 0 else np.ascontiguousarray(sdp)
    check_rng = np.random.default_rng(0)
    dmat = _latent(model, theta, check_rng)
    s = _statistic(model, dmat, sdp)
    if model.same_shape and np.shape(s) != np.shape(sdp):
        raise ValueError(f"sdp must have the shape of the statistic (the sum of st_f's terms), "
                         f"{np.shape(s)}, got {np.shape(sdp)} (dapper's rule; PrivacyModel(same_shape=False) "
                         "when priv_f pairs a record-level release with a summary of the records)")
    cur = _log_density(model, sdp, s)
    if math.isnan(cur) or cur == math.inf:
        raise ValueError(f"priv_f(sdp, sx) is {cur} at the records latent_f(init_par) drew: a log density must be "
                         "a real number below +inf (a ratio of inf or nan accepts no proposal), check priv_f")
    if cur == -math.inf:
        raise ValueError(f"priv_f(sdp, sx) is {cur} at the records latent_f(init_par) drew: the chain cannot "
                         "start from a state the release rules out (choose init_par, or check priv_f)")
    draw = _as_real(model.call("post_f", dmat, theta.copy(), rng=check_rng), "post_f")
    if np.shape(draw) not in ((model.npar,), ()) or (np.ndim(draw) == 0 and model.npar != 1):
        raise ValueError(f"post_f(dmat, theta) must return npar = {model.npar} numbers, got shape {np.shape(draw)}")
    return sdp, theta


# %%
sdp_demo = 0.3
_first_call(m_demo, sdp_demo, [0.0])
for args, word in [((m_demo, 0.3, [0.0, 1.0]), "init_par"), ((m_demo, np.zeros(2), [0.0]), "sdp"),
                   ((m_demo, "x", [0.0]), "sdp"), ((m_demo, 0.3, [np.nan]), "init_par"), (("m", 0.3, [0.0]), "model"),
                   ((PrivacyModel(lambda th: np.zeros(5), _post, m_demo.priv_f, m_demo.st_f, 1), 0.3, [0.0]), "(n, p)"),
                   ((PrivacyModel(lambda th: np.zeros((5, 2)), _post, m_demo.priv_f, lambda x, s, i: x[: 1 + i % 2], 1),
                     0.3, [0.0]), "one shape"),
                   ((PrivacyModel(_lat, _post, lambda s, x: np.ones(2), m_demo.st_f, 1), 0.3, [0.0]), "real number"),
                   ((PrivacyModel(_lat, _post, lambda s, x: -np.inf, m_demo.st_f, 1), 0.3, [0.0]), "rules out"),
                   ((PrivacyModel(_lat, _post, lambda s, x: np.inf, m_demo.st_f, 1), 0.3, [0.0]), "below +inf"),
                   ((PrivacyModel(_lat, _post, lambda s, x: np.nan, m_demo.st_f, 1), 0.3, [0.0]), "below +inf"),
                   ((PrivacyModel(_lat, lambda d, t: np.zeros(3), m_demo.priv_f, m_demo.st_f, 1), 0.3, [0.0]), "post_f")]:
    try:
        _first_call(*args)
    except (TypeError, ValueError) as err:
        assert word in str(err), (word, err)
    else:
        raise AssertionError(f"bad input accepted: {word}")

# %% [markdown]
# ## One sweep, three engines
#
# An iteration is one `post_f` draw of $\theta$ given the current records, one `latent_f` database of proposals, and
# a Metropolis-Hastings pass over the records in order, each accepted with probability
# $\min\{1, \exp(\log g(s_{dp}, s^*) - \log g(s_{dp}, s))\}$ with $s^* = s - t_i(x_i) + t_i(x_i^*)$ (dapper, Sec. 3). A
# uniform is drawn only when the log ratio is negative. The statistic is recomputed from the records at the start
# of every call of the driver (at most `Sampler.chunk` iterations), so that rounding in the running sum cannot
# drift over a long run.
#
# **The Python engine** calls the modules from a Python loop: any Python code works (NumPy, SciPy, other
# samplers wrapped as `post_f`), and a non-additive statistic (`additive=False`) recomputes `st_f(dmat, sdp)` for
# every proposal.

# %%
#| export
def _python_sweep(model, state, prop, sdp, rng):
    """One Metropolis-Hastings pass over the records with the modules called from Python; returns accepted count."""
    dmat, st, cur = state["dmat"], state["st"], state["cur"]
    st_f, priv_f = model.st_f, model.priv_f
    n = dmat.shape[0]
    n_acc = 0
    if state["slot"]:                                 # record i's term lives in slot i of the statistic
        flat = st.reshape(-1)
        m = flat.size // n
        for i in range(n):
            lo = i * m
            old = flat[lo:lo + m].copy()            # = t_i(x_i) in its slot: no call for the current record
            t_new = np.asarray(st_f(prop[i], sdp, i), dtype=float).reshape(-1)
            flat[lo:lo + m] = old - old + t_new[lo:lo + m]
            new = float(priv_f(sdp, st))
            a = new - cur
            if a >= 0.0 or rng.random() < math.exp(a):
                dmat[i] = prop[i]
                cur = new
                n_acc += 1
            else:
                flat[lo:lo + m] = old
        state["cur"] = cur
        return n_acc
    if model.batch:                                   # the terms of all proposals in one call
        t_cur, t_new = state["terms"], _batch_terms(model, prop, sdp)
    for i in range(n):
        if model.batch:
            sn = st - t_cur[i] + t_new[i]
        elif model.additive:
            sn = st - st_f(dmat[i], sdp, i) + st_f(prop[i], sdp, i)
        else:
            old = dmat[i].copy()
            dmat[i] = prop[i]
            sn = st_f(dmat, sdp)
            dmat[i] = old
        new = float(priv_f(sdp, sn))
        a = new - cur
        if a >= 0.0 or rng.random() < math.exp(a):
            dmat[i] = prop[i]
            if model.batch:
                t_cur[i] = t_new[i]
            st, cur = sn, new
            n_acc += 1
    state["st"], state["cur"] = st, cur
    return n_acc


def _python_chain(model, state, n_steps, thin, sdp, rng, sweep=None):
    """Advance a chain n_steps iterations: post_f and latent_f called from Python, then a record sweep
    (``sweep(state, prop, rng)``, default the Python one); state dict updated in place."""
    if sweep is None:
        def sweep(state, prop, rng):
            return _python_sweep(model, state, prop, sdp, rng)
    theta, dmat = state["theta"], state["dmat"]
    n = dmat.shape[0]
    n_save = n_steps // thin
    draws = np.empty((n_save, model.npar))
    acc = np.zeros(n_save)
    for it in range(n_save * thin):
        theta[:] = _as_real(model.call("post_f", dmat, theta, rng=rng), "post_f")
        prop = _as_real(model.call("latent_f", theta, rng=rng), "latent_f")
        n_acc = sweep(state, prop, rng)
        slot = it // thin
        acc[slot] += n_acc / n / thin
        if (it + 1) % thin == 0:
            draws[slot] = theta
    return draws, acc


# %% [markdown]
# **The compiled engines.** numba passes a compiled function to another as a first-class argument (each set of
# modules compiles its own specialisation of the kernel, once per process: about a second), and a
# `numpy.random.Generator` as an argument too (sharing its state with the Python object), so the kernels below are
# the Python loops above, line for line, with `latent_f(theta, rng)` and `post_f(dmat, theta, rng)` taking the
# chain's Generator. The **sweep** kernels run one pass over the records; the **chain** kernel runs whole iterations
# (`post_f`, `latent_f`, a sweep). They release the GIL (`nogil=True`): chains run in parallel threads.

# %%
#| export
@njit(nogil=True)  # not cached: specialised on user functions (see _dapper_chain_kernel)
def _stat_sum_kernel(st_f, dmat, sdp):
    """The statistic of a database: the sum over records of st_f(dmat[i], sdp, i) (float)."""
    s = st_f(dmat[0], sdp, 0) * 1.0
    for i in range(1, dmat.shape[0]):
        s = s + st_f(dmat[i], sdp, i)
    return s


@njit(nogil=True)
def _sweep_kernel(priv_f, st_f, dmat, prop, st, cur, sdp, rng):
    """The record sweep of the Python engine, compiled: returns (statistic, log density, accepted count)."""
    n_acc = 0
    for i in range(dmat.shape[0]):
        sn = st - st_f(dmat[i], sdp, i) + st_f(prop[i], sdp, i)
        new = priv_f(sdp, sn)
        a = new - cur
        if a >= 0.0 or rng.random() < math.exp(a):
            dmat[i, :] = prop[i]
            st = sn
            cur = new
            n_acc += 1
    return st, cur, n_acc


@njit(nogil=True)
def _sweep_slot_kernel(priv_f, st_f, dmat, prop, st, cur, sdp, rng):
    """The sweep when record i's term is zero outside slot i of the statistic: only that slot is updated (in
    place, restored on rejection), the same arithmetic entry by entry as _sweep_kernel. Slot i of the statistic
    holds t_i(x_i) exactly (the other records add zeros), so st_f is called for the proposal only."""
    n = dmat.shape[0]
    flat = st.reshape(st.size)
    m = st.size // n
    old = np.empty(m)
    n_acc = 0
    for i in range(n):
        lo = i * m
        t_new = st_f(prop[i], sdp, i).reshape(st.size)
        for k in range(m):
            old[k] = flat[lo + k]
            flat[lo + k] = old[k] - old[k] + t_new[lo + k]
        new = priv_f(sdp, st)
        a = new - cur
        if a >= 0.0 or rng.random() < math.exp(a):
            dmat[i, :] = prop[i]
            cur = new
            n_acc += 1
        else:
            for k in range(m):
                flat[lo + k] = old[k]
    return st, cur, n_acc


@njit(nogil=True)
def _sweep_terms_kernel(priv_f, t_cur, t_new, dmat, prop, st, cur, sdp, rng):
    """The sweep of a batch st_f: the terms of the current records (t_cur, updated) and of the proposals given."""
    n_acc = 0
    for i in range(dmat.shape[0]):
        sn = st - t_cur[i] + t_new[i]
        new = priv_f(sdp, sn)
        a = new - cur
        if a >= 0.0 or rng.random() < math.exp(a):
            dmat[i, :] = prop[i]
            t_cur[i] = t_new[i]
            st = sn
            cur = new
            n_acc += 1
    return st, cur, n_acc


def _make_chain_kernel(sweep):
    """The whole chain in one compiled function, with the record sweep ``sweep``."""
    @njit(nogil=True)  # not cached: its specialisations key on the user's module functions (numba cannot
    # save those: 'underlying object has vanished'), and they change with every model anyway
    def chain(latent_f, post_f, priv_f, st_f, theta, dmat, st, cur, sdp, n_steps, thin, rng):
        n = dmat.shape[0]
        n_save = n_steps // thin
        draws = np.empty((n_save, theta.size))
        acc = np.zeros(n_save)
        for it in range(n_save * thin):
            new_theta = post_f(dmat, theta, rng)
            for k in range(theta.size):
                theta[k] = new_theta[k]
            prop = latent_f(theta, rng)
            st, cur, n_acc = sweep(priv_f, st_f, dmat, prop, st, cur, sdp, rng)
            slot = it // thin
            acc[slot] += n_acc / n / thin
            if (it + 1) % thin == 0:
                for k in range(theta.size):
                    draws[slot, k] = theta[k]
        return draws, acc, st, cur
    return chain


_dapper_chain_kernel = _make_chain_kernel(_sweep_kernel)
_dapper_chain_slot_kernel = _make_chain_kernel(_sweep_slot_kernel)


# %% [markdown]
# Check: the same numba modules run by the two engines from the same seed give **the same draws**, bit for bit
# (numba's Generator methods reproduce NumPy's streams), on a small normal model with a Laplace release of the
# mean: $x_i \sim N(\theta, 1)$, $\theta \mid x \sim N(\bar x \cdot n/(n + 1), 1/(n + 1))$ (prior $N(0, 1)$).

# %%
n_small = 8


@njit
def nm_latent(theta, rng):
    out = np.empty((n_small, 1))
    for i in range(n_small):
        out[i, 0] = theta[0] + rng.standard_normal()
    return out


@njit
def nm_post(dmat, theta, rng):
    s = dmat.sum()
    return np.array([s / (n_small + 1.0) + rng.standard_normal() / np.sqrt(n_small + 1.0)])


@njit
def nm_priv(sdp, sx):                     # Laplace(scale 0.5) release of the mean
    return -abs(sdp - sx) / 0.5


@njit
def nm_st(xi, sdp, i):
    return xi[0] / n_small


nm_model = PrivacyModel(nm_latent, nm_post, nm_priv, nm_st, 1, ["mu"])


def one_chain(model, sdp, engine, n_steps, seed):
    sdp_, theta = _first_call(model, sdp, [0.0])
    g = np.random.default_rng(seed)
    dmat = _latent(model, theta, g)
    st = _statistic(model, dmat, sdp_)
    state = {"theta": theta, "dmat": dmat, "st": st, "cur": _log_density(model, sdp_, st), "slot": False}
    if engine == "python":
        return _python_chain(model, state, n_steps, 1, sdp_, g)[0][:, 0]
    return _dapper_chain_kernel(model.latent_f, model.post_f, model.priv_f, model.st_f, state["theta"],
                                state["dmat"], state["st"], state["cur"], sdp_, n_steps, 1, g)[0][:, 0]


d_py = one_chain(nm_model, 1.2, "python", 300, 4)
d_nb = one_chain(nm_model, 1.2, "numba", 300, 4)
assert np.array_equal(d_py, d_nb)
print("python and numba engines, 300 iterations: identical draws;", d_nb[:3].round(4))

# %% [markdown]
# ## Plain Python modules, compiled when they can be
#
# A dapper user writes the modules in plain Python. `dapper_sample(engine="auto")` first tries to compile each of
# them with `numba.njit` and **probes** the compiled function: one call on the inputs the sampler will give it
# (`init_par`, a database drawn by `latent_f`, three of its records, two statistics), compared with the Python
# module's output (the same numbers within rounding for `priv_f` and `st_f`; for `latent_f` and `post_f`, called
# with two Generators of one seed, the same shape: numba reproduces NumPy's streams for most distributions but not
# for all, e.g. `Generator.choice`). Then:
#
# | engine | runs | when (`engine="auto"`) |
# |---|---|---|
# | `"numba"` | the whole chain in the compiled kernel | all four modules compile and agree |
# | `"sweep"` | `post_f` and `latent_f` in Python, once per iteration; the record sweep compiled | `priv_f` and `st_f` compile (or `st_f` is a batch module and `priv_f` compiles) |
# | `"python"` | everything from Python | otherwise |
#
# When "auto" does not reach `"numba"`, a one-line `EngineNotice` (a `UserWarning`) names the first module that
# did not compile and numba's reason. The compiled functions and the verdict are cached on the model: compilation
# is paid once per model. `engine="numba"` or `"sweep"` forces one and raises, with the reason, when the modules
# do not allow it. `attrs["engine"]` says which ran. The three engines run the same Markov chain: the same calls in
# the same order on the same Generator, so where the compiled modules reproduce the Python ones the draws are the
# same bit for bit (checked below and in `tests/test_dapper_engines.py`).
#
# **Record-slot statistics.** dapper's Example 1 `st_f` returns, for record $i$, an $n \times 2$ matrix that is zero
# but row $i$: the running update $s - t_i(x_i) + t_i(x_i^*)$ then costs $O(n)$ per record and $O(n^2)$ per sweep.
# The probe also checks whether each probed record's term is zero outside **its slot** (row $i$ of the statistic's
# leading axis of length $n$). If so, slot $i$ of the statistic holds $t_i(x_i)$ itself (the other records add
# zeros), and the sweep calls `st_f` for the proposal only and updates that slot in place, restoring it on
# rejection: the same numbers entry by entry as the full update (outside the slot $s_j - 0 + 0 = s_j$, inside it
# $s_i - s_i + t_i(x_i^*)$), so the same chain, with $O(1)$ arithmetic for the statistic instead of $O(n)$ and one
# `st_f` call per record instead of two (`priv_f` still reads the whole statistic). The statistic recomputed
# from the records at every call of the driver must equal the running one; a term that leaves its slot on a record
# the probe did not see is caught there (RuntimeError).

# %%
#| export
class EngineNotice(UserWarning):
    """dapper_sample could not compile a module and runs a slower engine (one line: the module and why)."""


_RANDOM = ("latent_f", "post_f")


def _numba_reason(err):
    """The informative line of a numba error (its first lines name only the pipeline stage)."""
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    skip = ("Failed in", "During:", "File ", "^", "- Resolution failure", "Resolution failure")
    keep = [ln for ln in lines if not ln.startswith(skip)]
    text = (keep or lines or [type(err).__name__])[0]
    return f"{type(err).__name__}: {text[:160]}"


def _jit(name, f, takes_rng):
    """f as a numba function with the kernel's signature (rng last for latent_f and post_f)."""
    cf = f if isinstance(f, Dispatcher) else njit(f)
    if name in _RANDOM and not takes_rng:
        if name == "latent_f":
            def wrapped(theta, rng):
                return cf(theta)
        else:
            def wrapped(dmat, theta, rng):
                return cf(dmat, theta)
        return njit(wrapped)
    return cf


def _probe_one(model, name, args, random, seed=20261125):
    """(compiled module, None) when module ``name`` compiles and agrees with its Python self on args, else (None, why)."""
    f = getattr(model, name)
    if not random and model.takes_rng[name]:
        return None, "it takes rng (the compiled sweep calls priv_f and st_f without one)"
    try:
        cf = _jit(name, f, model.takes_rng[name])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # numba's deprecation and performance notes
            out_c = cf(*args, np.random.default_rng(seed)) if random else cf(*args)
    except Exception as err:                        # numba raises many types: typing, lowering, unsupported
        return None, _numba_reason(err)
    out_p = model.call(name, *args, rng=np.random.default_rng(seed))
    try:
        a, b = np.asarray(out_c, dtype=float), np.asarray(out_p, dtype=float)
    except (TypeError, ValueError):
        return None, f"its compiled output is {type(out_c).__name__}, not numbers"
    if a.shape != b.shape:
        return None, f"its compiled output has shape {a.shape}, the Python module's {b.shape}"
    if not random and not np.allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True):
        return None, "its compiled output differs from the Python module's on the same input"
    return cf, None


def _probe(model, sdp, theta):
    """Compile and probe the four modules (cached on the model per shape of sdp): the engines they allow."""
    key = (np.ndim(sdp), np.shape(sdp))
    if key in model._probes:
        return model._probes[key]
    g = np.random.default_rng(20261126)
    dmat = _latent(model, theta, g)
    dmat2 = _latent(model, theta, g)
    n = dmat.shape[0]
    comp, why = {}, {}
    for name, args in [("latent_f", (theta.copy(),)), ("post_f", (dmat.copy(), theta.copy()))]:
        comp[name], why[name] = _probe_one(model, name, args, True)
    slot = False
    if not model.additive:
        comp["st_f"], why["st_f"] = None, "the statistic is not record additive (additive=False)"
    elif model.batch:
        comp["st_f"], why["st_f"] = None, "a batch st_f is called from Python, once per iteration"
    else:
        recs = sorted({0, n // 2, n - 1})
        for d in (dmat, dmat2):
            for i in recs:
                comp["st_f"], why["st_f"] = _probe_one(model, "st_f", (d[i].copy(), sdp, i), False)
                if comp["st_f"] is None:
                    break
            if comp["st_f"] is None:
                break
        terms = [np.asarray(model.st_f(d[i], sdp, i), dtype=float) for d in (dmat, dmat2) for i in recs]
        slot = n > 1 and all(t.ndim >= 1 and t.shape[0] == n for t in terms) and all(
            not np.any(np.delete(t, i, axis=0)) for t, i in zip(terms, recs * 2))
    comp["priv_f"], why["priv_f"] = None, None
    for d in (dmat, dmat2):
        comp["priv_f"], why["priv_f"] = _probe_one(model, "priv_f", (sdp, _statistic(model, d, sdp)), False)
        if comp["priv_f"] is None:
            break
    out = {"compiled": comp, "why": why, "slot": slot, "noticed": False,
           "numba": model.additive and not model.batch and all(comp[m] is not None for m in _MODULES),
           "sweep": model.additive and comp["priv_f"] is not None and (model.batch or comp["st_f"] is not None)}
    model._probes[key] = out
    return out


def _choose_engine(model, sdp, theta, engine):
    """The engine to run ('numba', 'sweep' or 'python') and the probe's record (None for engine='python')."""
    if engine == "python":
        return "python", None
    info = _probe(model, sdp, theta)
    order = [m for m in _MODULES if info["compiled"][m] is None]
    if engine in ("numba", "sweep") and not info[engine]:
        need = order if engine == "numba" else [m for m in ("priv_f", "st_f") if m in order and not
                                                (m == "st_f" and model.batch)]
        name = need[0] if need else "st_f"
        raise ValueError(f"engine={engine!r}: {name} does not compile under numba ({info['why'][name]}); "
                         "use engine='auto' or 'python'")
    if engine == "auto":
        engine = "numba" if info["numba"] else "sweep" if info["sweep"] else "python"
        if engine != "numba" and not info["noticed"]:
            info["noticed"] = True
            runs = {"sweep": "the record sweep compiled, latent_f and post_f in Python",
                    "python": "every module from Python"}[engine]
            warnings.warn(f"dapper_sample: {order[0]} did not compile under numba ({info['why'][order[0]]}); "
                          f"engine '{engine}': {runs}", EngineNotice, stacklevel=3)
    return engine, info


# %% [markdown]
# ## The sampler on the core: `dapper_sample`
#
# A chain's state is $\theta$, the records, the running statistic and its log density. `init` draws the records from
# `latent_f(init_par)` with the chain's own Generator (dapper starts every chain at `init_par` too); `run_chain`
# recomputes the statistic from the records and runs the chosen engine. Everything else (per-chain streams,
# warm-up, thinning, threads, progress, ArviZ packaging and the convergence report) is `dplit.sampling.run`'s.
# The posterior holds one variable per parameter, named from `varnames` as in dapper's `draws_matrix`; the
# sample statistics hold `acceptance`, the fraction of record proposals accepted in each iteration (dapper's
# `accept_prob`).

# %%
#| export
_ENGINES = ("auto", "python", "sweep", "numba")


def _sampler(model, sdp, init_par, engine, info):
    """The dplit.sampling.Sampler of a privacy model: init draws the records, run_chain runs an engine."""
    comp = info["compiled"] if info is not None else None
    slot = info is not None and info["slot"]
    if engine == "numba":
        latent_c, post_c, priv_c, st_c = (comp[m] for m in _MODULES)
        chain_kernel = _dapper_chain_slot_kernel if slot else _dapper_chain_kernel

    def statistic(dmat):
        if engine == "numba":
            return _stat_sum_kernel(st_c, dmat, sdp)
        return _statistic(model, dmat, sdp)

    def init(rng):
        theta = init_par.copy()
        dmat = _latent(model, theta, rng)
        st = statistic(dmat)
        state = {"theta": theta, "dmat": dmat, "st": st, "cur": _log_density(model, sdp, st), "slot": slot}
        if model.batch:
            state["terms"] = _batch_terms(model, dmat, sdp)
        return state

    def compiled_sweep(state, prop, rng):
        if model.batch:
            state["st"], state["cur"], n_acc = _sweep_terms_kernel(
                comp["priv_f"], state["terms"], _batch_terms(model, prop, sdp), state["dmat"], prop, state["st"],
                state["cur"], sdp, rng)
        else:
            kernel = _sweep_slot_kernel if slot else _sweep_kernel
            state["st"], state["cur"], n_acc = kernel(comp["priv_f"], comp["st_f"], state["dmat"], prop,
                                                      state["st"], state["cur"], sdp, rng)
        return n_acc

    def run_chain(state, n_steps, thin, rng):
        state["st"] = statistic(state["dmat"])             # no drift of the running sum
        if model.batch:
            state["terms"] = _batch_terms(model, state["dmat"], sdp)
        state["cur"] = _log_density(model, sdp, state["st"])
        if engine == "numba":
            draws, acc, state["st"], state["cur"] = chain_kernel(
                latent_c, post_c, priv_c, st_c, state["theta"], state["dmat"], state["st"], state["cur"], sdp,
                n_steps, thin, rng)
        else:
            draws, acc = _python_chain(model, state, n_steps, thin, sdp, rng,
                                       sweep=compiled_sweep if engine == "sweep" else None)
        if slot and not np.allclose(statistic(state["dmat"]), state["st"], rtol=1e-9, atol=1e-9):
            raise RuntimeError("st_f's term of a record is not zero outside the record's slot on every record "
                               "(the probe saw three): the running statistic left the records' sum")
        return {v: draws[:, k] for k, v in enumerate(model.varnames)}, {"acceptance": acc}

    return Sampler(init=init, run_chain=run_chain)


def dapper_sample(model, sdp, init_par, *, n_iter=2000, n_warmup=1000, n_chains=4, thin=1, rng=None,
                  progress=True, n_jobs=None, target_ess=400, max_rhat=RHAT_MAX, max_iter=200_000, max_time=None,
                  engine="auto", budget=None):
    """Sample the posterior given a privatised statistic by data augmentation (dapper's ``dapper_sample``).

    Alternates a draw of ``theta`` from the confidential-data posterior (``post_f``) with a
    Metropolis-Hastings pass over the latent records, each proposed from the model (``latent_f``)
    and accepted by the ratio of mechanism densities (``priv_f`` of the statistic updated by the
    record's ``st_f`` terms): Ju et al. (2022), Eng et al. (dapper), Sec. 3.

    Parameters
    ----------
    model : PrivacyModel
        The four modules.
    sdp : float or array_like
        The released noisy statistic (of the statistic's shape, unless ``model.same_shape`` is False).
    init_par : array_like, shape (npar,)
        Where every chain starts; its records are ``latent_f(init_par)``.
    n_iter : int or "auto", default 2000
        Kept iterations per chain (before thinning); dapper's ``niter - warmup``. ``"auto"``:
        extend the chains until converged (:func:`dplit.sampling.run`; needs ``n_chains >= 2``).
    n_warmup : int, default 1000
        Discarded iterations per chain (dapper's ``warmup``).
    n_chains : int, default 4
        Chains, each from its own Generator spawned from ``rng`` (dapper runs one by default; one
        chain is judged by the R-hat of its two halves).
    thin : int, default 1
        Keep every ``thin``-th iteration.
    rng : None, int or numpy.random.Generator
        Randomness (modules taking ``rng`` receive the chain's Generator); same seed, same draws.
    progress : bool, default True
        Show a progress bar.
    n_jobs : int, optional
        Threads; default ``min(n_chains, cpu_count)``. Compiled modules run chains in parallel;
        Python modules hold the GIL. The draws do not depend on it.
    target_ess, max_rhat, max_iter, max_time
        The stopping rule of ``n_iter="auto"`` (:func:`dplit.sampling.run`).
    engine : {"auto", "python", "sweep", "numba"}, default "auto"
        ``"numba"``: the whole chain compiled (all four modules compile with numba, additive
        statistic, not ``batch``); ``"sweep"``: ``post_f`` and ``latent_f`` from Python, the record
        sweep compiled (``priv_f`` and ``st_f`` compile, or ``st_f`` is a batch module);
        ``"python"``: a Python loop; ``"auto"``: the fastest the modules allow, with an
        :class:`EngineNotice` naming the module that did not compile. Plain Python modules are
        compiled with ``numba.njit`` and probed against themselves once per model.
    budget : PrivacyBudget or RdpBudget, optional
        The ledger of the release ``sdp`` (the modules do not say what it cost); copied into the
        result's ``eps_total`` and ``eps_by_part`` (``nan`` and ``{}`` when not given).

    Returns
    -------
    arviz.InferenceData
        One posterior variable per parameter (``model.varnames``); sample stats ``acceptance``
        (fraction of record proposals accepted per iteration); attrs of the result contract
        (:data:`dplit.results.CONTRACT_ATTRS`, ``method="dapper"``, the ledger of ``budget``),
        ``engine`` (the engine that ran), ``record_slots`` (the slot update of a record-slot
        statistic) and ``n_records``. :func:`summary` gives dapper's summary table.

    Examples
    --------
    A normal mean released with Laplace noise (Python modules):

    >>> y = np.random.default_rng(1).normal(2.0, 1.0, 20)
    >>> model = PrivacyModel(
    ...     latent_f=lambda theta, rng: rng.normal(theta[0], 1.0, (20, 1)),
    ...     post_f=lambda dmat, theta, rng: rng.normal(dmat.sum() / 21, 21 ** -0.5, 1),
    ...     priv_f=lambda sdp, sx: -abs(sdp - sx) / 0.1,
    ...     st_f=lambda xi, sdp, i: xi[0] / 20, npar=1, varnames=["mu"])
    >>> res = dapper_sample(model, y.mean() + 0.05, [0.0], n_iter=2000, rng=2, progress=False)
    >>> bool(abs(float(res.posterior["mu"].mean()) - 2.0) < 0.6)
    True
    """
    if not isinstance(model, PrivacyModel):
        raise TypeError(f"model must be a PrivacyModel, got {type(model).__name__}")
    V.run_settings(n_iter, n_warmup, n_chains, thin, progress, n_jobs)
    if n_iter == "auto" and n_chains == 1:
        raise ValueError("n_iter='auto' needs n_chains >= 2 (convergence is judged across chains)")
    if budget is not None and not hasattr(budget, "entries"):
        raise TypeError(f"budget must be a dplit.accounting.PrivacyBudget or RdpBudget, got {type(budget).__name__}")
    V.choice(engine, "engine", _ENGINES)
    sdp, init_par = _first_call(model, sdp, init_par)
    engine, info = _choose_engine(model, sdp, init_par, engine)
    n_rec = _latent(model, init_par, np.random.default_rng(0)).shape[0]
    attrs = {"method": "dapper", "engine": engine, "n_records": n_rec, "npar": model.npar,
             "additive": model.additive, "record_slots": bool(info is not None and info["slot"])}
    res = run(_sampler(model, sdp, init_par, engine, info), n_iter=n_iter, n_warmup=n_warmup, n_chains=n_chains,
              thin=thin, rng=rng, progress=progress, n_jobs=n_jobs, attrs=attrs,
              privacy=results.privacy_attrs(budget=budget), observed_data={"sdp": np.atleast_1d(sdp)},
              report_vars=model.varnames, desc="dapper iterations", target_ess=target_ess, max_rhat=max_rhat,
              max_iter=max_iter, max_time=max_time)
    _check_acceptance(res)
    return res


def _check_acceptance(result):
    """Warn when no record proposal was accepted in any kept iteration of any chain (the release never entered)."""
    acc = np.asarray(results.group(result, "sample_stats")["acceptance"].values)
    if acc.size and not np.any(acc > 0):
        warnings.warn("dapper_sample: record acceptance was 0 over the whole run: the records never left "
                      "latent_f(init_par)'s draw, so the draws ignore the release. Check priv_f (a log density, "
                      "finite where the release is possible: +inf, nan or -inf everywhere accepts nothing)",
                      UserWarning, stacklevel=3)

# %% [markdown]
# **dapper's summary table.** dapper's `summary()` is `posterior::summarise_draws`: mean, median, sd, mad (scaled
# to the sd under normality, R's `mad`), the 5% and 95% quantiles, the rank-normalised split $\hat R$ (the larger of
# the bulk and folded-tail versions) and the bulk and tail ESS (Vehtari et al. 2021). ArviZ computes the same
# $\hat R$ (`method="rank"`) and ESS; `summary` lays them out in dapper's columns.

# %%
#| export
def summary(result, var_names=None):
    """dapper's posterior summary: mean, median, sd, mad, q5, q95, rhat, ess_bulk, ess_tail.

    Parameters
    ----------
    result : arviz.InferenceData
        A result of :func:`dapper_sample` (or any dplit sampler). With one chain, R-hat compares
        its two halves (as dapper's ``posterior`` package does).
    var_names : list of str, optional
        Variables (default: every posterior variable); array variables get one row per entry.

    Returns
    -------
    pandas.DataFrame
        One row per parameter, dapper's columns (``mad`` scaled by 1.4826 as R's ``mad``).
    """
    import pandas as pd

    post = result.posterior
    names = list(post.data_vars) if var_names is None else list(var_names)
    rows = {}
    for v in names:
        x = np.asarray(post[v].values, dtype=float)
        per_chain = x.reshape(x.shape[0], x.shape[1], -1)
        flat = per_chain.reshape(-1, per_chain.shape[2])
        for k in range(flat.shape[1]):
            col, xk = flat[:, k], per_chain[:, :, k]
            med, r = np.median(col), results.rhat(xk)     # one chain: its two halves; undefined: inf
            label = v if flat.shape[1] == 1 else f"{v}[{k}]"
            rows[label] = {"mean": col.mean(), "median": med, "sd": col.std(ddof=1),
                           "mad": 1.4826 * np.median(np.abs(col - med)), "q5": np.quantile(col, 0.05),
                           "q95": np.quantile(col, 0.95), "rhat": r if np.isfinite(r) else np.inf,
                           "ess_bulk": results.ess(xk), "ess_tail": results.ess(xk, method="tail")}
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.name = "variable"
    return out

# %% [markdown]
# Checks on the small normal model of the engine check: the public function runs both engines from one seed to the
# same draws, for any number of threads; the summary agrees with NumPy and ArviZ; bad settings raise naming the
# argument. Then **exactness**: a model small enough for its posterior to be computed exactly. A binary record
# $x_i \sim \mathrm{Bernoulli}(\theta)$, $\theta \sim \mathrm{Beta}(1, 1)$, $n = 3$ records each released by randomized response
# (kept with probability $1/2$, else a fair coin: dapper's Example 1 mechanism); summing over the $2^3$ latent
# databases, $p(\theta \mid s_{dp}) = \sum_x w_x\, \mathrm{Beta}(\theta \mid 1 + \sum x, 1 + n - \sum x)$ with
# $w_x \propto B(1 + \sum x, 1 + n - \sum x) \prod_i \eta(s_{dp,i} \mid x_i)$. The chain's draws must follow that mixture
# (Kolmogorov-Smirnov on a thinned chain), with Python and with numba modules.

# %%
kw_nm = dict(n_iter=4000, n_warmup=500, n_chains=2, rng=7, progress=False)
r_py = dapper_sample(nm_model, 1.2, [0.0], engine="python", **kw_nm)
r_nb = dapper_sample(nm_model, 1.2, [0.0], n_jobs=1, **kw_nm)
r_nb2 = dapper_sample(nm_model, 1.2, [0.0], n_jobs=2, **kw_nm)
assert r_nb.posterior.attrs["engine"] == "numba" and r_py.posterior.attrs["engine"] == "python"
assert np.array_equal(r_py.posterior["mu"].values, r_nb.posterior["mu"].values)
assert np.array_equal(r_nb.posterior["mu"].values, r_nb2.posterior["mu"].values)
tab = summary(r_nb)
print(tab.round(3).to_string())
mu_d = r_nb.posterior["mu"].values.ravel()
assert np.isclose(tab.loc["mu", "median"], np.median(mu_d)) and np.isclose(tab.loc["mu", "sd"], mu_d.std(ddof=1))
assert np.isclose(tab.loc["mu", "ess_bulk"], float(az.ess(r_nb, var_names=["mu"])["mu"]))
assert np.isclose(tab.loc["mu", "rhat"], float(az.rhat(r_nb, var_names=["mu"])["mu"]))
assert r_nb.sample_stats["acceptance"].shape == (2, 4000)
for kw, word in [(dict(n_iter=0), "n_iter"), (dict(thin=0), "thin"), (dict(engine="C"), "engine"),
                 (dict(n_warmup=-1), "n_warmup"), (dict(progress="no"), "progress")]:
    try:
        dapper_sample(nm_model, 1.2, [0.0], **(dict(progress=False) | kw))
    except (TypeError, ValueError) as err:
        assert word in str(err), err
    else:
        raise AssertionError(f"{kw} accepted")
def _lat_list(theta, rng):                 # a list comprehension of draws: numba does not compile it
    return np.array([[rng.normal(theta[0], 1.0)] for _ in range(5)])


try:
    dapper_sample(PrivacyModel(_lat_list, _post, m_demo.priv_f, m_demo.st_f, 1), 0.3, [0.0], engine="numba",
                  progress=False)
except ValueError as err:
    assert "engine='numba': latent_f does not compile" in str(err), err
else:
    raise AssertionError("engine='numba' accepted for modules that do not compile")
# A chain that never accepts a record proposal ignores the release: it warns. Here priv_f rules out every
# statistic but the first one it is shown (the check at init_par passes; the chain's own start is ruled out).
seen = []


def priv_one_state(sdp, sx):
    seen.append(sx) if not seen else None
    return 0.0 if sx == seen[0] else -np.inf


with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    stuck = dapper_sample(PrivacyModel(_lat, _post, priv_one_state, m_demo.st_f, 1), 0.3, [0.0], n_iter=40, n_warmup=20, n_chains=1,
                          rng=1, progress=False)
assert float(stuck.sample_stats["acceptance"].max()) == 0.0
assert any("acceptance was 0 over the whole run" in str(w.message) for w in caught)

# %%
n_bern, y_bern = 3, np.array([1, 1, 0])
RR_KEEP = math.log(0.75)
RR_FLIP = math.log(0.25)


def bern_latent(theta, rng):
    return (rng.random((n_bern, 1)) < theta[0]).astype(float)


def bern_post(dmat, theta, rng):
    k = dmat.sum()
    return np.array([rng.beta(1 + k, 1 + n_bern - k)])


def rr_priv(sdp, sx):                     # sx = number of records that agree with their released answer
    return sx * RR_KEEP + (sdp.size - sx) * RR_FLIP


def rr_st(xi, sdp, i):
    return float(xi[0] == sdp[i])


@njit
def bern_latent_nb(theta, rng):
    out = np.empty((n_bern, 1))
    for i in range(n_bern):
        out[i, 0] = 1.0 if rng.random() < theta[0] else 0.0
    return out


@njit
def bern_post_nb(dmat, theta, rng):
    k = dmat.sum()
    return np.array([rng.beta(1 + k, 1 + n_bern - k)])


@njit
def rr_priv_nb(sdp, sx):
    return sx * RR_KEEP + (sdp.size - sx) * RR_FLIP


@njit
def rr_st_nb(xi, sdp, i):
    return 1.0 if xi[0] == sdp[i] else 0.0


def bern_exact_cdf(t):
    """CDF of theta | released answers: a mixture of Beta laws over the 2^n latent databases."""
    xs = np.array(np.meshgrid(*[[0, 1]] * n_bern)).reshape(n_bern, -1).T
    k = xs.sum(axis=1)
    logw = special.betaln(1 + k, 1 + n_bern - k) + randomized_response_logpmf(
        np.broadcast_to(y_bern, xs.shape), xs).sum(axis=1)
    w = np.exp(logw - logw.max())
    w /= w.sum()
    return sum(wk * stats.beta.cdf(t, 1 + kk, 1 + n_bern - kk) for wk, kk in zip(w, k))


for mods in [(bern_latent, bern_post, rr_priv, rr_st), (bern_latent_nb, bern_post_nb, rr_priv_nb, rr_st_nb)]:
    bm = PrivacyModel(*mods, 1, ["theta"], same_shape=False)
    n_b = size(full=40_000, quick=8_000) if bm.compiled else size(full=8_000, quick=3_000)
    rb = dapper_sample(bm, y_bern, [0.5], n_iter=n_b, n_warmup=500, thin=4, n_chains=1, rng=3, progress=False)
    ks = stats.kstest(rb.posterior["theta"].values.ravel(), bern_exact_cdf)
    print(f"{rb.posterior.attrs['engine']:>6} modules: KS p-value against the exact posterior {ks.pvalue:.3f}")
    assert ks.pvalue > 1e-3

# %% [markdown]
# ## Exactness by simulation-based calibration, through the generic interface
#
# Talts et al. (2018), with `dplit.testing`: draw $\theta \sim N(0, 1)$, records $x_i \sim N(\theta, 1)$ ($n = 5$), release
# their mean with Laplace noise of scale $0.3$, run `dapper_sample` on the release and rank the true $\theta$ among
# $L = 19$ thinned draws; an exact sampler gives uniform ranks. A **planted bug** must fail the same test: a
# `priv_f` with the sign of the log density flipped (the acceptance ratio inverted, so the records are pushed
# *away* from the release).

# %%
N_SBC_REC, SBC_SCALE = 5, 0.3


@njit
def sbc_latent(theta, rng):
    out = np.empty((N_SBC_REC, 1))
    for i in range(N_SBC_REC):
        out[i, 0] = theta[0] + rng.standard_normal()
    return out


@njit
def sbc_post(dmat, theta, rng):           # prior N(0, 1): theta | x ~ N(sum x / (n + 1), 1 / (n + 1))
    return np.array([dmat.sum() / (N_SBC_REC + 1.0) + rng.standard_normal() / np.sqrt(N_SBC_REC + 1.0)])


@njit
def sbc_priv(sdp, sx):
    return -abs(sdp - sx) / SBC_SCALE


@njit
def sbc_priv_bug(sdp, sx):
    return abs(sdp - sx) / SBC_SCALE


@njit
def sbc_st(xi, sdp, i):
    return xi[0] / N_SBC_REC


def sbc_simulate(g):
    theta = g.normal()
    return theta, g.normal(theta, 1.0, N_SBC_REC).mean() + g.laplace(0.0, SBC_SCALE)


def sbc_posterior(model):
    def posterior(sdp, L, g):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")       # short single chains: the report's warning is expected
            r = dapper_sample(model, sdp, [0.0], n_iter=10 * L, n_warmup=100, thin=10, n_chains=1, rng=g, progress=False)
        return r.posterior["theta"].values[0]
    return posterior


sbc_model = PrivacyModel(sbc_latent, sbc_post, sbc_priv, sbc_st, 1, ["theta"])
sbc_bug = PrivacyModel(sbc_latent, sbc_post, sbc_priv_bug, sbc_st, 1, ["theta"])
t0 = time.perf_counter()
p_sbc = rank_uniformity_pvalues(sbc_ranks(sbc_simulate, sbc_posterior(sbc_model), n_sbc, rng=21))[0]
p_sbc_bug = rank_uniformity_pvalues(sbc_ranks(sbc_simulate, sbc_posterior(sbc_bug), n_sbc, rng=21))[0]
print(f"SBC ({n_sbc} replicates, {time.perf_counter() - t0:.1f} s): rank-uniformity p-value {p_sbc:.3f}; "
      f"planted bug {p_sbc_bug:.2g}")
assert p_sbc > 1e-3 and p_sbc_bug < 1e-3

# %% [markdown]
# ## Three ways to write the modules
#
# The same model, Example 1 of dapper (a $2 \times 2$ table of $n = 400$ records, each answer released by randomized
# response; notebook 13b runs it in full), written three ways. All three run the same Markov chain: from one seed
# they give the same draws.
#
# | | dapper's per-record modules | batch (vectorised) modules | numba modules |
# |---|---|---|---|
# | `latent_f(theta, rng)` | a whole database, NumPy | the same | `@njit`, a loop over records |
# | `post_f(dmat, theta, rng)` | NumPy | NumPy | `@njit` |
# | `priv_f(sdp, sx)` | NumPy | NumPy | `@njit` |
# | `st_f` | `st_f(xi, sdp, i)`: one record's term | `st_f(X, sdp, idx)`: the terms of a batch of records, one row each; `PrivacyModel(..., batch=True)` | `st_f(xi, sdp, i)`, `@njit` |
# | the sampler calls | `st_f` once per record proposal | `st_f` once per iteration, on all $n$ proposals | everything inside one compiled kernel |
# | engine (`"auto"`) | `"numba"` if all four compile, else `"sweep"` if `priv_f` and `st_f` do, else `"python"` | `"sweep"` if `priv_f` compiles, else `"python"` | `"numba"` |
#
# **The one-line adapter** from a dapper-style `st_f` to the batch protocol (the same terms, so the same chain; it
# saves nothing by itself: the speed comes from writing the batch `st_f` with array operations):
#
# ```python
# st_batch = lambda X, sdp, idx: np.stack([st_f(x, sdp, i) for x, i in zip(X, idx)])
# ```
#
# In the batch protocol the proposals of one iteration are all drawn first (dapper's `latent_f` already draws a
# whole database) and their terms computed in one call; then the records are still accepted or rejected one by
# one, each against the running statistic that holds the records accepted before it: the same conditional
# updates, the same target.

# %%
N_RR = 400
CELLS_RR = np.array([[1, 1], [1, 0], [0, 1], [0, 0]])
sdp_rr = np.repeat(CELLS_RR, [104, 120, 74, 102], axis=0).astype(float)   # dapper's released table, as records


def rr_latent(theta, rng):                  # dapper: sample(tl, 400, replace = TRUE, prob = theta)
    return CELLS_RR[rng.choice(4, size=N_RR, p=theta / theta.sum())].astype(float)


def rr_post(dmat, theta, rng):              # flat Dirichlet prior: theta | x ~ Dirichlet(counts + 1)
    sex, status = dmat[:, 0] == 1, dmat[:, 1] == 1
    x = np.array([np.sum(sex & status), np.sum(sex & ~status), np.sum(~sex & status), np.sum(~sex & ~status)])
    t = rng.standard_gamma(x + 1.0)
    return t / t.sum()


def rr_st(xi, sdp, i):                      # dapper's t_i: a 400 x 2 matrix, zero but row i
    x = np.zeros((N_RR, 2))
    x[i] = xi
    return x


def rr_priv(sdp, sx):                       # agreements of the latent answers with the released ones
    t1 = np.sum(sdp == sx)
    return t1 * math.log(3 / 4) + (2 * N_RR - t1) * math.log(1 / 4)


def rr_latent_v(theta, rng):                # all records at once: the inverse CDF of the four cells
    k = np.searchsorted(np.cumsum(theta / theta.sum()), rng.random(N_RR), side="right")
    return CELLS_RR[np.minimum(k, 3)].astype(float)


def rr_st_v(X, sdp, idx):                   # batch st_f: each record's agreements with its released answers
    return (X == sdp[idx]).sum(axis=1)


def rr_priv_v(sdp, sx):                     # the statistic is now the number of agreements
    return sx * math.log(3 / 4) + (sdp.size - sx) * math.log(1 / 4)


@njit
def rr_latent_nb(theta, rng):
    cdf = np.cumsum(theta / theta.sum())
    out = np.empty((N_RR, 2))
    for i in range(N_RR):
        u, k = rng.random(), 0
        while k < 3 and u >= cdf[k]:
            k += 1
        out[i, 0] = 1.0 if k < 2 else 0.0
        out[i, 1] = 1.0 if k % 2 == 0 else 0.0
    return out


@njit
def rr_post_nb(dmat, theta, rng):
    t = np.ones(4)
    for i in range(dmat.shape[0]):
        t[2 * (1 - int(dmat[i, 0])) + (1 - int(dmat[i, 1]))] += 1.0
    for k in range(4):
        t[k] = rng.standard_gamma(t[k])
    return t / t.sum()


@njit
def rr_st_nb(xi, sdp, i):
    return (1.0 if xi[0] == sdp[i, 0] else 0.0) + (1.0 if xi[1] == sdp[i, 1] else 0.0)


@njit
def rr_priv_nb(sdp, sx):
    return sx * math.log(0.75) + (sdp.size - sx) * math.log(0.25)


ways = {"dapper's modules": PrivacyModel(rr_latent, rr_post, rr_priv, rr_st, 4),
        "dapper's modules, engine='python'": PrivacyModel(rr_latent, rr_post, rr_priv, rr_st, 4),
        "dapper's st_f through the adapter": PrivacyModel(
            rr_latent, rr_post, rr_priv, lambda X, sdp, idx: np.stack([rr_st(x, sdp, i) for x, i in zip(X, idx)]),
            4, batch=True),
        "batch modules": PrivacyModel(rr_latent_v, rr_post, rr_priv_v, rr_st_v, 4, same_shape=False, batch=True),
        "numba modules": PrivacyModel(rr_latent_nb, rr_post_nb, rr_priv_nb, rr_st_nb, 4, same_shape=False)}
draws_ways = {}
for label, mdl in ways.items():
    with warnings.catch_warnings(record=True) as notes:
        warnings.simplefilter("always", EngineNotice)
        warnings.simplefilter("ignore", ConvergenceWarning)     # 60 iterations: a check of the chain, not a posterior
        r = dapper_sample(mdl, sdp_rr, np.full(4, 0.25), n_iter=60, n_warmup=0, n_chains=1, rng=31, progress=False,
                          engine="python" if "python" in label else "auto")
    draws_ways[label] = np.stack([r.posterior[v].values[0] for v in mdl.varnames], axis=1)
    said = [str(w.message).split("; engine")[0].replace("dapper_sample: ", "") for w in notes
            if issubclass(w.category, EngineNotice)]
    print(f"{label:>36}: engine {r.posterior.attrs['engine']!r:9} record slots {bool(r.posterior.attrs['record_slots'])!s:5}"
          + (f" ({said[0]})" if said else ""))
ref = draws_ways["dapper's modules, engine='python'"]
assert all(np.array_equal(d, ref) for d in draws_ways.values())
print("all five runs: the same 60 draws of theta, bit for bit")

# %% [markdown]
# dapper's own `latent_f` uses `Generator.choice`, which numba does not compile (the notice above names it), so
# dapper's modules run on the `"sweep"` engine: `post_f` and `latent_f` from Python once per iteration, the record
# sweep compiled, with the record-slot update. `Generator.choice` draws its cells by the inverse CDF of one uniform
# each, which is why the numba and batch modules, written that way, reproduce its draws.
#
# **Their speed**, from the stored benchmark (`NUMBA_NUM_THREADS=1 .venv/bin/python
# benchmarks/bench_augmentation.py`, which writes `benchmarks/results/augmentation.json`): iterations per second
# and min ESS_bulk per second of one chain, as ratios to dapper 1.1.0 in R as recorded in
# `../shared/benchmarks/README.md` (R is not installed on the benchmark machine: dapper's figures are not re-run).
# Every engine runs the same chain, so a model's ESS per iteration is one number, measured over seeds; a row's
# ESS/s is its iterations/s times that number. Seconds are CPU seconds of the benchmark's process (one chain, one
# thread): the machine is shared, and wall seconds would measure the other users' load.

# %%
from _stored import stored as stored_result  # noqa: E402

from IPython.display import Markdown, display  # noqa: E402


def stored_benchmark(name):
    """benchmarks/results/<name>.json of this clone, or None (with a note naming the script)."""
    return stored_result(f"{name}.json", script=f"benchmarks/bench_{name}.py")


bench = stored_benchmark("augmentation")
if bench is not None:
    rows_b = [r for r in bench["rows"] if "x_dapper_ess_per_s" in r]
    lines = ["| model | modules | engine | it/s (CPU) | x dapper it/s | min ESS_bulk/s (CPU) | x dapper ESS/s |",
             "|---|---|---|---|---|---|---|"]

    def rng_fmt(v):
        return "-".join(f"{x:,.1f}" for x in v) if isinstance(v, list) else f"{v:,.1f}"

    for r in rows_b:
        lines.append(f"| {r['model']} | {r['modules']} | `{r['engine']}` | {r['it_per_s']:,.0f} | "
                     f"{rng_fmt(r['x_dapper_it_per_s'])} | {r['min_ess_bulk_per_s']:,.2f} | "
                     f"{rng_fmt(r['x_dapper_ess_per_s'])} |")
    display(Markdown("\n".join(lines) + f"\n\nStored {bench['date']} (commit {bench['dplit_commit']}); "
                     f"command: `{bench['command']}`. dapper: {bench['dapper']['source']}."))

# %%
# NBVAL_IGNORE_OUTPUT
if bench is not None:
    ex1_rows = [r for r in bench["rows"] if r["model"] == "Example 1"]
    fig, ax = plt.subplots(figsize=(7, 3.2))
    lo = [r["x_dapper_ess_per_s"][0] for r in ex1_rows]
    hi = [r["x_dapper_ess_per_s"][1] for r in ex1_rows]
    ypos = np.arange(len(ex1_rows))
    ax.barh(ypos, hi, color="tab:blue", alpha=0.35, label="against dapper's lowest recorded ESS/s")
    ax.barh(ypos, lo, color="tab:blue", label="against its highest")
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_yticks(ypos, [f"{r['modules']} ({r['engine']})" for r in ex1_rows], fontsize=9)
    ax.set_xscale("log")
    ax.set_xlabel("min ESS_bulk per second, x dapper in R (Example 1)")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()

# %% [markdown]
# ## ESS per iteration: the same chain as dapper's
#
# dapper's chain (`dapper_chain` in its `R/dapper_sample.R`, version 1.1.0) and `dapper_sample` run the same
# iteration; what differs is bookkeeping:
#
# | step | dapper (R) | here |
# |---|---|---|
# | parameter | `theta <- post_f(dmat, theta)`, given the current records | the same |
# | proposals | `smat <- latent_f(theta)`: one database from the new $\theta$ per iteration, row $j$ proposes record $j$ | the same (one `latent_f` call per iteration, not one per record) |
# | records | $j = 1, \dots, n$ in order; accept when $\log U < \log g(s_{dp}, s^*) - \log g(s_{dp}, s)$; running statistic | the same order, ratio and running statistic; $U$ is drawn only when the log ratio is negative |
# | iteration | one `post_f`, one `latent_f`, one sweep | the same |
# | kept $\theta$ | the value before the iteration's `post_f` | the value after it: the same sequence, one iteration later |
# | statistic | summed once, then updated | re-summed from the records at every call of the driver (no drift) |
# | warm-up | inside `niter`; default half of it | outside `n_iter`; default 1,000 |
# | ESS | `posterior::ess_bulk` (rank-normalised, split chains) | ArviZ `ess(method="bulk")`, the same estimator |
#
# None of these changes the Markov chain, so its autocorrelation, and the ESS per iteration, are dapper's.
# Drawing $U$ only when it can matter saves a uniform per favourable proposal and leaves the law alone; keeping
# $\theta$ after its draw shifts the output by one iteration. `tests/test_augmentation.py` writes dapper's
# iteration out as a loop and gets `dapper_sample`'s draws from it. Measured on Example 1's release with one
# chain, as dapper's figures are recorded (`niter = 20000` with dapper's default warm-up of half; min ESS_bulk over
# the four cells, over the kept draws, divided by all iterations), by `nice -n 10 .venv/bin/python
# benchmarks/dapper_ess_per_iteration.py` (stored in `benchmarks/results/dapper_ess_per_iteration.json`):

# %%
ess_store = stored_benchmark("dapper_ess_per_iteration")
if ess_store is not None:
    rec, ours, longr = ess_store["dapper_recorded"], ess_store["dapper_protocol_numba_engine"], \
        ess_store["long_runs_numba"]
    lo_d, hi_d = rec["range_ess_per_iteration"]
    q_lo, q_hi = ours["ess_per_iteration_min_max"]
    display(Markdown(f"""
| | ESS per iteration |
|---|---|
| dapper in R, the recorded runs (`../shared/benchmarks/README.md`) | {lo_d:.4f}-{hi_d:.4f} |
| here, the same protocol, {ours["seeds"]} seeds | {ours["ess_per_iteration_mean"]:.4f} (s.e. {ours["ess_per_iteration_se"]:.4f}; single seeds {q_lo:.4f}-{q_hi:.4f}) |
| here, per kept draw, {longr["seeds"]} chains of {longr["n_iter_kept"]:,} | {longr["ess_per_kept_draw_mean"]:.4f} |
| dapper's paper, four chains of 5,000 kept draws, per kept draw | {rec["paper"]["ess_per_kept_draw"]:.4f} |

Each of dapper's runs lies within the range of our seeds. The chain's ESS per iteration is small, so a run of
a thousand or so iterations holds a few effective draws and its ESS estimate is noise: compare samplers' ESS per
iteration on runs of 20,000 iterations or more, averaged over seeds (as the benchmark above does).
"""))

# %% [markdown]
# ## When to use this

# %%
if bench is not None:
    by = {(r["model"], r["modules"]): r for r in bench["rows"]}
    d_py, d_v, d_nb = (by[("Example 1", k)] for k in ("dapper's modules, Python", "vectorised modules (batch st_f)",
                                                       "numba modules"))

    def x_range(r):
        return "-".join(f"{x:,.0f}" if x >= 10 else f"{x:.1f}" for x in r["x_dapper_ess_per_s"])

    display(Markdown(f"""
* **Start with plain Python modules, written as dapper's paper writes them**: `dapper_sample` compiles what numba
  can compile and says which module it could not. On Example 1 dapper's own modules ran on the `{d_py["engine"]}`
  engine at {d_py["it_per_s"]:,.0f} iterations per CPU-second, {x_range(d_py)} times dapper's ESS per second.
* **When that is too slow, write `st_f` for a batch of records** (`batch=True`) and `latent_f`, `post_f` with array
  operations: {d_v["it_per_s"]:,.0f} iterations per CPU-second on Example 1, {x_range(d_v)} times dapper's ESS/s, still
  plain NumPy.
* **For long or repeated runs, decorate the modules with `@njit`** (random modules take `rng` last): the whole chain
  compiled, {d_nb["it_per_s"]:,.0f} iterations per CPU-second, {x_range(d_nb)} times dapper's ESS/s. A method used
  often deserves a specialised kernel still (notebook 13b: the generic sampler against `dp_mcmc`).
* **Check mixing**: the sampler is exact but slow when the noise dominates (dapper's Sec. 6, notebook 13b). Run
  several chains, read `attrs["converged"]` and `summary`.
* **Not for**: mechanisms without a tractable density, or `post_f` samplers that are not valid one-step MCMC draws
  (adaptive samplers, warm-up draws of other packages: dapper's warning, Sec. 4).
"""))
