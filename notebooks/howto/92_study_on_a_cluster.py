# %% [markdown]
# # Run the simulation study on a cluster
#
# **You get:** a simulation study (methods against known truths, over a grid of $n$ and $\epsilon$) run on a Dask
# cluster, resumed after a stop without redoing a task, and its report: the summary table and the figures.
#
# A how-to: each step is a task with its code, on the command line and in Python. What the study measures is
# derived in `62_study`; the stores and the runner in `61_study_store`.

# %%
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from IPython.display import Image, display

from dplit.config import size

replicates = size(full=3, quick=2)     # data sets per cell of the grid
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
    return done.stdout

# %% [markdown]
# ## 1. Write the study's settings
#
# A TOML file with a `[study]` table; its keys are the fields of `dplit.study.StudyConfig` (an empty table is the
# paper's full grid, Guo et al. Sec. 5.1). Here a tiny grid: one true $\boldsymbol\alpha$, one $n$, two budgets,
# two methods, `quick = true` (short chains, few bootstrap replicates).

# %%
(work / "study.toml").write_text(f"""[study]
alpha_true = [[2.0, 2.0, 2.0]]
n = [200]
eps = [0.5, 1.0]
methods = ["dpboots", "dpapprox_p1"]
replicates = {replicates}
seed = 1
quick = true
""")
from dplit.study import StudyConfig, make_tasks

config = StudyConfig.from_toml(work / "study.toml")
print(f"{len(make_tasks(config))} tasks: {len(config.scenarios())} scenarios x "
      f"{config.replicates} data sets x {len(config.methods)} methods")

# %% [markdown]
# Each task is one (scenario, data set, method); its seed comes from its settings and `seed`, so a task gives the
# same result wherever and whenever it runs.
#
# ## 2. Start a Dask cluster
#
# On a real cluster, start a scheduler on one machine and workers on the others (each with dplit installed, the same
# version as yours):
#
# ```bash
# dask scheduler                                          # prints its address, tcp://HOST:8786
# dask worker tcp://HOST:8786 --nworkers 8 --nthreads 1   # on each worker machine
# ```
#
# Here a `LocalCluster` of two worker processes on this machine stands in for it; its address is what you would
# pass.

# %%
import logging

from distributed import LocalCluster

cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                       dashboard_address=None, silence_logs=logging.ERROR)
address = cluster.scheduler_address
print(address)

# %% [markdown]
# ## 3. Run the study on it
#
# `dplit study run` sends every task that is not in the store yet to the scheduler and writes each result to the
# store as it comes back. The store lives on the machine that runs the command: a text table of JSON lines (a path
# ending in `.jsonl`, the form to commit and share) or a SQLite file (any other path). Here we stop after half the
# tasks (`--max-tasks`), as a job killed by its time limit would:

# %%
half = len(make_tasks(config)) // 2
out = dplit_cli("study", "run", "--config", "study.toml", "--store", "results.jsonl",
                "--scheduler", address, "--max-tasks", str(half), "--no-progress")
assert f"ran {half} tasks" in out

# %% [markdown]
# ## 4. Resume
#
# Run the same command again: the tasks found in the store are skipped, the rest run.

# %%
out = dplit_cli("study", "run", "--config", "study.toml", "--store", "results.jsonl",
                "--scheduler", address, "--no-progress")
assert f"found {half} done" in out

# %% [markdown]
# "found ... done" counts the tasks the first run stored. Run it once more and it runs nothing. Without
# `--scheduler` the same command runs on a process pool of this machine (`--workers N`); the results are the same
# either way. In Python, `run_study` takes any `concurrent.futures` executor, a Dask client's among them:

# %%
from dplit.study import dask_executor, run_study

executor, client = dask_executor(address)
try:
    done = run_study(config, work / "results.jsonl", executor=executor, progress=False)
finally:
    client.close()
cluster.close()
print(done)
assert done.ran == 0 and done.found == len(make_tasks(config))

# %% [markdown]
# ## 5. Report

# %%
dplit_cli("study", "report", "--store", "results.jsonl", "--out", "report")
display(Image(filename=str(work / "report" / "figure2_coverage.png")))   # natural size: legible

# %% [markdown]
# One row per cell of the grid and method: the runs stored and failed, the fraction converged, the medians over
# the converged runs of the squared errors of $\boldsymbol\alpha$ and of $E[x]$ and of the coverage of the
# intervals, and the median seconds per run. `--out` also
# writes `summary.csv` and the paper's figures (1, 2, S2) as PNG; above, the coverage. With so few data sets per
# cell the numbers are noisy: a real study runs `replicates = 50` or more. In Python:
# `dplit.study_summary.summarise(dplit.study_summary.load_results(store))`.
#
# ## See also
#
# * `62_study`: the study's settings (`dplit.study.StudyConfig`), tasks and seeds (`make_tasks`), measures and
#   `run_study`; `61_study_store`: the stores (`open_store`, `TableStore`, `ResultStore`, `export_table`) and the
#   runner on any executor (`dask_executor`, `run_tasks`).
# * `64_study_summary`: summaries and figures from a store; `80_guo_simulation_study`: the paper's study, from the
#   committed table `benchmarks/results/sec51_study.jsonl`.
# * The command line: `dplit study run --help`, `dplit study report --help`, `dplit study export --help` (a SQLite
#   store as a text table).
