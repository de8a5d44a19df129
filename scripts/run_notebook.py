"""Execute a notebook into another folder, with the kernel started in the notebook's own folder.

Used by `make tutorial`: ``python scripts/run_notebook.py notebooks/NN_topic.py build/notebooks``
reads the Jupytext source, runs it top to bottom with the working directory ``notebooks/`` (where
a reader's JupyterLab runs it, so that paths such as ``../../shared/data`` mean the same) and
writes ``build/notebooks/NN_topic.ipynb``. Exit status 1 when a cell fails (the traceback is printed).
"""

from __future__ import annotations

import sys
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: run_notebook.py NOTEBOOK(.py|.ipynb) OUT_DIR", file=sys.stderr)
        return 2
    src, out_dir = Path(argv[0]), Path(argv[1])
    nb = jupytext.read(src)
    nb.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
    client = NotebookClient(nb, timeout=900, kernel_name=nb.metadata["kernelspec"]["name"],
                            resources={"metadata": {"path": str(src.resolve().parent)}})
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / (src.stem + ".ipynb")
    try:
        client.execute()
    except CellExecutionError as err:
        print(err, file=sys.stderr)
        return 1
    finally:
        nbformat.write(nb, target)   # also on failure: the outputs up to the failing cell
    return 0


if __name__ == "__main__":
    sys.exit(main())
