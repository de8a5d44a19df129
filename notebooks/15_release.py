# %% [markdown]
# # The curator's release: threshold selection and the noisy censored statistic
#
# * **For:** publishing compositional data under differential privacy by Algorithm 1 of Guo et al. (Sec. 3, Theorems 1-2): choose the censoring threshold with the geometric mechanism, release the censored sufficient statistic with the Laplace mechanism.
# * **You need:** an $(n, d)$ array of compositions (or raw amounts to `close`, notebook 12) and a privacy budget split into $\epsilon_1$ (statistic) and $\epsilon_2$ (threshold).
# * **You get:** a `Release` (notebook 14) that every inference method reads, saved as JSON; the price of the threshold in bias and noise, and how fast the DP choice finds the right one.
#
# Reading order: this notebook derives and runs the release; notebook 14 is the published record (its fields,
# plausibility checks, JSON), notebook 71 checks that `release` does what it claims (the noise, the split, a
# privacy audit). Import everything from `dplit.release`.

# %%
#| default_exp release
#| internal censoring_counts

# %% [markdown]
# ## Parameters
#
# Sizes come from the size switch (`DPLIT_QUICK=1` gives the quick size of the test suite); every random
# draw comes from a generator seeded here. The candidate thresholds and $t_c$ are those of the paper's
# simulation study (Sec. 5.1).

# %%
import numpy as np
import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from dplit.config import size

n_rel = size(full=4_000, quick=600)  # releases per statistical check
n_rep = size(full=4_000, quick=800)  # replicates per point of the Theorem 1 figure
SEED = 20261123
rng = np.random.default_rng(SEED)
CANDIDATES = (0.1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6)  # as listed in Sec. 5.1 (any order is accepted)
TC = 0.01
from dplit.censoring import PAPER_ALPHAS   # the five true parameters of Sec. 5.1, defined once (notebook 13)
ALPHAS = {f"alpha{k}": np.array(a) for k, a in enumerate(PAPER_ALPHAS, 1)}   # alpha1 ... alpha5

# %% [markdown]
# ## What it gives
#
# The result first, from the finished module `dplit.release` (sections 1-4 derive it). What a curator publishes:
# 5,000 records from $\mathrm{Dirichlet}(2.2, 3.3, 4.4)$ ($\boldsymbol\alpha_3$ of Sec. 5.1) released by Algorithm 1
# (Sec. 3.3) at $\epsilon = 1$, $\epsilon_2 = 0.25$ to choose the threshold $a$ among the paper's candidates, $\epsilon_1 = 0.75$
# for the noisy censored statistic $S_L$. Below the published summary (the record every inference method reads, with
# its budget line), the released $S_L$ beside what it protects, the confidential $S_0(\mathbf D, a)$, and beside the
# model's $E[\log x_j] = \psi(\alpha_j) - \psi(\sum_k \alpha_k)$. The check: the ledger spends exactly
# $\epsilon_1 + \epsilon_2 = 1$, the chosen $a$ is a candidate, and $S_L$ is within 10 Laplace scales of $S_0(\mathbf D, a)$
# (a miss has probability $e^{-10}$ per component).

# %%
from scipy.special import digamma  # noqa: E402

import dplit.release as dpr  # noqa: E402
from dplit.dirichlet import censored_stat, dirichlet_draws  # noqa: E402

X_first = dirichlet_draws(ALPHAS["alpha3"], 5000, rng=SEED + 2)
rel_first = dpr.release(X_first, eps1=0.75, eps2=0.25, candidates=CANDIDATES, tc=TC, rng=SEED + 3, secure=False,
                        names=["x1", "x2", "x3"])        # seeded noise (secure=False): a simulation
print(rel_first.summary())
exact_first = censored_stat(X_first, rel_first.a)
display(Markdown("| | " + " | ".join(rel_first.names) + " |\n|---|---|---|---|\n" + "\n".join(
    f"| {what} | " + " | ".join(f"{v:.4f}" for v in vals) + " |" for what, vals in [
        ("released $S_L$ (public)", rel_first.s_L), ("$S_0(\\mathbf D, a)$ (confidential)", exact_first),
        ("$E[\\log x_j]$ (the model)", digamma(ALPHAS["alpha3"]) - digamma(ALPHAS["alpha3"].sum()))])))
assert rel_first.eps_total == 1.0 and sorted(e.eps for e in rel_first.budget.entries) == [0.25, 0.75]
assert rel_first.a in CANDIDATES and np.all(np.abs(rel_first.s_L - exact_first) < 10 * rel_first.scale)

# %% [markdown]
# A release censors every entry at a threshold $a$ and adds Laplace noise to the censored log statistic
# $S_0(\mathbf D, a)$ (Sec. 3.1), so $a$ trades censoring bias (large $a$) against noise (small $a$: the scale is
# $-d\log a/(n\epsilon_1)$). The curves are the mean squared error of the released statistic as an estimate of
# $E[\log\mathbf x]$ (section 4's formula) over $a$, for three of the paper's parameters (Sec. 5.1) and $n = 1000$
# records; each dot is the threshold that Algorithm 1's DP rule (Sec. 3.2, the paper's candidates, $t_c = 0.01$,
# $\epsilon_2 = \epsilon_1/3$) picks most often in 50 releases. The check: every curve has its minimum inside the grid
# (the trade-off is real), and a smaller $\epsilon_1$ never moves it to a smaller $a$.

# %%
# NBVAL_IGNORE_OUTPUT
g_fig = np.random.default_rng(SEED + 1)   # its own stream: the draws below do not depend on this cell
a_grid = np.geomspace(1e-8, 0.3, size(full=40, quick=12))
fig_alphas = ("alpha2", "alpha3", "alpha4")
curves = {(k, e): np.array([dpr.release_mse(ALPHAS[k], a_, 1000, e) for a_ in a_grid])
          for k in fig_alphas for e in (0.25, 1.0)}
for (k, e), c in curves.items():
    i = int(np.argmin(c))
    assert 0 < i < a_grid.size - 1, (k, e)  # an interior optimum: the trade-off is real
for k in fig_alphas:  # a smaller budget pushes the optimum to larger a
    assert a_grid[np.argmin(curves[(k, 0.25)])] >= a_grid[np.argmin(curves[(k, 1.0)])]

fig, ax = plt.subplots(1, len(fig_alphas), figsize=(7, 2.8))
for axis, k in zip(ax, fig_alphas):
    Xk = g_fig.dirichlet(ALPHAS[k], size=1000)
    for e, ls in ((0.25, "-"), (1.0, "--")):
        axis.plot(a_grid, curves[(k, e)], ls=ls, label=f"$\\epsilon_1$ = {e}")
        a_dp = [dpr.release(Xk, eps1=e, eps2=e / 3, candidates=CANDIDATES, tc=TC, rng=g_fig, secure=False).a for _ in range(50)]
        vals, cnt = np.unique(a_dp, return_counts=True)
        a_mode = vals[np.argmax(cnt)]
        axis.plot([a_mode], [dpr.release_mse(ALPHAS[k], a_mode, 1000, e)], "o", c=axis.lines[-1].get_color())
    axis.set(xscale="log", yscale="log", xlabel="threshold $a$", xticks=[1e-8, 1e-5, 1e-2])
    axis.set_title(f"{k}, n = 1000", fontsize=10)
    axis.tick_params(labelsize=9)
ax[0].set_ylabel("MSE of $S_L$ for $E[\\log x]$")
ax[0].legend(fontsize=9)
fig.tight_layout()
# %% [markdown]
# ## 1. Why censor: the sensitivity of $S_0$ (Sec. 3.1)
#
# The Dirichlet sufficient statistic is $S_0(\mathbf D) = n^{-1}\sum_{i=1}^n(\log x_{i1}, \ldots, \log x_{id})$ (Sec. 2.2).
# An entry can be arbitrarily close to $0$, so one record can move $S_0$ arbitrarily far: its sensitivity
# is infinite and the Laplace mechanism cannot be applied. **Left-censoring** at $a \in (0, 1)$,
# $\tilde x_{ij} = \max\{x_{ij}, a\}$, confines every $\log\tilde x_{ij}$ to $[\log a, 0]$. Neighbouring data sets
# (same size, one record replaced, Sec. 2.1) then give
#
# $$\mathrm{GS}(S_0(\cdot, a)) = \frac1n \sup_{\mathbf x, \mathbf x' \in \Delta_{d-1}} \sum_{j=1}^d
# \big|\log\max\{x_j, a\} - \log\max\{x'_j, a\}\big| \;\le\; \frac1n\sum_{j=1}^d |\log a - 0| = -\frac{d \log a}{n},$$
#
# because only the replaced record's term changes (and it carries the weight $1/n$). The Laplace mechanism
# with budget $\epsilon_1$ adds independent $\mathrm{Laplace}(0, b)$ noise to each coordinate with
#
# $$b = \frac{\mathrm{GS}}{\epsilon_1} = -\frac{d\log a}{n\,\epsilon_1}, \qquad \mathrm{Var}(\varepsilon^L_j) = 2b^2 .$$
#
# **How tight is the bound?** Guo et al. use it, and so do we: it is what the published `scale` means. It is
# nearly attained. Write $u_j, v_j$ for the censored logs of the two records and $y_j = \max(\tilde x_j, \tilde x'_j)$.
# Since the smaller of $u_j, v_j$ is at least $\log a$, $|u_j - v_j| \le \log y_j - \log a$. A record has at most $d-1$
# entries below $a$, so $\sum_j \tilde x_j \le 1 + (d-1)a$, and $y_j \le \tilde x_j + \tilde x'_j - a$ gives
# $\sum_j y_j \le 2 + (d-2)a$. By the concavity of the logarithm, $\sum_j \log y_j \le d\log\big((2 + (d-2)a)/d\big)$, so
#
# $$n\,\mathrm{GS} \;\le\; -d\log a - d\log\frac{d}{2 + (d-2)a} .$$
#
# In the other direction, take a record spread evenly over $d - k$ coordinates (zeros elsewhere) and replace it by one
# spread evenly over the other $k$: the sum changes by $-d\log a - k\log k - (d-k)\log(d-k)$, largest for
# $k = \lfloor d/2 \rfloor$, where for even $d$ it meets the upper bound as $a \to 0$. For $d = 2$ this is the move between
# opposite corners and the paper's bound is exact; for $d = 3$ it is a corner to the centre of the opposite face. The
# true sensitivity is therefore $-d\log(a)/n$ up to an additive $O(d\log d)/n$: within a few percent for small $a$.
# The cell below checks both inequalities, and that no random pair of records (50,000 per case, mostly extreme) moves
# the statistic further than the half-and-half move. The more intuitive move from a corner to the centre uses a
# smaller share of the bound (printed below).

# %%
#| export
import dataclasses
import math
import warnings

import numpy as np
from scipy.special import digamma

from dplit import _validate as check
from dplit.accounting import BudgetExceededError, PrivacyBudget
from dplit.censoring import censored_logx_moments
from dplit.dirichlet import censored_stat, check_compositions
from dplit.mechanisms import audit_epsilon, geometric_mechanism, laplace_mechanism

# The record and the formulas it checks itself against (notebook 14) live one layer below; importing their
# public names here (``name as name`` marks a re-export) keeps ``from dplit.release import ...`` the one place
# to import the release from. ``release`` reads ``COUNT_SENSITIVITY`` from this module.
from dplit.release_record import COUNT_SENSITIVITY as COUNT_SENSITIVITY
from dplit.release_record import FORMAT as FORMAT
from dplit.release_record import Release as Release
from dplit.release_record import censored_sensitivity as censored_sensitivity
from dplit.release_record import check_candidates, check_names
from dplit.release_record import laplace_scale as laplace_scale
from dplit.release_record import noisy_censoring_rates as noisy_censoring_rates
from dplit.release_record import select_threshold as select_threshold

# %% [markdown]
# Check: the Laplace scale (`laplace_scale` and `censored_sensitivity`, written in notebook 14), the bound and the
# moves that come close to it.

# %%
from dplit.dirichlet import censored_stat, check_compositions

assert np.isclose(laplace_scale(3, 1e-3, 1000, 0.5), 3 * np.log(1e3) / 500)
# The sensitivity bound, a refined upper bound, and the moves that come close to it (n = 1).
def censored_move(x, y, a):
    """l1 change of the censored log statistic when record x is replaced by y (n = 1); rows broadcast."""
    return np.abs(np.log(np.maximum(x, a)) - np.log(np.maximum(y, a))).sum(axis=-1)


def half_records(d):
    """A record spread evenly over the last d - k coordinates, and one over the first k = d // 2."""
    k = d // 2
    return np.r_[np.zeros(k), np.full(d - k, 1 / (d - k))], np.r_[np.full(k, 1 / k), np.zeros(d - k)]


for d in (2, 3, 5, 6):
    for a in (1e-6, 1e-3, 1e-2):
        k = d // 2
        corner = np.full(d, a)
        corner[0] = 1 - (d - 1) * a
        bound = laplace_scale(d, a, 1, 1.0)  # = -d log a
        refined = bound - d * np.log(d / (2 + (d - 2) * a))
        used_centre = censored_move(corner, np.full(d, 1 / d), a)
        used_halves = censored_move(*half_records(d), a)
        assert np.isclose(used_halves, bound - k * np.log(k) - (d - k) * np.log(d - k))
        assert used_centre <= used_halves <= refined + 1e-9 <= bound + 1e-9
        pairs = np.concatenate([rng.dirichlet(np.full(d, c), size=(12_500, 2)) for c in (0.02, 0.05, 0.2, 1.0)])
        assert censored_move(pairs[:, 0], pairs[:, 1], a).max() <= used_halves + 1e-12
        print(f"d = {d}, a = {a:g}: corner -> centre uses {used_centre / bound:.0%} of the bound, "
              f"half -> other half {used_halves / bound:.1%}; upper bound {refined / bound:.1%}")
for bad in [dict(d=1), dict(a=1.0), dict(a=0.0), dict(n=0), dict(eps1=0.0), dict(eps1=-1.0), dict(d=2.5)]:
    args = dict(d=2, a=0.01, n=10, eps1=1.0) | bad
    try:
        laplace_scale(**args)
    except (TypeError, ValueError) as err:
        assert next(iter(bad)) in str(err)
    else:
        raise AssertionError(bad)

# %% [markdown]
# ## 2. Choosing the threshold under DP (Sec. 3.2)
#
# Small $a$ keeps $S_0(\mathbf D, a)$ close to $S_0(\mathbf D)$ (little bias, notebook `13_censoring`) but makes
# $b$ large; large $a$ does the opposite. The analyst fixes a tolerated rate $t_c$ of **records** with at
# least one censored entry (the paper recommends $t_c = 0.01$) and candidates $a_1 < \cdots < a_M$ in $(0,1)$.
#
# **Ordering.** The rule below needs the candidates in *increasing* order, $0 = a_0 < a_1 < \cdots < a_M < a_{M+1} = 1$.
# `release` accepts them in any order (the paper lists them decreasing in Sec. 5.1 and increasing in S5),
# sorts them, and publishes them sorted increasingly; `s_G` and `p_hat_G` follow that order.
#
# **Counts.** $s_m = \#\{i : a_{m-1} \le \min_j x_{ij} < a_m\}$, $m = 1, \ldots, M+1$: the records that are censored at
# $a_m$ but not at $a_{m-1}$. Moving one record changes at most two counts by one each, so the vector has
# $\ell_1$ sensitivity 2, and the geometric mechanism with $t = \exp(-\epsilon_2/2)$ makes it $\epsilon_2$-DP:
#
# $$s_{G,m} = \max\{0,\ s_m + \varepsilon^G_m\}, \qquad \varepsilon^G_m \overset{iid}{\sim} \mathrm{TwoSidedGeometric}(e^{-\epsilon_2/2}) .$$
#
# **Noisy censoring rates.** $\hat p_{G,m} = \sum_{l \le m} s_{G,l} \big/ \sum_{l \le M+1} s_{G,l}$, $m = 1, \ldots, M$ (Sec. 3.2).
# Algorithm 1 prints $\min\{s_{G,l}, 0\}$ in this formula; that is a slip (it would make every term $0$,
# since $s_{G,l} \ge 0$): we follow the definition of Sec. 3.2. If every noisy count is $0$ (possible only for
# tiny $n\epsilon_2$) the ratio is undefined; we then publish $\hat p_{G,m} = 1$ (no evidence that any
# candidate meets $t_c$), which sends the rule to its fallback.
#
# **Rule.** $a = a_l$ with $\hat p_{G,l} \le t_c < \hat p_{G,l+1}$ (with $\hat p_{G,M+1} = 1$), and $a = a_1$ if no $l$
# qualifies (Alg. 1; Sec. 3.2 would return $0$, i.e. "no threshold meets $t_c$", and leaves it to the user to accept
# $a_1$). Because the noisy counts are non-negative, $\hat p_{G,\cdot}$ is non-decreasing, so the rule picks the
# **largest** candidate whose noisy rate is at most $t_c$: the estimate of $a_{opt}$, the largest candidate whose true
# censoring probability $p_m = P(\min_j x_j < a_m)$ stays below $t_c$. Only $\mathbf s_G$ is used, so
# $\hat p_G$ and $a$ cost nothing beyond $\epsilon_2$ (post-processing, Prop. 1).

# %%
#| export
def _counts(X, cands):
    """Counts s_m of records with a_{m-1} <= min_j x_ij < a_m, m = 1..M+1 (cands sorted increasingly)."""
    bins = np.searchsorted(cands, X.min(axis=1), side="right")
    return np.bincount(bins, minlength=cands.size + 1).astype(np.int64)


def censoring_counts(X, candidates):
    """Counts of records by the smallest candidate threshold that censors them (Guo et al., Sec. 3.2).

    Parameters
    ----------
    X : array_like, shape (n, d)
        Compositions (rows on the simplex; zeros allowed).
    candidates : sequence of float
        Candidate thresholds in (0, 1), distinct, any order.

    Returns
    -------
    ndarray of int64, shape (M + 1,)
        ``s_m = #{i : a_{m-1} <= min_j x_ij < a_m}`` for the candidates sorted increasingly, with
        ``a_0 = 0`` and ``a_{M+1} = 1``; the counts sum to ``n``.
    """
    X = check_compositions(X, name="X")
    return _counts(X, check_candidates(candidates))


# %% [markdown]
# Check: the counts by hand, in any order of the candidates; without noise the rates (`noisy_censoring_rates`,
# notebook 14) are the empirical censoring rates.

# %%
X_demo = rng.dirichlet(ALPHAS["alpha3"], size=500)
mins = X_demo.min(axis=1)
s_demo = censoring_counts(X_demo, CANDIDATES)
cands_sorted = np.sort(CANDIDATES)
edges = np.concatenate([[0.0], cands_sorted, [1.0]])
assert s_demo.sum() == 500 and s_demo.size == 7
assert np.array_equal(s_demo, [np.sum((lo <= mins) & (mins < hi)) for lo, hi in zip(edges[:-1], edges[1:])])
assert np.array_equal(s_demo, censoring_counts(X_demo, cands_sorted[::-1]))  # any order
# A record exactly at a candidate is not censored there (x < a censors), so it falls in the next bin.
assert np.array_equal(censoring_counts([[0.01, 0.99]], [0.01, 0.1]), [0, 1, 0])
# Without noise, p_hat_G equals the empirical censoring rates and the rule finds the largest candidate below tc.
p_emp = noisy_censoring_rates(s_demo)
assert np.allclose(p_emp, [(mins < c).mean() for c in cands_sorted])
assert np.array_equal(noisy_censoring_rates(np.zeros(3, dtype=int)), [1.0, 1.0])
for bad, word in [([0.1, 0.1], "repeated"), ([0.0, 0.1], "(0, 1)"), ([], "non-empty"), ([0.5, 1.0], "(0, 1)")]:
    try:
        censoring_counts(X_demo, bad)
    except ValueError as err:
        assert word in str(err), err
    else:
        raise AssertionError(bad)

# %% [markdown]
# The rule, `select_threshold` (notebook 14): the largest candidate whose noisy rate is at most $t_c$, and $a_1$ when
# there is none.

# %% [markdown]
# Check: without noise the rule finds the largest candidate whose empirical rate is at most $t_c$; it
# falls back to $a_1$; it works row by row on many releases.

# %%
a_emp = select_threshold(p_emp, cands_sorted, TC)
assert a_emp == max(c for c in cands_sorted if (mins < c).mean() <= TC)
assert select_threshold([0.5, 0.6], [0.01, 0.1], 0.01) == 0.01  # fallback to a_1
assert select_threshold([0.0, 0.0], [0.01, 0.1], 0.01) == 0.1
assert np.array_equal(select_threshold([[0.0, 0.0], [0.5, 0.6], [0.0, 0.2]], [0.01, 0.1], 0.01), [0.1, 0.01, 0.01])

# %% [markdown]
# ## 3. Algorithm 1 and the `Release` record (Sec. 3.3, Theorem 2)
#
# `release(X, *, eps1, eps2, candidates=PAPER_CANDIDATES below 1/d, tc=0.01, n1=0)`:
#
# 1. counts $\mathbf s$ on the **whole** data set $\mathbf D$, noisy counts $\mathbf s_G$ ($\epsilon_2$), rates $\hat p_G$ and the threshold $a$;
# 2. if $n_1 = 0$: $S_L(\mathbf D, a) = S_0(\mathbf D, a) + \varepsilon^L$ with scale $b = -d\log(a)/(n\epsilon_1)$;
# 3. if $n_1 > 0$: split $\mathbf D$ uniformly at random into $\mathbf D_1$ ($n_1$ records) and $\mathbf D_2$
#    ($n_2 = n - n_1$), and release $S_L(\mathbf D_1, a)$ and $S_L(\mathbf D_2, a)$, each with budget $\epsilon_1$ and
#    its own scale $-d\log(a)/(n_l\epsilon_1)$ (a mean of $n_l$ records has sensitivity $-d\log(a)/n_l$).
#
# **How the split and the threshold interact.** As in Alg. 1, the threshold is chosen once, on all of $\mathbf D$,
# *before* the split, and both halves are censored at the same $a$ (the priors built from $\mathbf D_1$ and the
# likelihood of $\mathbf D_2$ then describe the same censored statistic). The split uses data-independent
# randomness, so a record is in exactly one part whatever the data: **parallel composition** (Prop. 3) makes the
# two Laplace releases together $\epsilon_1$-DP, not $2\epsilon_1$. With the $\epsilon_2$ of the counts, **sequential
# composition** (Prop. 2) gives Theorem 2: the release is $(\epsilon_1 + \epsilon_2)$-DP, the `budget` property.
# (The proof in Supplement S3 is headed "Proof of Theorem 1"; it proves Theorem 2.)
#
# **What is published.** The `Release` holds exactly what Alg. 1 returns plus the public design: $\mathbf s_G$,
# $\hat p_G$, $a$, $S_L$ (of $\mathbf D$, or of $\mathbf D_2$ when split), $S_L(\mathbf D_1)$, $n, n_1, n_2, d$, $\epsilon_1, \epsilon_2$,
# the candidates, $t_c$ and the two scales. Nothing confidential: not the true counts, not the split.
# The record validates itself (types, ranges, and consistency: $\hat p_G$ must follow from $\mathbf s_G$,
# $a$ from the rule, the scales from $d, a, n_l, \epsilon_1$), so a hand-edited or truncated JSON file is refused
# with a message that names the field.
#
# **Noise.** `secure=True` (the default) draws both noises with OpenDP (`dplit.mechanisms`), which resists the
# floating-point attack on textbook Laplace sampling and is not seedable; `secure=False` uses the seeded fast
# path, with the same distributions, for simulations and for the checks of notebook 71. The split always uses `rng`.
#
# A release made elsewhere (or with a threshold fixed in advance, $\epsilon_2 = 0$) can be wrapped with
# `Release.from_statistic(s_L, n, a, eps1, ...)`; then `s_G`, `p_hat_G`, `candidates` and `tc` are `None`.
#
#
# The `Release` record (its fields, which numbers a genuine release can hold, JSON) is notebook 14; notebook 71
# checks that `release` does what this section says.

# %% [markdown]
# ## Before spending: will the release be mostly noise?
#
# Once the noise is drawn the budget is spent, so `release` looks at the noise it is about to add **before** drawing
# it, from public numbers only: $n$ (published in the release anyway), $d$, the candidates and $\epsilon_1$. It does not
# look at the data, so the pre-check costs no privacy and could be run by anyone.
#
# Each released mean log-share is $S_{L,j} = S_0(\mathbf D, a)_j + \varepsilon^L_j$ with $\mathrm{sd}(\varepsilon^L_j) = \sqrt2\,b$,
# $b = -d\log a/(n\epsilon_1)$ (section 1). The threshold is not known before the counts are drawn, but every candidate
# gives $b(a) \le b(a_1)$, and $a_1$ is where the rule falls back when $n\epsilon_2$ is small, exactly the small releases
# at risk; the pre-check takes $a = a_1$, the worst case. The size of what is estimated: a mean log-share is
# $E[\log x_j] = \psi(\alpha_j) - \psi(\alpha_0) \le -\log d$ for a composition spread evenly over $d$ parts (and lower
# for uneven ones), so $\log d$ is the scale on which analyses tell components apart. We call the release **mostly
# noise** when the noise's variance exceeds that signal's square, the noise-to-signal ratio
#
# $$\rho = \frac{\sqrt2\, b(a_1)}{\log d} = \frac{\sqrt2\, d\,(-\log a_1)}{n\,\epsilon_1 \log d} > 1 .$$
#
# Solving $\rho \le 1$ for each public number gives what is needed: $n \ge \sqrt2\, d(-\log a_1)/(\epsilon_1\log d)$, or
# $\epsilon_1 \ge \sqrt2\, d(-\log a_1)/(n\log d)$, or a smallest candidate $a_1 \ge \exp(-n\epsilon_1\log d/(\sqrt2 d))$.
# `release` then warns (a `UserWarning`, kept in the release's `warnings`), and `dplit release` refuses without `--force`.
# The example that prompted it: 25 compositions of $d = 5$ parts at $\epsilon_1 = 0.75$ with the paper's candidates have
# $b(10^{-6}) = 3.7$, $\rho = 3.2$; one released mean log-share came out $+2.97$, impossible for the log of a share, and
# the posterior was the prior.

# %%
#| export
#: The candidate thresholds of Sec. 5.1, the default of `release` (those below 1/d) and of the command line.
PAPER_CANDIDATES = (0.1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6)


def noise_ratio(n, d, eps1, a):
    """Noise-to-signal ratio of a release, ``sqrt(2) b / log d`` with ``b = -d log(a) / (n eps1)``.

    The Laplace noise of each released mean log-share has sd ``sqrt(2) b``; ``log d`` is the size of a mean
    log-share (``-log d`` for an even composition). Above 1 the release is mostly noise. Uses public numbers only.
    """
    return math.sqrt(2) * laplace_scale(d, a, n, eps1) / math.log(check.count(d, "d", 2))


def noise_warning(n, d, eps1, candidates=None):
    """The warning :func:`release` gives before drawing any noise when the release would be mostly noise, else None.

    Parameters
    ----------
    n : int
        Records the statistic averages (``n - n1`` when split).
    d : int
        Number of components, >= 2.
    eps1 : float
        Budget of the Laplace part.
    candidates : sequence of float, optional
        Candidate thresholds (default: :data:`PAPER_CANDIDATES` below 1/d); the smallest, ``a_1``, is the worst case.

    Returns
    -------
    str or None
        The text (the ratio, and the ``n``, ``eps1`` or smallest candidate that bring it to 1) when
        :func:`noise_ratio` at ``a_1`` exceeds 1. Data-independent: it spends no privacy.
    """
    n = check.count(n, "n", 1)
    d = check.count(d, "d", 2)
    eps1 = check.epsilon(eps1, "eps1")
    if candidates is None:
        candidates = [c for c in PAPER_CANDIDATES if c * d < 1]
    a1 = float(check_candidates(candidates)[0])
    rho = noise_ratio(n, d, eps1, a1)
    if rho <= 1:
        return None
    n_need = math.ceil(rho * n)
    a_need = math.exp(-n * eps1 * math.log(d) / (math.sqrt(2) * d))
    return (f"the release would be mostly noise: with n = {n} records, d = {d} and eps1 = {eps1:g}, the Laplace noise "
            f"of each mean log-share has sd {math.sqrt(2) * laplace_scale(d, a1, n, eps1):.3g} at the smallest "
            f"candidate a_1 = {a1:g} (where the threshold rule falls back), against log d = {math.log(d):.3g}, the size "
            f"of a mean log-share (noise-to-signal ratio {rho:.2g} > 1); it needs n >= {n_need} records, or eps1 >= "
            f"{rho * eps1:.3g}, or candidates no smaller than {a_need:.2g}")


# %% [markdown]
# Check: the 25-composition example must trigger (scale 3.7), a large release must not, and the numbers the warning
# asks for bring the ratio to 1.

# %%
assert np.isclose(laplace_scale(5, 1e-6, 25, 0.75), 3.68, atol=0.01)
w25 = noise_warning(25, 5, 0.75)
assert w25 is not None and "mostly noise" in w25 and "n >= 81" in w25, w25
print(w25)
assert noise_warning(2000, 3, 0.75) is None and noise_warning(2000, 5, 0.75, CANDIDATES) is None
assert noise_ratio(81, 5, 0.75, 1e-6) <= 1 < noise_ratio(80, 5, 0.75, 1e-6)
assert noise_warning(25, 5, 0.75, [0.015, 0.1]) is None        # the smallest candidate it asks for is enough

# %% [markdown]
# Algorithm 1 itself: count, select, split, add noise, and package.

# %%
#| export
def _split(n, n1, rng):
    """Indices of D1 (n1 records) and D2 (the rest), a uniformly random partition."""
    perm = rng.permutation(n)
    return perm[:n1], perm[n1:]


def release(X, *, eps1, eps2, candidates=None, tc=0.01, n1=0, rng=None, secure=True, names=None, budget=None):
    """Algorithm 1 of Guo et al.: select the censoring threshold and release the noisy statistic.

    Parameters
    ----------
    X : array_like or pandas.DataFrame, shape (n, d)
        Confidential compositions (rows on the simplex; zeros are valid). A DataFrame's column names become
        ``names`` unless these are given.
    eps1 : float
        Budget of the Laplace release of ``S_0(D, a)``, > 0.
    eps2 : float
        Budget of the threshold selection (geometric mechanism on the counts), > 0.
    candidates : sequence of float, optional
        Candidate thresholds in (0, 1/d), distinct, any order (published sorted increasingly). Default: the
        paper's :data:`PAPER_CANDIDATES` below 1/d (as the command line).
    tc : float, default 0.01
        Tolerated proportion of records with a censored entry, in (0, 1) (the paper's value).
    n1 : int, default 0
        Size of D1. With ``n1 > 0`` the records are split uniformly at random into D1 (n1) and
        D2 (n - n1), both censored at the same ``a`` and released with budget ``eps1`` each
        (parallel composition).
    rng : None, int or numpy.random.Generator
        Randomness of the split and, when ``secure=False``, of the noise.
    secure : bool, default True
        Draw the noise with OpenDP (not seedable); ``False`` uses the seeded fast path.
    names : sequence of str, optional
        Names of the d components (e.g. the CSV header), kept in the release. Default: a DataFrame's columns.
    budget : dplit.accounting.PrivacyBudget, optional
        A ledger charged with the release's own (:attr:`Release.budget`); checked before any noise
        is drawn, so a release that does not fit raises ``BudgetExceededError`` and spends nothing.

    Returns
    -------
    Release
        The published record; ``release.eps_total == eps1 + eps2`` (Theorem 2). Its ``warnings`` hold what the
        curator was warned of: :func:`noise_warning` (checked before any noise is drawn) and
        :meth:`Release.caution`; each is also issued as a ``UserWarning``.

    Examples
    --------
    >>> X = np.random.default_rng(0).dirichlet([2.0, 3.0, 4.0], size=1000)
    >>> r = release(X, eps1=0.75, eps2=0.25, candidates=[1e-4, 1e-3, 1e-2, 0.1], rng=1, secure=False)
    >>> r.eps_total, r.d, r.n2
    (1.0, 3, 1000)
    """
    if names is None and hasattr(X, "columns"):   # a DataFrame keeps its column names
        names = [str(c) for c in X.columns]
    X = check_compositions(X, name="X")
    n, d = X.shape
    eps1 = check.epsilon(eps1, "eps1")
    eps2 = check.epsilon(eps2, "eps2")
    if candidates is None:
        candidates = [c for c in PAPER_CANDIDATES if c * d < 1]
    cands = check_candidates(candidates)
    if cands[-1] * d >= 1:  # before any noise is drawn: such a threshold would waste the budget
        raise ValueError(f"candidates must be below 1/d = {1 / d:.4g} for d = {d} components (a threshold >= 1/d "
                         f"censors every component of every record); drop {[c for c in cands.tolist() if c * d >= 1]}")
    tc = check.unit_interval(tc, "tc")
    n1 = check.count(n1, "n1", 0)
    names = check_names(names, d)
    if n1 >= n:
        raise ValueError(f"n1 must satisfy 0 <= n1 < n = {n} (each part needs at least one record), got {n1}")
    if budget is not None:
        if not isinstance(budget, PrivacyBudget):
            raise TypeError(f"budget must be a dplit.accounting.PrivacyBudget, got {type(budget).__name__}")
        if not budget.can_spend(eps1 + eps2):
            raise BudgetExceededError(f"release needs eps1 + eps2 = {eps1 + eps2:.6g} but the budget has only "
                                      f"{budget.remaining:.6g} left")
    rng = check.rng(rng)
    # Before any noise is drawn: public numbers only (n - n1, d, eps1, candidates), so the warning spends nothing.
    told = [w for w in (noise_warning(n - n1, d, eps1, cands),) if w]
    for w in told:
        warnings.warn(w, UserWarning, stacklevel=2)
    # Threshold selection on all of D (eps2).
    noisy = geometric_mechanism(_counts(X, cands), COUNT_SENSITIVITY, eps2, rng=rng, secure=secure)
    s_G = np.maximum(noisy, 0)
    p_hat = noisy_censoring_rates(s_G)
    a = select_threshold(p_hat, cands, tc)
    logs = np.log(np.maximum(X, a))  # X is checked once above; censored_stat(X, a) is logs.mean(axis=0)
    if n1 == 0:
        s_L = laplace_mechanism(logs.mean(axis=0), censored_sensitivity(d, a, n), eps1, rng=rng, secure=secure)
        s_L1 = None
    else:
        i1, i2 = _split(n, n1, rng)
        s_L1 = laplace_mechanism(logs[i1].mean(axis=0), censored_sensitivity(d, a, n1), eps1, rng=rng,
                                 secure=secure)
        s_L = laplace_mechanism(logs[i2].mean(axis=0), censored_sensitivity(d, a, n - n1), eps1, rng=rng,
                                secure=secure)
    rel = Release(s_G=s_G, p_hat_G=p_hat, a=a, s_L=s_L, s_L1=s_L1, n=n, n1=n1, n2=n - n1, d=d, eps1=eps1,
                  eps2=eps2, candidates=cands, tc=tc, scale=laplace_scale(d, a, n - n1, eps1),
                  scale1=laplace_scale(d, a, n1, eps1) if n1 else None, names=names, warnings=told)
    caution = rel.caution()
    if caution:
        warnings.warn(caution, UserWarning, stacklevel=2)
        rel = dataclasses.replace(rel, warnings=(*rel.warnings, caution))
    if budget is not None:
        budget.absorb(rel.budget)
    return rel


# %% [markdown]
# A release of 1000 records from $\boldsymbol\alpha_3$ with a quarter of the budget for the threshold and a split for a
# prior (fast path, seeded):

# %%
X = rng.dirichlet(ALPHAS["alpha3"], size=1000)
r1 = release(X, eps1=0.75, eps2=0.25, candidates=CANDIDATES, tc=TC, n1=250, rng=7, secure=False)
assert r1 == release(X, eps1=0.75, eps2=0.25, candidates=CANDIDATES, tc=TC, n1=250, rng=7, secure=False)   # same seed, same release
assert r1.eps_total == 1.0 and (r1.n1, r1.n2) == (250, 750)
print(r1.summary())
# A DataFrame keeps its column names; a small release is warned of before the noise, and the warning travels.
import pandas as pd
import warnings

df_demo = pd.DataFrame(X[:25, :3], columns=["sleep", "work", "leisure"])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    r_df = release(df_demo, eps1=0.75, eps2=0.25, rng=7, secure=False)
assert r_df.names == ("sleep", "work", "leisure")
assert any("mostly noise" in str(w.message) for w in caught) and any("mostly noise" in w for w in r_df.warnings)
assert not any("mostly noise" in w for w in r1.warnings)

# %% [markdown]
# ## 4. The bias-variance trade-off in $a$
#
# For a fixed threshold, $S_L(\mathbf D, a)$ estimates the uncensored mean $E[\log \mathbf x]$ with mean squared error
#
# $$\mathrm{MSE}(a) = \sum_{j=1}^d \Big(b_j(a)^2 + \frac{\mathrm{Var}(\log\tilde x_j)}{n}\Big) + d \cdot 2\Big(\frac{-d\log a}{n\epsilon_1}\Big)^2,$$
#
# with the censoring bias $b_j(a)$ and the variance of the censored logs from `dplit.censoring` (Supplement S1).
# The bias grows with $a$, the noise term shrinks like $(\log a)^2$: the curves of the first figure have a minimum,
# which moves to larger $a$ as $\epsilon_1$ or $n$ shrink. Its dots mark the threshold the DP rule picks most often with
# $t_c = 0.01$ and $\epsilon_2 = \epsilon_1/3$ (the paper's 3:1 division of the budget). The rule targets a censoring rate,
# not the MSE, and at small budgets the clamped count noise pushes it far below the MSE optimum (notebook 71, section 1): it
# trades a little bias for a lot of noise. A Monte Carlo check of the formula:

# %%
#| export
def release_mse(alpha, a, n, eps1):
    """Mean squared error of ``S_L(D, a)`` as an estimate of ``E[log x]`` for ``x ~ Dirichlet(alpha)``.

    ``sum_j (bias_j^2 + Var(log max(x_j, a)) / n) + 2 d b^2`` with ``b = -d log(a) / (n eps1)``: censoring
    bias, sampling variance and Laplace noise, for a threshold fixed in advance.

    Parameters
    ----------
    alpha : array_like, shape (d,)
        Dirichlet parameter.
    a : float
        Censoring threshold in (0, 1).
    n : int
        Number of records.
    eps1 : float
        Budget of the Laplace part.

    Returns
    -------
    float
    """
    mean_c, var_c = censored_logx_moments(alpha, a)
    alpha = np.asarray(alpha, dtype=float)
    d = alpha.size
    bias = mean_c - (digamma(alpha) - digamma(alpha.sum()))
    return float(np.sum(bias**2 + var_c / n) + 2 * d * laplace_scale(d, a, n, eps1) ** 2)


# %%
from scipy.special import digamma

from dplit.mechanisms import laplace_mechanism

alpha, a, n, eps1 = ALPHAS["alpha2"], 1e-2, 200, 1.0
truth = digamma(alpha) - digamma(alpha.sum())
sq = []
for _ in range(n_rel):
    Xs = rng.dirichlet(alpha, size=n)
    s_L = laplace_mechanism(censored_stat(Xs, a), censored_sensitivity(3, a, n), eps1, rng=rng,
                            secure=False)   # a simulation: the seeded float path, so it reads the same each run
    sq.append(np.sum((s_L - truth) ** 2))
sq = np.array(sq)
mse = release_mse(alpha, a, n, eps1)
assert abs(sq.mean() - mse) < 5 * sq.std() / np.sqrt(sq.size), (sq.mean(), mse)
print(f"MSE formula {mse:.4f}, Monte Carlo {sq.mean():.4f} +- {sq.std() / np.sqrt(sq.size):.4f}")

# %% [markdown]
# ## 5. Theorem 1 in pictures
#
# Theorem 1: if $\epsilon_2 \ge C n^{-\gamma}$ with $\gamma \in [0, 1)$, the selected $a$ converges in probability to
# $a_{opt}$, the largest candidate with $p_m < t_c$. The proof (S2) only needs $s_{G,m}/n \to p_m - p_{m-1}$; the noise has
# standard deviation of order $1/\epsilon_2 \propto n^{\gamma}$, negligible against $n$ exactly when $\gamma < 1$.
#
# To see it, we need the distribution of the selected $a$ for large $n$. The records are iid, so the true counts are
# $\mathrm{Multinomial}(n; p_1 - p_0, \ldots, p_{M+1} - p_M)$ with the exact $p_m$ of `dplit.censoring` ($d = 3$ is
# exact by quadrature); drawing the counts directly instead of $n$ records is exact and lets $n$ reach $10^7$.
# For $\boldsymbol\alpha_3$ and the paper's candidates, $a_{opt} = 10^{-2}$ (the probabilities $p_m$ printed below cross $t_c$
# between $a = 10^{-2}$ and $a = 10^{-1}$); we use $C = 1$.

# %%
from dplit.censoring import record_censoring_prob
from dplit.mechanisms import sample_two_sided_geometric


def simulate_selection(p, n, eps2, n_reps, rng, tc=TC):
    """Selected candidate index over replicates, with counts drawn as a multinomial (exact for iid records)."""
    probs = np.diff(np.concatenate([[0.0], p, [1.0]]))
    s = rng.multinomial(n, probs, size=n_reps)
    s_G = np.maximum(s + sample_two_sided_geometric(np.exp(-eps2 / 2), s.shape, rng=rng), 0)
    total = s_G.sum(axis=1, keepdims=True)
    p_hat = np.where(total > 0, np.cumsum(s_G, axis=1)[:, :-1] / np.maximum(total, 1), 1.0)
    return np.maximum(np.sum(p_hat <= tc, axis=1) - 1, 0)


alpha = ALPHAS["alpha3"]
p_true = np.array([record_censoring_prob(alpha, c)[0] for c in cands_sorted])
opt = int(np.sum(p_true < TC)) - 1
assert cands_sorted[opt] == 1e-2 and p_true[opt] < TC < p_true[opt + 1]
print("p_m:", dict(zip(cands_sorted.tolist(), np.round(p_true, 5).tolist())))
n_values = np.round(np.geomspace(1e2, 1e7, size(full=11, quick=6))).astype(int)
gammas = (0.0, 0.5, 0.8, 1.0)
p_correct = {g: np.array([np.mean(simulate_selection(p_true, n, n ** (-g), n_rep, rng) == opt) for n in n_values])
             for g in gammas}
# gamma < 1: converges; gamma = 1 (outside the theorem): eps2 = 1/n, the noise swamps the counts.
assert p_correct[0.0][-1] > 0.99 and p_correct[0.5][-1] > 0.95
assert p_correct[1.0][-1] < 0.6
assert p_correct[0.0][-1] >= p_correct[0.0][0]

# %%
# NBVAL_IGNORE_OUTPUT
fig, ax = plt.subplots(figsize=(6, 3.8))
for g in gammas:
    ax.plot(n_values, p_correct[g], "o-", label=f"eps2 = n^(-{g:g})" + (" (outside Thm 1)" if g >= 1 else ""))
ax.set(xscale="log", xlabel="n", ylabel="P(selected a = a_opt)", ylim=(0, 1.02),
       )
ax.set_title("Theorem 1: the DP threshold converges to a_opt (alpha3, tc = 0.01)", fontsize=10)
ax.legend(fontsize=9)
fig.tight_layout()

# %%
def sci(x):
    """x as LaTeX m x 10^k with one significant digit."""
    k = int(np.floor(np.log10(x)))
    m = round(x / 10**k)
    m, k = (1, k + 1) if m == 10 else (m, k)
    return f"{m} \\times 10^{{{k}}}"


margin = TC - p_true[opt]
n_needed = {g: sci((cands_sorted.size / margin) ** (1 / (1 - g))) for g in (0.5, 0.8)}
display(Markdown(f"""
Convergence is guaranteed for every $\\gamma < 1$, but the figure shows how slow it can be. The phantom records of the
empty counts (notebook 71, section 1) number about $M/\\epsilon_2 = M n^{{\\gamma}}$, and they must be small against the
margin $(t_c - p_{{opt}})\\,n = {margin:.4f}\\,n$: the two are equal at $n \\approx {n_needed[0.5]}$ for $\\gamma = 0.5$,
and at $n \\approx {n_needed[0.8]}$ for $\\gamma = 0.8$. In practice the threshold selection needs $n\\epsilon_2$ in
the thousands.
"""))

# %% [markdown]
# ## 6. Auditing a release (Theorem 2)
#
# Theorem 2 says the release is $(\epsilon_1 + \epsilon_2)$-DP. An audit tests that on the running code:
# `neighbouring_datasets` builds two worst-case neighbours (one record moves, between count cells or across the
# statistic's largest move of section 1), and `audit_release` runs a release many times on each and bounds each
# part's $\epsilon$ from below with 95% confidence (`dplit.mechanisms.audit_epsilon`). Notebook 71 derives the
# projections it audits and runs it, on `release` and on a broken release that must be caught.

# %%
#| export
def neighbouring_datasets(n, d, a, *, move="cell"):
    """Worst-case neighbouring data sets for auditing a release (they differ in record 0 only).

    Parameters
    ----------
    n : int
        Records per data set; the other ``n - 1`` sit at the centre of the simplex. >= 2.
    d : int
        Components, >= 2.
    a : float
        Smallest candidate threshold, in (0, 1 / (d - 1)).
    move : {"cell", "statistic"}
        ``"cell"``: record 0 is the corner ``(1 - (d-1) a/2, a/2, ..., a/2)`` in ``X`` and the centre in
        ``X'``, so it changes count cell (the worst case of the counts, sensitivity 2).
        ``"statistic"``: record 0 is spread evenly over the last ``d - k`` coordinates in ``X`` and over
        the first ``k = d // 2`` in ``X'`` (zeros elsewhere): the largest known move of ``S_0(D, a)``,
        ``-d log a - k log k - (d-k) log(d-k)`` times ``1/n`` (the paper's bound for d = 2). Both
        versions of the record fall in the same count cell.

    Returns
    -------
    X, X_prime : ndarray, shape (n, d)
    """
    n = check.count(n, "n", 2)
    d = check.count(d, "d", 2)
    a = check.unit_interval(a, "a")
    check.choice(move, "move", ("cell", "statistic"))
    if a >= 1.0 / (d - 1):
        raise ValueError(f"a must be < 1 / (d - 1) = {1 / (d - 1):g} for a corner record below a, got {a}")
    X = np.full((n, d), 1.0 / d)
    X_prime = X.copy()
    if move == "cell":
        X[0] = a / 2
        X[0, 0] = 1.0 - (d - 1) * a / 2
    else:                                           # "statistic"
        k = d // 2
        X[0, :k], X[0, k:] = 0.0, 1.0 / (d - k)
        X_prime[0, :k], X_prime[0, k:] = 1.0 / k, 0.0
    return X, X_prime

# %%
#| export
def audit_release(X, X_prime, eps1, eps2, candidates, tc, *, n_runs=10_000, release_fn=None, rng=None,
                  confidence=0.95):
    """Audit both parts of :func:`release` on two neighbouring data sets.

    Runs ``release_fn`` (default :func:`release`, fast path) ``n_runs`` times on each data set and
    applies :func:`dplit.mechanisms.audit_epsilon` to two projections of the output: the count part
    ``T_G = sum_m |s_G,m - s'_m| - |s_G,m - s_m|`` and, among the runs that selected the most frequent
    threshold ``a``, the Laplace part ``T_L = sum_j |y_j - S_0(D', a)_j| - |y_j - S_0(D, a)_j|``.

    Parameters
    ----------
    X, X_prime : array_like, shape (n, d)
        Neighbouring data sets (see :func:`neighbouring_datasets`).
    eps1, eps2, candidates, tc
        Arguments of :func:`release` (the claimed budgets).
    n_runs : int
        Releases per data set.
    release_fn : callable, optional
        A mechanism with the signature of :func:`release` to audit (e.g. a broken one).
    rng : None, int or numpy.random.Generator
        Randomness of the runs and of the audit's split.
    confidence : float
        Confidence of each lower bound.

    Returns
    -------
    dict
        ``"laplace"`` and ``"geometric"``: :class:`~dplit.mechanisms.AuditResult`; ``"a"``: the
        threshold audited; ``"eps1"``, ``"eps2"``: the claims; ``"n_laplace"``: runs used per side.
    """
    X = check_compositions(X, name="X")
    X_prime = check_compositions(X_prime, name="X_prime")
    if X.shape != X_prime.shape or np.sum(np.any(X != X_prime, axis=1)) != 1:
        raise ValueError("X and X_prime must be neighbours: same shape, exactly one record different")
    n_runs = check.count(n_runs, "n_runs", 40)
    release_fn = release if release_fn is None else release_fn
    rng = check.rng(rng)
    cands = check_candidates(candidates)
    counts = {0: _counts(X, cands), 1: _counts(X_prime, cands)}
    out = {0: ([], [], []), 1: ([], [], [])}
    for side, data in ((0, X), (1, X_prime)):
        for _ in range(n_runs):
            r = release_fn(data, eps1=eps1, eps2=eps2, candidates=cands, tc=tc, rng=rng, secure=False)
            out[side][0].append(np.sum(np.abs(r.s_G - counts[1]) - np.abs(r.s_G - counts[0])))
            out[side][1].append(r.a)
            out[side][2].append(r.s_L)
    geo = audit_epsilon(np.array(out[0][0], float), np.array(out[1][0], float), confidence=confidence, rng=rng)
    a_vals, a_counts = np.unique(out[0][1], return_counts=True)
    a_star = float(a_vals[np.argmax(a_counts)])
    mu, mu_p = censored_stat(X, a_star), censored_stat(X_prime, a_star)
    t_l = {}
    for side in (0, 1):
        keep = np.array(out[side][1]) == a_star
        y = np.array(out[side][2])[keep]
        t_l[side] = np.sum(np.abs(y - mu_p) - np.abs(y - mu), axis=1)
    n_l = min(t_l[0].size, t_l[1].size)
    lap = audit_epsilon(t_l[0][:n_l], t_l[1][:n_l], confidence=confidence, rng=rng)
    return {"laplace": lap, "geometric": geo, "a": a_star, "eps1": float(eps1), "eps2": float(eps2),
            "n_laplace": n_l}


# %% [markdown]
# ## Explore: how the DP rule chooses $a$
#
# For $\boldsymbol\alpha_3$ and the paper's candidates: move $n$, $\epsilon_2$ and $t_c$ and watch the distribution of the
# selected threshold (exact multinomial counts, as in section 5). Small $n\epsilon_2$ spreads the choice; a $t_c$ close to
# some $p_m$ makes the rule hesitate between two neighbours.

# %%
def explore_selection(n=1000, eps2=0.25, tc=0.01, n_reps=2000, seed=0):
    """Distribution of the selected threshold for alpha3 (bar chart); returns the probabilities."""
    idx = simulate_selection(p_true, int(n), eps2, n_reps, np.random.default_rng(seed), tc=tc)
    probs = np.bincount(idx, minlength=cands_sorted.size) / n_reps
    fig, ax = plt.subplots(figsize=(6, 3.2))
    ax.bar([f"{c:g}" for c in cands_sorted], probs)
    ax.set(xlabel="selected a", ylabel="probability", ylim=(0, 1))
    ax.set_title(f"n = {int(n)}, eps2 = {eps2:g}, tc = {tc:g} (true p_m crosses tc at a = 1e-2)", fontsize=10)
    fig.tight_layout()
    return dict(zip(cands_sorted.tolist(), probs.tolist()))


# %%
# NBVAL_IGNORE_OUTPUT
probs = explore_selection()
assert np.isclose(sum(probs.values()), 1.0)

# %%
# NBVAL_IGNORE_OUTPUT
from ipywidgets import FloatLogSlider, IntSlider, interactive
from dplit.testing import dead_controls  # noqa: E402

explorer = interactive(explore_selection, n=IntSlider(value=1000, min=100, max=20000, step=100),
                       eps2=FloatLogSlider(value=0.25, base=10, min=-3, max=1, step=0.1),
                       tc=FloatLogSlider(value=0.01, base=10, min=-3, max=-0.5, step=0.1), n_reps=(500, 5000, 500), seed=(0, 9))
assert dead_controls(explorer) == []  # every control changes the view (one its callback ignores fails)
explorer

# %% [markdown]
# ## The command line
#
# A data curator does not need Python to publish: `dplit release data.csv --eps1 0.75 --eps2 0.25 --split 0.25
# --out release.json` reads one composition per row (or raw non-negative amounts with `--close`), calls `release`,
# writes the JSON and prints the summary above, with a warning when the rule fell back to $a_1$ with a noisy
# censoring rate far above $t_c$ (S4's caution). Before any of that it runs the pre-check of section 3 and refuses a
# release that would be mostly noise unless `--force` is given. The warnings are written into the release (`warnings`)
# and reach the analyst: `dplit show release.json` prints them with the contents, the spend and the commands that apply. `Release.load("release.json")` reads the file back (and
# `release.save(path)` writes one) for every inference method of the later notebooks; `dplit analyse release.json
# --method dpmcmc --out posterior.nc` is the analyst's side. A CSV header names the components; the names travel
# in the release (`names`) into the analyses' coordinates.
#
# ## When to use this

# %%
a_opt_mse = {e: a_grid[np.argmin(curves[("alpha3", e)])] for e in (0.25, 1.0)}
display(Markdown(f"""
Use `release` with the paper's defaults ($t_c = 0.01$, candidates $10^{{-6}}, \\ldots, 10^{{-1}}$, $\\epsilon_2$ a quarter of
the budget) unless you know the data: it spends a small part of the budget to avoid both extremes of the trade-off
of section 4 (for $\\boldsymbol\\alpha_3$ and $n = 1000$ the MSE is smallest at $a \\approx$ {a_opt_mse[1.0]:.2g} with
$\\epsilon_1 = 1$ and at $a \\approx$ {a_opt_mse[0.25]:.2g} with $\\epsilon_1 = 0.25$). The rule needs $n\\epsilon_2$ in the
thousands to find $a_{{opt}}$ reliably: with $\\epsilon_2 = n^{{-1/2}}$ it picked $a_{{opt}}$ in
{p_correct[0.5][-1]:.0%} of the replicates at $n$ = {n_values[-1]:,} and in {p_correct[0.5][0]:.0%} at
$n$ = {n_values[0]:,} (section 5). Keep `secure=True` for anything published. Split ($n_1 > 0$) only when a Bayesian
analysis will build its prior from $\\mathbf D_1$ (notebooks 18-21): the split costs no extra budget, but each part is
noisier than the whole. If the summary warns that $a = a_1$ with a high noisy rate, the censored statistic may be
badly biased, most often because the data hold exact zeros, which the Dirichlet model does not describe. Smaller
candidates make that worse: merge the components with zeros (`dplit.censoring.amalgamate`) or drop those records and
report how many (`dplit.censoring.drop_zero_rows`) before releasing (notebook `13_censoring`, section 5;
`checks/78_zeros_checks` measures the bias).
"""))
