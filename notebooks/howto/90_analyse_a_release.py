# %% [markdown]
# # Analyse a release you were given
#
# **You get:** what a release file holds and what it spent, every method's estimate side by side, one method's
# intervals with its convergence report, a test of a hypothesis, and the result saved to a file and read back.
#
# A how-to: each step is a task with its code, in Python and on the command line. Why the methods work is derived
# in the notebooks named under "See also".

# %%
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import arviz as az
import numpy as np
from IPython.display import Markdown, display

from dplit.config import size

SEED = 1
n_iter = size(full=2_000, quick=400)      # kept iterations per chain of the samplers
n_warmup = size(full=1_000, quick=200)    # warm-up iterations per chain
n_draws = size(full=1_000, quick=200)     # bootstrap replicates and accepted ABC draws
# Every file of this page goes to a temporary folder, removed when the kernel exits.
tmp = tempfile.TemporaryDirectory(prefix="dplit-howto-")
work = Path(tmp.name)


def dplit_cli(*args):
    """Run `dplit ARGS` in the work folder and print its output.

    `python -m dplit` is the same program as the `dplit` command."""
    command = textwrap.wrap("$ dplit " + " ".join(args), width=86, break_on_hyphens=False)
    print(" \\\n      ".join(command))
    done = subprocess.run([sys.executable, "-m", "dplit", *args], cwd=work, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})
    print(done.stdout.rstrip())
    assert done.returncode == 0, f"dplit exited with status {done.returncode}"

# %% [markdown]
# ## 1. Get the release file
#
# You were sent `release.json`. So that this page has one to read, we make it here as a curator would, from 600
# simulated time-use compositions (`91_publish_a_release` shows the curator's side). Skip to step 2 with your own file.

# %%
from dplit.release import release

# the curator's data, never published, and its E[x] (known here, not to you)
X = np.random.default_rng(SEED).dirichlet([8.0, 4.0, 5.0, 3.0], size=600)
truth = np.array([8.0, 4.0, 5.0, 3.0]) / 20
curated = release(X, eps1=0.75, eps2=0.25, names=["sleep", "work", "leisure", "other"],
                  rng=SEED, secure=False)   # secure=False: seeded noise, for this page only
curated.save(work / "release.json")
print(sorted(p.name for p in work.iterdir()))

# %% [markdown]
# ## 2. See what it holds and what it spent
#
# `dplit show` reads the file, checks it (a missing field, a tampered number or an implausible statistic raises an
# error naming it) and prints what it holds, what it spent and what can be done with it:

# %%
from dplit.release import Release

dplit_cli("show", "release.json")
rel = Release.load(work / "release.json")      # the same file in Python
fields = json.loads((work / "release.json").read_text())
print(textwrap.fill("fields in the file: " + ", ".join(fields), width=88))

# %% [markdown]
# The summary gives the number of records $n$, the components, the censoring threshold $a$ the curator chose (with
# the noisy censoring rate of each candidate), and the released noisy statistic $S_L$ with its Laplace scale. The
# ledger says what the release spent: $\epsilon_2$ on choosing $a$ and $\epsilon_1$ on the statistic, in total
# $\epsilon_1 + \epsilon_2$. Whatever you compute from the file spends nothing more (post-processing). Its last lines
# are the commands that apply to this release; a warning of the curator (for example that the data probably hold
# exact zeros) would be printed here too, and it travels into every result.

# %% [markdown]
# ## 3. Compare the methods
#
# `compare` runs every method that applies to the release (DPBoots, DPMCMC, DPreMCMC, DPABC, DPapprox, the
# Bayesian ones with prior p1) and puts their estimates of $E[x]$ side by side. `settings` sets each method's
# effort; without it every method runs at its library default (slower).

# %%
from dplit.methods import compare

chains = {"n_iter": n_iter, "n_warmup": n_warmup}
effort = {"dpmcmc": chains, "dpremcmc": chains, "dpapprox": chains,
          "dpboots": {"n_boot": n_draws}, "dpabc": {"n_accept": n_draws}}
cmp = compare(rel, rng=SEED, settings=effort, progress=False)
cols = ["method", "component", "mean", "sd", "lower", "upper", "rhat", "ess", "seconds"]
print(cmp.table[cols].round(3).to_string(index=False))

# %%
# NBVAL_IGNORE_OUTPUT
fig = cmp.plot()

# %% [markdown]
# One row per method and component: the posterior (or bootstrap) mean and sd of $E[x_j]$, its 95% interval, and
# for the samplers with several chains R-hat and the effective sample size (ESS). The figure draws the intervals.
# On the command line, `dplit compare` does the same and writes the table and the figure to one HTML page (here
# two of the samplers, to keep the page quick; `--n-iter` sets the length of every chain, so it is refused when a
# method without chains, such as DPBoots, is among them):

# %%
dplit_cli("compare", "release.json", "--methods", "dpmcmc,dpapprox",
          "--n-iter", str(n_iter), "--seed", str(SEED), "--out", "report.html")

# %% [markdown]
# ## 4. Choose one
#
# * **A posterior given the release:** DPMCMC (`dp_mcmc`) samples it exactly; its cost grows with $n$ (it carries
#   the $n$ records as latent variables). DPapprox (`dp_approx`) approximates it at a cost independent of $n$: use it
#   when $n$ is large and DPMCMC is slow. DPreMCMC (`dp_remcmc`) is cheaper but approximate and mixes slowly;
#   DPABC's intervals are the widest.
# * **Frequentist intervals and tests:** DPBoots (`dp_boots`).
# * **Only a method that converged:** an R-hat above 1.01 means its chains disagree: run it longer
#   (`n_iter="auto"` runs until the chains agree).
#
# Here we take DPMCMC with p1; the table above says whether each method converged at this effort:

# %%
rhat_max = cmp.table.groupby("method", sort=False)["rhat"].max()
unsettled = [m for m, r in rhat_max.items() if r > 1.01]
display(Markdown(f"R-hat above 1.01 at this effort: {', '.join(unsettled) or 'none'}. "
                 f"The largest R-hat of DPMCMC_p1 is {rhat_max['DPMCMC_p1']:.3f}."))
post = cmp.results["DPMCMC_p1"]

# %% [markdown]
# `compare` keeps each result (`cmp.results`), so the chosen one need not run again. To run one method alone:
# `dplit.dp_mcmc(rel, n_iter="auto", rng=1)`, or `dplit.methods.fit(rel, "dpmcmc", rng=1)` by its name.
#
# ## 5. Read the intervals and the convergence report

# %%
import dplit

print(dplit.summary(post))

# %% [markdown]
# Mean, sd and 95% interval of $\alpha_j$ and of $E[x_j]$, with each one's R-hat and bulk ESS, then the method and
# the budget the release spent. The same numbers come from ArviZ, whose `az.summary` also gives the tail ESS and the
# Monte Carlo error of each mean; the run's own verdict is in its `attrs`:

# %%
table = az.summary(post, var_names=["mean_composition"], hdi_prob=0.95)
table = table.drop(columns="mcse_sd")
print(table.rename(index=lambda s: s.replace("mean_composition", "E[x]")).to_string())
for key in ("converged", "rhat_max", "ess_bulk_min", "ess_tail_min"):
    print(f"{key:13} {post.posterior.attrs[key]:.4g}")

# %% [markdown]
# `converged` is 1 when every R-hat is at most 1.01 and every ESS reaches the report's target; `rhat_max` and
# `ess_bulk_min` are the worst over $\alpha$ and $E[x]$. `dplit.diagnostics.rhat` and `ess` compute the same per
# variable. ArviZ's interval here is the 95% highest-density interval; the table above gives the equal-tailed one.
#
# ## 6. Test a hypothesis
#
# Is the mean share of each activity within $\delta = 0.01$ of a hypothesised $M_j$? `interval_test` rejects
# $H_0: |E[x_j] - M_j| \le \delta$ when the 95% interval of $E[x_j] - M_j$ lies outside $[-\delta, \delta]$
# (Guo et al., Sec. 5.2). It takes any method's result: here DPMCMC's posterior and DPBoots' replicates.

# %%
from dplit.bootstrap import interval_test

M = np.array([0.3, 0.2, 0.25, 0.25])
for name in ("DPMCMC_p1", "DPBoots"):
    interval, reject = interval_test(cmp.results[name], M, delta=0.01)
    print(f"{name:10} reject H0_j: {dict(zip(rel.names, reject.tolist()))}")

# %% [markdown]
# A component is rejected when its interval misses $[M_j - \delta, M_j + \delta]$. On the command line,
# `dplit analyse` runs one method, prints the table of step 5, and with `--test` the same decisions:

# %%
dplit_cli("analyse", "release.json", "--method", "dpmcmc", "--n-iter", str(n_iter),
          "--n-warmup", str(n_warmup), "--seed", str(SEED), "--test", ",".join(map(str, M)),
          "--no-progress", "--out", "posterior.nc")

# %% [markdown]
# ## 7. Save and reload

# %%
from dplit.results import from_netcdf, ledger, to_netcdf

to_netcdf(post, work / "dpmcmc.nc")
back = from_netcdf(work / "dpmcmc.nc")
assert np.array_equal(back.posterior["mean_composition"].values,
                      post.posterior["mean_composition"].values)
cli_result = from_netcdf(work / "posterior.nc")          # what `dplit analyse --out` wrote
for key in ("method", "prior", "eps_total", "seeds"):
    print(f"{key:11} {back.posterior.attrs[key]}")
for charge, e in ledger(back).items():              # the release's ledger, eps_by_part
    print(f"spent {e:g} on {charge}")
print(cli_result.posterior["mean_composition"].mean(("chain", "draw")).round(3).values)

# %% [markdown]
# The file holds the draws and the run's record: the method, the prior, the budget and its ledger, the seeds that
# reproduce the draws, the convergence report. `result.to_netcdf(path)` and `arviz.from_netcdf(path)` work as well.
# Keep the release file beside it: the result names what it spent, the release says what it saw.

# %%
# The page's checks: the intervals of the exact method cover the truth, the budget is the release's.
lo, hi = cmp.table.set_index("method").loc["DPMCMC_p1", ["lower", "upper"]].to_numpy().T
assert np.all((lo - 0.02 <= truth) & (truth <= hi + 0.02))
assert set(cmp.table["eps_total"]) == {rel.eps_total}
assert float(back.posterior.attrs["eps_total"]) == rel.eps_total

# %% [markdown]
# ## See also
#
# * `14_release_record`: the `Release` record, its checks and its JSON; `15_release`: how a release is made.
# * `60_methods`: every method on one release (`dplit.methods.compare`, `dplit.methods.fit`, `REGISTRY`).
# * `17_bootstrap` (DPBoots, `dplit.bootstrap.interval_test`, `two_sample_test` for two releases), `21_mcmc`
#   (DPMCMC, DPreMCMC), `22_abc` (DPABC), `23_approx` (DPapprox), `18_priors` (p1-p5).
# * `04_sampling`: the convergence report (`dplit.diagnostics.rhat`, `ess`); `dplit.results.to_netcdf`,
#   `from_netcdf`, `CONTRACT_ATTRS` (what a result's `attrs` mean).
# * The command line: `dplit analyse --help`, `dplit compare --help`.
