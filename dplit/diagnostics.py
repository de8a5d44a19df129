# Hand-written module (not generated from a notebook).
"""Convergence diagnostics of draws: rank-normalised R-hat, bulk and tail ESS, for all coordinates at once.

:func:`rhat`, :func:`ess` and :func:`diagnostics` (all three in one pass) take draws with leading
``(chain, draw)`` axes (an array, an ``xarray.Dataset`` or a result of a dplit sampler) and compute the
estimators of Vehtari, Gelman, Simpson, Carpenter & Buerkner (2021) by ArviZ 0.x's definitions
(``az.rhat(method="rank")``, ``az.ess(method="bulk" / "tail")``): the same figures under either ArviZ
generation, and at 1,740 coordinates a fraction of ArviZ's per-coordinate cost. They are the convergence
report of every sampler (:func:`dplit.sampling.convergence_report`). The kernels below are NumPy and
numba; labelled input and output go through dplit's ArviZ adapter.
"""

from __future__ import annotations

import functools
import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from dplit._arviz import is_labelled, map_variables

__all__ = ["rhat", "ess", "diagnostics"]


# Step for step as ArviZ 0.x computes each coordinate, but for every coordinate of a variable together: one sort
# per block of coordinates gives the ranks, one batch of FFTs the autocovariances, and Geyer's
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
    if not is_labelled(data):
        arr = np.asarray(data, dtype=float)
        if arr.ndim < 2:
            raise ValueError(f"draws need (chain, draw) axes, got shape {arr.shape}")
        vals = _diagnostic_arrays(arr.reshape(arr.shape[:2] + (math.prod(arr.shape[2:]),)), kinds)
        return tuple(float(vals[kind][0]) if arr.ndim == 2 else vals[kind].reshape(arr.shape[2:]) for kind in kinds)
    return map_variables(data, lambda x: _diagnostic_arrays(x, kinds), kinds, var_names)


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
