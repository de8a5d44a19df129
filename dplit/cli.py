# Hand-written module (not generated from a notebook).
"""The ``dplit`` command line.

One sub-command per task; each lives in a small ``_add_<name>(subparsers)`` function that declares
its arguments and sets ``func`` to a runner ``_run_<name>(args) -> int``. The runners only parse,
call the library, and report; the methods themselves live in the generated modules. To add a
sub-command, write the two functions and list the first in ``_COMMANDS``.

Usage::

    dplit release data.csv --eps1 0.75 --eps2 0.25 [--split 0.25] --out release.json
    python -m dplit.cli release ...          # the same, without the installed script
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np

from dplit import _validate as check

__all__ = ["main", "read_compositions"]

_PAPER_CANDIDATES = "1e-6,1e-5,1e-4,1e-3,1e-2,0.1"


def _floats(text):
    """Parse a comma-separated list of floats (argparse type)."""
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from err


def read_compositions(path, *, close=False):
    """Read one record per CSV row (an optional header row is skipped).

    Parameters
    ----------
    path : str or Path
        CSV file, comma-separated, one record per row.
    close : bool
        If True, rows are raw non-negative amounts and are divided by their sums; otherwise each
        row must already be a composition (checked by :func:`dplit.dirichlet.check_compositions`).

    Returns
    -------
    ndarray, shape (n, d)
    """
    from dplit.dirichlet import check_compositions
    from dplit.dirichlet import close as close_rows

    with open(path, newline="") as fh:
        rows = [r for r in csv.reader(fh) if r and any(c.strip() for c in r)]
    if not rows:
        raise ValueError(f"{path}: no records")
    try:
        [float(c) for c in rows[0]]
    except ValueError:
        rows = rows[1:]  # a header
    if not rows:
        raise ValueError(f"{path}: no records after the header")
    widths = {len(r) for r in rows}
    if len(widths) != 1:
        raise ValueError(f"{path}: rows have different numbers of columns {sorted(widths)}")
    try:
        X = np.array([[float(c) for c in r] for r in rows])
    except ValueError as err:
        raise ValueError(f"{path}: non-numeric entry ({err})") from err
    if close:
        try:
            X = close_rows(X)  # the checks of notebook 02: finite, non-negative, a positive sum per row
        except ValueError as err:
            raise ValueError(f"{path}: --close: {err}") from err
    return check_compositions(X, name=f"{path} (rows)", tol=1e-6 if close else 1e-8)


def _add_release(subparsers):
    p = subparsers.add_parser(
        "release", help="publish an (eps1 + eps2)-DP release of compositional data (Guo et al., Alg. 1)",
        description="Select the censoring threshold with the geometric mechanism (eps2) and release the "
                    "censored sufficient statistic with the Laplace mechanism (eps1); write the JSON release.")
    p.add_argument("data", help="CSV file, one record per row (compositions, or amounts with --close)")
    p.add_argument("--eps1", type=float, required=True, help="budget of the Laplace part")
    p.add_argument("--eps2", type=float, required=True, help="budget of the threshold selection")
    p.add_argument("--candidates", type=_floats, default=_floats(_PAPER_CANDIDATES),
                   help=f"candidate thresholds, comma-separated (default {_PAPER_CANDIDATES})")
    p.add_argument("--tc", type=float, default=0.01, help="tolerated rate of censored records (default 0.01)")
    p.add_argument("--split", type=float, default=0.0,
                   help="fraction of records in D1 (e.g. 0.25 as in the paper); 0 = no split")
    p.add_argument("--close", action="store_true", help="rows are raw non-negative amounts: divide by row sums")
    p.add_argument("--seed", type=int, default=None, help="seed of the random split (the noise is never seeded)")
    p.add_argument("--out", required=True, help="where to write the release (JSON)")
    p.set_defaults(func=_run_release)


def _run_release(args):
    from dplit.release import release

    X = read_compositions(args.data, close=args.close)
    n = X.shape[0]
    check.unit_interval(args.split, "--split", closed_low=True)
    n1 = int(round(args.split * n))
    if args.split > 0 and not 1 <= n1 < n:
        raise ValueError(f"--split {args.split} of n = {n} records leaves an empty part (n1 = {n1})")
    rel = release(X, args.eps1, args.eps2, args.candidates, args.tc, n1=n1, rng=args.seed, secure=True)
    Path(args.out).write_text(rel.to_json() + "\n")
    print(rel.summary())
    print(f"written to {args.out}")
    warning = rel.caution()
    if warning:
        print(f"dplit: warning: {warning}", file=sys.stderr)
    return 0


_COMMANDS = [_add_release]


def _parser():
    parser = argparse.ArgumentParser(prog="dplit", description="Differentially private inference for compositional data.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="command")
    for add in _COMMANDS:
        add(sub)
    return parser


def main(argv=None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 bad input)."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, TypeError, OSError) as err:
        print(f"dplit {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
