# Hand-written module (not generated from a notebook).
"""The ``dplit`` command line.

One sub-command per task; each lives in a small ``_add_<name>(subparsers)`` function that declares
its arguments and sets ``func`` to a runner ``_run_<name>(args) -> int``. The runners only parse,
call the library, and report; the methods themselves live in the generated modules. To add a
sub-command, write the two functions and list the first in ``_COMMANDS``.

Usage::

    dplit release data.csv --eps1 0.75 --eps2 0.25 [--split 0.25] --out release.json     # the curator
    dplit show release.json                  # what a release holds, what it spent, what can be done with it
    dplit analyse release.json --method dpmcmc [--prior p1] [--seed 1] --out posterior.nc  # the analyst
    dplit compare release.json --out report.html                                          # every method
    dplit study run --config study.toml --store results.sqlite [--workers N] [--scheduler tcp://...]
    dplit study report --store results.sqlite [--out figures/]
    dplit study export --store results.sqlite --out results.jsonl   # the text table to commit and share
    python -m dplit ...                      # the same, without the installed script

Errors in the input (a bad CSV, a tampered or truncated release, an existing output file) print one
line ``dplit <command>: error: ...`` on stderr and exit with status 2.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import difflib
import os
import re
import sys
import warnings
from pathlib import Path

import numpy as np

from dplit import _validate as check
from dplit._files import atomic_write, check_target, same_file
from dplit.methods import REGISTRY

# The command line is the API here (`dplit --help`); its helpers are importable for the tests, not public.
__all__ = [
    "main",
]



_FORCE_HELP = ("replace --out if it exists (never an input of the run; the file is written whole or not at all: "
               "see 'Files dplit writes' in the README)")


def _floats(text):
    """Parse a comma-separated list of floats (argparse type)."""
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from err


CSV_FORMAT = """\
The CSV file: comma-separated, UTF-8 (a byte-order mark is ignored), one record per row, one column
per component (d >= 2). A first row with no number in it is a header naming the components (the
names travel into the release and the analyses); a first row of numbers only (even years such as
2019,2020,2021) is a record unless --header says otherwise; a first row mixing numbers and text is
refused (say --header or --no-header). Rows are compositions (non-negative, summing to 1 within 1e-6)
or, with --close, raw non-negative amounts (e.g. minutes per activity) that are divided by their row
sums. Example: examples/minutes.csv in the source tree.

Exact zeros are accepted, but the Dirichlet model has none: each zero enters the released statistic
as log(a) and pulls its component's estimated mean share down (0.17 comes out as 0.09 when 15% of
records are 0, at a = 1e-6), and every analysis inherits this. Before releasing, merge such a
component with another, or drop the records with zeros and say how many (dplit.censoring.amalgamate,
drop_zero_rows); smaller candidates make it worse. The release warns when its censoring rates point
to zeros, and the warning travels with the release file to every analysis."""


def _is_number(field):
    try:
        float(field)
    except ValueError:
        return False
    return True


def _delimiter_hint(line):
    """A hint when a line of the file seems to use another separator than the comma."""
    for sep, name in ((";", "semicolons ';'"), ("\t", "tabs"), ("|", "bars '|'")):
        if sep in line:
            return (f" (the line has {name}: dplit reads comma-separated values; save the file as CSV with ',' "
                    f"between values and '.' as the decimal point)")
    return ""


def read_compositions(path, *, close=False, with_names=False, header=None):
    """Read one record per CSV row, with an optional header row naming the components.

    Parameters
    ----------
    path : str or Path
        CSV file, comma-separated, UTF-8 (a leading byte-order mark is dropped), one record per row.
    close : bool
        If True, rows are raw non-negative amounts and are divided by their sums; otherwise each
        row must already be a composition summing to 1 within 1e-6 (a CSV rounded to 6 decimals
        passes, and such rows are divided by their sums so that they sum to 1 exactly).
    with_names : bool
        Also return the header's names (None without a header).
    header : bool or None
        True: the first row is a header (``--header``); False: it is a record (``--no-header``); None
        (the default): it is a header when none of its fields is a number, a record when all are, and a
        first row mixing the two is refused. So a row of years (2019,2020,2021) is a record unless
        ``header=True``, and no record is ever taken for a header or a header for a record.

    Returns
    -------
    ndarray, shape (n, d), or (ndarray, list of str or None) when ``with_names``

    Raises
    ------
    ValueError
        A message a person can act on: the file's 1-based line and column, the command line's flags, and
        a hint when the file seems to use another delimiter than the comma.
    """
    import io

    from dplit.dirichlet import check_compositions

    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except IsADirectoryError:
        raise ValueError(f"{path} is a folder, not a CSV file") from None
    try:
        text = raw.decode("utf-8-sig")     # drops a byte-order mark, which would otherwise stick to the first field
    except UnicodeDecodeError as err:
        line = raw[:err.start].count(b"\n") + 1
        raise ValueError(f"{path}: line {line} is not UTF-8 text (save the file as UTF-8 CSV)") from None
    lines = re.split(r"\r\n|\r|\n", text)     # the lines as the csv module counts them
    records = []                            # (line number, fields), blank lines skipped
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        for fields in reader:
            if fields and any(f.strip() for f in fields):
                records.append((reader.line_num, [f.strip() for f in fields]))
    except csv.Error as err:
        raise ValueError(f"{path}: line {reader.line_num}: {err}") from None

    def where(k):
        return f"{path}: line {k}"

    def hint(k=None):
        """The delimiter hint for line k, or for the first line that has one (k None)."""
        if k is None:
            return next((h for h in map(_delimiter_hint, lines[:100]) if h), "")
        return _delimiter_hint(lines[k - 1]) if 0 < k <= len(lines) else ""

    if not records:
        raise ValueError(f"{path}: no records (the file is empty)")
    names = None
    first_line, first = records[0]
    numeric = [_is_number(f) for f in first]
    if header is None:
        if not any(numeric):
            header = True
        elif not all(numeric):
            c_text, c_num = numeric.index(False) + 1, numeric.index(True) + 1
            raise ValueError(f"{where(first_line)} mixes numbers and text (column {c_text} is {first[c_text - 1]!r}, "
                             f"column {c_num} is a number): give --header if it names the components, "
                             f"--no-header if it is a record{hint(first_line)}")
        else:
            header = False
    if header:
        names = first
        for c, name in enumerate(names, 1):
            if not name:
                raise ValueError(f"{where(first_line)}, column {c}: the header has an empty name{hint(first_line)}")
        seen = {}
        for c, name in enumerate(names, 1):
            if name in seen:
                raise ValueError(f"{where(first_line)}: the header names {name!r} twice (columns {seen[name]} "
                                 f"and {c})")
            seen[name] = c
        records = records[1:]
        if not records:
            raise ValueError(f"{path}: no records after the header (line {first_line}){hint()}")
    line0, row0 = records[0]
    d = len(names) if names is not None else len(row0)
    what = f"the header (line {first_line}) has" if names is not None else f"line {line0} has"
    for k, fields in records:
        if len(fields) != d:
            raise ValueError(f"{where(k)} has {len(fields)} column{'s' * (len(fields) != 1)}, but {what} {d}"
                             f"{hint(k)}")
    if d < 2:
        raise ValueError(f"{path}: one column per record, but a composition needs at least 2 components"
                         f"{hint()}")
    X = np.empty((len(records), d))
    for i, (k, fields) in enumerate(records):
        for c, field in enumerate(fields, 1):
            if not field:
                raise ValueError(f"{where(k)}, column {c}: the cell is empty (every record needs every component)")
            try:
                value = float(field)
            except ValueError:
                why = " (--no-header: the first row is a record)" if header is False and k == first_line else ""
                raise ValueError(f"{where(k)}, column {c}: {field!r} is not a number{why}{hint(k)}") from None
            if not np.isfinite(value):
                raise ValueError(f"{where(k)}, column {c}: {field!r} is not a finite number")
            if value < 0:
                raise ValueError(f"{where(k)}, column {c}: {field} is negative (components and amounts are "
                                 f">= 0)")
            X[i, c - 1] = value
    sums = X.sum(axis=1)
    if close:
        zero = np.flatnonzero(~(sums > 0))
        if zero.size:
            raise ValueError(f"{where(records[zero[0]][0])}: --close: the amounts sum to 0, so the record cannot be "
                             f"divided by its sum (drop the record)")
        X = X / sums[:, None]
    else:
        off = np.flatnonzero(np.abs(sums - 1.0) > 1e-6)
        if off.size:
            k = records[off[0]][0]
            raise ValueError(f"{where(k)}: the record sums to {float(sums[off[0]]):.10g}, not 1 within 1e-6 "
                             f"(raw amounts, or compositions rounded to fewer than 6 decimals? --close divides each "
                             f"row by its sum)")
        # rows within 1e-6 of 1 (rounded to 6 or more decimals) are closed exactly, a change below 1e-6 of each entry,
        # so that the library's own check (1e-8) takes what this reader took
        X = X / sums[:, None]
    X = check_compositions(X, name=f"{path} (rows)", tol=1e-6)   # the checks above make this pass
    return (X, names) if with_names else X


def _add_release(subparsers):
    p = subparsers.add_parser(
        "release", help="publish an (eps1 + eps2)-DP release of compositional data (Guo et al., Alg. 1)",
        description="Select the censoring threshold with the geometric mechanism (eps2) and release the "
                    "censored sufficient statistic with the Laplace mechanism (eps1); write the JSON release.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=CSV_FORMAT + "\n\nExample:\n  dplit release examples/minutes.csv --close --eps1 0.75 --eps2 0.25 "
                            "--split 0.25 --out release.json")
    p.add_argument("data", help="CSV file, one record per row (compositions, or amounts with --close)")
    p.add_argument("--eps1", type=float, required=True, help="budget of the Laplace part")
    p.add_argument("--eps2", type=float, required=True, help="budget of the threshold selection")
    p.add_argument("--candidates", type=_floats, default=None,
                   help="candidate thresholds below 1/d, comma-separated (default: the paper's "
                        "1e-6,1e-5,1e-4,1e-3,1e-2,0.1, those below 1/d)")
    p.add_argument("--tc", type=float, default=0.01, help="tolerated rate of censored records (default 0.01)")
    p.add_argument("--split", type=float, default=0.0,
                   help="fraction of records in D1 (e.g. 0.25 as in the paper); 0 = no split")
    p.add_argument("--close", action="store_true", help="rows are raw non-negative amounts: divide by row sums")
    h = p.add_mutually_exclusive_group()
    h.add_argument("--header", dest="header", action="store_true", default=None,
                   help="the first row names the components (default: a header when it has no number in it)")
    h.add_argument("--no-header", dest="header", action="store_false",
                   help="the first row is a record (default: a record when it is all numbers)")
    p.add_argument("--seed", type=int, default=None, help="seed of the random split (the noise is never seeded)")
    p.add_argument("--out", required=True, help="where to write the release (JSON)")
    p.add_argument("--force", action="store_true",
                   help=_FORCE_HELP[:-1] + "); also release when the pre-check (public numbers only: n, d, eps1, the "
                        "smallest candidate) says the release would be mostly noise")
    p.set_defaults(func=_run_release)


def _run_release(args):
    from dplit.release import noise_warning, release

    # before the data are read or any noise drawn
    out = _check_out(args.out, args.force, example="release.json", inputs=(args.data,))
    X, names = read_compositions(args.data, close=args.close, with_names=True, header=args.header)
    n, d = X.shape
    check.unit_interval(args.split, "--split", closed_low=True)
    n1 = int(round(args.split * n))
    if args.split > 0 and not 1 <= n1 < n:
        raise ValueError(f"--split {args.split} of n = {n} records leaves an empty part (n1 = {n1})")
    # Before any noise is drawn: refuse a release that would be mostly noise, unless --force (public numbers only).
    noisy = noise_warning(n - n1, d, check.epsilon(args.eps1, "--eps1"), args.candidates)
    if noisy and not args.force:
        raise ValueError(f"{noisy}; nothing was released and no budget spent (--force releases anyway)")
    # candidates=None: the library's default, the paper's list below 1/d (thresholds >= 1/d censor everything)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)   # the release keeps them; its summary prints them once
        rel = release(X, eps1=args.eps1, eps2=args.eps2, candidates=args.candidates, tc=args.tc, n1=n1,
                      rng=args.seed, secure=True, names=names)
    # the one rule of Release.save, with the flag's name and the input: a file created meanwhile is kept
    atomic_write(out, rel.to_json() + "\n", overwrite=args.force, inputs=(args.data,), flag="--force")
    print(rel.summary())
    print(f"written to {out}")
    return 0


def _add_show(subparsers):
    p = subparsers.add_parser(
        "show", help="what a release holds, what it spent, and what can be done with it",
        description="Read a release (JSON) and print its contents (n, d, names, threshold, budgets, split, the "
                    "curator's warnings), its privacy ledger, and the analyse and compare commands that apply to it.")
    p.add_argument("release", help="the release (JSON)")
    p.set_defaults(func=_run_show)


def show_text(rel, path="release.json"):
    """What ``dplit show`` prints for release ``rel`` (read from ``path``)."""
    from dplit.methods import applies

    head, *rest = rel.summary().replace("dplit release: ", "", 1).split("\n")
    lines = [f"{path}: {head}"] + ([f"components: {', '.join(rel.names)}"] if rel.names is not None else []) + rest
    lines.append("privacy spent by the curator (analysing the release spends nothing more):")
    lines += [f"  {e.eps:g}  {e.label}" for e in rel.budget.entries]
    lines.append(f"  total eps = {rel.eps_total:g}")
    lines.append("what can be done with it:")
    refused = {}
    for name in METHODS:
        priors = REGISTRY[name].priors or (None,)
        ok = [p for p in priors if applies(rel, name, p) is None]
        for p in priors:
            if p not in ok:
                refused.setdefault(p, []).append(name)
        if ok:
            flag = f" --prior {ok[0]}" if ok[0] else ""
            more = f"   (priors: {', '.join(ok)})" if len(ok) > 1 else ""
            lines.append(f"  dplit analyse {path} --method {name}{flag} --out {name}.nc{more}")
    lines.append(f"  dplit compare {path} --out report.html")
    if refused:
        lines.append(f"  not available: priors {', '.join(sorted(refused))} (built from D1: they need a split release, "
                     f"made with dplit release ... --split 0.25)")
    return "\n".join(lines)


def _run_show(args):
    from dplit.release import Release

    print(show_text(Release.load(args.release), args.release))
    return 0


#: The methods that run on a release file, from the registry (dplit.methods.REGISTRY).
METHODS = tuple(name for name, m in REGISTRY.items() if m.needs == "Release")
_ANALYSE_EXAMPLE = """\
Examples:
  dplit analyse release.json --method dpmcmc --seed 1 --out posterior.nc
  dplit analyse release.json --method dpboots --n-boot 2000 --seed 1 --out boots.nc --test 0.4,0.3,0.2,0.1

The result is an ArviZ InferenceData in netCDF (arviz.from_netcdf, or xarray); for dpboots the
bootstrap draws are stored as one chain. --test M1,...,Md tests H0_j: |E[x_j] - M_j| <= delta for each
component j and rejects it when the --level interval of E[x_j] lies outside [M_j - delta, M_j + delta]."""


def _add_analyse(subparsers):
    p = subparsers.add_parser(
        "analyse", aliases=["analyze"], help="infer alpha and E[x] from a release (DPBoots, DPMCMC, DPreMCMC, DPABC, DPapprox)",
        description="Read a release written by `dplit release` (or Release.save), run one inference method, "
                    "write the result (netCDF) and print a summary table.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_ANALYSE_EXAMPLE)
    p.add_argument("release", help="the release (JSON)")
    p.add_argument("--method", required=True, choices=METHODS, help="inference method")
    p.add_argument("--prior", default=None, help="prior for the Bayesian methods: p1 (default), p3, p4, p5 "
                                                 "(p3-p5 need a split release; dpapprox takes p1, p3, p4)")
    p.add_argument("--seed", type=int, default=None, help="seed: the same seed gives the same draws as the library")
    _add_method_options(p)
    p.add_argument("--test", type=_floats, default=None, metavar="M1,...,Md",
                   help="H0: |E[x_j] - M_j| <= delta for every component j")
    p.add_argument("--delta", type=float, default=None, help="tolerance of --test (default 0.01)")
    p.add_argument("--level", type=float, default=0.95, help="interval level (default 0.95)")
    p.add_argument("--out", required=True, help="where to write the result (netCDF, .nc)")
    p.add_argument("--force", action="store_true", help=_FORCE_HELP)
    p.add_argument("--no-progress", "--quiet", dest="no_progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_run_analyse)


def _add_method_options(p):
    """The methods' options as flags: each flag is the library's keyword with dashes (n_chains: --n-chains)."""
    p.add_argument("--n-iter", default=None, help="iterations per chain, or 'auto' (the default of every "
                                                  "sampler: extend the chains until they converge)")
    p.add_argument("--n-warmup", type=int, default=None, help="warm-up iterations per chain")
    p.add_argument("--n-chains", "--chains", dest="n_chains", type=int, default=None,
                   help="number of chains (default 4)")
    p.add_argument("--thin", type=int, default=None, help="keep every thin-th iteration")
    p.add_argument("--b", type=int, default=None, help="dpremcmc: latent records per part (default 50)")
    p.add_argument("--n-boot", type=int, default=None, help="dpboots replicates (default 1000)")
    p.add_argument("--n-accept", type=int, default=None, help="dpabc accepted draws (default 1000)")
    p.add_argument("--accept-rate", type=float, default=None, help="dpabc acceptance rate (default 0.1)")
    p.add_argument("--part", default=None, choices=("D", "D1", "D2"), help="dpboots: released part (default D2)")
    p.add_argument("--n-jobs", type=int, default=None, help="threads (default: one per core); the draws do not "
                                                            "depend on it")


#: The options of the methods (keyword of :func:`analyse`: its flag); any other one given is refused.
OPTIONS = {"prior": "--prior", "n_iter": "--n-iter", "n_warmup": "--n-warmup", "n_chains": "--n-chains",
           "thin": "--thin", "b": "--b", "n_boot": "--n-boot", "n_accept": "--n-accept",
           "accept_rate": "--accept-rate", "part": "--part", "n_jobs": "--n-jobs"}
#: What each method takes, from the registry.
METHOD_OPTIONS = {name: (("prior",) if REGISTRY[name].priors else ()) + REGISTRY[name].options + ("n_jobs",)
                  for name in METHODS}


def check_options(method, given, *, flags=False):
    """Refuse an option (a keyword of :func:`analyse` given a value) that ``method`` does not take.

    ``given`` maps keywords to values (None = not given); ``flags`` names them as command-line flags.
    """
    check.choice(method, "method", METHODS)
    name = OPTIONS.get if flags else (lambda key: key)
    for key, value in given.items():
        if value is not None and key not in METHOD_OPTIONS[method]:
            takes = ", ".join(name(k) for k in METHOD_OPTIONS[method])
            raise ValueError(f"{name(key)} does not apply to method {method} (it takes {takes}); leave it out")


def analyse(rel, method, *, prior=None, seed=None, progress=True, **options):
    """Run one inference method on a release the way ``dplit analyse`` does; returns its result.

    The method runs through the registry's dispatcher (:func:`dplit.methods.fit`). Only the options
    given (not None) are passed on, so that the library's defaults apply otherwise and the same seed
    gives the library's draws; an option the method does not take is refused (ValueError naming the
    method and the option, see ``METHOD_OPTIONS``).
    """
    from dplit.methods import fit

    check_options(method, {"prior": prior, **options})
    given = {k: v for k, v in options.items() if v is not None}
    return fit(rel, method, prior=prior, rng=seed, progress=progress, **given)


def summary_table(idata, rel=None, *, level=0.95):
    """The summary ``dplit analyse`` prints: the text of :func:`dplit.summary` (the library's one summary)."""
    from dplit.results import summary

    return summary(idata, level=level).to_text()


def _check_test(means, delta, d):
    """The --test values (one per component, each in (0, 1)) and --delta (>= 0), checked before any work."""
    m = check.unit_interval_array(means, "--test") if len(means) else np.array([])
    if m.shape != (d,):
        raise ValueError(f"--test needs {d} values (one per component), got {len(means)}")
    return m, check.nonnegative(delta, "--delta")


def _check_out(out, force, example="result.nc", inputs=()):
    """Refuse an --out that cannot be written, before any work: a folder, a missing or read-only folder, an input
    of the run (even with --force), an existing file without --force. The write itself is checked again
    (``atomic_write``), so that a file created while the run worked is kept."""
    out = Path(out)
    if out.is_dir():
        raise ValueError(f"--out {out} is a folder; give a file name such as {out / example}")
    folder = out.parent
    if not folder.is_dir():
        raise ValueError(f"--out {out}: the folder {folder} does not exist (create it first)")
    if not os.access(folder, os.W_OK):
        raise ValueError(f"--out {out}: the folder {folder} is not writable")
    target = check_target(out, overwrite=force, inputs=inputs, flag="--force")   # an input first: never written over
    kinds = {".json": "a release (JSON)", ".nc": "a result (netCDF)", ".html": "a report (HTML)"}
    want = Path(example).suffix
    if out.suffix.lower() in kinds and out.suffix.lower() != want:   # e.g. a netCDF result in a .json file
        raise ValueError(f"--out {out}: this command writes {kinds[want]}, not {kinds[out.suffix.lower()]}; "
                         f"give a name ending in {want}, such as {out.with_suffix(want).name}")
    return target


def _test_lines(idata, means, delta, level):
    """Decisions of H0_j: |E[x_j] - M_j| <= delta, by the level interval of E[x_j]."""
    from dplit.bootstrap import interval_test

    d = idata.posterior["mean_composition"].sizes["component"]
    m, delta = _check_test(means, delta, d)
    interval, rejects = interval_test(idata, m, delta=delta, level=level)
    lo, hi = (interval + m[:, None]).T            # the interval of E[x_j] itself, for the reader
    names = [str(c) for c in idata.posterior["mean_composition"].coords["component"].values]
    lines = [f"test of H0_j: |E[x_j] - M_j| <= {delta:g} at significance {1 - level:g} (reject when the interval "
             f"misses [M_j - delta, M_j + delta])"]
    for j in range(d):
        reject = bool(rejects[j])
        lines.append(f"  {names[j]}: M = {m[j]:g}, interval [{lo[j]:.4f}, {hi[j]:.4f}] -> "
                     f"{'reject H0' if reject else 'do not reject H0'}")
    return lines


def _n_iter_flag(text):
    """The value of --n-iter: None (not given), "auto", or an integer >= 1 (else a ValueError naming the flag)."""
    if text is None or text == "auto":
        return text
    try:
        value = int(text)
    except ValueError as err:
        raise ValueError(f"--n-iter must be an integer or 'auto', got {text!r}") from err
    return check.count(value, "--n-iter")


def _run_analyse(args):
    from dplit._arviz import netcdf_bytes
    from dplit.release import Release

    # Every check first: options, output path, release, --test; nothing is computed or written before.
    options = {k: getattr(args, k) for k in OPTIONS if k != "prior"}
    check_options(args.method, {"prior": args.prior, **options}, flags=True)
    if args.delta is not None and args.test is None:
        raise ValueError("--delta is the tolerance of --test; give --test M1,...,Md or leave --delta out")
    out = _check_out(args.out, args.force, inputs=(args.release,))
    level = check.level(args.level, "--level")
    options["n_iter"] = _n_iter_flag(args.n_iter)
    for key, low in (("n_warmup", 0), ("n_chains", 1), ("thin", 1), ("b", 1), ("n_boot", 1), ("n_accept", 1),
                     ("n_jobs", 1)):
        if options[key] is not None:
            check.count(options[key], OPTIONS[key], low)
    if options["accept_rate"] is not None:
        check.unit_interval(options["accept_rate"], "--accept-rate", closed_high=True)
    if args.method == "dpboots":
        from dplit.bootstrap import min_replicates

        n_boot, need = 1000 if args.n_boot is None else args.n_boot, min_replicates(level)
        if n_boot < need:
            raise ValueError(f"--n-boot {n_boot} is too few for a {100 * level:g}% interval (each tail needs a "
                             f"replicate): use --n-boot >= {need} (2 / (1 - level))")
    rel = Release.load(args.release)
    delta = 0.01 if args.delta is None else args.delta
    if args.test is not None:
        _check_test(args.test, delta, rel.d)
    print(f"dplit analyse: {args.method} on {args.release} (n = {rel.n}, d = {rel.d}); the first run on a "
          f"machine compiles the numba kernels (10-20 s, cached afterwards)", file=sys.stderr)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        idata = analyse(rel, args.method, prior=args.prior, seed=args.seed, progress=not args.no_progress,
                        **options)
    atomic_write(out, netcdf_bytes(idata), overwrite=args.force, inputs=(args.release,), flag="--force")
    print(summary_table(idata, rel, level=level))
    if args.test is not None:
        print("\n".join(_test_lines(idata, args.test, delta, level)))
    print(f"written to {out}")
    # the release's own warnings are the table's RELEASE WARNING lines: printed once, there
    for w in dict.fromkeys(str(w.message) for w in caught if not issubclass(w.category, DeprecationWarning)):
        if not w.startswith("release warning: "):
            print(f"dplit analyse: warning: {w}", file=sys.stderr)
    return 0


def _add_study(subparsers):
    p = subparsers.add_parser(
        "study", help="the simulation study of Guo et al. (Sec. 5.1): run (resumable) and report",
        description="Run a simulation study into a store (resumable: finished tasks are kept, a rerun does only "
                    "what is missing), report it (tables and Figures 1, 2, S2), or export it as a text table. A "
                    "store is a text table of JSON lines (a path ending in .jsonl: the form to commit and share) "
                    "or a SQLite file (any other path).")
    sub = p.add_subparsers(dest="study_command", required=True, metavar="run|report|export")
    r = sub.add_parser("run", help="run every task of the study not yet in the store")
    r.add_argument("--config", required=True, help="TOML file with a [study] table (see dplit.study.StudyConfig)")
    r.add_argument("--store", required=True,
                   help="results: a text table (*.jsonl) or a SQLite file, created if absent, extended if present")
    r.add_argument("--workers", type=int, default=None, help="processes of the local pool (default: CPU count)")
    r.add_argument("--scheduler", default=None, help="address of a Dask scheduler (needs dplit[distributed])")
    r.add_argument("--max-tasks", type=int, default=None, help="run at most this many of the remaining tasks")
    r.add_argument("--methods", default=None, metavar="M1,M2,...",
                   help="only these of the config's methods (e.g. the cheap ones first); the tasks are the same")
    r.add_argument("--replicates", type=int, default=None,
                   help="only the first this many data sets per cell (at most the config's, the default); the tasks are "
                        "the same")
    r.add_argument("--no-progress", action="store_true", help="no progress bar")
    r.set_defaults(func=_run_study)
    q = sub.add_parser("report", help="summary table and figures of a store")
    q.add_argument("--store", required=True, help="the store written by 'dplit study run' (*.jsonl or SQLite)")
    q.add_argument("--out", default=None, help="folder for summary.csv and the figures (PNG)")
    q.add_argument("--max-mpsrf", type=float, default=1.1,
                   help="runs above this multivariate PSRF count as not converged (> 1; default 1.1)")
    q.add_argument("--force", action="store_true", help="replace the report files in --out if they exist (each is written whole or not at all: "
                        "see 'Files dplit writes' in the README)")
    q.set_defaults(func=_report_study)
    e = sub.add_parser("export", help="add a store's tasks to a text table (*.jsonl), keeping the tasks it has")
    e.add_argument("--store", required=True, help="the store to read (*.jsonl or SQLite)")
    e.add_argument("--out", required=True, help="the text table to extend (a path ending in .jsonl)")
    e.set_defaults(func=_export_study)


def _run_study(args):
    from dplit import study

    if args.store == args.config or (os.path.exists(args.store) and same_file(args.store, args.config)):
        raise ValueError(f"--store {args.store} is the --config file; give the store its own name "
                         f"(results.jsonl or results.sqlite)")
    study.open_store(args.store).check(write=True)      # a bad store fails here, before any task
    for value, flag in ((args.workers, "--workers"), (args.max_tasks, "--max-tasks")):
        if value is not None:
            check.count(value, flag, 1 if flag == "--workers" else 0)
    config = study.StudyConfig.from_toml(args.config)
    if args.methods is not None:
        methods = tuple(m.strip() for m in args.methods.split(",") if m.strip())
        extra = sorted(set(methods) - set(config.methods))
        if extra or not methods:
            raise ValueError(f"--methods must name methods of the config {list(config.methods)}, got "
                             f"{extra or 'none'}")
        config = dataclasses.replace(config, methods=methods)
    if args.replicates is not None:
        if check.count(args.replicates, "--replicates") > config.replicates:
            raise ValueError(f"--replicates must be at most the config's replicates ({config.replicates}), got "
                             f"{args.replicates}")
        config = dataclasses.replace(config, replicates=args.replicates)
    executor, client = None, None
    if args.scheduler:
        executor, client = study.dask_executor(args.scheduler)
    try:
        res = study.run_study(config, args.store, executor=executor, progress=not args.no_progress,
                              workers=args.workers, max_tasks=args.max_tasks)
    finally:
        if client is not None:
            client.close()
    print(f"ran {res.ran} tasks, found {res.found} done, in {res.seconds:.1f} s; store {args.store}")
    return 0


_REPORT_FILES = ("summary.csv", "figure1_mse_alpha.png", "figure2_mse_mean.png", "figure2_coverage.png",
                 "figureS2_convergence.png")


def _report_study(args):
    from dplit import study, study_summary

    max_mpsrf = study.check_max_mpsrf(args.max_mpsrf, "--max-mpsrf")
    if args.out:
        out = Path(args.out)
        if out.exists() and not out.is_dir():
            raise ValueError(f"--out {out} is a file; give a folder for the report")
        if not out.parent.is_dir():
            raise ValueError(f"--out {out}: the folder {out.parent} does not exist (create it first)")
        there = [f for f in _REPORT_FILES if (out / f).exists()]
        if there and not args.force:
            raise ValueError(f"--out {out} already holds a report ({', '.join(there)}); use --force to overwrite it")
        for f in _REPORT_FILES if out.is_dir() else ():
            check_target(out / f, overwrite=True, inputs=(args.store,), flag="--force")
    store = study.open_store(args.store)
    if not store.path.exists():
        raise ValueError(f"{args.store}: no such store")
    df = study_summary.load_results(store.check())
    if not len(df):
        raise ValueError(f"{args.store}: the store is empty")
    summary = study_summary.summarise(df, max_mpsrf=max_mpsrf)
    cols = ["alpha", "n", "eps", "threshold", "method", "runs", "failed", "converged", "mse_alpha", "mse_mean",
            "coverage", "runtime"]
    print(summary[cols].to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    if args.out:
        import matplotlib

        matplotlib.use("Agg")
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        rule = {"overwrite": args.force, "inputs": (args.store,), "flag": "--force"}   # each file whole, or kept
        atomic_write(out / "summary.csv", summary.to_csv(index=False), **rule)
        figs = {"figure1_mse_alpha": study_summary.figure_mse(summary),
                "figure2_mse_mean": study_summary.figure_mse(summary, metric="mse_mean"),
                "figure2_coverage": study_summary.figure_coverage(summary),
                "figureS2_convergence": study_summary.figure_convergence(summary)}
        for name, fig in figs.items():
            atomic_write(out / f"{name}.png", lambda tmp, fig=fig: fig.savefig(tmp, dpi=120), **rule)
        print(f"written: {out / 'summary.csv'} and {len(figs)} figures in {out}")
    return 0


def _export_study(args):
    from dplit import study

    src = study.open_store(args.store)
    if not src.path.exists():
        raise ValueError(f"--store {args.store}: no such store")
    if Path(args.out).suffix != ".jsonl":
        raise ValueError(f"--out {args.out}: a text table must end in .jsonl")
    check_target(args.out, overwrite=True, inputs=(args.store,), flag="--force")   # appends: never to the store read
    added = study.export_table(src, args.out)
    print(f"added {added} tasks to {args.out} ({len(study.open_store(args.out))} in all)")
    return 0


_COMPARE_EXAMPLE = """\
Example:
  dplit compare release.json --seed 1 --out report.html
  dplit compare release.json --methods dpmcmc,dpboots --truth 0.4,0.2,0.25,0.15 --out report.html

Every method of the registry that runs on a release (DPBoots, DPMCMC, DPreMCMC, DPABC, DPapprox; each
Bayesian one with p1, or --priors) runs at its library defaults; the table and a figure of the
intervals go into one self-contained HTML page."""


def _add_compare(subparsers):
    p = subparsers.add_parser(
        "compare", help="run every method on one release and write a side-by-side report (HTML)",
        description="Read a release, run every method that applies to it, print the table and write an HTML "
                    "report (the table and a figure of the intervals).",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_COMPARE_EXAMPLE)
    p.add_argument("release", help="the release (JSON)")
    p.add_argument("--methods", default="all", help=f"comma-separated methods (default all: {', '.join(METHODS)})")
    p.add_argument("--priors", default="p1", help="comma-separated priors of the Bayesian methods (default p1; "
                                                  "p3-p5 need a split release)")
    p.add_argument("--seed", type=int, default=None, help="seed: each method gets its own stream from it")
    p.add_argument("--n-iter", default=None, help="iterations per chain of the samplers (dpmcmc, dpremcmc, "
                                                  "dpapprox; default 'auto'); refused when --methods holds a method "
                                                  "without chains (dpboots, dpabc)")
    p.add_argument("--report-unavailable", action="store_true",
                   help="list a method and prior that cannot run on this release as a row saying why (default: "
                        "refuse them before any work)")
    p.add_argument("--level", type=float, default=0.95, help="interval level (default 0.95)")
    p.add_argument("--truth", type=_floats, default=None, metavar="M1,...,Md",
                   help="the true E[x] (a simulated release), marked in the figure")
    p.add_argument("--out", required=True, help="where to write the report (.html)")
    p.add_argument("--force", action="store_true", help=_FORCE_HELP)
    p.set_defaults(func=_run_compare)


def _run_compare(args):
    import time

    from dplit.methods import compare
    from dplit.release import Release

    names = METHODS if args.methods == "all" else tuple(m.strip() for m in args.methods.split(",") if m.strip())
    for name in names:
        check.choice(name, "--methods", METHODS)
    priors = tuple(p.strip() for p in args.priors.split(",") if p.strip())
    for p in priors:
        check.choice(p, "--priors", ("p1", "p2", "p3", "p4", "p5"))
    out = _check_out(args.out, args.force, example="report.html", inputs=(args.release,))
    level = check.level(args.level, "--level")
    settings = {}
    n_iter = _n_iter_flag(args.n_iter)
    if n_iter is not None:
        chainless = [m for m in names if "n_iter" not in REGISTRY[m].options]
        if chainless:
            raise ValueError(f"--n-iter sets the chains of dpmcmc, dpremcmc and dpapprox; {', '.join(chainless)} "
                             f"run(s) no chain: leave --n-iter out, or choose --methods among the samplers")
        settings = {m: {"n_iter": n_iter} for m in names}
    rel = Release.load(args.release)
    if args.truth is not None and len(args.truth) != rel.d:
        raise ValueError(f"--truth needs {rel.d} values (one per component), got {len(args.truth)}")
    if args.truth is not None:
        check.unit_interval_array(args.truth, "--truth")
    print(f"dplit compare: {', '.join(names)} on {args.release} (n = {rel.n}, d = {rel.d})", file=sys.stderr)
    t0 = time.perf_counter()
    try:
        cmp = compare(rel, list(names), priors=priors, rng=args.seed, level=level, truth=args.truth,
                      settings=settings, unavailable="report" if args.report_unavailable else "refuse")
    except ValueError as err:                  # compare names the method; the command line names the flag
        text = str(err).replace("pass unavailable='report' to list them as rows", "use --report-unavailable")
        raise ValueError(f"--methods/--priors: {text}" if text.startswith("cannot run") else text) from err
    atomic_write(out, cmp.to_html(), overwrite=args.force, inputs=(args.release,), flag="--force")
    print(compare_text(cmp))
    print(f"{len(cmp.results)} methods in {time.perf_counter() - t0:.0f} s; report written to {out}")
    return 0


def compare_text(cmp):
    """What ``dplit compare`` prints: the release's warnings, the table (with converged), then per method its
    non-convergence, why its answer differs, and how it ran."""
    lines = [f"RELEASE WARNING: {w}" for w in cmp.release_warnings]
    cols = ["method", "component", "mean", "sd", "lower", "upper", "rhat", "ess", "converged", "seconds",
            "eps_total"]
    table = cmp.table.assign(converged=np.where(cmp.table["converged"] == 1, "yes", "NO"))
    ran = table["note"] == ""
    lines.append(table.loc[ran, cols].to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    lines += [f"NOT RUN: {row.method}: {row.note}" for row in table.loc[~ran].itertuples()]
    lines += [f"WARNING: {w}" for w in cmp.warnings()]
    why = cmp.explanations()
    if why:
        lines.append("why the intervals differ:")
        lines += [f"  {w}" for w in why]
    lines.append("how each method ran:")
    lines += [f"  {cmp.run_text(v)}" for v in cmp.results]
    return "\n".join(lines)


_COMMANDS = [_add_release, _add_show, _add_analyse, _add_compare, _add_study]


def _subparser(parser, command):
    """The parser of sub-command ``command``."""
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose errors also name an option it does not know (argparse reports a missing
    required option first, and a mistyped one, ``--epsilon`` for ``--eps1``, only after)."""

    argv: tuple = ()

    def error(self, message):
        known = [s for a in self._actions for s in a.option_strings if s.startswith("--")]
        unknown = []
        for token in _Parser.argv:
            name = token.split("=", 1)[0]
            if name.startswith("--") and name != "--" and name not in known and \
                    sum(k.startswith(name) for k in known) != 1:          # argparse takes a unique prefix
                unknown.append(name)
        if unknown and "unrecognized arguments" not in message:
            close = [m for u in unknown for m in difflib.get_close_matches(u, known, n=1, cutoff=0.6)]
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            message = f"unrecognized arguments: {' '.join(unknown)}{hint}; {message}"
        super().error(message)


# The library names its arguments; the command line names the flags that set them (rng is --seed).
_FLAG_COMMANDS = ("release", "show", "analyse", "compare")


def _as_flags(text, parser):
    """``text`` (a library error) with each argument name the command's flags set replaced by its flag."""
    flags = {a.dest: a.option_strings[0] for a in parser._actions if a.option_strings and a.dest != "help"}
    if "seed" in flags:
        flags["rng"] = flags["seed"]
    for name in sorted(flags, key=len, reverse=True):
        text = re.sub(rf"(?<![\w\-.'\"]){re.escape(name)}(?=\s+(?:must|=|is)\b|\s+=|\s*:)", flags[name], text)
    return text


def _parser():
    parser = _Parser(prog="dplit", description="Differentially private inference for compositional data.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="command")
    for add in _COMMANDS:
        add(sub)
    return parser


def main(argv=None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 bad input)."""
    parser = _parser()
    _Parser.argv = tuple(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, TypeError, OSError) as err:
        text = " ".join(str(err).split()) or type(err).__name__  # one line
        if isinstance(err, OSError) and err.filename is not None and err.strerror:
            text = f"{err.filename}: {err.strerror}"
        elif args.command in _FLAG_COMMANDS:
            text = _as_flags(text, _subparser(parser, args.command))
        print(f"dplit {args.command}: error: {text}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
