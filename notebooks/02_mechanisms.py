# %% [markdown]
# # Privacy mechanisms: Laplace, two-sided geometric, discrete Gaussian and randomized response
#
# The noise that makes a release differentially private, with its reach (which published values are impossible);
# the audit that bounds the epsilon a mechanism really spends is derived in notebook `01_audit`.
#
# * **For:** adding calibrated noise to a statistic before you publish it.
# * **You need:** a statistic, its sensitivity and a budget epsilon.
# * **You get:** a noisy release (Laplace, geometric, discrete Gaussian or randomized response) and the range a genuine release stays in.
#
# ## Parameters
#
# Every random draw comes from a generator seeded here; the long tests of the samplers, whose sizes follow the
# size switch, are in notebook `70_mechanisms_checks`.

# %%
# %matplotlib inline
import math

import numpy as np
import matplotlib.pyplot as plt
from scipy import stats

from dplit.config import size

SEED = 20261123
rng = np.random.default_rng(SEED)
n_fig = size(full=200_000, quick=20_000)       # releases of each neighbour in the first figure

# %% [markdown]
# ## What it gives
#
# The result first, from the finished module `dplit.mechanisms`: a count released at $\epsilon = 1$ (sensitivity 1)
# by the two-sided geometric mechanism, once from a data set with count 37 and once from its neighbour with one
# record more. Left: the two laws of the released number (the frequencies of the draws against the exact pmf,
# Nixon et al., Def. 2.4); they overlap almost entirely, so the release says little about that one record. Right: the
# privacy loss $\log P(y \mid 37)/P(y \mid 38)$ at each output $y$, for the geometric and for the Laplace mechanism
# at the same budget: it never leaves $[-\epsilon, \epsilon]$, which is what $\epsilon$-DP means (Guo et al., Sec. 2.1).

# %%
import dplit.mechanisms as mech

fig_rng, count, eps_fig = np.random.default_rng(SEED + 1), 37, 1.0
ys = np.arange(count - 8, count + 10)
fig, (ax, ax_loss) = plt.subplots(1, 2, figsize=(7, 2.8), width_ratios=[1.3, 1])
for c, colour in ((count, "C0"), (count + 1, "C1")):
    draws = mech.geometric_mechanism(np.full(n_fig, c), 1, eps_fig, rng=fig_rng, secure=False)
    freq = (draws[:, None] == ys).mean(axis=0)                       # the share of draws at each y
    exact = np.exp(mech.two_sided_geometric_logpmf(ys - c, math.exp(-eps_fig)))
    assert np.all(np.abs(freq - exact) < 5 * np.sqrt(exact * (1 - exact) / n_fig) + 1e-12), c
    off = 0.2 if c > count else -0.2
    ax.bar(ys + off, freq, width=0.4, color=colour, alpha=0.6, label=f"count {c}: draws")
    ax.plot(ys + off, exact, "_", color="k", ms=6, mew=1)
ax.set(xlabel="released count $y$ (bars: draws; dashes: exact)", ylabel="probability")
ax.legend(fontsize=9, loc="upper left", frameon=False)
y_cont = np.linspace(ys[0], ys[-1], 600)
loss = {"geometric": mech.two_sided_geometric_logpmf(ys - count, math.exp(-eps_fig))
        - mech.two_sided_geometric_logpmf(ys - count - 1, math.exp(-eps_fig)),
        "Laplace": mech.laplace_logpdf(y_cont, count, 1 / eps_fig) - mech.laplace_logpdf(y_cont, count + 1, 1 / eps_fig)}
assert max(np.abs(v).max() for v in loss.values()) <= eps_fig * (1 + 1e-12)          # the definition of eps-DP
ax_loss.plot(y_cont, loss["Laplace"], "C2", lw=1.5, label="Laplace")
ax_loss.plot(ys, loss["geometric"], "o", color="C0", ms=3, label="geometric")
ax_loss.axhspan(-eps_fig, eps_fig, color="0.9", zorder=0)
ax_loss.set(xlabel="released $y$", ylabel="privacy loss", ylim=(-1.6, 1.6))
ax_loss.legend(fontsize=9, loc="upper right", frameon=False, ncol=2)
fig.tight_layout()
plt.show()

# %% [markdown]
# ## The Laplace mechanism (Guo et al., Sec. 2.1; dapper, Sec. 2)
#
# Let $S_0$ map a data set to $\mathbb{R}^d$ with global ($\ell_1$) sensitivity
# $\Delta = \max_{D \sim D'} \lVert S_0(D) - S_0(D') \rVert_1$, the maximum over neighbouring data sets.
# The Laplace mechanism releases
#
# $$S_L(D) = S_0(D) + \varepsilon^L, \qquad \varepsilon^L_j \overset{iid}{\sim} \mathrm{Laplace}(0, b), \quad b = \Delta / \epsilon,$$
#
# with density $p(y \mid \mu, b) = (2b)^{-1} \exp(-|y - \mu| / b)$.
#
# **Why it is $\epsilon$-DP.** For an output $y$ and neighbours $D, D'$,
#
# $$\log \frac{p(y \mid S_0(D))}{p(y \mid S_0(D'))} = \frac{1}{b}\sum_j \big(|y_j - S_0(D')_j| - |y_j - S_0(D)_j|\big)
#   \le \frac{1}{b} \lVert S_0(D) - S_0(D') \rVert_1 \le \frac{\Delta}{b} = \epsilon$$
#
# by the triangle inequality; integrating over any event $E$ gives $P(S_L(D) \in E) \le e^\epsilon P(S_L(D') \in E)$.
#
# **Two code paths.** `secure=False` draws the noise with NumPy (fast, seedable: the path for simulation
# studies, which must ask for it). Textbook floating-point Laplace sampling leaks: the set of doubles that $\mu + $ noise can
# take depends on $\mu$, so an attacker who sees the exact bits can tell neighbours apart (Mironov 2012).
# `secure=True`, the default and the path for a curator who publishes, draws with OpenDP's `make_laplace`, which
# rounds to a grid of spacing $2^k$ and adds exact discrete-Laplace noise on that grid (Canonne, Kamath
# and Steinke 2020, Sec. 5.2). OpenDP takes its randomness from the operating system, **so the secure
# path ignores `rng` and is not reproducible**; notebook `70_mechanisms_checks` checks that both paths have the same
# law.

# %%
#| default_exp mechanisms
#| internal FALSE_REFUSAL laplace_reach geometric_reach check_plausible
#| export
import math

import numpy as np
from numba import njit
from scipy import special

from dplit import _validate as check

# The audit (notebook 01) lives in dplit.audit; its names are importable from here too (``name as name`` marks a
# re-export).
from dplit.audit import AuditResult as AuditResult
from dplit.audit import audit_epsilon as audit_epsilon


def _check_size(size):
    """Return ``size`` as a shape tuple of non-negative ints whose draws fit in memory (``check.work_size``)."""
    shape = (size,) if np.ndim(size) == 0 else tuple(size)
    for s in shape:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0:
            raise ValueError(f"size must be a non-negative int or a tuple of them, got {size!r}")
    shape = tuple(int(s) for s in shape)
    check.work_size(8 * math.prod(shape), f"size {shape} ({math.prod(shape):,} draws of 8 bytes)", "lower size")
    return shape


def _opendp():
    """Import OpenDP with the 'contrib' features enabled (its vetted samplers)."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp


def _opendp_laplace(x, scale, *, integer):
    """``x`` plus OpenDP's exact Laplace noise (its discrete Laplace for integers), same shape (not seedable)."""
    if x.size == 0:
        return x.copy()
    dp = _opendp()
    kind = "i64" if integer else float
    domain = dp.atom_domain(T=kind) if integer else dp.atom_domain(T=kind, nan=False)
    meas = dp.m.make_laplace(dp.vector_domain(domain), dp.l1_distance(T=kind), scale=scale)
    return np.asarray(meas(x.ravel().tolist()), dtype=np.int64 if integer else float).reshape(x.shape)

# %%
#| export
def laplace_logpdf(x, loc, scale):
    """Log density of the Laplace distribution.

    Parameters
    ----------
    x : array_like
        Points at which to evaluate.
    loc : array_like
        Location (the value released without noise).
    scale : float
        Scale ``b > 0``; the density is ``exp(-|x - loc| / b) / (2 b)``.

    Returns
    -------
    ndarray
        ``log p(x | loc, scale)``, broadcast over ``x`` and ``loc``.
    """
    scale = check.positive(scale, "scale")
    x, loc = check.real_array(x, "x"), check.real_array(loc, "loc")
    return -np.log(2.0 * scale) - np.abs(x - loc) / scale

# %% [markdown]
# Checks: the log density integrates to one and matches SciPy; the log ratio of the two output
# densities for inputs $\Delta$ apart never exceeds $\epsilon$ and reaches it.

# %%
grid = np.linspace(-40, 40, 200_001)
assert np.isclose(np.trapezoid(np.exp(laplace_logpdf(grid, 1.0, 2.0)), grid), 1.0, atol=1e-6)
assert np.allclose(laplace_logpdf(grid, 1.0, 2.0), stats.laplace.logpdf(grid, 1.0, 2.0))
sens, eps = 2.0, 0.7
ratio = laplace_logpdf(grid, 0.0, sens / eps) - laplace_logpdf(grid, sens, sens / eps)
assert ratio.max() <= eps + 1e-12 and np.isclose(np.abs(ratio).max(), eps)

# %%
#| export
def laplace_mechanism(value, sensitivity, eps, *, rng=None, secure=True, budget=None, label="Laplace mechanism"):
    """Release ``value`` with Laplace noise of scale ``sensitivity / eps`` (epsilon-DP).

    Parameters
    ----------
    value : array_like
        The confidential statistic (any shape), finite real numbers.
    sensitivity : float
        Global l1 sensitivity of the statistic over neighbouring data sets, > 0.
    eps : float
        Privacy budget spent, > 0.
    rng : None, int or numpy.random.Generator, optional
        Source of randomness for the fast path. Ignored when ``secure=True``.
    secure : bool, default True
        True (the default, for a curator who publishes): draw the noise with OpenDP's ``make_laplace``
        (resistant to the floating-point attack of Mironov 2012, randomness from the operating system: not
        seedable). False: NumPy's floating-point sampler, fast and seeded by ``rng``, for simulations only.
    budget : dplit.accounting.PrivacyBudget, optional
        A ledger to charge ``eps`` to (with ``label``) before any noise is drawn; a charge that
        does not fit raises ``BudgetExceededError`` and releases nothing.
    label : str, optional
        What the ledger records.

    Returns
    -------
    ndarray of float
        Noisy release, the same shape as ``value``.

    Examples
    --------
    >>> laplace_mechanism([10.0, 20.0], sensitivity=1.0, eps=0.5, rng=1, secure=False).shape
    (2,)
    """
    x = check.finite_array(value, "value")
    sensitivity = check.positive(sensitivity, "sensitivity")
    eps = check.epsilon(eps, "eps")
    scale = sensitivity / eps
    if not math.isfinite(scale):
        raise ValueError(f"sensitivity / eps must be finite, got {sensitivity:g} / {eps:g}")
    secure = check.boolean(secure, "secure")
    if budget is not None:
        budget.spend(eps, label)
    if secure:
        return _opendp_laplace(x, scale, integer=False)
    rng = check.rng(rng)
    return x + rng.laplace(0.0, scale, size=x.shape)

# %% [markdown]
# Checks: a seed reproduces the draw, and the shape of the input is kept. Notebook `70_mechanisms_checks` tests the law of
# the noise (Kolmogorov-Smirnov against the Laplace cdf, and not against a 10% wider one), the secure path against
# the fast one, and bad inputs.

# %%
assert np.array_equal(laplace_mechanism([1.0, 2.0], 1, 1, rng=5, secure=False),
                      laplace_mechanism([1.0, 2.0], 1, 1, rng=5, secure=False))
assert laplace_mechanism(np.ones((2, 3)), 1, 1, rng=0, secure=False).shape == (2, 3)

# %% [markdown]
# ## The two-sided geometric (discrete Laplace) mechanism (Guo et al., Sec. 2.1; Nixon et al., Def. 2.4)
#
# For an integer statistic $S_0 : \mathcal{D} \to \mathbb{Z}^d$ the geometric mechanism of Ghosh et al. (2012)
# releases $S_G(D) = S_0(D) + \varepsilon^G$ with independent $\varepsilon^G_j \sim \mathrm{TwoSidedGeometric}(t)$,
# $t = \exp(-\epsilon / \Delta)$, whose probability mass function is
#
# $$p(k \mid t) = \frac{1 - t}{1 + t}\, t^{|k|}, \qquad k \in \mathbb{Z}.$$
#
# The proof of $\epsilon$-DP is the Laplace one with sums for integrals:
# $p(y - S_0(D)) / p(y - S_0(D')) = t^{\,|y - S_0(D)|_1 - |y - S_0(D')|_1} \le t^{-\Delta} = e^{\epsilon}$.
#
# **A sampler, exact in real arithmetic.** If $G_1, G_2$ are independent with $P(G = g) = (1-t)t^g$, $g = 0, 1, \dots$, then
# $G_1 - G_2$ is two-sided geometric: $P(G_1 - G_2 = k) = \sum_{g}(1-t)^2 t^{g + |k|} t^{g} = \frac{(1-t)^2}{1 - t^2} t^{|k|}$.
# And $G = \lfloor E / \lambda \rfloor$ with $E \sim \mathrm{Exp}(1)$, $\lambda = -\log t$, has
# $P(G \ge g) = P(E \ge g\lambda) = t^g$, so it is geometric. The numba kernel draws the two exponentials
# from the passed generator, in floating point (so its probabilities are right up to rounding of order
# $10^{-16}$); the kernel's plain-Python form `_two_sided_geometric_kernel.py_func` (same stream, same
# numbers) is what the tests and the benchmark compare it with. `secure=True` uses OpenDP's integer `make_laplace`, which samples the discrete Laplace law
# exactly with integer arithmetic.

# %%
#| export
@njit(cache=True)
def _two_sided_geometric_kernel(t, n, rng):
    """n draws of TwoSidedGeometric(t) as the difference of two geometric variables."""
    lam = -math.log(t) if t > 0.0 else math.inf   # t underflows to 0 when eps / sensitivity > ~745: no noise
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        g1 = math.floor(rng.standard_exponential() / lam)
        g2 = math.floor(rng.standard_exponential() / lam)
        out[i] = np.int64(g1) - np.int64(g2)
    return out

# %% [markdown]
# Check: the compiled kernel and its Python form agree draw for draw.

# %%
assert np.array_equal(_two_sided_geometric_kernel(np.exp(-0.5), 1000, np.random.default_rng(3)),
                      _two_sided_geometric_kernel.py_func(np.exp(-0.5), 1000, np.random.default_rng(3)))

# %% [markdown]
# The pmf, and the public sampler of any shape.

# %%
#| export
def two_sided_geometric_logpmf(k, t):
    """Log probability mass of the two-sided geometric (discrete Laplace) distribution.

    Parameters
    ----------
    k : array_like of int
        Integer points; non-integer values get ``-inf``.
    t : float
        Parameter in (0, 1): ``p(k) = (1 - t) / (1 + t) * t**|k|``.

    Returns
    -------
    ndarray
        ``log p(k | t)``.
    """
    t = check.unit_interval(t, "t")
    k = check.real_array(k, "k")
    out = np.log1p(-t) - np.log1p(t) + np.abs(k) * np.log(t)
    return np.where(k == np.round(k), out, -np.inf)


def sample_two_sided_geometric(t, size, *, rng=None):
    """Draws from the two-sided geometric distribution ``p(k) ∝ t**|k|``.

    Each draw is the difference of two geometric variables ``floor(E / -log t)`` with floating-point
    exponentials ``E`` (exact up to rounding of order 1e-16); ``geometric_mechanism(...,
    secure=True)`` samples this law with exact integer arithmetic.

    Parameters
    ----------
    t : float
        Parameter in (0, 1); the geometric mechanism uses ``t = exp(-epsilon / sensitivity)``.
    size : int or tuple of int
        Output shape.
    rng : None, int or numpy.random.Generator, optional
        Source of randomness (normalised with ``numpy.random.default_rng``).

    Returns
    -------
    ndarray of int64
        Draws of shape ``size``.
    """
    t = check.unit_interval(t, "t")
    shape = _check_size(size)
    rng = check.rng(rng)
    return _two_sided_geometric_kernel(t, math.prod(shape), rng).reshape(shape)

# %% [markdown]
# Checks: the pmf sums to one and its variance is $2t/(1-t)^2$ (notebook `70_mechanisms_checks` tests the draws against it).

# %%
t = np.exp(-0.5)
kk = np.arange(-400, 401)
pmf = np.exp(two_sided_geometric_logpmf(kk, t))
assert np.isclose(pmf.sum(), 1.0) and np.isclose((kk**2 * pmf).sum(), 2 * t / (1 - t) ** 2)
assert two_sided_geometric_logpmf(0.5, t) == -np.inf

# %% [markdown]
# The mechanism adds this noise to integer counts. Counts beyond $\pm 2^{62}$ are refused: after the
# noise they could wrap around in int64 without a sound.

# %%
#| export
_COUNT_LIMIT = 2**62  # larger |counts| could wrap around in int64 (silently) once the noise is added


def _check_counts(counts):
    """Return counts as an int64 array, or raise if any entry is not an integer within +-2**62."""
    arr = np.asarray(counts)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError("counts must be an array of integers")
    if np.issubdtype(arr.dtype, np.floating) and (not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr))):
        raise ValueError("counts must hold integer values (the geometric mechanism adds integer noise)")
    if arr.size and (np.any(arr > _COUNT_LIMIT) or np.any(arr < -_COUNT_LIMIT)):
        raise ValueError(f"counts must lie within +-2**62 (int64 after noise), got entries up to "
                         f"{np.max(np.abs(arr.astype(float))):.3g} in absolute value")
    return arr.astype(np.int64)


def geometric_mechanism(counts, sensitivity, eps, *, rng=None, secure=True, budget=None,
                        label="geometric mechanism"):
    """Release integer ``counts`` with two-sided geometric noise (epsilon-DP).

    The noise is TwoSidedGeometric(t) with ``t = exp(-eps / sensitivity)`` (Guo et al. Sec. 2.1).

    Parameters
    ----------
    counts : array_like of int
        Confidential integer statistic (any shape). Floats are accepted only when integer-valued.
    sensitivity : float
        Global l1 sensitivity, > 0 (2 for a histogram when a record changes its cell).
    eps : float
        Privacy budget spent, > 0.
    rng : None, int or numpy.random.Generator, optional
        Source of randomness for the fast path. Ignored when ``secure=True``.
    secure : bool, default True
        True (the default): draw the noise with OpenDP's integer ``make_laplace`` (exact integer sampling,
        randomness from the operating system: not seedable). False: the floating-point kernel, fast and
        seeded by ``rng``, for simulations only.
    budget, label
        The ledger charged with ``eps`` before any noise is drawn, and what it records, as in
        :func:`laplace_mechanism`.

    Returns
    -------
    ndarray of int64
        Noisy counts, the same shape as ``counts`` (they may be negative).
    """
    x = _check_counts(counts)
    sensitivity = check.positive(sensitivity, "sensitivity")
    # Integer counts of neighbouring data sets differ by 0 or by at least 1: a bound below 1 is a unit slip
    # (it would draw too little noise for any change at all).
    if sensitivity < 1:
        raise ValueError(f"sensitivity must be >= 1 for integer counts (neighbouring counts differ by 0 or by at "
                         f"least 1), got {sensitivity:g}")
    eps = check.epsilon(eps, "eps")
    if not math.exp(-eps / sensitivity) < 1.0:
        raise ValueError(f"eps / sensitivity = {eps / sensitivity:g} is too small: "
                         f"t = exp(-eps / sensitivity) rounds to 1")
    secure = check.boolean(secure, "secure")
    if budget is not None:
        budget.spend(eps, label)
    if secure:
        return _opendp_laplace(x, sensitivity / eps, integer=True)
    t = math.exp(-eps / sensitivity)
    rng = check.rng(rng)
    return x + _two_sided_geometric_kernel(t, x.size, rng).reshape(x.shape)

# %% [markdown]
# Check: counts stay integers. Notebook `70_mechanisms_checks` tests that the fast and secure paths have the same law (and the power
# to tell a different epsilon apart), and that bad inputs raise.

# %%
assert geometric_mechanism(np.full(5, 7), 2, 1.0, rng=0, secure=False).dtype == np.int64
assert geometric_mechanism(np.full(5, 7), 2, 1.0).dtype == np.int64     # the default: the exact sampler
# %% [markdown]
# ## Explore: the noise laws
#
# For a budget $\epsilon$ and a sensitivity $\Delta$: the Laplace density (scale $\Delta/\epsilon$) and the two-sided
# geometric pmf ($t = e^{-\epsilon/\Delta}$), both pure $\epsilon$-DP. Notebook `03_accounting` adds the discrete
# Gaussian at the same $(\epsilon, \delta)$.

# %%
def plot_noise_laws(epsilon=1.0, sensitivity=1.0):
    """Plot the Laplace density and the two-sided geometric pmf for a budget; returns the figure."""
    scale, t = sensitivity / epsilon, np.exp(-epsilon / sensitivity)
    half = max(5 * scale, 5)
    x = np.linspace(-half, half, 600)
    k = np.arange(-int(half), int(half) + 1)
    fig, ax = plt.subplots(figsize=(7, 3.4))
    ax.plot(x, np.exp(laplace_logpdf(x, 0.0, scale)), label=f"Laplace, b = {scale:.3g}")
    ax.plot(k, np.exp(two_sided_geometric_logpmf(k, t)), "o", ms=3, label=f"two-sided geometric, t = {t:.3g}")
    ax.set_xlabel("noise")
    ax.set_title(f"epsilon = {epsilon:g}, sensitivity = {sensitivity:g}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


fig = plot_noise_laws(2.0, 1.0)
assert len(fig.axes[0].lines) == 2
plt.close(fig)

# %%
# NBVAL_IGNORE_OUTPUT
from ipywidgets import FloatLogSlider, interactive
from dplit.testing import dead_controls  # noqa: E402

explorer = interactive(plot_noise_laws,
                       epsilon=FloatLogSlider(value=1.0, base=10, min=-1.3, max=1, step=0.05),
                       sensitivity=FloatLogSlider(value=1.0, base=10, min=-1, max=1, step=0.05))
assert dead_controls(explorer) == []  # every control changes the view (one its callback ignores fails)
explorer

# %% [markdown]
# In the widget's default view ($\epsilon = 1$, $\Delta = 1$: Laplace scale $b = 1$, geometric $t = e^{-1}$) both laws
# fall off as $e^{-\epsilon |x| / \Delta}$, which is what bounds the ratio of the output's
# law on neighbours by $e^\epsilon$; the geometric keeps counts integer.

# %% [markdown]
# ## How far can the noise reach? Plausibility of a release
#
# A release states its noise (the law and its scale), so it also states which numbers it cannot produce. If the
# statistic lies in a feasible set $F$ (a mean of logs in $[\log a, 0]$, a count in $[0, n]$, ...), the published
# value lies in $F$ widened by the noise, except with a probability we can bound. Every release kind of dplit
# (`Release` 04, `MarginRelease` 14, `SummaryRelease` 16) refuses numbers outside that widened set: a tampered or
# mistyped file then fails loudly instead of giving a confident, meaningless answer.
#
# We fix the probability that a **genuine** release is refused at $p = 10^{-9}$ per release and share it over the
# $D$ noisy coordinates the release checks (union bound: each coordinate gets $p / D$).
#
# **Laplace.** $P(|\varepsilon| > k b) = e^{-k}$ for $\varepsilon \sim \mathrm{Laplace}(0, b)$, so with
# $$k = \log\frac{D}{p}, \qquad P\Big(\max_{j \le D} |\varepsilon_j| > k b\Big) \le D e^{-k} = p .$$
# For $D = 3$ this is $k = 21.8$ scales; $D = 100$ gives $k = 25.3$.
#
# **Two-sided geometric.** $P(|K| \ge m) = 2\sum_{k \ge m} \frac{1-t}{1+t} t^k = \frac{2 t^m}{1 + t}$, so with the smallest $m$ such that
# $D \cdot 2 t^m / (1 + t) \le p$, that is $m = \big\lceil \log\frac{2D}{p(1+t)} \big/ \log\frac1t \big\rceil$, every
# $|K_j| \le w = m - 1$ except with probability $\le p$. At $\epsilon = \infty$ ($t = 0$) the noise is zero and $w = 0$:
# the check is exact.
#
# **Joint constraints cost nothing extra.** On the same event (every $|\varepsilon_j| \le$ its reach $r$) a linear
# constraint $\sum_j c_j S_j \le u$ of the feasible set holds for the noisy values up to $r\sum_j |c_j|$, and a
# constraint $\log\sum_j e^{S_j} \le u$ up to $r$; so the release's joint checks add no probability to $p$.
# `check_plausible` raises a `ValueError` naming the field, the value, the feasible set and the widened range.

# %%
#| export
FALSE_REFUSAL = 1e-9  # probability that a genuine release is refused by its plausibility check


def laplace_reach(n_coords, p=FALSE_REFUSAL):
    """Scales ``k`` that Laplace noise exceeds at none of ``n_coords`` coordinates, except with probability ``p``.

    ``P(|Laplace(0, b)| > k b) = exp(-k)``, so ``k = log(n_coords / p)`` gives ``n_coords exp(-k) = p`` (union bound).
    """
    n_coords = check.count(n_coords, "n_coords", 1)
    p = check.unit_interval(p, "p")
    return math.log(n_coords / p)


def geometric_reach(t, n_coords, p=FALSE_REFUSAL):
    """Largest ``|K|`` that two-sided geometric(t) noise exceeds at none of ``n_coords`` coordinates, but w.p. ``p``.

    ``P(|K| >= m) = 2 t^m / (1 + t)``: the smallest ``m`` with ``n_coords 2 t^m / (1 + t) <= p``, minus one.
    ``t = 0`` (no noise, ``eps = inf``) gives 0: the check is then exact.
    """
    t = check.real(t, "t")
    if not 0.0 <= t < 1.0:
        raise ValueError(f"t must lie in [0, 1), got {t}")
    n_coords = check.count(n_coords, "n_coords", 1)
    p = check.unit_interval(p, "p")
    if t == 0.0:
        return 0
    m = math.ceil(math.log(2.0 * n_coords / (p * (1.0 + t))) / -math.log(t))
    while m > 1 and n_coords * 2.0 * t ** (m - 1) / (1.0 + t) <= p:    # guard the rounding of ceil
        m -= 1
    return max(m - 1, 0)


def check_plausible(value, lo, hi, name, *, feasible, noise, p=FALSE_REFUSAL):
    """Raise ``ValueError`` naming the first entry of ``value`` outside ``[lo, hi]`` (a feasible set widened by noise).

    ``feasible`` says what the statistic satisfies without noise, ``noise`` how far the noise reaches; both go into
    the message, with the value and the range, and the probability ``p`` that a genuine release falls outside.
    """
    v = np.atleast_1d(np.asarray(value, dtype=float))
    lo_, hi_ = np.broadcast_to(np.asarray(lo, dtype=float), v.shape), np.broadcast_to(np.asarray(hi, dtype=float), v.shape)
    bad = np.flatnonzero(~((v >= lo_) & (v <= hi_)))
    if bad.size:
        j = int(bad[0])
        label = name if np.ndim(value) == 0 else f"{name}[{j}]"
        raise ValueError(f"{label} = {v[j]:.6g} is impossible for this release: {feasible}; with {noise} it must lie "
                         f"in [{lo_[j]:.6g}, {hi_[j]:.6g}] (a genuine release falls outside with probability < {p:g}; "
                         f"a tampered or mistyped value? check=False skips this check, for research)")

# %% [markdown]
# Checks: the reach holds its probability (closed form), $k$ grows like $\log D$, $t = 0$ gives an exact check.
# Notebook `70_mechanisms_checks` checks the reach by simulation and the message of a refusal.

# %%
for D in (1, 3, 10, 1000):
    k = laplace_reach(D)
    assert math.isclose(D * math.exp(-k), FALSE_REFUSAL)
    for eps_ in (1e-3, 0.1, 0.5, 1.0, 5.0, 50.0):
        t_ = math.exp(-eps_)
        w = geometric_reach(t_, D)
        tail = D * 2 * t_ ** np.array([w, w + 1]) / (1 + t_)   # P(some |K| >= m) for m = w, w + 1 (union bound)
        assert tail[1] <= FALSE_REFUSAL * (1 + 1e-12) and (w == 0 or tail[0] > FALSE_REFUSAL), (D, eps_, w)
assert geometric_reach(0.0, 5) == 0 and round(laplace_reach(3), 1) == 21.8

# %% [markdown]
# ## A privacy audit (notebook 01)
#
# A proof of privacy is about the mathematical mechanism; code can still spend more. `audit_epsilon` (notebook
# `01_audit`, importable from here) runs on the outputs of a mechanism on two neighbouring data sets and returns a
# lower confidence bound on the epsilon spent: tail events $\{y \ge c\}$, $\{y \le c\}$ are chosen on one half of each
# sample and their probabilities bounded on the other half (Clopper-Pearson, Bonferroni over the kept events), so
# that $\epsilon_{\text{spent}} \ge \log(\underline p_{num} / \overline p_{den})$ holds with the stated confidence.
# Notebook `70_mechanisms_checks` audits the mechanisms of this notebook on worst-case neighbours.

# %% [markdown]
# ## The discrete Gaussian (Canonne, Kamath & Steinke 2020; dapper, Sec. 2 and Example 2)
#
# The discrete Gaussian with scale $\sigma$ (and centre $\mu \in \mathbb{Z}$) has
#
# $$p(k \mid \mu, \sigma) = \frac{e^{-(k - \mu)^2 / (2\sigma^2)}}{Z(\sigma)}, \qquad
#   Z(\sigma) = \sum_{j \in \mathbb{Z}} e^{-j^2 / (2\sigma^2)}, \qquad k \in \mathbb{Z}.$$
#
# It is the noise of the 2020 US Census (dapper, Example 2). Adding it to an integer statistic with
# $\ell_2$ sensitivity $\Delta_2$ gives $\rho$-zCDP with $\rho = \Delta_2^2 / (2\sigma^2)$ (CKS 2020, Thm. 4 and
# Thm. 14 for vectors), converted to $(\epsilon, \delta)$-DP in notebook `03_accounting`.
#
# **The normaliser.** Summing $Z$ directly converges fast when $\sigma$ is small. For $\sigma \ge 1$ we use
# the Poisson summation formula (Jacobi's theta transformation),
# $Z(\sigma) = \sqrt{2\pi}\,\sigma \big(1 + 2\sum_{m \ge 1} e^{-2\pi^2\sigma^2 m^2}\big)$, whose correction is
# below $10^{-8}$ at $\sigma = 1$ and negligible beyond. `normalize=False` skips $\log Z$ (dapper's
# `ddnorm(..., normalize = FALSE)`), which is all an MCMC acceptance ratio needs.
#
# **The sampler (CKS 2020, Algorithm 3), in floating point.** Let $t = \lfloor\sigma\rfloor + 1$. Repeat:
# draw $Y$ from the discrete Laplace law $P(Y = y) \propto e^{-|y|/t}$ (two-sided geometric with parameter
# $e^{-1/t}$, sampled as above), and accept it with probability $\exp\{-(|Y| - \sigma^2/t)^2 / (2\sigma^2)\}$.
# Why it works: $-\frac{y^2}{2\sigma^2} = -\frac{|y|}{t} - \frac{(|y| - \sigma^2/t)^2}{2\sigma^2} + \frac{\sigma^2}{2t^2}$,
# so proposal times acceptance is proportional to the target, and the acceptance probability is a
# bounded function of $y$; the expected number of proposals is below 2 for $\sigma \ge 1$ (their Sec. 5.3).
#
# **What is exact and what is not.** CKS make *every* step exact: the geometric proposals and each
# Bernoulli$(e^{-\gamma})$ are drawn from random bits with rational arithmetic (their Algorithms 1 and 2),
# so the output has exactly the discrete Gaussian law. Our fast path (`secure=False`, the numba kernel)
# runs the same algorithm in 53-bit floating point: a geometric draw is $\lfloor E\,t\rfloor$ for a
# floating-point exponential $E$, and the acceptance compares a floating-point uniform with
# `exp(-gamma)`. It is **not** an exact sampler: each proposal and acceptance probability is off by a
# relative error of order $2^{-53}$ times the size of the exponent (`70_mechanisms_checks` finds it below
# $10^{-12}$ for $|y| \le 20\sigma$), a law no sample we could draw tells apart from the target, but one that is
# neither certified nor free of floating-point side channels. It is the path for simulation.
# `secure=True` is the exact one: OpenDP's integer `make_gaussian`, an implementation of CKS's
# Algorithms 1-3 with integer arithmetic and randomness from the operating system.

# %%
#| export
@njit(cache=True)
def _discrete_gaussian_kernel(sigma, n, rng):
    """n draws of N_Z(0, sigma^2) by CKS 2020 Algorithm 3 in floating point (not exact; see the text)."""
    t = math.floor(sigma) + 1.0
    s2 = sigma * sigma
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        while True:
            y = math.floor(rng.standard_exponential() * t) - math.floor(rng.standard_exponential() * t)
            d = abs(y) - s2 / t
            if rng.random() < math.exp(-d * d / (2.0 * s2)):
                out[i] = np.int64(y)
                break
    return out


def _discrete_gaussian_reference(sigma, n, rng):
    """Readable twin of the kernel (same draws in the same order)."""
    t = math.floor(sigma) + 1
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        while True:
            g1 = math.floor(rng.standard_exponential() * t)  # geometric, P(G >= g) = exp(-g / t)
            g2 = math.floor(rng.standard_exponential() * t)
            y = g1 - g2                                       # discrete Laplace with scale t
            accept = math.exp(-((abs(y) - sigma**2 / t) ** 2) / (2 * sigma**2))
            if rng.random() < accept:
                out[i] = y
                break
    return out

# %% [markdown]
# Check: the kernel equals its twin draw for draw (notebook `70_mechanisms_checks` checks the floating-point acceptance
# probabilities against 40-digit decimal arithmetic).

# %%
assert np.array_equal(_discrete_gaussian_kernel(1.7, 500, np.random.default_rng(4)),
                      _discrete_gaussian_reference(1.7, 500, np.random.default_rng(4)))

# %% [markdown]
# The log pmf and its normaliser $Z(\sigma)$.

# %%
#| export
def _discrete_gaussian_log_normalizer(sigma):
    """log Z(sigma) = log sum_j exp(-j^2 / (2 sigma^2)), accurate for every sigma > 0."""
    if sigma < 1.0:
        j = np.arange(-int(math.ceil(40 * sigma)) - 1, int(math.ceil(40 * sigma)) + 2)
        return float(special.logsumexp(-(j**2) / (2.0 * sigma**2)))
    m = np.arange(1, 6)
    return math.log(math.sqrt(2 * math.pi) * sigma) + math.log1p(
        2.0 * np.sum(np.exp(-2.0 * math.pi**2 * sigma**2 * m**2)))


def discrete_gaussian_logpmf(k, sigma, *, mu=0, normalize=True):
    """Log probability mass of the discrete Gaussian ``N_Z(mu, sigma^2)``.

    Parameters
    ----------
    k : array_like of int
        Integer points (non-integer values get ``-inf``).
    sigma : float
        Scale parameter, > 0 (not exactly the standard deviation, though very close for sigma >= 1).
    mu : int, default 0
        Integer centre.
    normalize : bool, default True
        If False, return ``-(k - mu)**2 / (2 sigma**2)`` without ``-log Z(sigma)`` (dapper's
        ``normalize = FALSE``), enough for likelihood ratios.

    Returns
    -------
    ndarray
        Log pmf at ``k``.
    """
    sigma = check.positive(sigma, "sigma")
    mu_ = check.real(mu, "mu")
    if not mu_.is_integer():
        raise ValueError(f"mu must be an integer, got {mu!r}")
    k = check.real_array(k, "k")
    out = -((k - mu_) ** 2) / (2.0 * sigma**2)
    if normalize:
        out = out - _discrete_gaussian_log_normalizer(sigma)
    return np.where(k == np.round(k), out, -np.inf)

# %% [markdown]
# Checks: both ways of computing $Z$ agree (and with a brute-force sum); the pmf is symmetric with
# variance close to $\sigma^2$ for $\sigma \ge 1$.

# %%
for s in [0.3, 0.99, 1.0, 2.5, 6.32, 40.0]:
    j = np.arange(-4000, 4001)
    brute = special.logsumexp(-(j**2) / (2 * s**2))
    assert np.isclose(_discrete_gaussian_log_normalizer(s), brute, rtol=0, atol=1e-13), s
kk = np.arange(-100, 101)
p_dg = np.exp(discrete_gaussian_logpmf(kk, 6.32))
assert np.isclose(p_dg.sum(), 1.0, atol=1e-13) and np.allclose(p_dg, p_dg[::-1])
assert np.isclose((kk**2 * p_dg).sum(), 6.32**2, rtol=1e-6)
assert np.allclose(discrete_gaussian_logpmf(kk, 2.0, mu=3, normalize=False), -((kk - 3) ** 2) / 8.0)

# %% [markdown]
# The public sampler: OpenDP's exact one by default, the float kernel with `secure=False` (simulations).

# %%
#| export
def sample_discrete_gaussian(sigma, size, *, rng=None, secure=True):
    """Draws from the discrete Gaussian ``N_Z(0, sigma^2)`` (CKS 2020, Algorithm 3).

    ``secure=True`` is the exact sampler (the default). ``secure=False`` runs the algorithm in 53-bit
    floating point (fast, seedable, for simulation): its proposal and acceptance probabilities carry
    relative rounding errors of order 1e-16, so it is close to, not exactly, the discrete Gaussian.

    Parameters
    ----------
    sigma : float
        Scale parameter, > 0.
    size : int or tuple of int
        Output shape.
    rng : None, int or numpy.random.Generator, optional
        Source of randomness (fast path only).
    secure : bool, default True
        True (the default): draw with OpenDP's integer ``make_gaussian`` (CKS 2020 with exact integer
        arithmetic, randomness from the operating system: not seedable). False: the float kernel.

    Returns
    -------
    ndarray of int64
        Draws of shape ``size``.
    """
    sigma = check.positive(sigma, "sigma")
    if sigma * sigma == 0.0:
        raise ValueError(f"sigma must be at least 1e-150 (sigma**2 underflows), got {sigma}")
    shape = _check_size(size)
    n = math.prod(shape)
    if check.boolean(secure, "secure"):
        if n == 0:
            return np.zeros(shape, dtype=np.int64)
        dp = _opendp()
        meas = dp.m.make_gaussian(
            dp.vector_domain(dp.atom_domain(T="i64")), dp.l2_distance(T="i64"), scale=sigma)
        return np.asarray(meas([0] * n), dtype=np.int64).reshape(shape)
    rng = check.rng(rng)
    return _discrete_gaussian_kernel(sigma, n, rng).reshape(shape)

# %% [markdown]
# Notebook `70_mechanisms_checks` tests the draws against the pmf (chi-square, with a 3% wrong $\sigma$ caught) and OpenDP's
# exact sampler against the fast one.

# %% [markdown]
# ## Randomized response (dapper, Example 1)
#
# Each binary answer $x \in \{0, 1\}$ is kept with probability $p$ (dapper: a fair coin, $p = 1/2$);
# otherwise it is replaced by a fair coin flip. The report $y$ equals $x$ with probability $(1 + p)/2$
# ($3/4$ for $p = 1/2$) and differs with probability $(1 - p)/2$. Changing $x$ swaps the two, so the
# worst likelihood ratio is
#
# $$\epsilon_{RR} = \log\frac{1 + p}{1 - p} \quad (\log 3 \text{ for } p = 1/2).$$
#
# A record with two answers (sex and admission in dapper's admissions table) is randomised twice, which
# costs $2\log 3$ by sequential composition: dapper's "at most $\epsilon = 2\log(3)$".

# %%
#| export
def _check_binary(x, name="x"):
    """Return x as an int64 array of 0/1, or raise naming the argument."""
    arr = np.asarray(x)
    if arr.dtype == bool:
        return arr.astype(np.int64)
    if not np.issubdtype(arr.dtype, np.number) or not np.all(np.isin(arr, (0, 1))):
        raise ValueError(f"{name} must hold binary answers (0/1 or bool)")
    return arr.astype(np.int64)


def randomized_response_epsilon(p_keep=0.5):
    """Epsilon of randomized response on one binary answer: ``log((1 + p_keep) / (1 - p_keep))``.

    Parameters
    ----------
    p_keep : float, default 0.5
        Probability of reporting the true answer before the fair coin (dapper's scheme: 1/2).

    Returns
    -------
    float
        ``log 3`` for the default.
    """
    p = check.unit_interval(p_keep, "p_keep", closed_low=True)
    return math.log1p(p) - math.log1p(-p)


def randomized_response_logpmf(y, x, p_keep=0.5):
    """Log probability of reporting ``y`` when the true answer is ``x`` (both 0/1 arrays)."""
    p = check.unit_interval(p_keep, "p_keep", closed_low=True)
    y, x = _check_binary(y, "y"), _check_binary(x, "x")
    return np.where(y == x, math.log((1 + p) / 2), math.log((1 - p) / 2))


def randomized_response(x, *, p_keep=0.5, rng=None):
    """Randomized response: keep each binary answer with probability ``p_keep``, else a fair coin.

    Parameters
    ----------
    x : array_like of {0, 1} or bool
        True answers (any shape); each entry is randomised independently.
    p_keep : float, default 0.5
        Probability of keeping the answer (dapper, Example 1: 1/2), in [0, 1).
    rng : None, int or numpy.random.Generator, optional
        Source of randomness.

    Returns
    -------
    ndarray of int64
        Reported answers, same shape; each answer costs ``randomized_response_epsilon(p_keep)``.
    """
    x = _check_binary(x)
    p = check.unit_interval(p_keep, "p_keep", closed_low=True)
    rng = check.rng(rng)
    keep = rng.random(x.shape) < p
    coin = (rng.random(x.shape) < 0.5).astype(np.int64)
    return np.where(keep, x, coin)

# %%
assert np.isclose(randomized_response_epsilon(), np.log(3))
assert randomized_response_epsilon(0.0) == 0.0
assert np.allclose(np.exp(randomized_response_logpmf([1, 0], [1, 1])), [0.75, 0.25])
# Notebook `70_mechanisms_checks` tests the reporting rates and audits the release.

# %% [markdown]
# ## When to use this
#
# * **Publishing** (a curator releasing real data): `laplace_mechanism(...)` and `geometric_mechanism(...)`
#   with their default `secure=True`. They use OpenDP's vetted samplers and cannot be seeded;
#   record each release in a `PrivacyBudget` (`03_accounting`).
# * **Simulating** (studies, bootstraps, MCMC over latent data): the fast paths, asked for with `secure=False` and seeded through
#   `rng`; same law, as tested in `70_mechanisms_checks`. In a loop, pass one `numpy.random.Generator` rather than a fresh
#   seed per call: handing a new generator to a numba kernel costs a few hundred microseconds.
# * **Counts**: the geometric mechanism keeps integers (pure $\epsilon$-DP); the discrete Gaussian has lighter
#   tails but only gives $(\epsilon, \delta)$ (or zCDP); report the exact $\epsilon$ with `discrete_gaussian_epsilon` (`03_accounting`),
#   and get the sensitivity right (dapper's Example 2 overstates it).
# * **Testing a release**: run it many times on worst-case neighbours, project to a scalar, and call
#   `audit_epsilon` (notebook `01_audit`): a bound above the claimed $\epsilon$ is a bug (95% confidence); a bound at or just under it
#   shows the audit had the power to see the whole budget. It cannot prove privacy, and it only looks at
#   tail events, so for mechanisms whose likelihood ratio is not monotone pass a cleverer scalar projection.
