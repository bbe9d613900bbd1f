"""JSON-lines files read record by record, with errors that name the file and line.

A file is streamed one line at a time, never read whole: a dataset may be far larger
than memory, and one huge line must cost no more than the per-record limit.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from veriscribe.errors import InputError

CHUNK_BYTES = 64 * 1024
"""How much of an over-long line is read at once while it is skipped."""

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class RawLine:
    """One line of a JSON-lines file, without its newline.

    ``data`` is None when the line is longer than the limit: it was skipped, not kept.
    """

    number: int
    size: int
    data: bytes | None


def raw_lines(
    stream: IO[bytes], max_bytes: int | None = None, *, chunk: int = CHUNK_BYTES
) -> Iterator[RawLine]:
    """Yield every line of a binary stream, holding at most ``max_bytes + 1`` of one.

    A line over ``max_bytes`` is read on in pieces of ``chunk`` bytes up to its end
    and yielded with its size and no data, so no single read asks for more than
    ``max(max_bytes + 1, chunk)`` bytes. A leading UTF-8 byte order mark is dropped.
    """
    number = 0
    while True:
        line = (
            stream.readline() if max_bytes is None else stream.readline(max_bytes + 1)
        )
        if not line:
            return
        number += 1
        if number == 1 and line.startswith(_BOM):
            line = line[len(_BOM) :]
        if line.endswith(b"\n"):
            yield RawLine(number, len(line) - 1, line[:-1])
            continue
        size = len(line)
        if max_bytes is None or size <= max_bytes:  # the last line, with no newline
            yield RawLine(number, size, line)
            return
        del line  # over the limit: count the rest of it without keeping it
        while True:
            piece = stream.readline(chunk)
            if piece.endswith(b"\n"):
                size += len(piece) - 1
                break
            size += len(piece)
            if not piece:
                break
        yield RawLine(number, size, None)


def json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """Yield (line number, parsed value) for every non-blank line of a JSON-lines file."""
    try:
        with path.open("rb") as stream:
            for line in raw_lines(stream):
                try:
                    # With no limit every line is kept whole.
                    text = (line.data or b"").decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InputError(f"cannot read {path}: {exc}") from exc
                if not text.strip():
                    continue
                try:
                    yield line.number, json.loads(text)
                except json.JSONDecodeError as exc:
                    raise InputError(
                        f"{path}:{line.number}: not JSON ({exc.msg})"
                    ) from exc
                except RecursionError:
                    raise InputError(
                        f"{path}:{line.number}: JSON nested too deeply"
                    ) from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc}") from exc
