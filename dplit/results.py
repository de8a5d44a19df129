# Hand-written module (not generated from a notebook).
"""Results of dplit's samplers: the result contract, the posterior draws, netCDF files.

Every inference method of dplit returns an ArviZ object (``arviz.InferenceData`` under ArviZ 0.x,
``xarray.DataTree`` under 1.x; both read as ``result.posterior["alpha"]``) whose groups carry the same
run metadata, :data:`CONTRACT_ATTRS` (method, privacy budget and its ledger, seeds, runtime,
convergence); this module states that contract and checks it (:func:`check_contract`, :func:`ledger`),
reads draws and metadata back (:func:`posterior`, :func:`draws`, :func:`attrs_of`), and writes and reads
results as netCDF files (:func:`to_netcdf`, :func:`from_netcdf`) under either ArviZ generation. The
convergence diagnostics are :mod:`dplit.diagnostics`; the calls into ArviZ itself are in dplit's private
adapter, ``dplit._arviz``.
"""

from __future__ import annotations

import json
import math
import os

import numpy as np

from dplit._arviz import group as _group
from dplit._arviz import groups as _groups
from dplit._arviz import is_result as _is_result
from dplit._arviz import read_netcdf as _read_netcdf
from dplit._arviz import write_netcdf as _write_netcdf
from dplit._validate import boolean as _boolean

__all__ = ["CONTRACT_ATTRS", "check_contract", "ledger", "release_warnings", "posterior", "draws", "attrs_of",
           "summary", "to_netcdf", "from_netcdf"]


def posterior(result, var_names=None):
    """The posterior of a result as an ``xarray.Dataset``, optionally restricted to ``var_names``.

    Raises ``ValueError`` naming ``var_names`` and the variables the result has, when one is not among them
    (a single name may be given as a string).
    """
    ds = _group(result, "posterior")
    if var_names is None:
        return ds
    names = [var_names] if isinstance(var_names, str) else list(var_names)
    for name in names:
        _check_var(ds, name, "var_names")
    return ds[names]


def _check_var(ds, name, arg):
    """Refuse a variable name the posterior ``ds`` lacks, naming the argument and the variables it has."""
    if not isinstance(name, str) or name not in ds.data_vars:
        raise ValueError(f"{arg} must name variables of the posterior {sorted(ds.data_vars)}, got {name!r}")


def draws(result, var, *, flatten=True):
    """Return the posterior draws of ``var`` as a NumPy array.

    Parameters
    ----------
    result : arviz.InferenceData or xarray.DataTree
        A result of a dplit sampler.
    var : str
        Variable name, e.g. ``"alpha"``.
    flatten : bool, default True
        If True, merge chains and draws into one leading axis.
    """
    ds = _group(result, "posterior")
    _check_var(ds, var, "var")
    arr = np.asarray(ds[var].values)
    if flatten:
        arr = arr.reshape((-1,) + arr.shape[2:])
    return arr


def attrs_of(result):
    """Return the run metadata (``attrs``) of a result as a plain dict: :data:`CONTRACT_ATTRS` and the method's own.

    The one accessor that works for every result under both ArviZ generations, including files written before
    ``result.attrs`` carried them (a result of dplit also holds them in ``result.attrs`` and in each group's ``attrs``).
    """
    return dict(_group(result, "posterior").attrs)


def release_warnings(result):
    """The warnings the release carried (``attrs["release_warnings"]``, JSON) as a list of str; [] when none."""
    return list(json.loads(str(_group(result, "posterior").attrs.get("release_warnings", "[]"))))


def to_netcdf(result, path, *, overwrite=False):
    """Write a result to a netCDF file, its attributes made storable first; returns the path.

    The file is written by dplit's one rule for files (README, "Files dplit writes"): whole or not at all
    (a temporary file renamed into place, removed on failure), and an existing ``path`` is kept unless
    ``overwrite=True`` (``FileExistsError`` naming the path and the keyword).

    netCDF stores a string, a number or a 1-D numeric array as an attribute: ``None`` is written as
    ``"None"``, booleans as 0/1, a sequence of strings (e.g. the chains' seed labels) as one
    ``"; "``-joined string, anything else (dicts, nested lists) as its ``repr``. ``result.to_netcdf(path)``
    works as well on any result of dplit; this function also cleans attributes added after the result
    was built (ArviZ's own writer overwrites and writes in place).
    """
    _path(path, "path")
    return _write_netcdf(result, path, overwrite=_boolean(overwrite, "overwrite"))


def _path(value, name):
    """Refuse a file name that is not a str or os.PathLike (a list, a number), naming the argument."""
    if not isinstance(value, (str, os.PathLike)) or not str(value):
        raise TypeError(f"{name} must be a file name (str or os.PathLike), got {type(value).__name__}")
    return value


def from_netcdf(path):
    """Read a result written by :func:`to_netcdf` (or ``to_netcdf`` of ArviZ), in the installed generation's type.

    Under ArviZ 1.x the whole file is read into memory and closed, as ArviZ 0.x does, so that the
    same path can be written again (a lazily opened HDF5 file cannot be overwritten).

    Raises ``FileNotFoundError`` when ``path`` does not exist and ``ValueError`` naming it when it is not a
    readable netCDF file (another format, or a file cut short).
    """
    _path(path, "path")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"path {path} does not exist (or is not a file)")
    try:
        return _read_netcdf(path)
    except (OSError, ValueError, KeyError) as err:     # h5py, netCDF4 and xarray each say it their own way
        raise ValueError(f"path {path} is not a readable netCDF result (another format, or a file cut short): "
                         f"{err}") from err


# --- The result contract -------------------------------------------------------------------------
#: The attrs every inference result of dplit carries, on every group, and what each means. A method
#: adds its own (prior, a, n, ...) beside them; these keys mean the same for every method.
CONTRACT_ATTRS = {
    "method": "the algorithm: DPBoots, Boots, MCMC, DPMCMC, DPreMCMC, DPABC, DPapprox, dapper, latent_class or nested",
    "eps_total": "the privacy budget the release spent in all (inf: exact data, no noise; nan: not stated)",
    "eps_by_part": "the release's ledger as JSON, {charge: epsilon} in the order charged (read it with ledger())",
    "delta": "the delta of (eps, delta)-DP that eps_total is stated at (0: pure DP)",
    "seeds": "the seed label of each chain, spawned from the rng argument",
    "runtime": "seconds spent sampling",
    "converged": "1 when every monitored quantity passed its check (R-hat and ESS for chains), else 0",
    "rhat_max": "largest R-hat of the monitored quantities (nan with one chain of draws that are not a chain)",
    "ess_bulk_min": "smallest bulk ESS of the monitored quantities",
    "dplit_version": "the version of dplit that produced the result",
}


def _entries(budget):
    """[(label, eps)] of a ledger: a PrivacyBudget/RdpBudget (its entries) or None (no charge)."""
    if budget is None:
        return []
    return [(str(e.label) or "charge", float(e.eps)) for e in budget.entries]


def privacy_attrs(release=None, *, budget=None, eps_total=None, delta=0.0):
    """The privacy part of the result contract: ``eps_total``, ``eps_by_part`` and ``delta``.

    Parameters
    ----------
    release : object with ``budget`` and ``eps_total``, optional
        A release (:class:`dplit.release.Release`, ``MarginRelease``, ``SummaryRelease``): its ledger is copied.
    budget : PrivacyBudget or RdpBudget, optional
        A ledger, when there is no release object (e.g. dapper's modules).
    eps_total : float, optional
        The total when neither gives it (``inf``: no noise; default nan, "not stated").
    delta : float, default 0
        The delta at which ``eps_total`` holds.

    Returns
    -------
    dict
        ``{"eps_total": float, "eps_by_part": JSON str, "delta": float}``, and ``"release_warnings"`` (a JSON list of
        the release's warnings, :func:`release_warnings`) when the release carries warnings.

    Raises
    ------
    ValueError
        If a release's ledger and its claim disagree: its pure-DP ledger does not spend its ``eps_total``, or it
        claims a finite ``eps_total`` without a ledger. A result never reports a budget its release did not account for.
    """
    if release is not None:
        budget, eps_total = release.budget, float(release.eps_total)
        spent = getattr(budget, "spent", None)
        if (budget is None and math.isfinite(eps_total)) or (
                spent is not None and not math.isclose(spent, eps_total, rel_tol=1e-9)):
            what = "no ledger" if budget is None else f"a ledger that spends eps = {spent:.6g}"
            raise ValueError(f"the release claims eps_total = {eps_total:.6g} but carries {what}: its budget and "
                             f"its claim disagree ({type(release).__name__})")
    rows = _entries(budget)
    parts, seen = {}, {}
    for label, eps in rows:                   # repeated labels stay apart: "label", "label (2)", ...
        seen[label] = seen.get(label, 0) + 1
        parts[label if seen[label] == 1 else f"{label} ({seen[label]})"] = eps
    if eps_total is None:
        eps_total = math.fsum(parts.values()) if budget is not None and hasattr(budget, "spent") else float("nan")
    out = {"eps_total": float(eps_total), "eps_by_part": json.dumps(parts), "delta": float(delta)}
    told = getattr(release, "all_warnings", None)
    if callable(told):                       # a Release: its curator's warnings travel to the analyst
        out["release_warnings"] = json.dumps(list(told()))
    return out


def ledger(result):
    """The ledger of a result (its ``eps_by_part``) as a dict ``{charge: epsilon}``."""
    return json.loads(str(_group(result, "posterior").attrs.get("eps_by_part", "{}")))


def check_contract(result):
    """Problems of a result with the result contract (an empty list when it keeps it).

    Checks: an ArviZ result with a posterior of ``(chain, draw)`` draws, every key of
    :data:`CONTRACT_ATTRS` on every group, ``eps_total`` a number, ``eps_by_part`` JSON whose sum is
    ``eps_total`` (for pure-DP ledgers), ``converged`` 0 or 1.
    """
    if not _is_result(result):
        return [f"not a dplit result: {type(result).__name__}"]
    problems = []
    for name in _groups(result):
        missing = [k for k in CONTRACT_ATTRS if k not in result[name].attrs]
        if missing:
            problems.append(f"group {name} lacks attrs {missing}")
    at = _group(result, "posterior").attrs
    post = posterior(result)
    if not {"chain", "draw"} <= set(post.dims):
        problems.append(f"posterior dims {tuple(post.dims)} lack (chain, draw)")
    try:
        parts = json.loads(str(at.get("eps_by_part", "")))
        total = float(at.get("eps_total", "nan"))
        if parts and math.isfinite(total) and float(at.get("delta", 0.0)) == 0.0 \
                and not math.isclose(math.fsum(parts.values()), total, rel_tol=1e-9):
            problems.append(f"eps_by_part sums to {math.fsum(parts.values())}, eps_total is {total}")
    except (TypeError, ValueError) as err:
        problems.append(f"eps_total/eps_by_part unreadable: {err}")
    if "converged" in at and int(at["converged"]) not in (0, 1):
        problems.append(f"converged must be 0 or 1, got {at['converged']!r}")
    return problems


def _summary_frame():
    """The DataFrame class :func:`summary` returns (built on first use: pandas is not imported with dplit)."""
    global _SummaryFrame
    if _SummaryFrame is None:
        import pandas as pd

        class SummaryFrame(pd.DataFrame):
            """A summary table whose text form (``print``, ``str``) adds the notes below the rows."""

            _metadata = ["notes"]

            @property
            def _constructor(self):
                return pd.DataFrame          # a selection or a computation gives a plain DataFrame

            def to_text(self):
                """The table as ``dplit analyse`` prints it: the rows, then the notes."""
                level = self.attrs.get("level", 0.95)
                pct = f"{100 * level:g}%"
                width = max(9, *(len(str(v)) + 1 for v in self.index))
                lines = [f"{'':{width}} {'mean':>9} {'sd':>9} {pct + ' low':>9} {pct + ' high':>9} {'R-hat':>6} "
                         f"{'ESS':>7}"]
                for name, row in self.iterrows():
                    diag = (f"{row['rhat']:6.3f} {row['ess']:7.0f}" if np.isfinite(row["rhat"])
                            else f"{'-':>6} {'-':>7}")
                    lines.append(f"{str(name):{width}} {row['mean']:9.4g} {row['sd']:9.3g} {row['lower']:9.4g} "
                                 f"{row['upper']:9.4g} {diag}")
                return "\n".join(lines + list(self.attrs.get("notes", [])))

            def __repr__(self):
                return self.to_text()

            __str__ = __repr__

        _SummaryFrame = SummaryFrame
    return _SummaryFrame


_SummaryFrame = None


def summary(result, level=0.95):
    """The summary of a result of a Dirichlet method, as ``dplit analyse`` prints it: one table for library and CLI.

    Parameters
    ----------
    result : arviz.InferenceData or xarray.DataTree
        A result with ``alpha`` and ``mean_composition`` draws (DPBoots, DPMCMC, DPreMCMC, DPABC, DPapprox, ...).
    level : float, default 0.95
        Level of the equal-tailed intervals (the 2.5% and 97.5% quantiles of the draws at 0.95; not an HDI).

    Returns
    -------
    pandas.DataFrame
        One row per ``alpha[name]`` and ``E[x][name]``, columns ``mean``, ``sd``, ``lower``, ``upper``, ``rhat`` and
        ``ess`` (bulk; nan for one chain of independent draws). ``attrs["notes"]`` holds the lines printed below
        the rows: the method and draws, the privacy spent (the release's ledger; inference spends nothing more),
        too few draws, non-convergence and the release's warnings. ``print`` shows rows and notes; ``to_text()``
        gives the same text.
    """
    from dplit import _validate as V
    from dplit import diagnostics

    level = V.level(level)
    q = [(1 - level) / 2, (1 + level) / 2]
    post = posterior(result)
    at = dict(post.attrs)
    names = [str(c) for c in post["alpha"].coords["component"].values]
    multi = post.sizes["chain"] > 1
    rows, index = [], []
    for var, label in (("alpha", "alpha"), ("mean_composition", "E[x]")):
        x = np.asarray(post[var].values, dtype=float)
        flat = x.reshape(-1, x.shape[-1])
        nan = np.full(len(names), np.nan)
        rhat = np.atleast_1d(diagnostics.rhat(x)) if multi else nan
        ess = np.atleast_1d(diagnostics.ess(x)) if multi else nan
        lo, hi = np.quantile(flat, q, axis=0)
        for j, name in enumerate(names):
            index.append(f"{label}[{name}]")
            rows.append({"mean": flat[:, j].mean(), "sd": flat[:, j].std(ddof=1), "lower": lo[j], "upper": hi[j],
                         "rhat": float(rhat[j]), "ess": float(ess[j])})
    notes = [f"method {at.get('method')}" + (f", prior {at['prior']}" if "prior" in at else "")
             + f"; {post.sizes['chain']} chain(s) x {post.sizes['draw']} draws"
             + (f" (warm-up {at['n_warmup']}, thin {at['thin']})" if "n_warmup" in at and "thin" in at else "")]
    total = float(at.get("eps_total", "nan"))
    spent = f"eps = {total:g}"
    if "eps1" in at and math.isfinite(total):     # a Dirichlet release: the statistic's and the threshold's parts
        eps1 = float(at["eps1"])
        spent = f"eps1 + eps2 = {eps1:g} + {total - eps1:.6g} = {total:g}"
    where = f"censoring threshold a = {float(at['a']):g}; " if "a" in at else ""
    notes.append(f"{where}privacy spent {spent} (by the curator; analysing the release spends nothing more)")
    n_draws = post.sizes["chain"] * post.sizes["draw"]
    need = math.ceil(2 / (1 - level) - 1e-9)
    pct = f"{100 * level:g}%"
    if n_draws < need:
        notes.append(f"TOO FEW DRAWS: {n_draws} for a {pct} interval, whose ends are then the extreme draws (need "
                     f">= {need}: more n_boot, n_iter or n_accept; --n-boot, --n-iter, --n-accept)")
    if multi and "converged" in at and not int(at["converged"]):
        notes.append(f"NOT CONVERGED: {at.get('failed', '')} (run longer: n_iter='auto', --n-iter auto)")
    notes += [f"RELEASE WARNING: {w}" for w in release_warnings(result)]
    table = _summary_frame()(rows, index=index)
    table.attrs.update(level=level, notes=notes)
    return table


def composition_draws(alpha):
    """The posterior variables of a Dirichlet model from draws of alpha ``(chain, draw, d)``:
    ``{"alpha": alpha, "mean_composition": alpha / sum(alpha)}`` (E[x | alpha])."""
    alpha = np.asarray(alpha, dtype=float)
    return {"alpha": alpha, "mean_composition": alpha / alpha.sum(axis=-1, keepdims=True)}


# --- Names that moved out of this module, resolved for one release ---------------------------------------------
_MOVED_TO_DIAGNOSTICS = ("rhat", "ess", "diagnostics")
_MOVED_TO_ADAPTER = ("arviz_generation", "is_result", "groups", "group", "set_group", "update_attrs", "to_arviz",
                     "name_components", "move_to_group", "clean_attrs")


def __getattr__(name):
    """``rhat``, ``ess`` and ``diagnostics`` (moved to :mod:`dplit.diagnostics`, with a ``DeprecationWarning``) and
    the adapter's helpers (moved to dplit's private ``_arviz``), for code that imported them from here."""
    if name in _MOVED_TO_DIAGNOSTICS:
        import warnings

        from dplit import diagnostics

        warnings.warn(f"dplit.results.{name} has moved to dplit.diagnostics.{name}: import it from "
                      f"dplit.diagnostics (dplit.results stops providing it in the next release)",
                      DeprecationWarning, stacklevel=2)
        return getattr(diagnostics, name)
    if name in _MOVED_TO_ADAPTER:
        import dplit._arviz as adapter

        return getattr(adapter, name)
    raise AttributeError(f"module 'dplit.results' has no attribute {name!r}")
