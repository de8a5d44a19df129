"""Convergence report (issue 33, delivery 3): dplit's vectorised R-hat, bulk and tail ESS against ArviZ's, and the
report's share of a ``fit_latent_class`` call at p = 30 (all 435 two-way margins, 1,740 monitored cells).

    .venv/bin/python benchmarks/bench_diagnostics.py              # about a minute; writes results/bench_diagnostics.json
    .venv/bin/python benchmarks/bench_diagnostics.py --defaults   # also two calls at fit_latent_class's run length

Measured in one process: (1) ArviZ's ``rhat(method="rank")`` + ``ess("bulk")`` + ``ess("tail")`` against
``dplit.diagnostics.diagnostics`` on the same (4 chains, 1,000 draws, 1,740 cells) posterior, with their largest
relative difference; (2) three calls at p = 30 with the issue's run (4 chains, 1,000 draws after 1,000 warm-up),
the report timed inside each (``dplit.sampling.convergence_report``) and its share of the call; "before" is the
first call with ArviZ's timing on the same posterior in place of ours. Wall and CPU time (all threads) are both
given: the sampler runs its chains in threads and the report its blocks of coordinates, so on an idle machine the
two shares agree, and on a busy one the CPU share is the steadier. Each ArviZ generation's figures are kept under
its own key.
"""

import argparse
import itertools
import json
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import arviz as az
import numpy as np

# sampling.convergence_report is wrapped to time the report
from dplit import _arviz, diagnostics, results, sampling
from dplit.latent_class import fit_latent_class, release_margins

sys.path.insert(0, str(Path(__file__).parent))
from _timing import best_of  # noqa: E402

OUT = Path(__file__).parent / "results" / "bench_diagnostics.json"
P, K_TRUE, N = 30, 3, 10_000


def clock(fn):
    """(result, wall seconds, CPU seconds of all threads) of ``fn()``."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


def release_p30(seed=33):
    """All two-way margins of n = 10,000 binary records from a 3-class population, released at eps = 1."""
    rng = np.random.default_rng(seed)
    cls = rng.choice(K_TRUE, size=N, p=[0.5, 0.3, 0.2])
    x = (rng.random((N, P)) < rng.uniform(0.1, 0.9, (K_TRUE, P))[cls]).astype(int)
    return release_margins(x, list(itertools.combinations(range(P), 2)), eps=1.0, rng=rng, secure=False)


def arviz_report(post):
    """The report as dplit computed it before: ArviZ's three diagnostics over every cell."""
    return (az.rhat(post, method="rank"), az.ess(post, method="bulk"), az.ess(post, method="tail"))


def timed_call(rel, n_iter, n_warmup, seed):
    """fit_latent_class at p = 30 with the report (convergence_report) timed inside the call."""
    inner = sampling.convergence_report
    spent = {"wall": 0.0, "cpu": 0.0}

    def report(*args, **kw):
        out, wall, cpu = clock(lambda: inner(*args, **kw))
        spent["wall"] += wall
        spent["cpu"] += cpu
        return out

    sampling.convergence_report = report
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", sampling.ConvergenceWarning)
            res, wall, cpu = clock(lambda: fit_latent_class(rel, rng=seed, n_iter=n_iter, n_warmup=n_warmup,
                                                            progress=False))
    finally:
        sampling.convergence_report = inner
    return res, {"call_wall_s": wall, "call_cpu_s": cpu, "report_wall_s": spent["wall"],
                 "report_cpu_s": spent["cpu"], "report_share_wall": spent["wall"] / wall,
                 "report_share_cpu": spent["cpu"] / cpu}


def share_of_call(rel, n_iter, n_warmup, seed, with_arviz):
    """One call's figures, and (``with_arviz``) the share ArviZ's report took in the same call."""
    res, out = timed_call(rel, n_iter, n_warmup, seed)
    out.update(n_iter=n_iter, n_warmup=n_warmup, n_chains=4, cells=int(res.posterior["margin_probs"].shape[-1]))
    print(f"fit_latent_class p={P}, {n_iter} draws after {n_warmup} warm-up, 4 chains: call {out['call_wall_s']:.1f} s "
          f"wall / {out['call_cpu_s']:.1f} s CPU; report {out['report_wall_s']:.2f} s wall / "
          f"{out['report_cpu_s']:.2f} s CPU: {out['report_share_wall']:.1%} of the wall time, "
          f"{out['report_share_cpu']:.1%} of the CPU time", flush=True)
    if with_arviz:
        post = results.posterior(res, ["log_lik", "margin_probs"])
        _, wall, cpu = clock(lambda: arviz_report(post))
        rest_wall, rest_cpu = out["call_wall_s"] - out["report_wall_s"], out["call_cpu_s"] - out["report_cpu_s"]
        out.update(arviz_report_wall_s=wall, arviz_report_cpu_s=cpu,
                   arviz_share_wall=wall / (rest_wall + wall), arviz_share_cpu=cpu / (rest_cpu + cpu))
        print(f"  before (ArviZ's report in the same call): {wall:.1f} s wall / {cpu:.1f} s CPU: "
              f"{out['arviz_share_wall']:.0%} of the wall time, {out['arviz_share_cpu']:.0%} of the CPU time",
              flush=True)
    return res, out


def summarise(calls):
    """The calls' figures and the median of each share."""
    out = {"calls": calls}
    for key in ("report_share_wall", "report_share_cpu"):
        out[f"median_{key}"] = float(np.median([c[key] for c in calls]))
    print(f"  median share of the report: {out['median_report_share_wall']:.1%} of the wall time, "
          f"{out['median_report_share_cpu']:.1%} of the CPU time", flush=True)
    return out


def arviz_vs_ours(post):
    """Time ArviZ's three diagnostics and ours on the same posterior; their largest relative difference."""
    draws = post["margin_probs"]
    ds = draws.to_dataset()
    (r, b, t), _, ours_cpu = clock(lambda: diagnostics.diagnostics(ds))
    ours_s = best_of(lambda: diagnostics.diagnostics(ds), repeat=3)
    (ar, ab, at), arviz_s, arviz_cpu = clock(lambda: arviz_report(ds))
    at_595 = az.ess(ds, method="tail", prob=(0.05, 0.95)) if _arviz.arviz_generation() == 1 else at

    def rel(a, b):
        a, b = np.asarray(a["margin_probs"].values), np.asarray(b["margin_probs"].values)
        ok = np.isfinite(a) & np.isfinite(b)
        assert np.array_equal(np.isfinite(a), np.isfinite(b))
        return float(np.max(np.abs(a[ok] - b[ok]) / np.abs(b[ok])))

    out = {"shape": list(draws.shape), "arviz_wall_s": arviz_s, "arviz_cpu_s": arviz_cpu, "ours_wall_s": ours_s,
           "ours_cpu_s": ours_cpu, "speedup_wall": arviz_s / ours_s,
           "max_rel_diff": {"rhat": rel(r, ar), "ess_bulk": rel(b, ab), "ess_tail_5_95": rel(t, at_595)}}
    if _arviz.arviz_generation() == 1:
        out["max_rel_diff"]["ess_tail_vs_arviz_default_11_89"] = rel(t, at)
    print(f"(chain, draw, cell) = {tuple(draws.shape)}: ArviZ {arviz_s:.2f} s, dplit {ours_s:.3f} s "
          f"(x{arviz_s / ours_s:.0f}); largest relative difference {out['max_rel_diff']}", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--defaults", action="store_true",
                    help="also time a call at fit_latent_class's default run (5,000 draws after 2,000 warm-up)")
    args = ap.parse_args()
    rel = release_p30()
    fit_latent_class(rel, k=2, n_iter=20, n_warmup=20, n_chains=1, rng=0, progress=False)    # compile
    diagnostics.diagnostics(np.random.default_rng(0).normal(size=(4, 1000, 3)))
    load0 = os.getloadavg()
    out = {"command": "benchmarks/bench_diagnostics.py" + (" --defaults" if args.defaults else ""),
           "arviz": az.__version__, "numpy": np.__version__, "python": platform.python_version(),
           "cpus": os.cpu_count(), "p": P, "release": "all two-way margins of 10,000 records, eps = 1"}
    runs = [share_of_call(rel, 1000, 1000, seed, with_arviz=seed == 1) for seed in (1, 2, 3)]
    out["call_issue_run"] = summarise([r for _, r in runs])
    out["arviz_vs_ours"] = arviz_vs_ours(results.posterior(runs[0][0]))
    if args.defaults:
        out["call_defaults"] = summarise([share_of_call(rel, 5000, 2000, seed, with_arviz=False)[1]
                                          for seed in (1, 2)])
    out["load_average_before_after"] = [round(load0[0], 2), round(os.getloadavg()[0], 2)]
    stored = json.loads(OUT.read_text()) if OUT.exists() else {}
    stored[f"arviz_{_arviz.arviz_generation()}.x"] = out
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(stored, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
