# %% [markdown]
# # The Release record: what a curator publishes, and how it checks itself
#
# * **For:** the record of Algorithm 1 of Guo et al. (Sec. 3.3) that every inference method reads: its fields, the formulas it is checked against (the Laplace scale, the noisy censoring rates, the threshold rule), which numbers it can hold, and JSON in and out.
# * **You need:** a release to read (`Release.load`, `Release.from_json`), a statistic released elsewhere (`Release.from_statistic`), or data for `release` (notebook 15).
# * **You get:** an immutable, validated `Release` that refuses an impossible or tampered field by name, with its budget, its parts and a summary.
#
# Reading order: after notebook 15 (the release itself: why censor, how the threshold is chosen, Algorithm 1).
# Everything here is importable from `dplit.release`.

# %%
#| default_exp release_record
#| internal check_candidates censored_sensitivity check_names check_warnings
#| internal joint_reach plausible_distance

# %% [markdown]
# ## Parameters

# %%
import json
import math
import tempfile
from pathlib import Path

import numpy as np
from IPython.display import Markdown, display

from dplit.dirichlet import censored_stat
from dplit.mechanisms import geometric_reach, laplace_reach

SEED = 20261123
rng = np.random.default_rng(SEED)
CANDIDATES = (0.1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6)  # as listed in Sec. 5.1 (any order is accepted)
TC = 0.01

# %% [markdown]
# ## 1. The formulas a release is checked against
#
# Notebook 15 derives them: the sensitivity of the censored statistic and the Laplace scale
# $b = -d\log(a)/(n\epsilon_1)$ (section 1), and the noisy censoring rates $\hat p_{G,m}$ and the threshold rule
# (section 2). A `Release` recomputes each of them from its other fields when it is built, so they live here,
# below `release`; notebook 15 checks them.

# %%
#| export
import json
import math
from dataclasses import dataclass

import numpy as np

from dplit import _validate as check
from dplit._validate import count as _count
from dplit.accounting import PrivacyBudget
from dplit.censoring import COUNT_SENSITIVITY, zero_advice
from dplit.mechanisms import FALSE_REFUSAL, check_plausible, geometric_reach, laplace_reach

FORMAT = "dplit.release/1"



def check_candidates(candidates):
    """Return the candidate thresholds sorted increasingly, or raise (in (0, 1), distinct, >= 1)."""
    arr = check.unit_interval_array(candidates, "candidates")
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"candidates must be a non-empty 1-D sequence of thresholds, got shape {arr.shape}")
    out = np.sort(arr)
    repeated = out[1:][np.diff(out) == 0]
    if repeated.size:
        raise ValueError(f"candidates must be distinct; {repeated[0]!r} is repeated")
    return out

# %%
#| export
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
#| export
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
# ## 2. Which numbers a release can hold (plausibility)
#
# Without noise the published parts lie in a known set:
#
#
# - every censored log lies in $[\log a, 0]$, so each mean $S_0(\mathbf D, a)_j$ does too;
# - Jensen's inequality, $e^{S_0(\mathbf D, a)_j} \le n^{-1}\sum_i \tilde x_{ij}$, summed over $j$, and
#   $\sum_j \tilde x_{ij} = \sum_j \max\{x_{ij}, a\} \le 1 + (d-1)a$ (at most $d - 1$ entries of a record are below
#   $a < 1/d$; all $d$ give $da$, smaller) bound the coordinates jointly: $\sum_j e^{S_0(\mathbf D, a)_j} \le 1 + (d-1)a$,
#   with equality when every record is the same corner (the statistic $(0, \log a, \ldots, \log a)$). Without
#   censoring this is the condition $\sum_j e^{S_0} < 1$ under which the MLE exists (notebook `12_dirichlet`);
# - the counts $s_m \ge 0$ sum to $n$.
#
# The noise widens these sets by its reach (notebook `02_mechanisms`, section "How far can the noise reach?"). A
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
# (In the release these coordinate-wise checks use $p/2$, so $k = \log(2D/p)$ and the geometric reach is taken at
# $p/2$: the other half goes to the joint check below.) For $d = 3$ unsplit with a selection of $M = 6$ candidates,
# $D = 10$ and $k = 23.7$. A value outside is refused with a
# `ValueError` naming the field, the value and the range. Research that needs an impossible release (a planted
# one, say) passes `check=False` to the constructor, `from_statistic`, `from_dict`, `from_json` or `load`; the
# release then says so in `checked`, which the analyses copy into their results' `attrs`.

# %%
#| export
_FIELDS = ("s_G", "p_hat_G", "a", "s_L", "s_L1", "n", "n1", "n2", "d", "eps1", "eps2", "candidates", "tc",
           "scale", "scale1")
_OPTIONAL = ("names", "warnings")  # written only when set, so files without them stay valid


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


def check_names(names, d):
    """Component names: None, or d distinct non-empty strings (returned as a tuple; the rule of ``_validate``)."""
    return check.names(names, d)


def check_warnings(warnings):
    """The curator's warnings: None or a sequence of non-empty strings (returned as a tuple, repeats dropped)."""
    if warnings is None:
        return ()
    if isinstance(warnings, str) or not all(isinstance(v, str) and v.strip() for v in warnings):
        raise TypeError(f"warnings must be a sequence of non-empty strings, got {warnings!r}")
    return tuple(dict.fromkeys(" ".join(v.split()) for v in warnings))

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
assert check_names(None, 2) is None and check_names([" x", "y"], 2) == ("x", "y")
for bad, exc in [(["x"], ValueError), (["x", "x"], ValueError), ("xy", TypeError), (["x", ""], TypeError)]:
    try:
        check_names(bad, 2)
    except exc as err:
        assert "names" in str(err)
    else:
        raise AssertionError(bad)

# %% [markdown]
# **A joint bound.** The checks above look at one coordinate at a time, each widened by $k$ scales. A statistic
# tampered a little in every coordinate (each $10$ scales out of $[\log a, 0]$, say) passes them all, although no
# genuine release is that far from every possible statistic at once. The noise bounds the whole vector too: with
# $\mathbf S_L = \mathbf S_0 + b\,\boldsymbol\varepsilon$, $\varepsilon_j$ independent standard Laplace,
#
# $$\|\mathbf S_L - \mathbf S_0\|_1 = b\sum_{j=1}^d |\varepsilon_j|, \qquad \sum_{j=1}^d |\varepsilon_j| \sim \mathrm{Gamma}(d, 1),$$
#
# since each $|\varepsilon_j|$ is a standard exponential. Let $q$ be the upper $p'$ quantile of $\mathrm{Gamma}(d, 1)$,
# $P(\mathrm{Gamma}(d,1) > q) = e^{-q}\sum_{i<d} q^i/i! = p'$. Because $\mathbf S_0$ lies in $\mathrm{Range}(S_0)$,
# the $\ell_1$ distance of $\mathbf S_L$ to that range is at most $\|\mathbf S_L - \mathbf S_0\|_1$, so
# $P\{\mathrm{dist}_1(\mathbf S_L, \mathrm{Range}\,S_0) > q b\} \le p'$ whatever the data. The range itself has no
# simple description, but any set $B \supseteq \mathrm{Range}(S_0)$ is closer, and two lower bounds of
# $\mathrm{dist}_1(\mathbf s, B)$ for the set $B$ of section 2 (the box $[\log a, 0]^d$ cut by the Jensen bound) are
# exact and cheap:
#
# - the $\ell_1$ distance to the box, $\sum_j \big(\max\{\log a - s_j, 0\} + \max\{s_j, 0\}\big)$ (it separates by
#   coordinate);
# - the excess $\max\{\log\sum_j e^{s_j} - \log(1 + (d-1)a), 0\}$, because $\log\sum_j e^{s_j}$ moves by at most
#   $\max_j|\Delta s_j| \le \|\Delta \mathbf s\|_1$.
#
# Their maximum $\delta(\mathbf s) \le \mathrm{dist}_1(\mathbf s, B) \le \mathrm{dist}_1(\mathbf s, \mathrm{Range}\,S_0)$,
# so refusing when $\delta(\mathbf S_L) > q b$ refuses a genuine release with probability at most $p'$. A release spends
# $p/2$ on the coordinate checks and $p/2$ on the joint check, shared by its one or two statistics ($p' = p/4$ each
# when split): in all, at most $p = 10^{-9}$. For $d = 3$ unsplit, $q = 27.4$ scales in $\ell_1$ at $p' = p/2$, against
# $k = 22.5$ for one coordinate: the joint check is looser for a single coordinate and tighter for several, so the
# two are complementary (the check below measures both).

# %%
#| export
def joint_reach(d, p):
    """The upper ``p`` quantile ``q`` of Gamma(d, 1): ``sum_j |Laplace(0, 1)_j|`` over d coordinates exceeds it w.p. ``p``.

    ``P(Gamma(d, 1) > q) = exp(-q) sum_{i<d} q^i / i!`` (d exponentials); SciPy's inverse survival function.
    """
    d = check.count(d, "d", 1)
    p = check.unit_interval(p, "p")
    # imported here, not with the module: only a release's plausibility check needs SciPy's statistics
    from scipy.stats import gamma

    return float(gamma.isf(p, d))


def plausible_distance(s, a):
    """A lower bound of the l1 distance of a statistic ``s`` to every statistic a data set gives at threshold ``a``.

    The larger of the l1 distance to the box ``[log a, 0]^d`` and the excess of ``log sum exp(s)`` over the Jensen bound
    ``log(1 + (d - 1) a)`` (both are at most the distance to the range of ``S_0``; derivation above).
    """
    s = np.asarray(s, dtype=float)
    box = float(np.sum(np.maximum(math.log(a) - s, 0.0) + np.maximum(s, 0.0)))
    jensen = float(np.logaddexp.reduce(s)) - math.log1p((s.size - 1) * a)
    return max(box, jensen, 0.0)


def _plausible_joint(s, scale, a, q, name):
    """Refuse a statistic farther than ``q`` noise scales (in l1) from every statistic a data set can give."""
    dist = plausible_distance(s, a)
    if dist > q * scale:
        raise ValueError(f"{name} is impossible for this release: it lies at least {dist / scale:.1f} noise scales "
                         f"(l1 distance {dist:.4g}, scale {scale:.4g}) from every statistic a data set can give, and "
                         f"Laplace noise on {s.size} coordinates reaches beyond {q:.1f} scales in l1 (a Gamma({s.size}, "
                         f"1) tail) with probability < the release's share of 1e-9 (a tampered or mistyped value? "
                         f"check=False skips this check, for research)")

# %% [markdown]
# Check: the quantile solves its equation; the bound's level at a worst-case statistic (a corner of the range, where
# three outward directions are open) is at most $p'$ by simulation, here at $p' = 0.05$ to see it; and its power: a
# statistic moved out by 10 scales in every coordinate passes the coordinate-wise check of section 2 and is refused
# by the joint one.

# %%
from scipy import stats as _st

for d_chk in (1, 2, 3, 8, 40):
    for p_chk in (0.05, 1e-9):
        assert math.isclose(_st.gamma.sf(joint_reach(d_chk, p_chk), d_chk), p_chk, rel_tol=1e-6)
q_level, a_chk, b_chk, d_chk = joint_reach(3, 0.05), 1e-3, 0.2, 3
corner = np.array([0.0, math.log(a_chk), math.log(a_chk)])            # every record at the corner (1, 0, 0)
eps_chk = np.random.default_rng(5).laplace(size=(20_000, d_chk))
dist_chk = np.array([plausible_distance(corner + b_chk * e, a_chk) for e in eps_chk])
level = float(np.mean(dist_chk > q_level * b_chk))
assert level <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / len(eps_chk)), level
# the planted check: a "joint" bound at half the quantile would refuse genuine releases far too often at this corner
assert np.mean(np.sum(np.abs(eps_chk), axis=1) > q_level) > 0.04          # the Gamma(3, 1) tail itself is 0.05
k_chk, q_chk = laplace_reach(d_chk, 1e-9 / 2), joint_reach(d_chk, 1e-9 / 2)
moved = np.full(d_chk, 10.0 * b_chk)                                      # 10 scales above 0 in every coordinate
_plausible_statistic(moved, b_chk, a_chk, k_chk, "s_L")                   # the coordinate-wise check lets it pass
try:
    _plausible_joint(moved, b_chk, a_chk, q_chk, "s_L")
except ValueError as err:
    assert "s_L" in str(err) and "noise scales" in str(err), err
else:
    raise AssertionError("the joint check missed a statistic 30 scales (l1) out of the range")
_plausible_joint(np.array([0.0, math.log(a_chk), math.log(a_chk)]) + 5 * b_chk, b_chk, a_chk, q_chk, "s_L")
print(f"d = 3: k = {k_chk:.1f} scales per coordinate, q = {q_chk:.1f} scales in l1; level at the corner with "
      f"p' = 0.05: {level:.4f}")

# %% [markdown]
# ## 3. The record
#
# **What is published.** The `Release` holds exactly what Alg. 1 returns plus the public design: $\mathbf s_G$,
# $\hat p_G$, $a$, $S_L$ (of $\mathbf D$, or of $\mathbf D_2$ when split), $S_L(\mathbf D_1)$, $n, n_1, n_2, d$, $\epsilon_1, \epsilon_2$,
# the candidates, $t_c$ and the two scales. Nothing confidential: not the true counts, not the split.
# The record validates itself (types, ranges, and consistency: $\hat p_G$ must follow from $\mathbf s_G$,
# $a$ from the rule, the scales from $d, a, n_l, \epsilon_1$), so a hand-edited or truncated JSON file is refused
# with a message that names the field. A release made elsewhere (or with a threshold fixed in advance,
# $\epsilon_2 = 0$) is wrapped with `Release.from_statistic(s_L, n, a, eps1, ...)`; then `s_G`, `p_hat_G`,
# `candidates` and `tc` are `None`.

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
        if self.warnings:
            out["warnings"] = list(self.warnings)
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
        """Write the release as JSON to ``path``; an existing file is kept unless ``overwrite=True``.

        dplit's one rule for files (README, "Files dplit writes"): the file is written whole or not at all (a
        temporary file in the same folder, renamed into place; removed on any failure, leaving ``path`` as it
        was), and without ``overwrite`` a file that exists, even one created meanwhile, is kept
        (``FileExistsError`` naming the path and ``overwrite=True``).
        """
        from dplit._files import atomic_write

        atomic_write(path, self.to_json() + "\n", overwrite=overwrite)
        return path

    @classmethod
    def from_statistic(cls, s_L, n, a, eps1, *, s_L1=None, n1=0, eps2=0.0, s_G=None, candidates=None, tc=None,
                       names=None, warnings=None, check=True):
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
        warnings : sequence of str, optional
            Warnings to publish with the release (see :attr:`Release.warnings`).
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
            candidates = check_candidates(candidates)
        if s_G is not None:
            p_hat = noisy_censoring_rates(np.asarray(s_G))
        return cls(s_G=s_G, p_hat_G=p_hat, a=a, s_L=s_L, s_L1=s_L1, n=n, n1=n1, n2=n2, d=d, eps1=eps1,
                   eps2=eps2, candidates=candidates, tc=tc, scale=laplace_scale(d, a, n2, eps1),
                   scale1=laplace_scale(d, a, n1, eps1) if n1 > 0 else None, names=names,
                   warnings=warnings, checked=check)

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
        set_(self, "names", check_names(self.names, d))
        set_(self, "warnings", check_warnings(self.warnings))
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
        p = FALSE_REFUSAL / 2                   # half for the coordinates, half for the joint bound
        if selected:                            # first: a follows from s_G
            t = math.exp(-self.eps2 / COUNT_SENSITIVITY)
            _plausible_counts(self.s_G, self.n, geometric_reach(t, n_coords, p) if t < 1 else math.inf)
        k = laplace_reach(n_coords, p)
        q = joint_reach(self.d, p / (2 if self.split else 1))
        for s, scale, name in [(self.s_L, self.scale, "s_L")] + ([(self.s_L1, self.scale1, "s_L1")] if self.split else []):
            _plausible_statistic(s, scale, self.a, k, name)
            _plausible_joint(s, scale, self.a, q, name)

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
        s_G = check.integer_values(s_G, "s_G")         # whole numbers within int64 (1e30 would wrap round)
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
    warnings : tuple of str
        What the curator was warned of when releasing (a threshold that fell back to ``a_1``, a release that is
        mostly noise, ...): written to the JSON, read back, copied by every analysis into its result's
        ``attrs["release_warnings"]``. Free text, not checked against the other fields (a file without it
        loads with none).
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
    warnings: tuple[str, ...] = ()
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
        are censored even at the smallest candidate, and inferences carry censoring bias. A rate that high
        is most often exact zeros, which the Dirichlet model does not describe and which smaller candidates
        make worse; the text is the advice of :func:`dplit.censoring.zero_advice` (notebook 13, section 5),
        from the release's published fields only.
        """
        factor = check.positive(factor, "factor")
        if self.p_hat_G is None or self.a != self.candidates[0]:
            return None
        advice = zero_advice(self.p_hat_G, self.candidates, self.a, self.tc, s_L=self.s_L, n=self.n,
                             names=self.names, factor=factor, eps2=self.eps2)
        return " ".join(advice) or None

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
        lines += ["WARNING: " + w for w in self.all_warnings()]
        return "\n".join(lines)

    def all_warnings(self):
        """The release's :attr:`warnings`, and :meth:`caution` when a file written without it calls for it."""
        extra = self.caution()
        return self.warnings + ((extra,) if extra and extra not in self.warnings else ())

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
# Warnings travel in the JSON and are read back; a file without them (older) loads with none; they are free text,
# so editing them does not invalidate the numbers; a warning that is not a string is refused.
r_warn = Release.from_statistic([-1.2, -1.0, -1.4], 500, 1e-3, 1.0, warnings=["mostly noise", "mostly noise"])
assert r_warn.warnings == ("mostly noise",) and '"warnings"' in r_warn.to_json()
assert Release.from_json(r_warn.to_json()).warnings == ("mostly noise",) and Release.from_json(r_warn.to_json()) == r_warn
assert "warnings" not in r_ext.to_dict() and Release.from_dict(r_ext.to_dict()).warnings == ()
assert "WARNING: mostly noise" in r_warn.summary()
for bad in ("mostly noise", [1.0], [""]):
    try:
        Release.from_dict(r_ext.to_dict() | {"warnings": bad})
    except TypeError as err:
        assert "warnings" in str(err)
    else:
        raise AssertionError(bad)
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
# ## When to use this

# %%
k_reach = laplace_reach(3 + len(CANDIDATES) + 1, 1e-9 / 2)
display(Markdown(f"""
* **Reading a release**: `Release.load(path)` (or `from_json`, `from_dict`) for a file a curator published; every
  inference method of notebooks 17-60 takes the `Release`. Read `summary()` and `caution()` before analysing: a
  threshold that fell back to $a_1$ with a high noisy rate means a badly biased statistic, most often from exact
  zeros in the data, which smaller candidates make worse (notebook 13, section 5).
* **Wrapping a statistic released elsewhere**: `Release.from_statistic(s_L, n, a, eps1, ...)`; the scales are
  computed, never typed in.
* **Plausibility**: a release whose numbers no genuine release could hold is refused. For $d = 3$ unsplit with
  {len(CANDIDATES)} candidates the check covers $D = {3 + len(CANDIDATES) + 1}$ coordinates at $k = \\log(D/p) =$
  {k_reach:.1f} Laplace scales ($p = 10^{{-9}}$). Pass `check=False` only for research that plants an impossible
  release; the release then says so in `checked`.
"""))
