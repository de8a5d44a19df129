# %% [markdown]
# # Nested households in practice: the supplement's Figures 1-2 on simulated households
#
# * **For:** seeing what `fit_nested` recovers from five noisy household counts as the budget shrinks, at the supplement's settings and at the default prior.
# * **You need:** nothing: households are simulated from `dplit.nested.SIMULATED_TRUTH` (the supplement's ACS sample is not available here).
# * **You get:** Figures 1-2 of the supplement (estimated against true summary probabilities at $\epsilon = \infty, 1, 0.1, 0.01$), with synthetic-data estimates beside the posterior.
#
# The method (the model, the release, the sampler and its checks, the default prior and its coverage) is in notebook
# `55_nested`; this notebook exports nothing and uses `dplit.nested`.

# %% [markdown]
# ## Parameters
#
# Sizes come from the size switch (`DPLIT_QUICK=1` gives the quick sizes of the test suite); every random draw comes
# from a generator seeded here. The simulated population is notebook 55's: $R = 4$ races, $K = 4$ relationships,
# households of three, and a sample of as many households as the supplement's ACS sample.

# %%
# %matplotlib inline
import math
import warnings

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display

from dplit.config import is_quick, size
from dplit.latent_class import cell_intervals, combine
from dplit.nested import (SIMULATED_TRUTH, SUMMARIES, fit_nested, release_summaries, simulate_households,
                          summary_counts, summary_probs, synthesize_households)
from dplit.sampling import ConvergenceWarning

SEED = 20261128
rng = np.random.default_rng(SEED)
n_iter = size(full=10_000, quick=4_000)      # kept iterations per chain of the fits (the paper: 20,000, half burn-in)
n_warm = size(full=10_000, quick=4_000)      # warm-up iterations per chain
TRUE = SIMULATED_TRUTH
truth = summary_probs(TRUE)
N_PAPER = 602                                # households in the supplement's ACS sample
households = simulate_households(TRUE, N_PAPER, rng=rng)
exact_rel = release_summaries(households, np.inf)
print(f"quick mode: {is_quick()}; n_iter = {n_iter}, n_warm = {n_warm}; P(S | theta_true) = {np.round(truth, 3)}")

# %% [markdown]
# ## Figure 1: no noise, estimated vs true probabilities
#
# The supplement fits its 602 ACS households; we fit 602 households simulated from `TRUE` (the ACS sample is not
# available here, so "true" is $P(S \mid \theta_{\text{true}})$, known exactly). Posterior means and 95% intervals of
# the five summary probabilities against the truth, with the sample proportions (what exact counts say) and the
# estimates from 20 synthetic data sets (combining rules for partially synthetic data, as in notebook 51). The
# circles and the synthetic data come from the supplement's uniform prior (`paper=True`); the triangles are the
# posterior under the default prior $a = 0.25$.

# %%
EPS_LIST = (np.inf, 1.0, 0.1, 0.01)
fits, sparse, rels = {}, {}, {}
for eps in EPS_LIST:
    rels[eps] = release_summaries(households, eps, rng=21, secure=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fits[eps] = fit_nested(rels[eps], paper=True, n_iter=n_iter, n_warmup=n_warm, n_chains=2, rng=22,
                               progress=False)
        sparse[eps] = fit_nested(rels[eps], n_iter=n_iter, n_warmup=n_warm, n_chains=2, rng=22, progress=False)
sample_props = exact_rel.counts / N_PAPER


def summarise(eps, m=20, seed=23):
    """Posterior mean and interval, and the synthetic-data combined estimate, of the five summaries."""
    mean, lo, hi = cell_intervals(fits[eps].posterior["summary_probs"].values)
    q = np.array([summary_counts(s) for s in synthesize_households(fits[eps], N_PAPER, m, rng=seed)]) / N_PAPER
    return mean, lo, hi, combine(q, q * (1 - q) / N_PAPER)


summ = {eps: summarise(eps) for eps in EPS_LIST}
rows = [("truth (the simulation's)", truth, ""), ("sample proportion", sample_props, "")]
for eps in EPS_LIST:
    mean, lo, hi, ce = summ[eps]
    mean_s = sparse[eps].posterior["summary_probs"].mean(("chain", "draw")).values
    rows += [(f"eps = {eps:g}: noisy count / N", rels[eps].counts / N_PAPER, ""),
             (f"eps = {eps:g}: posterior, paper=True", mean,
              f"{np.abs(mean - truth).mean():.3f} | {np.mean(hi - lo):.3f}"),
             (f"eps = {eps:g}: 20 synthetic data sets", ce.estimate, f"{np.abs(ce.estimate - truth).mean():.3f} | "),
             (f"eps = {eps:g}: posterior, default a = 0.25", mean_s, f"{np.abs(mean_s - truth).mean():.3f} | "
              f"{np.mean(np.diff(cell_intervals(sparse[eps].posterior['summary_probs'].values)[1:], axis=0)):.3f}")]
display(Markdown("| | " + " | ".join(SUMMARIES) + " | mean abs. error | mean length |\n|" + "---|" * 8 + "\n"
                 + "\n".join(f"| {name} | " + " | ".join(f"{v:.3f}" for v in vals) + f" | {extra or ' | '} |"
                              for name, vals, extra in rows)))
mean_inf, lo_inf, hi_inf, _ = summ[np.inf]
sd_inf = fits[np.inf].posterior["summary_probs"].std(("chain", "draw")).values
z_inf = (mean_inf - sample_props) / sd_inf
print("eps = inf: (posterior mean - sample proportion) / posterior sd:", np.round(z_inf, 2))
assert np.all(np.abs(mean_inf - sample_props) < 3 * sd_inf)    # exact counts are reproduced, up to the prior's pull
assert np.mean((lo_inf <= truth) & (truth <= hi_inf)) >= 0.6

# %%
# NBVAL_IGNORE_OUTPUT
def plot_eps(ax, eps, title):
    mean, lo, hi, ce = summ[eps]
    ax.errorbar(truth, mean, yerr=[mean - lo, hi - mean], fmt="o", ms=5, lw=1, label="posterior, paper=True (95%)")
    ax.errorbar(truth + 0.004, ce.estimate, yerr=[ce.estimate - ce.lower, ce.upper - ce.estimate], fmt="s", ms=4,
                lw=0.8, label="20 synthetic data sets")
    ms_, lo_s, hi_s = cell_intervals(sparse[eps].posterior["summary_probs"].values)
    ax.errorbar(truth - 0.004, ms_, yerr=[ms_ - lo_s, hi_s - ms_], fmt="^", ms=4, lw=0.8, alpha=0.7,
                label="posterior, default a = 0.25")
    ax.plot(truth, sample_props, "k+", ms=8, label="sample proportion")
    for i, s in enumerate(SUMMARIES):
        ax.annotate(s, (truth[i], mean[i]), xytext=(-14, 4), textcoords="offset points", fontsize=9)
    ax.plot([0, 1], [0, 1], "k:", lw=0.8)
    ax.set(xlim=(0.4, 1.0), ylim=(0.0, 1.05), xlabel="true probability")
    ax.set_title(title, fontsize=10)


fig, ax = plt.subplots(figsize=(5.5, 4.6))
plot_eps(ax, np.inf, f"Figure 1: no noise (N = {N_PAPER} simulated households)")
ax.set_ylabel("estimated probability")
ax.legend(fontsize=9, loc="lower right")
fig.tight_layout()

# %% [markdown]
# ## Figure 2: $\epsilon \in \{0.01, 0.1, 1\}$
#
# The same households, the counts released with geometric noise ($\epsilon / 5$ each). Each panel's title gives the
# noise sd of one count, $\sqrt{2t}/(1-t)$ with $t = e^{-\epsilon/5}$, to compare with the $N$ households: where it
# is a sizeable fraction of $N$ the counts carry little information, and the posterior falls back towards the
# prior's summary probabilities (notebook 55, "What the prior says about the summaries"), with intervals that say so.
# The supplement reports the same degradation.

# %%
# NBVAL_IGNORE_OUTPUT
fig, axes = plt.subplots(1, 3, figsize=(7.5, 4.4), sharey=True)
for ax, eps in zip(axes, (1.0, 0.1, 0.01)):
    t_ = math.exp(-eps / 5)
    plot_eps(ax, eps, f"eps = {eps:g}\nnoise sd {math.sqrt(2 * t_) / (1 - t_):.0f} per count")
axes[0].set_ylabel("estimated probability")
fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=2, fontsize=9)
fig.suptitle("Figure 2: true vs estimated summary probabilities", fontsize=11)
fig.tight_layout(rect=(0, 0.14, 1, 1))

# %%
err = {eps: np.abs(summ[eps][0] - truth).mean() for eps in EPS_LIST}
width = {eps: np.mean(summ[eps][2] - summ[eps][1]) for eps in EPS_LIST}
print("mean |error| by eps:", {str(e): round(float(v), 3) for e, v in err.items()},
      " mean interval length:", {str(e): round(float(v), 3) for e, v in width.items()})
assert width[np.inf] < width[1.0] < width[0.01] and err[np.inf] < err[0.01]

# %% [markdown]
# ## Explore: budget, sample size and truncation
#
# `explore_nested` simulates `n_households` from `TRUE`, releases the five counts at `eps`, fits $G \times M$ classes
# at the default prior and plots the estimated against the true probabilities. The cell below calls it at
# $\epsilon = 1$ and $0.01$ and checks that the error grows; the figure under the widget is its default view
# ($\epsilon = 1$, 602 households, $G = M = 2$), redrawn when a control moves.

# %%
def explore_nested(eps=1.0, n_households=602, G=2, M=2, seed=1):
    """Fit simulated households at eps and plot estimated vs true summary probabilities; returns (figure, mean |error|)."""
    x = simulate_households(TRUE, n_households, rng=seed)
    rel = release_summaries(x, eps, rng=seed, secure=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = fit_nested(rel, G=G, M=M, n_iter=size(full=4000, quick=1000), n_warmup=size(full=2000, quick=500),
                         n_chains=2, rng=seed, progress=False)
    mean, lo, hi = cell_intervals(fit.posterior["summary_probs"].values)
    fig, ax = plt.subplots(figsize=(4.6, 4.2))
    ax.errorbar(truth, mean, yerr=[mean - lo, hi - mean], fmt="o", ms=5, lw=1)
    ax.plot(truth, summary_counts(x) / n_households, "k+", ms=8, label="sample proportion")
    ax.plot([0, 1], [0, 1], "k:", lw=0.8)
    ax.set(xlim=(0.4, 1.0), ylim=(0.0, 1.05), xlabel="true probability", ylabel="posterior mean (95%)",
           title=f"eps = {eps:g}, N = {n_households}, G = {G}, M = {M}")
    ax.legend(fontsize=9)
    fig.tight_layout()
    return fig, float(np.abs(mean - truth).mean())


fig, err_default = explore_nested()
_, err_small_eps = explore_nested(eps=0.01)
print(f"mean |error|: eps = 1 {err_default:.3f}, eps = 0.01 {err_small_eps:.3f}")
assert err_default < err_small_eps
plt.close("all")

# %%
# NBVAL_IGNORE_OUTPUT
from ipywidgets import FloatLogSlider, IntSlider, interactive  # noqa: E402
from dplit.testing import dead_controls  # noqa: E402

explorer = interactive(lambda eps, n_households, G, M: explore_nested(eps, n_households, G, M)[0],
                       eps=FloatLogSlider(value=1.0, base=10, min=-2, max=1, step=0.25),
                       n_households=IntSlider(value=602, min=100, max=20_000, step=100),
                       G=IntSlider(value=2, min=1, max=4), M=IntSlider(value=2, min=1, max=4))
assert dead_controls(explorer) == []  # every control changes the view (one its callback ignores fails)
explorer

# %% [markdown]
# ## What we found

# %%
s3 = 2                                   # S3: all members of the same race
display(Markdown("\n".join([
    f"* **Figure 1.** With exact counts the posterior means are within {np.abs(z_inf).max():.1f} posterior sd of the "
    f"sample proportions (the farthest is {SUMMARIES[int(np.argmax(np.abs(z_inf)))]}); the synthetic data sets carry "
    f"the five summaries over (mean absolute error {np.abs(summ[np.inf][3].estimate - truth).mean():.3f}).",
    f"* **Figure 2.** The mean absolute error of the posterior means at the supplement's prior grows from "
    f"{err[np.inf]:.3f} (no noise) to " + ", ".join(f"{err[e]:.3f} at eps = {e:g}" for e in EPS_LIST[1:])
    + ", and the mean interval length from " + ", ".join(f"{width[e]:.3f}" for e in EPS_LIST) + ": the posterior "
    "returns towards the prior as the counts become noise, as the supplement says (\"degrades as privacy guarantees "
    "are made stronger\").",
    "* **The prior.** For $S_3$ in this sample the supplement's prior gives "
    + ", ".join(f"{summ[e][0][s3]:.3f}" for e in EPS_LIST) + " at eps = "
    + ", ".join(f"{e:g}" for e in EPS_LIST) + ", the default prior "
    + ", ".join(f"{sparse[e].posterior['summary_probs'].mean(('chain', 'draw')).values[s3]:.3f}" for e in EPS_LIST)
    + f"; the truth is {truth[s3]:.3f}. Notebook 55 gives the coverage of both priors over repeated samples.",
])))

# %% [markdown]
# ## When to use this
#
# * To reproduce the supplement, pass `paper=True` (its uniform prior), as the circles here do; for estimates and
#   intervals to report, keep the default prior.
# * Before releasing, compare the noise sd of a count with the number of households: where it is a sizeable fraction
#   of them (the smaller budgets here), the release says little about the summaries, whatever the prior.
# * Read synthetic households only through the five released summaries (notebook 55, "When to use this").

