"""Edges of the document readers: repeated headings, declared encodings."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from veriscribe.cli.app import app
from veriscribe.documents.articles import read_articles
from veriscribe.documents.guidelines import read_guideline_path
from veriscribe.errors import InputError


def test_a_heading_repeated_20000_times_reads_in_linear_time(tmp_path: Path) -> None:
    page = tmp_path / "repeats.md"
    page.write_text("".join(f"## Dose\n\nStep {i}.\n\n" for i in range(20_000)))
    started = time.perf_counter()
    (doc,) = read_guideline_path(page)
    seconds = time.perf_counter() - started
    ids = [section.section_id for section in doc.sections]
    assert ids[:3] == ["dose", "dose-2", "dose-3"] and ids[-1] == "dose-20000"
    assert len(set(ids)) == 20_000
    # Half a second here; finding each repeat's suffix from 2 again took 36 s.
    assert seconds < 10, seconds


def test_xml_declaring_an_unknown_encoding_is_one_line(tmp_path: Path) -> None:
    article = tmp_path / "odd.xml"
    article.write_bytes(
        b'<?xml version="1.0" encoding="x-nonsense"?>'
        b"<article><body><p>Text.</p></body></article>"
    )
    with pytest.raises(InputError) as caught:
        next(read_articles(article))
    message = caught.value.user_message
    assert "odd.xml" in message and "unknown encoding: x-nonsense" in message
    result = CliRunner().invoke(app, ["abstract", str(article), "--model", "sim"])
    assert result.exit_code == 1
    (line,) = result.stderr.strip().splitlines()
    assert "x-nonsense" in line and "bug" not in line
