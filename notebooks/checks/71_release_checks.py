# %% [markdown]
# # Checks of the release: the noise, the split, bad input and a privacy audit
#
# * **For:** checking that `release` (notebook 15) does what Guo et al.'s Algorithm 1 and Theorem 2 say: unbiased noise of the stated scale, a uniform split, exact seeds and JSON, refused bad input, and privacy loss within the budget.
# * **You need:** nothing: the checks simulate their own data sets.
# * **You get:** statistical tests that pass on `release` and fail on planted faults (a wrong scale, a release that spends twice its budget), and an empirical lower bound on each part's epsilon.
#
# Reading order: after notebooks 15 (the release) and 14 (the record). This notebook exports nothing.

# %% [markdown]
# ## Parameters

# %%
import json as _json

import numpy as np
from IPython.display import Markdown, display
from scipy import stats

from dplit.config import is_quick, size
from dplit.dirichlet import censored_stat
from dplit.mechanisms import sample_two_sided_geometric
from dplit.release import Release, audit_release, laplace_scale, neighbouring_datasets, release

n_rel = size(full=4_000, quick=600)  # releases per statistical check
n_audit = size(full=20_000, quick=3_000)  # releases per neighbour in the privacy audit
SEED = 20261123
rng = np.random.default_rng(SEED)
CANDIDATES = (0.1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6)  # as listed in Sec. 5.1 (any order is accepted)
TC = 0.01
from dplit.censoring import PAPER_ALPHAS   # the five true parameters of Sec. 5.1, defined once (notebook 13)
ALPHAS = {f"alpha{k}": np.array(a) for k, a in enumerate(PAPER_ALPHAS, 1) if k in (1, 3, 5)}
print(f"quick mode: {is_quick()}; n_rel = {n_rel}, n_audit = {n_audit}")

# %% [markdown]
# ## 1. The noise: unbiased, with the stated variance
#
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
        r = release(X, eps1=eps1, eps2=eps2, candidates=CANDIDATES, tc=TC, rng=rng, secure=False, **kw)
        res.append((r.s_L - censored_stat(X, r.a)) / r.scale)
        a_sel.append(r.a)
    return np.concatenate(res), np.array(a_sel)


for key in ("alpha1", "alpha3", "alpha5"):
    X = rng.dirichlet(ALPHAS[key], size=1000)
    z, a_sel = standardised_residuals(X, n_rel, eps1=0.5, eps2=0.25, rng=rng)
    p_ks = stats.kstest(z, stats.laplace.cdf).pvalue
    p_wrong = stats.kstest(z * 2, stats.laplace.cdf).pvalue  # scale off by a factor 2
    assert p_ks > 1e-3 and p_wrong < 1e-6, (key, p_ks, p_wrong)
    assert abs(z.mean()) < 5 * np.sqrt(2 / z.size)  # unbiased for S_0(D, a)
    assert abs(z.var() / 2 - 1) < 5 * np.sqrt(5 / z.size)  # Var = 2 b^2 (Laplace kurtosis 6: sd of s^2/2 ~ sqrt(5/N))
    print(f"{key} (d = {X.shape[1]}): KS p = {p_ks:.3f}; mean {z.mean():+.4f}; var/2 = {z.var() / 2:.4f}; "
          f"selected a: {({float(v): int(c) for v, c in zip(*np.unique(a_sel, return_counts=True))})}")

# %% [markdown]
# **Where the selected $a$ lands.** The printed spread of the selected thresholds is wide, and leans towards the
# *smallest* candidates, although the true censoring rates of these $\boldsymbol\alpha$'s stay below $t_c$ up to
# $a = 10^{-2}$. The reason is the clamp in $s_{G,m} = \max\{0, s_m + \varepsilon^G_m\}$: for an (almost) empty count the
# clamped noise has mean $E[\max(0, \varepsilon^G)] = t/(1-t^2)$, about $4$ for $\epsilon_2 = 0.25$ ($t = e^{-1/8}$). The
# empty bins below $a_{opt}$ add about $4$ phantom censored records each, and with $n = 1000$ two or three of them
# exceed $t_c n = 10$. The rule is therefore conservative (smaller $a$: less bias, more noise) until $n\epsilon_2$
# is large compared with $M / t_c$; Theorem 1 is a statement about that limit (notebook 15, section 5).

# %%
from dplit.mechanisms import sample_two_sided_geometric

t = np.exp(-0.25 / 2)
clamped = np.maximum(sample_two_sided_geometric(t, 200_000, rng=rng), 0)
assert abs(clamped.mean() - t / (1 - t**2)) < 5 * clamped.std() / np.sqrt(clamped.size)
print(f"E[max(0, noise)] = {t / (1 - t**2):.2f} phantom records per empty count at eps2 = 0.25")

# %% [markdown]
# ## 2. The split
#
# $n_1 S_0(\mathbf D_1, a) + n_2 S_0(\mathbf D_2, a) = n S_0(\mathbf D, a)$ for any partition, and both scales satisfy
# $n_l b_l = -d\log(a)/\epsilon_1 =: B$. So $n_1 S_{L}(\mathbf D_1) + n_2 S_L(\mathbf D_2) - n S_0(\mathbf D, a)$ is a sum of two independent
# $\mathrm{Laplace}(0, B)$ variables: mean $0$, variance $4B^2$. The split must also be uniform: a marked record must
# land in $\mathbf D_1$ with probability $n_1/n$ (binomial test, with a practically noise-free release).

# %%
X = rng.dirichlet(ALPHAS["alpha3"], size=400)
comb = []
for _ in range(n_rel):
    r = release(X, eps1=1.0, eps2=0.5, candidates=CANDIDATES, tc=TC, n1=100, rng=rng, secure=False)
    assert (r.n1, r.n2, r.s_L1.shape) == (100, 300, (3,)) and np.isclose(r.scale1, 3 * r.scale)
    B = r.scale * r.n2
    comb.append((r.n1 * r.s_L1 + r.n2 * r.s_L - r.n * censored_stat(X, r.a)) / B)
comb = np.concatenate(comb)
assert abs(comb.mean()) < 5 * np.sqrt(4 / comb.size) and abs(comb.var() / 4 - 1) < 0.15

X_mark = np.full((40, 3), 1 / 3)
X_mark[0] = [0.98, 0.01, 0.01]  # the marked record
hits = 0
for _ in range(n_rel):
    r = release(X_mark, eps1=1e12, eps2=1.0, candidates=CANDIDATES, tc=TC, n1=10, rng=rng, secure=False)
    hits += not np.allclose(r.s_L1, np.log(1 / 3), atol=1e-6)
assert stats.binomtest(hits, n_rel, 10 / 40).pvalue > 1e-3
print(f"the marked record fell in D1 in {hits / n_rel:.3f} of the releases (expected 0.25)")

# %% [markdown]
# ## 3. Seeds, the secure path, JSON, bad input
#
# Same seed, same release; the OpenDP path gives a valid release with the
# same structure; the JSON round trip is exact; a tampered file is refused.

# %%
X = rng.dirichlet(ALPHAS["alpha3"], size=1000)
r1 = release(X, eps1=0.75, eps2=0.25, candidates=CANDIDATES, tc=TC, n1=250, rng=7, secure=False)
assert r1 == release(X, eps1=0.75, eps2=0.25, candidates=CANDIDATES, tc=TC, n1=250, rng=7, secure=False)
assert r1 != release(X, eps1=0.75, eps2=0.25, candidates=CANDIDATES, tc=TC, n1=250, rng=8, secure=False)
r_sec = release(X, eps1=0.75, eps2=0.25, candidates=CANDIDATES, tc=TC, n1=250, rng=7)
assert r_sec.eps_total == 1.0 and r_sec.budget.spent == 1.0 and r_sec.s_G.sum() > 0 and np.all(np.isfinite(r_sec.s_L1))
assert np.array_equal(r_sec.candidates, np.sort(CANDIDATES))
for r in (r1, r_sec, release(X, eps1=1.0, eps2=1.0, candidates=CANDIDATES, tc=TC, rng=1, secure=False)):
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
    must_fail(lambda X_bad=X_bad: release(X_bad, eps1=1.0, eps2=1.0, candidates=CANDIDATES, tc=TC, secure=False), "X")
ok = dict(X=X_ok, eps1=1.0, eps2=1.0, candidates=CANDIDATES, tc=TC)
for change, word in [(dict(eps1=0.0), "eps1"), (dict(eps2=-1.0), "eps2"), (dict(tc=1.0), "tc"), (dict(tc=0.0), "tc"),
                     (dict(candidates=[0.1, 1.5]), "candidates"), (dict(candidates=[0.1, 0.1]), "repeated"),
                     (dict(n1=20), "n1"), (dict(n1=25), "n1"), (dict(candidates=[0.01, 0.5]), "below 1/d")]:
    args = ok | change
    must_fail(lambda args=args: release(**args, secure=False), word)
must_fail(lambda: release(X_ok, eps1=1.0, eps2=1.0, candidates=CANDIDATES, tc=TC, n1=2.5, secure=False), "n1", TypeError)
X_zero = X_ok.copy()
X_zero[0] = [0.0, 1.0]  # zeros are valid data: censored like any small entry
r_zero = release(X_zero, eps1=1.0, eps2=1.0, candidates=CANDIDATES, tc=TC, rng=0, secure=False)
assert np.all(np.isfinite(r_zero.s_L))

# %% [markdown]
# ## 4. Privacy audit of `release` (Theorem 2)
#
# An audit runs the mechanism many times on two neighbouring data sets and bounds from below, with confidence
# 95%, how far apart the two output laws are (`dplit.mechanisms.audit_epsilon`, on scalar projections of the
# output). A correct mechanism must give lower bounds at or below its budget; a broken one must be caught.
#
# **Neighbours.** $n - 1$ records at the centre of the simplex plus one record that moves. For the counts, it moves
# from a corner $(1 - (d-1)a_1/2, a_1/2, \ldots, a_1/2)$ (censored at every candidate) to the centre, changing count
# cell. For the statistic, it moves from half the coordinates to the other half, the largest move of notebook 15, section 1
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
AUDIT_CANDS, AUDIT_TC, N_REC = (1e-3, 1e-2, 0.1), 0.05, 100
a_low = min(AUDIT_CANDS)  # corner entries a_1 / 2: censored at every candidate


def half_scale(X_, *, eps1, **kw):
    """A broken release: claims eps1 but spends 2 eps1 (half the Laplace scale)."""
    return release(X_, eps1=2 * eps1, **kw)


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


# %%
lap = {k: v["laplace"].eps_lower for k, v in audits.items()}
geo = {k: v["geometric"].eps_lower for k, v in audits.items()}
a_aud = audits["d=3, statistic move"]["a"]
share_d3 = 1 - 2 * np.log(2) / (-3 * np.log(a_aud))    # half -> other half for d = 3 (k = 1): bound minus 2 log 2
display(Markdown(f"""
The audit of the Laplace part gives {lap["d=2, statistic move"]:.2f} for $d = 2$ (claim $\\epsilon_1 = 1$), where the move
between opposite corners uses the whole bound at the selected $a$ = {audits["d=2, statistic move"]["a"]:g}, and
{lap["d=3, statistic move"]:.2f} for $d = 3$, where the move uses {share_d3:.0%} of the bound at $a$ = {a_aud:g} (the
additive $2\\log 2$ of notebook 15, section 1, matters when $a$ is large). The release with half the scale is caught in
both: {lap["d=2, statistic, HALF scale"]:.2f} and {lap["d=3, statistic, HALF scale"]:.2f}. The count audit gives
{geo["d=2, cell move"]:.2f} ($d = 2$) and {geo["d=3, cell move"]:.2f} ($d = 3$) when the record changes count cell, the
sensitivity of 2 the geometric mechanism is calibrated to (claim $\\epsilon_2 = 1$); the statistic move keeps the record
in its cell, and the counts show little ({geo["d=2, statistic move"]:.2f}, {geo["d=3, statistic move"]:.2f}).
"""))

# %% [markdown]
# ## When to use this

# %%
display(Markdown(f"""
* Run these checks after changing `release` or the mechanisms under it: the residual tests (section 1) catch a wrong
  noise scale, the split test (section 2) a non-uniform split, the audit (section 4) a release that spends more than
  it claims ({n_audit:,} releases per neighbour here; its lower bounds stayed at or below the claimed budgets for
  `release` and exceeded it for the broken release).
* An audit gives a lower bound on the privacy loss, not a proof: Theorem 2 is the guarantee, the audit checks that
  the code matches it. `audit_release(X, X_prime, eps1, eps2, candidates, tc, release_fn=...)` audits any mechanism
  with the signature of `release`.
"""))
