# %% [markdown]
# # The Dirichlet model: compositions, the censored statistic and the likelihood
#
# * **For:** turning compositional records (shares of a day, of a budget) into the statistic every method of dplit releases or analyses, and writing down its likelihood under the Dirichlet model (Guo et al., Sec. 2.2, 3.1, 4.2.4).
# * **You need:** an $(n, d)$ array of compositions, or raw non-negative amounts to `close` into compositions.
# * **You get:** validated data, the sufficient statistic $S_0$ and its censored version $S_0(\mathbf D, a)$, the log-likelihood, the moments of $\log\mathbf x$ and the Fisher information.
#
# Reading order: this notebook sets up the model; notebook 10 derives the maximum-likelihood estimator (and the
# numba special functions it needs), notebook 11 the fast Dirichlet draws. `dplit.dirichlet` gathers all three:
# import from there.
#
# Every compositional method in dplit (the release, DPBoots, the MCMC samplers, ABC, the asymptotic
# Gibbs sampler, the simulation study) stands on this notebook and its two companions. It follows Guo, Barrientos
# & Peña ("Guo et al."), Sec. 2.2 (the model), 3.1 (the censored statistic) and 4.2.4 (the moments of $\log x$).
#
# ## Parameters

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display
from scipy import special, stats

from dplit.config import is_quick, size

SEED = 20261123
rng = np.random.default_rng(SEED)
n_rep = size(full=2_000, quick=300)            # replicated data sets in the first figure
print(f"quick mode: {is_quick()}; n_rep = {n_rep}")

# %% [markdown]
# ## What it gives
#
# The result first, from the finished module `dplit.dirichlet`: `n_rep` data sets of $n = 100$ records from
# $\mathrm{Dirichlet}(2, 5, 3)$, each reduced to the $d = 3$ numbers of its statistic $S_0$ (the mean logs, Sec. 2.2), which
# carry all it says about $\boldsymbol\alpha$. Left: $S_0$ of each data set (two of its three coordinates) around the
# exact mean $\boldsymbol\mu_\alpha$, with the 90% ellipse of the normal law $N(\boldsymbol\mu_\alpha, \boldsymbol\Sigma_\alpha/n)$ of
# Sec. 4.2.4; the checks: the replicates average to $\boldsymbol\mu_\alpha$ and the ellipse holds about 90% of them. Right:
# the maximum-likelihood estimate from each $S_0$ (notebook 10): spread along the rays $\alpha_1/\alpha_2 =$ const,
# since $n = 100$ records pin down the mean composition sooner than the precision $\alpha_0$ (section 5).

# %%
import dplit.dirichlet as dd

alpha_fig, n_fig, fig_rng = np.array([2.0, 5.0, 3.0]), 100, np.random.default_rng(SEED + 1)
s_rep = np.array([dd.sufficient_stat(dd.dirichlet_draws(alpha_fig, n_fig, rng=fig_rng)) for _ in range(n_rep)])
mu_fig, cov_fig = dd.logx_mean(alpha_fig), dd.logx_cov(alpha_fig) / n_fig
z = np.abs(s_rep.mean(axis=0) - mu_fig) / np.sqrt(np.diag(cov_fig) / n_rep)
dev = s_rep[:, :2] - mu_fig[:2]
inside = np.mean(np.einsum("ij,jk,ik->i", dev, np.linalg.inv(cov_fig[:2, :2]), dev) <= stats.chi2(2).ppf(0.9))
print(f"mean of S0 from mu_alpha, in standard errors: {np.round(z, 2)}; inside the 90% ellipse: {inside:.3f}")
assert np.all(z < 5) and abs(inside - 0.9) < 5 * np.sqrt(0.09 / n_rep)
a_rep = np.array([dd.dirichlet_mle(s) for s in s_rep])
fig, (ax, ax_mle) = plt.subplots(1, 2, figsize=(7, 2.8))
ax.plot(s_rep[:, 0], s_rep[:, 1], ".", ms=2, alpha=0.4)
vals, vecs = np.linalg.eigh(cov_fig[:2, :2])
t = np.linspace(0, 2 * np.pi, 200)
ell = mu_fig[:2, None] + vecs @ (np.sqrt(vals * stats.chi2(2).ppf(0.9))[:, None] * np.stack([np.cos(t), np.sin(t)]))
ax.plot(*ell, "k", lw=1.2)
ax.plot(*mu_fig[:2], "k+", ms=10, mew=2)
ax.set(xlabel=r"$S_{0,1}$ (mean $\log x_1$)", ylabel=r"$S_{0,2}$ (mean $\log x_2$)")
ax.set_title("$S_0$ of each data set, its exact mean (+)\n" r"and the 90% ellipse of $N(\mu_\alpha, \Sigma_\alpha/n)$", fontsize=10)
ax_mle.plot(a_rep[:, 0], a_rep[:, 1], ".", ms=2, alpha=0.4, color="C1")
ax_mle.plot(*alpha_fig[:2], "*", c="k", ms=11)
ax_mle.set(xlabel=r"$\hat\alpha_1$", ylabel=r"$\hat\alpha_2$")
ax_mle.set_title("the MLE of each data set\n" r"and the true $(\alpha_1, \alpha_2)$ (star)", fontsize=10)
fig.tight_layout()
plt.show()

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
# This notebook writes the plumbing (inputs, statistics, likelihood) and the moments. Solving
# $\boldsymbol\mu_\alpha = \mathbf s$ needs more care than it seems (near the boundary of the statistic's range
# $\alpha_0$ is huge): that is notebook 10. Drawing from the model, fast and inside numba, is notebook 11.

# %%
#| default_exp dirichlet
#| internal censored_stat_kernel
#| export
import math

import numpy as np
from numba import njit
from scipy import special

from dplit import _validate as check

# The estimator (notebook 10) and the draws (notebook 11) live in their own modules; importing their
# public names here (``name as name`` marks a re-export) keeps ``from dplit.dirichlet import ...`` the one
# place to import the Dirichlet model from.
from dplit.dirichlet_fit import MLEInfo as MLEInfo
from dplit.dirichlet_fit import check_alpha as check_alpha
from dplit.dirichlet_fit import check_stat as check_stat
from dplit.dirichlet_fit import dirichlet_mle as dirichlet_mle
from dplit.dirichlet_fit import dirichlet_mle_kernel as dirichlet_mle_kernel
from dplit.dirichlet_fit import dirichlet_mle_reference as dirichlet_mle_reference
from dplit.dirichlet_fit import gammainc_pq as gammainc_pq
from dplit.dirichlet_fit import in_stat_range as in_stat_range
from dplit.dirichlet_fit import in_stat_range_kernel as in_stat_range_kernel
from dplit.dirichlet_fit import logx_cov_kernel as logx_cov_kernel
from dplit.dirichlet_fit import logx_mean_kernel as logx_mean_kernel
from dplit.dirichlet_fit import ndtri_lower as ndtri_lower
from dplit.dirichlet_fit import trigamma_kernel as trigamma_kernel
from dplit.dirichlet_random import any_below_one as any_below_one
from dplit.dirichlet_random import dirichlet_draws as dirichlet_draws
from dplit.dirichlet_random import dirichlet_draws_fast_kernel as dirichlet_draws_fast_kernel
from dplit.dirichlet_random import dirichlet_draws_kernel as dirichlet_draws_kernel
from dplit.dirichlet_random import gamma_large_kernel as gamma_large_kernel
from dplit.dirichlet_random import log_dirichlet_draws_reference as log_dirichlet_draws_reference
from dplit.dirichlet_random import log_gamma_draw_kernel as log_gamma_draw_kernel
from dplit.dirichlet_random import log_std_gamma_kernel as log_std_gamma_kernel
from dplit.dirichlet_random import logsumexp_kernel as logsumexp_kernel

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
from dplit.testing import raises  # True when fn(*args) raises exc (with `match` in its message)


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
# scale of the Laplace noise in the release (notebook 15). `sufficient_stat` refuses zeros (and
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
# ## 3. The log-likelihood (eq. 1)
#
# $\ell(\boldsymbol\alpha; \mathbf s, n) = n\big[\log\Gamma(\alpha_0) - \sum_j\log\Gamma(\alpha_j) + \sum_j(\alpha_j - 1)s_j\big]$,
# vectorised over leading axes of `alpha` so that a whole grid (or a batch of MCMC proposals) goes in one call.
# `n` may be any positive number: the rescaled likelihood of DPreMCMC uses $n/b$ copies. The arguments are
# checked by `check_alpha` and `check_stat` (notebook 10).

# %%
#| export
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
# ## 4. Moments of log x and the Fisher information (Guo et al., Sec. 4.2.4)
#
# $\boldsymbol\mu_\alpha$ and $\boldsymbol\Sigma_\alpha$ as derived in section 1; the Fisher
# information of $n$ records is $n\boldsymbol\Sigma_\alpha$ (the Hessian of the cumulant, because the
# natural parameter is $\boldsymbol\alpha - \mathbf 1$). By the central limit theorem
# $S_0(\mathbf D) \approx N(\boldsymbol\mu_\alpha, \boldsymbol\Sigma_\alpha / n)$ — note the $1/n$,
# which Sec. 4.2.4 leaves out (a known slip; the intent is the law of a mean of $n$ records).
# The matrix is positive definite: a diagonal with positive entries minus a rank-one term
# that is smaller, because $\Psi_1(\alpha_0)\sum_j 1/\Psi_1(\alpha_j) < 1$. Their numba twins for one
# $\boldsymbol\alpha$, `logx_mean_kernel` and `logx_cov_kernel`, are in notebook 10.

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
# For the five parameters of Guo et al.'s simulation study (Sec. 5.1): $\boldsymbol\mu_\alpha$, the standard deviations
# $\sqrt{\mathrm{diag}\,\boldsymbol\Sigma_\alpha}$ of one record's $\log x_j$, and the distance $\delta = 1 - \sum_j e^{\mu_j}$ of
# $\boldsymbol\mu_\alpha$ from the boundary of the range, which sets the precision of the MLE problem (notebook 10).

# %%
paper_alphas = {"alpha1": [3.3, 4.4], "alpha2": [0.5, 0.5, 0.5], "alpha3": [2.2, 3.3, 4.4],
                "alpha4": [2, 20, 2], "alpha5": [2.2, 3.3, 4.4, 5.5, 6.6]}
for name, alpha in paper_alphas.items():
    mu, sd = logx_mean(alpha), np.sqrt(np.diag(logx_cov(alpha)))
    delta_mu = 1 - np.exp(mu).sum()
    assert 0 < delta_mu < 1 and in_stat_range(mu)
    print(f"{name}: mu = {np.round(mu, 3)}, sd = {np.round(sd, 3)}, delta = {delta_mu:.3f}")

# %% [markdown]
# ## 5. Explore: the likelihood surface for d = 2
#
# For two parts, draw $n$ records from $\mathrm{Dirichlet}(\alpha_1, \alpha_2)$ (`dirichlet_draws`, notebook 11), compute
# $S_0$, find the MLE (`dirichlet_mle`, notebook 10) and show the
# log-likelihood $\ell(\boldsymbol\alpha) - \ell(\hat{\boldsymbol\alpha})$ over a grid around the MLE,
# with the contours of the likelihood-ratio 50%, 90% and 99% regions ($\chi^2_2$ quantiles), the truth (star),
# the MLE (dot) and the 90% ellipse of the normal approximation with the Fisher information
# $n\boldsymbol\Sigma_{\hat\alpha}$. The surface is a long ridge along the rays $\alpha_1/\alpha_2 =$ const: the mean
# composition is pinned down much sooner than the precision $\alpha_0$ (right panel: the profile along
# the ray through the MLE).

# %%
def likelihood_surface(alpha1=3.3, alpha2=4.4, n=100, seed=1):
    """Simulate n records from Dirichlet(alpha1, alpha2) and plot the log-likelihood surface.

    Returns a dict with the statistic `s`, the MLE `alpha_hat`, `grid_max` (alpha at the best grid
    point) and `L_max` (the largest log-likelihood on the grid minus that at the MLE).
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
    fig, ax = plt.subplots(1, 2, figsize=(8, 3.4))
    levels = -0.5 * stats.chi2(2).ppf([0.99, 0.9, 0.5])
    ax[0].contourf(g1, g2, np.maximum(L.T, -30), levels=30, cmap="viridis")
    cs_ = ax[0].contour(g1, g2, L.T, levels=levels, colors="w", linewidths=0.9)
    ax[0].clabel(cs_, fmt={lv: f"{p:.0%}" for lv, p in zip(levels, [0.99, 0.9, 0.5])}, fontsize=9)
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
    ax[0].legend(fontsize=9, loc="upper left")
    ax[0].set_title(f"n = {n}: log-likelihood minus its maximum", fontsize=10)
    cgrid = a_hat.sum() * np.exp(np.linspace(-half, half, 300))
    prof = loglik(np.outer(cgrid, a_hat / a_hat.sum()), s, n) - loglik(a_hat, s, n)
    ax[1].plot(cgrid, prof)
    ax[1].axvline(alpha.sum(), c="orange", ls="--", lw=1, label=r"true $\alpha_0$")
    ax[1].axhline(-0.5 * stats.chi2(1).ppf(0.9), c="k", ls=":", lw=0.8, label="90% profile cut")
    ax[1].set_ylim(max(prof.min(), -20), 0.5)
    ax[1].set_xlabel(r"$\alpha_0$ along the ray through the MLE")
    ax[1].legend(fontsize=9)
    fig.tight_layout()
    plt.show()                          # inside the widget, the figure goes to the widget's output
    return {"s": s, "alpha_hat": a_hat, "grid_max": A[i, j], "L_max": L.max()}


# %% [markdown]
# With $n = 5000$ records from the same $\boldsymbol\alpha$ the ridge along $\alpha_0$ shrinks and the likelihood-ratio
# regions become the Fisher ellipses:

# %%
# NBVAL_IGNORE_OUTPUT
res_big = likelihood_surface(n=5000)
assert np.all(np.abs(np.log(res_big["grid_max"] / res_big["alpha_hat"])) < 0.05) and res_big["L_max"] <= 1e-9

# %% [markdown]
# The widget's default view ($n = 100$), with its checks: the best grid point lies next to the MLE, and no grid point
# beats the MLE.

# %%
# NBVAL_IGNORE_OUTPUT
res = likelihood_surface()
assert np.all(np.abs(np.log(res["grid_max"] / res["alpha_hat"])) < 0.05)   # grid optimum next to the MLE
assert res["L_max"] <= 1e-9                                                 # nothing beats the MLE
assert np.allclose(res["alpha_hat"], [3.3, 4.4], rtol=0.6)

# %%
# NBVAL_IGNORE_OUTPUT
from ipywidgets import FloatLogSlider, IntSlider, interactive
from dplit.testing import dead_controls  # noqa: E402

explorer = interactive(likelihood_surface,
                       alpha1=FloatLogSlider(value=3.3, base=10, min=-1, max=2, step=0.05),
                       alpha2=FloatLogSlider(value=4.4, base=10, min=-1, max=2, step=0.05),
                       n=IntSlider(value=100, min=5, max=5000, step=5),
                       seed=IntSlider(value=1, min=0, max=50))
assert dead_controls(explorer) == []  # every control changes the view (one its callback ignores fails)
explorer

# %% [markdown]
# ## When to use this

# %%
a_small, a_big = res["alpha_hat"], res_big["alpha_hat"]
display(Markdown(f"""
* **Data in**: pass raw amounts through `close` and every data set through `check_compositions`; keep zeros (they
  are data) and use `censored_stat(X, a)`; `sufficient_stat` is for data without zeros. Inside numba,
  `censored_stat_kernel(X, a)`.
* **The likelihood**: `loglik(alpha, s, n)` takes a whole grid or batch of $\\boldsymbol\\alpha$ at once;
  `logx_mean`, `logx_cov` and `fisher_information` give $\\boldsymbol\\mu_\\alpha$, $\\boldsymbol\\Sigma_\\alpha$ and
  $n\\boldsymbol\\Sigma_\\alpha$, and $S_0 \\approx N(\\boldsymbol\\mu_\\alpha, \\boldsymbol\\Sigma_\\alpha/n)$.
* **Small samples**: the likelihood is a long ridge in $\\alpha_0$. In section 5 the MLE from $n = 100$ records of
  $\\boldsymbol\\alpha = (3.3, 4.4)$ is ({a_small[0]:.2f}, {a_small[1]:.2f}), from $n = 5000$ records
  ({a_big[0]:.2f}, {a_big[1]:.2f}); for small $n$ take intervals for $\\alpha_0$ from the profile likelihood or a
  bootstrap, not from the Fisher ellipse.
* **Estimating and simulating**: `dirichlet_mle` (notebook 10) and `dirichlet_draws` (notebook 11), both
  importable from `dplit.dirichlet`.
"""))
