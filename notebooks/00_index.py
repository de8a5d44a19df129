# %% [markdown]
# # dplit: differentially private inference, taught as notebooks
#
# * **For:** choosing the notebook for your question, and the DP background the others assume.
# * **You need:** nothing beyond a Python environment with dplit (`make setup`).
# * **You get:** where to start (a how-to guide or the tour), a one-page DP refresher, a five-minute tour, how to run everything, a map of the notebooks with their modules and papers, and every table and figure of the papers with its place in dplit and its status.


# %% [markdown]
# ## Start here
#
# **You were given a release, or hold data to publish?** The how-to guides answer one question each, with the
# library's public functions and no derivation:
#
# * [Analyse a release you were given](howto/90_analyse_a_release.ipynb): load the JSON, see what it holds and what
#   it spent, compare the methods, read the intervals and the convergence report, test a hypothesis.
# * [Publish a release from your data](howto/91_publish_a_release.ipynb): from a CSV, choosing epsilon, what to publish.
# * [Run the simulation study on a cluster](howto/92_study_on_a_cluster.ipynb) (Dask).
# * [Bring a dapper model to Python](howto/93_dapper_model.ipynb).
# * [Synthesize a table from noisy margins](howto/94_synthesize_a_table.ipynb).
#
# **Learning the methods?** Read the one-page DP refresher and the five-minute tour below, then follow the parts of
# the book in order; the [map](#map-of-the-notebooks) at the end of this page lists every notebook.
# %% [markdown]
# ## What dplit is
#
# dplit implements, tests and explains methods for **statistical inference from data released
# under differential privacy (DP)**. Each notebook derives one method from its paper, implements it
# in cells marked `#| export` (which become the `dplit` module named at the top of the notebook),
# checks it in the cells right after each definition, and reproduces the paper's figure or table.
# You can read a notebook as a tutorial, run it, move its widgets, and import what it exports:
#
# ```python
# from dplit.config import size   # the size switch used below
# ```
#
# The methods come from these papers, each cited by section and equation in the notebooks that implement it:
#
# * Guo, Barrientos & Peña, *Differentially private inference for compositional data* ("Guo et al.");
# * *Dirichlet mechanism for differentially private KL divergence minimization*;
# * Eng, Awan, Ju, Rao & Gong, *dapper: data augmentation for private posterior estimation in R*;
# * Nixon, Barrientos, Reiter & Slavković, *A latent class modeling approach for generating
#   synthetic data and making posterior inferences from differentially private counts*.
#
# An earlier version of Guo et al. differs in places; the notebooks follow the final version.
#
# **Data.** German Credit (UCI) and an ACS 2018 count table ship with dplit. The other data sets are public and
# not shipped: ATUS 2019 (notebook 63; U.S. Bureau of Labor Statistics, public domain), the other UCI tables of the
# Dirichlet-mechanism paper (notebook 81; UCI Machine Learning Repository, CC BY 4.0) and the NLTCS benchmark file
# (notebooks 52, 53, 77 and 83). `dplit.datasets` reads them from the folder named by `$DPLIT_DATA` or from the user cache;
# `python -m dplit.datasets --list` shows what is found and `python -m dplit.datasets NAME ...` downloads into the
# cache (sha256-checked). Without them those notebooks still run, on labelled stand-ins or skipping the cells
# that need the data, and say so in one line.

# %% [markdown]
# ## Parameters
#
# Every notebook takes its sizes from the **size switch** `dplit.config.size(full=..., quick=...)`.
# Readers get the full (tutorial) size; the test suite sets the environment variable
# `DPLIT_QUICK=1` and gets the quick size. The code path is the same.

# %%
import numpy as np
import matplotlib.pyplot as plt

from dplit.config import size

n_draws = size(full=200_000, quick=20_000)
rng = np.random.default_rng(20261122)

# %% [markdown]
# ## A one-page refresher on differential privacy
#
# Two data sets $D$ and $D'$ are **neighbours** if they differ in one record. A randomised
# algorithm $M$ is **$\epsilon$-differentially private** if for all neighbours and every set of outputs $E$,
#
# $$P(M(D) \in E) \le e^{\epsilon}\, P(M(D') \in E).$$
#
# The **Laplace mechanism** releases $f(D) + \mathrm{Laplace}(0, \Delta/\epsilon)$, where the
# sensitivity $\Delta = \max \lVert f(D) - f(D') \rVert_1$ over neighbours. Its guarantee follows
# from the ratio of two Laplace densities with centres at most $\Delta$ apart:
# $p(y \mid f(D)) / p(y \mid f(D')) = \exp\{(|y - f(D')| - |y - f(D)|)\epsilon/\Delta\} \le e^{\epsilon}$.
#
# Three properties are used everywhere in dplit (Guo et al., Sec. 2.1, Prop. 1-3):
#
# * **post-processing**: anything computed from $M(D)$ alone is still $\epsilon$-DP, so the analyst
#   may run any inference on a release without spending more budget;
# * **sequential composition**: releasing $M_1(D)$ ($\epsilon_1$) and $M_2(D)$ ($\epsilon_2$) costs $\epsilon_1 + \epsilon_2$;
# * **parallel composition**: mechanisms on *disjoint* parts of the data cost $\max(\epsilon_1, \epsilon_2)$.
#
# A tiny illustration: the mean of $n$ values in $[0, 1]$ has sensitivity $1/n$. Below we release it
# for two neighbouring data sets and look at the log ratio of the two output laws: it never exceeds $\epsilon$.

# %%
def laplace_release(values, eps, size, rng):
    """Release the mean of values in [0, 1] with Laplace noise of scale (1/n)/eps."""
    n = len(values)
    return np.mean(values) + rng.laplace(0.0, (1.0 / n) / eps, size=size)


def laplace_logpdf(y, centre, scale):
    return -np.log(2 * scale) - np.abs(y - centre) / scale


eps, n = 1.0, 100
D = np.zeros(n)
D_prime = D.copy()
D_prime[0] = 1.0  # one record changed: the worst case for the mean
scale = (1.0 / n) / eps
grid = np.linspace(-0.05, 0.06, 400)
log_ratio = laplace_logpdf(grid, D.mean(), scale) - laplace_logpdf(grid, D_prime.mean(), scale)
assert np.all(np.abs(log_ratio) <= eps + 1e-12)  # the DP inequality, pointwise
assert np.isclose(np.max(np.abs(log_ratio)), eps)  # and it is tight

out_D = laplace_release(D, eps, n_draws, rng)
out_Dp = laplace_release(D_prime, eps, n_draws, rng)
# The empirical probability of an event under D is at most e^eps times that under D' (up to noise).
p_D, p_Dp = np.mean(out_D > 0.01), np.mean(out_Dp > 0.01)
assert p_Dp <= np.exp(eps) * p_D + 5 * np.sqrt(p_Dp / n_draws)
# exact: P(Y > t) = exp(-(t - mu) / scale) / 2 for t >= mu; this event sits where the ratio reaches e^eps
q_D, q_Dp = 0.5 * np.exp(-(0.01 - D.mean()) / scale), 0.5 * np.exp(-(0.01 - D_prime.mean()) / scale)
assert np.isclose(q_Dp / q_D, np.exp(eps))
print(f"P(M(D) > 0.01) = {p_D:.4f} (exact {q_D:.4f}), P(M(D') > 0.01) = {p_Dp:.4f} (exact {q_Dp:.4f})")
print(f"exact ratio {q_Dp / q_D:.3f} = e^eps: the bound is attained; the simulated ratio {p_Dp / p_D:.3f} "
      f"differs from it by Monte Carlo error")

# %%
# NBVAL_IGNORE_OUTPUT
fig, ax = plt.subplots(1, 2, figsize=(9, 3.2))
ax[0].hist(out_D, bins=120, density=True, alpha=0.6, label="M(D)")
ax[0].hist(out_Dp, bins=120, density=True, alpha=0.6, label="M(D')")
ax[0].set_xlabel("released mean")
ax[0].legend()
ax[1].plot(grid, log_ratio)
ax[1].axhline(eps, ls="--", c="k", lw=0.8)
ax[1].axhline(-eps, ls="--", c="k", lw=0.8)
ax[1].set_xlabel("output y")
ax[1].set_ylabel("log density ratio")
fig.tight_layout()

# %% [markdown]
# Composition in one line: two such releases of the same data (say the mean at $\epsilon_1 = 0.5$ and
# again at $\epsilon_2 = 0.5$) cost $\epsilon_1 + \epsilon_2 = 1$ in total; one release on the first half of
# the records and another on the second half cost $\max(\epsilon_1, \epsilon_2) = 0.5$. Guo et al. spend
# $\epsilon_2$ on choosing a censoring threshold and $\epsilon_1$ on the statistic, a total of
# $\epsilon_1 + \epsilon_2$ (their Theorem 2).

# %%
eps1, eps2 = 0.5, 0.5
sequential, parallel = eps1 + eps2, max(eps1, eps2)
assert (sequential, parallel) == (1.0, 0.5)

# %% [markdown]
# ## A five-minute tour: from confidential compositions to inference
#
# The path a reader follows through the notebooks, in one cell each. A curator holds $n$
# compositions (rows on the simplex, e.g. shares of a day spent on three activities), picks a
# censoring threshold $a$ with budget $\epsilon_2$ (notebook 15, Guo et al. Alg. 1) and releases the
# censored sufficient statistic $s_L$ with budget $\epsilon_1$. An analyst sees only the `Release`
# (a JSON file) and runs DPBoots (notebook 17) or DPMCMC (notebook 21) on it.

# %%
from dplit.dirichlet import dirichlet_draws
from dplit.release import Release, release

alpha_true = np.array([2.2, 3.3, 4.4])  # alpha_3 of the simulation study (Sec. 5.1)
n_tour = size(full=2000, quick=500)
X = dirichlet_draws(alpha_true, n_tour, rng=rng)  # the confidential data: never published
published = release(X, eps1=0.75, eps2=0.25, candidates=(1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1),
                    tc=0.01, rng=rng, secure=False)  # secure=True (default) for real releases
print(published.summary())
text = published.to_json()  # what the curator hands out
assert Release.from_json(text) == published and published.eps_total == 1.0

# %%
from dplit.bootstrap import BootResult, dp_boots
from dplit.mcmc import dp_mcmc
from dplit.results import draws

boot = BootResult.of(dp_boots(Release.from_json(text), n_boot=size(full=1000, quick=200), rng=rng))
post = dp_mcmc(Release.from_json(text), prior="p1", n_iter=size(full=4000, quick=600),
               n_warmup=size(full=1000, quick=300), n_chains=2, thin=2, rng=rng, progress=False)
truth = alpha_true / alpha_true.sum()
print(f"E[x] truth        {np.round(truth, 3)}")
print(f"DPBoots estimate  {np.round(boot.estimate(), 3)}; 95% intervals {np.round(boot.interval(), 3).tolist()}")
print(f"DPMCMC_p1 mean    {np.round(draws(post, 'mean_composition').mean(axis=0), 3)}")
# Both recover the mean composition to within a few hundredths at this n and budget.
assert np.all(np.abs(boot.estimate() - truth) < 0.05)
assert np.all(np.abs(draws(post, "mean_composition").mean(axis=0) - truth) < 0.05)

# %% [markdown]
# ## Map of the notebooks
#
# Every notebook, part by part, with the module it exports (each links to its API page on the documentation site) and the paper it follows.
#
# **Start here**
#
# | notebook | exported module | what it covers | paper, section |
# |---|---|---|---|
# | `00_index` (this page) | (none) | where to start, a DP refresher, a tour, this map | |
#
# **Core: mechanisms, accounting, the sampler core**
#
# | notebook | exported module | what it covers | paper, section |
# |---|---|---|---|
# | [`01_audit`](01_audit.ipynb) | `dplit.audit` | the privacy audit: a lower confidence bound on the epsilon a mechanism spends (tail events chosen on half the outputs, Clopper-Pearson bounds on the other half) | Guo et al. Sec. 2.1; DP-Sniper (Bichsel et al. 2021) |
# | [`02_mechanisms`](02_mechanisms.ipynb) | `dplit.mechanisms` | Laplace, geometric, discrete Gaussian, randomized response; how far the noise can reach | Guo et al. Sec. 2.1; dapper Ex. 1-2 |
# | [`03_accounting`](03_accounting.ipynb) | `dplit.accounting` | budgets, Rényi DP, zCDP, exact discrete-Gaussian epsilon | Guo et al. Sec. 2.1; dapper Ex. 2; Dirichlet mech. App. B |
# | [`04_sampling`](04_sampling.ipynb) | `dplit.sampling` | the sampler core every method plugs into: chains, seeds, warm-up, ArviZ, convergence report | Guo et al. S5; Talts et al. 2018 |
#
# **Compositional data (Guo, Barrientos & Peña)**
#
# | notebook | exported module | what it covers | paper, section |
# |---|---|---|---|
# | [`10_dirichlet_fit`](10_dirichlet_fit.ipynb) | `dplit.dirichlet_fit` | where an MLE exists, digamma and trigamma in numba, the Newton MLE | Guo et al. Supp. S4 |
# | [`11_dirichlet_random`](11_dirichlet_random.ipynb) | `dplit.dirichlet_random` | fast Dirichlet and gamma draws in numba, checked; the MLE recovers alpha | |
# | [`12_dirichlet`](12_dirichlet.ipynb) | `dplit.dirichlet` | the Dirichlet model: compositions in, the censored statistic, the log-likelihood, moments of log x | Guo et al. Sec. 2.2, eq. (1), 4.2.4 |
# | [`13_censoring`](13_censoring.ipynb) | `dplit.censoring` | how much censoring at threshold $a$ costs; what exact zeros do, the advice a release gives, amalgamation | Guo et al. Supp. S1, Sec. 3.1, 5.2 |
# | [`14_release_record`](14_release_record.ipynb) | `dplit.release_record` | the `Release` record: what it checks itself against, plausibility, JSON | Guo et al. Sec. 3 |
# | [`15_release`](15_release.ipynb) | `dplit.release` | the curator's release: sensitivity, threshold selection (Alg. 1) + Laplace noise, bias and variance, Thm. 1 | Guo et al. Sec. 3, Alg. 1, Thm. 1-2 |
# | [`16_truncated_noise`](16_truncated_noise.ipynb) | `dplit._truncated_noise` | step 1 of DPBoots: Laplace noise truncated to Range(S0), by rejection or an exact coordinate Gibbs chain (numba kernels with NumPy twins) | Guo et al. Sec. 4.1, Alg. 2, S4-S5 |
# | [`17_bootstrap`](17_bootstrap.ipynb) | `dplit.bootstrap` | DPBoots, the parametric bootstrap from a release | Guo et al. Sec. 4.1, Alg. 2 |
# | [`18_priors`](18_priors.ipynb) | `dplit.priors` | priors p1-p5 | Guo et al. Sec. 4.2.1, Table 1 |
# | [`19_mcmc_moves`](19_mcmc_moves.ipynb) | `dplit._mcmc_moves` | the four moves inside DPMCMC (slice, record sweep, joint, ancillary), as numba kernels with NumPy twins | Guo et al. Sec. 4.2.2, S5 |
# | [`20_release_model`](20_release_model.ipynb) | `dplit._release_model` | the model of a release that MCMC, ABC and DPapprox share: its checks, the prior (Table 1), the latent blocks, the chain's specification, the posterior mode of eq. (1), the slice map, where a chain starts | Guo et al. Sec. 4.2.1-4.2.2, Table 1 |
# | [`21_mcmc`](21_mcmc.ipynb) | `dplit.mcmc` | MCMC from a release: the target, MCMC, DPMCMC, DPreMCMC, prior p5 | Guo et al. Sec. 4.2.2; dapper Sec. 3 |
# | [`22_abc`](22_abc.ipynb) | `dplit.abc` | DPABC | Guo et al. Sec. 4.2.3 |
# | [`23_approx`](23_approx.ipynb) | `dplit.approx` | the asymptotic Gibbs sampler DPapprox | Guo et al. Sec. 4.2.4 |
#
# **The Dirichlet mechanism**
#
# | notebook | exported module | what it covers | paper, section |
# |---|---|---|---|
# | [`30_dirichlet_mechanism`](30_dirichlet_mechanism.ipynb) | `dplit.dirichlet_mechanism` | the Dirichlet mechanism under Rényi DP | Dirichlet mech. Alg. 1, Thm. 1-2 |
#
# **Data augmentation for any privatised statistic (dapper)**
#
# | notebook | exported module | what it covers | paper, section |
# |---|---|---|---|
# | [`40_augmentation_engines`](40_augmentation_engines.ipynb) | `dplit._augmentation_engines` | the record sweep three ways, the module compiler and its probe, three ways to write the modules | dapper Sec. 3-4 |
# | [`41_augmentation`](41_augmentation.ipynb) | `dplit.augmentation` | data augmentation MCMC for any privatised statistic: the privacy model, `dapper_sample`, `summary`, exactness checks | dapper Sec. 3-4; Ju et al. 2022 |
#
# **Latent classes from noisy margins (Nixon et al.)**
#
# | notebook | exported module | what it covers | paper, section |
# |---|---|---|---|
# | [`50_latent_class_model`](50_latent_class_model.ipynb) | `dplit._latent_class_model` | the cells, marginal probabilities and the three MH-within-Gibbs blocks of model (7) as numba kernels, each checked against brute force | Nixon et al. Sec. 2.2, Supp. Sec. 2 |
# | [`51_latent_class`](51_latent_class.ipynb) | `dplit.latent_class` | latent-class synthesis from noisy margins; the defaults and their coverage | Nixon et al. Sec. 2-4, Table 3 |
# | [`52_margin_selection`](52_margin_selection.ipynb) | `dplit.margin_selection` | DP choice of the margins to release (PrivBayes' structure stage) and the NLTCS pipeline | Nixon et al. Sec. 5; Zhang et al. 2017 |
# | [`53_peers`](53_peers.ipynb) | `dplit.peers` | private-pgm and PrivBayes beside the latent-class model at equal epsilon | Nixon et al. Sec. 4.3, Fig. 3 |
# | [`54_nested_model`](54_nested_model.ipynb) | `dplit.nested_model` | the nested households model (eq. (1)), its five summaries (Table 3) and their closed-form probabilities (eq. (2)), checked against enumeration | Nixon et al. Supp. Sec. 1.1, eq. (1)-(2) |
# | [`55_nested`](55_nested.ipynb) | `dplit.nested` | individuals within households: nested latent classes from noisy summaries; the default prior and its coverage | Nixon et al. Supp. Sec. 1 |
#
# **Every method on one release; the studies**
#
# | notebook | exported module | what it covers | paper, section |
# |---|---|---|---|
# | [`60_methods`](60_methods.ipynb) | `dplit.methods` | one contract for every method: the registry, one dispatcher, every method on one release side by side (`compare`, `dplit compare`) | all |
# | [`61_study_store`](61_study_store.ipynb) | `dplit.study_store` | the study's stores (a committed JSON-lines text table, or SQLite) and the resumable runner on any executor (process pool, Dask) | Guo et al. Sec. 5.1 |
# | [`62_study`](62_study.ipynb) | `dplit.study` | the simulation study: settings, tasks and seeds, the measures, the resumable runner | Guo et al. Sec. 5.1 |
# | [`63_atus`](63_atus.ipynb) | `dplit.atus` | the ATUS time-use application | Guo et al. Sec. 5.2, Table 2 |
# | [`64_study_summary`](64_study_summary.ipynb) | `dplit.study_summary` | the study's summaries and the paper's figures, from a store | Guo et al. Sec. 5.1, Fig. 1-2, S2-S3 |
#
# **Checks (`notebooks/checks/`)**
#
# | notebook | exported module | what it covers | paper, section |
# |---|---|---|---|
# | [`70_mechanisms_checks`](checks/70_mechanisms_checks.ipynb) | (none) | the samplers of `02` tested against their laws, each with a planted error; the privacy audit at work | Guo et al. Sec. 2.1; dapper Ex. 1-2 |
# | [`71_release_checks`](checks/71_release_checks.ipynb) | (none) | checks of `release`: the noise law, the split, seeds, JSON, bad input, the privacy audit | |
# | [`72_bootstrap_checks`](checks/72_bootstrap_checks.ipynb) | (none) | is DPBoots right? the noise step's exact law (also where rejection cannot finish), the limits, the test's size, coverage over repeated releases | Guo et al. Sec. 4.1, 5.1-5.2, S5 |
# | [`73_mcmc_checks`](checks/73_mcmc_checks.ipynb) | (none) | is DPMCMC exact? each move's law, the eps -> infinity limit, calibration (SBC) with a planted bug | Talts et al. 2018 |
# | [`74_mcmc_comparison`](checks/74_mcmc_comparison.ipynb) | (none) | choosing a sampler: the seven methods on one data set, mixing against eps1, time to posterior | Guo et al. Sec. 5.1 |
# | [`75_approx_checks`](checks/75_approx_checks.ipynb) | (none) | DPapprox at work: the no-privacy limit, convergence across eps (S5), against DPMCMC, where the approximation fails | Guo et al. Sec. 4.2.4, 5.1, S5 |
# | [`76_latent_class_defaults`](checks/76_latent_class_defaults.ipynb) | (none) | the stored coverage and speed studies behind the defaults (`weight="auto"`, `a=0.1`) beside the paper's settings | Nixon et al. Table 3; BayesLCM |
# | [`77_margin_selection_checks`](checks/77_margin_selection_checks.ipynb) | (none) | margin selection studied and checked: the stored NLTCS study beside the paper's figures, the law of whole selections, recovery of a known network | Nixon et al. Sec. 5.2; Zhang et al. 2017 (PrivBayes) |
# | [`78_zeros_checks`](checks/78_zeros_checks.ipynb) | (none) | exact zeros measured: the bias of $E[x_j]$ against the share of zeros and the threshold (MLE and DPMCMC), the threshold rule and the release's advice, amalgamation and dropping records | Guo et al. Sec. 3.1-3.2, 5.2 |
# | [`79_nixon_intervals`](checks/79_nixon_intervals.ipynb) | (none) | why Nixon et al.'s Table 3 intervals are three times the binomial length: the chain, the classes, the prior, synthetic data and the likelihood's power measured against the paper's lengths and coverage | Nixon et al. Table 3, Supp. Sec. 2 |
#
# **The papers reproduced (`notebooks/papers/`)**
#
# | notebook | exported module | what it covers | paper, section |
# |---|---|---|---|
# | [`80_guo_simulation_study`](papers/80_guo_simulation_study.ipynb) | — | Sec. 5.1 at the paper's scale, from the committed table | Guo et al. Sec. 5.1, Fig. 1-2 |
# | [`81_dirichlet_mechanism_experiments`](papers/81_dirichlet_mechanism_experiments.ipynb) | (none) | its exact RDP on grids of neighbours (Fig. 2), Thm. 2 by Monte Carlo; private naive Bayes and a Bayesian network on UCI data | Dirichlet mech. Sec. 5, Figs. 2-4, 6 |
# | [`82_dapper_examples`](papers/82_dapper_examples.ipynb) | `examples/dapper_examples.py` | dapper's Examples 1-3 (Example 3 at the paper's settings over 100 data sets), mixing vs epsilon; the examples' modules | dapper, Examples 1-3, Sec. 6 |
# | [`83_latent_class_applications`](papers/83_latent_class_applications.ipynb) | (none) | the ACS experiment (Figs. 1-2, Table 3) at the paper's settings; NLTCS (Fig. 4, Tables 5-6) on the public NLTCS benchmark file, whose data, margins and variables differ from the paper's | Nixon et al. Sec. 4-5 |
# | [`84_nested_applications`](papers/84_nested_applications.ipynb) | (none) | the supplement's Figures 1-2 on simulated households, eps = inf, 1, 0.1, 0.01 | Nixon et al. Supp. Sec. 1, Fig. 1-2 |
#
# **How-to guides (`notebooks/howto/`)**
#
# | notebook | exported module | what it covers | paper, section |
# |---|---|---|---|
# | [`90_analyse_a_release`](howto/90_analyse_a_release.ipynb) | (none) | analyse a release you were given: what it holds and spent, every method side by side, one method's intervals and convergence report, a test of a hypothesis, save and reload |  |
# | [`91_publish_a_release`](howto/91_publish_a_release.ipynb) | (none) | publish a release from your data: the CSV, choosing epsilon from the error it buys, the release (CLI and Python), what to publish and what not | Guo et al. Sec. 3 |
# | [`92_study_on_a_cluster`](howto/92_study_on_a_cluster.ipynb) | (none) | run the simulation study on a Dask cluster, resume it, report it | Guo et al. Sec. 5.1 |
# | [`93_dapper_model`](howto/93_dapper_model.ipynb) | (none) | bring a model written for the R package dapper to Python, module for module, with its ArviZ output | dapper Sec. 3-4 |
# | [`94_synthesize_a_table`](howto/94_synthesize_a_table.ipynb) | (none) | synthesize a categorical table from noisy margins: release, fit, draw, compare margins | Nixon et al. Sec. 3-4 |
#
# Notebooks are added as their issues land; a module only imports modules below it in `dplit.LAYERS` (checked by a test).

# %% [markdown]
# ## Every table and figure of the papers
#
# Every numbered table and figure of the four papers and their supplements (and the three unnumbered summary tables
# of dapper's examples), with the place where dplit takes it up and how far it gets. The status is one of:
# **reproduced** (the paper's design, our numbers beside the paper's, with a verdict); **reproduced in part** (what is
# missing is said); **differs, explained** (our result disagrees and the notebook has a check showing why); **differs,
# cause open** (it disagrees, and why is not found yet); **not
# reproduced** (with the reason); **not applicable** (a specification, a data description or a diagram, with no result
# to compare). Stored results are the files under `benchmarks/results/` named in a row.
#
# ### Guo, Barrientos & Peña, *Differentially private inference for compositional data* (supplement S1-S6)
#
# Counts: 9 items; reproduced in part 5, differs (explained) 3, not applicable 1.
#
# | item | what it shows | where in dplit | status |
# |---|---|---|---|
# | Table 1 | the priors p1-p5 and the posterior each method targets | [`18_priors`](18_priors.ipynb), "Why priors from data" (the table rendered); the methods of 20-23 | not applicable: a specification, rendered and implemented |
# | Table 2 | ATUS 2019 at ε = 0.5, seven methods, 100 repetitions: mean time shares by sex, how often H0 is rejected, mean P(H0) | [`63_atus`](63_atus.ipynb), "4. Table 2" and "Table 2 at the paper's 100 repetitions"; `atus_table2.jsonl` | differs, explained: 100 repetitions per method with shorter chains than the paper's; the means are within 0.01 of the paper's; the private methods' decisions agree in 4 of 15 and the non-private ones' in 6 of 6, and each of the 11 that differ has a check ("Why the decisions differ"); the ε sweep finds agreement with Boots from ε = 1.5 (paper: 1.25) |
# | Figure 1 | rescaled median MSE of α, 17 methods, 5 α × n ∈ {1000, 5000} × 4 ε | [`80_guo_simulation_study`](papers/80_guo_simulation_study.ipynb), "Figure 1"; drawn by [`64_study_summary`](64_study_summary.ipynb), section 4; `sec51_study.jsonl` | reproduced in part: all 40 cells, 15 of the 17 methods (14 on 20 of the 50 data sets per cell: the selected ones and DPreMCMC_p3,p4, DPABC_p1-p3, DPapprox_p1,p3; DPABC_p5 on 18; DPMCMC_p3,p4 not run: the notebook prints their cost-model hours), DPapprox_p4 both as the paper's Gibbs sampler and as dplit's blocked update, other chain lengths (DPMCMC until converged, DPreMCMC 20,000 iterations); of 33 statements 8 agree, 12 differ, 13 not decided; of 21 about the other priors, judged on the first 20 data sets of every cell, 8 agree, 9 differ, 4 not decided (DPABC_p1 the weakest in all 5 panels: agrees; DPreMCMC_p3,p4 and DPapprox_p1,p3 "similar" at ε = 1e10: agrees in 2 panels, differs in 1 (DPreMCMC_p3 at half the benchmark's MSE), not decided in 2; DPABC_p2,p3,p5 "slightly larger": differs in all 5 panels; DPapprox_p1,p3 "slightly larger under privacy": differs in 3, not decided in 2); DPBoots's and DPreMCMC's differences explained in their own sections |
# | Figure 2 | rescaled median MSE of E[x], and median predictive coverage of the selected Bayesian methods | [`80_guo_simulation_study`](papers/80_guo_simulation_study.ipynb), "Figure 2"; `sec51_study.jsonl` | reproduced in part: as Figure 1; of 16 statements 6 agree, 6 differ, 4 not decided (not every difference has a check) |
# | Figure S1 | (a) expected share of censored entries, (b) average bias of the censored statistic, against a, for several α | [`13_censoring`](13_censoring.ipynb), "What it gives" and "Figure S1" | reproduced in part: exact curves for the five α of Sec. 5.1 (the figure's own α are not stated, so no number is set beside it); the paper's observations checked (one holds only within a family of fixed shape) |
# | Figure S2 | share of runs whose multivariate Gelman-Rubin statistic is at most <!-- paper -->1.1 | [`80_guo_simulation_study`](papers/80_guo_simulation_study.ipynb), "Figure S2" and the S5 statements under it; `sec51_study.jsonl` | reproduced in part: as Figure 1, with the paper's DPapprox_p4 sampler (Gibbs) beside dplit's blocked update; 4 of 7 statements agree; three differ: S5's "only a small fraction of chains requires additional iterations" at ε = 0.25 (a third of DPMCMC's runs extend past their first round under dplit's stricter stopping rule, fewer at larger private ε, as the paper's direction), the paper's "no issues at ε = 0.5, 1.5" for DPreMCMC (shorter chains explain the cell with d = 5, not α = (2, 20, 2)) and DPapprox's exception "p3, p4 at n = 5000" (the Gibbs sampler still fails to converge in several cells there, mostly at ε = 0.25) |
# | Figure S3 | share of data sets where Alg. 1's threshold gives a smaller MSE of α than a fixed a = 1e-6 | [`80_guo_simulation_study`](papers/80_guo_simulation_study.ipynb), "Figure S3" (`fixed_vs_dp` of [`64_study_summary`](64_study_summary.ipynb)); `sec51_fixed_a.jsonl` beside `sec51_study.jsonl` | reproduced in part: the paper's design (a fixed at 1e-6 on the same data sets as Alg. 1's runs, the whole budget to the Laplace release), 20 of the 50 data sets per cell (as Figure 1), four private methods pooled (DPBoots, DPreMCMC_p1, DPABC_p4, DPapprox_p4 blocked; not DPMCMC); the paper's four statements agree |
# | Figure S4 | ATUS posterior predictive densities against histograms, by sex and activity, ε = 0.5, averaged over 100 runs | [`63_atus`](63_atus.ipynb), "Figures S4 and S5 over many runs"; `atus_s4s5.jsonl` | differs, explained: the paper's design (DPreMCMC_p4, 100 runs per sex) at shorter chains; the mean density follows the histogram in none of the six panels, the posterior's α0 far above the data's; longer chains do not stop the drift. Its cause ("Why DPreMCMC_p4 drifts", `atus_drift.json`): model (5) itself (Sec. 4.2.2, eq. (5)) at the study's b = 5: a Dirichlet density raised to the power n2/b has a mass that grows without bound with α0, so the powered latent records pull α0 up under the paper's sampler and under the exact update of model (5) alike; the release's Laplace term stops it only at larger ε or n, DPMCMC has no such drift, and the paper does not give its b for ATUS |
# | Figure S5 | the same at ε = 1 | [`63_atus`](63_atus.ipynb), as Figure S4; `atus_s4s5.jsonl` | differs, explained: as Figure S4, in fewer panels |
#
# The earlier version of the paper (seed 003) has Figures 1-3, Tables 1-2 and Figure S1: earlier forms of S1 (a),
# Figures 1-2, Tables 1-2 and S4 above; they are not listed again.
#
# ### *Dirichlet mechanism for differentially private KL divergence minimization*
#
# Counts: 8 items; reproduced 5, differs (explained) 1, not applicable 2.
#
# | item | what it shows | where in dplit | status |
# |---|---|---|---|
# | Table 1 | the eight UCI data sets: records, attributes, classes | [`81_dirichlet_mechanism_experiments`](papers/81_dirichlet_mechanism_experiments.ipynb), section 8, "Table 1's attribute counts" | reproduced: all eight read, records, classes and attribute columns as in Table 1; two constant columns dropped in Digit and Shopper, explained |
# | Figure 1 | a plot of the trigamma function ψ′ | (not drawn; ψ′ enters the calibration of [`30_dirichlet_mechanism`](30_dirichlet_mechanism.ipynb), section 2) | not applicable: an illustration of a function |
# | Figure 2 | Alg. 1's RDP ε against the exact Rényi divergence, as functions of r, for the paper's pair of histograms | [`81_dirichlet_mechanism_experiments`](papers/81_dirichlet_mechanism_experiments.ipynb), "2. Figure 2" (and section 3 on a grid of neighbouring pairs) | reproduced: the exact divergence stays below the claim (on the grid of pairs as well), λ ∈ {2, 5, 10, 50} (the figure's λ are not stated) |
# | Figure 3 | test cross-entropy of private naive Bayes on the eight data sets, ε from 1e-3 to 10, λ = 5 | [`81_dirichlet_mechanism_experiments`](papers/81_dirichlet_mechanism_experiments.ipynb), section 8 | reproduced: the Dirichlet mechanism lowest at every ε on 7 of 8 data sets (Thyroid: 92% of the ε); baselines calibrated by the exact RDP (Laplace tighter than the paper's closed form) |
# | Figure 4 | test accuracy of the same models | [`81_dirichlet_mechanism_experiments`](papers/81_dirichlet_mechanism_experiments.ipynb), "Figure 4 in numbers" | reproduced: of the four statements two agree and two agree in direction only (gaps the size of the Monte Carlo error) |
# | Figure 5 | the Bayesian networks on Adult, Bank and German Credit | [`81_dirichlet_mechanism_experiments`](papers/81_dirichlet_mechanism_experiments.ipynb), section 9 (the edges, from the authors' notebook) | not applicable: a diagram (its networks are used) |
# | Figure 6 | test log-likelihood of the networks' private parameters | [`81_dirichlet_mechanism_experiments`](papers/81_dirichlet_mechanism_experiments.ipynb), "Figure 6 in numbers" | differs, explained: agrees up to ε = 1 on all three networks; at the largest ε additive noise wins on Adult and Bank, explained by Alg. 1's prior weighing as at least 4(λ - 1) pseudo-records per cell |
# | Figure 7 | (ε, δ)-DP of the mechanism against r, λ ∈ {2, 10, 50, 200}, δ = 1e-5 | [`30_dirichlet_mechanism`](30_dirichlet_mechanism.ipynb), section 6; [`03_accounting`](03_accounting.ipynb), "Reproduced figures" | reproduced: a closed form, checked equal to eq. 10 and increasing in r |
#
# ### Eng, Awan, Ju, Rao & Gong, *dapper: data augmentation for private posterior estimation in R*
#
# Counts: 12 items (9 numbered, 3 unnumbered summaries); reproduced 9, differs (explained) 2, not applicable 1.
#
# | item | what it shows | where in dplit | status |
# |---|---|---|---|
# | Table 1 | Example 1: the confidential admissions table and its randomized-response release | [`82_dapper_examples`](papers/82_dapper_examples.ipynb), "Example 1" (used as the data) | not applicable: the example's input, used as printed |
# | Figure 1 | Example 1: trace plots | [`82_dapper_examples`](papers/82_dapper_examples.ipynb), Example 1, "Figure 1" | reproduced: four chains after warm-up (20,000 kept each, the paper 5,000), every split R-hat at most 1.01 |
# | summary, Ex. 1 (unnumbered) | posterior mean, sd, R-hat, ESS of the four cell probabilities | [`82_dapper_examples`](papers/82_dapper_examples.ipynb), "Example 1" | reproduced: dapper's means and ours both within Monte Carlo error of the exact posterior |
# | Figure 2 | Example 1: private posterior density of the odds ratio | [`82_dapper_examples`](papers/82_dapper_examples.ipynb), "Example 1" (left panel of the Figure 3 plot) | reproduced (as a panel, not a figure of its own) |
# | Figure 3 | Example 1: privacy-aware and naive posteriors of the odds ratio against the confidential one | [`82_dapper_examples`](papers/82_dapper_examples.ipynb), "Example 1" | reproduced |
# | Table 2 | Example 2: the confidential table and its discrete Gaussian release (the paper's σ = 6.32) | [`82_dapper_examples`](papers/82_dapper_examples.ipynb), "Example 2" | differs, explained: the printed release is garbled in the text; we draw our own; the stated ε of 2 log 3 uses sensitivity 2 where one record moves two cells (a smaller ε at sensitivity √2) |
# | summary, Ex. 2 (unnumbered) | posterior summary under the discrete Gaussian | [`82_dapper_examples`](papers/82_dapper_examples.ipynb), "Example 2" | differs, explained: its means cannot come from the printed table (the exact posterior for it is shown); ours match the exact posterior of our release |
# | Figure 4 | Example 2: private posteriors of the odds ratio, randomized response against discrete Gaussian | [`82_dapper_examples`](papers/82_dapper_examples.ipynb), "Example 2" | reproduced, on our own noisy counts (checked against the exact posterior) |
# | Figure 5 | Example 2: aware and naive posteriors against the confidential one | [`82_dapper_examples`](papers/82_dapper_examples.ipynb), "Example 2" | reproduced, on our own noisy counts |
# | summary, Ex. 3 (unnumbered) | regression coefficients' posterior summary at ε = 10, n = 50 | [`82_dapper_examples`](papers/82_dapper_examples.ipynb), "Example 3 at the paper's settings"; `dapper_example3.json` | reproduced: over 100 data sets at the paper's settings its posterior sds and ESS lie within our 5-95% range |
# | Figure 6 | Example 3: naive against privacy-aware posteriors of β | [`82_dapper_examples`](papers/82_dapper_examples.ipynb), "Example 3" | reproduced, on our own data set (R's seed cannot be replayed); the naive posterior is rescaled to the data scale (dapper's code is not) and lies far off the plot |
# | Figure 7 | Example 3: the naive analysis on confidential against privatized data | [`82_dapper_examples`](papers/82_dapper_examples.ipynb), "Example 3" | reproduced, on our own data set |
#
# Sec. 6 (mixing against the privacy budget) has no figure or table; [`82_dapper_examples`](papers/82_dapper_examples.ipynb)
# measures it in "Mixing and the privacy budget".
#
# ### Nixon, Barrientos, Reiter & Slavković, *A latent class modeling approach ...* (with its supplement)
#
# Counts: 16 items (10 in the paper, 6 in the supplement); reproduced in part 10, differs (explained) 3, not applicable 3.
#
# | item | what it shows | where in dplit | status |
# |---|---|---|---|
# | Table 1 | the five ACS variables and their binary codes | `dplit.datasets.load_acs_counts` (the same five variables and codes, ACS 2018 PUMS of 14 states); [`83_latent_class_applications`](papers/83_latent_class_applications.ipynb) | not applicable: a data description, followed |
# | Table 2 | the ten two-way tables of one sample of 10,000 from the 2016 ACS | [`83_latent_class_applications`](papers/83_latent_class_applications.ipynb), "Table 2: one sample's ten two-way tables" | reproduced in part: the printed counts checked against each other (two misprinted cells: CIT x SEX (0, 1) and RACE x INC (1, 0), each a single cell the other tables correct) and set beside samples of the ACS 2018 stand-in; the paper's AGE = 0 share agrees with ages 15-17 among persons aged 15 and over; its Age x Income table needs a person's own income, which the stand-in lacks |
# | Table 3 | coverage and mean length of 95% intervals for the 40 two-way cells, ε = 0.25, 0.5, 1, ∞, 100 samples | [`83_latent_class_applications`](papers/83_latent_class_applications.ipynb), "Coverage over repeated samples (Table 3)"; [`76_latent_class_defaults`](checks/76_latent_class_defaults.ipynb); [`79_nixon_intervals`](checks/79_nixon_intervals.ipynb); `latent_class_coverage.json`, `nixon_intervals.json` | differs, explained: the model as written covers below the nominal 95% with intervals several times shorter than the paper's; 79 finds the paper's lengths only with a likelihood power of 1/24-1/32 the text does not describe; in the rerun with 100,000 records (Sec. 4.3.2, `*_n100000.json`) the model as written stays below nominal in most cells, the defaults in none |
# | Table 4 | the 16 NLTCS items | [`83_latent_class_applications`](papers/83_latent_class_applications.ipynb), "Table 4: the paper's 16 items against the file's columns" | differs, explained: the paper's 2004 wave is restricted; the benchmark file's columns (v0-v15) cannot be matched to the paper's items by prevalence under either coding, so the file is another population |
# | Table 5 | NLTCS: posterior intervals and noisy counts for three margins, ε = 0.5, 1, 2 | [`83_latent_class_applications`](papers/83_latent_class_applications.ipynb), "Tables 5-6, column by column" | reproduced in part: the form only (another file, other margins and variables), not comparable number by number |
# | Table 6 | NLTCS: intervals from 20 synthetic data sets by the combining rules | [`83_latent_class_applications`](papers/83_latent_class_applications.ipynb), "Tables 5-6, column by column" | reproduced in part: the form only, as Table 5 |
# | Figure 1 | ACS, no noise: estimated against true two-way and full-table probabilities | [`83_latent_class_applications`](papers/83_latent_class_applications.ipynb), "One sample: estimated vs true probabilities" | reproduced in part: the paper's settings, one sample of the ACS 2018 stand-in instead of the 2016 file |
# | Figure 2 | the same at ε = 0.25, 0.5, 1 | [`83_latent_class_applications`](papers/83_latent_class_applications.ipynb), same section | reproduced in part: as Figure 1; accuracy grows with ε, as the paper says |
# | Figure 3 | full-table probabilities from the latent-class model, private-pgm and PrivBayes at ε = 0.25, 0.5, 1 | [`53_peers`](53_peers.ipynb), "Fig. 3 of Nixon et al." and "Over repeated samples (stored)"; `peers_acs.json` | reproduced in part: the ACS 2018 stand-in; the stored 10 repetitions have all three methods (the stored live figure lacks private-pgm, not installed); agrees that all three do well |
# | Figure 4 | NLTCS: log ratio of estimated to true two-way probabilities by cell, ε = 0.5, 1, 2, 5 | [`83_latent_class_applications`](papers/83_latent_class_applications.ipynb), "NLTCS"; [`77_margin_selection_checks`](checks/77_margin_selection_checks.ipynb) (29 margins chosen privately, as the paper); `margin_selection.json` | reproduced in part: the benchmark file, not the 2004 wave; mean log ratios of the paper's sign, several times smaller than the paper's |
# | Supp. Table 1 | the nested ACS variables (households of three) | [`54_nested_model`](54_nested_model.ipynb), "Households, variables and the nested model" | not applicable: a data description, followed (R races and K relationships; the simulations use 4 and 4) |
# | Supp. Table 2 | the parameters of the nested model | [`54_nested_model`](54_nested_model.ipynb) (`NestedParams`) | not applicable: a specification, implemented (its index slip against eq. (1) noted) |
# | Supp. Table 3 | the five household summaries and their counts in the paper's 602 ACS households | [`54_nested_model`](54_nested_model.ipynb) (the summaries); [`55_nested`](55_nested.ipynb), "The release: five noisy counts" | reproduced in part: the summaries and eq. (2) implemented and checked; the counts are printed beside a simulated sample (the ACS households are not available) |
# | Supp. Figure 1 | nested model, no noise: estimated against true summary probabilities | [`84_nested_applications`](papers/84_nested_applications.ipynb), "Figure 1" | reproduced in part: simulated households (as many as the paper's <!-- paper -->602), not the ACS sample |
# | Supp. Figure 2 | the same at ε = 0.01, 0.1, 1 | [`84_nested_applications`](papers/84_nested_applications.ipynb), "Figure 2" | reproduced in part: simulated households; the estimates degrade as ε falls, as the supplement says |
# | Supp. Figure 3 | run time of one two-way marginal probability against dimension and classes (the authors' R code) | [`83_latent_class_applications`](papers/83_latent_class_applications.ipynb), "Supp. Fig. 3"; [`76_latent_class_defaults`](checks/76_latent_class_defaults.ipynb) (dplit's time per iteration, p = 5-30; `latent_class_speed.json`) | differs, explained: timed here for dplit's kernel and for eq. (8), the full table summed; eq. (8) has the supplement's shape (growing with p), dplit's kernel does not depend on p, since one two-way margin needs k terms of two factors |
#
# The nested-household work (notebooks 54, 55 and 84) follows the Nixon et al. supplement, Section 1 ("Nested Data
# Example"): the model of Hu et al. (2018) fitted to five noisy summaries of the households of the 2012 ACS used by
# Akande et al. (2019).

# %% [markdown]
# ## How to run things
#
# From the repository root on a fresh machine (each command creates its own virtual environment `.venv`):
#
# * `make tutorial` runs every notebook at full size into `build/notebooks/` and renders HTML into `build/html/`;
# * `make lab` opens JupyterLab on `notebooks/`;
# * `make test` runs the whole test suite (export and pairing checks, ruff, `tests/`, every notebook
#   under nbval in quick mode, in parallel).
#
# To change a method: edit `notebooks/NN_topic.py` (or the `.ipynb` in JupyterLab: Jupytext keeps the
# pair in step), run `python -m dplit.export`, re-execute the notebook (`make nb NB=NN_topic`), and run `make test`.
