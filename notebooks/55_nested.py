# %% [markdown]
# # Nested households: a two-level latent class model fitted to noisy household summaries
#
# * **For:** publishing a few household-level summaries of people nested in households under pure differential privacy, and estimating them with uncertainty or drawing synthetic households.
# * **You need:** household records (to release), or the five noisy counts of a `SummaryRelease`.
# * **You get:** a posterior of the five summary probabilities and synthetic households drawn from it.
#
# Nixon, Barrientos, Reiter and Slavković (seed 004), Supplement Sec. 1: individuals nested within households (the
# model of Hu et al. 2018, truncated), five household summaries released with the geometric mechanism, the model's
# parameters estimated from the noisy summaries by a binomial composite likelihood with MH-within-Gibbs, and synthetic
# households drawn from the posterior. The model and the closed forms of the summaries' probabilities are derived in
# notebook `54_nested_model`; the supplement's Figures 1-2 on simulated households are in notebook
# `84_nested_applications`.

# %%
#| default_exp nested

# %% [markdown]
# ## Parameters
#
# Sizes come from the size switch (`DPLIT_QUICK=1` gives the quick sizes of the test suite); every random
# draw comes from a generator seeded here. The repeated-sampling study that chose the default prior (coverage of
# the five summaries over many simulated samples) runs as a script, `benchmarks/bench_nested.py`, whose small stored
# results this notebook reads (section "The default prior").

# %%
import math
import time

import matplotlib.pyplot as plt
import numpy as np
from scipy import integrate, stats

from IPython.display import Markdown, display
from dplit.config import stored as stored_result

from dplit.config import size
from dplit.mechanisms import sample_two_sided_geometric, two_sided_geometric_logpmf
from dplit.sampling import run_chains
from dplit.testing import chisq_gof, rank_uniformity_pvalues, sbc_ranks

SEED = 20261127
rng = np.random.default_rng(SEED)
n_block = size(full=100_000, quick=30_000)   # iterations of the one-block invariance checks
n_iter = size(full=10_000, quick=4_000)      # kept iterations per chain of the fits (the paper: 20,000, half burn-in)
n_warm = size(full=10_000, quick=4_000)      # warm-up iterations per chain
n_sbc = size(full=300, quick=100)            # SBC replicates of the whole sampler

# %% [markdown]
# ## The result first: synthetic households from five noisy counts
#
# From the finished module `dplit.nested` (the sections below derive it). 2,000 households of three people are drawn
# from the simulation truth `SIMULATED_TRUTH`; the agency releases the five counts of Supp. Table 3 (S1 all members
# white, S2 owned by the head, S3 all members of the same race, S4 spouse present, S5 same-race couple present) at
# $\epsilon = 1$ in total, geometric noise (Supp. Sec. 1.2); `fit_nested` turns the five noisy counts into a posterior of
# the five summary probabilities (MH-within-Gibbs, Supp. Sec. 1.2.1, the supplement's 10,000 warm-up iterations, then
# until converged), and `synthesize_households` draws five synthetic data sets of 2,000 households from it (Supp. Sec.
# 1.3). The figure shows each quantity minus the true $P(S_i \mid \theta)$. The check: the chains converged, every 95%
# interval holds both the truth and the confidential households' own share, and the synthetic data sets' shares
# average within 0.02 of the truth.

# %%
# NBVAL_IGNORE_OUTPUT
from dplit.nested import (SIMULATED_TRUTH, SUMMARIES, fit_nested, release_summaries, simulate_households,
                          summary_counts, summary_probs, synthesize_households)

N_first = 2000
hh_first = simulate_households(SIMULATED_TRUTH, N_first, rng=SEED + 1)
rel_first = release_summaries(hh_first, eps=1.0, rng=SEED + 2, secure=False)     # seeded: a simulation
fit_first = fit_nested(rel_first, n_iter="auto", target_ess=200, n_warmup=10_000, n_chains=2, rng=SEED + 3,
                       progress=False)
syn_first = np.array([summary_counts(s) for s in synthesize_households(fit_first, N_first, 5, rng=SEED + 4)]) / N_first
truth_first, own_first = summary_probs(SIMULATED_TRUTH), summary_counts(hh_first) / N_first
lo_first, hi_first = np.quantile(fit_first.posterior["summary_probs"].values.reshape(-1, 5), [0.025, 0.975], axis=0)
assert fit_first.posterior.attrs["converged"] == 1
assert np.all((lo_first <= truth_first) & (truth_first <= hi_first) & (lo_first <= own_first) & (own_first <= hi_first))
assert np.abs(syn_first.mean(axis=0) - truth_first).max() < 0.02

fig, ax = plt.subplots(figsize=(7, 2.8))
x5 = np.arange(5)
ax.axhline(0, color="0.3", lw=1)
ax.vlines(x5 - 0.12, lo_first - truth_first, hi_first - truth_first, color="C0", lw=3,
          label="posterior 95% interval (fit_nested)")
ax.plot(x5, own_first - truth_first, "k_", ms=14, mew=1.5, label="the households (confidential)")
ax.plot(x5, rel_first.counts / N_first - truth_first, "x", color="0.45", ms=6, label="released count / N")
ax.plot(np.repeat(x5 + 0.15, 5), (syn_first - truth_first).T.ravel(), "o", color="C1", ms=3,
        label="5 synthetic data sets")
ax.set_xticks(x5, SUMMARIES)
ax.set_ylabel("share $-$ true $P(S_i \\mid \\theta)$", fontsize=9)
ax.tick_params(labelsize=9)
ax.legend(fontsize=9, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.14), frameon=False)
fig.tight_layout()

# %% [markdown]
# ## The model and its five summaries (notebook 54)
#
# A household of size $h$ is a head and $h - 1$ other members. Its household-level variables are ownership $X_0$,
# the head's gender $X_1$ and race $X_2$; each other member $i$ has a gender, a race and a relationship to the head
# ($X_{i1}, X_{i2}, X_{i3}$). A data set is an integer array with one row per household and the columns
# `own, hh_gender, hh_race, gender_1, race_1, rel_1, ...`, codes from 0 (level 0 is owned, white, spouse). The model
# (Supp. eq. (1)): a household belongs to class $g$ with probability $\pi_g$, its household-level variables are then
# independent, and each other member independently belongs to an individual-level class $m$ with probability
# $w_{gm}$ and has independent variables given $(g, m)$:
#
# $$P(\mathbf X = \mathbf x \mid \theta) = \sum_g \pi_g\, \lambda^{(0)}_{g x_0} \lambda^{(1)}_{g x_1} \lambda^{(2)}_{g x_2}
#   \prod_{i=1}^{h-1} \Big(\sum_m w_{gm}\, \phi^{(1)}_{gm x_{i1}} \phi^{(2)}_{gm x_{i2}} \phi^{(3)}_{gm x_{i3}}\Big).$$
#
# The agency publishes five counts of households (Supp. Table 3): $S_1$ all members white, $S_2$ owned by the head,
# $S_3$ all members of the same race, $S_4$ spouse present, $S_5$ same-race couple present. Their probabilities
# $P(S_i \mid \theta)$ have closed forms (Supp. eq. (2)), sums over $g$ and the head's race of powers of per-member
# probabilities, at a cost of $O(GMR)$. Notebook `54_nested_model` derives them and checks them against the sum over
# every household configuration; `NestedParams` holds $\theta$, `simulate_households` draws from eq. (1), and
# `summary_counts` counts the five events. They are importable from here too.
#
# The simulation truth `SIMULATED_TRUTH` ($G = M = 2$, $R = 4$ races, $K = 4$ relationships; the ACS sample of the
# supplement is not available here) is tuned so that its five probabilities come near the supplement's ACS
# proportions.

# %%
#| export
import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from dplit import _validate as V
from dplit._arviz import groups, is_result, move_to_group
from dplit.accounting import PrivacyBudget
from dplit.latent_class import check_budget, dirichlet_proposal, log_dirichlet_density, trunc_tsg
from dplit.mechanisms import check_plausible, geometric_mechanism, geometric_reach

# The model (notebook 54) lives in dplit.nested_model; its public names are importable from here too
# (``name as name`` marks a re-export), the layout helpers under the private names this module uses.
from dplit.nested_model import PARAM_NAMES as PARAM_NAMES
from dplit.nested_model import SIMULATED_TRUTH as SIMULATED_TRUTH
from dplit.nested_model import SUMMARIES as SUMMARIES
from dplit.nested_model import SUMMARY_TEXT as SUMMARY_TEXT
from dplit.nested_model import NestedParams as NestedParams
from dplit.nested_model import check_households as _check_households
from dplit.nested_model import household_probs as household_probs
from dplit.nested_model import household_summaries as household_summaries
from dplit.nested_model import household_table as household_table
from dplit.nested_model import row_lengths as _row_lengths
from dplit.nested_model import simulate_households as simulate_households
from dplit.nested_model import summary_counts as summary_counts
from dplit.nested_model import summary_probs as summary_probs
from dplit.nested_model import summary_probs_kernel as _summary_probs_kernel
from dplit.nested_model import unpack as _unpack
from dplit.results import privacy_attrs
from dplit.sampling import RHAT_MAX, Sampler, run, warmup_windows

# %% [markdown]
# ## What the prior says about the summaries
#
# The supplement's priors are uniform on every simplex, which sounds uninformative, but it is not uninformative
# about the *summaries*: a uniform race vector of four levels puts little mass near "almost everybody white", so the
# prior of $P(S_1)$ and $P(S_3)$ (all members of one race) sits far below what real households show. A sparser
# Dirichlet$(a)$, $a < 1$, favours concentrated vectors. The prior's 95% range of each summary probability, for the
# uniform prior and for $a = 0.25$ (`fit_nested`'s default, section "The default prior" below), next to the
# simulation's truth $P(S_i \mid \theta_{\text{true}})$: where the counts are weak (small $\epsilon$) the posterior
# returns to this.

# %%
TRUE = SIMULATED_TRUTH
truth = summary_probs(TRUE)
prior_draws = {a_: np.array([summary_probs(NestedParams.random(2, 2, 4, 4, a=a_, rng=rng)) for _ in range(4000)])
               for a_ in (1.0, 0.25)}
prior_rows = ["| truth | " + " | ".join(f"{p:.3f}" for p in truth) + " |"]
for a_, d in prior_draws.items():
    lo_, hi_ = np.quantile(d, [0.025, 0.975], axis=0)
    prior_rows.append(f"| prior a = {a_:g}: mean (95%) | " + " | ".join(
        f"{m:.3f} ({lo:.2f}-{hi:.2f})" for m, lo, hi in zip(d.mean(axis=0), lo_, hi_)) + " |")
display(Markdown("| | " + " | ".join(SUMMARIES) + " |\n|" + "---|" * 6 + "\n" + "\n".join(prior_rows)))
assert prior_draws[1.0][:, 2].mean() < 0.2 and np.quantile(prior_draws[0.25][:, 2], 0.975) > truth[2] - 0.3

# %%
# NBVAL_IGNORE_OUTPUT
fig, axes = plt.subplots(1, 2, figsize=(7.5, 2.8), sharey=True)
for ax, i in zip(axes, (0, 2)):
    for a_, col in ((1.0, "0.55"), (0.25, "C0")):
        ax.hist(prior_draws[a_][:, i], bins=np.linspace(0, 1, 41), density=True, histtype="step", color=col, lw=1.5,
                label=f"prior a = {a_:g}" + (" (supplement)" if a_ == 1.0 else " (default)"))
    ax.axvline(truth[i], color="C3", lw=1.2, label="simulation's truth")
    ax.set_xlabel(f"P({SUMMARIES[i]}): {SUMMARY_TEXT[i]}")
axes[0].set_ylabel("prior density")
axes[1].legend(fontsize=9)
fig.tight_layout()


# %% [markdown]
# ## The release: five noisy counts (Supp. Sec. 1.2)
#
# Changing one household changes each count by at most one: each count has sensitivity 1. The agency spends
# $\epsilon$ in total, $\epsilon / 5$ on each count (the supplement's "one fifth of the privacy budget to each count"),
# with two-sided geometric noise of parameter $t = e^{-\epsilon/5}$ (`dplit.mechanisms.geometric_mechanism`). The
# number of households $N$ and the numbers of levels $R$, $K$ are public (the schema); `eps = inf` means no noise.
#
# **Which counts are possible (plausibility).** The five events are nested: all members white implies all of one race
# ($S_1 \subseteq S_3$), a same-race couple is a couple ($S_5 \subseteq S_4$), and a household of one race with a spouse
# has a same-race couple ($S_3 \cap S_4 \subseteq S_5$, so $S_3 + S_4 - N \le |S_3 \cap S_4| \le S_5$); with one other member
# (size two) also $S_5 = |S_3 \cap S_4| \le S_3$. Together with $0 \le S_i \le N$ these describe every vector of counts
# some set of households gives (pick $|S_3 \cap S_4|$ between $\max(0, S_3 + S_4 - N)$ and $\min(S_3, S_4, S_5)$, put the
# rest of $S_5$ in $S_4 \setminus S_3$ (a third member of another race, size $\ge 3$), $S_1$ inside $S_3$, $S_2$ anywhere).
# The noise widens them: with $t = e^{-\epsilon/5}$ and $w$ the smallest $m$ with $5 \cdot 2t^m/(1 + t) \le 10^{-9}$, minus
# one (notebook `02_mechanisms`), every $|\varepsilon_i| \le w$ except with probability $10^{-9}$, and then
#
# $$-w \le \tilde S_i \le N + w, \quad \tilde S_1 - \tilde S_3 \le 2w, \quad \tilde S_5 - \tilde S_4 \le 2w, \quad
#   \tilde S_3 + \tilde S_4 - \tilde S_5 - N \le 3w \quad (\text{size two: also } \tilde S_5 - \tilde S_3 \le 2w).$$
#
# At $\epsilon = \infty$, $w = 0$ and the check is exact. A `SummaryRelease` outside is refused naming the count and the
# range; `checked=False` skips the check (research), and `fit_nested` records `plausibility_checked = 0` in its attrs.

# %%
#| export
@dataclass(frozen=True, eq=False)
class SummaryRelease:
    """The five household summaries released with the geometric mechanism (Supp. Sec. 1.2).

    Attributes
    ----------
    counts : ndarray of int64 (5,)
        Noisy counts of S1..S5 (true counts when ``eps = inf``).
    n : int
        Number of households (public).
    eps : float
        Total budget, ``eps / 5`` per count (``inf``: no noise).
    n_race, n_rel : int
        Numbers of race and relationship levels (public schema).
    size : int, default 3
        Household size.
    sensitivity : float, default 1
        l1 sensitivity of each count.
    checked : bool, default True
        Run the plausibility check (counts no households give under the stated noise are refused); False skips it,
        for research, and the analyses record ``plausibility_checked = 0``.
    """

    counts: np.ndarray
    n: int
    eps: float
    n_race: int
    n_rel: int
    size: int = 3
    sensitivity: float = 1.0
    checked: bool = True

    def __post_init__(self):
        n = V.count(self.n, "n")
        eps = V.epsilon(self.eps, "eps", allow_inf=True)
        c = V.integer_values(self.counts, "counts")
        if c.shape != (5,):
            raise ValueError(f"counts must be 5 integers (S1..S5), got shape {c.shape}")
        for k, v in dict(counts=c, n=n, eps=eps, n_race=V.count(self.n_race, "n_race", minimum=2),
                         n_rel=V.count(self.n_rel, "n_rel", minimum=2), size=V.count(self.size, "size", minimum=2),
                         sensitivity=V.positive(self.sensitivity, "sensitivity"),
                         checked=V.boolean(self.checked, "checked")).items():
            object.__setattr__(self, k, v)
        if self.checked:
            _plausible_summaries(c, n, geometric_reach(self.t, 5), self.size)

    @property
    def eps_total(self):
        """Total privacy budget spent (``inf``: exact counts, no noise)."""
        return float(self.eps)

    @property
    def eps_per_count(self):
        """The budget of each count, ``eps / 5``."""
        return self.eps / 5

    @property
    def t(self):
        """Parameter of the two-sided geometric noise, ``exp(-eps / (5 sensitivity))`` (0 when exact)."""
        return math.exp(-self.eps_per_count / self.sensitivity)

    @property
    def budget(self):
        """A :class:`dplit.accounting.PrivacyBudget` with one entry per count (None when ``eps = inf``)."""
        if math.isinf(self.eps):
            return None
        ledger = PrivacyBudget(self.eps)
        for s, text in zip(SUMMARIES, SUMMARY_TEXT):
            ledger.spend(self.eps_per_count, f"{s} ({text}): geometric mechanism, sensitivity {self.sensitivity:g}")
        return ledger

# %%
#| export
def _plausible_summaries(c, n, w, size):
    """Refuse counts S1..S5 outside [0, n] or breaking the events' nesting, each widened by the noise's reach ``w``."""
    reach = f"two-sided geometric noise within {w} per count (the release's reach)"
    check_plausible(c, -w, n + w, "counts", feasible=f"a count of households lies in [0, n] = [0, {n}]", noise=reach)
    rules = [("S1 - S3", c[0] - c[2], 0, 2, "S1 (all white) is part of S3 (all of one race): S1 <= S3"),
             ("S5 - S4", c[4] - c[3], 0, 2, "S5 (same-race couple) is part of S4 (spouse): S5 <= S4"),
             ("S3 + S4 - S5", c[2] + c[3] - c[4], n, 3,
              "S3 and S4 together imply S5, so S3 + S4 - S5 <= n")]
    if size == 2:
        rules.append(("S5 - S3", c[4] - c[2], 0, 2, "with one other member S5 is S3 and S4: S5 <= S3"))
    for name, value, bound, terms, why in rules:
        check_plausible(int(value), -math.inf, bound + terms * w, name, feasible=why, noise=reach)


def release_summaries(households, eps, *, n_race=None, n_rel=None, rng=None, secure=True, sensitivity=1.0,
                      budget=None):
    """Release the five summaries of ``households`` with the geometric mechanism, ``eps / 5`` each.

    Parameters
    ----------
    households : array_like of int, shape (n, 3 + 3 (size - 1))
        Households (see :func:`household_summaries`).
    eps : float
        Total budget (``numpy.inf``: no noise).
    n_race, n_rel : int, optional
        Numbers of race and relationship levels (default: largest code + 1, at least 2).
    rng : None, int or numpy.random.Generator
        Randomness of the fast sampler (``secure=False``).
    secure : bool, default True
        OpenDP's exact integer sampler (not seedable); False: dplit's seeded sampler.
    sensitivity : float, default 1
        l1 sensitivity of each count (one household changes each count by at most 1).
    budget : dplit.accounting.PrivacyBudget, optional
        A ledger charged with the release's own (its ``budget``), checked before any noise is drawn:
        a release that does not fit raises ``BudgetExceededError`` and spends nothing.

    Returns
    -------
    SummaryRelease

    Examples
    --------
    >>> x = simulate_households(NestedParams.random(2, 2, 3, 3, rng=0), 500, rng=1)
    >>> r = release_summaries(x, eps=1.0, rng=2, secure=False)
    >>> r.counts.shape, r.eps_per_count
    ((5,), 0.2)
    """
    n_race = None if n_race is None else V.count(n_race, "n_race", minimum=2)
    n_rel = None if n_rel is None else V.count(n_rel, "n_rel", minimum=2)
    x, h = _check_households(households, n_race=n_race, n_rel=n_rel)
    eps = V.epsilon(eps, "eps", allow_inf=True)
    V.boolean(secure, "secure")
    n_race = max(int(max(x[:, 2].max(), x[:, 4::3].max())) + 1, 2) if n_race is None else n_race
    n_rel = max(int(x[:, 5::3].max()) + 1, 2) if n_rel is None else n_rel
    sensitivity = V.positive(sensitivity, "sensitivity")
    check_budget(budget, eps, "release_summaries")
    counts = summary_counts(x)
    if not math.isinf(eps):
        counts = geometric_mechanism(counts, sensitivity, eps / 5, rng=V.rng(rng), secure=secure)
    rel = SummaryRelease(counts=counts, n=x.shape[0], eps=eps, n_race=n_race, n_rel=n_rel, size=h,
                         sensitivity=sensitivity)
    if budget is not None:
        budget.absorb(rel.budget)
    return rel


# %%
N_PAPER = 602                                   # households in the supplement's ACS sample
PAPER_COUNTS = np.array([427, 440, 552, 401, 376])
households = simulate_households(TRUE, N_PAPER, rng=rng)
exact_rel = release_summaries(households, np.inf)
print(f"{'':>34}" + "".join(f"{s:>8}" for s in SUMMARIES))
print(f"{'supplement (ACS, N = 602), Table 3':>34}" + "".join(f"{c / 602:8.3f}" for c in PAPER_COUNTS))
print(f"{'simulation: P(S | theta_true)':>34}" + "".join(f"{p:8.3f}" for p in truth))
print(f"{'simulation: sample of N = 602':>34}" + "".join(f"{c / N_PAPER:8.3f}" for c in exact_rel.counts))
assert exact_rel.n_race == 4 and exact_rel.size == 3 and exact_rel.t == 0.0 and exact_rel.budget is None
r1 = release_summaries(households, 1.0, rng=3, secure=False)
assert abs(r1.t - math.exp(-0.2)) < 1e-15 and abs(r1.budget.spent - 1.0) < 1e-12
noise = np.concatenate([release_summaries(households, 0.5, rng=s, secure=False).counts - exact_rel.counts
                        for s in range(2000)])
assert chisq_gof(noise, lambda k: two_sided_geometric_logpmf(k, math.exp(-0.1))) > 1e-3

# %% [markdown]
# Check the plausibility check: genuine releases pass (here many seeds at small and large $\epsilon$; sizes two to
# four and small $N$ in `tests/test_nested.py`); counts breaking the nesting are refused, exactly at
# $\epsilon = \infty$ and beyond the reach $w$ otherwise, where the edge itself is accepted; `checked=False` lets
# them through.

# %%
for eps_ in (0.01, 0.5, 5.0, 50.0):
    for s_ in range(25):
        release_summaries(households, eps_, rng=s_, secure=False)            # would raise if refused
w_1 = geometric_reach(math.exp(-1.0 / 5), 5)
print(f"eps = 1: the noise of each count stays within w = {w_1} except with probability 1e-9 (union over 5 counts)")
base = dict(n=602, n_race=4, n_rel=4)
for counts_, eps_, word in [([400, 440, 552, 500, 376], np.inf, "S3 + S4 - S5"),      # 552 + 500 - 376 > 602
                            ([400 + 2 * w_1 + 1, 440, 400, 401, 376], 1.0, "S1 - S3")]:
    try:
        SummaryRelease(counts=counts_, eps=eps_, **base)
    except ValueError as err:
        assert word in str(err) and "impossible" in str(err) and "must lie in" in str(err), err
    else:
        raise AssertionError(f"{counts_} accepted")
    assert not SummaryRelease(counts=counts_, eps=eps_, checked=False, **base).checked
SummaryRelease(counts=[400 + 2 * w_1, 440, 400, 401, 376], eps=1.0, **base)            # at the edge: accepted

# %% [markdown]
# ## The posterior and its MH-within-Gibbs sampler (Supp. Sec. 1.2.1)
#
# As in the main text, each true count is treated as an independent binomial, $S_i \mid \theta \sim
# \text{Binomial}(N, P(S_i \mid \theta))$ (a composite likelihood: the five counts come from the same households),
# and the noisy count is $\tilde S_i = S_i + \varepsilon_i$ with two-sided geometric noise. Priors: every simplex
# vector of $\theta$ is Dirichlet$(a, \dots, a)$; $a = 1$ is the supplement's "uniform distributions on the
# corresponding simplex spaces", and `fit_nested`'s default is $a = 0.25$ (the prior's figure above). The sampler cycles through two kinds of block, each a Metropolis-Hastings step
# that leaves its full conditional invariant:
#
# **The true counts** $S_i$ (skipped when $\epsilon = \infty$): propose $S_i^* \sim q(s) \propto t^{|s - \tilde S_i|}$ on
# $\{0, \dots, N\}$ (`dplit.latent_class.trunc_tsg`, exact); the noise factor cancels against the proposal and the
# ratio is the binomial one, $\big(\tfrac{P}{1-P}\big)^{S^* - S} \frac{S!\,(N - S)!}{S^*!\,(N - S^*)!}$.
#
# **Each simplex vector** of $\theta$ ($\pi$, each $\lambda^{(j)}_g$, each $w_g$, each $\phi^{(j)}_{gm}$): the supplement's
# "Dirichlet distribution with concentration parameter centred on the last value of the chain",
# $x^* \sim \text{Dirichlet}(\kappa x + 1)$ (`dplit.latent_class.dirichlet_proposal`, the $+1$ keeps it proper), with
# the Hastings correction; $\kappa$ of each vector is tuned in warm-up towards 30% acceptance. The five
# probabilities are recomputed after each proposal ($O(GMR)$). The vectors that no summary involves (the genders,
# the relationships other than spouse) are sampled from their prior: the summaries say nothing about them.

# %%
#| export
@njit(cache=True, nogil=True)
def _composite_loglik(S, P, n):
    """sum_i S_i log P_i + (n - S_i) log(1 - P_i) (no constants); -inf where a count is impossible."""
    ll = 0.0
    for i in range(S.size):
        if S[i] > 0:
            ll += S[i] * math.log(P[i]) if P[i] > 0.0 else -np.inf
        if n - S[i] > 0:
            ll += (n - S[i]) * math.log1p(-P[i]) if P[i] < 1.0 else -np.inf
    return ll


@njit(cache=True, nogil=True)
def _update_true_counts(S, P, noisy, n, t, w, rng):
    """Each true count S_i given its noisy count and P_i (binomial to the power w); returns the number accepted."""
    n_acc = 0
    for i in range(S.size):
        s_new = trunc_tsg(noisy[i], 0, n, t, rng)
        d = (s_new - S[i]) * (math.log(P[i]) - math.log1p(-P[i]))
        d += math.lgamma(S[i] + 1.0) + math.lgamma(n - S[i] + 1.0) - math.lgamma(s_new + 1.0) - math.lgamma(n - s_new + 1.0)
        if math.log(rng.random()) < w * d:
            S[i] = s_new
            n_acc += 1
    return n_acc


@njit(cache=True, nogil=True)
def _update_row(theta, r, length, G, M, R, k, S, n, w, a, kappa, P, P_new, rng):
    """One simplex row of theta: Dirichlet(kappa x + 1) proposal, Hastings-corrected; returns 1 if accepted."""
    old = theta[r, :length].copy()
    new = dirichlet_proposal(old, kappa, 1.0, rng)
    if new.min() <= 0.0:
        return 0
    theta[r, :length] = new
    _summary_probs_kernel(theta, G, M, R, k, P_new)
    d = w * (_composite_loglik(S, P_new, n) - _composite_loglik(S, P, n))
    d += (a - 1.0) * (np.log(new).sum() - np.log(old).sum())
    d += log_dirichlet_density(old, kappa * new + 1.0) - log_dirichlet_density(new, kappa * old + 1.0)
    if math.log(rng.random()) < d:
        P[:] = P_new
        return 1
    theta[r, :length] = old
    return 0


# %% [markdown]
# **Checks of each block alone, against brute force** (as notebook 51 does). The counts: $N = 6$, $P = 0.3$ fixed,
# noisy count $2$, $t = 0.6$: the exact conditional over $\{0, \dots, 6\}$ is $t^{|s-2|}\,\text{Binomial}(s; 6, 0.3)$
# normalised; the planted bug reads the noisy count one off. A simplex row: (i) $\pi$ with $G = 2$, all else fixed,
# true counts known: the conditional of $\pi_0$ is integrated numerically over ten bins; (ii) the head's race vector
# $\lambda^{(2)}_0$ with $R = 3$, a two-dimensional conditional, integrated on a fine grid of the triangle and binned
# by its first entry. The planted bug drops the Hastings correction.

# %%
def count_logpmf(noisy, n, P, t):
    s = np.arange(n + 1)
    lw = np.abs(s - noisy) * math.log(t) + stats.binom.logpmf(s, n, P)
    return lambda k: np.where((k >= 0) & (k <= n), lw[np.clip(k, 0, n)] - np.logaddexp.reduce(lw), -np.inf)


def run_count_block(n_it, shift=0, seed=3):
    S, gen, out = np.array([6]), np.random.default_rng(seed), np.empty(n_it, dtype=np.int64)
    for it in range(n_it):
        _update_true_counts(S, np.array([0.3]), np.array([2 + shift]), 6, 0.6, 1.0, gen)
        out[it] = S[0]
    return out


p_cnt = chisq_gof(run_count_block(n_block)[::2], count_logpmf(2, 6, 0.3, 0.6))
p_cnt_bug = chisq_gof(run_count_block(n_block, shift=1)[::2], count_logpmf(2, 6, 0.3, 0.6))
print(f"true-count block: chi-square p = {p_cnt:.3f} (exact), {p_cnt_bug:.1e} (noisy count off by one)")
assert p_cnt > 1e-3 and p_cnt_bug < 1e-4

# %%
base_p = NestedParams.random(2, 2, 3, 3, rng=7)
S_fix, n_fix = np.array([3, 5, 6, 2, 1]), 8                # true counts of n = 8 households
edges = np.linspace(0, 1, 11)


@njit(cache=True)
def _row_chain(theta, r, length, S, n, kappa, hastings, n_it, rng):
    """n_it updates of row r alone (hastings=False: the planted bug); returns theta[r, 0] after each."""
    P, P_new, out = np.empty(5), np.empty(5), np.empty(n_it)
    _summary_probs_kernel(theta, 2, 2, 3, 2, P)
    for it in range(n_it):
        if hastings:
            _update_row(theta, r, length, 2, 2, 3, 2, S, n, 1.0, 1.0, kappa, P, P_new, rng)
        else:
            old = theta[r, :length].copy()
            theta[r, :length] = dirichlet_proposal(old, kappa, 1.0, rng)
            _summary_probs_kernel(theta, 2, 2, 3, 2, P_new)
            if math.log(rng.random()) < _composite_loglik(S, P_new, n) - _composite_loglik(S, P, n):
                P[:] = P_new
            else:
                theta[r, :length] = old
        out[it] = theta[r, 0]
    return out


def log_target_row(r, xs):
    """Log conditional (flat prior) of row r at each candidate vector in xs, the other rows fixed."""
    theta, P, out = base_p.pack(), np.empty(5), np.empty(len(xs))
    for i, x in enumerate(xs):
        theta[r, :len(x)] = x
        out[i] = _composite_loglik(S_fix, _summary_probs_kernel(theta, 2, 2, 3, 2, P), n_fix)
    return out


def binned_logpmf(bin_p):
    bin_p = bin_p / bin_p.sum()
    return lambda code: np.where((code >= 0) & (code < 10), np.log(np.maximum(bin_p, 1e-300))[np.clip(code, 0, 9)],
                                 -np.inf)


# (i) pi (row 0): one dimension, quadrature per bin
pi_pdf = lambda x: np.exp(log_target_row(0, [np.array([x, 1 - x])])[0])  # noqa: E731
pi_bins = np.array([integrate.quad(pi_pdf, lo, hi)[0] for lo, hi in zip(edges[:-1], edges[1:])])
# (ii) the head's race in household class 0 (row 3): midpoint rule on a 300 x 300 grid of the triangle
h_ = 1 / 300
grid = [(x0, x1) for x0 in np.arange(h_ / 2, 1, h_) for x1 in np.arange(h_ / 2, 1 - x0, h_) if x0 + x1 < 1]
grid = np.array([[x0, x1, 1 - x0 - x1] for x0, x1 in grid])
lt = log_target_row(3, grid)
race_bins = np.bincount(np.minimum((grid[:, 0] * 10).astype(int), 9), weights=np.exp(lt - lt.max()), minlength=10)
results_rows = {}
for name, r, length, bins in [("pi", 0, 2, pi_bins), ("lam_race[0]", 3, 3, race_bins)]:
    for hastings in (True, False):
        x0 = _row_chain(base_p.pack(), r, length, S_fix, n_fix, 2.0, hastings, n_block, np.random.default_rng(11))
        codes = np.clip(np.searchsorted(edges, x0[::10]) - 1, 0, 9)     # thinned: the chi-square wants ~independent draws
        results_rows[(name, hastings)] = chisq_gof(codes, binned_logpmf(bins))
print("simplex-row block, chi-square p: " + ", ".join(f"{n_} {'exact' if h else 'no Hastings'} {p:.2g}"
                                                      for (n_, h), p in results_rows.items()))
assert all(p > 1e-3 for (_, h), p in results_rows.items() if h)
assert all(p < 1e-4 for (_, h), p in results_rows.items() if not h)

# %% [markdown]
# ## One chain in numba, and the `Sampler`
#
# An iteration updates the five true counts (unless $\epsilon = \infty$), then every simplex row in turn. During
# warm-up the kernel retunes each row's $\kappa$ every 50 iterations from that batch's acceptance (towards 0.3);
# after the last warm-up window `adapt` stops it. Kept draws: the five probabilities, the binomial composite
# log-likelihood (a scalar to monitor), the packed $\theta$ (unpacked into named arrays) and the true counts.

# %%
#| export
@njit(cache=True, nogil=True)
def _nested_chain_kernel(theta, row_len, S, kappa, acc, n_steps, thin, batch, noisy, n, t, w, a, G, M, R, k, rng):
    """n_steps MH-within-Gibbs iterations; keeps every thin-th (P, log-lik, theta, S) and acceptance rates."""
    n_keep, n_rows = n_steps // thin, theta.shape[0]
    out_P, out_ll = np.empty((n_keep, 5)), np.empty(n_keep)
    out_theta, out_S = np.empty((n_keep, n_rows, theta.shape[1])), np.empty((n_keep, 5), dtype=np.int64)
    rates = np.zeros((n_keep, 2))
    P, P_new = np.empty(5), np.empty(5)
    _summary_probs_kernel(theta, G, M, R, k, P)
    const = 5 * math.lgamma(n + 1.0)
    for it in range(n_steps):
        j = it // thin
        if t > 0.0:
            rates[j, 0] += _update_true_counts(S, P, noisy, n, t, w, rng) / 5.0 / thin
        n_acc = 0
        for r in range(n_rows):
            ok = _update_row(theta, r, row_len[r], G, M, R, k, S, n, w, a, kappa[r], P, P_new, rng)
            acc[r] += ok
            n_acc += ok
        rates[j, 1] += n_acc / n_rows / thin
        if batch > 0 and (it + 1) % batch == 0:
            for r in range(n_rows):
                kappa[r] = min(max(kappa[r] * math.exp(-2.0 * (acc[r] / batch - 0.3)), 1.0), 1e8)
                acc[r] = 0
        if (it + 1) % thin == 0:
            out_P[j], out_theta[j], out_S[j] = P, theta, S
            ll = const + _composite_loglik(S, P, n)
            for i in range(5):
                ll -= math.lgamma(S[i] + 1.0) + math.lgamma(n - S[i] + 1.0)
            out_ll[j] = ll
    return out_P, out_ll, out_theta, out_S, rates

# %%
#| export
def _nested_sampler(release, G, M, a, weight, n_windows):
    """The Sampler of fit_nested (state: a dict of arrays, updated in place by the kernel)."""
    R, K, k, n = release.n_race, release.n_rel, release.size - 1, release.n
    row_len = _row_lengths(G, M, R, K)
    t = 0.0 if math.isinf(release.eps) else release.t
    noisy = release.counts.copy()

    def init(rng):
        theta = np.zeros((row_len.size, row_len.max()))
        for r, length in enumerate(row_len):
            theta[r, :length] = rng.dirichlet(np.ones(length))
        return dict(theta=theta, S=np.clip(noisy, 0, n), kappa=np.full(row_len.size, 50.0),
                    acc=np.zeros(row_len.size, dtype=np.int64), windows_left=n_windows)

    def run_chain(s, n_steps, thin, rng):
        batch = 50 if s["windows_left"] > 0 else 0
        P_d, ll, th, S_d, rates = _nested_chain_kernel(s["theta"], row_len, s["S"], s["kappa"], s["acc"], n_steps,
                                                       thin, batch, noisy, n, t, weight, a, G, M, R, k, rng)
        draws = dict(summary_probs=P_d, log_lik=ll, **_unpack(th, G, M, R, K))
        stats = {"acceptance_params": rates[:, 1]}
        if t > 0.0:
            draws["counts"] = S_d
            stats["acceptance_counts"] = rates[:, 0]
        return draws, stats

    def adapt(s, draws, stats):
        s["windows_left"] -= 1
        s["acc"][:] = 0
        return s

    # "summary_stat", not "summary": az.summary (ArviZ 1.x) uses a dimension of that name itself
    dims = {"summary_probs": ["summary_stat"], "counts": ["summary_stat"], "noisy_counts": ["summary_stat"],
            "pi": ["hh_class"],
            "lam_own": ["hh_class", "own_level"], "lam_gender": ["hh_class", "gender_level"],
            "lam_race": ["hh_class", "race_level"], "w": ["hh_class", "ind_class"],
            "phi_gender": ["hh_class", "ind_class", "gender_level"],
            "phi_race": ["hh_class", "ind_class", "race_level"], "phi_rel": ["hh_class", "ind_class", "rel_level"]}
    coords = {"summary_stat": list(SUMMARIES), "hh_class": np.arange(G), "ind_class": np.arange(M),
              "own_level": np.arange(2), "gender_level": np.arange(2), "race_level": np.arange(R),
              "rel_level": np.arange(K)}
    return Sampler(init=init, run_chain=run_chain, adapt=adapt, dims=dims, coords=coords)


# %% [markdown]
# ## `fit_nested`
#
# The public function checks its inputs, builds the `Sampler` and calls `dplit.sampling.run`. Its run settings follow
# the supplement: $G = M = 2$, 20,000 iterations of which the first 10,000 are burn-in (here: warm-up, with tuning),
# thinned by five. Its prior does not: the default is the sparser Dirichlet$(a = 0.25)$ on every simplex vector,
# because the supplement's uniform prior puts little mass on "all one race" households and its intervals of $S_3$
# miss the truth (the prior and the coverage study at the end show it). `paper=True` restores the uniform $a = 1$,
# which the reproduction of the supplement's figures (notebook 84) uses. The posterior group holds `summary_probs`
# (dimension `summary_stat`, S1..S5) and `log_lik`, which the convergence report monitors (the supplement monitors "probabilities for each count"); the parameters of
# $\theta$, which switch labels and are mostly not identified by five counts, and the true counts go to a group
# `latent`, where `synthesize_households` reads them.

# %%
#| export
def fit_nested(release, *, G=2, M=2, a=None, weight=1.0, paper=False, n_iter=10_000, n_warmup=10_000, n_chains=4,
               thin=5, rng=None, progress=True, n_jobs=None, target_ess=400, max_rhat=RHAT_MAX, max_iter=200_000,
               max_time=None):
    """Posterior of the nested latent class model given noisy household summaries (Supp. Sec. 1.2.1).

    Parameters
    ----------
    release : SummaryRelease
        The noisy counts of S1..S5 (``eps = inf``: exact counts).
    G, M : int, default 2
        Household-level and individual-level classes (truncation levels), >= 1.
    a : float, default 0.25 (the supplement's 1 with ``paper=True``)
        Every simplex vector of theta ~ Dirichlet(a, ..., a). The supplement's uniform prior (1) is informative
        against one-race households; 0.25 lets the counts decide.
    weight : float, default 1
        Power of the binomial composite likelihood, in (0, 1] (1 is the supplement's).
    paper : bool, default False
        Use the supplement's prior (``a=1``) when ``a`` is None. An explicit ``a`` wins.
    n_iter, n_warmup, n_chains, thin, rng, progress, n_jobs, target_ess, max_rhat, max_iter, max_time
        Run settings of :func:`dplit.sampling.run` (``n_iter="auto"``: until converged).

    Returns
    -------
    arviz.InferenceData
        ``posterior``: ``summary_probs`` (chain, draw, summary_stat), ``log_lik``; ``latent``: ``pi``, ``lam_own``,
        ``lam_gender``, ``lam_race``, ``w``, ``phi_gender``, ``phi_race``, ``phi_rel`` and (finite eps) ``counts``;
        ``sample_stats``: acceptance rates; ``observed_data``: ``noisy_counts``; ``attrs``: the result
        contract's (:data:`dplit.results.CONTRACT_ATTRS`, ``method="nested"``, the release's ledger),
        ``eps_per_count``, ``G``, ``M``, ``size``, ``n`` and the run settings.

    Examples
    --------
    >>> x = simulate_households(NestedParams.random(2, 2, 3, 3, rng=0), 2000, rng=1)
    >>> r = release_summaries(x, eps=np.inf)
    >>> res = fit_nested(r, n_iter=2000, n_warmup=1000, n_chains=2, rng=1, progress=False)
    >>> est = res.posterior["summary_probs"].mean(("chain", "draw")).values
    >>> bool(np.abs(est - r.counts / r.n).max() < 0.02)
    True
    """
    if not isinstance(release, SummaryRelease):
        raise TypeError(f"release must be a SummaryRelease, got {type(release).__name__}")
    G, M = V.count(G, "G"), V.count(M, "M")
    width = max(G, M, 2, release.n_race, release.n_rel)   # the packed parameter rows (row_lengths), before any work
    n_kept = max_iter if isinstance(n_iter, str) else n_iter
    draws = (n_chains * max(1, n_kept // thin)
             if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 1
                    for v in (n_kept, n_chains, thin)) else 1)       # bad run settings: dplit.sampling.run names them
    # each kept draw is held packed, then unpacked into named arrays and a result: about three copies
    V.work_size(8.0 * (1 + 4 * G + 3 * G * M) * width * (1 + 3 * draws),
                f"fit_nested: G = {G} household x M = {M} individual classes over {draws:,} kept draws",
                "lower G or M, or keep fewer draws (n_iter, thin)")
    paper = V.boolean(paper, "paper")
    a = V.positive((1.0 if paper else 0.25) if a is None else a, "a")
    weight = V.unit_interval(weight, "weight", closed_high=True)
    n_windows = len(warmup_windows(V.count(n_warmup, "n_warmup", 0)))
    sampler = _nested_sampler(release, G, M, a, weight, n_windows)
    attrs = {"method": "nested", "eps_per_count": release.eps_per_count, "G": G, "M": M,
             "a": a, "weight": weight, "paper": int(paper), "n": release.n, "size": release.size, "n_race": release.n_race,
             "n_rel": release.n_rel, "plausibility_checked": int(release.checked)}
    result = run(sampler, n_iter=n_iter, n_warmup=n_warmup, n_chains=n_chains, thin=thin, rng=rng, progress=progress,
                 n_jobs=n_jobs, attrs=attrs, observed_data={"noisy_counts": release.counts},
                 report_vars=["log_lik", "summary_probs"], desc="nested", privacy=privacy_attrs(release),
                 target_ess=target_ess, max_rhat=max_rhat, max_iter=max_iter, max_time=max_time)
    latent = list(PARAM_NAMES) + (["counts"] if "counts" in result.posterior else [])
    return move_to_group(result, latent, "latent")


# %% [markdown]
# **The whole sampler, by simulation-based calibration** (through `dplit.testing`, as the sampler core's example):
# draw $\theta$ from the prior, true counts from the binomials, noisy counts at $\epsilon = 2$ ($N = 40$, $G = M = 2$,
# $R = K = 3$), run one chain and rank each true $P(S_i \mid \theta)$ among 19 thinned draws. An exact sampler gives
# uniform ranks. (The composite likelihood is the model here, so SBC checks the sampler, not the composite
# likelihood's fit to real households.)

# %%
SBC_N, SBC_EPS = 40, 2.0


def sbc_simulate(gen):
    p = NestedParams.random(2, 2, 3, 3, rng=gen)
    P = summary_probs(p)
    S = gen.binomial(SBC_N, P)
    noisy = S + sample_two_sided_geometric(math.exp(-SBC_EPS / 5), 5, rng=gen)
    return P, SummaryRelease(counts=noisy, n=SBC_N, eps=SBC_EPS, n_race=3, n_rel=3)


def sbc_posterior(rel, L, gen):
    sampler = _nested_sampler(rel, 2, 2, 1.0, 1.0, len(warmup_windows(500)))
    draws, _, _, _ = run_chains(sampler, n_iter=20 * L, n_warmup=500, n_chains=1, thin=20, rng=gen)
    return draws["summary_probs"][0]


t0 = time.perf_counter()
sbc_p = rank_uniformity_pvalues(sbc_ranks(sbc_simulate, sbc_posterior, n_sbc, rng=12))
print(f"SBC ({n_sbc} replicates, {time.perf_counter() - t0:.1f} s): rank-uniformity p-values", np.round(sbc_p, 3))
assert sbc_p.min() > 1e-3

# %% [markdown]
# **Recovery at $\epsilon = \infty$ with many households**: 20,000 households from `TRUE`, exact counts, the default
# prior, 10,000 warm-up iterations and then `n_iter="auto"`: the chains run, thinned by five, until the convergence
# report passes (with this many households the posterior is narrow and the one-vector-at-a-time updates move slowly
# along the directions the five counts do not pin down, so the supplement's 10,000 kept iterations are not always
# enough). The posterior means must come within 0.01 of $P(S \mid \theta_{\text{true}})$. (`tests/test_nested.py`
# adds that the same seed gives the same draws whatever the number of threads, and the refusals of bad input.)

# %%
big = simulate_households(TRUE, 20_000, rng=rng)
t0 = time.perf_counter()
fit_big = fit_nested(release_summaries(big, np.inf), n_iter="auto", n_warmup=10_000, n_chains=2, rng=1, progress=False)
secs = time.perf_counter() - t0
est_big = fit_big.posterior["summary_probs"].mean(("chain", "draw")).values
n_kept = fit_big.posterior.sizes["draw"] * fit_big.posterior.attrs["thin"]
print(f"eps = inf, N = 20,000: |posterior mean - truth| = {np.round(np.abs(est_big - truth), 4)}\n"
      f"R-hat {fit_big.posterior.attrs['rhat_max']:.3f}, bulk ESS {fit_big.posterior.attrs['ess_bulk_min']:.0f} after "
      f"{n_kept:,} kept iterations per chain ({secs:.1f} s for 2 chains)")
assert np.abs(est_big - truth).max() < 0.01
assert fit_big.posterior.attrs["converged"]
assert set(groups(fit_big)) == {"posterior", "latent", "sample_stats", "observed_data"}
assert fit_big.posterior["summary_probs"].dims == ("chain", "draw", "summary_stat")
assert fit_big.latent["phi_race"].shape[2:] == (2, 2, 4) and "counts" not in fit_big.latent

# %% [markdown]
# ## Synthetic households (Supp. Sec. 1.3)
#
# A synthetic data set is drawn from eq. (1) at one posterior draw of $\theta$: `synthesize_households(result,
# n_households, m)` draws $m$ data sets at $m$ distinct posterior draws chosen at random (as notebook 51's
# `synthesize`); post-processing, no privacy spent. Their summaries are analysed with the combining rules
# (`dplit.latent_class.combine`).

# %%
#| export
def _posterior_params(result):
    """(list of NestedParams-ready dicts as flat arrays, household size) of a fit_nested result."""
    if not is_result(result):
        raise TypeError(f"result must be the ArviZ result of fit_nested, got {type(result).__name__}")
    if "latent" not in groups(result) or result.posterior.attrs.get("method") != "nested":
        raise ValueError("result must come from fit_nested (it has no 'latent' group of method 'nested')")
    arrays = {k: result.latent[k].values for k in PARAM_NAMES}
    arrays = {k: v.reshape((-1,) + v.shape[2:]) for k, v in arrays.items()}
    return arrays, int(result.posterior.attrs["size"])


def synthesize_households(result, n_households, m, *, rng=None):
    """``m`` synthetic data sets of ``n_households`` households, each at a different random posterior draw.

    Returns an int64 array (m, n_households, 3 + 3 (size - 1)) with the columns of :func:`household_summaries`.

    Examples
    --------
    >>> x = simulate_households(NestedParams.random(2, 2, 3, 3, rng=0), 500, rng=1)
    >>> fit = fit_nested(release_summaries(x, eps=np.inf), n_iter=200, n_warmup=200, n_chains=1, rng=1,
    ...                  progress=False)
    >>> synthesize_households(fit, 100, 5, rng=2).shape
    (5, 100, 9)
    """
    arrays, h = _posterior_params(result)
    n, m, gen = V.count(n_households, "n_households"), V.count(m, "m"), V.rng(rng)
    n_draws = arrays["pi"].shape[0]
    if m > n_draws:
        raise ValueError(f"m must be <= the number of posterior draws ({n_draws}), got {m}")
    V.work_size(8.0 * m * n * (3 + 3 * (h - 1)) * 2, f"m = {m:,} data sets x n_households = {n:,} households",
                "lower n_households or m")
    out = np.empty((m, n, 3 + 3 * (h - 1)), dtype=np.int64)
    for i, d in enumerate(gen.choice(n_draws, size=m, replace=False)):
        params = NestedParams(**{k: v[d] / v[d].sum(axis=-1, keepdims=True) for k, v in arrays.items()})
        out[i] = simulate_households(params, n, size=h, rng=gen)
    return out


# %%
syn = synthesize_households(fit_big, 20_000, 5, rng=5)
assert syn.shape == (5, 20_000, 9) and syn.min() == 0
syn_props = np.array([summary_counts(s) for s in syn]) / 20_000
assert np.abs(syn_props.mean(axis=0) - truth).max() < 0.02

# %% [markdown]
# ## The default prior, and the supplement's beside it
#
# `fit_nested(release)` puts Dirichlet$(0.25, \dots, 0.25)$ on every simplex vector of $\theta$; `paper=True` gives
# the supplement's uniform Dirichlet$(1, \dots, 1)$, and an explicit `a` wins over both. The reason is the prior's
# figure near the top: uniform vectors are rarely concentrated, so the uniform prior says that households where
# everybody has the same race are rare, while real (and our simulated) households are mostly of one race. Where the five counts pin
# the summaries down that pull is small; where they do not, it decides the interval, which then misses.
#
# The repeated-sampling study (`benchmarks/bench_nested.py --coverage`) draws samples of households from
# `SIMULATED_TRUTH`, releases each at every $\epsilon$ and fits it under both priors. The table gives the coverage of
# the true $P(S_i \mid \theta_{\text{true}})$ by the 95% intervals, and their mean length.

# %%
nest_study = stored_result("nested_coverage.json", script="benchmarks/bench_nested.py --coverage")
PRIORS = {"1.0": "supplement (`paper=True`, a = 1)", "0.25": "default (a = 0.25)"}
assert set(nest_study["results"]) == set(PRIORS) and all(set(v) == {"inf", "1.0", "0.1", "0.01"}
                                                         for v in nest_study["results"].values())
assert np.allclose(nest_study["truth"], truth, atol=1e-4)     # the study's truth is this notebook's
print(f"stored study: {nest_study['reps']} samples of N = {nest_study['n']} households, {nest_study['n_chains']} "
      f"chains x {nest_study['n_iter']:,} iterations after {nest_study['n_warmup']:,} warm-up "
      f"(command: {nest_study['command']})")
rows = [f"| {PRIORS[a_]} | {e} | " + " | ".join(f"{c:.2f}" for c in res["coverage"]) + f" | {np.mean(res['length']):.3f} |"
        for a_ in ("1.0", "0.25") for e, res in nest_study["results"][a_].items()]
display(Markdown("**Coverage of nominal 95% intervals, by summary**\n\n| prior | eps | "
                 + " | ".join(SUMMARIES) + " | mean length |\n|" + "---|" * 8 + "\n" + "\n".join(rows)))
cov_s3 = {a_: nest_study["results"][a_]["inf"]["coverage"][2] for a_ in PRIORS}
assert cov_s3["0.25"] > cov_s3["1.0"]          # the sparse prior repairs S3 (all members of one race)

# %%
def count_noise_sd(eps):
    """Sd of the two-sided geometric noise on each count at total budget eps (eps / 5 per count, sensitivity 1)."""
    t = math.exp(-float(eps) / 5)
    return math.sqrt(2 * t) / (1 - t)


mc_sd = math.sqrt(0.95 * 0.05 / nest_study["reps"])
default_res = nest_study["results"]["0.25"]
low = {e: [SUMMARIES[i] + f" {c:.2f}" for i, c in enumerate(res["coverage"]) if c < 0.90]
       for e, res in default_res.items()}
text = []
for e, cells in low.items():
    if not cells:
        text.append(f"* eps = {e}: every summary covers at least 0.90.")
    elif e == "inf":
        text.append(f"* eps = {e} (no noise): {', '.join(cells)}; a coverage from {nest_study['reps']} samples has a "
                    f"Monte Carlo sd of {mc_sd:.3f} at 0.95, so this is a real shortfall, which this study does not "
                    "explain.")
    else:
        sd = count_noise_sd(e)
        text.append(f"* eps = {e}: {', '.join(cells)}. The noise sd of each count is {sd:,.0f} households, "
                    f"{sd / nest_study['n']:.2f} times the {nest_study['n']} households: the counts carry little "
                    "information, the posterior moves towards the prior, and whether an interval covers depends on "
                    "where the prior puts the truth.")
display(Markdown("At the default, the summaries that cover less than 0.90:\n\n" + "\n".join(text)))

# %% [markdown]
# ## What we found

# %%
uni = nest_study["results"]["1.0"]
neither = [e for e in default_res if min(default_res[e]["coverage"]) < 0.90 and min(uni[e]["coverage"]) < 0.90
           and e != "inf"]
display(Markdown("\n".join([
    "* **Exactness.** Each block (true counts; any simplex vector) keeps its full conditional, checked against "
    f"brute force with planted bugs caught, and the whole sampler passes simulation-based calibration (smallest "
    f"rank-uniformity p = {sbc_p.min():.3f}).",
    f"* **Recovery.** With exact counts of 20,000 households the posterior means are within "
    f"{np.abs(est_big - truth).max():.4f} of the true summary probabilities (R-hat "
    f"{fit_big.posterior.attrs['rhat_max']:.3f}, bulk ESS {fit_big.posterior.attrs['ess_bulk_min']:.0f}).",
    f"* **The prior matters.** Under the supplement's uniform prior the 95% intervals of $S_3$ (all members of one "
    f"race) cover {uni['inf']['coverage'][2]:.2f} with exact counts and {uni['1.0']['coverage'][2]:.2f} at eps = 1; "
    f"under the default a = 0.25, {default_res['inf']['coverage'][2]:.2f} and {default_res['1.0']['coverage'][2]:.2f}. "
    + (f"At eps = {' and '.join(neither)} neither prior covers every summary: the counts are mostly noise (above). "
       if neither else "")
    + "This is a property of our simulated truth (households nearly uniform in race, as real ones are); the ACS "
    "data would show how much it matters there.",
])))

# %% [markdown]
# ## When to use this
#
# * An agency holding **nested records** (people in households) that wants to publish a few household-level
#   summaries under pure $\epsilon$-DP: `release_summaries` (sensitivity 1 per count, $\epsilon/5$ each, OpenDP's exact
#   sampler by default). Compare the noise sd of a count (above) with the number of households before choosing
#   $\epsilon$: where it is a large fraction of them, the counts say little.
# * An analyst holding the **noisy summaries** who wants coherent estimates of them with uncertainty: `fit_nested`
#   (its posterior `summary_probs`; check `attrs["converged"]`). The default prior gives calibrated intervals where
#   the counts are informative (table above); `paper=True` reproduces the supplement.
# * **Synthetic households** (`synthesize_households`): faithful to the five released summaries, nothing more.
#   Five counts cannot identify the roughly 50 parameters of $\theta$ (genders and most relationships are drawn from
#   the prior, and other interactions come from the class structure alone), so the synthetic data should be read
#   only through the released summaries, as the supplement's "further investigation is needed" warns.
# * The model (eq. (1)) and `summary_probs` also serve as a building block: any household event whose probability has
#   a closed form can be added the same way, checked against `household_table` enumeration as notebook 54 does.
