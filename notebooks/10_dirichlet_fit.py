# %% [markdown]
# # The Dirichlet MLE: where it exists, special functions in numba, and a Newton solver
#
# * **For:** the maximum-likelihood estimate of the Dirichlet parameter from a statistic (a mean of log x, censored or noisy), fast also near the boundary of the range where the concentration is huge, from Python or inside numba kernels (Minka 2000; Guo et al., Sec. 2.2 and Supplement S4).
# * **You need:** a statistic $\mathbf s$: `sufficient_stat` or `censored_stat` of notebook 12, or a released noisy one.
# * **You get:** $\hat{\boldsymbol\alpha}$ with a convergence report (`dirichlet_mle`), a kernel that returns NaNs instead of raising (for samplers), the range test `in_stat_range`, and digamma, trigamma, the incomplete gamma function and the normal quantile in numba.
#
# Reading order: after notebook 12 (the model, the statistics and the likelihood); notebook 11 draws from the model.
# Everything here is importable from `dplit.dirichlet`.
#
# ## Parameters

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display
from scipy import optimize, special

from dplit.config import is_quick, size
from dplit.dirichlet import censored_stat, logx_cov, logx_mean, loglik, sufficient_stat

SEED = 20261123
rng = np.random.default_rng(SEED)
n_random_stats = size(full=400, quick=60)     # random statistics in the scipy comparison
print(f"quick mode: {is_quick()}; n_random_stats={n_random_stats}")

# %% [markdown]
# ## What it gives: the MLE in a few steps, also at the boundary
#
# Before the derivation, the result, from the finished `dplit.dirichlet`. Guo et al. (Sec. 2.2, 4.1) fit the Dirichlet
# parameter with Minka's (2000) fixed point; near the boundary of the statistic's range, where a noisy or censored
# statistic often lands (Supplement S4-S5), its step count grows like the concentration $\alpha_0 \approx (d-1)/(2\delta)$,
# with $\delta = 1 - \sum_j e^{s_j}$ the distance to the boundary (eq. 4.2 below). `dirichlet_mle` solves a
# one-dimensional Newton problem in $1/\alpha_0$ instead (section 4.2). The figure counts the steps of both for
# statistics $\delta = 10^{-1}, \dots, 10^{-10}$ inside the boundary ($d = 3$, mean $(0.2, 0.3, 0.5)$); each Newton answer
# is checked against the exact score equations $\boldsymbol\mu_{\hat\alpha} = \mathbf s$ (4.1). The fixed point runs
# only where it finishes in seconds (capped at 20,000 steps).

# %%
from dplit.dirichlet import dirichlet_mle as fit_mle
from dplit.dirichlet_fit import minka_fixed_point      # Minka's (2000) fixed point, defined in section 4


m_conv = np.array([0.2, 0.3, 0.5])
deltas = np.logspace(-1, -10, 19)
newton_steps = []
for delta in deltas:
    s = np.log(m_conv) + np.log1p(-delta)                # sum(exp(s)) = 1 - delta
    a_hat, info = fit_mle(s, return_info=True)
    # the score equations (4.1) hold as far as the rounded statistic allows
    assert info.converged and np.allclose(logx_mean(a_hat), s, rtol=0, atol=1e-13)
    newton_steps.append(info.n_iter)
fp_deltas = deltas[deltas >= size(full=1e-3, quick=1e-2)]
fp_steps = [minka_fixed_point(np.log(m_conv) + np.log1p(-delta), max_iter=20_000)[1] for delta in fp_deltas]
assert max(newton_steps) <= 6
# the fixed point needs ~ alpha_0 steps: its step count grows at least tenfold per decade of delta
assert fp_steps[-1] > 5 * fp_steps[-3]
print("delta:        ", " ".join(f"{x:8.0e}" for x in deltas[::3]))
print("Newton steps: ", " ".join(f"{x:8d}" for x in newton_steps[::3]))
print("fixed point (delta = " + ", ".join(f"{x:.0e}" for x in fp_deltas) + "):", fp_steps)

fig, ax = plt.subplots(figsize=(7, 2.8))
ax.loglog(deltas, newton_steps, "o-", label="dirichlet_mle (Newton in $1/\\alpha_0$)")
ax.loglog(fp_deltas, fp_steps, "s-", label="Minka's fixed point")
ax.loglog(fp_deltas, (len(m_conv) - 1) / (2 * fp_deltas), "k:", lw=0.8, label=r"$\alpha_0 \approx (d-1)/(2\delta)$")
ax.set_xlabel(r"$\delta = 1 - \sum_j e^{s_j}$ (distance of $\mathbf{s}$ from the boundary)", fontsize=10)
ax.set_ylabel("steps", fontsize=10)
ax.set_ylim(0.8, 1e6)
ax.invert_xaxis()
ax.tick_params(labelsize=9)
ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
fig.tight_layout()

# %%
#| default_exp dirichlet_fit
#| internal in_stat_range_kernel check_alpha check_stat trigamma_kernel gammainc_pq ndtri_lower
#| internal logx_mean_kernel logx_cov_kernel dirichlet_mle_kernel dirichlet_mle_reference
#| export
import math
from dataclasses import dataclass

import numpy as np
from numba import njit
from scipy import special

from dplit import _validate as check

_EPS = float(np.finfo(float).eps)

# %% [markdown]
# ## 1. Where an MLE exists: Range($S_0$) (Guo et al., Supplement S4)
#
# Notebook 12 showed that the log-likelihood $\ell(\boldsymbol\alpha) = n[(\boldsymbol\alpha - \mathbf 1)^\top \mathbf s - c(\boldsymbol\alpha)]$
# is concave with score $n(\mathbf s - \boldsymbol\mu_\alpha)$: the MLE solves $\boldsymbol\mu_\alpha = \mathbf s$. Which
# statistics have a solution?
#
# For one record, $\log\mathbf x$ lies on the surface $\sum_j e^{s_j} = 1$; an average of such points
# lies in its convex hull, and since $\mathbf s \mapsto \sum_j e^{s_j}$ is convex, that hull is
# $\{\mathbf s: \sum_j e^{s_j} \le 1\}$, the paper's Range($S_0$). Exponential-family theory
# (Barndorff-Nielsen's theorem) says the MLE exists, and is unique, exactly when $\mathbf s$ lies
# in the **interior** of this set: $\sum_j e^{s_j} < 1$ with every $s_j$ finite. On the boundary
# (all records equal) the likelihood grows without bound as $\alpha_0 \to \infty$.
#
# Censoring does *not* keep a statistic in the range: a censored record has
# $\sum_j \max(x_j, a) \ge 1$, so $\log\max(\mathbf x, a)$ lies on or *outside* the surface, and so can
# the average. This is behind a slip listed for Alg. 2 of Guo et al.: with a large $a$ the censored
# statistic of simulated data may have no MLE (Supplement S5), so the bootstrap must check
# `in_stat_range` first. The numba twin `in_stat_range_kernel` is there for the samplers.
#
# `check_stat` and `check_alpha` are the argument checks for a statistic and a parameter vector, shared by every
# function of `dplit.dirichlet` that takes one.

# %%
#| export
@njit(cache=True)
def in_stat_range_kernel(s):
    """True when s is finite, has d >= 2 entries and sum(exp(s)) < 1."""
    if s.shape[0] < 2:
        return False
    total = 0.0
    for j in range(s.shape[0]):
        if not math.isfinite(s[j]):
            return False
        total += math.exp(s[j])
    return total < 1.0


def check_alpha(alpha, name="alpha", ndim=None):
    """Dirichlet parameters: float array (..., d), d >= 2, finite and positive (``ndim`` fixes the rank)."""
    alpha = check.real_array(alpha, name, ndim)
    if alpha.ndim < 1 or alpha.shape[-1] < 2:
        raise ValueError(f"{name} must have a last axis of length d >= 2, got shape {alpha.shape}")
    if not np.all(np.isfinite(alpha)) or not np.all(alpha > 0):
        raise ValueError(f"{name} must be finite and positive, got {alpha}")
    return alpha


def check_stat(s, name="s", *, finite=False):
    """A statistic: 1-D float array with d >= 2 entries and no NaN (no inf either when ``finite``)."""
    s = (check.finite_array if finite else check.real_array)(s, name, ndim=1)
    if s.shape[0] < 2:
        raise ValueError(f"{name} must have d >= 2 entries, got {s.shape[0]}")
    if np.isnan(s).any():
        raise ValueError(f"{name} has a NaN entry: {s}")
    return s


def in_stat_range(s):
    """Whether a statistic lies where the Dirichlet MLE exists: sum_j exp(s_j) < 1.

    Parameters
    ----------
    s : array_like, shape (d,)
        A (possibly noisy) value of S0; infinite entries give False.

    Returns
    -------
    bool
        True when every ``s_j`` is finite and ``sum(exp(s)) < 1`` (the interior of Range(S0),
        Guo et al. Supplement S4).
    """
    s = check_stat(s)
    return bool(in_stat_range_kernel(s))

# %%
from dplit.testing import raises  # True when fn(*args) raises exc (with `match` in its message)


X_pos = np.array([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]])
assert in_stat_range(sufficient_stat(X_pos))
assert not in_stat_range(np.log([0.5, 0.5]))            # on the boundary: one record
assert not in_stat_range([-0.1, -0.1])                   # outside
assert not in_stat_range([-np.inf, -1.0])
# a censored statistic can leave the range: two records, censored at a = 0.4
X_out = np.array([[1.0, 0.0], [0.0, 1.0]])
assert not in_stat_range(censored_stat(X_out, 0.4)) and in_stat_range(censored_stat(X_out, 0.2))
assert raises(ValueError, in_stat_range, [np.nan, -1.0]) and raises(ValueError, in_stat_range, [-1.0])
assert np.array_equal(check_alpha([1, 2]), [1.0, 2.0]) and check_alpha(np.ones((4, 3))).shape == (4, 3)
assert raises(ValueError, check_alpha, [1.0, -1.0]) and raises(ValueError, check_alpha, [1.0])
assert raises(ValueError, check_alpha, np.ones((2, 2)), ndim=1)

# %% [markdown]
# ## 2. Digamma and trigamma inside numba
#
# The samplers call the MLE and the moments from numba kernels, where `scipy.special` is not
# available, so we write $\Psi$ and $\Psi_1$ ourselves. Both use the recurrences
# $\Psi(x) = \Psi(x+1) - 1/x$ and $\Psi_1(x) = \Psi_1(x+1) + 1/x^2$ to push the argument to $x \ge 10$,
# then the asymptotic (Stirling) series with Bernoulli numbers $B_{2k}$,
#
# $$\Psi(x) = \log x - \frac1{2x} - \sum_{k\ge1}\frac{B_{2k}}{2k\,x^{2k}},\qquad
# \Psi_1(x) = \frac1x + \frac1{2x^2} + \sum_{k\ge1}\frac{B_{2k}}{x^{2k+1}},$$
#
# truncated after seven terms (at $x = 10$ the next term is below $10^{-16}$ of the sum).
# We also need $\Psi(x) - \log x$ for large $x$ *without* subtracting two numbers near $\log x$:
# the series gives it directly, and the MLE below depends on it at concentrations of $10^8$.

# %%
#| export
@njit(cache=True)
def _digamma(x):
    """Digamma for x > 0: recurrence up to x >= 10, then the asymptotic series."""
    acc = 0.0
    while x < 10.0:
        acc -= 1.0 / x
        x += 1.0
    z = 1.0 / (x * x)
    series = z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (
        1.0 / 132 - z * (691.0 / 32760 - z / 12.0))))))
    return acc + math.log(x) - 0.5 / x - series


@njit(cache=True)
def _digamma_minus_log(x):
    """psi(x) - log(x) for x > 0, without cancellation for large x."""
    if x < 10.0:
        return _digamma(x) - math.log(x)
    z = 1.0 / (x * x)
    series = z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (
        1.0 / 132 - z * (691.0 / 32760 - z / 12.0))))))
    return -0.5 / x - series


@njit(cache=True)
def trigamma_kernel(x):
    """Trigamma for x > 0: recurrence up to x >= 10, then the asymptotic series."""
    acc = 0.0
    while x < 10.0:
        acc += 1.0 / (x * x)
        x += 1.0
    z = 1.0 / (x * x)
    poly = 1.0 / 6 - z * (1.0 / 30 - z * (1.0 / 42 - z * (1.0 / 30 - z * (
        5.0 / 66 - z * (691.0 / 2730 - z * 7.0 / 6)))))
    return acc + 1.0 / x + 0.5 * z + z / x * poly

# %%
xs = np.concatenate([np.logspace(-10, 12, 2201), np.linspace(0.01, 30, 3000)])
ours_psi = np.array([_digamma(v) for v in xs])
ours_psi1 = np.array([trigamma_kernel(v) for v in xs])
ref_psi, ref_psi1 = special.digamma(xs), special.polygamma(1, xs)
away = np.abs(xs - 1.4616321449683622) > 0.05          # digamma's root: compare absolutely there
assert np.max(np.abs(ours_psi - ref_psi)[~away]) < 1e-15
assert np.max(np.abs(ours_psi / ref_psi - 1)[away]) < 1e-14
assert np.max(np.abs(ours_psi1 / ref_psi1 - 1)) < 1e-14
big = np.logspace(1, 12, 200)
ours_dml = np.array([_digamma_minus_log(v) for v in big])
assert np.max(np.abs(ours_dml / (special.digamma(big) - np.log(big)) - 1)[big < 1e5]) < 1e-9
# psi(x) - log x = -1/(2x) - 1/(12x^2) + O(x^-4): checks the large-x range that scipy cannot reach by subtraction
assert np.allclose((ours_dml * big)[big > 1e3], (-0.5 - 1 / (12 * big))[big > 1e3], rtol=1e-10, atol=0)
print(f"max relative error: digamma {np.max(np.abs(ours_psi / ref_psi - 1)[away]):.1e}, "
      f"trigamma {np.max(np.abs(ours_psi1 / ref_psi1 - 1)):.1e}")

# %% [markdown]
# **The incomplete gamma function and the normal quantile.** The Gaussian-copula prior p4 (notebook 18) needs,
# inside the samplers' kernels, $z = \Phi^{-1}(P(v, w\alpha))$ with $P$ the regularised lower incomplete gamma
# function. `gammainc_pq(a, x)` returns $(P, Q = 1 - P)$ both accurately (series for $x < a + 1$, Lentz's continued
# fraction for $Q$ beyond), so that the upper tail is taken from $Q$ without cancellation; `ndtri_lower(p)`
# is $\Phi^{-1}(p)$ for $p \le 1/2$ (Acklam's rational approximation refined by one Halley step on
# $\Phi(x) = p$), used as $-\Phi^{-1}(Q)$ in the upper half. They live here with digamma and trigamma: one home
# for the numba special functions of the package.

# %%
#| export
@njit(cache=True, nogil=True)
def gammainc_pq(a, x):
    """Regularised incomplete gamma functions (P(a, x), Q(a, x)) by series or continued fraction."""
    if x <= 0.0:
        return 0.0, 1.0
    log_pre = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1.0:
        term = 1.0 / a
        total = term
        ap = a
        for _ in range(100_000):
            ap += 1.0
            term *= x / ap
            total += term
            if abs(term) < abs(total) * 1e-16:
                break
        p = total * math.exp(log_pre)
        return p, 1.0 - p
    tiny = 1e-300                       # Lentz's method for the continued fraction of Q
    bb = x + 1.0 - a
    c = 1.0 / tiny
    dd = 1.0 / bb
    h = dd
    for i in range(1, 100_000):
        an = -i * (i - a)
        bb += 2.0
        dd = an * dd + bb
        if abs(dd) < tiny:
            dd = tiny
        c = bb + an / c
        if abs(c) < tiny:
            c = tiny
        dd = 1.0 / dd
        delta = dd * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    q = math.exp(log_pre) * h
    return 1.0 - q, q

# %%
#| export
@njit(cache=True, nogil=True)
def ndtri_lower(p):
    """Standard normal quantile for 0 < p <= 1/2 (Acklam's approximation, one Halley step)."""
    if p <= 0.0:
        return -np.inf
    if p < 0.02425:
        q = math.sqrt(-2.0 * math.log(p))
        x = ((((((-7.784894002430293e-03 * q - 3.223964580411365e-01) * q - 2.400758277161838e00)
                * q - 2.549732539343734e00) * q + 4.374664141464968e00) * q + 2.938163982698783e00)
             / ((((7.784695709041462e-03 * q + 3.224671290700398e-01) * q + 2.445134137142996e00)
                 * q + 3.754408661907416e00) * q + 1.0))
    else:
        q = p - 0.5
        r = q * q
        x = ((((((-3.969683028665376e01 * r + 2.209460984245205e02) * r - 2.759285104469687e02)
                * r + 1.383577518672690e02) * r - 3.066479806614716e01) * r + 2.506628277459239e00)
             * q / (((((-5.447609879822406e01 * r + 1.615858368580409e02) * r
                       - 1.556989798598866e02) * r + 6.680131188771972e01) * r
                     - 1.328068155288572e01) * r + 1.0))
    e = 0.5 * math.erfc(-x / math.sqrt(2.0)) - p          # Halley step on Phi(x) = p
    u = e * math.sqrt(2.0 * math.pi) * math.exp(0.5 * x * x)
    return x - u / (1.0 + 0.5 * x * u)

# %%
shapes_g = np.array([0.05, 0.5, 1.0, 3.0, 40.0, 900.0])
xs_g = np.logspace(-6, 4, 301)
pq = np.array([[gammainc_pq(a_, x_) for x_ in xs_g] for a_ in shapes_g])
ref_p = special.gammainc(shapes_g[:, None], xs_g[None, :])
ref_q = special.gammaincc(shapes_g[:, None], xs_g[None, :])
assert np.allclose(pq[..., 0], ref_p, rtol=1e-11, atol=1e-300)
tail = ref_q > 1e-300
assert np.allclose(pq[..., 1][tail], ref_q[tail], rtol=1e-11)        # Q accurate far in the upper tail
ps = np.concatenate([np.logspace(-300, -1, 600), np.linspace(0.1, 0.5, 200)])
ours_z = np.array([ndtri_lower(v) for v in ps])
low = ps < 0.49                                                     # away from ndtri(0.5) = 0
assert np.max(np.abs(ours_z[low] / special.ndtri(ps[low]) - 1)) < 1e-14
assert np.max(np.abs(ours_z - special.ndtri(ps))) < 1e-13 and ndtri_lower(0.0) == -np.inf
print("incomplete gamma and normal quantile agree with scipy.special")


# %% [markdown]
# ## 3. The moments of log x inside numba
#
# The samplers need $\boldsymbol\mu_\alpha$ and $\boldsymbol\Sigma_\alpha$ of notebook 12 (section 4) for one $\boldsymbol\alpha$ at a
# time inside their kernels: the same two formulas with the digamma and trigamma of section 2, checked against
# the SciPy versions `logx_mean` and `logx_cov`.

# %%
#| export
@njit(cache=True)
def logx_mean_kernel(alpha):
    """numba twin of logx_mean for one alpha (d,)."""
    out = np.empty(alpha.shape[0])
    p0 = _digamma(alpha.sum())
    for j in range(alpha.shape[0]):
        out[j] = _digamma(alpha[j]) - p0
    return out


@njit(cache=True)
def logx_cov_kernel(alpha):
    """numba twin of logx_cov for one alpha (d,)."""
    d = alpha.shape[0]
    out = np.full((d, d), -trigamma_kernel(alpha.sum()))
    for j in range(d):
        out[j, j] += trigamma_kernel(alpha[j])
    return out

# %%
alpha_m = np.array([0.5, 2.0, 7.0])
assert np.allclose(logx_mean_kernel(alpha_m), logx_mean(alpha_m), rtol=1e-13)       # numba twins
assert np.allclose(logx_cov_kernel(alpha_m), logx_cov(alpha_m), rtol=1e-13)

# %% [markdown]
# ## 4. The maximum-likelihood estimator
#
# ### 4.1 The score equations and Minka's fixed point
#
# Setting the score to zero, the MLE $\hat{\boldsymbol\alpha}$ of a statistic $\mathbf s$ solves
#
# $$\Psi(\alpha_j) - \Psi(\alpha_0) = s_j, \qquad j = 1, \dots, d. \tag{4.1}$$
#
# Minka (2000, eq. 9) iterates $\alpha_j \leftarrow \Psi^{-1}\big(\Psi(\alpha_0^{\text{old}}) + s_j\big)$,
# a convergent fixed point (each step maximises a lower bound of $\ell$). It is the method Guo et al.
# cite (Sec. 2.2, 4.1). It is fine for moderate concentrations but **crawls** when $\alpha_0$ is
# large. Write $\boldsymbol\alpha = c\,\mathbf m$ with precision $c = \alpha_0$ and mean
# $\mathbf m$ on the simplex, and $\delta = 1 - \sum_j e^{s_j}$, the distance of the statistic from the
# boundary of the range. From $\Psi(x) = \log x - 1/(2x) + O(x^{-2})$, (7.1) gives
# $e^{s_j} \approx m_j - (1 - m_j)/(2c)$, and summing over $j$,
#
# $$\delta \approx \frac{d - 1}{2c}, \qquad\text{so}\qquad \hat\alpha_0 \approx \frac{d-1}{2\delta}.\tag{4.2}$$
#
# A statistic $10^{-4}$ inside the boundary has $\hat\alpha_0 \approx 5000(d-1)$. Now follow the fixed point
# along the precision: for large arguments $\Psi^{-1}(y) \approx e^{y} + 1/2$ and $\Psi(c) \approx \log(c - 1/2)$, so one step
# maps $c = \alpha_0^{\text{old}}$ to $\sum_j\big[(c - \tfrac12)e^{s_j} + \tfrac12\big] = (1-\delta)\,c + \text{const}$.
# The error in $c$ shrinks by the factor $1 - \delta$ per step: reaching a relative tolerance `tol` takes about
# $\log(1/\mathtt{tol})/\delta$ steps, some 20,000 at $\delta = 10^{-3}$ (the first figure counts them). This is the
# regime DPBoots enters when $a$ is large (Guo et al., S5).
#
# ### 4.2 A one-dimensional Newton problem
#
# The score equations reduce exactly to one equation in the precision $c$. Given $c$, equation (4.1)
# with $\alpha_0 = c$ fixes each $\alpha_j$ separately: $\alpha_j = c\,r_j(c)$ where the ratio
# $r_j(c)$ solves
#
# $$\log r_j + \tilde\Psi(c\, r_j) = s_j + \tilde\Psi(c), \qquad \tilde\Psi(x) = \Psi(x) - \log x. \tag{4.3}$$
#
# (That is (4.1) with $\log c$ subtracted from both sides; written this way no quantity of size
# $\log c$ is ever subtracted from another, which keeps full precision at $c = 10^{8}$.)
# The left side is increasing and concave in $r_j$, so Newton's method from Minka's starting point for
# $\Psi^{-1}$ ($e^{y} + 1/2$ for $y \ge -2.22$, else $-1/(y + \gamma)$) converges monotonically after its first
# step, to machine precision in a few steps. The MLE is then the root of
#
# $$H(c) = \sum_j r_j(c) - 1, \qquad H'(c) = \frac1c\sum_j\Big(\frac{\Psi_1(c)}{\Psi_1(c\,r_j)} - r_j\Big),$$
#
# ($H'$ by differentiating (4.3)). $H > 0$ for small $c$ ($r_j \to 1$) and $H \to -\delta$ as $c\to\infty$
# ($r_j \to e^{s_j}$), so a root exists exactly when $\delta > 0$: the range check of section 1 again.
# The shape of $H$ at both ends tells us which Newton to use:
#
# * large $c$: $r_j \approx e^{s_j} + (1 - e^{s_j})/(2c)$, so $H \approx -\delta + (d - \sum_j e^{s_j})/(2c)$ is
#   linear in $w = 1/c$. Newton in $w$, $w \leftarrow w + H/(c^2H')$ (Minka's "generalized Newton" for the
#   precision), is exact in this limit: near the boundary it converges in one or two steps from the start
#   $c_{\text{large}} = (d - \sum_j e^{s_j})/(2\delta)$;
# * small $c$: $\Psi(x) \approx -1/x$ gives $r_j \approx 1 + c\,s_j$ and $H \approx (d-1) + c\sum_j s_j$, linear in $c$:
#   ordinary Newton in $c$ is exact, from $c_{\text{small}} = (d-1)/(-\sum_j s_j)$.
#
# We start at $\max(c_{\text{small}}, c_{\text{large}})$, take the Newton step in $w$ when $c \ge 1$ and in $c$
# otherwise, and keep a bracket $[c_{lo}, c_{hi}]$ with $H(c_{lo}) > 0 > H(c_{hi})$: a step that leaves the
# bracket is replaced by the other Newton step, then by bisection (in $\log c$). So the iteration
# cannot diverge and is quadratic near the root.
#
# **Convergence test.** We stop when a step changes $c$ by less than `tol` relative, or when
# $|H(c)|$ is at the level of its rounding error (in both cases after taking that last step and
# evaluating the ratios there),
# $4\,\varepsilon\sum_j r_j(2 + |s_j|)$ (a few times the spread we measured). The second test matters near the boundary: the statistic itself
# is known only to rounding ($\approx\varepsilon$ in $\sum_j e^{s_j}$), which moves $\hat\alpha_0$ by a relative
# $\varepsilon/\delta$, about $10^{-8}$ at $\delta = 10^{-8}$; no algorithm can be more precise than that, and a
# step test with `tol = 1e-10` would then never pass. A third test stops when the bracket has closed to `tol` (rounding can make the signs of $H$ cross there). Outside the range, or without convergence
# within `max_iter` steps, the kernel returns NaNs and the public driver raises.

# %%
#| export
@njit(cache=True)
def _inv_digamma_start(y):
    """Minka's (2000) starting point for the inverse digamma of y."""
    if y >= -2.22:
        return math.exp(y) + 0.5
    return -1.0 / (y + 0.5772156649015329)


@njit(cache=True)
def _ratio_kernel(s_j, c, dml_c):
    """r = alpha_j / c solving log r + (psi - log)(r c) = s_j + dml_c (eq. 4.3), by Newton."""
    target = s_j + dml_c
    r = _inv_digamma_start(_digamma(c) + s_j) / c
    for _ in range(100):
        x = r * c
        f = math.log(r) + _digamma_minus_log(x) - target
        r_new = r - f / (c * trigamma_kernel(x))
        if r_new <= 0.0:
            r_new = 0.1 * r
        if abs(r_new - r) <= 4.0 * _EPS * r:
            return r_new
        r = r_new
    return r


@njit(cache=True)
def _profile_kernel(s, c, r):
    """Fill r with r_j(c); return H(c), H'(c) and the rounding level of H."""
    dml_c = _digamma_minus_log(c)
    t1c = trigamma_kernel(c)
    total = 0.0
    dtotal = 0.0
    floor = 0.0
    for j in range(s.shape[0]):
        rj = _ratio_kernel(s[j], c, dml_c)
        r[j] = rj
        total += rj
        dtotal += t1c / trigamma_kernel(rj * c) - rj
        floor += rj * (2.0 + abs(s[j]))
    return total - 1.0, dtotal / c, 4.0 * _EPS * floor + _EPS

# %% [markdown]
# Check: at the statistic of a known $\boldsymbol\alpha$, $\mathbf s = \boldsymbol\mu_\alpha$, and at its
# $c = \alpha_0$, the inner Newton solves to $r_j = \alpha_j / \alpha_0$, so the profile $H(c)$ is zero.

# %%
r_chk = np.empty(3)
H_chk, dH_chk, floor_chk = _profile_kernel(logx_mean(alpha_m), alpha_m.sum(), r_chk)
assert np.allclose(r_chk, alpha_m / alpha_m.sum(), rtol=1e-12) and abs(H_chk) < 1e-12 and dH_chk < 0

# %% [markdown]
# The outer loop: safeguarded Newton on $c$ inside a shrinking bracket.

# %%
#| export
@njit(cache=True)
def _dirichlet_mle_core(s, tol, max_iter):
    """MLE of alpha from s: (alpha, iterations, status 0 ok / 1 not converged / 2 outside the range)."""
    d = s.shape[0]
    alpha = np.full(d, np.nan)
    if not in_stat_range_kernel(s):
        return alpha, 0, 2
    total = 0.0
    ssum = 0.0
    for j in range(d):
        total += math.exp(s[j])
        ssum += s[j]
    delta = 1.0 - total
    c = max((d - 1.0) / (-ssum), (d - total) / (2.0 * delta))
    lo = 0.0
    hi = np.inf
    r = np.empty(d)
    for it in range(1, max_iter + 1):
        H, dH, floor = _profile_kernel(s, c, r)
        if H == 0.0:
            for j in range(d):
                alpha[j] = c * r[j]
            return alpha, it, 0
        if H > 0.0:
            lo = c
        else:
            hi = c
        if hi - lo <= tol * c:                     # bracket closed (or crossed by rounding)
            for j in range(d):
                alpha[j] = c * r[j]
            return alpha, it, 0
        c_w = -1.0                                 # Newton in w = 1/c
        c_c = -1.0                                 # Newton in c
        if dH < 0.0:
            w_new = 1.0 / c + H / (c * c * dH)
            if w_new > 0.0:
                c_w = 1.0 / w_new
            c_c = c - H / dH
        first, second = (c_w, c_c) if c >= 1.0 else (c_c, c_w)
        if lo < first < hi:
            c_new = first
        elif lo < second < hi:
            c_new = second
        elif hi == np.inf:
            c_new = 4.0 * c
        elif lo == 0.0:
            c_new = 0.25 * c
        else:
            c_new = math.sqrt(lo * hi)
        if abs(c_new - c) <= tol * c or abs(H) <= floor:
            _profile_kernel(s, c_new, r)
            for j in range(d):
                alpha[j] = c_new * r[j]
            return alpha, it, 0
        c = c_new
    return alpha, max_iter, 1

# %%
#| export
@njit(cache=True)
def dirichlet_mle_kernel(s, tol, max_iter):
    """MLE of alpha from s (float64 (d,)); NaNs when s is outside the range or no convergence."""
    alpha, _, status = _dirichlet_mle_core(s, tol, max_iter)
    if status != 0:
        alpha[:] = np.nan
    return alpha

# %% [markdown]
# The readable twin: the same algorithm in vectorised numpy with `scipy.special`, used by the
# tests (it checks our numba digamma and trigamma too) and as the benchmark baseline.

# %%
#| export
def _dml_reference(x):
    """psi(x) - log(x) with scipy: direct below 10, asymptotic series above."""
    x = np.asarray(x, dtype=float)
    z = 1.0 / x**2
    series = -0.5 / x - z * (1 / 12 - z * (1 / 120 - z * (1 / 252 - z * (1 / 240 - z * (
        1 / 132 - z * (691 / 32760 - z / 12))))))
    return np.where(x < 10, special.digamma(x) - np.log(x), series)

# %%
#| export
def dirichlet_mle_reference(s, tol=1e-10, max_iter=100):
    """Readable twin of _dirichlet_mle_core: (alpha, iterations, status)."""
    s = np.asarray(s, dtype=float)
    d = s.size
    if d < 2 or not np.all(np.isfinite(s)) or np.exp(s).sum() >= 1:
        return np.full(d, np.nan), 0, 2

    def profile(c):
        y = special.digamma(c) + s                    # start of Newton for r = psi^{-1}(y) / c
        r = np.where(y >= -2.22, np.exp(y) + 0.5, -1 / (y - special.digamma(1.0))) / c
        target = s + _dml_reference(c)
        for _ in range(100):
            f = np.log(r) + _dml_reference(r * c) - target
            r_new = r - f / (c * special.polygamma(1, r * c))
            r_new = np.where(r_new <= 0, 0.1 * r, r_new)
            done = np.all(np.abs(r_new - r) <= 4 * _EPS * r)
            r = r_new
            if done:
                break
        H = r.sum() - 1
        dH = (special.polygamma(1, c) / special.polygamma(1, r * c) - r).sum() / c
        return r, H, dH, 4 * _EPS * np.sum(r * (2 + np.abs(s))) + _EPS

    total = np.exp(s).sum()
    c = max((d - 1) / -s.sum(), (d - total) / (2 * (1 - total)))
    lo, hi = 0.0, np.inf
    for it in range(1, max_iter + 1):
        r, H, dH, floor = profile(c)
        if H == 0:
            return c * r, it, 0
        lo, hi = (c, hi) if H > 0 else (lo, c)
        if hi - lo <= tol * c:                      # bracket closed (or crossed by rounding)
            return c * r, it, 0
        c_w = c_c = -1.0
        if dH < 0:
            w_new = 1 / c + H / (c * c * dH)        # Newton in w = 1/c
            c_w = 1 / w_new if w_new > 0 else -1.0
            c_c = c - H / dH                        # Newton in c
        candidates = [c_w, c_c] if c >= 1 else [c_c, c_w]
        inside = [x for x in candidates if lo < x < hi]
        if inside:
            c_new = inside[0]
        elif hi == np.inf:
            c_new = 4 * c
        elif lo == 0:
            c_new = c / 4
        else:
            c_new = np.sqrt(lo * hi)
        if abs(c_new - c) <= tol * c or abs(H) <= floor:
            return c_new * profile(c_new)[0], it, 0
        c = c_new
    return np.full(d, np.nan), max_iter, 1

# %%
#| export
def minka_fixed_point(s, tol=1e-10, max_iter=100_000):
    """Minka's (2000) fixed point alpha_j <- psi^{-1}(psi(alpha_0) + s_j), for comparison only: (alpha, steps).

    It needs about alpha_0 steps, so it crawls near the edge of the range where Newton on the profile does not
    (the first figure; ``benchmarks/bench_dirichlet.py`` times both). ``steps == max_iter``: not converged.
    """
    s = check_stat(s)
    if not in_stat_range(s):
        raise ValueError("s must satisfy sum(exp(s)) < 1: no MLE exists outside the range of the statistic")
    alpha = np.ones_like(s)
    for it in range(1, check.count(max_iter, "max_iter") + 1):
        y = special.digamma(alpha.sum()) + s
        x = np.where(y >= -2.22, np.exp(y) + 0.5, -1 / (y - special.digamma(1.0)))
        for _ in range(5):
            x = x - (special.digamma(x) - y) / special.polygamma(1, x)
        if np.max(np.abs(x - alpha) / alpha) < tol:
            return x, it
        alpha = x
    return alpha, max_iter

# %% [markdown]
# The public driver validates, runs the numba kernel and packages the result.

# %%
#| export
@dataclass(frozen=True)
class MLEInfo:
    """Convergence report of :func:`dirichlet_mle`.

    Attributes
    ----------
    converged : bool
    n_iter : int
        Newton steps taken.
    concentration : float
        ``sum(alpha)``.
    max_score : float
        Largest ``|psi(alpha_0) - psi(alpha_j) + s_j|`` at the returned alpha (the score per record).
    distance : float
        ``1 - sum(exp(s))``, how far ``s`` lies inside the range.
    """

    converged: bool
    n_iter: int
    concentration: float
    max_score: float
    distance: float

# %%
#| export
def dirichlet_mle(s, *, tol=1e-10, max_iter=100, return_info=False):
    """Maximum-likelihood estimate of Dirichlet parameters from a statistic.

    Solves ``psi(alpha_j) - psi(alpha_0) = s_j`` by a safeguarded Newton iteration on the
    precision ``alpha_0`` (notebook 10, section 4; Minka 2000), fast also for statistics
    very close to the boundary of the range, where ``alpha_0`` is huge.

    Parameters
    ----------
    s : array_like, shape (d,)
        A statistic inside the range: finite, ``sum(exp(s)) < 1`` (see :func:`in_stat_range`).
    tol : float, optional
        Relative change of ``alpha_0`` at which to stop (the iteration also stops when the
        score equation holds to rounding error).
    max_iter : int, optional
        Most Newton steps.
    return_info : bool, optional
        Also return an :class:`MLEInfo`, and do not raise when the iteration does not converge.

    Returns
    -------
    alpha : ndarray, shape (d,)
    info : MLEInfo
        Only when ``return_info`` is True.

    Raises
    ------
    ValueError
        If ``s`` is outside the range (no MLE exists) or the options are invalid.
    RuntimeError
        If the iteration does not converge within ``max_iter`` steps (unless ``return_info``).
    """
    s = check_stat(s)
    if not (isinstance(tol, (float, int, np.floating)) and 0 < tol < 1):
        raise ValueError(f"tol must be a number in (0, 1), got {tol!r}")
    if isinstance(max_iter, (bool, np.bool_)) or not isinstance(max_iter, (int, np.integer)):
        raise TypeError(f"max_iter must be an integer, got {type(max_iter).__name__}")
    if max_iter < 1:
        raise ValueError(f"max_iter must be >= 1, got {max_iter}")
    if not in_stat_range_kernel(s):
        raise ValueError(
            f"s is outside Range(S0): need finite entries with sum(exp(s)) < 1, got "
            f"sum(exp(s)) = {np.exp(s).sum()!r}; no MLE exists (check in_stat_range(s) first)")
    alpha, n_iter, status = _dirichlet_mle_core(s, float(tol), int(max_iter))
    if status != 0 and not return_info:
        raise RuntimeError(f"dirichlet_mle did not converge in max_iter={max_iter} steps for s={s}")
    if not return_info:
        return alpha
    score = special.digamma(alpha.sum()) - special.digamma(alpha) + s
    info = MLEInfo(converged=status == 0, n_iter=int(n_iter), concentration=float(alpha.sum()),
                   max_score=float(np.max(np.abs(score))), distance=float(1 - np.exp(s).sum()))
    return alpha, info

# %% [markdown]
# ### 4.3 Checks of the MLE
#
# First the exact answer: the statistic $\boldsymbol\mu_\alpha$ has MLE $\boldsymbol\alpha$ (the score is zero there).
# Then the test: on random statistics from many $\boldsymbol\alpha$ (from 0.1 to 100, $d$ from 2 to 10,
# with noise so that they are not exact means) the MLE agrees to $10^{-8}$ relative with a direct
# `scipy.optimize` maximisation of `loglik` in $\log\boldsymbol\alpha$, with the readable twin, and the numba
# kernel returns the same numbers as the public driver.

# %%
alpha_true = np.array([3.3, 4.4])
a_hat, info = dirichlet_mle(logx_mean(alpha_true), return_info=True)
assert np.allclose(a_hat, alpha_true, rtol=1e-12) and info.converged and info.max_score < 1e-13
print(a_hat, info)


def scipy_mle(s):
    """Direct maximisation of the log-likelihood with scipy (BFGS in log alpha, then Newton polish)."""
    d = len(s)

    def score(u):
        return special.digamma(np.exp(u).sum()) - special.digamma(np.exp(u)) + s

    def fun(u):
        return -loglik(np.exp(u), s, 1.0)

    def jac(u):
        return -np.exp(u) * score(u)

    res = optimize.minimize(fun, np.zeros(d), jac=jac, method="BFGS",
                            options={"gtol": 1e-12, "maxiter": 10_000})
    # polish: the score equations, solved by a root finder from the BFGS point
    root = optimize.root(score, res.x, method="hybr", options={"xtol": 1e-14})
    return np.exp(root.x)


worst_scipy = worst_ref = 0.0
for _ in range(n_random_stats):
    d = int(rng.integers(2, 11))
    alpha = np.exp(rng.uniform(np.log(0.1), np.log(100), d))
    X = rng.dirichlet(alpha, size=int(rng.integers(20, 200)))
    X = np.clip(X, 1e-300, None)
    s = np.log(X).mean(axis=0)                       # a genuine random statistic
    a_ours = dirichlet_mle(s)
    worst_scipy = max(worst_scipy, np.max(np.abs(scipy_mle(s) / a_ours - 1)))
    a_ref, _, status = dirichlet_mle_reference(s)
    worst_ref = max(worst_ref, np.max(np.abs(a_ref / a_ours - 1)))
    assert np.array_equal(dirichlet_mle_kernel(s, 1e-10, 100), a_ours)
assert worst_scipy < 1e-8 and worst_ref < 1e-10
print(f"largest relative difference: scipy.optimize {worst_scipy:.1e}, reference twin {worst_ref:.1e}")

# %% [markdown]
# Near the boundary: statistics $\delta = 10^{-2}, \dots, 10^{-8}$ inside the range, for several $d$ and means.
# We know the answer to first order from (4.2), and exactly through the score: the returned
# $\hat{\boldsymbol\alpha}$ must satisfy (4.1) to rounding, and the number of Newton steps must stay small.
# Then exact answers at huge concentrations: for $\boldsymbol\alpha = c\,\mathbf m$ with $c$ up to $10^{10}$ we compute
# $\boldsymbol\mu_\alpha$ without cancellation, $\mu_j = \log m_j + \tilde\Psi(\alpha_j) - \tilde\Psi(c)$, and ask for
# $\boldsymbol\alpha$ back within the precision the rounded statistic carries, $20\,\varepsilon/\delta$ relative.
# Minka's plain fixed point (`minka_fixed_point`, defined with the reference above) is shown for contrast.

# %%
rows = []
for delta in [1e-2, 1e-3, 1e-4, 1e-6, 1e-8]:
    for d in [2, 5, 10]:
        m = rng.dirichlet(np.ones(d))
        s = np.log(m) + np.log1p(-delta)               # sum(exp(s)) = 1 - delta
        a_hat, info = dirichlet_mle(s, return_info=True)
        a_ref, it_ref, st_ref = dirichlet_mle_reference(s)
        assert info.converged and info.n_iter <= 6
        # the score holds to rounding of the statistic
        assert info.max_score < 1e-13
        assert np.isclose(a_hat.sum(), (d - 1) / (2 * delta), rtol=1 / a_hat.min())  # (4.2), error O(1/alpha_j)
        assert np.allclose(a_ref, a_hat, rtol=1e-13 / delta)   # both as precise as s allows
        rows.append((delta, d, a_hat.sum(), info.n_iter))
for c in [1e2, 1e4, 1e6, 1e8, 1e10]:
    for d in [2, 5, 10]:
        alpha = c * rng.dirichlet(np.full(d, 3.0))
        mu = np.log(alpha / alpha.sum()) + np.array([_digamma_minus_log(a) - _digamma_minus_log(alpha.sum())
                                                     for a in alpha])
        a_hat, info = dirichlet_mle(mu, return_info=True)
        assert info.n_iter <= 4 and np.allclose(a_hat, alpha, rtol=20 * np.finfo(float).eps / info.distance + 1e-12, atol=0)
fp_steps_d2 = {delta: minka_fixed_point(np.log([0.3, 0.7]) + np.log1p(-delta))[1] for delta in [1e-2, 1e-3]}
print("delta      d   alpha_0          Newton steps")
for delta, d, a0, it in rows:
    print(f"{delta:7.0e} {d:3d}   {a0:14.6g}   {it}")
print("Minka's fixed point, d = 2:", {k: f"{v} steps" for k, v in fp_steps_d2.items()})

# %% [markdown]
# Bad input: a statistic outside the range must raise (no MLE exists), as must malformed options.
# The kernel returns NaNs instead, for the samplers to test with `np.isnan`.

# %%
assert raises(ValueError, dirichlet_mle, [-0.1, -0.1], match="outside Range")
assert raises(ValueError, dirichlet_mle, np.log([0.5, 0.5]), match="outside Range")
assert raises(ValueError, dirichlet_mle, [-1.0])
assert raises(ValueError, dirichlet_mle, [-1.0, -1.0], tol=0)
assert raises(TypeError, dirichlet_mle, [-1.0, -1.0], max_iter=2.5)
assert np.isnan(dirichlet_mle_kernel(np.array([-0.1, -0.1]), 1e-10, 100)).all()
assert np.isnan(dirichlet_mle_kernel(logx_mean(np.array([1.0, 2.0, 3.0])), 1e-10, 1)).all()  # cap
a_cap, info_cap = dirichlet_mle(logx_mean(np.array([1.0, 2.0, 3.0])), max_iter=1, return_info=True)
assert not info_cap.converged and np.isnan(a_cap).all()
assert raises(RuntimeError, dirichlet_mle, logx_mean(np.array([1.0, 2.0, 3.0])), max_iter=1)

# %% [markdown]
# ## 5. Why Newton in $1/c$
#
# The first figure counts the steps: at most a handful for `dirichlet_mle` from $\delta = 10^{-1}$ down to $10^{-10}$, where
# Minka's fixed point grows like $1/\delta$, i.e. like $\alpha_0 \approx (d-1)/(2\delta)$, as predicted at the start of section 4.
# This figure shows why Newton in $w = 1/c$ is the right tool near the boundary: $H$ is a hyperbola in $c$ and a straight
# line in $1/c$. (The time per call is a benchmark, not part of this tutorial: `benchmarks/bench_dirichlet.py` measures
# the kernel against the readable twin and SciPy.)

# %%
# NBVAL_IGNORE_OUTPUT
fig, ax1 = plt.subplots(figsize=(7, 3.2))
s_b = np.log(m_conv) + np.log1p(-1e-3)
c_hat = dirichlet_mle(s_b).sum()
cs = c_hat * np.logspace(-1.5, 1.5, 200)
r_tmp = np.empty(3)
Hs = np.array([_profile_kernel(s_b, c, r_tmp)[0] for c in cs])
ax1.plot(1 / cs, Hs, label=r"$H$ against $w = 1/c$")
ax1.axhline(0, c="k", lw=0.6)
ax1.axvline(1 / c_hat, c="k", ls=":", lw=0.8)
ax1.set_xlabel(r"$w = 1/c$")
ax1.set_ylabel(r"$H(c) = \sum_j r_j(c) - 1$")
ax1b = ax1.twiny()
ax1b.plot(cs, Hs, "C1", alpha=0.7)
ax1b.set_xlabel(r"$c$ (orange)", color="C1")
for axis in (ax1, ax1b):
    axis.ticklabel_format(axis="x", style="sci", scilimits=(0, 0))
ax1.set_title(r"$\delta = 10^{-3}$", fontsize=10)
fig.tight_layout()

# %% [markdown]
# ## When to use this

# %%
i_fp = len(fp_deltas) - 1
display(Markdown(f"""
* **Estimating**: `dirichlet_mle(s)` for one statistic (with `return_info=True` for the convergence report); inside
  numba loops (bootstrap, ABC) call `dirichlet_mle_kernel(s, tol, max_iter)` and test the result with `np.isnan`.
  Over the statistics of the first figure ($\\delta$ from $10^{{-1}}$ to $10^{{-10}}$) it took at most {max(newton_steps)} Newton
  steps, where Minka's fixed point, which Guo et al. cite, took {fp_steps[i_fp]:,} steps at
  $\\delta = 10^{{{np.log10(fp_deltas[i_fp]):.0f}}}$: do not use the fixed point near the boundary.
* **Before estimating from a noisy statistic** check `in_stat_range(s)` (or `in_stat_range_kernel`): outside the range
  there is no MLE, and just inside it the MLE is real but its precision is huge and only as accurate as
  $\\varepsilon/\\delta$ allows (section 4.2).
* **Special functions in numba**: `trigamma_kernel`, `gammainc_pq` and `ndtri_lower` for other kernels (the samplers
  and the copula prior p4 of notebook 18); in Python, use `scipy.special`.
"""))
