# %% [markdown]
# # The truncated noise of DPBoots: rejection and an exact coordinate Gibbs sampler
#
# * **For:** step 1 of DPBoots (Guo et al., Alg. 2 steps i-ii): draws of $S_L - \varepsilon$ with Laplace noise truncated to $\mathrm{Range}(S_0)$, exact and unable to hang.
# * **You need:** a released noisy statistic $S_L$ and its Laplace scale $m$.
# * **You get:** `dplit._truncated_noise`: the rejection and coordinate-Gibbs kernels next to their plain-Python twins, the chain's start and its tuning by the autocorrelation time; `dplit.bootstrap.truncated_statistic` (notebook 17) chooses between them, and notebook 72 checks their law.

# %%
#| default_exp _truncated_noise

# %% [markdown]
# ## Parameters
#
# The checks here use fixed small cases, each with its own seeded generator; nothing depends on the size switch.

# %%
import numpy as np

# %% [markdown]
# ## Step 1: the truncated noise (Guo et al., Alg. 2 steps i-ii; Supplement S4)
#
# Write $\tilde s = S_L - \varepsilon^{*}$. Because the Laplace law is symmetric, $\tilde s_j$ is
# $\mathrm{Laplace}(s_{L,j}, m)$, and step 1 asks for the product of these $d$ laws **restricted to the convex set**
# $R = \{\tilde s : \sum_j e^{\tilde s_j} < 1\}$:
#
# $$p(\tilde s \mid s_L) \propto \prod_{j=1}^d \exp\!\big(-|\tilde s_j - s_{L,j}|/m\big)\; \mathbb 1\Big(\textstyle\sum_j e^{\tilde s_j} < 1\Big).$$
#
# **Rejection** (Alg. 2 steps i-ii): propose the $d$ Laplace draws, accept when $\tilde s \in R$. The law is exact;
# the cost is $1/P(\text{accept})$ proposals per draw. When $S_L$ lies outside $R$ by many noise scales, the
# acceptance probability is astronomically small: in Guo et al.'s supplement (S5) the rejection step with
# $a = 0.1$ ran for days without finishing. Censoring at a large $a$ lifts every small component to $\log a$,
# so $S_0(D, a)$ itself may leave $R$; the noise scale $m$ is then small compared to the distance.
#
# **Gibbs over coordinates** (exact, cannot hang). Given the other coordinates, the constraint on $\tilde s_j$ is
#
# $$e^{\tilde s_j} < 1 - \sum_{k \ne j} e^{\tilde s_k} \iff \tilde s_j < u_j = \log\Big(1 - \sum_{k \ne j} e^{\tilde s_k}\Big),$$
#
# an upper bound (the current point is feasible, so the right-hand side is positive). The full conditional is
# the one-dimensional $\mathrm{Laplace}(s_{L,j}, m)$ truncated to $(-\infty, u_j)$, drawn by inverse CDF with one
# uniform: with $F$ the Laplace CDF,
#
# * if $u_j \le s_{L,j}$, the left tail is exponential and memoryless: $\tilde s_j = u_j - m E$, $E \sim \mathrm{Exp}(1)$
#   (no underflow however far $u_j$ is below $s_{L,j}$);
# * otherwise draw $U \sim \mathrm{Unif}(0, F(u_j))$, with $F(u) = 1 - \tfrac12 e^{-(u - s_{L,j})/m}$, and invert:
#   $\tilde s_j = s_{L,j} + m\log(2U)$ if $U < \tfrac12$, else $s_{L,j} - m \log(2(1-U))$.
#
# Each coordinate update leaves the target invariant, and a sweep over the coordinates is irreducible on the open
# set $R$ (every point can reach every other through a finite sequence of coordinate moves with positive density), so
# the chain converges to the exact law from **any feasible start**. A good start shortens the burn-in a lot: we
# start at the **mode** of the truncated law (moved $10^{-9}$ inside). The mode maximises $-\sum_j|\tilde s_j - s_{L,j}|$
# under $\sum_j e^{\tilde s_j} \le 1$; lowering coordinate $j$ by one unit costs $1/m$ in log density and frees
# $e^{\tilde s_j}$ of the budget, so the cheapest way in lowers the *largest* coordinates to a common level $c$
# ("water-filling from the top"): $\tilde s_j = \min(s_{L,j}, c)$ with $\sum_j e^{\min(s_{L,j}, c)} = 1$
# (the KKT conditions give the same). Starting far from the mode, e.g. at $s_L$ shifted along $-\mathbf 1$, is a
# disaster when $m$ is tiny: the coordinates can then only creep towards the mode by steps of order $m$.
#
# **Burn-in and thinning: one chain for all replicates.** The coordinate moves are short (of order $m$) while, when
# $S_L$ lies far outside $R$, the law spreads along the curved boundary over a length of order $\sqrt m$; the chain
# then needs about $1/m$ sweeps to decorrelate. Rather than a fresh chain per bootstrap replicate (every
# replicate would carry the bias of a too-short burn-in), we run **one chain per call**: a pilot phase (which is also the
# burn-in) measures the integrated autocorrelation time $\tau$ of every coordinate (Sokal's windowed estimate), is
# lengthened until it spans at least $50\tau$ sweeps, and the chain then keeps one state every
# $\lceil 2\tau\rceil$ sweeps. Every kept state has the exact law (up to the burn-in, which is $\ge 50\tau$), and
# consecutive kept states are nearly independent. A sweep costs $O(d^2)$ flops, far below the cost of simulating
# $n$ Dirichlet records in step 3, so even $\tau$ in the thousands is affordable. The thinning is capped at
# $10^4$ sweeps (reported as `thin_capped`): $2\tau \approx 2/m$ exceeds that only when $m < 10^{-4}$, where the
# whole law is narrower than $\sqrt m \approx 10^{-2}$ and the remaining correlation is immaterial.

# %%
#| export
import math

import numpy as np
from numba import njit

from dplit import _validate as check


def logsumexp(s):
    """log(sum(exp(s))) of a 1-D array, computed stably."""
    top = float(np.max(s))
    return top + math.log(float(np.sum(np.exp(s - top))))


# %%
#| export
@njit(cache=True)
def trunc_laplace_upper_kernel(mu, scale, upper, rng):
    """One draw of Laplace(mu, scale) truncated to (-inf, upper), by inverse CDF."""
    if upper <= mu:
        # left tail: exponential and memoryless below mu
        return upper - scale * rng.standard_exponential()
    f_upper = 1.0 - 0.5 * math.exp(-(upper - mu) / scale)
    u = rng.random() * f_upper
    if u < 0.5:
        if u <= 0.0:  # probability 2**-53: the bottom of the range, kept finite
            return mu + scale * math.log(2.0 ** -1074)
        return mu + scale * math.log(2.0 * u)
    return mu - scale * math.log(2.0 * (1.0 - u))

# %% [markdown]
# The one-dimensional draw is exact: notebook 72 checks it against the truncated law's CDF $F(x)/F(u)$ with
# Kolmogorov-Smirnov tests, and its compiled form against its plain-Python form draw for draw.

# %%
#| export
@njit(cache=True)
def rejection_kernel(s_L, scale, size, max_proposals, rng):
    """Alg. 2 steps i-ii: Laplace proposals s_L - noise kept when sum(exp) < 1.

    Returns (draws[:accepted], proposals made); stops early at `max_proposals`.
    """
    d = s_L.shape[0]
    out = np.empty((size, d))
    prop = np.empty(d)
    k = 0
    tries = 0
    while k < size and tries < max_proposals:
        tries += 1
        total = 0.0
        for j in range(d):
            prop[j] = s_L[j] - rng.laplace(0.0, scale)
            total += math.exp(prop[j])
        if total < 1.0:
            out[k, :] = prop
            k += 1
    return out[:k].copy(), tries


def rejection_reference(s_L, scale, size, max_proposals, rng):
    """Readable twin of `rejection_kernel` (same stream of draws)."""
    kept, tries = [], 0
    while len(kept) < size and tries < max_proposals:
        tries += 1
        prop = np.array([s_L[j] - rng.laplace(0.0, scale) for j in range(len(s_L))])
        if np.exp(prop).sum() < 1.0:
            kept.append(prop)
    return np.array(kept).reshape(len(kept), len(s_L)), tries

# %% [markdown]
# The rejection kernel against its twin (identical streams, so identical draws); every draw lies in $R$.

# %%
s_demo = np.log(np.array([0.3, 0.3, 0.45]))  # sum of exp = 1.05: outside R
d1, t1 = rejection_kernel(s_demo, 0.05, 200, 10**6, np.random.default_rng(3))
d2, t2 = rejection_reference(s_demo, 0.05, 200, 10**6, np.random.default_rng(3))
assert t1 == t2 and np.allclose(d1, d2, rtol=0, atol=1e-12)
assert np.all(np.exp(d1).sum(axis=1) < 1)
print(f"rejection: {len(d1)} draws from {t1} proposals")

# %% [markdown]
# The Gibbs sampler: one coordinate at a time, each from its one-dimensional truncated Laplace law.

# %%
#| export
@njit(cache=True)
def gibbs_kernel(s_L, scale, start, size, burn_in, thin, rng):
    """Coordinate Gibbs chain on the truncated Laplace law; returns (draws, last state).

    Runs `burn_in` sweeps, then keeps the state after every `thin` sweeps.
    """
    d = s_L.shape[0]
    s = start.copy()
    e = np.exp(s)
    out = np.empty((size, d))
    n_sweeps = burn_in + size * thin
    k = 0
    for sweep in range(n_sweeps):
        for j in range(d):
            rest = 0.0
            for l in range(d):
                if l != j:
                    rest += e[l]
            room = 1.0 - rest
            if room <= 0.0:  # only through rounding at the boundary: keep s_j
                continue
            s[j] = trunc_laplace_upper_kernel(s_L[j], scale, math.log(room), rng)
            e[j] = math.exp(s[j])
        if sweep >= burn_in and (sweep - burn_in + 1) % thin == 0:
            out[k, :] = s
            k += 1
    return out, s


def gibbs_reference(s_L, scale, start, size, burn_in, thin, rng):
    """Readable twin of `gibbs_kernel` (same stream of draws)."""
    s = np.array(start, dtype=float)
    out = []
    for sweep in range(burn_in + size * thin):
        for j in range(len(s)):
            room = 1.0 - (np.exp(s).sum() - np.exp(s[j]))
            if room > 0.0:
                s[j] = trunc_laplace_upper_kernel.py_func(s_L[j], scale, np.log(room), rng)
        if sweep >= burn_in and (sweep - burn_in + 1) % thin == 0:
            out.append(s.copy())
    return np.array(out).reshape(size, len(s)), s

# %% [markdown]
# The Gibbs kernel against its twin, and the chain never leaves $R$, even from a start on the edge.

# %%
start_demo = s_demo - (np.log(np.exp(s_demo).sum()) + 1e-3)
g1, last1 = gibbs_kernel(s_demo, 0.05, start_demo, 300, 10, 2, np.random.default_rng(4))
g2, last2 = gibbs_reference(s_demo, 0.05, start_demo, 300, 10, 2, np.random.default_rng(4))
assert np.allclose(g1, g2, rtol=0, atol=1e-12) and np.allclose(last1, last2, atol=1e-12)
assert np.all(np.exp(g1).sum(axis=1) < 1)
print("Gibbs: the twin agrees; every draw in R")

# %% [markdown]
# **The autocorrelation time.** Sokal's estimate: $\hat\tau = 1 + 2\sum_{k=1}^{W}\hat\rho_k$ with the smallest window
# $W \ge 5\hat\tau(W)$ (the estimator `emcee` uses), the maximum over the coordinates and their sum.

# %%
#| export
def autocorr_time(x, c=5.0):
    """Integrated autocorrelation time of a 1-D series (Sokal's automatic window)."""
    x = np.asarray(x, dtype=float)
    n = x.size
    x = x - x.mean()
    var = float(np.dot(x, x)) / n
    if n < 4 or var <= 0.0:
        return 1.0
    size = 1 << (2 * n - 1).bit_length()
    f = np.fft.rfft(x, size)
    acf = np.fft.irfft(f * np.conj(f), size)[:n] / (n * var)
    taus = 2.0 * np.cumsum(acf) - 1.0
    window = np.arange(n) >= c * taus
    w = int(np.argmax(window)) if window.any() else n - 1
    return max(float(taus[w]), 1.0)


def chain_tau(draws):
    """Largest autocorrelation time over the coordinates and their sum."""
    series = [draws[:, j] for j in range(draws.shape[1])] + [draws.sum(axis=1)]
    return max(autocorr_time(x) for x in series)

# %%
# iid draws have tau ~ 1; an AR(1) with coefficient r has tau = (1 + r) / (1 - r)
g = np.random.default_rng(5)
assert 0.8 < autocorr_time(g.normal(size=50_000)) < 1.2
r, z = 0.9, g.normal(size=200_000)
ar = np.empty_like(z)
ar[0] = z[0]
for t in range(1, z.size):
    ar[t] = r * ar[t - 1] + z[t]
assert abs(autocorr_time(ar) / 19.0 - 1) < 0.15, autocorr_time(ar)
print(f"tau(iid) ~ 1, tau(AR(0.9)) = {autocorr_time(ar):.1f} (exact 19)")

# %%
#| export
def feasible_start(s_L, margin=1e-9):
    """The mode of the truncated law, moved just inside Range(S0) (the Gibbs start).

    The mode maximises ``-sum|s_j - s_L_j|`` under ``sum exp(s_j) <= 1``: it lowers the largest
    coordinates to a common level ``c`` (water-filling from the top), ``s_j = min(s_L_j, c)``.
    """
    if logsumexp(s_L) < -margin:
        return s_L.copy()
    order = np.sort(s_L)[::-1]
    for k in range(1, len(order) + 1):
        rest = float(np.sum(np.exp(order[k:])))
        c = math.log((1.0 - rest) / k) if rest < 1.0 else -math.inf
        if k == len(order) or c >= order[k]:
            break
    c += math.log1p(-margin)
    return np.minimum(s_L, c)


def gibbs_draws(s_L, scale, size, rng, *, thin=None, burn_in=None, max_pilot=2**20,
                 max_thin=10_000):
    """Gibbs draws of the truncated statistic; returns (draws, info) with the tuning used."""
    state = feasible_start(s_L)
    tau = float("nan")
    pilot_sweeps = 0
    if thin is None or burn_in is None:
        n = 1000
        while True:
            pilot, state = gibbs_kernel(s_L, scale, state, n, 0, 1, rng)
            pilot_sweeps += n
            tau = chain_tau(pilot)
            if n >= 50 * tau or n >= max_pilot:
                break
            n *= 4
    if thin is None:
        thin = min(max(1, math.ceil(2 * tau)), max_thin)
    thin = check.count(thin, "thin")
    burn_in = 0 if burn_in is None else check.count(burn_in, "burn_in", minimum=0)
    draws, _ = gibbs_kernel(s_L, scale, state, size, burn_in, thin, rng)
    info = {"thin": thin, "burn_in": pilot_sweeps + burn_in, "tau": tau,
            "thin_capped": bool(2 * tau > thin)}
    return draws, info

# %% [markdown]
# Check: the start is the statistic itself when it lies in $R$, and otherwise a point just inside $R$ that keeps the
# small coordinates; the tuned chain stays in $R$ and reports its tuning.

# %%
assert np.array_equal(feasible_start(np.log([0.2, 0.3])), np.log([0.2, 0.3]))
start_chk = feasible_start(s_demo)
assert np.exp(start_chk).sum() < 1 and start_chk[0] == s_demo[0] and start_chk[2] < s_demo[2]
g_chk, info_chk = gibbs_draws(s_demo, 0.05, 200, np.random.default_rng(5))
assert g_chk.shape == (200, 3) and np.all(np.exp(g_chk).sum(axis=1) < 1) and info_chk["thin"] >= 1


# %% [markdown]
# ## When to use this
#
# Through `dplit.bootstrap.truncated_statistic` (notebook 17), which picks rejection when its acceptance rate is high
# enough and this chain otherwise, and reports the choice and the tuning. Call `gibbs_draws` directly only to study
# the chain itself (its start, its thinning); the kernels must keep agreeing with their twins (checked above and in
# `tests/test_bootstrap.py`), and notebook 72 checks that the chain meets independent exact samplers, including
# Guo et al.'s S5 setting where rejection cannot finish.
