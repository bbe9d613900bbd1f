"""The results file of a batch: one JSON line per finished item.

The file never holds a partial line or a duplicate, whatever interrupts the writer.
The database is the record of a run; the file is its projection. A line is appended only
after the item's outcome is committed to the database, in one ``write`` followed by
``fsync``. So after any crash the file holds at most one partial line, at its end, and
lacks at most the lines of items committed just before the crash. :meth:`ResultsFile.sync`
repairs both when a run starts or resumes: it cuts the partial tail, drops lines of items
that are no longer finished (a failed item retried) and duplicates, and appends the
missing lines from the database. Lines are keyed by the item's ``source``.

The functions here block on file I/O: call them from a thread in async code.
"""

from __future__ import annotations

import fcntl
import itertools
import json
import os
import stat
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from veriscribe.errors import InputError
from veriscribe.store.files import fsync_dir

KEY = "source"
MAX_LINE_BYTES = 16 * 1024 * 1024
"""Longest line a results file is read for: far past any result (a few kB to tens of
kB; the largest input is 5 MB by default), so a file with a longer one is someone
else's, refused after reading about twice this much memory."""


@dataclass(frozen=True)
class Scan:
    """What a results file holds."""

    lines: list[tuple[str, int, int]]  # (item key, start offset, end offset)
    valid_end: int  # offset after the last complete line
    size: int


@dataclass(frozen=True)
class SyncReport:
    """What :meth:`ResultsFile.sync` changed."""

    kept: int
    appended: int
    dropped: int
    cut_bytes: int

    def as_dict(self) -> dict[str, int]:
        """Return the report as a plain dict."""
        return {
            "kept": self.kept,
            "appended": self.appended,
            "dropped": self.dropped,
            "cut_bytes": self.cut_bytes,
        }


@contextmanager
def _locked(handle: BinaryIO) -> Iterator[None]:
    # Two processes writing the same file take turns line batch by line batch.
    fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


class ResultsFile:
    """The JSON-lines output of one run."""

    def __init__(self, path: Path, run_id: str) -> None:
        self.path = path
        self.run_id = run_id
        self.present: set[str] = set()
        self.offset = 0  # bytes of the file whose lines are in ``present``

    def scan(self) -> Scan:
        """Read the file's complete lines; refuse a file that is not this run's output.

        Raises:
            InputError: Not a regular file, a complete line that is not a result of
                this run, or a file whose only content is a line without newline
                that is not ours.
        """
        try:
            mode = os.stat(self.path).st_mode
        except FileNotFoundError:
            return Scan([], 0, 0)
        if not stat.S_ISREG(mode):
            # A device or a pipe can hold no results to repair (and /dev/full or
            # /dev/zero would be read for ever).
            raise InputError(
                f"{self.path} is not a regular file: write to a file with --out"
            )
        lines: list[tuple[str, int, int]] = []
        start = 0
        tail = b""
        # Line by line, each checked as it comes: someone else's file is refused
        # after its first line, however large the file is.
        with open(self.path, "rb") as reader:
            for number in itertools.count(1):
                raw = reader.readline(MAX_LINE_BYTES + 1)
                if not raw.endswith(b"\n"):
                    if len(raw) > MAX_LINE_BYTES:
                        raise InputError(
                            f"{self.path} line {number} is longer than any result "
                            f"line: not a results file of run {self.run_id}; write "
                            "to another --out file"
                        )
                    tail = raw  # the end of the file: empty, or a partial line
                    break
                end = start + len(raw)
                if raw.strip():
                    lines.append((self._key(raw[:-1], number), start, end))
                start = end
        if tail and not lines:
            self._check_lone_tail(tail)
        return Scan(lines, start, start + len(tail))

    def _check_lone_tail(self, tail: bytes) -> None:
        """Refuse a file whose only content, a line without newline, is not ours.

        After complete lines of this run, a partial last line can only be this run's
        torn write. Alone, it is ours only if it is one of our lines (the run id tells),
        or a torn beginning of one: ``{"id":"`` exactly as this module's writers
        serialise a line, and no other run's id. Anything else is someone's file that
        merely lacks a final newline, and is never cut.
        """
        try:
            item = json.loads(tail)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            item = None
        if isinstance(item, dict):
            ours = item.get("run_id") == self.run_id
        else:
            marker = b'"run_id":'
            at = tail.rfind(marker)
            rest = tail[at + len(marker) :] if at >= 0 else b""
            expected = _run_id_json(self.run_id)
            ours = tail.startswith(b'{"id":"') and expected.startswith(
                rest[: len(expected)]
            )
        if not ours:
            raise InputError(
                f"{self.path} exists and is not a results file of run {self.run_id}: "
                "write to another --out file (the file was left as it was)"
            )

    def _key(self, raw: bytes, number: int) -> str:
        try:
            item = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            item = None
        if (
            not isinstance(item, dict)
            or item.get("run_id") != self.run_id
            or not isinstance(item.get(KEY), str)
        ):
            raise InputError(
                f"{self.path} line {number} is not a result of run {self.run_id}: "
                "write to another --out file"
            )
        return str(item[KEY])

    @contextmanager
    def _open_locked(self) -> Iterator[BinaryIO]:
        """Open the file for appending, locked; reopen if it was replaced meanwhile."""
        while True:
            with open(self.path, "ab") as handle, _locked(handle):
                try:
                    current = os.stat(self.path).st_ino
                except FileNotFoundError:
                    current = -1
                if os.fstat(handle.fileno()).st_ino != current:
                    continue  # another process replaced the file while we waited
                yield handle
                return

    def sync(self, final: set[str], stored: Mapping[str, str]) -> SyncReport:
        """Make the file hold exactly one line per finished item.

        Args:
            final: Keys of the items that are finished (done or failed) now.
            stored: The stored lines of (at least) the finished items that an earlier
                :meth:`scan` did not find in the file.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._open_locked() as handle:
            scan = self.scan()
            keep: list[tuple[str, int, int]] = []
            seen: set[str] = set()
            for key, start, end in scan.lines:
                if key in final and key not in seen:
                    keep.append((key, start, end))
                    seen.add(key)
            # In the order the database gives (when the items finished).
            missing = [key for key in stored if key in final and key not in seen]
            new = [_line(stored[key]) for key in missing]
            dropped = len(scan.lines) - len(keep)
            cut = scan.size - scan.valid_end
            if dropped:
                self._rewrite(keep, new)
            else:
                if cut:
                    os.truncate(self.path, scan.valid_end)
                if new:
                    handle.write(b"".join(new))
                    handle.flush()
                os.fsync(handle.fileno())
            self.offset = os.stat(self.path).st_size
        self.present = seen | set(missing)
        return SyncReport(len(keep), len(new), dropped, cut)

    def _rewrite(self, keep: list[tuple[str, int, int]], new: list[bytes]) -> None:
        data = self.path.read_bytes()
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        with open(temporary, "wb") as out:
            for _, start, end in keep:
                out.write(data[start:end])
            out.write(b"".join(new))
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, self.path)
        fsync_dir(self.path.parent)

    def append(self, lines: Sequence[tuple[str, str]]) -> int:
        """Append the lines of items not in the file yet; return how many were written."""
        new = [(key, _line(text)) for key, text in lines if key not in self.present]
        if not new:
            return 0
        with self._open_locked() as handle:
            self._catch_up()
            new = [(key, data) for key, data in new if key not in self.present]
            if new:
                # One write per batch: a crash leaves at most a partial last line.
                handle.write(b"".join(data for _, data in new))
                handle.flush()
                os.fsync(handle.fileno())
            self.offset = os.fstat(handle.fileno()).st_size
        self.present.update(key for key, _ in new)
        return len(new)

    def _catch_up(self) -> None:
        """Learn the lines other processes appended; cut a partial line they left."""
        size = os.stat(self.path).st_size
        if size == self.offset:
            return
        if size < self.offset:  # replaced by another process's repair: read it all
            self.offset = 0
            self.present = set()
        with open(self.path, "rb") as reader:
            reader.seek(self.offset)
            data = reader.read(size - self.offset)
        complete = data.rfind(b"\n") + 1
        for number, raw in enumerate(data[:complete].split(b"\n")[:-1], start=1):
            if raw.strip():
                self.present.add(self._key(raw, number))
        if complete < len(data):
            os.truncate(self.path, self.offset + complete)
        self.offset += complete


def _run_id_json(run_id: str) -> bytes:
    # The run id's value as a line holds it: compact JSON, closing brace included.
    return json.dumps(run_id, ensure_ascii=False).encode("utf-8") + b"}"


def _line(text: str) -> bytes:
    if "\n" in text:
        raise ValueError("a result line must not contain a newline")
    return text.encode("utf-8") + b"\n"
