"""The notebooks' one reader of stored benchmark results (``benchmarks/results/<name>``).

Speed and repeated-sampling studies run as scripts under ``benchmarks/``; they store their small results, with the
command that produced them, in ``benchmarks/results/``. A notebook shows them through :func:`stored`, so that it never
copies a timing by hand and says plainly when a result is absent (a wheel install, or a folder without the
benchmarks). The library itself never reads ``benchmarks/``.
"""

import csv
import json
from pathlib import Path

RESULTS = Path(__file__).resolve().parent.parent / "benchmarks" / "results"


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
