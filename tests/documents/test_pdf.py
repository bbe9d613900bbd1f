"""The PDF reader: layout recovery on Chromium-printed files, and every bad-file class."""

from __future__ import annotations

import json
import re
import zlib
from pathlib import Path

import pytest

from crafted_pdfs import one_page, stream
from veriscribe.documents import pdf
from veriscribe.documents.articles import Article, read_articles
from veriscribe.documents.guidelines import read_guideline_path
from veriscribe.documents.pdf import Line, build_blocks, drop_running_lines, read_pdf
from veriscribe.errors import InputError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "documents"
RUNNING = re.compile(r"file://|\d{1,2}/\d{1,2}/\d{2}, \d{1,2}:\d{2}|\u2014 ngc-11074")


def _source_headings() -> list[str]:
    text = (FIXTURES / "ngc-11074.md").read_text(encoding="utf-8")
    return [m.group(1).strip() for m in re.finditer(r"^#{1,6}\s+(.+)$", text, re.M)]


@pytest.mark.parametrize("name", ["ngc-11074-1col.pdf", "ngc-11074-2col.pdf"])
def test_guideline_pdf_reads_into_the_section_tree(name: str) -> None:
    (doc,) = read_guideline_path(FIXTURES / name)
    titles = [s.title for s in doc.sections]
    assert all(heading in titles for heading in _source_headings())
    assert doc.title.startswith("Effectiveness of preanalytic practices")
    status = doc.section("general/guideline-status")
    assert status is not None and status.parent == "general" and status.level == 2
    assert "This is the current release of the guideline." in status.text
    for section in doc.sections:
        assert not RUNNING.search(section.text), (section.title, section.text)
        assert not re.search(r"^\d+(/\d+)?$", section.text, re.M)
    pages = [s.page or 0 for s in doc.sections]
    assert all(p >= 1 for p in pages)
    assert pages == sorted(pages) and pages[-1] >= 3


def test_two_column_article_keeps_reading_order() -> None:
    (doc,) = read_guideline_path(FIXTURES / "plos__journal.pone.0008519-2col.pdf")
    intro = next(s for s in doc.sections if s.title == "Introduction")
    # The paragraph runs on from the foot of the left column to the right one.
    assert "68 of 101 chronic fatigue syndrome" in " ".join(intro.text.split())
    methods = [s.title for s in doc.sections]
    assert methods.index("Introduction") < methods.index("Methods")
    assert methods.index("Methods") < methods.index("Results")


def test_pdf_article_has_title_abstract_and_paragraphs() -> None:
    (article,) = read_articles(FIXTURES / "plos__journal.pone.0008519-1col.pdf")
    assert isinstance(article, Article)
    assert article.title.startswith("Failure to Detect the Novel Retrovirus XMRV")
    assert article.reference and "chronic fatigue syndrome" in article.reference
    assert article.paragraphs[0].path == ("Introduction",)
    assert not any("Abstract" in p.path for p in article.paragraphs)
    assert article.meta["layout"] == "pdf" and article.meta["pages"] == "5"


def _line(text: str, page: int, top: float, x0: float = 72, x1: float = 300) -> Line:
    return Line(text, page, x0, x1, top, top - 10, 10.0, False)


def test_running_headers_footers_and_page_numbers_are_dropped() -> None:
    pages = [
        [
            _line("Clinical Guideline 2024", n, 780),
            _line(f"Body text of page {n}.", n, 500),
            _line(str(n), n, 30),
            _line(f"Page {n} of 3", n, 45),
        ]
        for n in (1, 2, 3)
    ]
    kept = drop_running_lines(pages, 792)
    assert [[line.text for line in page] for page in kept] == [
        ["Body text of page 1."],
        ["Body text of page 2."],
        ["Body text of page 3."],
    ]


def test_lines_repeated_elsewhere_on_the_page_are_kept() -> None:
    # The same words in the body, away from the edges, are text, not a header.
    pages = [[_line("Recommendation", n, 400), _line("Text.", n, 380)] for n in (1, 2)]
    assert drop_running_lines(pages, 792) == pages


def test_hyphenated_words_are_rejoined_but_compounds_keep_the_hyphen() -> None:
    lines = [
        _line("The recom-", 1, 700),
        _line("mendation is evidence-", 1, 688),
        _line("based and evidence and based.", 1, 676),
    ]
    (block,) = build_blocks(lines)
    assert block.text == "The recommendation is evidence-based and evidence and based."


def test_a_hyphen_before_a_capital_or_a_digit_joins_without_a_space() -> None:
    lines = [
        _line("Offer Medication-", 1, 700),
        _line("Assisted Treatment to non-", 1, 688),
        _line("Hispanic adults (95% CI 4.74-", 1, 676),
        _line("14.39) after COVID-", 1, 664),
        _line("19 and a pause -", 1, 652),
        _line("Then more.", 1, 640),
    ]
    (block,) = build_blocks(lines)
    assert block.text == (
        "Offer Medication-Assisted Treatment to non-Hispanic adults (95% CI "
        "4.74-14.39) after COVID-19 and a pause - Then more."
    )


def test_two_columns_are_read_left_then_right() -> None:
    left = [_line(f"left {i} words", 1, 700 - 12 * i, 50, 290) for i in range(8)]
    right = [_line(f"right {i} words", 1, 700 - 12 * i, 320, 560) for i in range(8)]
    (block,) = build_blocks(right + left)
    words = block.text.split()
    assert words.index("left") < words.index("right")
    assert block.text.startswith("left 0 words left 1 words")
    assert "left 7 words right 0 words" in block.text


def test_larger_and_bold_lines_become_ranked_headings() -> None:
    big = Line("1. Introduction", 1, 72, 200, 720, 704, 16.0, True)
    sub = Line("1.1 Scope", 1, 72, 160, 690, 678, 10.0, True)
    body = [_line("Plain body text that goes on.", 1, 660 - 12 * i) for i in range(4)]
    blocks = build_blocks([big, sub, *body])
    assert [(b.level, b.text) for b in blocks[:2]] == [
        (1, "1. Introduction"),
        (2, "1.1 Scope"),
    ]
    assert blocks[2].level == 0


# ---------------------------------------------------------------------- bad files


HELVETICA = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def _minimal_pdf(
    page_text: list[str],
    *,
    count: int | None = None,
    font: bytes = HELVETICA,
    hex_text: bool = False,
) -> bytes:
    """Build a small valid PDF with one line of text per page (Helvetica unless told)."""
    objects: list[bytes] = []
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(len(page_text)))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(
        f"<< /Type /Pages /Kids [{kids}] /Count {count or len(page_text)} >>".encode()
    )
    objects.append(font)
    for i, text in enumerate(page_text):
        shown = f"<{text.encode('utf-16-be').hex()}>" if hex_text else f"({text})"
        content = f"BT /F1 12 Tf 72 700 Td {shown} Tj ET".encode() if text else b""
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>".encode()
        )
        objects.append(
            b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream"
        )
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def test_minimal_pdf_reads() -> None:
    read = read_pdf(_minimal_pdf(["Hello PDF world.", "Second page."]), "t.pdf")
    assert read.pages == 2
    assert [b.text for b in read.blocks] == ["Hello PDF world.", "Second page."]


def _one_line_error(path: Path, match: str) -> str:
    with pytest.raises(InputError, match=match) as caught:
        read_guideline_path(path)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message
    return message


def test_encrypted_pdf(tmp_path: Path) -> None:
    _one_line_error(FIXTURES / "encrypted.pdf", "encrypted and needs a password")


def test_pdf_without_text_layer_is_called_a_scan(tmp_path: Path) -> None:
    path = tmp_path / "scan.pdf"
    path.write_bytes(_minimal_pdf(["", ""]))
    message = _one_line_error(path, "no text layer")
    assert "OCR" in message


def test_malformed_pdf(tmp_path: Path) -> None:
    path = tmp_path / "junk.pdf"
    path.write_bytes(b"%PDF-1.7\nthis is not a pdf at all\n%%EOF\n")
    _one_line_error(path, "malformed PDF")
    other = tmp_path / "notpdf.pdf"
    other.write_bytes(b"<html>not a pdf</html>")
    _one_line_error(other, "not a PDF")


def test_truncated_pdf(tmp_path: Path) -> None:
    data = (FIXTURES / "ngc-11074-1col.pdf").read_bytes()
    path = tmp_path / "cut.pdf"
    path.write_bytes(data[: len(data) // 3])
    _one_line_error(path, "truncated")


def test_pdf_over_the_size_limit(tmp_path: Path) -> None:
    path = tmp_path / "big.pdf"
    path.write_bytes(_minimal_pdf(["Some text."]))
    with pytest.raises(InputError, match="over the 100 bytes limit"):
        read_guideline_path(path, max_bytes=100)


def test_page_count_bomb(tmp_path: Path) -> None:
    path = tmp_path / "pages.pdf"
    path.write_bytes(_minimal_pdf(["Text."], count=5_000_000))
    _one_line_error(path, "page limit")


def test_decompression_bomb(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pdf, "MAX_INFLATED_BYTES", 1_000_000)
    monkeypatch.setattr(pdf, "MAX_RATIO", 100)
    # Read in place (the patched limits hold in this process only).
    data = one_page(
        stream(zlib.compress(b" " * 20_000_000, 9), b"/Filter /FlateDecode")
    )
    with pytest.raises(InputError, match="decompression bomb") as caught:
        read_pdf(data, "bomb.pdf")
    assert str(caught.value).startswith("bomb.pdf: its compressed streams inflate")


def test_a_batch_goes_on_past_bad_pdfs(tmp_path: Path) -> None:
    (tmp_path / "good.md").write_text("# Title\n\n## Part\n\nSome text.\n")
    (tmp_path / "scan.pdf").write_bytes(_minimal_pdf([""]))
    (tmp_path / "junk.pdf").write_bytes(b"%PDF-1.4 junk")
    (tmp_path / "fine.pdf").write_bytes(_minimal_pdf(["Readable text here."]))
    failed: list[tuple[str, str]] = []
    docs = read_guideline_path(
        tmp_path, on_error=lambda path, exc: failed.append((path.name, str(exc)))
    )
    assert sorted(d.doc_id for d in docs) == ["fine", "good"]
    assert sorted(name for name, _ in failed) == ["junk.pdf", "scan.pdf"]


def test_a_right_column_of_short_items_is_still_a_column() -> None:
    left = [_line(f"left {i} words", 1, 700 - 12 * i, 50, 290) for i in range(12)]
    right = [_line(f"item {i}", 1, 700 - 12 * i, 320, 380) for i in range(8)]
    right += [_line(f"long {i} line", 1, 600 - 12 * i, 320, 560) for i in range(3)]
    text = " ".join(b.text for b in build_blocks(left + right))
    assert text.index("left 11 words") < text.index("item 0")


def test_a_heading_broken_across_columns_is_one_heading() -> None:
    body = [_line(f"Body text line {i}", 1, 700 - 12 * i, 50, 290) for i in range(8)]
    first = Line("Methods Used to Analyze the", 1, 50, 250, 600, 588, 15.0, True)
    rest = Line("Evidence", 1, 320, 400, 700, 688, 15.0, True)
    more = [_line(f"After line {i}", 1, 680 - 12 * i, 320, 560) for i in range(8)]
    headings = [b.text for b in build_blocks([*body, first, rest, *more]) if b.level]
    assert headings == ["Methods Used to Analyze the Evidence"]


def test_table_cells_on_a_row_are_kept_as_one_text_row() -> None:
    row = [
        Line("Stage", 1, 72, 110, 500, 490, 10.0, False),
        Line("Systolic", 1, 200, 250, 500, 490, 10.0, False),
        Line("Diastolic mmHg", 1, 400, 480, 500, 490, 10.0, False),
    ]
    (block,) = build_blocks(row)
    assert block.text == "Stage | Systolic | Diastolic mmHg"


def test_roman_page_numbers_go_but_words_of_roman_letters_stay() -> None:
    pages = [[_line("Body.", 1, 500), _line("xii", 1, 30), _line("civil", 1, 45)]]
    kept = drop_running_lines(pages, 792)
    assert [line.text for line in kept[0]] == ["Body.", "civil"]


def test_pdf_whose_fonts_map_to_no_text_is_refused(tmp_path: Path) -> None:
    font = (
        b"<< /Type /Font /Subtype /Type0 /BaseFont /Foo /Encoding /Identity-H "
        b"/DescendantFonts [<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Foo "
        b"/CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> "
        b">>] >>"
    )
    path = tmp_path / "cid.pdf"
    path.write_bytes(_minimal_pdf(["Glyphs without text"], font=font, hex_text=True))
    message = _one_line_error(path, "no text mapping")
    assert "OCR" in message


def test_a_decompression_bomb_is_refused_at_the_default_caps(tmp_path: Path) -> None:
    # 300 MB of zeros in a 300 kB stream: past both MAX_INFLATED_BYTES and MAX_RATIO.
    packer = zlib.compressobj(9)
    block = b"\0" * 1_000_000
    bomb = b"".join(packer.compress(block) for _ in range(300)) + packer.flush()
    assert pdf.MAX_INFLATED_BYTES < 300_000_000
    assert len(bomb) * pdf.MAX_RATIO < 300_000_000
    path = tmp_path / "bomb.pdf"
    path.write_bytes(one_page(stream(bomb, b"/Filter /FlateDecode")))
    _one_line_error(path, "decompression bomb")


def test_corpus_add_names_each_bad_pdf_in_one_line_and_goes_on(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from veriscribe.cli.app import app

    folder = tmp_path / "guidelines"
    folder.mkdir()
    good = (FIXTURES / "ngc-11074-2col.pdf").read_bytes()
    (folder / "good.pdf").write_bytes(good)
    (folder / "encrypted.pdf").write_bytes((FIXTURES / "encrypted.pdf").read_bytes())
    (folder / "scan.pdf").write_bytes(_minimal_pdf(["", ""]))
    (folder / "junk.pdf").write_bytes(b"%PDF-1.7\nthis is not a pdf at all\n%%EOF\n")
    (folder / "cut.pdf").write_bytes(good[: len(good) // 3])
    (folder / "pages.pdf").write_bytes(_minimal_pdf(["Text."], count=5_000_000))
    (folder / "huge.pdf").write_bytes(good + b"\0" * len(good))
    limit = str(len(good) + 1)
    result = CliRunner().invoke(
        app,
        ["--max-bytes", limit, "corpus", "add", "c", str(folder), "--model", "sim"]
        + ["--json"],
    )
    assert result.exit_code == 3, result.output  # some files could not be read
    report = json.loads(result.stdout)
    assert report["added"] == ["good"]
    skipped = {Path(item["path"]).name: item["reason"] for item in report["skipped"]}
    reasons = {
        "encrypted.pdf": "encrypted",
        "scan.pdf": "OCR",
        "junk.pdf": "malformed",
        "cut.pdf": "truncated",
        "pages.pdf": "page limit",
        "huge.pdf": "limit for one input",
    }
    assert set(skipped) == set(reasons)
    for name, reason in reasons.items():
        assert reason in skipped[name] and "\n" not in skipped[name], skipped[name]
