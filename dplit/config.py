# Hand-written module (not generated from a notebook).
"""The size switch: one environment variable decides tutorial size or quick (CI) size.

Every notebook takes its sample sizes, iteration counts and repetitions from :func:`size`,
so that the same code path runs at full size for readers and small in the test suite::

    from dplit.config import size
    n = size(full=5000, quick=200)

Set ``DPLIT_QUICK=1`` (the test suite does) to get the quick sizes.
"""

import os

ENV_VAR = "DPLIT_QUICK"

__all__ = ["ENV_VAR", "is_quick", "size"]


def is_quick() -> bool:
    """Return True when the environment asks for quick (test-suite) sizes.

    Read at every call, so that a test may set the variable after import.
    """
    value = os.environ.get(ENV_VAR, "").strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    raise ValueError(f"{ENV_VAR} must be one of 0/1/true/false/yes/no/on/off, got {value!r}")


def size(full, quick):
    """Return ``quick`` under the size switch, else ``full``.

    Parameters
    ----------
    full : object
        Value used by readers (tutorial size: a few minutes per notebook).
    quick : object
        Value used by the test suite (``DPLIT_QUICK=1``).
    """
    return quick if is_quick() else full
