"""Benchmark of dplit.approx (notebook 23): DPapprox against DPMCMC, ESS per second as n grows.

Run from the repository root:  .venv/bin/python benchmarks/bench_approx.py [--full]

Prints, for n in {1000, 5000, 100000} (alpha = (2.2, 3.3, 4.4), Algorithm 1 with eps1 = 0.75,
eps2 = 0.25, the paper's candidates, tc = 0.01; one release per n, the same for both samplers):
the time per iteration and the min bulk ESS of alpha per second of run time (warm-up included)
for DPMCMC (notebook 21, its defaults n_slice = 20) and DPapprox (blocked update, n_mh = 5), two
chains each on at most two threads, and their ratio. DPMCMC sweeps every latent record, so its
cost per iteration grows like n; DPapprox's does not depend on n.
ESS is ArviZ's rank-normalised bulk ESS. Timings exclude numba compilation (a warm-up call first).
The machine is shared: figures move from run to run; the ratios in the same process are the point.
"""

import argparse
import warnings

import numpy as np

from dplit.approx import dp_approx
from dplit.dirichlet import dirichlet_draws
from dplit.mcmc import dp_mcmc
from dplit.release import release
from dplit.sampling import ConvergenceWarning

CANDIDATES = [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6]


def ess_per_s(res):
    """(min bulk ESS of alpha, run time in s, ESS per second) from a result's convergence report."""
    att = res.posterior.attrs
    return att["ess_bulk_min"], att["runtime"], att["ess_bulk_min"] / att["runtime"]


def main(full=False):
    alpha = np.array([2.2, 3.3, 4.4])
    rng = np.random.default_rng(1)
    warm = release(dirichlet_draws(alpha, 200, rng=rng), eps1=0.75, eps2=0.25, candidates=CANDIDATES, tc=0.01, rng=rng, secure=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dp_approx(warm, n_iter=100, n_warmup=50, n_chains=1, thin=1, progress=False, rng=0)   # compile
        dp_mcmc(warm, n_iter=100, n_warmup=50, n_chains=1, thin=1, progress=False, rng=0)
    print(f"{'n':>7s} {'a':>6s} | {'DPMCMC us/it':>12s} {'ESS':>6s} {'ESS/s':>8s} | {'DPapprox us/it':>14s} "
          f"{'ESS':>6s} {'ESS/s':>8s} | {'ratio':>6s}")
    for n in (1000, 5000, 100_000):
        X = dirichlet_draws(alpha, n, rng=rng)
        rel = release(X, eps1=0.75, eps2=0.25, candidates=CANDIDATES, tc=0.01, rng=rng, secure=False)
        it_mcmc = (20_000 if full else 6_000) if n < 100_000 else (6_000 if full else 1_500)
        kw_m = dict(n_iter=it_mcmc, n_warmup=max(500, it_mcmc // 10), n_chains=2, thin=10, progress=False)
        kw_a = dict(n_iter=200_000 if full else 40_000, n_warmup=2_000, n_chains=2, thin=10, progress=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            m = dp_mcmc(rel, rng=2, **kw_m)
            ap = dp_approx(rel, rng=3, **kw_a)
        em, tm, rm = ess_per_s(m)
        ea, ta, ra = ess_per_s(ap)
        us_m = 1e6 * tm / (kw_m["n_iter"] + kw_m["n_warmup"])     # the two chains run side by side
        us_a = 1e6 * ta / (kw_a["n_iter"] + kw_a["n_warmup"])
        print(f"{n:7d} {rel.a:6g} | {us_m:12.1f} {em:6.0f} {rm:8.1f} | {us_a:14.2f} {ea:6.0f} {ra:8.0f} | "
              f"{ra / rm:6.0f}", flush=True)
    print("us/it: wall time per iteration of one chain (two chains on two threads); ESS/s over the whole run.")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--full", action="store_true", help="longer chains")
    main(parser.parse_args().full)
