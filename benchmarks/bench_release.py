"""Benchmark of dplit.release: the cost of one release (Algorithm 1), fast and secure paths.

Run from the repository root: ``.venv/bin/python benchmarks/bench_release.py`` (under a minute).
Baselines in the same process, on the same data: the bare data pass (the M + 1 counts and the
censored statistic, pure NumPy, what any implementation must compute), the bare noise draws
(NumPy Laplace + dplit's exact two-sided geometric), and the JSON round trip of the record.
"""


import numpy as np
from _timing import best_of as _best_of

from dplit.dirichlet import censored_stat
from dplit.mechanisms import sample_two_sided_geometric
from dplit.release import Release, censoring_counts, release

SEED = 20261123
CANDS = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1)



def best_of(fn, repeat=5, number=1):
    """:func:`_timing.best_of` with 5 repeats by default (short, noisy timings)."""
    return _best_of(fn, repeat=repeat, number=number)


def bare_pass(X, cands, a):
    """The floor: counts by the row minimum and the censored statistic, bare NumPy, no checks."""
    counts = np.bincount(np.searchsorted(cands, X.min(axis=1), side="right"), minlength=cands.size + 1)
    return counts, np.log(np.maximum(X, a)).mean(axis=0)


def row(X, rng):
    """Time one data set; returns the printed line."""
    n, d = X.shape
    cands = np.sort(CANDS)
    number = max(1, 20_000 // n)
    t_fast = best_of(lambda: release(X, eps1=0.75, eps2=0.25, candidates=CANDS, tc=0.01, rng=rng, secure=False), number=number)
    t_sec = best_of(lambda: release(X, eps1=0.75, eps2=0.25, candidates=CANDS, tc=0.01, rng=rng), repeat=3, number=max(1, number // 5))
    t_split = best_of(lambda: release(X, eps1=0.75, eps2=0.25, candidates=CANDS, tc=0.01, n1=n // 4, rng=rng, secure=False), number=number)
    t_checked = best_of(lambda: (censoring_counts(X, CANDS), censored_stat(X, 1e-3)), number=number)
    t_bare = best_of(lambda: bare_pass(X, cands, 1e-3), number=number)
    t_noise = best_of(lambda: (rng.laplace(0.0, 1.0, size=d), sample_two_sided_geometric(0.88, 7, rng=rng)),
                      number=200)
    return (f"{n:>9} {d:>2} | {t_fast * 1e3:>9.3f} {t_sec * 1e3:>9.3f} {t_split * 1e3:>9.3f} | "
            f"{t_checked * 1e3:>9.3f} {t_bare * 1e3:>9.3f} {t_noise * 1e6:>9.1f} | "
            f"{t_fast / t_bare:>9.2f} {t_sec / t_fast:>11.2f}")


def main():
    rng = np.random.default_rng(SEED)
    sample_two_sided_geometric(0.5, 10, rng=rng)  # compile the numba kernel before timing
    print("times per release in ms (noise draws in us); 'checked' = dplit's counts + censored_stat with input checks")
    print(f"{'n':>9} {'d':>2} | {'fast':>9} {'secure':>9} {'split':>9} | {'checked':>9} {'bare':>9} {'noise us':>9} | "
          f"{'fast/bare':>9} {'secure/fast':>11}")
    for n, d in ((1_000, 3), (100_000, 3), (1_000_000, 5)):
        print(row(rng.dirichlet(np.full(d, 2.0), size=n), rng))
    r = release(rng.dirichlet([2.0, 3.0, 4.0], size=1000), eps1=0.75, eps2=0.25, candidates=CANDS, tc=0.01, n1=250, rng=rng, secure=False)
    t_json = best_of(lambda: Release.from_json(r.to_json()), number=200)
    print(f"JSON round trip of a split release: {t_json * 1e6:.1f} us")


if __name__ == "__main__":
    main()
