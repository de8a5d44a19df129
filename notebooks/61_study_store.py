# %% [markdown]
# # The study's stores and runner: nothing lost, nothing redone, any executor
#
# * **For:** the machinery under the simulation study of Guo et al. (Sec. 5.1, notebook `62_study`): where finished tasks are kept and how the remaining ones are run.
# * **You need:** tasks named by their keys (`dplit.study.make_tasks`) and a function that runs one key (`dplit.study.run_task`); nothing to download.
# * **You get:** `dplit.study_store`: the text-table and SQLite stores (`TableStore`, `ResultStore`, `open_store`, `export_table`), the executors (`SerialExecutor`, `dask_executor`) and the resumable runner `run_tasks`, each checked here; `dplit.study` re-exports them all, and its `run_study` is `run_tasks` applied to a study's tasks.
#
# The store and the runner know nothing of Dirichlet models or privacy: a task is a key (a JSON text of its
# settings) and a result is a JSON-able dict. That is why they sit below `dplit.study` and can be checked here on
# their own, with the small study of notebook 62 as the tasks.

# %%
#| default_exp study_store

# %% [markdown]
# ## Parameters
#
# The small study of notebook 62's section 1 (one scenario, two methods, two replicates, the quick effort: four
# tasks). Nothing here depends on the size switch: the checks run the same four tasks in both modes.

# %%
import json
import sqlite3
import tempfile
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from dplit.config import is_quick
from dplit.study import StudyConfig, make_tasks, run_study, run_task

small = StudyConfig.from_dict({"alpha_true": [[2.0, 2.0, 2.0]], "n": [200], "eps": [1.0],
                               "methods": ["dpboots", "dpmcmc_p1"], "replicates": 2, "seed": 1, "quick": True})
ts = make_tasks(small)
tmp = Path(tempfile.mkdtemp())
assert len(ts) == 4 and ts[0].settings["method"] == "dpboots"
print(f"quick mode: {is_quick()}; {len(ts)} tasks")

# %% [markdown]
# ## 1. The store: nothing lost, nothing redone
#
# A store holds finished tasks under their keys; the process that drives the study writes each one as soon as it
# finishes (workers only compute). Two forms, chosen by the path (`open_store`):
#
# * **A text table** (`*.jsonl`, `TableStore`): one line per task, `{"settings": {...}, "result": {...}}`, appended
#   and synced to disk. This is the form to commit: a diff shows the tasks added, and any machine extends the same
#   study from a clone. A run killed while writing leaves at most one line without its newline; it is not a task,
#   and the next write drops it (with a warning) so that its task runs again. A damaged line elsewhere is an error
#   naming the line, never skipped in silence.
# * **SQLite** (any other path, `ResultStore`): one table, `results(key PRIMARY KEY, method, record, finished)`.
#   Its transactions make each write all-or-nothing; `INSERT OR IGNORE` on the primary key makes a duplicate
#   impossible; reading opens the file read-only (`mode=ro`), so a complete study does not touch it at all.
#
# `export_table` (and `dplit study export`) copies a SQLite store into a text table, adding only the tasks it lacks,
# in key order.

# %%
#| export
import concurrent.futures as cf
import json
import os
import sqlite3
import time
import warnings
from pathlib import Path
from typing import NamedTuple

from dplit import _validate as V
from dplit._files import same_file
from dplit.sampling import LazyBar

_SCHEMA = ("CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, method TEXT NOT NULL, "
           "record TEXT NOT NULL, finished REAL NOT NULL)")


def _check_path(p, write, example):
    """The checks every store makes of its path (ValueError naming it, one line): not a folder, and with ``write``
    an absent file's folder exists and is writable. Returns the path."""
    if p.is_dir():
        raise ValueError(f"{p} is a folder, not a store; give a file such as {p / example}")
    if not p.exists() and write:
        if not p.parent.is_dir():
            raise ValueError(f"{p}: the folder {p.parent} does not exist (create it first)")
        if not os.access(p.parent, os.W_OK):
            raise ValueError(f"{p}: the folder {p.parent} is not writable")
    return p

# %%
#| export
class ResultStore:
    """Finished tasks of one or more studies in a SQLite file, keyed by the task key.

    Parameters
    ----------
    path : str or Path
        The file (created with its table at the first write).
    """

    def __init__(self, path):
        self.path = Path(path)

    def check(self, *, write=False):
        """Refuse, in one line (ValueError naming the path), a path that cannot be a store: a folder, a file that
        is not a SQLite database or has no ``results`` table, and with ``write`` a missing or read-only folder.
        An absent file (or an empty one) is an empty store. Reads nothing but SQLite's table list; returns self."""
        p = _check_path(self.path, write, "results.sqlite")
        if not p.exists():
            return self
        try:
            con = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
            try:
                tables = {name for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            finally:
                con.close()
        except sqlite3.Error as err:
            raise ValueError(f"{p} is not a study store (SQLite says: {err})") from None
        if tables and "results" not in tables:
            raise ValueError(f"{p} is a SQLite file without a 'results' table, not a study store")
        return self

    def _read(self):
        if not self.check().path.exists():
            return None
        return sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)

    def done_keys(self):
        """The set of keys already stored (opens the file read-only; an absent file is empty)."""
        con = self._read()
        if con is None:
            return set()
        try:
            return {k for (k,) in con.execute("SELECT key FROM results")}
        except sqlite3.OperationalError:   # a file without the table yet
            return set()
        finally:
            con.close()

    def put(self, key, record):
        """Write one finished task at once (committed); a key already stored is left as it is."""
        con = sqlite3.connect(self.check(write=True).path, timeout=60)
        try:
            with con:
                con.execute(_SCHEMA)
                con.execute("INSERT OR IGNORE INTO results VALUES (?, ?, ?, ?)",
                            (key, json.loads(key)["method"], json.dumps(record), time.time()))
        finally:
            con.close()

    def rows(self):
        """Every stored task as one flat dict: its settings and its measures."""
        con = self._read()
        if con is None:
            return []
        try:
            return [{**json.loads(k), **json.loads(r)} for k, r in con.execute("SELECT key, record FROM results")]
        except sqlite3.OperationalError:   # a file without the table yet (e.g. empty)
            return []
        finally:
            con.close()

    def records(self):
        """(key, record) of every stored task."""
        con = self._read()
        if con is None:
            return []
        try:
            return [(k, json.loads(r)) for k, r in con.execute("SELECT key, record FROM results")]
        except sqlite3.OperationalError:   # a file without the table yet
            return []
        finally:
            con.close()

    def __len__(self):
        return len(self.done_keys())

# %%
#| export
class TableStore:
    """Finished tasks in a text table: JSON lines, one task per line, ``{"settings": ..., "result": ...}``.

    The form to commit and share: a diff shows the tasks added, any machine can extend the same study, and
    :func:`run_tasks` (and so ``dplit.study.run_study``) resumes from it as from a SQLite store. Each line is
    appended and flushed to disk as its task finishes. A line cut short by a killed run (the last line, without
    its newline) is not a task: it is dropped at the next write, with a warning, and its task runs again.

    Parameters
    ----------
    path : str or Path
        The file, ending in ``.jsonl`` (created at the first write).
    """

    def __init__(self, path):
        self.path = Path(path)
        self._known = None     # (size, mtime) of the file after this object's last write, and its keys then

    def check(self, *, write=False):
        """Refuse a path that cannot be a text table (ValueError naming it, one line); returns self."""
        _check_path(self.path, write, "results.jsonl")
        return self

    def _lines(self):
        """(key, settings, result) of every whole line, first occurrence of a key kept; a bad line raises."""
        if not self.check().path.exists():
            return []
        text = self.path.read_text()
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        elif lines:            # a last line without its newline: cut short by a killed run, not a task
            lines.pop()
        out, seen = [], set()
        for i, line in enumerate(lines, 1):
            try:
                row = json.loads(line)
                s, r = row["settings"], row["result"]
            except (ValueError, KeyError, TypeError):
                raise ValueError(f"{self.path}, line {i}: not a task row ({{'settings': ..., 'result': ...}})") from None
            key = json.dumps(s, sort_keys=True, separators=(",", ":"))
            if key not in seen:
                seen.add(key)
                out.append((key, s, r))
        return out

    def done_keys(self):
        """The set of keys already stored."""
        return {k for k, _, _ in self._lines()}

    def records(self):
        """(key, record) of every stored task."""
        return [(k, r) for k, _, r in self._lines()]

    def put(self, key, record):
        """Append one finished task (flushed and synced to disk); a key already stored is left as it is."""
        self.put_many([(key, record)])

    def put_many(self, pairs):
        """Append finished tasks ``(key, record)`` in one write; keys already stored are left as they are."""
        p = self.check(write=True).path
        # a study writes one row per finished task: re-reading the whole table for each would cost O(rows^2);
        # the keys are re-read only when the file changed since this object's own last write
        here = (p.stat().st_size, p.stat().st_mtime_ns) if p.exists() else None
        have = set(self._known[1]) if self._known is not None and self._known[0] == here else self.done_keys()
        new = []
        for key, record in pairs:
            if key not in have:
                have.add(key)
                new.append({"settings": json.loads(key), "result": record})
        if not new:
            return
        with open(p, "a+b") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            if size:
                fh.seek(max(0, size - 65536))
                tail = fh.read()
                if not tail.endswith(b"\n"):          # drop a line cut short by a killed run
                    cut = tail.rfind(b"\n")
                    if cut < 0 and size > len(tail):
                        raise ValueError(f"{p}: its last line is over {len(tail)} bytes without a newline: not a "
                                         "task row; repair the file by hand")
                    fh.truncate(size - len(tail) + cut + 1 if cut >= 0 else 0)
                    warnings.warn(f"{p}: dropped an unfinished last line (a run killed while writing)",
                                  stacklevel=2)
            fh.seek(0, os.SEEK_END)
            fh.write("".join(json.dumps(row, sort_keys=True, separators=(",", ":")) + "\n" for row in new).encode())
            fh.flush()
            os.fsync(fh.fileno())
        self._known = ((p.stat().st_size, p.stat().st_mtime_ns), have)

    def rows(self):
        """Every stored task as one flat dict: its settings and its measures."""
        return [{**s, **r} for _, s, r in self._lines()]

    def __len__(self):
        return len(self._lines())

# %%
#| export
def open_store(store):
    """The store at a path: a :class:`TableStore` for ``*.jsonl``, else a :class:`ResultStore` (SQLite).

    ``store`` is a path (str or os.PathLike) or a store; anything else is refused (TypeError naming it).
    """
    if isinstance(store, (ResultStore, TableStore)):
        return store
    if not isinstance(store, (str, os.PathLike)) or not str(store):
        raise TypeError(f"store must be a path (str or os.PathLike) or a store, got {type(store).__name__}")
    # refused at once: a folder, or a file that is not a SQLite store (an absent file is an empty store)
    return (TableStore(store) if Path(store).suffix == ".jsonl" else ResultStore(store)).check()


def export_table(store, out):
    """Copy every task of a store into a text table (``*.jsonl``), adding only the tasks it lacks.

    Returns the number of tasks added. They are added in key order, so two exports of one store give one file.
    """
    dst = open_store(out)
    if not isinstance(dst, TableStore):
        raise ValueError(f"out must be a text table ending in .jsonl, got {out}")
    src = open_store(store)
    if same_file(dst.path, src.path) or dst.path == src.path:
        raise ValueError(f"out must be another file than the store it copies, got {out} for both")
    have = dst.check(write=True).done_keys()
    todo = sorted((k, r) for k, r in open_store(store).check().records() if k not in have)
    dst.put_many(todo)
    return len(todo)


# %% [markdown]
# Checks: a write is visible at once, a second write of the same key changes nothing, the rows are the task's
# settings joined with its record, and reading a store leaves the file's bytes and time stamp unchanged.

# %%
from dplit.study_store import ResultStore  # noqa: E402

st = ResultStore(tmp / "check.sqlite")
assert len(st) == 0 and st.rows() == [] and not st.path.exists()
st.put(ts[0].key, {"mse_alpha": 1.0})
st.put(ts[0].key, {"mse_alpha": 2.0})
assert st.done_keys() == {ts[0].key} and st.rows()[0]["mse_alpha"] == 1.0 and st.rows()[0]["method"] == "dpboots"
before = (st.path.read_bytes(), st.path.stat().st_mtime_ns)
st.done_keys(), st.rows()
assert (st.path.read_bytes(), st.path.stat().st_mtime_ns) == before
# A path that cannot be a store is refused in one line naming it, before any task runs: a folder, a file that is
# not a SQLite database, a database of something else, a store in a folder that does not exist.
(tmp / "not_db.sqlite").write_text("hello")
sqlite3.connect(tmp / "other.sqlite").execute("CREATE TABLE t (x)").connection.close()
for bad_store, word in [(tmp, "is a folder"), (tmp / "not_db.sqlite", "not a study store"),
                        (tmp / "other.sqlite", "without a 'results' table"), (tmp / "no" / "s.sqlite", "does not exist")]:
    try:
        ResultStore(bad_store).check(write=True)
    except ValueError as e:
        assert word in str(e) and "\n" not in str(e), e
    else:
        raise AssertionError(f"{bad_store} accepted")

# %% [markdown]
# The text table keeps the same promises: the same task twice is one line, a line cut short by a kill is dropped at
# the next write (and its task is not counted as done), and the export of the SQLite store above is the same rows.

# %%
from dplit.study_store import TableStore, export_table, open_store  # noqa: E402

tab = open_store(tmp / "check.jsonl")
assert isinstance(tab, TableStore) and len(tab) == 0
tab.put(ts[0].key, {"mse_alpha": 1.0})
tab.put(ts[0].key, {"mse_alpha": 2.0})
tab.put(ts[1].key, {"mse_alpha": 3.0})
assert len(tab) == 2 and tab.rows()[0]["mse_alpha"] == 1.0
tab.path.write_bytes(tab.path.read_bytes()[:-5])           # a run killed while writing the second line
assert tab.done_keys() == {ts[0].key}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    tab.put(ts[1].key, {"mse_alpha": 3.0})
assert len(tab) == 2 and tab.path.read_text().count("\n") == 2 and "unfinished last line" in str(caught[0].message)
assert export_table(st, tmp / "export.jsonl") == 1 and TableStore(tmp / "export.jsonl").rows() == st.rows()
print(tab.path.read_text().splitlines()[0][:120], "...")

# %% [markdown]
# ## 2. The runner: any executor, resumable
#
# `run_tasks(keys, run, store, executor=...)` takes the keys of a study's tasks, drops those already in the store,
# submits `run(key)` for the rest to a `concurrent.futures.Executor` and writes each result as it arrives. With
# nothing left it returns at once without creating an executor or touching the store. The default executor is a
# local process pool (`workers` processes); Dask runs the same study on a cluster through
# `distributed.Client(address).get_executor()` (optional extra `distributed`; imported only when asked for, by
# `dask_executor`). Tasks are submitted in a bounded window (twice the workers) rather than all at once, so that a
# study of 20,000 tasks does not queue them all and an interrupted run loses at most the tasks in flight. A small
# `SerialExecutor` runs tasks one by one in the calling process (no start-up cost: the notebooks' checks and tests
# use it). Each worker runs a task single-threaded; the task's seeds come from its key, so where and in which order
# it runs does not change its result. `dplit.study.run_study(config, store, ...)` is this runner applied to the keys
# of `make_tasks(config)` and to `run_task`.

# %%
#| export
class SerialExecutor(cf.Executor):
    """A ``concurrent.futures.Executor`` that runs each task at submission, in the calling process."""

    _max_workers = 1

    def submit(self, fn, /, *args, **kwargs):
        fut = cf.Future()
        try:
            fut.set_result(fn(*args, **kwargs))
        except BaseException as err:  # noqa: BLE001 - handed to the caller through the future
            fut.set_exception(err)
        return fut


def dask_executor(scheduler=None, **client_options):
    """A ``concurrent.futures`` executor on a Dask cluster (``scheduler``: address, or None for a local cluster).

    Needs the optional extra ``distributed`` (``pip install 'dplit[distributed]'``). Returns ``(executor, client)``;
    close the client when done.
    """
    try:
        from distributed import Client
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("the Dask executor needs the optional extra: pip install 'dplit[distributed]'") from err
    if scheduler is not None and not isinstance(scheduler, str) and not hasattr(scheduler, "scheduler_address"):
        raise TypeError(f"scheduler must be None, an address (str) or a Dask cluster, got {type(scheduler).__name__}")
    client = Client(scheduler, **client_options) if scheduler else Client(processes=True, **client_options)
    return client.get_executor(), client


def _task_settings(key):
    """The settings of a task key (a JSON object with a ``"method"``), or a ValueError naming ``keys``."""
    try:
        settings = json.loads(key) if isinstance(key, (str, bytes)) else None
    except ValueError:
        settings = None
    if not isinstance(settings, dict) or "method" not in settings:
        raise ValueError(f"keys must be JSON texts of task settings with a 'method' (as dplit.study.make_tasks "
                         f"makes them), got {key!r}"[:300])
    return settings


# %%
#| export
class StudyRun(NamedTuple):
    """What :func:`run_tasks` (or ``dplit.study.run_study``) did: tasks run now, tasks found done, wall time in seconds."""

    ran: int
    found: int
    seconds: float

# %%
#| export
def run_tasks(keys, run, store, *, executor=None, progress=True, workers=None, max_tasks=None):
    """Run every task whose key is not in the store yet, writing each result as it finishes.

    Parameters
    ----------
    keys : sequence of str
        The tasks' keys (JSON texts of their settings, each with a ``"method"``), in the order to run them. They
        are written in one canonical form (sorted, without spaces, as ``dplit.study.make_tasks`` makes them),
        the form in which a :class:`TableStore` rebuilds them from its rows, so a task is found done in either
        store; ``run`` receives that form.
    run : callable
        ``run(key)`` computes one task and returns its JSON-able result; it must be picklable (a module-level
        function) for a process pool or Dask.
    store : ResultStore, TableStore, str or Path
        Where finished tasks go: a text table for a path ending in ``.jsonl`` (:class:`TableStore`, the form to
        commit), else a SQLite file (:class:`ResultStore`).
    executor : concurrent.futures.Executor, optional
        Where tasks run (a process pool, a Dask ``client.get_executor()``, :class:`SerialExecutor`). Default: a
        local process pool of ``workers`` processes (default: the CPU count), shut down at the end.
    progress : bool, default True
        A progress bar over the tasks run now.
    workers : int, optional
        Processes of the default pool.
    max_tasks : int, optional
        Run at most this many of the remaining tasks (a study in slices).

    Returns
    -------
    StudyRun
        ``ran`` (tasks run now), ``found`` (already done), ``seconds``.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> keys = [json.dumps({"method": "square", "x": x}) for x in (1, 2, 3)]
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "squares.jsonl"
    >>> square = lambda key: {"y": json.loads(key)["x"] ** 2}
    >>> run_tasks(keys, square, path, executor=SerialExecutor(), progress=False).ran
    3
    >>> run_tasks(keys, square, path, executor=SerialExecutor(), progress=False)[:2]    # nothing left to do
    (0, 3)
    """
    if not callable(run):
        raise TypeError(f"run must be a function of a task's key, got {type(run).__name__}")
    store = open_store(store).check(write=True)  # a bad store fails here, before any task
    if workers is not None:
        V.count(workers, "workers")
    t0 = time.perf_counter()
    keys = [json.dumps(_task_settings(k), sort_keys=True, separators=(",", ":")) for k in keys]
    done = store.done_keys()
    todo = [k for k in keys if k not in done]
    found = len(keys) - len(todo)
    if max_tasks is not None:
        todo = todo[: V.count(max_tasks, "max_tasks", minimum=0)]
    if not todo:
        return StudyRun(0, found, time.perf_counter() - t0)
    own = executor is None
    if own:
        executor = cf.ProcessPoolExecutor(max_workers=workers)
    bar = _bar(progress, len(todo))
    window = 2 * (getattr(executor, "_max_workers", None) or os.cpu_count() or 1)
    queue, pending = list(reversed(todo)), {}
    try:
        while queue or pending:   # keep a bounded window in flight; write each result as it arrives
            while queue and len(pending) < window:
                key = queue.pop()
                pending[executor.submit(run, key)] = key
            finished, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
            for fut in finished:
                store.put(pending.pop(fut), fut.result())
                bar.update(1)
    finally:
        bar.close()
        if own:
            executor.shutdown(wait=True, cancel_futures=True)
    return StudyRun(len(todo), found, time.perf_counter() - t0)

# %%
#| export
def _bar(progress, total):
    """A progress bar (shown once the run takes a while), or a stand-in with the same two methods."""
    if progress:
        return LazyBar(total=total, desc="tasks")

    class _Null:
        def update(self, k):
            pass

        def close(self):
            pass

    return _Null()


# %% [markdown]
# Checks. The small study runs (4 tasks); run again, here through `dplit.study.run_study` (the same keys), it does
# nothing and leaves the file untouched. An **interrupted** study (the executor is stopped by a `KeyboardInterrupt`
# at the third task, as Ctrl-C would) keeps the two finished rows; rerun, it runs only the two missing tasks, and the
# store then holds each task once with the same measures as an uninterrupted run in a process pool (runtimes apart):
# a result does not depend on where, when or in which order it ran.

# %%
from dplit.study_store import SerialExecutor, run_tasks  # noqa: E402

path_a = tmp / "a.sqlite"
first = run_tasks([t.key for t in ts], run_task, path_a, executor=SerialExecutor(), progress=False)
assert first[:2] == (4, 0)
before = (path_a.read_bytes(), path_a.stat().st_mtime_ns)
again = run_study(small, path_a, executor=SerialExecutor(), progress=False)
assert again[:2] == (0, 4) and (path_a.read_bytes(), path_a.stat().st_mtime_ns) == before


class Interrupted(SerialExecutor):
    """Raises KeyboardInterrupt at the k-th submission (a study stopped by Ctrl-C)."""

    def __init__(self, k):
        self.k = k

    def submit(self, fn, /, *args, **kwargs):
        self.k -= 1
        if self.k == 0:
            raise KeyboardInterrupt
        return super().submit(fn, *args, **kwargs)


path_b = tmp / "b.sqlite"
try:
    run_study(small, path_b, executor=Interrupted(3), progress=False)
except KeyboardInterrupt:
    pass
assert len(ResultStore(path_b)) == 2
resumed = run_study(small, path_b, executor=SerialExecutor(), progress=False)
assert resumed[:2] == (2, 2) and len(ResultStore(path_b)) == 4


def _measures(store):
    return {json.dumps({k: v for k, v in r.items() if k != "runtime"}, sort_keys=True) for r in store.rows()}


with ProcessPoolExecutor(2) as pool:
    run_study(small, tmp / "c.sqlite", executor=pool, progress=False)
assert _measures(ResultStore(path_b)) == _measures(ResultStore(tmp / "c.sqlite")) == _measures(ResultStore(path_a))
print(first, again, resumed)

# %% [markdown]
# ## When to use this
#
# * Through `dplit.study.run_study` or `dplit study run` (notebook 62), for the simulation study itself.
# * Directly, for any batch of slow, independent, seeded tasks that should survive a kill: name each task by a JSON
#   key holding everything its result depends on (its seeds included), give `run_tasks` a module-level function of
#   the key, and a `.jsonl` store to commit. A study stopped at any point resumes where it stopped, on any machine
#   that has the table.
