"""Timing helper shared by the benchmark scripts (run as ``python benchmarks/bench_<topic>.py``)."""

import time


def best_of(fn, repeat=3, number=1):
    """Smallest wall time per call of ``fn()`` over ``repeat`` batches of ``number`` calls (seconds)."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return min(times)
