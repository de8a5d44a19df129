# Hand-written module (not generated from a notebook).
"""The one adapter between dplit's samplers and ArviZ, for both of its generations.

Samplers hand over plain NumPy arrays with leading ``(chain, draw)`` axes; every conversion into an
ArviZ object, and every call of ArviZ's API by dplit, happens here. Two generations are in use:

- ArviZ 0.x (pip's choice on Python 3.11): results are ``arviz.InferenceData``; groups are
  ``xarray.Dataset`` objects, listed by ``result.groups()``.
- ArviZ 1.x (Python 3.12 and newer): results are ``xarray.DataTree``; groups are child nodes,
  listed by ``result.children``.

Both read the same way for a user: ``result.posterior["alpha"]``, ``result.posterior.attrs``,
``az.summary(result)``, ``result.to_netcdf(path)`` and :func:`from_netcdf`. What differs
(building, listing and replacing groups, the diagnostics' entry points) is wrapped by the helpers
below, so the rest of dplit never asks which generation is installed.
"""

from __future__ import annotations

import functools
import json
import logging
import math

import numpy as np

__all__ = ["to_arviz", "draws", "attrs_of", "clean_attrs", "to_netcdf", "from_netcdf", "name_components",
           "move_to_group", "arviz_generation", "is_result", "groups", "group", "posterior", "set_group", "update_attrs",
           "rhat", "ess", "CONTRACT_ATTRS", "privacy_attrs", "ledger", "check_contract", "composition_draws"]


@functools.cache
def arviz_generation() -> int:
    """The major version of the installed ArviZ: 0 (``InferenceData``) or 1 (``DataTree``)."""
    import arviz as az

    return 0 if az.__version__.split(".")[0] == "0" else 1


def is_result(obj) -> bool:
    """True for a result of a dplit sampler (an ArviZ object with a ``posterior`` group), not for one of its groups."""
    if arviz_generation() == 0:
        import arviz as az

        return isinstance(obj, az.InferenceData) and "posterior" in obj.groups()
    import xarray as xr

    return isinstance(obj, xr.DataTree) and obj.parent is None and "posterior" in obj.children


def groups(result) -> list[str]:
    """Names of the groups of a result (``posterior``, ``sample_stats``, ...), in order."""
    if not is_result(result):
        raise TypeError(f"result must be a dplit result (an ArviZ object with a posterior), got {type(result).__name__}")
    if arviz_generation() == 0:
        return list(result.groups())
    return list(result.children)


def group(result, name):
    """Group ``name`` of a result as an ``xarray.Dataset`` (read it; change it with :func:`set_group`)."""
    if name not in groups(result):
        raise KeyError(f"the result has no group {name!r}; it has {groups(result)}")
    node = result[name]
    return node if arviz_generation() == 0 else node.to_dataset()


def posterior(result, var_names=None):
    """The posterior of a result as an ``xarray.Dataset``, optionally restricted to ``var_names``."""
    ds = group(result, "posterior")
    return ds if var_names is None else ds[list(var_names)]


def set_group(result, name, dataset):
    """Put ``dataset`` (an ``xarray.Dataset``) in the result as group ``name``, replacing one of that name.

    Returns the result, changed in place.
    """
    if arviz_generation() == 0:
        if name in result.groups():
            setattr(result, name, dataset)
        else:
            result.add_groups({name: dataset})
    else:
        result[name] = dataset
    return result


def update_attrs(result, **attrs):
    """Add ``attrs`` (run metadata) to every group of the result, in place; returns the result."""
    for name in groups(result):
        result[name].attrs.update(attrs)
    return result


def _as_dataset(data, var_names=None):
    """(Dataset of draws with ``(chain, draw)`` dims, whether ``data`` was an array) from an array, a Dataset,
    a result (its posterior) or one group of a result."""
    import xarray as xr

    if isinstance(data, xr.Dataset):
        ds = data
    elif is_result(data):
        ds = posterior(data)
    elif isinstance(data, getattr(xr, "DataTree", ())):
        ds = data.to_dataset()
    else:
        arr = np.asarray(data, dtype=float)
        if arr.ndim < 2:
            raise ValueError(f"draws need (chain, draw) axes, got shape {arr.shape}")
        dims = ("chain", "draw") + tuple(f"dim_{i}" for i in range(arr.ndim - 2))
        return xr.Dataset({"x": (dims, arr)}), True
    return (ds if var_names is None else ds[list(var_names)]), False


def _halves(ds):
    """One chain's draws read as two chains, its first and second halves (an odd last draw is dropped)."""
    t = ds.sizes["draw"] // 2
    ds = ds.isel(draw=slice(0, 2 * t)).stack(sample=("chain", "draw")).drop_vars(["chain", "draw", "sample"])
    return ds.assign_coords(sample=np.arange(2 * t)).coarsen(sample=t).construct(sample=("chain", "draw"))


def _diagnostic(fn, data, var_names, *, one_chain_halves=False, **kw):
    """Apply ArviZ's ``fn`` (rhat or ess) to the draws; an array in gives a float or an array out.

    ``one_chain_halves``: a single chain of at least 4 draws is read as its two halves (ArviZ needs two chains).
    """
    import arviz as az

    ds, from_array = _as_dataset(data, var_names)
    if one_chain_halves and ds.sizes["chain"] == 1 and ds.sizes["draw"] >= 4:
        ds = _halves(ds)
    logger = getattr(az, "_log", None) or logging.getLogger("arviz")   # ArviZ 0.x logs through its own az._log
    level = logger.level
    logger.setLevel(logging.ERROR)   # ArviZ 0.x logs a line for every one-chain R-hat; the callers handle it
    try:
        out = getattr(az, fn)(ds, **kw)
    finally:
        logger.setLevel(level)
    if from_array:
        val = np.asarray(out["x"].values, dtype=float)
        return float(val) if val.ndim == 0 else val
    return out


def rhat(data, *, var_names=None):
    """Rank-normalised split R-hat (Vehtari et al. 2021) of draws, through the installed ArviZ.

    Parameters
    ----------
    data : array_like, xarray.Dataset or result
        Draws of shape ``(chain, draw, ...)``, a Dataset with those dims, or a result (its posterior).
    var_names : list of str, optional
        Variables of a Dataset or result (default: all).

    Returns
    -------
    float, ndarray or xarray.Dataset
        A float for ``(chain, draw)`` draws, an array over the trailing axes of a larger array, a
        Dataset (one value per variable and coordinate) otherwise. One chain is judged by its two halves
        (as dapper's ``posterior`` package does); NaN where undefined (fewer than 4 draws, constant draws).

    Examples
    --------
    >>> g = np.random.default_rng(0)
    >>> rhat(g.normal(size=(1, 1000))) < 1.01                     # one stationary chain: its halves agree
    True
    >>> rhat(np.concatenate([g.normal(size=500), 3 + g.normal(size=500)])[None]) > 1.1   # a jump mid-chain
    True
    """
    return _diagnostic("rhat", data, var_names, one_chain_halves=True, method="rank")


def ess(data, *, method="bulk", var_names=None):
    """Effective sample size (``method`` ``"bulk"`` or ``"tail"``, Vehtari et al. 2021) of draws.

    Takes and returns the same kinds as :func:`rhat`. The two ArviZ generations estimate the
    tail ESS from slightly different quantile indicators, so its values may differ by a few per cent.
    """
    if method not in ("bulk", "tail"):
        raise ValueError(f"method must be 'bulk' or 'tail', got {method!r}")
    return _diagnostic("ess", data, var_names, method=method)


def _check_chain_draw(name, value, n_chain, n_draw):
    """Check that ``value`` has leading (chain, draw) axes of the expected lengths."""
    arr = np.asarray(value)
    if arr.ndim < 2:
        raise ValueError(f"{name} must have leading (chain, draw) axes, got shape {arr.shape}")
    if n_chain is not None and arr.shape[:2] != (n_chain, n_draw):
        raise ValueError(
            f"{name} has (chain, draw) = {arr.shape[:2]}, expected {(n_chain, n_draw)}"
        )
    return arr


def _attr_value(value):
    """Make an attribute value storable in netCDF attrs.

    netCDF accepts a string, a number or a 1-D numeric array. ``None`` becomes ``"None"``, booleans
    become 0/1, a sequence of strings (e.g. the chains' seed labels) one ``"; "``-joined string, a
    1-D numeric sequence an array, anything else (dicts, nested lists, objects) its ``repr``.
    """
    if value is None:
        return "None"
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (str, int, float, np.integer, np.floating)):
        return value.item() if isinstance(value, np.generic) else value
    if isinstance(value, (list, tuple, np.ndarray)):
        arr = np.asarray(value)
        if arr.dtype.kind in "US" or (arr.dtype == object and all(isinstance(v, str) for v in arr.ravel())):
            return "; ".join(str(v) for v in arr.ravel())
        if arr.ndim == 1 and arr.dtype.kind == "b":
            return arr.astype(np.int64)
        if arr.ndim == 1 and arr.dtype.kind in "iuf":
            return arr
    return repr(value)


# Attributes ArviZ writes itself (1.x keeps ``sample_dims`` as a list and reads it back).
_ARVIZ_ATTRS = frozenset({"sample_dims", "created_at", "creation_library", "creation_library_version",
                          "creation_library_language", "arviz_version", "arviz_language"})


def clean_attrs(result):
    """Make every group's ``attrs`` storable in netCDF, in place (see :func:`to_netcdf`); returns ``result``."""
    for name in groups(result):
        attrs = result[name].attrs
        for k in list(attrs):
            if k not in _ARVIZ_ATTRS:
                attrs[k] = _attr_value(attrs[k])
    return result


def to_netcdf(result, path):
    """Write a result to a netCDF file after :func:`clean_attrs`; returns the path.

    ``result.to_netcdf(path)`` works as well on any result built here; this helper also cleans
    attributes that were added after the result was built.
    """
    clean_attrs(result)
    result.to_netcdf(str(path))
    return path


def from_netcdf(path):
    """Read a result written by :func:`to_netcdf` (or ``to_netcdf`` of ArviZ), in the installed generation's type.

    Under ArviZ 1.x the whole file is read into memory and closed, as ArviZ 0.x does, so that the
    same path can be written again (a lazily opened HDF5 file cannot be overwritten).
    """
    if arviz_generation() == 0:
        import arviz as az

        return az.from_netcdf(str(path))
    import xarray as xr

    with xr.open_datatree(str(path)) as tree:
        return tree.load()


def to_arviz(posterior, *, dims=None, coords=None, sample_stats=None, attrs=None,
             observed_data=None):
    """Build an ArviZ object from arrays with leading ``(chain, draw)`` axes.

    Parameters
    ----------
    posterior : dict of str -> array_like
        Each array has shape ``(chain, draw, *event_shape)``.
    dims : dict of str -> list of str, optional
        Names of the event dimensions of each variable, e.g. ``{"alpha": ["component"]}``.
    coords : dict of str -> array_like, optional
        Coordinates of the named dimensions.
    sample_stats : dict of str -> array_like, optional
        Per-draw statistics, shape ``(chain, draw, ...)`` (acceptance rates, ...).
    attrs : dict, optional
        Run metadata (method, epsilon, seeds, runtime, ...), stored on every group.
    observed_data : dict of str -> array_like, optional
        The released statistic(s) the posterior conditions on.

    Returns
    -------
    arviz.InferenceData or xarray.DataTree
        ``InferenceData`` under ArviZ 0.x, ``DataTree`` under ArviZ 1.x; both have the groups
        ``posterior`` (and ``sample_stats``, ``observed_data`` when given) with ``attrs`` on each.
    """
    import arviz as az

    if not isinstance(posterior, dict) or not posterior:
        raise TypeError("posterior must be a non-empty dict of name -> array")
    first = np.asarray(next(iter(posterior.values())))
    if first.ndim < 2:
        raise ValueError(f"posterior arrays need (chain, draw) axes, got shape {first.shape}")
    n_chain, n_draw = first.shape[:2]
    post = {k: _check_chain_draw(k, v, n_chain, n_draw) for k, v in posterior.items()}
    stats = None
    if sample_stats:
        stats = {k: _check_chain_draw(k, v, n_chain, n_draw) for k, v in sample_stats.items()}
    from dplit import __version__

    clean = {k: _attr_value(v) for k, v in dict(attrs or {}, dplit_version=__version__).items()}
    if arviz_generation() == 0:
        idata = az.from_dict(posterior=post, sample_stats=stats, observed_data=observed_data, dims=dims,
                             coords=coords)
    else:
        parts = {"posterior": post, "sample_stats": stats, "observed_data": observed_data}
        idata = az.from_dict({k: v for k, v in parts.items() if v}, dims=dims, coords=coords)
    # from_dict's own attrs argument is not applied by every 0.x release: set them on each group.
    return update_attrs(idata, **clean)


def draws(result, var, *, flatten=True):
    """Return the posterior draws of ``var`` as a NumPy array.

    Parameters
    ----------
    result : arviz.InferenceData or xarray.DataTree
        A result built by :func:`to_arviz`.
    var : str
        Variable name, e.g. ``"alpha"``.
    flatten : bool, default True
        If True, merge chains and draws into one leading axis.
    """
    arr = np.asarray(result["posterior"][var].values)
    if flatten:
        arr = arr.reshape((-1,) + arr.shape[2:])
    return arr


def attrs_of(result):
    """Return the run metadata (``attrs``) of a result as a plain dict."""
    return dict(result["posterior"].attrs)


def name_components(result, names, *, dim="component"):
    """Label the ``component`` coordinate of every group with ``names`` (e.g. a release's CSV header).

    Parameters
    ----------
    result : arviz.InferenceData
        A result whose variables have a ``component`` dimension.
    names : sequence of str or None
        One name per component; ``None`` leaves the result as it is.

    Returns
    -------
    arviz.InferenceData
        The same object, relabelled in place.
    """
    if names is None:
        return result
    names = [str(v) for v in names]
    for name in groups(result):
        ds = group(result, name)
        if dim in ds.dims:
            if ds.sizes[dim] != len(names):
                raise ValueError(f"names has {len(names)} entries but {name} has {ds.sizes[dim]} components")
            set_group(result, name, ds.assign_coords({dim: names}))
    return result


def move_to_group(result, names, group):
    """Move posterior variables ``names`` into their own group ``group`` (created; ``attrs`` copied).

    For quantities a sampler keeps but that are not targets of inference or convergence checks,
    e.g. the label-switching parameters of a mixture (``pi``, ``Psi`` of
    :func:`dplit.latent_class.fit_latent_class`): they stay in the result, apart from ``posterior``.

    Parameters
    ----------
    result : arviz.InferenceData
        A result built by :func:`to_arviz`.
    names : sequence of str
        Posterior variables to move (at least one is left in ``posterior``).
    group : str
        Name of the new group (not an existing one).

    Returns
    -------
    arviz.InferenceData
        The same object, changed in place.
    """
    names = [str(v) for v in names]
    post = posterior(result)
    missing = [v for v in names if v not in post.data_vars]
    if missing:
        raise ValueError(f"names: {missing} are not posterior variables")
    if len(names) >= len(post.data_vars):
        raise ValueError("names: at least one variable must stay in the posterior")
    if group in groups(result):
        raise ValueError(f"group {group!r} already exists")
    moved = post[names]
    moved.attrs = dict(post.attrs)
    set_group(result, "posterior", post.drop_vars(names))
    return set_group(result, group, moved)


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
        ``{"eps_total": float, "eps_by_part": JSON str, "delta": float}``.

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
    return {"eps_total": float(eps_total), "eps_by_part": json.dumps(parts), "delta": float(delta)}


def ledger(result):
    """The ledger of a result (its ``eps_by_part``) as a dict ``{charge: epsilon}``."""
    return json.loads(str(group(result, "posterior").attrs.get("eps_by_part", "{}")))


def check_contract(result):
    """Problems of a result with the result contract (an empty list when it keeps it).

    Checks: an ArviZ result with a posterior of ``(chain, draw)`` draws, every key of
    :data:`CONTRACT_ATTRS` on every group, ``eps_total`` a number, ``eps_by_part`` JSON whose sum is
    ``eps_total`` (for pure-DP ledgers), ``converged`` 0 or 1.
    """
    if not is_result(result):
        return [f"not a dplit result: {type(result).__name__}"]
    problems = []
    for name in groups(result):
        missing = [k for k in CONTRACT_ATTRS if k not in result[name].attrs]
        if missing:
            problems.append(f"group {name} lacks attrs {missing}")
    at = group(result, "posterior").attrs
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


def composition_draws(alpha):
    """The posterior variables of a Dirichlet model from draws of alpha ``(chain, draw, d)``:
    ``{"alpha": alpha, "mean_composition": alpha / sum(alpha)}`` (E[x | alpha])."""
    alpha = np.asarray(alpha, dtype=float)
    return {"alpha": alpha, "mean_composition": alpha / alpha.sum(axis=-1, keepdims=True)}
