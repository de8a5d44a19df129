"""Latent-class synthesis (notebook 51_latent_class): cost of the marginal probabilities vs p and k, sampler
speed, BayesLCM's documented example (ESS per second next to BayesLCM's recorded 0.113), and, with
``--coverage``, the ACS coverage study of Nixon et al. Table 3 whose small results the notebook reads.

    .venv/bin/python benchmarks/bench_latent_class.py                    # figures (about a minute)
    .venv/bin/python benchmarks/bench_latent_class.py --speed      # BayesLCM's example, 5 seeds: results/latent_class_speed.json
                                                                   # (also the time per iteration and the convergence
                                                                   # report's share of a call, p = 5, 10, 20, 30)
    .venv/bin/python benchmarks/bench_latent_class.py --coverage --reps 100  # writes results/latent_class_coverage.json
    .venv/bin/python benchmarks/bench_latent_class.py --coverage --records 100000 --reps 100
        # the paper's rerun with samples of 100,000 records (Sec. 4.3.2), both populations, paper=True and the
        # defaults: results/latent_class_coverage_n100000.json (resumes a stopped run)
"""

import argparse
import csv
import itertools
import json
import math
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import arviz as az
import numpy as np

from dplit import diagnostics, sampling
from dplit._latent_class_model import margin_probs_kernel as _margin_probs_kernel
from dplit._latent_class_model import margin_probs_reference as _margin_probs_reference
from dplit.datasets import load_acs_counts
from dplit.latent_class import (
    MarginRelease,
    cell_index,
    cell_intervals,
    fit_latent_class,
    ipf_table,
    release_margins,
)
from dplit.sampling import ConvergenceWarning

sys.path.insert(0, str(Path(__file__).parent))
from _timing import best_of  # noqa: E402

HERE = Path(__file__).parent
BAYESLCM_CSV = HERE.parent.parent / "shared" / "benchmarks" / "bayeslcm_example_noisy_margins.csv"
COVERAGE_JSON = HERE / "results" / "latent_class_coverage.json"
SPEED_JSON = HERE / "results" / "latent_class_speed.json"
# The settings compared: the paper's model (6)-(7), the magnitude adjustment alone, and fit_latent_class's defaults.
SETTINGS = {"paper": dict(paper=True), "weight auto, a = 1": dict(weight="auto", a=1.0), "default": {}}
BAYESLCM_MIN_ESS_PER_S = 0.113        # recorded in ../shared/benchmarks/README.md (R not run here)
BAYESLCM_MIN_ESS = 108                # its smallest ESS_bulk over the 40 cells, 4,000 draws after 1,000 warm-up
PAIRS5 = list(itertools.combinations(range(5), 2))
TABLE3_POP = np.array([
    0.002, 0.061, 0.044, 0.894, 0.031, 0.031, 0.174, 0.763, 0.031, 0.031, 0.453, 0.485, 0.027, 0.035, 0.298, 0.640,
    0.011, 0.035, 0.195, 0.759, 0.024, 0.022, 0.461, 0.493, 0.045, 0.001, 0.280, 0.674, 0.098, 0.108, 0.386, 0.408,
    0.086, 0.120, 0.239, 0.555, 0.127, 0.357, 0.198, 0.318])


def _clock(fn):
    """(result, wall seconds, CPU seconds of all threads) of ``fn()``."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


def _params(k, p, rng):
    Psi = np.zeros((k, p, 2))
    Psi[:, :, 0] = rng.uniform(0.05, 0.95, (k, p))
    Psi[:, :, 1] = 1 - Psi[:, :, 0]
    return rng.dirichlet(np.ones(k)), Psi


def marginal_cost():
    """Time for all two-way cell probabilities vs p and k; eq. (8)'s full-table sum as the baseline."""
    print("all two-way cell probabilities (O(k x cells)) vs the full-table sum of eq. (8)")
    print(f"{'p':>4} {'k':>4} {'cells':>6} {'ours (us)':>10} {'eq. (8) (us)':>13}")
    rng = np.random.default_rng(1)
    for p in (5, 10, 16, 30):
        for k in (5, 10, 20):
            pi, Psi = _params(k, p, rng)
            pairs = list(itertools.combinations(range(p), 2))
            idx = cell_index((2,) * p, pairs)
            args = (pi, Psi, idx.cell_var, idx.cell_lev, idx.cell_ord)
            _margin_probs_kernel(*args)
            ours = best_of(lambda a=args: _margin_probs_kernel(*a), repeat=5, number=20) * 1e6
            ref = "(2^p cells)"
            if p <= 16:
                ref = best_of(lambda a=(pi, Psi, (2,) * p, pairs): _margin_probs_reference(*a), repeat=2) * 1e6
                ref = f"{ref:13.0f}"
            print(f"{p:>4} {k:>4} {idx.n_cells:>6} {ours:>10.1f} {ref:>13}")


def _bayeslcm_release():
    rows = list(csv.DictReader(open(BAYESLCM_CSV)))
    n = 10_000
    counts = [round(float(r["noisy_prop"]) * n) for r in rows]
    truth = np.array([float(r["truth_pop"]) for r in rows])
    sample = np.array([float(r["sample_prop"]) for r in rows])
    rel = MarginRelease.from_counts(np.split(np.array(counts), 10), PAIRS5, (2,) * 5, n, 1.0)
    return rel, truth, sample


def per_iteration(ps=(5, 10, 20, 30), n=10_000, k=10, n_iter=1000, n_warmup=500, seed=3):
    """Sampler time per iteration (the run's ``runtime`` attr, without the convergence report) at the defaults, for p
    binary variables with all two-way margins released at eps = 1: it grows with the released cells, 2p(p - 1), not
    with the 2^p cells of the full table."""
    rows = []
    for p in ps:
        rng = np.random.default_rng(seed)
        pi, Psi = _params(3, p, rng)
        z = rng.choice(3, size=n, p=pi)
        x = (rng.random((n, p)) > Psi[z, :, 0]).astype(np.int64)
        rel = release_margins(x, list(itertools.combinations(range(p), 2)), eps=1.0, rng=rng, secure=False)
        fit_latent_class(rel, k=k, n_iter=20, n_warmup=20, n_chains=1, rng=0, progress=False)      # compile
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            res = fit_latent_class(rel, k=k, n_iter=n_iter, n_warmup=n_warmup, n_chains=1, rng=1, progress=False,
                                   n_jobs=1)
        per_it = float(res.posterior.attrs["runtime"]) / (n_iter + n_warmup)
        rows.append(dict(p=p, released_cells=int(rel.flat_counts.size), full_table_cells=2 ** p,
                         ms_per_iteration=1e3 * per_it, us_per_released_cell=1e6 * per_it / rel.flat_counts.size))
        print(f"p = {p:>2}: {rel.flat_counts.size:>5} released cells (full table 2^p = {2 ** p:>13,}): "
              f"{1e3 * per_it:.3f} ms per iteration, {1e6 * per_it / rel.flat_counts.size:.2f} us per released cell",
              flush=True)
    return rows


def _binary_release(p, n, seed):
    """All two-way margins of n binary records from a 3-class population, released at eps = 1."""
    rng = np.random.default_rng(seed)
    pi, Psi = _params(3, p, rng)
    z = rng.choice(3, size=n, p=pi)
    x = (rng.random((n, p)) > Psi[z, :, 0]).astype(np.int64)
    return release_margins(x, list(itertools.combinations(range(p), 2)), eps=1.0, rng=rng, secure=False)


def _timed_call(rel):
    """One ``fit_latent_class(rel)`` call at the defaults with the report timed inside it, and the report timed again
    with the NumPy twins of its rank step: (result, call wall, call CPU, report wall, report CPU, before wall,
    before CPU)."""
    inner = sampling.convergence_report
    spent = {"wall": 0.0, "cpu": 0.0}

    def report(*args, **kw):
        out, wall, cpu = _clock(lambda: inner(*args, **kw))
        spent["wall"] += wall
        spent["cpu"] += cpu
        return out

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit_latent_class(rel, n_iter=200, n_warmup=20, rng=0, progress=False)    # compile, load the kernels
        sampling.convergence_report = report
        try:
            res, wall, cpu = _clock(lambda: fit_latent_class(rel, rng=1, progress=False))
        finally:
            sampling.convergence_report = inner
        kernels = diagnostics._rank_normal, diagnostics._folded_rank_normal
        diagnostics._rank_normal, diagnostics._folded_rank_normal = (diagnostics._rank_normal_numpy,
                                                                     diagnostics._folded_rank_normal_numpy)
        try:
            _, old_wall, old_cpu = _clock(lambda: inner(res, ["log_lik", "margin_probs"], warn=False))
        finally:
            diagnostics._rank_normal, diagnostics._folded_rank_normal = kernels
    return res, wall, cpu, spent["wall"], spent["cpu"], old_wall, old_cpu


def report_share(ps=(5, 10, 20, 30), n=10_000, seed=3):
    """The convergence report's share of one ``fit_latent_class(release)`` call at its defaults (k = 10, 4 chains of
    5,000 draws after 2,000 warm-up), for p binary variables with all two-way margins: the report
    (``dplit.sampling.convergence_report``: R-hat, bulk and tail ESS of every released cell and the log likelihood)
    is timed inside the call, wall and CPU time of all threads. "Before" times the report again on the same
    result with the NumPy twins of its rank step (``diagnostics._rank_normal_numpy``, ``_folded_rank_normal_numpy``:
    the report as it was before its compiled kernels) and puts it in place of the call's own."""
    rows = []
    for p in ps:
        res, wall, cpu, rep_wall, rep_cpu, old_wall, old_cpu = _timed_call(_binary_release(p, n, seed))
        row = dict(p=p, cells=int(res.posterior["margin_probs"].shape[-1]), n_iter=5000, n_warmup=2000, n_chains=4,
                   call_wall_s=wall, call_cpu_s=cpu, report_wall_s=rep_wall, report_cpu_s=rep_cpu,
                   share_wall=rep_wall / wall, share_cpu=rep_cpu / cpu,
                   before_report_wall_s=old_wall, before_report_cpu_s=old_cpu,
                   before_share_wall=old_wall / (wall - rep_wall + old_wall),
                   before_share_cpu=old_cpu / (cpu - rep_cpu + old_cpu))
        rows.append(row)
        print(f"p = {p:>2} ({row['cells']:>4} cells): call {wall:.1f} s wall / {cpu:.1f} s CPU; report "
              f"{rep_wall:.2f} s wall / {rep_cpu:.2f} s CPU = {row['share_wall']:.1%} / "
              f"{row['share_cpu']:.1%} of the call (before: {old_wall:.2f} s / {old_cpu:.2f} s = "
              f"{row['before_share_wall']:.1%} / {row['before_share_cpu']:.1%})", flush=True)
    return {"command": "benchmarks/bench_latent_class.py --speed", "load_average": list(os.getloadavg()),
            "cpus": os.cpu_count(), "rows": rows}


def bayeslcm_example(n_iter=4000, n_warmup=1000, seeds=(1, 2, 3, 4, 5)):
    """BayesLCM's documented example (k = 3) at its run length, one chain per seed: the smallest ESS_bulk over the
    40 cells per CPU-second and per 1,000 iterations, next to BayesLCM's recorded figures, for the paper's settings,
    the defaults, and the defaults without the move S4 (``regenerate=False``: the paper's three blocks). The worst
    seed is what a user can count on."""
    if not BAYESLCM_CSV.exists():
        print(f"BayesLCM example: {BAYESLCM_CSV} not found, skipped")
        return None
    rel, truth, sample = _bayeslcm_release()
    fit_latent_class(rel, k=3, n_iter=400, n_warmup=100, n_chains=1, rng=0, progress=False)   # compile (and the report)
    out = {"command": "benchmarks/bench_latent_class.py --speed", "n_iter": n_iter, "n_warmup": n_warmup,
           "seeds": list(seeds), "bayeslcm_recorded": {"min_ess_per_s": BAYESLCM_MIN_ESS_PER_S,
                                                      "min_ess": BAYESLCM_MIN_ESS,
                                                      "min_ess_per_1000_iter": 1000 * BAYESLCM_MIN_ESS / (n_iter + n_warmup)},
           "settings": {}}
    arms = {"paper": SETTINGS["paper"], "default": SETTINGS["default"],
            "default without S4": dict(SETTINGS["default"], regenerate=False)}     # S4: notebook 50
    for name, kw in arms.items():
        rows = []
        for seed in seeds:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                t0 = time.process_time()
                res = fit_latent_class(rel, k=3, n_iter=n_iter, n_warmup=n_warmup, n_chains=1, rng=seed,
                                       progress=False, n_jobs=1, **kw)
                cpu = time.process_time() - t0
            ess = az.ess(res, var_names=["margin_probs"], method="bulk")["margin_probs"].values
            mean, lo, hi = cell_intervals(res.posterior["margin_probs"].values)
            rows.append(dict(seed=seed, cpu_s=cpu, it_per_s=(n_iter + n_warmup) / cpu, min_ess=float(ess.min()),
                             min_ess_per_1000_iter=1000 * float(ess.min()) / (n_iter + n_warmup),
                             min_ess_per_s=float(ess.min() / cpu), worst_cell=int(np.argmin(ess)),
                             mae_vs_population=float(np.abs(mean - truth).mean()),
                             cover_population=float(np.mean((lo <= truth) & (truth <= hi)))))
        worst = min(rows, key=lambda r: r["min_ess_per_s"])
        out["settings"][name] = {"runs": rows, "worst_min_ess_per_s": worst["min_ess_per_s"],
                                 "worst_ratio_to_bayeslcm": worst["min_ess_per_s"] / BAYESLCM_MIN_ESS_PER_S}
        print(f"BayesLCM example, {name} settings, {len(seeds)} seeds, {n_iter} draws after {n_warmup} warm-up:")
        for r in rows:
            print(f"  seed {r['seed']}: {r['it_per_s']:,.0f} it/CPU-s, min ESS_bulk {r['min_ess']:.1f} "
                  f"({r['min_ess_per_1000_iter']:.1f} per 1,000 it; BayesLCM {1000 * BAYESLCM_MIN_ESS / (n_iter + n_warmup):.1f}), "
                  f"{r['min_ess_per_s']:.1f} per CPU-s = x{r['min_ess_per_s'] / BAYESLCM_MIN_ESS_PER_S:.0f} BayesLCM's "
                  f"recorded {BAYESLCM_MIN_ESS_PER_S}; coverage of the population {r['cover_population']:.2f}")
        print(f"  worst seed: x{out['settings'][name]['worst_ratio_to_bayeslcm']:.0f} BayesLCM's min ESS/s")
    out["per_iteration"] = per_iteration()
    out["report_share"] = report_share()
    SPEED_JSON.write_text(json.dumps(out, indent=1))
    print(f"wrote {SPEED_JSON}")
    return out


def _populations():
    counts, _ = load_acs_counts()
    return {"acs2018_14states": counts / counts.sum(),
            "table3_ipf": ipf_table((2,) * 5, PAIRS5, np.split(TABLE3_POP, 10))}


def _write_atomic(path, obj):
    """Write ``obj`` as JSON through a temporary file, so a run stopped mid-write leaves the previous file whole."""
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(obj, indent=1))
    os.replace(tmp, path)


def _library_source():
    """The commit of the checkout and its uncommitted files under dplit/ (a resumed study may span several)."""
    def git(*args):
        try:
            return subprocess.run(["git", *args], cwd=HERE.parent, capture_output=True, text=True,
                                  check=True).stdout
        except (OSError, subprocess.CalledProcessError):
            return None

    status = git("status", "--porcelain", "--", "dplit")
    commit = git("rev-parse", "HEAD")
    return {"commit": commit and commit.strip(), "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "uncommitted_library_files": None if status is None else [line[3:] for line in status.splitlines()]}


def _coverage_path(records):
    """Where the coverage study of ``records``-record samples is stored: Table 3's scale keeps its historic name."""
    return COVERAGE_JSON if records == 10_000 else HERE / "results" / f"latent_class_coverage_n{records}.json"


def coverage(reps, n=10_000, k=10, n_iter=3000, n_warmup=2000, seed=20261126, populations=None, settings=None,
             path=None):
    """Table 3: coverage and mean length of the 95% intervals of the 40 population two-way probabilities, for each
    of ``settings`` (default: all of SETTINGS), on the same samples and noise, over ``reps`` samples of ``n`` records
    drawn with replacement from each population's cell proportions.

    The file is rewritten after every sample with, per (population, setting), the samples done, the running sums
    and the state of the generator, so a stopped run resumes where it stopped (same command) and gives the numbers
    an uninterrupted run gives; a larger ``reps`` extends a finished study. A study stored with other sizes or
    settings is refused rather than mixed in.
    """
    eps_list = [0.25, 0.5, 1.0, math.inf]
    settings = settings or SETTINGS
    pops = _populations()
    pops = {name: pops[name] for name in (populations or pops)}
    path = path or _coverage_path(n)
    records = "" if n == 10_000 else f" --records {n}"
    header = {"n": n, "k": k, "n_iter": n_iter, "n_warmup": n_warmup, "n_chains": 2,
              "eps": [str(e) for e in eps_list],
              "settings": {name: {key: str(v) for key, v in kw.items()} for name, kw in settings.items()}}
    out = json.loads(path.read_text()) if path.exists() else {}
    if out and any(out.get(key) != val for key, val in header.items()):
        raise SystemExit(f"{path} holds a study with other sizes or settings; move it away to start a new one")
    out.update(command=f"benchmarks/bench_latent_class.py --coverage{records} --reps {reps}", **header)
    out.setdefault("populations", {})
    out.setdefault("runs", []).append({"command": out["command"], **_library_source()})
    for (name, pop), (setting, kw) in itertools.product(pops.items(), settings.items()):
        truth = np.concatenate([pop.sum(axis=tuple(j for j in range(5) if j not in m)).ravel() for m in PAIRS5])
        res = out["populations"].setdefault(name, {"truth": truth.tolist()}).get(setting)
        gen = np.random.default_rng(seed)          # the same samples and noise for every setting
        if res and "rng_spawned" not in res:
            raise SystemExit(f"{path}: {name}, {setting} was stored without the generator state a resume needs; "
                             "move the file away to run the study again")
        if res:         # the chains' generators are spawned from gen: its seed sequence's count is state too
            gen = np.random.Generator(np.random.PCG64(np.random.SeedSequence(
                seed, n_children_spawned=res["rng_spawned"])))
            gen.bit_generator.state = res["rng_state"]
            done, seconds = res["reps"], res["seconds"]
            cover = {e: np.round(np.array(res["coverage"][str(e)]) * done) for e in eps_list}
            length = {e: np.array(res["length"][str(e)]) * done for e in eps_list}
        else:
            done, seconds = 0, 0.0
            cover = {e: np.zeros(truth.size) for e in eps_list}
            length = {e: np.zeros(truth.size) for e in eps_list}
        t0 = time.time()
        for rep in range(done, reps):
            cells = gen.choice(32, size=n, p=pop.ravel())
            x = np.array(np.unravel_index(cells, (2,) * 5)).T
            for e in eps_list:
                rel = release_margins(x, PAIRS5, eps=e, rng=gen, secure=False)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    fit = fit_latent_class(rel, k=k, n_iter=n_iter, n_warmup=n_warmup, n_chains=2,
                                           rng=gen, progress=False, n_jobs=1, **kw)
                _, lo, hi = cell_intervals(fit.posterior["margin_probs"].values)
                cover[e] += (lo <= truth) & (truth <= hi)
                length[e] += hi - lo
            out["populations"][name][setting] = {
                "coverage": {str(e): (cover[e] / (rep + 1)).tolist() for e in eps_list},
                "length": {str(e): (length[e] / (rep + 1)).tolist() for e in eps_list},
                "reps": rep + 1, "seconds": seconds + time.time() - t0, "rng_state": gen.bit_generator.state,
                "rng_spawned": gen.bit_generator.seed_seq.n_children_spawned}
            out["reps"] = min(r[s]["reps"] for r in out["populations"].values() for s in settings if s in r)
            _write_atomic(path, out)
            if (rep + 1) % 10 == 0 or rep == done:
                print(f"{name}, {setting}: rep {rep + 1}/{reps} ({seconds + time.time() - t0:.0f} s)", flush=True)
        got = out["populations"][name][setting]
        print(name, setting, {e: (round(float(np.mean(c)), 3), round(float(np.min(c)), 2))
                              for e, c in got["coverage"].items()}, flush=True)
    _write_atomic(path, out)
    print(f"wrote {path}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--coverage", action="store_true", help="run the coverage study and store its results")
    ap.add_argument("--speed", action="store_true", help="only BayesLCM's example over five seeds, stored")
    ap.add_argument("--report", action="store_true", help="only the convergence report's share of a call (printed)")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--records", type=int, default=10_000,
                    help="records per sample of the coverage study (10,000 as Table 3; other sizes, as the paper's "
                         "rerun at 100,000, run the paper's settings and the defaults only)")
    args = ap.parse_args()
    if args.coverage and args.records != 10_000:
        coverage(args.reps, n=args.records, settings={name: SETTINGS[name] for name in ("paper", "default")})
    elif args.coverage:
        coverage(args.reps)
    elif args.speed:
        bayeslcm_example()
    elif args.report:
        report_share()
    else:
        marginal_cost()
        bayeslcm_example()
