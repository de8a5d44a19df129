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
    "raises",
    "dead_controls",
    "chisq_gof",
    "chisq_homogeneity",
    "sbc_ranks",
    "rank_uniformity_pvalues",
    "sbc_check",
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


def _sbc_scores(L):
    """van der Waerden scores of the ranks 0..L (mean 0) and their squares (Klotz scores)."""
    q = stats.norm.ppf((np.arange(L + 1) + 0.5) / (L + 1))
    return q, q ** 2


def sbc_check(ranks, spread, *, L=19, n_bins=10):
    """One p-value that SBC ranks are uniform, with power against too narrow, too wide and biased posteriors.

    A weighted Bonferroni over three tests of the ranks (reject the sampler at ``p < level``):

    - **spread** (weight 1/2): the Klotz score ``Phi^-1((r + 1/2) / (L + 1))^2``, summed over the ``spread``
      columns (those the data inform), against its exact null mean (a z-test; each column's null variance is exact,
      combined with the columns' observed correlations). A posterior too narrow (a noise scale too small, a budget
      too large, draws still autocorrelated) puts the truth in its tails and raises the score; one too wide lowers
      it. This is the test with power against moderate errors; the chi-square of rank histograms alone has little.
    - **location** (weight 1/4, split over the columns): the mean van der Waerden score of each column (a biased
      sampler).
    - **shape** (weight 1/4, split over the columns): :func:`rank_uniformity_pvalues` (``n_bins`` bins).

    Parameters
    ----------
    ranks : array_like of int, shape (n_rep, p)
        Ranks in ``0..L`` (:func:`sbc_ranks`), ``n_rep >= 30``.
    spread : sequence of int
        Columns whose Klotz scores are summed in the spread test.
    L : int, default 19
        Posterior draws per replicate.
    n_bins : int, default 10
        Bins of the chi-square test; ``L + 1`` must be divisible by it.

    Returns
    -------
    dict
        ``p`` (the adjusted p-value of the whole check, at most 1), ``z_spread``, ``z_loc`` (per column),
        ``p_spread``, ``p_loc``, ``p_chi2`` (per column).

    Examples
    --------
    >>> g = np.random.default_rng(0)
    >>> sbc_check(g.integers(0, 20, size=(500, 2)), spread=[0, 1])["p"] > 0.01
    True
    >>> sbc_check(np.minimum(g.integers(0, 30, size=(500, 2)), 19), spread=[0, 1])["p"] < 0.01
    True
    """
    ranks = np.asarray(ranks)
    if ranks.ndim != 2 or ranks.shape[0] < 30 or ranks.min() < 0 or ranks.max() > L:
        raise ValueError(f"ranks must be (n_rep >= 30, p) integers in 0..{L}, got shape {ranks.shape}")
    spread = list(spread)
    if not spread or min(spread) < 0 or max(spread) >= ranks.shape[1]:
        raise ValueError(f"spread must list columns of ranks (0..{ranks.shape[1] - 1}), got {spread}")
    n_rep, p = ranks.shape
    loc, sq = _sbc_scores(L)
    cols = sq[ranks[:, spread]]
    corr = np.atleast_2d(np.corrcoef(cols, rowvar=False)) if len(spread) > 1 else np.ones((1, 1))
    var0 = np.var(sq) * np.nan_to_num(corr, nan=0.0).sum()
    z_spread = (cols.sum(axis=1).mean() - len(spread) * sq.mean()) / np.sqrt(var0 / n_rep)
    z_loc = loc[ranks].mean(axis=0) / np.sqrt(np.mean(loc ** 2) / n_rep)
    p_spread = float(2 * stats.norm.sf(abs(z_spread)))
    p_loc = 2 * stats.norm.sf(np.abs(z_loc))
    p_chi2 = np.atleast_1d(rank_uniformity_pvalues(ranks, L=L, n_bins=n_bins))
    p_adj = min(1.0, 2 * p_spread, 4 * p * float(p_loc.min()), 4 * p * float(p_chi2.min()))
    return {"p": p_adj, "z_spread": float(z_spread), "z_loc": z_loc.round(3).tolist(), "p_spread": p_spread,
            "p_loc": p_loc.tolist(), "p_chi2": p_chi2.tolist()}


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


def raises(exc, fn, *args, match=None, **kwargs):
    """True when ``fn(*args, **kwargs)`` raises ``exc`` (with ``match`` in the message): a bad-input check for an
    ``assert`` cell of a notebook, where ``pytest.raises`` is not at hand.

    Examples
    --------
    >>> raises(ValueError, int, "x", match="invalid literal")
    True
    >>> raises(ValueError, int, "3")
    False
    """
    try:
        fn(*args, **kwargs)
    except exc as err:
        return match is None or match in str(err)
    return False


def dead_controls(widget):
    """The controls of an ipywidgets ``interactive`` whose move does not change what it shows (empty: all work).

    Each control is moved one step (or to the next option), as a reader would, and then put back; the output
    compared is the callback's return value and the PNG bytes of the figures it returns or draws. A control the
    callback ignores, or that nothing observes, is returned by its description. The figures are captured, not
    shown. A check cell calls it right after a widget cell: ``assert dead_controls(explorer) == []``.
    """
    import hashlib
    import io
    import math
    import re

    import ipywidgets
    import matplotlib.pyplot as plt
    from ipywidgets.widgets import interaction

    if not isinstance(widget, ipywidgets.interactive):
        raise TypeError(f"widget must be an ipywidgets.interactive, got {type(widget).__name__}")
    shots = []

    def png(fig):
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=40)
        return hashlib.sha1(buf.getvalue()).hexdigest()

    def capture():  # instead of showing the figures inline: keep their bytes
        shots.extend(png(plt.figure(n)) for n in plt.get_fignums())
        plt.close("all")

    def state():
        r = widget.result
        figs = [x for x in (r if isinstance(r, (tuple, list)) else [r]) if hasattr(x, "savefig")]
        text = re.sub(r" at 0x[0-9a-f]+", "", repr(r))
        return [text if not figs else "", [png(f) for f in figs], sorted(shots)]

    def moved(c):
        v = c.value
        if getattr(c, "options", None):
            opts = list(c.options)
            return opts[(opts.index(v) + 1) % len(opts)] if v in opts else opts[0]
        if isinstance(v, bool):
            return not v
        if isinstance(v, str):
            digits = [i for i, ch in enumerate(v) if ch.isdigit()]
            i = digits[-1] if digits else None
            return v[:i] + str((int(v[i]) + 1) % 10) + v[i + 1:] if i is not None else v + "x"
        if hasattr(c, "base"):  # FloatLogSlider: value = base ** exponent
            e = math.log(v, c.base)
            e = e - c.step if e - c.step >= c.min - 1e-9 else e + c.step
            return c.base ** e
        step = getattr(c, "step", 1) or 1
        return v - step if v - step >= c.min else v + step

    saved, saved_show = interaction.show_inline_matplotlib_plots, plt.show
    interaction.show_inline_matplotlib_plots = capture
    plt.show = lambda *args, **kwargs: capture()  # callbacks that call plt.show() themselves
    dead = []
    try:
        plt.close("all")  # figures drawn before the check (the widget's first view, unless a kernel showed it)
        shots.clear()
        widget.update()
        before = state()
        for c in widget.kwargs_widgets:
            if not isinstance(c, ipywidgets.Widget):  # fixed(...) arguments are not controls
                continue
            old = c.value
            shots.clear()
            c.value = moved(c)  # the observer calls the callback, as a moved slider does
            if state() == before:
                dead.append(c.description or type(c).__name__)
            shots.clear()
            c.value = old
    finally:
        interaction.show_inline_matplotlib_plots, plt.show = saved, saved_show
        plt.close("all")
    return dead
