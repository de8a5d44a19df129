# %% [markdown]
# # Publish a release from your data
#
# **You get:** a differentially private release of a table of compositions (a JSON file to publish), with a budget
# chosen from the error it buys, made on the command line or in Python, and a list of what to publish and what not.
#
# A how-to: each step is a task with its code. Why the release is private, and how it chooses its censoring
# threshold, is derived in `15_release`.

# %%
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from IPython.display import Markdown, display

from dplit.config import size

SEED = 2
n_records = size(full=2_000, quick=500)
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
# ## 1. Put the data in a CSV file
#
# One record per row, one column per component, a header row naming the components (the names travel into the
# release and every analysis). Rows are either compositions (non-negative, summing to 1) or raw non-negative
# amounts, divided by their row sums when you pass `--close`. Here: minutes per day spent on four activities by
# simulated people (stand-ins for your confidential records).

# %%
names = ["sleep", "work", "leisure", "other"]
shares = np.random.default_rng(SEED).dirichlet([8.0, 4.0, 5.0, 3.0], size=n_records)
minutes = np.round(shares * 1440)
with open(work / "minutes.csv", "w") as fh:
    fh.write(",".join(names) + "\n")
    np.savetxt(fh, minutes, fmt="%d", delimiter=",")
print("".join((work / "minutes.csv").open().readlines()[:4]) + "...")

# %% [markdown]
# ## 2. Choose the budget
#
# The release spends $\epsilon_1$ on the noisy statistic and $\epsilon_2$ on choosing the censoring threshold $a$.
# A smaller $\epsilon$ protects more and adds more noise. `release_mse(alpha, a, n, eps1)` gives the mean squared
# error of the released statistic (censoring bias + sampling variance + Laplace noise) for data like yours. Feed
# it a **guess** of the Dirichlet parameter from public knowledge (last year's published shares, a pilot): never
# from the data you are about to release, which would spend privacy that no ledger records.

# %%
from dplit.release import PAPER_CANDIDATES, release_mse

alpha_guess = np.array([6.0, 5.0, 5.0, 4.0])   # public knowledge, not the confidential data


def best_rmse(eps1):
    """The RMSE at the best candidate threshold (the one the rule aims for)."""
    mse = min(release_mse(alpha_guess, a, n_records, eps1) for a in PAPER_CANDIDATES)
    return mse**0.5


eps1_grid = np.array([0.1, 0.25, 0.5, 1.0, 2.0, 4.0])
rmse = np.array([best_rmse(e) for e in eps1_grid])
rmse_free = best_rmse(1e12)                    # no noise to speak of
target = 2.0           # your rule: the noise may at most double the error
eps1 = float(eps1_grid[np.argmax(rmse <= target * rmse_free)])
eps2 = round(eps1 / 3, 2)                      # about a quarter of the total, as Guo et al.
for e, r in zip(eps1_grid, rmse):
    print(f"eps1 = {e:<5g} RMSE {r:.4f}  ({r / rmse_free:.1f} x the error without noise)")
display(Markdown(
    f"The smallest $\\epsilon_1$ of the grid whose error is at most {target:g} times the "
    f"error without noise is {eps1:g}; with $\\epsilon_2 \\approx \\epsilon_1 / 3$ = "
    f"{eps2:g} the release spends $\\epsilon$ = {eps1 + eps2:.3g} in all."))

# %%
# NBVAL_IGNORE_OUTPUT
fig, ax = plt.subplots(figsize=(5, 3))
ax.loglog(eps1_grid, rmse, "o-", label=f"with Laplace noise, n = {n_records}")
ax.axhline(rmse_free, color="k", ls="--", lw=1, label="without noise")
ax.axvline(eps1, color="C3", lw=1, label=r"chosen $\epsilon_1$")
ax.set(xlabel=r"$\epsilon_1$", ylabel="RMSE of the released statistic")
ax.legend(fontsize=9, frameon=False)
fig.tight_layout()

# %% [markdown]
# The error falls as $1/\epsilon_1$ until censoring bias and sampling variance, which no budget removes, dominate.
# More records buy the same error at a smaller $\epsilon$. The rule above is one choice among many: a budget is
# a policy decision, and the curve is what it costs.
#
# ## 3. Make the release
#
# On the command line: `dplit release` reads the CSV, chooses $a$ (with $\epsilon_2$), releases the statistic (with
# $\epsilon_1$), prints what it published and writes the JSON. The noise comes from OpenDP's samplers and is never
# seeded.

# %%
dplit_cli("release", "minutes.csv", "--close", "--eps1", f"{eps1:g}", "--eps2", f"{eps2:g}",
          "--out", "release.json")

# %% [markdown]
# The output lists each candidate threshold with its noisy censoring rate, the chosen $a$, and the released
# statistic $S_L$ with its Laplace scale; a warning follows when even the smallest candidate censors many records.
# In Python the same release is `release(X, eps1=..., eps2=..., names=...)`, with the compositions read from the
# CSV and closed:

# %%
from dplit.dirichlet import close
from dplit.release import release

# the rows divided by their sums; secure=True (the default): OpenDP's noise
X = close(np.loadtxt(work / "minutes.csv", delimiter=",", skiprows=1))
rel = release(X, eps1=eps1, eps2=eps2, names=names)
rel.save(work / "release_py.json")
print(rel.summary())

# %% [markdown]
# Publish one of them, not both: two releases of the same records spend $\epsilon$ twice (sequential composition).
# Options: `--split 0.25` (`n1=` in Python) also releases the statistic of a random quarter of the records, from
# which an analyst can build the priors p3-p5, at no extra budget; `--candidates` and `--tc` change the threshold
# rule (`15_release` says when).
#
# ## 4. Publish the JSON, and nothing else

# %%
text = (work / "release.json").read_text()
published = json.loads(text)
for key, value in published.items():
    print(textwrap.fill(f"{key:10} {value}", width=88, subsequent_indent=" " * 11))
assert "seed" not in text and len(published["s_L"]) == len(names)

# %% [markdown]
# The file holds: the format version; `n`, `d` and the component `names`; the budget `eps1`, `eps2`; the threshold
# rule (`candidates`, `tc`) with its noisy counts `s_G` and rates `p_hat_G` and the chosen `a`; the noisy statistic
# `s_L` and its Laplace `scale` (with a split, `s_L1`, `scale1`, `n1`, `n2` too). Every number in it is either
# noisy or public. An analyst needs nothing else (`90_analyse_a_release`).
#
# **Do not publish:**
# * the data (`minutes.csv`), or any statistic computed from it without noise;
# * the seed of a split (`--seed`): with it and the data the parts are known;
# * a second release of the same records, or a release made with `secure=False` (seeded noise, for simulations);
# * a release you chose among several tries (re-running until the numbers look good spends every try's budget).
#
# Check the file before sending it: `dplit show` (and `Release.load` in Python) reads it back with every check an
# analyst's copy will pass, and prints what the analyst will see.

# %%
from dplit.release import Release

back = Release.load(work / "release.json")
assert back.names == tuple(names) and back.eps_total == eps1 + eps2
dplit_cli("show", "release.json")

# %% [markdown]
# ## See also
#
# * `15_release`: Algorithm 1 (`dplit.release.release`), the threshold rule, `release_mse` and the bias-variance
#   trade-off in $a$; `71_release_checks`: the release's noise, split and privacy audited.
# * `14_release_record`: the `Release` record and its JSON (`Release.save`, `Release.load`).
# * `13_censoring`: what censoring costs; `03_accounting`: budgets and composition (`PrivacyBudget`).
# * `90_analyse_a_release`: the analyst's side. The command line: `dplit release --help`.
