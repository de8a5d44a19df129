"""Power and false-alarm rate of the exact-answer and coverage checks (issue 32, items 3-4).

Repeats, over independent seeds, each check of ``tests/test_exact_answers.py`` (a sampler's posterior summaries
against exact answers within Monte Carlo error, and the same draws against a planted error's exact answer) and of
``tests/test_coverage_power.py`` (pooled one-sided binomial tests of coverage and size, with an anti-conservative
control on the same replicates), at the sizes the tests run. For each check it stores the false-alarm rate of the
genuine check, the power against each planted error, and, for coverage and size, the rate pooled over all seeds'
indicators (an estimate of the true coverage or size at that size of data). The tests assert one fixed seed each;
the seeds here start at ``--first-seed`` (default 10,000), away from the tests' small ones.

Run from the repository root (about 10 minutes on the 2-core reference machine, shared; the DPMCMC cases run
their two chains in two threads):

    nice -n 10 .venv/bin/python benchmarks/power_exact_coverage.py [--seeds 20] [--only dp_mcmc,dp_boots_coverage]

Results go to ``benchmarks/results/power_exact_coverage.json`` (``--out``), one entry per (check, arm), merged into
the file so that checks can be run separately (``--only``); each entry keeps its own command and size.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np
from scipy import stats

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))

import test_coverage_power as C  # noqa: E402
import test_exact_answers as E  # noqa: E402

OUT = os.path.join(ROOT, "benchmarks", "results", "power_exact_coverage.json")
RULE = ("each planted error (anti-conservative control) is caught with probability >= 0.9 at the size the tests "
        "run; the genuine check's false-alarm rate stays near its level (1e-3 per check, Bonferroni over its "
        "comparisons; for coverage and size, exact at the nominal rate)")
NOTE = ("exact-answer checks: the comparison of one run's draws with the exact answer (genuine) and with the exact "
        "answer of each moderately wrong model (planted errors, one arm each); coverage and size checks: one run of 110 replicates judged at "
        "95% (genuine) and at 80% (control); pooled_rate is over all seeds' indicators")

EXACT_TESTS = {"dapper_rr": "test_dapper_randomized_response_matches_enumeration",
               "dapper_dgauss": "test_dapper_discrete_gaussian_counts_match_enumeration",
               "latent_class_noisy": "test_latent_class_noisy_table_matches_enumeration",
               "latent_class_composite": "test_latent_class_composite_likelihood_matches_enumeration",
               "dp_mcmc": "test_dp_mcmc_matches_importance_sampling"}
COVERAGE = {  # name: (function, kind, test, {arm: description})
    "dp_boots_coverage": (C.dp_boots_coverage, "coverage", "test_dp_boots_95_intervals_cover_pooled_one_sided",
                          {"genuine": "95% percentile intervals of E[x_j]",
                           "control": "80% intervals judged as 95% ones"}),
    "two_sample_size": (C.two_sample_rejections, "size",
                        "test_two_sample_test_size_one_sided_with_anti_conservative_control",
                        {"genuine": "the 95% two-sample test (delta = 0)",
                         "control": "the test built on the 80% interval, judged as a 5% test"}),
    "dp_mcmc_coverage": (C.dp_mcmc_coverage, "coverage", "test_dp_mcmc_posterior_intervals_calibrated_under_the_prior",
                         {"genuine": "central 95% posterior intervals",
                          "control": "central 80% posterior intervals judged as 95% ones",
                          "shrunk": "the 95% intervals' half-widths shrunk by 30% about the median (not asserted)"}),
}
REFERENCE = "dp_mcmc_is_reference"   # the importance sampler of test_dp_mcmc_matches_importance_sampling, checked
CHECKS = list(EXACT_TESTS) + list(COVERAGE) + [REFERENCE]


def clopper_pearson(k, n, level=0.95):
    """Exact two-sided confidence interval of a binomial proportion."""
    a = (1 - level) / 2
    lo = 0.0 if k == 0 else stats.beta.ppf(a, k, n - k + 1)
    hi = 1.0 if k == n else stats.beta.ppf(1 - a, k + 1, n - k)
    return [round(float(lo), 4), round(float(hi), 4)]


def quantiles(x):
    x = np.asarray(x, dtype=float)
    return {k: round(float(v), 4) for k, v in zip(("min", "q10", "median", "q90", "max"),
                                                 np.quantile(x, [0, 0.1, 0.5, 0.9, 1]))}


def run_exact(name, seeds, log):
    fn = E.CASES[name]
    arms, secs, cmp = {}, [], None
    for i, seed in enumerate(seeds):
        t0 = time.perf_counter()
        cmp = fn(seed)
        secs.append(time.perf_counter() - t0)
        for arm in ["exact"] + [p.label for p in cmp.planted]:
            arms.setdefault(arm, []).append((cmp.rejects(arm), np.abs(cmp.z(arm)).max()))
        log(f"{name:24s} seed {seed} ({i + 1}/{len(seeds)}): max|z| " + ", ".join(
            f"{'genuine' if arm == 'exact' else arm} {v[-1][1]:.2f}" for arm, v in arms.items())
            + f" (z_crit {cmp.z_crit:.2f}), {secs[-1]:.1f} s")
    base = {"check": f"{name}: posterior summaries against exact answers within Monte Carlo error",
            "test": f"tests/test_exact_answers.py::{EXACT_TESTS[name]}", "compared": list(cmp.names),
            "level": E.LEVEL, "z_crit": round(cmp.z_crit, 3), "seeds": len(seeds), "first_seed": int(seeds[0]),
            "seconds_per_run": round(float(np.mean(secs)), 1), "asserted_in_ci": True}
    errors = {p.label: p.error for p in cmp.planted}
    out = []
    for arm, rows in arms.items():
        rows = np.array(rows, dtype=float)
        genuine = arm == "exact"
        k = int(rows[:, 0].sum())
        rate = k / len(seeds)
        out.append(dict(base, kind="genuine" if genuine else "planted error", arm="genuine" if genuine else arm,
                        planted_error=None if genuine else errors[arm], rejections=k,
                        **{("false_alarm_rate" if genuine else "power"): rate},
                        rate_ci95=clopper_pearson(k, len(seeds)), statistic="max |z| over the compared summaries",
                        statistic_quantiles=quantiles(rows[:, 1]),
                        meets_rule=bool(rate <= 0.05) if genuine else bool(rate >= 0.9)))
    return out


def run_coverage(name, seeds, log):
    fn, kind, test, arms = COVERAGE[name]
    reject = C.coverage_rejected if kind == "coverage" else C.size_rejected
    ind = {arm: [] for arm in arms}
    secs = []
    for i, seed in enumerate(seeds):
        t0 = time.perf_counter()
        res = fn(seed)
        secs.append(time.perf_counter() - t0)
        for arm in arms:
            ind[arm].append(res[arm])
        log(f"{name:24s} seed {seed} ({i + 1}/{len(seeds)}): " + ", ".join(
            f"{arm} {res[arm].mean():.3f}{' rejected' if reject(res[arm]) else ''}" for arm in arms)
            + f", {secs[-1]:.1f} s")
    plan = C.plan(side=kind)
    base = {"check": f"{name}: one-sided binomial test of the {kind} (pooled, components in rotation)",
            "test": f"tests/test_coverage_power.py::{test}", "n_rep": C.N_REP, "level": C.LEVEL,
            "null": f"{kind} {'>=' if kind == 'coverage' else '<='} "
                    f"{C.NOMINAL if kind == 'coverage' else round(1 - C.NOMINAL, 2)}",
            "critical_count": plan["crit"], "exact_level": round(plan["level"], 6),
            "computed_power_at_alternative": round(plan["power"], 4), "seeds": len(seeds), "first_seed": int(seeds[0]),
            "seconds_per_run": round(float(np.mean(secs)), 1)}
    out = []
    for arm, what in arms.items():
        x = np.array(ind[arm])
        k = int(sum(reject(r) for r in x))
        rate = k / len(seeds)
        genuine = arm == "genuine"
        pooled = int(x.sum())
        out.append(dict(base, kind="genuine" if genuine else "planted error", arm=arm,
                        planted_error=None if genuine else what, intervals=what, rejections=k,
                        **{("false_alarm_rate" if genuine else "power"): rate},
                        rate_ci95=clopper_pearson(k, len(seeds)),
                        statistic=f"{kind} rate of one run", statistic_quantiles=quantiles(x.mean(axis=1)),
                        pooled_rate=round(pooled / x.size, 4), pooled_n=int(x.size),
                        pooled_rate_ci95=clopper_pearson(pooled, x.size),
                        asserted_in_ci=arm in ("genuine", "control"),
                        meets_rule=bool(rate <= 0.05) if genuine else bool(rate >= 0.9)))
    return out


def run_reference(seeds, log):
    """The IS reference of the DPMCMC case: do its runs scatter as their s.e. says, and does it agree with a long run?

    Repeats the test-size IS over the seeds (spread of the estimates against their delta-method s.e.), then one IS
    run ten times larger (40,000 draws x 16 data sets) and one DPMCMC run of 2 x 200,000 iterations.
    """
    from dplit.mcmc import dp_mcmc

    rel = E.mc_release()
    s_L = np.asarray(rel.s_L)
    t0 = time.perf_counter()
    runs = [E.is_posterior(s_L, rel.n, rel.a, rel.scale, seed) for seed in seeds]
    per_run = (time.perf_counter() - t0) / len(seeds)
    est, se = np.array([r[0] for r in runs]), np.array([r[1] for r in runs])
    log(f"{REFERENCE}: {len(seeds)} IS runs, {per_run:.1f} s each")
    big, big_se = E.is_posterior(s_L, rel.n, rel.a, rel.scale, 99_991, s=dict(E.MC, is_stages=(2_000, 4_000), is_draws=40_000,
                                                                                 is_datasets=16))
    log(f"{REFERENCE}: large IS {big.round(5)} (se {big_se.round(5)})")
    res = E._quiet(dp_mcmc, rel, n_iter=200_000, n_warmup=2_000, n_chains=2, thin=10, rng=99_992, progress=False)
    f = E._mc_functions(res.posterior["alpha"].values)
    long, long_se = f.mean(axis=(0, 1)), np.array([E.mcse_of_mean(f[..., j]) for j in range(f.shape[-1])])
    log(f"{REFERENCE}: long DPMCMC {long.round(5)} (se {long_se.round(5)})")
    z = (est - big) / np.hypot(se, big_se)
    names = ["E[alpha_1]", "E[alpha_2]", "E[alpha_1 / alpha_0]"]
    return [{"check": f"{REFERENCE}: the importance-sampling reference of the DPMCMC case", "name": REFERENCE,
             "arm": "reference", "kind": "reference", "test": f"tests/test_exact_answers.py::{EXACT_TESTS['dp_mcmc']}",
             "compared": names, "seeds": len(seeds), "first_seed": int(seeds[0]),
             "is_size": {k: E.MC[k] for k in ("is_stages", "is_draws", "is_datasets")},
             "spread_sd_of_estimates": [round(float(v), 5) for v in est.std(axis=0, ddof=1)],
             "mean_reported_se": [round(float(v), 5) for v in se.mean(axis=0)],
             "z_against_large_is_sd": [round(float(v), 3) for v in z.std(axis=0, ddof=1)],
             "z_against_large_is_mean": [round(float(v), 3) for v in z.mean(axis=0)],
             "large_is": {"draws": 40_000, "datasets": 16, "mean": [round(float(v), 5) for v in big],
                          "se": [round(float(v), 5) for v in big_se]},
             "long_dp_mcmc": {"iterations": "2 x 200,000, thin 10", "mean": [round(float(v), 5) for v in long],
                              "se": [round(float(v), 5) for v in long_se],
                              "z_against_large_is": [round(float(v), 2)
                                                     for v in (long - big) / np.hypot(long_se, big_se)]},
             "seconds_per_run": round(per_run, 1), "asserted_in_ci": False}]


def dplit_commit():
    """The commit of the checkout the figures come from (None outside a git checkout)."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=10_000)
    ap.add_argument("--only", default=",".join(CHECKS), help="comma-separated checks (default: all)")
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args()
    names = [s for s in args.only.split(",") if s]
    for s in names:
        if s not in CHECKS:
            ap.error(f"unknown check {s!r}; known: {', '.join(CHECKS)}")
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    command = (f"nice -n 10 .venv/bin/python benchmarks/power_exact_coverage.py --seeds {args.seeds} "
               f"--first-seed {args.first_seed} --only {','.join(names)}")

    def log(msg):
        print(time.strftime("%H:%M:%S"), msg, flush=True)

    commit = dplit_commit()
    store = {"checks": []}
    if os.path.exists(args.out):
        with open(args.out) as f:
            store = json.load(f)
    for name in names:
        t0 = time.perf_counter()
        if name == REFERENCE:
            entries = run_reference(seeds, log)
        elif name in EXACT_TESTS:
            entries = run_exact(name, seeds, log)
        else:
            entries = run_coverage(name, seeds, log)
        runtime = round(time.perf_counter() - t0, 1)
        for e in entries:
            e.update(name=name, command=command, runtime_s=runtime, dplit_commit=commit)
        done = {(e["name"], e["arm"]) for e in entries}
        store["checks"] = [e for e in store["checks"] if (e["name"], e["arm"]) not in done] + entries
        order = {n: i for i, n in enumerate(CHECKS)}
        store["checks"].sort(key=lambda e: order.get(e["name"], len(order)))
        store.update({"issue": 32, "rule": RULE, "note": NOTE, "python": platform.python_version(),
                      "numpy": np.__version__})
        with open(args.out, "w") as f:
            json.dump(store, f, indent=1)
            f.write("\n")
        for e in entries:
            if e["kind"] == "reference":
                continue
            rate = e.get("power", e.get("false_alarm_rate"))
            log(f"{name}: {e['arm']}: {e['rejections']}/{e['seeds']} rejected ({rate:.2f}, 95% CI {e['rate_ci95']})"
                + (f", pooled rate {e['pooled_rate']}" if "pooled_rate" in e else ""))


if __name__ == "__main__":
    main()
