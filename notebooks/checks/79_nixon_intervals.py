# %% [markdown]
# # Nixon et al.'s Table 3 intervals: what makes them as long as they are
#
# * **For:** finding why the 95% intervals of Nixon et al.'s Table 3 are about three times the binomial length of a sample of 10,000 records, while the paper's model as written (`fit_latent_class(..., paper=True)`, notebook 51) gives intervals five times shorter than the paper's; and saying what `paper=True` reproduces.
# * **You need:** nothing to run: the candidates are fitted by a script, `benchmarks/bench_nixon_intervals.py`, whose stored results (`benchmarks/results/nixon_intervals.json`) this notebook reads; one small check runs here.
# * **You get:** a table of candidate explanations against the paper's average length and coverage at three budgets, the paper's one missed cell as a fingerprint, and the verdict.
#
# Reading order: after notebooks 51 (the model and `paper=True`), 83 (Table 3 rerun) and 76 (the coverage study
# behind the defaults). This notebook exports nothing.

# %% [markdown]
# ## What the paper did (Sec. 4.2-4.3.2, Supp. Sec. 2)
#
# * **Data.** Each of 100 repetitions draws 10,000 records from the 2016 ACS (five binary variables: CIT, AGE,
#   RACE, SEX, INC), releases all ten two-way tables with two-sided geometric noise (sensitivity 2, a tenth of
#   $\epsilon$ per table), and fits the model. The truth is the population's two-way probability.
# * **Model.** Model (7): the composite likelihood (6), the product of the ten tables' multinomial likelihoods, as
#   written with no power; $k = 10$ latent classes; a truncated stick-breaking prior on the class weights
#   (Strategy 2 of Supp. Sec. 2: a gamma prior on unnormalised weights) and Dirichlet priors on the class profiles
#   $\Psi^{(j)}_h$; at $\epsilon = \infty$ the true margins and no measurement-error step.
# * **Chain.** Metropolis-within-Gibbs (Supp. Sec. 2): Dirichlet proposals for each $\Psi^{(j)}_h$ "parameterized
#   by" its current value, 5,000 iterations of which the first 2,000 are discarded.
# * **Interval.** "95% credible intervals using the 2.5th and 97.5th quantiles of the posterior distribution" of each
#   two-way probability, and coverage of the population value.
#
# Table 3's averages over the 40 cells: coverage 0.839, 0.896, 0.945, 0.969 and length 0.049, 0.041, 0.038, 0.038
# at $\epsilon$ = 0.25, 0.5, 1, $\infty$. The length barely changes from $\epsilon = \infty$ to 1 and grows by only a
# third at 0.25. The lengths sampling alone gives, $2 \times 1.96 \sqrt{P(1-P)/n}$ at $n$ = 10,000, average 0.013
# over the same cells.

# %% [markdown]
# ## Parameters

# %%
import math
import warnings

import numpy as np
from IPython.display import Markdown, display
from scipy import stats

from dplit.config import size, stored
from dplit.latent_class import cell_intervals, fit_latent_class, ipf_table, release_margins
from dplit.sampling import ConvergenceWarning

SEED = 20261129
pairs5 = [(i, j) for i in range(5) for j in range(i + 1, 5)]
n = 10_000
n_iter, n_warm = size(full=3000, quick=500), size(full=2000, quick=300)   # the live check; the study ran 3,000 + 2,000

# Nixon et al., Table 3: population value, and per cell coverage and length at eps = 0.25, 1 and inf (cells in the
# table's order: the pairs of CIT, AGE, RACE, SEX, INC, each pair's cells in C order); its "Average" row.
TABLE3_POP = np.array([
    0.002, 0.061, 0.044, 0.894, 0.031, 0.031, 0.174, 0.763, 0.031, 0.031, 0.453, 0.485, 0.027, 0.035, 0.298, 0.640,
    0.011, 0.035, 0.195, 0.759, 0.024, 0.022, 0.461, 0.493, 0.045, 0.001, 0.280, 0.674, 0.098, 0.108, 0.386, 0.408,
    0.086, 0.120, 0.239, 0.555, 0.127, 0.357, 0.198, 0.318])
TABLE3_COV_INF = np.array([
    0.97, 1.00, 1.00, 1.00, 1.00, 0.92, 0.99, 0.97, 1.00, 1.00, 1.00, 1.00, 1.00, 1.00, 1.00, 1.00, 1.00, 1.00, 1.00,
    1.00, 1.00, 1.00, 1.00, 1.00, 1.00, 0.00, 1.00, 0.93, 1.00, 1.00, 1.00, 1.00, 1.00, 1.00, 1.00, 1.00, 1.00, 1.00,
    1.00, 1.00])
TABLE3_AVG = {"0.25": (0.839, 0.049), "0.5": (0.896, 0.041), "1.0": (0.945, 0.038), "inf": (0.969, 0.038)}  # (cov., length)
binom_len = 2 * 1.96 * np.sqrt(TABLE3_POP * (1 - TABLE3_POP) / n)
print(f"binomial 95% length at n = {n:,}, averaged over Table 3's cells: {binom_len.mean():.4f}; "
      f"Table 3 at eps = inf: {TABLE3_AVG['inf'][1]} ({TABLE3_AVG['inf'][1] / binom_len.mean():.1f} times)")

# %% [markdown]
# ## The candidates
#
# Each candidate changes one thing against `paper=True` (the paper's settings as notebook 51 implements them:
# composite likelihood at power 1, Dirichlet(1) class profiles, $k = 10$, proposals tuned in the warm-up, and the
# regeneration move S4 of notebook 50). The study fits all of them to the same samples and noise, one chain of
# 5,000 iterations with the first 2,000 discarded, as the paper ran it, on samples of Table 3's reconstructed
# population (`ipf_table`, notebook 83).
#
# * **The chain.** The paper's three blocks alone (no S4), with the proposals left at their starting scales through
#   the warm-up: Dirichlet proposals of concentration 100 (centred on the current $\Psi$), and of concentration 1,
#   the literal "a Dirichlet distribution parameterized by $\Psi^{m-1}$" (the class weights by notebook 50's
#   Strategy 2, a random walk on the log of the unnormalised weights, where the paper's walks on the weights). A chain
#   that has not reached its target can give intervals of any width.
# * **The number of classes.** $k = 3$ instead of 10.
# * **The prior.** Dirichlet(10) class profiles instead of Dirichlet(1).
# * **What the interval targets.** Quantiles of the cell proportions of a synthetic data set of $n$ records drawn at
#   each posterior draw (the posterior predictive, the spread of synthetic data of the sample's size): it adds the
#   binomial variance to the posterior's. Coverage of the *sample's* proportion instead of the population's is
#   stored for every candidate.
# * **The weight of the likelihood.** The composite likelihood raised to a power: 1/4 (dplit's default,
#   `weight="auto"`: each variable is in four of the ten tables) and smaller powers, 1/16, 1/24 and 1/32. A power $w$
#   gives the information of about $4 w n$ records.
#
# The margins are not a candidate: Table 3 uses all ten two-way tables, and so does every candidate.

# %%
# NBVAL_IGNORE_OUTPUT
study = stored("nixon_intervals.json", script="benchmarks/bench_nixon_intervals.py --reps 20")
assert study is not None and study["n"] == n and len(study["truth"]) == 40
EPS_KEYS = ["0.25", "1.0", "inf"]
assert study["eps"] == EPS_KEYS
cands = study["candidates"]
reps = study["reps"]
truth = np.array(study["truth"])
avg = {c: {e: (float(np.mean(cands[c][e]["cov"])), float(np.mean(cands[c][e]["len"]))) for e in EPS_KEYS}
       for c in cands}
# Monte Carlo sd of a mean coverage over the 40 cells, bounded by treating the cells as one (perfectly correlated)
mc_sd = math.sqrt(0.95 * 0.05 / reps)


def md_table(header, rows):
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


rows = [["**Table 3 (paper)**"] + [f"**{TABLE3_AVG[e][1]:.3f}** / **{TABLE3_AVG[e][0]:.3f}**" for e in EPS_KEYS]
        + ["**" + f"{TABLE3_COV_INF[25]:.2f}" + "**", "-"]]
for c in cands:
    rows.append([c] + [f"{avg[c][e][1]:.4f} / {avg[c][e][0]:.3f}" for e in EPS_KEYS]
                + [f"{cands[c]['inf']['cov'][25]:.2f}", f"{np.mean(cands[c]['inf']['cov_sample']):.3f}"])
print(f"stored study: {reps} samples of n = {study['n']:,}, k = {study['k']}, one chain of "
      f"{study['n_iter'] + study['n_warmup']:,} iterations, the first {study['n_warmup']:,} discarded "
      f"(command: {study['command']}; {study['seconds'] / 60:.0f} min)")
display(Markdown(
    "**Mean length / mean coverage of the 95% intervals of the 40 population two-way probabilities**, with the "
    "coverage of the cell the paper misses (AGE = 0, INC = 1, probability 0.001) and the coverage of the sample's "
    "proportions, both at eps = inf\n\n"
    + md_table(["candidate"] + [f"eps = {e}" for e in EPS_KEYS] + ["AGE=0,INC=1 (inf)", "sample's proportion (inf)"],
               rows)))

# %% [markdown]
# The verdict per candidate: its mean length is within 20% of Table 3's at every budget, and its mean coverage
# within three Monte Carlo sd of Table 3's (the sd of a coverage estimated from the study's samples, counted as if
# the 40 cells were one; Table 3's own 100 samples add less). Counting the cells as one makes the coverage rule
# lenient: at this number of samples it separates only the candidates far below Table 3's coverage, and the
# lengths, with the cell the paper misses, do most of the sorting.

# %%
def verdict(c, rel=0.2, n_sd=3.0):
    """(length matches at every eps, coverage matches at every eps) against Table 3's averages."""
    ok_len = all(abs(avg[c][e][1] / TABLE3_AVG[e][1] - 1) <= rel for e in EPS_KEYS)
    ok_cov = all(abs(avg[c][e][0] - TABLE3_AVG[e][0]) <= n_sd * mc_sd for e in EPS_KEYS)
    return ok_len, ok_cov


verdicts = {c: verdict(c) for c in cands}
both = [c for c, (lv, cv) in verdicts.items() if lv and cv]
len_only = [c for c, (lv, cv) in verdicts.items() if lv and not cv]
text = [f"* **{c}:** length {'matches' if lv else 'differs'}, coverage {'matches' if cv else 'differs'} "
        f"(at eps = inf {avg[c]['inf'][1]:.4f}, {avg[c]['inf'][1] / binom_len.mean():.1f} times the binomial length; "
        f"coverage {avg[c]['inf'][0]:.3f})" for c, (lv, cv) in verdicts.items()]
display(Markdown("\n".join(text)))

# %% [markdown]
# ## One sample, live
#
# The study's central contrast on one sample at $\epsilon = \infty$: `paper=True` against the composite likelihood
# at power 1/24. The check requires the paper's settings to give intervals shorter than the binomial ones that
# nevertheless hold the sample's own proportion in most cells (a posterior centred on the sample and narrower
# than its sampling error), and the power 1/24 intervals to be at least twice the binomial length.

# %%
pop = ipf_table((2,) * 5, pairs5, np.split(TABLE3_POP, 10))
gen = np.random.default_rng(SEED)
x = np.array(np.unravel_index(gen.choice(32, size=n, p=pop.ravel()), (2,) * 5)).T
sample = np.concatenate([np.bincount(2 * x[:, i] + x[:, j], minlength=4) for i, j in pairs5]) / n
rel = release_margins(x, pairs5, eps=np.inf)
live = {}
for name, kw in {"paper=True": dict(paper=True), "weight 1/24": dict(paper=True, weight=1 / 24)}.items():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = fit_latent_class(rel, k=10, n_iter=n_iter, n_warmup=n_warm, n_chains=1, rng=SEED, progress=False, **kw)
    _, lo, hi = cell_intervals(fit.posterior["margin_probs"].values)
    live[name] = dict(len=(hi - lo) / binom_len, holds_sample=np.mean((lo <= sample) & (sample <= hi)))
    print(f"{name}: median length / binomial length {np.median(live[name]['len']):.2f}, "
          f"share of cells whose interval holds the sample's proportion {live[name]['holds_sample']:.2f}")
assert np.median(live["paper=True"]["len"]) < 1.0 and live["paper=True"]["holds_sample"] >= 0.8
assert np.median(live["weight 1/24"]["len"]) > 2.0

# %% [markdown]
# ## The rerun with samples of 100,000 records (Sec. 4.3.2)
#
# The paper reports that with samples of 100,000 records the coverage was "at or exceeding the nominal rates for all
# cell probabilities and all four values of $\epsilon$", and prints no table. The same script reruns `paper=True`,
# dplit's default power and the two powers that match Table 3 at that size, at $\epsilon$ = 0.25 and $\infty$. A
# cell is below nominal beyond the Monte Carlo error when its number of covering samples has probability below
# $0.05 / C$ under a calibrated 95% interval (one-sided binomial test, Bonferroni over the $C$ = 80 cells of the two
# budgets), as notebook 83 judges its own rerun.

# %%
# NBVAL_IGNORE_OUTPUT
big = stored("nixon_intervals_n100000.json", script="benchmarks/bench_nixon_intervals.py --reps 20 --records 100000")
big_lines = []
if big is not None:
    n_cells = 40 * len(big["eps"])
    rows_big = []
    for c, res in big["candidates"].items():
        for e, z in res.items():
            cov_c = np.array(z["cov"])
            below = stats.binom.cdf(np.round(cov_c * big["reps"]), big["reps"], 0.95) < 0.05 / n_cells
            rows_big.append((c, e, float(np.mean(z["len"])), cov_c.mean(), cov_c.min(), int(below.sum()),
                             [f"{q:.3f}" for q in np.array(big["truth"])[below]]))
    print(f"stored rerun: {big['reps']} samples of n = {big['n']:,} (command: {big['command']})")
    display(Markdown(md_table(["candidate", "eps", "mean length", "mean coverage", "smallest cell",
                               "cells below nominal"],
                              [[c, e, f"{ln:.4f}", f"{m:.3f}", f"{lo:.2f}", str(b)] for c, e, ln, m, lo, b, _ in rows_big])))
    for c in big["candidates"]:
        got = [r for r in rows_big if r[0] == c]
        n_below = sum(r[5] for r in got)
        big_lines.append(f"{c}: {'agrees' if n_below == 0 else 'differs'} ({n_below} of {n_cells} cells below "
                         f"nominal" + (f", of population probability {', '.join(q for r in got for q in r[6])}"
                                       if n_below else "")
                         + f"; mean coverage {min(r[3] for r in got):.3f}-{max(r[3] for r in got):.3f})")
    display(Markdown("Against the paper's claim: " + "; ".join(big_lines) + "."))

# %% [markdown]
# ## What we found

# %%
pt, pp = avg["paper=True"], avg["synthetic data set of n records (posterior predictive)"]
chain = [c for c in cands if c.startswith("paper's three blocks")]
lines = [
    f"* **The paper's model as written does not give Table 3's lengths.** `paper=True` gives {pt['inf'][1]:.4f} at "
    f"eps = inf against Table 3's {TABLE3_AVG['inf'][1]}, and its length grows {pt['0.25'][1] / pt['inf'][1]:.1f}-fold "
    f"from eps = inf to 0.25 where Table 3's grows {TABLE3_AVG['0.25'][1] / TABLE3_AVG['inf'][1]:.1f}-fold. Its "
    f"intervals hold the sample's proportion ({np.mean(cands['paper=True']['inf']['cov_sample']):.3f} of cells and "
    f"samples) but not the population's ({pt['inf'][0]:.3f}): the posterior is centred on the sample and narrower than "
    "the sampling error, the composite likelihood counting each record in the four tables that hold each variable.",
    "* **Not the chain, the classes or the prior.** The paper's three blocks with untuned proposals give "
    + ", ".join(f"{avg[c]['inf'][1]:.4f}" for c in chain) + f" at eps = inf; $k$ = 3 gives "
    f"{avg['k = 3 classes']['inf'][1]:.4f} and a Dirichlet(10) prior {avg['prior a = 10']['inf'][1]:.4f}: all near "
    "`paper=True`'s. With the proposal scales tried, the chain reaches its target within the paper's burn-in (the "
    "paper's R sampler itself was not run), and the "
    "prior and the number of classes do not widen the intervals of identified margins.",
    f"* **Not the synthetic data's spread.** Adding the sampling variance of a synthetic data set of $n$ records gives "
    f"{pp['inf'][1]:.4f} (coverage {pp['inf'][0]:.3f}): the binomial length, a third of Table 3's.",
]
if both:
    lines.append(
        "* **What reproduces Table 3:** " + ", ".join(both) + ". Each is a composite likelihood raised to a power "
        "fitted here to the lengths, the information of about a sixth to an eighth of the sample; the paper's text "
        "describes no such power, so this describes the paper's intervals, it does not explain them. It also gives "
        f"the paper's one missed cell (AGE = 0, INC = 1, coverage {TABLE3_COV_INF[25]:.2f} in Table 3): with a "
        "weak likelihood the Dirichlet(1) prior on the class profiles keeps that cell's interval above its "
        "probability of 0.001 (so does the Dirichlet(10) prior, whose intervals are short: a prior strong against "
        "the likelihood is what the missed cell shows). The match is not exact: from eps = inf to 0.25 their length "
        "grows " + ", ".join(f"{avg[c]['0.25'][1] / avg[c]['inf'][1]:.2f}-fold" for c in both)
        + f" where Table 3's grows {TABLE3_AVG['0.25'][1] / TABLE3_AVG['inf'][1]:.2f}-fold, and at eps = 0.25 they "
        "cover " + ", ".join(f"{avg[c]['0.25'][0]:.3f}" for c in both)
        + f" against Table 3's {TABLE3_AVG['0.25'][0]}: the paper's intervals lose more to the noise.")
elif len_only:
    lines.append("* **Lengths alone:** " + ", ".join(len_only) + " match Table 3's lengths at every budget but not "
                 "its coverage; no candidate matches both.")
else:
    lines.append("* **No candidate reproduces Table 3's lengths and coverage at every budget.**")
if big_lines:
    lines.append("* **The rerun with 100,000 records** (the paper: every cell at or above nominal at every eps): "
                 + "; ".join(big_lines) + ".")
lines.append(
    "* **So `paper=True` means the paper's model as its text writes it** (power 1, notebook 51), which reproduces "
    "the paper's method and its Figs. 1-2, not Table 3's interval lengths. Table 3 is reproduced, as a description, "
    "by `paper=True` with the `weight` of the matching candidate given explicitly.")
display(Markdown("\n".join(lines)))
