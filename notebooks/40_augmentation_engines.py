# %% [markdown]
# # dapper's engines: one record sweep in Python, compiled, or the whole chain compiled
#
# * **For:** what runs inside `dapper_sample` (notebook 41): the record sweep of dapper's Sec. 3 in a Python loop, as numba kernels, and the choice among them when the modules are plain Python; then how to write the modules for speed, and what a specialised kernel (`dp_mcmc`) buys.
# * **You need:** a `PrivacyModel` (notebook 41); the checks here use dapper's Example 1 from `examples/dapper_examples.py` (notebook 82).
# * **You get:** `dplit._augmentation_engines` (re-exported by `dplit.augmentation`): the three engines, which run the same Markov chain from one seed, the module compiler and its probe; the speed of three ways to write the modules against dapper in R, read from the stored benchmark.

# %%
#| default_exp _augmentation_engines

# %% [markdown]
# ## Parameters
#
# The engine checks are exact (the same draws, bit for bit) from fixed seeds; the run lengths of the DPMCMC
# comparison come from the size switch (`DPLIT_QUICK=1` gives the quick sizes of the test suite).

# %%
import math
import warnings

import arviz as az
import matplotlib.pyplot as plt
import numpy as np
from numba import njit

from dplit.augmentation import PrivacyModel, dapper_sample
from dplit.config import is_quick, size
import sys  # dapper's example models are not library API: they live in examples/ (exported by notebook 82)

sys.path.insert(0, "../examples")
from dapper_examples import SDP_EX1, example1_model  # noqa: E402
from dplit.dirichlet import censored_stat, dirichlet_draws
from dplit.mcmc import dp_mcmc
from dplit.release import Release
from dplit.sampling import ConvergenceWarning

# which engine ran is read from attrs["engine"]; the notice of a module numba could not compile is shown where the
# engines are compared ("Three ways to write the modules")
warnings.filterwarnings("ignore", message="dapper_sample: .* did not compile", category=UserWarning)
SEED = 20261127
rng = np.random.default_rng(SEED)     # the release of the DPMCMC comparison

# %% [markdown]
# ## The result first: the compiled chain against the exact posterior
#
# What the engines deliver, through `dapper_sample` (notebook 41), which picks one of the engines this notebook writes.
# dapper's Example 1 (its Sec. 5): a $2 \times 2$ table of 400 records (sex, admitted) released record by record by
# randomized response, $\epsilon = \log 3$, flat Dirichlet prior on the four cell probabilities. The modules are
# numba functions, so the whole chain runs compiled (`attrs["engine"]` says which engine ran). This small model also has
# an exact posterior: the released table's cell probabilities are $q = M\theta$ with $M = K \otimes K$,
# $K = \begin{pmatrix} 3/4 & 1/4 \\ 1/4 & 3/4 \end{pmatrix}$, so $q$ is $\mathrm{Dirichlet}(y + 1)$ restricted to $M$(simplex) and exact
# draws come by rejection (notebook 82 derives it). The check: each posterior mean lies within 4 Monte Carlo standard
# errors of the exact one, and each posterior sd within 10% of the exact sd.

# %%
# NBVAL_IGNORE_OUTPUT
from dapper_examples import NOISY_TABLE, NAMES_EX1  # noqa: E402
from dplit.augmentation import summary  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore", ConvergenceWarning)     # the quick size's short chains: R-hat is printed below
    res_first = dapper_sample(example1_model("numba"), SDP_EX1, np.full(4, 0.25), n_iter=size(full=10_000, quick=5_000),
                              n_warmup=1000, n_chains=4, rng=SEED + 1, progress=False)
K_first = np.array([[0.75, 0.25], [0.25, 0.75]])
q_first = np.random.default_rng(SEED + 2).dirichlet(NOISY_TABLE + 1.0, size=400_000)
exact_first = q_first @ np.linalg.inv(np.kron(K_first, K_first)).T
exact_first = exact_first[np.all(exact_first >= 0, axis=1)]                 # rejection: keep theta in the simplex
tab_first = summary(res_first)
z_first = (tab_first["mean"].to_numpy() - exact_first.mean(axis=0)) / (tab_first["sd"] / np.sqrt(tab_first["ess_bulk"]))
print(f"engine {res_first.posterior.attrs['engine']!r}; max R-hat {tab_first['rhat'].max():.3f}; "
      f"posterior mean - exact, in Monte Carlo s.e.: {np.round(z_first.to_numpy(), 2)}")
assert np.all(np.abs(z_first) < 4)
assert np.allclose(tab_first["sd"], exact_first.std(axis=0), rtol=0.1)

fig, axes = plt.subplots(1, 4, figsize=(7, 2.5), sharey=True)
bins = np.linspace(0, 0.55, 45)
for j, (ax, name) in enumerate(zip(axes, NAMES_EX1)):
    ax.hist(exact_first[:, j], bins=bins, density=True, color="0.8", label="exact (rejection)")
    ax.hist(res_first.posterior[name].values.ravel(), bins=bins, density=True, histtype="step", color="C0", lw=1.4,
            label="dapper_sample")
    ax.set_xlabel(f"$\\pi_{{{name[-2:]}}}$", fontsize=9)
    ax.tick_params(labelsize=8)
axes[0].set_ylabel("density", fontsize=9)
fig.legend(*axes[0].get_legend_handles_labels(), loc="upper center", ncol=2, fontsize=9, frameon=False)
fig.tight_layout(rect=(0, 0, 1, 0.88))

# %% [markdown]
# ## A module's output, read once
#
# The engines call the modules through a few readers: `latent` checks that `latent_f` returns an $n \times p$ matrix,
# `statistic` sums the records' terms $s = \sum_i t_i(x_i, s_{dp})$ (one shape for every record; or calls a batch
# `st_f` once, or a non-additive `st_f(dmat, sdp)`), and `log_density` checks that `priv_f` returns one real number.
# `dapper_sample`'s first call (notebook 41) runs them at `init_par` so that a mistake is reported by name.

# %%
#| export
import math
import warnings

import numpy as np
from numba import njit
from numba.core.dispatcher import Dispatcher

MODULES = ("latent_f", "post_f", "priv_f", "st_f")


def as_real(value, what):
    """A module's output as a float array (or float), or a TypeError saying which module returned what."""
    arr = np.asarray(value)
    if arr.dtype == bool:
        arr = arr.astype(float)
    if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"{what} must return real numbers, got {type(value).__name__} of dtype {arr.dtype}")
    return float(arr) if arr.ndim == 0 else np.ascontiguousarray(arr, dtype=float)


def latent(model, theta, rng):
    """latent_f(theta) as a C-contiguous float (n, p) matrix, checked."""
    dmat = as_real(model.call("latent_f", theta, rng=rng), "latent_f")
    if np.ndim(dmat) != 2 or dmat.shape[0] < 1 or dmat.shape[1] < 1:
        raise ValueError(f"latent_f(theta) must return an (n, p) matrix (a matrix even when p = 1: "
                         f"reshape(-1, 1)), got shape {np.shape(dmat)}")
    return dmat


def statistic(model, dmat, sdp):
    """The statistic of a database: the sum of the st_f terms (one shape for every record), or st_f(dmat, sdp)."""
    if not model.additive:
        return as_real(model.st_f(dmat, sdp), "st_f(dmat, sdp)")
    if model.batch:
        return batch_terms(model, dmat, sdp).sum(axis=0)
    s = as_real(model.st_f(dmat[0], sdp, 0), "st_f") * 1.0
    for i in range(1, dmat.shape[0]):
        t = as_real(model.st_f(dmat[i], sdp, i), "st_f")
        if np.shape(t) != np.shape(s):
            raise ValueError(f"st_f must return one shape for every record: record 0 gave {np.shape(s)}, "
                             f"record {i} gave {np.shape(t)}")
        s = s + t
    return s


def batch_terms(model, dmat, sdp):
    """The terms of all records from a batch st_f: a float array with one row per record."""
    n = dmat.shape[0]
    t = np.asarray(as_real(model.st_f(dmat, sdp, np.arange(n)), "st_f(X, sdp, idx)"), dtype=float)
    if t.ndim == 0 or t.shape[0] != n:
        raise ValueError(f"a batch st_f(X, sdp, idx) must return one row per record of X ({n}), got shape {t.shape}")
    return np.ascontiguousarray(t)


def log_density(model, sdp, s):
    """priv_f(sdp, s) as a float, checked to be a real number."""
    out = np.asarray(model.priv_f(sdp, s))
    if out.ndim != 0 or not np.issubdtype(out.dtype, np.number) or np.iscomplexobj(out):
        raise TypeError(f"priv_f(sdp, sx) must return a real number (the log density), got shape {out.shape}")
    return float(out)


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
def python_sweep(model, state, prop, sdp, rng):
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
        t_cur, t_new = state["terms"], batch_terms(model, prop, sdp)
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

# %%
#| export
def python_chain(model, state, n_steps, thin, sdp, rng, sweep=None):
    """Advance a chain n_steps iterations: post_f and latent_f called from Python, then a record sweep
    (``sweep(state, prop, rng)``, default the Python one); state dict updated in place."""
    if sweep is None:
        def sweep(state, prop, rng):
            return python_sweep(model, state, prop, sdp, rng)
    theta, dmat = state["theta"], state["dmat"]
    n = dmat.shape[0]
    n_save = n_steps // thin
    draws = np.empty((n_save, model.npar))
    acc = np.zeros(n_save)
    for it in range(n_save * thin):
        theta[:] = as_real(model.call("post_f", dmat, theta, rng=rng), "post_f")
        prop = as_real(model.call("latent_f", theta, rng=rng), "latent_f")
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
@njit(nogil=True)  # not cached: specialised on user functions (see chain_kernel)
def stat_sum_kernel(st_f, dmat, sdp):
    """The statistic of a database: the sum over records of st_f(dmat[i], sdp, i) (float)."""
    s = st_f(dmat[0], sdp, 0) * 1.0
    for i in range(1, dmat.shape[0]):
        s = s + st_f(dmat[i], sdp, i)
    return s


@njit(nogil=True)
def sweep_kernel(priv_f, st_f, dmat, prop, st, cur, sdp, rng):
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

# %%
#| export
@njit(nogil=True)
def sweep_slot_kernel(priv_f, st_f, dmat, prop, st, cur, sdp, rng):
    """The sweep when record i's term is zero outside slot i of the statistic: only that slot is updated (in
    place, restored on rejection), the same arithmetic entry by entry as sweep_kernel. Slot i of the statistic
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
def sweep_terms_kernel(priv_f, t_cur, t_new, dmat, prop, st, cur, sdp, rng):
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

# %%
#| export
def make_chain_kernel(sweep):
    """The whole chain in one compiled function, with the record sweep ``sweep``."""
    @njit(nogil=True)  # not cached: its specialisations key on the user's module functions (numba cannot
    # save those: 'underlying object has vanished'), and they change with every model anyway
    def chain(latent_f, post_f, priv_f, st_f, theta, dmat, st, cur, sdp, n_steps, thin, rng):
        """n_steps iterations (post_f, latent_f, a record sweep) of one chain, compiled; returns
        (kept draws, acceptance per kept draw, running statistic, its log density)."""
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


chain_kernel = make_chain_kernel(sweep_kernel)
chain_slot_kernel = make_chain_kernel(sweep_slot_kernel)


# %% [markdown]
# Check: the same numba modules run by the two engines from the same seed give **the same draws**, bit for bit
# (numba's Generator methods reproduce NumPy's streams), on dapper's Example 1 (`examples/dapper_examples.py`, notebook
# 82: a $2 \times 2$ table of 400 records released by randomized response, flat Dirichlet prior).

# %%
def one_chain(model, sdp, engine, n_steps, seed):
    """n_steps iterations of one chain from theta = 1/4, by the Python loop or the compiled chain kernel."""
    theta = np.full(4, 0.25)
    g = np.random.default_rng(seed)
    dmat = latent(model, theta, g)
    st = statistic(model, dmat, sdp)
    state = {"theta": theta, "dmat": dmat, "st": st, "cur": log_density(model, sdp, st), "slot": False}
    if engine == "python":
        return python_chain(model, state, n_steps, 1, sdp, g)[0]
    return chain_kernel(model.latent_f, model.post_f, model.priv_f, model.st_f, state["theta"], state["dmat"],
                        state["st"], state["cur"], sdp, n_steps, 1, g)[0]


ex1_nb = example1_model("numba")
d_py = one_chain(ex1_nb, SDP_EX1, "python", 200, 4)
d_nb = one_chain(ex1_nb, SDP_EX1, "numba", 200, 4)
assert np.array_equal(d_py, d_nb)
print("python and numba engines, 200 iterations: identical draws; first", d_nb[0].round(4))

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

# %%
#| export
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

# %%
#| export
def _probe(model, sdp, theta):
    """Compile and probe the four modules (cached on the model per shape of sdp): the engines they allow."""
    key = (np.ndim(sdp), np.shape(sdp))
    if key in model._probes:
        return model._probes[key]
    g = np.random.default_rng(20261126)
    dmat = latent(model, theta, g)
    dmat2 = latent(model, theta, g)
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
        comp["priv_f"], why["priv_f"] = _probe_one(model, "priv_f", (sdp, statistic(model, d, sdp)), False)
        if comp["priv_f"] is None:
            break
    out = {"compiled": comp, "why": why, "slot": slot, "noticed": False,
           "numba": model.additive and not model.batch and all(comp[m] is not None for m in MODULES),
           "sweep": model.additive and comp["priv_f"] is not None and (model.batch or comp["st_f"] is not None)}
    model._probes[key] = out
    return out

# %%
#| export
def choose_engine(model, sdp, theta, engine):
    """The engine to run ('numba', 'sweep' or 'python') and the probe's record (None for engine='python')."""
    if engine == "python":
        return "python", None
    info = _probe(model, sdp, theta)
    order = [m for m in MODULES if info["compiled"][m] is None]
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
# ## Three ways to write the modules
#
# The same model, Example 1 of dapper (a $2 \times 2$ table of $n = 400$ records, each answer released by randomized
# response; notebook 82 runs it in full), written three ways. All three run the same Markov chain: from one seed
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
# dapper's Example 1 written three ways, from examples/dapper_examples.py (notebook 82)
ways = {"dapper's modules": example1_model("dapper", varnames=None),
        "dapper's modules, engine='python'": example1_model("dapper", varnames=None),
        "dapper's st_f through the adapter": example1_model("adapter", varnames=None),
        "batch modules": example1_model("batch", varnames=None),
        "numba modules": example1_model("numba", varnames=None)}
draws_ways = {}
for label, mdl in ways.items():
    with warnings.catch_warnings(record=True) as notes:
        warnings.simplefilter("always", EngineNotice)
        warnings.simplefilter("ignore", ConvergenceWarning)     # 60 iterations: a check of the chain, not a posterior
        r = dapper_sample(mdl, SDP_EX1, np.full(4, 0.25), n_iter=60, n_warmup=0, n_chains=1, rng=31, progress=False,
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
from dplit.config import stored as stored_result  # noqa: E402

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
# ## A specialised kernel: DPMCMC of notebook 21 as an instance of this interface
#
# Guo et al.'s DPMCMC (notebook 21, `dplit.mcmc.dp_mcmc`) is data augmentation for the Dirichlet model with a
# censored, Laplace-noised statistic. In the four modules: `latent_f` draws $n$ compositions from
# $\mathrm{Dirichlet}(\boldsymbol\alpha)$; `st_f` is $t_i = \log\max(\mathbf x_i, a)/n$ (record additive: the released statistic is a mean);
# `priv_f` is the Laplace log density $-\sum_j |s_{L,j} - s_j|/b$, $b = -d\log(a)/(n\epsilon_1)$; and `post_f` is one valid MCMC
# step for $\boldsymbol\alpha \mid \mathbf D$, eq. (1) with the Gamma(1, 0.1) prior p1: here ten random-walk Metropolis steps on
# $\log\boldsymbol\alpha$ (dapper's own version of this benchmark used five steps of sd 0.02). `dp_mcmc` is the same sampler with a
# specialised kernel: a slice sampler for $\boldsymbol\alpha$ and the records kept in log space. On one small release (n = 200,
# d = 3, $a = 0.01$, $\epsilon_1 = 2$) both must give the same posterior; and the specialised kernel's speed-up is measured
# as bulk ESS per second.

# %%
N_DIR, D_DIR, A_DIR, EPS_DIR = 200, 3, 0.01, 2.0
LOG_A_DIR = math.log(A_DIR)
B_DIR = -D_DIR * LOG_A_DIR / (N_DIR * EPS_DIR)
RW_SD, RW_STEPS = 0.08, 10
X_dir = dirichlet_draws(np.array([2.2, 3.3, 4.4]), N_DIR, rng=rng)
s_L_dir = censored_stat(X_dir, A_DIR) + rng.laplace(0.0, B_DIR, D_DIR)
rel_dir = Release.from_statistic(s_L_dir, N_DIR, A_DIR, EPS_DIR)
assert np.isclose(rel_dir.scale, B_DIR)


@njit
def dir_latent(theta, rng):
    out = np.empty((N_DIR, D_DIR))
    for i in range(N_DIR):
        tot = 0.0
        for j in range(D_DIR):
            out[i, j] = max(rng.standard_gamma(theta[j]), 1e-300)
            tot += out[i, j]
        for j in range(D_DIR):
            out[i, j] /= tot
    return out


@njit
def dir_log_target(lal, s0):
    """Eq. (1) of Guo et al. with the p1 prior, in log alpha (Jacobian included)."""
    tot, out = 0.0, 0.0
    for j in range(D_DIR):
        al = math.exp(lal[j])
        tot += al
        out += -math.lgamma(al) * N_DIR + (al - 1.0) * N_DIR * s0[j] + lal[j] - 0.1 * al
    return out + math.lgamma(tot) * N_DIR


@njit
def dir_post(dmat, theta, rng):
    s0 = np.zeros(D_DIR)
    for i in range(N_DIR):
        for j in range(D_DIR):
            s0[j] += math.log(dmat[i, j]) / N_DIR
    lal = np.log(theta)
    cur = dir_log_target(lal, s0)
    prop = np.empty(D_DIR)
    for _ in range(RW_STEPS):
        for j in range(D_DIR):
            prop[j] = lal[j] + RW_SD * rng.standard_normal()
        new = dir_log_target(prop, s0)
        if new - cur >= 0.0 or rng.random() < math.exp(new - cur):
            lal[:] = prop
            cur = new
    return np.exp(lal)


@njit
def dir_st(xi, sdp, i):
    out = np.empty(D_DIR)
    for j in range(D_DIR):
        out[j] = max(math.log(xi[j]), LOG_A_DIR) / N_DIR
    return out


@njit
def dir_priv(sdp, sx):
    s = 0.0
    for j in range(D_DIR):
        s -= abs(sdp[j] - sx[j])
    return s / B_DIR


dir_model = PrivacyModel(dir_latent, dir_post, dir_priv, dir_st, D_DIR, ["alpha_0", "alpha_1", "alpha_2"])
# the statistic of the modules is the censored statistic of notebook 15
assert np.allclose(sum(dir_st(X_dir[i], s_L_dir, i) for i in range(N_DIR)), censored_stat(X_dir, A_DIR))
n_dir = size(full=40_000, quick=4_000)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ConvergenceWarning)    # the R-hat of both runs is printed below
    res_generic = dapper_sample(dir_model, s_L_dir, np.array([2.0, 3.0, 4.0]), n_iter=n_dir, n_warmup=2000,
                                n_chains=4, thin=4, rng=126, progress=False)
    res_spec = dp_mcmc(rel_dir, n_iter=n_dir // 2, n_warmup=1000, n_chains=4, thin=2, rng=127, progress=False)
gen_al = np.stack([res_generic.posterior[f"alpha_{j}"].values for j in range(D_DIR)], axis=-1)
spec_al = res_spec.posterior["alpha"].values
rows_ = []
for label, al, rt in [("PrivacyModel (generic kernel)", gen_al, res_generic.posterior.attrs["runtime"]),
                      ("dp_mcmc (specialised kernel)", spec_al, res_spec.posterior.attrs["runtime"])]:
    ess_ = np.array([float(az.ess(al[..., j])) for j in range(D_DIR)])
    rows_.append((label, al.mean((0, 1)), al.std((0, 1)), ess_, ess_.min() / rt))
    rhat_ = max(float(az.rhat(al[..., j])) for j in range(D_DIR))
    print(f"{label:>30}: mean {al.mean((0, 1)).round(3)}, sd {al.std((0, 1)).round(3)}, "
          f"ESS_bulk {ess_.round(0)}, max R-hat {rhat_:.3f}")
(_, m_g, s_g, e_g, r_g), (_, m_s, s_s, e_s, r_s) = rows_
se_gap = np.hypot(s_g / np.sqrt(e_g), s_s / np.sqrt(e_s))
print("difference of the means in Monte Carlo s.e.:", ((m_g - m_s) / se_gap).round(2),
      f"| specialised kernel: {r_s / r_g:.1f} x the ESS per second of the generic one")
assert np.all(np.abs(m_g - m_s) < 4 * se_gap) and (is_quick() or np.allclose(s_g, s_s, rtol=0.2))   # sd: long runs only

# %% [markdown]
# The generic sampler, written in four small numba functions, reproduces the specialised one's posterior; the
# specialised kernel (slice sampling of $\boldsymbol\alpha$ instead of a random walk, records in log space, no per-record
# function calls) buys the factor printed above. `benchmarks/bench_augmentation.py` measures the same on dapper's own
# compositional release ($n = 1000$) next to dapper's recorded figures.

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
  often deserves a specialised kernel still: `dp_mcmc` gave {r_s / r_g:.1f} times the ESS per second of the
  generic sampler on the same release, with the same posterior.
* **Check mixing**: the sampler is exact but slow when the noise dominates (dapper's Sec. 6, notebook 82). Run
  several chains, read `attrs["converged"]` and `summary`.
* **Not for**: mechanisms without a tractable density, or `post_f` samplers that are not valid one-step MCMC draws
  (adaptive samplers, warm-up draws of other packages: dapper's warning, Sec. 4).
"""))

