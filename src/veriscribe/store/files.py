"""Write an output file whole or not at all.

A command's ``--out`` file is written to a temporary file beside it, flushed to disk and
then renamed over it (``os.replace``), so a crash, a kill or a full disk at any moment
leaves either the old file, untouched, or the complete new one; never an empty or half
written file. The temporary file is removed when writing fails; only ``kill -9`` can
leave one behind, named ``.<name>.<pid>.<random>.partial``.

A path that names something other than a regular file (``/dev/stdout``, a pipe) cannot
be replaced and is written in place. A symbolic link is followed: the file it points to
is replaced and the link kept.

The functions here block on file I/O: call them from a thread in async code when the
file may be large.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

__all__ = ["fsync_dir", "replacing", "write_atomically"]


def fsync_dir(path: Path) -> None:
    """Flush a directory's entries (a rename in it) to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def replacing(path: Path) -> Iterator[TextIO]:
    """Open a text file that replaces ``path`` when the block ends without an error.

    Raises:
        OSError: The temporary file cannot be created, written or renamed.
    """
    target = Path(os.path.realpath(path))
    try:
        mode: int | None = target.stat().st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        with open(target, "w", encoding="utf-8") as direct:
            yield direct
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(
        f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.partial"
    )
    # Created like any new file (the umask applies), then given the old file's mode.
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    replaced = False
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            if mode is not None:
                os.chmod(temporary, stat.S_IMODE(mode))
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
        replaced = True
        fsync_dir(target.parent)
    finally:
        if not replaced:
            temporary.unlink(missing_ok=True)


def write_atomically(path: Path, chunks: Iterable[str]) -> None:
    """Replace ``path`` with the text of ``chunks``, all of it or nothing.

    Raises:
        OSError: The file cannot be written.
    """
    with replacing(path) as handle:
        for chunk in chunks:
            handle.write(chunk)
