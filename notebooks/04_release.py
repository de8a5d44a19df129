# %% [markdown]
# # The curator's release: threshold selection and the noisy censored statistic
#
# Algorithm 1 of Guo et al. (Sec. 3, Theorems 1-2): choose the censoring threshold a with the geometric mechanism, release the censored sufficient statistic with the Laplace mechanism, and publish everything in a `Release` record (JSON).

# %%
#| default_exp release

# %% [markdown]
# ## Parameters
#
# Sizes come from the size switch (`DPLIT_QUICK=1` gives the quick size of the test suite); every random
# draw comes from a generator seeded here. The candidate thresholds and $t_c$ are those of the paper's
# simulation study (Sec. 5.1).

# %%
import numpy as np
import matplotlib.pyplot as plt
from scipy import stats

from dplit.config import is_quick, size

n_rel = size(full=4_000, quick=600)  # releases per statistical check
n_rep = size(full=4_000, quick=800)  # replicates per point of the Theorem 1 figure
n_audit = size(full=20_000, quick=3_000)  # releases per neighbour in the privacy audit
SEED = 20261123
rng = np.random.default_rng(SEED)
CANDIDATES = (0.1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6)  # as listed in Sec. 5.1 (any order is accepted)
TC = 0.01
PAPER_ALPHAS = {
    "alpha1": np.array([3.3, 4.4]),
    "alpha2": np.array([0.5, 0.5, 0.5]),
    "alpha3": np.array([2.2, 3.3, 4.4]),
    "alpha4": np.array([2.0, 20.0, 2.0]),
    "alpha5": np.array([2.2, 3.3, 4.4, 5.5, 6.6]),
}
print(f"quick mode: {is_quick()}; n_rel = {n_rel}, n_rep = {n_rep}, n_audit = {n_audit}")

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
# the statistic further than the half-and-half move. The more intuitive move from a corner to the centre uses only
# 50-75% of the bound.

# %%
#| export
import json
import math
from dataclasses import dataclass

import numpy as np
from scipy.special import digamma

from dplit import _validate as check
from dplit._validate import count as _count
from dplit.accounting import BudgetExceededError, PrivacyBudget
from dplit.censoring import censored_logx_moments
from dplit.dirichlet import censored_stat, check_compositions
from dplit.mechanisms import (
    audit_epsilon,
    check_plausible,
    geometric_mechanism,
    geometric_reach,
    laplace_mechanism,
    laplace_reach,
)

FORMAT = "dplit.release/1"
COUNT_SENSITIVITY = 2  # moving one record changes two of the counts s_m by one each (Sec. 3.2)


def _check_candidates(candidates):
    """Return the candidate thresholds sorted increasingly, or raise (in (0, 1), distinct, >= 1)."""
    arr = check.unit_interval_array(candidates, "candidates")
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"candidates must be a non-empty 1-D sequence of thresholds, got shape {arr.shape}")
    out = np.sort(arr)
    repeated = out[1:][np.diff(out) == 0]
    if repeated.size:
        raise ValueError(f"candidates must be distinct; {repeated[0]!r} is repeated")
    return out


def censored_sensitivity(d, a, n):
    """Global l1 sensitivity of the censored statistic ``S_0(D, a)``: ``-d log(a) / n`` (Guo et al., Theorem 1).

    Changing one of ``n`` records moves each of the ``d`` means of ``log max(x_j, a)`` by at most
    ``-log(a) / n``. Arguments as in :func:`laplace_scale`.
    """
    d = check.count(d, "d", 2)
    a = check.unit_interval(a, "a")
    n = check.count(n, "n", 1)
    return -d * math.log(a) / n


def laplace_scale(d, a, n, eps1):
    """Laplace scale of the censored statistic, ``b = -d log(a) / (n eps1)`` (Guo et al., Sec. 3.1).

    The one formula of dplit for it: every release, sampler and simulation calls this function.

    Parameters
    ----------
    d : int
        Number of components, >= 2.
    a : float
        Censoring threshold in (0, 1).
    n : int
        Number of records the statistic averages, >= 1.
    eps1 : float
        Privacy budget of the statistic, > 0.

    Returns
    -------
    float
        The scale; the global l1 sensitivity of ``S_0(D, a)`` is ``-d log(a) / n = b * eps1``.
    """
    return censored_sensitivity(d, a, n) / check.epsilon(eps1, "eps1")


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
# Small $a$ keeps $S_0(\mathbf D, a)$ close to $S_0(\mathbf D)$ (little bias, notebook `03_censoring`) but makes
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
    return _counts(X, _check_candidates(candidates))


def noisy_censoring_rates(s_G):
    """Noisy censoring rates ``p_hat_G,m = sum_{l<=m} s_G,l / sum_l s_G,l``, m = 1..M (Sec. 3.2).

    Parameters
    ----------
    s_G : array_like of int, shape (M + 1,)
        Non-negative noisy counts.

    Returns
    -------
    ndarray, shape (M,)
        Non-decreasing rates in [0, 1]; all ones when every noisy count is zero (undefined ratio).
    """
    s = np.asarray(s_G)
    if s.ndim != 1 or s.size < 2 or not np.issubdtype(s.dtype, np.integer) or np.any(s < 0):
        raise ValueError("s_G must be a 1-D array of at least 2 non-negative integers")
    total = s.sum()
    if total == 0:
        return np.ones(s.size - 1)
    return np.cumsum(s)[:-1] / total


# %%
X_demo = rng.dirichlet(PAPER_ALPHAS["alpha3"], size=500)
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
# The rule: the largest candidate whose noisy rate is at most $t_c$, and $a_1$ when there is none.

# %%
#| export
def select_threshold(p_hat_G, candidates, tc):
    """The threshold rule of Guo et al. (Sec. 3.2, Alg. 1).

    Parameters
    ----------
    p_hat_G : array_like, shape (M,) or (R, M)
        Noisy censoring rates for the candidates sorted increasingly (one row per release).
    candidates : sequence of float, shape (M,)
        Candidate thresholds, strictly increasing.
    tc : float
        Tolerated proportion of records with a censored entry, in (0, 1).

    Returns
    -------
    float or ndarray
        ``a_l`` with ``p_hat_G,l <= tc < p_hat_G,l+1`` (``p_hat_G,M+1 = 1``): the largest candidate whose
        noisy rate is at most ``tc``; ``a_1`` when there is none.
    """
    cands = np.asarray(candidates, dtype=float)
    if cands.ndim != 1 or np.any(np.diff(cands) <= 0):
        raise ValueError("candidates must be strictly increasing here (sort them first)")
    tc = check.unit_interval(tc, "tc")
    p = np.asarray(p_hat_G, dtype=float)
    if p.shape[-1] != cands.size:
        raise ValueError(f"p_hat_G must have one rate per candidate ({cands.size}), got shape {p.shape}")
    # p_hat is non-decreasing, so the l of the rule is the number of rates <= tc.
    index = np.maximum(np.sum(p <= tc, axis=-1) - 1, 0)
    out = cands[index]
    return float(out) if np.ndim(out) == 0 else out

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
# `release(X, eps1, eps2, candidates, tc, n1=0)`:
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
# path, with the same distributions, for simulations and for the checks below. The split always uses `rng`.
#
# A release made elsewhere (or with a threshold fixed in advance, $\epsilon_2 = 0$) can be wrapped with
# `Release.from_statistic(s_L, n, a, eps1, ...)`; then `s_G`, `p_hat_G`, `candidates` and `tc` are `None`.
#
# **Which numbers a release can hold (plausibility).** Without noise the published parts lie in a known set:
#
# - every censored log lies in $[\log a, 0]$, so each mean $S_0(\mathbf D, a)_j$ does too;
# - Jensen's inequality, $e^{S_0(\mathbf D, a)_j} \le n^{-1}\sum_i \tilde x_{ij}$, summed over $j$, and
#   $\sum_j \tilde x_{ij} = \sum_j \max\{x_{ij}, a\} \le 1 + (d-1)a$ (at most $d - 1$ entries of a record are below
#   $a < 1/d$; all $d$ give $da$, smaller) bound the coordinates jointly: $\sum_j e^{S_0(\mathbf D, a)_j} \le 1 + (d-1)a$,
#   with equality when every record is the same corner (the statistic $(0, \log a, \ldots, \log a)$). Without
#   censoring this is the condition $\sum_j e^{S_0} < 1$ under which the MLE exists (notebook `02_dirichlet`);
# - the counts $s_m \ge 0$ sum to $n$.
#
# The noise widens these sets by its reach (notebook `01_mechanisms`, section "How far can the noise reach?"). A
# release checks $D = d$ Laplace coordinates ($2d$ when split) and $M + 1$ geometric counts (when $\epsilon_2 > 0$),
# and shares the false-refusal probability $p = 10^{-9}$ over them: with $k = \log(D/p)$ Laplace scales $b$ and the
# geometric reach $w$ (the smallest $m$ with $D \cdot 2t^m/(1+t) \le p$, minus one, $t = e^{-\epsilon_2/2}$),
#
# $$P\big(\text{some } |\varepsilon^L_j| > k b \text{ or some } |\varepsilon^G_m| > w\big) \;\le\; \sum_{\text{coordinates}} \frac pD = p = 10^{-9}.$$
#
# On the complementary event a genuine release satisfies, for $S_L$ (and $S_L(\mathbf D_1)$ with its own scale)
#
# $$\log a - k b \le S_{L,j} \le k b, \qquad \log\sum_j e^{S_{L,j}} \le \log\big(1 + (d-1)a\big) + k b,$$
#
# (the second because $\sum_j e^{S_j + \varepsilon_j} \le e^{\max_j \varepsilon_j}\sum_j e^{S_j}$), and, since
# $s_{G,m} = \max\{0, s_m + \varepsilon^G_m\}$ lies within $w$ of $s_m$ or is clamped at 0,
#
# $$0 \le s_{G,m} \le n + w, \qquad \Big|\sum_m s_{G,m} - n\Big| \le (M+1)\,w .$$
#
# For $d = 3$ unsplit with a selection of $M = 6$ candidates, $D = 10$ and $k = 23.0$. A value outside is refused with a
# `ValueError` naming the field, the value and the range. Research that needs an impossible release (a planted
# one, say) passes `check=False` to the constructor, `from_statistic`, `from_dict`, `from_json` or `load`; the
# release then says so in `checked`, which the analyses copy into their results' `attrs`.

# %%
#| export
_FIELDS = ("s_G", "p_hat_G", "a", "s_L", "s_L1", "n", "n1", "n2", "d", "eps1", "eps2", "candidates", "tc",
           "scale", "scale1")
_OPTIONAL = ("names",)  # written only when set, so files without them stay valid


def _float_vector(value, name, size=None):
    """Return a read-only finite float vector (of the given size), or raise."""
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be a sequence of real numbers") from err
    if arr.ndim != 1 or (size is not None and arr.size != size):
        want = f"length {size}" if size is not None else "1-D"
        raise ValueError(f"{name} must be a 1-D array of {want}, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    arr.flags.writeable = False
    return arr


def _same(x, y):
    """Exact equality of two fields (arrays, floats, ints or None)."""
    if x is None or y is None:
        return x is None and y is None
    return np.array_equal(np.asarray(x), np.asarray(y))


def _plausible_statistic(s, scale, a, k, name):
    """Refuse a noisy censored statistic outside [log a, 0] and the Jensen bound, each widened by ``k`` scales."""
    reach = f"Laplace noise of scale {scale:.4g} within {k:.1f} scales (the release's reach)"
    check_plausible(s, math.log(a) - k * scale, k * scale, name, noise=reach,
                    feasible=f"a mean of censored logs lies in [log a, 0] = [{math.log(a):.4g}, 0]")
    lse = float(np.logaddexp.reduce(s))
    bound = math.log1p((s.size - 1) * a)
    check_plausible(lse, -math.inf, bound + k * scale, f"log sum exp({name})", noise=reach,
                    feasible=f"Jensen: sum_j exp(S_0,j) <= 1 + (d - 1) a, so log sum exp(S_0) <= {bound:.4g}")


def _plausible_counts(s_G, n, w):
    """Refuse noisy counts s_G = max(0, s + noise) beyond n + w, or whose sum is farther than (M + 1) w from n."""
    reach = f"two-sided geometric noise within {w} (the release's reach)"
    check_plausible(s_G, 0, n + w, "s_G", feasible=f"a count of records lies in [0, n] = [0, {n}]", noise=reach)
    spread = s_G.size * w
    check_plausible(int(s_G.sum()), n - spread, n + spread, "sum(s_G)", noise=reach,
                    feasible=f"the counts s_m sum to n = {n}")


def _check_names(names, d):
    """Component names: None, or d distinct non-empty strings (returned as a tuple)."""
    if names is None:
        return None
    if isinstance(names, str) or not all(isinstance(v, str) and v.strip() for v in names):
        raise TypeError(f"names must be a sequence of {d} non-empty strings, got {names!r}")
    names = tuple(v.strip() for v in names)
    if len(names) != d or len(set(names)) != d:
        raise ValueError(f"names must be {d} distinct strings (one per component), got {list(names)}")
    return names

# %% [markdown]
# Check: a field vector is read-only and refused (by name) when it has the wrong length or a NaN.

# %%
v_chk = _float_vector([1, 2], "s_L", 2)
assert v_chk.dtype == float and not v_chk.flags.writeable
for bad, word in [([1.0], "length 2"), ([1.0, np.nan], "finite")]:
    try:
        _float_vector(bad, "s_L", 2)
    except ValueError as err:
        assert "s_L" in str(err) and word in str(err), err
    else:
        raise AssertionError(bad)
assert _same(None, None) and not _same(None, [1.0]) and _same([1, 2], np.array([1.0, 2.0]))
# The plausibility check: k = log(D / p) scales beyond [log a, 0] and the Jensen bound; here k = 5 to see it bite.
_plausible_statistic(np.array([np.log(1e-3) - 0.49, -0.5]), 0.1, 1e-3, 5.0, "s_L")   # within k scales
_plausible_statistic(np.array([0.0, np.log(1e-3)]), 1e-9, 1e-3, 5.0, "s_L")           # the Jensen bound, attained
for bad, word in [([0.51, -3.0], "s_L[0]"), ([-3.0, np.log(1e-3) - 0.51], "s_L[1]"),
                  ([-0.01, -0.01], "log sum exp(s_L)")]:   # each <= 0, but log(2 e^-0.01) = 0.68 > log(1 + a) + 0.5
    try:
        _plausible_statistic(np.array(bad), 0.1, 1e-3, 5.0, "s_L")
    except ValueError as err:
        assert word in str(err) and "impossible" in str(err) and "must lie in [" in str(err), err
    else:
        raise AssertionError(bad)
# the Jensen bound is tight: records all at one corner give exactly 1 + (d - 1) a
X_corner = np.tile([1.0, 0.0, 0.0], (5, 1))
assert np.isclose(np.exp(censored_stat(X_corner, 1e-3)).sum(), 1 + 2e-3)
X_any = np.random.default_rng(1).dirichlet([0.1, 0.5, 2.0], size=1000)  # own stream: later cells keep theirs
assert np.exp(censored_stat(X_any, 1e-2)).sum() <= 1 + 2e-2
_plausible_counts(np.array([0, 3, 97]), 100, 0)                                        # exact: sum = n
_plausible_counts(np.array([0, 5, 98]), 100, 4)                                        # within the reach
for bad, word in [(np.array([0, 3, 98]), "sum(s_G)"), (np.array([0, 0, 1_000_000]), "s_G[2]")]:
    try:
        _plausible_counts(bad, 100, 0 if bad[2] == 98 else 4)
    except ValueError as err:
        assert word in str(err), err
    else:
        raise AssertionError(bad)
assert _check_names(None, 2) is None and _check_names([" x", "y"], 2) == ("x", "y")
for bad, exc in [(["x"], ValueError), (["x", "x"], ValueError), ("xy", TypeError), (["x", ""], TypeError)]:
    try:
        _check_names(bad, 2)
    except exc as err:
        assert "names" in str(err)
    else:
        raise AssertionError(bad)

# %%
#| export
class _ReleaseBuild:
    """Ways to build a :class:`Release` other than :func:`release`: from JSON (the format ``FORMAT``,
    every field by name), from a dict, from a statistic released elsewhere; and the way back to JSON."""

    def to_dict(self):
        """The fields as plain Python values (lists, floats, ints, None)."""
        out = {"format": FORMAT}
        for k in _FIELDS:
            v = getattr(self, k)
            out[k] = v.tolist() if isinstance(v, np.ndarray) else v
        if self.names is not None:
            out["names"] = list(self.names)
        return out

    def to_json(self, indent=2):
        """Serialise to JSON text; ``Release.from_json(r.to_json()) == r`` exactly."""
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, data, *, check=True):
        """Build from :meth:`to_dict` output, refusing missing or unknown fields (``check``: see :meth:`from_json`)."""
        if not isinstance(data, dict):
            raise ValueError(f"a release must be a JSON object, got {type(data).__name__}")
        if data.get("format") != FORMAT:
            raise ValueError(f"format must be {FORMAT!r}, got {data.get('format')!r}")
        missing = [k for k in _FIELDS if k not in data]
        if missing:
            raise ValueError(f"release is missing field(s): {', '.join(missing)}")
        unknown = sorted(set(data) - set(_FIELDS) - set(_OPTIONAL) - {"format"})
        if unknown:
            raise ValueError(f"release has unknown field(s): {', '.join(unknown)}")
        return cls(**{k: data[k] for k in _FIELDS + _OPTIONAL if k in data}, checked=check)

    @classmethod
    def from_json(cls, text, *, check=True):
        """Parse and validate a release written by :meth:`to_json`.

        ``check=False`` skips the plausibility check (numbers no data set could give under the stated noise are
        then accepted, for research); the release records it in ``checked`` and the analyses in their attrs.
        """
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise ValueError(f"not a JSON release: {err}") from err
        return cls.from_dict(data, check=check)

    @classmethod
    def load(cls, path, *, check=True):
        """Read and validate a release file written by :meth:`save` (or ``dplit release``).

        Errors name the file: ``OSError`` when it cannot be read, ``ValueError`` when it is not a valid release
        (``check``: see :meth:`from_json`).
        """
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except UnicodeDecodeError as err:
            raise ValueError(f"{path}: not a JSON release (not UTF-8 text)") from err
        try:
            return cls.from_json(text, check=check)
        except (TypeError, ValueError) as err:
            raise type(err)(f"{path}: {err}") from err

    def save(self, path, *, overwrite=False):
        """Write the release as JSON to ``path``; an existing file is kept unless ``overwrite=True``."""
        with open(path, "w" if overwrite else "x", encoding="utf-8") as fh:
            fh.write(self.to_json() + "\n")
        return path

    @classmethod
    def from_statistic(cls, s_L, n, a, eps1, *, s_L1=None, n1=0, eps2=0.0, s_G=None, candidates=None, tc=None,
                       names=None, check=True):
        """Wrap a censored statistic released elsewhere (the scales and ``p_hat_G`` are computed).

        Parameters
        ----------
        s_L : array_like, shape (d,)
            Noisy censored statistic of D (or of D2 when ``n1 > 0``).
        n : int
            Total number of records.
        a : float
            Censoring threshold in (0, 1).
        eps1 : float
            Budget of the Laplace part.
        s_L1 : array_like, shape (d,), optional
            Noisy statistic of D1 (required when ``n1 > 0``).
        n1 : int, default 0
            Records in D1.
        eps2 : float, default 0.0
            Budget of the threshold selection; 0 when ``a`` was fixed in advance.
        s_G, candidates, tc : optional
            The threshold-selection output (required when ``eps2 > 0``); candidates in any order,
            ``s_G`` in the increasing order of the candidates.
        names : sequence of str, optional
            Names of the d components (e.g. a CSV header).
        check : bool, default True
            False skips the plausibility check (see :meth:`from_json`), for research on impossible releases.
        """
        s_L = np.asarray(s_L, dtype=float)
        d = int(s_L.size)
        n2 = _count(n, "n", 1) - _count(n1, "n1", 0)
        if n2 < 1:
            raise ValueError(f"n1 must be < n = {n}, got {n1}")
        p_hat = None
        if candidates is not None:
            candidates = _check_candidates(candidates)
        if s_G is not None:
            p_hat = noisy_censoring_rates(np.asarray(s_G))
        return cls(s_G=s_G, p_hat_G=p_hat, a=a, s_L=s_L, s_L1=s_L1, n=n, n1=n1, n2=n2, d=d, eps1=eps1,
                   eps2=eps2, candidates=candidates, tc=tc, scale=laplace_scale(d, a, n2, eps1),
                   scale1=laplace_scale(d, a, n1, eps1) if n1 > 0 else None, names=names, checked=check)

# %% [markdown]
# The record validates itself when it is built: types and ranges of each field first, then the
# consistency of the fields (the scales from $d, a, n_l, \epsilon_1$; $\hat p_G$ from $\mathbf s_G$; $a$ from
# the rule).

# %%
#| export
class _ReleaseChecks:
    """The validation of a :class:`Release` (its ``__post_init__``), naming the first bad field."""

    def __post_init__(self):
        set_ = object.__setattr__
        n = check.count(self.n, "n", 1)
        n1 = check.count(self.n1, "n1", 0)
        if n1 >= n:
            raise ValueError(f"n1 must be < n = {n} (n1 = 0 means no split), got {n1}")
        n2 = check.count(self.n2, "n2", 1)
        if n2 != n - n1:
            raise ValueError(f"n2 must equal n - n1 = {n - n1}, got {n2}")
        d = check.count(self.d, "d", 2)
        a = check.unit_interval(self.a, "a")
        eps1 = check.epsilon(self.eps1, "eps1")
        eps2 = check.epsilon(self.eps2, "eps2", allow_zero=True)
        for name, value in (("n", n), ("n1", n1), ("n2", n2), ("d", d), ("a", a), ("eps1", eps1), ("eps2", eps2)):
            set_(self, name, value)
        set_(self, "s_L", _float_vector(self.s_L, "s_L", d))
        if (n1 == 0) != (self.s_L1 is None):
            raise ValueError("s_L1 must be given exactly when n1 > 0 (the data were split)")
        if (n1 == 0) != (self.scale1 is None):
            raise ValueError("scale1 must be given exactly when n1 > 0 (the data were split)")
        set_(self, "names", _check_names(self.names, d))
        self._validate_selection()  # first: a tampered a is then named as such, not blamed on the scales
        scale = check.positive(self.scale, "scale")
        if not math.isclose(scale, laplace_scale(d, a, n2, eps1), rel_tol=1e-9):
            raise ValueError(f"scale must be -d log(a) / (n2 eps1) = {laplace_scale(d, a, n2, eps1)!r} from d, a, "
                             f"n2 and eps1, got {scale!r} (one of these fields was altered)")
        set_(self, "scale", scale)
        if n1 > 0:
            set_(self, "s_L1", _float_vector(self.s_L1, "s_L1", d))
            scale1 = check.positive(self.scale1, "scale1")
            if not math.isclose(scale1, laplace_scale(d, a, n1, eps1), rel_tol=1e-9):
                raise ValueError(f"scale1 must be -d log(a) / (n1 eps1) = {laplace_scale(d, a, n1, eps1)!r} from d, "
                                 f"a, n1 and eps1, got {scale1!r} (one of these fields was altered)")
            set_(self, "scale1", scale1)
        set_(self, "checked", check.boolean(self.checked, "checked"))
        if self.checked:
            self._check_plausible()

    def _check_plausible(self):
        """Refuse numbers that no data set gives under the stated noise (derivation above: p = 1e-9 per release)."""
        selected = self.eps2 > 0
        n_coords = self.d * (2 if self.split else 1) + (self.s_G.size if selected else 0)
        if selected:                            # first: a follows from s_G
            t = math.exp(-self.eps2 / COUNT_SENSITIVITY)
            _plausible_counts(self.s_G, self.n, geometric_reach(t, n_coords) if t < 1 else math.inf)
        k = laplace_reach(n_coords)
        _plausible_statistic(self.s_L, self.scale, self.a, k, "s_L")
        if self.split:
            _plausible_statistic(self.s_L1, self.scale1, self.a, k, "s_L1")

    def _validate_selection(self):
        """Check s_G, p_hat_G, candidates, tc and the rule's choice of a (all None when eps2 == 0)."""
        parts = {k: getattr(self, k) for k in ("s_G", "p_hat_G", "candidates", "tc")}
        if self.eps2 == 0:
            if any(v is not None for v in parts.values()):
                raise ValueError("eps2 = 0 means no threshold selection: s_G, p_hat_G, candidates and tc must be None")
            return
        missing = [k for k, v in parts.items() if v is None]
        if missing:
            raise ValueError(f"eps2 > 0 needs the threshold selection fields; missing: {', '.join(missing)}")
        cands = _float_vector(self.candidates, "candidates")
        if cands.size == 0 or np.any(cands <= 0) or np.any(cands >= 1) or np.any(np.diff(cands) <= 0):
            raise ValueError("candidates must be strictly increasing thresholds in (0, 1)")
        if cands[-1] * self.d >= 1:
            raise ValueError(f"candidates must be below 1/d = {1 / self.d:.4g} (a threshold >= 1/d censors every "
                             f"component of every record), got {cands[-1]!r}")
        s_G = np.array(self.s_G)
        if s_G.ndim != 1 or s_G.size != cands.size + 1:
            raise ValueError(f"s_G must hold M + 1 = {cands.size + 1} counts, got shape {s_G.shape}")
        if s_G.size and not (np.issubdtype(s_G.dtype, np.integer) or np.all(s_G == np.round(s_G))):
            raise ValueError("s_G must hold integers")
        s_G = s_G.astype(np.int64)
        if np.any(s_G < 0):
            raise ValueError("s_G must be non-negative (noisy counts are clamped at 0)")
        s_G.flags.writeable = False
        p_hat = _float_vector(self.p_hat_G, "p_hat_G", cands.size)
        if not np.allclose(p_hat, noisy_censoring_rates(s_G), rtol=1e-12, atol=1e-15):
            raise ValueError("p_hat_G is inconsistent with s_G (p_hat_G,m = sum_{l<=m} s_G,l / sum_l s_G,l)")
        tc = check.unit_interval(self.tc, "tc")
        chosen = select_threshold(noisy_censoring_rates(s_G), cands, tc)
        if self.a != chosen:
            raise ValueError(f"a = {self.a!r} is not the threshold the rule selects from s_G, candidates and tc "
                             f"({chosen!r})")
        for name, value in (("s_G", s_G), ("p_hat_G", p_hat), ("candidates", cands), ("tc", tc)):
            object.__setattr__(self, name, value)

# %% [markdown]
# The record itself: the fields, what they mean, and the questions a reader asks of a release
# (its budget, whether it was split, which part to use, whether to worry about the threshold).

# %%
#| export
@dataclass(frozen=True, eq=False)
class Release(_ReleaseChecks, _ReleaseBuild):
    """What a curator publishes by Algorithm 1 of Guo et al. (an (eps1 + eps2)-DP release).

    Build it with :func:`release` (from data), :meth:`from_statistic` (a statistic released elsewhere),
    :meth:`from_json` or :meth:`load` (a file; :meth:`save` writes one). Every field is public; the constructor validates types, ranges and the
    consistency of the fields, and raises ``ValueError`` naming the first bad field.

    Attributes
    ----------
    s_G : ndarray of int64, shape (M + 1,) or None
        Noisy counts ``max(0, s_m + noise)`` for the candidates sorted increasingly.
    p_hat_G : ndarray, shape (M,) or None
        Noisy censoring rates (Sec. 3.2).
    a : float
        The selected censoring threshold.
    s_L : ndarray, shape (d,)
        Noisy censored statistic ``S_L(D, a)``, or ``S_L(D2, a)`` when the data were split.
    s_L1 : ndarray, shape (d,) or None
        ``S_L(D1, a)``; None when ``n1 == 0``.
    n, n1, n2 : int
        Records in D, D1 and D2 (``n2 = n - n1``; ``n1 = 0`` means no split and ``n2 = n``).
    d : int
        Number of components.
    eps1, eps2 : float
        Budgets of the Laplace part and of the threshold selection (``eps2 = 0`` when no selection).
    candidates : ndarray, shape (M,) or None
        Candidate thresholds, increasing.
    tc : float or None
        Tolerated censoring rate.
    scale : float
        Laplace scale of ``s_L``: ``-d log(a) / (n2 eps1)``.
    scale1 : float or None
        Laplace scale of ``s_L1``: ``-d log(a) / (n1 eps1)``; None when unsplit.
    names : tuple of str or None
        Names of the components (e.g. the CSV header), carried into the analyses' coordinates.
    checked : bool, default True
        Whether the plausibility check ran (False: built with ``check=False``, for research; not written to JSON).
    """

    s_G: np.ndarray | None
    p_hat_G: np.ndarray | None
    a: float
    s_L: np.ndarray
    s_L1: np.ndarray | None
    n: int
    n1: int
    n2: int
    d: int
    eps1: float
    eps2: float
    candidates: np.ndarray | None
    tc: float | None
    scale: float
    scale1: float | None
    names: tuple[str, ...] | None = None
    checked: bool = True

    def __eq__(self, other):
        if not isinstance(other, Release):
            return NotImplemented
        return all(_same(getattr(self, k), getattr(other, k)) for k in _FIELDS + _OPTIONAL)

    __hash__ = None

    @property
    def eps_total(self):
        """Total privacy budget spent, ``eps1 + eps2`` (Theorem 2)."""
        return self.eps1 + self.eps2

    @property
    def budget(self):
        """The release's ledger: a :class:`dplit.accounting.PrivacyBudget` of ``eps_total`` with its charges.

        The threshold selection (on all of D) costs ``eps2``; the Laplace statistics cost ``eps1``,
        once on D, or on the disjoint D1 and D2 in parallel (Prop. 3), so the total is
        ``eps1 + eps2`` either way (Theorem 2).
        """
        ledger = PrivacyBudget(self.eps_total)
        if self.eps2 > 0:
            ledger.spend(self.eps2, "threshold selection on D (geometric counts)")
        if self.split:
            ledger.spend_parallel([self.eps1, self.eps1], "censored statistics s_L1 on D1 and s_L on D2 (Laplace)")
        else:
            ledger.spend(self.eps1, "censored statistic s_L on D (Laplace)")
        return ledger

    @property
    def split(self):
        """True when the data were split into D1 and D2 (``n1 > 0``)."""
        return self.n1 > 0

    @property
    def fallback(self):
        """True when no candidate's noisy rate met tc and the rule fell back to ``a_1``."""
        return self.p_hat_G is not None and bool(self.p_hat_G[0] > self.tc)

    def part(self, which="D2"):
        """``(s_L, n, scale)`` of one released part: ``"D1"``, ``"D2"``, or ``"D"`` (unsplit only).

        When the data were not split, ``"D2"`` is the whole data set (``n2 = n``).
        """
        check.choice(which, "which", ("D", "D1", "D2"))
        if which == "D1":
            if not self.split:
                raise ValueError("part 'D1' needs a split release (n1 > 0)")
            return self.s_L1, self.n1, self.scale1
        if which == "D2" or (which == "D" and not self.split):
            return self.s_L, self.n2, self.scale
        raise ValueError("part 'D' is not released when the data were split; use 'D1' or 'D2'")

    def caution(self, factor=2.0):
        """A warning text when ``a = a_1`` and its noisy censoring rate exceeds ``factor * tc``, else None.

        Guo et al. (Sec. 4.1, S4) warn that then ``S_0(D, a)`` may be far from ``S_0(D)``: many records
        are censored even at the smallest candidate, and inferences carry censoring bias.
        """
        factor = check.positive(factor, "factor")
        if self.p_hat_G is None or self.a != self.candidates[0] or self.p_hat_G[0] <= factor * self.tc:
            return None
        return (f"the selected threshold is the smallest candidate a_1 = {self.a:g}, but its noisy censoring rate "
                f"{self.p_hat_G[0]:.3g} is far above tc = {self.tc:g}: the censored statistic may be biased "
                f"(consider smaller candidates)")

    def summary(self):
        """A readable, multi-line description of the release."""
        lines = [f"dplit release: n = {self.n} records, d = {self.d} components, "
                 f"budget eps1 + eps2 = {self.eps1:g} + {self.eps2:g} = {self.eps_total:g}"]
        if self.candidates is not None:
            lines.append(f"threshold a = {self.a:g} chosen from {len(self.candidates)} candidates with tc = {self.tc:g}")
            lines.append("  candidate   noisy rate p_hat_G")
            lines += [f"  {c:<10.3g}  {p:.4f}" for c, p in zip(self.candidates, self.p_hat_G)]
        else:
            lines.append(f"threshold a = {self.a:g} fixed in advance (no selection, eps2 = 0)")
        if self.split:
            lines.append(f"split: D1 = {self.n1} records (scale {self.scale1:.4g}), D2 = {self.n2} records "
                         f"(scale {self.scale:.4g}); parallel composition: eps1 covers both")
            lines.append(f"S_L(D1, a) = {np.array2string(self.s_L1, precision=4)}")
            lines.append(f"S_L(D2, a) = {np.array2string(self.s_L, precision=4)}")
        else:
            lines.append(f"S_L(D, a) = {np.array2string(self.s_L, precision=4)} (Laplace scale {self.scale:.4g})")
        warning = self.caution()
        if warning:
            lines.append("WARNING: " + warning)
        return "\n".join(lines)

# %% [markdown]
# Check: a statistic released elsewhere is wrapped (scales computed), survives the JSON round trip
# exactly, and a tampered field is refused by name.

# %%
r_ext = Release.from_statistic([-1.2, -1.0, -1.4], 500, 1e-3, 1.0)
assert np.isclose(r_ext.scale, laplace_scale(3, 1e-3, 500, 1.0)) and r_ext.eps_total == 1.0 and not r_ext.split
assert Release.from_json(r_ext.to_json()) == r_ext
for field, value in [("scale", 2 * r_ext.scale), ("n1", -1), ("eps1", 0.0), ("a", 1.5)]:
    try:
        Release.from_dict(r_ext.to_dict() | {field: value})
    except ValueError as err:
        assert field in str(err), (field, err)
    else:
        raise AssertionError(f"tampered {field} accepted")
# An impossible statistic (every censored log is <= 0) and names that do not fit are refused.
for change, word in [({"s_L": [5.0, 5.0, 5.0]}, "s_L[0] = 5 is impossible"), ({"names": ["x", "y"]}, "names")]:
    try:
        Release.from_dict(r_ext.to_dict() | change)
    except ValueError as err:
        assert word in str(err), (change, err)
    else:
        raise AssertionError(change)
# Files: load what save wrote (names kept), never overwrite silently, and name the file in errors.
import tempfile
from pathlib import Path

with tempfile.TemporaryDirectory() as tmp:
    path = Path(tmp) / "release.json"
    r_named = Release.from_statistic([-1.2, -1.0, -1.4], 500, 1e-3, 1.0, names=["sleep", "work", "leisure"])
    r_named.save(path)
    assert Release.load(path) == r_named and Release.load(path).names == ("sleep", "work", "leisure")
    try:
        r_ext.save(path)
    except FileExistsError:
        pass
    else:
        raise AssertionError("save overwrote a file")
    r_ext.save(path, overwrite=True)
    assert Release.load(path) == r_ext != r_named
    path.write_text('{"format": "dplit.release/0"}')
    try:
        Release.load(path)
    except ValueError as err:
        assert str(err).startswith(str(path)) and "format" in str(err), err
    else:
        raise AssertionError("wrong version accepted")

# %% [markdown]
# Algorithm 1 itself: count, select, split, add noise, and package.

# %%
#| export
def _split(n, n1, rng):
    """Indices of D1 (n1 records) and D2 (the rest), a uniformly random partition."""
    perm = rng.permutation(n)
    return perm[:n1], perm[n1:]


def release(X, eps1, eps2, candidates, tc, *, n1=0, rng=None, secure=True, names=None, budget=None):
    """Algorithm 1 of Guo et al.: select the censoring threshold and release the noisy statistic.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Confidential compositions (rows on the simplex; zeros are valid).
    eps1 : float
        Budget of the Laplace release of ``S_0(D, a)``, > 0.
    eps2 : float
        Budget of the threshold selection (geometric mechanism on the counts), > 0.
    candidates : sequence of float
        Candidate thresholds in (0, 1), distinct, any order (published sorted increasingly).
    tc : float
        Tolerated proportion of records with a censored entry, in (0, 1) (the paper uses 0.01).
    n1 : int, default 0
        Size of D1. With ``n1 > 0`` the records are split uniformly at random into D1 (n1) and
        D2 (n - n1), both censored at the same ``a`` and released with budget ``eps1`` each
        (parallel composition).
    rng : None, int or numpy.random.Generator
        Randomness of the split and, when ``secure=False``, of the noise.
    secure : bool, default True
        Draw the noise with OpenDP (not seedable); ``False`` uses the seeded fast path.
    names : sequence of str, optional
        Names of the d components (e.g. the CSV header), kept in the release.
    budget : dplit.accounting.PrivacyBudget, optional
        A ledger charged with the release's own (:attr:`Release.budget`); checked before any noise
        is drawn, so a release that does not fit raises ``BudgetExceededError`` and spends nothing.

    Returns
    -------
    Release
        The published record; ``release.eps_total == eps1 + eps2`` (Theorem 2).

    Examples
    --------
    >>> X = np.random.default_rng(0).dirichlet([2.0, 3.0, 4.0], size=1000)
    >>> r = release(X, 0.75, 0.25, [1e-4, 1e-3, 1e-2, 0.1], 0.01, rng=1, secure=False)
    >>> r.eps_total, r.d, r.n2
    (1.0, 3, 1000)
    """
    X = check_compositions(X, name="X")
    n, d = X.shape
    eps1 = check.epsilon(eps1, "eps1")
    eps2 = check.epsilon(eps2, "eps2")
    cands = _check_candidates(candidates)
    if cands[-1] * d >= 1:  # before any noise is drawn: such a threshold would waste the budget
        raise ValueError(f"candidates must be below 1/d = {1 / d:.4g} for d = {d} components (a threshold >= 1/d "
                         f"censors every component of every record); drop {[c for c in cands.tolist() if c * d >= 1]}")
    tc = check.unit_interval(tc, "tc")
    n1 = check.count(n1, "n1", 0)
    names = _check_names(names, d)
    if n1 >= n:
        raise ValueError(f"n1 must satisfy 0 <= n1 < n = {n} (each part needs at least one record), got {n1}")
    if budget is not None:
        if not isinstance(budget, PrivacyBudget):
            raise TypeError(f"budget must be a dplit.accounting.PrivacyBudget, got {type(budget).__name__}")
        if not budget.can_spend(eps1 + eps2):
            raise BudgetExceededError(f"release needs eps1 + eps2 = {eps1 + eps2:.6g} but the budget has only "
                                      f"{budget.remaining:.6g} left")
    rng = check.rng(rng)
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
                  scale1=laplace_scale(d, a, n1, eps1) if n1 else None, names=names)
    if budget is not None:
        budget.absorb(rel.budget)
    return rel


# %% [markdown]
# ### Checks of `release`
#
# *Unbiased, with the stated variance.* Given the selected $a$, the noise is independent of everything else,
# so the standardised residual $(S_L - S_0(\mathbf D, a))/b$ must be exactly $\mathrm{Laplace}(0, 1)$, whatever $a$ was
# selected. For $d \in \{2, 3, 5\}$ (the paper's $\boldsymbol\alpha_1, \boldsymbol\alpha_3, \boldsymbol\alpha_5$) we pool the residuals of many
# releases of one data set (fast path, fixed seed) and test them against $\mathrm{Laplace}(0,1)$ with a
# Kolmogorov-Smirnov test, their mean against $0$ and their variance against $2$. The same residuals divided by the
# wrong scale (a release with half the noise would produce them) must fail.

# %%
def standardised_residuals(X, n_releases, eps1, eps2, rng, **kw):
    """(S_L - S_0(D, a)) / scale over repeated releases of one data set, pooled, and the selected a's."""
    res, a_sel = [], []
    for _ in range(n_releases):
        r = release(X, eps1, eps2, CANDIDATES, TC, rng=rng, secure=False, **kw)
        res.append((r.s_L - censored_stat(X, r.a)) / r.scale)
        a_sel.append(r.a)
    return np.concatenate(res), np.array(a_sel)


for key in ("alpha1", "alpha3", "alpha5"):
    X = rng.dirichlet(PAPER_ALPHAS[key], size=1000)
    z, a_sel = standardised_residuals(X, n_rel, eps1=0.5, eps2=0.25, rng=rng)
    p_ks = stats.kstest(z, stats.laplace.cdf).pvalue
    p_wrong = stats.kstest(z * 2, stats.laplace.cdf).pvalue  # scale off by a factor 2
    assert p_ks > 1e-3 and p_wrong < 1e-6, (key, p_ks, p_wrong)
    assert abs(z.mean()) < 5 * np.sqrt(2 / z.size)  # unbiased for S_0(D, a)
    assert abs(z.var() / 2 - 1) < 5 * np.sqrt(5 / z.size)  # Var = 2 b^2 (Laplace kurtosis 6: sd of s^2/2 ~ sqrt(5/N))
    print(f"{key} (d = {X.shape[1]}): KS p = {p_ks:.3f}; mean {z.mean():+.4f}; var/2 = {z.var() / 2:.4f}; "
          f"selected a: {dict(zip(*np.unique(a_sel, return_counts=True)))}")

# %% [markdown]
# **Where the selected $a$ lands.** The printed spread of the selected thresholds is wide, and leans towards the
# *smallest* candidates, although the true censoring rates of these $\boldsymbol\alpha$'s stay below $t_c$ up to
# $a = 10^{-2}$. The reason is the clamp in $s_{G,m} = \max\{0, s_m + \varepsilon^G_m\}$: for an (almost) empty count the
# clamped noise has mean $E[\max(0, \varepsilon^G)] = t/(1-t^2)$, about $4$ for $\epsilon_2 = 0.25$ ($t = e^{-1/8}$). The
# empty bins below $a_{opt}$ add about $4$ phantom censored records each, and with $n = 1000$ two or three of them
# exceed $t_c n = 10$. The rule is therefore conservative (smaller $a$: less bias, more noise) until $n\epsilon_2$
# is large compared with $M / t_c$; Theorem 1 is a statement about that limit (section 5).

# %%
from dplit.mechanisms import sample_two_sided_geometric

t = np.exp(-0.25 / 2)
clamped = np.maximum(sample_two_sided_geometric(t, 200_000, rng=rng), 0)
assert abs(clamped.mean() - t / (1 - t**2)) < 5 * clamped.std() / np.sqrt(clamped.size)
print(f"E[max(0, noise)] = {t / (1 - t**2):.2f} phantom records per empty count at eps2 = 0.25")

# %% [markdown]
# *The split.* $n_1 S_0(\mathbf D_1, a) + n_2 S_0(\mathbf D_2, a) = n S_0(\mathbf D, a)$ for any partition, and both scales satisfy
# $n_l b_l = -d\log(a)/\epsilon_1 =: B$. So $n_1 S_{L}(\mathbf D_1) + n_2 S_L(\mathbf D_2) - n S_0(\mathbf D, a)$ is a sum of two independent
# $\mathrm{Laplace}(0, B)$ variables: mean $0$, variance $4B^2$. The split must also be uniform: a marked record must
# land in $\mathbf D_1$ with probability $n_1/n$ (binomial test, with a practically noise-free release).

# %%
X = rng.dirichlet(PAPER_ALPHAS["alpha3"], size=400)
comb = []
for _ in range(n_rel):
    r = release(X, 1.0, 0.5, CANDIDATES, TC, n1=100, rng=rng, secure=False)
    assert (r.n1, r.n2, r.s_L1.shape) == (100, 300, (3,)) and np.isclose(r.scale1, 3 * r.scale)
    B = r.scale * r.n2
    comb.append((r.n1 * r.s_L1 + r.n2 * r.s_L - r.n * censored_stat(X, r.a)) / B)
comb = np.concatenate(comb)
assert abs(comb.mean()) < 5 * np.sqrt(4 / comb.size) and abs(comb.var() / 4 - 1) < 0.15

X_mark = np.full((40, 3), 1 / 3)
X_mark[0] = [0.98, 0.01, 0.01]  # the marked record
hits = 0
for _ in range(n_rel):
    r = release(X_mark, 1e12, 1.0, CANDIDATES, TC, n1=10, rng=rng, secure=False)
    hits += not np.allclose(r.s_L1, np.log(1 / 3), atol=1e-6)
assert stats.binomtest(hits, n_rel, 10 / 40).pvalue > 1e-3
print(f"the marked record fell in D1 in {hits / n_rel:.3f} of the releases (expected 0.25)")

# %% [markdown]
# *Seeds, the secure path, JSON, bad input.* Same seed, same release; the OpenDP path gives a valid release with the
# same structure; the JSON round trip is exact; a tampered file is refused.

# %%
X = rng.dirichlet(PAPER_ALPHAS["alpha3"], size=1000)
r1 = release(X, 0.75, 0.25, CANDIDATES, TC, n1=250, rng=7, secure=False)
assert r1 == release(X, 0.75, 0.25, CANDIDATES, TC, n1=250, rng=7, secure=False)
assert r1 != release(X, 0.75, 0.25, CANDIDATES, TC, n1=250, rng=8, secure=False)
r_sec = release(X, 0.75, 0.25, CANDIDATES, TC, n1=250, rng=7)
assert r_sec.eps_total == 1.0 and r_sec.budget.spent == 1.0 and r_sec.s_G.sum() > 0 and np.all(np.isfinite(r_sec.s_L1))
assert np.array_equal(r_sec.candidates, np.sort(CANDIDATES))
for r in (r1, r_sec, release(X, 1.0, 1.0, CANDIDATES, TC, rng=1, secure=False)):
    back = Release.from_json(r.to_json())
    assert back == r and back.to_json() == r.to_json()
    assert all(np.array_equal(getattr(back, k), getattr(r, k)) for k in ("s_L", "p_hat_G", "s_G"))
r_fixed = Release.from_statistic(r1.s_L, 1000, 1e-3, 0.75)
assert r_fixed.eps2 == 0 and r_fixed.eps_total == 0.75 and r_fixed.s_G is None and r_fixed.scale1 is None
assert Release.from_json(r_fixed.to_json()) == r_fixed
assert Release.from_statistic(r1.s_L, 1000, r1.a, 0.75, s_L1=r1.s_L1, n1=250, eps2=0.25, s_G=r1.s_G,
                              candidates=CANDIDATES, tc=TC) == r1
print(r1.summary())

# %%
import json as _json


def must_fail(fn, word, exc=ValueError):
    try:
        fn()
    except exc as err:
        assert word in str(err), (word, str(err))
    else:
        raise AssertionError(f"expected an error about {word!r}")


good = r1.to_dict()
must_fail(lambda: Release.from_json(_json.dumps({k: v for k, v in good.items() if k != "scale"})), "missing field(s): scale")
must_fail(lambda: Release.from_json(_json.dumps(good | {"extra": 1})), "unknown field(s): extra")
must_fail(lambda: Release.from_json(_json.dumps(good | {"scale": good["scale"] * 2})), "scale must be")
moved_a = {"a": 0.1, "scale": laplace_scale(3, 0.1, 750, 0.75), "scale1": laplace_scale(3, 0.1, 250, 0.75)}
must_fail(lambda: Release.from_json(_json.dumps(good | moved_a)), "not the threshold the rule selects")
must_fail(lambda: Release.from_json(_json.dumps(good | {"n2": 999})), "n2 must equal")
must_fail(lambda: Release.from_json(_json.dumps(good | {"p_hat_G": [0.0] * 6})), "p_hat_G is inconsistent")
must_fail(lambda: Release.from_json(_json.dumps(good | {"s_L1": None})), "s_L1 must be given")
must_fail(lambda: Release.from_json(_json.dumps(good | {"s_L": [0.0, 1.0]})), "s_L must be")
must_fail(lambda: Release.from_json("{not json"), "not a JSON release")
must_fail(lambda: Release.from_json(_json.dumps(good | {"candidates": good["candidates"][:-1] + [0.5]})), "below 1/d")
must_fail(lambda: Release.from_json(_json.dumps(good | {"s_L": [-60.0, -1.0, -1.0]})), "s_L[0] = -60 is impossible")
must_fail(lambda: r1.part("D"), "not released")

X_ok = rng.dirichlet([2.0, 3.0], size=20)
X_nan, X_neg, X_off = X_ok.copy(), X_ok.copy(), X_ok.copy()
X_nan[3, 0] = np.nan
X_neg[4] = [-0.1, 1.1]
X_off[5] = [0.5, 0.6]
for X_bad in (X_nan, X_neg, X_off):
    must_fail(lambda X_bad=X_bad: release(X_bad, 1.0, 1.0, CANDIDATES, TC, secure=False), "X")
ok = dict(X=X_ok, eps1=1.0, eps2=1.0, candidates=CANDIDATES, tc=TC)
for change, word in [(dict(eps1=0.0), "eps1"), (dict(eps2=-1.0), "eps2"), (dict(tc=1.0), "tc"), (dict(tc=0.0), "tc"),
                     (dict(candidates=[0.1, 1.5]), "candidates"), (dict(candidates=[0.1, 0.1]), "repeated"),
                     (dict(n1=20), "n1"), (dict(n1=25), "n1"), (dict(candidates=[0.01, 0.5]), "below 1/d")]:
    args = ok | change
    must_fail(lambda args=args: release(**args, secure=False), word)
must_fail(lambda: release(X_ok, 1.0, 1.0, CANDIDATES, TC, n1=2.5, secure=False), "n1", TypeError)
X_zero = X_ok.copy()
X_zero[0] = [0.0, 1.0]  # zeros are valid data: censored like any small entry
r_zero = release(X_zero, 1.0, 1.0, CANDIDATES, TC, rng=0, secure=False)
assert np.all(np.isfinite(r_zero.s_L))

# %% [markdown]
# ## 4. The bias-variance trade-off in $a$
#
# For a fixed threshold, $S_L(\mathbf D, a)$ estimates the uncensored mean $E[\log \mathbf x]$ with mean squared error
#
# $$\mathrm{MSE}(a) = \sum_{j=1}^d \Big(b_j(a)^2 + \frac{\mathrm{Var}(\log\tilde x_j)}{n}\Big) + d \cdot 2\Big(\frac{-d\log a}{n\epsilon_1}\Big)^2,$$
#
# with the censoring bias $b_j(a)$ and the variance of the censored logs from `dplit.censoring` (Supplement S1).
# The bias grows with $a$, the noise term shrinks like $(\log a)^2$: the curves below have a minimum, which moves to
# larger $a$ as $\epsilon_1$ or $n$ shrink. The dots mark the threshold the DP rule picks most often with
# $t_c = 0.01$ and $\epsilon_2 = \epsilon_1/3$ (the paper's 3:1 division of the budget). The rule targets a censoring rate,
# not the MSE, and at small budgets the clamped count noise pushes it far below the MSE optimum (section 3): it
# trades a little bias for a lot of noise. A Monte Carlo check of the formula comes first.

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

alpha, a, n, eps1 = PAPER_ALPHAS["alpha2"], 1e-2, 200, 1.0
truth = digamma(alpha) - digamma(alpha.sum())
sq = []
for _ in range(n_rel):
    Xs = rng.dirichlet(alpha, size=n)
    s_L = laplace_mechanism(censored_stat(Xs, a), censored_sensitivity(3, a, n), eps1, rng=rng)
    sq.append(np.sum((s_L - truth) ** 2))
sq = np.array(sq)
mse = release_mse(alpha, a, n, eps1)
assert abs(sq.mean() - mse) < 5 * sq.std() / np.sqrt(sq.size), (sq.mean(), mse)
print(f"MSE formula {mse:.4f}, Monte Carlo {sq.mean():.4f} +- {sq.std() / np.sqrt(sq.size):.4f}")

# %%
a_grid = np.geomspace(1e-8, 0.3, size(full=40, quick=12))
fig_alphas = ("alpha2", "alpha3", "alpha4")
curves = {(k, e): np.array([release_mse(PAPER_ALPHAS[k], a_, 1000, e) for a_ in a_grid])
          for k in fig_alphas for e in (0.25, 1.0)}
for (k, e), c in curves.items():
    i = int(np.argmin(c))
    assert 0 < i < a_grid.size - 1, (k, e)  # an interior optimum: the trade-off is real
for k in fig_alphas:  # a smaller budget pushes the optimum to larger a
    assert a_grid[np.argmin(curves[(k, 0.25)])] >= a_grid[np.argmin(curves[(k, 1.0)])]

# %%
# NBVAL_IGNORE_OUTPUT
fig, ax = plt.subplots(1, len(fig_alphas), figsize=(12, 3.6), sharey=False)
for axis, k in zip(ax, fig_alphas):
    Xk = rng.dirichlet(PAPER_ALPHAS[k], size=1000)
    for e, ls in ((0.25, "-"), (1.0, "--")):
        c = curves[(k, e)]
        axis.plot(a_grid, c, ls=ls, label=f"eps1 = {e}")
        a_dp = [release(Xk, e, e / 3, CANDIDATES, TC, rng=rng, secure=False).a for _ in range(50)]
        vals, cnt = np.unique(a_dp, return_counts=True)
        a_mode = vals[np.argmax(cnt)]
        axis.plot([a_mode], [release_mse(PAPER_ALPHAS[k], a_mode, 1000, e)], "o", c=axis.lines[-1].get_color())
    axis.set(xscale="log", yscale="log", xlabel="threshold a", title=f"{k} = {tuple(PAPER_ALPHAS[k].tolist())}, n = 1000")
ax[0].set_ylabel("MSE of S_L for E[log x]")
ax[0].legend()
fig.tight_layout()

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
# For $\boldsymbol\alpha_3$ and the paper's candidates, $a_{opt} = 10^{-2}$ ($p = 0.0017 < t_c = 0.01 < p = 0.20$ at $a = 0.1$);
# we use $C = 1$.

# %%
from dplit.censoring import record_censoring_prob


def simulate_selection(p, n, eps2, n_reps, rng, tc=TC):
    """Selected candidate index over replicates, with counts drawn as a multinomial (exact for iid records)."""
    probs = np.diff(np.concatenate([[0.0], p, [1.0]]))
    s = rng.multinomial(n, probs, size=n_reps)
    s_G = np.maximum(s + sample_two_sided_geometric(np.exp(-eps2 / 2), s.shape, rng=rng), 0)
    total = s_G.sum(axis=1, keepdims=True)
    p_hat = np.where(total > 0, np.cumsum(s_G, axis=1)[:, :-1] / np.maximum(total, 1), 1.0)
    return np.maximum(np.sum(p_hat <= tc, axis=1) - 1, 0)


alpha = PAPER_ALPHAS["alpha3"]
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
       title="Theorem 1: the DP threshold converges to a_opt (alpha3, tc = 0.01)")
ax.legend()
fig.tight_layout()

# %% [markdown]
# Convergence is guaranteed for every $\gamma < 1$, but the figure shows how slow it can be. The phantom records of
# the empty counts (section 3) number about $M/\epsilon_2 = M n^{\gamma}$, and they must be small against the margin
# $(t_c - p_{opt})\,n \approx 0.008\,n$: for $\gamma = 0.5$ that happens around $n = 10^6$; for $\gamma = 0.8$ it would
# take $n \approx 10^{13}$. In practice the threshold selection needs $n\epsilon_2$ in the thousands.

# %% [markdown]
# ## 6. Privacy audit of `release` (Theorem 2)
#
# An audit runs the mechanism many times on two neighbouring data sets and bounds from below, with confidence
# 95%, how far apart the two output laws are (`dplit.mechanisms.audit_epsilon`, on scalar projections of the
# output). A correct mechanism must give lower bounds at or below its budget; a broken one must be caught.
#
# **Neighbours.** $n - 1$ records at the centre of the simplex plus one record that moves. For the counts, it moves
# from a corner $(1 - (d-1)a_1/2, a_1/2, \ldots, a_1/2)$ (censored at every candidate) to the centre, changing count
# cell. For the statistic, it moves from half the coordinates to the other half, the largest move of section 1
# (opposite corners for $d = 2$; a corner to the centre of the opposite face for $d = 3$).
#
# **Projections.** The best scalar summary is the log-likelihood ratio of the output itself. For the counts,
# $T_G = \sum_m (|s_{G,m} - s'_m| - |s_{G,m} - s_m|)$ with the two data sets' true counts ($T_G \epsilon_2/2$ is the
# privacy loss, up to the clamp at $0$). For the Laplace part, *given the released* $a$ the noise is independent of
# $\mathbf s_G$, so we audit the releases that selected the most frequent threshold with
# $T_L = \sum_j (|y_j - \mu'_j| - |y_j - \mu_j|)$, $\mu = S_0(\mathbf D, a)$, $\mu' = S_0(\mathbf D', a)$. Both are functions of the
# published output only (post-processing), so their laws differ by at most the part's budget.
#
# The broken mechanism is `release` called with $2\epsilon_1$ while claiming $\epsilon_1$: half the Laplace scale.

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

# %% [markdown]
# Check: the two data sets differ in record 0 only, both are compositions, and the corner record of
# the cell move sits below $a$ in all but one component.

# %%
X_n, X_n_prime = neighbouring_datasets(10, 3, 0.01)
assert np.array_equal(X_n[1:], X_n_prime[1:]) and not np.array_equal(X_n[0], X_n_prime[0])
assert np.allclose(X_n.sum(axis=1), 1) and np.allclose(X_n_prime.sum(axis=1), 1)
assert np.sum(X_n[0] < 0.01) == 2

# %% [markdown]
# The audit runs the release many times on the two data sets, with the threshold the rule picks most
# often held fixed for the Laplace part, and bounds each part's epsilon.

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
    cands = _check_candidates(candidates)
    counts = {0: _counts(X, cands), 1: _counts(X_prime, cands)}
    out = {0: ([], [], []), 1: ([], [], [])}
    for side, data in ((0, X), (1, X_prime)):
        for _ in range(n_runs):
            r = release_fn(data, eps1, eps2, cands, tc, rng=rng, secure=False)
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


# %%
AUDIT_CANDS, AUDIT_TC, N_REC = (1e-3, 1e-2, 0.1), 0.05, 100
a_low = min(AUDIT_CANDS)  # corner entries a_1 / 2: censored at every candidate


def half_scale(X_, e1, e2, c, t, **kw):
    """A broken release: claims eps1 = e1 but spends 2 e1 (half the Laplace scale)."""
    return release(X_, 2 * e1, e2, c, t, **kw)


audits = {}
for d in (2, 3):
    X_s, X_s_prime = neighbouring_datasets(N_REC, d, a_low, move="statistic")
    X_c, X_c_prime = neighbouring_datasets(N_REC, d, a_low, move="cell")
    audits[f"d={d}, statistic move"] = audit_release(X_s, X_s_prime, 1.0, 1.0, AUDIT_CANDS, AUDIT_TC, n_runs=n_audit,
                                                     rng=rng)
    audits[f"d={d}, cell move"] = audit_release(X_c, X_c_prime, 1.0, 1.0, AUDIT_CANDS, AUDIT_TC, n_runs=n_audit, rng=rng)
    audits[f"d={d}, statistic, HALF scale"] = audit_release(X_s, X_s_prime, 1.0, 1.0, AUDIT_CANDS, AUDIT_TC,
                                                            n_runs=n_audit, rng=rng, release_fn=half_scale)
for name, res in audits.items():
    print(f"{name:28s} a = {res['a']:g}: Laplace part {res['laplace'].eps_lower:.3f} (claim eps1 = 1), "
          f"counts {res['geometric'].eps_lower:.3f} (claim eps2 = 1)")
for name, res in audits.items():
    assert res["geometric"].eps_lower <= 1.0, name
    if "HALF" not in name:
        assert res["laplace"].eps_lower <= 1.0, name
assert audits["d=2, statistic move"]["laplace"].eps_lower > 0.5  # the audit has power ...
assert audits["d=2, cell move"]["geometric"].eps_lower > 0.5  # ... on both parts
assert audits["d=2, statistic, HALF scale"]["laplace"].eps_lower > 1.0  # and catches the broken release
assert audits["d=3, statistic, HALF scale"]["laplace"].eps_lower > 1.0

# %% [markdown]
# The audit of the Laplace part comes close to $\epsilon_1$ for $d = 2$, where the move between opposite corners uses
# the whole bound at the selected $a = 0.1$, and stays lower for $d = 3$ (the move uses 80% of the bound at $a = 0.1$:
# the additive $2\log 2$ of section 1 matters when $a$ is large). The release with half the scale spends about
# $2\epsilon_1$ and $1.6\epsilon_1$ and is caught in both. The count audit approaches $\epsilon_2$ when the record changes
# count cell, the sensitivity of 2 the geometric mechanism is calibrated to; the statistic move keeps the record in
# its cell and the counts show nothing.

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
    ax.set(xlabel="selected a", ylabel="probability", ylim=(0, 1),
           title=f"n = {int(n)}, eps2 = {eps2:g}, tc = {tc:g} (true p_m crosses tc at a = 1e-2)")
    fig.tight_layout()
    return dict(zip(cands_sorted.tolist(), probs.tolist()))


# %%
# NBVAL_IGNORE_OUTPUT
probs = explore_selection()
assert np.isclose(sum(probs.values()), 1.0)

# %%
# NBVAL_IGNORE_OUTPUT
from ipywidgets import FloatLogSlider, IntSlider, interactive

interactive(explore_selection, n=IntSlider(value=1000, min=100, max=20000, step=100),
            eps2=FloatLogSlider(value=0.25, base=10, min=-3, max=1, step=0.1),
            tc=FloatLogSlider(value=0.01, base=10, min=-3, max=-0.5, step=0.1), n_reps=(500, 5000, 500), seed=(0, 9))

# %% [markdown]
# ## The command line
#
# A data curator does not need Python to publish: `dplit release data.csv --eps1 0.75 --eps2 0.25 --split 0.25
# --out release.json` reads one composition per row (or raw non-negative amounts with `--close`), calls `release`,
# writes the JSON and prints the summary above, with a warning when the rule fell back to $a_1$ with a noisy
# censoring rate far above $t_c$ (S4's caution). `Release.load("release.json")` reads the file back (and
# `release.save(path)` writes one) for every inference method of the later notebooks; `dplit analyse release.json
# --method dpmcmc --out posterior.nc` is the analyst's side. A CSV header names the components; the names travel
# in the release (`names`) into the analyses' coordinates.
#
# ## When to use this
#
# Use `release` with the paper's defaults ($t_c = 0.01$, candidates $10^{-6}, \ldots, 10^{-1}$, $\epsilon_2$ a quarter of the
# budget) unless you know the data: it spends a small part of the budget to avoid both extremes of the trade-off of
# section 4. Keep `secure=True` for anything published. Split ($n_1 > 0$) only when a Bayesian analysis will build
# its prior from $\mathbf D_1$ (notebooks 06-07): the split costs no extra budget, but each part is noisier than the whole.
# If the summary warns that $a = a_1$ with a high noisy rate, the censored statistic may be badly biased: add
# smaller candidates, or accept and report the bias (notebook `03_censoring` quantifies it).
