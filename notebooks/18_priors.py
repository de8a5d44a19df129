# %% [markdown]
# # Priors p1-p5 built from a split release
#
# The five prior distributions of Guo et al. (Sec. 4.2.1, Table 1): a vague gamma prior, and four priors learnt from the DP release of a first part D1 of the data (DPBoots draws, fitted gammas, a Gaussian copula, and the DP posterior), behind one picklable interface.
#
# * **For:** turning a DP release of part of the data into a prior for the Bayesian methods.
# * **You need:** a split release: the noisy statistic of a first part D1 and of the rest.
# * **You get:** priors p1-p5 behind one interface (density and/or draws) that every sampler accepts.
#
# ## Parameters
#
# Sizes come from the size switch (`DPLIT_QUICK=1` gives the quick size used by the test suite);
# every random draw comes from a generator seeded here.

# %%
import itertools
import pickle

import numpy as np
import matplotlib.pyplot as plt
from scipy import stats

from dplit.config import is_quick, size

n_draws = size(full=10_000, quick=2_000)  # size of the p2 sample that p3 and p4 are fitted to
n_check = size(full=20_000, quick=5_000)  # draws per goodness-of-fit check
SEED = 20261124
rng = np.random.default_rng(SEED)
print(f"quick mode: {is_quick()}; n_draws = {n_draws}, n_check = {n_check}")

# %% [markdown]
# ## What it gives
#
# The result first, from the finished module `dplit.priors`: one split release of $n = 5000$ Dirichlet records
# ($\alpha = (2.2, 3.3, 4.4)$, $\epsilon = 1$, a quarter of the records in $D_1$), and the priors p1-p4 built from it
# (Sec. 4.2.1, Table 1). The figure shows where each prior puts the precision $\sum_j \alpha_j$, the direction the
# Laplace noise hides (Sec. 4.2): the vague p1 spreads over more than an order of magnitude, while p2-p4, learnt from the $D_1$
# release alone, already sit close to the true precision (black line). The check: the central 99% of p4's precisions
# contains the truth and is at least five times narrower (on the log scale) than p1's.

# %%
# NBVAL_IGNORE_OUTPUT
import dplit.priors as dpp
from dplit.dirichlet import dirichlet_draws
from dplit.release import release as make_release

alpha_true = np.array([2.2, 3.3, 4.4])
CANDS = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1]          # the six candidate values of a
X = dirichlet_draws(alpha_true, 5000, rng=rng)
rel = make_release(X, eps1=0.75, eps2=0.25, candidates=CANDS, tc=0.01, n1=1250, rng=rng, secure=False)
sample_p2 = dpp.p2_draws(rel, n_draws, rng=rng)       # reused below by the notebook's own make_prior
fig_priors = {"p1": dpp.make_prior("p1", rel),
              **{name: dpp.make_prior(name, rel, draws=sample_p2) for name in ("p2", "p3", "p4")}}
log_prec = {name: np.log10(p.sample(n_check, rng).sum(axis=1)) for name, p in fig_priors.items()}
q1, q4 = (np.quantile(log_prec[k], [0.005, 0.995]) for k in ("p1", "p4"))
print("central 99% of log10 sum(alpha): p1", np.round(q1, 2), "p4", np.round(q4, 2),
      f"truth {np.log10(alpha_true.sum()):.2f}")
assert q4[0] < np.log10(alpha_true.sum()) < q4[1] and q4[1] - q4[0] < (q1[1] - q1[0]) / 5

fig, ax = plt.subplots(figsize=(7, 2.8))
for name, lp in log_prec.items():
    ax.hist(lp, bins=80, density=True, histtype="step", lw=1.2, label=name)
ax.axvline(np.log10(alpha_true.sum()), c="k", lw=0.8, label="truth")
ax.set(xlabel=r"$\log_{10} \sum_j \alpha_j$ (the precision)", ylabel="density")
ax.legend(fontsize=9, loc="upper left", frameon=False)
ax.tick_params(labelsize=9)
fig.tight_layout()

# %% [markdown]
# ## Why priors from data (Guo et al., Sec. 4.2, 4.2.1)
#
# The Bayesian methods of notebooks 21-23 target $\pi(\alpha \mid S_L = s_L)$. The release is one noisy $d$-vector, and
# the Laplace noise flattens the likelihood most in the direction of the **precision** $\sum_j \alpha_j$: the statistic
# $E[\log x_j] = \psi(\alpha_j) - \psi(\sum_k \alpha_k)$ moves little when all $\alpha_j$ grow together, so a noisy
# statistic is compatible with a long ridge of precisions. Along that ridge the prior decides. The vague default
# **p1**, independent $\mathrm{Gamma}(1, 0.1)$ (mean 10, sd 10 for every $\alpha_j$), puts much of its mass on precisions
# far from the truth, and the posterior inherits it at small $n\epsilon$ (the paper's simulations show the loss, Sec. 5.1).
#
# The remedy of Sec. 4.2.1: **split** the data (Alg. 1 with $n_1 > 0$) into $D_1$ and $D_2$, release
# $S_L(D_1, a)$ and $S_L(D_2, a)$ (parallel composition: the split costs no budget), learn a prior from the $D_1$ release,
# and condition on the $D_2$ release. Four ways to learn it:
#
# * **p2**: the law of DPBoots on the $D_1$ release (notebook 17), $\alpha \overset{d}{=} \mathrm{DPBoots}(S_L(D_1, a), \epsilon_1, a)$.
#   Only draws are available, no density;
# * **p3**: independent $\mathrm{Gamma}(\hat v_j, \hat w_j)$ with $(\hat v_j, \hat w_j)$ the maximum-likelihood fit to a large p2 sample;
# * **p4**: a Gaussian copula (Sungur 2000) with p3's gamma marginals and the correlation matrix of p2's normal scores:
#   p3 plus the dependence between the $\alpha_j$ that p2 shows;
# * **p5**: the DP posterior of $\alpha$ given $S_L(D_1, a)$ under p1, $\pi_0(\alpha) = \int \pi(\alpha, D_1 \mid S_L(D_1, a)) \, dD_1$
#   (model (2)): draws only, by the DPMCMC of notebook 07.
#
# Table 1 of the paper, rendered (the posterior column is what the methods of notebooks 21-23 target with each prior):
#
# | prior | prior distribution | density? | posterior distribution | used with |
# |---|---|---|---|---|
# | p1 | independent $\alpha_j \sim \mathrm{Gamma}(1, 0.1)$ | yes | $\pi(\alpha \mid S_L(D, a) = s_L)$ | DPMCMC, DPreMCMC, DPABC, DPapprox |
# | p2 | $\alpha \overset{d}{=} \mathrm{DPBoots}(S_L(D_1, a), \epsilon_1, a)$ | no (draws) | $\pi(\alpha \mid S_L(D_2, a) = s_L^{(2)}, S_L(D_1, a) = s_L^{(1)})$ | DPABC |
# | p3 | independent $\alpha_j \sim \mathrm{Gamma}(\hat v_j(D_1), \hat w_j(D_1))$ | yes | $\pi(\alpha \mid s_L^{(2)}, s_L^{(1)})$ | DPMCMC, DPreMCMC, DPABC, DPapprox |
# | p4 | Gaussian copula, marginals $\mathrm{Gamma}(\hat v_j(D_1), \hat w_j(D_1))$ | yes | $\pi(\alpha \mid s_L^{(2)}, s_L^{(1)})$ | DPMCMC, DPreMCMC, DPABC, DPapprox |
# | p5 | $\pi_0(\alpha \mid s_L^{(1)}) = \int \pi(\alpha, D_1 \mid S_L(D_1, a) = s_L^{(1)})\, dD_1$ | no (draws) | $\pi(\alpha \mid s_L^{(2)}, s_L^{(1)})$ | DPABC |
#
# (With p1 the posterior conditions on the unsplit release; with p2-p5 on the $D_2$ release, the $D_1$ release having
# been used up by the prior.) Gamma parameters are (shape, rate): $\mathrm{Gamma}(v, w)$ has density
# $w^v \alpha^{v-1} e^{-w\alpha} / \Gamma(v)$, mean $v/w$.

# %% [markdown]
# ## One interface
#
# Every prior has `name`, `d`, `sample(size, rng) -> (size, d)`, `logpdf(alpha)` (for one $\alpha$ of shape `(d,)` or a
# stack `(k, d)`; $-\infty$ outside $(0, \infty)^d$), `describe()`, and `has_density`. Priors known only through draws
# (p2, p5) raise `NoDensityError` (a `NotImplementedError`) from `logpdf`, saying which priors have one. Priors are
# plain objects of module-level classes holding NumPy arrays, so `pickle` ships them to worker processes (the simulation
# study of notebook 62 does).

# %%
#| default_exp priors
#| internal PRIOR_NAMES KernelForm prior_logpdf_kernel kernel_logpdf
#| internal fit_gamma fit_gammas normal_scores_correlation
#| export
import math
from typing import NamedTuple

import numpy as np
from numba import njit
from scipy import special, stats

from dplit import _validate as V
from dplit.bootstrap import BootResult, dp_boots
from dplit.dirichlet import gammainc_pq, ndtri_lower
from dplit.release import Release

PRIOR_NAMES = ("p1", "p2", "p3", "p4", "p5")


class NoDensityError(NotImplementedError):
    """Raised by ``logpdf`` of a prior known only through draws (p2, p5)."""


def _positive_vector(value, name, d=None):
    """Return ``value`` as a finite positive float vector (a scalar is repeated d times), or raise."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be a positive number or a 1-D array of them") from err
    if arr.ndim == 0:
        if d is None:
            raise ValueError(f"d is required when {name} is a scalar")
        arr = np.full(d, float(arr))
    if arr.ndim != 1 or (d is not None and arr.size != d):
        raise ValueError(f"{name} must be a scalar or a 1-D array of length d = {d}, got shape {arr.shape}")
    if not np.all(np.isfinite(arr) & (arr > 0)):
        raise ValueError(f"{name} must be finite and > 0, got {arr}")
    return arr.copy()


class Prior:
    """Base class of the priors on the Dirichlet parameter alpha (a point of (0, inf)^d).

    Subclasses set ``name`` and ``d`` and implement ``sample``; those with a density
    implement ``_logpdf`` and set ``has_density = True``.
    """

    name = "prior"
    has_density = False

    def __init__(self, d, name=None):
        self.d = V.count(d, "d", minimum=2)
        if name is not None:
            if not isinstance(name, str):
                raise TypeError(f"name must be a str, got {type(name).__name__}")
            self.name = name

    def sample(self, size, rng=None):
        """Draw ``size`` values of alpha, shape (size, d)."""
        raise NotImplementedError

    def logpdf(self, alpha):
        """Log density at ``alpha`` (shape (d,) -> float, (k, d) -> (k,)); -inf outside (0, inf)^d."""
        if not self.has_density:
            raise NoDensityError(
                f"prior {self.name} is known only through draws and has no density; "
                "use sample(), or a prior with a density (p1, p3, p4), e.g. in DPMCMC")
        alpha = np.asarray(alpha, dtype=float)
        if alpha.shape[-1:] != (self.d,) or alpha.ndim > 2:
            raise ValueError(f"alpha must have shape (d,) or (k, d) with d = {self.d}, got {alpha.shape}")
        stack = np.atleast_2d(alpha)
        ok = np.all(stack > 0, axis=1) & np.all(np.isfinite(stack), axis=1)
        out = np.full(len(stack), -np.inf)
        if ok.any():
            out[ok] = self._logpdf(stack[ok])
        return out if alpha.ndim == 2 else float(out[0])

    def _logpdf(self, alpha):
        """Log density of valid rows of alpha (k, d) -> (k,)."""
        raise NotImplementedError

    def kernel_form(self):
        """The log density as the samplers' numba kernels evaluate it: a :class:`KernelForm`."""
        if not self.has_density:
            raise NoDensityError(f"prior {self.name} is known only through draws and has no density, "
                                 "which MCMC needs; use a prior with a density (p1, p3, p4)")
        raise TypeError(f"prior {self.name!r} ({type(self).__name__}) has no kernel form: the samplers evaluate "
                        "independent gammas (GammaPrior) and Gaussian copulas with gamma marginals "
                        "(GaussianCopulaPrior); define kernel_form() returning a KernelForm")

    def describe(self):
        """A one-line description."""
        return f"{self.name}: a prior on alpha in (0, inf)^{self.d}"

    def __repr__(self):
        return f"<{type(self).__name__} {self.describe()}>"

    def _rng_size(self, size, rng):
        """Validated (size, Generator)."""
        return V.count(size, "size", minimum=0), V.rng(rng)

# %% [markdown]
# ## The prior inside a numba kernel
#
# The samplers of notebook 21 evaluate the prior millions of times inside compiled code, so each prior also
# states its log density in a small, explicit form that a numba kernel reads: `kernel_form()` returns a
# `KernelForm(kind, shape, rate, prec, const)`. Two kinds cover p1, p3 and p4:
#
# * `PRIOR_GAMMA`: $\sum_j (v_j - 1)\log\alpha_j - w_j\alpha_j$, independent gammas;
# * `PRIOR_COPULA`: the same plus the Gaussian-copula term $-\tfrac12 \mathbf z^\top (R^{-1} - I)\mathbf z$ with
#   $z_j = \Phi^{-1}(F_j(\alpha_j))$ (the regularised incomplete gamma function and the normal quantile are numba
#   special functions of `dplit.dirichlet`).
#
# The kernel leaves out the normalising constant `const` (the samplers do not need it; adding it would change
# their floating-point comparisons); `kernel_logpdf(form, alpha)` adds it back, and the check below asks that
# it equals `Prior.logpdf` for every prior kind: the density is written once per prior, and the kernel's form
# is tested against it, not guessed from attributes. Priors known through draws (p2, p5) have no kernel form.

# %%
#| export
PRIOR_GAMMA = 0     # independent gammas (p1, p3)
PRIOR_COPULA = 1    # Gaussian copula with gamma marginals (p4)


class KernelForm(NamedTuple):
    """A prior's log density as numba kernels read it (see ``prior_logpdf_kernel``)."""

    kind: int               # PRIOR_GAMMA or PRIOR_COPULA
    shape: np.ndarray       # (d,) gamma shapes v
    rate: np.ndarray        # (d,) gamma rates w
    prec: np.ndarray        # (d, d) R^-1 - I for the copula; zeros for independent gammas
    const: float            # log normalising constant, left out by the kernel


@njit(cache=True, nogil=True)
def prior_logpdf_kernel(alpha, kind, shape, rate, prec):
    """Log prior density of alpha without its constant: independent gammas, or their Gaussian copula."""
    d = alpha.size
    out = 0.0
    for j in range(d):
        if not alpha[j] > 0.0:
            return -np.inf
        out += (shape[j] - 1.0) * math.log(alpha[j]) - rate[j] * alpha[j]
    if kind == PRIOR_COPULA:
        z = np.empty(d)
        for j in range(d):
            p, q = gammainc_pq(shape[j], rate[j] * alpha[j])
            if p <= 0.0 or q <= 0.0:
                return -np.inf
            z[j] = ndtri_lower(p) if p < 0.5 else -ndtri_lower(q)
        quad = 0.0
        for j in range(d):
            for k in range(d):
                quad += z[j] * prec[j, k] * z[k]
        out -= 0.5 * quad
    return out


def kernel_logpdf(form, alpha):
    """Log density of one alpha (d,) from a KernelForm, constant included (equals ``Prior.logpdf``)."""
    alpha = np.asarray(alpha, dtype=float)
    return prior_logpdf_kernel(alpha, form.kind, form.shape, form.rate, form.prec) + form.const


def _gamma_const(shape, rate):
    """log of the gamma normalising constants, sum_j v_j log w_j - log Gamma(v_j)."""
    return float(np.sum(shape * np.log(rate) - special.gammaln(shape)))

# %% [markdown]
# ## p1 and p3: independent gammas
#
# `GammaPrior(shape, rate, d=...)` is p1 with the defaults $(1, 0.1)$; p3 is the same class with fitted, per-component
# parameters. Checks: moments and a Kolmogorov-Smirnov test of the draws, the log density against `scipy.stats.gamma`,
# and a wrong rate that the KS test must reject.

# %%
#| export
class GammaPrior(Prior):
    """Independent ``alpha_j ~ Gamma(shape_j, rate_j)`` (p1 with the defaults; p3 when fitted).

    Parameters
    ----------
    shape, rate : float or array_like of shape (d,)
        Shape ``v`` and rate ``w`` (mean ``v / w``); scalars are repeated ``d`` times.
    d : int, optional
        Number of components; required when ``shape`` and ``rate`` are scalars.
    name : str
        ``"p1"`` by default.
    """

    has_density = True

    def __init__(self, shape=1.0, rate=0.1, d=None, name="p1"):
        if d is None:
            d = next((np.size(v) for v in (shape, rate) if np.ndim(v) == 1), None)
            if d is None:
                raise ValueError("d is required when shape and rate are scalars")
        super().__init__(d, name)
        self.shape = _positive_vector(shape, "shape", self.d)
        self.rate = _positive_vector(rate, "rate", self.d)

    def sample(self, size, rng=None):
        """Draw ``size`` values of alpha, shape (size, d)."""
        size, rng = self._rng_size(size, rng)
        return rng.gamma(self.shape, 1.0 / self.rate, size=(size, self.d))

    def _logpdf(self, alpha):
        v, w = self.shape, self.rate
        return np.sum(v * np.log(w) - special.gammaln(v) + (v - 1) * np.log(alpha) - w * alpha, axis=1)

    def marginal(self, j):
        """The frozen ``scipy.stats.gamma`` law of component ``j``."""
        return stats.gamma(self.shape[j], scale=1.0 / self.rate[j])

    def kernel_form(self):
        """Independent gammas for the samplers' kernels (see :class:`KernelForm`)."""
        return KernelForm(PRIOR_GAMMA, self.shape.copy(), self.rate.copy(), np.zeros((self.d, self.d)),
                          _gamma_const(self.shape, self.rate))

    def describe(self):
        """A one-line description."""
        if np.all(self.shape == self.shape[0]) and np.all(self.rate == self.rate[0]):
            par = f"Gamma(shape={self.shape[0]:g}, rate={self.rate[0]:g})"
        else:
            par = "Gamma(shape, rate) with shape = " + np.array2string(self.shape, precision=3) + \
                  ", rate = " + np.array2string(self.rate, precision=3)
        return f"{self.name}: independent alpha_j ~ {par}, d = {self.d}"

# %%
p1 = GammaPrior(d=3)
draws_p1 = p1.sample(n_check, rng)
assert draws_p1.shape == (n_check, 3)
assert np.allclose(draws_p1.mean(axis=0), 10, rtol=0.05) and np.allclose(draws_p1.std(axis=0), 10, rtol=0.05)
assert min(stats.kstest(draws_p1[:, j], stats.gamma(1, scale=10).cdf).pvalue for j in range(3)) > 1e-3
assert stats.kstest(draws_p1[:, 0], stats.gamma(1, scale=8).cdf).pvalue < 1e-6  # a wrong rate is caught
alpha_pts = np.array([[1.0, 2.0, 30.0], [0.5, 0.1, 7.0]])
expected = stats.gamma(1, scale=10).logpdf(alpha_pts).sum(axis=1)
assert np.allclose(p1.logpdf(alpha_pts), expected) and np.isclose(p1.logpdf(alpha_pts[0]), expected[0])
assert p1.logpdf([1.0, -1.0, 2.0]) == -np.inf
p_mixed = GammaPrior([2.0, 3.0], [0.5, 4.0], name="p3")
assert np.isclose(p_mixed.logpdf([1.0, 1.0]), stats.gamma(2, scale=2).logpdf(1) + stats.gamma(3, scale=0.25).logpdf(1))
print(p1.describe())
print(p_mixed.describe())

# %% [markdown]
# **Fitting a gamma by maximum likelihood** (for p3). For a sample $y_1, \dots, y_N > 0$ the profile likelihood of the
# shape $v$ (the rate is $\hat w = v/\bar y$) is maximised where
#
# $$\log v - \psi(v) = \log \bar y - \overline{\log y} =: c \;(> 0 \text{ by Jensen}),$$
#
# a monotone equation solved by Newton's method from Minka's (2002) start $v_0 = (3 - c + \sqrt{(c - 3)^2 + 24c})/(12c)$.
# Check: against `scipy.stats.gamma.fit` with the location fixed at 0, and recovery of known parameters.

# %%
#| export
def fit_gamma(y, *, tol=1e-12, max_iter=100):
    """Maximum-likelihood ``(shape, rate)`` of a gamma law from a positive sample.

    Parameters
    ----------
    y : array_like, shape (N,)
        Positive, finite sample, not all equal.
    tol : float
        Relative tolerance on the shape.
    max_iter : int
        Newton steps at most.

    Returns
    -------
    shape, rate : float
    """
    y = np.asarray(y, dtype=float)
    if y.ndim != 1 or y.size < 2:
        raise ValueError(f"y must be a 1-D sample of at least 2 values, got shape {y.shape}")
    if not np.all(np.isfinite(y) & (y > 0)):
        raise ValueError("y must be finite and > 0")
    c = math.log(y.mean()) - float(np.mean(np.log(y)))
    if not c > 0:
        raise ValueError("y must not be constant (the gamma MLE does not exist)")
    v = (3 - c + math.sqrt((c - 3) ** 2 + 24 * c)) / (12 * c)
    for _ in range(max_iter):
        f = math.log(v) - special.digamma(v) - c
        step = f / (1 / v - special.polygamma(1, v))
        v_new = v - step
        if v_new <= 0:
            v_new = v / 2
        if abs(v_new - v) <= tol * v:
            v = v_new
            break
        v = v_new
    return v, v / y.mean()


def fit_gammas(draws):
    """Per-column gamma MLE of draws (N, d): arrays (shape, rate)."""
    draws = np.asarray(draws, dtype=float)
    fits = [fit_gamma(draws[:, j]) for j in range(draws.shape[1])]
    return np.array([f[0] for f in fits]), np.array([f[1] for f in fits])

# %%
y = rng.gamma(3.7, 1 / 0.6, size=n_check)
v_hat, w_hat = fit_gamma(y)
v_sp, _, scale_sp = stats.gamma.fit(y, floc=0)
print(f"fit_gamma: shape {v_hat:.5f}, rate {w_hat:.5f}; scipy: shape {v_sp:.5f}, rate {1 / scale_sp:.5f}")
assert np.isclose(v_hat, v_sp, rtol=1e-4) and np.isclose(w_hat, 1 / scale_sp, rtol=1e-4)
se = np.sqrt(np.diag(np.linalg.inv(n_check * np.array([[special.polygamma(1, 3.7), -1 / 0.6],
                                                         [-1 / 0.6, 3.7 / 0.6**2]]))))
assert abs(v_hat - 3.7) < 5 * se[0] and abs(w_hat - 0.6) < 5 * se[1]

# %% [markdown]
# ## p2 and p5: priors known through draws
#
# `DrawsPrior(draws)` stores a large sample and samples from its empirical law (rows drawn uniformly with replacement):
# what p2 is in practice (the paper fits p3 and p4 to "a large random sample from p2", and DPABC draws from p2), and
# what p5 is (posterior draws of DPMCMC under p1). It has no density.

# %%
#| export
class DrawsPrior(Prior):
    """A prior known only through draws: the empirical law of ``draws`` (p2, p5).

    Parameters
    ----------
    draws : array_like, shape (N, d)
        Draws of alpha (finite, positive); rows with NaN are dropped (e.g. failed bootstrap
        replicates), and their number is kept in ``n_dropped``.
    name : str
    source : str
        How the draws were made (shown by ``describe``).
    """

    has_density = False

    def __init__(self, draws, name="p2", source="draws"):
        arr = np.asarray(draws, dtype=float)
        if arr.ndim != 2 or arr.shape[1] < 2:
            raise ValueError(f"draws must have shape (N, d) with d >= 2, got {arr.shape}")
        keep = ~np.isnan(arr).any(axis=1)
        arr = arr[keep]
        if len(arr) == 0:
            raise ValueError("draws has no complete row")
        if not np.all(np.isfinite(arr) & (arr > 0)):
            raise ValueError("draws must be finite and > 0 (alpha lies in (0, inf)^d)")
        super().__init__(arr.shape[1], name)
        self.draws = arr
        self.n_dropped = int((~keep).sum())
        self.source = str(source)

    def sample(self, size, rng=None):
        """Draw ``size`` rows of the stored draws uniformly with replacement, shape (size, d)."""
        size, rng = self._rng_size(size, rng)
        return self.draws[rng.integers(0, len(self.draws), size=size)]

    def describe(self):
        """A one-line description."""
        dropped = f", {self.n_dropped} incomplete rows dropped" if self.n_dropped else ""
        return f"{self.name}: empirical law of {len(self.draws)} draws ({self.source}{dropped}), d = {self.d}"

# %%
pool = rng.gamma(2.0, 1.0, size=(500, 3))
pool[7, 1] = np.nan
emp = DrawsPrior(pool, source="a test sample")
assert emp.n_dropped == 1 and emp.draws.shape == (499, 3)
x = emp.sample(n_check, rng)
assert x.shape == (n_check, 3) and set(map(tuple, x)) <= set(map(tuple, emp.draws))
assert stats.ks_2samp(x[:, 0], emp.draws[:, 0]).pvalue > 1e-3 and not emp.has_density
print(emp.describe())

# %% [markdown]
# ## p4: a Gaussian copula with gamma marginals
#
# With marginal CDFs $F_j$ (p3's gammas) and a correlation matrix $R$, the Gaussian copula prior is the law of
#
# $$\alpha_j = F_j^{-1}(\Phi(z_j)), \qquad z \sim N_d(0, R),$$
#
# so each $\alpha_j$ keeps its gamma marginal and the dependence is that of $z$. Its density is the copula density times
# the marginals:
#
# $$\log \pi_0(\alpha) = -\tfrac12 \log |R| - \tfrac12 z^\top (R^{-1} - I) z + \sum_j \log f_j(\alpha_j), \qquad z_j = \Phi^{-1}(F_j(\alpha_j)).$$
#
# $R$ is estimated from the p2 sample by **normal scores**: replace each column by $\Phi^{-1}(\mathrm{rank}/(N+1))$ and
# take the correlation matrix (the maximum-likelihood estimate of a Gaussian copula's $R$ with the marginals left free,
# to first order; it depends only on the ranks, so on p2's dependence and not on its marginals). In the tails we
# evaluate $z_j$ with $\Phi^{-1}(F_j) $ or $-\Phi^{-1}(1 - F_j)$, whichever is accurate, so that $\log$ densities stay
# finite far out.

# %%
#| export
def normal_scores_correlation(draws):
    """Correlation matrix of the normal scores ``Phi^-1(rank / (N + 1))`` of each column of draws (N, d)."""
    draws = np.asarray(draws, dtype=float)
    if draws.ndim != 2 or draws.shape[0] < 3 or draws.shape[1] < 2:
        raise ValueError(f"draws must have shape (N, d) with N >= 3 and d >= 2, got {draws.shape}")
    if not np.all(np.isfinite(draws)):
        raise ValueError("draws must be finite")
    n = draws.shape[0]
    scores = stats.norm.ppf(stats.rankdata(draws, axis=0) / (n + 1))
    corr = np.corrcoef(scores, rowvar=False)
    return (corr + corr.T) / 2


def _check_correlation(corr, d):
    """Return ``corr`` as a (d, d) correlation matrix, or raise (symmetric, unit diagonal, positive definite)."""
    corr = np.asarray(corr, dtype=float)
    if corr.shape != (d, d):
        raise ValueError(f"corr must have shape ({d}, {d}), got {corr.shape}")
    if not np.all(np.isfinite(corr)) or not np.allclose(corr, corr.T, atol=1e-12):
        raise ValueError("corr must be finite and symmetric")
    if not np.allclose(np.diag(corr), 1.0, atol=1e-12):
        raise ValueError("corr must have a unit diagonal")
    try:
        np.linalg.cholesky(corr)
    except np.linalg.LinAlgError as err:
        raise ValueError("corr must be positive definite") from err
    return corr.copy()


class GaussianCopulaPrior(Prior):
    """Gaussian copula with ``Gamma(shape_j, rate_j)`` marginals and correlation ``corr`` (p4).

    Parameters
    ----------
    shape, rate : array_like, shape (d,)
        Marginal gamma parameters (p3's fit).
    corr : array_like, shape (d, d)
        Correlation matrix of the latent normals (p2's normal scores).
    name : str
    """

    has_density = True

    def __init__(self, shape, rate, corr, name="p4"):
        shape_arr = np.asarray(shape, dtype=float)
        super().__init__(shape_arr.size if shape_arr.ndim == 1 else 0, name)
        self.shape = _positive_vector(shape, "shape", self.d)
        self.rate = _positive_vector(rate, "rate", self.d)
        self.corr = _check_correlation(corr, self.d)
        self._chol = np.linalg.cholesky(self.corr)
        self._prec_minus_eye = np.linalg.inv(self.corr) - np.eye(self.d)
        self._logdet = 2.0 * float(np.sum(np.log(np.diag(self._chol))))

    def __getstate__(self):
        return {"name": self.name, "d": self.d, "shape": self.shape, "rate": self.rate, "corr": self.corr}

    def __setstate__(self, state):
        self.__init__(state["shape"], state["rate"], state["corr"], name=state["name"])

    def sample(self, size, rng=None):
        """Draw ``size`` values of alpha, shape (size, d)."""
        size, rng = self._rng_size(size, rng)
        z = rng.standard_normal((size, self.d)) @ self._chol.T
        # upper tail through the survival function, for accuracy
        u_low, u_up = stats.norm.cdf(z), stats.norm.sf(z)
        low = stats.gamma.ppf(u_low, self.shape, scale=1.0 / self.rate)
        up = stats.gamma.isf(u_up, self.shape, scale=1.0 / self.rate)
        return np.where(z < 0, low, up)

    def _scores(self, alpha):
        """Latent normal scores z_j = Phi^-1(F_j(alpha_j)), accurate in both tails."""
        scale = 1.0 / self.rate
        low = stats.norm.ppf(stats.gamma.cdf(alpha, self.shape, scale=scale))
        up = -stats.norm.ppf(stats.gamma.sf(alpha, self.shape, scale=scale))
        return np.where(low < 0, low, up)

    def _logpdf(self, alpha):
        z = self._scores(alpha)
        copula = -0.5 * self._logdet - 0.5 * np.einsum("ij,jk,ik->i", z, self._prec_minus_eye, z)
        marg = stats.gamma.logpdf(alpha, self.shape, scale=1.0 / self.rate).sum(axis=1)
        return copula + marg

    def marginal(self, j):
        """The frozen ``scipy.stats.gamma`` law of component ``j``."""
        return stats.gamma(self.shape[j], scale=1.0 / self.rate[j])

    def kernel_form(self):
        """Gamma marginals and the copula's R^-1 - I for the samplers' kernels (see :class:`KernelForm`)."""
        return KernelForm(PRIOR_COPULA, self.shape.copy(), self.rate.copy(), self._prec_minus_eye.copy(),
                          _gamma_const(self.shape, self.rate) - 0.5 * self._logdet)

    def describe(self):
        """A one-line description."""
        off = self.corr[np.triu_indices(self.d, 1)]
        return (f"{self.name}: Gaussian copula, marginals Gamma(shape = {np.array2string(self.shape, precision=3)}, "
                f"rate = {np.array2string(self.rate, precision=3)}), latent correlations in "
                f"[{off.min():.2f}, {off.max():.2f}], d = {self.d}")

# %% [markdown]
# Checks of the copula on a known case: marginals pass KS tests against their gammas; the normal-scores estimate of $R$
# from copula draws recovers $R$; the log density equals the multivariate-normal form
# $\log \phi_R(z) - \sum_j \log \phi(z_j) + \sum_j \log f_j(\alpha_j)$ computed by `scipy.stats.multivariate_normal`;
# and the density integrates to one (importance sampling from the independent gammas: $E_{p3}[\pi_4/\pi_3] = 1$).
# (`tests/test_priors.py` adds $R = I$, far tails and invalid $R$.)

# %%
R = np.array([[1.0, 0.6, -0.3], [0.6, 1.0, 0.2], [-0.3, 0.2, 1.0]])
shape_k, rate_k = np.array([4.0, 9.0, 2.5]), np.array([1.0, 0.5, 2.0])
cop = GaussianCopulaPrior(shape_k, rate_k, R)
xc = cop.sample(n_check, rng)
p_marg = [stats.kstest(xc[:, j], cop.marginal(j).cdf).pvalue for j in range(3)]
R_hat = normal_scores_correlation(xc)
print("marginal KS p-values", np.round(p_marg, 3), "| max |R_hat - R| =", np.abs(R_hat - R).max().round(4))
assert min(p_marg) > 1e-3 and np.abs(R_hat - R).max() < 5 / np.sqrt(n_check)
pts = xc[:5]
zs = stats.norm.ppf(stats.gamma.cdf(pts, shape_k, scale=1 / rate_k))
direct = (stats.multivariate_normal(np.zeros(3), R).logpdf(zs) - stats.norm.logpdf(zs).sum(axis=1)
          + stats.gamma.logpdf(pts, shape_k, scale=1 / rate_k).sum(axis=1))
assert np.allclose(cop.logpdf(pts), direct)
y3 = GammaPrior(shape_k, rate_k).sample(n_check, rng)
w = np.exp(cop.logpdf(y3) - GammaPrior(shape_k, rate_k).logpdf(y3))
print(f"E_p3[pi4 / pi3] = {w.mean():.3f} +- {w.std() / np.sqrt(n_check):.3f}")
assert abs(w.mean() - 1) < 5 * w.std() / np.sqrt(n_check)

# %% [markdown]
# ## Building the priors from a release: `make_prior`
#
# `make_prior(name, release, ...)` builds any of the five: p1 needs only `d`; p2, p3 and p4 need a split release
# (they use its $D_1$ part): p2 is `n_draws` DPBoots draws on $S_L(D_1, a)$ (`dp_boots(release, part="D1")`), p3 and p4
# are fitted to that same sample (pass `draws=` to reuse a p2 sample). Failed DPBoots replicates, if any, are dropped.
#
# **p5 lives above the samplers.** p5 is the DPMCMC posterior under p1 given the $D_1$ release, and DPMCMC lives in
# `dplit.mcmc` (notebook 21), which uses the priors of this notebook. A module imports only modules below it
# (`dplit.LAYERS`, checked by a test), so p5 is built where DPMCMC is: `dplit.mcmc.p5_prior(release)` returns a
# `DrawsPrior` of posterior draws named "p5", and the samplers accept `prior="p5"`. `make_prior("p5", ...)` raises a
# `ValueError` that says so.

# %%
#| export
def _split_part(release, name):
    """Check that ``release`` is a split Release (priors p2-p5 learn from its D1 part)."""
    if release is None:
        raise ValueError(f"prior {name} is learnt from the D1 part of a release: pass release=")
    if not isinstance(release, Release):
        raise TypeError(f"release must be a dplit.release.Release, got {type(release).__name__}")
    if not release.split:
        raise ValueError(f"prior {name} needs a split release (n1 > 0): it is learnt from S_L(D1, a)")
    return release


def p2_draws(release, n_draws=10_000, *, rng=None, **boots_options):
    """A large sample from p2: DPBoots on the D1 part of a split release, shape (n_draws, d).

    Rows of failed replicates (NaN) are kept; :class:`DrawsPrior` drops them.
    """
    _split_part(release, "p2")
    n_draws = V.count(n_draws, "n_draws", minimum=10)
    # the same bound as dp_boots' n_boot (48 bytes per replicate), stated under this function's own name
    V.work_size(48 * n_draws, f"{n_draws:,} draws of p2 (n_draws)", "lower n_draws")
    boots_options.setdefault("progress", False)   # a step inside a sampler: the sampler's own bar reports
    return BootResult.of(dp_boots(release, n_boot=n_draws, part="D1", rng=rng, **boots_options)).alpha


def make_prior(name, release=None, *, d=None, rng=None, n_draws=None, draws=None, shape=1.0, rate=0.1,
               **options):
    """Build one of the priors p1-p4 of Guo et al. (Sec. 4.2.1, Table 1); p5 is ``dplit.mcmc.p5_prior``.

    Parameters
    ----------
    name : {"p1", "p2", "p3", "p4"}
        Which prior (``"p5"`` raises a ValueError pointing to ``dplit.mcmc.p5_prior``).
    release : dplit.release.Release, optional
        A split release (``n1 > 0``); required for p2-p4, which learn from ``S_L(D1, a)``.
    d : int, optional
        Number of components for p1 (default ``release.d``).
    rng : None, int or numpy.random.Generator
        Randomness of the p2 sample (p2-p4).
    n_draws : int, optional
        Size of the p2 sample (p2-p4; default 10,000).
    draws : array_like, shape (N, d), optional
        A p2 sample to reuse instead of running DPBoots (p2-p4).
    shape, rate : float or array_like
        Parameters of p1 (default Gamma(1, 0.1)).
    **options
        Passed to :func:`dplit.bootstrap.dp_boots`.

    Returns
    -------
    Prior
        ``GammaPrior`` (p1, p3), ``DrawsPrior`` (p2) or ``GaussianCopulaPrior`` (p4).

    Examples
    --------
    >>> p1 = make_prior("p1", d=3)
    >>> p1.describe()
    'p1: independent alpha_j ~ Gamma(shape=1, rate=0.1), d = 3'
    >>> bool(abs(p1.logpdf([1.0, 2.0, 3.0]) - 3 * np.log(0.1) + 0.6) < 1e-12)
    True
    """
    if name not in PRIOR_NAMES:
        raise ValueError(f"name must be one of {PRIOR_NAMES}, got {name!r}")
    if name == "p1":
        if d is None:
            if release is None:
                raise ValueError("p1 needs d= (or a release to take d from)")
            d = release.d
        return GammaPrior(shape, rate, d=d, name="p1")
    release = _split_part(release, name)
    if name == "p5":
        raise ValueError("prior p5 is the DPMCMC_p1 posterior given S_L(D1, a): build it with "
                         "dplit.mcmc.p5_prior(release) (notebook 21), or pass prior='p5' to a sampler")
    if draws is None:
        draws = p2_draws(release, 10_000 if n_draws is None else n_draws, rng=rng, **options)
    elif options:
        raise TypeError(f"options {sorted(options)} are for DPBoots, which does not run when draws= is given")
    p2 = DrawsPrior(draws, name="p2", source=f"DPBoots on S_L(D1, a), n1 = {release.n1}")
    if p2.d != release.d:
        raise ValueError(f"draws must have d = {release.d} columns, got {p2.d}")
    if name == "p2":
        return p2
    v, w = fit_gammas(p2.draws)
    if name == "p3":
        return GammaPrior(v, w, name="p3")
    return GaussianCopulaPrior(v, w, normal_scores_correlation(p2.draws), name="p4")

# %% [markdown]
# ## The five priors for one release
#
# The split release of the first figure, in the paper's design: $\alpha = (2.2, 3.3, 4.4)$, $n = 5000$ with $n_1 = 0.25n$, $\epsilon = 1$ split as
# $\epsilon_1 = 0.75$, $\epsilon_2 = 0.25$, the six candidates $10^{-6}, \dots, 10^{-1}$, $t_c = 0.01$.
#
# The done-when checks for p4: its marginals pass goodness-of-fit tests against p3's gammas, and its rank (Spearman)
# correlations match p2's (within a few standard errors, from a bootstrap of p2's sample); independent p3 draws, whose
# rank correlations are zero, must fail the same comparison when p2's dependence is clear.

# %%
print(rel.summary())                                   # the release and p2 sample of the first figure
priors = {"p1": make_prior("p1", rel), **{name: make_prior(name, rel, draws=sample_p2) for name in ("p2", "p3", "p4")}}
for p in priors.values():
    print(p.describe())

p3, p4, p2 = priors["p3"], priors["p4"], priors["p2"]
x4 = p4.sample(n_check, rng)
p_marg = [stats.kstest(x4[:, j], p3.marginal(j).cdf).pvalue for j in range(3)]
rho2 = stats.spearmanr(p2.draws).statistic
rho4 = stats.spearmanr(x4).statistic
rho3 = stats.spearmanr(p3.sample(n_check, rng)).statistic
iu = np.triu_indices(3, 1)
boot_rho = np.array([stats.spearmanr(p2.draws[rng.integers(0, len(p2.draws), len(p2.draws))]).statistic[iu]
                     for _ in range(size(full=200, quick=50))])
se_rho = np.sqrt(boot_rho.std(axis=0) ** 2 + 1 / n_check)
z4, z3 = ((rho[iu] - rho2[iu]) / se_rho for rho in (rho4, rho3))
print("p4 marginals vs p3 gammas, KS p:", np.round(p_marg, 3))
print("Spearman correlations (12, 13, 23): p2", np.round(rho2[iu], 3), "p4", np.round(rho4[iu], 3),
      "p3", np.round(rho3[iu], 3))
print("z-scores p4 - p2:", np.round(z4, 2), "| p3 - p2:", np.round(z3, 2))
assert min(p_marg) > 1e-3 and np.all(np.abs(z4) < 4)
assert np.max(np.abs(z3)) > 6  # p2's dependence is clear, and an independent prior misses it

# %% [markdown]
# **The kernel form equals the density.** For each prior with a density (p1, p3, p4 here, and the copula with a strong
# correlation above), the numba kernel's log density plus the form's constant equals `logpdf` at draws of the prior
# and at points far in its tails (where the copula's scores use the upper incomplete gamma function). The priors
# known through draws (p2, p5) refuse with `NoDensityError`, and a user's prior class that states no kernel form
# with a `TypeError` rather than a guess (both in `tests/test_priors.py`).

# %%
def kernel_matches_logpdf(prior, n_pts=50, seed=0):
    """Largest |kernel_logpdf - logpdf| over prior draws and tail points."""
    form = prior.kernel_form()
    pts = np.vstack([prior.sample(n_pts, seed), prior.sample(5, seed + 1) * 8, prior.sample(5, seed + 2) / 8])
    return max(abs(kernel_logpdf(form, a) - prior.logpdf(a)) for a in pts)


for name in ("p1", "p3", "p4"):
    err_k = kernel_matches_logpdf(priors[name])
    print(f"{name}: max |kernel - logpdf| = {err_k:.1e}")
    assert err_k < 1e-8
assert kernel_matches_logpdf(cop) < 1e-8 and kernel_matches_logpdf(p_mixed) < 1e-8
assert priors["p1"].kernel_form().kind == PRIOR_GAMMA and priors["p4"].kernel_form().kind == PRIOR_COPULA

# %% [markdown]
# **Priors are picklable** (the simulation study sends them to worker processes): a copy samples exactly what the
# original samples with the same seed and has the same log density.

# %%
for name, p in priors.items():
    q = pickle.loads(pickle.dumps(p))
    assert type(q) is type(p) and q.name == name and np.array_equal(q.sample(50, 7), p.sample(50, 7))
    assert not p.has_density or np.allclose(q.logpdf(p.sample(5, 8)), p.logpdf(p.sample(5, 8)))
print("pickle round trips:", list(priors))

# %% [markdown]
# ### The priors side by side
#
# Pair plots of a sample from each prior (log scale: p1 spans orders of magnitude), with the true $\alpha$ marked.
# p2-p4 concentrate near the truth, already from a quarter of the data; p1 spreads its mass over $(0, 50)^3$. p3
# ignores the strong positive dependence of p2 (DPBoots draws move together along the precision ridge); p4 restores it.

# %%
# NBVAL_IGNORE_OUTPUT
def pair_plot(priors, alpha_true, n_show=1500, seed=1, log=True):
    """Lower-triangle scatter plots and diagonal histograms of (log) alpha for each prior."""
    d, g, f = len(alpha_true), np.random.default_rng(seed), (np.log if log else np.asarray)
    samples = {name: f(p.sample(n_show, g)) for name, p in priors.items()}
    fig, axes = plt.subplots(d, d, figsize=(7.2, 6.8))
    for i, j in itertools.product(range(d), range(d)):
        ax = axes[i, j]
        if i < j:
            ax.axis("off")
            continue
        for name, s in samples.items():
            if i == j:
                ax.hist(s[:, j], bins=40, density=True, histtype="step", label=name)
            else:
                ax.scatter(s[:, j], s[:, i], s=2, alpha=0.25)
        if i == j:
            ax.axvline(f(alpha_true[j]), c="k", lw=0.8)
        else:
            ax.plot(f(alpha_true[j]), f(alpha_true[i]), "k+", ms=12)
        ax.set(xlabel=f"{'log ' if log else ''}alpha_{j + 1}" if i == d - 1 else "",
               ylabel=f"{'log ' if log else ''}alpha_{i + 1}" if j == 0 and i > 0 else "")
    # the legend goes into the empty upper-right panel, clear of the data
    axes[0, d - 1].legend(*axes[0, 0].get_legend_handles_labels(), loc="center", fontsize=10, title="prior")
    fig.tight_layout()
    return fig


fig = pair_plot(priors, alpha_true)

# %% [markdown]
# Zoomed in on the priors learnt from $D_1$ (linear scale, p1 left out): p2 and p4 lie along the same tilted ridge,
# p3 is a round cloud with the same marginals.

# %%
# NBVAL_IGNORE_OUTPUT
fig = pair_plot({k: v for k, v in priors.items() if k != "p1"}, alpha_true, log=False)

# %% [markdown]
# ## Explore
#
# Move $\epsilon$ and the share of records in $D_1$: the p2 sample widens as $n_1\epsilon_1$ shrinks and p3/p4 follow; the
# figure shows the marginals of $\alpha_1$ under p2, p3 and p4.

# %%
def explore(eps=1.0, share_d1=0.25, n=5000, n_show=2000, seed=3):
    """Build p2-p4 for one release and plot the marginal of alpha_1; returns (figure, priors)."""
    g = np.random.default_rng(seed)
    Xe = dirichlet_draws(alpha_true, n, rng=g)
    n1 = max(50, int(share_d1 * n))
    r = make_release(Xe, eps1=0.75 * eps, eps2=0.25 * eps, candidates=CANDS, tc=0.01, n1=n1, rng=g, secure=False)
    sample = p2_draws(r, n_show, rng=g)
    ps = {name: make_prior(name, r, draws=sample) for name in ("p2", "p3", "p4")}
    fig, ax = plt.subplots(figsize=(6, 3))
    for name, p in ps.items():
        ax.hist(p.sample(n_show, g)[:, 0], bins=60, density=True, histtype="step", label=name)
    ax.axvline(alpha_true[0], c="k", lw=0.8)
    ax.set(xlabel="alpha_1", title=f"eps = {eps:g}, n1 = {n1}, a = {r.a:g}")
    ax.legend(fontsize=9)
    fig.tight_layout()
    return fig, ps


# %%
# NBVAL_IGNORE_OUTPUT
fig_e, ps_e = explore(n_show=size(full=2000, quick=500))   # the default view (fewer prior draws in quick mode)
assert set(ps_e) == {"p2", "p3", "p4"} and all(p.d == 3 for p in ps_e.values())

# %%
# NBVAL_IGNORE_OUTPUT
import ipywidgets as widgets

from dplit.testing import dead_controls  # noqa: E402

explorer = widgets.interactive(
    explore,
    eps=widgets.FloatLogSlider(value=1.0, base=10, min=-1, max=1, step=0.1),
    share_d1=widgets.FloatSlider(value=0.25, min=0.05, max=0.5, step=0.05),
    n=widgets.IntSlider(value=5000, min=1000, max=10000, step=1000),
    n_show=widgets.fixed(2000),
    seed=widgets.IntSlider(value=3, min=1, max=20),
)
assert dead_controls(explorer) == []  # every control changes the view (one its callback ignores fails)
explorer

# %% [markdown]
# ## When to use this
#
# Use p1 (the default of every sampler) when the data are not split; it is vague, so expect wide posteriors at small
# $n\epsilon$. When $n$ is large enough to spare a quarter of the records, split the release and use **p4** (a density, so
# it works with every sampler, and it keeps p2's dependence), or p5 when you can afford the extra DPMCMC run and want a
# prior justified by Bayes' theorem; the paper's recommendations for DPABC are p4 and p5 (Sec. 5.1). p3 is p4 without the
# dependence and was discarded by the paper for that reason; p2 is sampling-only and mainly the raw material of p3 and
# p4.
