# %% [markdown]
# # Privacy accounting: budgets, Rényi DP and zCDP
#
# A ledger for pure-DP budgets (sequential and parallel composition), Rényi DP and zCDP with their conversions to (epsilon, delta), and the exact epsilon of the discrete Gaussian mechanism.
#
# * **For:** keeping track of the budget over several releases, and converting Rényi DP or zCDP into an (epsilon, delta) statement.
# * **You need:** the mechanisms you ran, each with its budget or Rényi/zCDP parameters.
# * **You get:** a ledger of the budget spent and the (epsilon, delta) of the whole, including the exact epsilon of the discrete Gaussian.
#
# ## Parameters
#
# This notebook follows `02_mechanisms` (the noise it accounts for). Sizes come from the size
# switch; nothing here is random.

# %%
# %matplotlib inline
import numpy as np
import matplotlib.pyplot as plt

from dplit.config import size
from dplit.mechanisms import discrete_gaussian_logpmf, laplace_logpdf, two_sided_geometric_logpmf

# %% [markdown]
# ## What it gives: the budget of dapper's census release (dapper, Example 2)
#
# Before the derivation, the result, from the finished module `dplit.accounting`. dapper's Example 2 adds discrete
# Gaussian noise of scale $\sigma$ to counts and states its budget through zCDP: $\rho = \Delta^2/(2\sigma^2)$, converted
# to $(\epsilon, \delta)$ at $\delta = 10^{-10}$. The figure shows the $\epsilon$ that conversion gives (blue) against the
# exact $\epsilon$ of the discrete Gaussian (red), for dapper's sensitivity $\Delta = 2$ (solid) and for the corrected
# one, one record moving between two cells, $\Delta_2 = \sqrt 2$ (dashed). The dotted line is $2\log 3$, the budget of
# randomized response in Example 1, which dapper matched with $\sigma = 6.32$ (grey): the exact accounting spends less
# at every $\sigma$, and the corrected sensitivity less again.

# %%
# NBVAL_IGNORE_OUTPUT
from dplit.accounting import discrete_gaussian_epsilon as dg_epsilon, gaussian_zcdp_rho as zcdp_rho, zcdp_to_dp as to_dp

sigmas = np.linspace(2.0, 12.0, size(full=60, quick=12))
cases = [("$\\Delta = 2$ (dapper)", 2.0, [2], "-"), ("$\\Delta_2 = \\sqrt{2}$ (corrected)", np.sqrt(2), [1, 1], "--")]
eps_fig = {lab: (np.array([to_dp(zcdp_rho(s, l2), 1e-10) for s in sigmas]),
                 np.array([dg_epsilon(s, 1e-10, shift=shift) for s in sigmas])) for lab, l2, shift, _ in cases}
# dapper's own figure: sigma = 6.32 with Delta = 2 spends 2 log 3 by the standard conversion
print(f"sigma = 6.32, Delta = 2: standard {to_dp(zcdp_rho(6.32, 2.0), 1e-10):.4f}, 2 log 3 = {2 * np.log(3):.4f}, "
      f"exact {dg_epsilon(6.32, 1e-10, shift=[2]):.4f}")
assert abs(to_dp(zcdp_rho(6.32, 2.0), 1e-10) - 2 * np.log(3)) < 2e-3
assert all(np.all(ex < st) for st, ex in eps_fig.values())       # the exact epsilon is below the conversion

fig, ax = plt.subplots(figsize=(7, 2.8))
for lab, _, _, ls in cases:
    st, ex = eps_fig[lab]
    ax.plot(sigmas, st, ls, c="C0", label=f"{lab}: zCDP conversion")
    ax.plot(sigmas, ex, ls, c="C3", label=f"{lab}: exact")
ax.axhline(2 * np.log(3), c="k", ls=":", lw=1)
ax.axvline(6.32, c="grey", lw=0.8)
ax.set_xlabel(r"$\sigma$ of the discrete Gaussian", fontsize=10)
ax.set_ylabel(r"$\epsilon$ at $\delta = 10^{-10}$", fontsize=10)
ax.tick_params(labelsize=9)
ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
fig.tight_layout()

# %% [markdown]
# ## A ledger for pure DP (Guo et al., Sec. 2.1, Prop. 1-3)
#
# A curator holds a total budget $\epsilon_{tot}$. Releasing $M_1$ ($\epsilon_1$) and then $M_2$ ($\epsilon_2$) on the
# same data costs $\epsilon_1 + \epsilon_2$ (sequential composition, Prop. 2); mechanisms on *disjoint* parts of
# the data cost $\max_j \epsilon_j$ (parallel composition, Prop. 3); anything computed from releases is free
# (post-processing, Prop. 1). `PrivacyBudget` records each charge and refuses one that would overspend,
# with an error naming what is left. Guo et al.'s release (Theorem 2) is one sequential charge of $\epsilon_2$
# (the threshold, geometric mechanism) and one of $\epsilon_1$ (the statistic, Laplace mechanism); with a
# split $D = D_1 \cup D_2$ the two Laplace releases on $D_1$ and $D_2$ are a parallel charge.
#
# Floating-point sums such as $0.1 + 0.2$ exceed $0.3$ by one rounding; the ledger allows a relative
# slack of $10^{-12}$ so that a budget split into exact parts can be spent in full.

# %%
#| default_exp accounting
#| internal BudgetEntry RdpEntry
#| export
import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from dplit import _validate as check
from dplit.mechanisms import discrete_gaussian_logpmf

_SLACK = 1e-12


class BudgetExceededError(ValueError):
    """Raised when a charge would spend more than the remaining privacy budget."""


@dataclass(frozen=True)
class BudgetEntry:
    """One charge to a :class:`PrivacyBudget`: a label, its cost ``eps`` and how it composed."""

    label: str
    eps: float
    composition: str
    parts: tuple


class _Ledger:
    """What the ledgers share: a cap ``total`` (> 0, or None for no cap) and the entries charged."""

    def __init__(self, total):
        self.total = None if total is None else check.epsilon(total, "total")
        self._entries = []

    @property
    def entries(self):
        """Tuple of the entries (:class:`BudgetEntry` or :class:`RdpEntry`), in the order charged."""
        return tuple(self._entries)

# %% [markdown]
# Check: a ledger starts empty, with or without a cap, and a cap must be a finite epsilon > 0.

# %%
assert _Ledger(None).total is None and _Ledger(2).total == 2.0 and _Ledger(1).entries == ()
try:
    _Ledger(-1)
except ValueError as err:
    assert "total must be finite and > 0" in str(err)
else:
    raise AssertionError("negative cap accepted")

# %% [markdown]
# The pure-DP ledger: sequential charges add, parallel charges cost their maximum, and a charge that
# does not fit is refused before anything is recorded.

# %%
#| export
class PrivacyBudget(_Ledger):
    """A ledger of pure epsilon-DP spending with sequential and parallel composition.

    Parameters
    ----------
    total : float
        Total budget epsilon, > 0.

    Examples
    --------
    >>> budget = PrivacyBudget(1.0)
    >>> budget.spend(0.2, "threshold (geometric)")
    0.8
    >>> budget.spend_parallel([0.8, 0.8], "statistic on D1 and D2")
    0.0
    """

    def __init__(self, total):
        super().__init__(check.epsilon(total, "total"))  # a pure-DP ledger always has a cap

    @property
    def spent(self):
        """Epsilon spent so far (sum of the charges)."""
        return math.fsum(e.eps for e in self._entries)

    @property
    def remaining(self):
        """Epsilon left (never negative)."""
        return max(self.total - self.spent, 0.0)

    def can_spend(self, eps):
        """True if a sequential charge of ``eps`` fits in the remaining budget."""
        eps = check.epsilon(eps, "eps", allow_zero=True)
        return self.spent + eps <= self.total * (1.0 + _SLACK)

    def _charge(self, cost, label, composition, parts):
        if not self.can_spend(cost):
            raise BudgetExceededError(
                f"charge {label!r} costs epsilon = {cost:.6g} ({composition}) but only "
                f"{self.remaining:.6g} of the total {self.total:.6g} is left")
        self._entries.append(BudgetEntry(str(label), cost, composition, tuple(parts)))
        return self.remaining

    def spend(self, eps, label=""):
        """Charge one eps-DP release on the data (sequential composition, Prop. 2).

        Parameters
        ----------
        eps : float
            Cost, >= 0.
        label : str, optional
            What was released.

        Returns
        -------
        float
            The remaining budget.

        Raises
        ------
        BudgetExceededError
            If the charge does not fit; nothing is recorded then.
        """
        eps = check.epsilon(eps, "eps", allow_zero=True)
        return self._charge(eps, label, "sequential", (eps,))

    def spend_parallel(self, eps, label=""):
        """Charge releases on *disjoint* subsets of the records: costs ``max(eps)`` (Prop. 3).

        ``eps`` holds the cost of each release (each >= 0, at least one); ``label`` and the
        result (the remaining budget, or BudgetExceededError) are those of :meth:`spend`.
        """
        parts = [check.epsilon(e, "eps", allow_zero=True) for e in np.atleast_1d(eps).tolist()]
        if not parts:
            raise ValueError("eps must hold at least one cost")
        return self._charge(max(parts), label, "parallel", parts)

    def absorb(self, ledger):
        """Charge every entry of another ledger (a release's own account) to this one, all or nothing.

        Parameters
        ----------
        ledger : PrivacyBudget or None
            What a release spent (``release.budget``); None (an exact release) charges nothing.

        The result (the remaining budget, or BudgetExceededError with nothing recorded when the whole ledger
        does not fit) is that of :meth:`spend`.
        """
        if ledger is None:
            return self.remaining
        if not isinstance(ledger, PrivacyBudget):
            raise TypeError(f"ledger must be a PrivacyBudget, got {type(ledger).__name__}")
        if not self.can_spend(ledger.spent):
            raise BudgetExceededError(f"the release spent epsilon = {ledger.spent:.6g} but only {self.remaining:.6g} "
                                      f"of the total {self.total:.6g} is left")
        for e in ledger.entries:
            self._charge(e.eps, e.label, e.composition, e.parts)
        return self.remaining

    def __repr__(self):
        lines = [f"PrivacyBudget(total={self.total:g}, spent={self.spent:g}, remaining={self.remaining:g})"]
        lines += [f"  {e.composition:>10}: {e.eps:g}  {e.label}" for e in self._entries]
        return "\n".join(lines)

# %%
budget = PrivacyBudget(1.0)
assert budget.spend(0.1, "threshold a (geometric, eps2)") == 0.9
assert np.isclose(budget.spend_parallel([0.9, 0.5], "s_L1 on D1, s_L on D2 (Laplace)"), 0.0)
try:
    budget.spend(1e-6, "one more")
except BudgetExceededError as err:
    print("refused:", err)
    assert "remaining" in str(err) or "left" in str(err)
else:
    raise AssertionError("overspending accepted")
assert len(budget.entries) == 2  # the refused charge is not recorded
print(budget)
b3 = PrivacyBudget(0.3)
b3.spend(0.1)
b3.spend(0.2)  # 0.1 + 0.2 > 0.3 by one rounding: allowed by the slack
assert b3.remaining == 0.0 and not b3.can_spend(1e-9)
for bad_call in [lambda: PrivacyBudget(0), lambda: PrivacyBudget(1).spend(-0.1)]:
    try:
        bad_call()
    except ValueError:
        pass
    else:
        raise AssertionError("bad budget accepted")

# %% [markdown]
# ## Rényi DP and its conversion (Dirichlet-mechanism paper, Lemma 1 and App. B, Lemma 3, eq. 10)
#
# $M$ is $(\lambda, \epsilon)$-RDP if the Rényi divergence of order $\lambda > 1$ between $M(D)$ and $M(D')$ is at
# most $\epsilon$ for all neighbours. At a fixed order, RDP composes by adding the $\epsilon$'s (Lemma 1 there;
# Mironov 2017, Prop. 1). The conversion of Canonne, Kamath and Steinke (2020, Prop. 12), quoted as Lemma 3
# in App. B: a $(\lambda, \epsilon)$-RDP mechanism is $(\hat\epsilon, \delta)$-DP for every $\delta \in (0, 1)$ with
#
# $$\hat\epsilon = \epsilon + \log(\lambda - 1) - \frac{\log\delta + \lambda\log\lambda}{\lambda - 1}.$$
#
# (Solve $\delta = \frac{e^{(\lambda-1)(\epsilon - \hat\epsilon)}}{\lambda - 1}(1 - 1/\lambda)^\lambda$ for $\hat\epsilon$.) It is
# never worse than Mironov's classic $\hat\epsilon = \epsilon + \log(1/\delta)/(\lambda - 1)$: the difference
# $\log(\lambda - 1) - \lambda\log\lambda/(\lambda - 1) = \log(1 - 1/\lambda) - \log(\lambda)/(\lambda - 1) < 0$. With a whole
# RDP curve $\epsilon(\lambda)$ one takes the best order. Eq. 10 of the paper is this conversion applied to the
# Dirichlet mechanism's guarantee $\epsilon = \frac12\lambda r^2\Delta_2^2\psi'(1 + 3(\lambda-1)r\Delta_\infty)$ (Alg. 1,
# Thm. 1); we reproduce their Figure 7 below (notebook 30 implements the mechanism itself).
#
# ## zCDP and the discrete Gaussian (dapper, Example 2)
#
# $\rho$-zCDP means $(\lambda, \lambda\rho)$-RDP for every $\lambda > 1$ (CKS 2020, Def. 3). The discrete Gaussian with
# $\ell_2$ sensitivity $\Delta_2$ is $\rho = \Delta_2^2 / (2\sigma^2)$-zCDP. Three conversions to $(\epsilon, \delta)$:
#
# * `"standard"`: $\epsilon = \rho + 2\sqrt{\rho\log(1/\delta)}$ (Bun and Steinke 2016), what dapper uses;
# * `"cks"`: the best order in the conversion above, $\min_{\lambda > 1} \hat\epsilon(\lambda\rho, \lambda, \delta)$;
# * `discrete_gaussian_epsilon`: the *exact* $\epsilon$ of the discrete Gaussian mechanism for a given integer
#   shift vector, from the privacy-loss distribution. For outputs $y = v + Y$, $Y_j \sim N_{\mathbb{Z}}(0, \sigma^2)$, and
#   a neighbour $v' = v + s$, the privacy loss is $L = \sum_j (s_j^2 - 2 s_j Y_j) / (2\sigma^2)$, an integer
#   lattice divided by $2\sigma^2$, and $\delta(\epsilon) = E[(1 - e^{\epsilon - L})_+]$ (the hockey-stick divergence;
#   by the symmetry of the law the other direction gives the same). We get the exact law of $L$ by
#   convolving the coordinates' pmfs and solve $\delta(\epsilon) = \delta$ for $\epsilon$.
#
# **The sensitivity slip in dapper's Example 2** (Eng et al., Example 2): dapper takes $\Delta = 2$,
# for which $\sigma = 6.32$ gives $\rho = 4/(2 \cdot 6.32^2)$ and $\epsilon = \rho + 2\sqrt{\rho \log 10^{10}} \approx 2.197 = 2\log 3$:
# their figure. But changing one record of the admissions data moves *two* cells of the $2 \times 2$ table by
# one each, an $\ell_2$ sensitivity of $\sqrt 2$ (shift $s = (1, 1)$ up to signs), for which the same $\sigma$
# spends less: about 1.54 by the standard formula, and about 1.3 exactly. We show both.

# %%
#| export
def compose_rdp(eps):
    """Compose RDP guarantees of the same order: the epsilons add (Mironov 2017, Prop. 1).

    Parameters
    ----------
    eps : array_like, shape (k,) or (k, n_orders)
        RDP epsilon of each of k mechanisms (optionally as curves over a common grid of orders).

    Returns
    -------
    float or ndarray
        The composed RDP epsilon (per order).
    """
    e = np.asarray(eps, dtype=float)
    if e.ndim == 0 or e.shape[0] == 0:
        raise ValueError("eps must hold at least one RDP epsilon")
    if not np.all(np.isfinite(e)) or np.any(e < 0):
        raise ValueError("eps must be finite and >= 0")
    total = e.sum(axis=0)
    return float(total) if np.ndim(total) == 0 else total

# %%
#| export
def rdp_to_dp(eps, lam, delta):
    """Convert (lam, eps)-RDP to (epsilon_hat, delta)-DP (Canonne et al. 2020; Dirichlet paper Lemma 3).

    ``epsilon_hat = eps + log(lam - 1) - (log(delta) + lam * log(lam)) / (lam - 1)``.

    Parameters
    ----------
    eps : float or array_like
        RDP epsilon(s), >= 0.
    lam : float or array_like
        RDP order(s), > 1 (broadcast with ``eps``).
    delta : float
        Target delta in (0, 1).

    Returns
    -------
    float or ndarray
        ``epsilon_hat`` (may be negative for tiny epsilon and moderate delta: then any epsilon_hat >= 0
        holds as well).
    """
    delta = check.delta(delta)
    e = np.asarray(eps, dtype=float)
    lam = np.asarray(lam, dtype=float)
    if not np.all(np.isfinite(e)) or np.any(e < 0):
        raise ValueError("eps must be finite and >= 0")
    if not np.all(np.isfinite(lam)) or np.any(lam <= 1):
        raise ValueError("lam (the Renyi order) must be finite and > 1")
    out = e + np.log(lam - 1) - (math.log(delta) + lam * np.log(lam)) / (lam - 1)
    return float(out) if out.ndim == 0 else out


def rdp_to_dp_classic(eps, lam, delta):
    """Mironov's (2017, Prop. 3) conversion ``eps + log(1/delta) / (lam - 1)``, for comparison."""
    delta = check.delta(delta)
    e, lam = np.asarray(eps, dtype=float), np.asarray(lam, dtype=float)
    if np.any(lam <= 1):
        raise ValueError("lam (the Renyi order) must be > 1")
    out = e + math.log(1 / delta) / (lam - 1)
    return float(out) if out.ndim == 0 else out


def best_rdp_to_dp(eps, lams, delta):
    """Best (smallest) converted epsilon over an RDP curve ``eps[i]`` at orders ``lams[i]``.

    Returns
    -------
    (float, float)
        ``(epsilon_hat, lam)`` at the best order.
    """
    eps_arr, lam_arr = np.atleast_1d(eps), np.atleast_1d(lams)
    if eps_arr.size == 0 or lam_arr.size == 0:
        raise ValueError("eps and lams must each have at least one entry (an RDP curve)")
    if eps_arr.ndim > 1 or lam_arr.ndim > 1 or (eps_arr.size > 1 and lam_arr.size > 1 and eps_arr.size != lam_arr.size):
        raise ValueError(f"eps and lams must be 1-D of the same length (or one a scalar), got {eps_arr.size} "
                         f"and {lam_arr.size} entries")
    eh = np.atleast_1d(rdp_to_dp(eps, lams, delta))
    lams = np.broadcast_to(np.asarray(lams, dtype=float), eh.shape)
    i = int(np.argmin(eh))
    return float(eh[i]), float(lams[i])

# %% [markdown]
# Checks: the conversion equals the formula solved from $\delta$, beats the classic one, and composes;
# bad orders, deltas and epsilons raise.

# %%
lam_, eps_, delta_ = 10.0, 0.5, 1e-5
eh = rdp_to_dp(eps_, lam_, delta_)
# plugging epsilon_hat back into Lemma 3's delta gives delta
assert np.isclose(np.exp((lam_ - 1) * (eps_ - eh)) / (lam_ - 1) * (1 - 1 / lam_) ** lam_, delta_)
lams = np.array([1.5, 2, 10, 50, 200])
assert np.all(rdp_to_dp(eps_, lams, delta_) < rdp_to_dp_classic(eps_, lams, delta_))
assert np.isclose(compose_rdp([0.1, 0.2, 0.3]), 0.6)
assert np.allclose(compose_rdp(np.ones((3, 5))), 3.0)
for bad_call in [lambda: rdp_to_dp(1.0, 1.0, 1e-5), lambda: rdp_to_dp(1.0, 2.0, 0.0),
                 lambda: rdp_to_dp(-1.0, 2.0, 1e-5)]:
    try:
        bad_call()
    except ValueError:
        pass
    else:
        raise AssertionError("bad RDP input accepted")

# %% [markdown]
# ### A ledger of RDP charges
#
# Mechanisms calibrated in RDP (the Dirichlet mechanism of notebook 30, the Gaussian) are charged to an
# `RdpBudget`: each charge is a pair $(\lambda_i, \epsilon_i)$. Because $D_\lambda$ does not decrease in $\lambda$, a
# $(\lambda_i, \epsilon_i)$-RDP mechanism is $(\lambda, \epsilon_i)$-RDP at every $\lambda \le \lambda_i$, so the charges compose to
# $(\min_i \lambda_i, \sum_i \epsilon_i)$-RDP (Lemma 1 of the Dirichlet paper), reported as $(\hat\epsilon, \delta)$ through
# `rdp_to_dp`. An optional `total` caps $\sum_i\epsilon_i$ like `PrivacyBudget` caps pure-DP spending, and
# `absorb` charges another RDP ledger (a model's own account, its `budget`) all or nothing, as `PrivacyBudget.absorb`
# does for a release.

# %%
#| export
@dataclass(frozen=True)
class RdpEntry:
    """One charge to an :class:`RdpBudget`: a label and its (lam, eps)-RDP cost."""

    label: str
    lam: float
    eps: float

# %%
#| export
class RdpBudget(_Ledger):
    """A ledger of (lam, epsilon)-RDP charges, composed to (min lam, sum epsilon)-RDP (Mironov 2017).

    Parameters
    ----------
    total : float, optional
        Cap on the composed RDP epsilon (> 0); None means no cap.

    Examples
    --------
    >>> budget = RdpBudget()
    >>> budget.spend_rdp(0.5, 5, "class counts")
    >>> budget.spend_rdp(0.5, 10, "feature table")
    >>> budget.lam, budget.eps
    (5.0, 1.0)
    """

    def __init__(self, total=None):
        super().__init__(total)

    @property
    def lam(self):
        """The order of the composed guarantee: the smallest order charged (None before any charge)."""
        return min((e.lam for e in self._entries), default=None)

    @property
    def eps(self):
        """The composed RDP epsilon at order :attr:`lam` (the sum of the charges)."""
        return math.fsum(e.eps for e in self._entries)

    @property
    def remaining(self):
        """RDP epsilon left under ``total`` (never negative; inf without a cap)."""
        return math.inf if self.total is None else max(self.total - self.eps, 0.0)

    def can_spend(self, eps):
        """True if a charge of RDP epsilon ``eps`` fits under ``total`` (always, without a cap)."""
        eps = check.epsilon(eps, "eps", allow_zero=True)
        return self.total is None or self.eps + eps <= self.total * (1.0 + _SLACK)

    def spend_rdp(self, eps, lam, label=""):
        """Charge one (lam, eps)-RDP release; raises BudgetExceededError past ``total`` (nothing recorded)."""
        eps = check.epsilon(eps, "eps", allow_zero=True)
        lam = check.finite(lam, "lam")
        if lam <= 1:
            raise ValueError(f"lam (the Renyi order) must be > 1, got {lam}")
        if not self.can_spend(eps):
            raise BudgetExceededError(
                f"charge {label!r} costs RDP epsilon = {eps:.6g} but only "
                f"{self.remaining:.6g} of the total {self.total:.6g} is left")
        self._entries.append(RdpEntry(str(label), lam, eps))

    def absorb(self, ledger):
        """Charge every entry of another RDP ledger (a model's own account) to this one, all or nothing.

        ``ledger``: an :class:`RdpBudget`, or None (a non-private model) which charges nothing. Raises
        BudgetExceededError, recording nothing, when the whole ledger does not fit under ``total``.
        """
        if ledger is None:
            return
        if not isinstance(ledger, RdpBudget):
            raise TypeError(f"ledger must be an RdpBudget, got {type(ledger).__name__}")
        if not self.can_spend(ledger.eps):
            raise BudgetExceededError(f"the release spent RDP epsilon = {ledger.eps:.6g} but only "
                                      f"{self.remaining:.6g} of the total {self.total:.6g} is left")
        self._entries.extend(ledger.entries)

    def to_dp(self, delta):
        """The (epsilon_hat, delta)-DP of everything charged, via :func:`rdp_to_dp` at order :attr:`lam`."""
        if not self._entries:
            raise ValueError("nothing has been charged to this RdpBudget yet")
        return rdp_to_dp(self.eps, self.lam, delta)

    def __repr__(self):
        head = f"RdpBudget(lam={self.lam}, eps={self.eps:g}, total={self.total})"
        return "\n".join([head] + [f"  lam={e.lam:g}: {e.eps:g}  {e.label}" for e in self._entries])

# %%
rb = RdpBudget(total=1.0)
rb.spend_rdp(0.25, 5, "class counts")
rb.spend_rdp(0.5, 10, "feature tables")
assert rb.lam == 5 and rb.eps == 0.75 and len(rb.entries) == 2
assert rb.to_dp(1e-5) == rdp_to_dp(0.75, 5, 1e-5)
try:
    rb.spend_rdp(0.5, 5, "one too many")
except BudgetExceededError as err:
    assert "left" in str(err) and len(rb.entries) == 2
else:
    raise AssertionError("overspending accepted")
for bad_call in [lambda: rb.spend_rdp(0.1, 1.0), lambda: rb.spend_rdp(-0.1, 5), lambda: RdpBudget().to_dp(1e-5)]:
    try:
        bad_call()
    except ValueError:
        pass
    else:
        raise AssertionError("bad RDP charge accepted")
own = RdpBudget()                                     # a model's own account of two tables
own.spend_rdp(0.1, 5, "table 1")
own.spend_rdp(0.1, 5, "table 2")
capped = RdpBudget(total=0.5)
capped.absorb(own)
assert capped.entries == own.entries and np.isclose(capped.eps, 0.2) and np.isclose(capped.remaining, 0.3)
big = RdpBudget()
big.spend_rdp(0.2, 5, "fits")
big.spend_rdp(0.2, 5, "does not fit after the first")
try:
    capped.absorb(big)
except BudgetExceededError:
    assert len(capped.entries) == 2                   # all or nothing: not even the first charge is recorded
else:
    raise AssertionError("overspending absorbed")
assert RdpBudget().can_spend(1e9) and RdpBudget().remaining == math.inf and not capped.can_spend(0.4)
print(rb)

# %% [markdown]
# zCDP: the discrete Gaussian's $\rho$ and its two generic conversions.

# %%
#| export
def gaussian_zcdp_rho(sigma, l2_sensitivity):
    """zCDP parameter ``rho = l2_sensitivity**2 / (2 sigma**2)`` of the (discrete) Gaussian mechanism."""
    sigma = check.positive(sigma, "sigma")
    l2 = check.positive(l2_sensitivity, "l2_sensitivity")
    return l2**2 / (2.0 * sigma**2)


def zcdp_to_dp(rho, delta, *, method="standard"):
    """Convert rho-zCDP to (epsilon, delta)-DP.

    Parameters
    ----------
    rho : float
        zCDP parameter, > 0.
    delta : float
        Target delta in (0, 1).
    method : {"standard", "cks"}, default "standard"
        ``"standard"``: ``rho + 2 sqrt(rho log(1/delta))`` (Bun and Steinke 2016; dapper Example 2).
        ``"cks"``: minimise :func:`rdp_to_dp` of ``(lam, lam rho)``-RDP over the order ``lam``
        (Canonne, Kamath and Steinke 2020, Cor. 13); never larger.

    Returns
    -------
    float
        epsilon.
    """
    rho = check.positive(rho, "rho")
    delta = check.delta(delta)
    method = check.choice(method, "method", ("standard", "cks"))
    if method == "standard":
        return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))
    if method == "cks":
        # over u = log(lam - 1); the objective is smooth and unimodal in lam
        def f(u):
            lam = 1.0 + math.exp(u)
            return rdp_to_dp(lam * rho, lam, delta)

        res = optimize.minimize_scalar(f, bounds=(-20.0, 30.0), method="bounded",
                                       options={"xatol": 1e-10})
        return float(min(res.fun, zcdp_to_dp(rho, delta)))

# %% [markdown]
# Checks: the standard conversion is the formula; the CKS one is never larger, and strictly smaller
# here; an unknown method raises naming it.

# %%
rho_ = gaussian_zcdp_rho(4.0, 1.0)
assert np.isclose(rho_, 1 / 32)
assert np.isclose(zcdp_to_dp(rho_, 1e-6), rho_ + 2 * np.sqrt(rho_ * np.log(1e6)))
assert zcdp_to_dp(rho_, 1e-6, method="cks") < zcdp_to_dp(rho_, 1e-6)
try:
    zcdp_to_dp(rho_, 1e-6, method="magic")
except ValueError as err:
    assert "method must be one of" in str(err)
else:
    raise AssertionError("unknown method accepted")

# %% [markdown]
# The exact $\epsilon$ of the discrete Gaussian, from the law of its privacy loss.

# %%
#| export
def _privacy_loss_pmf(sigma, shift):
    """Exact law of 2 sigma^2 L (an integer) under the discrete Gaussian mechanism: (values, probs)."""
    half = int(math.ceil(40 * sigma)) + 2
    y = np.arange(-half, half + 1)
    p = np.exp(discrete_gaussian_logpmf(y, sigma))
    values, probs = np.array([0]), np.array([1.0])
    for s in shift:
        if s == 0:
            continue
        m = s * s - 2 * s * y                   # this coordinate's 2 sigma^2 L_j, spacing 2|s|
        lo = int(m.min())
        pm = np.zeros(int(m.max()) - lo + 1)
        np.add.at(pm, m - lo, p)
        conv = np.convolve(probs, pm)
        values, probs = np.arange(values[0] + lo, values[0] + lo + conv.size), conv
    return values, probs


def _check_shift(shift):
    """Return an integer shift vector with at least one nonzero entry, or raise."""
    s = np.atleast_1d(np.asarray(shift))
    if not np.issubdtype(s.dtype, np.number) or np.any(s != np.round(s)) or s.ndim != 1:
        raise ValueError("shift must be a 1-D vector of integers")
    if not np.any(s != 0):
        raise ValueError("shift must have a nonzero entry (the change between neighbours)")
    return s.astype(np.int64)

# %% [markdown]
# Check: the law of $2\sigma^2 L$ is a probability law with the mean $\sum_j s_j^2$ (as $E[Y_j] = 0$), for one
# shifted coordinate and for two; a shift of zeros or of non-integers is refused.

# %%
for shift_chk in ([2], [1, 1]):
    values_chk, probs_chk = _privacy_loss_pmf(1.3, np.array(shift_chk))
    assert np.isclose(probs_chk.sum(), 1.0) and np.isclose(values_chk @ probs_chk, np.sum(np.square(shift_chk)))
for bad_shift in ([0, 0], [0.5]):
    try:
        _check_shift(bad_shift)
    except ValueError as err:
        assert "shift must" in str(err)
    else:
        raise AssertionError(bad_shift)

# %% [markdown]
# The exact $\delta(\epsilon)$ is the hockey-stick sum over that law; the exact $\epsilon(\delta)$ inverts it.

# %%
#| export
def discrete_gaussian_delta(eps, sigma, *, shift=(1,)):
    """Exact delta(eps) of the discrete Gaussian mechanism for neighbours differing by ``shift``.

    Parameters
    ----------
    eps : float
        Epsilon, >= 0.
    sigma : float
        Scale of the discrete Gaussian noise on each coordinate, > 0.
    shift : sequence of int, default (1,)
        Integer change ``S0(D') - S0(D)`` of the released vector (e.g. ``(1, 1)`` when a record moves
        two cells of a table, up to signs, which do not matter).

    Returns
    -------
    float
        The smallest delta for which the mechanism is (eps, delta)-DP on these neighbours.
    """
    eps = check.epsilon(eps, "eps", allow_zero=True)
    sigma = check.positive(sigma, "sigma")
    values, probs = _privacy_loss_pmf(sigma, np.abs(_check_shift(shift)))
    loss = values / (2.0 * sigma**2)
    pos = loss > eps
    return float(np.sum(probs[pos] * -np.expm1(eps - loss[pos])))


def discrete_gaussian_epsilon(sigma, delta, *, shift=(1,)):
    """Exact epsilon of the discrete Gaussian mechanism at a given delta (inverse of the above).

    Parameters
    ----------
    sigma : float
        Scale, > 0.
    delta : float
        Target delta in (0, 1).
    shift : sequence of int, default (1,)
        Integer change between neighbouring outputs.

    Returns
    -------
    float
        The smallest epsilon with delta(epsilon) <= delta.
    """
    sigma = check.positive(sigma, "sigma")
    delta = check.delta(delta)
    s = np.abs(_check_shift(shift))
    values, _ = _privacy_loss_pmf(sigma, s)
    hi = values.max() / (2.0 * sigma**2)
    if discrete_gaussian_delta(0.0, sigma, shift=s) <= delta:
        return 0.0
    f = lambda e: math.log(max(discrete_gaussian_delta(e, sigma, shift=s), 1e-300)) - math.log(delta)  # noqa: E731
    return float(optimize.brentq(f, 0.0, hi, xtol=1e-10))

# %% [markdown]
# Checks: the exact $\delta(\epsilon)$ of the discrete Gaussian agrees with a brute-force sum over outputs
# (one coordinate, and two); zCDP conversions are ordered exact $\le$ CKS $\le$ standard; dapper's figure
# and the corrected one.

# %%
# the exact delta by brute force over the output grid, one coordinate shifted by 2
sigma_, s_, e_ = 1.3, 2, 0.8
y_ = np.arange(-200, 201)
p_, q_ = np.exp(discrete_gaussian_logpmf(y_, sigma_)), np.exp(discrete_gaussian_logpmf(y_, sigma_, mu=s_))
assert np.isclose(discrete_gaussian_delta(e_, sigma_, shift=[s_]), np.maximum(p_ - np.exp(e_) * q_, 0).sum(), rtol=1e-10)
# two cells shifted by one each: a 2-D brute force
P2 = np.outer(p_, p_)
Q2 = np.outer(np.exp(discrete_gaussian_logpmf(y_, sigma_, mu=1)), np.exp(discrete_gaussian_logpmf(y_, sigma_, mu=1)))
assert np.isclose(discrete_gaussian_delta(e_, sigma_, shift=[1, 1]), np.maximum(P2 - np.exp(e_) * Q2, 0).sum(), rtol=1e-10)

# dapper, Example 2: sigma = 6.32, delta = 1e-10
sigma_census, delta_census = 6.32, 1e-10
table = {}
for label, l2, shift in [("dapper (Delta = 2)", 2.0, [2]), ("one record, two cells (Delta_2 = sqrt 2)", np.sqrt(2), [1, 1])]:
    rho = gaussian_zcdp_rho(sigma_census, l2)
    table[label] = dict(rho=rho, standard=zcdp_to_dp(rho, delta_census),
                        cks=zcdp_to_dp(rho, delta_census, method="cks"),
                        exact=discrete_gaussian_epsilon(sigma_census, delta_census, shift=shift))
    r = table[label]
    print(f"{label:>42}: rho = {r['rho']:.4f}; epsilon standard = {r['standard']:.3f}, "
          f"CKS = {r['cks']:.3f}, exact = {r['exact']:.3f}")
    assert r["exact"] <= r["cks"] <= r["standard"]
print(f"2 log 3 = {2 * np.log(3):.4f}")
assert abs(table["dapper (Delta = 2)"]["standard"] - 2 * np.log(3)) < 2e-3   # dapper's figure
assert abs(table["one record, two cells (Delta_2 = sqrt 2)"]["standard"] - 1.54) < 0.01  # seeds/README
# the exact epsilon really has delta(epsilon) = 1e-10
e_ex = table["dapper (Delta = 2)"]["exact"]
assert np.isclose(discrete_gaussian_delta(e_ex, sigma_census, shift=[2]), delta_census, rtol=1e-6)

# %% [markdown]
# ## Reproduced figures
#
# dapper's Example 2 is the first figure of this notebook. **Dirichlet-mechanism paper, Figure 7**: $\hat\epsilon$ of eq. 10 against $r$ for $\lambda \in \{2, 10, 50, 200\}$,
# $\delta = 10^{-5}$, $\Delta_2^2 = 2$, $\Delta_\infty = 1$ (the histogram sensitivities used in their Sec. 5). The RDP
# guarantee of Algorithm 1 is written here in two lines for the figure only; notebook 30 implements the
# mechanism. We check that `rdp_to_dp` of it is eq. 10 term for term.

# %%
from scipy.special import polygamma


def dirichlet_rdp(r, lam, d2sq=2.0, dinf=1.0):
    """RDP epsilon of the Dirichlet mechanism (Dirichlet paper, Alg. 1 line 1 / eq. 5)."""
    return 0.5 * lam * r**2 * d2sq * polygamma(1, 1 + 3 * (lam - 1) * r * dinf)


r_grid = np.logspace(-2, 2, 200)
fig7 = {lam: rdp_to_dp(dirichlet_rdp(r_grid, lam), lam, 1e-5) for lam in [2, 10, 50, 200]}
for lam, eh in fig7.items():
    eq10 = (0.5 * lam * r_grid**2 * 2 * polygamma(1, 1 + 3 * (lam - 1) * r_grid)
            + np.log(lam - 1) - (np.log(1e-5) + lam * np.log(lam)) / (lam - 1))
    assert np.allclose(eh, eq10)
    assert np.all(np.diff(eh) > 0)  # increasing in r, as the paper says
# "negatively correlated with lambda" holds for large r: compare at r = 100
assert fig7[2][-1] > fig7[10][-1] > fig7[50][-1] > fig7[200][-1]

# %%
# NBVAL_IGNORE_OUTPUT
fig, ax = plt.subplots(figsize=(6, 3.6))
for lam, eh in fig7.items():
    ax.plot(r_grid, eh, label=f"lambda = {lam}")
ax.set_xscale("log")
ax.set_xlabel("r")
ax.set_ylabel("epsilon-hat (delta = 1e-5)")
ax.legend()
fig.tight_layout()

# %% [markdown]
# ## Explore: the noise laws
#
# For a budget $\epsilon$ and a sensitivity $\Delta$: the Laplace density (scale $\Delta/\epsilon$), the two-sided geometric
# pmf ($t = e^{-\epsilon/\Delta}$), and, for comparison, the discrete Gaussian whose standard zCDP conversion
# gives the same $\epsilon$ at $\delta = 10^{-10}$ (for the same $\ell_2$ sensitivity $\Delta$). The Laplace and geometric
# laws are pure $\epsilon$-DP. The discrete Gaussian has lighter tails but needs a $\delta$, and for one coordinate
# at $\delta = 10^{-10}$ it is far wider than the geometric law at the same $\epsilon$; it pays off when many
# coordinates are released at once (the $\ell_2$ sensitivity of a change spread over $d$ cells grows like
# $\sqrt d$, the $\ell_1$ one like $d$) and when many releases are composed under zCDP.

# %%
def sigma_for_epsilon(epsilon, sensitivity, delta=1e-10):
    """Smallest sigma whose standard zCDP conversion spends at most epsilon."""
    from scipy.optimize import brentq
    return brentq(lambda s: zcdp_to_dp(gaussian_zcdp_rho(s, sensitivity), delta) - epsilon, 1e-3, 1e6)


def plot_noise_laws(epsilon=1.0, sensitivity=1.0):
    """Plot the three noise laws for a budget and a sensitivity; returns the figure."""
    scale, t = sensitivity / epsilon, np.exp(-epsilon / sensitivity)
    sig = sigma_for_epsilon(epsilon, sensitivity)
    half = max(5 * scale, 3 * sig, 5)
    x = np.linspace(-half, half, 600)
    k = np.arange(-int(half), int(half) + 1)
    fig, ax = plt.subplots(figsize=(7, 3.4))
    ax.plot(x, np.exp(laplace_logpdf(x, 0.0, scale)), label=f"Laplace, b = {scale:.3g}")
    ax.plot(k, np.exp(two_sided_geometric_logpmf(k, t)), "o", ms=3, label=f"two-sided geometric, t = {t:.3g}")
    ax.plot(k, np.exp(discrete_gaussian_logpmf(k, sig)), "s", ms=3, alpha=0.6,
            label=f"discrete Gaussian, sigma = {sig:.3g} (delta = 1e-10)")
    ax.set_xlabel("noise")
    ax.set_title(f"epsilon = {epsilon:g}, sensitivity = {sensitivity:g}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


fig = plot_noise_laws()
assert np.isclose(zcdp_to_dp(gaussian_zcdp_rho(sigma_for_epsilon(1.0, 1.0), 1.0), 1e-10), 1.0)
plt.close(fig)

# %%
# NBVAL_IGNORE_OUTPUT
from ipywidgets import FloatLogSlider, interactive
from dplit.testing import dead_controls  # noqa: E402

explorer = interactive(plot_noise_laws,
                       epsilon=FloatLogSlider(value=1.0, base=10, min=-1.3, max=1, step=0.05),
                       sensitivity=FloatLogSlider(value=1.0, base=10, min=-1, max=1, step=0.05))
assert dead_controls(explorer) == []  # every control changes the view (one its callback ignores fails)
explorer

# %% [markdown]
# ## When to use this
#
# * Record each release of real data in a `PrivacyBudget`: it refuses a charge that would overspend.
# * Mechanisms with an RDP or zCDP guarantee (discrete Gaussian, Dirichlet mechanism) compose at a
#   fixed order by adding epsilons; convert once at the end with `rdp_to_dp` (or `best_rdp_to_dp`
#   over a grid of orders), which is never worse than the classic conversion.
# * For a discrete Gaussian report the exact epsilon (`discrete_gaussian_epsilon`), and get the
#   shift vector (the sensitivity) right.
