"""Atomic file output: no reader ever sees half a file, and an interrupted run leaves none.

Every file bayesjudge writes (saved fits, reports, study tables, figures) goes through
:func:`atomic_write`: the content is written to a temporary file in the destination's own
folder, flushed to disk, then renamed over the destination in one step (``os.replace``). A
failure or a Ctrl-C before the rename removes the temporary file and leaves the destination as
it was.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_path", "atomic_write", "check_output_file"]


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, *, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` when the block succeeds.

    For writers that take a file name (``to_netcdf``, ``savefig``). The temporary file keeps
    ``path``'s suffix (or ``suffix``) so that writers choosing a format by extension still work.
    On any exception, ``KeyboardInterrupt`` included, the temporary file is removed and
    ``path`` is untouched.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> with atomic_path(folder / "out.txt") as tmp:
    ...     _ = tmp.write_text("done")
    >>> (folder / "out.txt").read_text()
    'done'
    >>> sorted(p.name for p in folder.iterdir())
    ['out.txt']
    """
    path = Path(path)
    ext = path.suffix if suffix is None else suffix
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=f".tmp{ext}", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        # mkstemp creates the file owner-only (0600); give it the mode a plain open() would.
        os.chmod(tmp, _default_mode())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


def _default_mode() -> int:
    """Return the mode ``open(path, "w")`` gives a new file: 0o666 less the umask."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def atomic_write(path: str | os.PathLike, data: str | bytes, *, encoding: str = "utf-8") -> Path:
    r"""Write ``data`` (text or bytes) to ``path`` atomically and return the path.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "note.md"
    >>> atomic_write(target, "# title\n").read_text()
    '# title\n'
    """
    path = Path(path)
    with atomic_path(path) as tmp:
        if isinstance(data, bytes):
            tmp.write_bytes(data)
        else:
            tmp.write_text(data, encoding=encoding)
    return path


def check_output_file(path: str | os.PathLike, *, what: str = "output file") -> Path:
    """Check before any work that ``path`` can be written as a file; return it as a ``Path``.

    Raises ``ValueError`` naming the path and the fix when it is empty, names an existing
    folder, or its parent folder is missing or not a folder. An existing file is allowed (it is
    replaced atomically at the end).

    Examples
    --------
    >>> check_output_file("")
    Traceback (most recent call last):
        ...
    ValueError: output file: the path is empty; give a file name such as 'fit.nc'.
    """
    text = os.fspath(path)
    if not str(text).strip():
        raise ValueError(f"{what}: the path is empty; give a file name such as 'fit.nc'.")
    path = Path(text)
    if path.is_dir():
        raise ValueError(
            f"{what}: {str(path)!r} is an existing folder, not a file; give a file name inside "
            "it or another path."
        )
    parent = path.parent
    if not parent.exists():
        raise ValueError(
            f"{what}: the folder {str(parent)!r} does not exist; create it first or choose "
            "another path."
        )
    if not parent.is_dir():
        raise ValueError(f"{what}: {str(parent)!r} is not a folder; choose another path.")
    if not os.access(parent, os.W_OK):
        raise ValueError(f"{what}: the folder {str(parent)!r} is not writable.")
    return path
