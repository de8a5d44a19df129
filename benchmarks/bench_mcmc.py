"""Benchmark of dplit.mcmc (notebook 21): record sweep, ESS per second, peak memory, dapper comparison.

Run from the repository root:  .venv/bin/python benchmarks/bench_mcmc.py [--full]

Prints
1. record updates per second of the numba sweep kernel, its NumPy twin, and the floor: the bare
   n x d gamma draws in numba (dplit.dirichlet_random.gamma_draws_kernel), same n, d, alpha;
2. ESS per second of alpha as a function of the slice cycles per iteration (the default's reason);
3. ESS per second at the paper's settings (Guo et al. Sec. 5.1: n in {1000, 5000}, d in {3, 5}, eps = 1)
   for DPMCMC and DPreMCMC (b = 5, 50), one chain, run time including warm-up;
4. peak memory of a DPMCMC run (traced Python/NumPy allocations and the process's peak RSS);
5. ESS_bulk per second on ../shared/benchmarks/dapper_compositional_release.csv next to the R package
   dapper's figure recorded there (0.11 ESS_bulk/s; one chain, ESS over total run time);
6. a larger simulation-based calibration than the test suite's: d = 3, n = 200, a = 1e-3, eps = 1, p1,
   19 draws thinned by 60, for DPMCMC (must be uniform), for the same chain without the joint and ancillary
   moves (steps iii-iv: same target, slower mixing, so a failure there is autocorrelation of the thinned
   draws, not a bias) and DPreMCMC with b = 50 (an approximation: shows how far off it is); then an SBC
   thinned by the ESS (Talts et al.). ``--sbc-only`` runs only the DPMCMC SBCs (``--sbc-reps``, default 1200).
ESS is ArviZ's rank-normalised bulk ESS. Timings exclude numba compilation (a warm-up call first).
The machine is shared: figures move from run to run; the ratios in the same process are the point.
"""

import argparse
import os
import resource
import time
import tracemalloc

import arviz as az
import numpy as np
from _timing import best_of

from dplit import _mcmc_moves as mm
from dplit import mcmc as M
from dplit.dirichlet import censored_stat, dirichlet_draws
from dplit.dirichlet_random import gamma_draws_kernel as _gamma_draws_kernel
from dplit.release import Release
from dplit.sampling import mpsrf
from dplit.testing import rank_uniformity_pvalues, sbc_ranks

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DAPPER_CSV = os.path.join(ROOT, "..", "shared", "benchmarks", "dapper_compositional_release.csv")
DAPPER_ESS_PER_S = 0.11


def ess_bulk(draws):
    """Bulk ESS per component of draws with shape (chain, draw, d)."""
    return az.ess(az.convert_to_dataset({"alpha": draws}), method="bulk")["alpha"].values




def bench_sweep(n=1000, d=3):
    alpha = np.linspace(2.2, 2.2 + 1.1 * (d - 1), d)
    a = 1e-3
    X = dirichlet_draws(alpha, n, rng=1)
    s_L = censored_stat(X, a)
    inv_scale = n / (-d * np.log(a))
    coef = np.zeros(d)
    logx = np.log(X)
    rng = np.random.default_rng(2)
    mm.record_sweep_kernel(logx.copy(), alpha, coef, s_L, np.log(a), inv_scale, rng)
    _gamma_draws_kernel(alpha, n, rng)
    t_kernel = best_of(lambda: mm.record_sweep_kernel(logx.copy(), alpha, coef, s_L, np.log(a), inv_scale, rng))
    t_floor = best_of(lambda: _gamma_draws_kernel(alpha, n, rng))
    t_ref = best_of(lambda: mm.record_sweep_reference(logx.copy(), alpha, coef, s_L, np.log(a), inv_scale, rng),
                    repeat=1)
    print(f"record sweep, n = {n}, d = {d}: kernel {n / t_kernel:,.0f} records/s ({t_kernel * 1e6:.0f} us/sweep); "
          f"NumPy reference {n / t_ref:,.0f} records/s (kernel {t_ref / t_kernel:.0f}x faster); "
          f"floor (bare n x d gammas) {n / t_floor:,.0f} records/s (kernel costs {t_kernel / t_floor:.2f}x the floor)")


def dapper_release():
    data = np.genfromtxt(DAPPER_CSV, delimiter=",", names=True)
    return Release.from_statistic(np.asarray(data["sdp"], dtype=float), 1000, 1e-3, 1.0)


def bench_slice_cycles(n_iter, cycles):
    rel = dapper_release()
    print(f"\nslice cycles per iteration (dapper data set, one chain, {n_iter} iterations + 2000 warm-up):")
    print("  n_slice  evals/iter  s/1000 it  min ESS_bulk  ESS/s")
    for n_slice in cycles:
        res = M.dp_mcmc(rel, n_iter=n_iter, n_warmup=2000, n_chains=1, thin=1, n_slice=n_slice, rng=7,
                        progress=False)
        rt = res.posterior.attrs["runtime"]
        e = ess_bulk(res.posterior["alpha"].values).min()
        ev = float(res.sample_stats["slice_evaluations"].mean())
        print(f"  {n_slice:7d}  {ev:10.1f}  {rt / (n_iter + 2000) * 1000:9.3f}  {e:11.0f}  {e / rt:6.1f}")


def bench_paper_settings(n_iter):
    print(f"\npaper's settings (eps1 = 1, a = 1e-3, one chain, {n_iter} iterations + 1000 warm-up, "
          "ESS over total run time):")
    print("     n  d  method           s/1000 it  min ESS_bulk  ESS/s  record acceptance")
    for n in (1000, 5000):
        for d in (3, 5):
            alpha = np.array([2.2, 3.3, 4.4, 5.5, 6.6][:d])
            X = dirichlet_draws(alpha, n, rng=11)
            a = 1e-3
            s_L = censored_stat(X, a) + np.random.default_rng(12).laplace(0, -d * np.log(a) / n, d)
            rel = Release.from_statistic(s_L, n, a, 1.0)
            for label, fn, kw in [("DPMCMC", M.dp_mcmc, {}), ("DPreMCMC b=50", M.dp_remcmc, {"b": 50}),
                                  ("DPreMCMC b=5", M.dp_remcmc, {"b": 5})]:
                res = fn(rel, n_iter=n_iter, n_warmup=1000, n_chains=1, thin=1, rng=13, progress=False, **kw)
                rt = res.posterior.attrs["runtime"]
                e = ess_bulk(res.posterior["alpha"].values).min()
                acc = float(res.sample_stats["record_acceptance"].mean())
                print(f"  {n:4d}  {d}  {label:15s}  {rt / (n_iter + 1000) * 1000:9.3f}  {e:11.0f}  {e / rt:6.1f}"
                      f"  {acc:.3f}")


def bench_memory():
    rel = dapper_release()
    tracemalloc.start()
    M.dp_mcmc(Release.from_statistic(rel.s_L, 5000, 1e-3, 1.0), n_iter=2000, n_warmup=200, n_chains=2, thin=1,
              rng=1, progress=False)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak memory, DPMCMC n = 5000, d = 3, 2 chains x 2200 iterations: traced allocations "
          f"{peak / 2**20:.1f} MiB (state: 2 x 5000 x 3 doubles = {2 * 5000 * 3 * 8 / 2**20:.2f} MiB); "
          f"process peak RSS {rss:.0f} MiB (includes numba, ArviZ, SciPy)")


def bench_dapper(n_iter):
    rel = dapper_release()
    print(f"\ndapper data set (d = 3, n = 1000, a = 1e-3, eps = 1, p1), {n_iter} iterations + 2000 warm-up:")
    res = M.dp_mcmc(rel, n_iter=n_iter, n_warmup=2000, n_chains=1, thin=1, rng=21, progress=False)
    rt = res.posterior.attrs["runtime"]
    e = ess_bulk(res.posterior["alpha"].values)
    post = res.posterior["alpha"].values.reshape(-1, 3)
    print(f"  one chain: {(n_iter + 2000) / rt:,.0f} iterations/s, ESS_bulk {np.round(e).astype(int)}, "
          f"ESS_bulk/s {np.round(e / rt, 1)} (dapper: {DAPPER_ESS_PER_S}) -> {e.min() / rt / DAPPER_ESS_PER_S:.0f}x "
          f"dapper (min over components)")
    print(f"  posterior mean {post.mean(0).round(2)}, sd {post.std(0).round(2)} "
          "(dapper: 1.90 (0.28), 3.22 (0.54), 4.07 (0.74), from ESS ~55)")
    res2 = M.dp_mcmc(rel, n_iter=n_iter, n_warmup=2000, n_chains=2, thin=1, rng=22, progress=False)
    rt2 = res2.posterior.attrs["runtime"]
    e2 = ess_bulk(res2.posterior["alpha"].values)
    print(f"  two chains in parallel threads: {rt2:.1f} s, ESS_bulk {np.round(e2).astype(int)}, "
          f"ESS_bulk/s {np.round(e2 / rt2, 1)} of wall time -> "
          f"{e2.min() / rt2 / DAPPER_ESS_PER_S:.0f}x dapper; MPSRF {mpsrf(res2):.3f}")


def bench_sbc(n_rep, remcmc=True):
    """SBC thinned by 60: DPMCMC, the same chain without steps (iii)-(iv) (same target, slower mixing), DPreMCMC."""
    print("\nsimulation-based calibration, d = 3, n = 200, a = 1e-3, eps = 1, p1, 19 draws thinned by 60:")
    runs = [("DPMCMC", None, n_rep, True), ("DPMCMC, no (iii)-(iv)", None, n_rep, False)]
    if remcmc:
        runs.append(("DPreMCMC b=50", 50, n_rep // 2, True))
    for label, b, reps, moves in runs:
        t0 = time.perf_counter()
        ranks = M._sbc_ranks(reps, n=200, d=3, a=1e-3, eps=1.0, b=b, moves=moves, rng=78)
        p = rank_uniformity_pvalues(ranks)
        print(f"  {label:22s} {reps} replications ({time.perf_counter() - t0:.0f} s): chi-square p-values of rank "
              f"uniformity {np.array2string(p, precision=3)}")


def bench_sbc_thinned_by_ess(n_rep, L=19):
    """SBC with draws thinned by the ESS (Talts et al. 2018, Sec. 5): run until ESS >= 100, keep L spread out."""
    print(f"\nsimulation-based calibration thinned by the ESS, d = 3, n = 200, a = 1e-3, eps = 1, p1, {n_rep} "
          f"replications: one chain per replication run with n_iter='auto' (bulk and tail ESS >= 100), then "
          f"{L} equally spaced draws")
    import warnings

    from dplit.dirichlet import log_dirichlet_draws_reference
    from dplit.sampling import ConvergenceWarning

    n, d, a, eps = 200, 3, 1e-3, 1.0
    scale = -d * np.log(a) / (n * eps)

    def simulate(g):
        alpha = g.gamma(np.ones(d), 10.0)
        s_L = np.maximum(log_dirichlet_draws_reference(alpha, n, g), np.log(a)).mean(axis=0) + g.laplace(0, scale, d)
        return alpha, Release.from_statistic(s_L, n, a, eps)

    def posterior(rel, n_draws, g):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            res = M.dp_mcmc(rel, n_iter="auto", target_ess=100, n_warmup=600, n_chains=1, thin=1, rng=g,
                            progress=False)
        draws = res.posterior["alpha"].values[0]
        return draws[np.linspace(0, len(draws) - 1, n_draws).round().astype(int)]

    t0 = time.perf_counter()
    p = rank_uniformity_pvalues(sbc_ranks(simulate, posterior, n_rep, L=L, rng=79), L=L)
    print(f"  DPMCMC ({time.perf_counter() - t0:.0f} s): chi-square p-values of rank uniformity "
          f"{np.array2string(p, precision=3)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="longer chains and n_slice up to 1000")
    parser.add_argument("--sbc-only", action="store_true",
                        help="only the SBCs of DPMCMC: thinned by 60 (with and without steps iii-iv), by the ESS")
    parser.add_argument("--sbc-reps", type=int, default=None, help="replications of the SBC thinned by 60")
    args = parser.parse_args()
    if args.sbc_only:
        bench_sbc(args.sbc_reps or 1200, remcmc=False)
        bench_sbc_thinned_by_ess(2000 if args.full else 1000)
        return
    t0 = time.perf_counter()
    bench_sweep(1000, 3)
    bench_sweep(1000, 5)
    bench_slice_cycles(40_000 if args.full else 10_000, (1, 5, 20, 100, 1000) if args.full else (1, 5, 20, 100))
    bench_paper_settings(40_000 if args.full else 10_000)
    bench_memory()
    bench_dapper(100_000 if args.full else 40_000)
    bench_sbc(args.sbc_reps or (2000 if args.full else 1200))
    bench_sbc_thinned_by_ess(2000 if args.full else 1000)
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
