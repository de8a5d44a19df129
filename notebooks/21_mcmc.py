# %% [markdown]
# # MCMC from a release: MCMC, DPMCMC and DPreMCMC
#
# * **For:** the posterior of the Dirichlet parameter $\boldsymbol\alpha$ given a differentially private release of the censored log statistic (Guo et al., Sec. 4.2): DPMCMC (data augmentation over the latent records, Ju et al. 2022), its approximation DPreMCMC, and MCMC$_{p1}$, the non-private benchmark.
# * **You need:** a `dplit.release.Release` (notebook 15), unsplit or split, and a prior (p1 by default; p3-p5 with a split release, notebook 18).
# * **You get:** an ArviZ `InferenceData` of posterior draws of $\boldsymbol\alpha$ and $E[\mathbf x \mid \boldsymbol\alpha]$, with a convergence report (`n_iter="auto"` runs until it passes).
#
# Reading order: this notebook derives the target and the samplers and shows them in use; 19 derives the four moves of
# an iteration, 20 turns a release into what they read (the checks, the prior, the latent blocks, where a chain starts),
# 73 checks that the samplers are exact, 74 compares the methods and measures the time to a posterior.

# %%
#| default_exp mcmc
#| internal DemoData demo_data

# %% [markdown]
# ## Parameters
#
# Every random draw comes from a seed set here. The runs choose their own length (`n_iter="auto"`): the notebook
# runs the same at the test suite's quick size (`DPLIT_QUICK=1`).

# %%
# %matplotlib inline
import arviz as az
import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display

from dplit.config import is_quick
from dplit.dirichlet import censored_stat, sufficient_stat

SEED = 20261123
rng = np.random.default_rng(SEED)
print(f"quick mode: {is_quick()}")

# %% [markdown]
# ## What it gives: the posterior of $\boldsymbol\alpha$ given a release
#
# Before the derivation, the result, from the finished module `dplit.mcmc`. A data set in the setting of the simulation
# study (Guo et al., Sec. 5.1: $\boldsymbol\alpha_3^{true} = (2.2, 3.3, 4.4)$, $n = 1000$, candidates
# $10^{-1}, \dots, 10^{-6}$, $t_c = 0.01$) is released by Algorithm 1 (notebook 15) with $\epsilon_1 = 1$ (and once split,
# $\epsilon_1 = 0.75$, $n_1 = n/4$, for prior p5 below): the demo data set `demo_data()`, defined below
# ("The demo data set") and shared with notebooks 73 and 74.
# DPMCMC$_{p1}$ samples the posterior given the release, MCMC$_{p1}$ the posterior given the confidential statistic
# $S_0(\mathbf D)$, i.e. without privacy; two chains each, run until the convergence report passes. The figure shows both
# with the truth: the concentration $\alpha_0 = \sum_j \alpha_j$ (left) and the mean composition
# $E[\mathbf x \mid \boldsymbol\alpha] = \boldsymbol\alpha/\alpha_0$ (right). Checked: both converged, DPMCMC's posterior mean
# composition is within two of its posterior standard deviations of MCMC's, and its $\alpha_j$ are less certain.

# %%
# NBVAL_IGNORE_OUTPUT
import dplit.mcmc as finished          # the module this notebook derives and exports below
from dplit.release import Release

alpha_true, X_demo, rel, rel_split = finished.demo_data()    # the demo data set of notebooks 21, 73 and 74
n_demo = len(X_demo)
kw_demo = dict(n_iter="auto", n_warmup=2000, n_chains=2, progress=False)
post_dp = finished.dp_mcmc(rel, prior="p1", rng=11, **kw_demo)
post_np = finished.mcmc(sufficient_stat(X_demo), n_demo, rng=10, **kw_demo)
summ_dp, summ_np = (az.summary(r, var_names=["alpha", "mean_composition"]) for r in (post_dp, post_np))
comp_dp, comp_np = (s.filter(like="mean_composition", axis=0) for s in (summ_dp, summ_np))
print(f"E[x | alpha]: DPMCMC_p1 {comp_dp['mean'].to_numpy()}, MCMC_p1 {comp_np['mean'].to_numpy()}")
assert post_dp.posterior.attrs["converged"] == 1 and post_np.posterior.attrs["converged"] == 1
assert np.all(np.abs(comp_dp["mean"] - comp_np["mean"]) < 2 * comp_dp["sd"])
assert np.all(summ_dp["sd"].filter(like="alpha[") > summ_np["sd"].filter(like="alpha["))

fig, axes = plt.subplots(1, 2, figsize=(7, 2.8))
a0_all = np.concatenate([r.posterior["alpha"].values.sum(-1).ravel() for r in (post_np, post_dp)])
a0_bins = np.linspace(*np.quantile(a0_all, [0.001, 0.995]), 60)     # the long right tail is cut
for k, (res, lab) in enumerate([(post_np, "MCMC$_{p1}$ (no privacy)"), (post_dp, "DPMCMC$_{p1}$")]):
    a0 = res.posterior["alpha"].values.sum(-1).ravel()
    axes[0].hist(a0, bins=a0_bins, weights=np.full(a0.size, 1.0 / a0.size), alpha=0.6, label=lab, color=f"C{k}")
    comp = res.posterior["mean_composition"].values.reshape(-1, 3)
    parts = axes[1].violinplot(comp, positions=np.arange(1, 4) + (0.2 if k else -0.2), widths=0.35, showextrema=False)
    for body in parts["bodies"]:
        body.set(facecolor=f"C{k}", alpha=0.6)
axes[0].axvline(alpha_true.sum(), c="k", ls="--", lw=0.8, label="truth")
axes[0].set(xlabel=r"concentration $\alpha_0$ (cut at the 99.5th pct.)", ylabel="share of draws")
axes[1].scatter([1, 2, 3], alpha_true / alpha_true.sum(), c="k", marker="_", s=300, zorder=3)
axes[1].set(xticks=[1, 2, 3], xticklabels=["$E[x_1]$", "$E[x_2]$", "$E[x_3]$"], ylabel="mean composition")
fig.legend(*axes[0].get_legend_handles_labels(), loc="upper center", ncol=3, fontsize=9, frameon=False)
fig.tight_layout(rect=(0, 0, 1, 0.9))

# %%
ratio_alpha = (summ_dp["sd"] / summ_np["sd"]).filter(like="alpha[").to_numpy()
ratio_comp = (summ_dp["sd"] / summ_np["sd"]).filter(like="mean_composition").to_numpy()
display(Markdown(
    f"Algorithm 1 chose $a = {rel.a:g}$ for the unsplit release, so the Laplace noise has scale {rel.scale:.4g} per "
    f"component. DPMCMC's posterior standard deviations of $\\alpha_j$ are {ratio_alpha.min():.1f}-{ratio_alpha.max():.1f} "
    f"times MCMC$_{{p1}}$'s: that is the price of privacy here. Those of the proportions "
    f"$E[\\mathbf x \\mid \\boldsymbol\\alpha] = \\boldsymbol\\alpha/\\alpha_0$ are {ratio_comp.min():.1f}-{ratio_comp.max():.1f} "
    f"times MCMC$_{{p1}}$'s (right): the release pins the composition better than the concentration $\\alpha_0$ (left)."))

# %% [markdown]
# ## The target (Guo et al., Sec. 4.2, eq. 1-2, 4-5)
#
# The confidential data $\mathbf D = (\mathbf x_1, \dots, \mathbf x_n)$ are compositions,
# $\mathbf x_i \overset{iid}{\sim} \mathrm{Dirichlet}(\boldsymbol\alpha)$. Without privacy the posterior
# depends on the data only through $S_0(\mathbf D) = n^{-1}\sum_i \log \mathbf x_i$ (Guo et al., eq. 1):
#
# $$\pi(\boldsymbol\alpha \mid S_0(\mathbf D)) \propto \exp\Big\{ n\Big[\log\Gamma\big(\textstyle\sum_j \alpha_j\big)
#   - \sum_j \log\Gamma(\alpha_j)\Big] + n \sum_j (\alpha_j - 1)\, S_{0,j}(\mathbf D)\Big\}\, \pi_0(\boldsymbol\alpha).
#   \qquad (1)$$
#
# Sampling (1) is the benchmark **MCMC$_{p1}$** (function `mcmc`). The curator instead publishes
# $\mathbf s_L = S_0(\mathbf D, a) + \boldsymbol\varepsilon^L$, the statistic of the records censored at $a$
# ($\tilde x_{ij} = \max(x_{ij}, a)$) plus Laplace noise of scale $b_L = -d\log(a)/(n\epsilon_1)$ per
# component (notebook 15). Treating the records as unknown gives the joint posterior of **model (2)**,
#
# $$\pi(\boldsymbol\alpha, \mathbf D \mid \mathbf s_L) \propto \prod_{j=1}^d p_{\mathrm{Lap}}\big(s_{L,j} \mid S_{0,j}(\mathbf D, a), b_L\big)
#   \prod_{i=1}^n p_{\mathrm{Dir}}(\mathbf x_i \mid \boldsymbol\alpha)\; \pi_0(\boldsymbol\alpha), \qquad (2)$$
#
# whose $\boldsymbol\alpha$-marginal is the posterior given the release. Its two full conditionals are:
#
# * **$\boldsymbol\alpha \mid \mathbf D$** does not involve $\mathbf s_L$ (the release is a function of
#   $\mathbf D$ and independent noise): it is (1) with the *uncensored* statistic $S_0(\mathbf D)$ of the
#   latent records. The latent records are complete compositions; only the release is censored.
# * **$\mathbf x_i \mid \boldsymbol\alpha, \mathbf x_{-i}, \mathbf s_L$** $\propto p_{\mathrm{Dir}}(\mathbf x_i \mid \boldsymbol\alpha)
#   \prod_j p_{\mathrm{Lap}}(s_{L,j} \mid S_{0,j}(\mathbf D, a), b_L)$. Ju et al. (2022) (as described in
#   dapper, Sec. 3) propose $\mathbf x_i^* \sim \mathrm{Dirichlet}(\boldsymbol\alpha)$, the model itself. In the
#   Metropolis-Hastings ratio the model density of the target cancels against the proposal density,
#
#   $$r = \frac{p_{\mathrm{Dir}}(\mathbf x^*_i \mid \boldsymbol\alpha)\, \prod_j p_{\mathrm{Lap}}(s_{L,j} \mid S^*_{0,j})}
#            {p_{\mathrm{Dir}}(\mathbf x_i \mid \boldsymbol\alpha)\, \prod_j p_{\mathrm{Lap}}(s_{L,j} \mid S_{0,j})}
#       \cdot \frac{p_{\mathrm{Dir}}(\mathbf x_i \mid \boldsymbol\alpha)}{p_{\mathrm{Dir}}(\mathbf x^*_i \mid \boldsymbol\alpha)}
#     = \exp\Big\{-\frac{1}{b_L}\sum_j \big(|s_{L,j} - S^*_{0,j}| - |s_{L,j} - S_{0,j}|\big)\Big\},$$
#
#   so **only the privacy density is evaluated**, never the Dirichlet density. The statistic is
#   *record additive* (dapper's term): with the running sum $\mathbf C = \sum_i \log\max(\mathbf x_i, a)$,
#   the proposal changes it to $\mathbf C^* = \mathbf C - \log\max(\mathbf x_i, a) + \log\max(\mathbf x^*_i, a)$
#   and $S^*_0 = \mathbf C^*/n$: an $O(d)$ update per record, $O(nd)$ per sweep, dominated by the $nd$ gamma
#   draws of the proposals.
#
# **DPMCMC** alternates (i) $\boldsymbol\alpha \mid \mathbf D$ by slice sampling and (ii) a sweep of (ii) over every
# record, plus joint moves of $\boldsymbol\alpha$ and all the records that cross the posterior's long ridge along which (i)-(ii)
# crawl (steps (iii) and (iv) below). The records are stored and drawn as $\log \mathbf x_i$, so that tiny entries cannot
# underflow to $\log 0$, and the sweep's running sums are recomputed exactly at each sweep's start (notebook 19).
#
# **Split releases (Table 1).** When the curator split the data ($n_1 > 0$), $\mathbf s_L^{(1)}$ of $\mathbf D_1$ defines the
# prior (p3, p4: notebook 18) and $\mathbf s_L^{(2)}$ of $\mathbf D_2$ the likelihood, model (4) with the $n_2$ records of
# $\mathbf D_2$ latent and scale $-d\log(a)/(n_2\epsilon_1)$. Under p1 both parts are latent, each with its own Laplace
# term: the target is $\pi(\boldsymbol\alpha \mid \mathbf s_L^{(1)}, \mathbf s_L^{(2)})$. Prior **p5** is the p1 posterior given
# $\mathbf s_L^{(1)}$; since $\mathbf D_1$ and $\mathbf D_2$ are independent
# given $\boldsymbol\alpha$ and carry independent noise, $\pi_{p5}(\boldsymbol\alpha)\,p(\mathbf s_L^{(2)} \mid \boldsymbol\alpha)
# \propto \pi_{p1}(\boldsymbol\alpha)\,p(\mathbf s_L^{(1)} \mid \boldsymbol\alpha)\,p(\mathbf s_L^{(2)} \mid \boldsymbol\alpha)$:
# **DPMCMC$_{p5}$ is exactly DPMCMC$_{p1}$ with both parts latent**, which is how `dp_mcmc(prior="p5")` runs it.
# (Like the paper we ignore that $a$ was chosen from all the data by a separate $\epsilon_2$ release.)
#
# **DPreMCMC, model (5).** To cut the cost of the sweep, the $n_2$ records of $\mathbf D_2$ are replaced by
# $b < n_2$ latent records, each with likelihood raised to the power $p = n_2/b$ (as if replicated $p$ times):
#
# $$\pi(\boldsymbol\alpha, \mathbf x_1, \dots, \mathbf x_b \mid \cdot) \overset{approx}{\propto}
#   \prod_j p_{\mathrm{Lap}}\big(s^{(2)}_{L,j} \mid \bar S_{0,j}, \tfrac{-d\log a}{n_2\epsilon_1}\big)
#   \prod_{i=1}^b p_{\mathrm{Dir}}(\mathbf x_i \mid \boldsymbol\alpha)^{n_2/b}\, \pi_0(\boldsymbol\alpha \mid \mathbf s_L^{(1)}), \qquad (5)$$
#
# where $\bar S_0 = b^{-1}\sum_{i \le b}\log\max(\mathbf x_i, a)$ is the censored statistic of the replicated data
# (the paper's $p_{\mathrm{Lap}}(s_0 \mid s_L, \cdot)$ swaps the arguments of a symmetric density). The
# $\boldsymbol\alpha$-update of (5) is (1) with $n_2$ records and the mean log of the $b$ latent records.
#
# **The record update with a power.** Read as a joint density of $(\boldsymbol\alpha, \mathbf x_1, \dots, \mathbf x_b)$, (5) gives
# $\mathbf x_i$ the power $p = n_2/b$ that the proposal $\mathrm{Dirichlet}(\boldsymbol\alpha)$ lacks, and the Dirichlet terms stay:
#
# $$r = \Big[\frac{p_{\mathrm{Dir}}(\mathbf x_i^* \mid \boldsymbol\alpha)}{p_{\mathrm{Dir}}(\mathbf x_i \mid \boldsymbol\alpha)}\Big]^{p - 1}
#   \times \text{(Laplace ratio)} = \exp\Big\{(p - 1)\sum_j(\alpha_j - 1)(\log x^*_{ij} - \log x_{ij})\Big\} \times \text{(Laplace ratio)}$$
#
# ($B(\boldsymbol\alpha)^{-p}$ cancels; $p = 1$, $b = n_2$ is DPMCMC). The proposal $\mathrm{Dirichlet}(p(\boldsymbol\alpha - 1) + 1)
# \propto p_{\mathrm{Dir}}(\mathbf x\mid\boldsymbol\alpha)^p$ would make it the Laplace ratio again; notebook 73 checks both.
#
# **But the joint law (5) is not a usable posterior for large $p$.** Integrating out the records (leaving aside the
# Laplace factor), $\int p_{\mathrm{Dir}}(\mathbf x \mid \boldsymbol\alpha)^p\,d\mathbf x = B(p(\boldsymbol\alpha - 1) + 1)/B(\boldsymbol\alpha)^p$,
# which grows like $\alpha_0^{(p-1)(d-1)/2}$ as $\alpha_0 = \sum_j\alpha_j$ grows with fixed proportions: the powered records
# crowd around the Dirichlet's mode and pull $\boldsymbol\alpha$ up (with $b$ records, $\alpha_0^{b(p-1)(d-1)/2}$, held back only by
# the prior and the privacy term); notebook 74 shows exact sampling of (5) drifting to absurd $\boldsymbol\alpha$
# (`record_update="model5"`). The paper's sampler instead updates each record "with proposal Dirichlet($\boldsymbol\alpha^{t-1}$)
# as in Ju et al." and reports sensible results for $b = 5$ (power 150-750), which only the **unpowered record update**
# can give: records from the model tilted by the privacy density, the power in the $\boldsymbol\alpha$-update only. That is our
# default, `record_update="ju"`: a Gibbs-type sampler whose two conditionals belong to no single joint law, an
# approximation (as the paper says) that equals DPMCMC at $b = n_2$.
#
# One kernel serves all three samplers: a list of latent **blocks** (records, released statistic, Laplace scale,
# power), plus an optional exact part (for MCMC$_{p1}$, a block-free chain on (1)). Notebook 20 builds them from a
# release and a prior.

# %% [markdown]
# ## The moves of an iteration (notebook 19)
#
# One iteration combines four moves. Each is derived and written as a numba kernel, next to a twin, in notebook 19
# (module `dplit._mcmc_moves`, whose `chain_kernel` runs the iterations); notebook 73 checks that each kernel equals
# its twin and leaves its target invariant.
#
# | step | updates | how |
# |---|---|---|
# | (i) | $\boldsymbol\alpha \mid \mathbf D$ | hyperrectangle slice sampler (Neal 2003, Fig. 8) in whitened $\log\boldsymbol\alpha$ |
# | (ii) | each record $\mathbf x_i \mid \boldsymbol\alpha, \mathbf s_L$ | Metropolis-Hastings, proposal Dirichlet($\boldsymbol\alpha$): only the Laplace ratio is evaluated (Ju et al.) |
# | (iii) | $\alpha_0$ and the records' spread together | a group move (Liu & Sabatti 2000) along the concentration |
# | (iv) | $\boldsymbol\alpha$ with the records' quantiles held fixed | an ancillary move (Yu & Meng 2011) in batches of 20 proposals, screened by delayed acceptance |
#
# Steps (iii) and (iv) need one joint law of $\boldsymbol\alpha$ and the records, so they run in DPMCMC only (every power 1).

# %%
#| export
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy import special

from dplit import _validate as V
from dplit._arviz import name_components

# the moves of notebook 19 (one iteration: chain_kernel); the record sweep and slice kernels are imported too, as
# dplit.mcmc._<name> (benchmarks/bench_mcmc.py and tests/test_mcmc.py read them there)
from dplit._mcmc_moves import UPDATE_JU as _UPDATE_JU
from dplit._mcmc_moves import UPDATE_MODEL5 as _UPDATE_MODEL5
from dplit._mcmc_moves import chain_kernel as _chain_kernel

# the model of a release (notebook 20): its checks, the prior, the latent blocks, the chain's specification and start
from dplit._release_model import (
    ChainSpec,
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
from dplit.dirichlet import dirichlet_draws, in_stat_range, log_dirichlet_draws_reference
from dplit.priors import DrawsPrior, GammaPrior
from dplit.release import PAPER_CANDIDATES, Release, laplace_scale
from dplit.release import release as _release
from dplit.results import composition_draws, privacy_attrs
from dplit.sampling import RHAT_MAX, Sampler, run, run_chains
from dplit.testing import sbc_ranks

# %% [markdown]
# ### The chain as a `dplit.sampling.Sampler`
#
# Everything around the kernel (per-chain seeds, warm-up, thinning, threads, progress, ArviZ packaging, the
# convergence report) is `dplit.sampling`'s (notebook 04). DPMCMC supplies the target (a `ChainSpec` of notebook 20: the
# blocks, the exact part, the prior's `KernelForm`), a starting state (`init`, below), the transition (`run_chain`:
# `_chain_kernel`) and the warm-up adaptation (`adapt`: the whitening map refit at the mean of $\log\boldsymbol\alpha$ over
# the window's second half).
#
# **Where a chain starts.** Near the mode of (1) at a plausible statistic (notebook 20: `start_statistic`, the mean of four
# draws of $S_L - \varepsilon$ truncated to $\mathrm{Range}(S_0)$, and `mode_theta`), dispersed by $0.3$ in $\log\boldsymbol\alpha$, with
# latent records drawn from the model; the slice map starts as `slice_transform` there.

# %%
#| export
@dataclass
class _ChainState:
    """One chain's state: log alpha, the latent log records of all blocks, their sums, the slice map."""

    theta: np.ndarray
    logx: np.ndarray
    starts: np.ndarray
    T: np.ndarray
    chol: np.ndarray
    chol_inv: np.ndarray
    step_u: float = 0.5      # sd of u in the scale move, adapted in the warm-up
    step_shift: float = 0.05  # sd of the shift move's delta, adapted in the warm-up
    dshift: np.ndarray = None  # theta moves by dshift * delta in the shift move (1 / (alpha psi1(alpha)))
    anc_base: np.ndarray = None  # 2.38 / sqrt(d) times the Cholesky factor of the warm-up covariance of theta
    anc_chol: np.ndarray = None  # the ancillary move's proposal factor, anc_base * anc_factor
    anc_centre: np.ndarray = None  # where its surrogate is centred: the warm-up mean of theta (at first the start)
    anc_factor: float = 1.0   # its adapted factor on 2.38 / sqrt(d)
    anc_on: bool = True       # switched off in the warm-up when it is (nearly) always refused
    joint_on: bool = True     # step (iii), likewise (it runs only once step iv is off)


def _shift_map(alpha):
    """dtheta / dpsi(alpha) = 1 / (alpha psi1(alpha)): moves E[log x_j] = psi(alpha_j) - psi(alpha_0) by about delta_j."""
    return 1.0 / (alpha * special.polygamma(1, alpha))


def _adapt_step(step, rates, target=0.3):
    """A proposal's step after a warm-up window with acceptance rates `rates`: towards `target`, bounded."""
    return float(np.clip(step * np.exp(np.clip(3.0 * (float(np.mean(rates)) - target), -1.5, 1.5)), 1e-4, 5.0))

# %%
#| export
def _sampler(spec):
    """The DPMCMC / DPreMCMC / MCMC chain for dplit.sampling: init, run_chain (the numba kernel), adapt."""
    latent = spec.m.size > 0

    def init(rng):
        theta = mode_theta(spec, start_statistic(spec, rng)) + 0.3 * rng.standard_normal(spec.d)
        starts = np.concatenate([[0], np.cumsum(spec.m)]).astype(np.int64)
        logx = log_dirichlet_draws_reference(np.exp(theta), int(starts[-1]), rng)
        T = np.array([logx[starts[b]:starts[b + 1]].sum(axis=0) for b in range(spec.m.size)]).reshape(-1, spec.d)
        step_shift = max(float(np.sqrt(2.0) / spec.inv_scale.max()), 1e-3) if latent else 0.0   # Laplace sd
        chol, chol_inv = slice_transform(np.exp(theta), spec)
        base = chol * (2.38 / np.sqrt(spec.d))      # until the warm-up has a covariance: that of theta | D
        return _ChainState(theta, logx, starts, T, chol, chol_inv, step_shift=step_shift,
                           dshift=_shift_map(np.exp(theta)), anc_base=base, anc_chol=base.copy(),
                           anc_centre=theta.copy())

    n_joint, n_anc = (spec.n_joint, spec.n_anc) if spec.joint else (0, 0)

    def run_chain(st, n_steps, thin, rng):
        f = spec.prior
        draws, acc, evals, sc, sh, an = _chain_kernel(st.theta, st.logx, st.starts, st.T, spec.s_L, spec.log_a,
                                              spec.inv_scale, spec.power, spec.mode, spec.T0, float(spec.n0),
                                              n_steps, thin, spec.n_slice, spec.width, st.chol, st.chol_inv,
                                              0 if (st.anc_on or not st.joint_on) else n_joint, st.step_u, st.step_shift, st.dshift,
                                              n_anc if st.anc_on else 0, st.anc_chol, st.anc_centre, f.kind,
                                              f.shape, f.rate, f.prec, rng)
        stats = {"record_acceptance": acc, "slice_evaluations": evals} if latent else {"slice_evaluations": evals}
        if n_joint + n_anc > 0:         # NaN where a move did not run (step iii runs only when iv is off)
            off = np.full(len(draws), np.nan)
            stats["scale_acceptance"], stats["shift_acceptance"] = (off, off) if (st.anc_on or not st.joint_on) \
                else (sc, sh)
            stats["ancillary_acceptance"] = an if st.anc_on else off
        return composition_draws(draws), stats

    def adapt(st, draws, stats):
        half = np.log(draws["alpha"][len(draws["alpha"]) // 2:])   # theta over the window's second half
        centre = half.mean(axis=0)
        st.chol, st.chol_inv = slice_transform(np.exp(centre), spec)
        if n_joint > 0 and not st.anc_on and st.joint_on:   # steps towards acceptance 0.3; dshift at the mean
            st.joint_on = max(np.mean(stats["scale_acceptance"]), np.mean(stats["shift_acceptance"])) >= 0.02
            st.step_u = _adapt_step(st.step_u, stats["scale_acceptance"])
            st.step_shift = _adapt_step(st.step_shift, stats["shift_acceptance"])
            st.dshift = _shift_map(np.exp(centre))
        if n_anc > 0 and st.anc_on:     # factor towards acceptance 0.25; base: the window's covariance of theta
            rate_ = float(np.mean(stats["ancillary_acceptance"]))
            st.anc_on = rate_ >= 0.02 or st.anc_factor > 0.2     # off after about three windows of refusals
            st.anc_factor = _adapt_step(st.anc_factor, stats["ancillary_acceptance"], target=0.25)
            if np.all(np.isfinite(centre)):
                st.anc_centre = centre              # the surrogate's centre: the window's mean of theta
            if len(half) > 2 * spec.d:      # a covariance worth the name (never below that of theta | D)
                cov = np.cov(half, rowvar=False) + st.chol @ st.chol.T
                if np.all(np.isfinite(cov)):
                    try:
                        st.anc_base = np.linalg.cholesky(cov) * (2.38 / np.sqrt(spec.d))
                    except np.linalg.LinAlgError:
                        pass
            st.anc_chol = st.anc_base * st.anc_factor
        return st

    dims = {"alpha": ["component"], "mean_composition": ["component"], "statistic": ["component"],
            "s_L": ["component"], "s_L1": ["component"]}       # the observed statistics share the coordinate
    return Sampler(init=init, run_chain=run_chain, adapt=adapt, dims=dims, coords={"component": np.arange(spec.d)})


# %% [markdown]
# ## The public samplers
#
# `mcmc` (MCMC$_{p1}$, the non-private benchmark on an exact $S_0(\mathbf D)$), `dp_mcmc` (DPMCMC) and `dp_remcmc`
# (DPreMCMC) check their input, build the latent blocks of the release under the prior (notebook 20, whose table says
# which parts are latent under each prior: both parts of a split release under p1 and p5, else $\mathbf D_2$), run the
# chains and package an ArviZ object (posterior `alpha` and `mean_composition`
# $= \boldsymbol\alpha/\alpha_0 = E[\mathbf x \mid \boldsymbol\alpha]$, their docstrings say the rest).
#
# DPreMCMC uses $\min(b, n_k)$ latent records for a block of $n_k$ records, each with power $n_k / \min(b, n_k)$.

# %%
#| export
_RECORD_UPDATES = {"ju": _UPDATE_JU, "model5": _UPDATE_MODEL5}


def _check_run(n_iter, n_warmup, n_chains, thin, n_slice, progress, n_jobs=None):
    """Check the keywords shared by every sampler (dplit._validate.run_settings) and n_slice."""
    V.run_settings(n_iter, n_warmup, n_chains, thin, progress, n_jobs)
    return V.count(n_slice, "n_slice")


_MONITORED = ["alpha", "mean_composition"]     # what the convergence report (and n_iter="auto") watches

# %%
#| export
def mcmc(statistic, n, *, prior="p1", n_iter=2_000, n_warmup=500, n_chains=4, thin=1, n_slice=2,
         rng=None, progress=True, n_jobs=None, target_ess=400, max_rhat=RHAT_MAX, max_iter=200_000, max_time=None):
    """MCMC_p1: sample the non-private posterior pi(alpha | S0(D)) of eq. (1) (Guo et al., Sec. 5.1).

    Parameters
    ----------
    statistic : array_like, shape (d,)
        The exact sufficient statistic ``S0(D)``, column means of ``log x_ij``.
    n : int
        Number of records behind ``statistic``.
    prior : {"p1"} or Prior, default "p1"
        Independent Gamma(1, 0.1) priors, or a prior object with a kernel form
        (independent gammas, or a Gaussian copula with gamma marginals).
    n_iter, n_warmup, n_chains, thin, n_slice, rng, progress, n_jobs, target_ess, max_rhat, max_iter, max_time
        As in :func:`dp_mcmc`, with the defaults of a cheap exact chain: 2,000 iterations after 500 of
        warm-up, no thinning, 2 slice cycles per iteration.

    Returns
    -------
    arviz.InferenceData
        Posterior ``alpha`` and ``mean_composition`` (chain, draw, component), sample stats
        ``slice_evaluations``, attrs of the result contract (``method="MCMC"``, ``eps_total = inf``:
        no noise; :data:`dplit.results.CONTRACT_ATTRS`), ``prior``, ``n``.
    """
    s = np.asarray(statistic, dtype=float)
    if s.ndim != 1 or s.size < 2 or not np.all(np.isfinite(s)):
        raise ValueError(f"statistic must be a finite 1-D array with d >= 2 entries, got shape {s.shape}")
    if not in_stat_range(s):
        raise ValueError("statistic must lie in Range(S0) (sum(exp(statistic)) < 1), as an exact S0(D) does; "
                         "for a noisy released statistic use dp_mcmc")
    n = V.count(n, "n")
    n_slice = _check_run(n_iter, n_warmup, n_chains, thin, n_slice, progress, n_jobs)
    rng = V.rng(rng)
    if isinstance(prior, str) and prior.lower() != "p1":
        raise ValueError(f"mcmc takes prior 'p1' or a Prior object (p2-p5 are built from a release), got {prior!r}")
    form = kernel_form_of(resolve_prior(prior, None, s.size, rng)[0], s.size)
    spec = ChainSpec(s_L=np.zeros((0, s.size)), m=np.zeros(0, dtype=np.int64), power=np.zeros(0),
                     inv_scale=np.zeros(0), log_a=0.0, T0=n * s, n0=float(n), prior=form, init_s=s, n_slice=n_slice)
    attrs = {"method": "MCMC", "prior": prior_name(prior), "n": n, "n_slice": n_slice}
    return run(_sampler(spec), n_iter=n_iter, n_warmup=n_warmup, n_chains=n_chains, thin=thin, rng=rng,
               progress=progress, n_jobs=n_jobs, attrs=attrs, observed_data={"statistic": s},
               privacy=privacy_attrs(eps_total=math.inf), report_vars=_MONITORED, desc="MCMC iterations",
               target_ess=target_ess, max_rhat=max_rhat, max_iter=max_iter, max_time=max_time)

# %%
#| export
def _dp_run(release, prior, b, record_update, n_iter, n_warmup, n_chains, thin, n_slice, rng, progress, n_jobs,
            method, until):
    """Shared body of dp_mcmc and dp_remcmc (``until``: the stopping rule of ``n_iter="auto"``, passed to run)."""
    release = check_release(release)
    if method == "DPreMCMC" and b > release.n:
        raise ValueError(f"b must be <= n = {release.n} (b latent records per released part, at most the part's "
                         f"records; b = n_part is DPMCMC), got {b:,}")
    if thin is None:                            # see dp_mcmc's docstring
        thin = 1 if isinstance(n_iter, str) else 10
    n_slice = _check_run(n_iter, n_warmup, n_chains, thin, n_slice, progress, n_jobs)
    V.choice(record_update, "record_update", tuple(_RECORD_UPDATES))
    rng = V.rng(rng)
    prior_obj, both = resolve_prior(prior, release, release.d, rng)
    blocks = release_blocks(release, both, b)
    spec = spec_from_blocks(blocks, release.a, kernel_form_of(prior_obj, release.d), n_slice,
                             mode=_RECORD_UPDATES[record_update])
    attrs = {"method": method, "prior": prior_name(prior), "eps1": release.eps1, "a": release.a,
             "n": release.n, "n1": release.n1, "n2": release.n2, "parts": "+".join(
                 ["D1", "D2"] if len(blocks) == 2 else (["D2"] if release.split else ["D"])),
             "latent_records": int(spec.m.sum()), "n_slice": n_slice,
             "plausibility_checked": int(release.checked)}
    if method == "DPreMCMC":
        attrs.update(b=int(b), record_update=record_update)
    observed = {"s_L": np.asarray(release.s_L)}
    if release.split:
        observed["s_L1"] = np.asarray(release.s_L1)
    result = run(_sampler(spec), n_iter=n_iter, n_warmup=n_warmup, n_chains=n_chains, thin=thin, rng=rng,
                 progress=progress, n_jobs=n_jobs, attrs=attrs, observed_data=observed, report_vars=_MONITORED,
                 privacy=privacy_attrs(release), desc="MCMC iterations", **until)
    return name_components(result, release.names)      # the release's component names, when it has them

# %%
#| export
def dp_mcmc(release, *, prior="p1", n_iter="auto", n_warmup=2_000, n_chains=4, thin=None, n_slice=20,
            rng=None, progress=True, n_jobs=None, target_ess=400, max_rhat=RHAT_MAX, max_iter=200_000,
            max_time=None):
    """DPMCMC: sample pi(alpha | released statistic) by data augmentation (Guo et al., Sec. 4.2.2).

    Alternates ``n_slice`` cycles of a hyperrectangle slice sampler for alpha given the latent
    records (Neal 2003, Fig. 8, in whitened log alpha), twenty ancillary proposals that move alpha
    with the records' quantiles held fixed (joint moves of alpha and all records; where they are
    nearly always refused, e.g. for alpha_j << 1, the warm-up replaces it by joint scale and shift
    moves), and a Metropolis-Hastings sweep over every latent record (Ju et al. 2022:
    Dirichlet(alpha) proposal, Laplace-ratio acceptance). Every step leaves the same joint law of
    alpha and the records invariant.

    Parameters
    ----------
    release : dplit.release.Release
        The curator's release. Unsplit: D is latent. Split (``n1 > 0``): with p1 or p5 both D1
        and D2 are latent (p5 = p1 posterior given D1, so the target is the same); with p3, p4 or
        another Prior object the prior comes from D1 and D2 is latent (model 4).
    prior : {"p1", "p3", "p4", "p5"} or Prior, default "p1"
        ``"p2"`` is refused (no density). Prior objects need a kernel form (independent gammas or
        a Gaussian copula with gamma marginals).
    n_iter : int or "auto", default "auto"
        Iterations per chain after warm-up (before thinning). ``"auto"``: extend the chains until
        alpha and E[x | alpha] reach bulk and tail ESS >= ``target_ess`` and R-hat <= ``max_rhat``
        (defaults 400 and 1.01), or ``max_iter`` iterations (default 200,000) or ``max_time``
        seconds; see :func:`dplit.sampling.run`. An integer runs exactly that many (the paper: 20,000).
    n_warmup : int, default 2000
        Warm-up iterations per chain (discarded; the slice map is adapted here).
    n_chains : int, default 4
        Chains, run in parallel threads when cores allow.
    thin : int, optional
        Keep every ``thin``-th iteration. Default: 10 with a fixed ``n_iter`` (2,000 draws per
        chain at the paper's 20,000), 1 with ``n_iter="auto"``, whose length follows the ESS, so that
        thinning would only discard information.
    n_slice : int, default 20
        Slice cycles for alpha per iteration (the paper used 1000; 20 maximises ESS per second
        in ``benchmarks/bench_mcmc.py``).
    rng : None, int or numpy.random.Generator
        Randomness; each chain gets a spawned generator (same seed, same draws).
    progress : bool, default True
        Show a progress bar.
    n_jobs : int, optional
        Threads; default ``min(n_chains, cpu_count)``. The draws do not depend on it.
    target_ess, max_rhat, max_iter, max_time
        The stopping rule of ``n_iter="auto"`` (see ``n_iter``); the report of a fixed ``n_iter``
        also uses ``max_rhat``.

    Returns
    -------
    arviz.InferenceData
        Posterior ``alpha`` and ``mean_composition`` (chain, draw, component; the component
        coordinate carries ``release.names`` when the release has them); sample stats
        ``record_acceptance`` (per iteration, averaged over the thinning window),
        ``slice_evaluations``, ``ancillary_acceptance``, ``scale_acceptance`` and
        ``shift_acceptance`` (NaN where the move did not run); attrs of the result contract
        (:data:`dplit.results.CONTRACT_ATTRS`: ``method="DPMCMC"``, ``eps_total`` and ``eps_by_part``
        from the release's ledger, ``seeds``, ``runtime``, ``converged`` and the diagnostics; a
        ``ConvergenceWarning`` when the chains have not converged) and ``prior``, ``eps1``, ``a``,
        ``n``, ``n1``, ``n2``, ``parts``.

    Examples
    --------
    >>> from dplit.dirichlet import dirichlet_draws
    >>> from dplit.release import release
    >>> X = dirichlet_draws([2.0, 3.0, 4.0], 500, rng=1)
    >>> r = release(X, eps1=1.0, eps2=0.5, candidates=[1e-3, 1e-2], rng=2, secure=False)
    >>> res = dp_mcmc(r, n_iter=4000, n_warmup=1000, n_chains=2, rng=3, progress=False)
    >>> mean = res.posterior["mean_composition"].mean(("chain", "draw")).values
    >>> bool(np.abs(mean - np.array([2.0, 3.0, 4.0]) / 9).max() < 0.05)      # E[x] recovered
    True
    """
    until = dict(target_ess=target_ess, max_rhat=max_rhat, max_iter=max_iter, max_time=max_time)
    return _dp_run(release, prior, None, "ju", n_iter, n_warmup, n_chains, thin, n_slice, rng,
                   progress, n_jobs, "DPMCMC", until)

# %%
#| export
def dp_remcmc(release, *, prior="p1", b=50, record_update="ju", n_iter="auto", n_warmup=2_000, n_chains=4,
              thin=None, n_slice=20, rng=None, progress=True, n_jobs=None, target_ess=400, max_rhat=RHAT_MAX,
              max_iter=200_000, max_time=None):
    """DPreMCMC: model (5) of Guo et al. (Sec. 4.2.2), b latent records each with power n_part / b.

    Parameters
    ----------
    release : dplit.release.Release
        The curator's release (parts used as in :func:`dp_mcmc`).
    prior : {"p1", "p3", "p4", "p5"} or Prior, default "p1"
        As in :func:`dp_mcmc`.
    b : int, default 50
        Latent records per released part (``min(b, n_part)`` are used); ``b = n2`` is DPMCMC.
    record_update : {"ju", "model5"}, default "ju"
        ``"ju"``: Dirichlet(alpha) proposal with Ju et al.'s Laplace-ratio acceptance (records
        from the unpowered model; the power enters the alpha update only): the paper's sampler.
        ``"model5"``: exact Metropolis-Hastings for the joint density (5), acceptance
        ``[p_Dir(x*)/p_Dir(x)]^(p-1)`` times the Laplace ratio; that joint law drifts to large
        alpha when ``p = n_part / b`` is large (see the notebook), kept for the demonstration.
    n_iter, n_warmup, n_chains, thin, n_slice, rng, progress, n_jobs, target_ess, max_rhat, max_iter, max_time
        As in :func:`dp_mcmc`.

    Returns
    -------
    arviz.InferenceData
        As :func:`dp_mcmc`, with ``method="DPreMCMC"`` and attrs ``b`` and ``record_update``.
    """
    b = V.count(b, "b")
    until = dict(target_ess=target_ess, max_rhat=max_rhat, max_iter=max_iter, max_time=max_time)
    return _dp_run(release, prior, b, record_update, n_iter, n_warmup, n_chains, thin, n_slice, rng, progress,
                   n_jobs, "DPreMCMC", until)


# %% [markdown]
# ## The demo data set
#
# The demo of this notebook and notebooks 73 and 74 run on one data set, `demo_data(seed=6)`: $n = 1000$ records from
# Dirichlet(2.2, 3.3, 4.4) ($\boldsymbol\alpha_3^{true}$ of Guo et al., Sec. 5.1), released twice by Algorithm 1 with the
# paper's candidate thresholds (`dplit.release.PAPER_CANDIDATES`, $10^{-1}, \dots, 10^{-6}$) and $t_c = 0.01$: unsplit with
# $\epsilon_1 = 1$, $\epsilon_2 = 0.25$, and split with $\epsilon_1 = 0.75$, $\epsilon_2 = 0.25$, $n_1 = n/4 = 250$. One
# generator seeded by `seed` draws the records, then each release's noise on the fast seeded path (`secure=False`; a
# curator's release uses OpenDP's), so the same seed gives the same data and releases. It is a demonstration, not API:
# importable from `dplit.mcmc`, not in its `__all__`.

# %%
#| export
class DemoData(NamedTuple):
    """The demo data set of notebooks 21, 73 and 74 (:func:`demo_data`)."""

    alpha: np.ndarray      # the true alpha, (2.2, 3.3, 4.4)
    X: np.ndarray          # the confidential records, shape (1000, 3)
    rel: Release           # unsplit release: eps1 = 1, eps2 = 0.25
    rel_split: Release     # split release: eps1 = 0.75, eps2 = 0.25, n1 = 250


def demo_data(seed=6):
    """The demo data set of notebooks 21, 73 and 74: n = 1000 records from Dirichlet(2.2, 3.3, 4.4), released twice.

    One generator, ``numpy.random.default_rng(seed)``, draws the records, then the unsplit release (eps1 = 1,
    eps2 = 0.25) and the split one (eps1 = 0.75, eps2 = 0.25, n1 = 250), both by Algorithm 1 with the paper's
    candidate thresholds (:data:`dplit.release.PAPER_CANDIDATES`), tc = 0.01 and the seeded fast noise
    (``secure=False``). Returns a :class:`DemoData` ``(alpha, X, rel, rel_split)``.
    """
    g = np.random.default_rng(seed)
    alpha = np.array([2.2, 3.3, 4.4])
    X = dirichlet_draws(alpha, 1000, rng=g)
    kw = dict(candidates=PAPER_CANDIDATES, tc=0.01, rng=g, secure=False)     # _release: dplit.release.release
    rel = _release(X, eps1=1.0, eps2=0.25, **kw)
    rel_split = _release(X, eps1=0.75, eps2=0.25, n1=len(X) // 4, **kw)
    return DemoData(alpha, X, rel, rel_split)


# %%
again, other = demo_data(6), demo_data(7)
assert np.array_equal(again.X, X_demo) and np.array_equal(again.rel.s_L, rel.s_L)     # same seed, same data
assert np.array_equal(again.rel_split.s_L1, rel_split.s_L1) and np.array_equal(again.rel_split.s_L, rel_split.s_L)
assert not np.array_equal(other.X, X_demo)
assert (rel.eps1, rel.eps2, rel.eps_total) == (1.0, 0.25, 1.25) and not rel.split and rel.n == rel.n2 == 1000
assert (rel_split.eps1, rel_split.eps2, rel_split.eps_total) == (0.75, 0.25, 1.0) and rel_split.split
assert (rel_split.n1, rel_split.n2) == (250, 750) and np.array_equal(alpha_true, [2.2, 3.3, 4.4])
print(f"demo_data(6): a = {rel.a:g} (unsplit), {rel_split.a:g} (split); n1, n2 = {rel_split.n1}, {rel_split.n2}")

# %% [markdown]
# ## Using the samplers
#
# The releases and runs of the first figure in detail: what Algorithm 1 chose for each release, and the posterior
# summaries. With `n_iter="auto"` each run extended its chains until the convergence report passed (bulk and tail ESS
# and $\hat R$ of every coordinate of $\boldsymbol\alpha$ and $E[\mathbf x \mid \boldsymbol\alpha]$).

# %%
print(rel.summary(), rel_split.summary(), sep="\n")
print("DPMCMC_p1:\n", summ_dp.iloc[:, :4], "\nMCMC_p1 (no privacy):\n", summ_np.iloc[:, :4])

# %% [markdown]
# ## Prior p5 (Guo et al., Sec. 4.2.1)
#
# p5 is the p1 posterior given $\mathbf s^{(1)}_L$ alone, known only through draws. `p5_prior` runs DPMCMC$_{p1}$ on the
# $\mathbf D_1$ part of a split release and wraps the pooled draws in `dplit.priors.DrawsPrior` (`make_prior("p5", release)`),
# for samplers that need only prior draws (ABC); MCMC does not need it (DPMCMC$_{p5}$ = DPMCMC$_{p1}$ on both parts).

# %%
#| export
def p5_prior(release, *, n_draws=4_000, rng=None, n_chains=4, thin=10, n_warmup=2_000, progress=True,
             **options):
    """Prior p5: draws of the p1 posterior given ``S_L(D1, a)`` (DPMCMC_p1 on the D1 part).

    Parameters
    ----------
    release : dplit.release.Release
        A split release (``n1 > 0``).
    n_draws : int, default 4000
        Number of draws kept (pooled over chains).
    rng, n_chains, thin, n_warmup, progress, **options
        Passed to :func:`dp_mcmc` (``n_iter`` is set to give ``n_draws`` draws).

    Returns
    -------
    dplit.priors.DrawsPrior
        The empirical law of the draws, named ``"p5"``.
    """
    release = check_release(release)
    if not release.split:
        raise ValueError("p5 needs a split release (n1 > 0): it is the posterior given S_L(D1, a)")
    n_draws = V.count(n_draws, "n_draws")
    n_chains = V.count(n_chains, "n_chains")
    thin = V.count(thin, "thin")
    d1 = Release.from_statistic(release.s_L1, release.n1, release.a, release.eps1, check=release.checked)
    per_chain = -(-n_draws // n_chains)
    res = dp_mcmc(d1, prior="p1", n_iter=per_chain * thin, n_warmup=n_warmup, n_chains=n_chains, thin=thin,
                  rng=rng, progress=progress, **options)
    draws = res.posterior["alpha"].values.reshape(-1, release.d)[:n_draws]
    return DrawsPrior(draws, name="p5", source=f"DPMCMC_p1 on S_L(D1, a), n1 = {release.n1}")


# %%
p5 = p5_prior(rel_split, n_draws=2000, rng=4)
print(p5.describe())
assert p5.name == "p5" and p5.draws.shape == (2000, 3) and not p5.has_density

# %% [markdown]
# ## Simulation-based calibration of DPMCMC
#
# `_sbc_ranks` simulates $\boldsymbol\alpha$ from a Gamma(1, rate) prior, a data set and its release, runs one thinned DPMCMC
# chain per replication and returns the ranks of the truth among the draws (`dplit.testing.sbc_ranks`), optionally with a
# wrong Laplace scale. Notebook 73 runs it, with a planted error to catch; `tests/test_sbc_power.py` measures its power.

# %%
#| export
def _sbc_ranks(n_rep, *, n, d, a, eps, L=19, thin=60, n_warmup=600, n_slice=20, scale_factor=1.0, b=None,
               moves=True, prior_rate=0.1, monitor=None, rng=None):
    """Ranks of prior draws among L thinned DPMCMC draws (dplit.testing.sbc_ranks), one column per monitored value.

    Data are simulated from the prior Gamma(1, ``prior_rate``) (p1 at the default rate) and the release of Guo et al.
    (Laplace scale -d log(a) / (n eps)); the sampler is told a scale multiplied by ``scale_factor`` (1 = correct) and
    uses ``b`` latent records (None = n, DPMCMC); ``moves=False`` leaves out steps (iii) and (iv).
    ``monitor`` maps alpha, shape (k, d), to the monitored values, shape (k, m) (None: alpha itself).
    """
    watch = (lambda al: al) if monitor is None else monitor
    p1 = GammaPrior(1.0, prior_rate, d=d)
    scale = laplace_scale(d, a, n, eps)

    def simulate(g):
        alpha = g.gamma(p1.shape, 1.0 / p1.rate)
        logx = log_dirichlet_draws_reference(alpha, n, g)
        return watch(alpha[None])[0], np.maximum(logx, np.log(a)).mean(axis=0) + g.laplace(0.0, scale, d)

    def posterior(s_L, n_draws, g):
        spec = spec_from_blocks([(s_L, n, n if b is None else b, scale * scale_factor)], a, p1.kernel_form(),
                                 n_slice)
        if not moves:
            spec.n_joint = spec.n_anc = 0
        draws = run_chains(_sampler(spec), n_iter=n_draws * thin, n_warmup=n_warmup, n_chains=1, thin=thin, rng=g)
        return watch(draws[0]["alpha"][0])

    return sbc_ranks(simulate, posterior, n_rep, L=L, rng=rng)


# %% [markdown]
# ## Explore
#
# Release the demo data at another budget $\epsilon_1$ (same $a$) and look at the posterior of each $\alpha_j$ under DPMCMC
# ($b = 0$) or DPreMCMC ($b > 0$ latent records), next to MCMC$_{p1}$'s (no privacy) and the truth (dashed). The
# callback is a plain function, `explore`; the widget calls it once with the defaults when it is displayed.

# %%
def explore(eps1=1.0, n_iter=2000, b=0):
    """Posterior histograms of alpha under DPMCMC (b = 0) or DPreMCMC (b > 0) at budget eps1."""
    scale_ = laplace_scale(3, rel.a, n_demo, eps1)
    rel_x = Release.from_statistic(censored_stat(X_demo, rel.a) + np.random.default_rng(50).laplace(0, scale_, 3),
                                   n_demo, rel.a, eps1)
    kw = dict(n_iter=int(n_iter), n_warmup=500, n_chains=2, thin=2, rng=51, progress=False)
    res = dp_mcmc(rel_x, **kw) if b == 0 else dp_remcmc(rel_x, b=int(b), **kw)
    fig, axes = plt.subplots(1, 3, figsize=(7.5, 2.6))
    for j, ax in enumerate(axes):
        x_dp = res.posterior["alpha"].values[..., j].ravel()
        x_np = post_np.posterior["alpha"].values[..., j].ravel()
        span = np.quantile(np.concatenate([x_dp, x_np]), [0.002, 0.99])     # the far right tail is cut
        ax.hist(x_dp, bins=40, range=span, density=True, alpha=0.6, label=res.posterior.attrs["method"])
        ax.hist(x_np, bins=40, range=span, density=True, alpha=0.6, label="MCMC_p1")
        ax.axvline(alpha_true[j], c="k", ls="--")
        ax.set_xlabel(f"alpha_{j + 1}")
    axes[0].legend(fontsize=9)
    fig.suptitle(f"eps1 = {eps1:g}, {int(n_iter)} iterations per chain (axes cut at the 99th percentile)", fontsize=10)
    fig.tight_layout()
    return res


# %%
# NBVAL_IGNORE_OUTPUT
from ipywidgets import FloatLogSlider, IntSlider, interactive  # noqa: E402
from dplit.testing import dead_controls  # noqa: E402

explorer = interactive(explore, eps1=FloatLogSlider(value=1.0, base=10, min=-1, max=2, step=0.25),
                       n_iter=IntSlider(value=2000, min=500, max=10000, step=500),
                       b=IntSlider(value=0, min=0, max=500, step=25))
assert explorer.result.posterior["alpha"].shape == (2, 1000, 3)     # the default call: 2 chains, 2000 / 2 draws
assert dead_controls(explorer) == []  # every control changes the view (one its callback ignores fails)
explorer

# %% [markdown]
# The figure above is the widget's default view ($\epsilon_1 = 1$, 2,000 iterations per chain, DPMCMC): the demo data
# released again with fresh noise. Moving a slider runs the sampler again and redraws it.

# %% [markdown]
# ## When to use this

# %%
ess_dp = float(post_dp.posterior.attrs["ess_bulk_min"])
display(Markdown(f"""
* **DPMCMC$_{{p1}}$** is the exact posterior given the release (checked in notebook 73) and the default. On the demo
  release above it reached a bulk ESS of {ess_dp:.0f} in {post_dp.posterior.attrs["runtime"]:.1f} s
  ({int(post_dp.posterior.attrs["n_iter"])} iterations per chain, {post_dp.posterior.sizes["chain"]} chains), with
  posterior standard deviations of $\\alpha_j$ {ratio_alpha.min():.1f}-{ratio_alpha.max():.1f} times those without
  privacy. Use `n_iter="auto"`: it extends the chains until the convergence report passes (timed over the paper's
  grid in notebook 74). A very large $\\epsilon$ freezes the latent records, but not $\\boldsymbol\\alpha$.
* **DPreMCMC** saves the sweep over $n_2$ records (cheap here); it is good only when the Laplace noise is small against
  the spread of $S_0$ (large $n$ and $\\epsilon$), else it inflates $\\boldsymbol\\alpha$ (notebook 74). Prefer DPMCMC.
* **p3/p4** need a split release and use $\\mathbf D_2$ only in the likelihood; **p1 on a split release** (equivalently
  p5) uses both parts exactly. `p5_prior` gives p5 draws for samplers that need only draws (ABC, notebook 22).
* `mcmc` (MCMC$_{{p1}}$) is the non-private benchmark: use it on confidential data or in simulation studies only.
"""))
