"""Does DPreMCMC_p1 differ from the paper because its chains are shorter? (issue 30, Sec. 5.1 verdicts)

Run from the repository root (resumable: runs already in the result file are not run again):

    NUMBA_NUM_THREADS=1 nice -n 19 .venv/bin/python benchmarks/dpremcmc_tail.py

Writes benchmarks/results/dpremcmc_tail.json; notebook 80 reads it.

The Sec. 5.1 table (benchmarks/sec51.toml) runs DPreMCMC_p1 with b = 5 for 2,000 warm-up + 20,000 iterations and
20 slice cycles for alpha per iteration. The paper ran 20,000 burn-in + 100,000 iterations and 1,000 slice cycles
(Guo et al., Sec. 5.1). At alpha = (2, 20, 2), n = 5000, eps = 1.5, where the paper finds DPreMCMC "similar to DPMCMC",
none of the table's 20 runs converges. This script reruns the table's own tasks (same release, same seed) at:

* ``study``: the table's settings, through the study's own runner, so its MSE must equal the table's row;
* ``paper_length``: the paper's 20,000 + 100,000 iterations;
* ``paper_slice``: the paper's 1,000 slice cycles per iteration, at the table's length (about 50 CPU seconds per
  run here; at the paper's length, about 5 minutes).

For each run it stores, per chain, the median, 99% quantile and largest draw of alpha_0 = sum(alpha); the share of
draws with alpha_0 above 10 times the true one (an excursion); and the Jensen gap
g = 1 - sum_j exp(E[log x_j | alpha]) at each chain's median alpha, beside the gap of the release,
g(s_L) = 1 - sum_j exp(s_L,j), and of the truth.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import warnings
from datetime import date

import numpy as np

from dplit import study
from dplit.dirichlet import logx_mean
from dplit.methods import fit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "benchmarks", "results", "dpremcmc_tail.json")
TABLE = os.path.join(ROOT, "benchmarks", "results", "sec51_study.jsonl")
CONFIG = os.path.join(ROOT, "benchmarks", "sec51.toml")
COMMAND = "NUMBA_NUM_THREADS=1 nice -n 19 .venv/bin/python benchmarks/dpremcmc_tail.py"
CELLS = [((2.0, 20.0, 2.0), 5000, 1.5),               # the paper's statement: similar to DPMCMC here
         ((2.2, 3.3, 4.4, 5.5, 6.6), 5000, 1.5),      # converges in 0 of 20 table runs too
         ((3.3, 4.4), 5000, 1.5)]                     # a control: converges in 20 of 20
PAPER_SLICE_CELL, PAPER_SLICE_REPS = CELLS[0], 2
VARIANTS = {"study": {},
            "paper_length": {"n_iter": 100_000, "n_warmup": 20_000},
            "paper_slice": {"n_slice": 1_000}}
EXCURSION = 10.0     # an excursion: alpha_0 above 10 times the true alpha_0


def jensen_gap(mu):
    """1 - sum_j exp(mu_j): the gap between a mean log composition and the boundary of Range(S0)."""
    return 1.0 - np.exp(np.asarray(mu, float)).sum(-1)


def tasks(replicates):
    """The table's DPreMCMC_p1 tasks of the chosen cells, replicates 0 .. replicates - 1."""
    config = study.StudyConfig.from_toml(CONFIG)
    out = []
    for t in study.make_tasks(config):
        s = t.settings
        cell = (tuple(s["alpha_true"]), s["n"], s["eps"])
        if s["method"] == "dpremcmc_p1" and cell in CELLS and s["replicate"] < replicates:
            out.append(t)
    return out


def run_one(task, variant):
    """One run of a table task under a variant: the row stored for it."""
    s = dict(task.settings)
    alpha = np.asarray(s["alpha_true"], float)
    rep = study.simulate_replicate(s)
    g = np.random.default_rng(study.derive_seed(task.key))          # the table's seed for this task
    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")            # convergence is measured (mpsrf) and judged in aggregate
        if variant == "study":                     # the study's runner, as the table ran it
            draws, info = study.run_method(s["method"], rep, s, g)
        else:
            effort = {"n_iter": s["n_iter"], "n_warmup": s["n_warmup"], "n_chains": s["n_chains"], "b": s["b"],
                      **VARIANTS[variant]}
            res = fit(rep["unsplit"], "dpremcmc", prior="p1", rng=g, n_jobs=1, progress=False, **effort)
            draws = res.posterior["alpha"].values.reshape(-1, alpha.size)
            info = {"mpsrf": float(res.posterior.attrs["mpsrf"])}
    cpu = time.process_time() - t0
    chains = draws.reshape(s["n_chains"], -1, alpha.size)
    a0 = chains.sum(-1)
    med = np.median(chains, axis=1)                      # each chain's median alpha
    ok = draws[np.all(np.isfinite(draws) & (draws > 0), axis=1)]
    return {"alpha_true": list(alpha), "n": s["n"], "eps": s["eps"], "replicate": s["replicate"],
            "variant": variant, "effort": {**{k: s[k] for k in ("n_iter", "n_warmup", "b")}, "n_slice": 20,
                                           **VARIANTS[variant]},
            "mpsrf": round(float(info["mpsrf"]), 4), "mse_alpha": float(study.mse(ok, alpha)),
            "alpha0_true": float(alpha.sum()),
            "alpha0_median": [round(float(np.median(c)), 3) for c in a0],
            "alpha0_q99": [round(float(np.quantile(c, 0.99)), 3) for c in a0],
            "alpha0_max": [round(float(c.max()), 3) for c in a0],
            "share_above_10x": round(float(np.mean(a0 > EXCURSION * alpha.sum())), 6),
            "gap_median": [round(float(g), 6) for g in jensen_gap(logx_mean(med))],
            "gap_release": round(float(jensen_gap(rep["unsplit"].s_L)), 6),
            "gap_true": round(float(jensen_gap(logx_mean(alpha))), 6),
            "cpu_s": round(cpu, 2)}


def table_rows():
    """The Sec. 5.1 table's DPreMCMC_p1 rows (settings and measures) by (alpha, n, eps, replicate), or {}."""
    if not os.path.exists(TABLE):
        return {}
    return {(tuple(r["alpha_true"]), r["n"], r["eps"], r["replicate"]): r for r in study.TableStore(TABLE).rows()
            if r["method"] == "dpremcmc_p1"}


def summarise(rows):
    """Per cell and variant: runs, runs converged (MPSRF <= 1.1), the share of draws in excursions, the median MSE
    and the largest alpha_0 over the true one."""
    out = []
    for cell in CELLS:
        for variant in VARIANTS:
            rs = [r for r in rows if (tuple(r["alpha_true"]), r["n"], r["eps"]) == cell and r["variant"] == variant]
            if not rs:
                continue
            out.append({"alpha_true": list(cell[0]), "n": cell[1], "eps": cell[2], "variant": variant, "runs": len(rs),
                        "share_above_10x": float(np.mean([r["share_above_10x"] for r in rs])),
                        "converged_runs": sum(r["mpsrf"] <= 1.1 for r in rs),
                        "median_mse_alpha": float(np.median([r["mse_alpha"] for r in rs])),
                        "largest_alpha0_over_true": float(max(max(r["alpha0_max"]) / r["alpha0_true"] for r in rs)),
                        "median_cpu_s": float(np.median([r["cpu_s"] for r in rs]))})
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--replicates", type=int, default=5, help="table replicates per cell (default 5)")
    args = p.parse_args(argv)
    rows = []
    if os.path.exists(OUT):
        with open(OUT) as fh:
            rows = json.load(fh)["runs"]
    done = {(tuple(r["alpha_true"]), r["n"], r["eps"], r["replicate"], r["variant"]) for r in rows}
    table = table_rows()
    for task in tasks(args.replicates):
        s = task.settings
        cell = (tuple(s["alpha_true"]), s["n"], s["eps"])
        for variant in VARIANTS:
            if variant == "paper_slice" and (cell != PAPER_SLICE_CELL or s["replicate"] >= PAPER_SLICE_REPS):
                continue
            if cell + (s["replicate"], variant) in done:
                continue
            row = run_one(task, variant)
            if variant == "study" and cell + (s["replicate"],) in table:   # the same run as the table's row
                want = table[cell + (s["replicate"],)]["mse_alpha"]
                if not np.isclose(row["mse_alpha"], want, rtol=1e-9):
                    sys.exit(f"the study variant does not reproduce the table's row {cell}, replicate "
                             f"{s['replicate']}: MSE {row['mse_alpha']} against {want}")
                row["matches_table_row"] = True
            rows.append(row)
            print(json.dumps({k: row[k] for k in ("alpha_true", "replicate", "variant", "mpsrf", "mse_alpha",
                                                  "alpha0_max", "cpu_s")}), flush=True)
            commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                    text=True).stdout.strip()
            result = {"command": COMMAND, "date": str(date.today()), "commit": commit,
                      "machine": f"{platform.machine()}, Python {platform.python_version()}",
                      "excursion": f"alpha_0 above {EXCURSION:g} x the true alpha_0",
                      "summary": summarise(rows), "runs": rows}
            with open(OUT + ".tmp", "w") as fh:
                json.dump(result, fh, indent=1)
            os.replace(OUT + ".tmp", OUT)


if __name__ == "__main__":
    main()
