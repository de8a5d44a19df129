# %% [markdown]
# # The sampler core: chains, seeds, warm-up, progress, ArviZ and a convergence report
#
# The one driver every Bayesian sampler of dplit plugs into: a method supplies its state, a transition and its warm-up adaptation; the driver gives per-chain seed streams, warm-up windows, thinning, progress, parallel chains, packaging into ArviZ and a convergence report, plus a reproducible parallel map for work that is not a chain.
#
# * **For:** running any Bayesian sampler of dplit, or writing a new one, with reproducible chains and a convergence check.
# * **You need:** a model's state, transition and warm-up (or one of dplit's samplers).
# * **You get:** an ArviZ posterior with seeds per chain, thinning, progress, and a convergence report (R-hat, ESS, MPSRF).
#
# ## Parameters
#
# Sizes come from the size switch (`DPLIT_QUICK=1` gives the quick sizes of the test suite).

# %%
# %matplotlib inline
import arviz as az  # az.summary only: the same call under ArviZ 0.x and 1.x
import matplotlib.pyplot as plt
import numpy as np
from numba import njit

from dplit.config import is_quick, size
from dplit.testing import rank_uniformity_pvalues, sbc_ranks

SEED = 20261124
n_sbc = size(full=400, quick=100)   # SBC replicates of the example sampler
n_fig = size(full=5000, quick=1000)  # kept draws per chain of the first figure
print(f"quick mode: {is_quick()}; n_sbc = {n_sbc}")

# %% [markdown]
# ## What it gives
#
# The result first, from the finished module `dplit.sampling`: a random-walk Metropolis step in Python on the mean
# $\mu$ of $k = 20$ observations $y_i \sim N(\mu, 1)$, prior $N(0, 1)$ (exact posterior $N(\sum_i y_i/(k+1), 1/(k+1))$);
# `run` gives four chains from one seed, tunes the step in warm-up, and returns an ArviZ posterior with its
# convergence report (Guo et al., S5). Left: the draws against the exact posterior; right: the first 200 draws.

# %%
# NBVAL_IGNORE_OUTPUT
import dplit.sampling as dps

y_demo = np.random.default_rng(SEED).normal(1.5, 1.0, size=20)
post_prec = y_demo.size + 1.0                      # posterior N(sum(y) / post_prec, 1 / post_prec)


def rwm_step(state, rng):
    """One random-walk Metropolis step on mu; state = (mu, proposal sd)."""
    logp = lambda mu: mu * y_demo.sum() - 0.5 * post_prec * mu * mu  # noqa: E731
    mu, sd = state
    prop = mu + sd * rng.standard_normal()
    ok = np.log(rng.random()) < logp(prop) - logp(mu)
    mu = prop if ok else mu
    return (mu, sd), {"mu": mu}, {"acceptance": float(ok)}


def rwm_adapt(state, draws, stats):                # proposal sd 2.4 x the posterior sd seen in the window
    return (state[0], 2.4 * max(np.std(draws["mu"]), 1e-3))


rwm_parts = (lambda rng: (rng.normal(), 1.0), rwm_step, rwm_adapt)       # init, step, adapt
fig_res = dps.run(dps.Sampler.from_step(*rwm_parts), n_iter=n_fig, n_warmup=500, n_chains=4, rng=SEED,
                  progress=False)
mu_fig, att = fig_res.posterior["mu"].values, fig_res.posterior.attrs
print(f"R-hat {att['rhat_max']:.4f}, bulk ESS {att['ess_bulk_min']:.0f}; posterior mean {mu_fig.mean():.3f}, "
      f"exact {y_demo.sum() / post_prec:.3f}")
assert att["converged"] == 1 and abs(mu_fig.mean() - y_demo.sum() / post_prec) < 4 * mu_fig.std() / np.sqrt(
    att["ess_bulk_min"])

fig, (ax, ax_tr) = plt.subplots(1, 2, figsize=(7, 2.8), width_ratios=[1.3, 1])
grid = np.linspace(mu_fig.min(), mu_fig.max(), 400)
ax.hist(mu_fig.ravel(), bins=60, density=True, color="C0", alpha=0.5, label="run, 4 chains")
ax.plot(grid, np.sqrt(post_prec / (2 * np.pi)) * np.exp(-0.5 * post_prec * (grid - y_demo.sum() / post_prec) ** 2),
        "k", lw=1.2, label="exact posterior")
ax.set(xlabel=r"$\mu$", ylabel="density")
ax.legend(fontsize=9, loc="upper left", frameon=False)
for c in range(mu_fig.shape[0]):
    ax_tr.plot(mu_fig[c, :200], lw=0.6)
ax_tr.set(xlabel="draw (after warm-up)", ylabel=r"$\mu$",
          title=f"$\\hat R$ = {att['rhat_max']:.3f}, bulk ESS {att['ess_bulk_min']:.0f}")
for a in (ax, ax_tr):
    a.tick_params(labelsize=9)
ax_tr.title.set_size(10)
fig.tight_layout()

# %% [markdown]
# ## What a sampler is, and what the driver does
#
# An MCMC method is a **state** and a **transition kernel** that leaves the target invariant, plus,
# during warm-up, an **adaptation** of the kernel's tuning (a step size, a linear map) from the draws so
# far. Everything else is the same for every method, and is written once here: one seed gives one
# independent stream per chain (`SeedSequence.spawn`), warm-up runs in windows that grow
# (5%, 10%, 20%, 25%, 40% of `n_warmup`, as Stan's windows do) with an adaptation after each, the kept
# iterations are thinned, chains run in parallel threads, a progress bar counts iterations, and the draws are
# packed into an ArviZ object with a convergence report.
#
# As in **blackjax** (`init`/`step`, the caller owns the loop) and **emcee** (moves apart from the driver, an injected
# progress bar), state, transition and driver are apart; but our hot loops are numba kernels, so a method hands the
# driver a **chain kernel** that advances `T` steps in compiled code and returns the kept draws and per-draw
# statistics (a slow generic model gives a Python `step` instead: `Sampler.from_step`). A `Sampler` is:
#
# | field | what the method supplies |
# |---|---|
# | `init(rng) -> state` | a starting state for one chain, from that chain's own Generator |
# | `run_chain(state, n_steps, thin, rng) -> (draws, stats)` | advance `n_steps` (a multiple of `thin`), keep every `thin`-th draw; `draws` and `stats` are dicts of arrays with a leading axis of length `n_steps // thin`; the state is updated in place (or held in a mutable object) |
# | `adapt(state, draws, stats) -> state` | optional: retune after a warm-up window from that window's draws |
# | `dims`, `coords` | names of the event dimensions of each variable, for ArviZ |
#
# and `run(sampler, n_iter=..., n_warmup=..., n_chains=..., thin=..., rng=..., progress=..., n_jobs=...)`
# returns the ArviZ object. The random stream of a chain depends only on the seed and the chain's index, never
# on `n_jobs`, on thread timing, or on how the driver splits the run into calls (kernels consume the
# Generator sequentially, and chunks are multiples of `thin`).

# %%
#| default_exp sampling
#| internal chain_generators warmup_windows RHAT_MAX ESS_PER_CHAIN_MIN RUN_SETTINGS RUN_DEFAULTS
#| internal PROGRESS_DELAY LazyBar
#| export
import os
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from dplit import _validate as V
from dplit import results
from dplit._arviz import to_arviz, update_attrs
from dplit.diagnostics import diagnostics


@dataclass(frozen=True)
class Sampler:
    """What a sampling method supplies to :func:`run`: initialisation, transition, adaptation.

    Parameters
    ----------
    init : callable
        ``init(rng) -> state``: a starting state for one chain from that chain's Generator.
    run_chain : callable
        ``run_chain(state, n_steps, thin, rng) -> (draws, stats)``: advance ``n_steps``
        iterations (a multiple of ``thin``) and keep every ``thin``-th; ``draws`` and ``stats``
        are dicts of arrays with leading axis ``n_steps // thin``. The state is updated in place.
    adapt : callable, optional
        ``adapt(state, draws, stats) -> state`` after each warm-up window (its draws, unthinned).
    dims : dict of str -> list of str
        Event dimension names per variable (ArviZ ``dims``).
    coords : dict of str -> array_like
        Coordinates of those dimensions.
    chunk : int, default 2000
        Iterations per ``run_chain`` call while sampling, so that the progress bar moves.
    """

    init: Callable
    run_chain: Callable
    adapt: Callable | None = None
    dims: dict = field(default_factory=dict)
    coords: dict = field(default_factory=dict)
    chunk: int = 2000

    @classmethod
    def from_step(cls, init, step, adapt=None, **options):
        """A sampler from a Python ``step(state, rng) -> (state, draw, stat)`` (slow, generic models).

        ``draw`` and ``stat`` are dicts of one iteration's values; the driver loops in Python.
        """
        def run_chain(box, n_steps, thin, rng):
            kept_d, kept_s = [], []
            for it in range(n_steps):
                box[0], draw, stat = step(box[0], rng)
                if (it + 1) % thin == 0:
                    kept_d.append(draw)
                    kept_s.append(stat)
            stack = lambda rows: {k: np.array([r[k] for r in rows]) for k in (rows[0] if rows else {})}  # noqa: E731
            return stack(kept_d), stack(kept_s)

        def adapt_box(box, draws, stats):
            box[0] = adapt(box[0], draws, stats)
            return box

        return cls(init=lambda rng: [init(rng)], run_chain=run_chain,
                   adapt=None if adapt is None else adapt_box, **options)


# %% [markdown]
# ## Seeds and warm-up windows
#
# `chain_generators` spawns one child Generator per chain (or per block of work) from the caller's `rng`:
# children of one `SeedSequence` are independent streams, and the `k`-th child is the same whatever else
# runs. Its label (entropy and spawn key) goes into the result's `attrs`, so that any chain can be rerun
# alone. Warm-up windows grow, so that early, badly tuned stretches are forgotten quickly.

# %%
#| export
def chain_generators(rng, n):
    """``n`` independent Generators spawned from ``rng`` (a seed or a Generator), and their labels."""
    gens = V.rng(rng).spawn(n)
    labels = [f"{g.bit_generator.seed_seq.entropy}/{g.bit_generator.seed_seq.spawn_key}" for g in gens]
    return gens, labels


def warmup_windows(n_warmup):
    """Lengths of the warm-up windows (5, 10, 20, 25 and 40% of ``n_warmup``); adaptation follows each."""
    cuts = np.unique(np.round(n_warmup * np.array([0, 0.05, 0.15, 0.35, 0.6, 1.0])).astype(int))
    return [int(w) for w in np.diff(cuts) if w > 0]


# %%
gens, labels = chain_generators(5, 3)
again, _ = chain_generators(np.random.default_rng(5), 3)
assert [g.random() for g in gens] == [g.random() for g in again]   # a seed or its Generator: same streams
assert len(set(labels)) == 3
assert sum(warmup_windows(1000)) == 1000 and warmup_windows(1000) == [50, 100, 200, 250, 400]
assert warmup_windows(0) == [] and sum(warmup_windows(7)) == 7

# %% [markdown]
# ## One chain
#
# A `_Chain` holds one chain's Generator, its state and the draws kept so far. `warm_up` runs the windows
# unthinned, with the sampler's adaptation after each; `extend` samples more, in calls of at most `chunk`
# iterations (a multiple of `thin`), so that the progress bar moves. A chain can be extended again and
# again: that is how `run` keeps going until the chains have converged, without restarting them or
# repeating the warm-up. Splitting a run into calls does not change its draws (the kernels consume the
# Generator sequentially, and the state carries over).

# %%
#| export
class _Chain:
    """One chain of a sampler: its Generator, state and kept draws; warmed up once, extended at will."""

    def __init__(self, sampler, rng):
        self.sampler, self.rng = sampler, rng
        self.state, self.parts, self.n_kept = None, [], 0

    def warm_up(self, n_warmup, tick=None):
        """Initialise, then run the warm-up windows, adapting after each."""
        self.state = self.sampler.init(self.rng)
        for w in warmup_windows(n_warmup):
            draws, stats = self.sampler.run_chain(self.state, w, 1, self.rng)
            if self.sampler.adapt is not None:
                self.state = self.sampler.adapt(self.state, draws, stats)
            if tick is not None:
                tick(w)
        return self

    def extend(self, n_save, thin, tick=None):
        """Keep ``n_save`` more draws, thinned by ``thin``."""
        per_call = max(1, self.sampler.chunk // thin)
        done = 0
        while done < n_save:
            c = min(per_call, n_save - done)
            self.parts.append(self.sampler.run_chain(self.state, c * thin, thin, self.rng))
            done += c
            if tick is not None:
                tick(c * thin)
        self.n_kept += n_save
        return self

    def arrays(self):
        """(draws, stats): dicts of the kept draws, concatenated."""
        join = lambda i: {k: np.concatenate([p[i][k] for p in self.parts]) for k in self.parts[0][i]}  # noqa: E731
        return join(0), join(1)


# %% [markdown]
# ## Many chains, in parallel
#
# Chains run in threads: numba kernels compiled with `nogil=True` release the GIL, so two chains use two
# cores without copying the data into processes. `run_chains` returns plain arrays with leading
# `(chain, draw)` axes (what simulation studies and SBC need); `run` also packages and reports.

# %%
#| export
def _in_threads(fn, items, n_jobs):
    """[fn(x) for x in items], in up to n_jobs threads, results in order."""
    if n_jobs > 1 and len(items) > 1:
        with ThreadPoolExecutor(n_jobs) as pool:
            return list(pool.map(fn, items))
    return [fn(x) for x in items]

# %%
#| export
#: Seconds a run takes before its progress bar appears.
PROGRESS_DELAY = 2.0


class LazyBar:
    """A tqdm bar made only once its run has taken ``PROGRESS_DELAY`` seconds.

    ``progress=True`` is every entry point's default: a run a reader waits on shows its progress, and a short call
    (one of many in a loop) draws nothing, not even a notebook widget (tqdm's own ``delay`` still builds one). Until
    then it keeps what the bar would show (``n``, the postfix) and hands it over when the bar is made.
    """

    def __init__(self, **tqdm_options):
        self._options, self._t0, self._bar, self._n, self._postfix = tqdm_options, time.perf_counter(), None, 0, None

    def _made(self):
        if self._bar is None and time.perf_counter() - self._t0 >= PROGRESS_DELAY:
            from tqdm.auto import tqdm
            self._bar = tqdm(initial=self._n, **self._options)
            if self._postfix is not None:
                self._bar.set_postfix_str(self._postfix, refresh=False)
        return self._bar

    @property
    def n(self):
        return self._n

    @n.setter
    def n(self, value):
        self._n = value
        if self._made() is not None:
            self._bar.n = value

    def update(self, k=1):
        self._n += k
        if self._bar is not None:
            self._bar.update(k)
        else:
            self._made()

    def set_postfix_str(self, text, refresh=True):
        self._postfix = text
        if self._bar is not None:
            self._bar.set_postfix_str(text, refresh=refresh)

    def refresh(self):
        if self._made() is not None:
            self._bar.refresh()

    def close(self):
        if self._bar is not None:
            self._bar.close()

# %%
#| export
def _progress(progress, total, desc):
    """A progress bar (or None) and its update function (or None)."""
    if not progress:
        return None, None
    bar = LazyBar(total=total, desc=desc)
    return bar, bar.update


class _ConvergenceBar:
    """The progress of a run until converged: the smallest ESS so far against ``target_ess``.

    The bar fills with the smallest bulk or tail ESS of the monitored coordinates (checked after each
    round of sampling); its label gives the largest R-hat against ``max_rhat`` and the iterations per
    chain so far, warm-up included, which :meth:`tick` counts between checks.
    """

    def __init__(self, target_ess, max_rhat, n_chains, desc):
        self.target, self.max_rhat, self.n_chains, self.iters, self.rhat = float(target_ess), max_rhat, n_chains, 0, None
        self.bar = LazyBar(total=int(np.ceil(self.target)), desc=f"{desc}: smallest ESS", unit="ESS",
                           bar_format="{desc} {n}/{total} |{bar}| {elapsed}{postfix}")
        self._label()

    def _label(self):
        rhat = "R-hat -" if self.rhat is None else f"R-hat {self.rhat:.3f} (<= {self.max_rhat})"
        self.bar.set_postfix_str(f"{rhat}, {self.iters // self.n_chains} it/chain", refresh=False)

    def tick(self, n):
        """Count ``n`` more iterations of one chain (called from the chains' threads)."""
        self.iters += n
        self._label()
        self.bar.refresh()

    def reached(self, ess, rhat, kept):
        """Show the smallest ESS and largest R-hat after ``kept`` iterations per chain."""
        self.rhat = rhat
        self.bar.n = int(min(self.target, max(ess, 0.0)))
        self._label()
        self.bar.refresh()

    def close(self):
        self.bar.close()

# %%
#| export
def _stack(chains):
    """(draws, stats) of all chains: dicts of arrays with leading (chain, draw) axes."""
    arrays = [c.arrays() for c in chains]
    return tuple({k: np.stack([a[i][k] for a in arrays]) for k in arrays[0][i]} for i in range(2))


def _sample(sampler, *, n_iter, n_warmup, n_chains, thin, rng, progress, n_jobs, desc, auto=None, names=None):
    """Warm up and sample all chains, a fixed ``n_iter`` or until converged (``"auto"``, by the stopping rule
    ``auto``): the one set-up of the core. Returns (draws, stats, runtime, seed labels)."""
    fixed = n_iter != "auto"
    if not fixed:
        first, max_iter = _check_auto(thin, **auto)
    n_iter, n_warmup, n_chains, thin, progress, n_jobs = V.run_settings(
        n_iter if fixed else max_iter, n_warmup, n_chains, thin, progress, n_jobs)
    gens, labels = chain_generators(rng, n_chains)
    n_jobs = min(n_chains, os.cpu_count() or 1) if n_jobs is None else n_jobs
    if fixed:
        bar, tick = _progress(progress, n_chains * (n_iter // thin * thin + n_warmup), desc)
    else:
        bar = _ConvergenceBar(auto["target_ess"], auto["max_rhat"], n_chains, desc) if progress else None
        tick = None if bar is None else bar.tick
    t0 = time.perf_counter()
    try:
        chains = _in_threads(lambda g: _Chain(sampler, g).warm_up(n_warmup, tick), gens, n_jobs)
        if fixed:
            _in_threads(lambda c: c.extend(n_iter // thin, thin, tick), chains, n_jobs)
        else:
            _until_converged(chains, thin=thin, first=first, n_jobs=n_jobs, tick=tick, names=names, t0=t0, bar=bar,
                             max_iter=max_iter, **{k: auto[k] for k in ("target_ess", "max_rhat", "max_time")})
    finally:
        if bar is not None:
            bar.close()
    return (*_stack(chains), time.perf_counter() - t0, labels)


def run_chains(sampler, *, n_iter, n_warmup, n_chains, thin=1, rng=None, progress=False, n_jobs=None,
               desc="iterations"):
    """Run ``n_chains`` chains of ``sampler``; returns (draws, stats, runtime, seed labels).

    ``draws`` and ``stats`` are dicts of arrays of shape ``(n_chains, n_iter // thin, ...)``.
    Arguments as in :func:`run`.
    """
    if n_iter == "auto":
        raise ValueError("run_chains runs a fixed n_iter; n_iter='auto' is dplit.sampling.run's")
    return _sample(sampler, n_iter=n_iter, n_warmup=n_warmup, n_chains=n_chains, thin=thin, rng=rng,
                   progress=progress, n_jobs=n_jobs, desc=desc)


# %% [markdown]
# ## Convergence: R-hat, ESS and the multivariate PSRF (Guo et al., S5)
#
# ArviZ gives the rank-normalised split $\hat R$ and the bulk and tail ESS of each coordinate (Vehtari et al.
# 2021). Guo et al. (S5) judge a run by the **multivariate potential scale reduction factor** of Brooks and
# Gelman (1998): with $m$ chains of $t$ draws of a $p$-vector, $W$ the pooled within-chain covariance and
# $B/t$ the covariance of the chain means,
#
# $$\hat R^p = \frac{t-1}{t} + \frac{m+1}{m}\,\lambda_1, \qquad \lambda_1 = \text{largest eigenvalue of } W^{-1}B/t.$$
#
# When a chain is frozen (all its draws equal in some coordinate, e.g. stuck at a boundary) the run has not
# converged, and when all are, $W$ is singular: `mpsrf` says so with $+\infty$ and a warning rather than a
# linear-algebra error.

# %%
#| export
class ConvergenceWarning(UserWarning):
    """A run whose R-hat, ESS or multivariate PSRF says its chains have not converged."""


def mpsrf(result, var="alpha"):
    """Multivariate potential scale reduction factor (Brooks and Gelman 1998; Guo et al. S5).

    Parameters
    ----------
    result : arviz.InferenceData or array_like
        A sampler's result, or draws of shape (chain, draw) or (chain, draw, p).
    var : str, default "alpha"
        Posterior variable when ``result`` is an ArviZ object.

    Returns
    -------
    float
        ``(t-1)/t + (m+1)/m * lambda_1``; ``inf`` (with a warning) when the within-chain covariance
        is singular (a frozen chain).
    """
    if hasattr(result, "posterior"):
        names = list(results.posterior(result).data_vars)
        if var not in names:
            raise ValueError(f"var must name a posterior variable of result, one of {names}, got {var!r}")
        x = np.asarray(result.posterior[var].values, dtype=float)
    else:
        x = V.finite_array(result, "result")
    x = x[..., None] if x.ndim == 2 else x.reshape(x.shape[:2] + (-1,))
    m, t, _ = x.shape
    if m < 2 or t < 2:
        raise ValueError(f"mpsrf needs at least 2 chains of 2 draws, got {m} chains of {t}")
    means = x.mean(axis=1)
    centred = x - means[:, None, :]
    W = np.einsum("cti,ctj->ij", centred, centred) / (m * (t - 1))
    dev = means - means.mean(axis=0)
    B_t = dev.T @ dev / (m - 1)
    moving = np.ptp(x.reshape(-1, x.shape[2]), axis=0) > 0
    frozen = np.any(np.ptp(x, axis=1)[:, moving] == 0)  # a chain that never moved where the others did
    if frozen or not np.any(moving) or not np.all(np.isfinite(W)):
        warnings.warn("mpsrf: a chain did not move (the within-chain covariance is singular); "
                      "returning inf", ConvergenceWarning, stacklevel=2)
        return float("inf")
    # coordinates tied by a linear constraint (compositions summing to 1) leave W singular in their
    # direction: compare chains in the subspace where W is not degenerate
    val, vec = np.linalg.eigh(W)
    keep = val > 1e-10 * val.max()
    proj = vec[:, keep]
    lam = np.max(np.real(np.linalg.eigvals(np.linalg.solve(proj.T @ W @ proj, proj.T @ B_t @ proj))))
    return float((t - 1) / t + (m + 1) / m * lam)


# %%
rng = np.random.default_rng(SEED)
same = rng.normal(size=(4, 500, 3))
assert 1.0 <= mpsrf(same) < 1.02                                  # four chains of one law
shifted = same + np.array([0, 0, 0, 1.0])[:, None, None]          # one chain off by 1 sd
assert mpsrf(shifted) > 1.2
frozen = same.copy()
frozen[1] = 2.0                                                   # chain 1 stuck at a point
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    assert mpsrf(frozen) == np.inf
    assert mpsrf(np.ones((3, 50, 2))) == np.inf                   # every chain frozen: W = 0
assert any(issubclass(w.category, ConvergenceWarning) for w in caught)
# compositions (coordinates summing to 1) are tied, not frozen: the PSRF is taken where W is not degenerate
comp = np.exp(same) / np.exp(same).sum(axis=-1, keepdims=True)
assert abs(mpsrf(comp) - 1) < 0.02 and mpsrf(comp + np.array([0, 0, 0, 0.2])[:, None, None] * [1, -1, 0]) > 1.2

# %% [markdown]
# The report after a run: the worst $\hat R$ and the smallest bulk and tail ESS over the coordinates of the
# reported variables, and $\hat R^p$ of the first. By default it asks for $\hat R \le 1.01$ and an ESS of at least
# 100 per chain (Vehtari et al. 2021's advice: 400 for four chains), and no frozen chain; it warns otherwise,
# naming the quantity that failed. The figures go into the result's `attrs` (`rhat_max`, `ess_bulk_min`,
# `ess_tail_min`, `mpsrf`, `converged`).

# %%
#| export
RHAT_MAX = 1.01
ESS_PER_CHAIN_MIN = 100


def _diagnostics(post, names):
    """Per-quantity R-hat, bulk and tail ESS over the coordinates of ``names``: dict name -> (rhat, bulk, tail).

    ``post`` is an ``xarray.Dataset`` of draws with ``(chain, draw)`` dims.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # constant coordinates: nan, read as failures
        if post.sizes["chain"] * post.sizes["draw"] < 4:   # too few draws for any diagnostic: nan, read as failed
            rhat = bulk = tail = post.isel(chain=0, draw=0, drop=True) * np.nan
        else:
            rhat, bulk, tail = diagnostics(post, var_names=names)   # one pass; one chain: R-hat of its halves
    out = {}
    for v in names:
        r, b, t = (np.ravel(x[v].values) for x in (rhat, bulk, tail))
        out[v] = (float(np.max(np.where(np.isfinite(r), r, np.inf))),
                  float(np.min(np.where(np.isfinite(b), b, 0.0))), float(np.min(np.where(np.isfinite(t), t, 0.0))))
    return out

# %%
#| export
def _check_stop(target_ess, max_rhat):
    """The convergence thresholds as floats: ``target_ess`` > 0 (or None), ``max_rhat`` > 1 (R-hat is >= 1 for
    any chains, so a bound at or below 1 could never be met)."""
    if target_ess is not None:
        target_ess = V.positive(target_ess, "target_ess")
    max_rhat = V.finite(max_rhat, "max_rhat")
    if not max_rhat > 1.0:
        raise ValueError(f"max_rhat must be > 1 (R-hat is at least 1 for any chains), got {max_rhat:g}")
    return target_ess, max_rhat


def convergence_report(result, var_names=None, *, target_ess=None, max_rhat=RHAT_MAX, warn=True):
    """R-hat, bulk and tail ESS and multivariate PSRF of a result; warns when the run has not converged.

    Parameters
    ----------
    result : arviz.InferenceData
        A sampler's result.
    var_names : list of str, optional
        Variables to check (default: all posterior variables); ``mpsrf`` uses the first.
    target_ess : float, optional
        Smallest acceptable bulk and tail ESS; default 100 per chain.
    max_rhat : float, default 1.01
        Largest acceptable rank-normalised split R-hat.
    warn : bool, default True
        Emit a :class:`ConvergenceWarning` naming what failed.

    Returns
    -------
    dict
        ``rhat_max``, ``ess_bulk_min``, ``ess_tail_min``, ``mpsrf`` (nan with one chain), ``converged``
        (bool) and ``failed`` (a description of what failed; empty when converged).
    """
    target_ess, max_rhat = _check_stop(target_ess, max_rhat)
    names = list(results.posterior(result).data_vars) if var_names is None else list(var_names)
    post = results.posterior(result, names)
    n_chains = post.sizes["chain"]
    target = ESS_PER_CHAIN_MIN * n_chains if target_ess is None else float(target_ess)
    diag = _diagnostics(post, names)
    failed = [f"{v}: " + ", ".join(m for m, bad in [(f"R-hat {r:.3f} > {max_rhat}", r > max_rhat),
                                                    (f"bulk ESS {b:.0f} < {target:.0f}", b < target),
                                                    (f"tail ESS {t:.0f} < {target:.0f}", t < target)] if bad)
              for v, (r, b, t) in diag.items() if r > max_rhat or b < target or t < target]
    psrf = float("nan")
    if n_chains >= 2 and post.sizes["draw"] >= 2:      # one kept draw (n_iter <= thin): R-hat and ESS failed above
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            psrf = mpsrf(result, names[0])
        if psrf == np.inf:
            failed.append(f"{names[0]}: a chain is frozen")
    if warn and failed:
        warnings.warn(f"the chains have not converged ({n_chains} chains; " + "; ".join(failed)
                      + "): run longer (n_iter, or n_iter='auto') before trusting the posterior",
                      ConvergenceWarning, stacklevel=3)
    return {"rhat_max": max(r for r, _, _ in diag.values()), "ess_bulk_min": min(b for _, b, _ in diag.values()),
            "ess_tail_min": min(t for _, _, t in diag.values()), "mpsrf": psrf, "converged": not failed,
            "failed": "; ".join(failed)}


# %% [markdown]
# ## The driver, and running until converged
#
# `run` = chains + packaging through `dplit._arviz` (the one ArviZ adapter) + the report. The `attrs` of every
# result carry the method's own entries plus the run settings, the chain seed labels and the runtime;
# `sample_stats` carry whatever per-draw statistics the method returns (acceptance rates, evaluations).
#
# What a user needs is not a number of iterations but a posterior that can be trusted. With
# `n_iter="auto"` the driver warms the chains up once, samples a first round, and then keeps **extending the
# same chains** (no restart, no second warm-up) until every monitored quantity has $\hat R \le$ `max_rhat` and bulk
# and tail ESS $\ge$ `target_ess`, or until `max_iter` iterations per chain or `max_time` seconds, when it stops
# with a warning that names what failed. Each extension is sized from the ESS reached so far (ESS grows about
# linearly with the draws), by at least a quarter and at most a doubling of the draws so far. The result records
# what was reached and how many iterations it took. Without `max_time` the run is reproducible for a seed.
# Its progress bar counts toward that target, not toward `max_iter`: it fills with the smallest ESS so far
# (out of `target_ess`) and shows the largest $\hat R$ and the iterations per chain beside it.

# %%
#| export
def _until_converged(chains, *, thin, first, max_iter, target_ess, max_rhat, max_time, n_jobs, tick, names, t0,
                     bar=None):
    """Extend the (warmed-up) chains, in place, until the monitored quantities pass or a cap is hit."""
    step = first
    while True:
        _in_threads(lambda c, n=step // thin: c.extend(n, thin, tick), chains, n_jobs)
        kept = chains[0].n_kept * thin
        draws = _stack(chains)[0]
        diag = _diagnostics(results.posterior(to_arviz(draws)), names or [next(iter(draws))])
        ess = min(min(b, t) for _, b, t in diag.values())
        rhat = max(r for r, _, _ in diag.values())
        if bar is not None:
            bar.reached(ess, rhat, kept)
        if (ess >= target_ess and rhat <= max_rhat) or kept >= max_iter:
            return
        if max_time is not None and time.perf_counter() - t0 >= max_time:
            return
        want = kept * (1.1 * target_ess / max(ess, 1.0) - 1.0) if ess < target_ess else kept
        step = int(np.clip(want, 0.25 * kept, 2.0 * kept))
        step = max(thin, min(step - step % thin, max_iter - kept))


def _check_auto(thin, target_ess, max_rhat, max_iter, max_time):
    """Validate the until-converged settings; returns (first round, max_iter)."""
    max_iter = V.count(max_iter, "max_iter")
    _check_stop(target_ess, max_rhat)
    if max_time is not None:
        V.positive(max_time, "max_time")
    if thin > max_iter:
        raise ValueError(f"thin must be <= max_iter = {max_iter}, got {thin}")
    return min(max_iter, max(20 * thin, 2000) // thin * thin), max_iter


# %%
#| export
#: The run settings of dplit's sampler contract: every sampler takes these keywords, by these names.
RUN_SETTINGS = ("n_iter", "n_warmup", "n_chains", "thin", "rng", "progress", "n_jobs", "target_ess", "max_rhat",
                "max_iter", "max_time")
#: Their shared defaults. ``n_iter``, ``n_warmup`` and ``thin`` are each method's own (an iteration
#: of DPMCMC and one of DPapprox cost very different amounts); ``dplit.methods.REGISTRY`` lists them.
RUN_DEFAULTS = {"n_chains": 4, "rng": None, "progress": True, "n_jobs": None, "target_ess": 400,
                "max_rhat": RHAT_MAX, "max_iter": 200_000, "max_time": None}

# %%
#| export
def run(sampler, *, n_iter, n_warmup, n_chains=4, thin=1, rng=None, progress=True, n_jobs=None, attrs=None,
        observed_data=None, report_vars=None, check=True, desc="iterations", target_ess=400, max_rhat=RHAT_MAX,
        max_iter=200_000, max_time=None, privacy=None):
    """Run a sampler's chains and return an ArviZ object with a convergence report.

    Parameters
    ----------
    sampler : Sampler
        What the method supplies (see :class:`Sampler`).
    n_iter : int or "auto"
        Iterations kept per chain, before thinning; ``"auto"``: extend the chains until converged
        (``target_ess``, ``max_rhat``), or until ``max_iter`` / ``max_time``.
    n_warmup : int
        Warm-up iterations per chain (discarded; the sampler adapts after each window).
    n_chains : int, default 4
        Independent chains, each with its own Generator spawned from ``rng``.
    thin : int, default 1
        Keep every ``thin``-th iteration.
    rng : None, int or numpy.random.Generator
        Randomness; the same seed gives the same draws for any ``n_jobs``.
    progress : bool, default True
        Show a progress bar (tqdm.auto).
    n_jobs : int, optional
        Threads; default ``min(n_chains, cpu_count)``.
    attrs : dict, optional
        The method's metadata (``method``, prior, ...) for the result's ``attrs``.
    privacy : dict, optional
        The privacy part of the result contract, from :func:`dplit.results.privacy_attrs` (default:
        not stated, ``eps_total = nan``).
    observed_data : dict, optional
        The statistic(s) the posterior conditions on.
    report_vars : list of str, optional
        Variables monitored by the report (default: the first posterior variable).
    check : bool, default True
        Warn (:class:`ConvergenceWarning`) when the report says the run has not converged.
    desc : str
        Label of the progress bar.
    target_ess, max_rhat, max_iter, max_time
        With ``n_iter="auto"``: the smallest bulk and tail ESS (default 400) and largest R-hat
        (default 1.01) of every monitored coordinate, the cap on iterations per chain (default
        200,000) and on seconds (default none). With a fixed ``n_iter`` the report asks for
        100 ESS per chain and R-hat <= ``max_rhat``.

    Returns
    -------
    arviz.InferenceData
        Posterior and sample stats with ``(chain, draw)`` axes; ``attrs`` with every key of the
        result contract (:data:`dplit.results.CONTRACT_ATTRS`), the run settings (``n_iter`` as
        run) and the rest of the report (``ess_tail_min``, ``mpsrf``, ``failed``).

    Examples
    --------
    Exact draws of N(0, 1) as a (trivial) transition, to show the plumbing:

    >>> def run_chain(state, n_steps, thin, rng):
    ...     x = rng.standard_normal(n_steps)[thin - 1::thin]
    ...     return {"x": x}, {}
    >>> res = run(Sampler(init=lambda rng: None, run_chain=run_chain), n_iter=1000, n_warmup=0,
    ...           n_chains=2, rng=1, progress=False)
    >>> res.posterior["x"].shape, bool(res.posterior.attrs["converged"])
    ((2, 1000), True)
    """
    if not isinstance(sampler, Sampler):
        raise TypeError(f"sampler must be a dplit.sampling.Sampler, got {type(sampler).__name__}")
    _check_stop(target_ess, max_rhat)        # also with a fixed n_iter: the report judges the run by them
    auto = {"target_ess": target_ess, "max_rhat": max_rhat, "max_iter": max_iter, "max_time": max_time}
    draws, stats, runtime, labels = _sample(sampler, n_iter=n_iter, n_warmup=n_warmup, n_chains=n_chains, thin=thin,
                                            rng=rng, progress=progress, n_jobs=n_jobs, desc=desc, auto=auto,
                                            names=report_vars)
    kept = next(iter(draws.values())).shape[1] * thin
    meta = dict({"method": "custom"}, **(attrs or {}), **(privacy or results.privacy_attrs()), n_iter=int(kept),
                n_iter_requested=str(n_iter), n_warmup=int(n_warmup), n_chains=int(n_chains), thin=int(thin),
                seeds=labels, runtime=float(runtime))
    result = to_arviz(draws, dims=sampler.dims, coords=sampler.coords, sample_stats=stats or None,
                      attrs=meta, observed_data=observed_data)
    report = convergence_report(result, report_vars or [next(iter(draws))], warn=check, max_rhat=max_rhat,
                                target_ess=target_ess if n_iter == "auto" else None)
    return update_attrs(result, **{k: (int(v) if isinstance(v, bool) else v) for k, v in report.items()})


# %% [markdown]
# ## Work that is not a chain: a reproducible parallel map
#
# ABC simulations, bootstrap replicates and study tasks are many independent pieces. `map_blocks` cuts
# `n` of them into blocks of a **fixed** size (it does not depend on the number of cores), gives block `k`
# the `k`-th Generator spawned from `rng`, runs blocks in threads and returns their results in order. The
# draws are the same for any `n_jobs`. (Never share one Generator between threads inside `prange`: a
# Generator is not thread-safe, and the interleaving would make the draws depend on timing.)

# %%
#| export
def map_blocks(fn, n, *, block_size, rng=None, n_jobs=None, progress=False, desc="items"):
    """Apply ``fn(start, stop, rng)`` to fixed blocks of ``range(n)``, in threads, reproducibly.

    Parameters
    ----------
    fn : callable
        ``fn(start, stop, rng) -> result`` for the items ``start .. stop - 1``.
    n : int
        Number of items.
    block_size : int
        Items per block (fixed: the result does not depend on ``n_jobs``).
    rng : None, int or numpy.random.Generator
        Block ``k`` gets the ``k``-th Generator spawned from it.
    n_jobs : int, optional
        Threads; default ``cpu_count``. Use numba kernels with ``nogil=True`` to gain from threads.
    progress : bool, default False
        Show a progress bar over the ``n`` items (labelled ``desc``).

    Returns
    -------
    list
        The blocks' results, in order.

    Examples
    --------
    >>> parts = map_blocks(lambda start, stop, g: g.random(stop - start), 10, block_size=4, rng=0)
    >>> [len(p) for p in parts]
    [4, 4, 2]
    >>> same = map_blocks(lambda start, stop, g: g.random(stop - start), 10, block_size=4, rng=0, n_jobs=1)
    >>> all(np.array_equal(a, b) for a, b in zip(parts, same))
    True
    """
    n = V.count(n, "n", minimum=0)
    block_size = V.count(block_size, "block_size")
    if n_jobs is not None:
        n_jobs = V.count(n_jobs, "n_jobs")
    starts = list(range(0, n, block_size))
    gens, _ = chain_generators(rng, len(starts))
    tasks = [(s, min(s + block_size, n), g) for s, g in zip(starts, gens)]
    n_jobs = (os.cpu_count() or 1) if n_jobs is None else n_jobs
    bar, tick = _progress(progress, n, desc)

    def one(task):
        out = fn(*task)
        if tick is not None:
            tick(task[1] - task[0])
        return out

    try:
        return _in_threads(one, tasks, n_jobs)
    finally:
        if bar is not None:
            bar.close()


# %%
def block_means(start, stop, g):
    return g.normal(size=(stop - start, 2)).mean(axis=1)


one_thread = np.concatenate(map_blocks(block_means, 1003, block_size=100, rng=7, n_jobs=1))
two_threads = np.concatenate(map_blocks(block_means, 1003, block_size=100, rng=7, n_jobs=2))
assert one_thread.shape == (1003,) and np.array_equal(one_thread, two_threads)
assert map_blocks(block_means, 0, block_size=10, rng=1) == []
try:
    map_blocks(block_means, 10, block_size=0)
except ValueError as err:
    assert "block_size" in str(err)
else:
    raise AssertionError("block_size = 0 accepted")

# %% [markdown]
# ## The smallest sampler: random-walk Metropolis on a normal mean
#
# Model: $\mu \sim N(0, \tau^2)$, $y_1, \dots, y_k \mid \mu \sim N(\mu, 1)$; the posterior is
# $N\big(\sum_i y_i / (k + \tau^{-2}),\ 1/(k + \tau^{-2})\big)$, exact, so the sampler can be checked.
# This is the template a new method copies (not `mcmc.py`): a numba **chain kernel** that runs `T` steps
# with the Generator passed in; an `init`; an `adapt` that sets the proposal scale to $2.4\,\times$ the
# posterior sd seen in the window (Gelman, Roberts and Gilks 1996); and `run`.

# %%
@njit(cache=True, nogil=True)
def _rwm_normal_kernel(state, n_steps, thin, y_sum, k, tau, rng):
    """n_steps of random-walk Metropolis on mu; state = [mu, step size]; keeps every thin-th draw."""
    def logp(mu):
        return -0.5 * mu * mu / (tau * tau) + mu * y_sum - 0.5 * k * mu * mu

    mu, step = state[0], state[1]
    lp = logp(mu)
    out = np.empty(n_steps // thin)
    acc = np.zeros(n_steps // thin)
    for it in range(n_steps):
        prop = mu + step * rng.standard_normal()
        lp_prop = logp(prop)
        if rng.random() < np.exp(min(0.0, lp_prop - lp)):
            mu, lp = prop, lp_prop
            acc[it // thin] += 1.0 / thin
        if (it + 1) % thin == 0:
            out[it // thin] = mu
    state[0] = mu
    return out, acc


def rwm_normal(y, tau=1.0):
    """A Sampler for mu | y in the normal model above: the template of a dplit sampler."""
    y = np.asarray(y, dtype=float)
    y_sum, k = float(y.sum()), float(y.size)

    def init(rng):
        return np.array([rng.normal(0.0, tau), 1.0])          # [mu, proposal step]

    def run_chain(state, n_steps, thin, rng):
        mu, acc = _rwm_normal_kernel(state, n_steps, thin, y_sum, k, tau, rng)
        return {"mu": mu}, {"acceptance": acc}

    def adapt(state, draws, stats):
        state[1] = 2.4 * max(np.std(draws["mu"]), 1e-3)
        return state

    return Sampler(init=init, run_chain=run_chain, adapt=adapt)


res = run(rwm_normal(y_demo), n_iter=4000, n_warmup=1000, n_chains=4, rng=1, progress=False,
          attrs={"method": "RWM"})
draws_mu = res.posterior["mu"].values
print(az.summary(res, var_names=["mu"]).to_string())
se = draws_mu.std() / np.sqrt(res.posterior.attrs["ess_bulk_min"])
assert abs(draws_mu.mean() - y_demo.sum() / post_prec) < 4 * se
assert abs(draws_mu.var() * post_prec - 1) < 0.1
assert res.posterior.attrs["converged"] == 1 and res.posterior.attrs["method"] == "RWM"
assert 0.2 < float(res.sample_stats["acceptance"].mean()) < 0.7
# the same seed gives the same draws, whatever the number of threads
again = run(rwm_normal(y_demo), n_iter=4000, n_warmup=1000, n_chains=4, rng=1, progress=False, n_jobs=1)
assert np.array_equal(again.posterior["mu"].values, draws_mu)

# %% [markdown]
# The same sampler with a Python `step` (for a model whose pieces are not compiled): slower, same law. Its pieces
# are those of the first figure (`rwm_parts`, $\tau = 1$), here with this notebook's `Sampler.from_step` and `run`.

# %%
res_py = run(Sampler.from_step(*rwm_parts), n_iter=2000, n_warmup=500, n_chains=2, rng=2, progress=False)
m_py = res_py.posterior["mu"].values
assert abs(m_py.mean() - y_demo.sum() / post_prec) < 4 * m_py.std() / np.sqrt(res_py.posterior.attrs["ess_bulk_min"])

# %% [markdown]
# **Exactness by simulation-based calibration** (Talts et al. 2018) through `dplit.testing`: draw $\mu$
# from the prior and data given $\mu$, run the sampler, rank the true $\mu$ among $L = 19$ thinned draws;
# an exact sampler gives uniform ranks. A sampler with a bug (here: a proposal that is not symmetric, a
# drift of $+0.3$ step sizes never corrected in the acceptance ratio) must fail the same test.

# %%
def simulate(rng, k=5):
    mu = rng.normal()
    return mu, rng.normal(mu, 1.0, size=k)


def posterior_rwm(y, L, rng):
    """L draws thinned by 10 from one chain of the example sampler."""
    draws, _, _, _ = run_chains(rwm_normal(y), n_iter=10 * L, n_warmup=200, n_chains=1, thin=10, rng=rng)
    return draws["mu"][0]


@njit(cache=True)
def _rwm_biased_kernel(state, n_steps, thin, y_sum, k, tau, rng):
    """The planted bug: the proposal drifts by +0.3 steps, the acceptance ratio ignores it."""
    mu, step = state[0], state[1]
    out = np.empty(n_steps // thin)
    for it in range(n_steps):
        prop = mu + step * (rng.standard_normal() + 0.3)
        d = (-0.5 * prop**2 / tau**2 + prop * y_sum - 0.5 * k * prop**2) - (-0.5 * mu**2 / tau**2 + mu * y_sum - 0.5 * k * mu**2)
        if rng.random() < np.exp(min(0.0, d)):
            mu = prop
        if (it + 1) % thin == 0:
            out[it // thin] = mu
    state[0] = mu
    return out


def posterior_biased(y, L, rng):
    state = np.array([0.0, 1.0 / np.sqrt(y.size + 1)])
    return _rwm_biased_kernel(state, 10 * L + 200, 10, float(y.sum()), float(y.size), 1.0, rng)[-L:]


p_exact = rank_uniformity_pvalues(sbc_ranks(simulate, posterior_rwm, n_sbc, rng=11))
p_bug = rank_uniformity_pvalues(sbc_ranks(simulate, posterior_biased, n_sbc, rng=11))
print(f"SBC rank-uniformity p-value: exact sampler {p_exact[0]:.3f}, biased sampler {p_bug[0]:.2g}")
assert p_exact[0] > 1e-3 and p_bug[0] < 1e-3

# %% [markdown]
# ## Explore: what the report sees
#
# Trace plots of the example sampler for a number of iterations and chains: with very short runs the
# report warns; with longer ones $\hat R$ falls to 1 and the bulk ESS grows in proportion. The callback,
# `explore_run`, is a plain function: the cell below calls it at 30 and 4,000 iterations and checks the report, and the
# widget after it calls it once with its defaults when it is displayed.

# %%
def explore_run(n_iter=200, n_chains=4, seed=1):
    """Run the example sampler and plot its traces; returns (figure, report)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        r = run(rwm_normal(y_demo), n_iter=n_iter, n_warmup=n_iter // 4, n_chains=n_chains, rng=seed,
                progress=False)
    rep = {k: r.posterior.attrs[k] for k in ("rhat_max", "ess_bulk_min", "mpsrf", "converged")}
    fig, ax = plt.subplots(figsize=(7, 2.8))
    for c in range(n_chains):
        ax.plot(r.posterior["mu"].values[c], lw=0.6)
    ax.set_xlabel("draw")
    ax.set_ylabel("mu")
    ax.set_title(f"R-hat {rep['rhat_max']:.3f}, bulk ESS {rep['ess_bulk_min']:.0f}")
    fig.tight_layout()
    return fig, rep


fig, rep = explore_run(30)
assert rep["converged"] == 0       # 30 draws per chain: the report says so
fig2, rep2 = explore_run(4000)
assert rep2["converged"] == 1 and rep2["ess_bulk_min"] > 10 * rep["ess_bulk_min"]
plt.close(fig)
plt.close(fig2)                    # checked, not shown: the widget below shows its own default view

# %%
# NBVAL_IGNORE_OUTPUT
from ipywidgets import IntSlider, fixed, interactive
from dplit.testing import dead_controls  # noqa: E402

explorer = interactive(explore_run, n_iter=IntSlider(value=200, min=20, max=5000, step=20),
                       n_chains=IntSlider(value=4, min=2, max=8), seed=fixed(1))
fig_default, rep_default = explorer.result       # the default call, made when the widget was built
assert len(fig_default.axes[0].get_lines()) == 4
assert dead_controls(explorer) == []  # every control changes the view (one its callback ignores fails)
explorer

# %%
from IPython.display import Markdown, display

verdict = ("converged" if rep_default["converged"] == 1 else
           "not converged: the report warns, and a longer run is needed")
n_default, chains_default = explorer.kwargs["n_iter"], explorer.kwargs["n_chains"]
assert fig_default.axes[0].get_lines()[0].get_xdata().size == n_default      # the draws kept, after the warm-up
display(Markdown(f"The figure above is the widget's default view: {chains_default} chains of {n_default} draws each, "
                 f"after {n_default // 4} warm-up iterations. Its report: "
                 f"$\\hat R$ = {rep_default['rhat_max']:.3f}, bulk ESS {rep_default['ess_bulk_min']:.0f}, {verdict}. "
                 "Moving a slider runs the sampler again and redraws it."))

# %% [markdown]
# ## When to use this
#
# * **Writing a new sampler**: copy the example above. Put the transition in a numba kernel that runs
#   `n_steps` with the Generator passed in (`@njit(cache=True, nogil=True)` so that chains run in parallel
#   threads), keep the state in mutable arrays, give `init`, `run_chain`, `adapt`, and call `run` from the
#   public function after its input checks. Check it with `dplit.testing.sbc_ranks` and a planted bug.
# * **A slow generic model** (user-supplied Python pieces): `Sampler.from_step`.
# * **Many independent simulations** (ABC, bootstrap, studies): `map_blocks`, with a fixed block size.
# * **Reading a result**: `attrs["converged"]`, `az.summary(result)`, `az.plot_trace(result)`. A
#   `ConvergenceWarning` means: do not report this posterior yet; run longer.
