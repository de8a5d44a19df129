"""Benchmark of dplit.bootstrap: bootstrap replicates per second at n = 5000, d = 5.

Baselines in the same process, on the same inputs:
- the pure-NumPy reference twin of the bootstrap loop (`_boots_reference`);
- the bare cost of the random draws (n x d gamma variates per replicate, numba);
- the truncated-noise step alone (rejection and Gibbs), per draw.

Run: .venv/bin/python benchmarks/bench_bootstrap.py [--n-boot 200]
"""

import argparse

import numpy as np
from _timing import best_of as _best_of

from dplit.bootstrap import (
    _boots_kernel,
    _boots_reference,
    dp_boots,
    truncated_statistic,
)
from dplit.dirichlet import dirichlet_draws
from dplit.dirichlet_random import gamma_draws_fast_kernel as _gamma_draws_fast_kernel
from dplit.dirichlet_random import gamma_draws_kernel as _gamma_draws_kernel
from dplit.release import release


def best_of(fn, repeat=5, number=1):
    """:func:`_timing.best_of` with 5 repeats by default (short, noisy timings)."""
    return _best_of(fn, repeat=repeat, number=number)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-boot", type=int, default=200)
    parser.add_argument("--n", type=int, default=5000)
    args = parser.parse_args()
    n, n_boot = args.n, args.n_boot
    alpha = np.array([2.2, 3.3, 4.4, 5.5, 6.6])
    d = alpha.size
    rng = np.random.default_rng(1)
    X = dirichlet_draws(alpha, n, rng=rng)
    rel = release(X, eps1=0.75, eps2=0.25, candidates=[1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1], tc=0.01, rng=rng, secure=False)
    tilde = truncated_statistic(rel.s_L, rel.scale, n_boot, rng=2)
    # compile
    for fast in (True, False):
        _boots_kernel(tilde[:2], n, rel.a, 0, 20, 1e-10, 100, fast, np.random.default_rng(0))
    _gamma_draws_kernel(alpha, 10, np.random.default_rng(0))
    _gamma_draws_fast_kernel(alpha, 10, np.random.default_rng(0))
    dp_boots(rel, 2, rng=0)

    print(f"DPBoots replicates at n = {n}, d = {d}, a = {rel.a:g}, eps = 1 ({n_boot} replicates per timing)")
    t_kernel = best_of(lambda: _boots_kernel(tilde, n, rel.a, 0, 20, 1e-10, 100, True, np.random.default_rng(3)))
    t_kernel_np = best_of(lambda: _boots_kernel(tilde, n, rel.a, 0, 20, 1e-10, 100, False, np.random.default_rng(3)))
    n_ref = max(10, n_boot // 10)
    t_ref = best_of(lambda: _boots_reference(tilde[:n_ref], n, rel.a, 0, 20, 1e-10, 100,
                                             np.random.default_rng(3)), repeat=2) * n_boot / n_ref
    t_gamma = best_of(lambda: [_gamma_draws_fast_kernel(alpha, n, np.random.default_rng(4)) for _ in range(n_boot)])
    t_gamma_np = best_of(lambda: [_gamma_draws_kernel(alpha, n, np.random.default_rng(4)) for _ in range(n_boot)])
    t_full = best_of(lambda: dp_boots(rel, n_boot, rng=5))
    rows = [("numba kernel (steps iii-v), fast gammas", t_kernel),
            ("numba kernel, NumPy-stream gammas", t_kernel_np), ("NumPy reference twin", t_ref),
            ("floor: n x d fast gamma draws only", t_gamma), ("floor: n x d standard_gamma draws", t_gamma_np),
            ("dp_boots end to end (auto noise step)", t_full)]
    for name, t in rows:
        print(f"  {name:40s} {n_boot / t:10.0f} replicates/s  ({1e3 * t / n_boot:7.3f} ms each)")
    print(f"  kernel speed-up over the reference: {t_ref / t_kernel:.1f}x; kernel / gamma floor: "
          f"{t_kernel / t_gamma:.2f}")

    print("\nTruncated-noise step alone (draws per second)")
    s_edge = np.log(np.array([0.22, 0.25, 0.27, 0.15, 0.14]))
    s_far = np.full(5, -np.log(5) + 0.08)
    size = 20_000
    for label, s, m, method in (("inside the range, rejection", rel.s_L, rel.scale, "rejection"),
                                ("just outside, m = 0.05, rejection", s_edge, 0.05, "rejection"),
                                ("just outside, m = 0.05, Gibbs", s_edge, 0.05, "gibbs"),
                                ("far outside, m = 0.002, Gibbs (auto)", s_far, 0.002, "auto")):
        truncated_statistic(s, m, 10, rng=0, method=method)
        t = best_of(lambda s=s, m=m, method=method: truncated_statistic(s, m, size, rng=6, method=method), 2)
        _, info = truncated_statistic(s, m, size, rng=6, method=method, return_info=True)
        extra = f"thin {info['thin']}" if info["thin"] else f"acceptance {info['acceptance_rate']:.3f}"
        print(f"  {label:40s} {size / t:12.0f} draws/s  ({info['method']}, {extra})")


if __name__ == "__main__":
    main()
