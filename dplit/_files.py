# Hand-written module (not generated from a notebook).
"""Every whole file dplit writes, by one rule (the README's "Files dplit writes").

A release (``Release.save``, ``dplit release --out``), a result (:func:`dplit.results.to_netcdf`,
``dplit analyse --out``), a report (``Comparison.to_html``, ``dplit compare --out``, ``dplit study report
--out``) is written by :func:`atomic_write`:

* the bytes go to a temporary file in the target's folder (the same filesystem), which is then renamed
  into place, so that the target is either as it was or the whole new file, never a part of it;
* without ``overwrite`` (``--force`` in the command line) the new file is linked into place
  exclusively (``os.link`` fails if the name exists), so that a file created meanwhile (by another run,
  or while a sampler ran) is never replaced: "exists (use ... to overwrite it)";
* an input of the same run (``inputs``) is never written over, even with ``overwrite``: the target and
  each input are compared by device and inode, so another name of the same file is caught too;
* on any failure (a full disk, an exception of the writer, an interrupt) the temporary file is removed
  and the target is untouched; an ``OSError`` is raised again as one ``OSError`` naming the target.

Appending to an existing file (the study's JSONL store) and a database's own transactions (the SQLite
store) are not whole-file writes and do not go through here. This module imports nothing of dplit.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write", "check_target", "same_file"]

# Filesystems without hard links answer os.link with one of these; the target is then reserved with O_EXCL.
_NO_LINKS = {errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV, errno.EMLINK, errno.ENOSYS}


def same_file(a, b) -> bool:
    """True when ``a`` and ``b`` both exist and are the same file (device and inode; symbolic links followed)."""
    try:
        sa, sb = os.stat(a), os.stat(b)
    except (OSError, ValueError):
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def _exists_error(path, flag):
    return FileExistsError(f"{path} exists (use {flag} to overwrite it)")


def check_target(path, *, overwrite=False, inputs=(), flag="overwrite=True"):
    """Refuse a target that :func:`atomic_write` would refuse, before any work is done; returns it as a Path.

    Raises ``ValueError`` when ``path`` is a folder, its folder does not exist, or it is one of ``inputs``
    (even with ``overwrite``), and ``FileExistsError`` when it exists and ``overwrite`` is False; ``flag``
    is the name of the switch that allows overwriting, for the message (``--force`` in the command line).
    """
    if not isinstance(overwrite, bool):   # overwrite='no' is truthy: it must not replace a file
        raise TypeError(f"{flag.split('=')[0]} must be True or False, got {overwrite!r}")
    if not isinstance(path, (str, os.PathLike)) or not str(path):
        raise TypeError(f"path must be a file name (str or os.PathLike), got {path!r}")
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path} is a folder; give a file name")
    if not path.parent.is_dir():
        raise ValueError(f"{path}: the folder {path.parent} does not exist (create it first)")
    for source in inputs:
        if source is not None and same_file(path, source):
            name = f"{source}" if str(source) == str(path) else f"{source} (the same file as {path})"
            raise ValueError(f"{path} is the input {name} of this run; write the output elsewhere "
                             f"({flag} never writes over an input)")
    if not overwrite and os.path.lexists(path):
        raise _exists_error(path, flag)
    return path


def _mode(path, overwrite):
    """Permissions of the new file: the replaced file's, or those ``open`` would give (0o666 less the umask)."""
    if overwrite:
        try:
            return os.stat(path).st_mode & 0o7777
        except OSError:
            pass
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _place(tmp, path, overwrite, flag):
    if overwrite:
        os.replace(tmp, path)
        return
    try:
        os.link(tmp, path)              # atomic and exclusive: fails if the name exists
    except FileExistsError:
        raise _exists_error(path, flag) from None
    except OSError as err:
        if err.errno not in _NO_LINKS:
            raise
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)   # reserve the name, then fill it
        os.close(fd)
        os.replace(tmp, path)
        return
    try:
        os.unlink(tmp)
    except OSError:
        pass


def atomic_write(path, data, *, overwrite=False, inputs=(), flag="overwrite=True"):
    """Write a whole file by dplit's one rule (see the module's docstring); returns ``path`` as a Path.

    Parameters
    ----------
    path : str or Path
        The file to write.
    data : str, bytes-like or callable
        The content (a ``str`` is written as UTF-8), or a function ``write(tmp_path)`` that writes the file
        at the path it is given (the temporary file, which exists, empty, and ends in ``path``'s suffix so
        that writers choosing a format by the suffix, such as ``savefig``, choose the target's).
    overwrite : bool
        Replace an existing ``path``; without it an existing file (even one created while ``data`` was
        being written) is kept and ``FileExistsError`` is raised.
    inputs : sequence of str or Path
        Files this run read; ``path`` may be none of them, even with ``overwrite`` (ValueError naming both).
    flag : str
        The name of the switch that allows overwriting, for the messages (``--force`` in the command line).

    Raises
    ------
    ValueError
        ``path`` is a folder, in a missing folder, or one of ``inputs``.
    FileExistsError
        ``path`` exists and ``overwrite`` is False.
    OSError
        The write failed (e.g. the disk is full); the message names ``path``, which is unchanged.
    """
    path = check_target(path, overwrite=overwrite, inputs=inputs, flag=flag)
    if isinstance(data, str):
        data = data.encode("utf-8")
    elif not callable(data):
        data = memoryview(data)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=f".tmp{path.suffix}", dir=path.parent)
    except OSError as err:          # a folder that takes no new file (read-only, a virtual filesystem)
        reason = err.strerror or str(err) or type(err).__name__
        new = OSError(f"cannot write {path}: {reason} (in its folder {path.parent}); nothing was written")
        new.errno = err.errno
        raise new from err
    tmp = Path(tmp)
    try:
        if callable(data):
            os.close(fd)
            fd = None
            data(tmp)
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
        else:
            with os.fdopen(fd, "wb") as fh:
                fd = None
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(tmp, _mode(path, overwrite))
        _place(tmp, path, overwrite, flag)
    except BaseException as err:
        if fd is not None:
            os.close(fd)
        try:
            tmp.unlink()
        except OSError:
            pass
        if isinstance(err, OSError) and not isinstance(err, FileExistsError):
            reason = err.strerror or str(err) or type(err).__name__
            new = OSError(f"cannot write {path}: {reason}; {path} was left as it was")
            new.errno = err.errno
            raise new from err
        raise
    return path
