# %% [markdown]
# # Is DPMCMC exact? Invariance of each move, the non-private limit, calibration
#
# * **For:** checking that the samplers of notebook 21 sample the posterior they claim: each move of notebook 19 leaves its target invariant, DPMCMC meets MCMC$_{p1}$ where privacy vanishes, and simulation-based calibration passes (and catches a planted error).
# * **You need:** nothing: every check simulates its own data (the demo data set is notebook 21's, `dplit.mcmc.demo_data()`).
# * **You get:** each check's statistic in the output and an assertion that fails the notebook (and the test suite) when it does not hold.

# %% [markdown]
# ## Parameters
#
# Sizes come from the size switch (`DPLIT_QUICK=1` gives the quick sizes of the test suite); every random draw comes
# from a generator seeded here.

# %%
# %matplotlib inline
import time

import arviz as az
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display
from scipy import integrate, special, stats

from dplit._mcmc_moves import (
    UPDATE_JU,
    UPDATE_MODEL5,
    UPDATE_MODEL5_POWERED,
    ancillary_batch_kernel,
    ancillary_batch_reference,
    joint_move_kernel,
    joint_move_reference,
    record_sweep_kernel,
    record_sweep_reference,
    slice_kernel,
    sweep_arguments,
)
from dplit.config import is_quick, size
from dplit.dirichlet import censored_stat, dirichlet_draws, log_dirichlet_draws_reference, sufficient_stat
from dplit.mcmc import _sbc_ranks, demo_data, dp_mcmc, dp_remcmc, mcmc
from dplit.priors import PRIOR_GAMMA, GammaPrior
from dplit.release import Release
from dplit.testing import sbc_check

SEED = 20261123
rng = np.random.default_rng(SEED)
n_sbc = size(full=1200, quick=600)        # simulation-based calibration replications
n_iter_demo = size(full=40_000, quick=3_000)
n_sweeps_check = size(full=200_000, quick=30_000)
n_geweke = size(full=20_000, quick=4_000)
print(f"quick mode: {is_quick()}; n_sbc = {n_sbc}, n_sweeps_check = {n_sweeps_check}, n_geweke = {n_geweke}")

# %% [markdown]
# ## Each kernel equals its twin
#
# Every kernel of notebook 19 has a NumPy twin written from the same equations: on the same random stream both must
# give the same draws, acceptances and sums. The record sweep, on 300 records with some $\alpha_j < 1$; the joint move
# (iii) on two blocks, with scale moves, shift moves and both together (the moved records must still be compositions);
# the ancillary batch (iv), with its surrogate centred near the state and far from it. Neither a trivial acceptance
# count (none or all accepted) nor a mismatch passes.

# %%
alpha_ex = np.array([0.5, 2.2, 3.3])
X_ex = dirichlet_draws(alpha_ex, 300, rng=rng)
L1_, L2_ = np.log(X_ex), np.log(X_ex)
sL_ex = censored_stat(X_ex, 1e-3) + 0.01
out_k = record_sweep_kernel(L1_, alpha_ex, np.zeros(3), sL_ex, np.log(1e-3), 1 / 0.02, np.random.default_rng(5))
out_r = record_sweep_reference(L2_, alpha_ex, np.zeros(3), sL_ex, np.log(1e-3), 1 / 0.02, np.random.default_rng(5))
assert out_k[0] == out_r[0] and np.allclose(L1_, L2_, atol=1e-12)
assert np.allclose(out_k[1], out_r[1]) and np.allclose(out_k[2], out_r[2])
assert np.allclose(out_k[1], L1_.sum(0)) and np.allclose(out_k[2], np.maximum(L1_, np.log(1e-3)).sum(0))

# %%
p1_tw = GammaPrior(1.0, 0.1, d=3)
form_tw = p1_tw.kernel_form()
alpha_tw = np.array([0.4, 2.2, 3.3])
logx_tw = np.log(dirichlet_draws(alpha_tw, 50, rng=rng))
starts_tw = np.array([0, 20, 50], dtype=np.int64)
sL_tw = np.array([censored_stat(np.exp(logx_tw[:20]), 1e-3), censored_stat(np.exp(logx_tw[20:]), 1e-3) + 0.05])
acc_tw = []
for seed_ in range(30):
    step_u, step_shift = [(0.3, 0.0), (0.0, 0.05), (0.2, 0.03)][seed_ % 3]
    th1, th2 = np.log(alpha_tw), np.log(alpha_tw)
    y1, y2 = logx_tw.copy(), logx_tw.copy()
    dsh = np.array([0.3, 0.8, 0.9])
    k1 = joint_move_kernel(th1, y1, starts_tw, sL_tw, np.log(1e-3), np.array([30.0, 20.0]), step_u, step_shift, dsh,
                            form_tw.kind, form_tw.shape, form_tw.rate, form_tw.prec, np.empty_like(y1),
                            np.random.default_rng(seed_))
    k2 = joint_move_reference(th2, y2, starts_tw, sL_tw, np.log(1e-3), np.array([30.0, 20.0]), step_u, step_shift,
                               dsh, lambda x: float(GammaPrior(1.0, 0.1, d=3).logpdf(x)), np.random.default_rng(seed_))
    assert k1 == k2 and np.allclose(th1, th2, atol=1e-12) and np.allclose(y1, y2, atol=1e-10)
    assert np.allclose(special.logsumexp(y1, axis=1), 0.0, atol=1e-12)
    acc_tw.append(k1)
print("twin check: accepted", sum(acc_tw), "of", len(acc_tw))
assert 0 < sum(acc_tw) < len(acc_tw)

# %%
P_tw = np.linalg.cholesky(np.array([[0.02, 0.01, 0.01], [0.01, 0.02, 0.01], [0.01, 0.01, 0.03]]))
acc_anc = []
for seed_ in range(20):
    th1, th2 = np.log(alpha_tw + 1.5), np.log(alpha_tw + 1.5)
    y1, y2 = logx_tw.copy(), logx_tw.copy()
    centre = np.log(alpha_tw + (1.0 if seed_ % 2 else 20.0))   # a surrogate centred near, and far off
    k1 = ancillary_batch_kernel(th1, y1, starts_tw, sL_tw, np.log(1e-3), np.array([30.0, 20.0]), P_tw, 4, centre,
                                 form_tw.kind, form_tw.shape, form_tw.rate, form_tw.prec, np.empty_like(y1),
                                 np.empty_like(y1), np.random.default_rng(seed_))
    k2 = ancillary_batch_reference(th2, y2, starts_tw, sL_tw, np.log(1e-3), np.array([30.0, 20.0]), P_tw, 4, centre,
                                    lambda x: float(p1_tw.logpdf(x)), np.random.default_rng(seed_))
    assert k1 == k2 and np.allclose(th1, th2, atol=1e-12) and np.allclose(y1, y2, atol=1e-9)
    acc_anc.append(k1)
print("twin check: accepted", sum(acc_anc), "of", 4 * len(acc_anc), "proposals")
assert 0 < sum(acc_anc) < 4 * len(acc_anc)

# %% [markdown]
# ## Each move leaves its target invariant
#
# ### Step (i): slice cycles against quadrature
#
# A long run of slice cycles on (1) with $d = 2$ (no latent records) must reproduce the posterior mean, within four
# Monte Carlo standard errors, and the posterior standard deviation, within 10%, computed by two-dimensional quadrature.

# %%
def quadrature_posterior(s, n, shape=1.0, rate=0.1, grid=400):
    """Posterior mean and sd of alpha (d = 2) under eq. (1) with gamma priors, on a log grid."""
    t = np.linspace(-3, 4, grid)
    T1, T2 = np.meshgrid(t, t, indexing="ij")
    A1, A2 = np.exp(T1), np.exp(T2)
    logp = (n * (special.gammaln(A1 + A2) - special.gammaln(A1) - special.gammaln(A2))
            + n * ((A1 - 1) * s[0] + (A2 - 1) * s[1])
            + stats.gamma.logpdf(A1, shape, scale=1 / rate) + stats.gamma.logpdf(A2, shape, scale=1 / rate)
            + T1 + T2)                        # densities in theta = log(alpha)
    w = np.exp(logp - logp.max())
    w /= w.sum()
    mean = np.array([(w * A1).sum(), (w * A2).sum()])
    sd = np.sqrt(np.array([(w * A1**2).sum(), (w * A2**2).sum()]) - mean**2)
    return mean, sd


s2 = sufficient_stat(dirichlet_draws([3.3, 4.4], 40, rng=rng))
mean_q, sd_q = quadrature_posterior(s2, 40)
th = np.log(mean_q)
var_th = np.diag((sd_q / mean_q) ** 2)
chol2 = np.linalg.cholesky(var_th)
chain2 = np.empty((n_sweeps_check // 10, 2))
r2 = np.random.default_rng(7)
for t_ in range(chain2.shape[0]):
    slice_kernel(th, 1, 3.0, chol2, np.linalg.inv(chol2), s2, 40.0, PRIOR_GAMMA, np.ones(2),
                  np.full(2, 0.1), np.zeros((2, 2)), r2)
    chain2[t_] = np.exp(th)
ess2 = az.ess(chain2[None, :, 0]), az.ess(chain2[None, :, 1])
mc_se = sd_q / np.sqrt([float(ess2[0]), float(ess2[1])])
print("quadrature mean", mean_q.round(3), "slice mean", chain2.mean(0).round(3), "MC s.e.", mc_se.round(3))
assert np.all(np.abs(chain2.mean(0) - mean_q) < 4 * mc_se)
assert np.allclose(chain2.std(0), sd_q, rtol=0.1)

# %% [markdown]
# ### Step (ii): one latent record against quadrature
#
# For one record ($n = 1$, $d = 2$) the target of $x_1$ is one-dimensional, $\propto p_{\mathrm{Beta}}(x_1 \mid \alpha_1, \alpha_2)^p\,
# \exp\{-\sum_j |s_{L,j} - \log\max(x_j, a)|/b_L\}$: many sweeps of that single record must match its CDF computed
# by quadrature (Kolmogorov-Smirnov on a thinned chain), for DPMCMC ($p = 1$) and for the powered record of model (5)
# under both proposals. A wrong variant (the Dirichlet term of the power forgotten) must fail the same test.

# %%
def one_record_chain(alpha, s_L, a, scale, power, mode, n_steps, rng, forget_power=False):
    """x_1 of a single latent record after each of n_steps sweeps (alpha fixed)."""
    logx = np.log(dirichlet_draws(alpha, 1, rng=rng))
    out = np.empty(n_steps)
    for t in range(n_steps):
        ap, coef = sweep_arguments(alpha, power, mode)
        if forget_power:
            coef = np.zeros_like(coef)
        record_sweep_kernel(logx, ap, coef, s_L, np.log(a), 1 / scale, rng)
        out[t] = np.exp(logx[0, 0])
    return out


def one_record_cdf(alpha, s_L, a, scale, power):
    """CDF of x_1 under the one-record target, by quadrature."""
    def dens(x):
        lx = np.log(np.maximum([x, 1 - x], a))
        return (stats.beta.pdf(x, *alpha) ** power) * np.exp(-np.abs(s_L - lx).sum() / scale)
    pts_ = [a, 0.01, 0.1, 0.5, 0.9, 0.99, 1 - a]
    total = sum(integrate.quad(dens, lo, hi, limit=200)[0] for lo, hi in zip([0] + pts_, pts_ + [1]))
    return lambda x: np.array([integrate.quad(dens, 0, xi, limit=200, points=[p for p in pts_ if p < xi])[0]
                               for xi in np.atleast_1d(x)]) / total


a_chk, scale_chk = 0.05, 1.5
alpha_chk = np.array([2.0, 3.0])
sL_chk = np.array([-1.6, -0.4])
ks_right = []
for power, mode, forget in [(1.0, UPDATE_JU, False), (4.0, UPDATE_MODEL5, False),
                            (4.0, UPDATE_MODEL5_POWERED, False), (4.0, UPDATE_MODEL5, True)]:
    xs = one_record_chain(alpha_chk, sL_chk, a_chk, scale_chk, power, mode, n_sweeps_check,
                          np.random.default_rng(11), forget_power=forget)[::10]
    grid_ = np.quantile(xs, np.linspace(0.02, 0.98, 25))
    cdf = one_record_cdf(alpha_chk, sL_chk, a_chk, scale_chk, power)(grid_)
    emp = np.searchsorted(np.sort(xs), grid_, side="right") / xs.size
    ks = np.max(np.abs(emp - cdf)) * np.sqrt(xs.size)
    print(f"power {power}, record update mode {mode}, forget the power {forget}: KS statistic {ks:.2f}")
    assert (ks > 3.0) if forget else (ks < 2.0)
    if forget:
        ks_wrong = ks
    else:
        ks_right.append(ks)

# %% [markdown]
# ### Steps (iii) and (iv): Geweke tests of the joint and ancillary moves
#
# Invariance, by a test that needs no posterior at all: draw $\boldsymbol\alpha$ from the p1 prior, $N$ records from
# Dirichlet($\boldsymbol\alpha$) and $\mathbf s_L$ from the release mechanism; the triple is then a draw of the joint law, and
# any move that leaves every $\pi(\boldsymbol\alpha, \mathbf x \mid \mathbf s_L)$ invariant keeps it one. After a few moves alone
# (no slice, no sweep) the $\alpha_j$ must still follow the prior, Gamma(1, 0.1) (Kolmogorov-Smirnov, over many
# independent replications); the same move with its Jacobian left out (the NumPy twin with `jacobian=False`) must fail.

# %%
def geweke_moves(move, n_rep, rng, N=20, d=3, a=1e-2, scale=0.1, n_moves=5):
    """alpha after n_moves calls of move(theta, logx, starts, s_L, log_a, inv_scale, rng) alone, from the joint law."""
    starts = np.array([0, N], dtype=np.int64)
    out = np.empty((n_rep, d))
    for r_ in range(n_rep):
        al = rng.gamma(1.0, 10.0, d)          # alpha ~ p1, records ~ Dirichlet(alpha), s_L ~ the release mechanism
        logx = log_dirichlet_draws_reference(al, N, rng)
        s_L = (np.maximum(logx, np.log(a)).mean(axis=0) + rng.laplace(0, scale, d))[None, :]
        th = np.log(al)
        for _ in range(n_moves):
            move(th, logx, starts, s_L, np.log(a), np.array([1 / scale]), rng)
        out[r_] = np.exp(th)
    return out


def ks_against_p1(al_g):
    """Kolmogorov-Smirnov p-values of each alpha_j against the p1 prior Gamma(1, 0.1)."""
    return np.array([stats.kstest(al_g[:, j], stats.gamma(1.0, scale=10.0).cdf).pvalue for j in range(al_g.shape[1])])

def joint_move(step_u, step_shift, jacobian=True):
    """The joint move (iii) as a Geweke move; jacobian=False: the NumPy twin without |J_u| (wrong)."""
    dshift = np.linspace(0.5, 1.0, 3)          # any fixed vector will do

    def move(th, logx, starts, s_L, log_a, inv, rng):
        if jacobian:
            joint_move_kernel(th, logx, starts, s_L, log_a, inv, step_u, step_shift, dshift, form_tw.kind,
                               form_tw.shape, form_tw.rate, form_tw.prec, np.empty_like(logx), rng)
        else:
            joint_move_reference(th, logx, starts, s_L, log_a, inv, step_u, step_shift, dshift,
                                  lambda x: float(p1_tw.logpdf(x)), rng, jacobian=False)
    return move

for jac, steps in [(True, (1.0, 0.0)), (True, (0.0, 0.5)), (True, (0.7, 0.3)), (False, (1.0, 0.0))]:
    p_ks = ks_against_p1(geweke_moves(joint_move(*steps, jacobian=jac), n_geweke, np.random.default_rng(60)))
    print(f"joint moves alone, steps (u, shift) = {steps}, Jacobian {'in' if jac else 'left out'}: KS p-values "
          f"against the prior {np.round(p_ks, 4)}")
    assert (min(p_ks) > 1e-3) if jac else (min(p_ks) < 1e-6)

# %%
def ancillary_batch(step, n_prop, jacobian=True):
    """n_prop ancillary proposals at one auxiliary draw, as a Geweke move; jacobian=False: the twin without it."""
    P = step * np.eye(3)
    centre = np.full(3, np.log(10.0))           # the surrogate's centre: any fixed point (here the prior mean)

    def move(th, logx, starts, s_L, log_a, inv, rng):
        if jacobian:
            ancillary_batch_kernel(th, logx, starts, s_L, log_a, inv, P, n_prop, centre, form_tw.kind, form_tw.shape,
                                    form_tw.rate, form_tw.prec, np.empty_like(logx), np.empty_like(logx), rng)
        else:
            ancillary_batch_reference(th, logx, starts, s_L, log_a, inv, P, n_prop, centre,
                                       lambda x: float(p1_tw.logpdf(x)), rng, jacobian=False)
    return move


for jac, n_prop in [(True, 1), (True, 4), (False, 4)]:
    p_ks = ks_against_p1(geweke_moves(ancillary_batch(0.5, n_prop, jac), n_geweke if jac else n_geweke // 4,
                                      np.random.default_rng(61)))
    print(f"ancillary batches of {n_prop} alone, Jacobian {'in' if jac else 'left out'}: KS p-values against the "
          f"prior {np.round(p_ks, 4)}")
    assert (min(p_ks) > 1e-3) if jac else (min(p_ks) < 1e-6)

# %% [markdown]
# ## The non-private limit: DPMCMC meets MCMC$_{p1}$
#
# The demo data set of notebook 21 ($\boldsymbol\alpha_3^{true} = (2.2, 3.3, 4.4)$, $n = 1000$, `demo_data()`), released with
# $\epsilon_1 = 10^{10}$: DPMCMC must reproduce MCMC$_{p1}$ on the confidential $S_0(\mathbf D)$. At that budget the
# privacy term pins the latent censored statistic to $\mathbf s_L$, so the latent records barely move, but
# $\boldsymbol\alpha \mid \mathbf D$ is then the non-private posterior (Guo et al. S5 note the poor mixing of the records
# there). "Within Monte Carlo error" needs care: the records freeze wherever the warm-up left them, with a censored
# statistic equal to $\mathbf s_L$ only up to the last accepted record move, so the chains condition on slightly
# different $\mathbf D$ and the result moves from seed to seed by more than its MCSE. The check allows a fifth of a
# posterior standard deviation for the means and 15% for the standard deviations.

# %%
alpha_true, X_demo, rel, _ = demo_data()     # the demo data set of notebooks 21, 73 and 74
n_demo = len(X_demo)

# %%
rel_inf = Release.from_statistic(censored_stat(X_demo, rel.a) + rng.laplace(0, 1e-12, 3), n_demo, rel.a, 1e10)
kw_chk = dict(n_iter=n_iter_demo // 2, n_warmup=1000, n_chains=2, thin=2, progress=False)
res_inf = dp_mcmc(rel_inf, rng=1, **kw_chk)
res_np = mcmc(sufficient_stat(X_demo), n_demo, rng=2, **kw_chk)
summ_inf, summ_np = az.summary(res_inf, var_names=["alpha"]), az.summary(res_np, var_names=["alpha"])
print(summ_inf.iloc[:, :4], "\n", summ_np.iloc[:, :4])
gap = np.abs(summ_inf["mean"].to_numpy() - summ_np["mean"].to_numpy())
assert np.all(gap < 0.2 * summ_np["sd"].to_numpy())       # frozen records: see the note above the cell
assert np.allclose(summ_inf["sd"], summ_np["sd"], rtol=0.15)
gap_sd = float(np.max(gap / summ_np["sd"].to_numpy()))

# %% [markdown]
# ## The interface: DPreMCMC with $b = n_2$ is DPMCMC, bad input raises
#
# DPreMCMC with $b = n_2$ latent records must be DPMCMC draw for draw, and bad input must raise an error that names the
# argument.

# %%
same_a = dp_mcmc(rel, rng=3, **kw_chk)
same_b = dp_remcmc(rel, b=rel.n2, rng=3, **kw_chk)
assert np.array_equal(same_a.posterior["alpha"].values, same_b.posterior["alpha"].values)

for bad, err in [(dict(prior="p7"), ValueError), (dict(prior="p2"), ValueError), (dict(prior="p3"), ValueError),
                 (dict(n_iter=0), ValueError), (dict(thin=0), ValueError), (dict(n_chains=2.0), TypeError)]:
    try:
        dp_mcmc(rel, **dict(kw_chk, **bad))
    except err as e:
        print(f"{bad}: {type(e).__name__}: {e}")
    else:
        raise AssertionError(f"{bad} did not raise")
try:
    dp_mcmc({"s_L": rel.s_L, "n": n_demo})
except TypeError as e:
    print("dict release:", e)
else:
    raise AssertionError("a dict release did not raise")
# %% [markdown]
# ## Exactness: simulation-based calibration (Talts et al. 2018)
#
# If $\tilde{\boldsymbol\alpha} \sim \pi_0$, $\tilde{\mathbf D} \mid \tilde{\boldsymbol\alpha} \sim$ Dirichlet, $\tilde{\mathbf s}_L = S_0(\tilde{\mathbf D}, a) + $ Laplace
# noise, and $\boldsymbol\alpha^{(1)}, \dots, \boldsymbol\alpha^{(L)}$ are (nearly independent) draws of a correct sampler of
# $\pi(\boldsymbol\alpha \mid \tilde{\mathbf s}_L)$, then the rank of $\tilde\alpha_j$ among the $\alpha^{(l)}_j$ is uniform on
# $\{0, \dots, L\}$. A sampler that is too narrow gives a U-shaped histogram, one that is too wide a hump, a biased
# one a slope. We simulate $\boldsymbol\alpha$ from a Gamma(1, rate) prior (the p1 family), run one thinned chain per
# replication, and judge the ranks with `dplit.testing.sbc_check`. A chi-square test of the rank histogram alone has
# little power here: at 200 replications it missed a halved Laplace scale, because a wide prior spreads the truth
# over the whole posterior whatever the noise. The check therefore adds the Klotz spread score, which rises when the
# truth sits in the posterior's tails (too narrow) and falls when it sits in its middle (too wide), and a location
# score (a biased sampler).
#
# The planted error is a moderate one: the sampler believes the Laplace scale is 0.7 times its true value, as if the
# release claimed $\epsilon_1 / 0.7$ (43% more budget than its noise gives). It must fail at the size the test suite
# runs.

# %% [markdown]
# The run: $d = 2$ components, $n = 15$ records, $a = 10^{-2}$, $\epsilon_1 = 5$, prior Gamma(1, 0.01) (so $\alpha_0$ is
# about 100 and the records are concentrated: the sampling spread of $S_0$ is small against the Laplace noise,
# whose scale the planted error changes). $L = 19$ draws thinned by 10 after 100 warm-up iterations,
# 5 slice cycles. Monitored: $E[\log x_1]$ and $E[\log x_2]$ (what $S_0$ measures; the spread test sums their Klotz
# scores) and $\log \alpha_0$. `tests/test_sbc_power.py` runs the same check through the public `dp_mcmc`, and
# `benchmarks/power_sbc.py` measures its power over 20 seeds at 600 replications, for the genuine sampler and the 0.7x
# scale (stored in `benchmarks/results/power_sbc.json`).
#
# **Autocorrelation, not bias.** Correlated draws also give a U-shaped rank histogram (Talts et al. 2018, Sec. 5), so an
# SBC failure alone does not say whether a chain is biased or only slow to forget. `benchmarks/bench_mcmc.py` runs a
# larger SBC ($d = 3$, $n = 200$, $a = 10^{-3}$, $\epsilon_1 = 1$, 1200 replications thinned by 60) on the same simulated
# data sets for the chain with steps (iii)-(iv) and without them (`_sbc_ranks(..., moves=False)`): the chain without
# them fails and the chain with them passes. Every step of both chains leaves the joint law (2) invariant (checked
# above), so the two have the same invariant law, and what separates them is how fast they forget: the failure is
# the autocorrelation of the slowly mixing chain.

# %%
def log_x_moments(alpha):
    """Monitored values of Dirichlet alpha, shape (k, d): E[log x_j] for j < d, and log alpha_0."""
    a0 = alpha.sum(axis=1, keepdims=True)
    return np.column_stack([special.digamma(alpha) - special.digamma(a0), np.log(a0)])


sbc_setting = dict(n=15, d=2, a=1e-2, eps=5.0, prior_rate=0.01, thin=10, n_warmup=100, n_slice=5,
                   monitor=log_x_moments)
t0 = time.perf_counter()
ranks_good = _sbc_ranks(n_sbc, rng=31, **sbc_setting)
ranks_bad = _sbc_ranks(n_sbc, scale_factor=0.7, rng=31, **sbc_setting)
check_good, check_bad = sbc_check(ranks_good, spread=[0, 1]), sbc_check(ranks_bad, spread=[0, 1])
print(f"{2 * n_sbc} SBC replications in {time.perf_counter() - t0:.1f} s")
for name, c in [("correct sampler", check_good), ("Laplace scale x 0.7", check_bad)]:
    print(f"{name:20s} p = {c['p']:.3g}   spread z = {c['z_spread']:+.2f}   location z = {c['z_loc']}")
assert check_good["p"] > 0.01 and check_bad["p"] < 0.01

# %%
# NBVAL_IGNORE_OUTPUT
fig, axes = plt.subplots(1, 2, figsize=(7.5, 2.8), sharey=True)
for ax, ranks, title in [(axes[0], ranks_good, "DPMCMC (correct)"), (axes[1], ranks_bad, "Laplace scale x 0.7")]:
    for j in range(2):
        ax.hist(ranks[:, j], bins=np.arange(0, 21, 2) - 0.5, histtype="step", lw=1.5, label=f"E[log x_{j + 1}]")
    ax.axhline(n_sbc / 10, c="k", ls="--", lw=0.8)
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("rank of the true value among 19 draws")
axes[0].legend(fontsize=9)
fig.tight_layout()

# %% [markdown]
# Dashed: the expected count per bin of a uniform histogram. The correct sampler's histograms are flat within noise;
# the sampler told a scale 0.7 times too small is too narrow, so the truth falls in its tails (a U shape).

# %% [markdown]
# ## When to use this

# %%
display(Markdown(f"""
Run this notebook after changing a move, a sampler or the release model; `tests/test_mcmc.py` repeats these checks at
the test suite's sizes. In this run:

* each move kept its target: the slice sampler's mean was within {float(np.max(np.abs(chain2.mean(0) - mean_q) / mc_se)):.1f}
  Monte Carlo standard errors of the quadrature; the record sweep's Kolmogorov-Smirnov statistics were below 2 for the
  correct updates ({max(ks_right):.2f} at most) and {ks_wrong:.1f} for the wrong one; the Geweke tests of steps (iii)-(iv)
  passed with the Jacobian and failed without it;
* at $\\epsilon_1 = 10^{{10}}$ DPMCMC's posterior means were within {gap_sd:.2f} posterior standard deviations of
  MCMC$_{{p1}}$'s;
* simulation-based calibration over {n_sbc} replications gave p = {check_good['p']:.3g} for the correct sampler and
  p = {check_bad['p']:.3g} for the planted error (Laplace scale 0.7 times the truth), which it caught.
"""))

