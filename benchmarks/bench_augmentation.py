"""Benchmark of dplit.augmentation (notebook 41): the three ways to write dapper's modules, against dapper (R).

Run from the repository root:  NUMBA_NUM_THREADS=1 .venv/bin/python benchmarks/bench_augmentation.py
(writes benchmarks/results/augmentation.json; about four minutes on the development machine).

The modules of Examples 1 and 3 are examples/dapper_examples.py (notebook 82), the ones the notebooks and tests run.
Rows, each model with dapper_sample's default engine="auto" (the engine that ran is printed) unless stated:
1. dapper's Example 1 (randomized response, n = 400, released table 104/120/74/102):
   - dapper's own modules in plain Python (a 400 x 2 term per record), auto and engine="python";
   - "compact" modules in Python (one number per record);
   - vectorised modules (batch st_f, NumPy latent_f and post_f) and dapper's modules through the
     one-line batch adapter;
   - numba modules;
2. dapper's Example 3 (clamped regression statistics, Laplace, n = 50, eps = 10): the same rows;
3. the compositional release of ../shared/benchmarks/dapper_compositional_release.csv (n = 1000, d = 3,
   a = 1e-3, eps = 1) with dapper's own post_f (5 random-walk steps on log alpha, sd 0.02): Python,
   vectorised and numba modules, and dplit.mcmc.dp_mcmc (the specialised kernel).
dapper's figures are not re-run here (R is not installed on this machine): they are the ones recorded in
../shared/benchmarks/README.md (dapper 1.1.0, one chain of 20,000 iterations, half warm-up): Example 1
287 it/s and 1.6-3.3 min ESS_bulk/s; compositional 41.6-48.8 it/s and 0.01-0.12 ESS_bulk/s.

Every engine runs the same Markov chain (tests/test_dapper_engines.py), so a model's ESS per iteration is one
number: min ESS_bulk over the parameters of one chain of 20,000 iterations with half warm-up (dapper's
protocol), divided by 20,000, averaged over seeds with the numba modules (Example 1: the 20 seeds stored in
benchmarks/results/dapper_ess_per_iteration.json; Examples 3 and the compositional model: 5 seeds run here).
A row's min ESS_bulk/s is its iterations/s (a timed chain, compilation excluded) times that number: one short
Python-speed chain has too few effective draws for its own ESS to mean anything. Seconds are CPU seconds of
this process (one chain, one thread): the machine is shared (load up to 10 on 2 cores), and wall seconds would
measure the other users; the wall-clock rate is stored too. dapper's figures are per wall second on a quiet
machine (its re-measure per CPU-second, 300 it/s and 2.4-4.9 ESS_bulk/s, agrees).
"""

import csv
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path

import arviz as az
import numpy as np
from numba import njit
from scipy.special import gammaln as special_gammaln

from dplit.augmentation import EngineNotice, PrivacyModel, dapper_sample
from dplit.mcmc import dp_mcmc
from dplit.release import Release
from dplit.sampling import ConvergenceWarning

# dapper's example models live in examples/ (exported by notebook 82), outside the library
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from dapper_examples import (  # noqa: F401
    SDP_EX1,
    ex1_latent_nb,
    ex1_post_nb,
    ex1_priv_nb,
    ex1_st_nb,
    example1_model,
    example3_data,
    example3_model,
    example3_release,
    table_modules,
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DAPPER_CSV = os.path.join(ROOT, "..", "shared", "benchmarks", "dapper_compositional_release.csv")
warnings.simplefilter("ignore", ConvergenceWarning)
warnings.simplefilter("ignore", EngineNotice)
DAPPER_IT_S = 287.0                       # Example 1, recorded (../shared/benchmarks/README.md)
DAPPER_ESS_S = (1.6, 3.3)
DAPPER_COMP_IT_S = (41.6, 48.8)           # the compositional release, recorded
DAPPER_COMP_ESS_S = (0.01, 0.12)


def speed(model, sdp, init, n_iter, engine="auto"):
    """(iterations per CPU-second, iterations per wall second, engine that ran) of one timed chain; a short
    run first compiles and probes the modules. CPU time of this process (one chain, NUMBA_NUM_THREADS=1):
    on a shared machine the wall time measures the other users' load."""
    init = np.asarray(init, float)
    dapper_sample(model, sdp, init, n_iter=20, n_warmup=5, n_chains=1, rng=0, progress=False, engine=engine)
    cpu = time.process_time()
    res = dapper_sample(model, sdp, init, n_iter=n_iter, n_warmup=0, n_chains=1, rng=1, progress=False,
                        engine=engine, n_jobs=1)
    cpu = time.process_time() - cpu
    return n_iter / cpu, n_iter / res.posterior.attrs["runtime"], res.posterior.attrs["engine"]


def ess_per_iteration(model, sdp, init, seeds=5, n_half=10_000):
    """Mean over seeds of min ESS_bulk (kept half) / iterations run, dapper's protocol (half warm-up)."""
    out = []
    for seed in range(1, seeds + 1):
        res = dapper_sample(model, sdp, np.asarray(init, float), n_iter=n_half, n_warmup=n_half, n_chains=1,
                            rng=seed, progress=False)
        out.append(min(float(az.ess(res.posterior[v].values)) for v in model.varnames) / (2 * n_half))
    return float(np.mean(out)), float(np.std(out, ddof=1) / np.sqrt(seeds))


# ---- Examples 1 and 3: dapper's modules, from their one home (notebook 82) ---------------------------------------
_M1 = table_modules()
SDP1 = SDP_EX1
# the names benchmarks/dapper_ess_per_iteration.py reads
ex1_latent, ex1_post, ex1_st, ex1_priv = _M1["latent"], _M1["post"], _M1["st_dapper"], _M1["priv_dapper"]
ex1_st_c, ex1_priv_c = _M1["st_compact"], _M1["priv_compact"]


def ex3_release(seed=1):
    """Example 3's release from the confidential records drawn with ``seed`` (records first, then the noise)."""
    rng = np.random.default_rng(seed)
    return example3_release(example3_data(rng), rng)


# ---- the compositional release (dapper's benchmark inputs) ------------------------------------------
ND, DD, A_D, EPS_D = 1000, 3, 1e-3, 1.0
LOG_A = math.log(A_D)
B_D = -DD * LOG_A / (ND * EPS_D)


def dir_latent_py(theta, rng):
    x = np.maximum(rng.standard_gamma(theta, size=(ND, DD)), 1e-300)
    return x / x.sum(axis=1, keepdims=True)


def dir_target_py(lal, s0):
    al = np.exp(lal)
    return float(np.sum(-special_gammaln(al) * ND + (al - 1.0) * ND * s0 + lal - 0.1 * al)
                 + special_gammaln(al.sum()) * ND)


def dir_post_py(dmat, theta, rng):          # dapper's benchmark: 5 random-walk steps, sd 0.02
    s0 = np.log(dmat).mean(axis=0)
    lal = np.log(theta)
    cur = dir_target_py(lal, s0)
    for _ in range(5):
        prop = lal + 0.02 * rng.standard_normal(DD)
        new = dir_target_py(prop, s0)
        if new - cur >= 0.0 or rng.random() < math.exp(new - cur):
            lal, cur = prop, new
    return np.exp(lal)


def dir_st_py(xi, sdp, i):
    return np.maximum(np.log(xi), LOG_A) / ND


def dir_st_v(X, sdp, idx):
    return np.maximum(np.log(X), LOG_A) / ND


def dir_priv_py(sdp, sx):
    return -np.abs(sdp - sx).sum() / B_D


@njit
def dir_latent(theta, rng):
    out = np.empty((ND, DD))
    for i in range(ND):
        tot = 0.0
        for j in range(DD):
            out[i, j] = max(rng.standard_gamma(theta[j]), 1e-300)
            tot += out[i, j]
        for j in range(DD):
            out[i, j] /= tot
    return out


@njit
def dir_target(lal, s0):
    tot, out = 0.0, 0.0
    for j in range(DD):
        al = math.exp(lal[j])
        tot += al
        out += -math.lgamma(al) * ND + (al - 1.0) * ND * s0[j] + lal[j] - 0.1 * al
    return out + math.lgamma(tot) * ND


@njit
def dir_post(dmat, theta, rng):             # dapper's benchmark: 5 random-walk steps, sd 0.02
    s0 = np.zeros(DD)
    for i in range(ND):
        for j in range(DD):
            s0[j] += math.log(dmat[i, j]) / ND
    lal = np.log(theta)
    cur = dir_target(lal, s0)
    prop = np.empty(DD)
    for _ in range(5):
        for j in range(DD):
            prop[j] = lal[j] + 0.02 * rng.standard_normal()
        new = dir_target(prop, s0)
        if new - cur >= 0.0 or rng.random() < math.exp(new - cur):
            lal[:] = prop
            cur = new
    return np.exp(lal)


@njit
def dir_st(xi, sdp, i):
    out = np.empty(DD)
    for j in range(DD):
        out[j] = max(math.log(xi[j]), LOG_A) / ND
    return out


@njit
def dir_priv(sdp, sx):
    s = 0.0
    for j in range(DD):
        s -= abs(sdp[j] - sx[j])
    return s / B_D


def fmt(v):
    """A ratio or a range of ratios, for the table."""
    return "-".join(f"{x:,.1f}" for x in v) if isinstance(v, list) else f"{v:,.1f}"


def ratio(x, ref):
    """x / ref, or the range x / ref[1] - x / ref[0] for a recorded range."""
    if isinstance(ref, tuple):
        return [round(x / ref[1], 2), round(x / ref[0], 2)]
    return round(x / ref, 2)


def main():
    t_start = time.time()
    print(__doc__.splitlines()[0])
    rows = []

    def row(model_name, modules, model, sdp, init, n_iter, ess_it, engine="auto", note=""):
        its, its_wall, ran = speed(model, sdp, init, n_iter, engine)
        rows.append({"model": model_name, "modules": modules, "engine_asked": engine, "engine": ran,
                     "it_per_s": round(its, 1), "it_per_wall_s": round(its_wall, 1),
                     "min_ess_bulk_per_s": round(its * ess_it, 3), "note": note})
        print(f"  {model_name:<14}{modules:<46}{ran:<8}{its:>10.0f} it/s {its * ess_it:>10.2f} ESS/s", flush=True)

    stored = json.load(open(os.path.join(ROOT, "benchmarks", "results", "dapper_ess_per_iteration.json")))
    ess1 = stored["dapper_protocol_numba_engine"]["ess_per_iteration_mean"]
    init1 = [0.25] * 4
    print(f"Example 1: ESS per iteration {ess1} (stored, 20 seeds)")
    row("Example 1", "dapper's modules, Python", example1_model("dapper"), SDP1, init1, 3000, ess1)
    row("Example 1", "dapper's modules, Python, engine='python'", example1_model("dapper"), SDP1, init1, 600, ess1,
        engine="python")
    row("Example 1", "compact modules, Python", example1_model("compact"), SDP1, init1, 3000, ess1)
    row("Example 1", "dapper's modules through the batch adapter", example1_model("adapter"), SDP1, init1, 1000,
        ess1)
    row("Example 1", "vectorised modules (batch st_f)", example1_model("batch"), SDP1, init1, 20_000, ess1)
    row("Example 1", "numba modules", example1_model("numba"), SDP1, init1, 200_000, ess1)

    sdp3 = ex3_release()
    n3 = example3_model("numba")
    ess3, se3 = ess_per_iteration(n3, sdp3, np.zeros(3))
    print(f"Example 3: ESS per iteration {ess3:.5f} (s.e. {se3:.5f}, 5 seeds)")
    row("Example 3", "Python modules", example3_model("dapper"), sdp3, np.zeros(3), 5000, ess3)
    row("Example 3", "Python modules, engine='python'", example3_model("dapper"), sdp3, np.zeros(3), 2000, ess3,
        engine="python")
    row("Example 3", "Python modules through the batch adapter", example3_model("adapter"), sdp3, np.zeros(3), 5000,
        ess3)
    row("Example 3", "vectorised modules (batch st_f)", example3_model("batch"), sdp3, np.zeros(3), 5000, ess3)
    row("Example 3", "numba modules", n3, sdp3, np.zeros(3), 200_000, ess3)

    with open(DAPPER_CSV) as fh:
        sdp_d = np.array([float(r["sdp"]) for r in csv.DictReader(fh)])
    initd = [2.0, 3.0, 4.0]
    md = PrivacyModel(dir_latent, dir_post, dir_priv, dir_st, 3)
    essd, sed = ess_per_iteration(md, sdp_d, initd)
    print(f"compositional: ESS per iteration {essd:.5f} (s.e. {sed:.5f}, 5 seeds)")
    row("compositional", "Python modules (dapper's post_f)",
        PrivacyModel(dir_latent_py, dir_post_py, dir_priv_py, dir_st_py, 3), sdp_d, initd, 1000, essd)
    row("compositional", "vectorised modules (batch st_f)",
        PrivacyModel(dir_latent_py, dir_post_py, dir_priv_py, dir_st_v, 3, batch=True), sdp_d, initd, 2000, essd)
    row("compositional", "numba modules (dapper's post_f)", md, sdp_d, initd, 30_000, essd)
    rel = Release.from_statistic(sdp_d, ND, A_D, EPS_D)
    dp_mcmc(rel, n_iter=200, n_warmup=100, n_chains=1, rng=0, progress=False)
    cpu = time.process_time()
    res = dp_mcmc(rel, n_iter=20_000, n_warmup=2_000, n_chains=1, thin=10, rng=1, progress=False, n_jobs=1)
    rt = time.process_time() - cpu
    ess = min(float(az.ess(res.posterior["alpha"].values[..., j])) for j in range(3))
    rows.append({"model": "compositional", "modules": "dp_mcmc (specialised kernel)", "engine_asked": "",
                 "engine": "dp_mcmc", "it_per_s": round(22_000 / rt, 1),
                 "it_per_wall_s": round(22_000 / res.posterior.attrs["runtime"], 1), "min_ess_bulk_per_s": round(ess / rt, 3),
                 "note": "its own chain (slice sampler): ESS measured on this run, 22,000 iterations, thin 10"})

    refs = {"Example 1": (DAPPER_IT_S, DAPPER_ESS_S), "compositional": (DAPPER_COMP_IT_S, DAPPER_COMP_ESS_S)}
    print()
    print("| model | modules | engine | it/s | x dapper it/s | min ESS_bulk/s | x dapper ESS/s |")
    print("|---|---|---|---|---|---|---|")
    print(f"| Example 1 | dapper 1.1.0 in R (recorded, not re-run) | R | {DAPPER_IT_S:.0f} | 1 | "
          f"{DAPPER_ESS_S[0]}-{DAPPER_ESS_S[1]} | 1 |")
    print(f"| compositional | dapper 1.1.0 in R (recorded, not re-run) | R | {DAPPER_COMP_IT_S[0]}-{DAPPER_COMP_IT_S[1]}"
          f" | 1 | {DAPPER_COMP_ESS_S[0]}-{DAPPER_COMP_ESS_S[1]} | 1 |")
    for r in rows:
        ref = refs.get(r["model"])
        if ref:
            r["x_dapper_it_per_s"] = ratio(r["it_per_s"], ref[0])
            r["x_dapper_ess_per_s"] = ratio(r["min_ess_bulk_per_s"], ref[1])
        xi = fmt(r["x_dapper_it_per_s"]) if ref else "(not recorded)"
        xe = fmt(r["x_dapper_ess_per_s"]) if ref else "(not recorded)"
        print(f"| {r['model']} | {r['modules']} | {r['engine']} | {r['it_per_s']:,.0f} | {xi} | "
              f"{r['min_ess_bulk_per_s']:,.2f} | {xe} |")
    ex1 = {r["modules"]: r for r in rows if r["model"] == "Example 1"}
    targets = {
        "dapper-style Python >= dapper's ESS/s (its upper figure)":
            ex1["dapper's modules, Python"]["min_ess_bulk_per_s"] >= DAPPER_ESS_S[1],
        "vectorised >= 20 x dapper's ESS/s (its upper figure)":
            ex1["vectorised modules (batch st_f)"]["min_ess_bulk_per_s"] >= 20 * DAPPER_ESS_S[1],
        "numba >= 300 x dapper's ESS/s (its upper figure)":
            ex1["numba modules"]["min_ess_bulk_per_s"] >= 300 * DAPPER_ESS_S[1]}
    for k, v in targets.items():
        print(f"target {k}: {'met' if v else 'NOT met'}")
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True).stdout.strip()
    except OSError:
        commit = ""
    out = {"command": "NUMBA_NUM_THREADS=1 .venv/bin/python benchmarks/bench_augmentation.py",
           "date": datetime.date.today().isoformat(), "dplit_commit": commit, "python": platform.python_version(),
           "numpy": np.__version__, "machine": "2 shared cores; figures move 15-25% between runs", "load_average_at_start": os.getloadavg()[0],
           "seconds": "CPU seconds of this process (time.process_time), one chain, NUMBA_NUM_THREADS=1",
           "dapper": {"source": "../shared/benchmarks/README.md (recorded; R not installed here, not re-run)",
                      "example_1": {"it_per_s": DAPPER_IT_S, "min_ess_bulk_per_s": list(DAPPER_ESS_S)},
                      "compositional": {"it_per_s": list(DAPPER_COMP_IT_S),
                                        "min_ess_bulk_per_s": list(DAPPER_COMP_ESS_S)}},
           "ess_per_iteration": {"Example 1": {"value": ess1, "source": "dapper_ess_per_iteration.json, 20 seeds"},
                                 "Example 3": {"value": round(ess3, 6), "se": round(se3, 6), "seeds": 5},
                                 "compositional": {"value": round(essd, 6), "se": round(sed, 6), "seeds": 5}},
           "ess_rule": "min ESS_bulk/s = it/s x ESS per iteration (every engine runs the same chain)",
           "rows": rows, "targets_example_1": targets, "runtime_s": round(time.time() - t_start, 1)}
    path = os.path.join(ROOT, "benchmarks", "results", "augmentation.json")
    with open(path, "w") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")
    print(f"wrote {os.path.relpath(path, ROOT)} ({out['runtime_s']} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
