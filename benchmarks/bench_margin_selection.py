"""Margin selection (notebook 52_margin_selection): cost of PrivBayes' structure stage on the NLTCS (numba
scores against the NumPy twin), and the repeated NLTCS study whose small results the notebook reads:
at each total eps, (a) a quarter of eps selects a degree-2 network and three quarters release its 29 edges,
(b) eps releases all 120 two-way margins; each followed by a k = 7 latent class fit. Stored per repetition:
error and coverage of the 480 two-way cells, split into the cells of the selected margins ("used") and
the others ("held out"), and the mean log ratio of the paper's Fig. 4.

    .venv/bin/python benchmarks/bench_margin_selection.py                 # timing only (seconds)
    .venv/bin/python benchmarks/bench_margin_selection.py --reps 5        # the study: writes results/margin_selection.json
"""

import argparse
import itertools
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from dplit.datasets import load_nltcs
from dplit.latent_class import fit_latent_class, release_margins
from dplit.margin_selection import (
    _candidates,
    _check_records,
    _mi_kernel,
    _mi_reference,
    select_and_release,
    select_margins,
    two_way_report,
)
from dplit.sampling import ConvergenceWarning

sys.path.insert(0, str(Path(__file__).parent))
from _timing import best_of  # noqa: E402

HERE = Path(__file__).parent
RESULTS = HERE / "results" / "margin_selection.json"
LOCAL_NLTCS = HERE.parent.parent / "shared" / "data" / "nltcs"


def nltcs():
    try:
        return load_nltcs(data_home=LOCAL_NLTCS, download=False)
    except OSError:
        return load_nltcs()


def timing(x):
    xt, levels = _check_records(x)
    p = len(levels)
    steps = [_candidates(p, set(range(c)), min(2, c)) for c in range(1, p)]
    distinct = sorted({c for cands in steps for c in cands})
    lv = np.array(levels)
    groups = [(np.array([a for a, pa in distinct if len(pa) == k]),
               np.array([pa for a, pa in distinct if len(pa) == k]).reshape(-1, k)) for k in (1, 2)]
    t_fast = best_of(lambda: [_mi_kernel(xt, lv, c, pa) for c, pa in groups], repeat=5)
    t_ref = best_of(lambda: [_mi_reference(x, levels, a, pa) for a, pa in distinct], repeat=3)
    t_sel = best_of(lambda: select_margins(x, 0.25, rng=1), repeat=5)
    print(f"NLTCS {x.shape}: {len(distinct)} distinct scores of one selection: numba {1e3 * t_fast:.1f} ms, "
          f"NumPy twin (bincount) {1e3 * t_ref:.1f} ms ({t_ref / t_fast:.1f}x); whole select_margins "
          f"{1e3 * t_sel:.1f} ms")


def fit(release, seed, args, weight=1.0):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fit_latent_class(release, k=args.k, weight=weight, a=1.0, n_iter=args.n_iter, n_warmup=args.n_warmup,
                                n_chains=args.n_chains, rng=seed, progress=False)


def noisy_summary(release, report, n):
    """Log ratio and MAE of the raw noisy counts of the used cells (clipped at 0.5 as in notebook 51)."""
    counts = dict(zip(release.margins, release.counts))
    noisy = np.concatenate([counts[m] for m in report.pairs if m in counts])    # pairs in the report's order
    truth = report.truth[report.used]
    return {"noisy_log_ratio_used": float(np.mean(np.log(np.maximum(noisy, 0.5) / n / truth))),
            "noisy_mae_used": float(np.mean(np.abs(noisy / n - truth)))}


def study(x, args):
    n, p = x.shape
    pairs = list(itertools.combinations(range(p), 2))
    out = {}
    for eps in args.eps:
        res = {}
        for rep in range(args.reps):
            t0 = time.perf_counter()
            seed = 1000 * rep + int(100 * eps)
            sel, rel_sel = select_and_release(x, eps, share=args.share, rng=seed, secure=False)
            rel_all = release_margins(x, pairs, eps, rng=seed + 1, secure=False)
            only_sel = dict(zip(rel_all.margins, rel_all.counts))
            rel_all_used = type(rel_sel).from_counts([only_sel[m] for m in sel.pairs], sel.pairs, rel_sel.levels, n,
                                                     eps * len(sel.pairs) / len(pairs))
            rows = {}
            for w in args.weights:
                weight = w if w == "auto" else float(w)
                suffix = "" if w == "1" else f"_w{w}"
                rep_sel = two_way_report(fit(rel_sel, seed + 2, args, weight), x, sel.pairs)
                rep_all = two_way_report(fit(rel_all, seed + 3, args, weight), x, pairs)
                # the all-120 fit scored on the same split of cells as the selected one
                rep_all = type(rep_all)(rep_all.pairs, rep_sel.used, rep_all.truth, rep_all.mean, rep_all.lower,
                                        rep_all.upper)
                rows["selected" + suffix] = (rep_sel.summary() | noisy_summary(rel_sel, rep_sel, n)
                                             | {"n_margins": len(sel.pairs)})
                rows["all" + suffix] = (rep_all.summary() | noisy_summary(rel_all_used, rep_all, n)
                                        | {"n_margins": len(pairs)})
            for name, row in rows.items():
                for key, value in row.items():
                    res.setdefault(name, {}).setdefault(key, []).append(value)
            res["selected"].setdefault("pairs", []).append([list(m) for m in sel.pairs])
            print(f"eps = {eps}, rep {rep}: " + "; ".join(
                f"{name}: MAE used {r['mae_used']:.4f}, held out {r['mae_held_out']:.4f}, coverage used "
                f"{r['coverage_used']:.2f}, held out {r['coverage_held_out']:.2f}" for name, r in rows.items())
                + f" ({time.perf_counter() - t0:.0f} s)", flush=True)
        out[str(float(eps))] = res
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=0, help="repetitions of the study per eps (0: timing only)")
    ap.add_argument("--eps", type=float, nargs="+", default=[0.5, 1.0, 2.0, 5.0])
    ap.add_argument("--share", type=float, default=0.25)
    ap.add_argument("--k", type=int, default=7)
    ap.add_argument("--weights", nargs="+", default=["1", "auto"],
                    help="composite-likelihood weights of the fits (1: the paper's; auto: 1 / tables per variable)")
    ap.add_argument("--n-iter", type=int, default=3000)
    ap.add_argument("--n-warmup", type=int, default=2000)
    ap.add_argument("--n-chains", type=int, default=2)
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    x = nltcs()
    timing(x)
    if args.reps <= 0:
        return
    t0 = time.perf_counter()
    results = study(x, args)
    given = sys.argv[1:] if argv is None else list(argv)
    if "--out" in given:                                  # where it was written is not how to regenerate it
        i = given.index("--out")
        given = given[:i] + given[i + 2:]
    command = "python benchmarks/bench_margin_selection.py " + " ".join(given)
    payload = {"command": command.strip(), "data": "NLTCS benchmark file (load_nltcs), 21,574 x 16 binary",
               "n": int(x.shape[0]), "k": args.k, "share": args.share, "n_iter": args.n_iter,
               "n_warmup": args.n_warmup, "n_chains": args.n_chains, "reps": args.reps, "weights": args.weights,
               "seconds": round(time.perf_counter() - t0), "results": results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=1))
    print(f"wrote {args.out} ({payload['seconds']} s)")


if __name__ == "__main__":
    main()
