"""ESS per iteration of dapper_sample on dapper's Example 1, against the R package dapper's recorded figures.

Run from the repository root (about 4 minutes on 2 shared cores):

    nice -n 10 .venv/bin/python benchmarks/dapper_ess_per_iteration.py

Writes benchmarks/results/dapper_ess_per_iteration.json (issue 31, item 1).

The problem: randomized response on the UC Berkeley 2 x 2 table, n = 400, released table 104 / 120 / 74 / 102,
flat Dirichlet prior, init_par = (0.25, 0.25, 0.25, 0.25), one chain per run (dapper's setting). The figure is
min over the four cell probabilities of ESS_bulk (ArviZ, rank-normalised split-chain, the estimator of R's
posterior::ess_bulk that dapper's summary() calls) divided by the iterations run, averaged over seeds.

* dapper's protocol: dapper_sample(niter = 20000) keeps niter - warmup draws with its default warmup = niter / 2,
  so the recorded run is 10,000 warm-up + 10,000 kept iterations; ESS is over the kept draws, and the recorded
  ESS/s divided by it/s is ESS per iteration run. dplit runs the same: n_warmup = 10,000, n_iter = 10,000.
* the protocol of the issue's figure (benchmarks/bench_augmentation.py): 200 warm-up + 1,000 kept iterations,
  one seed, with dapper's module style in Python (a 400 x 2 term per record).

Modules: dapper's style in Python (ex1_st returns a 400 x 2 matrix), the compact style in Python (one number per
record) and the compact style in numba, all from benchmarks/bench_augmentation.py. dapper's style and the compact
style give the same log density on every database, so the Python engine runs the same chain draw for draw (checked
here, bit for bit); dapper's-style modules are about 5 x slower per iteration, so the long runs use the compact
ones. The numba modules draw the latent cells by inverse CDF, the algorithm of numpy's Generator.choice, so they
give the same draws again (checked on seeds 1-5 at full length; a rounding difference in the cumulative
probabilities could part them, which the check would report).
"""

import json
import os
import platform
import subprocess
import sys
import time
import warnings
from datetime import date

import arviz as az
import bench_augmentation as B  # the Example 1 modules (this directory is on sys.path when run as a script)
import numpy as np

from dplit.augmentation import PrivacyModel, dapper_sample
from dplit.sampling import ConvergenceWarning

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "benchmarks", "results", "dapper_ess_per_iteration.json")
COMMAND = "nice -n 10 .venv/bin/python benchmarks/dapper_ess_per_iteration.py"
NAMES = ["pi_11", "pi_10", "pi_01", "pi_00"]
INIT = np.full(4, 0.25)
warnings.simplefilter("ignore", ConvergenceWarning)

M_DAPPER = PrivacyModel(B.ex1_latent, B.ex1_post, B.ex1_priv, B.ex1_st, 4, NAMES)
M_COMPACT = PrivacyModel(B.ex1_latent, B.ex1_post, B.ex1_priv_c, B.ex1_st_c, 4, NAMES, same_shape=False)
M_NUMBA = PrivacyModel(B.ex1_latent_nb, B.ex1_post_nb, B.ex1_priv_nb, B.ex1_st_nb, 4, NAMES, same_shape=False)

# dapper 1.1.0 in R, ../shared/benchmarks/README.md ("dapper Example 1"), and the paper's Example 1 table
# (seed 002: four chains of niter = 6000, warmup = 1000; ess_bulk 362 / 431 / 282 / 389 over 20,000 kept draws).
DAPPER = [
    {"run": "recorded: 20,000 iterations, one chain", "it_per_s": [287.0, 287.0],
     "min_ess_bulk_per_s": [1.55, 1.55]},
    {"run": "re-measured 2026-11-24 (per CPU-second)", "it_per_s": [300.0, 300.0],
     "min_ess_bulk_per_s": [2.4, 2.4]},
    {"run": "re-measured 2026-11-25, seeds 1 and 2", "it_per_s": [373.0, 382.0],
     "min_ess_bulk_per_s": [3.0, 3.9]},
]
DAPPER_PAPER = {"run": "paper, Example 1: 4 chains x (1,000 warm-up + 5,000 kept)", "min_ess_bulk": 282,
                "kept_draws": 20_000, "iterations_run": 24_000}


def min_ess(res):
    """Smallest bulk ESS over the four parameters (one chain)."""
    return min(float(az.ess(res.posterior[v].values, method="bulk")) for v in NAMES)


def one_run(model, n_iter, n_warmup, seed):
    t0 = time.perf_counter()
    res = dapper_sample(model, B.SDP1, INIT, n_iter=n_iter, n_warmup=n_warmup, n_chains=1, rng=seed, progress=False)
    sec = time.perf_counter() - t0
    draws = np.stack([res.posterior[v].values[0] for v in NAMES], axis=1)
    acc = res.sample_stats["acceptance"].values[0]
    return {"seed": seed, "min_ess_bulk": round(min_ess(res), 2), "seconds": round(sec, 2),
            "mean_record_acceptance": round(float(acc.mean()), 4)}, draws, acc


def summarise(rows, n_iter, n_warmup):
    ess = np.array([r["min_ess_bulk"] for r in rows])
    per_run = ess / (n_iter + n_warmup)
    per_kept = ess / n_iter
    q = lambda x, p: round(float(np.quantile(x, p)), 5)  # noqa: E731
    return {"n_warmup": n_warmup, "n_iter_kept": n_iter, "iterations_run": n_iter + n_warmup, "seeds": len(rows),
            "min_ess_bulk_mean": round(float(ess.mean()), 1), "min_ess_bulk_sd": round(float(ess.std(ddof=1)), 1),
            "ess_per_iteration_mean": round(float(per_run.mean()), 5),
            "ess_per_iteration_se": round(float(per_run.std(ddof=1) / np.sqrt(len(rows))), 5),
            "ess_per_iteration_q05_q95": [q(per_run, 0.05), q(per_run, 0.95)],
            "ess_per_iteration_min_max": [q(per_run, 0.0), q(per_run, 1.0)],
            "ess_per_kept_draw_mean": round(float(per_kept.mean()), 5),
            "iterations_per_s": round(len(rows) * (n_iter + n_warmup) / sum(r["seconds"] for r in rows), 1),
            "runs": rows}


def main():
    t_start = time.perf_counter()
    one_run(M_NUMBA, 20, 0, 0)                                   # compile the numba modules
    out = {"command": COMMAND, "date": date.today().isoformat(), "issue": "31, item 1",
           "dplit_commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                          text=True).stdout.strip(),
           "python": platform.python_version(), "numpy": np.__version__, "arviz": az.__version__,
           "problem": "dapper Example 1: randomized response, n = 400, released table 104/120/74/102, flat "
                      "Dirichlet prior, init_par = 0.25 x 4, one chain per run",
           "figure": "min over the 4 parameters of ESS_bulk (ArviZ, = posterior::ess_bulk) / iterations run "
                     "(warm-up included), mean over seeds",
           "sampler_change": "none: dapper_sample's iteration is dapper's (see notebook 41, 'ESS per iteration: "
                             "the same chain as dapper's'); the figures below are both 'before' and 'after'"}

    # 1. the issue's protocol: dapper's module style, Python, 200 + 1,000 iterations; the compact modules on the
    #    same seeds give the same draws bit for bit
    issue_rows, same = [], []
    for seed in range(1, 6):
        row, d_dapper, a_dapper = one_run(M_DAPPER, 1000, 200, seed)
        _, d_compact, a_compact = one_run(M_COMPACT, 1000, 200, seed)
        same.append(bool(np.array_equal(d_dapper, d_compact) and np.array_equal(a_dapper, a_compact)))
        issue_rows.append(row)
        print(f"issue protocol, dapper's modules, seed {seed}: min ESS_bulk {row['min_ess_bulk']:.1f} "
              f"({row['min_ess_bulk'] / 1200:.4f} per iteration); compact modules identical: {same[-1]}", flush=True)
    assert all(same)
    out["issue_protocol_dapper_modules_python"] = summarise(issue_rows, 1000, 200)
    out["dapper_modules_equal_compact_modules"] = {
        "bitwise_identical_draws_and_acceptance": all(same), "seeds": list(range(1, 6)), "iterations": 1200}
    nb_short = [one_run(M_NUMBA, 1000, 200, seed)[0] for seed in range(1, 201)]
    out["issue_protocol_numba_200_seeds"] = summarise(nb_short, 1000, 200)
    per = np.array([r["min_ess_bulk"] for r in nb_short]) / 1200
    out["issue_protocol_numba_200_seeds"]["fraction_of_seeds_at_or_below_0.0031"] = round(float(np.mean(per <= 0.0031)), 3)
    out["issue_protocol_numba_200_seeds"]["runs"] = "omitted (200 runs)"
    print(f"issue protocol, numba, 200 seeds: mean {per.mean():.4f} per iteration, "
          f"{np.mean(per <= 0.0031):.1%} at or below 0.0031", flush=True)

    # 2. dapper's protocol: niter = 20,000 with dapper's default warm-up (half), one chain
    py_rows, py_draws = [], []
    for seed in range(1, 6):
        row, draws, _ = one_run(M_COMPACT, 10_000, 10_000, seed)
        py_rows.append(row)
        py_draws.append(draws)
        print(f"dapper's protocol, Python engine (dapper's chain), seed {seed}: min ESS_bulk {row['min_ess_bulk']:.1f} "
              f"({row['min_ess_bulk'] / 20_000:.4f} per iteration, {row['seconds']:.0f} s)", flush=True)
    out["dapper_protocol_python_engine"] = summarise(py_rows, 10_000, 10_000)
    out["dapper_protocol_python_engine"]["modules"] = ("compact, Python (the chain of dapper's-style modules, "
                                                       "draw for draw)")
    nb_runs = [one_run(M_NUMBA, 10_000, 10_000, seed) for seed in range(1, 21)]
    out["dapper_protocol_numba_engine"] = summarise([r[0] for r in nb_runs], 10_000, 10_000)
    same_nb = [bool(np.array_equal(py_draws[k], nb_runs[k][1])) for k in range(5)]
    out["dapper_protocol_numba_engine"]["modules"] = "compact, numba (inverse-CDF cells: Generator.choice's draws)"
    out["dapper_protocol_numba_engine"]["seeds_1_5_identical_to_python_engine"] = same_nb
    print(f"dapper's protocol, numba, 20 seeds: {out['dapper_protocol_numba_engine']['ess_per_iteration_mean']:.4f} "
          "per iteration", flush=True)

    # 3. long runs: the ESS per kept draw of the chain itself (no warm-up to share)
    long_rows = [one_run(M_NUMBA, 100_000, 2_000, seed)[0] for seed in range(1, 11)]
    out["long_runs_numba"] = summarise(long_rows, 100_000, 2_000)

    # 4. dapper's recorded figures, as ESS per iteration run (ESS/s over it/s) and per kept draw (half warm-up)
    rec = []
    for r in DAPPER:
        lo = min(r["min_ess_bulk_per_s"]) / max(r["it_per_s"])
        hi = max(r["min_ess_bulk_per_s"]) / min(r["it_per_s"])
        rec.append(r | {"ess_per_iteration": [round(lo, 5), round(hi, 5)],
                        "min_ess_bulk_over_10000_kept": [round(lo * 20_000), round(hi * 20_000)],
                        "ess_per_kept_draw_if_half_warmup": [round(2 * lo, 5), round(2 * hi, 5)]})
    out["dapper_recorded"] = {"source": "../shared/benchmarks/README.md, 'dapper Example 1'", "runs": rec,
                              "paper": DAPPER_PAPER | {
                                  "ess_per_iteration": round(282 / 24_000, 5),
                                  "ess_per_kept_draw": round(282 / 20_000, 5)},
                              "range_ess_per_iteration": [min(r["ess_per_iteration"][0] for r in rec),
                                                          max(r["ess_per_iteration"][1] for r in rec)]}
    out["runtime_s"] = round(time.perf_counter() - t_start, 1)
    with open(OUT, "w") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")
    d = out["dapper_recorded"]["range_ess_per_iteration"]
    print("\nESS per iteration (min ESS_bulk / iterations run), dapper's Example 1, one chain:")
    print(f"  dapper (R, recorded, niter = 20,000, half warm-up):        {d[0]:.4f}-{d[1]:.4f}")
    for key, label in [("dapper_protocol_python_engine", "dplit, Python engine, same protocol, 5 seeds"),
                       ("dapper_protocol_numba_engine", "dplit, numba engine, same protocol, 20 seeds"),
                       ("issue_protocol_dapper_modules_python", "dplit, issue's protocol (200 + 1,000), 5 seeds"),
                       ("issue_protocol_numba_200_seeds", "dplit, issue's protocol, numba, 200 seeds")]:
        s = out[key]
        print(f"  {label:<56} {s['ess_per_iteration_mean']:.4f} (s.e. {s['ess_per_iteration_se']:.4f})")
    print(f"  ESS per kept draw, 10 x 100,000 kept (numba):              "
          f"{out['long_runs_numba']['ess_per_kept_draw_mean']:.4f}")
    print(f"runtime {out['runtime_s']:.0f} s; wrote benchmarks/results/dapper_ess_per_iteration.json", file=sys.stderr)


if __name__ == "__main__":
    main()
