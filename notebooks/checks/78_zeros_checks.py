# %% [markdown]
# # Exact zeros, measured: the bias of the mean composition against the share of zeros and the threshold
#
# * **For:** measuring what exact zeros do to the estimates of Guo et al.'s methods (the censored statistic of Sec. 3.1 reads each zero as $\log a$), checking the large-sample bias that notebook 13 derives, and checking that amalgamation or dropping the records with zeros removes it.
# * **You need:** nothing: the checks simulate their own data sets.
# * **You get:** the bias of $E[x_j]$ by share of zeros and threshold, for the non-private MLE of the censored statistic and for DPMCMC; the threshold the DP rule picks when there are zeros and the advice a release gives; the same after the two treatments.
#
# Reading order: after notebooks 13 (the derivation, `zero_bias`, `zero_advice`, `amalgamate`), 15 (the release)
# and 21 (DPMCMC). This notebook exports nothing.

# %% [markdown]
# ## Parameters
#
# Sizes come from the size switch (`DPLIT_QUICK=1` gives the quick sizes of the test suite); every random draw
# comes from a generator seeded here. The data are four-part time-use compositions (sleep, work, leisure, other;
# Dirichlet with `ALPHA` below, so that work takes a fifth of the day on average) in which a share of the records did no work that day: their work is exactly 0
# and the rest of the day keeps its proportions (notebook 13, section 5).

# %%
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display

from dplit.censoring import (amalgamate, drop_zero_rows, zero_advice, zero_bias, zero_censored_stat, zero_counts,
                             zero_truth)
from dplit.config import is_quick, size
from dplit.dirichlet import censored_stat, dirichlet_mle
from dplit.mcmc import dp_mcmc
from dplit.release import Release, laplace_scale, release

SEED = 20261129
rng = np.random.default_rng(SEED)
ALPHA = np.array([4.5, 2.0, 2.5, 1.0])
NAMES = ("sleep", "work", "leisure", "other")
WORK = 1
n = size(full=2000, quick=500)                      # records per data set
n_dp = 2000                                         # records per DPMCMC data set (both sizes; chains are shorter when quick)
n_rep = size(full=200, quick=20)                    # data sets per cell of the MLE table
SHARES = (0.0, 0.02, 0.05, 0.10, 0.15, 0.25)        # share of records with work = 0
THRESHOLDS = (1e-6, 1e-4, 1e-2, 0.05)               # the paper's 1e-6, 1e-4, 1e-2 (Sec. 5.1) and one larger
EPS1 = 1.0
DP_SHARES = size(full=(0.0, 0.05, 0.15, 0.25), quick=(0.0, 0.25))
DP_THRESHOLDS = size(full=(1e-6, 1e-2), quick=(1e-6,))
CHAIN = dict(n_iter=size(full=1000, quick=100), n_warmup=size(full=500, quick=100), n_chains=size(full=4, quick=2),
             thin=1, progress=False)
print(f"quick mode: {is_quick()}; n = {n}, n_rep = {n_rep}, DPMCMC cells: {len(DP_SHARES) * len(DP_THRESHOLDS)}")


def with_zeros(z, size_, rng, alpha=ALPHA, j=WORK):
    """size_ records of Dirichlet(alpha), a share z of them with x_j = 0 and the rest renormalised."""
    X = rng.dirichlet(alpha, size=size_)
    hit = rng.random(size_) < z
    X[hit, j] = 0.0
    X[hit] /= X[hit].sum(axis=1, keepdims=True)
    return X


def truth(z):
    """The true mean composition of with_zeros(z, ...)."""
    return zero_truth(ALPHA, np.eye(ALPHA.size)[WORK] * z)


def mle_mean(X, a):
    """E[x] of the Dirichlet MLE of the censored statistic (non-private)."""
    fit = dirichlet_mle(censored_stat(X, a))
    return fit / fit.sum()

# %% [markdown]
# ## 1. The non-private MLE: bias against the share of zeros and the threshold
#
# For each share of zeros and threshold, `n_rep` data sets; the estimate is $\hat\alpha/\hat\alpha_0$ from the Dirichlet
# MLE of the censored statistic (no noise: what is left is the zeros' bias). The table gives the mean bias of $E[x_j]$
# for work (the component with zeros) with its standard error; the line is notebook 13's large-sample limit
# (`zero_bias`). The checks: at 15% zeros and the paper's smallest candidate the bias is negative and many standard
# errors from 0; without zeros it is within noise at the small thresholds; the simulation matches the limit in every
# cell; the bias grows with the share of zeros and shrinks as $a$ grows.

# %%
t0 = time.perf_counter()
bias = np.empty((len(SHARES), len(THRESHOLDS), ALPHA.size))
se = np.empty_like(bias)
limit = np.empty_like(bias)
for i, z in enumerate(SHARES):
    data = [with_zeros(z, n, rng) for _ in range(n_rep)]
    for k, a in enumerate(THRESHOLDS):
        est = np.array([mle_mean(X, a) for X in data]) - truth(z)
        bias[i, k], se[i, k] = est.mean(axis=0), est.std(axis=0, ddof=1) / np.sqrt(n_rep)
        limit[i, k] = zero_bias(ALPHA, np.eye(ALPHA.size)[WORK] * z, a)
print(f"{len(SHARES) * n_rep} data sets of n = {n}, {len(THRESHOLDS)} thresholds: {time.perf_counter() - t0:.1f} s")
rows = ["| zeros | " + " | ".join(f"a = {a:g}" for a in THRESHOLDS) + " |", "|---" * (len(THRESHOLDS) + 1) + "|"]
rows += [f"| {z:.0%} | " + " | ".join(f"{bias[i, k, WORK]:+.4f} ({se[i, k, WORK]:.4f})" for k in range(len(THRESHOLDS)))
         + " |" for i, z in enumerate(SHARES)]
display(Markdown("Bias of $E[x_{work}]$ (standard error), non-private MLE of the censored statistic, "
                 f"n = {n}, {n_rep} data sets per cell; true $E[x_{{work}}]$ = {truth(0)[WORK]:.2f} without zeros.\n\n"
                 + "\n".join(rows)))

i15, i0, k6 = SHARES.index(0.15), SHARES.index(0.0), THRESHOLDS.index(1e-6)
assert bias[i15, k6, WORK] < -10 * se[i15, k6, WORK] and bias[i15, k6, WORK] < -0.05
assert np.all(np.abs(bias[i0, :2]) < 4 * se[i0, :2] + 5e-4)            # no zeros, a <= 1e-4: within noise
assert np.all(np.abs(bias - limit) < 4 * se + 2e-3)                      # the limit of notebook 13, every cell
assert np.all(np.diff(bias[:, k6, WORK]) < 0)                            # more zeros, more bias
assert np.all(np.diff(bias[2:, :3, WORK], axis=1) > 0)                   # larger a, less bias (a <= 1e-2)
assert np.all(bias[1:, k6, 0] > 0)                                       # the other components pay the difference

# %% [markdown]
# ## 2. DPMCMC
#
# DPMCMC (Sec. 4.2.2, `dp_mcmc`, prior p1) on a release of the same kind of data: the censored statistic at a fixed
# threshold with Laplace noise at $\epsilon_1 = 1$ (`Release.from_statistic`, no threshold selection), one data set
# of `n_dp` records per cell. The chains are short (their posterior mean is all we need, and it is far more precise than the bias);
# the convergence warning is caught and reported. The check: the posterior mean of $E[x_{work}]$ misses the truth
# by more than 4 posterior standard deviations whenever there are 15% or more zeros at $a = 10^{-6}$, and lies
# within 4 of them without zeros; it is close to the large-sample limit of the methods that model the censoring
# (`zero_bias(..., target="censored")`).

# %%
def dp_posterior(X, a, rng, names=NAMES):
    """Posterior mean and sd of E[x] by DPMCMC on a fixed-threshold release of X, and whether it converged."""
    s_L = censored_stat(X, a) + rng.laplace(0.0, laplace_scale(X.shape[1], a, len(X), EPS1), X.shape[1])
    r = Release.from_statistic(s_L, len(X), a, EPS1, names=names)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = dp_mcmc(r, rng=rng, **CHAIN)
    draws = res.posterior["mean_composition"].values.reshape(-1, X.shape[1])
    return draws.mean(axis=0), draws.std(axis=0), bool(res.posterior.attrs.get("converged"))


t0 = time.perf_counter()
dp = {}
for z in DP_SHARES:
    X = with_zeros(z, n_dp, rng)
    for a in DP_THRESHOLDS:
        m, sd, ok = dp_posterior(X, a, rng)
        lim = zero_bias(ALPHA, np.eye(ALPHA.size)[WORK] * z, a, target="censored")
        dp[z, a] = (m - truth(z), sd, lim, ok)
        print(f"zeros {z:4.0%}, a = {a:g}: bias of E[work] {m[WORK] - truth(z)[WORK]:+.4f} (posterior sd "
              f"{sd[WORK]:.4f}), limit {lim[WORK]:+.4f}, converged {ok}")
print(f"DPMCMC: {time.perf_counter() - t0:.0f} s")
for (z, a), (b, sd, lim, _converged) in dp.items():
    if z == 0:
        assert abs(b[WORK]) < 4 * sd[WORK], (z, a)
    elif z >= 0.15 and a == 1e-6:
        assert b[WORK] < -4 * sd[WORK] and b[0] > 0, (z, a)
    assert abs(b[WORK] - lim[WORK]) < 4 * sd[WORK] + 0.01, (z, a)

# %% [markdown]
# ## The figure: bias against the share of zeros, one line per threshold
#
# Lines: notebook 13's large-sample limit of the MLE; dots: the simulated MLE (section 1, with two standard errors);
# triangles: DPMCMC (section 2, with two posterior standard deviations). Left, work (the component with zeros);
# right, sleep (a component without).

# %%
# NBVAL_IGNORE_OUTPUT
z_grid = np.linspace(0.0, 0.25, 26)
fig, axes = plt.subplots(1, 2, figsize=(8, 3.2), sharex=True)
for k, a in enumerate(THRESHOLDS):
    curve = np.array([zero_bias(ALPHA, np.eye(ALPHA.size)[WORK] * z, a) for z in z_grid])
    for axis, j in zip(axes, (WORK, 0)):
        line, = axis.plot(100 * z_grid, curve[:, j], lw=1.2, label=f"a = {a:g}")
        axis.errorbar(100 * np.array(SHARES), bias[:, k, j], 2 * se[:, k, j], fmt="o", ms=3, c=line.get_color())
        pts = [(z, dp[z, a]) for z in DP_SHARES if (z, a) in dp]
        if pts:
            axis.errorbar([100 * z for z, _ in pts], [v[0][j] for _, v in pts], [2 * v[1][j] for _, v in pts],
                          fmt="^", ms=5, mfc="none", c=line.get_color())
for axis, j in zip(axes, (WORK, 0)):
    axis.axhline(0.0, c="k", lw=0.6)
    axis.set(xlabel="records with work = 0 (%)", title=f"bias of $E[x_{{{NAMES[j]}}}]$")
axes[0].set_ylabel("estimate - truth")
axes[1].legend(fontsize=8, title="threshold", title_fontsize=8, frameon=False)
fig.tight_layout()

# %% [markdown]
# ## 3. The threshold rule meets zeros, and the advice of the release
#
# With the paper's candidates and $t_c = 0.01$ (Sec. 5.1), Algorithm 1 on data with zeros: the records with a zero
# are censored at every candidate, so once they are more than $t_c$ of the data the rule falls back to the smallest
# candidate, where the bias is largest (section 1). The check: from 5% zeros on, the rule picks $a_1 = 10^{-6}$ and
# `zero_advice`, reading only the published fields, says the records probably hold exact zeros; at 15% it names
# work. At 5% it may name "other" instead, whose entries are small without being zero: the rates count records, not
# components, and a few zeros in work give the same statistic as small entries in other (notebook 13, section 6).
# Without zeros it gives no advice.

# %%
CANDIDATES = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1)
n_release = 2000                                    # a release is cheap: the full size at both sizes
for z in (0.0, 0.02, 0.05, 0.15):
    r = release(with_zeros(z, n_release, rng), eps1=0.75, eps2=0.25, candidates=CANDIDATES, tc=0.01, names=NAMES, rng=rng,
                secure=False)
    advice = zero_advice(r.p_hat_G, r.candidates, r.a, r.tc, s_L=r.s_L, n=r.n, names=r.names)
    print(f"zeros {z:4.0%}: a = {r.a:g}, noisy rate at a_1 {r.p_hat_G[0]:.3f}; advice: {len(advice)} sentences")
    if z == 0.0:
        assert advice == []
    if z >= 0.05:
        assert r.a == CANDIDATES[0] and "probably hold exact zeros" in advice[0], advice
    if z >= 0.15:
        assert "point to work (" in advice[1], advice
print("\n".join(advice))

# %% [markdown]
# ## 4. Treatments: amalgamation and dropping the records with zeros
#
# At 15% zeros, the same simulation after each treatment of notebook 13, section 7:
#
# * **merge** work with leisure (`amalgamate`), then estimate $E[x_{work} + x_{leisure}]$, whose truth is the sum
#   of the two true means;
# * **drop** the records with a zero (`drop_zero_rows`), then estimate the mean composition of the records without
#   zeros, $\boldsymbol\alpha/\alpha_0$.
#
# The check: at every threshold up to $10^{-2}$ the treated bias is within 4 standard errors of 0 plus a tolerance
# (0.002 after dropping: the MLE's bias at finite $n$ and the censoring bias of section 3; 0.006 after merging, where
# the data are a mixture of two Dirichlets, notebook 13, section 7) and below an eighth of the untreated bias at
# $10^{-6}$; one DPMCMC run per treatment at $a = 10^{-6}$ agrees.

# %%
z_t = 0.15
groups = {"sleep": [0], "work+leisure": [1, 2], "other": [3]}
data = [with_zeros(z_t, n, rng) for _ in range(n_rep)]
merged_truth = truth(z_t) @ np.array([[1, 0, 0], [0, 1, 0], [0, 1, 0], [0, 0, 1]])
kept_truth = ALPHA / ALPHA.sum()
treated = {}
for a in THRESHOLDS[:3]:
    m = np.array([mle_mean(amalgamate(X, groups), a) for X in data]) - merged_truth
    d_ = np.array([mle_mean(drop_zero_rows(X)[0], a) for X in data]) - kept_truth
    treated[a] = {name: (v.mean(axis=0), v.std(axis=0, ddof=1) / np.sqrt(n_rep)) for name, v in (("merge", m), ("drop", d_))}
    print(f"a = {a:g}: bias of E[work+leisure] after merging {treated[a]['merge'][0][1]:+.4f} "
          f"({treated[a]['merge'][1][1]:.4f}); of E[work | no zero] after dropping {treated[a]['drop'][0][WORK]:+.4f} "
          f"({treated[a]['drop'][1][WORK]:.4f}); untreated {bias[i15, THRESHOLDS.index(a), WORK]:+.4f}")
    for name, j, tol in (("merge", 1, 6e-3), ("drop", WORK, 2e-3)):
        b_, s_ = treated[a][name]
        assert abs(b_[j]) < 4 * s_[j] + tol and abs(b_[j]) < abs(bias[i15, k6, WORK]) / 8, (a, name, b_[j], s_[j])
n_dropped = [drop_zero_rows(X)[1] for X in data]
print(f"dropped {np.mean(n_dropped):.0f} of {n} records on average ({np.mean(n_dropped) / n:.1%})")
assert abs(np.mean(n_dropped) / n - z_t) < 0.02

X = with_zeros(z_t, n_dp, rng)
m_merge, sd_merge, _ = dp_posterior(amalgamate(X, groups), 1e-6, rng, names=tuple(groups))
kept, n_drop = drop_zero_rows(X)
m_drop, sd_drop, _ = dp_posterior(kept, 1e-6, rng)
m_raw, sd_raw, _ = dp_posterior(X, 1e-6, rng)
print(f"DPMCMC at a = 1e-6: E[work] {m_raw[WORK]:.3f} (truth {truth(z_t)[WORK]:.3f}); merged E[work+leisure] "
      f"{m_merge[1]:.3f} (truth {merged_truth[1]:.3f}); E[work] after dropping {n_drop} records {m_drop[WORK]:.3f} "
      f"(truth {kept_truth[WORK]:.3f})")
assert abs(m_merge[1] - merged_truth[1]) < 4 * sd_merge[1] + 3e-3 and abs(m_drop[WORK] - kept_truth[WORK]) < 4 * sd_drop[WORK]
assert truth(z_t)[WORK] - m_raw[WORK] > 4 * sd_raw[WORK]

# %% [markdown]
# ## The advice that follows

# %%
b6, b2 = bias[i15, k6, WORK], bias[i15, THRESHOLDS.index(1e-2), WORK]
display(Markdown(f"""
* **Exact zeros bias every method, and the bias does not shrink with $n$ or $\\epsilon$.** With {SHARES[i15]:.0%} of
  the records at work = 0 the non-private MLE of the censored statistic puts $E[x_{{work}}]$ at
  {truth(SHARES[i15])[WORK] + b6:.3f} instead of {truth(SHARES[i15])[WORK]:.3f} at $a = 10^{{-6}}$; DPMCMC agrees with it
  (section 2). The other components are overestimated.
* **Smaller thresholds make it worse, larger ones reduce it without removing it**: at $a = 10^{{-2}}$ the bias is
  {b2:+.3f} instead of {b6:+.3f}. The threshold rule does the opposite of what helps: with more zeros than $t_c$ it
  falls back to the smallest candidate (section 3). "Consider smaller candidates" is the wrong advice for zeros.
* **Treat the zeros before the release**: merge the component with another that is never zero (`amalgamate`; no
  privacy cost, the estimand becomes the merged share), or drop the records with zeros and report how many
  (`drop_zero_rows`; the estimand becomes the mean of the records without zeros, and the published $n$ then counts
  them exactly). Both remove the bias (section 4).
* **After a release**, a noisy censoring rate far above $t_c$ at the smallest candidate that stays flat across
  candidates is the signature of zeros; `zero_advice` says so and names the components the released statistic
  points to.
"""))
