"""Benchmark of dplit.dirichlet: MLE calls per second and Dirichlet draws per second.

Run from the repository root: ``.venv/bin/python benchmarks/bench_dirichlet.py`` (about a minute).
Baselines run in the same process: the readable reference twin of the MLE (numpy + scipy.special),
Minka's plain fixed point (what Guo et al. cite), numpy's ``Generator.dirichlet`` and the bare
cost of the n x d gamma draws in numba (both gamma samplers), the floor every Dirichlet sampler pays.
"""

import time

import numpy as np
from _timing import best_of
from numba import njit

from dplit import dirichlet as dr
from dplit import dirichlet_random
from dplit.dirichlet_fit import minka_fixed_point

SEED = 20261123
N_REF = 200  # statistics timed with the (slow) reference twin




@njit(cache=True)
def mle_many(S, tol, max_iter):
    """MLE of every row of S inside numba (what a bootstrap loop does)."""
    out = np.empty_like(S)
    for i in range(S.shape[0]):
        out[i] = dr.dirichlet_mle_kernel(S[i], tol, max_iter)
    return out


def stats_from_samples(alpha, n_records, n_stats, rng):
    """Statistics S0 of simulated data sets (as in a parametric bootstrap)."""
    return np.array([np.log(rng.dirichlet(alpha, size=n_records)).mean(axis=0) for _ in range(n_stats)])


def bench_mle(rng):
    print("== MLE: calls per second")
    print(f"{'case':38s} {'reference (py)':>15s} {'numba, py call':>15s} {'numba loop':>12s} {'ratio':>7s}")
    cases = [
        ("alpha=(3.3,4.4), n=1000", stats_from_samples(np.array([3.3, 4.4]), 1000, 2000, rng)),
        ("alpha=(2.2,...,6.6) d=5, n=1000", stats_from_samples(np.array([2.2, 3.3, 4.4, 5.5, 6.6]), 1000, 2000, rng)),
        ("alpha=(0.5,0.5,0.5), n=1000", stats_from_samples(np.array([0.5, 0.5, 0.5]), 1000, 2000, rng)),
    ]
    for delta in (1e-4, 1e-8):
        m = rng.dirichlet(np.ones(10), size=2000)
        cases.append((f"d=10, {delta:.0e} inside the boundary", np.log(m) + np.log1p(-delta)))
    for name, S in cases:
        S = np.ascontiguousarray(S)
        mle_many(S[:2], 1e-10, 100)                     # compile / load cache
        t_ref = best_of(lambda S=S: [dr.dirichlet_mle_reference(s) for s in S[:N_REF]], 1) / N_REF
        t_py = best_of(lambda S=S: [dr.dirichlet_mle_kernel(s, 1e-10, 100) for s in S]) / len(S)
        t_nb = best_of(lambda S=S: mle_many(S, 1e-10, 100)) / len(S)
        out = mle_many(S, 1e-10, 100)
        assert not np.isnan(out).any()
        print(f"{name:38s} {1 / t_ref:15,.0f} {1 / t_py:15,.0f} {1 / t_nb:12,.0f} {t_ref / t_nb:6.0f}x")
    # the fixed point the paper cites, on one moderate and one near-boundary statistic
    for label, s in [("alpha=(3.3,4.4) exact mean", dr.logx_mean([3.3, 4.4])),
                     ("d=2, 1e-3 inside the boundary", np.log([0.3, 0.7]) + np.log1p(-1e-3))]:
        t0 = time.perf_counter()
        _, steps = minka_fixed_point(s)
        t_fp = time.perf_counter() - t0
        t_nb = best_of(lambda s=s: mle_many(np.tile(s, (1000, 1)), 1e-10, 100)) / 1000
        print(f"Minka fixed point, {label}: {steps} steps, {t_fp * 1e3:.1f} ms per call "
              f"(numba Newton: {t_nb * 1e6:.2f} us, {t_fp / t_nb:,.0f}x faster)")


def bench_draws(rng):
    print("\n== Dirichlet draws: records per second (n = 200,000 per call, best of 3)")
    print("   default = dirichlet_draws_kernel (rng.standard_gamma, NumPy's stream); "
          "fast = dirichlet_draws_fast_kernel (Marsaglia-Tsang)")
    print(f"{'alpha':16s} {'numpy dirichlet':>16s} {'default':>12s} {'fast':>12s} "
          f"{'default/numpy':>14s} {'fast/numpy':>11s} {'default/floor':>14s} {'fast/floor':>11s}")
    n = 200_000
    for alpha in (np.array([3.3, 4.4]), np.array([0.5, 0.5, 0.5]), np.array([2.2, 3.3, 4.4, 5.5, 6.6]),
                  np.array([2.0, 20.0, 2.0]), np.full(18, 0.8), np.full(10, 0.05)):
        g = np.random.default_rng(SEED)
        for kernel in (dr.dirichlet_draws_kernel, dr.dirichlet_draws_fast_kernel,
                       dirichlet_random.gamma_draws_kernel, dirichlet_random.gamma_draws_fast_kernel):
            kernel(alpha, 10, g)                                  # compile / load cache
        t_np = best_of(lambda a=alpha, g=g: g.dirichlet(a, size=n))
        t_def = best_of(lambda a=alpha, g=g: dr.dirichlet_draws_kernel(a, n, g))
        t_fast = best_of(lambda a=alpha, g=g: dr.dirichlet_draws_fast_kernel(a, n, g))
        f_def = best_of(lambda a=alpha, g=g: dirichlet_random.gamma_draws_kernel(a, n, g))
        f_fast = best_of(lambda a=alpha, g=g: dirichlet_random.gamma_draws_fast_kernel(a, n, g))
        name = f"d={len(alpha)}, {alpha[0]}" + ("" if np.all(alpha == alpha[0]) else "...")
        print(f"{name:16s} {n / t_np:16,.0f} {n / t_def:12,.0f} {n / t_fast:12,.0f} "
              f"{t_np / t_def:13.2f}x {t_np / t_fast:10.2f}x {f_def / t_def:13.2f}x {f_fast / t_fast:10.2f}x")
    print("   (x/numpy > 1: faster than numpy; x/floor = share of the time spent in the gamma draws)")
    d = 5
    g = np.random.default_rng(SEED)
    alpha = np.array([2.2, 3.3, 4.4, 5.5, 6.6])
    f_def = best_of(lambda: dirichlet_random.gamma_draws_kernel(alpha, n, g), repeat=5)
    f_fast = best_of(lambda: dirichlet_random.gamma_draws_fast_kernel(alpha, n, g), repeat=5)
    t_npg = best_of(lambda: g.standard_gamma(alpha, size=(n, d)), repeat=5)
    print(f"\nFLOOR (what later benchmarks compare to), d=5, alpha=(2.2..6.6), {n:,} x {d} gammas:\n"
          f"  rng.standard_gamma in numba (_gamma_draws_kernel):   {f_def / (n * d) * 1e9:5.1f} ns per gamma, "
          f"{f_def / n * 1e9:4.0f} ns per record\n"
          f"  Marsaglia-Tsang in numba (_gamma_draws_fast_kernel): {f_fast / (n * d) * 1e9:5.1f} ns per gamma, "
          f"{f_fast / n * 1e9:4.0f} ns per record\n"
          f"  numpy Generator.standard_gamma (vectorised):         {t_npg / (n * d) * 1e9:5.1f} ns per gamma")


if __name__ == "__main__":
    rng = np.random.default_rng(SEED)
    t0 = time.perf_counter()
    bench_mle(rng)
    bench_draws(rng)
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")
