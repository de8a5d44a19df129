# Hand-written module (not generated from a notebook).
"""How the notebooks run: the size switch, and the stored results of the benchmarks.

Every notebook takes its sample sizes, iteration counts and repetitions from :func:`size`,
so that the same code path runs at full size for readers and small in the test suite::

    from dplit.config import size
    n = size(full=5000, quick=200)

Set ``DPLIT_QUICK=1`` (the test suite does) to get the quick sizes.

Speed and repeated-sampling studies run as scripts under ``benchmarks/`` of a source checkout and store their small
results, with the command that produced them, in ``benchmarks/results/``. A notebook shows them through
:func:`stored`, so that it never copies a timing by hand and says plainly when a result is absent (an installed wheel,
or a folder without the benchmarks). Nothing else in the package reads ``benchmarks/``.
"""

import csv
import json
import os
from pathlib import Path

ENV_VAR = "DPLIT_QUICK"
# benchmarks/results of the checkout this package was installed from (editable installs); absent in a wheel.
RESULTS = Path(__file__).resolve().parent.parent / "benchmarks" / "results"

__all__ = ["is_quick", "size", "stored", "stored_rows", "stored_path"]


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


def stored(name, *, script=None):
    """The stored result ``name`` (``"latent_class_speed.json"``, ``"time_to_posterior.csv"``, ...), or None.

    JSON files come back as parsed objects, CSV files as a list of dicts (one per row, values as text). When the file
    is absent, one line says which script writes it (``script``, default: the benchmarks' README) and None is
    returned, so the notebook can skip what depends on it.
    """
    path = stored_path(name, script=script)
    if path is None:
        return None
    if path.suffix == ".json":
        return json.loads(path.read_text())
    if path.suffix == ".csv":
        with open(path, newline="") as fh:
            return list(csv.DictReader(fh))
    raise ValueError(f"name must end in .json or .csv, got {name!r}")


def stored_rows(name, *, script=None):
    """The rows of the stored JSON-lines table ``name`` (``"atus_table2.jsonl"``): a list of dicts, or None.

    One JSON object per line (blank lines are skipped), in the order written. When the file is absent, one line says
    which script writes it and None is returned, as :func:`stored` does.
    """
    if not name.endswith(".jsonl"):
        raise ValueError(f"name must end in .jsonl, got {name!r}")
    path = stored_path(name, script=script)
    if path is None:
        return None
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def stored_path(name, *, script=None):
    """The path of the stored result ``name`` for a reader of its own (a study's text table), or None.

    When the file is absent, one line says which script writes it and None is returned, as :func:`stored` does.
    """
    path = RESULTS / name
    if not path.exists():
        print(f"benchmarks/results/{name} not found: run {script or 'the benchmark that writes it'} "
              "(see benchmarks/README.md)")
        return None
    return path
