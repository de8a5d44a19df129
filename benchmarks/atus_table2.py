"""Guo et al.'s Table 2 (the ATUS application, Sec. 5.2) at the paper's 100 repetitions per method, resumable.

Each row of ``results/atus_table2.jsonl`` (JSON lines, committed) is one repetition of one method: both sexes
released at ``eps`` and analysed with :func:`dplit.atus.analyse` (the notebook's own function, at the study's
``quick`` or ``full`` effort). A row is keyed by ``method``, ``rep``, ``eps``, ``effort`` and ``seed`` (the root
seed); the repetition's random stream is seeded from that key alone (:func:`dplit.study.derive_seed`), so any
machine computes the same row, and a rerun skips the keys already in the table and appends the others. Each row
stores the per-group means of E[x], the reject decisions, P(H0) (Bayesian methods) and the 95% interval of
E[x_j | male] - E[x_j | female] (the bootstrap's test; for Bayesian methods the credible interval), the threshold
and Laplace scale of each group's release, and the CPU seconds.

Repetitions run outer and methods inner, so a partial run holds about as many repetitions of every method.

    nice -n 19 .venv/bin/python benchmarks/atus_table2.py --reps 100 --max-seconds 3600
    .venv/bin/python benchmarks/atus_table2.py --summary         # decision frequencies of the stored rows

The data: ATUS 2019 through :func:`dplit.datasets.load_atus` (``$DPLIT_DATA``, default ``../shared/data`` beside
the checkout), filtered as the paper (:func:`dplit.atus.atus_compositions`, 3,359 men and 3,766 women).
"""

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
TABLE = HERE / "results" / "atus_table2.jsonl"
SEED = 20261127
EPS = 0.5
DP_METHODS = ("dpboots", "dpmcmc_p1", "dpremcmc_p1", "dpabc_p4", "dpabc_p5")
METHODS = ("boots", "mcmc_p1") + DP_METHODS       # Table 2's rows
KEY_FIELDS = ("method", "rep", "eps", "effort", "seed")


def row_key(method, rep, eps, effort, seed):
    """The key of one row: a dict of :data:`KEY_FIELDS` (values as stored in the table)."""
    if effort not in ("quick", "full"):
        raise ValueError(f"effort must be 'quick' or 'full', got {effort!r}")
    return {"method": str(method), "rep": int(rep), "eps": float(eps), "effort": effort, "seed": int(seed)}


def key_of(row, fields=KEY_FIELDS):
    """The hashable key of a stored row (or of a :func:`row_key` dict): its values of ``fields``."""
    return tuple(row[k] for k in fields)


def read_rows(path=TABLE):
    """The rows stored in ``path`` (a list of dicts; [] when the file is absent)."""
    path = Path(path)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _round(x, digits=6):
    return None if x is None else np.round(np.asarray(x, float), digits).tolist()


def run_row(groups, key):
    """Run one (method, repetition) of Table 2 on ``groups`` (``{"male": X, "female": X}``); returns the row."""
    from dplit.atus import analyse
    from dplit.study import StudyConfig, derive_seed

    effort = vars(StudyConfig(quick=key["effort"] == "quick"))
    rng = np.random.default_rng(derive_seed(key))
    c0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = analyse(groups, key["method"], key["eps"], effort=effort, rng=rng)
    cpu = time.process_time() - c0
    return {**key,
            "n": {s: int(len(groups[s])) for s in ("male", "female")},
            "mean": {s: _round(res["mean"][s]) for s in ("male", "female")},
            "reject": [bool(r) for r in res["reject"]],
            "prob": _round(res["prob"]),
            "interval": _round(res["interval"]),
            "release": {s: {k: round(v, 8) for k, v in res["release"][s].items()} for s in ("male", "female")},
            "cpu_s": round(cpu, 2)}


def run(groups, path=TABLE, *, methods=METHODS, reps=100, first_rep=0, eps=EPS, effort="quick", seed=SEED,
        max_seconds=None, log=print):
    """Append the missing rows (repetitions ``first_rep .. reps-1`` of each method) to ``path``; returns how many
    were added.

    Stops starting new rows once ``max_seconds`` (wall) have passed. Each row is written (and flushed) when done.
    """
    keys = [row_key(m, r, eps, effort, seed) for r in range(first_rep, reps) for m in methods]
    return append_missing(path, keys, lambda k: run_row(groups, k), lambda k, row: (
        f"{k['method']:>12} rep {k['rep']:3d}: reject {row['reject']} prob {row['prob']} {row['cpu_s']:.1f} CPU-s"),
        max_seconds=max_seconds, log=log)


def append_missing(path, keys, compute, describe, *, fields=KEY_FIELDS, max_seconds=None, log=print):
    """Append to the JSON-lines table ``path`` the row ``compute(key)`` of each of ``keys`` (dicts) it lacks, in
    order; returns how many were added. The scripts' one resumable loop (this one's and ``atus_s4s5.py``'s).

    A row is keyed by its values of ``fields``. Each row is appended (and flushed) when done, so an interrupted run
    keeps every finished row; a key written meanwhile by another process is skipped. No new row is started once
    ``max_seconds`` (wall) have passed. ``describe(key, row)`` is the log line of a row.
    """
    path = Path(path)
    done = {key_of(r, fields) for r in read_rows(path)}
    todo = [k for k in keys if key_of(k, fields) not in done]
    path.parent.mkdir(parents=True, exist_ok=True)
    t0, added = time.perf_counter(), 0
    for i, k in enumerate(todo):
        if max_seconds is not None and time.perf_counter() - t0 > max_seconds:
            log(f"stopped after {max_seconds:g} s: {len(todo) - i} rows left")
            break
        if key_of(k, fields) in {key_of(r, fields) for r in read_rows(path)}:
            continue                  # written meanwhile by another process working on the same table
        row = compute(k)
        with open(path, "a") as fh:
            fh.write(json.dumps(row, separators=(",", ":")) + "\n")
        added += 1
        log(f"{describe(k, row)} [{time.perf_counter() - t0:.0f} s]")
    return added


def summary(rows, *, eps=EPS, effort="quick", seed=SEED):
    """Per method: repetitions stored, reject fraction per H0_j, mean P(H0_j) (Bayesian), mean CPU seconds."""
    out = {}
    for m in METHODS:
        rs = [r for r in rows if r["method"] == m and r["eps"] == eps and r["effort"] == effort and r["seed"] == seed]
        if not rs:
            continue
        probs = [r["prob"] for r in rs if r["prob"] is not None]
        out[m] = {"reps": len(rs), "reject": np.mean([r["reject"] for r in rs], axis=0).round(3).tolist(),
                  "prob": np.mean(probs, axis=0).round(3).tolist() if probs else None,
                  "cpu_s": round(float(np.mean([r["cpu_s"] for r in rs])), 1)}
    return out


def atus_groups():
    """The paper's ATUS groups (raises OSError/ValueError when the data cannot be found)."""
    from dplit.atus import atus_compositions
    from dplit.datasets import load_atus

    shared = HERE.parent.parent / "shared" / "data"
    if "DPLIT_DATA" not in os.environ and shared.is_dir():
        os.environ["DPLIT_DATA"] = str(shared)
    return atus_compositions(load_atus(download=False))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=100)
    p.add_argument("--first-rep", type=int, default=0,
                   help="start at this repetition (a second process can take the upper half of a method's reps)")
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    p.add_argument("--eps", type=float, default=EPS)
    p.add_argument("--effort", choices=("quick", "full"), default="quick")
    p.add_argument("--seed", type=int, default=SEED)
    p.add_argument("--max-seconds", type=float, default=None)
    p.add_argument("--table", type=Path, default=TABLE)
    p.add_argument("--summary", action="store_true", help="print the decision frequencies of the stored rows")
    a = p.parse_args(argv)
    if not a.summary:
        try:
            groups = atus_groups()
        except (OSError, ValueError) as err:
            print(f"ATUS 2019 not available, nothing run: {err}")
            return 1
        run(groups, a.table, methods=a.methods, reps=a.reps, first_rep=a.first_rep, eps=a.eps, effort=a.effort,
            seed=a.seed, max_seconds=a.max_seconds, log=lambda *x: print(*x, flush=True))
    for m, s in summary(read_rows(a.table), eps=a.eps, effort=a.effort, seed=a.seed).items():
        print(f"{m:>12}: {s['reps']:3d} reps, reject {s['reject']}, P(H0) {s['prob']}, {s['cpu_s']} CPU-s per rep")
    return 0


if __name__ == "__main__":
    sys.exit(main())
