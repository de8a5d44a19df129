# %% [markdown]
# # The Dirichlet mechanism checked and applied: exact RDP on neighbour grids, private naive Bayes and Bayesian networks
#
# * **For:** seeing the Dirichlet mechanism of notebook 30 checked against independent computations, and used as in the paper's Sec. 5 against Gaussian and Laplace noise at equal Rényi DP.
# * **You need:** nothing for the checks and German Credit (shipped with dplit); the paper's other seven UCI tables for the full experiment (`python -m dplit.datasets ...`).
# * **You get:** the exact divergence against Alg. 1's bound (Figure 2, and on grids of neighbouring histograms), Thm. 2's tail against Monte Carlo, and the paper's Figures 3, 4 and 6 (Bayesian networks on Adult, Bank and German Credit), with Figure 4's and Figure 6's numbers beside the paper's statements.

# %% [markdown]
# The mechanism, its calibration, the exact Rényi divergence and the private models are derived in notebook
# `30_dirichlet_mechanism` (`dplit.dirichlet_mechanism`); this notebook only uses them and exports nothing.
#
# **The data.** The experiments use the paper's eight UCI tables (Adult, Bank Marketing, Default of Credit Card
# Clients, Optical Digits, South German Credit, Online Shoppers, Spambase, Thyroid; UCI Machine Learning Repository,
# CC BY 4.0), six of them as prepared in the paper's repository (`donlapark/Dirichlet-Mechanism`). Only South German
# Credit ships with dplit; `dplit.datasets.load_uci` reads the others from the folder named by `$DPLIT_DATA` or from
# the user cache, and `python -m dplit.datasets Adult Bank ...` downloads them there (sha256-checked). A table that
# is not there is skipped with one line saying so; scikit-learn's bundled digits stand in when fewer than two are
# left. The outputs stored with this notebook come from all eight.
#
# ## Parameters
#
# Sizes come from the size switch (`DPLIT_QUICK=1` gives the quick sizes of the test suite); every random draw comes
# from the generator seeded here.

# %%
# %matplotlib inline
import itertools
import math
import time

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display
from scipy import integrate, special, stats

from dplit import datasets
from dplit.config import size
from dplit.dirichlet_mechanism import (SQRT2, baseline_noise_scale, bayes_net_cpts, bayes_net_loglik,
                                       dirichlet_mechanism, dirichlet_mechanism_params, dirichlet_rdp_bound,
                                       kl_divergence, kl_tail_bound, laplace_rdp, naive_bayes_log_proba,
                                       private_naive_bayes, renyi_divergence_dirichlet)

rng = np.random.default_rng(20260418)
LAMS = (2, 5, 10, 50)                                     # Renyi orders checked throughout
EPS_GRID = np.logspace(-3, 1, size(full=21, quick=9))     # epsilon from 1e-3 to 10 (the paper's range)
n_mc = size(full=200_000, quick=20_000)                   # Monte Carlo draws for the tail checks
nb_eps = np.logspace(-3, 1, size(full=13, quick=5))       # epsilon grid of the naive Bayes experiment
nb_reps = size(full=10, quick=3)                          # private fits per (data set, epsilon)
NB_DATASETS = size(full=["Adult", "Bank", "CreditCard", "Digit", "GermanCredit", "Shopper", "Spam",
                         "Thyroid"], quick=["GermanCredit"])
bn_reps = size(full=20, quick=2)                          # splits and releases per (network, epsilon, mechanism)
fx, fxp = np.array([11.0, 8, 65, 25, 38, 0]), np.array([11.0, 7, 65, 25, 38, 1])   # the paper's Figure 2 pair

# %% [markdown]
# ## 1. The exact divergence against independent computations
#
# `renyi_divergence_dirichlet` (eqs. 11-12) is checked (i) for $d = 2$ (Beta laws) against numerical quadrature of
# $\int P^\lambda P'^{1-\lambda}$ and (ii) for $d = 6$ against a Monte Carlo estimate of the moment $E_P[(P/P')^{\lambda-1}]$.

# %%
def renyi_quadrature_beta(u, v, lam):
    """D_lam between Beta(u) and Beta(v) by quadrature (an independent check, d = 2)."""
    def integrand(y):
        return np.exp(lam * stats.beta.logpdf(y, *u) + (1 - lam) * stats.beta.logpdf(y, *v))

    val, _ = integrate.quad(integrand, 0, 1, epsabs=0, epsrel=1e-12, limit=200)
    return np.log(val) / (lam - 1)


for u, v, lam in [((2.0, 3.0), (3.0, 2.0), 2), ((3.5, 7.0), (2.5, 8.0), 5), ((30.0, 12.0), (29.0, 13.0), 10),
                  ((4.0, 4.0), (5.0, 3.0), 1.5)]:
    exact, quad = renyi_divergence_dirichlet(u, v, lam), renyi_quadrature_beta(u, v, lam)
    assert math.isclose(exact, quad, rel_tol=1e-8), (u, v, lam, exact, quad)

# (ii) d = 6, the Figure 2 pair: Monte Carlo of E_P[(P/P')^(lam-1)] at lam = 2 against exp((lam-1) D)
r_mc, a_mc = dirichlet_mechanism_params(0.5, 2.0)
u_mc, v_mc = r_mc * fx + a_mc, r_mc * fxp + a_mc
y_mc = rng.dirichlet(u_mc, size=n_mc)
ratio = np.exp(stats.dirichlet.logpdf(y_mc.T, u_mc) - stats.dirichlet.logpdf(y_mc.T, v_mc))
moment = math.exp(renyi_divergence_dirichlet(u_mc, v_mc, 2.0))
print(f"E[P/P']: Monte Carlo {ratio.mean():.5f} +- {ratio.std() / math.sqrt(n_mc):.5f}, exact {moment:.5f}")
assert abs(ratio.mean() - moment) < 4 * ratio.std() / math.sqrt(n_mc)

# %% [markdown]
# ## 2. Figure 2: the bound against the exact divergence
#
# The paper's pair $f(x) = (11, 8, 65, 25, 38, 0)$, $f(x') = (11, 7, 65, 25, 38, 1)$ with $\Delta_2^2 = 2$,
# $\Delta_\infty = 1$: for each $r$, $\alpha$ from Alg. 1, the claimed $\epsilon(r)$ of line 1 and the exact divergence.

# %%
r_axis = np.logspace(-2, 2, 60)
fig2 = {}
for lam in LAMS:
    alpha_r = 1 + 4 * (lam - 1) * r_axis
    exact = renyi_divergence_dirichlet(r_axis[:, None] * fx + alpha_r[:, None], r_axis[:, None] * fxp + alpha_r[:, None], lam)
    fig2[lam] = (dirichlet_rdp_bound(r_axis, lam), exact)
    assert np.all(exact <= fig2[lam][0])
print("exact / claimed epsilon at r = 0.01, 1, 100:",
      {lam: np.round(np.interp([0.01, 1, 100], r_axis, e / b), 3).tolist() for lam, (b, e) in fig2.items()})

# %%
# NBVAL_IGNORE_OUTPUT
fig, ax = plt.subplots(figsize=(7.5, 4.2))
for (lam, (bound, exact)), c in zip(fig2.items(), plt.cm.viridis(np.linspace(0, 0.85, len(LAMS)))):
    ax.loglog(r_axis, bound, color=c, label=fr"$\lambda={lam}$: Alg. 1 (claimed)")
    ax.loglog(r_axis, exact, color=c, ls="--", label=fr"$\lambda={lam}$: exact $D_\lambda$")
ax.set(xlabel="r", ylabel=r"$\epsilon$", title="Figure 2: RDP of the Dirichlet mechanism, claimed vs exact")
ax.legend(fontsize=9, ncol=2)
plt.show()

# %% [markdown]
# ## 3. The guarantee on a grid of neighbouring histograms (Thm. 1, App. D's worst cases)
#
# App. D bounds the divergence through the smallest Gamma argument, $\alpha - (\lambda-1)r\Delta_\infty$, reached when a
# record leaves a cell holding **one** record ($f_i(x) = 1 \to 0$) for an empty cell: the worst cases are tiny
# histograms. The grid below takes, for $d = 2, \dots, 6$, every move of one record between two cells of every histogram
# with counts in $\{0, 1, 2\}$, both directions, plus histograms with counts up to 200 and $10^6$ and the Figure 2
# pair, for $\lambda \in \{2, 5, 10, 50\}$ and $\epsilon$ from $10^{-3}$ to 10. A second grid checks the add/remove
# neighbours ($\Delta_2 = \Delta_\infty = 1$: one record added to one cell) with the calibration for $\Delta_2 = 1$.

# %%
def neighbour_grid(rng):
    """Pairs (f, f') of histograms in which one record moves between two cells."""
    pairs = []
    for d in range(2, 7):
        base = [np.array(c, dtype=float) for c in itertools.product(range(3), repeat=d)] if d <= 4 else \
               [np.zeros(d), np.eye(d)[0], np.ones(d), 2 * np.eye(d)[0]]
        for f in base:
            for i, j in itertools.permutations(range(d), 2):
                if f[i] >= 1:
                    g = f.copy()
                    g[i] -= 1
                    g[j] += 1
                    pairs.append((f, g))
        for _ in range(10):
            f = rng.integers(0, 200, size=d).astype(float)
            f[0] += 1
            g = f.copy()
            g[0] -= 1
            g[-1] += 1
            big = 5000 * f + 1
            pairs += [(f, g), (g, f), (big, big + (g - f))]
    return pairs + [(fx, fxp), (fxp, fx)]


pairs = neighbour_grid(rng)
worst = {}
for lam in LAMS:
    for eps in EPS_GRID:
        r, alpha = dirichlet_mechanism_params(eps, lam)
        div = max(renyi_divergence_dirichlet(r * f + alpha, r * g + alpha, lam) for f, g in pairs)
        worst[lam, eps] = div / eps
        assert div <= eps, (lam, eps, div)
        # add/remove neighbours, calibrated with delta2 = 1
        r1, alpha1 = dirichlet_mechanism_params(eps, lam, 1.0, 1.0)
        for f, _ in pairs[::7]:
            g = f.copy()
            g[0] += 1
            assert renyi_divergence_dirichlet(r1 * f + alpha1, r1 * g + alpha1, lam) <= eps
            assert renyi_divergence_dirichlet(r1 * g + alpha1, r1 * f + alpha1, lam) <= eps
ratios = np.array(list(worst.values()))
print(f"{len(pairs)} neighbouring pairs x {len(LAMS)} orders x {EPS_GRID.size} epsilons: "
      f"largest exact/claimed = {ratios.max():.3f}, smallest = {ratios.min():.3f}")
assert ratios.max() <= 1.0

# %% [markdown]
# The bound is never exceeded; at its worst case (a cell of one record emptied) it is tight within the factor
# printed above, as Figure 2 suggests.
#
# ## 4. Not pure DP, numerically (Prop. 3)
#
# Notebook 30, Sec. 5: between $x = (0, 0, 0)$ and $x' = (1, 0, 0)$ the privacy loss at $y$ is
# $\log\frac{B(u')}{B(u)} - r\log y_1$, a line of slope $-r$ in $\log y_1$, unbounded; yet large losses are rare under $M(x)$.

# %%
r_p3, a_p3 = dirichlet_mechanism_params(1.0, 5)
u_p3, v_p3 = np.full(3, a_p3), np.array([r_p3, 0, 0]) + a_p3
y1 = np.logspace(-12, -0.05, 50)
Y = np.column_stack([y1, (1 - y1) / 2, (1 - y1) / 2])
loss = stats.dirichlet.logpdf(Y.T, u_p3) - stats.dirichlet.logpdf(Y.T, v_p3)
assert np.allclose(np.diff(loss) / np.diff(np.log(y1)), -r_p3)      # slope -r in log y1: unbounded
sample = rng.dirichlet(u_p3, size=n_mc)
loss_mc = stats.dirichlet.logpdf(sample.T, u_p3) - stats.dirichlet.logpdf(sample.T, v_p3)
print(f"loss at y1 = 1e-12: {loss[0]:.1f};  P(loss > 2 eps) under M(x): {np.mean(loss_mc > 2.0):.2e}")

# %%
# NBVAL_IGNORE_OUTPUT
fig, axs = plt.subplots(1, 2, figsize=(7.5, 3.2))
axs[0].semilogx(y1, loss)
axs[0].set(xlabel="$y_1$", ylabel=r"$\log P(y)/P'(y)$", title="Prop. 3: privacy loss is unbounded")
axs[1].hist(loss_mc, bins=100, density=True)
axs[1].set(xlabel="privacy loss", ylabel="density", title=r"its law under $M(x)$ ($\epsilon = 1$, $\lambda = 5$)")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 5. Thm. 2's KL tail against Monte Carlo
#
# For several $(p, \beta, \alpha, \eta)$ where the theorem applies, the empirical tail never exceeds
# the bound (nor does its Clopper-Pearson lower 99.9% limit, which guards against sampling noise the other way).
# The table prints how loose the bound is.

# %%
tail_rows = []
for p, alpha, eta in [(np.array([0.5, 0.5]), 1.0, 0.05), (np.array([0.7, 0.2, 0.1]), 2.0, 0.1),
                      (fx / fx.sum(), 1.0, 0.2), (np.full(10, 0.1), 1.0, 0.5), (np.array([0.98, 0.01, 0.01]), 3.0, 0.05),
                      (np.array([0.98, 0.01, 0.01]), 1.0, 2.0), (np.array([0.9, 0.1]), 0.5, 1.0)]:
    d = p.size
    beta_min = d * alpha / math.expm1(eta / 2)
    for beta in beta_min * np.array([1.0, 4.0, 16.0]):
        q = rng.dirichlet(beta * p + alpha, size=n_mc)
        hits = int(np.sum(kl_divergence(p, q) > eta))
        bound = kl_tail_bound(eta, beta, d, alpha)
        lo = stats.beta.ppf(0.001, hits, n_mc - hits + 1) if hits else 0.0
        tail_rows.append((d, alpha, eta, beta, hits / n_mc, bound))
        assert hits / n_mc <= bound and lo <= bound
print(" d  alpha   eta      beta   P[KL > eta]   Thm. 2 bound")
for row in tail_rows:
    print("{:2d} {:6.1f} {:5.2f} {:9.1f} {:12.2e} {:13.2e}".format(*row))

# %% [markdown]
# ## 6. The baselines' calibration (notebook 30, Sec. 8)
#
# Checks: Mironov's formula against quadrature of the two Laplace densities; the calibrated scales spend exactly
# $\epsilon$; the paper's closed-form Laplace scale, for comparison.

# %%
def laplace_ratio_moment(z, lam, b):
    """p(z)^lam q(z)^(1 - lam) for Laplace(0, b) and Laplace(1, b)."""
    return np.exp((-lam * abs(z) + (lam - 1) * abs(z - 1)) / b) / (2 * b)


for lam, b in [(2, 0.7), (5, 3.0), (10, 20.0)]:
    val = sum(integrate.quad(laplace_ratio_moment, lo, hi, args=(lam, b), epsabs=0, epsrel=1e-12, limit=200)[0]
              for lo, hi in [(-np.inf, 0), (0, 1), (1, np.inf)])
    assert math.isclose(np.log(val) / (lam - 1), laplace_rdp(lam, b), rel_tol=1e-9)
assert math.isclose(laplace_rdp(5, 1e6), 0.5 * 5 / 1e12, rel_tol=1e-5)   # small shifts: lam s^2 / 2
assert math.isclose(laplace_rdp(5, 9.99), laplace_rdp(5, 10.01), rel_tol=1e-2)  # the two branches meet
for eps in (1e-3, 0.1, 10):
    b = baseline_noise_scale("laplace", eps, 5)
    assert math.isclose(2 * laplace_rdp(5, b), eps, rel_tol=1e-12)
    print(f"eps = {eps:g}: Laplace scale exact {b:.4g}, paper's closed form sqrt(2 lam / eps) = {math.sqrt(10 / eps):.4g}; "
          f"Gaussian sigma {baseline_noise_scale('gaussian', eps, 5):.4g}")

# %% [markdown]
# ## 7. Bad inputs raise, naming the argument
#
# The calibration, the mechanism and the private naive Bayes model refuse bad arguments with a `ValueError` or
# `TypeError` that names them.

# %%
for bad, kwargs, word in [((0.0, 5), {}, "eps"), ((-1.0, 5), {}, "eps"), ((1.0, 1.0), {}, "lam"),
                          ((1.0, 0.5), {}, "lam"), ((1.0, 5, 0.0), {}, "delta2"),
                          ((1.0, 5, SQRT2, -1.0), {}, "delta_inf"), ((1.0, 5), {"lower_bound": -1}, "lower_bound"),
                          ((float("nan"), 5), {}, "eps")]:
    try:
        dirichlet_mechanism_params(*bad, **kwargs)
    except ValueError as err:
        assert word in str(err), err
    else:
        raise AssertionError(f"accepted {bad} {kwargs}")
try:
    dirichlet_mechanism_params("1", 5)
except TypeError as err:
    assert "eps" in str(err)

for bad, exc in [([1.0, -1.0], ValueError), ([3.0], ValueError), ([1.0, np.inf], ValueError),
                 (["a", "b"], TypeError), ([True, False], TypeError)]:
    try:
        dirichlet_mechanism(bad, 1.0, 5, rng=0)
    except exc as err:
        assert "counts" in str(err)
    else:
        raise AssertionError(f"accepted counts={bad}")
toy_codes = np.array([[0, 1], [1, 1], [1, 0], [0, 0], [1, 1]])
toy_y = np.array([0, 0, 1, 1, 1])
for bad in [dict(mechanism="gauss"), dict(eps=0.0), dict(eps=-2.0)]:
    try:
        private_naive_bayes(toy_codes, toy_y, [2, 2], 2, **bad)
    except ValueError as err:
        assert ("mechanism" in str(err)) or ("eps" in str(err))
    else:
        raise AssertionError(bad)

# %% [markdown]
# ## 8. Differentially private naive Bayes on the paper's data sets (Sec. 5.1, Figures 3-4)
#
# `private_naive_bayes` (notebook 30, Sec. 9) releases the class histogram and each feature's class-by-level table at
# $(\lambda, \epsilon/(K+1))$-RDP, by the Dirichlet mechanism or by calibrated Gaussian or Laplace noise on the counts.
# Scores on a 70/30 split: test cross-entropy $-\frac1n\sum\log\hat P(y_i \mid x_i)$ and accuracy.
#
# Each data set is read from `$DPLIT_DATA` or the user cache (`dplit.datasets`; nothing is downloaded here: see the
# top of this notebook). German Credit ships inside the package, so the quick run needs no file at all; the quick run
# adds scikit-learn's bundled digits, and so does a run that finds fewer than two of the paper's tables.

# %%
MECHS = ("dirichlet", "gaussian", "laplace")


def load_table(name):
    if name == "digits":
        return datasets.load_digits()
    return datasets.load_uci(name, download=False)


def run_naive_bayes(table, eps_values, reps, rng):
    """Test cross-entropy and accuracy for each mechanism, epsilon and repetition (one 70/30 split)."""
    itr, ite = datasets.train_test_split(table.shape[0], test_size=0.3, rng=rng)
    ctr, cte, levels = datasets.encode_features(table.X[itr], table.X[ite], n_bins=10)
    classes, y_all = np.unique(table.y, return_inverse=True)
    ytr, yte = y_all[itr], y_all[ite]
    out = {m: np.empty((2, len(eps_values), reps)) for m in MECHS}

    def score(model):
        lpr = naive_bayes_log_proba(model, cte, levels)
        return -np.mean(np.maximum(lpr[np.arange(yte.size), yte], np.log(1e-20))), np.mean(lpr.argmax(1) == yte)

    mle = score(private_naive_bayes(ctr, ytr, levels, classes.size, mechanism="mle"))
    const_j = [j for j in range(table.X.shape[1]) if np.unique(table.X[itr, j]).size < 2]
    constant = tuple(table.feature_names[j] for j in const_j)
    for i, eps in enumerate(eps_values):
        for m in MECHS:
            for k in range(reps):
                out[m][:, i, k] = score(private_naive_bayes(ctr, ytr, levels, classes.size, mechanism=m,
                                                            eps=eps, lam=5, rng=rng))
    return {"mle": mle, "n_classes": classes.size, "K": levels.size, "n_train": ytr.size,
            "attributes": table.X.shape[1], "constant": constant, "constant_at": tuple(const_j),
            "constant_values": tuple(float(table.X[itr[0], j]) for j in const_j), **out}


nb_names = NB_DATASETS + size(full=[], quick=["digits"])
nb_results, t0 = {}, time.perf_counter()
extra = [] if "digits" in nb_names else ["digits"]    # a stand-in, only when fewer than two tables are here
missing = []
for name in nb_names + extra:
    if name in extra:
        if len(nb_results) >= 2:
            break
        print("fewer than two of the paper's tables are here: scikit-learn's bundled digits stand in")
    try:
        table = load_table(name)
    except FileNotFoundError:                     # no local copy: skip it (one line below says how to get it)
        missing.append(name)
        continue
    nb_results[name] = run_naive_bayes(table, nb_eps, nb_reps, rng)
    res = nb_results[name]
    print(f"{name:>22}: n = {table.shape[0]:6d}, K = {res['K']:2d}, classes = {res['n_classes']:2d}; "
          f"non-private CE {res['mle'][0]:.3f}, accuracy {res['mle'][1]:.3f}")
if missing:
    print(f"skipped, not in $DPLIT_DATA or the user cache: {', '.join(missing)} (`python -m dplit.datasets "
          f"{' '.join(missing)}` downloads them, sha256-checked)")
print(f"naive Bayes experiment: {time.perf_counter() - t0:.1f} s")

# %% [markdown]
# **Table 1's attribute counts.** The paper's Table 1 gives Shopper 17 attributes and Digit 64, where the runs above
# print $K$ = 15 and 62. $K$ counts the attributes the model uses: `encode_features` drops a column that holds one
# value on the training part, as the paper's own code does (`X_train.loc[:, cat_counts != 1]`, after it prints the
# number of columns of the file). The check below counts, per data set, the columns of the file, the columns constant
# on the training part, and asserts that the file has Table 1's count and that $K$ is the file's count less the
# constant columns.

# %%
#: Ponnoprat (2023), Table 1: the number of attributes of each data set.
PAPER_TABLE1_ATTRIBUTES = {"CreditCard": 23, "Thyroid": 21, "Shopper": 17, "Digit": 64, "GermanCredit": 20,
                           "Bank": 20, "Spam": 57, "Adult": 13}
t1_lines = []
for name, res in nb_results.items():
    if name not in PAPER_TABLE1_ATTRIBUTES:
        continue
    assert res["attributes"] == PAPER_TABLE1_ATTRIBUTES[name], (name, res["attributes"])
    assert res["K"] == res["attributes"] - len(res["constant"]), (name, res["K"], res["constant"])
    print(f"{name:>14}: Table 1 {PAPER_TABLE1_ATTRIBUTES[name]:2d}, columns of the file {res['attributes']:2d}, "
          f"constant on the training part {len(res['constant'])} {list(res['constant'])}, K = {res['K']}")
    if res["constant"]:
        t1_lines.append(f"* **{name}**: {res['attributes']} columns in the file, as in Table 1; "
                     f"{', '.join(res['constant'])} hold{'s' if len(res['constant']) == 1 else ''} one value in "
                     f"every training row, so $K$ = {res['K']}.")
if {"Shopper", "Digit"} <= set(nb_results):      # what the sentence under the table says of these columns
    assert nb_results["Shopper"]["constant"] == ("BounceRates", "ExitRates")
    assert set(nb_results["Shopper"]["constant_values"]) == {0.0} == set(nb_results["Digit"]["constant_values"])
    assert all(j // 8 in (0, 7) or j % 8 in (0, 7) for j in nb_results["Digit"]["constant_at"])   # 8 x 8 edge
if t1_lines:
    display(Markdown("Where $K$ differs from Table 1, the reason:\n\n" + "\n".join(t1_lines) + "\n\nIn Shopper the "
                     "two columns are BounceRates and ExitRates, rates between 0 and 0.2 in UCI's original, which the "
                     "paper's file stores as 0; Digit's two are pixels at the edge of the 8 x 8 grid that no image "
                     "inks. Table 1 counts the columns of the file; the models, the paper's and these, use the others."
                     if {"Shopper", "Digit"} <= set(nb_results) else ""))

# %% [markdown]
# The paper's finding: at equal $(\lambda, \epsilon)$ the Dirichlet mechanism has the lowest test cross-entropy of the
# three. We count, per data set, the $\epsilon$ values at which its mean CE (over the repetitions) is below both others.

# %%
wins = {}
for name, res in nb_results.items():
    ce = {m: res[m][0].mean(axis=1) for m in MECHS}
    wins[name] = np.mean((ce["dirichlet"] < ce["gaussian"]) & (ce["dirichlet"] < ce["laplace"]))
    print(f"{name:>22}: Dirichlet lowest CE at {wins[name]:.0%} of the epsilons; CE at eps = {nb_eps[0]:g} / {nb_eps[-1]:g}: "
          + ", ".join(f"{m} {ce[m][0]:.3g}/{ce[m][-1]:.3g}" for m in MECHS))
assert len(nb_results) >= 2
assert sum(w == 1.0 for w in wins.values()) >= 2    # on at least two data sets, at every epsilon

# %% [markdown]
# The figures show the mean over the fits (line) and their 10-90% range (band); dotted, the non-private model; dashed
# grey in Figure 3, the uniform guess $\log d$. The baselines are calibrated to exactly the same $(\lambda, \epsilon)$
# (Section 6 above), Laplace more tightly than in the paper's code. What the run shows:

# %%
ce_mean = {name: {m: res[m][0].mean(axis=1) for m in MECHS} for name, res in nb_results.items()}
acc_mean = {name: {m: res[m][1].mean(axis=1) for m in MECHS} for name, res in nb_results.items()}
everywhere = [name for name, w in wins.items() if w == 1.0]
gain = {name: min(c["gaussian"][0], c["laplace"][0]) / c["dirichlet"][0] for name, c in ce_mean.items()}
above_uniform = [name for name, c in ce_mean.items() if c["dirichlet"][0] > np.log(nb_results[name]["n_classes"])]
beats_mle = [name for name, c in ce_mean.items() if np.any(c["dirichlet"] < nb_results[name]["mle"][0])]
acc_se = {name: {m: res[m][1][-1].std(ddof=1) / math.sqrt(nb_reps) for m in MECHS} for name, res in nb_results.items()}
acc_behind = [name for name, a in acc_mean.items()     # behind the better baseline by more than 2 MC errors
              if a["dirichlet"][-1] < max(a[m][-1] - 2 * math.hypot(acc_se[name]["dirichlet"], acc_se[name][m])
                                          for m in ("gaussian", "laplace"))]
acc_ahead = [name for name in acc_mean if name not in acc_behind]
display(Markdown(f"""
* **Cross-entropy (Figure 3).** The Dirichlet mechanism has the lowest mean test cross-entropy at every $\\epsilon$ on
  {len(everywhere)} of the {len(nb_results)} data sets ({', '.join(everywhere)}); at $\\epsilon$ = {nb_eps[0]:g} the
  better baseline's cross-entropy is {min(gain.values()):.1f} to {max(gain.values()):.1f} times its own, because the
  clipped additive noise puts near-zero probabilities on observed levels.
* **Against the uniform guess.** At $\\epsilon$ = {nb_eps[0]:g} its cross-entropy is above $\\log d$ on
  {', '.join(above_uniform) or 'no data set'}: its tables are then close to the prior's uniform laws.
* **Against the non-private model.** At some $\\epsilon$ it beats the non-private fit on
  {', '.join(beats_mle) or 'no data set'}: the pull of $\\alpha$ towards uniform level laws tempers naive Bayes'
  overconfidence.
* **Accuracy (Figure 4)** has no uniform winner, as the paper says: at $\\epsilon$ = {nb_eps[-1]:g} the Dirichlet
  mechanism is ahead or level (within 2 Monte Carlo errors) on {', '.join(acc_ahead) or 'no data set'} and behind on
  {', '.join(acc_behind) or 'no data set'}, where its bias towards uniform costs more than the noise it avoids.
"""))

# %%
# NBVAL_IGNORE_OUTPUT
def plot_nb(metric, title):
    n = len(nb_results)
    ncol = min(n + 1, 3)                     # one panel more than data sets: it holds the legend
    nrow = (n + ncol) // ncol
    fig, axs = plt.subplots(nrow, ncol, figsize=(7.5, 2.5 * nrow), squeeze=False)
    for ax, (name, res) in zip(axs.flat, nb_results.items()):
        for m, c in zip(MECHS, ("C0", "C1", "C2")):
            v = res[m][metric]
            ax.plot(nb_eps, v.mean(1), color=c, label=m)
            ax.fill_between(nb_eps, np.percentile(v, 10, axis=1), np.percentile(v, 90, axis=1), color=c, alpha=0.2)
        ax.axhline(res["mle"][metric], color="k", ls=":", label="non-private")
        if metric == 0:
            ax.axhline(np.log(res["n_classes"]), color="grey", ls="--", lw=0.8, label="uniform guess")
            ax.set_yscale("log")
        ax.set(xscale="log", title=name, xlabel=r"$\epsilon$")
    for ax in list(axs.flat)[n:]:
        ax.axis("off")
    axs.flat[n].legend(*axs.flat[0].get_legend_handles_labels(), loc="center", fontsize=9)
    fig.suptitle(title)
    plt.tight_layout()
    plt.show()


plot_nb(0, r"Figure 3: test cross-entropy of private naive Bayes ($\lambda = 5$)")
plot_nb(1, r"Figure 4: test accuracy of private naive Bayes ($\lambda = 5$)")

# %% [markdown]
# ### Figure 4 in numbers
#
# The accuracies behind Figure 4: for each data set and $\epsilon$, the mean test accuracy of each mechanism over its
# private fits and, after $\pm$, its Monte Carlo error (standard deviation over the fits divided by the square root of
# their number). There is one 70/30 split per data set, so the error is that of the private draws;
# bold marks the highest mean, and the non-private accuracy follows the data set's name.

# %%
def mc_mean(v):
    """Mean over the repetitions (last axis) and its Monte Carlo standard error."""
    return v.mean(-1), v.std(-1, ddof=1) / math.sqrt(v.shape[-1])


acc = {name: {m: mc_mean(res[m][1]) for m in MECHS} for name, res in nb_results.items()}
lines = ["| data set (non-private) | $\\epsilon$ | Dirichlet | Gaussian | Laplace |", "|:--|--:|--:|--:|--:|"]
for name, a in acc.items():
    for i, eps in enumerate(nb_eps):
        best = max(MECHS, key=lambda m: a[m][0][i])
        cells = [f"{a[m][0][i]:.3f} ± {a[m][1][i]:.3f}" for m in MECHS]
        cells = [f"**{c}**" if m == best else c for m, c in zip(MECHS, cells)]
        label = f"{name} ({nb_results[name]['mle'][1]:.3f})" if i == 0 else ""
        lines.append(f"| {label} | {eps:.3g} | " + " | ".join(cells) + " |")
display(Markdown("\n".join(lines)))

# %% [markdown]
# The paper's statements about Figure 4 (Sec. 5.1), each beside what this run shows and a verdict. A difference counts
# as significant when it exceeds twice its Monte Carlo error.

# %%
def against_gaussian(name, mask):
    """Dirichlet minus Gaussian accuracy at the epsilons of ``mask``: counts of higher, significantly higher/lower."""
    (md, sd), (mg, sg) = acc[name]["dirichlet"], acc[name]["gaussian"]
    diff, se = (md - mg)[mask], np.hypot(sd, sg)[mask]
    return {"m": int(mask.sum()), "higher": int(np.sum(diff > 0)), "sig_higher": int(np.sum(diff > 2 * se)),
            "sig_lower": int(np.sum(diff < -2 * se)), "gap": float(np.abs(diff).max()), "se": float(se.max())}


# (a) no clear winner; the Dirichlet mechanism as good as the others in most cases
n_cells, n_level, best_count, behind = 0, 0, dict.fromkeys(MECHS, 0), {}
for name, a in acc.items():
    other = np.maximum(a["gaussian"][0], a["laplace"][0])
    se_other = np.where(a["gaussian"][0] >= a["laplace"][0], a["gaussian"][1], a["laplace"][1])
    level = a["dirichlet"][0] >= other - 2 * np.hypot(a["dirichlet"][1], se_other)
    n_cells, n_level = n_cells + level.size, n_level + int(level.sum())
    for i in range(nb_eps.size):
        best_count[max(MECHS, key=lambda m: a[m][0][i])] += 1
    if (~level).sum() * 2 >= level.size:
        behind[name] = nb_eps[~level].min()
no_winner = max(best_count.values()) < 0.9 * n_cells
verdict_a = "agrees" if (n_level * 2 > n_cells and no_winner) else "differs"
rows = [("In terms of accuracy, there are no clear winner among the three mechanisms; the Dirichlet mechanism performs "
         "as well as the other mechanisms in most cases.",
         f"Dirichlet level with (within 2 MC errors of) the better baseline, or ahead, in {n_level} of {n_cells} "
         f"(data set, $\\epsilon$) cells; highest mean in {best_count['dirichlet']}, Gaussian in {best_count['gaussian']}, "
         f"Laplace in {best_count['laplace']}. Behind at half the $\\epsilon$ or more on "
         + (", ".join(f"{n} (from $\\epsilon$ = {e:.3g})" for n, e in behind.items()) or "no data set") + ".",
         verdict_a + (": where it is behind, its pull towards uniform tables costs more than the noise it avoids "
                      "(Alg. 1's $\\alpha = 1 + 4(\\lambda - 1)r$ weighs like $\\alpha/r = 1/r + 4(\\lambda - 1)$, more than "
                      f"{4 * (5 - 1)} pseudo-records in every cell at $\\lambda$ = 5, however large $\\epsilon$)"
                      if behind else ""))]
claims = [("Digit", nb_eps > 0.1, "on the Digit dataset for $\\epsilon > 0.1$"),
          ("Adult", nb_eps < 0.1, "on the Adult dataset for $\\epsilon < 0.1$"),
          ("Bank", np.ones(nb_eps.size, bool), "on the Bank dataset for all values of $\\epsilon$")]
for name, mask, where in claims:
    quote = f"[The Dirichlet mechanism] has higher accuracies than the Gaussian mechanism {where}."
    if name not in acc:
        rows.append((quote, "not run: the data set is not here", "not checked"))
        continue
    c = against_gaussian(name, mask)
    ours = (f"higher at {c['higher']} of {c['m']} $\\epsilon$; significantly higher at {c['sig_higher']}, "
            f"significantly lower at {c['sig_lower']}")
    mle_acc, n_train = nb_results[name]["mle"][1], nb_results[name]["n_train"]
    spread = max(abs(acc[name][m][0][mask] - mle_acc).max() for m in ("dirichlet", "gaussian"))
    level = (f"the gaps (at most {c['gap']:.3f}) are of the size of the Monte Carlo error (up to {c['se']:.3f}): with "
             f"{n_train:,} training records neither noise moves the tables much, and both stay within {spread:.3f} of "
             f"the non-private accuracy {mle_acc:.3f}")
    if c["higher"] == c["m"] and 2 * c["sig_higher"] >= c["m"] and c["sig_lower"] == 0:
        verdict = "agrees"
    elif 2 * c["higher"] >= c["m"] and c["sig_lower"] == 0:
        verdict = "agrees in direction, not clearly in size: " + level
    else:
        verdict = "differs: " + level
    if name == "Adult" and verdict != "agrees":
        verdict += ("; and this Adult is UCI's table without `fnlwgt`, while which 13 columns the paper kept is not "
                    "known (data README, 4g)")
    rows.append((quote, ours, verdict))
display(Markdown("| the paper (Sec. 5.1, Figure 4) | this run | verdict |\n|:--|:--|:--|\n"
                 + "\n".join(f"| {q} | {o} | {v} |" for q, o, v in rows)))

# %% [markdown]
# ## 9. Parameter estimation of discrete Bayesian networks (Sec. 5.2, Figures 5-6)
#
# `bayes_net_cpts` releases each node's conditional table at $(\lambda, \epsilon/K)$-RDP, $K$ the number of nodes
# (notebook 30, Sec. 10), and `bayes_net_loglik` scores a test set: eq. 8 divided by the number of test records (the
# paper's Figure 6 plots the sum). The networks are the paper's Figure 5, parts of the networks of Le Quy et al. (2022);
# the extracted text lacks the figure, so its edges are read from the authors' notebook `bayesian_networks.ipynb`
# (`donlapark/Dirichlet-Mechanism`): Adult 7 nodes, Bank Marketing 10, South German Credit 14. As in the paper: a 70/30
# split, numeric columns with more than 30 distinct values in 10 quantile bins, $\lambda = 5$, $\epsilon$ from
# $10^{-3}$ to 10. Each repetition draws a new split and new releases, so the Monte Carlo error covers both.
#
# Adult and Bank are read from `$DPLIT_DATA` or the user cache (not shipped; `python -m dplit.datasets Adult Bank`
# downloads them from UCI, sha256-checked); a table that is not there is skipped with one line saying so. German
# Credit ships with dplit.
#
# Two choices of the authors' code are not followed, because the text says otherwise or a private release cannot
# make them: it divides $\epsilon$ by the number of data sets (3) where the text's budget is $\epsilon/K$; and it
# releases only the cells seen in the training data (its counts come from `value_counts`), so test records in unseen
# cells drop out of its sum. Here every cell of every table is released, zero or not.

# %%
BN_NETS = {   # node: its parents (Figure 5)
    "Adult": {"age": [], "sex": [], "education": ["age"], "occupation": ["age", "sex", "education"],
              "capital-gain": ["sex", "education", "occupation"],
              "capital-loss": ["sex", "occupation", "capital-gain"],
              "income": ["occupation", "capital-gain", "capital-loss"]},
    "Bank": {"month": [], "day_of_week": [], "housing": ["month"], "pdays": ["housing", "month"],
             "poutcome": ["housing", "pdays"], "previous": ["poutcome"], "contact": ["previous", "month"],
             "campaign": ["day_of_week", "month"], "duration": ["housing", "contact", "campaign"],
             "y": ["poutcome", "duration", "month"]},
    "GermanCredit": {"housing": [], "property": ["housing"], "age": ["housing"], "amount": ["property"],
                     "other_debtors": ["property"], "sex_marital_status": ["amount"], "purpose": ["amount"],
                     "installment_rate": ["amount"], "duration": ["amount", "installment_rate"],
                     "people_liable": ["sex_marital_status"], "foreign_worker": ["duration"],
                     "number_credits": ["age"], "credit_history": ["number_credits"],
                     "other_installment_plans": ["credit_history"]},
}
BN_LABEL = {"Adult": "income", "Bank": "y", "GermanCredit": "credit_risk"}   # the label column's name


def exposure(ctr, cte, lv, parents, eps, lam=5):
    """Where each mechanism's cost falls at ``eps``, as shares of the (test record, node) pairs.

    ``prior``: the record's parent configuration holds fewer training records than the pseudo-records Alg. 1's prior
    adds to its row ($d_k \\alpha / r$); ``clip``: its cell holds fewer than three standard deviations of the Gaussian
    baseline's noise, so that the clipped noisy count can come out near zero.
    """
    r, alpha = dirichlet_mechanism_params(eps / lv.size, lam)
    sigma = baseline_noise_scale("gaussian", eps / lv.size, lam)
    prior, clip = [], []
    for k, pa in enumerate(parents):
        n_conf = int(np.prod(lv[pa])) if pa else 1
        conf_tr = np.ravel_multi_index(ctr[:, pa].T, lv[pa]) if pa else np.zeros(ctr.shape[0], int)
        conf_te = np.ravel_multi_index(cte[:, pa].T, lv[pa]) if pa else np.zeros(cte.shape[0], int)
        counts = np.zeros((n_conf, int(lv[k])))
        np.add.at(counts, (conf_tr, ctr[:, k]), 1.0)
        prior.append(counts.sum(1)[conf_te] < lv[k] * alpha / r)
        clip.append(counts[conf_te, cte[:, k]] < 3 * sigma)
    return {"alpha_over_r": alpha / r, "sigma": sigma, "prior": float(np.mean(prior)), "clip": float(np.mean(clip))}


def run_bayes_net(table, net, label, eps_values, reps, rng):
    """Test log-likelihood per record of each mechanism, epsilon and repetition (a new 70/30 split each time)."""
    X = np.column_stack([table.y if c == label else table.X[:, table.feature_names.index(c)] for c in net])
    parents = [[list(net).index(p) for p in net[c]] for c in net]
    out = {m: np.empty((len(eps_values), reps)) for m in MECHS}
    mle = np.empty(reps)
    for rep in range(reps):
        itr, ite = datasets.train_test_split(X.shape[0], test_size=0.3, rng=rng)
        ctr, cte, lv = datasets.encode_features(X[itr], X[ite], n_bins=10)
        assert lv.size == len(net)                      # no node is constant on a training part
        mle[rep] = bayes_net_loglik(bayes_net_cpts(ctr, lv, parents, mechanism="mle"), cte, lv, parents)
        for i, eps in enumerate(eps_values):
            for m in MECHS:
                cpts = bayes_net_cpts(ctr, lv, parents, mechanism=m, eps=eps, lam=5, rng=rng)
                out[m][i, rep] = bayes_net_loglik(cpts, cte, lv, parents)
    return {"mle": mle, "levels": lv, "n_test": ite.size, "exposure": exposure(ctr, cte, lv, parents, eps_values[-1]),
            **out}


bn_results, bn_missing, t0 = {}, [], time.perf_counter()
for name, net in BN_NETS.items():
    try:
        table = datasets.load_uci(name, download=False)
    except FileNotFoundError:                     # no local copy: skip it (one line below says how to get it)
        bn_missing.append(name)
        continue
    bn_results[name] = res = run_bayes_net(table, net, BN_LABEL[name], nb_eps, bn_reps, rng)
    print(f"{name:>12}: n = {table.shape[0]:6d}, {len(net):2d} nodes, levels {res['levels'].tolist()}; "
          f"non-private test log-likelihood {res['mle'].mean():.3f} per record")
if bn_missing:
    print(f"skipped, not in $DPLIT_DATA or the user cache: {', '.join(bn_missing)} (`python -m dplit.datasets "
          f"{' '.join(bn_missing)}` downloads them, sha256-checked)")
print(f"Bayesian-network experiment: {len(bn_results)} data sets x {nb_eps.size} epsilons x {len(MECHS)} mechanisms "
      f"x {bn_reps} repetitions, {time.perf_counter() - t0:.1f} s")
assert "GermanCredit" in bn_results

# %% [markdown]
# ### Figure 6 in numbers
#
# Mean test log-likelihood per record over the repetitions, $\pm$ its Monte Carlo error; bold marks the highest mean,
# and the non-private fit (mean over the splits) follows the data set's name.

# %%
bn_stat = {name: {m: mc_mean(res[m]) for m in MECHS} for name, res in bn_results.items()}
lines = ["| data set (non-private) | $\\epsilon$ | Dirichlet | Gaussian | Laplace |", "|:--|--:|--:|--:|--:|"]
for name, st in bn_stat.items():
    for i, eps in enumerate(nb_eps):
        best = max(MECHS, key=lambda m: st[m][0][i])
        cells = [f"{st[m][0][i]:.2f} ± {st[m][1][i]:.2f}" for m in MECHS]
        cells = [f"**{c}**" if m == best else c for m, c in zip(MECHS, cells)]
        label = f"{name} ({bn_results[name]['mle'].mean():.2f})" if i == 0 else ""
        lines.append(f"| {label} | {eps:.3g} | " + " | ".join(cells) + " |")
display(Markdown("\n".join(lines)))

# %% [markdown]
# The paper's statement about Figure 6 beside this run. Its Sec. 5.2 writes "substantially less" where its abstract
# ("larger log-likelihood") and its conclusion (Sec. 6) say higher; both are quoted, and the verdict reads higher.

# %%
bn_rows, bn_ahead_all, bn_behind = [], [], {}
for name, st in bn_stat.items():
    other = np.maximum(st["gaussian"][0], st["laplace"][0])
    se = np.hypot(st["dirichlet"][1], np.where(st["gaussian"][0] >= st["laplace"][0], st["gaussian"][1],
                                               st["laplace"][1]))
    ahead, lower = st["dirichlet"][0] > other + 2 * se, st["dirichlet"][0] < other - 2 * se
    if ahead.all():
        bn_ahead_all.append(name)
    if lower.any():
        bn_behind[name] = nb_eps[lower].min()
    ours = (f"{name}: higher than both at {int(ahead.sum())} of {nb_eps.size} $\\epsilon$ (by more than 2 MC errors), "
            + (f"lower than the better one at {int(lower.sum())} (from $\\epsilon$ = {nb_eps[lower].min():.3g})"
               if lower.any() else "never significantly lower"))
    bn_rows.append(ours)
why = "; ".join(
    f"{name} {ex['prior']:.0%} and {ex['clip']:.1%} ($\\alpha/r$ = {ex['alpha_over_r']:.1f}, $3\\sigma$ = "
    f"{3 * ex['sigma']:.1f} records)" for name, ex in ((n, bn_results[n]["exposure"]) for n in bn_results))
bn_verdict = ("agrees" if not bn_behind else
              "agrees at small and moderate $\\epsilon$, differs at the largest on "
              f"{', '.join(bn_behind)}: Alg. 1's prior $\\alpha = 1 + 4(\\lambda - 1)r$ weighs like $\\alpha/r$ "
              "pseudo-records in every cell, which does not fall below $4(\\lambda - 1)$ as $\\epsilon$ grows, while "
              "additive noise shrinks. At $\\epsilon$ = " + f"{nb_eps[-1]:g}" + ", the shares of (test record, node) pairs "
              "whose parent row holds fewer training records than the prior adds to it, and whose cell lies within "
              "three standard deviations of the Gaussian noise of zero (where clipping does harm), are: " + why
              + ". On the large data sets few test records meet a cell the noise can empty, and the prior's "
              "flattening is what remains.")
quote = ("\"We can see that, on all datasets, the test log-likelihoods of the Dirichlet mechanism are substantially "
         "less than those of the Gaussian mechanism and Laplace mechanism\" (Sec. 5.2); \"Our experiment on three "
         "datasets shows that the Dirichlet mechanism provides significantly higher log-likelihoods than the Gaussian "
         "and Laplace mechanisms\" (Sec. 6)")
display(Markdown("| the paper (Sec. 5.2, Figure 6) | this run | verdict |\n|:--|:--|:--|\n"
                 f"| {quote} | {'<br>'.join(bn_rows)} | {bn_verdict} |"))
small = nb_eps <= 1.0
assert all(np.all(st["dirichlet"][0][small] > np.maximum(st["gaussian"][0], st["laplace"][0])[small])
           for st in bn_stat.values())                    # the paper's finding, at every eps up to 1

# %%
# NBVAL_IGNORE_OUTPUT
n_bn = len(bn_results)
fig, axs = plt.subplots((n_bn + 2) // 2, 2, figsize=(7.5, 2.8 * ((n_bn + 2) // 2)), squeeze=False)
for ax, (name, res) in zip(axs.flat, bn_results.items()):
    for m, c in zip(MECHS, ("C0", "C1", "C2")):
        ax.plot(nb_eps, res[m].mean(1), color=c, label=m)
        ax.fill_between(nb_eps, np.percentile(res[m], 10, 1), np.percentile(res[m], 90, 1), color=c, alpha=0.2)
    ax.axhline(res["mle"].mean(), color="k", ls=":", label="non-private")
    ax.set_xscale("log")
    ax.set_title(f"{name} ({len(BN_NETS[name])} nodes)", fontsize=10)
    ax.set_xlabel(r"$\epsilon$", fontsize=10)
    ax.set_ylabel("log-likelihood per record", fontsize=9)
    ax.tick_params(labelsize=9)
for ax in list(axs.flat)[n_bn:]:
    ax.axis("off")
axs.flat[n_bn].legend(*axs.flat[0].get_legend_handles_labels(), loc="center", fontsize=9)
fig.suptitle(r"Figure 6: Bayesian networks, test log-likelihood ($\lambda = 5$; band: 10-90% of the repetitions)",
             fontsize=10)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## When to use this

# %%
bn_note = (f"At the largest $\\epsilon$ additive noise does better on {', '.join(bn_behind)}, where few test records "
           "meet a cell that its noise can empty, while the Dirichlet prior still flattens the tables."
           if bn_behind else "")
display(Markdown(f"""
* **Trust the calibration, not only the proof**: on {len(pairs):,} neighbouring pairs, {len(LAMS)} orders and
  {EPS_GRID.size} values of $\\epsilon$ the exact divergence never exceeded the claimed $\\epsilon$ (largest ratio
  {ratios.max():.3f}). Run `neighbour_grid` again when you change $g$ or the sensitivities.
* **Release probability vectors judged by a log-loss** with the Dirichlet mechanism: it had the lowest test
  cross-entropy at every $\\epsilon$ on {len(everywhere)} of {len(nb_results)} data sets, and the highest Bayesian-network
  test log-likelihood at every $\\epsilon$ up to 1 on each network run ({', '.join(bn_results)}; German Credit at $\\epsilon$ =
  {nb_eps[0]:g}: {bn_stat['GermanCredit']['dirichlet'][0][0]:.1f} against
  {max(bn_stat['GermanCredit']['gaussian'][0][0], bn_stat['GermanCredit']['laplace'][0][0]):.1f} per record).
  {bn_note}
* **For accuracy alone** additive noise does as well: at $\\epsilon$ = {nb_eps[-1]:g} the Dirichlet mechanism was behind, by more than
  2 Monte Carlo errors, on {len(acc_behind)} of {len(nb_results)} data sets.
"""))
