# %% [markdown]
# # The moves inside DPMCMC: slice sampler, record sweep, joint and ancillary moves
#
# * **For:** the four Markov moves that `dp_mcmc`, `dp_remcmc` and `mcmc` (notebook 21) combine into one iteration, each derived from the target of notebook 21 (eq. 1-5) and written as a numba kernel.
# * **You need:** nothing but the model: the kernels take a statistic, latent records and a prior's kernel form (notebook 18); no release is read here.
# * **You get:** `dplit._mcmc_moves`: each move as a numba kernel next to a NumPy (or plain-Python) twin, and `chain_kernel`, one iteration of them all; notebook 73 checks that each kernel equals its twin and leaves its target invariant.

# %%
#| default_exp _mcmc_moves

# %% [markdown]
# ## Parameters
#
# The one check here (step (i)'s log target) uses fixed inputs; the other checks of these kernels are in notebook 73.

# %%
import numpy as np
from scipy import special, stats

from dplit.dirichlet import censored_stat, dirichlet_draws
from dplit.priors import PRIOR_GAMMA, GammaPrior

SEED = 20261123
rng = np.random.default_rng(SEED)

# %% [markdown]
# ## The prior inside the kernel
#
# The slice sampler needs $\log\pi_0$ inside numba. Each prior with a density states it in a small explicit form,
# `prior.kernel_form()` (notebook 18): independent gammas (p1, and p3 fitted from DPBoots draws of $\mathbf D_1$) or a
# Gaussian copula with gamma marginals (p4), read by `dplit.priors.prior_logpdf_kernel`. Notebook 18 checks that the
# kernel's density equals `Prior.logpdf` for every kind; the kernels below never look at a prior's attributes.
# Priors known only through draws (p2, p5) have no kernel form: p5 is handled by running under p1 on both parts
# (notebook 21).

# %%
#| export
import math

import numpy as np
from numba import njit
from scipy import special

from dplit.dirichlet import (
    log_std_gamma_kernel,
    logsumexp_kernel,
    logx_mean_kernel,
    trigamma_kernel,
)
from dplit.priors import prior_logpdf_kernel

# %% [markdown]
# ## Step (i): $\boldsymbol\alpha \mid \mathbf D$ by a hyperrectangle slice sampler (Neal 2003, Fig. 8)
#
# We sample $\boldsymbol\theta = \log\boldsymbol\alpha$ (the Jacobian adds $\sum_j\theta_j$ to the log target), so the
# sampler never proposes a negative $\alpha_j$. One **slice cycle** from the current point $\mathbf z_0$ with log
# target $f$: draw the level $y = f(\mathbf z_0) - E$, $E\sim\mathrm{Exp}(1)$; place a box of side $w$ at random
# around $\mathbf z_0$ ($L_j = z_{0j} - wU_j$, $R_j = L_j + w$); draw $\mathbf z_1$ uniformly in the box until
# $f(\mathbf z_1) > y$, after each rejection shrinking every side towards $\mathbf z_0$ ($L_j = z_{1j}$ if
# $z_{1j} < z_{0j}$, else $R_j = z_{1j}$). Each cycle leaves the target invariant; Fig. 8 has no stepping out,
# so the box should be generous (shrinking is geometric, a wide box costs only a few extra evaluations).
#
# An axis-aligned box mixes badly when the target is correlated, and $\log\boldsymbol\alpha \mid \mathbf D$ is: the
# composition $\boldsymbol\alpha/\alpha_0$ is pinned far more tightly than the concentration $\alpha_0$. So the box lives
# in **whitened coordinates** $\boldsymbol\theta = L\mathbf z$, where $LL^\top$ approximates the covariance of
# $\boldsymbol\theta \mid \mathbf D$: the inverse of $n\,\mathrm{diag}(\boldsymbol\alpha)\,I(\boldsymbol\alpha)\,\mathrm{diag}(\boldsymbol\alpha)$ plus the
# prior's gamma curvature $\mathrm{diag}(w_j\alpha_j)$, with $I(\boldsymbol\alpha) = \mathrm{diag}(\psi_1(\alpha_j)) - \psi_1(\alpha_0)\mathbf 1\mathbf 1^\top$
# the Fisher information of one record. A fixed linear map has a constant Jacobian, so Fig. 8 in $\mathbf z$
# targets the same law; $L$ is refitted at the chain's mean during warm-up and then frozen (adaptation after
# warm-up would break the invariance). With this map a box of side $w = 3$ (posterior standard deviations) accepts
# after about 2.5 evaluations.

# %%
#| export
@njit(cache=True, nogil=True)
def _log_target_kernel(theta, s, n, kind, shape, rate, prec):
    """Log of eq. (1) in theta = log(alpha), Jacobian included, up to a constant."""
    d = theta.size
    alpha = np.empty(d)
    a0 = 0.0
    lg = 0.0
    lin = 0.0
    jac = 0.0
    for j in range(d):
        if theta[j] > 700.0 or theta[j] < -700.0:
            return -np.inf
        alpha[j] = math.exp(theta[j])
        a0 += alpha[j]
        lg += math.lgamma(alpha[j])
        lin += (alpha[j] - 1.0) * s[j]
        jac += theta[j]
    out = n * (math.lgamma(a0) - lg) + n * lin + jac + prior_logpdf_kernel(alpha, kind, shape, rate, prec)
    return out if out == out else -np.inf      # NaN (overflow far out in the tails) counts as outside


@njit(cache=True, nogil=True)
def slice_kernel(theta, n_cycles, width, chol, chol_inv, s, n, kind, shape, rate, prec, rng):
    """n_cycles of Neal's Fig. 8 slice sampler in z = chol^-1 theta; theta is updated in place.

    Returns the number of evaluations of the target.
    """
    d = theta.size
    z0 = chol_inv @ theta
    f0 = _log_target_kernel(theta, s, n, kind, shape, rate, prec)
    left = np.empty(d)
    right = np.empty(d)
    z1 = np.empty(d)
    n_eval = 1
    for _ in range(n_cycles):
        y = f0 - rng.standard_exponential()
        for j in range(d):
            left[j] = z0[j] - width * rng.random()
            right[j] = left[j] + width
        while True:
            for j in range(d):
                z1[j] = left[j] + rng.random() * (right[j] - left[j])
            f1 = _log_target_kernel(chol @ z1, s, n, kind, shape, rate, prec)
            n_eval += 1
            if f1 > y:
                z0[:] = z1
                f0 = f1
                break
            width_left = 0.0
            for j in range(d):
                if z1[j] < z0[j]:
                    left[j] = z1[j]
                else:
                    right[j] = z1[j]
                width_left = max(width_left, right[j] - left[j])
            if width_left < 1e-12:      # shrunk onto z0 (only if f is not reproducible): stay put
                break
    theta[:] = chol @ z0
    return n_eval


# %% [markdown]
# Checks: the log target against `dplit.dirichlet.loglik` (same function of $\boldsymbol\alpha$ up to a constant), and
# the compiled kernel against its own Python function (`.py_func`): the same draws from the same seed. That a long run
# of slice cycles reproduces the posterior computed by quadrature is checked in notebook 73.

# %%
from dplit.dirichlet import loglik  # noqa: E402

ones3, rate3, zero33 = np.ones(3), np.full(3, 0.1), np.zeros((3, 3))
s_ex = np.array([-1.5, -1.2, -0.8])
th_a, th_b = np.log([2.0, 3.0, 4.0]), np.log([1.0, 5.0, 2.5])
diff_kernel = (_log_target_kernel(th_a, s_ex, 100.0, PRIOR_GAMMA, ones3, rate3, zero33)
               - _log_target_kernel(th_b, s_ex, 100.0, PRIOR_GAMMA, ones3, rate3, zero33))
diff_direct = (loglik(np.exp(th_a), s_ex, 100) - loglik(np.exp(th_b), s_ex, 100)
               + stats.expon.logpdf(np.exp(th_a), scale=10).sum() - stats.expon.logpdf(np.exp(th_b), scale=10).sum()
               + th_a.sum() - th_b.sum())
assert np.isclose(diff_kernel, diff_direct, rtol=1e-12)

chol_ex = np.linalg.cholesky(np.array([[0.04, 0.03, 0.03], [0.03, 0.05, 0.04], [0.03, 0.04, 0.06]]))
th_k = th_a.copy()
ev_k = slice_kernel(th_k, 50, 3.0, chol_ex, np.linalg.inv(chol_ex), s_ex, 100.0, PRIOR_GAMMA, ones3, rate3,
                     zero33, np.random.default_rng(3))
th_r = th_a.copy()       # the same kernel run as plain Python (numba's .py_func), same stream
ev_r = slice_kernel.py_func(th_r, 50, 3.0, chol_ex, np.linalg.inv(chol_ex), s_ex, 100.0, PRIOR_GAMMA, ones3,
                             rate3, zero33, np.random.default_rng(3))
assert ev_k == ev_r and np.allclose(th_k, th_r, rtol=1e-10)

# %% [markdown]
# ## Step (ii): the record sweep (Ju et al. 2022; Guo et al., Sec. 4.2.2)
#
# One Metropolis-Hastings pass over the latent records of a block. The kernel is written once for all three
# samplers: the proposal is $\mathrm{Dirichlet}(\boldsymbol\alpha^{prop})$ and the log acceptance ratio is the Laplace
# log ratio plus $\sum_j c_j(\log x^*_j - \log x_{ij})$. DPMCMC and DPreMCMC (`"ju"`) use $\boldsymbol\alpha^{prop} = \boldsymbol\alpha$,
# $\mathbf c = 0$; exact sampling of (5) uses $\mathbf c = (p - 1)(\boldsymbol\alpha - 1)$, or with the powered proposal $\mathbf c = 0$ where
# $\alpha^{prop}_j = p(\alpha_j - 1) + 1$. An acceptance test draws $E \sim \mathrm{Exp}(1)$ and accepts when
# $\log r > -E$ (the same as $U < r$), and only when $\log r < 0$.

# %%
#| export
@njit(cache=True, nogil=True)
def record_sweep_kernel(logx, alpha_prop, coef, s_L, log_a, inv_scale, rng):
    """One Metropolis-Hastings sweep over the latent records (rows of logx = log x_i), in place.

    Proposal x* ~ Dirichlet(alpha_prop); log ratio = Laplace log ratio of the censored mean
    + sum_j coef_j (log x*_j - log x_ij). Returns (accepted, T, C): the number of accepted
    proposals and the sums over records of log x_ij and of log max(x_ij, a).
    """
    m, d = logx.shape
    T = np.zeros(d)
    C = np.zeros(d)
    for i in range(m):
        for j in range(d):
            T[j] += logx[i, j]
            C[j] += max(logx[i, j], log_a)
    cur = 0.0
    for j in range(d):
        cur -= abs(s_L[j] - C[j] / m) * inv_scale
    lg = np.empty(d)
    dc = np.empty(d)
    small = False                       # any alpha_j < 1: draw in log space (no underflow)
    for j in range(d):
        small = small or alpha_prop[j] < 1.0
    accepted = 0
    for i in range(m):
        if small:                       # some alpha_j < 1: log gammas, log-sum-exp (no underflow)
            for j in range(d):
                lg[j] = log_std_gamma_kernel(alpha_prop[j], rng)
            lnorm = logsumexp_kernel(lg)
        else:                           # all alpha_j >= 1: plain gammas, one log each
            tot = 0.0
            for j in range(d):
                g = rng.standard_gamma(alpha_prop[j])
                tot += g
                lg[j] = math.log(g)
            lnorm = math.log(tot)
        new = 0.0
        extra = 0.0
        for j in range(d):
            lg[j] -= lnorm              # log x* ~ Dirichlet(alpha_prop), folded into the ratio's loop
            dc[j] = max(lg[j], log_a) - max(logx[i, j], log_a)
            new -= abs(s_L[j] - (C[j] + dc[j]) / m) * inv_scale
            extra += coef[j] * (lg[j] - logx[i, j])
        log_r = new - cur + extra
        if log_r >= 0.0 or rng.standard_exponential() > -log_r:
            accepted += 1
            cur = new
            for j in range(d):
                T[j] += lg[j] - logx[i, j]
                C[j] += dc[j]
                logx[i, j] = lg[j]
    return accepted, T, C

# %%
#| export
def record_sweep_reference(logx, alpha_prop, coef, s_L, log_a, inv_scale, rng):
    """NumPy twin of `record_sweep_kernel` (same random stream, same result), in place."""
    m, d = logx.shape
    C = np.maximum(logx, log_a).sum(axis=0)
    cur = -np.sum(np.abs(s_L - C / m)) * inv_scale
    accepted = 0
    for i in range(m):
        lg = np.empty(d)
        for j in range(d):   # one gamma per component, in the kernel's order
            if alpha_prop[j] < 1.0:
                lg[j] = (np.log(rng.standard_gamma(alpha_prop[j] + 1.0))
                         - rng.standard_exponential() / alpha_prop[j])
            else:
                lg[j] = np.log(rng.standard_gamma(alpha_prop[j]))
        lg -= np.logaddexp.reduce(lg)                      # log of x* ~ Dirichlet(alpha_prop)
        dc = np.maximum(lg, log_a) - np.maximum(logx[i], log_a)
        new = -np.sum(np.abs(s_L - (C + dc) / m)) * inv_scale
        log_r = new - cur + np.dot(coef, lg - logx[i])
        if log_r >= 0.0 or rng.standard_exponential() > -log_r:
            accepted += 1
            cur = new
            C += dc
            logx[i] = lg
    return accepted, logx.sum(axis=0), C

# %%
#| export
UPDATE_JU = 0             # records from the unpowered model: the Laplace ratio alone
UPDATE_MODEL5 = 1         # exact MH for model (5) with the Dirichlet(alpha) proposal
UPDATE_MODEL5_POWERED = 2  # exact MH for model (5) with the Dirichlet(p(alpha - 1) + 1) proposal


@njit(cache=True, nogil=True)
def sweep_arguments(alpha, power, mode):
    """Proposal parameter and acceptance coefficients of a record update (mode: _UPDATE_*)."""
    d = alpha.size
    alpha_prop = alpha.copy()
    coef = np.zeros(d)
    if mode == UPDATE_JU:
        return alpha_prop, coef
    for j in range(d):
        target = power * (alpha[j] - 1.0) + 1.0   # p_Dir(x | alpha)^power ~ Dirichlet(target)
        if mode == UPDATE_MODEL5_POWERED and target > 0.05:
            alpha_prop[j] = target
        coef[j] = target - alpha_prop[j]
    return alpha_prop, coef


# %% [markdown]
# ## Step (iii): a joint move of $\boldsymbol\alpha$ and the records along the concentration
#
# **Why (i)-(ii) crawl along $\alpha_0$.** Given the latent records, $\boldsymbol\alpha$ is pinned as tightly as by $n$ exact
# records: in particular the concentration $\alpha_0$, which the records carry through their *dispersion* (how far
# each $\log\mathbf x_i$ lies from the others). Given $\mathbf s_L$ alone, $\alpha_0$ is far less certain (a long right tail),
# but step (i) can move $\alpha_0$ only within the narrow conditional, and step (ii) can change the records' dispersion
# only by a few records per sweep: the chain takes many small steps along $\alpha_0$ (the fraction of missing information
# is near one in that direction). A move that changes $\alpha_0$ *and* the dispersion of all records together crosses that
# ridge in one step.
#
# **The move (a group move, Liu & Sabatti 2000).** Write each record by its centred log-ratios,
# $\mathbf z_i = \mathrm{clr}(\mathbf x_i) = \log\mathbf x_i - \overline{\log\mathbf x_i}\,\mathbf 1$ (a point of the $(d-1)$-dimensional
# zero-sum subspace, $\mathbf x_i = \mathrm{softmax}(\mathbf z_i)$), and let $\bar{\mathbf z} = N^{-1}\sum_i\mathbf z_i$ be their centre over all
# $N$ latent records. For $u \in \mathbb R$, map
#
# $$T_u:\quad \boldsymbol\theta \mapsto \boldsymbol\theta + u\mathbf 1 \ (\boldsymbol\alpha \mapsto e^u\boldsymbol\alpha), \qquad
#   \mathbf z_i \mapsto \bar{\mathbf z} + \rho_u(\boldsymbol\alpha)\,(\mathbf z_i - \bar{\mathbf z}), \qquad
#   \rho_u(\boldsymbol\alpha) = \sqrt{V(e^u\boldsymbol\alpha)/V(\boldsymbol\alpha)},\quad V(\boldsymbol\alpha) = \textstyle\sum_j\psi_1(\alpha_j):$$
#
# the composition of $\boldsymbol\alpha$ stays, $\alpha_0$ is multiplied by $e^u$, and the records are pulled towards (or pushed away
# from) their centre by exactly the factor by which the spread of $\mathrm{clr}(\mathbf x)$ under Dirichlet($\boldsymbol\alpha$) changes
# ($\mathrm{tr\,Cov}\,\mathrm{clr}(\mathbf x) = (1 - 1/d)V(\boldsymbol\alpha)$, from $\mathrm{Cov}\log\mathbf x = \mathrm{diag}\,\psi_1(\alpha_j) - \psi_1(\alpha_0)\mathbf 1\mathbf 1^\top$;
# so $\rho \approx e^{-u/2}$ for large $\boldsymbol\alpha$ and $\approx e^{-u}$ for small). The centre is unchanged by the map, and
# $\rho_{u_2}(e^{u_1}\boldsymbol\alpha)\,\rho_{u_1}(\boldsymbol\alpha) = \rho_{u_1+u_2}(\boldsymbol\alpha)$, so $T_{u_2}\circ T_{u_1} = T_{u_1+u_2}$ and $T_{-u} = T_u^{-1}$.
#
# **Its acceptance.** Draw $u \sim N(0, \sigma^2)$ and accept $T_u$ with probability $\min(1, \pi(T_u(\cdot))\,|J_u| / \pi(\cdot))$:
# the pair $(\text{state}, u) \mapsto (T_u(\text{state}), -u)$ is an involution and $u$'s law is symmetric, so this is
# Metropolis-Hastings on the joint target (2) (Green's deterministic-proposal form). The target must be written in the
# coordinates the map acts on, $(\boldsymbol\theta, \mathbf z_1, \dots, \mathbf z_N)$. With the additive log-ratio transform, whose
# Jacobian is $\prod_j x_j$, and a linear map from it to the clr, the density of $\mathbf z_i$ is
# $p_{\mathrm{Dir}}(\mathbf x_i \mid \boldsymbol\alpha)\prod_j x_{ij} \propto \prod_j x_{ij}^{\alpha_j} / B(\boldsymbol\alpha)$, so
#
# $$\log\pi(\boldsymbol\theta, \mathbf z) = \sum_j\alpha_j T_j - N\log B(\boldsymbol\alpha) + \log\pi_0(\boldsymbol\alpha) + \sum_j\theta_j
#   - \sum_k \frac{1}{b_k}\sum_j\big|s_{L,kj} - C_{kj}/m_k\big| + \text{const},$$
#
# with $\mathbf T = \sum_i\log\mathbf x_i$ and $\mathbf C_k$ the censored sums of block $k$ (as in (i) and (ii)). The map moves $\boldsymbol\theta$ by a
# translation (Jacobian 1) and, in $\mathbf z$, is the identity on the centre ($d - 1$ dimensions) and a scaling by $\rho$ of the
# $(N-1)(d-1)$ deviations from it; the $\mathbf z$-block of the Jacobian matrix is triangular against the $\boldsymbol\theta$-block
# ($\rho$ depends on $\boldsymbol\theta$, not $\boldsymbol\theta$ on $\mathbf z$), so $|J_u| = \rho^{(N-1)(d-1)}$, and
#
# $$\log r = \log\pi(T_u(\boldsymbol\theta, \mathbf z)) - \log\pi(\boldsymbol\theta, \mathbf z) + (N-1)(d-1)\log\rho_u(\boldsymbol\alpha).$$
#
# A proposal costs $N d$ exponentials and $N$ logarithms (the softmax of the moved clr), about a third of a record
# sweep. It needs a joint law of $\boldsymbol\alpha$ and the records, so it runs in DPMCMC (every power $p_k = 1$) and not in
# DPreMCMC (whose default update belongs to no joint law) or MCMC$_{p1}$ (no records). Its step $\sigma$ is adapted in the
# warm-up towards an acceptance rate of about 0.3 and then frozen; `n_scale` proposals follow the slice cycles in each
# iteration.

# %%
#| export
@njit(cache=True, nogil=True)
def _clr_spread_kernel(alpha):
    """V(alpha) = sum_j trigamma(alpha_j): the clr spread of Dirichlet(alpha) up to the factor 1 - 1/d."""
    v = 0.0
    for j in range(alpha.size):
        v += trigamma_kernel(alpha[j])
    return v


@njit(cache=True, nogil=True)
def _joint_log_target_kernel(theta, T, C, m, n_rec, s_L, inv_scale, kind, shape, rate, prec):
    """log pi(theta, clr records) of eq. (2), up to a constant, from the sums T (all records) and C (per block)."""
    d = theta.size
    alpha = np.exp(theta)
    a0 = 0.0
    out = 0.0
    for j in range(d):
        a0 += alpha[j]
        out += alpha[j] * T[j] - n_rec * math.lgamma(alpha[j]) + theta[j]
    out += n_rec * math.lgamma(a0) + prior_logpdf_kernel(alpha, kind, shape, rate, prec)
    for b in range(m.size):
        for j in range(d):
            out -= abs(s_L[b, j] - C[b, j] / m[b]) * inv_scale[b]
    return out if out == out else -np.inf

# %%
#| export
@njit(cache=True, nogil=True)
def joint_move_kernel(theta, logx, starts, s_L, log_a, inv_scale, step_u, step_shift, dshift, kind, shape, rate,
                       prec, buf, rng):
    """One proposal of the joint move T_(u, delta) (alpha scaled by e^u and shifted, clr records with it), in place.

    u ~ N(0, step_u^2) (0 when step_u = 0); delta = step_shift * (xi - mean(xi)), xi ~ N(0, I)
    (0 when step_shift = 0); theta += u + dshift * delta. logx holds the log records of every
    block (block b: rows starts[b]:starts[b+1]); buf is scratch of its shape. Returns 1 if accepted.
    """
    n_rec, d = logx.shape
    k = starts.size - 1
    m = np.empty(k)
    for b in range(k):
        m[b] = starts[b + 1] - starts[b]
    centre = np.zeros(d)
    T = np.zeros(d)
    C = np.zeros((k, d))
    for b in range(k):                  # the centre of the clr, and the current sums
        for i in range(starts[b], starts[b + 1]):
            row = 0.0
            for j in range(d):
                row += logx[i, j]
                T[j] += logx[i, j]
                C[b, j] += max(logx[i, j], log_a)
            row /= d
            for j in range(d):
                centre[j] += logx[i, j] - row
    for j in range(d):
        centre[j] /= n_rec
    u = step_u * rng.standard_normal() if step_u > 0.0 else 0.0
    delta = np.zeros(d)
    if step_shift > 0.0:
        for j in range(d):
            delta[j] = step_shift * rng.standard_normal()
        delta -= delta.mean()
    theta_new = theta + u + dshift * delta
    rho = math.sqrt(_clr_spread_kernel(np.exp(theta_new)) / _clr_spread_kernel(np.exp(theta)))
    T_new = np.zeros(d)
    C_new = np.zeros((k, d))
    z = np.empty(d)
    for b in range(k):                  # the moved records: softmax of the scaled clr, in logs
        for i in range(starts[b], starts[b + 1]):
            row = 0.0
            for j in range(d):
                row += logx[i, j]
            row /= d
            top = -np.inf
            for j in range(d):
                z[j] = centre[j] + delta[j] + rho * (logx[i, j] - row - centre[j])
                top = max(top, z[j])
            tot = 0.0
            for j in range(d):
                tot += math.exp(z[j] - top)
            lse = top + math.log(tot)
            for j in range(d):
                buf[i, j] = z[j] - lse
                T_new[j] += buf[i, j]
                C_new[b, j] += max(buf[i, j], log_a)
    log_r = (_joint_log_target_kernel(theta_new, T_new, C_new, m, n_rec, s_L, inv_scale, kind, shape, rate, prec)
             - _joint_log_target_kernel(theta, T, C, m, n_rec, s_L, inv_scale, kind, shape, rate, prec)
             + (n_rec - 1) * (d - 1) * math.log(rho))
    if log_r >= 0.0 or rng.standard_exponential() > -log_r:
        theta[:] = theta_new
        logx[:] = buf
        return 1
    return 0

# %%
#| export
def joint_move_reference(theta, logx, starts, s_L, log_a, inv_scale, step_u, step_shift, dshift, prior_logpdf, rng,
                          jacobian=True):
    """NumPy twin of `joint_move_kernel` (same stream, same result), in place; prior_logpdf(alpha) in Python.

    ``jacobian=False`` leaves out |J_u| = rho^((N-1)(d-1)): a wrong variant for the checks.
    """
    n_rec, d = logx.shape
    blocks = [slice(starts[b], starts[b + 1]) for b in range(len(starts) - 1)]

    def log_target(th, y):
        al = np.exp(th)
        lap = sum(np.abs(s_L[b] - np.maximum(y[sl], log_a).mean(axis=0)).sum() * inv_scale[b]
                  for b, sl in enumerate(blocks))
        return (al @ y.sum(axis=0) - n_rec * (special.gammaln(al).sum() - special.gammaln(al.sum()))
                + prior_logpdf(al) + th.sum() - lap)

    z = logx - logx.mean(axis=1, keepdims=True)
    centre = z.mean(axis=0)
    u = step_u * rng.standard_normal() if step_u > 0 else 0.0
    delta = step_shift * rng.standard_normal(d) if step_shift > 0 else np.zeros(d)
    delta -= delta.mean()
    th_new = theta + u + dshift * delta
    rho = np.sqrt(special.polygamma(1, np.exp(th_new)).sum() / special.polygamma(1, np.exp(theta)).sum())
    z_new = centre + delta + rho * (z - centre)
    y_new = z_new - special.logsumexp(z_new, axis=1, keepdims=True)
    log_r = log_target(th_new, y_new) - log_target(theta, logx)
    if jacobian:
        log_r += (n_rec - 1) * (d - 1) * np.log(rho)
    if log_r >= 0.0 or rng.standard_exponential() > -log_r:
        theta[:] = th_new
        logx[:] = y_new
        return 1
    return 0


# %% [markdown]
# ## Step (iv): an ancillary move, $\boldsymbol\alpha$ with the records' quantiles held fixed
#
# Steps (iii) move $\boldsymbol\alpha$ along two families of directions, with the records following by a simple geometric rule;
# at $n = 5000$ with a noisy release that rule is not good enough (a step of a few hundredths in the composition already
# costs half the proposals, because thousands of records each pay a little for the mismatch). The ideal partner of the
# centred update (i) is the *ancillary* one (Yu & Meng 2011, ASIS): hold each record's quantiles fixed and move
# $\boldsymbol\alpha$; then the Dirichlet terms cancel and the acceptance is the ratio of the marginal posterior. Exact quantile maps
# cost an incomplete-gamma inversion per entry ($nd$ per proposal); an almost exact one is cheap.
#
# **Gamma space.** Under the model $\mathbf x_i = \mathbf G_i / \sum_j G_{ij}$ with $G_{ij} \sim \mathrm{Gamma}(\alpha_j)$ independent, and the sum
# $S_i = \sum_j G_{ij} \sim \mathrm{Gamma}(\alpha_0)$ is independent of $\mathbf x_i$. So draw the auxiliary $S_i \sim \mathrm{Gamma}(\alpha_0)$ afresh
# (its exact conditional, the Laplace term does not see it), set $G_{ij} = x_{ij}S_i$, and the extended target has density
# $\pi_0(\boldsymbol\alpha)\,\prod_j p_{\mathrm{Lap}}(\cdot)\,\prod_{ij} p_{\mathrm{Gamma}}(G_{ij} \mid \alpha_j)$ in $(\boldsymbol\theta, \mathbf G)$.
#
# **The map.** $G^{1/3}$ is close to normal for $\alpha \gtrsim 1$ (Wilson & Hilferty 1931). With its exact moments
# $m_\alpha = \Gamma(\alpha + 1/3)/\Gamma(\alpha)$, $s^2_\alpha = \Gamma(\alpha + 2/3)/\Gamma(\alpha) - m^2_\alpha$, the standard score
# $w = (G^{1/3} - m_{\alpha_j})/s_{\alpha_j}$ is nearly the normal quantile of $G$. Propose $\boldsymbol\theta' = \boldsymbol\theta + P\boldsymbol\xi$,
# $\boldsymbol\xi \sim N(0, I)$, and move every entry to the same score under $\alpha'_j$: $c' = m_{\alpha'_j} + s_{\alpha'_j}w$, $G' = c'^3$
# (refused if some $c' \le 0$, which the reverse map never produces: the map is an involution on where it is defined;
# in floating point we refuse already when some $c < 10^{-6}m_{\alpha_j}$ or $c' < 10^{-6}m_{\alpha'_j}$, a domain that is
# symmetric between the two ends, since below it $c' = m' + s'(c - m)/s$ would round away the information in $c$ and the
# map would no longer be inverted by the reverse move; for $\alpha_j \ge 0.5$ an entry falls there with probability below
# $10^{-9}$).
# The proposal is symmetric in $\boldsymbol\xi$, so the acceptance is the target ratio times the Jacobian
# $\prod_{ij} (s_{\alpha'_j}/s_{\alpha_j})(c'_{ij}/c_{ij})^2$:
#
# $$\log r = \sum_{ij}\Big[(\alpha'_j - \tfrac13)\log G'_{ij} - G'_{ij} - (\alpha_j - \tfrac13)\log G_{ij} + G_{ij}\Big]
#   - N\sum_j\Big[\log\Gamma(\alpha'_j) - \log\Gamma(\alpha_j) - \log\frac{s_{\alpha'_j}}{s_{\alpha_j}}\Big]
#   + \Delta\big[\log\pi_0 + \textstyle\sum_j\theta_j + \log p_{\mathrm{Lap}}\big],$$
#
# and the new records are $\mathbf x'_i = \mathbf G'_i / \sum_j G'_{ij}$. Were the map the exact quantile map, the bracketed sum would
# cancel against the $\log\Gamma$ and $\log s$ terms for every draw, leaving the marginal-posterior ratio; with the
# cube-root map the remainder is small (at $n = 5000$, $d = 5$, $\boldsymbol\alpha_5$: a step of 0.3 in $\boldsymbol\theta$ keeps about 75% of
# the proposals on the Dirichlet terms alone). $P$ is the Cholesky factor of the warm-up covariance of $\boldsymbol\theta$, scaled as
# for an adaptive random walk (the factor and its adaptation in the warm-up are set by the sampler, notebook 21). For $\alpha_j$ well below 1 the cube root is far from
# normal and more proposals are refused; where almost all are (fewer than 2% accepted even with small steps, e.g. for a
# huge $\epsilon$, whose Laplace term pins the records), the warm-up switches the move off, and step (iii) in its place
# likewise if it fares no better.
#
# **Many proposals per auxiliary draw.** Drawing $S_i$ is a Gibbs step of its own, so it need not come before every
# proposal: draw the $S_i$ once, then make `n_anc` proposals in a row, each a Metropolis-Hastings step for the extended
# target in $(\boldsymbol\theta, \mathbf G)$; an accepted proposal moves $\mathbf G$ to $\mathbf G'$, a refused one keeps it, and
# the records are read off ($\mathbf x_i = \mathbf G_i / \sum_j G_{ij}$) once at the end. Within such a batch the cube roots
# $c_{ij}$ are already at hand, so a proposal needs no exponential, logarithm or gamma draw per entry: $c'$ is affine in
# $c$, $G' = c'^3$, and the sums of logarithms in $\log r$ are taken as logarithms of products. The Laplace term needs
# $\sum_i\max(\log x'_{ij}, \log a)$, and $\log x'_{ij} = 3\log c'_{ij} - \log T_i$ with $T_i = \sum_j G'_{ij}$, so the block's
# sum is $3\sum_i \log c'_{ij} - \sum_i \log T_i$, corrected entry by entry only where $x'_{ij} \le a$ (which takes no
# division: $G'_{ij} \le aT_i$). The entries are held component by component (a $d \times N$ array), so each pass is a
# plain loop over records that the compiler vectorises, and a sum of $\log v_i$ is the logarithm of one product per 64
# factors (`sum_log`; factor by factor in the rare chunk where some factor lies outside $[10^{-4}, 10^4]$, since
# only inside it can no partial product of 64 leave the floating-point range). A proposal
# then costs a small fraction of one that draws its own $S_i$ and takes $2Nd$ exponentials and logarithms; the batch's
# fixed cost is the $N$ draws of $S_i$, $Nd$ exponentials, and $N(d + 1)$ logarithms at the end if anything moved.
#
# **Delayed acceptance.** Most proposals are refused, and a refusal still paid for its pass over the $Nd$ entries. Within
# a batch the scores $w_{ij} = (c_{ij} - m_{\alpha_j})/s_{\alpha_j}$ never change (the map keeps them), so the batch is a
# Metropolis chain in $\boldsymbol\theta$ alone with target $e^{F_w(\boldsymbol\theta)}$, $F_w$ the log density above with the entries
# at scores $w$. For such a chain any cheap approximation $\tilde F$ that depends on $w$ but not on $\boldsymbol\theta$'s current
# value may screen the proposals first (Christen & Fox 2005): accept with probability $\min(1, e^{\tilde F(\boldsymbol\theta') -
# \tilde F(\boldsymbol\theta)})$, and only then compute the exact $F_w(\boldsymbol\theta')$ and accept with probability
# $\min(1, e^{[F_w(\boldsymbol\theta') - F_w(\boldsymbol\theta)] - [\tilde F(\boldsymbol\theta') - \tilde F(\boldsymbol\theta)]})$. The product of the
# two satisfies detailed balance for $e^{F_w}$ whatever $\tilde F$ is; a good $\tilde F$ only saves work. Ours keeps the prior,
# the $\sum_j\theta_j$ and the Laplace term, and replaces the censored sums by $m_b\,E[\log x_j \mid \boldsymbol\alpha] + \delta_{bj}$,
# $E[\log x_j \mid \boldsymbol\alpha] = \psi(\alpha_j) - \psi(\alpha_0)$, with the offset $\delta_{bj}$ read off once per batch by moving the
# scores to a fixed centre $\bar{\boldsymbol\theta}$ (the warm-up's mean of $\boldsymbol\theta$): $\delta$ depends on $w$ alone, as it must
# (centring it at the current $\boldsymbol\theta$ would make the screen depend on the state and break the balance). The
# Dirichlet terms, small for these maps, are left to the second stage. A screened-out proposal costs $O(d)$. The
# batch size, `n_anc = 20`, was chosen by measuring ESS per second on the hardest cell of the paper's grid ($n = 5000$,
# $d = 5$, $\epsilon = 0.25$) with and without the screen: larger batches gave no more, since a batch then samples
# $\boldsymbol\theta \mid w$ well and $w$ is renewed only by the sweep.

# %%
#| export
_CUBE_FLOOR = 1e-6          # the ancillary map is used only where every G^(1/3) >= 1e-6 times its mean (both ends)


@njit(cache=True, nogil=True)
def _cube_root_moments(alpha):
    """Mean and sd of G^(1/3), G ~ Gamma(alpha_j), per component (exact, from log-gamma ratios)."""
    d = alpha.size
    m = np.empty(d)
    s = np.empty(d)
    for j in range(d):
        lg = math.lgamma(alpha[j])
        m[j] = math.exp(math.lgamma(alpha[j] + 1.0 / 3.0) - lg)
        s[j] = math.sqrt(max(math.exp(math.lgamma(alpha[j] + 2.0 / 3.0) - lg) - m[j] * m[j], 0.0))
    return m, s

# %%
#| export
_CHUNK = 64                 # factors per product in sum_log ...
_MODERATE = 1e-4            # ... each within [1e-4, 1e4], so that no partial product of 64 leaves 1e+-256


@njit(cache=True, nogil=True, fastmath=True)
def _chunk_product(v, i0, i1):
    """(prod v[i0:i1], min, max), in any order of multiplication (fastmath lets the loop vectorise)."""
    P = 1.0
    lo = np.inf
    hi = -np.inf
    for i in range(i0, i1):
        P *= v[i]
        lo = min(lo, v[i])
        hi = max(hi, v[i])
    return P, lo, hi


@njit(cache=True, nogil=True)
def sum_log(v, i0, i1):
    """sum(log(v[i0:i1])) for v > 0: one logarithm per 64 factors, a logarithm each in a chunk with an extreme factor."""
    out = 0.0
    while i0 < i1:
        k = min(i0 + _CHUNK, i1)
        P, lo, hi = _chunk_product(v, i0, k)
        if lo >= _MODERATE and hi <= 1.0 / _MODERATE:
            out += math.log(P)
        else:
            for i in range(i0, k):
                out += math.log(v[i])
        i0 = k
    return out

# %%
#| export
@njit(cache=True, nogil=True)
def _ancillary_state_terms(alpha, m, s, Lc, Gs, C, n_rec, theta, kind, shape, rate, prec, s_L, inv_scale, mb):
    """log of the extended target at (alpha, G) from its sums: F of step (iv), up to a constant."""
    out = prior_logpdf_kernel(alpha, kind, shape, rate, prec)
    for j in range(alpha.size):
        out += (theta[j] + 3.0 * (alpha[j] - 1.0 / 3.0) * Lc[j] - Gs[j]
                - n_rec * (math.lgamma(alpha[j]) - math.log(s[j])))
    for b in range(mb.size):
        for j in range(alpha.size):
            out -= abs(s_L[b, j] - C[b, j] / mb[b]) * inv_scale[b]
    return out


@njit(cache=True, nogil=True, fastmath=True)
def _affine_cubes(c, c_new, A, B, T, first):
    """c_new = A + B c and T += c_new^3 (T = c_new^3 if first); returns (min c_new, sum c_new^3)."""
    lo = np.inf
    gs = 0.0
    for i in range(c.size):
        x = A + B * c[i]
        c_new[i] = x
        g = x * x * x
        gs += g
        lo = min(lo, x)
        T[i] = g if first else T[i] + g
    return lo, gs


@njit(cache=True, nogil=True, fastmath=True)
def _n_censored(c, aT, i0, i1):
    """How many i in [i0, i1) have c_i^3 <= aT_i (the record's x = c^3 / T at or below a)."""
    k = 0
    for i in range(i0, i1):
        k += 1 if c[i] * c[i] * c[i] <= aT[i] else 0
    return k


@njit(cache=True, nogil=True)
def _ancillary_map_sums(c, m, s, m_new, s_new, starts, a, log_a, c_new, T, Lc_new, Gs_new, C_new):
    """Move every entry to c' = m' + s'(c - m)/s (into c_new) and take the sums F needs; False outside the domain.

    c and c_new are (d, N): component by component; T is scratch of N.
    """
    d = c.shape[0]
    for j in range(d):
        B = s_new[j] / s[j]
        lo, Gs_new[j] = _affine_cubes(c[j], c_new[j], m_new[j] - B * m[j], B, T, j == 0)
        if lo < _CUBE_FLOOR * m_new[j]:
            return False
    Lc_new[:] = 0.0
    for b in range(starts.size - 1):    # sum_i max(log x'_ij, log a) = 3 sum log c'_ij - sum log T_i, uncensored
        i0, i1 = starts[b], starts[b + 1]
        LT = sum_log(T, i0, i1)
        for j in range(d):
            Lb = sum_log(c_new[j], i0, i1)
            Lc_new[j] += Lb
            C_new[b, j] = 3.0 * Lb - LT
    for i in range(T.size):
        T[i] *= a
    for b in range(starts.size - 1):    # where x'_ij <= a: log a in place of log x'_ij
        i0, i1 = starts[b], starts[b + 1]
        for j in range(d):
            cj = c_new[j]
            if _n_censored(cj, T, i0, i1) > 0:
                for i in range(i0, i1):
                    if cj[i] * cj[i] * cj[i] <= T[i]:
                        C_new[b, j] += log_a - 3.0 * math.log(cj[i]) + math.log(T[i] / a)
    return True

# %%
#| export
@njit(cache=True, nogil=True)
def _ancillary_surrogate(theta, delta, mb, s_L, inv_scale, kind, shape, rate, prec):
    """F~(theta), the first stage's target: F without the Dirichlet terms, C_bj by m_b E[log x_j] + delta_bj."""
    alpha = np.exp(theta)
    out = prior_logpdf_kernel(alpha, kind, shape, rate, prec)
    mu = logx_mean_kernel(alpha)       # E[log x_j | alpha] = psi(alpha_j) - psi(alpha_0)
    for j in range(alpha.size):
        out += theta[j]
        for b in range(mb.size):
            out -= abs(s_L[b, j] - mu[j] - delta[b, j] / mb[b]) * inv_scale[b]
    return out

# %%
#| export
@njit(cache=True, nogil=True)
def ancillary_batch_kernel(theta, logx, starts, s_L, log_a, inv_scale, prop_chol, n_prop, theta_bar, kind, shape,
                            rate, prec, c, c_new, rng):
    """n_prop proposals of the ancillary move at one draw of the auxiliary sums S_i, with delayed acceptance, in place.

    theta += prop_chol xi with the records at fixed cube-root scores; a proposal is screened by the
    surrogate F~ (censored sums from the scores moved to theta_bar) before the exact ratio. logx
    holds the log records of every block (block b: rows starts[b]:starts[b+1]); c and c_new are
    contiguous scratch of its size (used as d x N). Returns the number of accepted proposals.
    """
    n_rec, d = logx.shape
    c = c.reshape((d, n_rec))
    c_new = c_new.reshape((d, n_rec))
    T = np.empty(n_rec)
    k = starts.size - 1
    mb = np.empty(k)
    for b in range(k):
        mb[b] = starts[b + 1] - starts[b]
    alpha = np.exp(theta)
    m, s = _cube_root_moments(alpha)
    a = math.exp(log_a)
    a0 = alpha.sum()
    # the auxiliary S_i ~ Gamma(alpha_0) (exact conditional), G_ij = x_ij S_i kept as c = G^(1/3), and the sums
    Lc = np.zeros(d)                    # sum_i log c_ij
    Gs = np.zeros(d)                    # sum_i G_ij
    C = np.zeros((k, d))                # sum_i max(log x_ij, log a), per block
    inside = True
    for b in range(k):
        for i in range(starts[b], starts[b + 1]):
            log_s = log_std_gamma_kernel(a0, rng)
            for j in range(d):
                lc = (logx[i, j] + log_s) / 3.0
                c[j, i] = math.exp(lc)
                Lc[j] += lc
                Gs[j] += c[j, i] * c[j, i] * c[j, i]
                C[b, j] += max(logx[i, j], log_a)
                inside = inside and c[j, i] >= _CUBE_FLOOR * m[j]
    for j in range(d):
        inside = inside and s[j] > 0.0
    if not inside:                      # outside the domain where the map is kept exact: every proposal refused
        return 0
    F = _ancillary_state_terms(alpha, m, s, Lc, Gs, C, n_rec, theta, kind, shape, rate, prec, s_L, inv_scale, mb)
    Lc_new = np.empty(d)
    Gs_new = np.empty(d)
    C_new = np.empty((k, d))
    # the surrogate's offsets: the scores moved to theta_bar (a function of the scores alone, which no move changes)
    delta = np.zeros((k, d))
    alpha_bar = np.exp(theta_bar)
    m_bar, s_bar = _cube_root_moments(alpha_bar)
    ok = True
    for j in range(d):
        ok = ok and s_bar[j] > 0.0 and -30.0 <= theta_bar[j] <= 30.0
    if ok and _ancillary_map_sums(c, m, s, m_bar, s_bar, starts, a, log_a, c_new, T, Lc_new, Gs_new, C_new):
        mu_bar = logx_mean_kernel(alpha_bar)
        for j in range(d):
            for b in range(k):
                delta[b, j] = C_new[b, j] - mb[b] * mu_bar[j]
    F1 = _ancillary_surrogate(theta, delta, mb, s_L, inv_scale, kind, shape, rate, prec)
    xi = np.empty(d)
    accepted = 0
    for _ in range(n_prop):
        for j in range(d):
            xi[j] = rng.standard_normal()
        theta_new = theta + prop_chol @ xi
        ok = True
        for j in range(d):
            ok = ok and -30.0 <= theta_new[j] <= 30.0
        if not ok:
            continue
        F1_new = _ancillary_surrogate(theta_new, delta, mb, s_L, inv_scale, kind, shape, rate, prec)
        log_r1 = F1_new - F1            # stage 1: the surrogate alone, O(d)
        if not log_r1 == log_r1:
            continue
        if not (log_r1 >= 0.0 or rng.standard_exponential() > -log_r1):
            continue
        alpha_new = np.exp(theta_new)
        m_new, s_new = _cube_root_moments(alpha_new)
        for j in range(d):
            ok = ok and s_new[j] > 0.0
        if not (ok and _ancillary_map_sums(c, m, s, m_new, s_new, starts, a, log_a, c_new, T, Lc_new, Gs_new,
                                           C_new)):
            continue
        F_new = _ancillary_state_terms(alpha_new, m_new, s_new, Lc_new, Gs_new, C_new, n_rec, theta_new, kind,
                                       shape, rate, prec, s_L, inv_scale, mb)
        log_r = F_new - F - log_r1     # stage 2: the exact ratio over the surrogate's
        if not log_r == log_r:
            continue
        if log_r >= 0.0 or rng.standard_exponential() > -log_r:
            accepted += 1
            theta[:] = theta_new
            m, s, F, F1 = m_new, s_new, F_new, F1_new
            c, c_new = c_new, c
            Lc[:] = Lc_new
            Gs[:] = Gs_new
            C[:] = C_new
    if accepted > 0:                    # the new records x' = G' / sum_j G'_j, in logs
        for i in range(n_rec):
            tot = 0.0
            for j in range(d):
                tot += c[j, i] * c[j, i] * c[j, i]
            log_tot = math.log(tot)
            for j in range(d):
                logx[i, j] = 3.0 * math.log(c[j, i]) - log_tot
    return accepted

# %%
#| export
def ancillary_batch_reference(theta, logx, starts, s_L, log_a, inv_scale, prop_chol, n_prop, theta_bar,
                               prior_logpdf, rng, jacobian=True):
    """NumPy twin of `ancillary_batch_kernel` (same stream, same result), in place; prior_logpdf(alpha) in Python.

    ``jacobian=False`` leaves out the map's Jacobian prod (s'/s)(c'/c)^2: a wrong variant for the checks.
    """
    n_rec, d = logx.shape
    blocks = [slice(starts[b], starts[b + 1]) for b in range(len(starts) - 1)]
    mb = np.array([sl.stop - sl.start for sl in blocks], dtype=float)

    def moments(al):
        m = np.exp(special.gammaln(al + 1 / 3) - special.gammaln(al))
        return m, np.sqrt(np.maximum(np.exp(special.gammaln(al + 2 / 3) - special.gammaln(al)) - m**2, 0.0))

    def censored_sums(y):
        return np.array([np.maximum(y[sl], log_a).sum(axis=0) for sl in blocks])

    def log_target(th, lG, s):          # log density of (theta, G), with the map's Jacobian as a factor of s
        al = np.exp(th)
        y = lG - special.logsumexp(lG, axis=1, keepdims=True)
        lap = (np.abs(s_L - censored_sums(y) / mb[:, None]).sum(axis=1) * inv_scale).sum()
        jac = np.log(s).sum() * n_rec + (2 / 3) * lG.sum() if jacobian else 0.0
        return (((al - 1) * lG - np.exp(lG)).sum() - n_rec * special.gammaln(al).sum() + jac
                + prior_logpdf(al) + th.sum() - lap)

    def surrogate(th, delta):
        al = np.exp(th)
        mu = special.digamma(al) - special.digamma(al.sum())
        return prior_logpdf(al) + th.sum() - (np.abs(s_L - mu - delta / mb[:, None]).sum(axis=1) * inv_scale).sum()

    al = np.exp(theta)
    log_s = np.empty(n_rec)
    for i in range(n_rec):                              # one auxiliary draw per record, in the kernel's order
        log_s[i] = (np.log(rng.standard_gamma(al.sum() + 1.0)) - rng.standard_exponential() / al.sum()
                    if al.sum() < 1.0 else np.log(rng.standard_gamma(al.sum())))
    lG = logx + log_s[:, None]                          # log G_ij, G_ij = x_ij S_i
    m, s = moments(al)
    if np.any(s <= 0) or np.any(np.exp(lG / 3) < _CUBE_FLOOR * m):
        return 0
    delta = np.zeros((len(blocks), d))
    m_bar, s_bar = moments(np.exp(theta_bar))
    if np.all(s_bar > 0) and np.all(np.abs(theta_bar) <= 30.0):
        c_bar = m_bar + s_bar * (np.exp(lG / 3) - m) / s
        if np.all(c_bar >= _CUBE_FLOOR * m_bar):
            lG_bar = 3 * np.log(c_bar)
            al_bar = np.exp(theta_bar)
            delta = censored_sums(lG_bar - special.logsumexp(lG_bar, axis=1, keepdims=True)) - mb[:, None] * (
                special.digamma(al_bar) - special.digamma(al_bar.sum()))
    accepted = 0
    for _ in range(n_prop):
        th_new = theta + prop_chol @ rng.standard_normal(d)
        if np.any(np.abs(th_new) > 30.0):
            continue
        log_r1 = surrogate(th_new, delta) - surrogate(theta, delta)
        if not (log_r1 >= 0.0 or rng.standard_exponential() > -log_r1):
            continue
        m_new, s_new = moments(np.exp(th_new))
        if np.any(s_new <= 0):
            continue
        c_new = m_new + s_new * (np.exp(lG / 3) - m) / s
        if np.any(c_new < _CUBE_FLOOR * m_new):
            continue
        lG_new = 3 * np.log(c_new)
        log_r = log_target(th_new, lG_new, s_new) - log_target(theta, lG, s) - log_r1
        if log_r >= 0.0 or rng.standard_exponential() > -log_r:
            accepted += 1
            theta[:], lG, m, s = th_new, lG_new, m_new, s_new
    if accepted:
        logx[:] = lG - special.logsumexp(lG, axis=1, keepdims=True)
    return accepted


# %% [markdown]
# ## One iteration: the moves combined
#
# A chain's state is $\boldsymbol\theta = \log\boldsymbol\alpha$ and the latent $\log\mathbf x_i$ of every block, stacked in one
# array (block $k$ owns rows `starts[k]:starts[k+1]`). An iteration is (i) `n_slice` slice cycles for
# $\boldsymbol\alpha$ given the statistic $\mathbf s = (\mathbf T_0 + \sum_k p_k\mathbf T_k)/n_{\mathrm{eff}}$, where $\mathbf T_k$ is the sum
# of $\log\mathbf x_i$ over block $k$, $p_k$ its power, $\mathbf T_0 = n_0 S_0$ an exact part (MCMC$_{p1}$ only) and
# $n_{\mathrm{eff}} = n_0 + \sum_k p_k m_k$; then, where $\boldsymbol\alpha$ and the records have one joint law (DPMCMC), a batch of
# `n_anc = 20` ancillary proposals (iv) at one draw of the auxiliary sums, or, when the warm-up has switched (iv) off (it is nearly always refused, e.g. for
# $\alpha_j \ll 1$), one scale and one shift proposal (iii); then (ii) one sweep over each block. Each `thin`-th state is
# stored, with the acceptance rates and the number of slice evaluations averaged over the thinning window. (Steps
# (iii) and (iv), and the batch size, were chosen by measuring ESS per second on the hardest cell of the paper's grid,
# $n = 5000$, $d = 5$: see *Delayed acceptance* above.) `dp_mcmc` and the other samplers of notebook 21 run chains of
# such iterations through `dplit.sampling`.

# %%
#| export
@njit(cache=True, nogil=True)
def chain_kernel(theta, logx, starts, T, s_L, log_a, inv_scale, power, mode,
                  T0, n0, n_iter, thin, n_slice, width, chol, chol_inv, n_joint, step_u, step_shift, dshift,
                  n_anc, anc_chol, anc_centre, kind, shape, rate, prec, rng):
    """Run n_iter iterations (slice cycles for alpha, joint and ancillary moves, one sweep per block), in place.

    Each iteration makes n_joint scale proposals (step_u) and n_joint shift proposals (step_shift,
    dshift) of the joint move, then n_anc ancillary proposals (anc_chol; surrogate centred at anc_centre) at one
    auxiliary draw. Returns (draws
    (n_iter // thin, d), record acceptance rate, slice evaluations per iteration, acceptance rates
    of the scale, shift and ancillary moves).
    """
    d = theta.size
    k = starts.size - 1
    n_save = n_iter // thin
    draws = np.empty((n_save, d))
    acc = np.zeros(n_save)
    evals = np.zeros(n_save)
    scale_acc = np.zeros(n_save)
    shift_acc = np.zeros(n_save)
    anc_acc = np.zeros(n_save)
    n_eff = n0
    for b in range(k):
        n_eff += power[b] * (starts[b + 1] - starts[b])
    n_rec = starts[k] - starts[0]
    buf = np.empty_like(logx) if n_joint + n_anc > 0 else np.empty((0, d))
    buf2 = np.empty_like(logx) if n_anc > 0 else np.empty((0, d))
    s = np.empty(d)
    for it in range(n_save * thin):
        for j in range(d):
            s[j] = T0[j]
            for b in range(k):
                s[j] += power[b] * T[b, j]
            s[j] /= n_eff
        ne = slice_kernel(theta, n_slice, width, chol, chol_inv, s, n_eff, kind, shape, rate, prec, rng)
        n_sc = 0
        n_sh = 0
        for _ in range(n_joint):
            n_sc += joint_move_kernel(theta, logx, starts, s_L, log_a, inv_scale, step_u, 0.0, dshift, kind, shape,
                                       rate, prec, buf, rng)
            n_sh += joint_move_kernel(theta, logx, starts, s_L, log_a, inv_scale, 0.0, step_shift, dshift, kind,
                                       shape, rate, prec, buf, rng)
        n_an = 0
        if n_anc > 0:
            n_an = ancillary_batch_kernel(theta, logx, starts, s_L, log_a, inv_scale, anc_chol, n_anc, anc_centre,
                                           kind, shape, rate, prec, buf, buf2, rng)
        alpha = np.exp(theta)
        n_acc = 0
        for b in range(k):
            alpha_prop, coef = sweep_arguments(alpha, power[b], mode)
            a_b, T_b, _ = record_sweep_kernel(logx[starts[b]:starts[b + 1]], alpha_prop, coef,
                                               s_L[b], log_a, inv_scale[b], rng)
            n_acc += a_b
            T[b] = T_b
        slot = it // thin
        if n_rec > 0:
            acc[slot] += n_acc / n_rec / thin
        if n_joint > 0:
            scale_acc[slot] += n_sc / n_joint / thin
            shift_acc[slot] += n_sh / n_joint / thin
        if n_anc > 0:
            anc_acc[slot] += n_an / n_anc / thin
        evals[slot] += ne / thin
        if (it + 1) % thin == 0:
            draws[slot] = alpha
    return draws, acc, evals, scale_acc, shift_acc, anc_acc


# %% [markdown]
# ## When to use this
#
# Never directly: `dp_mcmc`, `dp_remcmc` and `mcmc` (notebook 21) build the blocks, adapt the steps in the warm-up and
# call `chain_kernel`. Read this notebook to see what one iteration does, or before changing a move: each kernel must
# keep agreeing with its twin and keep its invariant law (both checked in notebook 73; `tests/test_mcmc.py` repeats
# the checks).
