"""Benchmark of dplit.abc: simulated data sets per second and memory per simulation.

Run from the repository root: ``.venv/bin/python benchmarks/bench_abc.py`` (about a minute).
One ABC simulation at n = 5000 records, d = 5 (alpha = (2.2, ..., 6.6), a = 1e-3): the censored
statistic of n Dirichlet records plus Laplace noise. Baselines in the same process: the bare
n x d gamma draws in numba (Marsaglia-Tsang, what the kernel uses, and rng.standard_gamma), the
floor of any simulator that draws the records; and a pure-NumPy simulator (Generator.dirichlet,
then the censored log mean). Parallel figures run whole blocks through dplit.sampling.map_blocks
(the path dp_abc takes) on 1 and 2 threads. Memory: the kernel keeps O(d) numbers per simulation;
we check it by the peak resident memory of one simulation of 20 million records (NumPy would need
20e6 x 5 x 8 bytes = 800 MB for the records alone) and by tracemalloc for the NumPy simulator.
"""

import math
import os
import resource
import tracemalloc

import numpy as np
from _timing import best_of

from dplit import abc as A
from dplit import dirichlet_random

SEED = 20261125
ALPHA = np.array([2.2, 3.3, 4.4, 5.5, 6.6])
N, A_CENS = 5000, 1e-3
REPS = 100   # simulations per timing


def per_second(fn, reps=REPS):
    return reps / best_of(lambda: [fn() for _ in range(reps)], repeat=3)


def main():
    rng = np.random.default_rng(SEED)
    log_a = math.log(A_CENS)
    A._censored_stat_sim_kernel(ALPHA, N, log_a, rng)        # compile (cached) before timing
    dirichlet_random.gamma_draws_fast_kernel(ALPHA, N, rng)
    dirichlet_random.gamma_draws_kernel(ALPHA, N, rng)
    alphas = np.tile(ALPHA, (2 * A.BLOCK_SIZE * 2, 1))       # four blocks
    A.simulate_releases(alphas[:10], [N], [0.01], A_CENS, rng=1, n_jobs=1)

    kern = per_second(lambda: A._censored_stat_sim_kernel(ALPHA, N, log_a, rng))
    gam_fast = per_second(lambda: dirichlet_random.gamma_draws_fast_kernel(ALPHA, N, rng))
    gam_np = per_second(lambda: dirichlet_random.gamma_draws_kernel(ALPHA, N, rng))
    ref = per_second(lambda: A._censored_stat_sim_reference(ALPHA, N, A_CENS, rng), reps=20)
    par = {}
    for jobs in (1, 2):
        t = best_of(lambda j=jobs: A.simulate_releases(alphas, [N], [0.01], A_CENS, rng=2, n_jobs=j), repeat=3)
        par[jobs] = len(alphas) / t

    print(f"== ABC simulations per second, n = {N}, d = {ALPHA.size} (os.cpu_count() = {os.cpu_count()})")
    print(f"{'simulator':52s} {'per second':>11s} {'floor / it':>11s}")
    print(f"{'dplit kernel, one core':52s} {kern:11.0f} {gam_fast / kern:11.2f}")
    print(f"{'bare n x d Marsaglia-Tsang gamma draws (numba)':52s} {gam_fast:11.0f} {1.0:11.2f}")
    print(f"{'bare n x d rng.standard_gamma draws (numba)':52s} {gam_np:11.0f} {gam_fast / gam_np:11.2f}")
    print(f"{'pure NumPy (Generator.dirichlet + censored mean)':52s} {ref:11.0f} {gam_fast / ref:11.2f}")
    for jobs, v in par.items():
        print(f"{f'simulate_releases (map_blocks), n_jobs = {jobs}':52s} {v:11.0f} {gam_fast / v:11.2f}")
    print(f"kernel / NumPy: {kern / ref:.1f}x faster; two threads / one: {par[2] / par[1]:.2f}x")

    print("== memory per simulation")
    big = 20_000_000
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    A._censored_stat_sim_kernel(ALPHA, big, log_a, rng)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"kernel, n = {big:,}: peak resident memory grew by {(after - before) / 1024:.1f} MB "
          f"(records would take {big * ALPHA.size * 8 / 2**20:.0f} MB)")
    tracemalloc.start()
    A._censored_stat_sim_reference(ALPHA, N, A_CENS, rng)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"pure NumPy, n = {N}: peak {peak / 2**20:.2f} MB (the records: {N * ALPHA.size * 8 / 2**20:.2f} MB); "
          f"kernel state: {3 * ALPHA.size} floats = {3 * ALPHA.size * 8} bytes")


if __name__ == "__main__":
    main()
