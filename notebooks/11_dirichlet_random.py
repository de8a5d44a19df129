# %% [markdown]
# # Fast Dirichlet draws in numba
#
# * **For:** simulating compositions from a Dirichlet distribution (records for simulation studies, bootstrap replicates, latent records of the samplers), exactly also for tiny parameters, from Python or inside numba kernels with the caller's random Generator.
# * **You need:** a parameter vector $\boldsymbol\alpha$ and a seed or `numpy.random.Generator`.
# * **You get:** an $(n, d)$ array of draws (`dirichlet_draws`), two numba kernels (one bit for bit NumPy's gamma stream, one faster), single gamma and log-gamma draws for other kernels, and a check that the MLE of notebook 10 recovers $\boldsymbol\alpha$ from them.
#
# Reading order: after notebooks 12 (the model) and 10 (the MLE). Everything here is importable from `dplit.dirichlet`.

# %%
#| default_exp dirichlet_random
#| internal log_std_gamma_kernel logsumexp_kernel log_dirichlet_draws_reference gamma_large_kernel
#| internal log_gamma_draw_kernel any_below_one dirichlet_draws_kernel dirichlet_draws_fast_kernel
#| internal gamma_draws_kernel gamma_draws_fast_kernel

# %% [markdown]
# ## Parameters

# %%
import numpy as np
from IPython.display import Markdown, display
from scipy import stats

from dplit.config import is_quick, size
from dplit.dirichlet import dirichlet_mle, fisher_information, logx_cov, logx_mean, sufficient_stat

SEED = 20261123
rng = np.random.default_rng(SEED)
n_mc = size(full=400_000, quick=40_000)       # Monte Carlo draws for the moments of log x
n_recover = size(full=200, quick=40)          # replications in the recovery check
n_ks_gamma = size(full=50_000, quick=10_000)  # gamma draws per KS test
alpha_m = np.array([0.5, 2.0, 7.0])
print(f"quick mode: {is_quick()}; n_mc={n_mc}, n_recover={n_recover}")


from dplit.testing import raises  # True when fn(*args) raises exc (with `match` in its message)

# %%
#| export
import math

import numpy as np
from numba import njit

from dplit import _validate as check
from dplit.dirichlet_fit import check_alpha

# %% [markdown]
# ## 1. Gamma variables, normalised
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
#   shape). Inside a numba loop it is faster than numba's `standard_gamma` (`benchmarks/bench_dirichlet.py`
#   measures both), at the price of a different random stream.
#
# `gamma_draws_kernel` and `gamma_draws_fast_kernel` draw only the $n\times d$ gammas: the floors
# that the samplers' benchmarks compare against. `_gamma_draw_kernel(a, rng)` and
# `log_gamma_draw_kernel(a, rng)` are single Marsaglia–Tsang draws for other kernels.

# %% [markdown]
# ## 2. The kernels
#
# **Draws in log space.** When some $\alpha_j < 1$ a gamma draw can underflow to 0 (and $\log x_{ij} = -\infty$);
# samplers that work with $\log \mathbf x$ (the latent records of notebook 19) draw $\log G$ directly:
# $\log G_{a} = \log G_{a+1} - E/a$ with $E$ standard exponential (since $G_{a+1} U^{1/a} \sim G_a$ and
# $-\log U \sim E$), and normalise with a log-sum-exp. `log_std_gamma_kernel(a, rng)` is that draw from
# numba's `standard_gamma` (inlined into its callers: the record sweep of notebook 19 normalises the row
# inside its own loop, which is faster than a call per record), and
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
def gamma_draws_kernel(alpha, n, rng):
    """The bare n x d rng.standard_gamma(alpha_j) draws: the floor of dirichlet_draws_kernel."""
    d = alpha.shape[0]
    out = np.empty((n, d))
    for i in range(n):
        for j in range(d):
            out[i, j] = rng.standard_gamma(alpha[j])
    return out


@njit(cache=True)
def gamma_draws_fast_kernel(alpha, n, rng):
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
assert np.array_equal(gamma_draws_kernel(alpha_m + 1, 1000, np.random.default_rng(5)), g_np)

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
# ## 3. Statistical checks of the draws
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
# ## 4. The MLE recovers alpha from large samples
#
# For $n$ records the MLE is approximately $N(\boldsymbol\alpha, (n\boldsymbol\Sigma_\alpha)^{-1})$ (the inverse
# Fisher information). Over replications, the Mahalanobis distances
# $n(\hat{\boldsymbol\alpha} - \boldsymbol\alpha)^\top\boldsymbol\Sigma_\alpha(\hat{\boldsymbol\alpha} - \boldsymbol\alpha)$
# are approximately $\chi^2_d$: a KS test against $\chi^2_d$ must not reject, and must reject when we pretend the truth is
# $1.05\,\boldsymbol\alpha$.

# %%
n_records = 5000
recovered = {}
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
    recovered[tuple(alpha)] = est.mean(axis=0)


# %% [markdown]
# ## When to use this

# %%
worst_rel = max(np.max(np.abs(est / np.array(alpha) - 1)) for alpha, est in recovered.items())
display(Markdown(f"""
* `dirichlet_draws(alpha, n, rng=...)` from Python; `dirichlet_draws_kernel(alpha, n, rng)` inside numba with the
  caller's Generator (its stream is NumPy's `standard_gamma` when every $\\alpha_j \\ge 1$, so a NumPy twin reproduces
  it), `dirichlet_draws_fast_kernel` when speed matters more than that stream. Both are exact also for tiny
  $\\alpha_j$ (no $0/0$ rows); samplers that need $\\log\\mathbf x$ draw it directly (`log_std_gamma_kernel`).
* For one large batch from Python, numpy's `Generator.dirichlet` does as well (`benchmarks/bench_dirichlet.py`); the
  kernels' advantage is that they run inside other kernels, with no Python in the loop.
* **Uncertainty without privacy**: $\\hat{{\\boldsymbol\\alpha}} \\approx N(\\boldsymbol\\alpha, (n\\boldsymbol\\Sigma_\\alpha)^{{-1}})$ holds
  for a few thousand records (section 4: {n_recover} replications of {n_records:,} records per $\\boldsymbol\\alpha$, mean MLE
  within {worst_rel:.1%} of the truth); for small $n$ the likelihood is a long ridge in $\\alpha_0$ (notebook 12, Explore),
  and intervals for $\\alpha_0$ should come from the profile likelihood or a bootstrap.
"""))
