# %% [markdown]
# # The mechanisms checked: the laws of their noise, the reach, and the privacy audit at work
#
# * **For:** seeing each mechanism of notebook 02 tested against its law, and the privacy audit catch a planted bug.
# * **You need:** nothing: every release here is simulated from worst-case neighbouring data sets.
# * **You get:** goodness-of-fit and two-sample tests of every sampler (each with a planted wrong parameter it must catch), and the audit's lower bound on the epsilon spent against the claimed epsilon.

# %% [markdown]
# The mechanisms and their samplers are derived in notebook `02_mechanisms` (`dplit.mechanisms`), the audit in notebook
# `01_audit` (`dplit.audit`); this notebook only uses them and exports nothing.
#
# ## Parameters
#
# Sizes come from the size switch (`DPLIT_QUICK=1` gives the quick size used by the test suite);
# every random draw comes from a generator seeded here.

# %%
# %matplotlib inline
import math

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display
from scipy import stats

from dplit.config import is_quick, size
from dplit.mechanisms import (FALSE_REFUSAL, audit_epsilon, check_plausible, discrete_gaussian_logpmf,
                              geometric_mechanism, geometric_reach, laplace_mechanism, laplace_reach,
                              randomized_response, sample_discrete_gaussian,
                              sample_two_sided_geometric, two_sided_geometric_logpmf)

n_gof = size(full=400_000, quick=50_000)      # draws per goodness-of-fit check
n_audit = size(full=1_000_000, quick=200_000)  # outputs per data set in each audit
n_secure = size(full=100_000, quick=20_000)   # draws from the (unseeded) secure paths
SEED = 20261123
rng = np.random.default_rng(SEED)
print(f"quick mode: {is_quick()}; n_gof = {n_gof}, n_audit = {n_audit}")

# %% [markdown]
# ## 1. The Laplace mechanism
#
# The noise has the right scale (Kolmogorov-Smirnov against the Laplace cdf, and not against a 10% wider one); bad
# inputs raise.

# %%
sens, eps = 2.0, 0.7

y = laplace_mechanism(np.zeros(n_gof), sens, eps, rng=rng, secure=False)
ks = stats.kstest(y, stats.laplace(0.0, sens / eps).cdf)
ks_wrong = stats.kstest(y, stats.laplace(0.0, 1.1 * sens / eps).cdf)
print(f"Laplace vs its cdf: KS p = {ks.pvalue:.3f}; vs 10% wider scale: p = {ks_wrong.pvalue:.1e}")
assert ks.pvalue > 1e-3 and ks_wrong.pvalue < 1e-6
for bad in [dict(eps=0), dict(eps=-1), dict(sensitivity=0), dict(sensitivity=np.inf)]:
    kw = dict(sensitivity=1.0, eps=1.0) | bad
    try:
        laplace_mechanism([0.0], **kw)
    except ValueError as err:
        assert next(iter(bad)) in str(err)
    else:
        raise AssertionError(f"no error for {bad}")

# %% [markdown]
# The secure path: same law, checked with a two-sample Kolmogorov-Smirnov test against the fast path
# (the secure draws cannot be seeded, so the threshold is p > 1e-6: it fails by chance about once in a
# million runs, while the wrong-epsilon variant below lands near p = 1e-15).

# %%
y_fast = laplace_mechanism(np.full(n_secure, 3.0), 1.0, 0.5, rng=rng)
y_secure = laplace_mechanism(np.full(n_secure, 3.0), 1.0, 0.5, secure=True)
ks2 = stats.ks_2samp(y_fast, y_secure)
print(f"fast vs secure Laplace: two-sample KS p = {ks2.pvalue:.3f}")
assert ks2.pvalue > 1e-6
assert stats.ks_2samp(y_secure, laplace_mechanism(np.full(n_secure, 3.0), 1.0, 0.4, rng=rng)).pvalue < 1e-9

# %% [markdown]
# ## 2. The two-sided geometric mechanism
#
# A chi-square test of the draws against the pmf passes, and fails for a 3% wrong $t$.

# %%
def chisq_gof(draws, logpmf, min_expected=20):
    """Chi-square goodness of fit of integer draws to a pmf (tail cells pooled); returns the p-value."""
    draws = np.asarray(draws)
    lo, hi = draws.min(), draws.max()
    ks = np.arange(lo - 200, hi + 201)
    p = np.exp(logpmf(ks))
    n = draws.size
    # inner cells where the expected count is large enough; the rest pooled into two tails
    keep = np.flatnonzero(n * p >= min_expected)
    a, b = ks[keep[0]], ks[keep[-1]]
    inner = np.arange(a, b + 1)
    obs = np.concatenate([[np.sum(draws < a)], np.bincount(draws[(draws >= a) & (draws <= b)] - a,
                                                           minlength=b - a + 1), [np.sum(draws > b)]])
    p_inner = np.exp(logpmf(inner))
    exp_ = n * np.concatenate([[p[ks < a].sum()], p_inner, [p[ks > b].sum()]])
    ok = exp_ > 0
    return stats.chisquare(obs[ok], exp_[ok] * obs[ok].sum() / exp_[ok].sum()).pvalue


t = np.exp(-0.5)
g = sample_two_sided_geometric(t, n_gof, rng=rng)
p_ok = chisq_gof(g, lambda k: two_sided_geometric_logpmf(k, t))
p_bad = chisq_gof(g, lambda k: two_sided_geometric_logpmf(k, t * 1.03))
p_bad_geo = p_bad
print(f"two-sided geometric vs its pmf: chi-square p = {p_ok:.3f}; vs t * 1.03: p = {p_bad:.1e}")
assert p_ok > 1e-3 and p_bad < 1e-6
assert sample_two_sided_geometric(t, (3, 4), rng=0).shape == (3, 4)
for bad_t in (1.0, 0.0):
    try:
        sample_two_sided_geometric(bad_t, 5)
    except ValueError as err:
        assert "t must" in str(err)
    else:
        raise AssertionError(bad_t)

# %% [markdown]
# The fast and secure paths have the same law (chi-square test of homogeneity, with the power to tell a different
# epsilon apart); bad inputs raise.

# %%
g_fast = geometric_mechanism(np.full(n_secure, 7), 2, 1.0, rng=rng)
g_secure = geometric_mechanism(np.full(n_secure, 7), 2, 1.0, secure=True)
assert g_secure.dtype == np.int64 and g_fast.dtype == np.int64


def chisq_homogeneity(x, y, min_count=20):
    """Chi-square test that two integer samples have the same law (sparse values pooled)."""
    lo = min(x.min(), y.min())
    cx = np.bincount(x - lo, minlength=max(x.max(), y.max()) - lo + 1)
    cy = np.bincount(y - lo, minlength=cx.size)
    keep = (cx + cy) >= min_count
    table = np.array([np.append(cx[keep], cx[~keep].sum()), np.append(cy[keep], cy[~keep].sum())])
    table = table[:, table.sum(axis=0) > 0]
    return stats.chi2_contingency(table).pvalue


p_paths = chisq_homogeneity(g_fast, g_secure)
print(f"fast vs secure geometric: chi-square homogeneity p = {p_paths:.3f}")
assert p_paths > 1e-6  # unseeded OpenDP draws: a once-in-a-million false alarm
assert chisq_homogeneity(g_secure, geometric_mechanism(np.full(n_secure, 7), 2, 0.8, rng=rng)) < 1e-9
for bad_call, word in [(lambda: geometric_mechanism([1.5, 2], 1, 1), "counts"),
                       (lambda: geometric_mechanism([1e20, 2], 1, 1), "counts"),  # would not fit in int64
                       (lambda: geometric_mechanism([1, 2], 1, 0), "eps"),
                       (lambda: geometric_mechanism([1, 2], -1, 1), "sensitivity"),
                       (lambda: geometric_mechanism([1, 2], 0.5, 1), "sensitivity must be >= 1")]:
    try:
        bad_call()
    except ValueError as err:
        assert word in str(err)
    else:
        raise AssertionError(word)

# %% [markdown]
# ## 3. The reach, by simulation
#
# With a larger $p$ the reach is actually met: the rate of exceedance is at most $p$. A refusal names the field, the
# value and the range; bad arguments raise.

# %%
t_sim, p_sim = math.exp(-0.5), 1e-2
w_sim = geometric_reach(t_sim, 4, p=p_sim)
k_sim = laplace_reach(4, p=p_sim)
exceed_geo = np.mean(np.any(np.abs(sample_two_sided_geometric(t_sim, (n_gof // 4, 4), rng=rng)) > w_sim, axis=1))
exceed_lap = np.mean(np.any(np.abs(rng.laplace(0.0, 1.0, (n_gof // 4, 4))) > k_sim, axis=1))
print(f"D = 4, p = 0.01: geometric reach {w_sim} exceeded in {exceed_geo:.4f}, Laplace reach {k_sim:.2f} scales "
      f"exceeded in {exceed_lap:.4f} of releases; at p = 1e-9: k = {laplace_reach(4):.1f} scales")
assert exceed_geo <= p_sim * 1.2 and exceed_lap <= p_sim * 1.2
check_plausible([0.0, 5.0], -1.0, 5.0, "x", feasible="x in [0, 4]", noise="noise within 1")
try:
    check_plausible([0.0, 9.5], -1.0, 5.0, "x", feasible="x in [0, 4]", noise="noise within 1")
except ValueError as err:
    assert "x[1] = 9.5" in str(err) and "[-1, 5]" in str(err) and "x in [0, 4]" in str(err), err
else:
    raise AssertionError("an impossible value passed")
for bad_call in (lambda: geometric_reach(1.0, 3), lambda: laplace_reach(0), lambda: geometric_reach(0.5, 3, p=0.0)):
    try:
        bad_call()
    except ValueError:
        pass
    else:
        raise AssertionError("bad argument accepted")

# %% [markdown]
# ## 4. The discrete Gaussian
#
# The floating-point acceptance probabilities of the kernel are within a relative $10^{-12}$ of the exact ones
# (40-digit decimal arithmetic on the same $\sigma$), and not equal to them: close, not exact.

# %%
def acceptance_error(sigma, y_max):
    """Largest relative error of the kernel's float acceptance probability, |y| <= y_max (40 digits)."""
    import decimal
    ctx = decimal.Context(prec=40)
    t, s2 = math.floor(sigma) + 1.0, sigma * sigma
    S2 = ctx.multiply(decimal.Decimal(sigma), decimal.Decimal(sigma))  # the exact square of the float
    worst = 0.0
    for y in range(y_max + 1):
        d = abs(y) - s2 / t
        fast = math.exp(-d * d / (2.0 * s2))                     # what the kernel computes
        D = ctx.subtract(decimal.Decimal(y), ctx.divide(S2, decimal.Decimal(t)))
        exact = ctx.exp(ctx.divide(-ctx.multiply(D, D), 2 * S2))
        worst = max(worst, abs(float(ctx.divide(decimal.Decimal(fast), exact)) - 1.0))
    return worst


err = {s: acceptance_error(s, int(20 * s)) for s in [0.6, 1.7, 6.32, 100.3]}
print("largest relative error of the float acceptance probability:", {s: f"{e:.1e}" for s, e in err.items()})
assert all(0.0 < e < 1e-12 for e in err.values())  # not exact, but close

# %% [markdown]
# Checks: chi-square tests pass against the pmf for small and moderate $\sigma$ and fail for a 3% wrong
# $\sigma$; OpenDP's exact sampler has the same law; a bad $\sigma$ raises.

# %%
for s in [0.6, 1.7, 6.32]:
    dg = sample_discrete_gaussian(s, n_gof, rng=rng, secure=False)
    p_ok = chisq_gof(dg, lambda k, s=s: discrete_gaussian_logpmf(k, s))
    p_bad = chisq_gof(dg, lambda k, s=s: discrete_gaussian_logpmf(k, 1.03 * s))
    print(f"discrete Gaussian sigma = {s}: chi-square p = {p_ok:.3f}; vs 1.03 sigma: p = {p_bad:.1e}")
    assert p_ok > 1e-3 and p_bad < 1e-4
dg_secure = sample_discrete_gaussian(6.32, n_secure, secure=True)
p_paths = chisq_homogeneity(sample_discrete_gaussian(6.32, n_secure, rng=rng), dg_secure)
print(f"fast vs OpenDP discrete Gaussian: chi-square homogeneity p = {p_paths:.3f}")
assert p_paths > 1e-6  # unseeded OpenDP draws: a once-in-a-million false alarm
for bad_call in [lambda: sample_discrete_gaussian(0.0, 3), lambda: sample_discrete_gaussian(-1, 3),
                 lambda: discrete_gaussian_logpmf(0, -2.0)]:
    try:
        bad_call()
    except ValueError as err:
        assert "sigma" in str(err)
    else:
        raise AssertionError("sigma <= 0 accepted")

# %% [markdown]
# ## 5. Randomized response
#
# Binomial tests of the reporting rates (a wrong rate is caught), and the audit of the release: binary outputs give
# the events $\{y \ge 1\}$ and $\{y \le 0\}$, and the bound approaches $\log 3$ from below.

# %%
r1 = randomized_response(np.ones(n_gof, dtype=int), rng=rng)
r0 = randomized_response(np.zeros(n_gof, dtype=bool), rng=rng)
# binomial tests: P(report 1 | x = 1) = 3/4, P(report 1 | x = 0) = 1/4
assert stats.binomtest(int(r1.sum()), n_gof, 0.75).pvalue > 1e-3
assert stats.binomtest(int(r0.sum()), n_gof, 0.25).pvalue > 1e-3
assert stats.binomtest(int(r1.sum()), n_gof, 0.74).pvalue < 1e-4  # a wrong rate is caught
rr_audit = audit_epsilon(r1, r0)  # binary outputs: events {y >= 1}, {y <= 0}
print(f"randomized response: audit eps_lower = {rr_audit.eps_lower:.3f} <= log 3 = {np.log(3):.3f}")
assert 0.9 * np.log(3) < rr_audit.eps_lower <= np.log(3)
for bad_call, word in [(lambda: randomized_response([0, 2]), "x"),
                       (lambda: randomized_response([0, 1], p_keep=1.0), "p_keep")]:
    try:
        bad_call()
    except ValueError as err:
        assert word in str(err)
    else:
        raise AssertionError(word)

# %% [markdown]
# ## 6. The audit on worst-case neighbours
#
# A statistic with sensitivity $\Delta$ released at $\epsilon$ from
# $D$ (value 0) and $D'$ (value $\Delta$). The correct Laplace and geometric mechanisms stay below
# $\epsilon$; the same mechanisms run with half the noise (what a bug like a forgotten factor 2 in the
# sensitivity does) really spend $2\epsilon$, and the audit finds more than $\epsilon$ (close to $2\epsilon$).

# %%
def audit_laplace(eps, sens, n, rng, noise_factor=1.0):
    """Audit the Laplace mechanism on worst-case neighbours; noise_factor < 1 plants a bug."""
    ya = laplace_mechanism(np.zeros(n), sens, eps / noise_factor, rng=rng, secure=False)
    yb = laplace_mechanism(np.full(n, sens), sens, eps / noise_factor, rng=rng, secure=False)
    return audit_epsilon(ya, yb)


def audit_geometric(eps, sens, n, rng, noise_factor=1.0):
    """Audit the geometric mechanism on worst-case neighbours (counts 0 and sens)."""
    ya = geometric_mechanism(np.zeros(n, dtype=int), sens, eps / noise_factor, rng=rng, secure=False)
    yb = geometric_mechanism(np.full(n, sens, dtype=int), sens, eps / noise_factor, rng=rng, secure=False)
    return audit_epsilon(ya, yb)


eps = 1.0
audits = {
    "Laplace, correct": audit_laplace(eps, 1.0, n_audit, rng),
    "Laplace, half noise": audit_laplace(eps, 1.0, n_audit, rng, noise_factor=0.5),
    "geometric, correct": audit_geometric(eps, 2, n_audit, rng),
    "geometric, half noise": audit_geometric(eps, 2, n_audit, rng, noise_factor=0.5),
}
for label, res in audits.items():
    print(f"{label:>22}: eps_lower = {res.eps_lower:.3f} (point {res.eps_point:.3f}, event {res.event})")
assert audits["Laplace, correct"].eps_lower <= eps
assert audits["geometric, correct"].eps_lower <= eps
assert audits["Laplace, half noise"].eps_lower > 1.5 * eps
assert audits["geometric, half noise"].eps_lower > 1.5 * eps
# the same data on both sides carries no information
same = audit_epsilon(rng.laplace(size=n_audit), rng.laplace(size=n_audit))
assert same.eps_lower < 0.05

# %% [markdown]
# ## 7. The audit at work
#
# The audit bound against the claimed $\epsilon$, for the Laplace mechanism with the right noise and with a
# planted bug (noise scale multiplied by 0.5 and by 0.75), over a range of budgets. A correct mechanism
# stays on or under the diagonal; the buggy ones rise above it, to about $\epsilon / 0.5$ and $\epsilon / 0.75$.

# %%
eps_grid = np.array([0.25, 0.5, 1.0, 2.0, 3.0])
n_curve = size(full=400_000, quick=40_000)
curves = {f: np.array([audit_laplace(e, 1.0, n_curve, rng, noise_factor=f).eps_lower for e in eps_grid])
          for f in [1.0, 0.75, 0.5]}
print({f: np.round(c, 3) for f, c in curves.items()})
assert np.all(curves[1.0] <= eps_grid)
assert np.all(curves[0.5] > eps_grid) and np.all(curves[0.75][eps_grid >= 0.5] > eps_grid[eps_grid >= 0.5])

# %%
# NBVAL_IGNORE_OUTPUT
fig, ax = plt.subplots(figsize=(6, 4))
for f, c in curves.items():
    ax.plot(eps_grid, c, "o-", label=f"noise x {f}")
ax.plot(eps_grid, eps_grid, "k:", label="claimed epsilon")
ax.set_xlabel("claimed epsilon")
ax.set_ylabel("audit: eps_lower (95%)")
ax.legend()
fig.tight_layout()

# %% [markdown]
# ## When to use this

# %%
display(Markdown(f"""
* **Test a sampler by its law, with a planted error it must catch**: every test above passes for the right
  parameter and fails for one a few percent off (Laplace scale 10% wider: KS p = {ks_wrong.pvalue:.1e}; geometric
  $t$ 3% off: chi-square p = {p_bad_geo:.1e}). A test that cannot fail checks nothing.
* **Audit a mechanism before trusting it**: on worst-case neighbours with {n_audit:,} outputs per side, the correct
  Laplace mechanism at $\\epsilon$ = {eps:g} gave a 95% lower bound of {audits["Laplace, correct"].eps_lower:.3f}, and the
  same mechanism with half the noise {audits["Laplace, half noise"].eps_lower:.3f}: above the claim, so a bug.
* **Read a bound at or just under the claim as power, not proof**: randomized response's bound was
  {rr_audit.eps_lower:.3f} against $\\log 3$ = {np.log(3):.3f}; the audit cannot prove privacy.
"""))
