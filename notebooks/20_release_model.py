# %% [markdown]
# # The model of a release: checks, prior, likelihood blocks, chain start
#
# What the samplers of a Dirichlet release share (DPMCMC and DPreMCMC in notebook 21, DPABC in 22, DPapprox in 23): the release checked, the prior resolved (Guo et al., Table 1), the release's latent blocks and the chain specification built from them, the posterior mode of eq. (1), the slice map, and where a chain starts.
#
# Reading order: the moves of notebook 19 read no release; this notebook turns a release into what they read. The
# target these pieces serve, eq. (1)-(5), is derived in notebook 21.

# %%
#| default_exp _release_model

# %% [markdown]
# ## Parameters
#
# One data set in the setting of the simulation study (Guo et al., Sec. 5.1: $\boldsymbol\alpha^{true} = (2.2, 3.3, 4.4)$,
# $n = 1000$), released by Algorithm 1 (notebook 15) once unsplit and once split ($n_1 = 250$). The last check draws
# chain starts; how many follows the size switch (`DPLIT_QUICK=1` gives the test suite's number).

# %%
import numpy as np
from IPython.display import Markdown, display
from scipy import special

from dplit.config import is_quick, size
from dplit.dirichlet import dirichlet_draws, in_stat_range, sufficient_stat
from dplit.dirichlet_fit import dirichlet_mle
from dplit.priors import PRIOR_GAMMA, DrawsPrior
from dplit.release import release

SEED = 20261120
rng = np.random.default_rng(SEED)
n_starts = size(full=1000, quick=200)      # chain starts drawn per rule in the last check
alpha_true = np.array([2.2, 3.3, 4.4])
candidates = [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6]
X = dirichlet_draws(alpha_true, 1000, rng=rng)
rel = release(X, eps1=1.0, eps2=0.25, candidates=candidates, tc=0.01, rng=rng, secure=False)
rel_split = release(X, eps1=0.75, eps2=0.25, candidates=candidates, tc=0.01, n1=250, rng=rng, secure=False)
print(f"quick mode: {is_quick()}; n_starts = {n_starts}")


def raises(exc, fn, *args, match=None, **kwargs):
    """True when fn(*args, **kwargs) raises exc (with `match` in the message)."""
    try:
        fn(*args, **kwargs)
    except exc as err:
        return match is None or match in str(err)
    return False


# %% [markdown]
# ## The release
#
# Every sampler of this part takes the curator's record, a `dplit.release.Release` (notebooks 14-15): the released
# statistic $\mathbf s_L$ (and $\mathbf s_L^{(1)}$ of $\mathbf D_1$ when the data were split), $n$, $n_1$, the threshold $a$
# and $\epsilon_1$; `release.part(name)` gives the released statistic, the records and the Laplace scale of one part.
# Anything else is refused at once, with a message that says what is expected, rather than deep inside a chain.

# %%
#| export
from dataclasses import dataclass

import numpy as np
from scipy import special

from dplit._mcmc_moves import UPDATE_JU
from dplit.bootstrap import truncated_statistic
from dplit.priors import PRIOR_NAMES, GammaPrior, KernelForm, Prior, make_prior
from dplit.release import Release


def check_release(release):
    """The release must be a dplit.release.Release (the Dirichlet model's curator output)."""
    if not isinstance(release, Release):
        raise TypeError("release must be a dplit.release.Release (the censored-statistic release of the "
                        f"Dirichlet model, Guo et al. Alg. 1), got {type(release).__name__}")
    return release


# %%
assert check_release(rel) is rel and check_release(rel_split) is rel_split
assert raises(TypeError, check_release, {"s_L": rel.s_L}, match="got dict")
assert raises(TypeError, check_release, rel.s_L, match="dplit.release.Release")
print(rel.summary(), rel_split.summary(), sep="\n")

# %% [markdown]
# ## The prior (Guo et al., Sec. 4.2.1, Table 1)
#
# A sampler that evaluates the prior's density (DPMCMC, DPreMCMC, DPapprox) reads it inside numba, as the prior's
# `KernelForm` (notebook 18). The prior comes by name or as a `dplit.priors.Prior`, and it decides which released
# parts are latent blocks (next section) and so what the target is:
#
# | release | prior | latent blocks | target |
# |---|---|---|---|
# | unsplit | p1 or a Prior object | $\mathbf D$ | $\pi(\boldsymbol\alpha \mid \mathbf s_L)$ |
# | split | p1 (or a Prior named p1) | $\mathbf D_1$ and $\mathbf D_2$ | $\pi_{p1}(\boldsymbol\alpha \mid \mathbf s^{(1)}_L, \mathbf s^{(2)}_L)$ |
# | split | p5 | $\mathbf D_1$ and $\mathbf D_2$ under p1 | the same |
# | split | p3, p4 or another Prior object | $\mathbf D_2$ | $\pi(\boldsymbol\alpha \mid \mathbf s^{(2)}_L, \mathbf s^{(1)}_L)$ (model 4) |
# | any | p2 | refused: it has no density (use p3/p4, fitted to it, or `dp_abc`) | |
#
# p5 is the p1 posterior given $\mathbf s_L^{(1)}$, known only through draws. Since $\mathbf D_1$ and $\mathbf D_2$ are
# independent given $\boldsymbol\alpha$ and carry independent noise, $\pi_{p5}(\boldsymbol\alpha)\,p(\mathbf s_L^{(2)} \mid \boldsymbol\alpha)
# \propto \pi_{p1}(\boldsymbol\alpha)\,p(\mathbf s_L^{(1)} \mid \boldsymbol\alpha)\,p(\mathbf s_L^{(2)} \mid \boldsymbol\alpha)$: under p5 a
# sampler runs p1 with both parts latent (notebook 21). `resolve_prior` returns the prior object and whether both
# parts are used, `kernel_form_of` the prior's kernel form, `prior_name` the name the result's attributes record.
# DPABC needs prior draws, not a density, and resolves its priors itself (notebook 22).

# %%
#| export
def prior_name(prior):
    """Name of a prior argument for the attrs."""
    return prior if isinstance(prior, str) else str(getattr(prior, "name", type(prior).__name__))


def resolve_prior(prior, release, d, rng):
    """Return (prior object, use both parts) for a name or a Prior object (see the table above)."""
    if isinstance(prior, str):
        name = prior.lower()
        if name not in PRIOR_NAMES:
            raise ValueError(f"prior must be one of {PRIOR_NAMES} or a Prior object, got {prior!r}")
        if name == "p2":
            raise ValueError("prior 'p2' (the DPBoots law) has no density, which MCMC needs: use p3 or p4 "
                             "(fitted to it), or an ABC sampler")
        if name in ("p1", "p5"):
            if name == "p5" and (release is None or not release.split):
                raise ValueError("prior 'p5' needs a split release (n1 > 0): it is the posterior given S_L(D1)")
            return GammaPrior(1.0, 0.1, d=d, name="p1"), True
        if release is None or not release.split:
            raise ValueError(f"prior {name!r} is fitted to S_L(D1): it needs a split release (n1 > 0)")
        return make_prior(name, release, rng=rng), False
    if isinstance(prior, Prior) and not prior.has_density:
        raise ValueError(f"prior {prior.name!r} is known only through draws and has no density, which MCMC "
                         "needs (for p5 pass prior='p5': DPMCMC_p5 is DPMCMC_p1 on both parts)")
    return prior, str(getattr(prior, "name", "")) == "p1"


def kernel_form_of(prior, d):
    """The prior's KernelForm (it states its own log density for the kernel; see notebook 18)."""
    if not isinstance(prior, Prior):
        raise TypeError(f"prior must be a name in {PRIOR_NAMES} or a dplit.priors.Prior, "
                        f"got {type(prior).__name__}")
    if prior.d != d:
        raise ValueError(f"prior has d = {prior.d} components, the release has d = {d}")
    return prior.kernel_form()


# %% [markdown]
# Checks: each row of the table, each refusal, and the kernel form of a fitted prior.

# %%
p1, both = resolve_prior("p1", rel_split, 3, rng)
assert isinstance(p1, GammaPrior) and p1.name == "p1" and both
p5_as_p1, both5 = resolve_prior("P5", rel_split, 3, rng)          # names are case-insensitive
assert p5_as_p1.name == "p1" and both5
p3, both3 = resolve_prior("p3", rel_split, 3, np.random.default_rng(3))
assert p3.name == "p3" and not both3
vague = GammaPrior(1.0, 0.01, d=3, name="vague")
assert resolve_prior(vague, rel_split, 3, rng) == (vague, False)
assert resolve_prior(GammaPrior(1.0, 0.1, d=3, name="p1"), rel_split, 3, rng)[1]     # a Prior named p1
assert raises(ValueError, resolve_prior, "p2", rel_split, 3, rng, match="no density")
assert raises(ValueError, resolve_prior, "p6", rel_split, 3, rng, match="one of")
assert raises(ValueError, resolve_prior, "p3", rel, 3, rng, match="split release")
assert raises(ValueError, resolve_prior, "p5", rel, 3, rng, match="split release")
draws_only = DrawsPrior(np.random.default_rng(4).gamma(2.0, 1.0, size=(100, 3)), name="p5")
assert raises(ValueError, resolve_prior, draws_only, rel_split, 3, rng, match="only through draws")

form = kernel_form_of(p3, 3)
assert form.kind == PRIOR_GAMMA and np.array_equal(form.shape, p3.shape) and np.array_equal(form.rate, p3.rate)
assert raises(ValueError, kernel_form_of, p3, 4, match="d = 3")
assert raises(TypeError, kernel_form_of, "p3", 3, match="dplit.priors.Prior")
assert prior_name("p3") == "p3" and prior_name(vague) == "vague"
print(p3)

# %% [markdown]
# ## The latent blocks of a release
#
# Each released part that a sampler treats as latent is a **block**: its released statistic $\mathbf s_L^{(k)}$, the
# number $n_k$ of records behind it, the number $m_k$ of latent records the chain carries, and its Laplace scale
# $b_k = -d\log(a)/(n_k\epsilon_1)$. DPMCMC carries every record ($m_k = n_k$); DPreMCMC carries $m_k = \min(b, n_k)$,
# each with the power $n_k/m_k$ (model 5); DPapprox carries none and reads $n_k$ and $b_k$. An unsplit release is one
# block (its part `"D2"` is then the whole data set, $n_2 = n$); a split one is two blocks under p1 and p5, else the
# block of $\mathbf D_2$ alone.

# %%
#| export
def release_blocks(release, both, b=None):
    """Latent blocks (s_L, records in the model, latent records, Laplace scale) for a release."""
    parts = ["D1", "D2"] if (release.split and both) else ["D2"]
    out = []
    for part in parts:
        s_L, n_part, scale = release.part(part)
        m = n_part if b is None else min(b, n_part)
        out.append((np.asarray(s_L, dtype=float), n_part, m, scale))
    return out


# %%
(block,) = release_blocks(rel, True)                 # unsplit: one block, whatever `both` says
assert np.array_equal(block[0], rel.s_L) and block[1] == block[2] == rel.n
assert np.isclose(block[3], -3 * np.log(rel.a) / (rel.n * rel.eps1))
two = release_blocks(rel_split, True, b=50)
assert [(n_k, m_k) for _, n_k, m_k, _ in two] == [(250, 50), (750, 50)]
assert np.array_equal(two[0][0], rel_split.s_L1) and two[0][3] == rel_split.scale1 and two[1][3] == rel_split.scale
assert [blk[1] for blk in release_blocks(rel_split, False)] == [750]
assert release_blocks(rel_split, False, b=10_000)[0][2] == 750      # b above n_k: every record

# %% [markdown]
# ## The chain specification
#
# `ChainSpec` is what a chain of notebook 19's moves needs, as arrays numba reads: per block the released statistic
# (stacked, $(k, d)$), $m_k$, the power $n_k/m_k$ and $1/b_k$; $\log a$; an exact part, $n_0$ records with statistic
# $\mathbf T_0/n_0$ seen without noise (MCMC$_{p1}$'s; none for a release); the prior's `KernelForm`; and the sampler's
# settings (slice cycles, box width, the record update, the numbers of joint and ancillary proposals). Three
# quantities follow: `d`; `n_eff` $= n_0 + \sum_k (n_k/m_k)\,m_k$, the records the $\boldsymbol\alpha$-update sees ($n$ for DPMCMC
# and DPreMCMC alike); and `joint`, true when $\boldsymbol\alpha$ and the records have one joint law (latent blocks, every power 1,
# Ju's update), which steps (iii) and (iv) need. `init_s`, the blocks' statistics weighted by $n_k$, starts MCMC$_{p1}$'s
# chains; the chains of a release draw their own start (the last section).

# %%
#| export
@dataclass
class ChainSpec:
    """What a chain needs: latent blocks, the exact part, the prior's kernel form and sampler settings."""

    s_L: np.ndarray          # (k, d) released statistic of each latent block
    m: np.ndarray            # (k,) latent records per block
    power: np.ndarray        # (k,) power of each latent record's density (n_block / m)
    inv_scale: np.ndarray    # (k,) 1 / Laplace scale of each block's release
    log_a: float
    T0: np.ndarray           # (d,) n0 * exact statistic; zeros when there is none
    n0: float
    prior: KernelForm        # the prior's log density as the kernel reads it
    init_s: np.ndarray       # statistic whose posterior mode starts every chain (MCMC; DP chains draw one)
    n_slice: int = 20
    width: float = 3.0
    mode: int = UPDATE_JU
    n_joint: int = 1         # scale and shift proposals (step iii) per iteration, when step (iv) is off
    n_anc: int = 20          # ancillary proposals (step iv) per iteration, where a joint law exists

    @property
    def joint(self):
        """True when (alpha, records) have one joint law (every power 1, Ju's update): step (iii) applies."""
        return self.m.size > 0 and self.mode == UPDATE_JU and bool(np.all(self.power == 1.0))

    @property
    def d(self):
        return self.prior.shape.size

    @property
    def n_eff(self):
        return float(self.n0 + np.sum(self.power * self.m))


def spec_from_blocks(blocks, a, form, n_slice, mode=UPDATE_JU):
    """Build the chain specification from blocks and the prior's KernelForm."""
    d = form.shape.size
    s_L = np.array([blk[0] for blk in blocks])
    n_part = np.array([blk[1] for blk in blocks], dtype=float)
    m = np.array([blk[2] for blk in blocks], dtype=np.int64)
    init_s = (n_part[:, None] * s_L).sum(axis=0) / n_part.sum()
    return ChainSpec(s_L=s_L, m=m, power=n_part / m, inv_scale=np.array([1.0 / blk[3] for blk in blocks]),
                     log_a=float(np.log(a)), T0=np.zeros(d), n0=0.0, prior=form, init_s=init_s, n_slice=n_slice,
                     mode=mode)


# %%
form_p1 = p1.kernel_form()
spec_re = spec_from_blocks(two, rel_split.a, form_p1, 20)          # DPreMCMC, b = 50, both parts
assert spec_re.d == 3 and np.array_equal(spec_re.m, [50, 50]) and np.allclose(spec_re.power, [5.0, 15.0])
assert spec_re.n_eff == rel_split.n and not spec_re.joint           # powers above 1: no joint law
assert np.allclose(spec_re.init_s, (250 * rel_split.s_L1 + 750 * rel_split.s_L) / 1000)
assert np.allclose(1 / spec_re.inv_scale, [rel_split.scale1, rel_split.scale]) and spec_re.log_a == np.log(rel_split.a)
spec_dp = spec_from_blocks(release_blocks(rel, True), rel.a, form_p1, 20)   # DPMCMC on the unsplit release
assert spec_dp.joint and spec_dp.n_eff == rel.n and np.array_equal(spec_dp.init_s, rel.s_L)

# %% [markdown]
# ## The posterior mode of eq. (1)
#
# A chain starts near the posterior mode of $\boldsymbol\theta = \log\boldsymbol\alpha$ under eq. (1) (notebook 21) given a statistic
# $\mathbf s$ and `n_eff` $= n$ records, with the gamma part of the prior (shapes $\mathbf v$, rates $\mathbf w$; p4's copula factor is
# left out, a start need not be exact). In $\boldsymbol\theta$, with the Jacobian,
#
# $$f(\boldsymbol\theta) = n\Big[\log\Gamma(\alpha_0) - \sum_j\log\Gamma(\alpha_j)\Big] + n\sum_j(\alpha_j - 1)s_j
#   + \sum_j v_j\theta_j - \sum_j w_j\alpha_j, \qquad
#   \frac{\partial f}{\partial\theta_j} = \alpha_j\, n\big(\psi(\alpha_0) - \psi(\alpha_j) + s_j\big) + v_j - w_j\alpha_j .$$
#
# `mode_theta` runs a damped Newton iteration from $\boldsymbol\theta = 0$: the Newton step where the Hessian is negative
# definite, else a gradient step; each step is clipped to 2 per coordinate and halved until $f$ does not decrease. The
# result is clipped to $[-8, 8]$. Without a prior ($\mathbf v = \mathbf w = 0$) the mode is the MLE of notebook 10, which
# exists only for $\mathbf s$ inside $\mathrm{Range}(S_0) = \{\sum_j e^{s_j} < 1\}$; outside it, only the prior's rates hold
# $\alpha_0$ back, and the iteration runs off towards the clip.

# %%
#| export
def mode_theta(spec, s=None):
    """Posterior mode of log(alpha) under eq. (1) with the gamma part of the prior, given s (default spec.init_s).

    Damped Newton (gradient ascent where the Hessian is not negative definite); p4's copula factor is left out.
    """
    n, v, w = spec.n_eff, spec.prior.shape, spec.prior.rate
    s = spec.init_s if s is None else s

    def f(th):
        al = np.exp(th)
        return (n * (special.gammaln(al.sum()) - special.gammaln(al).sum()) + n * np.dot(al - 1, s)
                + np.dot(v, th) - np.dot(w, al))

    th = np.zeros(spec.d)
    f_th = f(th)
    for _ in range(200):
        al = np.exp(th)
        score = n * (special.digamma(al.sum()) - special.digamma(al) + s)
        grad = al * score + v - w * al
        hess = n * special.polygamma(1, al.sum()) * np.outer(al, al)
        hess[np.diag_indices_from(hess)] += al * score - w * al - n * al**2 * special.polygamma(1, al)
        try:
            np.linalg.cholesky(-hess)
            step = -np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            step = grad / max(1.0, np.abs(grad).max())
        step = np.clip(step, -2.0, 2.0)
        t = 1.0
        while t > 1e-8 and not f(th + t * step) >= f_th:
            t /= 2
        if t <= 1e-8:
            break
        th = th + t * step
        f_th = f(th)
        if np.max(np.abs(t * step)) < 1e-9:
            break
    return np.clip(th, -8.0, 8.0)


# %% [markdown]
# Checks: without a prior the mode is the MLE (`dplit.dirichlet_fit.dirichlet_mle`, a different algorithm); with p1 the
# gradient above vanishes at it.

# %%
s_X = sufficient_stat(X)                              # the confidential statistic, inside the range
flat = KernelForm(PRIOR_GAMMA, np.zeros(3), np.zeros(3), np.zeros((3, 3)), 0.0)     # no prior
spec_flat = spec_from_blocks([(s_X, 1000, 1000, 1.0)], 1e-6, flat, 20)
alpha_mle = np.exp(mode_theta(spec_flat))
assert np.allclose(alpha_mle, dirichlet_mle(s_X), rtol=1e-8)
spec_p1 = spec_from_blocks([(s_X, 1000, 1000, 1.0)], 1e-6, form_p1, 20)
al = np.exp(mode_theta(spec_p1))
grad = al * 1000 * (special.digamma(al.sum()) - special.digamma(al) + s_X) + form_p1.shape - form_p1.rate * al
assert np.abs(grad).max() < 1e-6
print(f"MLE {alpha_mle.round(3)}, p1 posterior mode {al.round(3)} (truth {alpha_true})")

# %% [markdown]
# ## The slice map
#
# Step (i) of notebook 19 slices in whitened coordinates $\boldsymbol\theta = L\mathbf z$, with $LL^\top$ the approximate covariance of
# $\boldsymbol\theta \mid \mathbf D$: the inverse of $n\,\mathrm{diag}(\boldsymbol\alpha)\,I(\boldsymbol\alpha)\,\mathrm{diag}(\boldsymbol\alpha) + \mathrm{diag}(w_j\alpha_j)$,
# where $I(\boldsymbol\alpha) = \mathrm{diag}(\psi_1(\alpha_j)) - \psi_1(\alpha_0)\mathbf 1\mathbf 1^\top$ is the Fisher information of one record. It
# is $-\nabla^2 f$ of the previous section without its diagonal term $-\alpha_j\,n(\psi(\alpha_0) - \psi(\alpha_j) + s_j)$
# ($\alpha_j$ times the likelihood's score), which vanishes at the MLE: there, without a prior, $LL^\top$ is exactly the
# inverse of the negative Hessian of the log-likelihood. DPapprox's random-walk proposal starts from the same map (notebook 23). `slice_transform` returns
# $L$ (lower triangular) and $L^{-1}$.

# %%
#| export
def slice_transform(alpha, spec):
    """Cholesky factor L (and L^-1) of the approximate covariance of log(alpha) | D."""
    fisher = np.diag(special.polygamma(1, alpha)) - special.polygamma(1, alpha.sum())
    prec = spec.n_eff * (alpha[:, None] * fisher * alpha[None, :])
    prec[np.diag_indices_from(prec)] += spec.prior.rate * alpha + 1e-9
    chol = np.linalg.cholesky(np.linalg.inv(prec))
    return chol, np.linalg.inv(chol)


# %% [markdown]
# Check: at the MLE, $LL^\top$ against the inverse of a finite-difference Hessian of the log-likelihood in $\boldsymbol\theta$.
# The correlations show why the box is whitened: $\log\boldsymbol\alpha$ moves mostly along the concentration.

# %%
L, L_inv = slice_transform(alpha_mle, spec_flat)


def loglik(th):
    a_ = np.exp(th)
    return 1000 * (special.gammaln(a_.sum()) - special.gammaln(a_).sum() + np.dot(a_ - 1, s_X))


h = 1e-3                                     # the step of the central differences
th0, E = np.log(alpha_mle), h * np.eye(3)
hess_fd = np.array([[(loglik(th0 + E[j] + E[k]) - loglik(th0 + E[j] - E[k]) - loglik(th0 - E[j] + E[k])
                      + loglik(th0 - E[j] - E[k])) / (4 * h * h) for k in range(3)] for j in range(3)])
assert np.allclose(L @ L.T, np.linalg.inv(-hess_fd), rtol=1e-4)
assert np.allclose(L, np.tril(L)) and np.allclose(L_inv @ L, np.eye(3))
cov = L @ L.T
print("correlations of log(alpha) | D:\n", (cov / np.sqrt(np.outer(np.diag(cov), np.diag(cov)))).round(3))

# %% [markdown]
# ## Where a chain starts
#
# Every chain starts near the mode of (1) at a statistic, dispersed by $0.3$ in $\log\boldsymbol\alpha$ (notebook 21): a chain of
# MCMC$_{p1}$ at its exact statistic, a chain from a release at a *plausible* statistic. The released $\mathbf s_L$ itself will not do:
# it often lies outside $\mathrm{Range}(S_0)$ (when the noise scale is comparable to the gap $1 - \sum_j e^{S_{0,j}}$), where
# the likelihood has no maximum and the mode runs off to a huge $\alpha_0$ (below); there the latent records drawn from the model
# are nearly identical, the record sweep keeps them so, and a chain can stay trapped for the whole run. So
# `start_statistic` replaces each block's $\mathbf s_L$ by the mean of $k = 4$ draws of $S_L - \varepsilon$ truncated to
# $\mathrm{Range}(S_0)$ (DPBoots step 1, notebook 17); the range is convex, so these means, and their mean over blocks
# weighted by $n_k$, lie in it. Why four, not one: a single truncated draw lands now and then in the corner of the range
# next to its boundary, where the mode has a huge $\alpha_0$, and a chain drifts back from there only slowly; the mean
# of four keeps the starts dispersed without those corner starts. The check below measures both on a release whose
# $\mathbf s_L$ lies outside the range.

# %%
#| export
def start_statistic(spec, rng, k=4):
    """The statistic whose posterior mode starts a chain: spec.init_s, or for latent blocks a plausible S0.

    Each block's s_L (often outside Range(S0), where (1) has no mode) is replaced by the mean of k draws of
    S_L - noise truncated to Range(S0) (DPBoots step 1, notebook 17); see notebook 20 for why k = 4.
    """
    if spec.m.size == 0:
        return spec.init_s
    weight = spec.power * spec.m
    draws = np.array([truncated_statistic(s_L, 1.0 / inv, k, rng=rng).mean(axis=0)
                      for s_L, inv in zip(spec.s_L, spec.inv_scale)])
    return (weight[:, None] * draws).sum(axis=0) / weight.sum()


# %% [markdown]
# Checks: an exact chain starts at its statistic. Then a release in the setting of Guo et al.'s S5 ($d = 5$,
# $\boldsymbol\alpha^{true} = (2.2, \dots, 6.6)$, $\epsilon = 0.25$, split) whose $\mathbf s^{(2)}_L$ lies outside the range: the mode at
# $\mathbf s_L$ itself, and that of `n_starts` starts from one truncated draw ($k = 1$) and from the mean of four.

# %%
exact = ChainSpec(s_L=np.zeros((0, 3)), m=np.zeros(0, dtype=np.int64), power=np.zeros(0), inv_scale=np.zeros(0),
                  log_a=0.0, T0=1000 * s_X, n0=1000.0, prior=form_p1, init_s=s_X)
assert start_statistic(exact, rng) is exact.init_s

g5 = np.random.default_rng(9)
X5 = dirichlet_draws(np.array([2.2, 3.3, 4.4, 5.5, 6.6]), 1000, rng=g5)
rel5 = release(X5, eps1=0.1875, eps2=0.0625, candidates=candidates[::-1], tc=0.01, n1=250, rng=g5, secure=False)
spec5 = spec_from_blocks(release_blocks(rel5, False), rel5.a, GammaPrior(1.0, 0.1, d=5).kernel_form(), 20)
assert not in_stat_range(rel5.s_L)
alpha0_at_s_L = np.exp(mode_theta(spec5)).sum()
starts = {k: np.array([start_statistic(spec5, np.random.default_rng(seed), k) for seed in range(n_starts)])
          for k in (1, 4)}
alpha0 = {k: np.array([np.exp(mode_theta(spec5, s)).sum() for s in st]) for k, st in starts.items()}
assert all(in_stat_range(s) for st in starts.values() for s in st)
assert alpha0_at_s_L > 5000 and alpha0[1].max() > 1000 and alpha0[4].max() < 200
spread = np.quantile(alpha0[4], 0.9) / np.quantile(alpha0[4], 0.1)
assert spread > 1.3                                                 # the starts stay dispersed
display(Markdown(
    f"Truth $\\alpha_0 = 22$. The mode at the released $\\mathbf s_L$: $\\alpha_0 = {alpha0_at_s_L:,.0f}$. Of {n_starts} starts "
    f"from one truncated draw, {np.mean(alpha0[1] > 1000):.1%} have $\\alpha_0 > 1000$, the largest "
    f"{alpha0[1].max():,.0f}; from the mean of four the largest is {alpha0[4].max():.0f}, and the 90th percentile "
    f"of $\\alpha_0$ is {spread:.1f} times the 10th."))
