"""Cost model of Guo et al.'s Sec. 5.1 simulation study (notebook 62_study): one data set per cell of the
paper's grid (5 alphas x n in {1000, 5000} x eps in {0.25, 0.5, 1.5, 1e10}) for every method, at the study's full
effort, timed (CPU seconds, one thread) through the study's own task runner (``dplit.study.run_task``: data set, releases, method, measures).

The tasks run in a fixed random order, so that a partial run already covers every method, n and d; each finished
task is written to a SQLite store at once, so the run resumes where it stopped (``--max-tasks`` runs a slice). The
summary writes one row per task to ``results/study_cost.csv`` (the committed text table) and the extrapolation to
the paper's 50 data sets per cell to ``results/study_cost.json``: CPU-hours, and the wall time on this machine's 2
cores and on 16 and 64 Dask workers (total / workers, but never less than the slowest task).

    .venv/bin/python benchmarks/study_cost.py --max-tasks 100     # run (resumable), then summarise
    .venv/bin/python benchmarks/study_cost.py --summary             # summarise what is stored
    .venv/bin/python benchmarks/study_cost.py --auto-vs-fixed       # DPMCMC until converged against 20,000 iterations

The grid's cost is that of the study's default effort (DPMCMC until converged, ``n_iter="auto"``). Tasks stored at
an earlier effort (DPMCMC at a fixed 20,000 iterations) stay in the store as the baseline of ``--auto-vs-fixed``:
the same data set (the data seed does not depend on the effort) run both ways, with MSE, coverage and CPU time
side by side in ``results/study_auto_vs_fixed.json``.
"""

import argparse
import csv
import json
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from dplit.study import METHODS, ResultStore, StudyConfig, make_tasks, run_task

HERE = Path(__file__).parent
STORE = HERE / "results" / "study_cost.sqlite"        # not committed: the CSV below is its text copy
CSV = HERE / "results" / "study_cost.csv"
JSON = HERE / "results" / "study_cost.json"
AUTO_VS_FIXED = HERE / "results" / "study_auto_vs_fixed.json"
REPLICATES_PAPER = 50
WORKERS = (2, 16, 64)


def tasks():
    """One replicate of every (cell, method) of the full grid, in a fixed random order."""
    config = StudyConfig(replicates=1, seed=20261125)
    todo = make_tasks(config)
    order = np.random.default_rng(20261125).permutation(len(todo))
    return [todo[i] for i in order]


def run(max_tasks, todo=None):
    store = ResultStore(STORE).check(write=True)
    done = store.done_keys()
    todo = [t for t in (tasks() if todo is None else todo) if t.key not in done][:max_tasks]
    t0 = time.perf_counter()
    for i, t in enumerate(todo, 1):
        c0 = time.process_time()
        record = run_task(t.key)
        record["cpu_s"] = time.process_time() - c0        # the cost: wall time is inflated on a shared machine
        store.put(t.key, record)
        s = t.settings
        print(f"{i}/{len(todo)} {s['method']:>12} d={len(s['alpha_true'])} n={s['n']} eps={s['eps']:g}: "
              f"{record['cpu_s']:.1f} CPU-s{' (' + record['error'] + ')' if record.get('error') else ''} "
              f"[{time.perf_counter() - t0:.0f} s]", flush=True)


def _fixed_dpmcmc():
    """(fixed-effort task key, the same task until converged) for every DPMCMC task stored at 20,000 iterations."""
    pairs = []
    for key in sorted(ResultStore(STORE).done_keys()):
        s = json.loads(key)
        if METHODS[s["method"]][0] == "dpmcmc" and s["n_iter"] != "auto":
            auto = {**s, "n_iter": "auto", "target_ess": StudyConfig().target_ess, "max_iter": StudyConfig().max_iter}
            pairs.append((key, json.dumps(auto, sort_keys=True, separators=(",", ":"))))
    return pairs


def auto_vs_fixed(max_tasks=None):
    """Run DPMCMC until converged on every data set stored at the fixed effort; compare and write the JSON."""
    from dplit.study import Task

    pairs = _fixed_dpmcmc()
    run(max_tasks, todo=[Task(json.loads(a), a) for _, a in pairs])
    rec = dict(ResultStore(STORE).records())
    rows = []
    for f, a in pairs:
        if a in rec and not rec[f].get("error") and not rec[a].get("error"):
            s = json.loads(f)
            rows.append({"method": s["method"], "alpha_true": s["alpha_true"], "n": s["n"], "eps": s["eps"],
                         **{f"{m}_{k}": rec[key].get(m) for k, key in (("fixed", f), ("auto", a))
                            for m in ("mse_alpha", "mse_mean", "coverage", "cpu_s", "ess_bulk_min", "n_draws")},
                         # iterations per chain, warm-up included (auto keeps every iteration, fixed thins by 10)
                         "iterations_fixed": s["n_warmup"] + s["n_iter"],
                         "iterations_auto": s["n_warmup"] + rec[a]["n_draws"] // s["n_chains"]})
    if not rows:
        return None
    rel = np.array([r["mse_alpha_auto"] / r["mse_alpha_fixed"] - 1 for r in rows])
    cov = np.array([r["coverage_auto"] - r["coverage_fixed"] for r in rows])
    cpu = np.array([r["cpu_s_fixed"] / r["cpu_s_auto"] for r in rows])
    its = np.array([r["iterations_fixed"] / r["iterations_auto"] for r in rows])
    out = {"command": "benchmarks/study_cost.py --auto-vs-fixed", "date": time.strftime("%Y-%m-%d"),
           "fixed": "n_iter=20000, n_warmup=2000, 3 chains, thin 10", "auto": "n_iter='auto', target_ess=400",
           "pairs": len(rows), "cpu_ratio_fixed_over_auto": {"median": float(np.median(cpu)), "min": float(cpu.min()),
                                                              "max": float(cpu.max())},
           "iterations_ratio_fixed_over_auto": {"median": float(np.median(its)), "min": float(its.min()),
                                                "max": float(its.max())},
           "note": "CPU seconds on a shared, loaded machine (the fixed runs and the auto runs were timed at "
                   "different times); the iteration counts are exact",
           "cpu_total_s": {"fixed": float(sum(r["cpu_s_fixed"] for r in rows)),
                           "auto": float(sum(r["cpu_s_auto"] for r in rows))},
           "mse_alpha_relative_change": {"median": float(np.median(rel)), "mean": float(rel.mean()),
                                         "min": float(rel.min()), "max": float(rel.max())},
           "coverage_change": {"mean": float(cov.mean()), "min": float(cov.min()), "max": float(cov.max())},
           "rows": rows}
    AUTO_VS_FIXED.write_text(json.dumps(out, indent=1))
    print(f"{len(rows)} data sets: iterations fixed/auto median x{np.median(its):.1f}; CPU fixed/auto median "
          f"x{np.median(cpu):.1f} (total {out['cpu_total_s']['fixed']:.0f}"
          f" s against {out['cpu_total_s']['auto']:.0f} s); MSE(alpha) auto/fixed - 1: median {np.median(rel):+.3f}, "
          f"range {rel.min():+.3f} to {rel.max():+.3f}; coverage auto - fixed: mean {cov.mean():+.4f}, range "
          f"{cov.min():+.4f} to {cov.max():+.4f}")
    return out


def summary():
    rows, grid = [], {t.key for t in tasks()}
    for k, rec in ResultStore(STORE).records():
        if k not in grid:          # another effort (the fixed-length DPMCMC of --auto-vs-fixed): not the grid's cost
            continue
        r = {**json.loads(k), **rec}
        rows.append({"method": r["method"], "d": len(r["alpha_true"]), "alpha_true": " ".join(map(str, r["alpha_true"])),
                     "n": r["n"], "eps": r["eps"], "cpu_s": round(r.get("cpu_s", r["runtime"]), 3),
                     "wall_s": round(r["runtime"], 3),
                     "error": r.get("error") or "", "mse_alpha": r.get("mse_alpha"), "coverage": r.get("coverage")})
    rows.sort(key=lambda r: (r["method"], r["d"], r["alpha_true"], r["n"], r["eps"]))
    with open(CSV, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    n_cells = len(StudyConfig().scenarios())
    per_method, longest = defaultdict(list), 0.0
    for r in rows:
        per_method[r["method"]].append(r["cpu_s"])
        longest = max(longest, r["cpu_s"])
    methods = {}
    for m in METHODS:
        t = per_method.get(m, [])
        if t:   # the mean over the cells timed, standing for the cells not yet timed
            methods[m] = {"cells_timed": len(t), "mean_s": float(np.mean(t)), "max_s": float(np.max(t)),
                          "grid_cpu_h": float(np.mean(t)) * n_cells * REPLICATES_PAPER / 3600}
    timed = [m for m in METHODS if m in methods]
    total_h = sum(methods[m]["grid_cpu_h"] for m in timed)
    out = {"command": "benchmarks/study_cost.py", "date": time.strftime("%Y-%m-%d"), "tasks_timed": len(rows),
           "tasks_in_grid_one_replicate": n_cells * len(METHODS), "cells": n_cells,
           "replicates_paper": REPLICATES_PAPER, "methods": methods,
           "methods_not_timed": [m for m in METHODS if m not in methods],
           "full_grid_cpu_hours": total_h, "longest_task_s": longest,
           "wall_hours": {str(w): max(total_h / w, longest / 3600) for w in WORKERS},
           "note": "CPU time of one task on this (shared) 2-core machine; wall = CPU-hours / workers, bounded below "
                   "by the longest task; methods not timed are not in the total"}
    JSON.write_text(json.dumps(out, indent=1))
    print(f"{len(rows)} tasks timed of {out['tasks_in_grid_one_replicate']}; full grid ({n_cells} cells x "
          f"{REPLICATES_PAPER} data sets x {len(timed)} methods timed): {total_h:.1f} CPU-hours; wall "
          + ", ".join(f"{w} workers {h:.1f} h" for w, h in out["wall_hours"].items()))
    for m in timed:
        v = methods[m]
        print(f"  {m:>12}: {v['cells_timed']:>2} cells, mean {v['mean_s']:.1f} s, max {v['max_s']:.1f} s, "
              f"grid {v['grid_cpu_h']:.1f} CPU-h")
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-tasks", type=int, default=None, help="run at most this many of the remaining tasks")
    ap.add_argument("--summary", action="store_true", help="only summarise the stored tasks")
    ap.add_argument("--auto-vs-fixed", action="store_true",
                    help="run DPMCMC until converged on the data sets stored at 20,000 iterations, and compare")
    args = ap.parse_args()
    if args.auto_vs_fixed:
        auto_vs_fixed(args.max_tasks)
    elif not args.summary:
        run(args.max_tasks)
    summary()
