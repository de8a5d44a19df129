"""Why does DPreMCMC_p4's alpha_0 drift on ATUS (Figures S4-S5)? A check by settings, resumable.

Notebook 63 ("Figures S4 and S5 over many runs") finds the median run's alpha_0 = sum(alpha) of DPreMCMC_p4 in the
tens of thousands on the ATUS releases, against about 28 for MCMC_p1 on the confidential data. This script runs
DPreMCMC (:func:`dplit.mcmc.dp_remcmc`, the record update of the paper, ``record_update="ju"``) and DPMCMC
(:func:`dplit.mcmc.dp_mcmc`) on a few releases of the men's records and varies one thing at a time:

* ``b``, the latent records per released part (the study's 5, up to ``n_2``: power ``n_2 / b`` from 504 down to 1);
* ``eps`` (the Laplace scale of the D2 statistic is proportional to 1 / (n_2 eps));
* the prior, p4 (from D1, split release) against p1 (unsplit release, as the study's runner uses it);
* the record update: the paper's (``"ju"``: records from Dirichlet(alpha), the Laplace ratio alone) against the
  exact Metropolis-Hastings update of model (5) itself (``"model5"``, method ``dpremcmc_model5``: the records'
  conditional includes their power n_2 / b), which tells a property of model (5) from one of the paper's sampler;
* the data: ATUS, and Dirichlet records with the MCMC_p1 alpha of the men (same n, d, candidates and Alg. 1),
  with ten times the records, and with the paper's alpha_3 = (2.2, 3.3, 4.4) (a spread-out composition: its Jensen
  gap, below, is about 0.10 against 0.035 at the men's alpha).

A last part, the *engine*, runs the same sampler with no release at all (the Laplace term switched off, prior p1,
n_2 = 2,519 as the men's D2, b records of power n_2 / b, chains started at the men's MCMC_p1 alpha): the two
conditionals alone, records from Dirichlet(alpha) and alpha fitted to them as if they were n_2 records. It stores the
median over chains of alpha_0 at a few iterations, per b, and the mean Jensen gap (below) of the mean log statistic
of b Dirichlet draws at the start, beside the population's.

Every run stores, besides the alpha_0 of each chain, the Jensen gap g(s) = 1 - sum_j exp(s_j) (the distance of a
mean log composition from the boundary of Range(S0), where the MLE's alpha_0 goes to infinity; at a Dirichlet(alpha),
g = 1 - sum_j exp(psi(alpha_j) - psi(alpha_0)) is about (d - 1) / (2 alpha_0) for large alpha_0) of the released D2
statistic and of the run's median alpha, beside the Laplace scale of the release.

The ATUS releases are those of the stored S4/S5 runs (``benchmarks/atus_s4s5.py``: run ``r`` of the men at ``eps``
has the release seeded from that row's key, so releases 0-3 at eps = 0.5 and 1 are those of runs 0-3 of
``results/atus_s4s5.jsonl``). Each run's chains are seeded from the run's key (setting and release). Chains at the
study's ``quick`` effort: 3 chains of 2,000 iterations after 500 of warm-up, thinned by 10, 20 slice cycles.

    OMP_NUM_THREADS=1 NUMBA_NUM_THREADS=1 nice -n 19 .venv/bin/python benchmarks/atus_drift.py
    .venv/bin/python benchmarks/atus_drift.py --summary          # the table from the stored runs

Writes ``results/atus_drift.json`` after every run (a rerun skips the runs stored); about 7 CPU-minutes in all.
"""

import argparse
import json
import platform
import subprocess
import sys
import time
import warnings
from datetime import date
from pathlib import Path

import numpy as np

from dplit._files import atomic_write

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from atus_s4s5 import METHOD, SEED, row_key  # noqa: E402
from atus_s4s5 import TABLE as S45_TABLE  # noqa: E402
from atus_table2 import atus_groups, read_rows  # noqa: E402

OUT = HERE / "results" / "atus_drift.json"
COMMAND = "OMP_NUM_THREADS=1 NUMBA_NUM_THREADS=1 nice -n 19 .venv/bin/python benchmarks/atus_drift.py"
SEX = "male"
RELEASES = 4                     # releases per setting
EFFORT = dict(n_iter=2000, n_warmup=500, n_chains=3)      # the study's quick effort (thin 10, n_slice 20)
ALPHA3 = np.array([2.2, 3.3, 4.4])      # Guo et al.'s alpha_3^true (Sec. 5.1)
ENGINE_B = (5, 20, 50, 200)
ENGINE_ITER, ENGINE_CHAINS, ENGINE_AT = 1000, 3, (1, 10, 100, 1000)
GAP_GROUPS = 20_000              # groups of b Dirichlet draws behind the mean Jensen gap of b records
EXCURSION = 10.0                 # a chain is off when its median alpha_0 exceeds 10 times the reference


def _s(data, eps, method, prior, b, group):
    return {"data": data, "eps": eps, "method": method, "prior": prior, "b": b, "group": group}


#: the settings: ``data`` is "atus" or "sim" (Dirichlet at the men's MCMC_p1 alpha), "sim_n10" (ten times the
#: records), "sim_alpha3" (the paper's alpha_3 = (2.2, 3.3, 4.4)); ``b`` None for DPMCMC (b = n_2); ``group`` names the comparison
SETTINGS = (
    [_s("atus", 0.5, "dpremcmc", "p4", b, "b") for b in (5, 20, 50, 200, 1000)]
    + [_s("atus", 0.5, "dpmcmc", "p4", None, "b")]
    + [_s("atus", e, m, "p4", b, "eps") for e in (1.0, 2.0, 8.0) for m, b in (("dpremcmc", 5), ("dpmcmc", None))]
    + [_s("atus", 0.5, m, "p1", b, "prior") for m, b in (("dpremcmc", 5), ("dpmcmc", None))]
    + [_s("sim", 0.5, m, "p4", b, "data") for m, b in (("dpremcmc", 5), ("dpmcmc", None))]
    + [_s("sim_n10", 0.5, "dpremcmc", "p4", 5, "data")]
    + [_s("sim_alpha3", 0.5, m, "p4", b, "data") for m, b in (("dpremcmc", 5), ("dpmcmc", None))]
    + [_s(d, 0.5, "dpremcmc_model5", "p4", 5, "update") for d in ("atus", "sim")]
)


def run_key(setting, release):
    """The canonical key (a string) of one run: the setting and the release index."""
    return json.dumps({**setting, "release": int(release)}, sort_keys=True, separators=(",", ":"))


def benchmark_alpha():
    """The men's MCMC_p1 posterior mean of alpha, from the stored S4/S5 table (the simulations' alpha)."""
    rows = [r for r in read_rows(S45_TABLE) if r["method"] == "mcmc_p1" and r["sex"] == SEX]
    if not rows:
        raise ValueError(f"no MCMC_p1 row for {SEX} in {S45_TABLE}: run benchmarks/atus_s4s5.py first")
    return np.asarray(rows[0]["alpha_mean"], float), float(rows[0]["alpha0_q"][1])


def records(data, X_atus, release):
    """The records of a run: the men's ATUS compositions, or simulated Dirichlet records; and alpha's reference."""
    from dplit.dirichlet import dirichlet_draws
    from dplit.study import derive_seed

    alpha, alpha0_bench = benchmark_alpha()
    if data == "atus":
        return X_atus, alpha0_bench
    n = len(X_atus) * (10 if data == "sim_n10" else 1)
    alpha = ALPHA3 if data == "sim_alpha3" else alpha
    g = np.random.default_rng(derive_seed({"data": data, "release": int(release), "seed": SEED}))
    return dirichlet_draws(alpha, n, rng=g), float(alpha.sum())


def make_release(setting, X, release):
    """The split and unsplit releases (:func:`dplit.study.make_releases`); for ATUS those of the S4/S5 runs."""
    from dplit.study import derive_seed, make_releases

    if setting["data"] == "atus":
        seed = derive_seed(row_key(METHOD, setting["eps"], SEX, release, "quick", SEED))
    else:
        seed = derive_seed({"data": setting["data"], "eps": setting["eps"], "release": int(release), "seed": SEED})
    return make_releases(X, setting["eps"], rng=np.random.default_rng(seed))


def jensen_gap(mu):
    """1 - sum_j exp(mu_j): how far a mean log composition is from the boundary of Range(S0)."""
    return float(1.0 - np.exp(np.asarray(mu, float)).sum())


def run_one(setting, release, X_atus):
    """One run of one setting on one release: the stored row."""
    from dplit.dirichlet import logx_mean
    from dplit.mcmc import dp_mcmc, dp_remcmc
    from dplit.study import derive_seed

    X, alpha0_ref = records(setting["data"], X_atus, release)
    rels = make_release(setting, X, release)
    rel = rels["unsplit"] if setting["prior"] == "p1" else rels["split"]     # as dplit.study.run_method
    s_L, n_part, scale = rel.part("D2")
    rng = np.random.default_rng(derive_seed(run_key(setting, release)))
    c0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # convergence is measured (mpsrf), not enforced
        if setting["method"] == "dpmcmc":
            res = dp_mcmc(rel, prior=setting["prior"], rng=rng, progress=False, n_jobs=1, **EFFORT)
        else:
            res = dp_remcmc(rel, prior=setting["prior"], b=setting["b"], rng=rng, progress=False, n_jobs=1,
                            record_update="model5" if setting["method"] == "dpremcmc_model5" else "ju", **EFFORT)
    cpu = time.process_time() - c0
    A = res.posterior["alpha"].values                     # (chain, draw, d)
    a0 = A.sum(-1)
    med = np.median(A.reshape(-1, A.shape[-1]), axis=0)
    return {"key": run_key(setting, release), **setting, "release": int(release), "n": int(len(X)),
            "n_part": int(n_part), "a": float(rel.a), "scale": float(scale),
            "power": float(n_part / (n_part if setting["b"] is None else min(setting["b"], n_part))),
            "gap_release": round(jensen_gap(s_L), 6), "gap_alpha": round(jensen_gap(logx_mean(med)), 8),
            "alpha0_ref": round(alpha0_ref, 4),
            "alpha0_chains": [round(float(np.median(c)), 3) for c in a0],
            "alpha0_median": round(float(np.median(a0)), 3),
            "alpha_median": [round(float(v), 4) for v in med],
            "mpsrf": round(float(res.posterior.attrs.get("mpsrf", np.nan)), 4), "cpu_s": round(cpu, 2)}


def run_engine(b, n_part=2519):
    """The record and alpha updates of DPreMCMC with no release (Laplace term off): alpha_0 along the chains.

    The chains start at the men's MCMC_p1 alpha (``mode_theta`` and ``start_statistic`` are replaced for that: with no
    release there is no statistic to start from); the init's own jitter (0.3 on log alpha) and records drawn from
    Dirichlet(alpha) follow. Prior p1; no warm-up (the slice map stays the start's).
    """
    from unittest import mock

    import dplit.mcmc as M
    from dplit._release_model import kernel_form_of, resolve_prior, spec_from_blocks
    from dplit.sampling import run_chains
    from dplit.study import derive_seed

    alpha, _ = benchmark_alpha()
    prior, _ = resolve_prior("p1", None, alpha.size, np.random.default_rng(0))
    s0 = np.log(alpha / alpha.sum())                  # never read: the Laplace term is off (scale infinite)
    spec = spec_from_blocks([(s0, n_part, b, np.inf)], 1e-3, kernel_form_of(prior, alpha.size), 20)
    seed = derive_seed({"engine": int(b), "n_part": int(n_part), "seed": SEED})
    c0 = time.process_time()
    with mock.patch.object(M, "mode_theta", lambda spec, s: np.log(alpha)), \
            mock.patch.object(M, "start_statistic", lambda spec, rng: None):
        draws = run_chains(M._sampler(spec), n_iter=ENGINE_ITER, n_warmup=0, n_chains=ENGINE_CHAINS, thin=1,
                           rng=seed)[0]
    a0 = draws["alpha"].sum(-1)                       # (chain, iteration)
    # why the fit moves up: b draws lie closer to the edge of Range(S0) than the population (g(s_b) < g(E log x))
    from dplit.dirichlet import dirichlet_draws, logx_mean

    logs = np.log(dirichlet_draws(alpha, GAP_GROUPS * b, rng=seed)).reshape(GAP_GROUPS, b, alpha.size)
    gap_b = 1.0 - np.exp(logs.mean(axis=1)).sum(axis=1)
    return {"key": f"engine b={b}", "b": int(b), "n_part": int(n_part), "power": n_part / b,
            "gap_population": round(jensen_gap(logx_mean(alpha)), 6), "gap_b_mean": round(float(gap_b.mean()), 6),
            "alpha0_start": round(float(alpha.sum()), 3),
            "alpha0_at": {str(t): round(float(np.median(a0[:, t - 1])), 3) for t in ENGINE_AT},
            "alpha0_chains_last": [round(float(v), 3) for v in a0[:, -1]],
            "cpu_s": round(time.process_time() - c0, 2)}


def summary(runs):
    """Per setting: median over releases of the run's median alpha_0, chains off, gaps and scale (a list)."""
    out = []
    for s in SETTINGS:
        rows = [runs[k] for k in (run_key(s, r) for r in range(RELEASES)) if k in runs]
        if not rows:
            continue
        chains = np.concatenate([r["alpha0_chains"] for r in rows])
        out.append({**s, "releases": len(rows), "n": rows[0]["n"], "power": rows[0]["power"],
                    "alpha0_median": float(np.median([r["alpha0_median"] for r in rows])),
                    "alpha0_runs": [r["alpha0_median"] for r in rows],
                    "alpha0_ref": rows[0]["alpha0_ref"],
                    "chains_off": int(np.sum(chains > EXCURSION * rows[0]["alpha0_ref"])), "chains": int(len(chains)),
                    "scale_median": float(np.median([r["scale"] for r in rows])),
                    "gap_release_median": float(np.median([r["gap_release"] for r in rows])),
                    "gap_alpha_median": float(np.median([r["gap_alpha"] for r in rows])),
                    "cpu_s": float(np.sum([r["cpu_s"] for r in rows]))})
    return out


def _commit():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def write(path, runs, engine):
    keep = {run_key(s, r) for s in SETTINGS for r in range(RELEASES)}
    runs = {k: v for k, v in runs.items() if k in keep}
    doc = {"command": COMMAND, "date": date.today().isoformat(), "commit": _commit(),
           "machine": f"{platform.machine()}, Python {platform.python_version()}", "sex": SEX,
           "effort": {**EFFORT, "thin": 10, "n_slice": 20}, "excursion": EXCURSION,
           "summary": summary(runs), "engine": [engine[b] for b in ENGINE_B if b in engine],
           "runs": [runs[k] for k in sorted(runs)]}
    atomic_write(path, json.dumps(doc, indent=1) + "\n", overwrite=True)


def load(path):
    """The stored runs by key, and the engine rows by b ({} when there is no file)."""
    path = Path(path)
    if not path.exists():
        return {}, {}
    doc = json.loads(path.read_text())
    return {r["key"]: r for r in doc["runs"]}, {r["b"]: r for r in doc.get("engine", [])}


def print_table(rows):
    print(f"{'group':>6} {'data':>10} {'eps':>4} {'method':>9} {'prior':>5} {'b':>5} {'n/b':>6} {'scale':>7} "
          f"{'g(s_L)':>7} {'alpha0 (median of runs)':>24} {'off':>6}")
    for r in rows:
        print(f"{r['group']:>6} {r['data']:>10} {r['eps']:4g} {r['method']:>9} {r['prior']:>5} "
              f"{str(r['b'] or 'n_2'):>5} {r['power']:6.0f} {r['scale_median']:7.4f} {r['gap_release_median']:7.4f} "
              f"{r['alpha0_median']:>24,.1f} {r['chains_off']:>2}/{r['chains']:<3}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--summary", action="store_true", help="print the table of the stored runs")
    a = p.parse_args(argv)
    runs, engine = load(a.out)
    if not a.summary:
        try:
            X_atus = atus_groups()[SEX]
        except (OSError, ValueError) as err:
            print(f"ATUS 2019 not available, nothing run: {err}")
            return 1
        for s in SETTINGS:
            for r in range(RELEASES):
                k = run_key(s, r)
                if k in runs:
                    continue
                runs[k] = run_one(s, r, X_atus)
                write(a.out, runs, engine)
                print(f"{k}: alpha0 {runs[k]['alpha0_chains']} ({runs[k]['cpu_s']:.1f} CPU-s)", flush=True)
        for b in ENGINE_B:
            if b not in engine:
                engine[b] = run_engine(b)
                write(a.out, runs, engine)
        write(a.out, runs, engine)
    print_table(summary(runs))
    print(f"no release (the engine): median over {ENGINE_CHAINS} chains of alpha_0 at iterations {ENGINE_AT}")
    for b in ENGINE_B:
        if b in engine:
            print(f"  b = {b:4d} (power {engine[b]['power']:5.0f}): {list(engine[b]['alpha0_at'].values())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
