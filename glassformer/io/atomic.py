"""Atomic writes: a file is replaced whole or not at all.

Every file is written to a temporary file in the *same* folder, flushed and ``fsync``-ed, then
moved over the target with ``os.replace`` (atomic on POSIX and Windows).  If anything fails on the
way, the temporary file is removed and the previous file is untouched, so an interrupted run
never leaves a half-written model, figure or report behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np

from ..errors import InputError

__all__ = ["atomic_open", "atomic_write_bytes", "atomic_write_json", "atomic_write_text"]


def _file_mode(path: Path) -> int:
    """Permission bits for the new file: the old file's, else 0o666 minus the umask."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        pass
    try:  # Linux: read the umask without changing it (os.umask would, process-wide)
        with open("/proc/self/status", encoding="ascii") as fh:
            umask = next(int(line.split()[1], 8) for line in fh if line.startswith("Umask:"))
    except (OSError, StopIteration, ValueError, IndexError):
        umask = os.umask(0o022)
        os.umask(umask)
    return 0o666 & ~umask


def _fsync_dir(folder: Path) -> None:
    """Make the rename itself durable (POSIX); a no-op where folders cannot be opened."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_open(path, mode: str = "w", *, encoding: str = "utf-8", newline: str | None = None):
    """Open a temporary file that replaces ``path`` only when the ``with`` block succeeds.

    Parameters
    ----------
    path : str or Path
        Final file name; its folder must exist.
    mode : {"w", "wt", "wb"}
        Text or binary writing.
    encoding, newline
        For text mode, as in :func:`open` (UTF-8 by default).

    Raises
    ------
    InputError
        For a mode other than writing.
    FileNotFoundError
        If the folder of ``path`` does not exist.

    Notes
    -----
    On any exception (including ``KeyboardInterrupt``) inside the block, the temporary file is
    deleted, ``path`` keeps its previous content, and the exception propagates.
    """
    if mode not in ("w", "wt", "wb"):
        raise InputError(f"atomic_open: mode must be 'w', 'wt' or 'wb', got {mode!r}")
    path = Path(path)
    folder = path.parent
    if not folder.is_dir():
        raise FileNotFoundError(f"cannot write {path}: folder {folder} does not exist")
    perm = _file_mode(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        kwargs = {} if "b" in mode else {"encoding": encoding, "newline": newline}
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, perm)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(folder)


def atomic_write_bytes(path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_open`)."""
    with atomic_open(path, "wb") as fh:
        fh.write(data)


def atomic_write_text(path, text: str, *, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` atomically, UTF-8 by default, line endings unchanged."""
    with atomic_open(path, "w", encoding=encoding, newline="") as fh:
        fh.write(text)


def json_default(obj):
    """Let numpy scalars through ``json.dumps``; anything else is an error naming its type."""
    if isinstance(obj, np.generic) and obj.dtype.kind in "fiub":
        return obj.item()
    raise TypeError(f"object of type {type(obj).__name__} is not JSON serialisable")


def to_json(obj, *, indent=2) -> str:
    return json.dumps(obj, indent=indent, sort_keys=False, default=json_default, ensure_ascii=False)


def atomic_write_json(path, obj, *, indent: int = 2) -> None:
    """Serialise ``obj`` (numpy scalars allowed) and write it to ``path`` atomically.

    Raises
    ------
    InputError
        If ``obj`` is not JSON-serialisable (nothing is written then).
    """
    try:
        text = to_json(obj, indent=indent)
    except (TypeError, ValueError) as exc:
        raise InputError(f"atomic_write_json: cannot write {path}: {exc}") from None
    atomic_write_text(path, text + "\n")

