"""Time to a trustworthy posterior: wall time until DPMCMC_p1 has converged, on the grid of Guo et al. Sec. 5.1.

Run from the repository root:

    .venv/bin/python benchmarks/bench_time_to_posterior.py            # reduced grid (a few minutes)
    .venv/bin/python benchmarks/bench_time_to_posterior.py --full     # the paper's 40 cells (about 17 minutes)

For every cell (alpha_true, n, eps) one data set is drawn and released by Algorithm 1 (eps1 = 0.75 eps,
eps2 = 0.25 eps, candidates 1e-1 .. 1e-6, tc = 0.01, unsplit). Then:

- DPMCMC_p1 with ``n_iter="auto"`` (2 chains, 2000 warm-up iterations, no thinning, the default with "auto"):
  the wall time until every coordinate of alpha and E[x | alpha] has bulk and tail ESS >= 400 and
  R-hat <= 1.01 (or the cap, ``max_iter`` = 200,000 iterations per chain), on one core (``n_jobs=1``)
  and on two (``n_jobs=2``);
- DPBoots: the wall time of 2000 replicates.

``--one-core`` skips the two-core runs (their column is then empty). A run stops at ``--max-time`` seconds
(default 900, at most 60 for eps = 1e10, where the latent records freeze (Guo et al. S5); then it is
reported as not converged, with what was not reached). ESS/s is the smallest ESS reached over the whole wall time,
warm-up included. The CSV is rewritten after
every cell; ``--resume`` keeps the cells already in it and runs only the others.

The figures go to ``benchmarks/results/time_to_posterior.csv`` (notebook 21 reads it) and are printed.
Timings include numba compilation only in the first cell (a warm-up call runs first). The machine may be
shared: the ratios within a run mean more than the seconds.
"""

import argparse
import csv
import os
import time
import warnings

import numpy as np

from dplit.bootstrap import dp_boots
from dplit.dirichlet import dirichlet_draws
from dplit.mcmc import dp_mcmc
from dplit.release import release
from dplit.sampling import ConvergenceWarning

ALPHAS = {"alpha1": (3.3, 4.4), "alpha2": (0.5, 0.5, 0.5), "alpha3": (2.2, 3.3, 4.4), "alpha4": (2.0, 20.0, 2.0),
          "alpha5": (2.2, 3.3, 4.4, 5.5, 6.6)}
CANDIDATES = [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6]
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "time_to_posterior.csv")


def cell(name, n, eps, seed):
    """One data set of the cell, released by Algorithm 1 (unsplit)."""
    g = np.random.default_rng(seed)
    X = dirichlet_draws(np.array(ALPHAS[name]), n, rng=g)
    return release(X, eps1=0.75 * eps, eps2=0.25 * eps, candidates=CANDIDATES, tc=0.01, rng=g, secure=False)


def time_to_converge(rel, n_jobs, seed, max_time=900.0):
    """Wall time and what was reached by DPMCMC_p1 with n_iter='auto'."""
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = dp_mcmc(rel, n_iter="auto", n_warmup=2000, n_chains=2, rng=seed, n_jobs=n_jobs,
                      progress=False, max_time=max_time)
    a = res.posterior.attrs
    return {"seconds": time.perf_counter() - t0, "iterations": int(a["n_iter"]), "converged": int(a["converged"]),
            "ess_min": min(a["ess_bulk_min"], a["ess_tail_min"]), "rhat_max": a["rhat_max"], "failed": a["failed"]}


FIELDS = ["alpha", "d", "n", "eps", "a", "seconds_1core", "seconds_2cores", "iterations_per_chain", "ess_min",
          "ess_per_second_1core", "rhat_max", "converged", "dpboots_2000_seconds", "not_reached"]


def write(rows):
    """Write the rows so far (the grid's order) to OUT."""
    order = {(a, n, e): k for k, (a, n, e) in enumerate(
        (a, n, e) for a in ALPHAS for n in (1000, 5000) for e in (0.25, 0.5, 1.5, 1e10))}
    rows = sorted(rows, key=lambda r: order.get((r["alpha"], int(r["n"]), float(r["eps"])), 99))
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--full", action="store_true", help="the paper's whole grid (40 cells)")
    parser.add_argument("--one-core", action="store_true", help="skip the runs on two cores")
    parser.add_argument("--max-time", type=float, default=900.0, help="seconds per run before giving up")
    parser.add_argument("--resume", action="store_true", help="keep the cells already in the CSV")
    args = parser.parse_args()
    if args.full:
        grid = [(a, n, e) for a in ALPHAS for n in (1000, 5000) for e in (0.25, 0.5, 1.5, 1e10)]
    else:
        grid = [("alpha3", 1000, 1.5), ("alpha3", 1000, 0.25), ("alpha5", 1000, 0.5), ("alpha5", 5000, 0.25)]
    dp_mcmc(cell("alpha3", 200, 1.0, 0), n_iter=20, n_warmup=10, n_chains=1, thin=1, progress=False)  # compile
    dp_boots(cell("alpha3", 200, 1.0, 0), 10, rng=0)
    rows = []
    if args.resume and os.path.exists(OUT):
        with open(OUT, newline="") as f:
            rows = list(csv.DictReader(f))
    done = {(r["alpha"], int(r["n"]), float(r["eps"])) for r in rows}
    print(f"{'cell':28s} {'a':>7s} {'1 core s':>9s} {'2 cores s':>9s} {'iter/chain':>10s} {'ESS':>6s} "
          f"{'ESS/s':>6s} {'R-hat':>6s} {'ok':>3s} {'DPBoots 2000 s':>14s}")
    for k, (name, n, eps) in enumerate(grid):
        if (name, n, float(eps)) in done:
            continue
        rel = cell(name, n, eps, 100 + k)
        cap = args.max_time if eps < 1e9 else min(args.max_time, 60.0)   # eps = 1e10: records freeze (S5)
        one = time_to_converge(rel, 1, 7, cap)
        two = None if args.one_core else time_to_converge(rel, 2, 7, cap)
        t0 = time.perf_counter()
        dp_boots(rel, 2000, rng=8)
        boots_s = time.perf_counter() - t0
        label = f"{name} n={n} eps={eps:g}"
        two_s = float("nan") if two is None else two["seconds"]
        print(f"{label:28s} {rel.a:7.0e} {one['seconds']:9.1f} {two_s:9.1f} {one['iterations']:10d} "
              f"{one['ess_min']:6.0f} {one['ess_min'] / one['seconds']:6.1f} {one['rhat_max']:6.3f} "
              f"{one['converged']:3d} {boots_s:14.2f}"
              + (f"   ({one['failed']})" if not one["converged"] else ""))
        rows.append({"alpha": name, "d": len(ALPHAS[name]), "n": n, "eps": eps, "a": rel.a,
                     "seconds_1core": round(one["seconds"], 2),
                     "seconds_2cores": "" if two is None else round(two["seconds"], 2),
                     "iterations_per_chain": one["iterations"], "ess_min": round(one["ess_min"], 1),
                     "ess_per_second_1core": round(one["ess_min"] / one["seconds"], 1),
                     "rhat_max": round(one["rhat_max"], 4), "converged": one["converged"],
                     "dpboots_2000_seconds": round(boots_s, 2), "not_reached": "" if one["converged"] else one["failed"]})
        write(rows)
    print(f"written {OUT} ({'full' if args.full else 'reduced'} grid)")


if __name__ == "__main__":
    main()
