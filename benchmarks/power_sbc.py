"""Power and false-alarm rate of the whole-sampler SBC checks of tests/test_sbc_power.py (issue 32, items 1-2).

For each sampler, the check the tests run (same model, same chain settings, same number of replicates, same
``sbc_check`` at level ALPHA) is repeated over independent seeds, for the genuine sampler (false-alarm rate) and
for each planted error (power). The tests assert their arms at one fixed seed each; the seeds here start at
``--first-seed`` (default 10,000), away from the tests' small ones.

Run from the repository root, single-threaded (the figures are per seed, so they do not depend on the machine):

    NUMBA_NUM_THREADS=1 .venv/bin/python benchmarks/power_sbc.py [--seeds 20] [--only dp_mcmc,dapper_numba]

Results go to ``benchmarks/results/power_sbc.json`` (``--out``): one entry per (sampler, arm), merged into the
file, so samplers (``--only``) and arms (``--arms``) can be run separately; each entry keeps its own command and
size. Progress is printed per seed.
"""

import argparse
import json
import os
import platform
import sys
import time

import numpy as np
from scipy import stats

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))

from test_sbc_power import ALPHA, CASES, L, get_case  # noqa: E402

from dplit.testing import sbc_check  # noqa: E402

OUT = os.path.join(ROOT, "benchmarks", "results", "power_sbc.json")
NOTE = ("each entry carries the command that produced it and its size; runs of some samplers (--only) or arms "
        "(--arms) merge into this file; --relabel refreshes only which entries the tests assert and the planted "
        "errors' wording")
RULE = ("each planted error is caught with probability >= 0.9 at the size the tests run; the genuine check's "
        f"false-alarm rate stays near its level {ALPHA} (Bonferroni over its tests and coordinates)")


def clopper_pearson(k, n, level=0.95):
    """Exact two-sided confidence interval of a binomial proportion."""
    a = (1 - level) / 2
    lo = 0.0 if k == 0 else stats.beta.ppf(a, k, n - k + 1)
    hi = 1.0 if k == n else stats.beta.ppf(1 - a, k + 1, n - k)
    return [round(float(lo), 4), round(float(hi), 4)]


def quantiles(x):
    x = np.asarray(x, dtype=float)
    return {k: float(np.round(v, 6)) for k, v in
            zip(("min", "q10", "median", "q90", "max"), np.quantile(x, [0, 0.1, 0.5, 0.9, 1]))}


def run_case(name, seeds, log, arms=None):
    case = get_case(name)
    entries, pooled = [], []
    for arm, told in case.arms.items():
        if arms and arm not in arms:
            continue
        ps, zs, secs = [], [], []
        for i, seed in enumerate(seeds):
            t0 = time.perf_counter()
            res = case.check(arm, seed=seed)
            secs.append(time.perf_counter() - t0)
            ps.append(res["p"])
            zs.append(res.get("z_spread", np.nan))
            if arm == "genuine" and "ranks" in res:
                pooled.append(res["ranks"])
            log(f"{name:17s} {arm:17s} seed {seed} ({i + 1}/{len(seeds)}): p = {res['p']:.3g}, "
                f"z_spread = {zs[-1]:+.2f}, {secs[-1]:.1f} s")
        k = int(np.sum(np.asarray(ps) < ALPHA))
        genuine = arm == "genuine"
        rate = k / len(seeds)
        entry = {
            "check": f"SBC of {name}",
            "sampler": name,
            "test": f"tests/test_sbc_power.py::test_sbc_of_whole_sampler[{name}-{arm}]"
                    if arm in case.ci_arms else None,
            "kind": "genuine" if genuine else "planted error",
            "arm": arm,
            "planted_error": None if genuine else case.describe(told),
            "size": (f"{case.n_rep} replicates x {L} thinned draws" if hasattr(case, "ranks")
                     else f"{case.n_rep:,} simulated releases per alpha"),
            "n_rep": case.n_rep,
            "settings": case.settings,
            "level": ALPHA,
            "seeds": len(seeds),
            "first_seed": int(seeds[0]),
            "rejections": k,
            ("false_alarm_rate" if genuine else "power"): rate,
            "rate_ci95": clopper_pearson(k, len(seeds)),
            "statistic": ("adjusted p-value of sbc_check" if hasattr(case, "ranks")
                          else "Bonferroni p-value of the two-sample KS tests"),
            "statistic_quantiles": quantiles(ps),
            "seconds_per_run": round(float(np.mean(secs)), 1),
            "asserted_in_ci": arm in case.ci_arms,
            "meets_rule": bool(rate <= 0.05) if genuine else bool(rate >= 0.9),
        }
        if not np.all(np.isnan(zs)):     # the SBC's spread statistic (absent from the simulator's KS check)
            entry["z_spread_quantiles"] = quantiles(zs)
            entry["z_spread_mean"] = round(float(np.mean(zs)), 3)
        if genuine and pooled:     # all genuine replicates together: a far larger SBC, sensitive to a small bias
            res = sbc_check(np.concatenate(pooled), case.spread)
            entry["pooled_genuine"] = {"n_rep": int(sum(len(r) for r in pooled)), "p": res["p"],
                                       "z_spread": round(res["z_spread"], 3), "z_loc": res["z_loc"]}
        entries.append(entry)
    return entries


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=10_000)
    ap.add_argument("--only", default=",".join(CASES), help="comma-separated samplers (default: all)")
    ap.add_argument("--arms", default="", help="comma-separated arms (default: all of each sampler)")
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--relabel", action="store_true",
                    help="only refresh which entries the tests assert (the 'test' and 'asserted_in_ci' fields) "
                         "from the current cases; no run")
    args = ap.parse_args()
    if args.relabel:
        with open(args.out) as f:
            store = json.load(f)
        store["note"] = NOTE
        for e in store["checks"]:
            case = get_case(e["sampler"])
            ci = case.ci_arms
            if e["kind"] != "genuine":
                e["planted_error"] = case.describe(case.arms[e["arm"]])
            e["asserted_in_ci"] = e["arm"] in ci
            e["test"] = f"tests/test_sbc_power.py::test_sbc_of_whole_sampler[{e['sampler']}-{e['arm']}]" \
                if e["arm"] in ci else None
        with open(args.out, "w") as f:
            json.dump(store, f, indent=1)
            f.write("\n")
        return
    names = [s for s in args.only.split(",") if s]
    for s in names:
        if s not in CASES:
            ap.error(f"unknown sampler {s!r}; known: {', '.join(CASES)}")
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    arms = [a for a in args.arms.split(",") if a]
    command = (f"NUMBA_NUM_THREADS=1 .venv/bin/python benchmarks/power_sbc.py --seeds {args.seeds} "
               f"--first-seed {args.first_seed} --only {','.join(names)}"
               + (f" --arms '{','.join(arms)}'" if arms else ""))    # --out only chooses the file

    def log(msg):
        print(time.strftime("%H:%M:%S"), msg, flush=True)

    store = {"checks": []}
    if os.path.exists(args.out):
        with open(args.out) as f:
            store = json.load(f)
    for name in names:
        t0 = time.perf_counter()
        entries = run_case(name, seeds, log, arms)
        runtime = round(time.perf_counter() - t0, 1)
        for e in entries:
            e["command"] = command.strip()
            e["runtime_s"] = runtime
        done = {e["arm"] for e in entries}
        store["checks"] = [e for e in store["checks"] if e["sampler"] != name or e["arm"] not in done] + entries
        order = {n: i for i, n in enumerate(CASES)}
        store["checks"].sort(key=lambda e: order.get(e["sampler"], len(order)))
        store.update({"issue": 32, "rule": RULE, "numba_num_threads": os.environ.get("NUMBA_NUM_THREADS"),
                      "python": platform.python_version(), "numpy": np.__version__,
                      "note": NOTE})
        with open(args.out, "w") as f:
            json.dump(store, f, indent=1)
            f.write("\n")
        for e in entries:
            rate = e.get("power", e.get("false_alarm_rate"))
            log(f"{name}: {e['arm']}: {e['rejections']}/{e['seeds']} rejected ({rate:.2f}, 95% CI {e['rate_ci95']}),"
                f" mean z_spread {e.get('z_spread_mean', float('nan')):+.2f}, {e['seconds_per_run']} s per check")


if __name__ == "__main__":
    main()
