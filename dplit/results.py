# Hand-written module (not generated from a notebook).
"""The one adapter between dplit's samplers and ArviZ.

Samplers hand over plain NumPy arrays with leading ``(chain, draw)`` axes; every conversion
into an ArviZ object happens here, so that moving from ArviZ 0.x (``InferenceData``) to
1.x (``DataTree``) is a change to this file only.
"""

from __future__ import annotations

import numpy as np

__all__ = ["to_arviz", "draws", "attrs_of", "clean_attrs", "to_netcdf", "from_netcdf", "name_components",
           "move_to_group"]


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


def clean_attrs(result):
    """Make every group's ``attrs`` storable in netCDF, in place (see :func:`to_netcdf`); returns ``result``."""
    for group in result.groups():
        attrs = result[group].attrs
        for k in list(attrs):
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
    """Read a result written by :func:`to_netcdf` (or ``to_netcdf`` of ArviZ)."""
    import arviz as az

    return az.from_netcdf(str(path))


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
    arviz.InferenceData
        With ArviZ 0.x. (Under ArviZ 1.x this is the place to return a DataTree.)
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
    clean_attrs = {k: _attr_value(v) for k, v in (attrs or {}).items()}
    idata = az.from_dict(
        posterior=post,
        sample_stats=stats,
        observed_data=observed_data,
        dims=dims,
        coords=coords,
    )
    # from_dict's own attrs argument is not applied by every 0.x release: set them on each group.
    for group in idata.groups():
        idata[group].attrs.update(clean_attrs)
    return idata


def draws(result, var, *, flatten=True):
    """Return the posterior draws of ``var`` as a NumPy array.

    Parameters
    ----------
    result : arviz.InferenceData
        A result built by :func:`to_arviz`.
    var : str
        Variable name, e.g. ``"alpha"``.
    flatten : bool, default True
        If True, merge chains and draws into one leading axis.
    """
    arr = np.asarray(result.posterior[var].values)
    if flatten:
        arr = arr.reshape((-1,) + arr.shape[2:])
    return arr


def attrs_of(result):
    """Return the run metadata (``attrs``) of a result as a plain dict."""
    return dict(result.posterior.attrs)


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
    for group in result.groups():
        ds = result[group]
        if dim in ds.dims:
            if ds.sizes[dim] != len(names):
                raise ValueError(f"names has {len(names)} entries but {group} has {ds.sizes[dim]} components")
            setattr(result, group, ds.assign_coords({dim: names}))
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
    post = result.posterior
    missing = [v for v in names if v not in post.data_vars]
    if missing:
        raise ValueError(f"names: {missing} are not posterior variables")
    if len(names) >= len(post.data_vars):
        raise ValueError("names: at least one variable must stay in the posterior")
    if group in result.groups():
        raise ValueError(f"group {group!r} already exists")
    moved = post[names]
    moved.attrs = dict(post.attrs)
    result.posterior = post.drop_vars(names)
    result.add_groups({group: moved})
    return result
