# %% [markdown]
# # A privacy audit: a lower confidence bound on the epsilon a mechanism spends
#
# * **For:** checking that a mechanism's code spends no more than the epsilon it claims, by running it on two neighbouring data sets.
# * **You need:** many independent scalar outputs of the mechanism on each of two neighbours $D, D'$.
# * **You get:** `dplit.audit.audit_epsilon`: a lower bound on the epsilon spent at a stated confidence (an `AuditResult`), which is a proof of a privacy bug when it exceeds the claim; `dplit.mechanisms` re-exports it.

# %%
#| default_exp audit

# %% [markdown]
# ## Parameters
#
# The checks here are small and fixed; every random draw comes from a generator seeded here. The audit on worst-case
# neighbours of the mechanisms of notebook `02_mechanisms` is in notebook `70_mechanisms_checks`.

# %%
import numpy as np
from scipy import stats

SEED = 20261123
rng = np.random.default_rng(SEED)

# %%
#| export
from dataclasses import dataclass, field

import numpy as np
from scipy import special

from dplit import _validate as check

# %% [markdown]
# ## A privacy audit: a lower bound on the epsilon actually spent
#
# A proof of privacy is about the *mathematical* mechanism; code can still spend more (a sensitivity
# computed wrongly, noise scaled by $\epsilon$ instead of $1/\epsilon$, a forgotten factor 2).
# The audit runs the mechanism many times on two neighbouring data sets $D, D'$, giving independent
# scalar outputs $y^a_1, \dots, y^a_{n_a}$ and $y^b_1, \dots, y^b_{n_b}$, and looks for an event $E$ with
# $P(M(D) \in E) > e^{\epsilon} P(M(D') \in E)$: any event gives
#
# $$\epsilon_{\text{spent}} \;\ge\; \log \frac{P(M(D) \in E)}{P(M(D') \in E)}.$$
#
# A *high-confidence* lower bound needs two precautions (in the spirit of DP-Sniper, Bichsel et al. 2021):
#
# 1. **Choose the events on separate data.** Each sample is split in half. On the first halves we scan
#    tail events $E = \{y \ge c\}$ and $E = \{y \le c\}$ with thresholds $c$ at a grid of quantiles of the pooled
#    first halves, in both directions ($D$ over $D'$ and $D'$ over $D$), and keep the `n_events` events whose
#    first-half lower bounds are largest.
# 2. **Bound the probabilities on the second halves.** For each kept event, a one-sided Clopper-Pearson
#    bound from below on the numerator probability and from above on the denominator probability, each at
#    level $\alpha / (2 m)$ with $\alpha = 1 - $ `confidence` and $m$ the number of kept events (Bonferroni).
#    With probability at least `confidence` all $2m$ bounds hold at once, and then every
#    $\log(\underline{p}_{num} / \overline{p}_{den})$ is below the true epsilon; we report the largest
#    (0 when none is positive).
#
# Tail events are the right ones for the mechanisms of dplit: for additive noise with a log-concave law
# (Laplace, geometric, Gaussian, discrete Gaussian) the likelihood ratio is monotone in $y$, so the
# most revealing events are tails; for Laplace and geometric noise every tail beyond the two centres
# attains the full $\epsilon$. **Discrete outputs** (geometric counts, randomized response) need nothing
# special: thresholds are then attained values, and $\{y \ge c\}$, $\{y \le c\}$ are counted with the
# ties included (sorted samples and `searchsorted`). A vector output must be projected to a scalar
# first (one coordinate, or a sum), which can only lower the bound (post-processing).
#
# What it proves and what it does not: a bound above the claimed $\epsilon$ proves (at the stated
# confidence) a privacy bug; a bound below it is evidence, not a proof, of privacy.

# %%
#| export
@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit_epsilon` (a lower confidence bound on the epsilon spent).

    Attributes
    ----------
    eps_lower : float
        Lower confidence bound on the epsilon spent (0 when no event shows a positive log ratio).
    eps_point : float
        Plug-in log ratio of the reported event on the second halves (not a bound).
    confidence : float
        Joint confidence level of the bound.
    event : str
        The reported event, e.g. ``"y >= 1.3"``, and the direction ``"a/b"`` or ``"b/a"``.
    threshold : float
        Threshold ``c`` of the reported event.
    n_a, n_b : int
        Sample sizes.
    n_events : int
        Number of events bounded on the second halves (the Bonferroni factor).
    """

    eps_lower: float
    eps_point: float
    confidence: float
    event: str
    threshold: float
    n_a: int
    n_b: int
    n_events: int = field(default=1)


def _clopper_pearson_lower(k, n, alpha):
    """One-sided lower Clopper-Pearson bound for a binomial proportion (vectorised)."""
    k = np.asarray(k, dtype=float)
    with np.errstate(invalid="ignore"):
        low = special.betaincinv(k, n - k + 1.0, alpha)
    return np.where(k > 0, low, 0.0)


def _clopper_pearson_upper(k, n, alpha):
    """One-sided upper Clopper-Pearson bound for a binomial proportion (vectorised)."""
    k = np.asarray(k, dtype=float)
    with np.errstate(invalid="ignore"):
        up = special.betaincinv(k + 1.0, n - k, 1.0 - alpha)
    return np.where(k < n, up, 1.0)

# %% [markdown]
# Check: the one-sided bounds are the two ends of SciPy's exact (Clopper-Pearson) interval, and take
# the values 0 and 1 at the edges.

# %%
ci = stats.binomtest(7, 50).proportion_ci(confidence_level=0.9, method="exact")
assert np.isclose(_clopper_pearson_lower(7, 50, 0.05), ci.low)
assert np.isclose(_clopper_pearson_upper(7, 50, 0.05), ci.high)
assert _clopper_pearson_lower(0, 50, 0.05) == 0.0 and _clopper_pearson_upper(50, 50, 0.05) == 1.0

# %% [markdown]
# The tail events and their bounds, for every threshold at once: counts come from sorted samples
# (ties included on both sides), and each threshold gives four (event, direction) pairs.

# %%
#| export
def _tail_counts(sorted_y, c):
    """Counts of {y >= c} and {y <= c} in a sorted sample, for each threshold in c."""
    n = sorted_y.size
    ge = n - np.searchsorted(sorted_y, c, side="left")
    le = np.searchsorted(sorted_y, c, side="right")
    return ge, le


def _event_bounds(ya, yb, c, alpha):
    """Log lower bounds of the ratio for the 4 (event, direction) pairs at each threshold."""
    ge_a, le_a = _tail_counts(ya, c)
    ge_b, le_b = _tail_counts(yb, c)
    na, nb = ya.size, yb.size
    with np.errstate(divide="ignore", invalid="ignore"):
        # rows: (y>=c, a/b), (y<=c, a/b), (y>=c, b/a), (y<=c, b/a)
        num = np.stack([_clopper_pearson_lower(ge_a, na, alpha), _clopper_pearson_lower(le_a, na, alpha),
                        _clopper_pearson_lower(ge_b, nb, alpha), _clopper_pearson_lower(le_b, nb, alpha)])
        den = np.stack([_clopper_pearson_upper(ge_b, nb, alpha), _clopper_pearson_upper(le_b, nb, alpha),
                        _clopper_pearson_upper(ge_a, na, alpha), _clopper_pearson_upper(le_a, na, alpha)])
        bound = np.log(num) - np.log(den)
        pa = np.stack([ge_a / na, le_a / na, ge_b / nb, le_b / nb])
        pb = np.stack([ge_b / nb, le_b / nb, ge_a / na, le_a / na])
        point = np.log(pa) - np.log(pb)
    return bound, point


_EVENT_NAMES = [("y >= {c:.6g}", "a/b"), ("y <= {c:.6g}", "a/b"), ("y >= {c:.6g}", "b/a"),
                ("y <= {c:.6g}", "b/a")]

# %% [markdown]
# Check: ties are counted on both sides; two copies of one sample give log ratios of 0 (the plug-in)
# and bounds below 0 (each bound is conservative).

# %%
ge, le = _tail_counts(np.array([1.0, 2.0, 2.0, 3.0]), np.array([2.0, 0.5]))
assert ge.tolist() == [3, 4] and le.tolist() == [3, 0]
y_same = np.sort(rng.laplace(size=2000))
bound, point = _event_bounds(y_same, y_same, np.array([0.0]), 0.05)
assert bound.shape == (4, 1) and np.all(bound < 0) and np.allclose(point, 0.0)

# %% [markdown]
# The audit itself: split, select on the first halves, confirm on the second.

# %%
#| export
def _check_sample(x, name):
    """Return a 1-D finite float sample with at least 20 values, or raise."""
    arr = check.finite_array(x, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D (project a vector output to a scalar first), got shape {arr.shape}")
    if arr.size < 20:
        raise ValueError(f"{name} must hold at least 20 outputs, got {arr.size}")
    return arr


def audit_epsilon(sample_a, sample_b, *, confidence=0.95, n_thresholds=200, n_events=4, rng=0):
    """Lower confidence bound on the epsilon a mechanism spends, from outputs on two neighbours.

    Half of each sample selects tail events ``{y >= c}`` / ``{y <= c}`` (both directions); the other
    half bounds their probabilities with Clopper-Pearson intervals (Bonferroni over the ``n_events``
    kept events), and the largest ``log(lower P_num(E) / upper P_den(E))`` is reported.

    Parameters
    ----------
    sample_a, sample_b : array_like, 1-D
        Independent scalar outputs of the mechanism on neighbouring data sets ``D`` and ``D'``
        (continuous or discrete; at least 20 each).
    confidence : float, default 0.95
        Joint confidence level in (0, 1): ``P(eps_lower <= true epsilon) >= confidence``.
    n_thresholds : int, default 200
        Number of candidate thresholds (quantiles of the pooled first halves).
    n_events : int, default 4
        Number of events kept for the confirmatory second half.
    rng : None, int or numpy.random.Generator, default 0
        Randomness of the split (the samples are shuffled before halving).

    Returns
    -------
    AuditResult
        With ``eps_lower`` (the bound), ``eps_point``, the event and the sizes.

    Examples
    --------
    >>> from dplit.mechanisms import laplace_mechanism
    >>> a = laplace_mechanism(np.zeros(100_000), 1.0, 1.0, rng=1, secure=False)
    >>> b = laplace_mechanism(np.ones(100_000), 1.0, 1.0, rng=2, secure=False)
    >>> audit_epsilon(a, b).eps_lower <= 1.0
    True
    """
    a = _check_sample(sample_a, "sample_a")
    b = _check_sample(sample_b, "sample_b")
    confidence = check.level(confidence, "confidence")
    n_thresholds = check.count(n_thresholds, "n_thresholds")
    n_events = check.count(n_events, "n_events")
    alpha = 1.0 - confidence
    rng = check.rng(rng)
    a, b = rng.permutation(a), rng.permutation(b)
    a1, a2 = np.sort(a[: a.size // 2]), np.sort(a[a.size // 2:])
    b1, b2 = np.sort(b[: b.size // 2]), np.sort(b[b.size // 2:])
    # candidate thresholds: quantiles of the pooled first halves, dense in the tails
    u = np.linspace(-4.0, 4.0, n_thresholds)
    levels = special.expit(u * np.log(max(a1.size, b1.size)) / 4.0)
    c = np.unique(np.quantile(np.concatenate([a1, b1]), levels, method="inverted_cdf"))
    m = int(min(n_events, 4 * c.size))
    # selection on the first halves (any rule is valid: the second halves are untouched)
    sel_bound, _ = _event_bounds(a1, b1, c, alpha / (2 * m))
    order = np.argsort(sel_bound, axis=None)[::-1][:m]
    rows, cols = np.unravel_index(order, sel_bound.shape)
    # confirmation on the second halves
    bound, point = _event_bounds(a2, b2, c[cols], alpha / (2 * m))
    pick = np.arange(m)
    best = int(np.argmax(bound[rows, pick]))
    lower = float(bound[rows[best], best])
    name, direction = _EVENT_NAMES[rows[best]]
    return AuditResult(
        eps_lower=max(lower, 0.0) if np.isfinite(lower) else 0.0,
        eps_point=float(point[rows[best], best]),
        confidence=float(confidence),
        event=name.format(c=c[cols[best]]) + f" ({direction})",
        threshold=float(c[cols[best]]),
        n_a=int(a.size),
        n_b=int(b.size),
        n_events=m,
    )

# %% [markdown]
# Notebook `70_mechanisms_checks` runs the audit on worst-case neighbours: the correct Laplace and geometric mechanisms stay
# below $\epsilon$, the same mechanisms with half the noise are caught, and the audit's bound against the claimed
# $\epsilon$ is drawn over a range of budgets.


# %% [markdown]
# ## When to use this
#
# Testing a release: run it many times on worst-case neighbours, project each output to a scalar, and call
# `audit_epsilon`. A bound above the claimed $\epsilon$ is a bug (at the stated confidence); a bound at or just under
# it shows that the audit had the power to see the whole budget. It cannot prove privacy, and it only looks at tail
# events, so for mechanisms whose likelihood ratio is not monotone pass a cleverer scalar projection.
