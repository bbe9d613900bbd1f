"""Find the files under a directory or matching a glob, never following a directory link.

A walk lists each real directory once: a symbolic link to a directory is never entered,
whether it points out of the tree or back into it (``d/l1 -> .``), and a directory
reached twice by another way (a bind mount) is entered once, so no layout makes a
walk loop. A symbolic link to a file is kept only when the file it resolves to lies
inside the tree (the directory named, or a glob's fixed leading directories); one that
leads out of the tree is reported as skipped, never read. A walk visits at most
:data:`MAX_ENTRIES` entries, and checks between directories whether it should stop, so
a caller running it in a thread can interrupt it.

Glob patterns follow :func:`glob.glob` with ``recursive=True``: ``*``, ``?`` and
``[...]`` match within one name, ``**`` matches any number of directories (none
included), and names starting with a dot are matched only by a pattern part that starts
with a dot.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

from veriscribe.errors import InputError

__all__ = [
    "MAX_ENTRIES",
    "Found",
    "ShouldStop",
    "WalkStopped",
    "has_magic",
    "match_glob",
    "walk_files",
]

MAX_ENTRIES = 2_000_000
_MAGIC = re.compile(r"[*?\[]")

ShouldStop = Callable[[], bool]


class WalkStopped(Exception):
    """The caller asked the walk to stop before it was done."""


@dataclass
class Found:
    """What a walk found: files to read and links it would not follow."""

    files: list[Path] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)


def has_magic(text: str) -> bool:
    """Tell whether a path holds glob characters."""
    return _MAGIC.search(text) is not None


def _never() -> bool:
    return False


class _Walk:
    """Bookkeeping shared by one walk: its root, entries seen, directories entered."""

    def __init__(self, root: Path, what: str, should_stop: ShouldStop) -> None:
        self.real_root = os.path.realpath(root)
        self.what = what
        self.should_stop = should_stop
        self.entries = 0
        self.entered: set[tuple[int, int]] = set()

    def scan(self, directory: Path) -> list[os.DirEntry[str]]:
        """Return a directory's entries sorted by name; none if entered already."""
        if self.should_stop():
            raise WalkStopped
        try:
            info = directory.lstat() if self.entered else directory.stat()
            key = (info.st_dev, info.st_ino)
            if key in self.entered:
                return []
            self.entered.add(key)
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            return []  # unreadable or vanished: as if empty, as glob does
        self.entries += len(entries)
        if self.entries > MAX_ENTRIES:
            raise InputError(
                f"{self.what}: more than {MAX_ENTRIES:,} entries to look through; "
                "name a narrower directory or pattern"
            )
        return entries

    def keep_file(self, entry: os.DirEntry[str], found: Found) -> bool:
        """Tell whether an entry is a file to read; note a link that leads out."""
        try:
            if not entry.is_symlink():
                return entry.is_file(follow_symlinks=False)
            if not entry.is_file():  # a link to a directory, or dangling
                return False
        except OSError:
            return False
        target = os.path.realpath(entry.path)
        if os.path.commonpath([self.real_root, target]) == self.real_root:
            return True
        found.skipped.append(
            (
                Path(entry.path),
                f"a link to {target}, outside {self.real_root}: not read",
            )
        )
        return False


def walk_files(
    root: Path,
    keep: Callable[[Path], bool],
    *,
    should_stop: ShouldStop = _never,
) -> Found:
    """Return the files under ``root`` that ``keep`` accepts, in path order.

    Raises:
        InputError: More than :data:`MAX_ENTRIES` entries under ``root``.
        WalkStopped: ``should_stop`` returned true.
    """
    found = Found()
    walk = _Walk(root, str(root), should_stop)
    _collect(walk, root, keep, found)
    return found


def _collect(
    walk: _Walk, top: Path, keep: Callable[[Path], bool], found: Found
) -> None:
    pending = [top]
    while pending:
        directory = pending.pop()
        subdirectories: list[Path] = []
        for entry in walk.scan(directory):
            path = directory / entry.name
            if _is_real_dir(entry):
                subdirectories.append(path)
            elif keep(path) and walk.keep_file(entry, found):
                found.files.append(path)
        pending.extend(reversed(subdirectories))
    found.files.sort()


def _is_real_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def match_glob(
    pattern: str,
    keep: Callable[[Path], bool],
    *,
    should_stop: ShouldStop = _never,
) -> Found:
    """Return the files a glob pattern names that ``keep`` accepts.

    Those are the matched files, and the files under matched directories.

    Raises:
        InputError: More than :data:`MAX_ENTRIES` entries to look through.
        WalkStopped: ``should_stop`` returned true.
    """
    parts = Path(pattern).parts
    fixed = 0
    while fixed < len(parts) and not has_magic(parts[fixed]):
        fixed += 1
    base = Path(*parts[:fixed]) if fixed else Path(".")
    rest = parts[fixed:]
    found = Found()
    if not rest:
        return found
    walk = _Walk(base, pattern, should_stop)
    start = _closure(rest, {0})
    if len(rest) in start and fixed:  # "base/**" matches the base directory
        if base.is_dir():
            _collect(walk, base, keep, found)
        return found
    matched_dirs: list[Path] = []
    pending: list[tuple[Path, frozenset[int]]] = [(base, start)]
    while pending:
        directory, states = pending.pop()
        subdirectories: list[tuple[Path, frozenset[int]]] = []
        for entry in walk.scan(directory):
            after = _step(rest, states, entry.name)
            if not after:
                continue
            path = directory / entry.name
            real_dir = _is_real_dir(entry)
            if len(rest) in after:
                if real_dir:
                    matched_dirs.append(path)  # all of it is read: no need to go on
                elif keep(path) and walk.keep_file(entry, found):
                    found.files.append(path)
            elif real_dir:
                subdirectories.append((path, after))
        pending.extend(reversed(subdirectories))
    found.files.sort()
    for directory in sorted(matched_dirs):
        _collect(walk, directory, keep, found)
    return found


def _closure(parts: tuple[str, ...], states: set[int]) -> frozenset[int]:
    """Add the states reached by letting each ``**`` match no directory."""
    result = set(states)
    for index in sorted(states):
        while index < len(parts) and parts[index] == "**":
            index += 1
            result.add(index)
    return frozenset(result)


def _step(parts: tuple[str, ...], states: frozenset[int], name: str) -> frozenset[int]:
    """Return the pattern states after matching one more path name."""
    hidden = name.startswith(".")
    after: set[int] = set()
    for index in states:
        if index >= len(parts):
            continue
        part = parts[index]
        if part == "**":
            if not hidden:
                after.add(index)
        elif fnmatchcase(name, part) and (not hidden or part.startswith(".")):
            after.add(index + 1)
    return _closure(parts, after) if after else frozenset()
