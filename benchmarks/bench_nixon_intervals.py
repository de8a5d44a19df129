"""What makes Nixon et al.'s Table 3 intervals as long as they are: candidates measured on the same samples.

Table 3's 95% intervals average 0.038-0.049 in length, about three times the binomial length of a sample of
10,000 records, where ``fit_latent_class(..., paper=True)`` gives intervals five times shorter. This script fits
each candidate explanation to the same samples of Table 3's reconstructed population (``ipf_table`` of Table 3's
two-way probabilities, as in ``bench_latent_class.py``) and stores, per candidate and eps, the coverage and mean
length of the 95% intervals of the 40 two-way probabilities; notebook ``checks/79_nixon_intervals`` reads it.

Usage::

    .venv/bin/python benchmarks/bench_nixon_intervals.py --reps 20     # writes results/nixon_intervals.json
    .venv/bin/python benchmarks/bench_nixon_intervals.py --reps 20 --records 100000
        # the paper's rerun with samples of 100,000 records (Sec. 4.3.2), for paper=True and the likelihood powers,
        # at eps = 0.25 and inf; writes results/nixon_intervals_n100000.json
"""

import argparse
import dataclasses
import json
import math
import os
import time
import warnings
from pathlib import Path

import numpy as np

from dplit._latent_class_model import lcm_sampler
from dplit.latent_class import cell_intervals, ipf_table, release_margins
from dplit.sampling import ConvergenceWarning, run_chains, warmup_windows

HERE = Path(__file__).resolve().parent
OUT_JSON = HERE / "results" / "nixon_intervals.json"
PAIRS5 = [(i, j) for i in range(5) for j in range(i + 1, 5)]
# Table 3's "Pop. Value" column, in its order (the ten pairs of CIT, AGE, RACE, SEX, INC; each pair's cells in C order)
TABLE3_POP = np.array([
    0.002, 0.061, 0.044, 0.894, 0.031, 0.031, 0.174, 0.763, 0.031, 0.031, 0.453, 0.485, 0.027, 0.035, 0.298, 0.640,
    0.011, 0.035, 0.195, 0.759, 0.024, 0.022, 0.461, 0.493, 0.045, 0.001, 0.280, 0.674, 0.098, 0.108, 0.386, 0.408,
    0.086, 0.120, 0.239, 0.555, 0.127, 0.357, 0.198, 0.318])
N, K, N_ITER, N_WARMUP = 10_000, 10, 3000, 2000       # the paper's: 5,000 iterations, the first 2,000 discarded
EPS = [0.25, 1.0, math.inf]

# name -> (settings of the sampler, interval). "posterior": quantiles of the cell probabilities; "predictive": of
# the cell proportions of a synthetic data set of N records drawn at each posterior draw.
CANDIDATES = {
    "paper=True": (dict(), "posterior"),
    "paper's three blocks, untuned, proposals Dirichlet(100 Psi + 1)": (
        dict(tuned=False, regenerate=False, kappa=100.0), "posterior"),
    "paper's three blocks, untuned, proposals Dirichlet(Psi + 1)": (
        dict(tuned=False, regenerate=False, kappa=1.0), "posterior"),
    "k = 3 classes": (dict(k=3), "posterior"),
    "prior a = 10": (dict(a=10.0), "posterior"),
    "synthetic data set of n records (posterior predictive)": (dict(), "predictive"),
    "weight 1/4 (dplit's default)": (dict(weight=1 / 4), "posterior"),
    "weight 1/16": (dict(weight=1 / 16), "posterior"),
    "weight 1/24": (dict(weight=1 / 24), "posterior"),
    "weight 1/32": (dict(weight=1 / 32), "posterior"),
}


def population():
    return ipf_table((2,) * 5, PAIRS5, np.split(TABLE3_POP, 10))


def sampler(rel, *, k=K, weight=1.0, a=1.0, alpha=1.0, tuned=True, regenerate=True, kappa=100.0, step=1.0):
    """fit_latent_class's sampler (Strategy 2) at the paper's settings unless told; ``tuned=False`` keeps the
    proposals' starting scales (Dirichlet concentration ``kappa``, log-eta step ``step``) through the warm-up."""
    n_windows = len(warmup_windows(N_WARMUP)) if tuned else 0
    s = lcm_sampler(rel, k, 2, alpha, a, weight, n_windows, False, regenerate)
    init0 = s.init

    def init(rng):
        st = init0(rng)
        st["kappa_psi"][:], st["kappa_pi"][:], st["step"][:] = kappa, kappa, step
        return st

    return dataclasses.replace(s, init=init)


RERUN_CANDIDATES = ["paper=True", "weight 1/4 (dplit's default)", "weight 1/24", "weight 1/32"]
RERUN_EPS = [0.25, math.inf]


def study(reps, seed=20261129, n=N, eps_list=None, candidates=None, path=OUT_JSON):
    pop = population()
    truth = np.concatenate([pop.sum(axis=tuple(j for j in range(5) if j not in m)).ravel() for m in PAIRS5])
    gen = np.random.default_rng(seed)
    eps_list = eps_list or EPS
    cands = {c: CANDIDATES[c] for c in (candidates or CANDIDATES)}
    zero = {c: {str(e): {"cov": np.zeros(40), "len": np.zeros(40), "cov_sample": np.zeros(40)} for e in eps_list}
            for c in cands}
    t0 = time.time()
    for rep in range(reps):
        x = np.array(np.unravel_index(gen.choice(32, size=n, p=pop.ravel()), (2,) * 5)).T
        sample = np.concatenate([np.bincount(2 * x[:, i] + x[:, j], minlength=4) for i, j in PAIRS5]) / n
        for e in eps_list:
            rel = release_margins(x, PAIRS5, eps=e, rng=gen, secure=False)
            for c, (kw, kind) in cands.items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    draws, *_ = run_chains(sampler(rel, **kw), n_iter=N_ITER, n_warmup=N_WARMUP, n_chains=1, rng=gen)
                P = draws["margin_probs"].reshape(-1, 40)
                if kind == "predictive":
                    P = gen.binomial(n, np.clip(P, 0.0, 1.0)) / n
                _, lo, hi = cell_intervals(P)
                z = zero[c][str(e)]
                z["cov"] += (lo <= truth) & (truth <= hi)
                z["cov_sample"] += (lo <= sample) & (sample <= hi)
                z["len"] += hi - lo
        print(f"rep {rep + 1}/{reps} ({time.time() - t0:.0f} s)", flush=True)
    records = "" if n == N else f" --records {n}"
    out = {"command": f"benchmarks/bench_nixon_intervals.py --reps {reps}{records}", "reps": reps, "n": n, "k": K,
           "n_iter": N_ITER, "n_warmup": N_WARMUP, "n_chains": 1, "seed": seed, "seconds": time.time() - t0,
           "truth": truth.tolist(), "eps": [str(e) for e in eps_list],
           "candidates": {c: {e: {key: (v / reps).tolist() for key, v in z.items()} for e, z in zero[c].items()}
                          for c in cands}}
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(out, indent=1))
    os.replace(tmp, path)
    for c in cands:
        print(c, {e: (round(float(np.mean(z["len"])), 4), round(float(np.mean(z["cov"])), 3))
                  for e, z in out["candidates"][c].items()})
    print(f"wrote {path}")
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--records", type=int, default=N, help="records per sample (the paper's rerun: 100000)")
    args = ap.parse_args()
    if args.records == N:
        study(args.reps)
    else:
        study(args.reps, n=args.records, eps_list=RERUN_EPS, candidates=RERUN_CANDIDATES,
              path=HERE / "results" / f"nixon_intervals_n{args.records}.json")
