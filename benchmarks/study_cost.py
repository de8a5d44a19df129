"""Cost model of Guo et al.'s Sec. 5.1 simulation study (notebook 10_simulation_study): one data set per cell of the
paper's grid (5 alphas x n in {1000, 5000} x eps in {0.25, 0.5, 1.5, 1e10}) for every method, at the study's full
effort, timed (CPU seconds, one thread) through the study's own task runner (``dplit.study.run_task``: data set, releases, method, measures).

The tasks run in a fixed random order, so that a partial run already covers every method, n and d; each finished
task is written to a SQLite store at once, so the run resumes where it stopped (``--max-tasks`` runs a slice). The
summary writes one row per task to ``results/study_cost.csv`` (the committed text table) and the extrapolation to
the paper's 50 data sets per cell to ``results/study_cost.json``: CPU-hours, and the wall time on this machine's 2
cores and on 16 and 64 Dask workers (total / workers, but never less than the slowest task).

    .venv/bin/python benchmarks/study_cost.py --max-tasks 100     # run (resumable), then summarise
    .venv/bin/python benchmarks/study_cost.py --summary             # summarise what is stored
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
REPLICATES_PAPER = 50
WORKERS = (2, 16, 64)


def tasks():
    """One replicate of every (cell, method) of the full grid, in a fixed random order."""
    config = StudyConfig(replicates=1, seed=20261125)
    todo = make_tasks(config)
    order = np.random.default_rng(20261125).permutation(len(todo))
    return [todo[i] for i in order]


def run(max_tasks):
    store = ResultStore(STORE).check(write=True)
    done = store.done_keys()
    todo = [t for t in tasks() if t.key not in done][:max_tasks]
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


def summary():
    rows = []
    for r in ResultStore(STORE).rows():
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
    args = ap.parse_args()
    if not args.summary:
        run(args.max_tasks)
    summary()
