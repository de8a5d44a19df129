# Hand-written module (not generated from a notebook).
"""The argument checks shared across dplit, with the messages users see.

Every public function checks its arguments first, with these helpers, so that one rule has one
wording everywhere: each takes the value and the argument's ``name`` and returns the value in its
checked form (a float, an int, an array, a Generator), or raises ``TypeError`` (wrong kind of
value) or ``ValueError`` (right kind, outside the rule), naming the argument and the rule.

This module sits at the bottom of ``dplit.LAYERS``: it imports nothing from dplit.
"""

from __future__ import annotations

import math
import numbers
import os

import numpy as np

# A private module has no public surface: every dplit module imports the checks it needs by name.
__all__: list[str] = []

#: The most memory, in bytes, that one call may plan for its working arrays: 4 GiB, a part of a laptop's
#: memory that leaves room for the rest of a session. A call whose sizes imply more (simulations of ABC,
#: candidates of a selection, cells of a full table) is refused before any work, naming the number implied
#: and the argument to change. The environment variable ``DPLIT_MAX_BYTES`` (an integer) overrides it,
#: for a larger machine.
MAX_WORK_BYTES = 4 * 2**30

#: The largest integer a count may hold: numpy's int64, which every array of counts and every kernel uses.
INT64_MAX = 2**63 - 1


def shown(value):
    """``value`` as text for a message, a huge integer shortened to its first digits and its length."""
    text = str(value)
    if isinstance(value, (int, np.integer)) and len(text) > 24:
        return f"{text[:6]}...({len(text.lstrip('-'))} digits)"
    return text


def real(value, name):
    """Return a real scalar (Python, NumPy or 0-d array; not a bool) as a float, or raise TypeError."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    return float(value)


def finite(value, name):
    """Return a finite real scalar as a float, or raise."""
    value = real(value, name)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


def positive(value, name):
    """Return a finite real scalar > 0 as a float, or raise."""
    value = real(value, name)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be finite and > 0, got {value}")
    return value


def nonnegative(value, name):
    """Return a finite real scalar >= 0 as a float, or raise."""
    return epsilon(value, name, allow_zero=True)


def epsilon(value, name="epsilon", *, allow_zero=False, allow_inf=False):
    """Return a privacy parameter (> 0, or >= 0 with ``allow_zero``; finite unless ``allow_inf``) as a float."""
    value = real(value, name)
    ok = value >= 0 if allow_zero else value > 0
    if math.isnan(value) or not ok or (math.isinf(value) and not allow_inf):
        rule = f"{'>=' if allow_zero else '>'} 0"
        rule = f"{rule} (inf allowed)" if allow_inf else f"finite and {rule}"
        raise ValueError(f"{name} must be {rule}, got {value}")
    return value


def delta(value, name="delta"):
    """Return a failure probability delta in (0, 1) as a float, or raise."""
    return unit_interval(value, name)


def threshold(value, name="a"):
    """Return a censoring threshold in (0, 1) as a float, or raise."""
    return unit_interval(value, name)


def level(value, name="level"):
    """Return a confidence level in (0, 1) as a float, or raise."""
    return unit_interval(value, name)


def unit_interval(value, name, *, closed_low=False, closed_high=False):
    """Return a probability in (0, 1), with either end closed on request, as a float, or raise."""
    value = real(value, name)
    above = value >= 0.0 if closed_low else value > 0.0
    below = value <= 1.0 if closed_high else value < 1.0
    if not (above and below):
        if not (closed_low or closed_high):
            raise ValueError(f"{name} must lie in the open interval (0, 1), got {value}")
        interval = f"{'[' if closed_low else '('}0, 1{']' if closed_high else ')'}"
        raise ValueError(f"{name} must lie in {interval}, got {value}")
    return value


def count(value, name, minimum=1):
    """Return an integer (Python or NumPy int; not a bool or float) >= ``minimum`` as an int, or raise."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {shown(value)}")
    if value > INT64_MAX:
        raise ValueError(f"{name} must fit in a 64-bit integer (<= 2**63 - 1), got {shown(value)}")
    return int(value)


def integer_values(value, name, bound=2**62):
    """Return an array of whole numbers (an int dtype, or floats with integer values) as int64, or raise.

    Counts read from JSON arrive as floats (``1e3``); they are accepted when whole. Entries beyond ``+-bound``
    (2**62 by default: room for noise without wrapping round in int64) are refused by name, before the cast
    to int64 would wrap them round to a wrong sign.
    """
    try:
        arr = np.asarray(value)
    except (ValueError, OverflowError):
        raise TypeError(f"{name} must be a rectangular array of integers") from None
    if arr.dtype == object and arr.size and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                                                for v in arr.ravel()):
        raise ValueError(f"{name} must lie within +-2**62 (int64), got an integer past 64 bits")
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"{name} must be an array of integers, got dtype {arr.dtype}")
    if arr.size and np.issubdtype(arr.dtype, np.floating) and not np.all(np.isfinite(arr) & (arr == np.round(arr))):
        raise ValueError(f"{name} must hold whole numbers (no fractions, NaN or inf)")
    if arr.size and np.max(np.abs(arr.astype(float))) > bound:
        raise ValueError(f"{name} must lie within +-2**62 (int64), got {np.max(np.abs(arr.astype(float))):.3g}")
    return arr.astype(np.int64)


def int_array(value, name, *, low=None, high=None, ndim=None):
    """Return an array of integers as int64, every entry in ``[low, high)`` (either end optional), or raise.

    Integer dtypes only (not bool, not float): a level code or a count that arrives as a float is a mistake to
    name, not to round. ``high`` may be an array broadcast against the last axis (one bound per column).
    Entries past int64 (an object or uint64 array) are refused by name.
    """
    try:
        arr = np.asarray(value)
    except (ValueError, OverflowError):       # ragged nesting, or an int numpy cannot hold
        raise TypeError(f"{name} must be a rectangular array of integers") from None
    if arr.dtype == object and arr.size and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                                                for v in arr.ravel()):
        raise ValueError(f"{name} must hold integers that fit in 64 bits (<= 2**63 - 1)")
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{name} must be an array of integers, got dtype {arr.dtype}")
    if arr.dtype == np.uint64 and arr.size and arr.max() > INT64_MAX:
        raise ValueError(f"{name} must hold integers that fit in 64 bits (<= 2**63 - 1)")
    arr = arr.astype(np.int64)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got an array of shape {arr.shape}")
    if low is not None and arr.size and np.any(arr < low):
        raise ValueError(f"{name} must be >= {low}, got {int(arr.min())}")
    if high is not None and arr.size:
        bound = np.asarray(high)
        over = arr >= bound
        if np.any(over):
            j = tuple(int(i) for i in np.argwhere(over)[0])
            rule = f"< {int(bound)}" if bound.ndim == 0 else f"< its column's bound {bound.tolist()}"
            raise ValueError(f"{name}{list(j)} = {int(arr[j])} is out of range: entries must be {rule}")
    return arr


def choice(value, name, options):
    """Return ``value`` if it is one of ``options`` (a tuple), or raise ValueError listing them."""
    try:
        ok = value in options
    except TypeError:  # an unhashable value against a set/dict of options
        ok = False
    if not ok:
        raise ValueError(f"{name} must be one of {tuple(options)}, got {value!r}")
    return value


def boolean(value, name):
    """Return ``value`` as a bool if it is True or False (Python or NumPy), or raise TypeError."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def names(value, d, name="names"):
    """Component names: None, or ``d`` distinct non-empty strings (stripped, returned as a tuple)."""
    if value is None:
        return None
    if (isinstance(value, str) or not hasattr(value, "__iter__")
            or not all(isinstance(v, str) and v.strip() for v in value)):
        raise TypeError(f"{name} must be a sequence of {d} non-empty strings, got {value!r}")
    value = tuple(v.strip() for v in value)
    if len(value) != d or len(set(value)) != d:
        raise ValueError(f"{name} must be {d} distinct strings (one per component), got {list(value)}")
    return value


def rng(value, name="rng"):
    """Return ``np.random.default_rng(value)`` (None, a seed, a SeedSequence, a Generator), or raise naming ``name``."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) and value < 0:
        raise ValueError(f"{name} must be a non-negative seed, got {value}")
    if not isinstance(value, (bool, np.bool_, str, bytes)):
        try:
            return np.random.default_rng(value)
        except (TypeError, ValueError):
            pass
    raise TypeError(f"{name} must be None, an int seed, a numpy SeedSequence or Generator, "
                    f"got {type(value).__name__}")


def real_array(value, name, ndim=None):
    """Return an array of real numbers (int or float dtype; not bool) as floats, or raise; ``ndim`` fixes its rank."""
    arr = np.asarray(value)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer)
                                 or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"{name} must be an array of real numbers, got dtype {arr.dtype}")
    arr = arr.astype(float)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got an array of shape {arr.shape}")
    return arr


def finite_array(value, name, ndim=None):
    """Return an array of finite real numbers as floats, or raise (no NaN or inf)."""
    arr = real_array(value, name, ndim)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr


def unit_interval_array(value, name):
    """Return an array (or scalar) of reals, every entry in the open interval (0, 1), as floats, or raise."""
    arr = real_array(value, name)
    if not np.all((arr > 0.0) & (arr < 1.0)):
        raise ValueError(f"{name} must lie in the open interval (0, 1), got {arr.tolist()}")
    return arr


def run_settings(n_iter, n_warmup, n_chains, thin, progress, n_jobs=None):
    """Return the checked run settings every sampler shares: (n_iter, n_warmup, n_chains, thin, progress, n_jobs).

    Rules: ``n_iter >= 1`` or ``"auto"`` (run until converged), ``n_warmup >= 0``, ``n_chains >= 1``, ``1 <= thin <= n_iter`` (at
    least one draw per chain), ``progress`` True or False, ``n_jobs`` None or an int >= 1; the kept
    draws, ``n_chains * (n_iter // thin)`` at 8 bytes or more each, must fit in :func:`max_work_bytes`.
    """
    if n_jobs is not None:
        n_jobs = count(n_jobs, "n_jobs")
    if isinstance(n_iter, str):              # "auto": the stopping rule's own settings are checked by the sampler core
        choice(n_iter, "n_iter", ("auto",))
        thin = count(thin, "thin")
        return ("auto", count(n_warmup, "n_warmup", 0), count(n_chains, "n_chains"), thin,
                boolean(progress, "progress"), n_jobs)
    n_iter = count(n_iter, "n_iter")
    n_warmup = count(n_warmup, "n_warmup", 0)
    n_chains = count(n_chains, "n_chains")
    thin = count(thin, "thin")
    if thin > n_iter:
        raise ValueError(f"thin must be <= n_iter = {n_iter} (at least one draw per chain), got {thin}")
    progress = boolean(progress, "progress")
    kept = n_chains * (n_iter // thin)          # 8 bytes per kept draw is a lower bound (one float per draw)
    work_size(8 * kept, f"{n_chains} chains x {n_iter // thin:,} kept draws (n_chains * n_iter / thin)",
              "lower n_iter or n_chains, or raise thin")
    return n_iter, n_warmup, n_chains, thin, progress, n_jobs


def max_work_bytes():
    """Return the memory budget of one call in bytes: ``$DPLIT_MAX_BYTES`` if set, else ``MAX_WORK_BYTES``."""
    text = os.environ.get("DPLIT_MAX_BYTES", "").strip()
    if not text:
        return MAX_WORK_BYTES
    try:
        value = int(float(text))
    except ValueError:
        value = 0
    if value <= 0:
        raise ValueError(f"DPLIT_MAX_BYTES must be a positive number of bytes, got {text!r}")
    return value


def _bytes(n):
    """``n`` bytes in a readable unit (e.g. '2.9 TiB')."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:.3g} PiB"  # pragma: no cover


def work_size(nbytes, what, change):
    """Refuse a call whose working arrays would need more than :func:`max_work_bytes`.

    ``what`` says what the size comes from (e.g. ``"1e+12 simulations (n_accept / accept_rate)"``) and
    ``change`` which argument to change; the ValueError names both, the bytes implied and the limit.
    Returns ``nbytes`` when it fits.
    """
    limit = max_work_bytes()
    if nbytes > limit:
        raise ValueError(f"{what} would need about {_bytes(float(nbytes))} of working memory, above the limit of "
                         f"{_bytes(float(limit))} (dplit._validate.MAX_WORK_BYTES, or $DPLIT_MAX_BYTES): {change}")
    return nbytes
