"""dapper's Example 3 at the paper's settings, over many simulated data sets (issue 30, item 7).

Run from the repository root (resumable: data sets already in the result file are not run again):

    NUMBA_NUM_THREADS=1 nice -n 19 .venv/bin/python benchmarks/dapper_example3.py --datasets 100

Writes benchmarks/results/dapper_example3.json.

The paper (Eng et al., "dapper", Sec. 5, Example 3, after Ju et al. 2022): n = 50 records, x_i ~ N_2((0.9, -1.17), I),
y_i = -1.79 - 2.89 x_i1 - 0.66 x_i2 + e_i with e_i ~ N(0, 2) (its code: sd = sqrt(2)), every value clamped to
[-10, 10] and divided by 10, the nine distinct entries of (x'y, y'y, x'x) released with Laplace(Delta / eps) noise,
Delta = 15, eps = 10; prior beta ~ N(0, 4 I). Its run: 25,000 MCMC draws with a burn-in of 1,000 (dapper_sample's
niter = 25000, warmup = 1000: 24,000 kept). The paper does not print the number of chains or init_par: we take
dapper's default chains = 1 and init_par = 0. Its summary table (one data set, R's set.seed(1)):

    beta0  mean -0.916  sd 1.49  q5 -3.42  q95 1.46   rhat 1.00  ess_bulk 525
    beta1  mean -1.96   sd 1.41  q5 -3.78  q95 0.934  rhat 1.01  ess_bulk 153
    beta2  mean  0.734  sd 1.30  q5 -1.35  q95 2.94   rhat 1.02  ess_bulk 163

R's generator is not reproduced here, so the paper's own data set is not either. Instead, each data set d = 1, 2, ...
is drawn from the paper's data-generating values with numpy's generator seeded (SEED, d), and on each:

* the paper's chain: one chain, 1,000 warm-up + 24,000 kept iterations, from beta = 0 (dplit.augmentation.summary:
  dapper's columns);
* a reference run of the same sampler, 4 chains x 100,000 iterations thinned by 5 after 2,000 warm-up, to tell how
  far the paper-length chain's summary is from the posterior (its mean error in reference posterior sds);
* the confidential-data posterior (closed form), for the privacy cost: the ratio of private to confidential sd.

The modules are the numba modules of examples/dapper_examples.py (notebook 82). The aggregate (medians and 5-95% ranges over
data sets, and where the paper's figures fall among them) is recomputed from all rows at every write.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import warnings
from datetime import date
from pathlib import Path

import numpy as np

from dplit.augmentation import dapper_sample, summary
from dplit.sampling import ConvergenceWarning

# dapper's example models live in examples/ (exported by notebook 82), outside the library
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from dapper_examples import (  # noqa: E402
    BETA_TRUE,
    DELTA_REG,
    EPS_REG,
    MU_X,
    N_REG,
    NAMES_REG,
    SIGMA2_REG,
    TAU2_REG,
    example3_data,
    example3_model,
    example3_posterior,
    example3_release,
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "benchmarks", "results", "dapper_example3.json")
COMMAND = "NUMBA_NUM_THREADS=1 nice -n 19 .venv/bin/python benchmarks/dapper_example3.py --datasets {datasets}"
SEED = 20261126
PAPER_CHAIN = {"n_iter": 24_000, "n_warmup": 1_000, "n_chains": 1, "thin": 1, "init_par": [0.0, 0.0, 0.0]}
REFERENCE = {"n_iter": 100_000, "n_warmup": 2_000, "n_chains": 4, "thin": 5}
PAPER_SUMMARY = {
    "source": "Eng et al., dapper, Sec. 5, Example 3: summary(dp_out), one data set (R set.seed(1))",
    "mean": [-0.916, -1.96, 0.734], "median": [-0.864, -2.26, 0.727], "sd": [1.49, 1.41, 1.30],
    "mad": [1.49, 1.12, 1.37], "q5": [-3.42, -3.78, -1.35], "q95": [1.46, 0.934, 2.94],
    "rhat": [1.00, 1.01, 1.02], "ess_bulk": [525, 153, 163], "ess_tail": [890, 318, 484]}
SETTINGS = {"n": N_REG, "eps": EPS_REG, "Delta": DELTA_REG, "beta": BETA_TRUE.tolist(), "mu_x": MU_X.tolist(),
            "sigma2": SIGMA2_REG, "tau2": TAU2_REG, "paper_chain": PAPER_CHAIN, "reference_chain": REFERENCE,
            "data_seed": f"numpy default_rng([{SEED}, d]) for data set d"}
COLUMNS = ("mean", "median", "sd", "mad", "q5", "q95", "rhat", "ess_bulk", "ess_tail")


def run(model, sdp, init, settings, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)    # R-hat and ESS are stored, and judged in aggregate
        return dapper_sample(model, sdp, np.asarray(init, float), n_iter=settings["n_iter"],
                             n_warmup=settings["n_warmup"], n_chains=settings["n_chains"], thin=settings["thin"],
                             rng=seed, progress=False, n_jobs=1)


def one_dataset(model, d):
    """The row of data set d: its release, the paper-length chain's summary, the reference and confidential
    posteriors."""
    rng = np.random.default_rng([SEED, d])
    dmat = example3_data(rng)
    sdp = example3_release(dmat, rng)
    t0 = time.process_time()
    tab = summary(run(model, sdp, PAPER_CHAIN["init_par"], PAPER_CHAIN, [SEED, d, 1]))
    cpu_paper = time.process_time() - t0
    ref = run(model, sdp, np.zeros(3), REFERENCE, [SEED, d, 2])
    ref_draws = np.stack([ref.posterior[v].values.ravel() for v in NAMES_REG], axis=1)
    ref_tab = summary(ref)
    m_conf, c_conf = example3_posterior(dmat)
    row = {"dataset": d, "sdp": [round(float(v), 6) for v in sdp],
           "paper_chain": {c: [round(float(x), 5) for x in tab[c]] for c in COLUMNS},
           "paper_chain_cpu_s": round(cpu_paper, 2),
           "reference": {"mean": ref_draws.mean(0).round(5).tolist(), "sd": ref_draws.std(0).round(5).tolist(),
                         "rhat": [round(float(x), 4) for x in ref_tab["rhat"]],
                         "ess_bulk": [round(float(x), 1) for x in ref_tab["ess_bulk"]]},
           "confidential": {"mean": m_conf.round(5).tolist(), "sd": np.sqrt(np.diag(c_conf)).round(5).tolist()}}
    ref_mean, ref_sd = np.array(row["reference"]["mean"]), np.array(row["reference"]["sd"])
    row["paper_chain_error_in_sd"] = ((np.array(row["paper_chain"]["mean"]) - ref_mean) / ref_sd).round(4).tolist()
    row["true_beta_in_paper_chain_90"] = [bool(lo <= b <= hi) for lo, hi, b in
                                          zip(row["paper_chain"]["q5"], row["paper_chain"]["q95"], BETA_TRUE)]
    return row


def aggregate(rows):
    """Medians and 5-95% ranges over data sets, and the share of data sets below each of the paper's figures."""
    def spread(values):
        v = np.asarray(values, float)
        return {"median": np.round(np.median(v, axis=0), 4).tolist(),
                "q05": np.round(np.quantile(v, 0.05, axis=0), 4).tolist(),
                "q95": np.round(np.quantile(v, 0.95, axis=0), 4).tolist()}

    pc = {c: np.array([r["paper_chain"][c] for r in rows]) for c in COLUMNS}
    ref_sd = np.array([r["reference"]["sd"] for r in rows])
    conf_sd = np.array([r["confidential"]["sd"] for r in rows])
    err = np.abs(np.array([r["paper_chain_error_in_sd"] for r in rows]))
    mcse = 1.0 / np.sqrt(pc["ess_bulk"])                      # the paper chain's own Monte Carlo s.e., in sds
    paper = PAPER_SUMMARY
    return {
        "datasets": len(rows),
        "paper_chain_sd": spread(pc["sd"]), "reference_sd": spread(ref_sd),
        "paper_chain_ess_bulk": spread(pc["ess_bulk"]), "paper_chain_ess_tail": spread(pc["ess_tail"]),
        "paper_chain_rhat": spread(pc["rhat"]),
        "paper_chain_ess_bulk_per_iteration": spread(pc["ess_bulk"] / (PAPER_CHAIN["n_iter"] + PAPER_CHAIN["n_warmup"])),
        "sd_private_over_confidential": spread(ref_sd / conf_sd),
        "abs_mean_error_in_sd": spread(err),
        "share_mean_error_within_2_mcse": np.round(np.mean(err <= 2 * mcse, axis=0), 3).tolist(),
        "share_rhat_above_1_01": np.round(np.mean(pc["rhat"] > 1.01, axis=0), 3).tolist(),
        "coverage_of_true_beta_90": np.round(np.mean([r["true_beta_in_paper_chain_90"] for r in rows], axis=0),
                                             3).tolist(),
        "share_of_datasets_below_paper": {
            "sd": np.round(np.mean(pc["sd"] < np.array(paper["sd"]), axis=0), 3).tolist(),
            "ess_bulk": np.round(np.mean(pc["ess_bulk"] < np.array(paper["ess_bulk"]), axis=0), 3).tolist(),
            "rhat": np.round(np.mean(pc["rhat"] < np.array(paper["rhat"]), axis=0), 3).tolist()},
    }


def write(rows, datasets, started):
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True).stdout.strip()
    except OSError:
        commit = ""
    out = {"command": COMMAND.format(datasets=datasets), "date": date.today().isoformat(), "dplit_commit": commit,
           "python": platform.python_version(), "numpy": np.__version__, "settings": SETTINGS,
           "paper": PAPER_SUMMARY, "aggregate": aggregate(rows), "rows": rows,
           "seconds_this_run": round(time.time() - started, 1)}
    tmp = OUT + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")
    os.replace(tmp, OUT)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=100, help="data sets wanted in the result file (default 100)")
    args = ap.parse_args(argv)
    if args.datasets < 1:
        raise ValueError(f"--datasets must be >= 1, got {args.datasets}")
    rows = []
    if os.path.exists(OUT):
        old = json.load(open(OUT))
        if old.get("settings") == json.loads(json.dumps(SETTINGS)):
            rows = old["rows"]
        else:
            print("settings changed: the stored rows are not resumed", file=sys.stderr)
    done = {r["dataset"] for r in rows}
    model = example3_model("numba")
    started = time.time()
    for d in range(1, args.datasets + 1):
        if d in done:
            continue
        rows.append(one_dataset(model, d))
        rows.sort(key=lambda r: r["dataset"])
        write(rows, max(args.datasets, len(rows)), started)
        r = rows[-1] if rows[-1]["dataset"] == d else next(x for x in rows if x["dataset"] == d)
        print(f"data set {d}: paper chain sd {r['paper_chain']['sd']}, ESS_bulk {r['paper_chain']['ess_bulk']}, "
              f"mean error in sd {r['paper_chain_error_in_sd']}", flush=True)
    if rows:
        write(rows, max(args.datasets, len(rows)), started)
        print(json.dumps(aggregate(rows), indent=1))


if __name__ == "__main__":
    main()
