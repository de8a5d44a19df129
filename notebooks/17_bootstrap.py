# %% [markdown]
# # DPBoots: the parametric bootstrap from a DP release
#
# Frequentist inference for the Dirichlet parameter from a released noisy censored statistic: Boots, DPBoots (Guo et al., Alg. 2) with an exact truncated-noise step that cannot hang, intervals and a two-sample test.
#
# * **For:** frequentist inference on a Dirichlet parameter from a DP release of compositional data.
# * **You need:** a release: the noisy censored statistic with n, the threshold a and epsilon.
# * **You get:** bootstrap draws, confidence intervals for alpha and E[x], and a two-sample test.

# %%
#| default_exp bootstrap
#| internal TRUNCATION_METHODS OUT_OF_RANGE BOOT_BLOCK

# %% [markdown]
# ## Parameters
#
# Sizes come from the size switch (`DPLIT_QUICK=1` gives the quick size used by the test suite);
# every random draw comes from a generator seeded here.

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import numpy as np

from dplit.config import is_quick, size

SEED = 20261123
rng = np.random.default_rng(SEED)
print(f"quick mode: {is_quick()}")

# %% [markdown]
# ## What it gives
#
# The result first, from the finished module `dplit.bootstrap` (its code is derived below). $n = 1{,}000$ records
# from $\mathrm{Dirichlet}(2.2, 3.3, 4.4)$ are released at $\epsilon = 1$ by Alg. 1 ($\epsilon_1 = 0.75$ for the
# noisy censored statistic, $\epsilon_2 = 0.25$ for the choice of the threshold $a$); DPBoots (Alg. 2) turns the
# release alone into bootstrap draws of $E[x] = \alpha / \sum_j \alpha_j$. Beside it, Boots, the non-private
# bootstrap from the records themselves (the benchmark of Sec. 5.1). Both are centred near the truth; the privacy
# noise makes the DPBoots law, and so its 95% intervals, wider.

# %%
# NBVAL_IGNORE_OUTPUT
import dplit.bootstrap as bootstrap
from dplit.dirichlet import dirichlet_draws
from dplit.release import release as make_release

g_fig = np.random.default_rng(SEED + 1)       # its own stream: the draws below do not depend on this cell
alpha_fig, n_fig, b_fig = np.array([2.2, 3.3, 4.4]), 1000, size(full=2000, quick=400)
X_fig = dirichlet_draws(alpha_fig, n_fig, rng=g_fig)
cands = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1]                                 # Alg. 1's candidate thresholds
rel_fig = make_release(X_fig, eps1=0.75, eps2=0.25, candidates=cands, tc=0.01, rng=g_fig, secure=False)
dp_fig = bootstrap.BootResult.of(bootstrap.dp_boots(rel_fig, n_boot=b_fig, rng=g_fig))
bo_fig = bootstrap.BootResult.of(bootstrap.boots(X_fig, n_boot=b_fig, rng=g_fig))
truth_fig = alpha_fig / alpha_fig.sum()
ci_dp, ci_bo = dp_fig.interval(), bo_fig.interval()
for j in range(3):
    print(f"E[x_{j + 1}] = {truth_fig[j]:.4f}: DPBoots [{ci_dp[j, 0]:.4f}, {ci_dp[j, 1]:.4f}], "
          f"Boots [{ci_bo[j, 0]:.4f}, {ci_bo[j, 1]:.4f}]")
assert np.all((ci_dp[:, 0] < truth_fig) & (truth_fig < ci_dp[:, 1]))     # the private intervals cover the truth
assert np.all(np.diff(ci_dp).ravel() > np.diff(ci_bo).ravel())            # and are wider than the non-private ones

fig, ax = plt.subplots(figsize=(7, 2.8))
bins = np.linspace(0.18, 0.50, 97)
for j in range(3):
    ax.hist(dp_fig.draws()[:, j], bins=bins, density=True, color=f"C{j}", alpha=0.45,
            label="DPBoots (the release, $\\epsilon = 1$)" if j == 0 else None)
    ax.hist(bo_fig.draws()[:, j], bins=bins, density=True, histtype="step", color="0.2", lw=1,
            label="Boots (the records, no privacy)" if j == 0 else None)
    ax.axvline(truth_fig[j], color="C3", lw=1.2, ls="--", label="true $E[x_j]$" if j == 0 else None)
    ax.text(truth_fig[j], 1.02, f"$E[x_{j + 1}]$", transform=ax.get_xaxis_transform(), ha="center", fontsize=9)
ax.set(xlim=(0.18, 0.75), xlabel="bootstrap draws of $E[x_j]$", ylabel="density")
ax.tick_params(labelsize=9)
ax.legend(fontsize=9, loc="center right", frameon=False)   # right of the data
fig.tight_layout()

# %% [markdown]
# ## What is released, and what we want (Guo et al., Sec. 2.2, 3.1, 4.1)
#
# Records $x_i \in \Delta_{d-1}$ are iid $\mathrm{Dirichlet}(\alpha)$. The sufficient statistic is
# $S_0(D) = n^{-1}\sum_i \log x_i$ (componentwise), and the maximum-likelihood estimate $\mathrm{MLE}(S_0)$
# exists exactly when $S_0$ lies in
#
# $$\mathrm{Range}(S_0) = \Big\{ s \in (-\infty, 0)^d : \textstyle\sum_{j=1}^d e^{s_j} < 1 \Big\}$$
#
# (Sec. 4.1: by the AM-GM inequality $\sum_j \prod_i x_{ij}^{1/n} \le \sum_j n^{-1}\sum_i x_{ij} = 1$; the paper writes
# $\le 1$, equality needs all records equal, where no MLE exists, so we use the open set).
# The curator censors the records at a threshold $a$, $\tilde x_{ij} = \max(x_{ij}, a)$, and releases
#
# $$S_L(D, a) = S_0(D, a) + \varepsilon^L, \qquad \varepsilon^L_j \overset{iid}{\sim} \mathrm{Laplace}(0, m),
# \quad m = -\frac{d \log a}{n \epsilon_1}$$
#
# (Sec. 3.1; `dplit.release` computes it, with `scale` $= m$). The naive estimate
# $\mathrm{MLE}(S_L)$ ignores both the noise and the censoring; its sampling distribution is what the
# bootstrap approximates.
#
# **Boots** (the non-private benchmark). Given $S_0(D)$: $\hat\alpha = \mathrm{MLE}(S_0(D))$; repeat:
# draw $\tilde D$ of $n$ records from $\mathrm{Dirichlet}(\hat\alpha)$ and keep $\mathrm{MLE}(S_0(\tilde D))$.
#
# **DPBoots** (Alg. 2). Given $S_L(D, a)$, repeat:
#
# 1. draw fresh noise $\varepsilon^{*L}$, iid $\mathrm{Laplace}(0, m)$, *conditioned on*
#    $\tilde S_0 = S_L - \varepsilon^{*L} \in \mathrm{Range}(S_0)$ (steps i-ii);
# 2. $\alpha^* = \mathrm{MLE}(\tilde S_0)$ (step iii);
# 3. draw $\tilde D$ of $n$ records from $\mathrm{Dirichlet}(\alpha^*)$ (step iv);
# 4. $\tilde\alpha = \mathrm{MLE}(S_0(\tilde D, a))$ (step v as the text of Sec. 4.1 reads it; see below).
#
# **Why subtract fresh noise.** If we knew the realised noise, $S_L - \varepsilon^L = S_0(D, a)$ and the ordinary
# parametric bootstrap would apply. We do not, but we know its law, so we integrate over it: step 1 draws a
# plausible value of $S_0(D,a)$ and the bootstrap is the mixture of parametric bootstraps over those values
# (Sec. 4.1 and S4: the data-generating mechanism of the bootstrap is the convolution
# $\int p_{\mathrm{Dir}}(x \mid \mathrm{MLE}(S_L - \varepsilon))\, p_{\text{trunc-Lap}}(\varepsilon \mid S_L, 0, m)\, d\varepsilon$).
#
# **Why truncate.** The realised noise satisfied $S_L - \varepsilon^L = S_0(D, a) \in \mathrm{Range}(S_0)$, so,
# given the release, the noise is not free: its conditional law is the Laplace law restricted to
# $\{\varepsilon : S_L - \varepsilon \in \mathrm{Range}(S_0)\}$ (S4, the same logic as "a negative noisy count means
# the noise was negative"). Truncation is also what makes step 2 possible: outside the range there is no MLE.

# %% [markdown]
# ## Step 1: the truncated noise (notebook 16)
#
# Write $\tilde s = S_L - \varepsilon^{*}$. By the symmetry of the Laplace law, step 1 asks for the product of the
# $d$ laws $\mathrm{Laplace}(s_{L,j}, m)$ **restricted to the convex set** $R = \{\tilde s : \sum_j e^{\tilde s_j} < 1\}$:
#
# $$p(\tilde s \mid s_L) \propto \prod_{j=1}^d \exp\!\big(-|\tilde s_j - s_{L,j}|/m\big)\; \mathbb 1\Big(\textstyle\sum_j e^{\tilde s_j} < 1\Big).$$
#
# Notebook `16_truncated_noise` derives two exact samplers of this law. **Rejection** (Alg. 2 steps i-ii) proposes
# the $d$ Laplace draws and keeps them when $\tilde s \in R$; it needs $1/P(\text{accept})$ proposals per draw, which
# is astronomically many when $S_L$ lies outside $R$ by many noise scales (in Guo et al.'s supplement, S5, it ran for
# days at $a = 0.1$). A **coordinate Gibbs chain** cannot hang: given the other coordinates, $\tilde s_j$ is a
# one-dimensional Laplace truncated above at $u_j = \log(1 - \sum_{k \ne j} e^{\tilde s_k})$, drawn by inverse CDF; the
# chain starts at the mode of the law and is thinned by twice its measured autocorrelation time, one chain per call.
#
# **Automatic choice.** `method="auto"` first makes `n_pilot` rejection proposals. If the observed acceptance
# rate is at least `min_acceptance` (1% by default), rejection continues (the accepted pilot draws are kept), under a
# cap on the number of proposals (20 times the expected number); otherwise the Gibbs chain supplies all draws, and
# if the cap is ever reached it supplies the remaining ones (reported as "rejection+gibbs"; both parts have the exact
# law). The choice, the acceptance rate and the thinning are reported.

# %%
#| export
import math
import os
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from dplit import _validate as check
from dplit._arviz import group, is_result, name_components, to_arviz

# Step 1's kernels (notebook 16); the twins and the start are imported too, so that notebook 72 and the tests
# find every kernel of DPBoots here.
from dplit._truncated_noise import gibbs_draws as _gibbs_draws
from dplit._truncated_noise import rejection_kernel as _rejection_kernel
from dplit.dirichlet import (
    censored_stat,
    censored_stat_kernel,
    check_compositions,
    check_stat,
    dirichlet_draws_fast_kernel,
    dirichlet_draws_kernel,
    dirichlet_mle_kernel,
    dirichlet_mle_reference,
    in_stat_range_kernel,
    sufficient_stat,
)
from dplit.release import Release
from dplit.results import composition_draws, privacy_attrs
from dplit.sampling import map_blocks

TRUNCATION_METHODS = ("auto", "rejection", "gibbs")
OUT_OF_RANGE = ("redraw", "nan", "uncensored")

# %% [markdown]
# The public sampler chooses between the two: rejection when its acceptance rate is high enough, Gibbs otherwise.

# %%
#| export
def truncated_statistic(s_L, scale, size, *, rng=None, method="auto", min_acceptance=0.01,
                        n_pilot=2000, thin=None, burn_in=None, return_info=False):
    """Draw ``S_L - noise`` with Laplace noise truncated to Range(S0) (Guo et al., Alg. 2 i-ii).

    The law is the product of ``Laplace(s_L[j], scale)`` restricted to
    ``{s : sum_j exp(s_j) < 1}`` (Supplement S4). Rejection sampling is exact but may need
    astronomically many proposals when ``s_L`` lies far outside that set; the coordinate Gibbs
    sampler (each coordinate a one-dimensional Laplace truncated above, drawn by inverse CDF) is
    exact in the limit and cannot hang.

    Parameters
    ----------
    s_L : array_like, shape (d,)
        The released noisy statistic.
    scale : float
        Laplace scale ``m = -d log(a) / (n eps1)`` of the released noise.
    size : int
        Number of draws.
    rng : None, int or numpy.random.Generator
        Source of randomness.
    method : {"auto", "rejection", "gibbs"}
        ``"auto"`` runs ``n_pilot`` rejection proposals and keeps rejection when the observed
        acceptance rate is at least ``min_acceptance``, else switches to Gibbs. ``"rejection"``
        never gives up (it may run for a very long time: the S5 case); ``"gibbs"`` always uses
        the chain.
    min_acceptance : float
        Acceptance rate below which ``"auto"`` chooses Gibbs.
    n_pilot : int
        Rejection proposals made by ``"auto"`` to estimate the acceptance rate.
    thin, burn_in : int, optional
        Gibbs tuning. By default a pilot run (also the burn-in) estimates the integrated
        autocorrelation time ``tau`` and ``thin = ceil(2 tau)`` (at most 10,000).
    return_info : bool
        Also return a dict: ``method`` used ("rejection", "gibbs" or "rejection+gibbs"),
        ``acceptance_rate`` (observed, NaN when not measured), ``n_proposals``, ``n_rejection``
        (draws made by rejection), and for Gibbs ``thin``, ``burn_in`` (sweeps, pilot
        included), ``tau`` (estimated autocorrelation time, sweeps) and ``thin_capped``.

    Returns
    -------
    draws : ndarray, shape (size, d)
        Each row lies in Range(S0).
    info : dict
        Only with ``return_info=True``.
    """
    s_L = check_stat(s_L, "s_L", finite=True)
    scale = check.positive(scale, "scale")
    size = check.count(size, "size")
    check.choice(method, "method", TRUNCATION_METHODS)
    min_acceptance = check.unit_interval(min_acceptance, "min_acceptance", closed_high=True)
    n_pilot = check.count(n_pilot, "n_pilot")
    rng = check.rng(rng)
    info = {"method": method, "acceptance_rate": float("nan"), "n_proposals": 0,
            "n_rejection": 0, "thin": None, "burn_in": None, "tau": float("nan"),
            "thin_capped": False}
    parts = []
    if method == "rejection":
        kept, tries = _rejection_kernel(s_L, scale, size, np.iinfo(np.int64).max, rng)
        info.update(n_proposals=int(tries), acceptance_rate=len(kept) / tries, n_rejection=size)
        parts.append(kept)
    elif method == "auto":
        kept, tries = _rejection_kernel(s_L, scale, size, n_pilot, rng)
        rate = len(kept) / tries
        info.update(acceptance_rate=rate, n_proposals=int(tries))
        if rate >= min_acceptance:  # keep the pilot's draws (exact); else Gibbs supplies all
            parts.append(kept)
        if len(kept) < size and rate >= min_acceptance:
            # expected proposals: (size - len(kept)) / rate; the cap is 20 times that
            cap = int(20 * (size - len(kept)) / rate) + n_pilot
            more, tries2 = _rejection_kernel(s_L, scale, size - len(kept), cap, rng)
            parts.append(more)
            info["n_proposals"] += int(tries2)
            info["acceptance_rate"] = (len(kept) + len(more)) / info["n_proposals"]
        info["n_rejection"] = sum(len(p) for p in parts)
        info["method"] = "rejection"
    missing = size - sum(len(p) for p in parts)
    if missing > 0:
        chain, tuning = _gibbs_draws(s_L, scale, missing, rng, thin=thin, burn_in=burn_in)
        parts.append(chain)
        info.update(tuning)
        info["method"] = "gibbs" if info["n_rejection"] == 0 else "rejection+gibbs"
    draws = np.concatenate(parts, axis=0) if len(parts) > 1 else parts[0]
    return (draws, info) if return_info else draws

# %% [markdown]
# **Step 1 at work**, with $d = 2$, where $R$ is the region below the curve $e^{s_1} + e^{s_2} = 1$: a statistic inside
# $R$ and one outside it (scale $m = 0.05$). Inside, most proposals land in $R$ and rejection keeps them; outside, the
# law piles up along the boundary, the pilot's acceptance rate is low, and the Gibbs chain supplies the draws.
# Notebook 72 checks that both samplers draw the same law where rejection is feasible, that the Gibbs chain meets an
# independent exact sampler when $S_L$ lies far outside $R$, and why rejection cannot finish in Guo et al.'s S5 setting
# ($a = 0.1$, $\alpha = (2, 20, 2)$) while the Gibbs chain does.

# %%
# NBVAL_IGNORE_OUTPUT
g_step1 = np.random.default_rng(1)
fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.2), sharex=True, sharey=True)
edge = np.linspace(-3.5, -1e-3, 400)
for ax, (where, s_L1) in zip(axes, [("inside R", np.log([0.3, 0.5])), ("outside R", np.log([0.6, 0.55]))]):
    draws1, info1 = truncated_statistic(s_L1, 0.05, 2000, rng=g_step1, return_info=True)
    assert np.all(np.exp(draws1).sum(axis=1) < 1)
    ax.plot(edge, np.log1p(-np.exp(edge)), color="0.3", lw=1, label="boundary of R")
    ax.scatter(draws1[:, 0], draws1[:, 1], s=2, alpha=0.3, color="C0", label="draws of $S_L - \\varepsilon$")
    ax.plot(*s_L1, "x", color="C3", ms=8, mew=2, label="$S_L$")
    ax.set_title(f"{where}: {info1['method']}, acceptance {info1['acceptance_rate']:.2f}", fontsize=10)
    ax.set_xlabel("$s_1$")
    print(f"{where}: method {info1['method']}, pilot acceptance rate {info1['acceptance_rate']:.3f}"
          + (f", thinning {info1['thin']} sweeps" if info1["thin"] else ""))
axes[0].set_ylabel("$s_2$")
axes[0].set_xlim(-1.6, -0.2)
axes[0].set_ylim(-1.2, -0.2)
axes[1].legend(fontsize=9, loc="lower left")
fig.tight_layout()

# %% [markdown]
# ## Steps 2-4: the bootstrap loop
#
# Given the $B$ draws $\tilde s^{(b)}$ of step 1, every replicate computes $\alpha^{*(b)} = \mathrm{MLE}(\tilde s^{(b)})$,
# simulates $n$ records from $\mathrm{Dirichlet}(\alpha^{*(b)})$ and returns $\tilde\alpha^{(b)} = \mathrm{MLE}(S_0(\tilde D, a))$.
# **Boots is the same loop with no noise**: every row of $\tilde s$ equals $S_0(D)$ (and $a = 0$, no censoring).
#
# **Step v: the text against the algorithm.** Algorithm 2, step v) writes $\mathrm{MLE}(S_0(\tilde D))$, the
# *uncensored* statistic of the simulated data, while the text of Sec. 4.1 says $S_0(\tilde D, a)$, "which accounts for the
# censoring". We follow the text: the released statistic was censored, so the statistic whose sampling variability we
# mimic must be censored too (otherwise the bootstrap law is centred on the wrong, uncensored, estimator). The price:
# censoring lifts small entries to $\log a$, so **the censored statistic of a simulated data set can leave
# $\mathrm{Range}(S_0)$**, where no MLE exists (it diverges to $\alpha \to \infty$ along $\mathrm{softmax}(s)$). This
# is the S5 situation again. We handle it explicitly, count every occurrence and report it; `out_of_range` chooses how:
#
# * `"redraw"` (default): simulate a new data set from the same $\alpha^{*(b)}$, up to `max_redraw` times (the replicate is
#   then conditioned on the MLE existing, a small bias when such events are rare). If all attempts fail, the replicate is
#   NaN and counted as failed;
# * `"nan"`: the replicate is NaN at once (dropped by the intervals, counted);
# * `"uncensored"`: use Algorithm 2's literal step v), $\mathrm{MLE}(S_0(\tilde D))$, for that replicate only (always in range
#   for simulated data; it mixes two estimators, so use it knowingly).
#
# The loop is one numba kernel (MLE kernel, draws kernel, censored statistic, all from `dplit.dirichlet`), with a
# vectorised NumPy twin as reference and benchmark baseline.

# %%
#| export
@njit(cache=True, nogil=True)
def _boots_kernel(s_tilde, n, a, policy, max_redraw, tol, max_iter, fast, rng):
    """Steps iii-v for every row of s_tilde; returns (alpha (B, d), out-of-range events per replicate, n_failed).

    policy: 0 redraw, 1 nan, 2 uncensored (Alg. 2's literal step v) for that replicate).
    fast: draw the records with notebook 12's Marsaglia-Tsang gammas (faster; NumPy's stream when alpha* >= 1).
    """
    B, d = s_tilde.shape
    out = np.full((B, d), np.nan)
    n_out = np.zeros(B, np.int64)
    n_failed = 0
    for b in range(B):
        alpha_star = dirichlet_mle_kernel(s_tilde[b], tol, max_iter)
        if not np.all(np.isfinite(alpha_star)):
            n_failed += 1
            continue
        attempts = max_redraw + 1 if policy == 0 else 1
        for _ in range(attempts):
            if fast:
                X = dirichlet_draws_fast_kernel(alpha_star, n, rng)
            else:
                X = dirichlet_draws_kernel(alpha_star, n, rng)
            s = censored_stat_kernel(X, a)
            if not in_stat_range_kernel(s):
                n_out[b] += 1
                if policy == 2:
                    s = censored_stat_kernel(X, 0.0)
                else:
                    continue
            alpha = dirichlet_mle_kernel(s, tol, max_iter)
            if np.all(np.isfinite(alpha)):
                out[b, :] = alpha
            break
        if not np.all(np.isfinite(out[b])):
            n_failed += 1
    return out, n_out, n_failed

# %%
#| export
#: Replicates per block of the threaded bootstrap (fixed, so the draws do not depend on ``n_jobs``).
BOOT_BLOCK = 250


def _boots_blocks(s_tilde, n, a, policy, max_redraw, tol, max_iter, rng, n_jobs, progress):
    """:func:`_boots_kernel` over fixed blocks of replicates (:func:`dplit.sampling.map_blocks`: block ``k`` gets
    the ``k``-th Generator spawned from ``rng``; threads, as the kernel releases the GIL); same draws for any
    ``n_jobs``."""
    parts = map_blocks(lambda lo, hi, g: _boots_kernel(s_tilde[lo:hi], n, a, policy, max_redraw, tol, max_iter, True, g),
                       s_tilde.shape[0], block_size=BOOT_BLOCK, rng=rng, n_jobs=n_jobs, progress=progress,
                       desc="bootstrap replicates")
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
            int(sum(p[2] for p in parts)))

# %%
#| export
def _boots_reference(s_tilde, n, a, policy, max_redraw, tol, max_iter, rng):
    """Readable NumPy twin of `_boots_kernel` with ``fast=False`` (same stream when every alpha* >= 1)."""
    out = np.full(s_tilde.shape, np.nan)
    n_out, n_failed = np.zeros(len(s_tilde), np.int64), 0
    for b, s_b in enumerate(s_tilde):
        alpha_star = dirichlet_mle_reference(s_b, tol, max_iter)[0]
        if not np.all(np.isfinite(alpha_star)):
            n_failed += 1
            continue
        for _ in range(max_redraw + 1 if policy == 0 else 1):
            g = rng.standard_gamma(alpha_star, size=(n, len(alpha_star)))
            X = g / g.sum(axis=1, keepdims=True)
            s = np.log(np.maximum(X, a)).mean(axis=0)
            if not (np.all(np.isfinite(s)) and np.exp(s).sum() < 1):
                n_out[b] += 1
                if policy == 2:
                    s = np.log(X).mean(axis=0)
                else:
                    continue
            out[b] = dirichlet_mle_reference(s, tol, max_iter)[0]
            break
        n_failed += int(not np.all(np.isfinite(out[b])))
    return out, n_out, n_failed

# %% [markdown]
# The kernel against its twin (with `fast=False` the draws kernel consumes the generator exactly like NumPy's
# `standard_gamma(alpha, size=(n, d))` when every $\alpha^*_j \ge 1$; the drivers use `fast=True`, notebook 12's own
# Marsaglia-Tsang gammas, faster, and for $\alpha^*_j \ge 1$ even the same stream; notebook 12 checks their law).
# Notebook 72 runs every out-of-range policy on the S5 statistic, where out-of-range events are common.

# %%
s_in = np.array([-1.6, -1.2, -0.9])  # sum of exp = 0.909
tilde = truncated_statistic(s_in, 0.01, 20, rng=1)
k_alpha, k_out, k_fail = _boots_kernel(tilde, 500, 1e-3, 0, 5, 1e-10, 100, False, np.random.default_rng(9))
r_alpha, r_out, r_fail = _boots_reference(tilde, 500, 1e-3, 0, 5, 1e-10, 100, np.random.default_rng(9))
assert np.array_equal(k_out, r_out) and k_fail == r_fail == 0 and k_out.sum() == 0
assert np.allclose(k_alpha, r_alpha, rtol=1e-7), np.max(np.abs(k_alpha / r_alpha - 1))

# %%
#| export
def min_replicates(level):
    """Fewest valid replicates for a percentile interval at ``level``: ``ceil(2 / (1 - level))`` (40 at 95%).

    Below it each tail ``(1 - level) / 2`` holds less than one replicate, so the interval's ends are the extreme
    draws (the range of the sample, whatever the level); one replicate gives a zero-width interval.
    """
    return math.ceil(2 / (1 - check.level(level)) - 1e-9)


def _check_replicates(k, level, what="valid replicates"):
    """Refuse fewer than 2 draws for an interval (zero width), warn below :func:`min_replicates`."""
    need = min_replicates(level)
    if k < 2:
        raise ValueError(f"a {100 * level:g}% interval needs at least 2 {what}, got {k}; use n_boot >= {need}")
    if k < need:
        warnings.warn(f"only {k} {what} for a {100 * level:g}% percentile interval: its ends are the extreme draws; "
                      f"use n_boot >= {need} (2 / (1 - level))", UserWarning, stacklevel=3)

# %%
#| export
@dataclass(frozen=True)
class BootResult:
    """Bootstrap draws of the Dirichlet parameter (Boots or DPBoots).

    Attributes
    ----------
    alpha : ndarray, shape (n_boot, d)
        The draws of alpha; rows of failed replicates are NaN (see ``n_failed``).
    method : str
        ``"boots"`` (no noise), or how the truncated noise was drawn: ``"rejection"``,
        ``"gibbs"`` or ``"rejection+gibbs"``.
    n : int
        Records simulated per replicate.
    a : float
        Censoring threshold of the simulated statistic (0: none).
    out_of_range : str
        Policy for simulated censored statistics outside Range(S0).
    n_out_of_range : int
        Simulated censored statistics that fell outside Range(S0) (every attempt counted).
    n_replicates_out_of_range : int
        Replicates with at least one such event.
    n_failed : int
        Replicates left NaN.
    noise : dict
        Report of the truncated-noise step (see :func:`truncated_statistic`); empty for Boots.
    """

    alpha: np.ndarray
    method: str
    n: int
    a: float
    out_of_range: str = "redraw"
    n_out_of_range: int = 0
    n_replicates_out_of_range: int = 0
    n_failed: int = 0
    noise: dict = field(default_factory=dict, compare=False)

    @property
    def n_boot(self):
        """Number of replicates (failed ones included)."""
        return self.alpha.shape[0]

    @property
    def mean_composition(self):
        """Draws of E[x | alpha] = alpha / sum(alpha), shape (n_boot, d)."""
        return self.alpha / self.alpha.sum(axis=1, keepdims=True)

    def draws(self, of="mean"):
        """Valid draws of ``"mean"`` (E[x | alpha]) or ``"alpha"``, failed replicates removed."""
        check.choice(of, "of", ("mean", "alpha"))
        x = self.mean_composition if of == "mean" else self.alpha
        return x[np.all(np.isfinite(x), axis=1)]

    def estimate(self, of="mean"):
        """Average of the valid draws of ``"mean"`` or ``"alpha"``, shape (d,)."""
        return self.draws(of).mean(axis=0)

    def interval(self, level=0.95, of="mean"):
        """Percentile interval, shape (d, 2), from the valid draws of ``"mean"`` or ``"alpha"``.

        Parameters
        ----------
        level : float
            Coverage in (0, 1). Fewer than 2 valid replicates raise ValueError (a zero-width interval);
            fewer than ``min_replicates(level) = ceil(2 / (1 - level))`` warn (the ends are the extreme draws).
        of : {"mean", "alpha"}
            ``"mean"`` for E[x | alpha], ``"alpha"`` for the parameter.
        """
        level = check.level(level)
        x = self.draws(of)
        if len(x) == 0:
            raise ValueError("no valid replicate: every replicate failed (see n_failed, n_out_of_range)")
        _check_replicates(len(x), level)
        q = np.quantile(x, [(1 - level) / 2, (1 + level) / 2], axis=0)
        return q.T

    def summary(self):
        """A short text report."""
        lines = [f"{self.method} bootstrap: {self.n_boot} replicates of n = {self.n} records "
                 f"(censoring at a = {self.a:g})",
                 f"E[x | alpha] estimate {np.array2string(self.estimate(), precision=4)}"]
        lo_hi = self.interval()
        lines.append("95% intervals " + ", ".join(f"[{lo:.4f}, {hi:.4f}]" for lo, hi in lo_hi))
        lines.append(f"out-of-range simulated statistics: {self.n_out_of_range} in "
                     f"{self.n_replicates_out_of_range} replicates (policy {self.out_of_range!r}); "
                     f"failed replicates: {self.n_failed}")
        return "\n".join(lines)

    def to_result(self, *, method, privacy, attrs=None, names=None):
        """The replicates as a result of dplit's contract: an ArviZ object with the valid draws as one chain.

        ``method`` is the algorithm (``"DPBoots"`` or ``"Boots"``); ``privacy`` the release's
        :func:`dplit.results.privacy_attrs`. Bootstrap replicates are independent, so ``converged``
        is 1 when at least :func:`min_replicates` (0.95) are valid, ``rhat_max`` is nan and
        ``ess_bulk_min`` is the number of valid replicates. The truncated-noise sampler's name is
        ``noise_method``; failed replicates are counted in ``n_failed`` and left out.
        """
        alpha = self.draws("alpha")
        if len(alpha) == 0:
            raise ValueError("every bootstrap replicate failed (no MLE, or out of range): see the release's "
                             "threshold and noise, or raise max_redraw")
        meta = {"method": method, **privacy, **(attrs or {}), "noise_method": self.method, "n": self.n, "a": self.a,
                "n_boot": self.n_boot, "n_failed": self.n_failed, "out_of_range": self.out_of_range,
                "n_out_of_range": self.n_out_of_range, "n_replicates_out_of_range": self.n_replicates_out_of_range,
                "converged": int(len(alpha) >= min_replicates(0.95)), "rhat_max": float("nan"),
                "ess_bulk_min": float(len(alpha))}
        dims = {"alpha": ["component"], "mean_composition": ["component"]}
        result = to_arviz(composition_draws(alpha[None]), dims=dims, coords={"component": np.arange(alpha.shape[1])},
                          attrs=meta)
        return name_components(result, names)

    @classmethod
    def of(cls, result):
        """The bootstrap view of a result of :func:`dp_boots` or :func:`boots` (its valid replicates)."""
        if not is_result(result) or "n_boot" not in group(result, "posterior").attrs:
            raise TypeError(f"result must be a result of dp_boots or boots, got {type(result).__name__}")
        post = group(result, "posterior")
        at, alpha = post.attrs, np.asarray(post["alpha"].values, dtype=float)
        alpha = alpha.reshape(-1, alpha.shape[-1])
        return cls(alpha=alpha, method=str(at["noise_method"]), n=int(at["n"]), a=float(at["a"]),
                   out_of_range=str(at["out_of_range"]), n_out_of_range=int(at["n_out_of_range"]),
                   n_replicates_out_of_range=int(at["n_replicates_out_of_range"]), n_failed=int(at["n_failed"]))


# %% [markdown]
# Check: each tail of a percentile interval at level $L$ holds $B (1 - L) / 2$ of the $B$ valid replicates, so fewer
# than 2 replicates are refused and fewer than $\lceil 2 / (1 - L) \rceil$ (40 at 95%) warn.

# %%
toy = np.random.default_rng(0).gamma(5.0, size=(40, 3))
assert min_replicates(0.95) == 40 and min_replicates(0.9) == 20 and min_replicates(0.5) == 4
try:
    BootResult(alpha=toy[:1], method="boots", n=100, a=0.0).interval(0.95)
except ValueError as e:
    assert "at least 2" in str(e) and "n_boot >= 40" in str(e), e
else:
    raise AssertionError("a one-replicate interval accepted")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    BootResult(alpha=toy[:10], method="boots", n=100, a=0.0).interval(0.95)   # 10 < 40: warns
    BootResult(alpha=toy, method="boots", n=100, a=0.0).interval(0.95)        # 40: silent
assert len(caught) == 1 and "n_boot >= 40" in str(caught[0].message)

# %%
#| export
def _seed_label(rng):
    """The label of a Generator's seed (as the samplers' ``seeds``), or ``"unlabelled"`` for a bit generator
    without a seed sequence."""
    seq = getattr(rng.bit_generator, "seed_seq", None)
    return "unlabelled" if seq is None else f"{seq.entropy}/{seq.spawn_key}"


def _check_boot_options(n_boot, out_of_range, max_redraw, tol, max_iter, progress, n_jobs, n, d):
    """The options boots and dp_boots share: (n_boot, policy code, max_redraw, tol, max_iter, progress, n_jobs).

    Sizes are bounded before any work (``check.work_size``): the replicates' (n_boot, d) arrays, and the (n, d)
    records each running worker simulates at once. One replicate is allowed, with a warning: it has no spread.
    """
    policy = OUT_OF_RANGE.index(check.choice(out_of_range, "out_of_range", OUT_OF_RANGE))
    n_jobs = (os.cpu_count() or 1) if n_jobs is None else check.count(n_jobs, "n_jobs")
    n_boot = check.count(n_boot, "n_boot")
    check.work_size(8.0 * 4 * d * n_boot, f"n_boot = {n_boot:,} replicates x d = {d}", "lower n_boot")
    check.work_size(8.0 * 2 * d * n * min(n_jobs, n_boot), f"n = {n:,} records x d = {d} simulated per replicate "
                    f"by {min(n_jobs, n_boot)} worker(s)", "lower n_jobs (a release this large is better analysed "
                    "by dp_mcmc, which simulates no records)")
    if n_boot == 1:
        warnings.warn("n_boot = 1: one replicate has no spread, so it gives no standard error or interval "
                      f"(a 95% interval needs {min_replicates(0.95)})", UserWarning, stacklevel=3)
    return (n_boot, policy, check.count(max_redraw, "max_redraw", minimum=0),
            check.positive(tol, "tol"), check.count(max_iter, "max_iter"), check.boolean(progress, "progress"), n_jobs)

# %%
#| export
def boots(data, *, n_boot=1000, n=None, a=None, rng=None, progress=True, n_jobs=None, out_of_range="redraw",
          max_redraw=20, tol=1e-10, max_iter=100):
    """Non-private parametric bootstrap of the Dirichlet MLE ("Boots", Guo et al. Sec. 5.1).

    Parameters
    ----------
    data : array_like, shape (n, d) or (d,)
        Compositions, or a statistic ``S0(D)`` (then ``n`` is required).
    n_boot : int
        Number of replicates.
    n : int, optional
        Records per simulated data set (default: the rows of ``data``).
    a : float, optional
        Censoring threshold in (0, 1) applied to the statistic of ``data`` (when records are given)
        and to every simulated statistic; None (default) means no censoring.
    rng : None, int or numpy.random.Generator
        Source of randomness; the same seed gives the same replicates for any ``n_jobs``.
    progress : bool, default True
        Show a progress bar over replicates.
    n_jobs : int, optional
        Threads (blocks of ``BOOT_BLOCK`` replicates); default ``cpu_count``.
    out_of_range : {"redraw", "nan", "uncensored"}
        What to do when a simulated censored statistic leaves Range(S0) (see the notebook).
    max_redraw : int
        Extra simulated data sets allowed per replicate under ``"redraw"``.
    tol, max_iter
        Passed to the MLE kernel.

    Returns
    -------
    arviz.InferenceData
        The valid replicates of alpha and E[x | alpha] as one chain, with the result contract's attrs
        (``method="Boots"``, ``eps_total = inf``: no noise); :meth:`BootResult.of` gives the
        bootstrap view (intervals, estimates).
    """
    t0 = time.perf_counter()
    arr = np.asarray(data, dtype=float)
    a_val = 0.0 if a is None else check.threshold(a)
    if arr.ndim == 2:
        X = check_compositions(arr, name="data")
        s0 = sufficient_stat(X) if a is None else censored_stat(X, a_val)
        n = X.shape[0] if n is None else n
    elif arr.ndim == 1:
        s0 = check_stat(arr, "data", finite=True)
        if n is None:
            raise ValueError("n is required when data is a statistic")
    else:
        raise ValueError(f"data must be compositions (n, d) or a statistic (d,), got shape {arr.shape}")
    n = check.count(n, "n")
    n_boot, policy, max_redraw, tol, max_iter, progress, n_jobs = _check_boot_options(
        n_boot, out_of_range, max_redraw, tol, max_iter, progress, n_jobs, n, s0.size)
    if not (np.all(np.isfinite(s0)) and np.exp(s0).sum() < 1):
        raise ValueError("the statistic of data lies outside Range(S0) (sum(exp(s)) >= 1): no MLE exists")
    rng = check.rng(rng)
    s_tilde = np.tile(s0, (n_boot, 1))
    seeds = [_seed_label(rng)]
    alpha, n_out, n_failed = _boots_blocks(s_tilde, n, a_val, policy, max_redraw, tol, max_iter, rng, n_jobs, progress)
    res = BootResult(alpha=alpha, method="boots", n=n, a=a_val, out_of_range=out_of_range,
                     n_out_of_range=int(n_out.sum()), n_replicates_out_of_range=int(np.sum(n_out > 0)),
                     n_failed=int(n_failed))
    return res.to_result(method="Boots", privacy=privacy_attrs(eps_total=math.inf),
                         attrs={"seeds": seeds, "runtime": time.perf_counter() - t0})

# %% [markdown]
# DPBoots: the same replicates, started from the released statistic with its noise removed by the truncated law.
#
# Like every method of dplit (notebook 60), `boots` and `dp_boots` return an ArviZ object: the valid replicates as one
# chain of independent draws of `alpha` and `mean_composition`, with the release's ledger, the seed and the failure
# counts in its `attrs`, so that `az.summary` and a netCDF file work as for the samplers. `BootResult.of(result)`
# gives the bootstrap view the checks below use (`alpha`, `interval`, `estimate`).

# %%
#| export
def dp_boots(release, *, n_boot=1000, part="D2", rng=None, progress=True, n_jobs=None, truncation="auto",
             out_of_range="redraw", max_redraw=20, tol=1e-10, max_iter=100, **noise_options):
    """DPBoots: the parametric bootstrap from a DP release (Guo et al., Sec. 4.1, Alg. 2).

    Each replicate draws ``S_L - noise`` with the Laplace noise truncated to Range(S0),
    takes its MLE ``alpha*``, simulates ``n`` records from Dirichlet(alpha*) and returns the
    MLE of their **censored** statistic ``S0(D~, a)`` (the text of Sec. 4.1; Alg. 2 step v
    writes the uncensored one, see the notebook).

    Parameters
    ----------
    release : dplit.release.Release
        The published record.
    n_boot : int
        Number of replicates.
    part : {"D2", "D1", "D"}
        Which released statistic: ``"D2"`` is ``s_L`` (the whole data when unsplit),
        ``"D1"`` is ``s_L1`` (a split release; this is how prior p2 is built).
    rng, progress, n_jobs
        As in :func:`boots`: the same seed gives the same replicates for any ``n_jobs``.
    truncation : {"auto", "rejection", "gibbs"}
        Truncated-noise sampler (:func:`truncated_statistic`); ``"auto"`` never hangs. (Called ``method`` before
        0.1.0; ``method=`` still works for one release, with a DeprecationWarning: the result's ``method``
        attribute names the algorithm, DPBoots.)
    out_of_range : {"redraw", "nan", "uncensored"}
        What to do when a simulated censored statistic leaves Range(S0).
    max_redraw : int
        Extra simulated data sets allowed per replicate under ``"redraw"``.
    tol, max_iter
        Passed to the MLE kernel.
    **noise_options
        Passed to :func:`truncated_statistic` (``min_acceptance``, ``n_pilot``, ``thin``, ``burn_in``).

    Returns
    -------
    arviz.InferenceData
        The valid replicates of alpha and E[x | alpha] as one chain (the release's component names),
        with the result contract's attrs (``method="DPBoots"``, the release's ledger, ``seeds``,
        ``runtime``, ``converged``; :meth:`BootResult.to_result`), ``noise_method`` (which
        truncated-noise sampler ran), ``part`` and the failure counts. :meth:`BootResult.of` gives
        the bootstrap view (intervals, estimates).
    """
    t0 = time.perf_counter()
    if not isinstance(release, Release):
        raise TypeError(f"release must be a dplit.release.Release, got {type(release).__name__}")
    if "method" in noise_options:
        warnings.warn("dp_boots(method=...) is now dp_boots(truncation=...): 'method' names the algorithm in the "
                      "result", DeprecationWarning, stacklevel=2)
        truncation = noise_options.pop("method")
    unknown = sorted(set(noise_options) - {"min_acceptance", "n_pilot", "thin", "burn_in"})
    if unknown:
        hint = " (randomness comes from rng=seed)" if {"seed", "random_state"} & set(unknown) else ""
        raise TypeError(f"dp_boots() got unexpected keyword argument(s) {', '.join(unknown)}{hint}; the noise "
                        f"options are min_acceptance, n_pilot, thin, burn_in")
    s_L, n, scale = release.part(check.choice(part, "part", ("D2", "D1", "D")))
    n_boot, policy, max_redraw, tol, max_iter, progress, n_jobs = _check_boot_options(
        n_boot, out_of_range, max_redraw, tol, max_iter, progress, n_jobs, n, np.size(s_L))
    rng = check.rng(rng)
    seeds = [_seed_label(rng)]
    truncation = check.choice(truncation, "truncation", ("auto", "rejection", "gibbs"))
    s_tilde, info = truncated_statistic(s_L, scale, n_boot, rng=rng, method=truncation, return_info=True,
                                        **noise_options)
    alpha, n_out, n_failed = _boots_blocks(s_tilde, n, release.a, policy, max_redraw, tol, max_iter, rng, n_jobs,
                                           progress)
    if n_failed:
        warnings.warn(f"DPBoots: {n_failed} of {n_boot} replicates failed (no MLE, or out of range after "
                      f"{max_redraw} redraws) and are left out of the result; estimates and intervals use the "
                      f"{n_boot - n_failed} valid ones", RuntimeWarning, stacklevel=2)
    res = BootResult(alpha=alpha, method=info["method"], n=n, a=release.a, out_of_range=out_of_range,
                     n_out_of_range=int(n_out.sum()), n_replicates_out_of_range=int(np.sum(n_out > 0)),
                     n_failed=int(n_failed), noise=info)
    attrs = {"part": part, "eps1": release.eps1, "seeds": seeds, "runtime": time.perf_counter() - t0,
             "plausibility_checked": int(release.checked)}
    return res.to_result(method="DPBoots", privacy=privacy_attrs(release), attrs=attrs, names=release.names)


# %% [markdown]
# ## Intervals and the two-sample test (Sec. 5.2)
#
# `BootResult.interval(level, of=...)` gives percentile intervals for $E[x \mid \alpha] = \alpha / \sum_j \alpha_j$ (the
# default) or for $\alpha$. For the ATUS application Guo et al. test, for two independent releases $A$ and $B$ (males
# and females: disjoint records, so by parallel composition the budget is not spent twice),
#
# $$H_{0,j}: |E[x_j \mid A] - E[x_j \mid B]| \le \delta \quad\text{against}\quad H_{1,j}: |E[x_j \mid A] - E[x_j \mid B]| > \delta$$
#
# "using confidence intervals for DPBoots". The two bootstrap runs are independent, so pairing replicate $b$ of $A$
# with replicate $b$ of $B$ gives draws of the difference $\Delta_j$. We reject $H_{0,j}$ at level $1 - $`level` when the
# percentile interval of $\Delta_j$ lies entirely outside $[-\delta, \delta]$. The matching p-value is
# $p_j = \min\{1, 2\min(P^*(\Delta_j \le \delta), P^*(\Delta_j \ge -\delta))\}$ ($P^*$: the bootstrap law), so that
# $p_j < 1 - $`level` exactly when the interval rule rejects. For $\delta = 0$ this is the usual two-sided test; for
# $\delta > 0$ its size at the boundary $|\Delta_j| = \delta$ is about half the nominal level (conservative).

# %%
#| export
@dataclass(frozen=True)
class TwoSampleTest:
    """Result of :func:`two_sample_test` (one entry per component j).

    Attributes
    ----------
    difference : ndarray, shape (d,)
        Estimated ``E[x_j | A] - E[x_j | B]``.
    interval : ndarray, shape (d, 2)
        Percentile interval of the difference.
    p_value : ndarray, shape (d,)
        Bootstrap p-value of ``H0: |difference_j| <= delta``.
    reject : ndarray of bool, shape (d,)
        Whether the interval lies outside ``[-delta, delta]``.
    delta : float
    level : float
    n_pairs : int
        Replicate pairs used.
    """

    difference: np.ndarray
    interval: np.ndarray
    p_value: np.ndarray
    reject: np.ndarray
    delta: float
    level: float
    n_pairs: int

# %%
#| export
def interval_test(draws, M=0.0, *, delta=0.01, level=0.95):
    """The interval test of ``H0_j: |E[x_j] - M_j| <= delta`` for each component j (Guo et al., Sec. 5.2).

    Rejects ``H0_j`` when the central ``level`` interval of the draws of ``E[x_j] - M_j`` lies
    entirely outside ``[-delta, delta]``. The one test of dplit: :func:`two_sample_test`, the ATUS
    application and ``dplit analyse --test`` all use it.

    Parameters
    ----------
    draws : array_like (m, d), or a result of any dplit method
        Draws of E[x] (or of a difference of two); a result gives its ``mean_composition`` draws.
    M : float or array_like (d,), default 0
        The hypothesised value of each component.
    delta : float, default 0.01
        Tolerance, >= 0.
    level : float, default 0.95
        Level of the interval; the test's level is ``1 - level`` (conservative for ``delta > 0``).

    Returns
    -------
    interval : ndarray (d, 2)
        The interval of ``E[x_j] - M_j``.
    reject : ndarray of bool (d,)
    """
    if is_result(draws):
        x = np.asarray(group(draws, "posterior")["mean_composition"].values, dtype=float)
        x = x.reshape(-1, x.shape[-1])
    else:
        x = np.asarray(draws, dtype=float)
        if x.ndim != 2:
            raise ValueError(f"draws must have shape (m, d) or be a dplit result, got shape {x.shape}")
    delta = check.nonnegative(delta, "delta")
    level = check.level(level)
    M = np.broadcast_to(np.asarray(M, dtype=float), x.shape[1:])
    x = x[np.all(np.isfinite(x), axis=1)] - M
    if len(x) < 2:
        raise ValueError("draws must hold at least 2 finite rows")
    interval = np.quantile(x, [(1 - level) / 2, (1 + level) / 2], axis=0).T
    return interval, (interval[:, 0] > delta) | (interval[:, 1] < -delta)

# %%
#| export
def two_sample_test(result_a, result_b, *, delta=0.01, level=0.95, of="mean"):
    """Test ``H0: |E[x_j | A] - E[x_j | B]| <= delta`` from two independent bootstraps (Sec. 5.2).

    Parameters
    ----------
    result_a, result_b : result of :func:`dp_boots` / :func:`boots`, or BootResult
        Bootstraps of two independent releases (e.g. :func:`dp_boots` on two groups).
    delta : float
        Tolerance (>= 0) of the null hypothesis; Guo et al. use 0.01.
    level : float
        Confidence level of the interval; the test has level ``1 - level`` (conservative for
        ``delta > 0``).
    of : {"mean", "alpha"}
        Compare E[x | alpha] (default) or alpha itself.

    Returns
    -------
    TwoSampleTest
        Replicate ``b`` of A is paired with replicate ``b`` of B (valid replicates only; the
        shorter run sets the number of pairs).
    """
    views = []
    for name, r in (("result_a", result_a), ("result_b", result_b)):
        if is_result(r):
            r = BootResult.of(r)
        if not isinstance(r, BootResult):
            raise TypeError(f"{name} must be a result of dp_boots or boots (or a BootResult), got {type(r).__name__}")
        views.append(r)
    result_a, result_b = views
    delta = check.nonnegative(delta, "delta")
    level = check.level(level)
    xa, xb = result_a.draws(of), result_b.draws(of)
    if xa.shape[1] != xb.shape[1]:
        raise ValueError(f"the two results have different d: {xa.shape[1]} and {xb.shape[1]}")
    k = min(len(xa), len(xb))
    if k == 0:
        raise ValueError("a result has no valid replicate")
    _check_replicates(k, level, "pairs of valid replicates")
    diff = xa[:k] - xb[:k]
    interval, reject = interval_test(diff, delta=delta, level=level)
    p = 2 * np.minimum((diff <= delta).mean(axis=0), (diff >= -delta).mean(axis=0))
    return TwoSampleTest(difference=diff.mean(axis=0), interval=interval, p_value=np.minimum(p, 1.0),
                         reject=reject, delta=float(delta), level=level, n_pairs=k)

# %% [markdown]
# ## In use: two releases, intervals and the test
#
# Two populations that differ in $\alpha_3$ (so in every component of $E[x]$, most in the third), each released at
# $\epsilon = 1$ ($\epsilon_1 = 0.75$ for the statistic, $\epsilon_2 = 0.25$ for Alg. 1's choice of the threshold
# among the six candidates of the first figure), each bootstrapped with DPBoots. A difference far larger than $\delta$
# is detected; a release compared with itself is not declared different; the p-value and the interval rule agree.

# %%
alpha_true, alpha_b = np.array([2.2, 3.3, 4.4]), np.array([2.2, 3.3, 5.0])
n_rec, n_boot = 5000, size(full=2000, quick=500)
XA, XB = dirichlet_draws(alpha_true, n_rec, rng=rng), dirichlet_draws(alpha_b, n_rec, rng=rng)
rA = BootResult.of(dp_boots(make_release(XA, eps1=0.75, eps2=0.25, candidates=cands, tc=0.01, rng=rng, secure=False), n_boot=n_boot, rng=rng))
rB = BootResult.of(dp_boots(make_release(XB, eps1=0.75, eps2=0.25, candidates=cands, tc=0.01, rng=rng, secure=False), n_boot=n_boot, rng=rng))
print(rA.summary())  # the estimate and the 95% percentile intervals of E[x] (BootResult.interval)
test = two_sample_test(rA, rB, delta=0.01)
print("difference", np.round(test.difference, 4), "reject", test.reject, "p", np.round(test.p_value, 4))
assert test.reject[2] and test.p_value[2] < 0.05
assert np.array_equal(test.reject, test.p_value < 1 - test.level) or np.any(np.isclose(test.p_value, 0.05))
same = two_sample_test(rA, rA, delta=0.0)
assert not same.reject.any() and np.all(same.p_value == 1.0)

# %% [markdown]
# ## When to use this
#
# DPBoots is the fast frequentist answer to "what does this release tell me about $\alpha$ and $E[x]$": one chain of
# the noise step, then $B$ independent replicates, each a simulation of $n$ records and one MLE. It is exactly the
# non-private bootstrap when $\epsilon$ is large. Use `truncation="auto"` (the default): it keeps the paper's rejection
# step when that is cheap and switches to the exact Gibbs sampler when it is not, so it never hangs (`attrs` say which
# ran: `noise_method`). Watch `n_out_of_range` and `n_failed`: many out-of-range events mean the threshold $a$ censors
# so much that the censored MLE barely exists (the S5 situation); prefer a smaller $a$ (Alg. 1's DP threshold
# selection does this) rather than trusting such intervals. Notebook 72 checks the estimator as a whole (Boots
# against the MLE's asymptotic law, DPBoots against Boots where privacy vanishes, the test's size and the intervals'
# coverage over repeated releases as in Sec. 5.1) and holds the Explore widget. For small $n\epsilon$, or when prior
# information is available, the Bayesian methods of notebooks 21-23 are the better tools.
