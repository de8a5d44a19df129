"""The simulation-study runner (notebook 62_study, dplit.study): wall time, tasks per minute,
and scaling from 1 to 2 worker processes on the same study.

The study is a slice of the notebook's reduced study (alpha_3 = (2.2, 3.3, 4.4), n = 1000, eps = 0.5, quick
effort, 4 data sets, 6 methods: 24 tasks). Each run writes a fresh store in a temporary folder; the
baseline is the same study run in the calling process (SerialExecutor, no process start-up). Seeds come
from the task keys, so every run computes the same numbers.

    .venv/bin/python benchmarks/bench_study.py
"""

import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from dplit.study import SerialExecutor, StudyConfig, make_tasks, run_study

CFG = StudyConfig(alpha_true=((2.2, 3.3, 4.4),), n=(1000,), eps=(0.5,), replicates=4, quick=True, seed=3,
                  methods=("boots", "dpboots", "dpmcmc_p1", "dpremcmc_p1", "dpabc_p4", "dpapprox_p4"))


def timed(executor_factory):
    with tempfile.TemporaryDirectory() as d:
        ex = executor_factory()
        t0 = time.perf_counter()
        res = run_study(CFG, Path(d) / "s.sqlite", executor=ex, progress=False)
        wall = time.perf_counter() - t0
        ex.shutdown()
        t1 = time.perf_counter()
        again = run_study(CFG, Path(d) / "s.sqlite", executor=SerialExecutor(), progress=False)
        resume = time.perf_counter() - t1
    assert res.ran == len(make_tasks(CFG)) and again.ran == 0
    return wall, resume


def main():
    n = len(make_tasks(CFG))
    run_study(CFG, Path(tempfile.mkdtemp()) / "warm.sqlite", executor=SerialExecutor(), progress=False, max_tasks=6)
    print(f"study: {n} tasks (1 alpha x n=1000 x eps=0.5 x 4 data sets x 6 methods, quick effort)")
    rows = [("in process (SerialExecutor)", SerialExecutor),
            ("1 worker process", lambda: ProcessPoolExecutor(1)),
            ("2 worker processes", lambda: ProcessPoolExecutor(2))]
    base = None
    for name, factory in rows:
        wall, resume = timed(factory)
        base = base or wall
        print(f"{name:28s} {wall:6.1f} s  {60 * n / wall:6.0f} tasks/min  speed-up {base / wall:4.2f}  "
              f"(rerun of the finished study: {1000 * resume:.0f} ms, nothing written)")


if __name__ == "__main__":
    main()
