"""Latent-class synthesis (notebook 14_latent_class): cost of the marginal probabilities vs p and k, sampler
speed, BayesLCM's documented example (ESS per second next to BayesLCM's recorded 0.113), and, with
``--coverage``, the ACS coverage study of Nixon et al. Table 3 whose small results the notebook reads.

    .venv/bin/python benchmarks/bench_latent_class.py                    # figures (about a minute)
    .venv/bin/python benchmarks/bench_latent_class.py --coverage --reps 40   # writes latent_class_coverage.json
"""

import argparse
import csv
import itertools
import json
import math
import sys
import time
import warnings
from pathlib import Path

import arviz as az
import numpy as np

from dplit.datasets import load_acs_counts
from dplit.latent_class import (
    MarginRelease,
    _margin_probs_kernel,
    _margin_probs_reference,
    cell_index,
    cell_intervals,
    fit_latent_class,
    ipf_table,
    release_margins,
)
from dplit.sampling import ConvergenceWarning

sys.path.insert(0, str(Path(__file__).parent))
from _timing import best_of  # noqa: E402

HERE = Path(__file__).parent
BAYESLCM_CSV = HERE.parent.parent / "shared" / "benchmarks" / "bayeslcm_example_noisy_margins.csv"
COVERAGE_JSON = HERE / "latent_class_coverage.json"
PAIRS5 = list(itertools.combinations(range(5), 2))
TABLE3_POP = np.array([
    0.002, 0.061, 0.044, 0.894, 0.031, 0.031, 0.174, 0.763, 0.031, 0.031, 0.453, 0.485, 0.027, 0.035, 0.298, 0.640,
    0.011, 0.035, 0.195, 0.759, 0.024, 0.022, 0.461, 0.493, 0.045, 0.001, 0.280, 0.674, 0.098, 0.108, 0.386, 0.408,
    0.086, 0.120, 0.239, 0.555, 0.127, 0.357, 0.198, 0.318])


def _params(k, p, rng):
    Psi = np.zeros((k, p, 2))
    Psi[:, :, 0] = rng.uniform(0.05, 0.95, (k, p))
    Psi[:, :, 1] = 1 - Psi[:, :, 0]
    return rng.dirichlet(np.ones(k)), Psi


def marginal_cost():
    """Time for all two-way cell probabilities vs p and k; eq. (8)'s full-table sum as the baseline."""
    print("all two-way cell probabilities (O(k x cells)) vs the full-table sum of eq. (8)")
    print(f"{'p':>4} {'k':>4} {'cells':>6} {'ours (us)':>10} {'eq. (8) (us)':>13}")
    rng = np.random.default_rng(1)
    for p in (5, 10, 16, 30):
        for k in (5, 10, 20):
            pi, Psi = _params(k, p, rng)
            pairs = list(itertools.combinations(range(p), 2))
            idx = cell_index((2,) * p, pairs)
            args = (pi, Psi, idx.cell_var, idx.cell_lev, idx.cell_ord)
            _margin_probs_kernel(*args)
            ours = best_of(lambda a=args: _margin_probs_kernel(*a), repeat=5, number=20) * 1e6
            ref = "(2^p cells)"
            if p <= 16:
                ref = best_of(lambda a=(pi, Psi, (2,) * p, pairs): _margin_probs_reference(*a), repeat=2) * 1e6
                ref = f"{ref:13.0f}"
            print(f"{p:>4} {k:>4} {idx.n_cells:>6} {ours:>10.1f} {ref:>13}")


def _bayeslcm_release():
    rows = list(csv.DictReader(open(BAYESLCM_CSV)))
    n = 10_000
    counts = [round(float(r["noisy_prop"]) * n) for r in rows]
    truth = np.array([float(r["truth_pop"]) for r in rows])
    sample = np.array([float(r["sample_prop"]) for r in rows])
    rel = MarginRelease.from_counts(np.split(np.array(counts), 10), PAIRS5, (2,) * 5, n, 1.0)
    return rel, truth, sample


def bayeslcm_example(n_iter=5000, n_warmup=1000, seed=1):
    """BayesLCM's documented example (k = 3): min ESS_bulk/s over the 40 cells next to its 0.113."""
    if not BAYESLCM_CSV.exists():
        print(f"BayesLCM example: {BAYESLCM_CSV} not found, skipped")
        return None
    rel, truth, sample = _bayeslcm_release()
    fit_latent_class(rel, k=3, n_iter=100, n_warmup=100, n_chains=1, rng=0, progress=False)   # compile
    out = {}
    for strategy in ("gamma", "dirichlet"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            t0 = time.process_time()
            res = fit_latent_class(rel, k=3, pi_strategy=strategy, n_iter=n_iter, n_warmup=n_warmup, n_chains=1,
                                   rng=seed, progress=False, n_jobs=1)
            cpu = time.process_time() - t0
        ess = az.ess(res, var_names=["margin_probs"], method="bulk")["margin_probs"].values
        mean, lo, hi = cell_intervals(res.posterior["margin_probs"].values)
        out[strategy] = dict(it_per_s=(n_iter + n_warmup) / cpu, ess_min_per_s=float(ess.min() / cpu),
                             ess_median_per_s=float(np.median(ess) / cpu), mae=float(np.abs(mean - truth).mean()),
                             worst=float(np.abs(mean - truth).max()), width=float((hi - lo).mean()),
                             cover_pop=float(np.mean((lo <= truth) & (truth <= hi))),
                             cover_sample=float(np.mean((lo <= sample) & (sample <= hi))))
        o = out[strategy]
        print(f"BayesLCM example, pi_strategy={strategy}: {o['it_per_s']:.0f} it/CPU-s (BayesLCM 3.98), min "
              f"ESS_bulk/s {o['ess_min_per_s']:.1f} (BayesLCM 0.113: x{o['ess_min_per_s'] / 0.113:.0f}), median "
              f"{o['ess_median_per_s']:.1f} (0.166); error vs population mean {o['mae']:.4f} (BayesLCM 0.0099), "
              f"worst {o['worst']:.4f} (0.0355); mean 95% width {o['width']:.4f}; coverage of population "
              f"{o['cover_pop']:.2f}, of sample {o['cover_sample']:.2f}")
    return out


def _populations():
    counts, _ = load_acs_counts()
    return {"acs2018_14states": counts / counts.sum(),
            "table3_ipf": ipf_table((2,) * 5, PAIRS5, np.split(TABLE3_POP, 10))}


def coverage(reps, n=10_000, k=10, n_iter=3000, n_warmup=2000, seed=20261126):
    """Table 3: coverage and mean length of the 95% intervals of the 40 population two-way probabilities."""
    out = {"command": f"benchmarks/bench_latent_class.py --coverage --reps {reps}", "n": n, "k": k,
           "n_iter": n_iter, "n_warmup": n_warmup, "n_chains": 2, "reps": reps, "populations": {}}
    eps_list = [0.25, 0.5, 1.0, math.inf]
    for (name, pop), weight in itertools.product(_populations().items(), (1.0, "auto")):
        truth = np.concatenate([pop.sum(axis=tuple(j for j in range(5) if j not in m)).ravel() for m in PAIRS5])
        cover = {e: [] for e in eps_list}
        length = {e: [] for e in eps_list}
        t0 = time.time()
        gen = np.random.default_rng(seed)          # the same samples and noise for both weights
        for rep in range(reps):
            cells = gen.choice(32, size=n, p=pop.ravel())
            x = np.array(np.unravel_index(cells, (2,) * 5)).T
            for e in eps_list:
                rel = release_margins(x, PAIRS5, eps=e, rng=gen, secure=False)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    res = fit_latent_class(rel, k=k, weight=weight, n_iter=n_iter, n_warmup=n_warmup, n_chains=2,
                                           rng=gen, progress=False, n_jobs=1)
                _, lo, hi = cell_intervals(res.posterior["margin_probs"].values)
                cover[e].append(((lo <= truth) & (truth <= hi)).tolist())
                length[e].append((hi - lo).tolist())
            print(f"{name}, weight {weight}: rep {rep + 1}/{reps} ({time.time() - t0:.0f} s)", flush=True)
        out["populations"][f"{name}, weight {weight}"] = {
            "truth": truth.tolist(),
            "coverage": {str(e): np.mean(cover[e], axis=0).tolist() for e in eps_list},
            "length": {str(e): np.mean(length[e], axis=0).tolist() for e in eps_list}}
        print(name, weight, {str(e): round(float(np.mean(cover[e])), 3) for e in eps_list})
    COVERAGE_JSON.write_text(json.dumps(out, indent=1))
    print(f"wrote {COVERAGE_JSON}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--coverage", action="store_true", help="run the ACS coverage study and store its results")
    ap.add_argument("--reps", type=int, default=40)
    args = ap.parse_args()
    if args.coverage:
        coverage(args.reps)
    else:
        marginal_cost()
        bayeslcm_example()
