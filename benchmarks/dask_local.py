"""Run a command against a Dask LocalCluster: start the cluster, pass its address as ``--scheduler``, stop it after.

    python benchmarks/dask_local.py --workers 2 -- dplit study run --config benchmarks/sec51.toml \\
        --store benchmarks/results/sec51_study.jsonl

What ``dplit study run --scheduler tcp://...`` does on a real cluster, shown on this machine: one single-threaded
worker process per core, each task single-threaded too (``NUMBA_NUM_THREADS=1``).
"""

import argparse
import os
import subprocess
import sys


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    p.add_argument("command", nargs=argparse.REMAINDER, help="the command after --, e.g. dplit study run ...")
    args = p.parse_args(argv)
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        p.error("give the command to run after --")
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    from distributed import LocalCluster

    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        print(f"Dask LocalCluster at {cluster.scheduler_address} with {args.workers} workers", flush=True)
        return subprocess.call([*cmd, "--scheduler", cluster.scheduler_address])


if __name__ == "__main__":
    sys.exit(main())
