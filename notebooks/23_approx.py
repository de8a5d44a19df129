# %% [markdown]
# # DPapprox: the asymptotic Gibbs sampler
#
# Posterior sampling of the Dirichlet parameter from a release under the normal approximation of the sufficient statistic (Guo et al. Sec. 4.2.4, model 6; Bernstein and Sheldon 2018): the Laplace noise as a scale mixture of normals, Gaussian and inverse-Gaussian full conditionals, a cost that does not grow with n.
#
# * **For:** fast approximate Bayesian inference on a Dirichlet parameter from a DP release, at any n.
# * **You need:** a release: the noisy censored statistic with n, a and epsilon.
# * **You get:** a posterior of alpha from a Gibbs sampler whose cost does not grow with n.

# %%
#| default_exp approx

# %% [markdown]
# ## Parameters
#
# Sizes come from the size switch (`DPLIT_QUICK=1` gives the quick sizes of the test suite); every
# random draw comes from a generator seeded here.

# %%
# %matplotlib inline
import warnings

import arviz as az
import matplotlib.pyplot as plt
import numpy as np
from scipy import integrate, special, stats

from dplit.config import is_quick, size
from dplit.dirichlet import censored_stat, dirichlet_draws, logx_cov, logx_mean, sufficient_stat
from dplit.priors import PRIOR_GAMMA, GammaPrior
from dplit.testing import rank_uniformity_pvalues

SEED = 20261209
rng = np.random.default_rng(SEED)
n_sbc = size(full=400, quick=60)            # simulation-based calibration replications
n_iter_demo = size(full=20_000, quick=3_000)
n_draws_check = size(full=40_000, quick=8_000)
print(f"quick mode: {is_quick()}; n_sbc = {n_sbc}, n_iter_demo = {n_iter_demo}")

# %% [markdown]
# ## What it gives: nearly DPMCMC's posterior, at a cost that does not grow with $n$
#
# Before the derivation, the result, from the finished module `dplit.approx`. A data set in the setting of the simulation
# study (Guo et al., Sec. 5.1: $\boldsymbol\alpha_3^{true} = (2.2, 3.3, 4.4)$, $n = 1000$) is released by Algorithm 1 (notebook 15)
# with $\epsilon_1 = 1$. DPapprox$_{p1}$ samples model (6), the normal approximation of the statistic; DPMCMC$_{p1}$
# (notebook 21) the exact posterior given the release, through the $n$ latent records. Both run until their convergence
# reports pass. The posteriors of $\alpha_1, \alpha_2, \alpha_3$ (left) and of the concentration $\alpha_0 = \sum_j\alpha_j$
# (right) agree, while an iteration of DPapprox costs the same at any $n$ (DPMCMC's sweeps over the records). Checked:
# DPapprox's posterior means are within $0.2$ DPMCMC posterior standard deviations (plus Monte Carlo error) of DPMCMC's,
# and its standard deviations within 25%.

# %%
# NBVAL_IGNORE_OUTPUT
import dplit.approx as finished          # the module this notebook derives and exports below
from dplit.mcmc import dp_mcmc
from dplit.release import release

alpha_true = np.array([2.2, 3.3, 4.4])
X_demo = dirichlet_draws(alpha_true, 1000, rng=SEED + 1)
rel_demo = release(X_demo, eps1=1.0, eps2=0.25, candidates=[1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6], tc=0.01, rng=SEED + 2, secure=False)
kw_demo = dict(n_iter="auto", n_warmup=2000, n_chains=2, progress=False)
runs_demo = {"DPMCMC$_{p1}$ (exact)": dp_mcmc(rel_demo, rng=11, **kw_demo),
             "DPapprox$_{p1}$": finished.dp_approx(rel_demo, rng=12, **kw_demo)}
sm_ex, sm_ap = (az.summary(r, var_names=["alpha"], round_to="none") for r in runs_demo.values())
print("posterior means: DPMCMC", sm_ex["mean"].to_numpy().round(2), " DPapprox", sm_ap["mean"].to_numpy().round(2))
assert all(r.posterior.attrs["converged"] == 1 for r in runs_demo.values())
gap = np.abs(sm_ex["mean"] - sm_ap["mean"])
assert np.all(gap < 4 * np.hypot(sm_ex["mcse_mean"], sm_ap["mcse_mean"]) + 0.2 * sm_ex["sd"])
assert np.allclose(sm_ap["sd"], sm_ex["sd"], rtol=0.25)

fig, (ax, ax_0) = plt.subplots(1, 2, figsize=(7, 2.8), width_ratios=[1.6, 1])
a0_all = np.concatenate([r.posterior["alpha"].values.sum(-1).ravel() for r in runs_demo.values()])
a0_bins = np.linspace(*np.quantile(a0_all, [0.002, 0.995]), 40)     # the long right tail is cut
for k, res in enumerate(runs_demo.values()):
    draws = res.posterior["alpha"].values.reshape(-1, 3)
    style = dict(histtype="stepfilled", alpha=0.35) if k == 0 else dict(histtype="step", lw=1.2)
    for j in range(3):
        ax.hist(draws[:, j], bins=np.linspace(1, 8, 50), density=True, color=f"C{j}", **style)
    ax_0.hist(draws.sum(1), bins=a0_bins, density=True, color="0.3", **style)
ax.set_ylim(top=1.2 * ax.get_ylim()[1])
for j in range(3):
    ax.axvline(alpha_true[j], color=f"C{j}", ls="--", lw=0.8)
    ax.text(alpha_true[j] + 0.05, ax.get_ylim()[1] * 0.97, rf"$\alpha_{j + 1}$", color=f"C{j}", va="top", fontsize=10)
ax_0.axvline(alpha_true.sum(), color="k", ls="--", lw=0.8)
ax.set(xlabel=r"$\alpha_j$ (dashed: truth)", ylabel="posterior density")
ax_0.set(xlabel=r"concentration $\alpha_0$")
fig.legend(handles=[plt.Rectangle((0, 0), 1, 1, color="0.3", alpha=0.35), plt.Line2D([], [], color="0.3")],
           labels=list(runs_demo), loc="upper center", ncol=2, fontsize=9, frameon=False)
fig.tight_layout(rect=(0, 0, 1, 0.9))

# %% [markdown]
# ## The approximation (Guo et al., Sec. 4.2.4, model 6)
#
# Without privacy the posterior depends on the data through $S_0(\mathbf D) = n^{-1}\sum_i \log\mathbf x_i$, the mean of
# $n$ independent vectors $\log\mathbf x_i$ with mean and covariance (notebook 12, `logx_mean`, `logx_cov`)
#
# $$\boldsymbol\mu_{\boldsymbol\alpha} = \big(\psi(\alpha_j) - \psi(\alpha_0)\big)_j, \qquad
#   \boldsymbol\Sigma_{\boldsymbol\alpha} = \mathrm{diag}\big(\psi_1(\alpha_j)\big) - \psi_1(\alpha_0)\,\mathbf 1\mathbf 1^\top,
#   \qquad \alpha_0 = \textstyle\sum_j\alpha_j .$$
#
# By the central limit theorem $S_0(\mathbf D) \mid \boldsymbol\alpha \approx N(\boldsymbol\mu_{\boldsymbol\alpha}, \boldsymbol\Sigma_{\boldsymbol\alpha}/n)$.
# **The paper writes the covariance as $\boldsymbol\Sigma_{\boldsymbol\alpha}$; for a mean of $n$ records it is
# $\boldsymbol\Sigma_{\boldsymbol\alpha}/n$** (a slip in the text: with $\boldsymbol\Sigma_{\boldsymbol\alpha}$ the posterior would not
# concentrate as $n$ grows; the calibration check below fails with it). The release is
# $\mathbf s_L = S_0(\mathbf D, a) + \boldsymbol\varepsilon$, $\varepsilon_j \sim \mathrm{Laplace}(0, b_L)$, $b_L = -d\log(a)/(n\epsilon_1)$.
# Model (6) treats the censored statistic as the uncensored one (the paper assumes $a$ small enough, and
# $b_L \to 0$ as $n$ grows) and gives the joint posterior
#
# $$\pi(\boldsymbol\alpha, S_0 \mid \mathbf s_L) \propto \prod_{j=1}^d p_{\mathrm{Lap}}(s_{L,j} \mid S_{0,j}, b_L)\;
#   N\big(S_0 \mid \boldsymbol\mu_{\boldsymbol\alpha}, \boldsymbol\Sigma_{\boldsymbol\alpha}/n\big)\; \pi_0(\boldsymbol\alpha). \qquad (6)$$
#
# (The printed (6) leaves out $\pi_0$; Sec. 4.2.4 then combines it with p1, p3 and p4.) With a split release, p3 and p4
# come from $\mathbf s_L^{(1)}$ and (6) is written for $\mathbf D_2$ with $n_2$ and its own scale (model 4); under p1 a split
# release is used whole, each part with its own $S_0$ block, as `dp_mcmc` does.
#
# **The augmentation (Park and Casella 2008).** A Laplace law is a scale mixture of normals:
# $p_{\mathrm{Lap}}(r \mid 0, b) = \int_0^\infty N(r \mid 0, \omega)\, \frac{1}{2b^2} e^{-\omega/(2b^2)}\, d\omega$. With a latent variance
# $\omega_j$ per component, (6) becomes a model in which every noise term is Gaussian. We work in units of the noise
# scale, $\omega_j = b_L^2 v_j$ and $\rho_j = (s_{L,j} - S_{0,j})/b_L$: then $v_j \sim \mathrm{Exp}(\text{mean } 2)$,
# $\rho_j \mid v_j \sim N(0, v_j)$, and no quantity of the sampler depends on the size of $b_L$ (notebook 75, *The no-privacy limit*).
#
# **The full conditionals** (Bernstein and Sheldon 2018, Sec. 4; $\mathbf V = \mathrm{diag}(v_j)$):
#
# 1. $\boldsymbol\rho \mid \boldsymbol\alpha, \mathbf v, \mathbf s_L$ is Gaussian: the prior $S_0 = \mathbf s_L - b_L\boldsymbol\rho \sim N(\boldsymbol\mu_{\boldsymbol\alpha}, \boldsymbol\Sigma_{\boldsymbol\alpha}/n)$
#    times $N(\boldsymbol\rho \mid 0, \mathbf V)$ gives precision and linear term
#    $$\mathbf Q = b_L^2\, n\,\boldsymbol\Sigma_{\boldsymbol\alpha}^{-1} + \mathbf V^{-1}, \qquad \mathbf h = b_L\, n\,\boldsymbol\Sigma_{\boldsymbol\alpha}^{-1}(\mathbf s_L - \boldsymbol\mu_{\boldsymbol\alpha}),
#    \qquad \boldsymbol\rho \sim N(\mathbf Q^{-1}\mathbf h, \mathbf Q^{-1}).$$
# 2. $1/v_j \mid \rho_j \sim \mathrm{InverseGaussian}(\text{mean } 1/|\rho_j|, \text{shape } 1)$: $p(v_j \mid \rho_j) \propto v_j^{-1/2}e^{-\rho_j^2/(2v_j)}e^{-v_j/2}$,
#    so $u = 1/v_j$ has density $\propto u^{-3/2}\exp\{-\rho_j^2u/2 - 1/(2u)\}$, the inverse Gaussian kernel
#    $u^{-3/2}\exp\{-\lambda u/(2m^2) - \lambda/(2u)\}$ with $\lambda = 1$, $m = 1/|\rho_j|$ (Park and Casella's $1/\tau_j^2$ step, rescaled).
# 3. $\boldsymbol\alpha \mid S_0 \propto N(S_0 \mid \boldsymbol\mu_{\boldsymbol\alpha}, \boldsymbol\Sigma_{\boldsymbol\alpha}/n)\,\pi_0(\boldsymbol\alpha)$: no closed form; a random-walk
#    Metropolis step on $\log\boldsymbol\alpha$.
#
# **Why a Metropolis step of our own, not the slice sampler of notebook 19.** `dplit._mcmc_moves.slice_kernel` targets eq. (1),
# the *exact* Dirichlet likelihood $\exp\{n[(\boldsymbol\alpha - 1)^\top S_0 - \log B(\boldsymbol\alpha)]\}$. Used as step 3 (as the paper's
# "Metropolis-Hastings algorithm discussed in Section 4.2.2" suggests) it makes the three conditionals belong to no joint law
# (the chain would target no model one could check it against), and eq. (1) is improper under a vague prior whenever the
# Gaussian $S_0$ of step 1 falls outside $\mathrm{Range}(S_0) = \{\sum_j e^{s_j} < 1\}$, which a normal law allows (rarely at
# large $n$, more often at small $n$ or near the boundary): $\alpha_0$ then runs off. The Gaussian full conditional of (6)
# is proper for every $S_0$, and it costs $O(d)$: $\boldsymbol\Sigma_{\boldsymbol\alpha}$ is a
# diagonal minus a rank-one matrix, so its inverse and determinant follow from Sherman-Morrison. One random-walk step
# needs one evaluation; we run `n_mh` of them per iteration in whitened coordinates, tuned during warm-up.
#
# **A blocked variant.** Steps 1 and 3 are strongly coupled when the noise dominates: given $S_0$, $\boldsymbol\alpha$ is pinned to
# within $O(n^{-1/2})$, and given $\boldsymbol\alpha$, $S_0$ is pinned too, so the Gibbs sampler moves in small steps along a long
# ridge (the slow convergence of DPapprox in Guo et al., S5). Given $\mathbf v$ alone, $\mathbf s_L = S_0 + b_L\boldsymbol\rho$ is a sum of
# two independent Gaussians, so $S_0$ can be integrated out:
# $$\pi(\boldsymbol\alpha \mid \mathbf v, \mathbf s_L) \propto N\big(\mathbf s_L \mid \boldsymbol\mu_{\boldsymbol\alpha},\ \boldsymbol\Sigma_{\boldsymbol\alpha}/n + b_L^2\mathbf V\big)\,\pi_0(\boldsymbol\alpha),$$
# whose covariance is again diagonal minus rank one. Updating $\boldsymbol\alpha$ from this law and then $\boldsymbol\rho$ from step 1 draws
# $(\boldsymbol\alpha, S_0) \mid \mathbf v$ jointly; with step 2 this is a blocked Gibbs sampler of the *same* posterior (6).
# `update="blocked"` (the default) does this; `update="gibbs"` is the paper's three-step sampler. Both are checked against
# each other and by simulation-based calibration below.

# %% [markdown]
# ## A Gaussian with covariance "diagonal minus rank one"
#
# For $\mathbf M = \mathrm{diag}(\mathbf D) - t\,\mathbf 1\mathbf 1^\top$ with $g = 1 - t\sum_j 1/D_j > 0$:
# $\mathbf M^{-1} = \mathrm{diag}(1/\mathbf D) + \frac{t}{g}\,\mathbf w\mathbf w^\top$ with $w_j = 1/D_j$, and
# $\det\mathbf M = g\prod_j D_j$. Both $\boldsymbol\Sigma_{\boldsymbol\alpha}/n$ ($D_j = \psi_1(\alpha_j)/n$, $t = \psi_1(\alpha_0)/n$) and
# $\boldsymbol\Sigma_{\boldsymbol\alpha}/n + b_L^2\mathbf V$ have this form; $g > 0$ is exactly positive definiteness (the Fisher
# information is invertible, Narayanan 1991). A non-positive $g$ (only from rounding at absurd $\alpha_0$) counts as density zero.

# %%
#| export
import math
import warnings
from dataclasses import dataclass

import numpy as np
from numba import njit

from dplit import _validate as V
from dplit._arviz import name_components
from dplit._release_model import (
    check_release,
    kernel_form_of,
    mode_theta,
    prior_name,
    release_blocks,
    resolve_prior,
    slice_transform,
    spec_from_blocks,
    start_statistic,
)
from dplit.dirichlet import logx_cov_kernel, logx_mean_kernel, trigamma_kernel
from dplit.priors import prior_logpdf_kernel
from dplit.release import laplace_scale
from dplit.results import composition_draws, privacy_attrs
from dplit.sampling import RHAT_MAX, Sampler, run, run_chains
from dplit.testing import sbc_ranks


@njit(cache=True, nogil=True)
def _log_normal_kernel(y, mu, dvec, t):
    """log N(y | mu, diag(dvec) - t 1 1^T) by Sherman-Morrison; -inf when not positive definite."""
    d = y.size
    s_w = 0.0
    s_x = 0.0
    quad = 0.0
    logdet = 0.0
    for j in range(d):
        if not (dvec[j] > 0.0 and dvec[j] < np.inf):
            return -np.inf
        x = y[j] - mu[j]
        s_w += 1.0 / dvec[j]
        s_x += x / dvec[j]
        quad += x * x / dvec[j]
        logdet += math.log(dvec[j])
    g = 1.0 - t * s_w
    if not g > 0.0:
        return -np.inf
    return -0.5 * (quad + t * s_x * s_x / g + logdet + math.log(g) + d * math.log(2.0 * math.pi))


# %% [markdown]
# Check: against `scipy.stats.multivariate_normal` with the covariance built by `logx_cov` (notebook 12), with and
# without an added diagonal, and a matrix that is not positive definite.

# %%
alpha_ex = np.array([0.7, 2.2, 5.0])
y_ex = np.array([-2.1, -1.0, -0.4])
for n_ex, extra in [(1.0, np.zeros(3)), (250.0, np.zeros(3)), (250.0, np.array([1e-3, 4e-3, 2e-4]))]:
    cov_ex = logx_cov(alpha_ex) / n_ex + np.diag(extra)
    ours = _log_normal_kernel(y_ex, logx_mean(alpha_ex), special.polygamma(1, alpha_ex) / n_ex + extra,
                              special.polygamma(1, alpha_ex.sum()) / n_ex)
    assert np.isclose(ours, stats.multivariate_normal(logx_mean(alpha_ex), cov_ex).logpdf(y_ex), rtol=1e-12)
assert _log_normal_kernel(y_ex, np.zeros(3), np.ones(3), 0.5) == -np.inf        # 1 - 0.5 * 3 < 0
assert _log_normal_kernel(y_ex, np.zeros(3), np.array([1.0, -1.0, 1.0]), 0.0) == -np.inf

# %% [markdown]
# ## Step 3: $\boldsymbol\alpha$ by random-walk Metropolis on $\log\boldsymbol\alpha$
#
# The log target in $\boldsymbol\theta = \log\boldsymbol\alpha$ (Jacobian $\sum_j\theta_j$ included) is, for blocks $k$ (one, or two for p1 on a
# split release), $\sum_k \log N(\mathbf y_k \mid \boldsymbol\mu_{\boldsymbol\alpha}, \boldsymbol\Sigma_{\boldsymbol\alpha}/n_k + \mathrm{diag}(\mathbf c_k)) + \log\pi_0(\boldsymbol\alpha)$,
# with $\mathbf y_k = S_0^{(k)}$, $\mathbf c_k = 0$ for the Gibbs step and $\mathbf y_k = \mathbf s_L^{(k)}$, $\mathbf c_k = b_k^2\mathbf v_k$ for the blocked step.
# The prior is the prior's own kernel form (notebook 18), as in DPMCMC. A proposal is
# $\boldsymbol\theta^* = \boldsymbol\theta + \sigma L\mathbf z$, $\mathbf z \sim N(0, I)$, accepted when $\log r > -E$, $E \sim \mathrm{Exp}(1)$.

# %%
#| export
@njit(cache=True, nogil=True)
def _log_alpha_kernel(theta, y, n, c, kind, shape, rate, prec):
    """log prod_k N(y_k | mu_alpha, Sigma_alpha / n_k + diag(c_k)) + log prior, in theta = log alpha (Jacobian in)."""
    d = theta.size
    alpha = np.empty(d)
    jac = 0.0
    for j in range(d):
        if theta[j] > 700.0 or theta[j] < -700.0:
            return -np.inf
        alpha[j] = math.exp(theta[j])
        jac += theta[j]
    mu = logx_mean_kernel(alpha)
    tri = np.empty(d)
    for j in range(d):
        tri[j] = trigamma_kernel(alpha[j])
    t0 = trigamma_kernel(alpha.sum())
    out = jac + prior_logpdf_kernel(alpha, kind, shape, rate, prec)
    dvec = np.empty(d)
    for k in range(n.size):
        for j in range(d):
            dvec[j] = tri[j] / n[k] + c[k, j]
        out += _log_normal_kernel(y[k], mu, dvec, t0 / n[k])
    return out if out == out else -np.inf      # NaN (overflow far out) counts as outside


@njit(cache=True, nogil=True)
def _alpha_mh_kernel(theta, n_steps, step, chol, y, n, c, kind, shape, rate, prec, rng):
    """n_steps of random-walk Metropolis on theta = log alpha (proposal step * chol @ z), in place; returns accepts."""
    d = theta.size
    f0 = _log_alpha_kernel(theta, y, n, c, kind, shape, rate, prec)
    z = np.empty(d)
    accepted = 0
    for _ in range(n_steps):
        for j in range(d):
            z[j] = step * rng.standard_normal()
        prop = theta + chol @ z
        f1 = _log_alpha_kernel(prop, y, n, c, kind, shape, rate, prec)
        if f1 >= f0 or rng.standard_exponential() > f0 - f1:
            theta[:] = prop
            f0 = f1
            accepted += 1
    return accepted


# %% [markdown]
# Checks: the log target against SciPy (the multivariate normal with `logx_cov`, the gamma prior, the Jacobian), up to its
# constant; the compiled kernel and its own Python function give the same chain from the same seed; and a long run on
# $d = 2$ reproduces the mean and standard deviation of the target computed by quadrature on a grid, once for the Gibbs
# step ($\mathbf c = 0$) and once with an added noise variance (the blocked step).

# %%
def log_alpha_direct(alpha, y, n, c, shape=1.0, rate=0.1):
    """The same target with SciPy: Gaussian of each block, gamma prior, Jacobian of log alpha."""
    out = sum(stats.multivariate_normal(logx_mean(alpha), logx_cov(alpha) / n_k + np.diag(c_k)).logpdf(y_k)
              for y_k, n_k, c_k in zip(y, n, c))
    return out + stats.gamma.logpdf(alpha, shape, scale=1 / rate).sum() + np.log(alpha).sum()


ones3, rate3, zero33 = np.ones(3), np.full(3, 0.1), np.zeros((3, 3))
y1 = np.array([[-1.5, -1.2, -0.8]])
n1_, c1 = np.array([300.0]), np.array([[2e-4, 1e-3, 5e-4]])
th_a, th_b = np.log([2.0, 3.0, 4.0]), np.log([1.0, 5.0, 2.5])
for c_ in (np.zeros((1, 3)), c1):
    ours = (_log_alpha_kernel(th_a, y1, n1_, c_, PRIOR_GAMMA, ones3, rate3, zero33)
            - _log_alpha_kernel(th_b, y1, n1_, c_, PRIOR_GAMMA, ones3, rate3, zero33))
    direct = log_alpha_direct(np.exp(th_a), y1, n1_, c_) - log_alpha_direct(np.exp(th_b), y1, n1_, c_)
    assert np.isclose(ours, direct, rtol=1e-10)
assert _log_alpha_kernel(np.array([800.0, 0.0, 0.0]), y1, n1_, c1, PRIOR_GAMMA, ones3, rate3, zero33) == -np.inf

chol_ex = np.linalg.cholesky(np.array([[0.04, 0.03, 0.03], [0.03, 0.05, 0.04], [0.03, 0.04, 0.06]]))
th_k, th_r = th_a.copy(), th_a.copy()
acc_k = _alpha_mh_kernel(th_k, 200, 1.0, chol_ex, y1, n1_, c1, PRIOR_GAMMA, ones3, rate3, zero33,
                         np.random.default_rng(3))
acc_r = _alpha_mh_kernel.py_func(th_r, 200, 1.0, chol_ex, y1, n1_, c1, PRIOR_GAMMA, ones3, rate3, zero33,
                                 np.random.default_rng(3))
assert acc_k == acc_r and 0 < acc_k < 200 and np.allclose(th_k, th_r, rtol=1e-12)


def quadrature_alpha(y, n, c, grid=300, lo=-3.0, hi=5.0):
    """Mean and sd of alpha (d = 2) under the step-3 target, by quadrature on a log grid."""
    t = np.linspace(lo, hi, grid)
    logp = np.array([[_log_alpha_kernel(np.array([u, w]), y, n, c, PRIOR_GAMMA, np.ones(2), np.full(2, 0.1),
                                        np.zeros((2, 2))) for w in t] for u in t])
    wts = np.exp(logp - logp.max())
    wts /= wts.sum()
    A1, A2 = np.meshgrid(np.exp(t), np.exp(t), indexing="ij")
    mean = np.array([(wts * A1).sum(), (wts * A2).sum()])
    return mean, np.sqrt(np.array([(wts * A1**2).sum(), (wts * A2**2).sum()]) - mean**2)


y2 = logx_mean(np.array([3.3, 4.4]))[None, :] + np.array([[0.02, -0.01]])
for c2 in (np.zeros((1, 2)), np.array([[4e-3, 1e-3]])):
    mean_q, sd_q = quadrature_alpha(y2, np.array([40.0]), c2)
    th2 = np.log(mean_q)
    chol2 = np.diag(sd_q / mean_q)
    chain = np.empty((n_draws_check, 2))
    r2 = np.random.default_rng(7)
    for i in range(n_draws_check):
        _alpha_mh_kernel(th2, 2, 1.7, chol2, y2, np.array([40.0]), c2, PRIOR_GAMMA, np.ones(2), np.full(2, 0.1),
                         np.zeros((2, 2)), r2)
        chain[i] = np.exp(th2)
    ess = np.array([float(az.ess(chain[None, :, j])) for j in range(2)])
    print("quadrature mean", mean_q.round(3), "sd", sd_q.round(3), "| chain mean", chain.mean(0).round(3),
          "sd", chain.std(0).round(3), "| MC s.e.", (sd_q / np.sqrt(ess)).round(3))
    assert np.all(np.abs(chain.mean(0) - mean_q) < 4 * sd_q / np.sqrt(ess))
    assert np.allclose(chain.std(0), sd_q, rtol=0.1)

# %% [markdown]
# ## Step 1: the scaled residual $\boldsymbol\rho = (\mathbf s_L - S_0)/b_L$
#
# $\boldsymbol\Sigma_{\boldsymbol\alpha}^{-1} = \mathrm{diag}(\mathbf w) + \kappa\,\mathbf w\mathbf w^\top$ with $w_j = 1/\psi_1(\alpha_j)$ and
# $\kappa = \psi_1(\alpha_0)/(1 - \psi_1(\alpha_0)\sum_j w_j)$, so $\mathbf Q$ and $\mathbf h$ cost $O(d^2)$. With the Cholesky factor
# $\mathbf Q = \mathbf L\mathbf L^\top$, $\boldsymbol\rho = \mathbf L^{-\top}(\mathbf L^{-1}\mathbf h + \mathbf z)$, $\mathbf z \sim N(0, I)$, has mean
# $\mathbf Q^{-1}\mathbf h$ and covariance $\mathbf Q^{-1}$: two triangular solves.

# %%
#| export
@njit(cache=True, nogil=True)
def _residual_kernel(alpha, s_L, n, b, v, rng):
    """Draw rho = (s_L - S0) / b from N(Q^-1 h, Q^-1), Q = b^2 n Sigma^-1 + diag(1/v), h = b n Sigma^-1 (s_L - mu)."""
    d = alpha.size
    mu = logx_mean_kernel(alpha)
    w = np.empty(d)
    s_w = 0.0
    for j in range(d):
        w[j] = 1.0 / trigamma_kernel(alpha[j])
        s_w += w[j]
    t0 = trigamma_kernel(alpha.sum())
    kappa = t0 / max(1.0 - t0 * s_w, 1e-300)
    wx = 0.0
    for j in range(d):
        wx += w[j] * (s_L[j] - mu[j])
    bb = b * b * n
    Q = np.empty((d, d))
    h = np.empty(d)
    for j in range(d):
        h[j] = b * n * w[j] * ((s_L[j] - mu[j]) + kappa * wx)
        for k in range(d):
            Q[j, k] = bb * kappa * w[j] * w[k]
        Q[j, j] += bb * w[j] + 1.0 / v[j]
    L = np.linalg.cholesky(Q)
    u = np.empty(d)
    for j in range(d):                      # u = L^-1 h + z
        acc = h[j]
        for k in range(j):
            acc -= L[j, k] * u[k]
        u[j] = acc / L[j, j]
    for j in range(d):
        u[j] += rng.standard_normal()
    rho = np.empty(d)
    for j in range(d - 1, -1, -1):          # rho = L^-T u
        acc = u[j]
        for k in range(j + 1, d):
            acc -= L[k, j] * rho[k]
        rho[j] = acc / L[j, j]
    return rho


# %% [markdown]
# Check against a brute-force density: for $d = 2$ the unnormalised density
# $N(\mathbf s_L - b_L\boldsymbol\rho \mid \boldsymbol\mu_{\boldsymbol\alpha}, \boldsymbol\Sigma_{\boldsymbol\alpha}/n)\,N(\boldsymbol\rho \mid 0, \mathbf V)$ (SciPy) on a grid gives
# the marginal distribution functions of $\rho_1$ and $\rho_2$; the kernel's draws must pass a Kolmogorov-Smirnov test
# against them, and match the grid's correlation. Also: same draws as `.py_func`.

# %%
def grid_marginal_cdfs(alpha, s_L, n, b, v, half=7.0, grid=601):
    """Marginal CDFs of rho_1, rho_2 and their correlation from the unnormalised density on a grid."""
    sd = np.sqrt(v)
    g1, g2 = np.linspace(-half * sd[0], half * sd[0], grid), np.linspace(-half * sd[1], half * sd[1], grid)
    R1, R2 = np.meshgrid(g1, g2, indexing="ij")
    pts = np.stack([R1.ravel(), R2.ravel()], axis=1)
    logp = (stats.multivariate_normal(logx_mean(alpha), logx_cov(alpha) / n).logpdf(s_L - b * pts)
            + stats.norm.logpdf(pts, 0, sd).sum(axis=1)).reshape(grid, grid)
    p = np.exp(logp - logp.max())
    p /= p.sum()
    m1, m2 = (p * R1).sum(), (p * R2).sum()
    corr = (p * (R1 - m1) * (R2 - m2)).sum() / np.sqrt((p * (R1 - m1) ** 2).sum() * (p * (R2 - m2) ** 2).sum())
    h1, h2 = (g1[1] - g1[0]) / 2, (g2[1] - g2[0]) / 2      # a cell's mass is below its right edge
    return (lambda x: np.interp(x, g1 + h1, np.cumsum(p.sum(1)))), (lambda x: np.interp(x, g2 + h2, np.cumsum(p.sum(0)))), corr


alpha2 = np.array([3.3, 4.4])
s_L2 = logx_mean(alpha2) + np.array([0.03, -0.02])
for b_, v_ in [(0.02, np.array([1.0, 3.0])), (0.2, np.array([0.5, 2.0])), (1e-4, np.array([2.0, 0.3]))]:
    r3 = np.random.default_rng(11)
    draws_rho = np.array([_residual_kernel(alpha2, s_L2, 100.0, b_, v_, r3) for _ in range(n_draws_check)])
    F1, F2, corr = grid_marginal_cdfs(alpha2, s_L2, 100.0, b_, v_)
    p_ks = stats.kstest(draws_rho[:, 0], F1).pvalue, stats.kstest(draws_rho[:, 1], F2).pvalue
    print(f"b = {b_:g}: KS p-values {p_ks[0]:.3f} {p_ks[1]:.3f}; corr grid {corr:.3f} draws "
          f"{np.corrcoef(draws_rho.T)[0, 1]:.3f}")
    assert min(p_ks) > 1e-3 and abs(np.corrcoef(draws_rho.T)[0, 1] - corr) < 0.03
assert np.array_equal(_residual_kernel(alpha2, s_L2, 100.0, 0.02, np.ones(2), np.random.default_rng(1)),
                      _residual_kernel.py_func(alpha2, s_L2, 100.0, 0.02, np.ones(2), np.random.default_rng(1)))

# %% [markdown]
# ## Step 2: the mixing variances, an inverse Gaussian draw
#
# Michael, Schucany and Haas (1976) draw $u \sim \mathrm{IG}(m, \lambda = 1)$ from $y = z^2$, $z \sim N(0, 1)$: the smaller root
# $x_1 = m\big[1 + q/2 - \sqrt{q + q^2/4}\big]$, $q = my$, taken with probability $m/(m + x_1)$, else $m^2/x_1$. The
# bracket cancels catastrophically for large $q$ (tiny residual, huge $m$) and $q^2$ overflows; since
# $(1 + q/2)^2 - (q + q^2/4) = 1$ we write it as $x_1 = m / (1 + q/2 + \sqrt q\sqrt{1 + q/4})$, exact and finite for every
# $q$ (it tends to $1/y$, the Lévy limit, as $m \to \infty$). $v_j = 1/u$, floored at $10^{-300}$.

# %%
#| export
@njit(cache=True, nogil=True)
def _mixing_kernel(rho, v, rng):
    """In place: 1/v_j ~ InverseGaussian(mean 1/|rho_j|, shape 1) (Park and Casella 2008, in noise units)."""
    for j in range(rho.size):
        m = 1.0 / max(abs(rho[j]), 1e-300)
        y = rng.standard_normal() ** 2
        q = m * y
        root = 1.0 + 0.5 * q + math.sqrt(q) * math.sqrt(1.0 + 0.25 * q)   # m / x1
        x = m / root
        if rng.random() * (1.0 + 1.0 / root) > 1.0:                      # not with probability m / (m + x1)
            x = min(m * root, 1e300)
        v[j] = max(1.0 / x, 1e-300)


# %% [markdown]
# Check against the brute-force density $p(v \mid \rho) \propto v^{-1/2}e^{-\rho^2/(2v)}e^{-v/2}$, normalised and integrated
# numerically (Kolmogorov-Smirnov), for residuals from large to $10^{-200}$; and against SciPy's `invgauss`.

# %%
def brute_cdf_v(rho):
    """CDF of v | rho from the unnormalised density, by numerical integration (in log v)."""
    f = lambda t: np.exp(-0.5 * t - rho**2 / (2 * np.exp(t)) - np.exp(t) / 2 + t)   # noqa: E731  density of t = log v
    ts = np.linspace(-60, 6, 20001)
    cdf = integrate.cumulative_trapezoid(f(ts), ts, initial=0.0)
    return lambda v: np.interp(np.log(v), ts, cdf / cdf[-1])


for rho_ in [3.0, 0.5, 1e-3, 1e-200]:
    v_draws = np.empty(n_draws_check)
    r4 = np.random.default_rng(13)
    rr, vv = np.full(1, rho_), np.ones(1)
    for i in range(n_draws_check):
        _mixing_kernel(rr, vv, r4)
        v_draws[i] = vv[0]
    p_brute = stats.kstest(v_draws, brute_cdf_v(rho_)).pvalue
    p_scipy = stats.kstest(1 / v_draws, stats.invgauss(mu=1 / rho_).cdf).pvalue if rho_ > 1e-100 else np.nan
    print(f"rho = {rho_:g}: KS p-value vs brute force {p_brute:.3f}, vs scipy invgauss {p_scipy:.3f}")
    assert p_brute > 1e-3 and np.all(np.isfinite(v_draws)) and np.all(v_draws > 0)
vv = np.ones(2)
_mixing_kernel(np.zeros(2), vv, np.random.default_rng(0))      # rho = 0 exactly: finite (the Levy limit)
assert np.all(np.isfinite(vv) & (vv > 0))

# %% [markdown]
# ## One chain: the kernel
#
# One iteration: `n_mh` Metropolis steps for $\boldsymbol\alpha$ (given $S_0$, or given $\mathbf v$ when blocked), then for each block a
# draw of $\boldsymbol\rho$ and of $\mathbf v$. Nothing in it depends on $n$ except through the numbers $n_k$: the cost of an
# iteration is $O(d^2)$ per block, the same for a hundred records as for a million.

# %%
#| export
@njit(cache=True, nogil=True)
def _approx_chain_kernel(theta, rho, v, s_L, n, b, blocked, n_iter, thin, n_mh, step, chol,
                         kind, shape, rate, prec, rng):
    """Run n_iter iterations of DPapprox (state theta, rho, v in place); returns (draws, alpha acceptance)."""
    k, d = s_L.shape
    n_save = n_iter // thin
    draws = np.empty((n_save, d))
    acc = np.zeros(n_save)
    y = np.empty((k, d))
    c = np.zeros((k, d))
    for it in range(n_save * thin):
        for blk in range(k):
            for j in range(d):
                if blocked:            # alpha | v, s_L: S0 integrated out
                    y[blk, j] = s_L[blk, j]
                    c[blk, j] = b[blk] * b[blk] * v[blk, j]
                else:                  # alpha | S0 (the paper's Gibbs step)
                    y[blk, j] = s_L[blk, j] - b[blk] * rho[blk, j]
        n_acc = _alpha_mh_kernel(theta, n_mh, step, chol, y, n, c, kind, shape, rate, prec, rng)
        alpha = np.exp(theta)
        for blk in range(k):
            rho[blk] = _residual_kernel(alpha, s_L[blk], n[blk], b[blk], v[blk], rng)
            _mixing_kernel(rho[blk], v[blk], rng)
        slot = it // thin
        acc[slot] += n_acc / n_mh / thin
        if (it + 1) % thin == 0:
            draws[slot] = alpha
    return draws, acc


# %% [markdown]
# ### The chain as a `dplit.sampling.Sampler`
#
# The driver (notebook 04) owns seeds, warm-up windows, thinning, threads, progress and the ArviZ result; the method
# supplies `init`, `run_chain` and `adapt`. A chain starts where DPMCMC's chains start (notebook 20: the posterior mode
# of eq. (1) at the mean of four draws of $S_L - \varepsilon$ truncated to $\mathrm{Range}(S_0)$, plus a random dispersion), with
# $\mathbf v$ from its prior and $\boldsymbol\rho$ from step 1. The proposal map $L$ starts as the Cholesky factor of the inverse
# Fisher information of $\log\boldsymbol\alpha$ (DPMCMC's slice map, `slice_transform` of notebook 20). After each warm-up window the step size moves towards an
# acceptance rate of 0.3, and $L$ is refitted: for the Gibbs step at the window's mean (the conditional given $S_0$ is
# as narrow as the Fisher information says), for the blocked step to the window's covariance of $\log\boldsymbol\alpha$ (the
# conditional given $\mathbf v$ is nearly as wide as the posterior).

# %%
#| export
_UPDATES = ("blocked", "gibbs")


@dataclass
class _ApproxState:
    """One chain: log alpha, the scaled residuals and mixing variances of each block, the proposal."""

    theta: np.ndarray
    rho: np.ndarray
    v: np.ndarray
    step: float
    chol: np.ndarray


def _approx_sampler(blocks, a, form, update="blocked", n_mh=5):
    """The DPapprox chain for dplit.sampling: blocks are (s_L, n, m, scale) as release_blocks (notebook 20) gives them."""
    s_L = np.array([blk[0] for blk in blocks], dtype=float)
    n = np.array([blk[1] for blk in blocks], dtype=float)
    b = np.array([blk[3] for blk in blocks], dtype=float)
    spec = spec_from_blocks(blocks, a, form, 1)            # DPMCMC's start: mode of eq. (1) at a plausible S0
    blocked = update == "blocked"
    d = s_L.shape[1]

    def init(rng):
        theta = mode_theta(spec, start_statistic(spec, rng)) + 0.3 * rng.standard_normal(d)
        v = rng.exponential(2.0, size=s_L.shape)
        rho = np.array([_residual_kernel(np.exp(theta), s_L[k], n[k], b[k], v[k], rng) for k in range(len(n))])
        return _ApproxState(theta, rho, v, 2.38 / math.sqrt(d), slice_transform(np.exp(theta), spec)[0])

    def run_chain(st, n_steps, thin, rng):
        draws, acc = _approx_chain_kernel(st.theta, st.rho, st.v, s_L, n, b, blocked, n_steps, thin, n_mh, st.step,
                                          st.chol, form.kind, form.shape, form.rate, form.prec, rng)
        return composition_draws(draws), {"alpha_acceptance": acc}

    def adapt(st, draws, stats):
        st.step *= math.exp(2.0 * (float(np.mean(stats["alpha_acceptance"])) - 0.3))
        th = np.log(draws["alpha"][len(draws["alpha"]) // 2:])
        if not blocked:
            st.chol = slice_transform(np.exp(th.mean(axis=0)), spec)[0]
        elif len(th) >= 10 * d:
            cov = np.cov(th.T) + 1e-10 * np.eye(d)
            st.chol, st.step = np.linalg.cholesky(cov), 2.38 / math.sqrt(d)
        return st

    dims = {"alpha": ["component"], "mean_composition": ["component"]}
    return Sampler(init=init, run_chain=run_chain, adapt=adapt, dims=dims, coords={"component": np.arange(d)})


# %% [markdown]
# ## The public sampler
#
# `dp_approx` takes a release and the same keywords as `dp_mcmc`, and returns the same result: posterior `alpha` and
# `mean_composition` with dims `component`, the convergence report of `dplit.sampling.run` in `attrs`. Priors are resolved
# as for DPMCMC, by notebook 20 (the same names, the same messages): p1 (a split release is used whole), p3 and p4 (from
# $\mathbf s_L^{(1)}$; $\mathbf D_2$ in the likelihood), or any `Prior` with a kernel form. p2 has no density. p5 is refused too: the
# paper defines no DPapprox$_{p5}$, and under p1 a split release already uses both parts (which is what p5 amounts to in
# DPMCMC). A release with fewer records than `MIN_N` in a part gets an `ApproximationWarning`: the threshold comes
# from the comparison with the exact posterior in notebook 75 (*Where the approximation fails*).

# %%
#| export
MIN_N = 50    # below this many records in a part, the CLT approximation is unreliable (see the notebook)


class ApproximationWarning(UserWarning):
    """A release for which the normal approximation of model (6) is not reliable."""


def dp_approx(release, *, prior="p1", update="blocked", n_iter="auto", n_warmup=2_000, n_chains=4, thin=10,
              n_mh=5, rng=None, progress=True, n_jobs=None, target_ess=400, max_rhat=RHAT_MAX, max_iter=200_000,
              max_time=None):
    """DPapprox: the asymptotic Gibbs sampler of model (6) (Guo et al., Sec. 4.2.4; Bernstein and Sheldon 2018).

    ``S_0 | alpha ~ N(mu_alpha, Sigma_alpha / n)`` (the central limit theorem for the mean of ``log x``),
    the Laplace noise of the release as a scale mixture of normals (Park and Casella 2008), Gaussian
    and inverse-Gaussian full conditionals, and random-walk Metropolis on ``log alpha``. The cost of an
    iteration does not depend on ``n``.

    Parameters
    ----------
    release : dplit.release.Release
        The curator's release. Unsplit: model (6) for D. Split (``n1 > 0``): under p1 both parts,
        each with its own ``S_0``; under p3, p4 or a Prior object the prior comes from D1 and model (6)
        is written for D2 (model 4).
    prior : {"p1", "p3", "p4"} or Prior, default "p1"
        ``"p2"`` and ``"p5"`` are refused (no density; for p5 use p1 on the split release). Prior objects
        need a kernel form (independent gammas or a Gaussian copula with gamma marginals).
    update : {"blocked", "gibbs"}, default "blocked"
        ``"gibbs"``: the paper's sampler, alpha | S0, then S0 | alpha, omega, then omega | S0.
        ``"blocked"``: alpha | omega with S0 integrated out (a Gaussian again), then S0 and omega; the
        same posterior, far better mixing when the noise dominates (see the notebook).
    n_iter : int or "auto", default "auto"
        Iterations per chain after warm-up (before thinning); ``"auto"``: until converged, as in
        :func:`dplit.mcmc.dp_mcmc`. An integer runs exactly that many (the paper: 20,000).
    n_warmup : int, default 2000
        Warm-up iterations per chain (discarded; the proposal is tuned here).
    thin : int, default 10
        Keep every ``thin``-th iteration.
    n_mh : int, default 5
        Metropolis steps for ``log alpha`` per iteration.
    n_chains, rng, progress, n_jobs, target_ess, max_rhat, max_iter, max_time
        The run settings every sampler shares (``dplit.sampling.RUN_SETTINGS``), documented once at
        :func:`dplit.sampling.run`: 4 chains in parallel threads, a spawned generator per chain (same seed,
        same draws, whatever ``n_jobs``), a progress bar, and the stopping rule of ``n_iter="auto"``.

    Returns
    -------
    arviz.InferenceData
        Posterior ``alpha`` and ``mean_composition`` (chain, draw, component; the release's component
        names); sample stats ``alpha_acceptance``; attrs of the result contract
        (:data:`dplit.results.CONTRACT_ATTRS`, ``method="DPapprox"``) and ``prior``, ``update``, ``eps1``,
        ``a``, ``n``, ``n1``, ``n2``, ``parts``.

    Warns
    -----
    ApproximationWarning
        When a part of the release has fewer than ``MIN_N`` records.

    Examples
    --------
    >>> from dplit.dirichlet import dirichlet_draws
    >>> from dplit.release import release
    >>> X = dirichlet_draws([2.0, 3.0, 4.0], 2000, rng=1)
    >>> r = release(X, eps1=1.0, eps2=0.5, candidates=[1e-3, 1e-2], rng=2, secure=False)
    >>> res = dp_approx(r, n_iter=2000, n_warmup=500, n_chains=2, thin=2, rng=3, progress=False)
    >>> mean = res.posterior["mean_composition"].mean(("chain", "draw")).values
    >>> bool(np.abs(mean - np.array([2.0, 3.0, 4.0]) / 9).max() < 0.05)      # E[x] recovered
    True
    """
    release = check_release(release)
    V.run_settings(n_iter, n_warmup, n_chains, thin, progress, n_jobs)
    V.choice(update, "update", _UPDATES)
    n_mh = V.count(n_mh, "n_mh")
    rng = V.rng(rng)
    if isinstance(prior, str) and prior.lower() == "p5":
        raise ValueError("prior 'p5' has no density, and the paper defines no DPapprox_p5: use prior='p1' on the "
                         "split release, which uses both parts (what p5 amounts to in DPMCMC)")
    prior_obj, both = resolve_prior(prior, release, release.d, rng)
    blocks = release_blocks(release, both)
    small = [blk[1] for blk in blocks if blk[1] < MIN_N]
    if small:
        warnings.warn(f"a part of the release has only {min(small)} records (< MIN_N = {MIN_N}): the normal "
                      "approximation of S_0 behind DPapprox is unreliable there; use dp_mcmc",
                      ApproximationWarning, stacklevel=2)
    sampler = _approx_sampler(blocks, release.a, kernel_form_of(prior_obj, release.d), update, n_mh)
    attrs = {"method": "DPapprox", "prior": prior_name(prior), "update": update, "eps1": release.eps1,
             "a": release.a, "n": release.n, "n1": release.n1, "n2": release.n2, "n_mh": n_mh,
             "parts": "+".join(["D1", "D2"] if len(blocks) == 2 else (["D2"] if release.split else ["D"])),
             "plausibility_checked": int(release.checked)}
    observed = {"s_L": np.asarray(release.s_L)}
    if release.split:
        observed["s_L1"] = np.asarray(release.s_L1)
    result = run(sampler, n_iter=n_iter, n_warmup=n_warmup, n_chains=n_chains, thin=thin, rng=rng,
                 progress=progress, n_jobs=n_jobs, attrs=attrs, observed_data=observed, report_vars=["alpha"],
                 privacy=privacy_attrs(release), desc="DPapprox iterations", target_ess=target_ess,
                 max_rhat=max_rhat, max_iter=max_iter, max_time=max_time)
    return name_components(result, release.names)

# %% [markdown]
# ## Exactness for its own model: simulation-based calibration
#
# DPapprox samples the posterior of model (6), not the posterior given the release; what it can be checked for exactly is
# that model. Simulate $\tilde{\boldsymbol\alpha} \sim$ p1, $\tilde S_0 \sim N(\boldsymbol\mu_{\tilde{\boldsymbol\alpha}}, \boldsymbol\Sigma_{\tilde{\boldsymbol\alpha}}/n)$,
# $\tilde{\mathbf s}_L = \tilde S_0 + $ Laplace noise of scale $b_L$; then the rank of each $\tilde\alpha_j$ among $L$ thinned
# draws of the sampler must be uniform (`dplit.testing`). The planted bug is the paper's slip: a sampler told the
# covariance $\boldsymbol\Sigma_{\boldsymbol\alpha}$ (as if $n = 1$) instead of $\boldsymbol\Sigma_{\boldsymbol\alpha}/n$ must fail.

# %%
#| export
def _sbc_ranks(n_rep, *, n, d, a, eps, update="blocked", L=19, thin=20, n_warmup=400, n_told=None,
               scale_factor=1.0, rng=None):
    """Ranks (n_rep, d) of p1 draws among L thinned DPapprox draws, data simulated from model (6).

    The Laplace scale is -d log(a) / (n eps); the sampler is told ``n_told`` records (None = n) and
    the scale times ``scale_factor`` (1 = correct).
    """
    from dplit.priors import GammaPrior

    p1 = GammaPrior(1.0, 0.1, d=d)
    form = p1.kernel_form()
    scale = laplace_scale(d, a, n, eps)
    told = n if n_told is None else n_told

    def simulate(g):
        alpha = g.gamma(p1.shape, 1.0 / p1.rate)
        s0 = g.multivariate_normal(logx_mean_kernel(alpha), logx_cov_kernel(alpha) / n)
        return alpha, s0 + g.laplace(0.0, scale, d)

    def posterior(s_L, n_draws, g):
        sampler = _approx_sampler([(s_L, told, told, scale * scale_factor)], a, form, update)
        draws = run_chains(sampler, n_iter=n_draws * thin, n_warmup=n_warmup, n_chains=1, thin=thin, rng=g)
        return draws[0]["alpha"][0]

    return sbc_ranks(simulate, posterior, n_rep, L=L, rng=rng)


# %% [markdown]
# The run: $d = 2$, $n = 200$, $a = 10^{-2}$, $\epsilon_1 = 1$ (a Laplace scale $-d\log a/(n\epsilon_1)$ larger than the
# sampling spread of $S_0$ for most p1 draws: the augmentation matters), $L = 19$ draws. The blocked sampler is thinned by
# 20; the Gibbs sampler mixes so slowly at this noise level (notebook 75, *Convergence*) that thinning by 20 is not enough
# for it to pass, so it is thinned by 100.

# %%
ranks = {"blocked": _sbc_ranks(n_sbc, n=200, d=2, a=1e-2, eps=1.0, rng=31),
         "gibbs": _sbc_ranks(n_sbc, n=200, d=2, a=1e-2, eps=1.0, update="gibbs", thin=100, rng=32),
         "blocked, scale x 0.3": _sbc_ranks(n_sbc, n=200, d=2, a=1e-2, eps=1.0, scale_factor=0.3, rng=33)}
pvals = {k: rank_uniformity_pvalues(r) for k, r in ranks.items()}
print(f"{3 * n_sbc} SBC replications")
for k, p in pvals.items():
    print(f"{k:22s} p-values {p.round(4)}")
assert np.all(pvals["blocked"] > 1e-3) and np.all(pvals["gibbs"] > 1e-3)
if n_sbc >= 200:
    assert np.min(pvals["blocked, scale x 0.3"]) < 1e-3

# %%
# NBVAL_IGNORE_OUTPUT
fig, axes = plt.subplots(1, 3, figsize=(7.5, 2.8), sharey=True)
for ax, (title, r) in zip(axes, ranks.items()):
    for j in range(2):
        ax.hist(r[:, j], bins=np.arange(0, 21, 2) - 0.5, histtype="step", lw=1.5, label=f"alpha_{j + 1}")
    ax.axhline(n_sbc / 10, c="k", ls="--", lw=0.8)
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("rank of true alpha_j in 19 draws", fontsize=9)
axes[0].legend(fontsize=8)
fig.tight_layout()

# %% [markdown]
# Notebook 75 puts the sampler to work: the no-privacy limit against MCMC$_{p1}$ (and the paper's slip), convergence
# across $\epsilon$ (S5), DPapprox against DPMCMC on one release, where the approximation fails (small $n$, censoring),
# and the Explore widget.

# %% [markdown]
# ## When to use this
#
# * **DPapprox is cheap at any $n$**: an iteration's cost does not depend on the number of records, against DPMCMC's
#   sweep over every latent record (`benchmarks/bench_approx.py` measures both).
# * **It is an approximation of the model, not of the sampler.** Its normal law of $S_0$ is accurate from about `MIN_N`
#   records on (below it warns), but it treats the censored statistic as uncensored: when a noticeable share of the
#   entries is below the threshold $a$ (skewed compositions, a large fixed $a$) it is biased where DPMCMC is not
#   (notebook 75 measures both). Check the censoring rates of the release (`Release.p_hat_G`) before trusting it.
# * **Use the blocked update** (the default). The paper's Gibbs update (`update="gibbs"`) targets the same posterior but
#   converges slowly whenever the privacy noise matters (S5; notebook 75); the blocked one does not.
# * For small $n$ or heavy censoring use **DPMCMC** (notebook 21), which is exact.
