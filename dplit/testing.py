# Hand-written module (not generated from a notebook).
"""Statistical checks shared by the tests and the notebooks.

A sampler or a mechanism in dplit is checked statistically, not only run: its draws against
an exact law (chi-square goodness of fit), two samples against each other (chi-square
homogeneity), an exact posterior sampler by simulation-based calibration (Talts et al. 2018),
and a mechanism by an empirical privacy audit. These helpers are the one copy of each check.

Every check returns p-values or bounds; the caller decides the threshold (the tests use
small ones, e.g. ``p > 1e-3``, with fixed seeds, so that they are not flaky and still fail
on a planted bug).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = [
    "chisq_gof",
    "chisq_homogeneity",
    "sbc_ranks",
    "rank_uniformity_pvalues",
    "audit_mechanism",
    "py_func",
]


def chisq_gof(draws, logpmf, *, min_expected=20, pad=300):
    """Chi-square goodness-of-fit p-value of integer draws against a pmf, tails pooled.

    Parameters
    ----------
    draws : array_like of int
        The sample.
    logpmf : callable
        ``logpmf(k)`` for an integer array ``k``: the log probability under the law tested.
    min_expected : float, default 20
        Cells with a smaller expected count are pooled into the two tails.
    pad : int, default 300
        How far beyond the sample's range the pmf is summed for the tails.

    Returns
    -------
    float
        The p-value.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> p = chisq_gof(rng.poisson(3.0, 20_000), lambda k: stats.poisson.logpmf(k, 3.0))
    >>> bool(p > 1e-3)
    True
    """
    draws = np.asarray(draws)
    if draws.ndim != 1 or draws.size == 0 or not np.issubdtype(draws.dtype, np.integer):
        raise ValueError("draws must be a non-empty 1-D integer array")
    ks = np.arange(draws.min() - pad, draws.max() + pad + 1)
    p = np.exp(logpmf(ks))
    n = draws.size
    keep = np.flatnonzero(n * p >= min_expected)
    if keep.size == 0:
        raise ValueError("no cell has the expected count min_expected: draw more")
    a, b = ks[keep[0]], ks[keep[-1]]
    inner = draws[(draws >= a) & (draws <= b)] - a
    obs = np.concatenate([[np.sum(draws < a)], np.bincount(inner, minlength=b - a + 1),
                          [np.sum(draws > b)]])
    exp_ = n * np.concatenate([[p[ks < a].sum()], p[(ks >= a) & (ks <= b)], [p[ks > b].sum()]])
    ok = exp_ > 0
    return float(stats.chisquare(obs[ok], exp_[ok] * obs[ok].sum() / exp_[ok].sum()).pvalue)


def chisq_homogeneity(x, y, *, min_count=20):
    """Chi-square p-value that two integer samples come from the same law (sparse cells pooled).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> bool(chisq_homogeneity(rng.poisson(4, 5000), rng.poisson(4, 5000)) > 1e-3)
    True
    >>> bool(chisq_homogeneity(rng.poisson(4, 5000), rng.poisson(4.5, 5000)) < 1e-3)
    True
    """
    x, y = np.asarray(x), np.asarray(y)
    lo = min(x.min(), y.min())
    cx = np.bincount(x - lo, minlength=max(x.max(), y.max()) - lo + 1)
    cy = np.bincount(y - lo, minlength=cx.size)
    keep = (cx + cy) >= min_count
    table = np.array([np.append(cx[keep], cx[~keep].sum()), np.append(cy[keep], cy[~keep].sum())])
    table = table[:, table.sum(axis=0) > 0]
    return float(stats.chi2_contingency(table).pvalue)


def sbc_ranks(simulate, posterior, n_rep, *, L=19, rng=None):
    """Ranks of simulation-based calibration (Talts et al. 2018, Algorithm 1).

    For each replicate: draw ``(theta, data)`` from the prior and the model, draw ``L``
    (roughly independent, e.g. thinned) posterior draws given ``data``, and record for each
    parameter how many posterior draws fall below ``theta``. For an exact sampler each rank is
    uniform on ``{0, ..., L}``.

    Parameters
    ----------
    simulate : callable
        ``simulate(rng) -> (theta, data)``, ``theta`` of shape ``(p,)`` (or a scalar).
    posterior : callable
        ``posterior(data, L, rng) -> draws`` of shape ``(L, p)`` (or ``(L,)``).
    n_rep : int
        Replicates.
    L : int, default 19
        Posterior draws per replicate (``L + 1`` rank values).
    rng : None, int or numpy.random.Generator
        Randomness of the simulations and the sampler, passed on.

    Returns
    -------
    ndarray of int, shape (n_rep, p)
        The ranks; pass them to :func:`rank_uniformity_pvalues`.

    Examples
    --------
    A conjugate normal model with an exact posterior:

    >>> def simulate(rng):
    ...     mu = rng.normal()
    ...     return mu, rng.normal(mu, 1.0, size=4)
    >>> def posterior(y, L, rng):                    # N(sum y / 5, 1/5)
    ...     return rng.normal(y.sum() / 5, np.sqrt(1 / 5), size=L)
    >>> ranks = sbc_ranks(simulate, posterior, 400, rng=1)
    >>> bool(rank_uniformity_pvalues(ranks).min() > 1e-3)
    True
    """
    rng = np.random.default_rng(rng)
    rows = []
    for _ in range(int(n_rep)):
        theta, data = simulate(rng)
        theta = np.atleast_1d(np.asarray(theta, dtype=float))
        draws = np.asarray(posterior(data, L, rng), dtype=float).reshape(L, -1)
        if draws.shape[1] != theta.size:
            raise ValueError(f"posterior returned {draws.shape[1]} parameters, simulate {theta.size}")
        rows.append((draws < theta).sum(axis=0))
    return np.array(rows, dtype=np.int64)


def rank_uniformity_pvalues(ranks, L=19, n_bins=10):
    """Chi-square p-value per parameter that SBC ranks are uniform on ``{0, ..., L}``.

    ``L + 1`` must be divisible by ``n_bins`` (the default 19 and 10 give bins of two ranks).
    """
    ranks = np.asarray(ranks)
    if ranks.ndim == 1:
        ranks = ranks[:, None]
    if (L + 1) % n_bins:
        raise ValueError(f"L + 1 = {L + 1} must be divisible by n_bins = {n_bins}")
    if ranks.min() < 0 or ranks.max() > L:
        raise ValueError(f"ranks must lie in 0..L = {L}")
    counts = np.stack([np.bincount(r * n_bins // (L + 1), minlength=n_bins) for r in ranks.T])
    return stats.chisquare(counts, axis=1).pvalue


def audit_mechanism(mechanism, data_a, data_b, n, *, project=None, confidence=0.95, rng=None):
    """Empirical privacy audit of a mechanism on two neighbouring data sets.

    Runs ``mechanism(data, rng)`` ``n`` times on each data set, projects each output to a
    scalar (``project``, default the first coordinate) and returns
    :func:`dplit.mechanisms.audit_epsilon` of the two samples: a high-confidence lower bound
    on the epsilon really spent. A bound above the claimed epsilon is a bug.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(data, rng) -> output`` (one release).
    data_a, data_b : object
        Neighbouring inputs (worst case for the audit to have power).
    n : int
        Releases per data set.
    project : callable, optional
        ``project(output) -> float``.
    confidence : float, default 0.95
        Passed to ``audit_epsilon``.
    rng : None, int or numpy.random.Generator
        Randomness of the releases.

    Returns
    -------
    dplit.mechanisms.AuditResult
    """
    from dplit.mechanisms import audit_epsilon

    rng = np.random.default_rng(rng)
    if project is None:
        def project(out):
            return float(np.ravel(out)[0])
    a = np.array([project(mechanism(data_a, rng)) for _ in range(int(n))])
    b = np.array([project(mechanism(data_b, rng)) for _ in range(int(n))])
    return audit_epsilon(a, b, confidence=confidence, rng=rng)


def py_func(kernel):
    """The plain Python function behind a numba kernel, to compare the compiled code with.

    With ``NUMBA_DISABLE_JIT=1`` (``make coverage``) the decorator returns the function itself,
    which has no ``.py_func``; this returns it unchanged then.
    """
    return getattr(kernel, "py_func", kernel)
