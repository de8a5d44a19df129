# %% [markdown]
# # Synthesize a table from noisy margins
#
# **You get:** synthetic records of a categorical table, drawn from a latent class model fitted to differentially
# private marginal counts, and a check of their margins against the released ones (and, here, the true ones).
#
# A how-to: each step is a task with its code. The model, its sampler and why the default prior gives honest
# intervals are derived in `51_latent_class` and `50_latent_class_model`.

# %%
import itertools
import warnings

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display

from dplit.config import size

SEED = 4
n_iter = size(full=10_000, quick=300)     # kept iterations per chain
n_warmup = size(full=2_000, quick=200)    # warm-up iterations per chain
thin = size(full=5, quick=1)
n_records = 5_000

# %% [markdown]
# ## 1. Release the margins
#
# The curator's side: the records are integer codes, one column per variable ($0, \dots, d_j - 1$). Here 5,000
# simulated people with four variables. `release_margins` releases the chosen marginal tables (here all six two-way
# tables) with the geometric mechanism, the budget $\epsilon$ split equally over the tables.

# %%
from dplit.latent_class import margin_counts, release_margins

names = ["age", "sex", "employed", "region"]          # 3, 2, 2 and 3 levels
levels = (3, 2, 2, 3)
gen = np.random.default_rng(SEED)
group = gen.choice(2, n_records, p=[0.6, 0.4])   # a hidden grouping that ties the variables
profile = [[[0.2, 0.5, 0.3], [0.5, 0.5], [0.2, 0.8], [0.5, 0.3, 0.2]],
           [[0.6, 0.3, 0.1], [0.4, 0.6], [0.7, 0.3], [0.2, 0.3, 0.5]]]
records = np.array([[gen.choice(lv, p=profile[g][j]) for j, lv in enumerate(levels)]
                    for g in group])
margins = list(itertools.combinations(range(4), 2))
rel = release_margins(records, margins, eps=1.0, levels=levels, names=names,
                      rng=SEED, secure=False)
print(rel.budget)
print("noisy counts of (age, sex):", rel.counts[0])
print("true counts of (age, sex): ", margin_counts(records, [(0, 1)], levels)[0])

# %% [markdown]
# Each table spent $\epsilon / 6$; its cells carry two-sided geometric noise (and may even be negative). The
# release is a `MarginRelease` (`to_json()` / `MarginRelease.from_json` to publish and read it); `secure=False`
# seeds the noise for this page, keep the default `secure=True` for a real release.
#
# ## 2. Fit the latent class model

# %%
from dplit.latent_class import fit_latent_class
from dplit.sampling import ConvergenceWarning

with warnings.catch_warnings():
    warnings.simplefilter("ignore", ConvergenceWarning)       # the report is read below
    fit = fit_latent_class(rel, k=10, n_iter=n_iter, n_warmup=n_warmup, thin=thin,
                           n_chains=2, rng=SEED, progress=False)
at = fit.posterior.attrs
print(f"{at['k']} classes, weight {at['weight']:.3g}, a = {at['a']:g}; "
      f"R-hat max {at['rhat_max']:.3f}, bulk ESS min {at['ess_bulk_min']:.0f}, "
      f"converged: {bool(at['converged'])}")
if at["converged"]:
    verdict = "The chains agree and every ESS reaches the report's target."
else:
    verdict = (f"The report flags {at['failed']}: the chains mix slowly for some "
               f"cells. The synthetic tables below are draws from this posterior all the "
               f"same, but before publishing intervals run longer (`n_iter=\"auto\"` "
               f"with a `max_time`, more chains).")
display(Markdown(verdict))

# %% [markdown]
# The model is a mixture of up to `k` classes, each a product of independent categorical variables, fitted to the
# noisy counts with the noise as a measurement error. The defaults (`weight="auto"`, `a=0.1`) are those whose
# intervals cover (`76_latent_class_defaults`); `paper=True` gives Nixon et al.'s. The report says whether the
# chains agree.
#
# ## 3. Draw synthetic tables

# %%
from dplit.latent_class import synthesize

synthetic = synthesize(fit, n=n_records, m=5, rng=SEED)
print(synthetic.shape, "\nfirst records of the first synthetic table:\n", synthetic[0, :3])

# %% [markdown]
# Five synthetic data sets of 5,000 records, each drawn at a different posterior draw of the model (so their
# spread carries the uncertainty). They spend no more privacy: they are computed from the release only. Analyse
# each and combine the estimates with `dplit.latent_class.combine` (Reiter's rules).
#
# ## 4. Compare the margins

# %%
noisy = rel.flat_counts / rel.n
true = np.concatenate(margin_counts(records, margins, levels)) / n_records
synth = np.mean([np.concatenate(margin_counts(s, margins, levels)) for s in synthetic],
                axis=0) / n_records
for label, value in (("noisy release", noisy), ("synthetic tables", synth)):
    print(f"{label:17} largest |difference| from the true cell shares: "
          f"{np.abs(value - true).max():.4f}")
assert np.abs(synth - true).max() < 0.05

# %%
# NBVAL_IGNORE_OUTPUT
fig, ax = plt.subplots(figsize=(4.2, 4))
ax.plot(true, noisy, "x", color="0.5", label="noisy release / n")
ax.plot(true, synth, "o", color="C0", ms=4, label="synthetic tables (mean of 5)")
ax.plot([0, true.max()], [0, true.max()], "k--", lw=1)
ax.set(xlabel="cell share in the confidential records", ylabel="cell share")
ax.legend(fontsize=9, frameon=False)
fig.tight_layout()

# %% [markdown]
# Every cell of the six released tables: both lie along the diagonal. The synthetic tables reproduce the released
# margins up to the release's noise and their own sampling variation (each is a sample of 5,000 records). A margin that was not released, such as the three-way table of age, sex and employment, comes
# from the model alone; `margin_draws` gives its posterior with intervals:

# %%
from dplit.latent_class import cell_intervals, margin_draws

mean3, lo3, hi3 = cell_intervals(margin_draws(fit, (0, 1, 2)))
true3 = margin_counts(records, [(0, 1, 2)], levels)[0] / n_records
print("age sex employed   true  posterior mean  95% interval")
cells = itertools.product(*(range(lv) for lv in levels[:3]))
for (age, sex, employed), t, m_, l_, h_ in zip(cells, true3, mean3, lo3, hi3):
    print(f"{age:3d} {sex:3d} {employed:8d}   {t:.3f}  {m_:.3f}"
          f"           [{l_:.3f}, {h_:.3f}]")
covered = np.sum((lo3 <= true3) & (true3 <= hi3))
print(f"{covered} of {true3.size} intervals cover the true share")

# %% [markdown]
# ## See also
#
# * `51_latent_class`: the release (`dplit.latent_class.release_margins`, `MarginRelease`), the fit
#   (`fit_latent_class`), any margin's posterior (`margin_draws`, `cell_intervals`), synthetic data (`synthesize`)
#   and the combining rules (`combine`).
# * `50_latent_class_model`: the model and its sampler's blocks; `76_latent_class_defaults`: why the defaults.
# * `52_margin_selection`: choosing which margins to release under DP; `53_peers`: private-pgm and PrivBayes
#   beside it; `83_latent_class_applications`: the paper's ACS and NLTCS experiments.
