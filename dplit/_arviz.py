# Hand-written module (not generated from a notebook).
"""The one adapter between dplit and ArviZ, for both of its generations (private: it has no public names).

Samplers hand over plain NumPy arrays with leading ``(chain, draw)`` axes; every call of ArviZ's or
xarray's API by dplit happens here: building a result (:func:`to_arviz`), listing, reading and replacing
its groups, making its attributes storable, reading and writing netCDF, and labelling the convergence
diagnostics of :mod:`dplit.diagnostics`. ArviZ 0.x (pip's choice on Python 3.11) builds
``arviz.InferenceData``, whose groups are ``xarray.Dataset`` objects listed by ``result.groups()``;
ArviZ 1.x (Python 3.12 and newer) builds ``xarray.DataTree``, whose groups are child nodes listed by
``result.children``. Both read the same way for a user (``result.posterior["alpha"]``,
``result.posterior.attrs``, ``az.summary(result)``, ``result.to_netcdf(path)``); what differs is wrapped
by the helpers below, so no other module asks which generation is installed. Users reach these through
:mod:`dplit.results` and :mod:`dplit.diagnostics`; the other modules of dplit import the helpers by name.
"""

from __future__ import annotations

import functools
import math

import numpy as np

__all__ = []


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
    """Add ``attrs`` (run metadata) to every group of the result and to ``result.attrs``, in place; returns it.

    ``result.attrs`` is where a user looks first: under ArviZ 0.x it is the ``InferenceData``'s own dict (written to
    the netCDF file's root and read back), under 1.x the root node's attrs, so both generations show the contract there.
    """
    for name in groups(result):
        result[name].attrs.update(attrs)
    root = dict(getattr(result, "attrs", None) or {})
    root.update(attrs)
    result.attrs = root
    return result


def is_labelled(data) -> bool:
    """True for draws with named dims: an ``xarray.Dataset``, a result or one group of a result."""
    import xarray as xr

    return isinstance(data, xr.Dataset) or is_result(data) or isinstance(data, getattr(xr, "DataTree", ()))


def as_dataset(data, var_names=None):
    """Dataset of draws with ``(chain, draw)`` dims from a Dataset, a result (its posterior) or one group of a result."""
    import xarray as xr

    if is_result(data):
        ds = group(data, "posterior")
    elif isinstance(data, getattr(xr, "DataTree", ())):
        ds = data.to_dataset()
    else:
        ds = data
    return ds if var_names is None else ds[list(var_names)]


def map_variables(data, fn, keys, var_names=None):
    """``fn`` applied to each variable of labelled draws (:func:`is_labelled`), one Dataset per key of ``keys``.

    ``fn`` takes a variable's draws as a float array ``(chain, draw, k)`` (its event axes flattened) and
    returns a dict ``key -> array of k values``; each Dataset returned holds, for every variable of
    ``var_names`` (default: all), its values over the variable's event dims, with the draws' other
    coordinates and ``attrs``.
    """
    import xarray as xr

    ds = as_dataset(data, var_names)
    outs = {key: {} for key in keys}
    for name, da in ds.data_vars.items():
        da = da.transpose("chain", "draw", ...)
        arr = np.asarray(da.values, dtype=float)
        vals = fn(arr.reshape(arr.shape[:2] + (math.prod(arr.shape[2:]),)))
        for key in keys:
            outs[key][name] = (da.dims[2:], vals[key].reshape(arr.shape[2:]))
    coords = {c: v for c, v in ds.coords.items() if not {"chain", "draw"} & set(v.dims)}
    return tuple(xr.Dataset(outs[key], coords=coords, attrs=ds.attrs) for key in keys)


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
    """Make every group's ``attrs`` storable in netCDF, in place (see :func:`write_netcdf`); returns ``result``."""
    for name in groups(result):
        attrs = result[name].attrs
        for k in list(attrs):
            if k not in _ARVIZ_ATTRS:
                attrs[k] = _attr_value(attrs[k])
    root = getattr(result, "attrs", None)
    if root:
        result.attrs = {k: v if k in _ARVIZ_ATTRS else _attr_value(v) for k, v in root.items()}
    return result


def netcdf_bytes(result):
    """The netCDF-4 file of a result, after :func:`clean_attrs`, as bytes in memory.

    The file is built in memory (HDF5 through h5netcdf, writing to a ``BytesIO``) and written to disk by
    the caller in one plain write (:func:`write_netcdf`): a full disk then fails in that write, where it is
    cleaned up, never inside HDF5, whose handles left open by a failed write crash the interpreter
    (a segmentation fault in h5py's cleanup). The file holds the same groups and attributes as ArviZ's
    ``result.to_netcdf(path)``; ArviZ 0.x's ``InferenceData`` is written through its ``DataTree``.
    """
    import io

    clean_attrs(result)
    tree = result.to_datatree() if arviz_generation() == 0 else result
    buf = io.BytesIO()
    tree.to_netcdf(buf, engine="h5netcdf")
    # A copy, not buf.getbuffer(): newer xarray may leave the HDF5 file on the buffer open until exit, and
    # its final flush cannot resize a buffer that a memoryview still exports (BufferError at exit).
    return buf.getvalue()


def write_netcdf(result, path, *, overwrite=False):
    """Write a result to a netCDF file by dplit's rule for files (``dplit._files.atomic_write``); returns the path
    (:func:`dplit.results.to_netcdf`)."""
    from dplit._files import atomic_write

    return atomic_write(path, netcdf_bytes(result), overwrite=overwrite)


def read_netcdf(path):
    """Read a result from a netCDF file, in the installed generation's type (:func:`dplit.results.from_netcdf`).

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


_group = group     # move_to_group's argument ``group`` (its name since 0.1) hides the function


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
    post = _group(result, "posterior")
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
