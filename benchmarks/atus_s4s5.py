"""Guo et al.'s Figures S4 and S5 (ATUS, S6): posterior predictive densities of DPreMCMC_p4 over runs, resumable.

The paper averages the posterior predictive density of each activity over 100 runs of DPreMCMC_p4, per sex, at
eps = 0.5 (Figure S4) and eps = 1 (Figure S5), against the histograms of the data and MCMC_p1 (the benchmark).
Each row of ``results/atus_s4s5.jsonl`` (JSON lines, committed) is one run of one method on one sex: a fresh
release of that sex's records at ``eps`` (:func:`dplit.study.make_releases`), the method at the study's ``quick`` or
``full`` effort (:func:`dplit.study.run_method`), and the predictive density of each activity
(:func:`dplit.atus.predictive_density`) on the fixed grid :data:`GRIDS` (the grids of 63_atus's ``s6_figure``) and
at the midpoints of the data's histogram (:data:`BINS` bins), where the reader measures the L1 distance to it.

A row is keyed by ``method``, ``eps``, ``sex``, ``run``, ``effort`` and ``seed`` (the root seed); the run's random
stream (release and chains) is seeded from that key alone (:func:`dplit.study.derive_seed`), so a rerun reproduces
a row, and a rerun skips the keys already stored. MCMC_p1 (non-private, ``eps`` null) is stored once per sex, and
one ``method = "data"`` row per sex holds the histograms (edges and densities), so the figures can be drawn from
this file alone. Runs go outer and (eps, sex) inner, so a partial run holds about as many runs of every panel.

    OMP_NUM_THREADS=1 nice -n 19 .venv/bin/python benchmarks/atus_s4s5.py --runs 100 --max-seconds 1200
    OMP_NUM_THREADS=1 nice -n 19 .venv/bin/python benchmarks/atus_s4s5.py --runs 20 --effort full
    .venv/bin/python benchmarks/atus_s4s5.py --summary           # runs stored per (eps, sex)

The stored table holds 100 runs per (eps, sex) at the ``quick`` effort (about 1.4 CPU-seconds a run) and 20 at the
``full`` effort (20,000 iterations after 2,000; about 4 CPU-seconds a run).

The data: ATUS 2019 through :func:`dplit.datasets.load_atus` (``$DPLIT_DATA``), filtered as the paper
(:func:`dplit.atus.atus_compositions`, 3,359 men and 3,766 women), as ``benchmarks/atus_table2.py`` loads it.
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from atus_table2 import append_missing, atus_groups, read_rows  # noqa: E402

TABLE = HERE / "results" / "atus_s4s5.jsonl"
SEED = 20261129
EPS = (0.5, 1.0)
SEXES = ("male", "female")
METHOD = "dpremcmc_p4"                  # the paper's method of Figures S4-S5
BENCHMARK = "mcmc_p1"
#: (start, stop, num) of the grid of each activity: personal care, eating and drinking, other (as s6_figure's)
GRIDS = ((0.15, 0.75, 300), (0.001, 0.2, 300), (0.2, 0.85, 300))
BINS = 60                               # bins of the data's histogram (as s6_figure's)
KEY_FIELDS = ("method", "eps", "sex", "run", "effort", "seed")


def grid(j):
    """The grid of activity ``j``."""
    start, stop, num = GRIDS[j]
    return np.linspace(start, stop, num)


def row_key(method, eps, sex, run, effort, seed):
    """The key of one row: a dict of :data:`KEY_FIELDS` (``eps`` None for the non-private benchmark)."""
    if effort not in ("quick", "full"):
        raise ValueError(f"effort must be 'quick' or 'full', got {effort!r}")
    if sex not in SEXES:
        raise ValueError(f"sex must be one of {SEXES}, got {sex!r}")
    return {"method": str(method), "eps": None if eps is None else float(eps), "sex": sex, "run": int(run),
            "effort": effort, "seed": int(seed)}


def key_of(row):
    """The hashable key of a stored row (or of a :func:`row_key` dict)."""
    return tuple(row[k] for k in KEY_FIELDS)


def _sig(x, digits=5):
    return [float(f"{v:.{digits}g}") for v in np.asarray(x, float)]


def _dec(x, decimals):
    """Densities to ``decimals`` places (a plot's resolution; keeps the committed table small)."""
    return [round(float(v), decimals) for v in np.asarray(x, float)]


def histograms(X):
    """The data's histogram of each activity: a list of ``{"edges", "density"}``."""
    out = []
    for j in range(X.shape[1]):
        h, edges = np.histogram(X[:, j], bins=BINS, density=True)
        out.append({"edges": _sig(edges, 8), "density": _sig(h)})
    return out


def run_row(X, key):
    """One run of ``key["method"]`` on records ``X`` (one sex); returns the row (``method="data"``: histograms)."""
    from dplit.atus import predictive_density
    from dplit.study import StudyConfig, derive_seed, make_releases, run_method

    if key["method"] == "data":
        return {**key, "n": int(len(X)), "hist": histograms(X), "grids": [list(g) for g in GRIDS]}
    effort = vars(StudyConfig(quick=key["effort"] == "quick"))
    g = np.random.default_rng(derive_seed(key))
    c0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eps = 1e9 if key["eps"] is None else key["eps"]       # the benchmark reads the records, not the release
        rep = {"X": X, **make_releases(X, eps, rng=g)}
        A, info = run_method(key["method"], rep, effort, g)
    A = A[np.all(np.isfinite(A) & (A > 0), axis=1)]
    mids = [(np.asarray(h["edges"][:-1]) + np.asarray(h["edges"][1:])) / 2 for h in histograms(X)]
    used = rep["split"] if key["method"].endswith(("p3", "p4", "p5")) else rep["unsplit"]
    return {**key, "n": int(len(X)), "draws": int(len(A)),
            "release": None if key["eps"] is None else {"a": float(used.a), "scale": round(float(used.scale), 8)},
            "alpha_mean": _sig(A.mean(axis=0)),
            "alpha0_q": _sig(np.quantile(A.sum(axis=1), [0.05, 0.5, 0.95])),
            "grid": [_dec(predictive_density(A, grid(j), j), 2) for j in range(3)],
            "bins": [_dec(predictive_density(A, mids[j], j), 3) for j in range(3)],
            "info": {k: round(v, 4) for k, v in info.items()},
            "cpu_s": round(time.process_time() - c0, 2)}


def plan(runs, *, eps=EPS, effort="quick", seed=SEED, first_run=0):
    """The keys to compute, in order: the histograms and the benchmark first, then runs outer, (eps, sex) inner."""
    keys = [row_key("data", None, s, 0, effort, seed) for s in SEXES]
    keys += [row_key(BENCHMARK, None, s, 0, effort, seed) for s in SEXES]
    keys += [row_key(METHOD, e, s, r, effort, seed) for r in range(first_run, runs) for e in eps for s in SEXES]
    return keys


def run(groups, path=TABLE, *, runs=100, first_run=0, eps=EPS, effort="quick", seed=SEED, max_seconds=None,
        log=print):
    """Append the missing rows to ``path``; returns how many were added.

    Stops starting new rows once ``max_seconds`` (wall) have passed. Each row is written (and flushed) when done.
    """
    return append_missing(path, plan(runs, eps=eps, effort=effort, seed=seed, first_run=first_run),
                          lambda k: run_row(groups[k["sex"]], k), lambda k, row: (
                              f"{k['method']:>12} eps {k['eps']} {k['sex']:>6} run {k['run']:3d}: "
                              f"{row.get('cpu_s', 0):.1f} CPU-s"),
                          fields=KEY_FIELDS, max_seconds=max_seconds, log=log)


def summary(rows, *, effort="quick", seed=SEED):
    """Per (method, eps, sex): runs stored and mean CPU seconds."""
    out = {}
    for r in rows:
        if r["effort"] == effort and r["seed"] == seed and r["method"] != "data":
            out.setdefault((r["method"], r["eps"], r["sex"]), []).append(r["cpu_s"])
    return {k: {"runs": len(v), "cpu_s": round(float(np.mean(v)), 1)} for k, v in sorted(out.items(), key=str)}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=100, help="runs per (eps, sex) (the paper: 100)")
    p.add_argument("--first-run", type=int, default=0)
    p.add_argument("--eps", type=float, nargs="+", default=list(EPS))
    p.add_argument("--effort", choices=("quick", "full"), default="quick")
    p.add_argument("--seed", type=int, default=SEED)
    p.add_argument("--max-seconds", type=float, default=None)
    p.add_argument("--table", type=Path, default=TABLE)
    p.add_argument("--summary", action="store_true", help="print the runs stored per (eps, sex)")
    a = p.parse_args(argv)
    if not a.summary:
        try:
            groups = atus_groups()
        except (OSError, ValueError) as err:
            print(f"ATUS 2019 not available, nothing run: {err}")
            return 1
        run(groups, a.table, runs=a.runs, first_run=a.first_run, eps=a.eps, effort=a.effort, seed=a.seed,
            max_seconds=a.max_seconds, log=lambda *x: print(*x, flush=True))
    for (m, e, s), v in summary(read_rows(a.table), effort=a.effort, seed=a.seed).items():
        print(f"{m:>12} eps {e} {s:>6}: {v['runs']:3d} runs, {v['cpu_s']} CPU-s per run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
