# %% [markdown]
# # Bring a dapper model to Python
#
# **You get:** a privacy model written for the R package dapper (`new_privacy` + `dapper_sample`) running in
# Python with `dplit.augmentation`, module for module, with its posterior as an ArviZ object and dapper's summary.
#
# A how-to: each step is a task with its code. Why data augmentation samples the posterior given the release, and
# how the modules are compiled, is derived in `41_augmentation` and `40_augmentation_engines`.

# %%
import warnings

import arviz as az
import numpy as np

from dplit.config import size

SEED = 3
n_iter = size(full=4_000, quick=500)      # kept iterations per chain
n_warmup = size(full=1_000, quick=200)    # warm-up iterations per chain

# %% [markdown]
# ## 1. The model in R
#
# A worked example: the daily counts $x_1, \dots, x_n$ of $n = 100$ sites, $x_i \sim \mathrm{Poisson}(\lambda)$, prior
# $\lambda \sim \mathrm{Gamma}(1, \text{rate } 0.1)$. The curator clamps each count at $C = 10$ (so one site moves
# the sum by at most $C$) and releases the clamped sum with Laplace noise of scale $C / \epsilon$, $\epsilon = 1$.
# In dapper this is four modules:
#
# ```r
# library(dapper)
# n <- 100; C <- 10; eps <- 1
# latent_f <- function(theta) matrix(rpois(n, theta), ncol = 1)              # the data model
# post_f   <- function(dmat, theta) rgamma(1, shape = 1 + sum(dmat), rate = 0.1 + n)  # posterior given the data
# st_f     <- function(xi, sdp, i) min(xi, C)                                  # record i's term of the statistic
# priv_f   <- function(sdp, sx) -abs(sdp - sx) * eps / C                       # log density of the noise
# model <- new_privacy(post_f = post_f, latent_f = latent_f, priv_f = priv_f, st_f = st_f,
#                      npar = 1, varnames = "lambda")
# out <- dapper_sample(model, sdp = sdp, init_par = 1, niter = 5000, warmup = 1000, chains = 4)
# ```
#
# ## 2. The same modules in Python
#
# Each R function becomes a Python function of the same arguments, with two changes: the modules that draw
# (`latent_f`, `post_f`) take the chain's random generator as a last argument `rng`, and `i` counts from 0.
# `theta` is an array (`theta[0]` here), and `post_f` returns an array of `npar` numbers.

# %%
from dplit.augmentation import PrivacyModel

n, C, eps = 100, 10, 1.0


def latent_f(theta, rng):                 # rpois(n, theta) as an n x 1 matrix
    return rng.poisson(theta[0], size=(n, 1)).astype(np.float64)


def post_f(dmat, theta, rng):             # rgamma(shape, rate); NumPy takes 1 / rate
    return np.array([rng.gamma(1.0 + dmat.sum(), 1.0 / (0.1 + n))])


def st_f(xi, sdp, i):                     # the clamped count of record i
    return min(xi[0], C)


def priv_f(sdp, sx):                      # Laplace log density, up to a constant
    return -abs(sdp - sx) * eps / C


model = PrivacyModel(latent_f, post_f, priv_f, st_f, npar=1, varnames=["lambda"])
print(model)

# %% [markdown]
# | dapper (R) | `dplit.augmentation` (Python) |
# |---|---|
# | `new_privacy(post_f, latent_f, priv_f, st_f, npar, varnames)` | `PrivacyModel(latent_f, post_f, priv_f, st_f, npar, varnames)` (note the order; keywords work too) |
# | `latent_f(theta)`, `post_f(dmat, theta)` | the same, plus `rng` (a `numpy.random.Generator`) |
# | `st_f(xi, sdp, i)`, `i` from 1 | the same, `i` from 0 |
# | `priv_f(sdp, sx)` | the same |
# | `dapper_sample(model, sdp, init_par, seed, niter, warmup, chains)` | `dapper_sample(model, sdp, init_par, rng=, n_iter=, n_warmup=, n_chains=)`: `n_iter` counts the kept iterations only (dapper's `niter - warmup`) |
# | a `dpout` object, `summary(out)` | an ArviZ `InferenceData`; `dplit.augmentation.summary(res)` gives dapper's table |
#
# ## 3. Run it on the released value

# %%
from dplit.accounting import PrivacyBudget
from dplit.augmentation import dapper_sample
from dplit.mechanisms import laplace_mechanism

# the confidential counts (simulated, lambda = 3) and what the curator released
x = np.random.default_rng(SEED).poisson(3.0, n)
# secure=False: a simulated release, seeded so that this page reads the same each run (a curator publishing
# real data keeps the default, the exact sampler)
sdp = float(laplace_mechanism(np.minimum(x, C).sum(), C, eps, rng=SEED, secure=False))
# the modules do not say what the release cost: a ledger does, and the result carries it
spent = PrivacyBudget(eps)
spent.spend(eps, "clamped sum of the counts (Laplace)")
res = dapper_sample(model, sdp, [1.0], n_iter=n_iter, n_warmup=n_warmup, n_chains=4,
                    rng=SEED, progress=False, budget=spent)
print(f"released sdp = {sdp:.1f}; engine: {res.posterior.attrs['engine']}; "
      f"{res.posterior.sizes['chain']} chains x {res.posterior.sizes['draw']} draws")

# %% [markdown]
# Plain Python modules are compiled with numba when they can be (`engine` says which engine ran; a module that does
# not compile runs as Python, with a notice naming it). The same seed gives the same draws.
#
# ## 4. Read the output with ArviZ

# %%
print(az.summary(res, hdi_prob=0.95).to_string())

# %%
# NBVAL_IGNORE_OUTPUT
axes = az.plot_trace(res, figsize=(8, 2.2))

# %% [markdown]
# `az.summary` gives the posterior mean, sd and 95% interval of $\lambda$ with R-hat and the bulk and tail ESS; the
# trace plot shows the four chains overlapping. Any ArviZ function takes the result (`az.plot_posterior`,
# `az.ess`, ...). dapper's own summary table (median, mad, q5, q95) and the run's record:

# %%
from dplit.augmentation import summary

print(summary(res).round(3))
for key in ("method", "engine", "eps_total", "eps_by_part", "converged"):
    print(f"{key:11} {res.posterior.attrs[key]}")

# %% [markdown]
# The noise costs precision: without it (the counts themselves, $\epsilon = \infty$) the posterior is
# $\mathrm{Gamma}(1 + \sum x_i, 0.1 + n)$. The result's `sample_stats` hold the acceptance rate of the record
# proposals, and `observed_data` the released value.

# %%
lam = res.posterior["lambda"].values.ravel()
exact_sd = np.sqrt(1.0 + x.sum()) / (0.1 + n)
print(f"posterior sd of lambda: {lam.std():.3f} given the release, "
      f"{exact_sd:.3f} given the counts")
acceptance = float(res.sample_stats["acceptance"].mean())
print(f"mean acceptance of record proposals: {acceptance:.2f}")
assert abs(lam.mean() - 3.0) < 4 * lam.std() and lam.std() > exact_sd

# %% [markdown]
# ## See also
#
# * `41_augmentation`: the method (`dplit.augmentation.PrivacyModel`, `dapper_sample`, `summary`), with an exact check.
# * `40_augmentation_engines`: the three engines and three ways to write the modules (batch, numba) for speed.
# * `82_dapper_examples`: dapper's Examples 1-3 (randomized response, the discrete Gaussian, regression), whose
#   modules are in `examples/dapper_examples.py`.
# * `02_mechanisms` (`laplace_mechanism` and the other mechanisms' densities), `03_accounting` (`PrivacyBudget`).
