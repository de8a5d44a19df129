# %% [markdown]
# # The Dirichlet model: statistics, likelihood, MLE and fast draws
#
# Validating compositions, the sufficient statistic and its censored version, the log-likelihood, a Newton MLE that stays fast at huge concentrations, the moments of log x, and Dirichlet draws in numba.

# %%
#| default_exp dirichlet

# %% [markdown]
# Every compositional method in dplit (the release, DPBoots, the MCMC samplers, ABC, the asymptotic
# Gibbs sampler, the simulation study) stands on this notebook. It follows Guo, Barrientos & Peña
# ("Guo et al."), Sec. 2.2 (the model), 3.1 (the censored statistic), 4.2.4 (the moments of
# $\log x$) and Supplement S4 (the range of the statistic), and Minka (2000), *Estimating a
# Dirichlet distribution*, for the maximum-likelihood estimator.
#
# ## Parameters

# %%
# %matplotlib inline
import math
import time

import matplotlib.pyplot as plt
import numpy as np
from scipy import optimize, special, stats

from dplit.config import is_quick, size

SEED = 20261123
rng = np.random.default_rng(SEED)
n_random_stats = size(full=400, quick=60)     # random statistics in the scipy comparison
n_mc = size(full=400_000, quick=40_000)       # Monte Carlo draws for the moments of log x
n_recover = size(full=200, quick=40)          # replications in the recovery check
n_timing = size(full=20_000, quick=2_000)     # MLE calls timed in the convergence study
n_ks_gamma = size(full=50_000, quick=10_000)  # gamma draws per KS test
print(f"quick mode: {is_quick()}; n_random_stats={n_random_stats}, n_mc={n_mc}")

# %% [markdown]
# ## 1. The model (Guo et al., Sec. 2.2)
#
# A record is a composition $\mathbf x = (x_1,\dots,x_d)$ in the simplex
# $\Delta_{d-1} = \{x_j \ge 0,\ \sum_j x_j = 1\}$ (shares of a day spent on $d$ activities, say).
# The data $\mathbf D = \{\mathbf x_i\}_{i=1}^n$ are i.i.d. $\mathrm{Dirichlet}(\boldsymbol\alpha)$,
# with density (with respect to Lebesgue measure on the first $d-1$ coordinates)
#
# $$p(\mathbf x \mid \boldsymbol\alpha) = \frac{\Gamma(\alpha_0)}{\prod_j \Gamma(\alpha_j)} \prod_j x_j^{\alpha_j - 1},
# \qquad \alpha_0 = \sum_j \alpha_j .$$
#
# Taking logs and summing over the records,
#
# $$\log p(\mathbf D \mid \boldsymbol\alpha) = (\boldsymbol\alpha - \mathbf 1)^\top n S_0(\mathbf D) - C(\boldsymbol\alpha),
# \qquad S_0(\mathbf D) = \frac1n \Big(\sum_i \log x_{i1}, \dots, \sum_i \log x_{id}\Big)^\top,$$
#
# $$C(\boldsymbol\alpha) = n\Big(\sum_j \log\Gamma(\alpha_j) - \log\Gamma(\alpha_0)\Big).$$
#
# This is an exponential family with natural parameter $\boldsymbol\alpha - \mathbf 1$, sufficient
# statistic $n S_0(\mathbf D)$ and cumulant function $C$: exactly the exponent of Guo et al.'s eq. (1).
# Everything about $\boldsymbol\alpha$ that the data carry is in the $d$ numbers $S_0(\mathbf D)$.
# Two facts of exponential families give us the rest of the notebook for free: the mean and covariance of the
# sufficient statistic of one record are the gradient and the Hessian of the one-record cumulant
# $c(\boldsymbol\alpha) = \sum_j \log\Gamma(\alpha_j) - \log\Gamma(\alpha_0)$,
#
# $$\boldsymbol\mu_\alpha = \mathrm E[\log \mathbf x] = \nabla c = \big(\Psi(\alpha_j) - \Psi(\alpha_0)\big)_j,\qquad
# \boldsymbol\Sigma_\alpha = \mathrm{Cov}[\log \mathbf x] = \nabla^2 c = \mathrm{diag}\big(\Psi_1(\alpha_j)\big) - \Psi_1(\alpha_0)\,\mathbf 1\mathbf 1^\top,$$
#
# ($\Psi$ digamma, $\Psi_1$ trigamma; Guo et al., Sec. 4.2.4), and the log-likelihood
# $\ell(\boldsymbol\alpha) = n[(\boldsymbol\alpha - \mathbf 1)^\top \mathbf s - c(\boldsymbol\alpha)]$ is **concave**,
# with score $n(\mathbf s - \boldsymbol\mu_\alpha)$ and Fisher information $n\boldsymbol\Sigma_\alpha$. So the MLE solves
# $\boldsymbol\mu_\alpha = \mathbf s$ ("match the mean of $\log x$"), and it is unique when it exists.
#
# We first write the plumbing (inputs, statistics, likelihood), then special functions numba can
# call, then the moments, the MLE and the draws.

# %%
#| export
import math
from dataclasses import dataclass

import numpy as np
from numba import njit
from scipy import special

from dplit import _validate as check

_EPS = float(np.finfo(float).eps)

# %% [markdown]
# ## 2. Compositions in, statistics out
#
# `check_compositions` is the gate every public function that takes data goes through: an
# $(n, d)$ array of finite, non-negative rows that sum to one within a stated tolerance, $d \ge 2$.
# Zeros are *allowed*: real time-use data have them (nobody in the ATUS sample does all 18
# activities), and the censored statistic below handles them. The error names the first bad row, so
# that a reader can find it. Raw amounts (minutes per activity) are turned into compositions
# explicitly with `close`; we never renormalise silently.

# %%
#| export
def _first_bad_row(mask):
    """Index of the first True in a boolean (n,) mask."""
    return int(np.flatnonzero(mask)[0])


def _check_rows_finite_nonnegative(A, name):
    """Raise naming the first row of the 2-D array ``A`` with a non-finite or a negative entry."""
    for bad, what in ((~np.isfinite(A).all(axis=1), "a non-finite"), ((A < 0).any(axis=1), "a negative")):
        if bad.any():
            i = _first_bad_row(bad)
            raise ValueError(f"{name} row {i} has {what} entry: {A[i]}")


def check_compositions(X, *, name="X", tol=1e-8):
    """Check that ``X`` holds compositions and return it as a float array.

    Parameters
    ----------
    X : array_like, shape (n, d)
        One composition per row: finite, non-negative entries summing to 1.
        Zeros are allowed (see :func:`censored_stat`).
    name : str, optional
        Name of the argument, used in error messages.
    tol : float, optional
        Largest accepted ``|sum(row) - 1|``.

    Returns
    -------
    ndarray, shape (n, d), float

    Raises
    ------
    TypeError
        If ``X`` is not numeric.
    ValueError
        If ``X`` is not 2-D with ``n >= 1`` and ``d >= 2``, or a row has a non-finite or negative
        entry or does not sum to 1 within ``tol`` (the message names the first such row).
    """
    tol = check.unit_interval(tol, "tol", closed_low=True)
    X = check.real_array(X, name)
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n records, d parts), got shape {X.shape}; "
                         f"use {name}[None, :] for a single record")
    n, d = X.shape
    if n < 1 or d < 2:
        raise ValueError(f"{name} must have at least 1 row and 2 columns, got shape {X.shape}")
    _check_rows_finite_nonnegative(X, name)
    sums = X.sum(axis=1)
    bad = np.abs(sums - 1.0) > tol
    if bad.any():
        i = _first_bad_row(bad)
        if X.shape[1] > 1 and np.all(np.abs(X.sum(axis=0) - 1.0) <= tol):
            raise ValueError(f"{name} looks transposed: its {X.shape[1]} columns sum to 1, its rows do not "
                             f"(row {i} sums to {sums[i]!r}); pass {name}.T, one record per row")
        raise ValueError(f"{name} row {i} sums to {sums[i]!r}, not 1 within tol={tol}; "
                         f"use close() to turn raw amounts into compositions")
    return X

# %% [markdown]
# Checks: a valid array comes back as floats; each kind of bad input raises, naming the first bad row.

# %%
def raises(exc, fn, *args, match=None, **kwargs):
    """True when fn(*args, **kwargs) raises exc (with `match` in the message)."""
    try:
        fn(*args, **kwargs)
    except exc as err:
        return match is None or match in str(err)
    return False


assert np.array_equal(check_compositions([[0.25, 0.75]]), [[0.25, 0.75]])
assert raises(ValueError, check_compositions, [[0.5, 0.5], [0.3, 0.6]], match="row 1")
assert raises(ValueError, check_compositions, [[0.5, 0.5], [1.2, -0.2]], match="row 1")
assert raises(ValueError, check_compositions, [[np.nan, 1.0]], match="row 0")
assert raises(ValueError, check_compositions, [0.5, 0.5], match="2-D")
assert raises(ValueError, check_compositions, [[1.0]], match="2 columns")
assert raises(TypeError, check_compositions, [["a", "b"]])
assert raises(ValueError, check_compositions, [[0.5, 0.5]], tol=-1.0, match="tol")
X_t = np.random.default_rng(0).dirichlet([2.0, 3.0, 4.0], size=50).T  # a transposed data set, (d, n)
assert raises(ValueError, check_compositions, X_t, match="looks transposed")

# %% [markdown]
# Raw amounts become compositions only on request:

# %%
#| export
def close(amounts):
    """Close non-negative amounts into compositions (divide each row by its sum).

    Parameters
    ----------
    amounts : array_like, shape (d,) or (n, d)
        Finite, non-negative amounts (e.g. minutes per activity); every row needs a positive sum.

    Returns
    -------
    ndarray, same shape as ``amounts``
        Each row divided by its sum.
    """
    A = check.real_array(amounts, "amounts")
    if A.ndim not in (1, 2):
        raise ValueError(f"amounts must be 1-D or 2-D, got shape {A.shape}")
    A2 = A.reshape(1, -1) if A.ndim == 1 else A
    if A2.shape[1] < 2 or A2.shape[0] < 1:
        raise ValueError(f"amounts must have at least 2 parts per row, got shape {A.shape}")
    _check_rows_finite_nonnegative(A2, "amounts")
    sums = A2.sum(axis=1)
    bad = ~(sums > 0)
    if bad.any():
        i = _first_bad_row(bad)
        raise ValueError(f"amounts row {i} sums to 0 and cannot be closed")
    return (A2 / sums[:, None]).reshape(A.shape)

# %%
minutes = np.array([[480.0, 600.0, 360.0], [720.0, 0.0, 720.0]])
X_small = close(minutes)
assert np.allclose(X_small.sum(axis=1), 1.0) and X_small[1, 1] == 0.0
assert np.allclose(close(minutes[0]), minutes[0] / 1440)
assert np.array_equal(check_compositions(X_small), X_small)  # zeros are valid data
assert raises(ValueError, close, [[1.0, 2.0], [0.0, 0.0]], match="row 1")
assert raises(ValueError, close, [[1.0, -2.0]], match="negative")

# %% [markdown]
# The sufficient statistic $S_0(\mathbf D)$ needs $\log x_{ij}$, so a single zero sends it to
# $-\infty$ and, with it, any estimate. Guo et al. (Sec. 3.1) left-censor at a threshold $a \in (0, 1)$,
#
# $$S_0(\mathbf D, a) = \frac1n\Big(\sum_i \log\max\{x_{i1}, a\}, \dots, \sum_i \log\max\{x_{id}, a\}\Big)^\top,$$
#
# which is finite, lies in $[\log a, 0]^d$ and has global sensitivity at most $-d\log(a)/n$, the
# scale of the Laplace noise in the release (notebook 04). `sufficient_stat` refuses zeros (and
# says to use `censored_stat`) rather than return $-\infty$.

# %%
#| export
def sufficient_stat(X):
    """Sufficient statistic S0(D): column means of log x (Guo et al., Sec. 2.2).

    Parameters
    ----------
    X : array_like, shape (n, d)
        Compositions (see :func:`check_compositions`), all entries positive.

    Returns
    -------
    ndarray, shape (d,)
    """
    X = check_compositions(X)
    zero = (X == 0).any(axis=1)
    if zero.any():
        i = _first_bad_row(zero)
        raise ValueError(f"X row {i} has a zero, where log x = -inf; use censored_stat(X, a)")
    return np.log(X).mean(axis=0)


def censored_stat(X, a):
    """Censored sufficient statistic S0(D, a): column means of log(max(x_ij, a)).

    Guo et al., Sec. 3.1. Zeros in ``X`` are valid data.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Compositions (see :func:`check_compositions`).
    a : float
        Censoring threshold in (0, 1).

    Returns
    -------
    ndarray, shape (d,)
        Entries in ``[log a, 0]``.
    """
    X = check_compositions(X)
    a = check.threshold(a)
    return np.log(np.maximum(X, a)).mean(axis=0)


@njit(cache=True)
def censored_stat_kernel(X, a):
    """Column means of log(max(x_ij, a)) for an (n, d) float array (a = 0 gives S0)."""
    n, d = X.shape
    out = np.zeros(d)
    for i in range(n):
        for j in range(d):
            out[j] += math.log(max(X[i, j], a))
    for j in range(d):
        out[j] /= n
    return out

# %%
X_pos = np.array([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]])
assert np.allclose(sufficient_stat(X_pos), np.log(X_pos).mean(axis=0))
assert np.allclose(censored_stat(X_pos, 1e-9), sufficient_stat(X_pos))  # a below every entry
s_cens = censored_stat(X_small, 0.01)
assert np.isclose(s_cens[1], (np.log(600 / 1440) + np.log(0.01)) / 2)
assert np.all((s_cens >= np.log(0.01)) & (s_cens <= 0))
assert raises(ValueError, sufficient_stat, X_small, match="censored_stat")
assert raises(ValueError, censored_stat, X_small, 1.0, match="(0, 1)")
assert raises(ValueError, censored_stat, X_small, 0.0)
assert raises(TypeError, censored_stat, X_small, "0.1")
assert np.allclose(censored_stat_kernel(X_small, 0.01), s_cens, rtol=1e-14)        # numba twin
assert np.allclose(censored_stat_kernel(X_pos, 0.0), sufficient_stat(X_pos), rtol=1e-14)

# %% [markdown]
# ## 3. Where an MLE exists: Range($S_0$) (Guo et al., Supplement S4)
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
assert in_stat_range(sufficient_stat(X_pos))
assert not in_stat_range(np.log([0.5, 0.5]))            # on the boundary: one record
assert not in_stat_range([-0.1, -0.1])                   # outside
assert not in_stat_range([-np.inf, -1.0])
# a censored statistic can leave the range: two records, censored at a = 0.4
X_out = np.array([[1.0, 0.0], [0.0, 1.0]])
assert not in_stat_range(censored_stat(X_out, 0.4)) and in_stat_range(censored_stat(X_out, 0.2))
assert raises(ValueError, in_stat_range, [np.nan, -1.0]) and raises(ValueError, in_stat_range, [-1.0])

# %% [markdown]
# ## 4. The log-likelihood (eq. 1)
#
# $\ell(\boldsymbol\alpha; \mathbf s, n) = n\big[\log\Gamma(\alpha_0) - \sum_j\log\Gamma(\alpha_j) + \sum_j(\alpha_j - 1)s_j\big]$,
# vectorised over leading axes of `alpha` so that a whole grid (or a batch of MCMC proposals) goes in one call.
# `n` may be any positive number: the rescaled likelihood of DPreMCMC uses $n/b$ copies.

# %%
#| export
def check_alpha(alpha, name="alpha", ndim=None):
    """Dirichlet parameters: float array (..., d), d >= 2, finite and positive (``ndim`` fixes the rank)."""
    alpha = check.real_array(alpha, name, ndim)
    if alpha.ndim < 1 or alpha.shape[-1] < 2:
        raise ValueError(f"{name} must have a last axis of length d >= 2, got shape {alpha.shape}")
    if not np.all(np.isfinite(alpha)) or not np.all(alpha > 0):
        raise ValueError(f"{name} must be finite and positive, got {alpha}")
    return alpha


def loglik(alpha, s, n):
    """Dirichlet log-likelihood of ``alpha`` given the statistic ``s`` of ``n`` records.

    ``n * [lgamma(alpha_0) - sum lgamma(alpha_j) + sum (alpha_j - 1) s_j]`` (Guo et al., eq. 1).

    Parameters
    ----------
    alpha : array_like, shape (..., d)
        Positive parameters; leading axes are broadcast (a grid, a batch of proposals).
    s : array_like, shape (d,)
        Finite statistic (``sufficient_stat`` or ``censored_stat``).
    n : float
        Number of records (positive; need not be an integer).

    Returns
    -------
    float or ndarray, shape (...)
    """
    alpha = check_alpha(alpha)
    s = check_stat(s)
    if not np.all(np.isfinite(s)):
        raise ValueError(f"s must be finite, got {s}")
    if s.shape[0] != alpha.shape[-1]:
        raise ValueError(f"s has {s.shape[0]} entries but alpha has d = {alpha.shape[-1]}")
    n = check.positive(n, "n")
    a0 = alpha.sum(axis=-1)
    out = n * (special.gammaln(a0) - special.gammaln(alpha).sum(axis=-1) + (alpha - 1.0) @ s)
    return out[()] if out.ndim == 0 else out


@njit(cache=True)
def _loglik_kernel(alpha, s, n):
    """Dirichlet log-likelihood of one alpha (d,) given s (d,) and n records (numba twin of loglik)."""
    a0 = 0.0
    out = 0.0
    for j in range(alpha.shape[0]):
        a0 += alpha[j]
        out += (alpha[j] - 1.0) * s[j] - math.lgamma(alpha[j])
    return n * (out + math.lgamma(a0))

# %%
alpha_chk = np.array([2.0, 3.0, 5.0])
X_chk = rng.dirichlet(alpha_chk, size=50)
direct = stats.dirichlet.logpdf(X_chk.T, alpha_chk).sum()
assert np.isclose(loglik(alpha_chk, sufficient_stat(X_chk), 50), direct, rtol=1e-12)
grid = np.stack([alpha_chk, 2 * alpha_chk])
assert loglik(grid, sufficient_stat(X_chk), 50).shape == (2,)
assert raises(ValueError, loglik, [1.0, -1.0], [-1.0, -1.0], 3)
assert raises(ValueError, loglik, [1.0, 1.0, 1.0], [-1.0, -1.0], 3, match="d = 3")
assert raises(ValueError, loglik, [1.0, 1.0], [-1.0, -1.0], 0)
assert raises(TypeError, loglik, [1.0, 1.0], [-1.0, -1.0], "10")
assert np.isclose(_loglik_kernel(alpha_chk, sufficient_stat(X_chk), 50.0), direct, rtol=1e-12)

# %% [markdown]
# ## 5. Digamma and trigamma inside numba
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
# **The incomplete gamma function and the normal quantile.** The Gaussian-copula prior p4 (notebook 06) needs,
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
# ## 6. Moments of log x and the Fisher information (Guo et al., Sec. 4.2.4)
#
# $\boldsymbol\mu_\alpha$ and $\boldsymbol\Sigma_\alpha$ as derived in section 1; the Fisher
# information of $n$ records is $n\boldsymbol\Sigma_\alpha$ (the Hessian of the cumulant, because the
# natural parameter is $\boldsymbol\alpha - \mathbf 1$). By the central limit theorem
# $S_0(\mathbf D) \approx N(\boldsymbol\mu_\alpha, \boldsymbol\Sigma_\alpha / n)$ — note the $1/n$,
# which Sec. 4.2.4 leaves out (a known slip; the intent is the law of a mean of $n$ records).
# The matrix is positive definite: a diagonal with positive entries minus a rank-one term
# that is smaller, because $\Psi_1(\alpha_0)\sum_j 1/\Psi_1(\alpha_j) < 1$.

# %%
#| export
def logx_mean(alpha):
    """Mean of log x for x ~ Dirichlet(alpha): psi(alpha_j) - psi(alpha_0).

    Parameters
    ----------
    alpha : array_like, shape (..., d)
        Positive parameters.

    Returns
    -------
    ndarray, shape (..., d)
        ``mu_alpha`` of Guo et al., Sec. 4.2.4.
    """
    alpha = check_alpha(alpha)
    return special.digamma(alpha) - special.digamma(alpha.sum(axis=-1, keepdims=True))


def logx_cov(alpha):
    """Covariance of log x for one record x ~ Dirichlet(alpha), shape (..., d, d).

    ``diag(psi1(alpha_j)) - psi1(alpha_0) 1 1^T`` (``Sigma_alpha`` of Guo et al., Sec. 4.2.4), for
    ``alpha`` of shape (..., d) as in :func:`logx_mean`. The mean S0 of n records has covariance
    ``logx_cov(alpha) / n``.
    """
    alpha = check_alpha(alpha)
    d = alpha.shape[-1]
    diag = special.polygamma(1, alpha)
    full = -special.polygamma(1, alpha.sum(axis=-1))[..., None, None] * np.ones((d, d))
    return full + diag[..., :, None] * np.eye(d)


def fisher_information(alpha, *, n=1):
    """Fisher information of ``n`` Dirichlet records about ``alpha``: ``n * logx_cov(alpha)``.

    ``alpha`` of shape (..., d) as in :func:`logx_mean`; ``n`` (default 1) is the number of records,
    any positive number. Returns an array of shape (..., d, d).
    """
    n = check.positive(n, "n")
    return n * logx_cov(alpha)

# %%
alpha_m = np.array([0.5, 2.0, 7.0])
eps_fd = 1e-6
def cum(a):
    """One-record cumulant function c(alpha)."""
    return special.gammaln(a).sum() - special.gammaln(a.sum())


grad_fd = np.array([(cum(alpha_m + eps_fd * e) - cum(alpha_m - eps_fd * e)) / (2 * eps_fd)
                    for e in np.eye(3)])
assert np.allclose(logx_mean(alpha_m), grad_fd, atol=1e-7)       # mean = gradient of cumulant
hess_fd = np.array([(logx_mean(alpha_m + eps_fd * e) - logx_mean(alpha_m - eps_fd * e)) / (2 * eps_fd)
                    for e in np.eye(3)])
assert np.allclose(logx_cov(alpha_m), hess_fd, atol=1e-6)        # cov = Hessian of cumulant
assert np.all(np.linalg.eigvalsh(logx_cov(alpha_m)) > 0)
assert np.allclose(fisher_information(alpha_m, n=10), 10 * logx_cov(alpha_m))
# Fisher information = minus the Hessian of the log-likelihood, by finite differences of loglik
s_m = logx_mean(alpha_m)
def ll(a):
    return loglik(a, s_m, 1.0)


H_fd = np.array([[(ll(alpha_m + eps_fd * (ei + ej)) - ll(alpha_m + eps_fd * (ei - ej))
                   - ll(alpha_m - eps_fd * (ei - ej)) + ll(alpha_m - eps_fd * (ei + ej))) / (4 * eps_fd**2)
                  for ej in np.eye(3)] for ei in np.eye(3)])
assert np.allclose(-H_fd, fisher_information(alpha_m), atol=2e-3)
assert logx_mean(np.ones((4, 2))).shape == (4, 2) and logx_cov(np.ones((4, 2))).shape == (4, 2, 2)
assert raises(ValueError, logx_mean, [1.0, 0.0]) and raises(ValueError, logx_cov, [1.0])
assert raises(ValueError, fisher_information, [1.0, 2.0], n=-1)

# %% [markdown]
# The same two moments for one $\boldsymbol\alpha$ inside numba (the samplers' proposals), with the
# digamma and trigamma of section 5; checked against the SciPy versions above.

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
assert np.allclose(logx_mean_kernel(alpha_m), logx_mean(alpha_m), rtol=1e-13)       # numba twins
assert np.allclose(logx_cov_kernel(alpha_m), logx_cov(alpha_m), rtol=1e-13)

# %% [markdown]
# For the five parameters of Guo et al.'s simulation study (Sec. 5.1): $\boldsymbol\mu_\alpha$, the standard deviations
# $\sqrt{\mathrm{diag}\,\boldsymbol\Sigma_\alpha}$ of one record's $\log x_j$, and the distance $\delta = 1 - \sum_j e^{\mu_j}$ of
# $\boldsymbol\mu_\alpha$ from the boundary of the range, which sets the precision of the MLE problem (section 7).

# %%
paper_alphas = {"alpha1": [3.3, 4.4], "alpha2": [0.5, 0.5, 0.5], "alpha3": [2.2, 3.3, 4.4],
                "alpha4": [2, 20, 2], "alpha5": [2.2, 3.3, 4.4, 5.5, 6.6]}
for name, alpha in paper_alphas.items():
    mu, sd = logx_mean(alpha), np.sqrt(np.diag(logx_cov(alpha)))
    delta_mu = 1 - np.exp(mu).sum()
    assert 0 < delta_mu < 1 and in_stat_range(mu)
    print(f"{name}: mu = {np.round(mu, 3)}, sd = {np.round(sd, 3)}, delta = {delta_mu:.3f}")

# %% [markdown]
# ## 7. The maximum-likelihood estimator
#
# ### 7.1 The score equations and Minka's fixed point
#
# Setting the score to zero, the MLE $\hat{\boldsymbol\alpha}$ of a statistic $\mathbf s$ solves
#
# $$\Psi(\alpha_j) - \Psi(\alpha_0) = s_j, \qquad j = 1, \dots, d. \tag{7.1}$$
#
# Minka (2000, eq. 9) iterates $\alpha_j \leftarrow \Psi^{-1}\big(\Psi(\alpha_0^{\text{old}}) + s_j\big)$,
# a convergent fixed point (each step maximises a lower bound of $\ell$). It is the method Guo et al.
# cite (Sec. 2.2, 4.1). It is fine for moderate concentrations but **crawls** when $\alpha_0$ is
# large. Write $\boldsymbol\alpha = c\,\mathbf m$ with precision $c = \alpha_0$ and mean
# $\mathbf m$ on the simplex, and $\delta = 1 - \sum_j e^{s_j}$, the distance of the statistic from the
# boundary of the range. From $\Psi(x) = \log x - 1/(2x) + O(x^{-2})$, (7.1) gives
# $e^{s_j} \approx m_j - (1 - m_j)/(2c)$, and summing over $j$,
#
# $$\delta \approx \frac{d - 1}{2c}, \qquad\text{so}\qquad \hat\alpha_0 \approx \frac{d-1}{2\delta}.\tag{7.2}$$
#
# A statistic $10^{-4}$ inside the boundary has $\hat\alpha_0 \approx 5000(d-1)$. Now follow the fixed point
# along the precision: for large arguments $\Psi^{-1}(y) \approx e^{y} + 1/2$ and $\Psi(c) \approx \log(c - 1/2)$, so one step
# maps $c = \alpha_0^{\text{old}}$ to $\sum_j\big[(c - \tfrac12)e^{s_j} + \tfrac12\big] = (1-\delta)\,c + \text{const}$.
# The error in $c$ shrinks by the factor $1 - \delta$ per step: reaching a relative tolerance `tol` takes about
# $\log(1/\mathtt{tol})/\delta$ steps, some 20,000 at $\delta = 10^{-3}$ (section 9 measures 16,000). This is the
# regime DPBoots enters when $a$ is large (Guo et al., S5).
#
# ### 7.2 A one-dimensional Newton problem
#
# The score equations reduce exactly to one equation in the precision $c$. Given $c$, equation (7.1)
# with $\alpha_0 = c$ fixes each $\alpha_j$ separately: $\alpha_j = c\,r_j(c)$ where the ratio
# $r_j(c)$ solves
#
# $$\log r_j + \tilde\Psi(c\, r_j) = s_j + \tilde\Psi(c), \qquad \tilde\Psi(x) = \Psi(x) - \log x. \tag{7.3}$$
#
# (That is (7.1) with $\log c$ subtracted from both sides; written this way no quantity of size
# $\log c$ is ever subtracted from another, which keeps full precision at $c = 10^{8}$.)
# The left side is increasing and concave in $r_j$, so Newton's method from Minka's starting point for
# $\Psi^{-1}$ ($e^{y} + 1/2$ for $y \ge -2.22$, else $-1/(y + \gamma)$) converges monotonically after its first
# step, to machine precision in a few steps. The MLE is then the root of
#
# $$H(c) = \sum_j r_j(c) - 1, \qquad H'(c) = \frac1c\sum_j\Big(\frac{\Psi_1(c)}{\Psi_1(c\,r_j)} - r_j\Big),$$
#
# ($H'$ by differentiating (7.3)). $H > 0$ for small $c$ ($r_j \to 1$) and $H \to -\delta$ as $c\to\infty$
# ($r_j \to e^{s_j}$), so a root exists exactly when $\delta > 0$: the range check of section 3 again.
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
    """r = alpha_j / c solving log r + (psi - log)(r c) = s_j + dml_c (eq. 7.3), by Newton."""
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


def dirichlet_mle(s, *, tol=1e-10, max_iter=100, return_info=False):
    """Maximum-likelihood estimate of Dirichlet parameters from a statistic.

    Solves ``psi(alpha_j) - psi(alpha_0) = s_j`` by a safeguarded Newton iteration on the
    precision ``alpha_0`` (notebook 02, section 7; Minka 2000), fast also for statistics
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
# ### 7.3 Checks of the MLE
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
# We know the answer to first order from (7.2), and exactly through the score: the returned
# $\hat{\boldsymbol\alpha}$ must satisfy (7.1) to rounding, and the number of Newton steps must stay small.
# Then exact answers at huge concentrations: for $\boldsymbol\alpha = c\,\mathbf m$ with $c$ up to $10^{10}$ we compute
# $\boldsymbol\mu_\alpha$ without cancellation, $\mu_j = \log m_j + \tilde\Psi(\alpha_j) - \tilde\Psi(c)$, and ask for
# $\boldsymbol\alpha$ back within the precision the rounded statistic carries, $20\,\varepsilon/\delta$ relative.
# Minka's plain fixed point is shown for contrast (capped at 20,000 steps).

# %%
def minka_fixed_point(s, tol=1e-10, max_iter=20_000):
    """Minka's (2000) fixed point alpha_j <- psi^{-1}(psi(alpha_0) + s_j), for comparison only."""
    alpha = np.ones_like(s)
    for it in range(1, max_iter + 1):
        y = special.digamma(alpha.sum()) + s
        x = np.where(y >= -2.22, np.exp(y) + 0.5, -1 / (y - special.digamma(1.0)))
        for _ in range(5):
            x = x - (special.digamma(x) - y) / special.polygamma(1, x)
        if np.max(np.abs(x - alpha) / alpha) < tol:
            return x, it
        alpha = x
    return alpha, max_iter


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
        assert np.isclose(a_hat.sum(), (d - 1) / (2 * delta), rtol=1 / a_hat.min())  # (7.2), error O(1/alpha_j)
        assert np.allclose(a_ref, a_hat, rtol=1e-13 / delta)   # both as precise as s allows
        rows.append((delta, d, a_hat.sum(), info.n_iter))
for c in [1e2, 1e4, 1e6, 1e8, 1e10]:
    for d in [2, 5, 10]:
        alpha = c * rng.dirichlet(np.full(d, 3.0))
        mu = np.log(alpha / alpha.sum()) + np.array([_digamma_minus_log(a) - _digamma_minus_log(alpha.sum())
                                                     for a in alpha])
        a_hat, info = dirichlet_mle(mu, return_info=True)
        assert info.n_iter <= 4 and np.allclose(a_hat, alpha, rtol=20 * np.finfo(float).eps / info.distance + 1e-12, atol=0)
fp_steps = {delta: minka_fixed_point(np.log([0.3, 0.7]) + np.log1p(-delta))[1] for delta in [1e-2, 1e-3]}
print("delta      d   alpha_0          Newton steps")
for delta, d, a0, it in rows:
    print(f"{delta:7.0e} {d:3d}   {a0:14.6g}   {it}")
print("Minka's fixed point, d = 2:", {k: f"{v} steps" for k, v in fp_steps.items()})

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
# ## 8. Fast Dirichlet draws
#
# $\mathbf x = (g_1,\dots,g_d)/\sum_j g_j$ with independent $g_j \sim \mathrm{Gamma}(\alpha_j, 1)$ is
# $\mathrm{Dirichlet}(\boldsymbol\alpha)$. For small $\alpha_j$ the gammas can all underflow to 0 (a
# $\mathrm{Gamma}(0.01)$ draw is below $10^{-308}$ with probability about $10^{-3}$), so when some
# $\alpha_j < 1$ we work with logs and use $g = g' U^{1/\alpha}$, $g' \sim \mathrm{Gamma}(\alpha+1)$,
# $U \sim \mathrm{U}(0,1)$ (the standard boost, exact in law): $\log g = \log g' + \log(U)/\alpha$, then
# normalise after subtracting the largest log. Entries smaller than the smallest double come out as exact 0.
#
# Two kernels, same law, callable from other numba kernels with the caller's `numpy.random.Generator`:
#
# * `dirichlet_draws_kernel(alpha, n, rng)` takes its gammas from `rng.standard_gamma`. When every
#   $\alpha_j \ge 1$ it consumes the Generator exactly as `rng.standard_gamma(alpha, size=(n, d))` does, so a
#   plain NumPy twin reproduces its draws to the last bit (the DPBoots tests rely on this);
# * `dirichlet_draws_fast_kernel(alpha, n, rng)` takes them from our own Marsaglia & Tsang (2000)
#   squeeze-and-reject sampler for shape $\ge 1$: with $d = a - 1/3$, $c = 1/\sqrt{9d}$, draw $z \sim N(0,1)$,
#   $v = (1 + cz)^3$, $u \sim U(0,1)$, and accept $dv$ when $v > 0$ and $\log u < z^2/2 + d(1 - v + \log v)$ (a
#   cheap squeeze $u < 1 - 0.0331 z^4$ accepts most draws without a log; acceptance is above 95% for every
#   shape). Inside a numba loop it is about twice as fast as numba's `standard_gamma` (see the
#   benchmark), at the price of a different random stream.
#
# `_gamma_draws_kernel` and `_gamma_draws_fast_kernel` draw only the $n\times d$ gammas: the floors
# that the samplers' benchmarks compare against. `_gamma_draw_kernel(a, rng)` and
# `log_gamma_draw_kernel(a, rng)` are single Marsaglia–Tsang draws for other kernels.

# %% [markdown]
# **Draws in log space.** When some $\alpha_j < 1$ a gamma draw can underflow to 0 (and $\log x_{ij} = -\infty$);
# samplers that work with $\log \mathbf x$ (the latent records of notebook 07) draw $\log G$ directly:
# $\log G_{a} = \log G_{a+1} - E/a$ with $E$ standard exponential (since $G_{a+1} U^{1/a} \sim G_a$ and
# $-\log U \sim E$), and normalise with a log-sum-exp. `log_std_gamma_kernel(a, rng)` is that draw from
# numba's `standard_gamma` (inlined into its callers: the record sweep of notebook 07 normalises the row
# inside its own loop, and a call per record measured 10-20% slower), and
# `log_dirichlet_draws_reference(alpha, m, rng)` is the vectorised NumPy version (column by column), used to
# start chains; `logsumexp_kernel(v)` normalises a row of log gammas. The draws kernels below use
# `log_std_gamma_kernel` too.

# %%
#| export
@njit(cache=True, nogil=True, inline="always")
def log_std_gamma_kernel(a, rng):
    """log of one Gamma(a, 1) draw from rng.standard_gamma, any a > 0 (a < 1: log G(a+1) - E / a)."""
    if a < 1.0:
        return math.log(rng.standard_gamma(a + 1.0)) - rng.standard_exponential() / a
    return math.log(rng.standard_gamma(a))


@njit(cache=True, nogil=True, inline="always")
def logsumexp_kernel(v):
    """log(sum(exp(v))) of a small vector, with its largest entry taken out (no overflow, no underflow)."""
    top = -np.inf
    for x in v:
        top = max(top, x)
    tot = 0.0
    for x in v:
        tot += math.exp(x - top)
    return top + math.log(tot)


def log_dirichlet_draws_reference(alpha, m, rng):
    """log of m Dirichlet(alpha) draws, (m, d), vectorised by column in log space (no underflow)."""
    lg = np.empty((m, alpha.size))
    for j, a_j in enumerate(alpha):
        if a_j < 1.0:
            lg[:, j] = np.log(rng.standard_gamma(a_j + 1.0, m)) - rng.standard_exponential(m) / a_j
        else:
            lg[:, j] = np.log(rng.standard_gamma(a_j, m))
    return lg - np.logaddexp.reduce(lg, axis=1, keepdims=True)

# %%
alpha_small = np.array([0.02, 0.5, 3.0])
lg_k = np.array([[log_std_gamma_kernel(a_, rng) for a_ in alpha_small] for _ in range(n_ks_gamma)])
rows_k = lg_k - np.logaddexp.reduce(lg_k, axis=1, keepdims=True)
rows_r = log_dirichlet_draws_reference(alpha_small, n_ks_gamma, rng)
assert np.all(np.isfinite(rows_k)) and np.all(np.isfinite(rows_r))       # no underflow to log 0
assert np.allclose(np.logaddexp.reduce(rows_r, axis=1), 0.0)
for j in range(3):   # x_j has the Beta(alpha_j, alpha_0 - alpha_j) marginal law, both ways
    beta_cdf = stats.beta(alpha_small[j], alpha_small.sum() - alpha_small[j]).cdf
    assert stats.kstest(np.exp(rows_k[:, j]), beta_cdf).pvalue > 1e-3
    assert stats.kstest(np.exp(rows_r[:, j]), beta_cdf).pvalue > 1e-3
    wrong = stats.beta(alpha_small[j] * 1.2, alpha_small.sum() - alpha_small[j]).cdf
    assert stats.kstest(np.exp(rows_k[:, j]), wrong).pvalue < 1e-3
# shape >= 1: exactly the log of numpy's standard_gamma draw, from the same stream
assert log_std_gamma_kernel(2.5, np.random.default_rng(3)) == np.log(np.random.default_rng(3).standard_gamma(2.5))
v_ = np.array([-800.0, -801.0, -1e4])          # exp underflows: the max comes out first
assert np.isclose(logsumexp_kernel(v_), np.logaddexp.reduce(v_)) and logsumexp_kernel(np.array([0.0])) == 0.0

# %%
#| export
@njit(cache=True)
def gamma_large_kernel(a, rng):
    """One Gamma(a, 1) draw for a >= 1 (Marsaglia & Tsang 2000), from the Generator rng."""
    dd = a - 1.0 / 3.0
    cc = 1.0 / math.sqrt(9.0 * dd)
    while True:
        x = rng.standard_normal()
        v = 1.0 + cc * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = rng.random()
        x2 = x * x
        if u < 1.0 - 0.0331 * x2 * x2:
            return dd * v
        if math.log(u) < 0.5 * x2 + dd * (1.0 - v + math.log(v)):
            return dd * v


@njit(cache=True)
def log_gamma_draw_kernel(a, rng):
    """log of one Gamma(a, 1) draw, any a > 0 (boost a < 1: log G(a+1) + log(U) / a)."""
    if a >= 1.0:
        return math.log(gamma_large_kernel(a, rng))
    return math.log(gamma_large_kernel(a + 1.0, rng)) + math.log(rng.random()) / a


@njit(cache=True)
def _gamma_draw_kernel(a, rng):
    """One Gamma(a, 1) draw, any a > 0 (may underflow to 0 for tiny a)."""
    if a >= 1.0:
        return gamma_large_kernel(a, rng)
    return gamma_large_kernel(a + 1.0, rng) * math.exp(math.log(rng.random()) / a)

# %% [markdown]
# Check: the gamma draws themselves, for shapes below, at and above 1 (Kolmogorov-Smirnov against SciPy;
# a 10% wrong shape must fail).

# %%
for shape in [0.05, 0.5, 1.0, 3.3, 40.0]:
    g_draws = np.array([_gamma_draw_kernel(shape, rng) for _ in range(n_ks_gamma)])
    assert stats.kstest(g_draws, stats.gamma(shape).cdf).pvalue > 1e-3, shape
    assert stats.kstest(g_draws, stats.gamma(shape * 1.1).cdf).pvalue < 1e-3, shape
    lg = np.array([log_gamma_draw_kernel(shape, rng) for _ in range(n_ks_gamma)])
    assert stats.kstest(np.exp(lg), stats.gamma(shape).cdf).pvalue > 1e-3, shape

# %% [markdown]
# The draws kernels: one shared body, two sources of gammas.

# %%
#| export
@njit(cache=True)
def any_below_one(alpha):
    """True when some alpha_j < 1 (a gamma draw may then underflow: work in log space)."""
    for j in range(alpha.shape[0]):
        if alpha[j] < 1.0:
            return True
    return False


@njit(cache=True)
def _dirichlet_fill(alpha, n, rng, fast):
    """Shared body of the two draws kernels (fast: Marsaglia-Tsang gammas, else rng.standard_gamma)."""
    d = alpha.shape[0]
    out = np.empty((n, d))
    if not any_below_one(alpha):                                  # every alpha_j >= 1: no underflow possible
        for i in range(n):
            total = 0.0
            for j in range(d):
                if fast:
                    g = gamma_large_kernel(alpha[j], rng)
                else:
                    g = rng.standard_gamma(alpha[j])
                out[i, j] = g
                total += g
            for j in range(d):
                out[i, j] /= total
        return out
    for i in range(n):                             # some alpha_j < 1: work with logs
        top = -np.inf
        for j in range(d):
            a = alpha[j]
            if fast:
                lg = log_gamma_draw_kernel(a, rng)
            else:
                lg = log_std_gamma_kernel(a, rng)
            out[i, j] = lg
            if lg > top:
                top = lg
        total = 0.0
        for j in range(d):
            g = math.exp(out[i, j] - top)
            out[i, j] = g
            total += g
        for j in range(d):
            out[i, j] /= total
    return out


@njit(cache=True)
def dirichlet_draws_kernel(alpha, n, rng):
    """n draws from Dirichlet(alpha) as an (n, d) array, gammas from rng.standard_gamma.

    When every alpha_j >= 1 it consumes rng exactly like rng.standard_gamma(alpha, size=(n, d)).
    """
    return _dirichlet_fill(alpha, n, rng, False)


@njit(cache=True)
def dirichlet_draws_fast_kernel(alpha, n, rng):
    """n draws from Dirichlet(alpha), gammas by dplit's Marsaglia-Tsang kernel (faster, other stream)."""
    return _dirichlet_fill(alpha, n, rng, True)

# %% [markdown]
# Check: both kernels give rows on the simplex, also in the log-space branch, from different streams.

# %%
for a_chk in (alpha_m, np.array([0.05, 0.5, 2.0])):
    x_def = dirichlet_draws_kernel(a_chk, 500, np.random.default_rng(8))
    x_fast = dirichlet_draws_fast_kernel(a_chk, 500, np.random.default_rng(8))
    assert np.allclose(x_def.sum(axis=1), 1.0) and np.allclose(x_fast.sum(axis=1), 1.0)
    assert np.all(x_fast >= 0) and not np.array_equal(x_def, x_fast)

# %% [markdown]
# The bare gamma draws, the floors the benchmarks compare the draws kernels with.

# %%
#| export
@njit(cache=True)
def _gamma_draws_kernel(alpha, n, rng):
    """The bare n x d rng.standard_gamma(alpha_j) draws: the floor of dirichlet_draws_kernel."""
    d = alpha.shape[0]
    out = np.empty((n, d))
    for i in range(n):
        for j in range(d):
            out[i, j] = rng.standard_gamma(alpha[j])
    return out


@njit(cache=True)
def _gamma_draws_fast_kernel(alpha, n, rng):
    """The bare n x d Gamma(alpha_j) draws by Marsaglia-Tsang: the floor of the fast kernel."""
    d = alpha.shape[0]
    out = np.empty((n, d))
    if not any_below_one(alpha):                  # the common case, kept branch-free (faster)
        for i in range(n):
            for j in range(d):
                out[i, j] = gamma_large_kernel(alpha[j], rng)
        return out
    for i in range(n):
        for j in range(d):
            out[i, j] = _gamma_draw_kernel(alpha[j], rng)
    return out

# %% [markdown]
# Check: the stream property of the default kernel (all $\alpha_j \ge 1$): bit for bit NumPy's
# `standard_gamma`.

# %%
g_np = np.random.default_rng(5).standard_gamma(alpha_m + 1, size=(1000, 3))
assert np.allclose(dirichlet_draws_kernel(alpha_m + 1, 1000, np.random.default_rng(5)),
                   g_np / g_np.sum(axis=1, keepdims=True), rtol=1e-14)
assert np.array_equal(_gamma_draws_kernel(alpha_m + 1, 1000, np.random.default_rng(5)), g_np)

# %% [markdown]
# The public driver checks its arguments and calls the default kernel.

# %%
#| export
def dirichlet_draws(alpha, n, *, rng=None):
    """Draw ``n`` compositions from Dirichlet(alpha) with a numba kernel.

    Parameters
    ----------
    alpha : array_like, shape (d,)
        Positive, finite parameters, d >= 2.
    n : int
        Number of draws (>= 0).
    rng : None, int or numpy.random.Generator, optional
        Source of randomness; the same seed gives the same draws.

    Returns
    -------
    ndarray, shape (n, d)
        Rows on the simplex (an entry below the smallest double is exactly 0).
    """
    alpha = check_alpha(alpha, ndim=1)
    n = check.count(n, "n", 0)
    rng = check.rng(rng)
    return dirichlet_draws_kernel(alpha, n, rng)

# %%
draws = dirichlet_draws(alpha_m, 1000, rng=1)
assert draws.shape == (1000, 3) and np.allclose(draws.sum(axis=1), 1.0)
assert np.array_equal(draws, dirichlet_draws(alpha_m, 1000, rng=np.random.default_rng(1)))  # same seed
assert not np.array_equal(draws, dirichlet_draws(alpha_m, 1000, rng=2))
tiny = dirichlet_draws([0.01, 0.01, 0.01], 2000, rng=3)
assert np.all(np.isfinite(tiny)) and np.allclose(tiny.sum(axis=1), 1.0)   # no 0/0
assert dirichlet_draws([1.0, 2.0], 0, rng=0).shape == (0, 2)
assert raises(ValueError, dirichlet_draws, [1.0, -1.0], 5) and raises(TypeError, dirichlet_draws, [1.0, 1.0], 2.0)
assert raises(ValueError, dirichlet_draws, [[1.0, 1.0]], 5) and raises(ValueError, dirichlet_draws, [1.0, 1.0], -1)

# %% [markdown]
# ### 8.1 Statistical checks of the draws
#
# Each margin $x_j$ is $\mathrm{Beta}(\alpha_j, \alpha_0 - \alpha_j)$: a Kolmogorov–Smirnov test per margin
# (for large, small and mixed $\boldsymbol\alpha$, both code paths) must not reject at $p > 10^{-3}$, and the same test
# must reject when the draws come from a slightly different $\boldsymbol\alpha$ — so the test can fail.
# Then the moments of $\log\mathbf x$: with $n$ draws, $\sqrt n\,(\overline{\log\mathbf x} - \boldsymbol\mu_\alpha)$
# is approximately $N(0, \boldsymbol\Sigma_\alpha)$, so the Mahalanobis statistic is $\chi^2_d$; and the
# sample covariance must match $\boldsymbol\Sigma_\alpha$ entrywise within a few standard errors.

# %%
def margin_pvalues(x, alpha):
    a0 = np.sum(alpha)
    return [stats.kstest(x[:, j], stats.beta(alpha[j], a0 - alpha[j]).cdf).pvalue for j in range(len(alpha))]


n_ks = size(full=50_000, quick=10_000)
for alpha in [np.array([3.3, 4.4]), np.array([0.5, 0.5, 0.5]), np.array([0.05, 2.0, 20.0]), np.array([2.2, 3.3, 4.4, 5.5, 6.6])]:
    for kernel in (dirichlet_draws_kernel, dirichlet_draws_fast_kernel):
        x = kernel(alpha, n_ks, rng)
        assert min(margin_pvalues(x, alpha)) > 1e-3 / len(alpha), (alpha, kernel)
        alpha_wrong = alpha.copy()
        alpha_wrong[0] *= 1.1                                        # wrong parameter: must be caught
        x_wrong = kernel(alpha_wrong, n_ks, rng)
        assert min(margin_pvalues(x_wrong, alpha)) < 1e-3, (alpha, kernel)

for alpha, kernel in [(np.array([3.3, 4.4]), dirichlet_draws_kernel), (np.array([0.5, 0.5, 0.5]), dirichlet_draws_kernel),
                      (np.array([2.0, 20.0, 2.0]), dirichlet_draws_fast_kernel), (np.array([0.5, 0.5, 0.5]), dirichlet_draws_fast_kernel)]:
    L = np.log(kernel(alpha, n_mc, rng))
    d = len(alpha)
    diff = L.mean(axis=0) - logx_mean(alpha)
    maha = n_mc * diff @ np.linalg.solve(logx_cov(alpha), diff)
    assert stats.chi2(d).sf(maha) > 1e-3, (alpha, maha)
    cov_hat = np.cov(L.T)
    # standard error of a sample covariance entry ~ sqrt((S_jj S_kk + S_jk^2) / n), for Gaussian-like tails;
    # log x has heavier tails for small alpha, so allow 6 standard errors
    S = logx_cov(alpha)
    se = np.sqrt((np.outer(np.diag(S), np.diag(S)) + S**2) / n_mc)
    kurt_factor = 3.0 if alpha.min() < 1 else 1.0
    assert np.all(np.abs(cov_hat - S) < 6 * kurt_factor * se), (alpha, (cov_hat - S) / se)
    # a wrong alpha must fail the mean test
    diff_w = L.mean(axis=0) - logx_mean(alpha * 1.05)
    assert stats.chi2(d).sf(n_mc * diff_w @ np.linalg.solve(logx_cov(alpha), diff_w)) < 1e-3
print("draws: Beta margins (KS) and the mean and covariance of log x agree with logx_mean / logx_cov")

# %% [markdown]
# ### 8.2 The MLE recovers alpha from large samples
#
# For $n$ records the MLE is approximately $N(\boldsymbol\alpha, (n\boldsymbol\Sigma_\alpha)^{-1})$ (the inverse
# Fisher information). Over replications, the Mahalanobis distances
# $n(\hat{\boldsymbol\alpha} - \boldsymbol\alpha)^\top\boldsymbol\Sigma_\alpha(\hat{\boldsymbol\alpha} - \boldsymbol\alpha)$
# are approximately $\chi^2_d$: a KS test against $\chi^2_d$ must not reject, and must reject when we pretend the truth is
# $1.05\,\boldsymbol\alpha$.

# %%
n_records = 5000
for alpha in [np.array([3.3, 4.4]), np.array([0.5, 0.5, 0.5]), np.array([2.0, 20.0, 2.0])]:
    d = len(alpha)
    est = np.array([dirichlet_mle(sufficient_stat(dirichlet_draws(alpha, n_records, rng=rng)))
                    for _ in range(n_recover)])
    I = fisher_information(alpha, n=n_records)
    maha = np.einsum("ij,jk,ik->i", est - alpha, I, est - alpha)
    assert stats.kstest(maha, stats.chi2(d).cdf).pvalue > 1e-3, alpha
    wrong = np.einsum("ij,jk,ik->i", est - 1.05 * alpha, I, est - 1.05 * alpha)
    assert stats.kstest(wrong, stats.chi2(d).cdf).pvalue < 1e-3, alpha
    print(alpha, "mean MLE", est.mean(axis=0).round(3))

# %% [markdown]
# ## 9. How fast the MLE is, and why
#
# The number of Newton steps and the time per call of the numba kernel, for statistics from
# $10^{-1}$ down to $10^{-10}$ inside the boundary ($d = 3$), next to Minka's fixed point, whose step count
# grows like $1/\delta$, i.e. like $\alpha_0 \approx (d-1)/(2\delta)$, as predicted in 7.1 (run only where it finishes in seconds).
# The right panel shows why Newton in $w = 1/c$ is the right tool near the boundary: $H$ is a hyperbola in
# $c$ and a straight line in $1/c$.

# %%
@njit(cache=True)
def _mle_many(S, tol, max_iter):
    """MLE of each row of S inside numba, as a bootstrap loop would call it."""
    out = np.empty_like(S)
    for i in range(S.shape[0]):
        out[i] = dirichlet_mle_kernel(S[i], tol, max_iter)
    return out


m_conv = np.array([0.2, 0.3, 0.5])
deltas = np.logspace(-1, -10, 19)
newton_steps, us_per_call = [], []
for delta in deltas:
    s = np.log(m_conv) + np.log1p(-delta)
    a_hat, info = dirichlet_mle(s, return_info=True)
    assert info.converged
    newton_steps.append(info.n_iter)
    S = np.tile(s, (n_timing, 1))
    _mle_many(S[:2], 1e-10, 100)
    t0 = time.perf_counter()
    _mle_many(S, 1e-10, 100)
    us_per_call.append((time.perf_counter() - t0) / n_timing * 1e6)
fp_deltas = deltas[deltas >= size(full=1e-3, quick=1e-2)]
fp_steps = [minka_fixed_point(np.log(m_conv) + np.log1p(-delta))[1] for delta in fp_deltas]
assert max(newton_steps) <= 6
# the fixed point needs ~ alpha_0 steps: its step count grows at least tenfold per decade of delta
assert fp_steps[-1] > 5 * fp_steps[-3]
print("delta:        ", " ".join(f"{x:8.0e}" for x in deltas[::3]))
print("Newton steps: ", " ".join(f"{x:8d}" for x in newton_steps[::3]))
print("us per call:  ", " ".join(f"{x:8.2f}" for x in us_per_call[::3]))
print("fixed point (delta = " + ", ".join(f"{x:.0e}" for x in fp_deltas) + "):", fp_steps)

# %%
# NBVAL_IGNORE_OUTPUT
fig, ax = plt.subplots(1, 2, figsize=(10, 3.6))
ax[0].loglog(deltas, newton_steps, "o-", label="Newton on the precision (dplit)")
ax[0].loglog(fp_deltas, fp_steps, "s-", label="Minka's fixed point")
ax[0].loglog(fp_deltas, (len(m_conv) - 1) / (2 * fp_deltas), "k:", lw=0.8,
             label=r"$\alpha_0 \approx (d-1)/(2\delta)$")
ax[0].set_xlabel(r"$\delta = 1 - \sum_j e^{s_j}$ (distance from the boundary)")
ax[0].set_ylabel("steps")
ax[0].set_ylim(0.8, 1e6)
ax[0].invert_xaxis()
ax[0].legend(fontsize=8)
ax0b = ax[0].twinx()
ax0b.semilogx(deltas, us_per_call, "C2.--", lw=0.8)
ax0b.set_ylabel("numba: microseconds per call", color="C2")
s_b = np.log(m_conv) + np.log1p(-1e-3)
c_hat = dirichlet_mle(s_b).sum()
cs = c_hat * np.logspace(-1.5, 1.5, 200)
r_tmp = np.empty(3)
Hs = np.array([_profile_kernel(s_b, c, r_tmp)[0] for c in cs])
ax[1].plot(1 / cs, Hs, label=r"$H$ against $w = 1/c$")
ax[1].axhline(0, c="k", lw=0.6)
ax[1].axvline(1 / c_hat, c="k", ls=":", lw=0.8)
ax[1].set_xlabel(r"$w = 1/c$")
ax[1].set_ylabel(r"$H(c) = \sum_j r_j(c) - 1$")
ax1b = ax[1].twiny()
ax1b.plot(cs, Hs, "C1", alpha=0.7)
ax1b.set_xlabel(r"$c$ (orange)", color="C1")
ax[1].set_title(r"$\delta = 10^{-3}$", fontsize=9)
fig.tight_layout()

# %% [markdown]
# ## 10. Explore: the likelihood surface for d = 2
#
# For two parts, draw $n$ records from $\mathrm{Dirichlet}(\alpha_1, \alpha_2)$, compute $S_0$ and show the
# log-likelihood $\ell(\boldsymbol\alpha) - \ell(\hat{\boldsymbol\alpha})$ over a grid around the MLE,
# with the contours of the likelihood-ratio 50%, 90% and 99% regions ($\chi^2_2$ quantiles), the truth (star),
# the MLE (dot) and the 90% ellipse of the normal approximation with the Fisher information
# $n\boldsymbol\Sigma_{\hat\alpha}$. The surface is a long ridge along the rays $\alpha_1/\alpha_2 =$ const: the mean
# composition is pinned down much sooner than the precision $\alpha_0$ (right panel: the profile along
# the ray through the MLE). Increase $n$ to watch the ridge shrink and the ellipse become exact.

# %%
def likelihood_surface(alpha1=3.3, alpha2=4.4, n=100, seed=1, show=True):
    """Simulate n records from Dirichlet(alpha1, alpha2) and plot the log-likelihood surface.

    Returns a dict with the statistic `s`, the MLE `alpha_hat`, the grid maximum `grid_max`
    (alpha at the best grid point) and the figure (None when show is False).
    """
    alpha = np.array([alpha1, alpha2])
    X = dirichlet_draws(alpha, int(n), rng=seed)
    s = censored_stat(X, 1e-300)        # = S0 unless a draw underflowed to exactly 0
    a_hat = dirichlet_mle(s)
    sd = np.sqrt(np.diag(np.linalg.inv(fisher_information(a_hat, n=n)))) / a_hat
    half = min(max(5 * sd.max(), 0.05), 3.0)                # grid half-width in log alpha
    g1 = a_hat[0] * np.exp(np.linspace(-half, half, 161))
    g2 = a_hat[1] * np.exp(np.linspace(-half, half, 161))
    A = np.stack(np.meshgrid(g1, g2, indexing="ij"), axis=-1)
    L = loglik(A, s, n) - loglik(a_hat, s, n)
    i, j = np.unravel_index(np.argmax(L), L.shape)
    out = {"s": s, "alpha_hat": a_hat, "grid_max": A[i, j], "L_max": L.max(), "fig": None}
    if not show:
        return out
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    levels = -0.5 * stats.chi2(2).ppf([0.99, 0.9, 0.5])
    ax[0].contourf(g1, g2, np.maximum(L.T, -30), levels=30, cmap="viridis")
    cs_ = ax[0].contour(g1, g2, L.T, levels=levels, colors="w", linewidths=0.9)
    ax[0].clabel(cs_, fmt={lv: f"{p:.0%}" for lv, p in zip(levels, [0.99, 0.9, 0.5])}, fontsize=7)
    cov = np.linalg.inv(fisher_information(a_hat, n=n))
    vals, vecs = np.linalg.eigh(cov)
    t = np.linspace(0, 2 * np.pi, 200)
    ell = a_hat[:, None] + vecs @ (np.sqrt(vals * stats.chi2(2).ppf(0.9))[:, None] * np.stack([np.cos(t), np.sin(t)]))
    ok = np.all(ell > 0, axis=0)
    ax[0].plot(ell[0, ok], ell[1, ok], "r--", lw=1, label="90% Fisher ellipse")
    ax[0].plot(*alpha, "*", c="orange", ms=12, label="truth")
    ax[0].plot(*a_hat, "o", c="r", ms=5, label="MLE")
    ax[0].set_xlabel(r"$\alpha_1$")
    ax[0].set_ylabel(r"$\alpha_2$")
    ax[0].legend(fontsize=8, loc="upper left")
    ax[0].set_title(f"n = {n}: log-likelihood minus its maximum", fontsize=9)
    cgrid = a_hat.sum() * np.exp(np.linspace(-half, half, 300))
    prof = loglik(np.outer(cgrid, a_hat / a_hat.sum()), s, n) - loglik(a_hat, s, n)
    ax[1].plot(cgrid, prof)
    ax[1].axvline(alpha.sum(), c="orange", ls="--", lw=1, label=r"true $\alpha_0$")
    ax[1].axhline(-0.5 * stats.chi2(1).ppf(0.9), c="k", ls=":", lw=0.8, label="90% profile cut")
    ax[1].set_ylim(max(prof.min(), -20), 0.5)
    ax[1].set_xlabel(r"$\alpha_0$ along the ray through the MLE")
    ax[1].legend(fontsize=8)
    fig.tight_layout()
    out["fig"] = fig
    return out


res = likelihood_surface(show=False)
assert np.all(np.abs(np.log(res["grid_max"] / res["alpha_hat"])) < 0.05)   # grid optimum next to the MLE
assert res["L_max"] <= 1e-9                                                 # nothing beats the MLE
assert np.allclose(res["alpha_hat"], [3.3, 4.4], rtol=0.6)
res = likelihood_surface()                                                  # the defaults, plotted
assert res["fig"] is not None
plt.close(res["fig"])

# %% [markdown]
# The defaults ($n = 100$), then the same $\boldsymbol\alpha$ with $n = 5000$: the ridge along $\alpha_0$ shrinks and the
# likelihood-ratio regions become the Fisher ellipses.

# %%
# NBVAL_IGNORE_OUTPUT
_ = likelihood_surface()
_ = likelihood_surface(n=5000)

# %%
# NBVAL_IGNORE_OUTPUT
from ipywidgets import FloatLogSlider, IntSlider, interactive


def _likelihood_widget(alpha1, alpha2, n, seed):
    likelihood_surface(alpha1, alpha2, n, seed)
    plt.show()


interactive(_likelihood_widget,
            alpha1=FloatLogSlider(value=3.3, base=10, min=-1, max=2, step=0.05),
            alpha2=FloatLogSlider(value=4.4, base=10, min=-1, max=2, step=0.05),
            n=IntSlider(value=100, min=5, max=5000, step=5),
            seed=IntSlider(value=1, min=0, max=50))

# %% [markdown]
# ## When to use this
#
# * **Data in**: pass raw amounts through `close` and every data set through `check_compositions`; keep
#   zeros (they are data) and use `censored_stat(X, a)`; `sufficient_stat` is for data without zeros.
# * **Estimating**: `dirichlet_mle(s)` for one statistic; inside numba loops (bootstrap, ABC) call
#   `dirichlet_mle_kernel(s, tol, max_iter)` and test the result with `np.isnan`. Check
#   `in_stat_range(s)` (or `in_stat_range_kernel`) before estimating from a noisy statistic: outside
#   the range there is no MLE, and just inside it the MLE is real but its precision is huge and only as
#   accurate as $\varepsilon/\delta$ allows. Minka's fixed point, which Guo et al. cite, gives the same answer
#   but needs on the order of $\alpha_0$ steps; do not use it near the boundary.
# * **Uncertainty without privacy**: $\hat{\boldsymbol\alpha} \approx N(\boldsymbol\alpha, (n\boldsymbol\Sigma_\alpha)^{-1})$ is accurate for
#   a few hundred records or more (section 8.2); the likelihood is a long ridge in $\alpha_0$ for small $n$
#   (section 10), where intervals for $\alpha_0$ should come from the profile likelihood or a bootstrap.
# * **Simulating**: `dirichlet_draws(alpha, n, rng=...)` from Python, `dirichlet_draws_kernel(alpha, n, rng)`
#   inside numba with the caller's Generator; both are exact also for tiny $\alpha_j$ (no $0/0$ rows).
#   For one large batch from Python, numpy's `Generator.dirichlet` is about as fast (see the benchmark);
#   the kernel's advantage is that it runs inside other kernels, with no Python in the loop.
