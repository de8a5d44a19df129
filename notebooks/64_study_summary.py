# %% [markdown]
# # The study's summaries and the paper's figures, from a store
# A study's store read into a table, summarised per cell of the grid over the converged runs (with the Monte Carlo error of each median), and drawn as Figures 1-2 and S2 of Guo et al., with Figure S3's numbers.
#
# * **For:** reading a simulation study of Guo et al. (Sec. 5.1), once its tasks are in a store (notebook `62_study`, `dplit study run`).
# * **You need:** a store (a `.jsonl` text table or a SQLite file) that `dplit.study.run_study` wrote; nothing to download.
# * **You get:** `dplit.study_summary`: `load_results` (the store as a pandas table), `summarise` (medians over the converged runs, run, failure and convergence counts, bootstrap intervals of each median), `figure_mse`, `figure_coverage`, `figure_convergence` (Figures 1, 2 and S2) `fixed_vs_dp` (Figure S3's numbers), `METHOD_STYLE` (one colour, marker and paper label per method, for every study figure) and the verdict rules that set a result beside the paper's words (`similar`, `slightly_larger`, `unconverged`, `verdict`), each checked here; `dplit study report` calls them.
#
# Nothing here runs a method: a summary needs only the stored rows, so it sits above the runner (`dplit.study`) and
# can be rerun on a store that another machine filled. The paper's grid, summarised by these functions with Monte
# Carlo error bars, is in `80_guo_simulation_study`.

# %%
#| default_exp study_summary

# %% [markdown]
# ## Parameters
#
# Sizes come from the size switch (`DPLIT_QUICK=1`: the test suite's): the data sets per cell of the small study
# below, and the planted cells of the interval check.

# %%
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from dplit.config import size
from IPython.display import display

SEED = 20261127
replicates = size(full=10, quick=3)              # data sets per cell of the small study
n_cells = size(full=400, quick=100)             # planted cells in the check of the intervals

# %% [markdown]
# ## The result first: the paper's grid, summarised
#
# From the finished module `dplit.study_summary` (sections 1-6 build it), read from the committed table of the paper's
# grid, `benchmarks/results/sec51_study.jsonl` (Guo et al., Sec. 5.1: the two non-private benchmarks and one method
# per family). For $\boldsymbol\alpha_3 = (2.2, 3.3, 4.4)$ and $n = 1000$: the median over the stored data sets of the MSE of
# $\boldsymbol\alpha$ (Figure 1's measure) and of the coverage of the 95% predictive ellipsoid (Figure 2, right), over the
# converged runs only, as the paper does. The privacy shows as a loss of orders of magnitude in the MSE at small
# $\epsilon$ that vanishes at $\epsilon = 10^{10}$. The check: the benchmarks cover 0.95 within 0.01 in every column; at
# $\epsilon = 0.25$ every private method's MSE is over 100 times Boots'; at $\epsilon = 10^{10}$ every method is within a
# factor 3 of it. Notebook `80_guo_simulation_study` draws the whole grid as Figures 1-2 and S2.

# %%
from dplit.config import stored_path
from dplit.study_summary import load_results, paper_label, summarise

path_first = stored_path("sec51_study.jsonl", script="dplit study run --config benchmarks/sec51.toml --store "
                         "benchmarks/results/sec51_study.jsonl")        # None (and a note) where the table is absent
if path_first is not None:
    cell_first = summarise(load_results(path_first)).query("alpha == '(2.2, 3.3, 4.4)' and n == 1000")
    order_first = ["boots", "mcmc_p1", "dpboots", "dpmcmc_p1", "dpremcmc_p1", "dpabc_p4", "dpapprox_p4"]
    mse_first = cell_first.pivot(index="method", columns="eps", values="mse_alpha").reindex(order_first)
    cov_first = cell_first.pivot(index="method", columns="eps", values="coverage").reindex(order_first)
    private_first = order_first[2:]
    assert ((cov_first.loc[["boots", "mcmc_p1"]] - 0.95).abs() < 0.01).all().all()
    assert (mse_first.loc[private_first, 0.25] > 100 * mse_first.loc["boots", 0.25]).all()
    assert (mse_first[1e10] < 3 * mse_first.loc["boots", 1e10]).all()
    shown_first = pd.concat({"median MSE of alpha": mse_first.map("{:.3g}".format),
                             "median predictive coverage": cov_first.map("{:.3f}".format)}, axis=1)
    shown_first.columns = shown_first.columns.set_levels([f"eps = {e:g}" for e in shown_first.columns.levels[1]],
                                                         level=1).set_names([None, None])
    shown_first.index = [paper_label(m) for m in order_first]
    print(f"{int(cell_first['runs'].min())} data sets per method and eps (of the paper's 50)")
    display(shown_first)

# %% [markdown]
# ## A small study to read
#
# Two true parameters ($\boldsymbol\alpha_2 = (0.5, 0.5, 0.5)$ of the paper, and $(2, 2, 2)$), $n = 200$,
# $\epsilon \in \{1, 10^{10}\}$, the two benchmarks (Boots, MCMC$_{p1}$) and three private methods at the quick effort,
# run by `dplit.study.run_study` into one text table. The same store holds the S5 variant, a fixed threshold
# $a = 10^{-6}$, for three of the methods: its tasks have their own keys, and the same data sets (a data seed does not
# depend on the threshold rule).

# %%
from dplit.study import SerialExecutor, StudyConfig, run_study  # noqa: E402

grid = {"alpha_true": [[0.5, 0.5, 0.5], [2.0, 2.0, 2.0]], "n": [200], "eps": [1.0, 1e10], "replicates": replicates,
        "seed": 1, "quick": True, "methods": ["boots", "mcmc_p1", "dpboots", "dpmcmc_p1", "dpabc_p4"]}
fixed_grid = dict(grid, methods=["dpboots", "dpmcmc_p1", "dpabc_p4"], threshold=1e-6)
store = Path(tempfile.mkdtemp()) / "small.jsonl"
for cfg in (grid, fixed_grid):
    print(run_study(StudyConfig.from_dict(cfg), store, executor=SerialExecutor(), progress=False))

# %% [markdown]
# ## 1. From a store to a table
#
# `load_results` reads a store into a pandas table: one row per task, its settings and measures, with the true
# $\boldsymbol\alpha$ as a label (`"(0.5, 0.5, 0.5)"`) and the threshold rule as text (`"dp"`, or the fixed `a`), the
# keys by which the summaries group.

# %%
#| export
import numpy as np

from dplit import _validate as V
from dplit.study import CHAIN_FAMILIES, METHOD_SETTINGS, METHODS, SELECTED, check_max_mpsrf
from dplit.study_store import open_store


def load_results(store):
    """A pandas DataFrame of a store: one row per task, its settings and measures (``alpha`` as a label)."""
    import pandas as pd

    df = pd.DataFrame(open_store(store).rows())
    if len(df):
        df["alpha"] = df["alpha_true"].map(lambda a: "(" + ", ".join(f"{x:g}" for x in a) + ")")
        df["threshold"] = df["threshold"].astype(str)
    return df


# %% [markdown]
# Checks: one row per task of the two studies, none failed; the labels; a store with nothing in it reads as an empty
# table.

# %%
from dplit.study_summary import load_results  # noqa: E402

df = load_results(store)
n_tasks = replicates * 2 * 2 * (5 + 3)
assert len(df) == n_tasks and df["error"].isna().all(), (len(df), df["error"].dropna().tolist())
assert set(df["alpha"]) == {"(0.5, 0.5, 0.5)", "(2, 2, 2)"} and set(df["threshold"]) == {"dp", "1e-06"}
assert load_results(Path(tempfile.mkdtemp()) / "empty.sqlite").empty
print(f"{len(df)} tasks, columns: {', '.join(df.columns)}")

# %% [markdown]
# ## 2. Medians over the converged runs
#
# `summarise` groups by (alpha, n, eps, threshold, method) and reports the runs, the failures (a method that raised),
# the fraction **converged** (multivariate PSRF <= `max_mpsrf`, 1.1 as in the paper; bootstrap and ABC have no chains
# and count as converged), and the medians of the measures **over the converged runs**, as the paper discards the
# others. The median runtime is over all runs, failed ones included.

# %%
#| export
_MEASURES = ("mse_alpha", "mse_mean", "se_alpha", "se_mean", "coverage")


def summarise(df, *, max_mpsrf=1.1, intervals=False, level=0.9, n_boot=1000, min_runs=5, rng=None):
    """Medians per (alpha, n, eps, threshold, method) over the converged runs, with run, failure and convergence counts.

    Parameters
    ----------
    df : pandas.DataFrame
        From :func:`load_results`.
    max_mpsrf : float, default 1.1
        Runs above this multivariate PSRF are not converged (and left out of the medians), as in the paper.
    intervals : bool, default False
        Add the Monte Carlo error of each median: columns ``<measure>_lo`` and ``<measure>_hi``, the percentile
        bootstrap interval (``level``, ``n_boot`` resamples of the data sets of the cell), and ``converged_lo``,
        ``converged_hi`` (the same for the fraction converged). A cell with fewer than ``min_runs`` values has
        NaN intervals: a bootstrap of one or two values says nothing about their error.
    rng : None, int or numpy.random.Generator
        The bootstrap's randomness.
    """
    import pandas as pd

    max_mpsrf = check_max_mpsrf(max_mpsrf)
    if not hasattr(df, "columns") or not len(df) or "error" not in df.columns:
        raise ValueError(f"df must be the rows of a study store (load_results), with at least one task; got "
                         f"{len(df) if hasattr(df, '__len__') else type(df).__name__} row(s) (an absent store path "
                         f"reads as an empty store: check the path)")
    df = df.copy()
    df["failed"] = df["error"].notna()
    mp = df["mpsrf"] if "mpsrf" in df else pd.Series(np.nan, index=df.index)
    df["converged"] = ~df["failed"] & ~(mp.astype(float) > max_mpsrf)
    keys = ["alpha", "n", "eps", "threshold", "method"]
    g = df.groupby(keys)
    out = g.agg(runs=("method", "size"), failed=("failed", "sum"), converged=("converged", "mean"),
                runtime=("runtime", "median")).reset_index()
    good = df[df["converged"]].groupby(keys)
    med = good[list(_MEASURES)].median().reset_index()
    out = out.merge(med, on=keys, how="left")
    if intervals:
        ci = _median_intervals(df, keys, level=level, n_boot=n_boot, min_runs=min_runs, rng=rng)
        out = out.merge(ci, on=keys, how="left")
    return out


# %% [markdown]
# Checks on a planted cell whose answer is known: five runs of one method, one failed, one with a multivariate PSRF of
# 1.5, the others at MSE 1, 2, 3. The cell counts 5 runs, 1 failure, 3/5 converged, and the median MSE is 2 (the
# unconverged run's 100 is left out); with no cut-off (`max_mpsrf=inf`) 4/5 converge and the median is 2.5. A cut-off
# at or below 1 is refused (every run would count as unconverged). Then the small study's summary: every run of every
# cell is counted, bootstrap methods count as converged, and the medians behave as the design says: at $\epsilon = 1$
# every private method's median MSE of $\boldsymbol\alpha$ is over three times Boots' (with $n = 200$ records the noise
# dominates), at $\epsilon = 10^{10}$ DPBoots and DPMCMC$_{p1}$ are within a factor 2 of it.

# %%
from dplit.study_summary import summarise  # noqa: E402
from dplit.testing import raises  # noqa: E402

cell = dict(alpha="a", n=100, eps=1.0, threshold="dp", method="dpmcmc_p1", runtime=1.0)
planted = pd.DataFrame([{**cell, "replicate": i, "error": err, "mpsrf": mp, **dict.fromkeys(
    ("mse_alpha", "mse_mean", "se_alpha", "se_mean", "coverage"), v)} for i, (v, mp, err) in enumerate(
    [(1.0, 1.01, None), (2.0, 1.02, None), (3.0, 1.0, None), (100.0, 1.5, None), (np.nan, np.nan, "ValueError: x")])])
row = summarise(planted).iloc[0]
assert (row["runs"], row["failed"], row["converged"], row["mse_alpha"]) == (5, 1, 0.6, 2.0)
row = summarise(planted, max_mpsrf=float("inf")).iloc[0]
assert (row["converged"], row["mse_alpha"]) == (0.8, 2.5)
for bad in (1.0, 0.5, float("nan")):
    assert raises(ValueError, summarise, planted, max_mpsrf=bad, match="max_mpsrf must be > 1")

summary = summarise(df)
dp = summary[summary["threshold"] == "dp"].set_index(["alpha", "eps", "method"])
assert (dp["runs"] == replicates).all() and (dp["failed"] == 0).all()
assert (dp["converged"].xs("dpboots", level="method") == 1).all() and (dp["converged"].xs("boots", level="method") == 1).all()
ratio = dp["mse_alpha"].unstack("method").div(dp["mse_alpha"].xs("boots", level="method"), axis=0)
assert (ratio.xs(1.0, level="eps")[["dpboots", "dpmcmc_p1", "dpabc_p4"]] > 3).all().all()
assert ratio.xs(1e10, level="eps")[["dpboots", "dpmcmc_p1"]].apply(lambda r: r.between(0.5, 2)).all().all()
dp[["runs", "converged", "mse_alpha", "mse_mean", "coverage"]].round(4)

# %% [markdown]
# ## 3. The Monte Carlo error of a median
#
# A median over 50 data sets (the paper's) is itself uncertain. `summarise(..., intervals=True)` adds a percentile
# bootstrap interval to each median and to the fraction converged: resample the data sets of the cell with
# replacement `n_boot` times, take the statistic of each resample, and report its `(1 - level) / 2` and
# `(1 + level) / 2` quantiles. The figures draw these as error bars. A cell with fewer than `min_runs` values gets NaN:
# a bootstrap of two values says nothing about their error.

# %%
#| export
def _median_intervals(df, keys, *, level, n_boot, min_runs, rng):
    """Bootstrap intervals of each cell's medians (converged runs) and of its fraction converged, one row per cell."""
    import pandas as pd

    level = V.unit_interval(level, "level")
    g = V.rng(rng)
    ci = []
    for key, sub in df.groupby(keys):
        row = dict(zip(keys, key))
        ok = sub[sub["converged"]]
        for col, values, stat in [(c, ok[c], np.median) for c in _MEASURES] + [
                ("converged", sub["converged"], np.mean)]:
            v = values.astype(float).to_numpy()
            v = v[np.isfinite(v)]
            lo = hi = np.nan
            if len(v) >= V.count(min_runs, "min_runs"):
                boot = stat(v[g.integers(0, len(v), (V.count(n_boot, "n_boot"), len(v)))], axis=1)
                lo, hi = np.quantile(boot, [(1 - level) / 2, (1 + level) / 2])
            row[f"{col}_lo"], row[f"{col}_hi"] = float(lo), float(hi)
        ci.append(row)
    return pd.DataFrame(ci)


# %% [markdown]
# Checks with power: `n_cells` planted cells of 40 runs each, drawn from a lognormal law whose median is 1. The 90%
# intervals should hold 1 in about 90% of the cells (a planted bug, the 50% interval, holds it in about half); a cell
# of 3 runs has a median but no interval.

# %%
lognormal = np.random.default_rng(SEED).lognormal(0.0, 0.5, (n_cells, 40))
cells = pd.DataFrame([{**cell, "alpha": f"a{i}", "replicate": r, "error": None, **dict.fromkeys(
    ("mse_alpha", "mse_mean", "se_alpha", "se_mean", "coverage"), v)} for i, vs in enumerate(lognormal)
    for r, v in enumerate(vs)])
ci = summarise(cells, intervals=True, rng=SEED)
held = float(np.mean((ci["mse_alpha_lo"] < 1) & (1 < ci["mse_alpha_hi"])))
tol = 3 * np.sqrt(0.9 * 0.1 / n_cells) + 0.02          # binomial error plus the bootstrap's own small bias
assert abs(held - 0.9) < tol, (held, tol)
half = summarise(cells, intervals=True, level=0.5, rng=SEED)
assert np.mean((half["mse_alpha_lo"] < 1) & (1 < half["mse_alpha_hi"])) < 0.9 - tol
few = summarise(cells[cells["replicate"] < 3], intervals=True, rng=SEED)
assert few["mse_alpha_lo"].isna().all() and few["mse_alpha"].notna().all()
print(f"90% intervals hold the true median in {held:.3f} of {n_cells} cells (tolerance {tol:.3f})")

# %% [markdown]
# ## 4. The figures: one panel per true $\boldsymbol\alpha$
#
# **One style per method.** Every figure of the study (here, in `80_guo_simulation_study` and in `63_atus`) draws a
# method with the colour, marker and label of `METHOD_STYLE`, so a method looks the same on every page and no two
# methods share a colour. The labels are the paper's names (DPMCMC$_{p1}$ is `"DPMCMC_p1"`), and DPapprox's also name
# the sampler: `"DPapprox_p4 (Gibbs)"` is the paper's, `"DPapprox_p4 (blocked)"` dplit's update of the same posterior
# (notebook 23); the colours group the
# families (blues DPMCMC, oranges DPreMCMC, greens DPABC, purples DPapprox, red DPBoots, black and grey the two
# non-private benchmarks) and tell the priors apart by shade. `check_method_style` refuses a mapping that leaves a
# registered method out, gives two methods one colour, or labels a method with another name than the paper's.

# %%
#| export
_PAPER_FAMILY = {"boots": "Boots", "dpboots": "DPBoots", "mcmc": "MCMC", "dpmcmc": "DPMCMC", "dpremcmc": "DPreMCMC",
                 "dpabc": "DPABC", "dpapprox": "DPapprox"}
_FAMILY_MARKER = {"boots": "s", "dpboots": "o", "mcmc": "D", "dpmcmc": "^", "dpremcmc": "v", "dpabc": "P",
                  "dpapprox": "X"}
_COLOUR = {"boots": "#000000", "mcmc_p1": "#7f7f7f", "dpboots": "#d62728",
           "dpmcmc_p1": "#1f77b4", "dpmcmc_p3": "#6baed6", "dpmcmc_p4": "#08306b",
           "dpremcmc_p1": "#ff7f0e", "dpremcmc_p3": "#fdae6b", "dpremcmc_p4": "#a63603",
           "dpabc_p1": "#c7e9c0", "dpabc_p2": "#a1d99b", "dpabc_p3": "#74c476", "dpabc_p4": "#2ca02c",
           "dpabc_p5": "#00441b",
           "dpapprox_p1": "#3f007d", "dpapprox_p3": "#c5b0d5", "dpapprox_p4": "#9467bd",
           "dpapprox_gibbs_p4": "#e377c2"}


def paper_label(method):
    """The paper's name of a registered method: ``"dpmcmc_p1"`` -> ``"DPMCMC_p1"``, ``"boots"`` -> ``"Boots"``.

    DPapprox's names say the sampler: ``"dpapprox_p4"`` -> ``"DPapprox_p4 (blocked)"`` (dplit's update),
    ``"dpapprox_gibbs_p4"`` -> ``"DPapprox_p4 (Gibbs)"`` (the paper's).
    """
    family, prior = METHODS[V.choice(method, "method", tuple(METHODS))]
    label = _PAPER_FAMILY[family] + (f"_{prior}" if prior else "")
    if family == "dpapprox":        # two samplers of one posterior: the paper's Gibbs, dplit's blocked update
        label += " (Gibbs)" if METHOD_SETTINGS.get(method, {}).get("update") == "gibbs" else " (blocked)"
    return label


#: method -> {"color", "marker", "label"}: the one style of each registered method in every study figure.
METHOD_STYLE = {m: {"color": _COLOUR[m], "marker": _FAMILY_MARKER[METHODS[m][0]], "label": paper_label(m)}
                for m in METHODS}


def check_method_style(style):
    """Refuse a style mapping that misses a registered method, shares a colour, or renames a method.

    Raises
    ------
    ValueError
        Naming the methods at fault: one missing from ``style``, two with the same colour (compared as RGB), or a
        label other than the paper's name (:func:`paper_label`).
    """
    from matplotlib.colors import to_rgb

    missing = sorted(set(METHODS) - set(style))
    if missing:
        raise ValueError(f"style must give every registered method a style; missing {missing}")
    seen = {}
    for m in METHODS:
        rgb = to_rgb(style[m]["color"])
        if rgb in seen:
            raise ValueError(f"style must give each method its own colour; {seen[rgb]} and {m} share {style[m]['color']}")
        seen[rgb] = m
        if style[m]["label"] != paper_label(m):
            raise ValueError(f"style's label of {m} must be the paper's name {paper_label(m)!r}, "
                             f"got {style[m]['label']!r}")
    return style


# %% [markdown]
# Checks: the mapping covers the 17 registered methods with 17 colours and the paper's names; a planted mapping that
# draws Boots and MCMC$_{p1}$ both in black (as the figures once did), one that labels with the internal names, and
# one that forgets a method are refused.

# %%
from dplit.study import METHODS  # noqa: E402
from dplit.study_summary import METHOD_STYLE, check_method_style  # noqa: E402
from dplit.testing import raises  # noqa: E402

check_method_style(METHOD_STYLE)
assert len({v["color"] for v in METHOD_STYLE.values()}) == len(METHODS) == 18
assert METHOD_STYLE["dpmcmc_p1"]["label"] == "DPMCMC_p1" and METHOD_STYLE["dpremcmc_p1"]["label"] == "DPreMCMC_p1"
assert METHOD_STYLE["dpapprox_gibbs_p4"]["label"] == "DPapprox_p4 (Gibbs)"
assert METHOD_STYLE["dpapprox_p4"]["label"] == "DPapprox_p4 (blocked)"
black = {m: dict(v, color="k") if m in ("boots", "mcmc_p1") else v for m, v in METHOD_STYLE.items()}
assert raises(ValueError, check_method_style, black, match="boots and mcmc_p1 share")
internal = {m: dict(v, label=m) for m, v in METHOD_STYLE.items()}
assert raises(ValueError, check_method_style, internal, match="the paper's name")
assert raises(ValueError, check_method_style, {m: v for m, v in METHOD_STYLE.items() if m != "dpabc_p5"},
              match="missing")
print(", ".join(v["label"] for v in METHOD_STYLE.values()))

# %% [markdown]
# **The panels.**
#
# The figures have one panel per true $\boldsymbol\alpha$, one group of bars per ($\epsilon$, $n$) and one bar per
# method: Figure 1 (MSE of $\boldsymbol\alpha$), Figure 2 (MSE of $E[\mathbf x]$, predictive coverage), Figure S2
# (fraction converged). The benchmarks are the wide bars (black Boots, grey MCMC$_{p1}$), behind the others; every
# bar takes its method's colour and paper label from `METHOD_STYLE`; a summary with intervals adds its error bars. `_bars` draws one panel, `_panels` lays the panels out in a column with one legend under them.

# %%
#| export
def _bars(ax, sub, methods, value, *, log, base):
    """Grouped bars: one group per (eps, n), one bar per method in its ``METHOD_STYLE``; benchmarks wide, behind."""
    groups = sorted({(e, n) for e, n in zip(sub["eps"], sub["n"])})
    width = 0.8 / max(len(methods), 1)
    for k, m in enumerate(methods):
        bench = m in ("boots", "mcmc_p1")
        for gi, (e, n) in enumerate(groups):
            row = sub[(sub["method"] == m) & (sub["eps"] == e) & (sub["n"] == n)]
            if row.empty or not np.isfinite(row[value].iloc[0]):
                continue
            v = float(row[value].iloc[0])
            x = gi + (k - (len(methods) - 1) / 2) * width
            ax.bar(x, v - base, bottom=base, width=width * (1.6 if bench else 0.9),
                   color=METHOD_STYLE[m]["color"], zorder=1 if bench else 2)
            if f"{value}_lo" in row:     # the Monte Carlo error of the median (summarise(..., intervals=True))
                lo, hi = float(row[f"{value}_lo"].iloc[0]), float(row[f"{value}_hi"].iloc[0])
                if np.isfinite(lo) and np.isfinite(hi):
                    ax.plot([x, x], [lo, hi], color="0.35" if bench else "k", lw=0.8, zorder=3)
    ax.set_xticks(range(len(groups)), [f"eps={e:g}\nn={n}" for e, n in groups], fontsize=8)
    if log:
        ax.set_yscale("log")


def _panels(summary, methods, threshold, height, panel, title):
    """One panel per true alpha (``panel(ax, rows of that alpha, methods)``), a title and one legend under them."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    s = summary[summary["threshold"] == str(threshold)]
    alphas = list(dict.fromkeys(s["alpha"]))
    methods = [m for m in methods if m in set(s["method"])]
    fig, axes = plt.subplots(len(alphas), 1, figsize=(7.5, height * len(alphas) + 1.0), squeeze=False)
    for ax, al in zip(axes[:, 0], alphas):
        panel(ax, s[s["alpha"] == al], methods)
        ax.set_title(f"alpha_true = {al}", fontsize=9)
    # one legend for every method of the table, in rows (the figure fits a column); from the styles, not from the
    # bars of one panel, which miss a method with no median there
    handles = [Patch(color=METHOD_STYLE[m]["color"], label=METHOD_STYLE[m]["label"]) for m in methods]
    fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 5), fontsize=8, frameon=False)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


# %% [markdown]
# Checks on the small study's coverage: a panel per true $\boldsymbol\alpha$ (of the threshold asked for only), a bar per
# (method, group) running from `base` to the median in its method's colour (Boots' black only for Boots), and one
# legend entry per method, under its paper name, also for a method with no median in the first panel.

# %%
import matplotlib.pyplot as plt  # noqa: E402

from dplit.study_summary import _bars, _panels  # noqa: E402

methods = ["boots", "dpboots", "dpmcmc_p1"]
fig = _panels(summary, methods, "dp", 2.0, lambda ax, sub, ms: _bars(ax, sub, ms, "coverage", log=False, base=0.0),
              "median coverage, drawn by _panels and _bars")
panels = [ax for ax in fig.axes if ax.get_title()]
assert [ax.get_title() for ax in panels] == ["alpha_true = (0.5, 0.5, 0.5)", "alpha_true = (2, 2, 2)"]
tops = sorted(p.get_y() + p.get_height() for p in panels[0].patches)
first = summary[(summary["threshold"] == "dp") & (summary["alpha"] == "(0.5, 0.5, 0.5)")]
assert np.allclose(tops, sorted(first[first["method"].isin(methods)]["coverage"]))
from matplotlib.colors import to_rgb  # noqa: E402

assert sum(p.get_facecolor()[:3] == (0, 0, 0) for p in panels[0].patches) == 2      # boots at both budgets, alone
assert {p.get_facecolor()[:3] for p in panels[0].patches} == {to_rgb(METHOD_STYLE[m]["color"]) for m in methods}
assert [t.get_text() for t in fig.legends[0].get_texts()] == ["Boots", "DPBoots", "DPMCMC_p1"]
plt.close(fig)
# a method with no median in the first panel (here DPMCMC_p1's first group there removed) keeps its legend entry
mine = summary[(summary["method"] == "dpmcmc_p1") & (summary["alpha"] == "(0.5, 0.5, 0.5)")
               & (summary["threshold"] == "dp")]
gap = summary.drop(mine.sort_values(["eps", "n"]).index[:1])
fig = _panels(gap, methods, "dp", 2.0, lambda ax, sub, ms: _bars(ax, sub, ms, "coverage", log=False, base=0.0), "")
assert [t.get_text() for t in fig.legends[0].get_texts()] == ["Boots", "DPBoots", "DPMCMC_p1"]
plt.close(fig)

# %% [markdown]
# **Figure 1 and the left of Figure 2.** Figure 1 divides the median MSEs of a true $\boldsymbol\alpha$ by their
# largest, so that the trends in eps and n stay visible, and draws each bar from 1 down to its value on a log scale: a
# longer bar is a smaller MSE. `metric="mse_mean"` gives the left of Figure 2, the MSE of $E[\mathbf x \mid
# \boldsymbol\alpha]$.

# %%
#| export
def figure_mse(summary, *, metric="mse_alpha", methods=None, threshold="dp"):
    """Figure 1 (``metric="mse_alpha"``) or the left of Figure 2 (``"mse_mean"``): rescaled median MSE, log scale."""

    def panel(ax, sub, methods):
        sub, top = sub.copy(), sub[metric].max()
        sub["scaled"] = sub[metric] / top
        if f"{metric}_lo" in sub:
            sub["scaled_lo"], sub["scaled_hi"] = sub[f"{metric}_lo"] / top, sub[f"{metric}_hi"] / top
        _bars(ax, sub, methods, "scaled", log=True, base=1.0)
        ax.set_ylabel("rescaled median MSE", fontsize=9)

    title = {"mse_alpha": "Figure 1: MSE of alpha", "mse_mean": "Figure 2 (left): MSE of E[x | alpha]"}
    return _panels(summary, methods or METHODS, threshold, 2.1, panel,
                   title.get(metric, metric) + " (longer bar = smaller MSE)")


# %% [markdown]
# Checks: in each panel every bar hangs from 1 and ends at its median divided by the panel's largest (one bar ends at
# 1 exactly), on a log axis. Figure 1 of the small study, with the Monte Carlo error bars where a cell has
# `min_runs` data sets or more:

# %%
from dplit.study_summary import figure_mse  # noqa: E402

summary_ci = summarise(df, intervals=True, rng=SEED)
fig1 = figure_mse(summary_ci)
for ax in (ax for ax in fig1.axes if ax.get_title()):
    al = ax.get_title().removeprefix("alpha_true = ")
    want = summary_ci[(summary_ci["threshold"] == "dp") & (summary_ci["alpha"] == al)]["mse_alpha"]
    ends = [p.get_y() + p.get_height() for p in ax.patches]
    assert ax.get_yscale() == "log" and all(p.get_y() == 1.0 for p in ax.patches)
    assert np.allclose(sorted(ends), sorted(want / want.max())) and np.isclose(max(ends), 1.0)

# %% [markdown]
# **Figure 2 (right) and Figure S2.** Both are fractions against a reference line: the median coverage of the 95%
# posterior-predictive ellipsoid (notebook 62, section 4) against 0.95, for the methods the paper keeps; and the
# fraction of runs converged, for the methods that run chains, against 1.

# %%
#| export
def figure_coverage(summary, *, methods=SELECTED, threshold="dp"):
    """Figure 2 (right): median coverage of the 95% posterior-predictive ellipsoid."""
    return _figure_level(summary, "coverage", methods, threshold, 0.95, "Figure 2 (right): predictive coverage")


def figure_convergence(summary, *, methods=None, threshold="dp"):
    """Figure S2: fraction of runs whose multivariate PSRF is at most the study's ``max_mpsrf``."""
    methods = [m for m in (methods or METHODS) if METHODS[m][0] in CHAIN_FAMILIES]
    return _figure_level(summary, "converged", methods, threshold, 1.0, "Figure S2: fraction converged (MPSRF <= 1.1)")


def _figure_level(summary, value, methods, threshold, ref, title):
    def panel(ax, sub, methods):
        _bars(ax, sub, methods, value, log=False, base=0.0)
        ax.axhline(ref, c="r", ls="--", lw=1)
        ax.set_ylim(0, 1.05)

    return _panels(summary, methods, threshold, 2.0, panel, title)


# %% [markdown]
# Checks: the reference lines sit at 0.95 and 1; Figure S2 leaves out the methods without chains (Boots, DPBoots,
# DPABC), and Figure 2 shows the methods the paper keeps (`dplit.study.SELECTED`), here all five of the small study.

# %%
from dplit.study_summary import figure_convergence, figure_coverage  # noqa: E402


def legend_and_line(fig):
    ax = next(ax for ax in fig.axes if ax.get_title())
    return [t.get_text() for t in fig.legends[0].get_texts()], ax.get_lines()[-1].get_ydata()[0]   # after the error bars


fig2 = figure_coverage(summary_ci)
assert legend_and_line(fig2) == (["Boots", "DPBoots", "MCMC_p1", "DPMCMC_p1", "DPABC_p4"], 0.95)
fig_s2 = figure_convergence(summary_ci)
assert legend_and_line(fig_s2) == (["MCMC_p1", "DPMCMC_p1"], 1.0)

# %% [markdown]
# ## 5. Figure S3's numbers: a fixed threshold against Alg. 1
#
# Sec. S5 asks whether choosing the threshold $a$ privately (Alg. 1, a quarter of the budget) beats a fixed $a$ that
# gives the whole budget to the Laplace release. `fixed_vs_dp` pairs the runs of the two rules on the same data set
# (same alpha, n, eps, method and replicate: the same records, as the data seed does not depend on the rule) and
# reports, per cell, the fraction of data sets where Alg. 1's $a$ gives the smaller MSE, and how many pairs there are.

# %%
#| export
def fixed_vs_dp(df, *, fixed, metric="mse_alpha"):
    """Figure S3's numbers: per (alpha, n, eps, method), the fraction of data sets where DP a gives the smaller MSE."""
    keys = ["alpha", "n", "eps", "method", "replicate"]
    a = df[(df["threshold"] == "dp") & df["error"].isna()].set_index(keys)[metric]
    b = df[(df["threshold"] == str(fixed)) & df["error"].isna()].set_index(keys)[metric]
    both = a.to_frame("dp").join(b.to_frame("fixed"), how="inner")
    both["dp_better"] = both["dp"] < both["fixed"]
    return both.groupby(level=["alpha", "n", "eps", "method"])["dp_better"].agg(["mean", "size"]).reset_index()


# %% [markdown]
# Checks: on planted pairs (MSE under Alg. 1 smaller in 3 of 4 data sets, and a failed run that pairs with nothing)
# the fraction is 3/4 over 4 pairs; on the small study every cell of the three methods run both ways has all its data
# sets paired, and only those methods appear.

# %%
from dplit.study_summary import fixed_vs_dp  # noqa: E402

pairs = pd.DataFrame([dict(cell, method="dpboots", replicate=r, threshold=t, error=e, mse_alpha=v)
                      for r, (v_dp, v_fixed) in enumerate([(1, 2), (1, 2), (1, 2), (3, 2)])
                      for t, v, e in (("dp", v_dp, None), ("1e-06", v_fixed, None))]
                     + [dict(cell, method="dpboots", replicate=4, threshold="dp", error="ValueError: x", mse_alpha=0)])
got = fixed_vs_dp(pairs, fixed=1e-6)
assert got[["mean", "size"]].values.tolist() == [[0.75, 4]]
s3 = fixed_vs_dp(df, fixed=1e-6)
assert set(s3["method"]) == set(fixed_grid["methods"]) and (s3["size"] == replicates).all() and len(s3) == 4 * 3
s3.pivot_table(index=["alpha", "eps"], columns="method", values="mean")

# %% [markdown]
# ## 6. The verdict rules: the paper's words as tests that do not bend
#
# `80_guo_simulation_study` sets each of the paper's statements about Figures 1-2 and S2 beside a verdict computed
# from the summary. The words are read by one rule each, the same on every panel:
#
# * **"similar"**: every ratio of the two medians within a factor of 2, either way (`similar`).
# * **"slightly larger"**: larger in most cells (more than half of the ratios above 1) and never by more than the
#   same factor 2 (`slightly_larger`). The paper gives no bound; its only quantitative neighbour is "similar", and a
#   "slightly larger" MSE that may be 4.6 times the reference is not slight by any reading. 2 is the one bound both
#   words share, so neither statement can pass where the other would call the same ratio dissimilar.
# * **Converged runs only, and said so.** The medians are over converged runs (MPSRF $\le 1.1$), as in the paper. A
#   statement about methods of which one has *no* converged run in a cell the statement covers cannot be judged on
#   that method: its verdict reads **"not decided"**, with the counts (`unconverged` lists them), and then what the
#   converged cells alone would say. A method is never dropped from a statement in silence.
#
# `verdict` writes the line: "agrees" or "differs" with the evidence, or "not decided" with the counts.

# %%
#| export
#: The one factor of the verdict rules: "similar" is within it either way, "slightly larger" at most it.
SIMILAR_FACTOR = 2.0


def similar(ratios, factor=SIMILAR_FACTOR):
    """The paper's "similar": True when every ratio lies within ``factor`` of 1 either way; False when there is none."""
    r = [float(v) for v in ratios]
    return bool(r) and all(1 / factor <= v <= factor for v in r)


def slightly_larger(ratios, factor=SIMILAR_FACTOR):
    """The paper's "slightly larger": most ratios above 1 and none above ``factor``; False when there is none."""
    r = [float(v) for v in ratios]
    return bool(r) and sum(v > 1 for v in r) > len(r) / 2 and max(r) <= factor


def unconverged(summary, methods, cells, *, threshold="dp"):
    """The (method, cell) pairs of a statement with no converged run: a list of dicts (method, alpha, n, eps, runs).

    ``cells`` are (alpha, n, eps) tuples; a cell the summary does not hold for a method is not listed (there is no
    run to count: the statement is then judged on the rest, and says how many cells it read).
    """
    out = []
    s = summary[summary["threshold"] == str(threshold)]
    for m in methods:
        for al, n, e in cells:
            row = s[(s["method"] == m) & (s["alpha"] == al) & (s["n"] == n) & (s["eps"] == e)]
            if len(row) and float(row["converged"].iloc[0]) == 0:
                out.append({"method": m, "alpha": al, "n": int(n), "eps": float(e), "runs": int(row["runs"].iloc[0])})
    return out


def verdict(ok, evidence, *, missing=(), have=True):
    """One statement's verdict: ``"agrees: <evidence>"``, ``"differs: <evidence>"`` or ``"not decided: ..."``.

    Parameters
    ----------
    ok : bool
        The rule's answer on the cells that hold converged runs.
    evidence : str
        The numbers behind it.
    missing : list of dict
        From :func:`unconverged`: the statement's (method, cell) pairs with no converged run. Any makes the
        verdict "not decided", with their counts, followed by what the converged cells alone say.
    have : bool
        False when no cell holds runs of every method compared (nothing to judge).
    """
    if missing:
        counts = "; ".join(f"{paper_label(x['method'])} converged in 0 of {x['runs']} runs at n = {x['n']}, "
                           f"eps = {x['eps']:g}".replace("e+", "e") for x in missing)
        rest = (("agrees" if ok else "differs") + f": {evidence}") if have else "nothing left to compare"
        return f"not decided: {counts} (on the converged cells alone: {rest})"
    if not have:
        return "not decided: no cell with converged runs of every method compared"
    return ("agrees" if ok else "differs") + f": {evidence}"


# %% [markdown]
# Checks, a planted case per rule: ratios of 1.98 are similar and slightly larger, 4.6 is neither (the bound that once
# let it pass, 5, is refused by the rule); a ratio under 1 in most cells is similar but not "larger"; a planted
# summary whose DPMCMC$_{p1}$ has no converged run in one of two cells makes the statement "not decided" with its count,
# however well the other method agrees.

# %%
from dplit.study_summary import similar, slightly_larger, unconverged, verdict  # noqa: E402

assert similar([1.98, 0.6]) and not similar([4.6]) and not similar([0.49]) and not similar([])
assert slightly_larger([1.98, 1.2]) and not slightly_larger([1.2, 4.6]) and not slightly_larger([0.8, 0.9, 1.5])
assert slightly_larger([4.6], factor=5)                 # the old bound: the planted case it let through
planted = pd.DataFrame([dict(alpha="a", n=1000, eps=e, threshold="dp", method=m, runs=20, converged=c)
                        for m, e, c in [("dpmcmc_p1", 1e10, 0.0), ("dpmcmc_p1", 1.5, 1.0), ("dpboots", 1e10, 1.0),
                                        ("dpboots", 1.5, 1.0)]])
gaps = unconverged(planted, ["dpboots", "dpmcmc_p1"], [("a", 1000, 1e10), ("a", 1000, 1.5)])
assert gaps == [{"method": "dpmcmc_p1", "alpha": "a", "n": 1000, "eps": 1e10, "runs": 20}]
line = verdict(True, "ratio 1.04", missing=gaps)
assert line.startswith("not decided: DPMCMC_p1 converged in 0 of 20 runs at n = 1000, eps = 1e10") and "agrees" in line
assert verdict(True, "ratio 1.04").startswith("agrees") and verdict(False, "x", have=False).startswith("not decided")
print(line)

# %% [markdown]
# ## When to use this
#
# * After `dplit study run` (or `run_study`), on the store it wrote: `dplit study report --store results.jsonl --out
#   figures/` prints the summary and saves Figures 1, 2 and S2 through these functions.
# * Read the convergence counts (`summarise(...)["converged"]`) before the medians: as in the paper, the medians are
#   over converged runs only, and a method that rarely converges has medians over a few, lucky, runs.
# * Ask for `intervals=True` before reading a difference between two bars: with tens of data sets per cell the
#   Monte Carlo error of a median is often as large as the difference between two private methods.
