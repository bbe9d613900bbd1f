"""JSON-lines files are streamed: one huge line costs no more than the per-record limit."""

from __future__ import annotations

import io
import json
import tracemalloc
from pathlib import Path

from veriscribe.documents.articles import Article, ReadFailure, read_articles
from veriscribe.documents.jsonl import RawLine, json_lines, raw_lines

GOOD = {"article_id": "ok", "sections": [{"heading": "Methods", "text": "x " * 40}]}


class CountingStream(io.BytesIO):
    """A byte stream that remembers the most any one read returned."""

    largest = 0

    def readline(self, size: int | None = -1) -> bytes:
        data = super().readline(size)
        self.largest = max(self.largest, len(data))
        return data

    def read(self, size: int | None = -1) -> bytes:
        data = super().read(size)
        self.largest = max(self.largest, len(data))
        return data


def test_an_over_long_line_is_skipped_in_pieces_and_counted_whole() -> None:
    huge = b'{"x": "' + b"y" * 1_000_000 + b'"}'
    stream = CountingStream(huge + b"\n" + b"[1]\r\n" + b"\xef\xbb\xbfno")
    lines = list(raw_lines(stream, max_bytes=1000, chunk=4096))
    assert lines == [
        RawLine(1, len(huge), None),
        RawLine(2, 4, b"[1]\r"),
        RawLine(3, 5, b"\xef\xbb\xbfno"),  # only the file's first line loses a BOM
    ]
    assert stream.largest <= 4096


def test_the_last_line_may_have_no_newline_and_a_bom_is_dropped() -> None:
    stream = io.BytesIO(b"\xef\xbb\xbf{}\n\n" + b"z" * 10)
    assert list(raw_lines(stream, max_bytes=10)) == [
        RawLine(1, 2, b"{}"),
        RawLine(2, 0, b""),
        RawLine(3, 10, b"z" * 10),
    ]
    assert list(raw_lines(io.BytesIO(b"z" * 11), max_bytes=10)) == [
        RawLine(1, 11, None)
    ]


def test_a_huge_line_is_one_failed_record_read_in_bounded_memory(
    tmp_path: Path,
) -> None:
    path = tmp_path / "d.jsonl"
    huge = json.dumps({"article_id": "big", "abstract_text": "w " * 10_000_000})
    path.write_text(huge + "\n" + json.dumps(GOOD) + "\n", "utf-8")
    tracemalloc.start()
    try:
        items = list(read_articles(path, max_bytes=100_000))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    failure, article = items
    assert isinstance(failure, ReadFailure) and failure.source == f"{path}:1"
    assert failure.reason.startswith("record of 20.0 MB, over the 100.0 kB limit")
    assert isinstance(article, Article) and article.id == "ok"
    assert peak < 2_000_000, f"peak {peak} bytes for a 20 MB line"


def test_json_lines_streams_and_names_the_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    # A JSON string may hold U+2028, which is no line break in a JSON-lines file.
    path.write_text('{"q": "a\u2028b"}\r\n\n[2]\n', "utf-8")
    assert list(json_lines(path)) == [(1, {"q": "a\u2028b"}), (3, [2])]
