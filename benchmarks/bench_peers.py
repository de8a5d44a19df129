"""The peers side by side (notebook 53_peers): our latent-class model, private-pgm and PrivBayes at equal epsilon,
repeated over samples (ACS) or noise draws (NLTCS); small results for the notebook under benchmarks/results/.

Needs the optional peers (private-pgm brings JAX):

    .venv/bin/pip install -e ".[peers]"
    .venv/bin/python benchmarks/bench_peers.py                                # one ACS sample, prints only (make bench)
    .venv/bin/python benchmarks/bench_peers.py --reps 10                      # ACS and NLTCS, about 20 minutes
    .venv/bin/python benchmarks/bench_peers.py --data acs --reps 10           # ACS only, a few minutes

ACS: samples of 10,000 people from the 14-state ACS 2018 population (dplit.datasets.load_acs_counts), all ten
two-way margins released at eps in (0.25, 0.5, 1), errors against each sample's own table. NLTCS: the 21,574
records are the data; every repetition draws new noise; all 120 two-way margins at eps in (0.5, 1, 2).
"""

import argparse
import json
import platform
import sys
import time
from importlib import metadata
from pathlib import Path

import numpy as np

from dplit.datasets import load_acs_counts, load_nltcs
from dplit.peers import METHODS, compare_methods

HERE = Path(__file__).parent
OUT = HERE / "results"
NLTCS_HOME = HERE.parent.parent / "shared" / "data" / "nltcs"


def _versions():
    out = {"python": platform.python_version()}
    for dist in ("numpy", "mbi", "jax", "DataSynthesizer", "pandas"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def _summary(rows):
    """Mean and sd over repetitions of each (method, eps)."""
    keys = sorted({(r["method"], r["eps"]) for r in rows}, key=lambda k: (k[1], METHODS.index(k[0])))
    out = []
    for method, eps in keys:
        sel = [r for r in rows if r["method"] == method and r["eps"] == eps]
        s = {"method": method, "eps": eps, "reps": len(sel)}
        for f in ("full_tv", "margin_mae", "margin_max", "coverage", "length", "seconds"):
            vals = [r[f] for r in sel if f in r]
            if vals:
                s[f] = float(np.mean(vals))
                s[f + "_sd"] = float(np.std(vals, ddof=1)) if len(vals) > 1 else 0.0
        out.append(s)
    return out


def run(data, reps, eps_list, pgm_iters, seed):
    gen = np.random.default_rng(seed)
    rows, skipped = [], {}
    if data == "acs":
        counts, names = load_acs_counts()
        pop = (counts / counts.sum()).ravel()
        settings = dict(k=10, n_iter=2000, n_warmup=1000, pgm_iters=pgm_iters, names=names)
    else:
        records = load_nltcs(data_home=NLTCS_HOME if NLTCS_HOME.exists() else None)
        settings = dict(k=7, n_iter=2000, n_warmup=1000, pgm_iters=pgm_iters, names=[f"v{j}" for j in range(16)])
    for rep in range(reps):
        if data == "acs":
            records = np.array(np.unravel_index(gen.choice(32, size=10_000, p=pop), (2,) * 5)).T
        for eps in eps_list:
            t0 = time.perf_counter()
            res = compare_methods(records, eps, rng=int(gen.integers(2**31 - 1)), **settings)
            skipped.update(res["skipped"])
            for r in res["errors"]:
                rows.append(dict(r, rep=rep))
            print(f"{data} rep {rep} eps {eps}: " + ", ".join(
                f"{r['method']} TV {r['full_tv']:.3f} MAE {r['margin_mae']:.4f} ({r['seconds']:.0f} s)"
                for r in res["errors"]) + f"  [{time.perf_counter() - t0:.0f} s]", flush=True)
    return {"data": data, "command": " ".join(["benchmarks/bench_peers.py"] + sys.argv[1:]), "seed": seed,
            "reps": reps, "eps": list(eps_list), "settings": {k: v for k, v in settings.items() if k != "names"},
            "truth": "each sample's own table" if data == "acs" else "the NLTCS records' table",
            "margins": "all two-way", "versions": _versions(), "skipped": skipped,
            "summary": _summary(rows), "rows": rows}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", choices=("acs", "nltcs", "both"), default="both")
    ap.add_argument("--reps", type=int, default=None,
                    help="repetitions; the results are written only when given (default: one ACS sample, printed)")
    ap.add_argument("--nltcs-reps", type=int, default=None, help="repetitions for NLTCS (default: --reps)")
    ap.add_argument("--pgm-iters-nltcs", type=int, default=250,
                    help="mirror-descent iterations on NLTCS (120 cliques on 16 variables: 1,000 take ~6 minutes)")
    ap.add_argument("--seed", type=int, default=20261124)
    args = ap.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    write = args.reps is not None
    if not write:               # make bench: a couple of minutes, the stored study left as it is
        args.data, args.reps = "acs", 1
    jobs = []
    if args.data in ("acs", "both"):
        jobs.append(("acs", args.reps, (0.25, 0.5, 1.0), 1000))
    if args.data in ("nltcs", "both"):
        jobs.append(("nltcs", args.nltcs_reps or args.reps, (0.5, 1.0, 2.0), args.pgm_iters_nltcs))
    for data, reps, eps_list, iters in jobs:
        t0 = time.perf_counter()
        result = run(data, reps, eps_list, iters, args.seed)
        result["seconds"] = time.perf_counter() - t0
        path = OUT / f"peers_{data}.json"
        if write and result["skipped"]:
            print(f"not writing {path}: a peer is missing ({', '.join(result['skipped'])}); install .[peers]")
        elif write:
            path.write_text(json.dumps(result, indent=1))
            print(f"wrote {path} ({result['seconds']:.0f} s)")
        for s in result["summary"]:
            print(f"  eps {s['eps']:<5} {s['method']:>13}: TV {s['full_tv']:.3f}, MAE {s['margin_mae']:.4f}"
                  + (f", coverage {s['coverage']:.2f}" if "coverage" in s else ""))


if __name__ == "__main__":
    main()
