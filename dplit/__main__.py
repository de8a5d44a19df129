# Hand-written module (not generated from a notebook).
"""``python -m dplit``: the same as the ``dplit`` script (see :mod:`dplit.cli`)."""

import sys

from dplit.cli import main

__all__: list[str] = []  # nothing to import: run it

if __name__ == "__main__":
    sys.exit(main())
