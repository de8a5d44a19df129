"""Nested households (notebook 55_nested): cost of the summary probabilities (closed form vs enumeration
of the household table), speed of the chain kernel (compiled vs its plain-Python twin ``.py_func``), and, with
``--coverage``, a repeated-sampling study of the 95% intervals of the five summaries (the supplement's uniform prior,
a = 1, and a sparser a = 0.25) whose small results the notebook reads (``benchmarks/results/nested_coverage.json``).

    .venv/bin/python benchmarks/bench_nested.py                              # figures (under a minute)
    .venv/bin/python benchmarks/bench_nested.py --coverage --reps 100        # writes results/nested_coverage.json
"""

import argparse
import json
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from dplit.latent_class import cell_intervals
from dplit.nested import (
    SIMULATED_TRUTH,
    NestedParams,
    _nested_sampler,
    _row_lengths,
    _summary_probs_kernel,
    fit_nested,
    household_summaries,
    household_table,
    release_summaries,
    simulate_households,
    summary_probs,
)
from dplit.sampling import ConvergenceWarning

sys.path.insert(0, str(Path(__file__).parent))
from _timing import best_of  # noqa: E402

HERE = Path(__file__).parent
OUT = HERE / "results" / "nested_coverage.json"
EPS = (np.inf, 1.0, 0.1, 0.01)

TRUE = SIMULATED_TRUTH   # the notebook's simulation truth


def probability_cost():
    """Closed form (eq. (2)) vs enumeration of every household configuration (eq. (1) summed)."""
    print("P(S_1..S_5 | theta), households of size 3, G = M = 2: closed form vs enumeration")
    print(f"{'R':>3} {'K':>3} {'configurations':>15} {'closed form (us)':>17} {'enumeration (ms)':>17}")
    rng = np.random.default_rng(1)
    rows = []
    for R, K in ((2, 2), (3, 3), (4, 4), (5, 4)):
        p = NestedParams.random(2, 2, R, K, rng=rng)
        theta, out = p.pack(), np.empty(5)
        _summary_probs_kernel(theta, 2, 2, R, 2, out)
        t_closed = best_of(lambda th=theta, R=R, o=out: _summary_probs_kernel(th, 2, 2, R, 2, o), repeat=5, number=2000)
        t_enum = best_of(lambda p=p: (lambda r, q: q @ household_summaries(r))(*household_table(p)), repeat=2)
        n_conf = 4 * R * (2 * R * K) ** 2
        print(f"{R:>3} {K:>3} {n_conf:>15,} {1e6 * t_closed:>17.2f} {1e3 * t_enum:>17.1f}")
        rows.append({"R": R, "K": K, "configurations": n_conf, "closed_us": 1e6 * t_closed, "enum_ms": 1e3 * t_enum})
    return rows


def kernel_speed():
    """Iterations per second of one chain: the numba kernel and its plain-Python twin (.py_func)."""
    x = simulate_households(TRUE, 602, rng=2)
    out = {}
    for eps in (np.inf, 1.0):
        rel = release_summaries(x, eps, rng=3, secure=False)
        sampler = _nested_sampler(rel, 2, 2, 1.0, 1.0, 0)
        state = sampler.init(np.random.default_rng(4))
        sampler.run_chain(state, 100, 1, np.random.default_rng(5))              # compile
        n = 20_000
        t = best_of(lambda s=sampler, st=state, n=n: s.run_chain(st, n, 5, np.random.default_rng(6)), repeat=3)
        out[f"numba, eps = {eps}"] = n / t
    # the same iterations as plain Python (the kernel's py_func, helpers still compiled): what from_step would cost
    import dplit.nested as nested

    rel = release_summaries(x, 1.0, rng=3, secure=False)
    row_len = _row_lengths(2, 2, rel.n_race, rel.n_rel)
    theta = NestedParams.random(2, 2, rel.n_race, rel.n_rel, rng=7).pack()
    n = 500
    t0 = time.perf_counter()
    nested._nested_chain_kernel.py_func(theta, row_len, np.clip(rel.counts, 0, rel.n), np.full(row_len.size, 50.0),
                                        np.zeros(row_len.size, dtype=np.int64), n, 5, 0, rel.counts, rel.n, rel.t,
                                        1.0, 1.0, 2, 2, rel.n_race, 2, np.random.default_rng(8))
    out["python loop (py_func), eps = 1.0"] = n / (time.perf_counter() - t0)
    for k, v in out.items():
        print(f"one chain, {k}: {v:,.0f} iterations per second")
    return out


def coverage(reps, n, n_iter, n_warmup, n_chains, a, seed=20261127):
    """Coverage and length of the 95% intervals of P(S | theta_true) over ``reps`` samples of ``n`` households.

    Every prior concentration ``a`` sees the same samples and releases (the same seed)."""
    truth = summary_probs(TRUE)
    gen = np.random.default_rng(seed)
    cov = {e: [] for e in EPS}
    length = {e: [] for e in EPS}
    err = {e: [] for e in EPS}
    t0 = time.perf_counter()
    for rep in range(reps):
        x = simulate_households(TRUE, n, rng=gen)
        for e in EPS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                fit = fit_nested(release_summaries(x, e, rng=gen, secure=False), a=a, n_iter=n_iter,
                                 n_warmup=n_warmup, n_chains=n_chains, rng=gen, progress=False)
            mean, lo, hi = cell_intervals(fit.posterior["summary_probs"].values)
            cov[e].append((lo <= truth) & (truth <= hi))
            length[e].append(hi - lo)
            err[e].append(np.abs(mean - truth))
        if (rep + 1) % 10 == 0:
            print(f"  {rep + 1}/{reps} samples, {time.perf_counter() - t0:.0f} s", flush=True)
    key = lambda e: "inf" if math.isinf(e) else str(e)  # noqa: E731
    return {key(e): {"coverage": np.mean(cov[e], axis=0).round(3).tolist(),
                     "length": np.mean(length[e], axis=0).round(4).tolist(),
                     "abs_error": np.mean(err[e], axis=0).round(4).tolist()} for e in EPS}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--coverage", action="store_true", help="run the coverage study and write the JSON")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--n-iter", type=int, default=4000)
    ap.add_argument("--n-warmup", type=int, default=2000)
    ap.add_argument("--n-chains", type=int, default=2)
    ap.add_argument("--a", default="1.0,0.25", help="prior concentrations to compare (comma-separated)")
    args = ap.parse_args(argv)
    cost = probability_cost()
    speed = kernel_speed()
    if args.coverage:
        t0 = time.perf_counter()
        res = {}
        for a in [float(v) for v in args.a.split(",")]:
            print(f"prior Dirichlet({a:g}) on every simplex vector")
            res[str(a)] = coverage(args.reps, 602, args.n_iter, args.n_warmup, args.n_chains, a)
            for e, r in res[str(a)].items():
                print(f"  eps = {e:>5}: coverage {r['coverage']}, mean length {np.mean(r['length']):.3f}")
        command = (f".venv/bin/python benchmarks/bench_nested.py --coverage --reps {args.reps} --n-iter {args.n_iter}"
                   f" --n-warmup {args.n_warmup} --n-chains {args.n_chains} --a {args.a}")
        OUT.parent.mkdir(exist_ok=True)
        OUT.write_text(json.dumps({
            "command": command, "reps": args.reps, "n": 602, "n_iter": args.n_iter, "n_warmup": args.n_warmup,
            "n_chains": args.n_chains, "thin": 5, "truth": summary_probs(TRUE).round(4).tolist(),
            "runtime_s": round(time.perf_counter() - t0, 1), "results": res,
            "speed": {k: round(v) for k, v in speed.items()}, "probability_cost": cost}, indent=1) + "\n")
        print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
