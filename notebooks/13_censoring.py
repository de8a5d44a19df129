# %% [markdown]
# # Censoring the sufficient statistic: what a threshold costs
#
# How often left-censoring at a threshold a touches a Dirichlet record, how much bias it puts into the censored statistic, and the Bernstein-type bounds of Guo et al., Supplement S1.
#
# * **For:** choosing the threshold a of a release: what censoring the records at a costs the statistic.
# * **You need:** a Dirichlet parameter (or a guess of it) and candidate thresholds.
# * **You get:** the probability a record is touched, the bias of the censored statistic, and the bounds of Guo et al., Supp. S1; what exact zeros do to the estimates, the advice a release gives about them (`zero_advice`), and two treatments (`amalgamate`, `drop_zero_rows`).

# %%
#| default_exp censoring
#| internal likely_zero_components COUNT_SENSITIVITY

# %% [markdown]
# To release the Dirichlet sufficient statistic $S_0(\mathbf D) = n^{-1}\sum_i \log \mathbf x_i$ with the
# Laplace mechanism, Guo et al. (Sec. 3.1) first **left-censor** every entry at a small $a \in (0, 1)$,
# $\tilde x_{ij} = \max\{x_{ij}, a\}$, so that one record can move the statistic by at most $-d\log(a)/n$
# (notebook `15_release`). The price is that $S_0(\mathbf D, a) := S_0(\tilde{\mathbf D})$ is a biased
# estimate of what the model needs. This notebook measures that price for one record
# $\mathbf x \sim \mathrm{Dirichlet}(\boldsymbol\alpha)$ (Supplement S1):
#
# 1. the probability that an entry is censored, and the expected proportion of censored entries;
# 2. the probability that a record has at least one censored entry, $p(a)$: the quantity the threshold rule of Sec. 3.2 controls;
# 3. the bias $E[\log \tilde x_j] - E[\log x_j]$ (and the variance of $\log\tilde x_j$, used in `15_release`);
# 4. the Bernstein-type upper bounds of S1, after correcting a sign slip in the printed formula.
# 5. what exact zeros do (they enter as $\log a$ at every threshold), the advice a release can give about them, and
#    two treatments (amalgamation, dropping records).
#
# Notation: $\alpha_0 = \sum_k \alpha_k$ and $\beta_j = \alpha_0 - \alpha_j$, so that the marginal of one entry is
# $x_j \sim \mathrm{Beta}(\alpha_j, \beta_j)$.

# %%
import numpy as np
import matplotlib.pyplot as plt
from scipy import special, stats

from dplit.config import size

n_mc = size(full=400_000, quick=40_000)  # Monte Carlo records for the checks
n_grid = size(full=60, quick=15)  # thresholds per curve in the figures
rng = np.random.default_rng(20261123)
# The five parameter vectors of the simulation study (Guo et al., Sec. 5.1).
from dplit.censoring import PAPER_ALPHAS   # the five true parameters of Sec. 5.1, defined once (in this notebook's code below)
ALPHAS = {f"alpha{k}": np.array(a) for k, a in enumerate(PAPER_ALPHAS, 1)}   # alpha1 ... alpha5

# %% [markdown]
# ## What it gives
#
# The result first, from the finished module `dplit.censoring` (sections 1-4 derive it): our version of Figure S1 of
# Guo et al., exact curves (incomplete beta functions and one-dimensional integrals, no simulation) against the
# threshold $a$ for the five $\boldsymbol\alpha$ of the simulation study (Sec. 5.1). (a) The expected proportion of
# censored entries, $\frac1d\sum_j P(x_j < a)$; (b) the bias of the censored statistic, $E[\log\tilde x_j] - E[\log x_j]$
# averaged over the $d$ components. Both rise with $a$, slowly while $a$ is far below every $E[x_j]$; the small
# $\alpha_0$ of $\boldsymbol\alpha_2$ pays most. The check: at $a = 0.1$ (the paper's largest candidate) both curves
# meet a Monte Carlo average over simulated records (within 5 standard errors), both increase in $a$, and
# $\boldsymbol\alpha_2$ has the largest bias everywhere. Section "Figure S1" below compares them with the paper's text.

# %%
# NBVAL_IGNORE_OUTPUT
import dplit.censoring as cens

g_fig = np.random.default_rng(20261124)   # its own stream: the draws below do not depend on this cell
a_fig = np.geomspace(1e-6, 0.3, n_grid)
prop = {k: cens.expected_censored_proportion(v, a_fig) for k, v in ALPHAS.items()}
avg_bias = {k: cens.censoring_bias(v, a_fig).mean(axis=1) for k, v in ALPHAS.items()}
for k, v in ALPHAS.items():
    assert np.all(np.diff(prop[k]) >= 0) and np.all(np.diff(avg_bias[k]) > 0)
    x = g_fig.dirichlet(v, size=n_mc)         # the truth at a = 0.1, by simulation
    cut, gap = x < 0.1, np.log(np.maximum(x, 0.1)) - np.log(x)
    se_p, se_b = cut.mean(axis=1).std() / np.sqrt(n_mc), gap.mean(axis=1).std() / np.sqrt(n_mc)
    assert abs(cut.mean() - cens.expected_censored_proportion(v, 0.1)) < 5 * se_p, k
    assert abs(gap.mean() - cens.censoring_bias(v, 0.1).mean()) < 5 * se_b, k
# alpha2 (sum 1.5) is censored far more often than alpha5 (sum 22) at small a, and has a larger bias.
i_small = np.searchsorted(a_fig, 1e-3)
assert prop["alpha2"][i_small] > 10 * prop["alpha5"][i_small]
assert all(np.all(avg_bias["alpha2"] > avg_bias[k]) for k in ALPHAS if k != "alpha2")

fig, axes = plt.subplots(1, 2, figsize=(7, 2.8))
for k, v in ALPHAS.items():
    label = f"$\\boldsymbol{{\\alpha}}_{k[-1]}$, $\\alpha_0$ = {v.sum():g}"
    axes[0].plot(a_fig, prop[k], label=label)
    axes[1].plot(a_fig, avg_bias[k], label=label)
axes[0].set(xscale="log", xlabel="threshold $a$", ylabel="censored entries")
axes[1].set(xscale="log", yscale="log", xlabel="threshold $a$", ylabel="average bias")
for axis, title in zip(axes, ("(a) expected proportion", "(b) bias of the censored statistic")):
    axis.set_title(title, fontsize=10)
    axis.tick_params(labelsize=9)
axes[1].legend(fontsize=9, loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False)
fig.tight_layout()

# %% [markdown]
# ## 1. Censored entries (S1)
#
# An entry is censored when $x_j < a$. Its probability is the regularised incomplete beta function,
#
# $$P(x_j < a) = I_a(\alpha_j, \beta_j),$$
#
# and, the records being identically distributed, the expected proportion of censored entries in a data set is
# $E\big[\frac{1}{nd}\sum_{i,j}\mathbb 1(x_{ij} < a)\big] = \frac1d \sum_j I_a(\alpha_j, \beta_j)$ (S1).
# Every function below accepts a scalar threshold or an array of thresholds; outputs have shape
# `np.shape(a) + (d,)` for per-entry quantities.

# %%
#| export
import math

import numpy as np
from scipy import integrate, optimize, special

from dplit import _validate as check
from dplit.dirichlet import check_alpha, check_compositions, dirichlet_mle, in_stat_range
from dplit.mechanisms import geometric_reach

#: The five true Dirichlet parameters alpha_1, ..., alpha_5 of Guo et al.'s simulation study (Sec. 5.1): the censoring
#: costs here, the release's checks (notebook 15) and the study (notebook 62) use them.
PAPER_ALPHAS = ((3.3, 4.4), (0.5, 0.5, 0.5), (2.2, 3.3, 4.4), (2.0, 20.0, 2.0), (2.2, 3.3, 4.4, 5.5, 6.6))


def _check_args(alpha, a, *, scalar=False):
    """Return (alpha, a): a 1-D Dirichlet parameter (notebook 12's check) and threshold(s) in (0, 1)."""
    alpha = check_alpha(alpha, ndim=1)
    a = check.unit_interval_array(a, "a")
    if scalar and a.ndim != 0:
        raise ValueError(f"a must be a scalar threshold here, got shape {a.shape}")
    return alpha, (float(a) if scalar else a)


def entry_censoring_prob(alpha, a):
    """Probability that each entry of a Dirichlet record is censored at ``a``.

    Parameters
    ----------
    alpha : array_like, shape (d,)
        Dirichlet parameter, entries > 0.
    a : float or array_like
        Censoring threshold(s) in (0, 1).

    Returns
    -------
    ndarray, shape ``np.shape(a) + (d,)``
        ``P(x_j < a) = I_a(alpha_j, beta_j)`` with ``beta_j = sum(alpha) - alpha_j`` (Guo et al., S1).
    """
    alpha, a = _check_args(alpha, a)
    beta = alpha.sum() - alpha
    return special.betainc(alpha, beta, a[..., None])


def expected_censored_proportion(alpha, a):
    """Expected proportion of censored entries, ``mean_j I_a(alpha_j, beta_j)`` (Guo et al., S1).

    ``alpha`` and ``a`` as in :func:`entry_censoring_prob`; a float, or an array of shape
    ``np.shape(a)``.
    """
    out = entry_censoring_prob(alpha, a).mean(axis=-1)
    return out[()] if out.ndim == 0 else out


# %%
alpha = ALPHAS["alpha3"]
x = rng.dirichlet(alpha, size=n_mc)
for a in (1e-3, 0.05, 0.2):
    exact = entry_censoring_prob(alpha, a)
    mc = (x < a).mean(axis=0)
    se = np.sqrt(exact * (1 - exact) / n_mc)
    assert np.all(np.abs(mc - exact) < 5 * se + 1e-12), (a, mc, exact)
assert entry_censoring_prob(alpha, [0.1, 0.2]).shape == (2, 3)
assert np.isclose(expected_censored_proportion(alpha, 0.05), entry_censoring_prob(alpha, 0.05).mean())
# Symmetric Dirichlet(1, 1): x_1 is uniform, so P(x_1 < a) = a.
assert np.allclose(entry_censoring_prob([1.0, 1.0], 0.3), 0.3)
for bad in ([1.0], [1.0, -2.0], [[1.0, 2.0]], ["a", "b"], [True, True]):
    try:
        entry_censoring_prob(bad, 0.1)
    except (ValueError, TypeError) as err:
        assert "alpha" in str(err)
    else:
        raise AssertionError(bad)
for bad_a in (0.0, 1.0, -0.1, np.nan, "0.1"):
    try:
        entry_censoring_prob(alpha, bad_a)
    except (ValueError, TypeError) as err:
        assert "(0, 1)" in str(err) or "a must be" in str(err), err
    else:
        raise AssertionError(bad_a)

# %% [markdown]
# ## 2. Records with at least one censored entry
#
# The threshold rule of Sec. 3.2 is written in terms of records, not entries:
# $p(a) = P(\min_j x_j < a)$. Since the entries sum to one, $\min_j x_j \le 1/d$, so $p(a) = 1$ for $a \ge 1/d$.
# For smaller $a$:
#
# * $d = 2$: two entries cannot both be below $a \le 1/2$, so the events are disjoint and
#   $p(a) = I_a(\alpha_1, \alpha_2) + I_a(\alpha_2, \alpha_1)$ exactly;
# * $d = 3$: conditionally on $x_1$, $x_2/(1 - x_1) \sim \mathrm{Beta}(\alpha_2, \alpha_3)$ (the aggregation
#   property), so with $c = a/(1-x_1)$,
#   $$1 - p(a) = \int_a^{1-2a} \mathrm{Beta}(x_1 \mid \alpha_1, \alpha_2+\alpha_3)\,\big[I_{1-c}(\alpha_2,\alpha_3) - I_{c}(\alpha_2,\alpha_3)\big]\,dx_1,$$
#   a one-dimensional integral that we evaluate with adaptive quadrature;
# * $d \ge 4$: the same recursion nests $d-2$ integrals; we use a Monte Carlo estimate instead and
#   report its standard error. The union bound $p(a) \le \sum_j I_a(\alpha_j, \beta_j)$ holds for every $d$.

# %%
#| export
def _record_prob_d3(alpha, a):
    """Exact P(min_j x_j < a) for d = 3 and a < 1/3 (one-dimensional quadrature)."""
    a1, a2, a3 = alpha
    marg = special.beta(a1, a2 + a3)

    def integrand(x1):
        c = a / (1.0 - x1)
        inner = special.betainc(a2, a3, 1.0 - c) - special.betainc(a2, a3, c)
        return np.exp((a1 - 1) * np.log(x1) + (a2 + a3 - 1) * np.log1p(-x1)) / marg * inner

    keep, _ = integrate.quad(integrand, a, 1.0 - 2.0 * a, limit=200, epsabs=1e-13, epsrel=1e-11)
    return float(min(max(1.0 - keep, 0.0), 1.0))


def record_censoring_prob(alpha, a, *, method="auto", n_mc=200_000, rng=None):
    """Probability ``p(a) = P(min_j x_j < a)`` that a Dirichlet record has a censored entry.

    Parameters
    ----------
    alpha : array_like, shape (d,)
        Dirichlet parameter of the records.
    a : float
        One threshold in (0, 1).
    method : {"auto", "exact", "mc"}
        ``"exact"`` is available for ``d <= 3`` (closed form for d = 2, one quadrature for d = 3)
        and for ``a >= 1/d`` (then ``p = 1``); ``"auto"`` uses it when available, Monte Carlo otherwise.
    n_mc : int
        Monte Carlo records.
    rng : None, int or numpy.random.Generator
        Randomness for the Monte Carlo estimate.

    Returns
    -------
    p : float
        The probability (or its estimate).
    std_error : float
        Monte Carlo standard error; 0.0 for exact values.
    """
    alpha, a = _check_args(alpha, a, scalar=True)
    check.choice(method, "method", ("auto", "exact", "mc"))
    n_mc = check.count(n_mc, "n_mc", 2)
    d = alpha.size
    exact_available = d <= 3 or a >= 1.0 / d
    if method == "exact" and not exact_available:
        raise ValueError(f"method='exact' needs d <= 3 or a >= 1/d, got d = {d}, a = {a}")
    if method != "mc" and exact_available:
        if a >= 1.0 / d:
            return 1.0, 0.0
        if d == 2:
            return float(special.betainc(alpha[0], alpha[1], a) + special.betainc(alpha[1], alpha[0], a)), 0.0
        return _record_prob_d3(alpha, a), 0.0
    # Drawn in one block of (n_mc, d) doubles: bounded before the draw, naming n_mc.
    check.work_size(8.0 * n_mc * d, f"n_mc = {n_mc:,} Monte Carlo records x d = {d}", "lower n_mc")
    rng = check.rng(rng)
    hits = (rng.dirichlet(alpha, size=n_mc).min(axis=1) < a).mean()
    return float(hits), float(np.sqrt(max(hits * (1 - hits), 1.0 / n_mc) / n_mc))


# %%
# d = 3 quadrature against Monte Carlo, and the uniform case: Dirichlet(1,...,1) gives 1 - p(a) = (1 - d a)^(d-1).
for alpha_chk, a in ((ALPHAS["alpha3"], 0.05), (ALPHAS["alpha2"], 1e-3), (np.ones(3), 0.1)):
    p_exact, _ = record_censoring_prob(alpha_chk, a)
    p_mc, se = record_censoring_prob(alpha_chk, a, method="mc", n_mc=n_mc, rng=rng)
    assert abs(p_mc - p_exact) < 5 * se, (alpha_chk, a, p_exact, p_mc, se)
assert np.isclose(record_censoring_prob(np.ones(3), 0.1)[0], 1 - 0.7**2, rtol=1e-9)
assert np.isclose(record_censoring_prob(np.ones(2), 0.1)[0], 0.2)
# d = 5: Monte Carlo, checked against the uniform closed form.
p5, se5 = record_censoring_prob(np.ones(5), 0.05, n_mc=n_mc, rng=rng)
assert se5 > 0 and abs(p5 - (1 - (1 - 5 * 0.05) ** 4)) < 5 * se5
assert record_censoring_prob(ALPHAS["alpha5"], 0.2) == (1.0, 0.0)  # a >= 1/d
# Union bound, and a record is censored at least as often as its most exposed entry.
for alpha_chk in ALPHAS.values():
    if alpha_chk.size <= 3:
        p, _ = record_censoring_prob(alpha_chk, 0.01)
        pj = entry_censoring_prob(alpha_chk, 0.01)
        assert pj.max() - 1e-12 <= p <= pj.sum() + 1e-12
try:
    record_censoring_prob(np.ones(4), 0.01, method="exact")
except ValueError as err:
    assert "d <= 3" in str(err)
else:
    raise AssertionError("exact for d = 4 must raise")
try:
    record_censoring_prob(np.ones(4), 0.01, method="mc", n_mc=10**13)  # 320 TB of draws: refused before drawing
except ValueError as err:
    assert "n_mc" in str(err) and "memory" in str(err)
else:
    raise AssertionError("n_mc past the memory limit must raise")

# %% [markdown]
# ## 3. Bias of the censored statistic
#
# Censoring only raises values, so $E[\log\tilde x_j] \ge E[\log x_j]$. S1 writes the difference as
#
# $$b_j(a) = E[\log \tilde x_j] - E[\log x_j] = \int_0^a (\log a - \log x)\,\mathrm{Beta}(x \mid \alpha_j, \beta_j)\,dx > 0 .$$
#
# The integrand has a logarithmic singularity at $0$ times $x^{\alpha_j-1}$, which quadrature handles badly
# for small $\alpha_j$. Integrating by parts ($\frac{d}{dx}(\log a - \log x) = -1/x$, the boundary terms vanish
# because $F(x)\log x \to 0$) and substituting $x = a e^{-u}$ gives a **stable form** with a bounded, monotone integrand:
#
# $$b_j(a) = \int_0^a \frac{I_x(\alpha_j,\beta_j)}{x}\,dx = \int_0^\infty I_{a e^{-u}}(\alpha_j, \beta_j)\,du .$$
#
# The same steps give the second moment, which `15_release` needs for the mean squared error:
# $E[(\log\tilde x_j)^2] - E[(\log x_j)^2] = \int_0^\infty 2(\log a - u)\, I_{a e^{-u}}(\alpha_j,\beta_j)\,du$, with
# $E[\log x_j] = \psi(\alpha_j) - \psi(\alpha_0)$ and $\mathrm{Var}(\log x_j) = \psi'(\alpha_j) - \psi'(\alpha_0)$.
#
# An independent check is the series obtained by expanding $(1-x)^{\beta_j - 1}$ and integrating term by term,
# $b_j(a) = B(\alpha_j,\beta_j)^{-1}\sum_{k\ge0} \binom{\beta_j-1}{k}(-1)^k \frac{a^{\alpha_j+k}}{(\alpha_j+k)^2}$.

# %%
#| export
def _tail_integral(p, q, a, weight):
    """Integral over u in (0, inf) of weight(u) * I_{a exp(-u)}(p, q)."""
    val, _ = integrate.quad(lambda u: weight(u) * special.betainc(p, q, a * np.exp(-u)),
                            0.0, np.inf, limit=400, epsabs=1e-14, epsrel=1e-10)
    return val


def censoring_bias(alpha, a):
    """Bias of the censored log statistic, ``E[log max(x_j, a)] - E[log x_j]`` (Guo et al., S1).

    Computed as the stable integral ``int_0^inf I_{a exp(-u)}(alpha_j, beta_j) du`` (the S1
    integral after integration by parts and ``x = a exp(-u)``). ``alpha`` and ``a`` as in
    :func:`entry_censoring_prob`; returns the non-negative biases, one per component, shape
    ``np.shape(a) + (d,)``.
    """
    alpha, a = _check_args(alpha, a)
    beta = alpha.sum() - alpha
    out = np.empty(a.shape + alpha.shape)
    for idx in np.ndindex(a.shape):
        for j in range(alpha.size):
            out[idx + (j,)] = _tail_integral(alpha[j], beta[j], float(a[idx]), lambda u: 1.0)
    return out


def censored_logx_moments(alpha, a):
    """Mean and variance of ``log max(x_j, a)`` for one record ``x ~ Dirichlet(alpha)``.

    Parameters
    ----------
    alpha, a : array_like and float
        One Dirichlet parameter, shape (d,), and one threshold in (0, 1).

    Returns
    -------
    mean, var : ndarray, shape (d,)
        ``E[log max(x_j, a)] = psi(alpha_j) - psi(alpha_0) + bias_j`` and the variance, from the
        stable integrals of S1 (the mean of ``n`` records has variance ``var / n``).
    """
    alpha, a = _check_args(alpha, a, scalar=True)
    beta = alpha.sum() - alpha
    log_a = np.log(a)
    mean0 = special.digamma(alpha) - special.digamma(alpha.sum())
    second0 = special.polygamma(1, alpha) - special.polygamma(1, alpha.sum()) + mean0**2
    bias = np.array([_tail_integral(p, q, a, lambda u: 1.0) for p, q in zip(alpha, beta)])
    d_second = np.array([_tail_integral(p, q, a, lambda u: 2.0 * (log_a - u)) for p, q in zip(alpha, beta)])
    mean = mean0 + bias
    var = second0 + d_second - mean**2
    return mean, var


# %%
def bias_series(alpha_j, beta_j, a, n_terms=400):
    """Term-by-term series of the bias (an independent check of the stable integral)."""
    k = np.arange(n_terms)
    binom = special.binom(beta_j - 1, k) * (-1.0) ** k
    return np.sum(binom * a ** (alpha_j + k) / (alpha_j + k) ** 2) / special.beta(alpha_j, beta_j)


for alpha_chk in ALPHAS.values():
    beta_chk = alpha_chk.sum() - alpha_chk
    for a in (1e-6, 1e-3, 0.05, 0.3):
        b = censoring_bias(alpha_chk, a)
        ref = [bias_series(p, q, a) for p, q in zip(alpha_chk, beta_chk)]
        assert np.allclose(b, ref, rtol=1e-7, atol=1e-15), (alpha_chk, a, b, ref)
        assert np.all(b >= 0)

# Monte Carlo: mean and variance of log max(x, a), and the bias itself.
alpha_chk, a = ALPHAS["alpha2"], 0.05
x = rng.dirichlet(alpha_chk, size=n_mc)
logx_c = np.log(np.maximum(x, a))
mean, var = censored_logx_moments(alpha_chk, a)
assert np.all(np.abs(logx_c.mean(axis=0) - mean) < 5 * np.sqrt(var / n_mc))
assert np.allclose(logx_c.var(axis=0), var, rtol=0.03)
diff = logx_c - np.log(x)  # per-record bias contributions, >= 0
assert np.all(np.abs(diff.mean(axis=0) - censoring_bias(alpha_chk, a)) < 5 * diff.std(axis=0) / np.sqrt(n_mc))
# Small a: the censored moments tend to the uncensored ones; the bias increases in a.
mean_s, var_s = censored_logx_moments(alpha_chk, 1e-12)
assert np.allclose(mean_s, special.digamma(0.5) - special.digamma(1.5), atol=1e-4)
assert np.allclose(var_s, special.polygamma(1, 0.5) - special.polygamma(1, 1.5), rtol=1e-3)
assert np.all(np.diff(censoring_bias(alpha_chk, [1e-4, 1e-3, 1e-2, 0.1]), axis=0) > 0)

# %% [markdown]
# ## 4. Bernstein-type bounds (S1, after Skorski 2023)
#
# With $m_j = \alpha_j/\alpha_0$ (the mean of $x_j$), $v_j = \alpha_j\beta_j/(\alpha_0^2(\alpha_0+1))$ (its
# variance) and $\varepsilon = m_j - a > 0$, S1 bounds the censoring probability by
#
# $$P(x_j < a) \le \begin{cases} \exp\!\Big(-\dfrac{\varepsilon^2}{2[v_j + c_j\varepsilon/3]}\Big), & \alpha_j \ge \alpha_0/2,\\[2ex]
#   \exp\!\Big(-\dfrac{\varepsilon^2}{2 v_j}\Big), & \alpha_j < \alpha_0/2 .\end{cases}$$
#
# **A sign slip.** S1 prints $c_j = 2(\alpha_0 - 2\alpha_j)/(\alpha_0(\alpha_0+2)) = 2(\beta_j-\alpha_j)/(\ldots)$, which is
# $\le 0$ exactly in the case $\alpha_j \ge \alpha_0/2$ where it is used: it makes the bound *tighter* than the
# Gaussian one for the heavy (left) tail of a left-skewed beta, and the cell below finds points where the
# printed "bound" is far below the true probability. Skorski's bound is stated for the upper tail,
# $P(X > EX + \varepsilon) \le \exp(-\varepsilon^2/(2[v + c\varepsilon/3]))$ with $c = 2(\beta-\alpha)/((\alpha+\beta)(\alpha+\beta+2))$;
# the lower tail of $X \sim \mathrm{Beta}(\alpha_j, \beta_j)$ is the upper tail of $1 - X \sim \mathrm{Beta}(\beta_j,\alpha_j)$,
# which swaps the roles and gives
#
# $$c_j = \frac{2(2\alpha_j - \alpha_0)}{\alpha_0(\alpha_0+2)} \ge 0 \quad(\alpha_j \ge \alpha_0/2).$$
#
# We implement this corrected constant. For $a \ge m_j$ the bound says nothing and we return $1$.
#
# **Bias bound** (S1, for $\alpha_j > 1$). From $\log x > 1 - 1/x$,
# $b_j(a) \le \int_0^a(\log a + 1/x - 1)\,\mathrm{Beta}(x\mid\alpha_j,\beta_j)\,dx \le \frac{B(\alpha_j-1,\beta_j)}{B(\alpha_j,\beta_j)}\,I_a(\alpha_j - 1, \beta_j)$,
# where $B(\alpha_j-1,\beta_j)/B(\alpha_j,\beta_j) = (\alpha_0-1)/(\alpha_j-1)$. The beta probability may itself be
# replaced by its Bernstein bound (`tail="bernstein"`), which shows the exponential decay in $E[x_j] - a$.
# For $\alpha_j \le 1$ the argument fails (the bound is infinite) and we return `inf`.

# %%
#| export
def _beta_lower_tail_bound(p, q, a):
    """Bernstein-type bound on P(Beta(p, q) < a) (Skorski 2023, lower tail; S1 with corrected c)."""
    p, q, a = np.broadcast_arrays(np.asarray(p, float), np.asarray(q, float), np.asarray(a, float))
    s = p + q
    m = p / s
    v = p * q / (s**2 * (s + 1.0))
    c = 2.0 * (2.0 * p - s) / (s * (s + 2.0))
    eps = m - a
    denom = 2.0 * np.where(p >= s / 2.0, v + c * np.maximum(eps, 0.0) / 3.0, v)
    bound = np.exp(-np.maximum(eps, 0.0) ** 2 / denom)
    return np.where(eps > 0, bound, 1.0)


def censoring_prob_bound(alpha, a):
    """Bernstein-type upper bound on ``P(x_j < a)`` (Guo et al., S1; Skorski 2023).

    Uses the constant ``c_j = 2 (2 alpha_j - alpha_0) / (alpha_0 (alpha_0 + 2))`` for the lower tail
    (S1 prints the opposite sign, which does not give a bound; see the notebook). Returns 1 where
    ``a >= E[x_j]``. ``alpha`` and ``a`` as in :func:`entry_censoring_prob`, and the same shape
    ``np.shape(a) + (d,)`` out.
    """
    alpha, a = _check_args(alpha, a)
    return _beta_lower_tail_bound(alpha, alpha.sum() - alpha, a[..., None])


def bias_bound(alpha, a, *, tail="exact"):
    """Upper bound on the censoring bias for ``alpha_j > 1`` (Guo et al., S1).

    ``(alpha_0 - 1) / (alpha_j - 1) * P(Beta(alpha_j - 1, beta_j) <= a)``; ``inf`` where ``alpha_j <= 1``.

    Parameters
    ----------
    alpha, a : array_like
        As in :func:`entry_censoring_prob`.
    tail : {"exact", "bernstein"}
        Evaluate the beta probability exactly, or bound it by :func:`censoring_prob_bound`'s formula.

    Returns
    -------
    ndarray, shape ``np.shape(a) + (d,)``
    """
    alpha, a = _check_args(alpha, a)
    a = a[..., None]
    check.choice(tail, "tail", ("exact", "bernstein"))
    beta = alpha.sum() - alpha
    ok = alpha > 1.0
    p = np.where(ok, alpha - 1.0, 1.0)  # placeholder parameter where the bound does not apply
    ratio = np.where(ok, (alpha.sum() - 1.0) / p, np.inf)
    prob = special.betainc(p, beta, a) if tail == "exact" else _beta_lower_tail_bound(p, beta, a)
    return np.where(ok, ratio * prob, np.inf)


# %%
def printed_bound(alpha_j, beta_j, a):
    """The bound exactly as S1 prints it (c_j with the opposite sign): NOT a bound."""
    s = alpha_j + beta_j
    m, v = alpha_j / s, alpha_j * beta_j / (s**2 * (s + 1))
    c = 2 * (s - 2 * alpha_j) / (s * (s + 2))
    eps = m - a
    return np.exp(-eps**2 / (2 * (v + c * eps / 3))) if alpha_j >= s / 2 else np.exp(-eps**2 / (2 * v))


# A counterexample to the printed version: a dominant component (alpha_4 = (2, 20, 2), entry 2).
a_cx = 0.60
true_p = special.betainc(20.0, 4.0, a_cx)
print(f"P(x_2 < {a_cx}) = {true_p:.4f}, printed S1 formula {printed_bound(20.0, 4.0, a_cx):.4f}, "
      f"corrected bound {censoring_prob_bound([2.0, 20.0, 2.0], a_cx)[1]:.4f}")
assert printed_bound(20.0, 4.0, a_cx) < true_p / 1000 < true_p < censoring_prob_bound([2.0, 20.0, 2.0], a_cx)[1]

# The corrected bounds hold on a grid of alphas and thresholds (tests/test_censoring.py adds a property test).
a_grid = np.geomspace(1e-6, 0.95, 40)
for alpha_chk in [*ALPHAS.values(), np.array([0.1, 5.0]), np.array([50.0, 1.0, 0.3])]:
    assert np.all(entry_censoring_prob(alpha_chk, a_grid) <= censoring_prob_bound(alpha_chk, a_grid) + 1e-12)
    b_true = censoring_bias(alpha_chk, a_grid[:25])
    b_exact = bias_bound(alpha_chk, a_grid[:25])
    b_bern = bias_bound(alpha_chk, a_grid[:25], tail="bernstein")
    assert np.all(b_true <= b_exact * (1 + 1e-9) + 1e-15) and np.all(b_exact <= b_bern * (1 + 1e-9) + 1e-15)
    assert np.all(np.isinf(b_exact[:, alpha_chk <= 1]))
try:
    bias_bound([2.0, 3.0], 0.1, tail="chernoff")
except ValueError as err:
    assert "tail" in str(err)
else:
    raise AssertionError("bad tail must raise")

# %% [markdown]
# ## 5. Exact zeros: what they do to the censored statistic
#
# Real compositions have exact zeros: no work on the day of a time-use diary, no transport in a household's budget.
# The Dirichlet model of Sec. 2.2 has none: its density is zero on the faces of the simplex, and for a record
# with $x_{ij} = 0$ the sufficient statistic $S_0(\mathbf D)$ and the likelihood (1) do not exist. The censored
# statistic of Sec. 3.1 hides this: $\max\{0, a\} = a$, so **a zero enters $S_0(\mathbf D, a)$ as $\log a$, at
# every threshold**. What that does, in four steps.
#
# **A model of zeros.** A share $z_j$ of the records has $x_j = 0$ (one zero per record), the rest of such a record
# being $\mathrm{Dirichlet}(\boldsymbol\alpha_{-j})$ (the other activities keep their proportions); the other records are
# $\mathrm{Dirichlet}(\boldsymbol\alpha)$. With $Z = \sum_j z_j$ and the aggregation property, the true mean is
#
# $$E[x_k] = (1 - Z)\,\frac{\alpha_k}{\alpha_0} + \sum_{j \ne k} z_j\,\frac{\alpha_k}{\alpha_0 - \alpha_j}, \qquad E[x_j] \text{ has no term from } z_j .$$
#
# **The statistic.** By the linearity of the mean over the three kinds of records,
#
# $$E[S_0(\mathbf D, a)]_k = z_k \log a + (1 - Z)\,E[\log\max(x_k, a)] + \sum_{j \ne k} z_j\, E[\log\max(y^{(j)}_k, a)],
#   \quad \mathbf y^{(j)} \sim \mathrm{Dirichlet}(\boldsymbol\alpha_{-j}),$$
#
# each expectation given by section 3. The first term is new: it is linear in $\log a$ with slope $z_k$ and has no
# lower bound as $a \to 0$. At the paper's smallest candidate $a = 10^{-6}$ ($\log a = -13.8$, Sec. 5.1), 5% of zeros
# lower $s_k$ by about $0.69$, against a Laplace scale of $0.041$ for $n = 1000$, $d = 3$, $\epsilon_1 = 1$: the
# zeros, not the noise, decide the answer.
#
# **The fit.** The MLE (Sec. 2.2, Minka 2000) solves $\psi(\alpha_k) - \psi(\alpha_0) = s_k$, and a lower $s_k$ means a
# smaller $\alpha_k$ relative to $\alpha_0$: the fit reads the zeros as mass near $0$, a small $\alpha_k$, and
# **underestimates $E[x_k] = \alpha_k/\alpha_0$ for the components that hold zeros; the others, which must add up
# to one, are overestimated.** As $a \to 0$, $s_k \approx z_k\log a \to -\infty$ and, since $\psi(\alpha) \approx -1/\alpha$
# for small $\alpha$, $\hat\alpha_k \approx 1/(z_k|\log a|) \to 0$: the estimate of $E[x_k]$ goes to $0$ (slowly, like
# $1/|\log a|$) for **any** share of zeros, so the bias tends to $-E[x_k]$. To first order in $z_k$ the shift of the
# statistic is $z_k$ times an affine function of $\log a$, and so is the bias: its size grows with $z_k$ and with
# $|\log a|$. A larger $a$ shrinks it until it is of the size of the ordinary censoring bias of section 3 (in the
# example below near $a = 0.05$, a threshold that depends on the unknown $\boldsymbol\alpha$); there the advantage of a
# larger $a$ ends.
#
# **The methods.** DPBoots (Sec. 4.1, Alg. 2) centres on the MLE of $\mathbf s_L$; DPMCMC, DPABC and DPapprox
# (Sec. 4.2.2-4.2.4) condition on $\mathbf s_L$ under a model that censors Dirichlet records at $a$, so with growing
# $n$ they concentrate where $E_{\boldsymbol\alpha}[\log\max(x_k, a)] = s_k$. Both limits read the zeros the same
# way (they differ by the censoring bias of section 3), and no method can undo them: the released statistic of data
# with zeros is that of a Dirichlet with a small $\alpha_k$. `zero_bias` computes the large-sample bias for either
# limit (`target="mle"` or `"censored"`); notebook `checks/78_zeros_checks` measures it by simulation for the MLE
# and DPMCMC.
#
# **The threshold rule makes it worse.** A zero is below every candidate, so the noisy rate $\hat p_{G,1}$ of Sec. 3.2
# is at least the share of records with a zero (plus noise). When that share exceeds $t_c$, no candidate qualifies
# and the rule falls back to $a_1$, the **smallest** candidate: the threshold with the largest bias. Smaller
# candidates make it worse still; a larger $a$ (larger candidates, or a $t_c$ above the share of zeros) reduces it.

# %%
#| export
def _check_zero_shares(z, d):
    """Return the shares of records with an exact zero in each component: d reals in [0, 1) summing below 1."""
    z = check.finite_array(z, "z", ndim=1)
    if z.size != d:
        raise ValueError(f"z must hold one share of zeros per component ({d}), got {z.size}")
    if np.any(z < 0) or z.sum() >= 1:
        raise ValueError(f"z must be shares >= 0 with sum(z) < 1, got {z.tolist()}")
    return z


def zero_truth(alpha, z):
    """Mean composition ``E[x]`` when a share ``z_j`` of records has ``x_j = 0`` (the rest of such a record
    ``Dirichlet(alpha without j)``) and the other records are ``Dirichlet(alpha)``; shape (d,)."""
    alpha = check_alpha(alpha, ndim=1)
    z = _check_zero_shares(z, alpha.size)
    total = alpha.sum()
    mean = (1.0 - z.sum()) * alpha / total
    for j in np.flatnonzero(z):
        mean += z[j] * np.where(np.arange(alpha.size) == j, 0.0, alpha / (total - alpha[j]))
    return mean


def zero_censored_stat(alpha, z, a):
    """Expected censored statistic ``E[S_0(D, a)]`` of records with exact zeros (model of :func:`zero_truth`); (d,)."""
    alpha, a = _check_args(alpha, a, scalar=True)
    z = _check_zero_shares(z, alpha.size)
    s = (1.0 - z.sum()) * censored_logx_moments(alpha, a)[0] + z * np.log(a)
    for j in np.flatnonzero(z):
        rest = np.arange(alpha.size) != j
        # A record with x_j = 0 is Dirichlet(alpha without j) on the other components (a point when d = 2).
        s[rest] += z[j] * (censored_logx_moments(alpha[rest], a)[0] if rest.sum() > 1 else 0.0)
    return s


def _censored_fit(s, a, start):
    """alpha whose censored log-means E[log max(x_j, a)] equal s (solved in log alpha from ``start``)."""
    sol = optimize.root(lambda t: censored_logx_moments(np.exp(t), a)[0] - s, np.log(start), method="hybr",
                        options={"xtol": 1e-10})
    return np.exp(sol.x) if sol.success else np.full(s.size, np.nan)


def zero_bias(alpha, z, a, *, target="mle"):
    """Large-sample bias of the estimated mean composition when records hold exact zeros.

    Parameters
    ----------
    alpha : array_like, shape (d,)
        Dirichlet parameter of the records without zeros.
    z : array_like, shape (d,)
        Share of records whose component j is exactly 0 (rows with a zero hold one zero; the rest of such
        a record is ``Dirichlet(alpha without j)``); ``sum(z) < 1``.
    a : float
        Censoring threshold in (0, 1).
    target : {"mle", "censored"}
        What the estimate converges to as ``n`` grows: ``"mle"`` solves ``psi(alpha_j) - psi(alpha_0) = s_j``
        (the Dirichlet MLE read off the censored statistic, as DPBoots' estimate does), ``"censored"`` solves
        ``E_alpha[log max(x_j, a)] = s_j`` (the methods that model the censoring: DPMCMC, DPABC).

    Returns
    -------
    ndarray, shape (d,)
        ``alpha*_j / alpha*_0 - E[x_j]`` for the limit ``alpha*`` and the true mean of :func:`zero_truth`
        (NaN when the limit statistic is outside the range of the Dirichlet MLE).
    """
    check.choice(target, "target", ("mle", "censored"))
    s = zero_censored_stat(alpha, z, a)
    truth = zero_truth(alpha, z)
    if not in_stat_range(s):
        return np.full(s.size, np.nan)
    fit = dirichlet_mle(s, max_iter=1000)
    if target == "censored":
        fit = _censored_fit(s, float(a), fit)
    return fit / fit.sum() - truth

# %%
# The model of zeros against simulation: its mean and censored statistic, then the limit of the MLE.
alpha_z, j_z = np.array([4.5, 2.0, 2.5, 1.0]), 1       # e.g. sleep, work, leisure, other; zeros in "work"


def with_zeros(alpha, z, n, rng):
    """n records of the model of zeros: shares z[j] of the records get x_j = 0, the rest of the record renormalised."""
    X = rng.dirichlet(alpha, size=n)
    u, low = rng.random(n), 0.0
    for j, zj in enumerate(z):
        hit = (u >= low) & (u < low + zj)
        low += zj
        X[hit, j] = 0.0
        X[hit] /= X[hit].sum(axis=1, keepdims=True)
    return X


# The sizes quoted above: log a at a = 1e-6, the shift from 5% zeros, the Laplace scale for n = 1000, d = 3, eps1 = 1.
print(f"log(1e-6) = {np.log(1e-6):.1f}; 5% zeros shift s_j by {0.05 * np.log(1e-6):.2f}; "
      f"Laplace scale -d log(a) / (n eps1) = {-3 * np.log(1e-6) / 1000:.3f}")
z_chk = np.array([0.0, 0.15, 0.05, 0.0])
X = with_zeros(alpha_z, z_chk, n_mc, rng)
s_mc = np.log(np.maximum(X, 1e-4))
assert np.all(np.abs(X.mean(axis=0) - zero_truth(alpha_z, z_chk)) < 5 * X.std(axis=0) / np.sqrt(n_mc))
assert np.all(np.abs(s_mc.mean(axis=0) - zero_censored_stat(alpha_z, z_chk, 1e-4)) < 5 * s_mc.std(axis=0) / np.sqrt(n_mc))
# The MLE of the simulated statistic lands on the limit (up to its O(1/n) bias); no zeros: no bias at small a.
fit = dirichlet_mle(s_mc.mean(axis=0))
assert np.allclose(fit / fit.sum() - zero_truth(alpha_z, z_chk), zero_bias(alpha_z, z_chk, 1e-4), atol=3e-3)
assert np.allclose(zero_bias(alpha_z, np.zeros(4), 1e-6), 0.0, atol=1e-4)
# Direction: the components with zeros are underestimated, the others overestimated; worse for smaller a and more zeros.
b = zero_bias(alpha_z, z_chk, 1e-6)
assert b[1] < b[2] < 0 < min(b[0], b[3])
z15 = np.array([0.0, 0.15, 0.0, 0.0])
b_a = np.array([zero_bias(alpha_z, z15, a)[j_z] for a in (1e-8, 1e-6, 1e-4, 1e-2)])
b_z = np.array([zero_bias(alpha_z, np.array([0.0, z, 0.0, 0.0]), 1e-6)[j_z] for z in (0.02, 0.05, 0.15, 0.25)])
assert np.all(np.diff(b_a) > 0) and np.all(np.diff(b_z) < 0)
# As a -> 0 the estimate of E[x_work] goes to 0: the bias tends to -E[x_work] (slowly, like 1 / |log a|).
lim = zero_truth(alpha_z, z15)[j_z]
assert -lim < zero_bias(alpha_z, z15, 1e-300)[j_z] < 0.75 * -lim
# First order in z: the bias at 1% zeros is nearly linear in log a (its second difference is small).
logs = np.log([1e-8, 1e-6, 1e-4])
b1 = np.array([zero_bias(alpha_z, np.array([0.0, 0.01, 0.0, 0.0]), a)[j_z] for a in np.exp(logs)])
assert abs(b1[2] - 2 * b1[1] + b1[0]) < 0.05 * abs(b1[2] - b1[0])

b_05 = zero_bias(alpha_z, z15, 0.05)[j_z]
b_none = zero_bias(alpha_z, np.zeros(4), 0.05)[j_z]
print("bias of E[x_work] at 15% zeros: " + ", ".join(f"{b:+.3f} at a = {a:g}" for a, b in zip((1e-8, 1e-6, 1e-4, 1e-2), b_a))
      + f"; {b_05:+.4f} at a = 0.05, against {b_none:+.4f} without zeros")
# Large a: the zeros' bias falls to the size of the ordinary censoring bias of section 3.
assert abs(b_05) < 0.01 < abs(b_a[1]) / 5
# The censored-moment limit (DPMCMC, DPABC) agrees with the MLE limit up to the censoring bias of section 3.
assert np.allclose(zero_bias(alpha_z, z15, 1e-6, target="censored"), zero_bias(alpha_z, z15, 1e-6), atol=2e-3)
for bad, word in [(dict(z=[0.1, 0.2]), "one share"), (dict(z=[0.5, 0.6, 0, 0]), "sum(z) < 1"),
                  (dict(z=[-0.1, 0, 0, 0]), "sum(z) < 1"), (dict(a=0.0), "a must"), (dict(target="x"), "target")]:
    kw = dict(alpha=alpha_z, z=z15, a=1e-6) | bad
    try:
        zero_bias(kw.pop("alpha"), kw.pop("z"), kw.pop("a"), **kw)
    except ValueError as err:
        assert word in str(err), err
    else:
        raise AssertionError(bad)

# %% [markdown]
# ## 6. The advice a release can give
#
# A release publishes the noisy censoring rates $\hat p_{G,m}$ of the **records** (Sec. 3.2), the candidates, $a$,
# $t_c$, $\mathbf s_L$, $n$ and the names; not the rates of each component. What they say about zeros:
#
# * **Are there zeros?** A rate far above $t_c$ already at the smallest candidate is the trigger (the rule fell back
#   to $a_1$). A Dirichlet entry falls below $a$ with probability of order $a^{\alpha_j}$ (section 3's series), so
#   its rate falls with the threshold; a rate that stays flat over decades of candidates is the signature of a point
#   mass at $0$. The advice says which of the two it sees.
# * **Which components?** The rates cannot say. A bound can: a component's share of entries at the threshold is at
#   most $s_{L,j}/\log a$ (its other logs are $\le 0$), and each censored record has a censored entry, so the
#   components holding them have bounds adding up to at least $\hat p_{G,1}$. `likely_zero_components` names the
#   fewest components, lowest released log-share first, that reach it, and any other within $0.5$ of the lowest one
#   named. It is a guess, and the advice says so: to first order $s_{L,j} = z_j\log a + (1 - z_j)m_j$ with $m_j$ the
#   mean log of the positive entries, so a few zeros in a component with large entries and no zeros in a component
#   with small entries give the same statistic. The component is identified only when its zeros pull its
#   log-share below those of the others (in notebook 78's time-use example 15% of zeros do, 5% not always).
# * **How many records?** About $n\,\hat p_{G,1}$ (noisy).
# * **What to do** (section 5): not smaller candidates; larger ones (or a larger $t_c$) reduce the bias without
#   removing it; amalgamation or dropping the records with zeros (section 7) remove it.
#
# `zero_advice` turns this into sentences; `Release.caution()` (notebook 14) returns them, so they travel with the
# release (its `warnings`, the results' attributes, `dplit analyse` and `dplit compare`).

# %%
#| export
def likely_zero_components(s_L, a, rate, *, margin=0.5):
    """Indices of the components that most likely hold the records censored at ``a``, a guess from ``s_L``.

    A component's share of entries at the threshold is at most ``s_L,j / log(a)`` (its other logs are <= 0),
    and every record counted in ``rate`` has a censored entry, so the components that hold them have bounds
    adding up to at least ``rate``. Returns the fewest components, lowest released log-share first, that reach
    it, and every other component within ``margin`` of the lowest one named (increasing indices).
    """
    s_L = np.asarray(s_L, dtype=float)
    order = np.argsort(s_L, kind="stable")
    reach = np.cumsum(s_L[order] / np.log(a))
    k = min(int(np.searchsorted(reach, rate)) + 1, s_L.size)
    named = set(order[:k].tolist()) | set(np.flatnonzero(s_L <= s_L[order[k - 1]] + margin).tolist())
    return np.array(sorted(named))


#: Probability that a release of data without zeros is advised about zeros by noise alone (zero_advice with eps2).
ZERO_FALSE_ALARM = 0.01
COUNT_SENSITIVITY = 2  # moving one record changes two of the counts s_m by one each (Sec. 3.2)


def zero_advice(p_hat_G, candidates, a, tc, *, s_L=None, n=None, names=None, factor=2.0, eps2=None):
    """Advice for a release whose records are censored even at the smallest candidate: probably exact zeros.

    Reads only what a release publishes (Guo et al., Alg. 1): the noisy censoring rates, the candidates, the
    threshold, ``tc`` and optionally the released statistic, the number of records and the component names.

    Parameters
    ----------
    p_hat_G : array_like, shape (M,)
        Noisy censoring rates ``p_hat_G,m`` (Sec. 3.2), in the increasing order of ``candidates``.
    candidates : array_like, shape (M,)
        Candidate thresholds, increasing (as a release publishes them).
    a : float
        The selected threshold.
    tc : float
        The tolerated censoring rate.
    s_L : array_like, shape (d,), optional
        The released censored statistic; with it the advice names the components that probably hold the zeros.
    n : int, optional
        Records in the release; with it the advice says about how many records are affected.
    names : sequence of str, optional
        Component names (default ``x1, ..., xd``).
    factor : float, default 2.0
        Advise only when the rate at the smallest candidate exceeds ``factor * tc``.
    eps2 : float, optional
        The budget of the counts (needs ``n``). With it the rate must also exceed what the counts' noise reaches
        on data without zeros except with probability :data:`ZERO_FALSE_ALARM`: two-sided geometric noise
        (sensitivity 2) passes ``k`` records with probability ``t^k / (1 + t)``, ``t = exp(-eps2 / 2)``, so the
        bar rises by ``k / n`` (about 0.03 at n = 1000, eps2 = 0.25).

    Returns
    -------
    list of str
        Sentences, empty when the rate at the smallest candidate is at most ``factor * tc``.
    """
    cands = check.unit_interval_array(candidates, "candidates")
    if cands.ndim != 1 or cands.size == 0 or np.any(np.diff(cands) <= 0):
        raise ValueError(f"candidates must be a non-empty increasing 1-D sequence, got {cands.tolist()}")
    p = check.finite_array(p_hat_G, "p_hat_G", ndim=1)
    if p.size != cands.size or np.any((p < 0) | (p > 1)) or np.any(np.diff(p) < 0):
        raise ValueError(f"p_hat_G must hold {cands.size} non-decreasing rates in [0, 1] (one per candidate), "
                         f"got {p.tolist()}")
    a = check.threshold(a, "a")
    if not np.any(np.isclose(cands, a, rtol=1e-12, atol=0.0)):
        raise ValueError(f"a must be one of the candidates (the threshold a release selects), got {a:g} not in "
                         f"{cands.tolist()}")
    tc = check.unit_interval(tc, "tc")
    factor = check.positive(factor, "factor")
    if s_L is not None:
        s_L = check.finite_array(s_L, "s_L", ndim=1)
        if s_L.size < 2:
            raise ValueError(f"s_L must hold d >= 2 log-shares, got {s_L.size}")
    if n is not None:
        n = check.count(n, "n")
    limit = factor * tc
    if eps2 is not None:
        eps2 = check.epsilon(eps2, "eps2")
        if n is None:
            raise ValueError("eps2 needs n: the counts' noise is in records, the rates are records / n")
        t = math.exp(-eps2 / COUNT_SENSITIVITY)
        if t > 0.0:                                     # t = 0 (eps2 in the thousands): no noise to allow for
            # the smallest k with P(K >= k) <= ZERO_FALSE_ALARM: one past the two-sided reach at twice the level
            limit += (geometric_reach(t, 1, 2 * ZERO_FALSE_ALARM) + 1) / n
    if p[0] <= limit:
        return []
    rows = f" (about {round(p[0] * n)} of {n} records)" if n is not None else ""
    # A point mass at 0 leaves the rate flat in a; a Dirichlet entry falls below a with probability ~ a^alpha_j.
    same = np.flatnonzero(p <= 1.25 * p[0])[-1]
    if same > 0:
        shape = (f", and still {p[same]:.3g} at a = {cands[same]:g}, {np.log10(cands[same] / cands[0]):.0f} "
                 f"decade(s) higher: a share that does not shrink with the threshold. Such records probably hold "
                 f"exact zeros")
    else:
        shape = (". Such records hold exact zeros or entries far below every candidate (a rate that falls "
                 "with the threshold points to the second)")
    advice = [f"The noisy share of records with an entry below the smallest candidate a_1 = {cands[0]:g} is "
              f"{p[0]:.3g}{rows}, far above tc = {tc:g}{shape}, which the Dirichlet model does not describe "
              f"(its entries are never 0)."]
    who = "the components that hold the zeros"
    if s_L is not None:
        labels = check.names(names, s_L.size) or tuple(f"x{j + 1}" for j in range(s_L.size))
        hit = likely_zero_components(s_L, a, p[0])
        rest = np.setdiff1d(np.arange(s_L.size), hit)
        named = [labels[j] for j in hit]
        who = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]
        others = (f", against {s_L[rest].min():.2f} to {s_L[rest].max():.2f} for the others" if rest.size else "")
        advice.append(f"The release counts records, not components, so it cannot say which components hold the "
                      f"zeros; the lowest released mean log-shares, where zeros pull hardest, point to {who} "
                      f"({', '.join(f'{s_L[j]:.2f}' for j in hit)}{others}).")
    advice.append(f"Every zero enters the statistic as log(a) = {np.log(a):.1f}; the Dirichlet fit reads that as "
                  f"a small alpha, so every method underestimates E[x] of {who} and overestimates the others.")
    advice.append("Smaller candidates make this worse (the pull grows with |log a|). A larger threshold reduces it "
                  "without removing it: raise the candidates, or tc above the share of records with zeros so that "
                  "the rule can pick a larger one, at the price of censoring small positive entries.")
    advice.append("Better: merge (amalgamate) those components with others before the release "
                  "(dplit.censoring.amalgamate), or drop the records with zeros and report how many "
                  "(dplit.censoring.drop_zero_rows; Guo et al. do so for ATUS, Sec. 5.2).")
    return advice


# %%
# A release of data with 15% zeros in "work" names work; the same data without zeros gives no advice.
from dplit.release import release

CANDIDATES = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1)   # the paper's (Sec. 5.1), increasing
names_z = ("sleep", "work", "leisure", "other")
n_adv = 2000                                          # records per release (releases are cheap)


def advice_of(r):
    """zero_advice from the fields a release publishes."""
    return zero_advice(r.p_hat_G, r.candidates, r.a, r.tc, s_L=r.s_L, n=r.n, names=r.names)


r_zero = release(with_zeros(alpha_z, z15, n_adv, rng), eps1=1.0, eps2=1.0, candidates=CANDIDATES, tc=0.01,
                 names=names_z, rng=rng, secure=False)
r_none = release(with_zeros(alpha_z, np.zeros(4), n_adv, rng), eps1=1.0, eps2=1.0, candidates=CANDIDATES, tc=0.01,
                 names=names_z, rng=rng, secure=False)
text = advice_of(r_zero)
print("\n".join(text))
assert r_zero.a == CANDIDATES[0]                    # zeros force the fallback to a_1
assert advice_of(r_none) == []
assert "probably hold exact zeros" in text[0] and "point to work (" in text[1]
assert "underestimates E[x] of work" in text[2] and "Smaller candidates make this worse" in text[3]
assert abs(int(text[0].split("about ")[1].split(" of")[0]) - 0.15 * n_adv) < 6 * np.sqrt(n_adv) + 20
# Two components with zeros (budget shares: 6% leisure, 4% transport) are both named.
budget = np.array([3.0, 4.0, 1.5, 1.2, 2.0])
r_budget = release(with_zeros(budget, [0, 0, 0.06, 0.04, 0], n_adv, rng), eps1=1.0, eps2=1.0, candidates=CANDIDATES,
                   tc=0.01, names=("food", "housing", "leisure", "transport", "other"), rng=rng, secure=False)
assert "point to leisure and transport (" in advice_of(r_budget)[1]
# Without s_L the advice cannot name a component; with a rate that falls with a it does not claim zeros.
assert len(zero_advice(r_zero.p_hat_G, r_zero.candidates, r_zero.a, 0.01)) == 4
falling = zero_advice([0.05, 0.2, 0.4], [1e-6, 1e-4, 1e-2], 1e-6, 0.01)
assert "far below every candidate" in falling[0] and "probably hold exact zeros" not in falling[0]
for bad, word in [(dict(p_hat_G=[0.2, 0.1]), "non-decreasing"), (dict(p_hat_G=[0.1]), "p_hat_G"),
                  (dict(candidates=[1e-2, 1e-4]), "increasing"), (dict(tc=0.0), "tc"), (dict(a=2.0), "a must"),
                  (dict(s_L=[-1.0]), "s_L"), (dict(names=["x"], s_L=[-1.0, -2.0]), "names"), (dict(n=0), "n must"),
                  (dict(a=1e-3), "one of the candidates")]:
    kw = dict(p_hat_G=[0.1, 0.2], candidates=[1e-4, 1e-2], a=1e-4, tc=0.01) | bad
    try:
        zero_advice(kw.pop("p_hat_G"), kw.pop("candidates"), kw.pop("a"), kw.pop("tc"), **kw)
    except (TypeError, ValueError) as err:
        assert word in str(err), (bad, err)
    else:
        raise AssertionError(bad)

# %% [markdown]
# ## 7. Two treatments: amalgamation and dropping records
#
# Both are applied by the curator to the data before the release, and both are in the paper's ATUS application
# (Sec. 5.2): "all other activities" merges sixteen activities into one component, and the respondents with no time
# on personal care or eating are removed.
#
# * **Amalgamation** (Aitchison 1986) sums components, $x_j + x_k$. Applied record by record, it costs no privacy
#   and keeps $n$. If the merged component is never zero, the zeros are gone; the estimand becomes
#   $E[x_j + x_k]$. Records without a zero stay exactly Dirichlet (the aggregation property); records with one are
#   $\mathrm{Dirichlet}(\boldsymbol\alpha_{-j})$ with $x_k$ in the merged place, so the data are a mixture of two
#   Dirichlets with the same merged components, close to one when $z_j$ is small. `amalgamate(X, groups)`.
# * **Dropping the records with zeros** leaves exact Dirichlet data, but changes the estimand to the mean composition
#   of the records without zeros, and the number dropped must be reported. Note the privacy side: the release
#   publishes $n$ exactly, so after dropping, $n$ is an exact count of the records without zeros, which Algorithm 1
#   does not protect (Guo et al. treat $n$ as public). `drop_zero_rows(X)` returns the kept records and the count;
#   `zero_counts(X)` gives the curator the zeros per component.
#
# Notebook `checks/78_zeros_checks` measures that the bias disappears after either treatment.

# %%
#| export
def zero_counts(X):
    """Exact zeros in compositions ``X``: the count per component and the number of records with any zero.

    For the curator, who holds the data (these counts are not private). Returns ``(per_component, rows)``:
    an int array of shape (d,) and an int.
    """
    X = check_compositions(X)
    zero = X == 0.0
    return zero.sum(axis=0), int(zero.any(axis=1).sum())


def drop_zero_rows(X):
    """The records of ``X`` without an exact zero, and how many were dropped (Guo et al., Sec. 5.2).

    The estimand becomes the mean composition of records without zeros. Returns ``(kept, n_dropped)``.
    """
    X = check_compositions(X)
    keep = np.all(X > 0.0, axis=1)
    if not keep.any():
        raise ValueError(f"X: every one of its {X.shape[0]} records holds an exact zero, so dropping them leaves "
                         f"none; merge the components that hold the zeros instead (amalgamate)")
    return X[keep], int((~keep).sum())


def amalgamate(X, groups):
    """Merge components by summing them (amalgamation): one column per group.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Compositions.
    groups : sequence of sequences of int, or mapping of name to sequence of int
        A partition of the columns ``0, ..., d-1`` into at least two non-empty groups (every column exactly
        once); a mapping's keys name the merged components, in order.

    Returns
    -------
    ndarray, shape (n, len(groups))
        Column ``g`` is the sum of the columns of group ``g``; rows still sum to 1.
    """
    X = check_compositions(X)
    d = X.shape[1]
    parts = list(groups.values()) if isinstance(groups, dict) else groups
    if isinstance(parts, (str, bytes)) or not all(
            isinstance(g, (list, tuple, range, np.ndarray)) and len(g) for g in parts):
        raise TypeError("groups must be a sequence (or mapping) of non-empty sequences of column indices")
    cols = [c for g in parts for c in g]
    if not all(isinstance(c, (int, np.integer)) and not isinstance(c, (bool, np.bool_)) for c in cols):
        raise TypeError(f"groups must hold int column indices, got {cols!r}")
    if len(parts) < 2 or sorted(int(c) for c in cols) != list(range(d)):
        raise ValueError(f"groups must split the columns 0..{d - 1} into at least 2 groups, each column exactly "
                         f"once, got {[list(map(int, g)) for g in parts]}")
    return np.column_stack([X[:, list(g)].sum(axis=1) for g in parts])


# %%
X = with_zeros(alpha_z, z15, n_mc, rng)
per_component, rows = zero_counts(X)
assert per_component[j_z] == rows and per_component.sum() == rows and abs(rows / n_mc - 0.15) < 0.01
kept, dropped = drop_zero_rows(X)
assert dropped == rows and kept.shape == (n_mc - rows, 4) and np.all(kept > 0)
# Merging work with leisure: no zeros left, rows still sum to one, and the MLE of the merged data is close to the
# truth E[x_work + x_leisure] even at a = 1e-6, where the unmerged fit is far off.
merged = amalgamate(X, {"sleep": [0], "work+leisure": [1, 2], "other": [3]})
assert merged.shape == (n_mc, 3) and np.allclose(merged.sum(axis=1), 1.0) and zero_counts(merged)[1] == 0
truth = zero_truth(alpha_z, z15)
fit_m = dirichlet_mle(np.log(np.maximum(merged, 1e-6)).mean(axis=0))
fit_u = dirichlet_mle(np.log(np.maximum(X, 1e-6)).mean(axis=0))
err_m = fit_m[1] / fit_m.sum() - (truth[1] + truth[2])
err_u = fit_u[1] / fit_u.sum() - truth[1]
fit_d = dirichlet_mle(np.log(np.maximum(kept, 1e-6)).mean(axis=0))
print(f"a = 1e-6: bias of E[work] {err_u:+.3f}; of E[work + leisure] after merging {err_m:+.4f}; "
      f"of E[work | no zeros] after dropping {fit_d[1] / fit_d.sum() - alpha_z[1] / alpha_z.sum():+.4f}")
assert abs(err_m) < 0.01 < abs(err_u) and np.allclose(fit_d / fit_d.sum(), alpha_z / alpha_z.sum(), atol=0.005)
assert np.array_equal(amalgamate(X, [[0], [1, 2], [3]]), merged)
for bad, exc in [([[0, 1, 2, 3]], ValueError), ([[0], [1, 2]], ValueError), ([[0], [1, 1], [2, 3]], ValueError),
                 ([[0], [], [1, 2, 3]], TypeError), ([[0.0], [1, 2, 3]], TypeError), ("0123", TypeError)]:
    try:
        amalgamate(X[:5], bad)
    except exc as err:
        assert "groups" in str(err), err
    else:
        raise AssertionError(bad)
try:
    drop_zero_rows([[0.5, 0.6]])
except ValueError as err:
    assert "X" in str(err)
else:
    raise AssertionError("rows that do not sum to 1 must raise")
try:
    drop_zero_rows([[0.0, 1.0], [1.0, 0.0]])
except ValueError as err:
    assert "every one of its 2 records" in str(err)
else:
    raise AssertionError("dropping every record must raise, not return an empty data set")

# %% [markdown]
# ## Figure S1
#
# S1 plots (a) the expected proportion of censored entries and (b) the bias averaged over the $d$
# components, against $a$, for several $\boldsymbol\alpha$. The text does not list the $\boldsymbol\alpha$'s of the
# figure, so the first figure of this notebook ("What it gives") uses the five of the simulation study. The paper's
# observations, which the checks of that cell confirm on these curves: both curves increase in $a$; for larger $\alpha_0$ the proportion stays low
# for small $a$ and then rises faster; the bias is largest for the small $\alpha_0$ of $\boldsymbol\alpha_2$ ($\alpha_0 = 1.5$).
# "The bias decreases in $\alpha_0$" holds along a family of fixed shape; across shapes it is the smallest
# $\alpha_j$ and $B(\alpha_j, \beta_j)$ that matter: at small $a$ the bias behaves like
# $a^{\alpha_j}/(\alpha_j^2 B(\alpha_j,\beta_j))$ (first term of the series above), which for $\alpha_j = 2.2$ is
# *larger* in $\boldsymbol\alpha_5$ ($\beta_j = 19.8$) than in $\boldsymbol\alpha_3$ ($\beta_j = 7.7$).


# %% [markdown]
# ## Explore
#
# Choose the total $\alpha_0$, a shape for $\boldsymbol\alpha$ (how the total is shared between $d = 3$
# components) and the threshold. The left panel shows the per-entry censoring probability with its
# Bernstein bound, and $p(a)$ for a record; the right panel shows the bias with its S1 bound.

# %%
SHAPES = {"symmetric (1, 1, 1)": np.array([1.0, 1.0, 1.0]),
          "one small (1, 4, 4)": np.array([1.0, 4.0, 4.0]),
          "one dominant (1, 10, 1)": np.array([1.0, 10.0, 1.0])}


def explore_censoring(alpha_sum=6.0, shape="one small (1, 4, 4)", log10_a=-2.0, n_points=25):
    """Censoring probability, bias and their bounds against a, for alpha = alpha_sum * shape / sum(shape)."""
    w = SHAPES[shape]
    alpha_e = alpha_sum * w / w.sum()
    a_e = 10.0**log10_a
    grid = np.geomspace(1e-6, 0.3, n_points)
    pj, bound_j = entry_censoring_prob(alpha_e, grid), censoring_prob_bound(alpha_e, grid)
    bias_j, bias_b = censoring_bias(alpha_e, grid), bias_bound(alpha_e, grid)
    p_rec = record_censoring_prob(alpha_e, a_e)[0]
    fig, ax = plt.subplots(1, 2, figsize=(8.6, 3.6))
    for j in range(3):
        line, = ax[0].plot(grid, pj[:, j], label=f"P(x_{j + 1} < a), alpha_{j + 1} = {alpha_e[j]:.2f}")
        ax[0].plot(grid, bound_j[:, j], ls="--", c=line.get_color())
        ax[1].plot(grid, bias_j[:, j], c=line.get_color())
        if np.isfinite(bias_b[0, j]):
            ax[1].plot(grid, bias_b[:, j], ls="--", c=line.get_color())
    ax[0].plot([a_e], [p_rec], "ko", label=f"p(a) = {p_rec:.3g} (record)")
    for axis in ax:
        axis.axvline(a_e, c="k", lw=0.6)
        axis.set(xscale="log", yscale="log", xlabel="threshold a")
    ax[0].set(ylim=(1e-12, 1.5), ylabel="probability (dashed: Bernstein bound)")
    ax[1].set(ylim=(1e-12, None), ylabel="bias (dashed: S1 bound, alpha_j > 1)")
    ax[0].legend(fontsize=8)
    fig.tight_layout()
    return {"alpha": alpha_e, "a": a_e, "p_record": p_rec,
            "p_entry": entry_censoring_prob(alpha_e, a_e), "bias": censoring_bias(alpha_e, a_e)}


# %%
# NBVAL_IGNORE_OUTPUT
out = explore_censoring()
assert np.isclose(out["alpha"].sum(), 6.0) and 0 < out["p_record"] < 1
assert np.all(out["p_entry"] <= censoring_prob_bound(out["alpha"], out["a"]))

# %%
# NBVAL_IGNORE_OUTPUT
from ipywidgets import FloatLogSlider, FloatSlider, Dropdown, interactive
from dplit.testing import dead_controls  # noqa: E402

explorer = interactive(explore_censoring, alpha_sum=FloatLogSlider(value=6.0, base=10, min=-1, max=2, step=0.05),
                       shape=Dropdown(options=list(SHAPES)), log10_a=FloatSlider(value=-2.0, min=-6, max=-0.6, step=0.1),
                       n_points=(10, 60, 5))
assert dead_controls(explorer) == []  # every control changes the view (one its callback ignores fails)
explorer

# %% [markdown]
# ## When to use this
#
# Before releasing, a curator can use these functions with a guessed $\boldsymbol\alpha$ to see which
# candidate thresholds are harmless: the bias is negligible while $a$ is well below every $E[x_j] = \alpha_j/\alpha_0$
# and $\alpha_0$ is not small, exactly as S1 concludes. Small $\alpha_j$ (mass near the faces of the simplex)
# are the dangerous case: both the censoring rate and the bias decay only like $a^{\alpha_j}$. The Bernstein
# bounds are cheap and qualitatively right (exponential in $E[x_j] - a$) but loose by orders of magnitude at
# small $a$; use the exact `entry_censoring_prob` and `censoring_bias` for numbers. The data-driven choice of
# $a$ under DP is the job of `15_release`.
#
# **Exact zeros** are a different matter (sections 5-7): the model does not describe them, the censored statistic
# reads each as $\log a$, and every method then underestimates the mean share of the components that hold them,
# more for smaller $a$. Before releasing, count them (`zero_counts`); merge the components that hold them with
# others (`amalgamate`, no privacy cost) or drop the records and report how many (`drop_zero_rows`). After a
# release, `zero_advice` says what its published rates reveal.
