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
(building, listing and replacing groups) is wrapped by the helpers below, so the rest of dplit
never asks which generation is installed.

The convergence diagnostics dplit reports (:func:`rhat`, :func:`ess`, :func:`diagnostics`) are
computed here, for all coordinates at once, by ArviZ 0.x's definitions: the same figures under
either generation, and at 1,740 coordinates a fraction of ArviZ's per-coordinate cost.
"""

from __future__ import annotations

import functools
import json
import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = ["to_arviz", "draws", "attrs_of", "clean_attrs", "to_netcdf", "from_netcdf", "name_components",
           "move_to_group", "arviz_generation", "is_result", "groups", "group", "posterior", "set_group", "update_attrs",
           "rhat", "ess", "diagnostics", "CONTRACT_ATTRS", "privacy_attrs", "ledger", "check_contract", "composition_draws"]


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
    """Dataset of draws with ``(chain, draw)`` dims from a Dataset, a result (its posterior) or one group of a result."""
    import xarray as xr

    if is_result(data):
        ds = posterior(data)
    elif isinstance(data, getattr(xr, "DataTree", ())):
        ds = data.to_dataset()
    else:
        ds = data
    return ds if var_names is None else ds[list(var_names)]


# --- Convergence diagnostics: rank-normalised R-hat, bulk and tail ESS over all coordinates at once --------------
# The estimators of Vehtari, Gelman, Simpson, Carpenter & Buerkner (2021), step for step as ArviZ 0.x computes them
# (``az.rhat(method="rank")``, ``az.ess(method="bulk" / "tail")``), but for every coordinate of a variable
# together: one sort per block of coordinates gives the ranks, one batch of FFTs the autocovariances, and Geyer's
# initial monotone sequence is a cumulative minimum. ArviZ loops over coordinates in Python, which at 1,740
# coordinates costs more than the sampler; ``az.summary`` on a result is still ArviZ's own.

_BLOM = 3 / 8                    # offset of the rank back-transform (Blom 1958), as ArviZ
_TAIL_PROBS = (0.05, 0.95)       # the tail ESS is the smaller ESS of these quantiles' indicators
_BLOCK = 1 << 17                 # draws per block of coordinates: its arrays stay in cache (1 MB each)
_KINDS = ("rhat", "bulk", "tail")
# Each block allocates and frees some 20 MB of temporaries. glibc returns freed memory at the top of its heap to the
# system beyond a trim threshold, and every block then faults its pages back in (a fifth of the time at 20,000
# draws a coordinate). Freeing one 16 MB array (_BLOCK * 16 floats) first raises glibc's dynamic mmap and trim
# thresholds (mallopt(3)) above the blocks' needs, as any program's large free does; other allocators ignore it.


@functools.lru_cache(maxsize=8)
def _normal_scores(size):
    """Normal scores of the average ranks 1, 1.5, 2, ..., ``size`` among ``size`` draws (entry j: rank 1 + j / 2)."""
    # scipy.stats.norm.ppf's kernel: the same scores, without importing scipy.stats
    from scipy.special import ndtri

    rank = np.arange(2 * size - 1) / 2 + 1
    scores = ndtri((rank - _BLOM) / (size - 2 * _BLOM + 1))
    scores.flags.writeable = False
    return scores


def _sorted_scores(ys):
    """Normal scores of the sorted rows ``ys`` (k, N), in sorted order: the i-th smallest draw has rank i + 1, and a
    run of equal draws at sorted positions a..b shares the average rank (a + b) / 2 + 1 (as ``method="average"``)."""
    k, n = ys.shape
    scores = _normal_scores(n)
    zs = np.broadcast_to(scores[::2], (k, n))
    row, pos = np.nonzero(ys[:, 1:] == ys[:, :-1])           # draw pos + 1 ties with draw pos (cost: the ties)
    if row.size:
        flat = row * n + pos
        new = np.concatenate([[True], flat[1:] != flat[:-1] + 1])    # starts a run of ties
        run = np.cumsum(new) - 1
        first = pos[new]                                             # the run's first draw
        last = np.concatenate([pos[np.flatnonzero(new)[1:] - 1], pos[-1:]]) + 1    # ... and its last
        zs = np.array(zs)
        zs[row, pos] = zs[row, pos + 1] = scores[(first + last)[run]]
    return zs


def _gather(a, idx):
    """``a[r, idx[r]]`` for every row r. Row by row, because NumPy's 1-D indexing is two to three times as fast as
    ``take_along_axis`` (and a row is thousands of draws, so the loop costs nothing)."""
    out = np.empty(idx.shape, a.dtype)
    for r in range(len(idx)):
        np.take(a[r], idx[r], out=out[r])
    return out


def _unsort(values, order):
    """Rows of ``values``, given in sorted order, put back at the positions ``order`` (each row's argsort); row by
    row, as :func:`_gather`."""
    out = np.empty(order.shape)
    for r in range(len(order)):
        out[r][order[r]] = values[r]
    return out


def _rank_normal_numpy(flat):
    """NumPy twin of :func:`_rank_normal` (the reference its kernel is tested against)."""
    order = np.argsort(flat, axis=1)
    ys = _gather(flat, order)
    return _unsort(_sorted_scores(ys), order), order, ys


def _rank_normal(flat):
    """Rank-normalised rows of ``flat`` (k, N) (ArviZ's ``_z_scale`` of each row); also the rows' argsort and sorted
    values. The same figures as :func:`_rank_normal_numpy`, from one compiled pass per row (:func:`_rank_kernels`):
    the sort is most of the convergence report's time, and a radix sort of the draws' bits is about three times as
    fast as NumPy's comparison argsort at thousands of draws."""
    flat = np.ascontiguousarray(flat, dtype=float)
    if flat.shape[1] < _RADIX_MIN:
        return _rank_normal_numpy(flat)
    rank_rows, _ = _rank_kernels()
    z, order, ys = (np.empty(flat.shape), np.empty(flat.shape, np.int64), np.empty(flat.shape))
    rank_rows(flat, _normal_scores(flat.shape[1]), z, order, ys)
    return z, order, ys


def _folded_rank_normal(order, ys):
    """Rank-normalised folded rows, ``|x - median(x)|``, from the rows' argsort ``order`` and sorted values ``ys``;
    the same figures as :func:`_folded_rank_normal_numpy`, merged in one compiled pass per row."""
    if ys.shape[1] < _RADIX_MIN:
        return _folded_rank_normal_numpy(order, ys)
    _, fold_rows = _rank_kernels()
    zf = np.empty(ys.shape)
    fold_rows(np.ascontiguousarray(order), np.ascontiguousarray(ys), _normal_scores(ys.shape[1]), zf)
    return zf


def _folded_rank_normal_numpy(order, ys):
    """Rank-normalised folded rows, ``|x - median(x)|``, from the rows' argsort ``order`` and sorted values ``ys``.

    Along a sorted row (of even length) the folded values fall through the lower half to the median and rise
    through the upper half: two sorted runs, which a stable sort merges in linear time (no second full sort).
    """
    n = ys.shape[1]
    h = n // 2
    median = (ys[:, h - 1:h] + ys[:, h:h + 1]) / 2               # np.median: the mean of the middle two
    runs = np.concatenate([median - ys[:, h - 1::-1], ys[:, h:] - median], axis=1)   # |x - median|, two runs
    merge = np.argsort(runs, axis=1, kind="stable")
    at = np.concatenate([np.arange(h - 1, -1, -1), np.arange(h, n)])[merge]   # sorted position of each, in order
    return _unsort(_sorted_scores(_gather(runs, merge)), _gather(order, at))


def _rhat_rows(z, mean=None):
    """Split R-hat of ``z`` (k, chains, draws), per row (ArviZ's ``_rhat``); ``mean``: the chains' means if known."""
    n = z.shape[2]
    mean = np.mean(z, axis=2) if mean is None else mean
    between = n * np.var(mean, axis=1, ddof=1)
    within = np.mean(np.var(z, axis=2, ddof=1), axis=1)
    return np.sqrt((between / within + n - 1) / n)


def _ess_rows(y, const, pad, mean=None):
    """ESS of ``y`` (k, chains, draws) per row (ArviZ's ``_ess``): the chains' mean autocovariance by FFT (averaged
    over chains in the frequency domain), then Geyer's initial positive and initial monotone sequences.

    ``const``: the rows whose draws are all equal (every draw counts); ``pad``: a work array of zeros (at least
    k rows, chains, and the FFT length), reused from block to block (its entries past ``draws`` stay zero);
    ``mean``: the chains' means if known.
    """
    from scipy.fft import next_fast_len

    k, m, n = y.shape
    size = m * n
    mean = np.mean(y, axis=2) if mean is None else mean
    nfft = next_fast_len(2 * n, real=True)
    if pad is None or pad.shape[0] < k or pad.shape[1] != m or pad.shape[2] != nfft:
        pad = np.zeros((k, m, nfft))
    buf = pad[:k]
    np.subtract(y, mean[:, :, None], out=buf[:, :, :n])   # centred chains, zero-padded for linear autocovariances
    f = np.fft.rfft(buf, axis=2)
    sq = np.einsum("kmf,kmf->kf", f.view(float), f.view(float))   # summed over chains: |re|^2, |im|^2 interleaved
    power = sq[:, 0::2] + sq[:, 1::2]
    jmax = max(0, (n - 3) // 2)                          # Geyer's pairs (rho_2j + rho_2j+1), j = 0..jmax
    acov = np.fft.irfft(power, n=nfft, axis=1)[:, :2 * jmax + 2] / (n * m)    # mean over chains, lags 0..
    mean_var = acov[:, 0] * n / (n - 1.0)
    var_plus = mean_var * (n - 1.0) / n
    if m > 1:
        var_plus += np.var(mean, axis=1, ddof=1)
    rho = 1.0 - (mean_var[:, None] - acov) / var_plus[:, None]
    rho[:, 0] = 1.0
    pair = rho[:, 0::2] + rho[:, 1::2]
    stop = ~(pair > 0)                                   # the initial positive sequence ends at the first pair <= 0
    last = np.where(stop.any(axis=1), np.argmax(stop, axis=1), jmax)   # ... or at the last pair there is room for
    kept = np.arange(jmax + 1) < last[:, None]
    monotone = np.minimum.accumulate(pair, axis=1)       # the initial monotone sequence
    rows = np.arange(k)
    even, pair_last = rho[rows, 2 * last], pair[rows, last]
    tau = -1.0 + 2.0 * np.sum(np.where(kept, monotone, 0.0), axis=1) \
        + np.where((even > 0) | (pair_last >= 0), even, 0.0)
    ess = size / np.maximum(tau, 1 / np.log10(size))
    ess[np.isnan(rho[:, 1])] = np.nan
    ess[const] = size                                    # constant draws: every draw counts (as ArviZ)
    return ess


_RADIX_MIN = 256                 # shorter rows: NumPy's argsort (a radix sort's passes do not pay)


def _rank_rows(flat, scores, z, order, ys):
    """For each row of ``flat`` (k, N): its argsort ``order``, sorted values ``ys`` and normal scores ``z`` (ties
    share their average rank, as :func:`_sorted_scores`). Compiled by :func:`_rank_kernels`.

    The argsort is a stable LSD radix sort of the draws' IEEE bits (negative floats' bits flipped, so that the
    unsigned keys sort as the floats), 11 bits a pass; every pass's histogram is counted in one read, and a pass on
    which all draws share their digit (the sign and exponent of draws of one cell probability) is skipped.
    """
    k, n = flat.shape
    keys, keys2 = np.empty(n, np.uint64), np.empty(n, np.uint64)
    idx, idx2 = np.empty(n, np.int64), np.empty(n, np.int64)
    counts = np.empty((6, 2048), np.int64)
    top, mask = np.uint64(1) << np.uint64(63), np.uint64(2047)
    for r in range(k):
        bits = flat[r].view(np.uint64)
        for i in range(n):
            b = bits[i]
            keys[i] = ~b if b & top else b | top
            idx[i] = i
        counts[:] = 0
        for i in range(n):
            b = keys[i]
            for p in range(6):
                counts[p, (b >> np.uint64(11 * p)) & mask] += 1
        src_k, src_i, dst_k, dst_i = keys, idx, keys2, idx2
        for p in range(6):
            shift = np.uint64(11 * p)
            if counts[p, (src_k[0] >> shift) & mask] == n:
                continue
            total = 0
            for d in range(2048):
                c = counts[p, d]
                counts[p, d] = total
                total += c
            for i in range(n):
                d = (src_k[i] >> shift) & mask
                at = counts[p, d]
                counts[p, d] = at + 1
                dst_k[at] = src_k[i]
                dst_i[at] = src_i[i]
            src_k, src_i, dst_k, dst_i = dst_k, dst_i, src_k, src_i
        for i in range(n):
            order[r, i] = src_i[i]
            ys[r, i] = flat[r, src_i[i]]
        a = 0
        while a < n:                         # a run of ties a..b shares the score of the average rank
            b = a
            while b + 1 < n and ys[r, b + 1] == ys[r, a]:
                b += 1
            for i in range(a, b + 1):
                z[r, order[r, i]] = scores[a + b]
            a = b + 1


def _fold_rows(order, ys, scores, zf):
    """Normal scores ``zf`` of ``|x - median|`` of each row, from its argsort ``order`` and sorted values ``ys``.
    Compiled by :func:`_rank_kernels`. Below the median the folded values rise as the sorted draws fall, above it
    they rise with them: one merge of the two runs sorts them."""
    k, n = ys.shape
    h = n // 2
    vals, where = np.empty(n), np.empty(n, np.int64)
    for r in range(k):
        median = (ys[r, h - 1] + ys[r, h]) / 2      # np.median: the mean of the middle two
        i, j = 0, 0                                # next of the lower run and of the upper run
        for m in range(n):
            if j >= n - h or (i < h and median - ys[r, h - 1 - i] <= ys[r, h + j] - median):
                vals[m], where[m] = median - ys[r, h - 1 - i], order[r, h - 1 - i]
                i += 1
            else:
                vals[m], where[m] = ys[r, h + j] - median, order[r, h + j]
                j += 1
        a = 0
        while a < n:
            b = a
            while b + 1 < n and vals[b + 1] == vals[a]:
                b += 1
            for i in range(a, b + 1):
                zf[r, where[i]] = scores[a + b]
            a = b + 1


@functools.cache
def _rank_kernels():
    """``(_rank_rows, _fold_rows)`` compiled (numba, cached on disk, GIL released for the report's threads); built on
    first use, so that importing this module does not import numba."""
    from numba import njit

    return tuple(njit(cache=True, nogil=True)(fn) for fn in (_rank_rows, _fold_rows))

def _type7(ys, probs):
    """Quantiles ``probs`` of each row of sorted ``ys`` (R's type 7, in the arithmetic of ArviZ 0.x's mquantiles)."""
    n = ys.shape[1]
    out = []
    for p in np.atleast_1d(np.asarray(probs, dtype=float)):
        aleph = n * p + (1 + p * (1.0 - 1 - 1))
        j = int(np.floor(np.clip(aleph, 1, n - 1)))
        gamma = np.clip(aleph - j, 0, 1)
        out.append((1.0 - gamma) * ys[:, j - 1] + gamma * ys[:, j])
    return out


def _split(x):
    """Each chain of ``x`` (k, chains, draws) cut into its first and last halves (a middle draw is dropped):
    (k, 2 chains, draws // 2), the first halves first."""
    h = x.shape[2] // 2
    return np.concatenate([x[:, :, :h], x[:, :, x.shape[2] - h:]], axis=1)


def _halves(x):
    """One chain's draws ``x`` (1, draws, k) read as two chains, its first and second halves (an odd last draw is
    dropped): the split R-hat of one chain compares its four quarters."""
    t = x.shape[1] // 2
    return x[0, :2 * t].reshape((2, t) + x.shape[2:])


def _diagnostics_block(xb, split, kinds, pad):
    """The ``kinds`` of diagnostics of a block of coordinates ``xb`` (k, chains, draws; finite draws, any strides),
    computed on its split chains ``split`` (:func:`_split`) as ArviZ does; ``pad``: the work array of
    :func:`_ess_rows`."""
    k, _, d = xb.shape
    flat = split.reshape(k, -1)
    out, ys = {}, None
    if "rhat" in kinds or "bulk" in kinds:
        z, order, ys = _rank_normal(flat)
        z = z.reshape(split.shape)
        const = ys[:, 0] == ys[:, -1]
        mean = np.mean(z, axis=2)
        if "bulk" in kinds:
            out["bulk"] = _ess_rows(z, const, pad, mean)
        if "rhat" in kinds:
            bulk, tail = _rhat_rows(z, mean), _rhat_rows(_folded_rank_normal(order, ys).reshape(split.shape))
            out["rhat"] = np.where(tail > bulk, tail, bulk)             # max(bulk, tail) as Python's max reads a NaN
    if "tail" in kinds:
        if ys is None or d % 2:          # the quantiles are of all draws (the split drops an odd middle one)
            ys = np.sort(xb.reshape(k, -1), axis=1)
        ess, below = [], np.empty(split.shape)
        for q in _type7(ys, _TAIL_PROBS):
            np.less_equal(split, q[:, None, None], out=below)          # the quantile's indicator, as 0.0 / 1.0
            mean = np.mean(below, axis=2)
            share = np.mean(mean, axis=1)
            ess.append(_ess_rows(below, (share == 0) | (share == 1), pad, mean))
        lo, hi = ess
        out["tail"] = np.where(hi < lo, hi, lo)
    return out


def _diagnostic_arrays(x, kinds=_KINDS):
    """Diagnostics of draws ``x`` (chain, draw, k), each an array of k values; NaN where undefined.

    Undefined: fewer than 4 draws, a coordinate with a non-finite draw, and the R-hat of one chain of fewer than 4
    draws per half (a single chain is read as its two halves). Constant coordinates have R-hat NaN and an ESS equal to
    the number of draws (as ArviZ).
    """
    from scipy.fft import next_fast_len

    x = np.asarray(x, dtype=float)
    c, d, k = x.shape
    out = {kind: np.full(k, np.nan) for kind in kinds}
    if k == 0 or d < 4:
        return out
    todo = [kind for kind in kinds if kind != "rhat" or c >= 2]
    if "rhat" in kinds and c == 1 and d >= 8:
        out["rhat"] = _diagnostic_arrays(_halves(x), ("rhat",))["rhat"]
    if not todo:
        return out
    step = max(1, _BLOCK // (c * d))
    starts = range(0, k, step)
    if len(starts) > 1:
        np.empty(_BLOCK * 16)   # freed at once: keeps the blocks' memory (see the note at _BLOCK)

    def work(part):
        pad = np.zeros((min(step, k), 2 * c, next_fast_len(2 * (d // 2), real=True)))   # FFT input, zero-padded
        with np.errstate(divide="ignore", invalid="ignore"):            # constant draws: R-hat 0 / 0
            for s in part:
                xb = np.moveaxis(x[:, :, s:s + step], 2, 0)
                split = _split(xb)                                      # a contiguous copy of the block
                ok = np.isfinite(split).all(axis=(1, 2)) & np.isfinite(xb[:, :, d // 2]).all(axis=1)   # + middle
                if not ok.all():
                    xb, split = xb[ok], split[ok]
                if len(xb):
                    for kind, val in _diagnostics_block(xb, split, todo, pad).items():
                        out[kind][s:s + step][ok] = val

    threads = min(len(starts), os.cpu_count() or 1)
    if threads > 1:             # NumPy's sorts and FFTs release the GIL: blocks run side by side, as the chains do
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(work, [starts[i::threads] for i in range(threads)]))
    else:
        work(starts)
    return out


def _diagnostic(data, var_names, kinds):
    """``kinds`` of diagnostics of draws: floats for a ``(chain, draw)`` array, arrays over the trailing axes of a
    larger array, Datasets (one value per variable and coordinate) for a Dataset or a result."""
    import xarray as xr

    if not (isinstance(data, xr.Dataset) or is_result(data) or isinstance(data, getattr(xr, "DataTree", ()))):
        arr = np.asarray(data, dtype=float)
        if arr.ndim < 2:
            raise ValueError(f"draws need (chain, draw) axes, got shape {arr.shape}")
        vals = _diagnostic_arrays(arr.reshape(arr.shape[:2] + (math.prod(arr.shape[2:]),)), kinds)
        return tuple(float(vals[kind][0]) if arr.ndim == 2 else vals[kind].reshape(arr.shape[2:]) for kind in kinds)
    ds = _as_dataset(data, var_names)
    outs = {kind: {} for kind in kinds}
    for name, da in ds.data_vars.items():
        da = da.transpose("chain", "draw", ...)
        arr = np.asarray(da.values, dtype=float)
        vals = _diagnostic_arrays(arr.reshape(arr.shape[:2] + (math.prod(arr.shape[2:]),)), kinds)
        for kind in kinds:
            outs[kind][name] = (da.dims[2:], vals[kind].reshape(arr.shape[2:]))
    coords = {c: v for c, v in ds.coords.items() if not {"chain", "draw"} & set(v.dims)}
    return tuple(xr.Dataset(outs[kind], coords=coords, attrs=ds.attrs) for kind in kinds)


def rhat(data, *, var_names=None):
    """Rank-normalised split R-hat (Vehtari et al. 2021) of draws: the larger of the bulk and the tail (folded) R-hat.

    Computed here for all coordinates at once (:func:`diagnostics`); equal to ArviZ's
    ``az.rhat(..., method="rank")`` to rounding.

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
        (as dapper's ``posterior`` package does); NaN where undefined (fewer than 4 draws, constant draws,
        a non-finite draw).

    Examples
    --------
    >>> g = np.random.default_rng(0)
    >>> rhat(g.normal(size=(1, 1000))) < 1.01                     # one stationary chain: its halves agree
    True
    >>> rhat(np.concatenate([g.normal(size=500), 3 + g.normal(size=500)])[None]) > 1.1   # a jump mid-chain
    True
    """
    return _diagnostic(data, var_names, ("rhat",))[0]


def ess(data, *, method="bulk", var_names=None):
    """Effective sample size (``method`` ``"bulk"`` or ``"tail"``, Vehtari et al. 2021) of draws.

    Takes and returns the same kinds as :func:`rhat`. The bulk ESS is that of the rank-normalised split
    chains, the tail ESS the smaller ESS of the indicators of the 5% and 95% quantiles (Vehtari et al.);
    both equal ArviZ 0.x's ``az.ess`` to rounding. ArviZ 1.x's default tail ESS reads the 11% and 89%
    quantiles instead (``az.ess(..., method="tail", prob=(0.05, 0.95))`` is ours), so its ``az.summary``
    differs: typically by 5-20%, by a factor of a few on chains that mix badly. NaN where undefined (fewer
    than 4 draws, a non-finite draw); constant draws count in full, as in ArviZ.
    """
    if method not in ("bulk", "tail"):
        raise ValueError(f"method must be 'bulk' or 'tail', got {method!r}")
    return _diagnostic(data, var_names, (method,))[0]


def diagnostics(data, *, var_names=None):
    """``(rhat(data), ess(data), ess(data, method="tail"))`` in one pass, sharing the ranks of the draws.

    Takes and returns the same kinds as :func:`rhat` (a tuple of three). This is the convergence report's
    computation (:func:`dplit.sampling.convergence_report`). Coordinates are taken in blocks, the blocks in
    as many threads as there are cores (as the samplers run their chains); at 1,740 coordinates of 4 chains
    of 1,000 draws this takes about 0.4 s where ArviZ's loop over coordinates takes 15
    (``benchmarks/bench_diagnostics.py``).

    Examples
    --------
    >>> x = np.random.default_rng(1).normal(size=(4, 500, 3))
    >>> r, bulk, tail = diagnostics(x)
    >>> bool(np.all(r < 1.01) and np.all(bulk > 1000) and np.all(tail > 1000))
    True
    >>> np.array_equal(r, rhat(x)) and np.array_equal(tail, ess(x, method="tail"))
    True
    """
    return _diagnostic(data, var_names, _KINDS)


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
