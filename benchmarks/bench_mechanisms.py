"""Benchmark of dplit.mechanisms: samples per second, fast path vs reference twin vs secure (OpenDP).

Run: .venv/bin/python benchmarks/bench_mechanisms.py   (about a minute; nothing is asserted)
"""


import numpy as np
from _timing import best_of

from dplit import mechanisms as M


def row(label, n, seconds, base=None):
    rate = n / seconds
    extra = f"   x{base / seconds:6.2f} vs baseline" if base is not None else ""
    print(f"  {label:<46} {rate:14,.0f} /s{extra}")
    return seconds


def main():
    rng = np.random.default_rng(0)
    n_fast, n_slow = 2_000_000, 100_000
    # compile the kernels first
    M.sample_two_sided_geometric(0.5, 10, rng=rng)
    M.sample_discrete_gaussian(2.0, 10, rng=rng, secure=False)
    M.laplace_mechanism([0.0], 1, 1, secure=True)

    print("Laplace noise (scale 1)")
    bare = best_of(lambda: rng.standard_exponential(n_fast))
    row("bare: n standard exponentials (NumPy)", n_fast, bare)
    row("laplace_mechanism, fast (NumPy)", n_fast,
        best_of(lambda: M.laplace_mechanism(np.zeros(n_fast), 1.0, 1.0, rng=rng, secure=False)), bare * 1)
    sec = best_of(lambda: M.laplace_mechanism(np.zeros(n_slow), 1.0, 1.0, secure=True))
    row("laplace_mechanism, secure (OpenDP)", n_slow, sec)
    fast = best_of(lambda: M.laplace_mechanism(np.zeros(n_slow), 1.0, 1.0, rng=rng, secure=False))
    print(f"  secure / fast time per draw: {sec / fast:,.0f}")

    t = np.exp(-0.5)
    print(f"\nTwo-sided geometric, t = {t:.3f} (geometric mechanism, eps = 1, sensitivity = 2)")
    bare = best_of(lambda: rng.standard_exponential(2 * n_fast))
    row("bare: 2n standard exponentials (NumPy)", n_fast, bare)
    row("_two_sided_geometric_kernel (numba)", n_fast,
        best_of(lambda: M.sample_two_sided_geometric(t, n_fast, rng=rng)), bare)
    ref = best_of(lambda: M._two_sided_geometric_kernel.py_func(t, n_slow, rng), 1)
    row("_two_sided_geometric_kernel.py_func (Python)", n_slow, ref)
    row("NumPy: geometric(1-t) - geometric(1-t)", n_fast,
        best_of(lambda: rng.geometric(1 - t, n_fast) - rng.geometric(1 - t, n_fast)), bare)
    k = best_of(lambda: M.sample_two_sided_geometric(t, n_slow, rng=rng))
    sec = best_of(lambda: M.geometric_mechanism(np.zeros(n_slow, dtype=int), 2, 1.0, secure=True))
    row("geometric_mechanism, secure (OpenDP)", n_slow, sec)
    print(f"  kernel speed-up over reference: {ref / k:,.0f}; secure / kernel time: {sec / k:,.0f}")

    print("\nDiscrete Gaussian")
    for sigma in [1.0, 6.32, 100.0]:
        bare = best_of(lambda: rng.standard_exponential(2 * n_fast))
        kern = best_of(lambda s=sigma: M.sample_discrete_gaussian(s, n_fast, rng=rng, secure=False))
        row(f"kernel (numba), sigma = {sigma}", n_fast, kern)
        print(f"    (bare cost of one proposal's 2 exponentials: {n_fast / bare:,.0f} /s)")
        ref = best_of(lambda s=sigma: M._discrete_gaussian_reference(s, n_slow, rng), 1)
        row(f"reference (Python), sigma = {sigma}", n_slow, ref)
        sec = best_of(lambda s=sigma: M.sample_discrete_gaussian(s, n_slow, secure=True))
        row(f"secure (OpenDP make_gaussian), sigma = {sigma}", n_slow, sec)
        print(f"    kernel speed-up over reference: {ref / (kern * n_slow / n_fast):,.0f}; "
              f"secure / kernel: {sec / (kern * n_slow / n_fast):,.0f}")

    print("\nRandomized response")
    x = (rng.random(n_fast) < 0.5).astype(np.int64)
    row("randomized_response (NumPy)", n_fast, best_of(lambda: M.randomized_response(x, rng=rng)))

    print("\naudit_epsilon (two samples of n each)")
    for n in [100_000, 1_000_000]:
        a = rng.laplace(0.0, 1.0, n)
        b = rng.laplace(1.0, 1.0, n)
        s = best_of(lambda a=a, b=b: M.audit_epsilon(a, b))
        print(f"  n = {n:>9,}: {s:.3f} s per audit (sort {best_of(lambda a=a: np.sort(a)):.3f} s per sample)")


if __name__ == "__main__":
    main()
