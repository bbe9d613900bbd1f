"""Edges of the document readers: repeated headings, declared encodings."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from veriscribe.cli.app import app
from veriscribe.documents.articles import Article, read_articles
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
    # Half a second; counting each repeat's suffix from 2 again took 274 s.
    assert seconds < 10, seconds


CP1252_PAGE = (
    "<!DOCTYPE html><html><head>{declaration}<title>Caf\u00e9 guideline</title>"
    "</head><body><h1>Caf\u00e9 \u201cadvice\u201d</h1>"
    "<p>Na\u00efve patients take 5\u00a0mg \u2013 twice a day.</p>"
    "<h2>Follow-up</h2><p>See the patient in 2\u00a0weeks.</p></body></html>"
)


@pytest.mark.parametrize(
    "declaration",
    [
        '<meta charset="windows-1252">',
        "<meta charset=iso-8859-1>",
        '<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">',
    ],
)
def test_a_web_page_is_read_in_the_charset_it_declares(
    tmp_path: Path, declaration: str
) -> None:
    page = tmp_path / "cafe.html"
    page.write_bytes(CP1252_PAGE.format(declaration=declaration).encode("cp1252"))
    (doc,) = read_guideline_path(page)
    assert doc.title == "Caf\u00e9 guideline"
    said = "Na\u00efve patients take 5 mg \u2013 twice a day."
    text = " ".join(section.text for section in doc.sections)
    assert said in " ".join(text.split())
    article = next(read_articles(page))
    assert isinstance(article, Article)
    assert said in " ".join(p.text for p in article.paragraphs)
    assert article.meta["encoding"] == "cp1252"


def test_a_byte_order_mark_wins_over_the_declaration(tmp_path: Path) -> None:
    page = tmp_path / "bom.html"
    text = CP1252_PAGE.format(declaration='<meta charset="windows-1252">')
    page.write_bytes(text.encode("utf-16"))  # with its byte order mark
    (doc,) = read_guideline_path(page)
    assert doc.title == "Caf\u00e9 guideline"


def test_an_undeclared_page_that_is_not_utf8_is_refused_in_one_line(
    tmp_path: Path,
) -> None:
    page = tmp_path / "cafe.html"
    page.write_bytes(CP1252_PAGE.format(declaration="").encode("cp1252"))
    with pytest.raises(InputError) as caught:
        read_guideline_path(page)
    message = caught.value.user_message
    assert "not UTF-8" in message and "charset" in message and "\n" not in message


@pytest.mark.parametrize(
    ("declaration", "said"),
    [
        ('<meta charset="x-nonsense">', "'x-nonsense', which cannot be read"),
        ('<meta charset="rot13">', "'rot13', which cannot be read"),
        ('<meta charset="utf-8">', "not utf-8 text as the charset it declares says"),
    ],
)
def test_a_page_whose_declared_charset_cannot_read_it_is_one_line(
    tmp_path: Path, declaration: str, said: str
) -> None:
    page = tmp_path / "odd.html"
    page.write_bytes(CP1252_PAGE.format(declaration=declaration).encode("cp1252"))
    for read in (read_guideline_path, lambda p: next(read_articles(p))):
        with pytest.raises(InputError) as caught:
            read(page)
        message = caught.value.user_message
        assert said in message and "odd.html" in message and "\n" not in message


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
