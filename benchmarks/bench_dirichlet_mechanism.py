"""Benchmark of dplit.dirichlet_mechanism: one release, the calibration, the exact Renyi divergence.

Run from the repository root: ``.venv/bin/python benchmarks/bench_dirichlet_mechanism.py`` (seconds).
Baselines in the same process, on the same inputs: the floor of a release (d gamma variates and a
normalisation, bare NumPy), NumPy's ``Generator.dirichlet`` (a peer), and for the divergence the
four-log-gamma formula of the paper's eq. 12 written plainly (fast, but it loses the answer for
large parameters: its relative error is printed next to ours).
"""

import numpy as np
from _timing import best_of
from scipy import special

from dplit.dirichlet_mechanism import (
    dirichlet_mechanism,
    dirichlet_mechanism_params,
    renyi_divergence_dirichlet,
)

SEED = 20260417


def plain_renyi(u, v, lam):
    """Eq. 11-12 with four log-gammas per cell, no care for cancellation (the baseline)."""
    w = u + (lam - 1) * (u - v)

    def log_b(a):
        return special.gammaln(a).sum(-1) - special.gammaln(a.sum(-1))

    return ((lam - 1) * (log_b(v) - log_b(u)) + log_b(w) - log_b(u)) / (lam - 1)


def main():
    rng = np.random.default_rng(SEED)
    print("one release at (lam, eps) = (5, 1): time per call, and against the floor / NumPy's dirichlet")
    r, alpha = dirichlet_mechanism_params(1.0, 5)
    t_cal = best_of(lambda: dirichlet_mechanism_params(1.0, 5), repeat=5, number=200)
    print(f"  calibration (root of Alg. 1 line 1 to machine precision): {t_cal * 1e6:8.1f} us")
    for d in (10, 1_000, 100_000):
        f = rng.integers(0, 50, d).astype(float)
        t = best_of(lambda: dirichlet_mechanism(f, 1.0, 5, rng=rng), repeat=5, number=20)  # noqa: B023

        def floor():
            g = rng.standard_gamma(r * f + alpha)  # noqa: B023
            return g / g.sum()

        t_floor = best_of(floor, repeat=5, number=20)
        t_np = best_of(lambda: rng.dirichlet(r * f + alpha), repeat=5, number=20)  # noqa: B023
        print(f"  d = {d:>7}: {t * 1e6:9.1f} us   floor {t_floor * 1e6:9.1f} us ({t / t_floor:4.1f}x)   "
              f"numpy dirichlet {t_np * 1e6:9.1f} us")

    print("\nexact Renyi divergence, two cells moved by 1, lam = 5: value, relative error vs the "
          "leading term lam psi'(a) (next term O(1/a)), time")
    lam = 5.0
    for a in (1e2, 1e4, 1e6, 1e8):
        u = np.array([a, a, 2 * a])
        v = u + np.array([1.0, -1.0, 0.0])
        lead = lam * special.polygamma(1, a)
        ours, plain = renyi_divergence_dirichlet(u, v, lam), plain_renyi(u, v, lam)
        t_ours = best_of(lambda: renyi_divergence_dirichlet(u, v, lam), number=200)  # noqa: B023
        t_plain = best_of(lambda: plain_renyi(u, v, lam), number=200)  # noqa: B023
        print(f"  a = {a:7.0e}: D = {ours:.6e}  rel. err. ours {abs(ours / lead - 1):.1e}, "
              f"plain {abs(plain / lead - 1):.1e}   time {t_ours * 1e6:6.1f} us vs plain {t_plain * 1e6:5.1f} us")


if __name__ == "__main__":
    main()
