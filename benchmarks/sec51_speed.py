"""Sec. 5.1's speed percentages, timed as CPU seconds of the same tasks in one process (notebook papers/80).

Guo et al. time the selected methods at the hardest cell of their grid, n = 5000 and alpha_5 = (2.2, 3.3, 4.4, 5.5,
6.6): DPreMCMC_p1, DPABC_p4 and DPABC_p5 are "roughly 40%, 99%, and 50% faster" than DPMCMC_p1. The study's table
stores each task's wall-clock time, which moves with whatever else the machine ran (DPMCMC_p1 took 30 s on one data
set of that cell and 660 s on another, for the same number of iterations), so its times do not compare. This script runs the study's own tasks
of that cell (``benchmarks/sec51.toml``: the same data sets, seeds and effort, DPMCMC until converged) for the four
methods at the private budgets, replicate by replicate with the methods interleaved, and times each method call in
CPU seconds of this process (``time.process_time``: every thread, not the waiting), after one warm-up task per
method that compiles its kernels.

The same clock settles the paper's "DPreMCMC_p1 computationally faster than DPreMCMC_p3,p4" (Sec. 5.1, the other
priors): DPreMCMC with p1, p3 and p4 on the first data set(s) of every private cell of the grid (``--priors-replicates``).

Run from the repository root:  .venv/bin/python benchmarks/sec51_speed.py [--replicates K] [--priors-replicates R]
Writes ``benchmarks/results/sec51_speed.json``: one row per task (method, alpha, n, eps, replicate, CPU and wall
seconds, smallest bulk ESS of the chain methods), ``rows`` for the hardest cell and ``priors_rows`` for DPreMCMC.
"""

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np

from dplit._files import atomic_write
from dplit.study import NO_PRIVACY_EPS, StudyConfig, make_tasks, run_method, simulate_replicate

HERE = Path(__file__).parent
OUT = HERE / "results" / "sec51_speed.json"
METHODS = ("dpmcmc_p1", "dpremcmc_p1", "dpabc_p4", "dpabc_p5")
PRIORS = ("dpremcmc_p1", "dpremcmc_p3", "dpremcmc_p4")
HARDEST = {"n": 5000, "alpha_true": [2.2, 3.3, 4.4, 5.5, 6.6]}


def study_tasks(methods, replicates, cell=None):
    """The study's tasks of ``methods`` at the private budgets (of one cell, or every one), replicate by replicate,
    the methods interleaved."""
    config = StudyConfig.from_toml(HERE / "sec51.toml")
    return [t for t in make_tasks(config) if t.settings["method"] in methods and t.settings["eps"] < NO_PRIVACY_EPS
            and t.settings["replicate"] < replicates
            and (cell is None or all(t.settings[k] == v for k, v in cell.items()))]


def time_task(task):
    """CPU and wall seconds of the method call of one task (the data set is made before the clock starts)."""
    s = task.settings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = simulate_replicate(s)
        g = np.random.default_rng(task.method_seed)
        c0, w0 = time.process_time(), time.perf_counter()
        _, info = run_method(s["method"], rep, s, g)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    ess = info.get("ess_bulk_min")
    return {"method": s["method"], "alpha": s["alpha_true"], "n": s["n"], "eps": s["eps"],
            "replicate": s["replicate"], "cpu_s": round(cpu, 3),
            "wall_s": round(wall, 3), "ess_bulk_min": None if ess is None or not np.isfinite(ess) else float(ess)}


def time_all(todo, label):
    """Time every task of ``todo`` after one warm-up task per method; the rows, in order."""
    warm = {}
    for t in todo:                              # one task per method first: numba compiles, nothing is kept
        warm.setdefault(t.settings["method"], t)
    for t in warm.values():
        time_task(t)
    rows = []
    for i, t in enumerate(todo, 1):
        rows.append(time_task(t))
        r = rows[-1]
        print(f"{label} {i}/{len(todo)} {r['method']:12s} {r['alpha']} n {r['n']} eps {r['eps']:<5g} "
              f"replicate {r['replicate']}: {r['cpu_s']:.1f} CPU s", flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicates", type=int, default=3, help="data sets of the hardest cell (the study's first K)")
    ap.add_argument("--priors-replicates", type=int, default=1, help="data sets of every private cell for DPreMCMC")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    rows = time_all(study_tasks(METHODS, args.replicates, HARDEST), "hardest cell")
    priors_rows = time_all(study_tasks(PRIORS, args.priors_replicates), "DPreMCMC priors")
    out = {"command": f"benchmarks/sec51_speed.py --replicates {args.replicates} --priors-replicates "
                      f"{args.priors_replicates}",
           "date": time.strftime("%Y-%m-%d"), "cell": HARDEST, "clock": "time.process_time around the method call",
           "rows": rows, "priors_rows": priors_rows}
    atomic_write(args.out, json.dumps(out, indent=1) + "\n", overwrite=True)
    for name, rs, ms in (("hardest cell", rows, METHODS), ("DPreMCMC, every private cell", priors_rows, PRIORS)):
        med = {m: float(np.median([r["cpu_s"] for r in rs if r["method"] == m])) for m in ms}
        print(f"{name}, median CPU s: " + ", ".join(f"{m} {v:.2f}" for m, v in med.items()))


if __name__ == "__main__":
    main()
