"""Reading under limits: every crafted PDF class ends fast in one line, and the reader
process holds any reader to its time budget and memory cap."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from crafted_pdfs import PDF_CLASSES, REFUSED, good, one_page, stream, text_content
from veriscribe.documents.articles import Article, read_articles
from veriscribe.documents.guidelines import read_guideline_path
from veriscribe.documents.pdf import read_pdf
from veriscribe.documents.sandbox import (
    READ_STOP,
    ReadingStopped,
    ReadLimits,
    run_limited,
)
from veriscribe.errors import InputError

LIMITS = ReadLimits(timeout_s=30, memory_mb=1024)
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "documents"
ARTICLE_PDF = (FIXTURES / "plos__journal.pone.0008519-2col.pdf").read_bytes()
FAST_S = 10.0  # each class ends well inside this (most in under a second)


@pytest.mark.parametrize("name", sorted(PDF_CLASSES))
def test_each_crafted_pdf_is_read_or_refused_fast_in_one_line(
    tmp_path: Path, name: str
) -> None:
    path = tmp_path / f"{name}.pdf"
    path.write_bytes(PDF_CLASSES[name]())
    started = time.monotonic()
    try:
        (doc,) = read_guideline_path(path, limits=LIMITS)
    except InputError as exc:
        message = str(exc)
        assert REFUSED[name] is not None, message
        assert REFUSED[name] in message
        assert "\n" not in message and str(path) in message
        # The reader itself refused it: the process limits are only the backstop.
        assert "VERISCRIBE_READ_" not in message
    else:
        assert REFUSED[name] is None, f"{name} was read"
        assert doc.sections
    assert time.monotonic() - started < FAST_S


def test_a_bad_checksum_keeps_the_text_in_one_pass() -> None:
    from crafted_pdfs import bad_checksum

    started = time.monotonic()
    read = read_pdf(bad_checksum(), "bad.pdf")
    assert read.blocks[0].text == "Text before the padding."
    assert time.monotonic() - started < 5


def test_a_blank_image_is_read_in_place_quickly() -> None:
    from crafted_pdfs import blank_image

    started = time.monotonic()
    read = read_pdf(blank_image(), "image.pdf")
    assert [b.text for b in read.blocks] == ["Text over an image."]
    assert time.monotonic() - started < 5


def test_good_files_beside_bad_ones_are_read(tmp_path: Path) -> None:
    for name, build in PDF_CLASSES.items():
        (tmp_path / f"{name}.pdf").write_bytes(build())
    (tmp_path / "fine.pdf").write_bytes(good("The good file."))
    failed: dict[str, str] = {}
    docs = read_guideline_path(
        tmp_path,
        on_error=lambda path, exc: failed.update({path.stem: str(exc)}),
        limits=LIMITS,
    )
    read = {doc.doc_id for doc in docs}
    assert "fine" in read
    assert set(failed) == {n for n, why in REFUSED.items() if why is not None}
    assert read == {"fine"} | {n for n, why in REFUSED.items() if why is None}


# ------------------------------------------------------------ the reader process


def test_a_reader_over_the_time_budget_is_stopped_in_one_line() -> None:
    started = time.monotonic()
    with pytest.raises(InputError) as caught:
        run_limited("slow.pdf", time.sleep, 60, limits=ReadLimits(timeout_s=0.5))
    assert time.monotonic() - started < 5
    message = str(caught.value)
    assert message.startswith("slow.pdf: ") and "\n" not in message
    assert "0.5 s limit per file" in message and "VERISCRIBE_READ_TIMEOUT_S" in message


def test_a_reader_over_the_memory_cap_is_refused_in_one_line() -> None:
    with pytest.raises(InputError) as caught:
        run_limited("big.pdf", bytearray, 1 << 30, limits=ReadLimits(memory_mb=512))
    message = str(caught.value)
    assert message.startswith("big.pdf: ") and "\n" not in message
    assert "512 MiB memory limit" in message and "VERISCRIBE_READ_MEMORY_MB" in message
    # A smaller size fits under the cap.
    small = run_limited("big.pdf", bytearray, 1 << 24, limits=ReadLimits(memory_mb=512))
    assert len(small) == 1 << 24


def test_a_reader_that_dies_is_one_line_and_the_next_file_is_read() -> None:
    with pytest.raises(InputError, match=r"^dead\.pdf: the reader stopped \(exit"):
        run_limited("dead.pdf", os._exit, 3, limits=LIMITS)
    assert run_limited("next.pdf", sum, [1, 2], limits=LIMITS) == 3


def test_a_reader_process_is_kept_between_files() -> None:
    first = run_limited("a", os.getpid, limits=LIMITS)
    assert run_limited("b", os.getpid, limits=LIMITS) == first != os.getpid()
    # One that ran over is replaced.
    with pytest.raises(InputError):
        run_limited("slow", time.sleep, 60, limits=ReadLimits(timeout_s=0.2))
    assert run_limited("c", os.getpid, limits=LIMITS) != first


def test_a_readers_own_error_comes_back_as_itself(tmp_path: Path) -> None:
    missing = tmp_path / "gone.xml"
    with pytest.raises(InputError, match="gone.xml: cannot read the file"):
        list(read_articles(missing, limits=LIMITS))
    with pytest.raises(ZeroDivisionError) as caught:
        run_limited("x", divmod, 1, 0, limits=LIMITS)
    assert "in the reader process" in "".join(caught.value.__notes__)


def test_a_relative_path_is_read_from_the_callers_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "here.md").write_text("# A title\n\nSome body text here.\n")
    monkeypatch.chdir(tmp_path)
    (article,) = read_articles(Path("here.md"), limits=LIMITS)
    assert isinstance(article, Article) and article.source == "here.md"


def test_limits_come_from_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERISCRIBE_READ_TIMEOUT_S", "7.5")
    monkeypatch.setenv("VERISCRIBE_READ_MEMORY_MB", "900")
    assert ReadLimits.from_settings() == ReadLimits(timeout_s=7.5, memory_mb=900)


def test_a_pdf_that_needs_more_memory_than_the_cap_says_so(tmp_path: Path) -> None:
    # 150 MB of zeros inflate within the stream budget, and pdfminer needs several
    # times that to read them: over a 256 MiB cap.
    from crafted_pdfs import bomb

    path = tmp_path / "large.pdf"
    path.write_bytes(bomb(inflated=150 << 20))
    with pytest.raises(InputError) as caught:
        read_guideline_path(path, limits=ReadLimits(memory_mb=256))
    message = str(caught.value)
    assert "256 MiB memory limit" in message and "\n" not in message


@pytest.mark.parametrize("suffix", [".xml", ".html", ".md", ".txt", ".pdf"])
def test_every_kind_of_file_is_read_under_the_limits(
    tmp_path: Path, suffix: str
) -> None:
    # No reader reads 5,000 paragraphs within a millisecond: each kind is refused,
    # as articles and as guidelines, so each is read in the reader process.
    path = tmp_path / f"doc{suffix}"
    words = "Some words of a paragraph about blood pressure at home."
    if suffix == ".pdf":
        data = one_page(stream(b" ".join([text_content(words)] * 2000)))
    elif suffix == ".xml":
        body = f"<p>{words}</p>" * 5000
        data = f"<article><body><sec><title>T</title>{body}</sec></body></article>".encode()
    elif suffix == ".html":
        data = (
            f"<html><body><h1>T</h1>{f'<p>{words}</p>' * 5000}</body></html>".encode()
        )
    else:
        data = ("# T\n\n" + f"{words}\n\n" * 5000).encode()
    path.write_bytes(data)
    instant = ReadLimits(timeout_s=1e-3)
    with pytest.raises(InputError, match="limit per file"):
        list(read_articles(path, limits=instant))
    with pytest.raises(InputError, match="limit per file"):
        read_guideline_path(path, limits=instant)


def test_a_stop_request_ends_the_wait_and_the_files_after() -> None:
    stop = threading.Event()
    token = READ_STOP.set(stop.is_set)
    try:
        threading.Timer(0.5, stop.set).start()
        started = time.monotonic()
        with pytest.raises(ReadingStopped, match="^slow: not read"):
            run_limited("slow", time.sleep, 30, limits=LIMITS)
        assert time.monotonic() - started < 5
        with pytest.raises(ReadingStopped):
            run_limited("next", sum, [1], limits=LIMITS)
    finally:
        READ_STOP.reset(token)
    assert run_limited("after", sum, [1], limits=LIMITS) == 1


async def test_a_cancelled_corpus_add_stops_reading_its_files(tmp_path: Path) -> None:
    import asyncio

    from veriscribe.service.corpora import add_corpus
    from veriscribe.settings import Settings

    for number in range(40):  # some 40 s of reading in all
        (tmp_path / f"article-{number}.pdf").write_bytes(ARTICLE_PDF)
    adding = asyncio.create_task(add_corpus(Settings(model="sim"), "c", [tmp_path]))
    await asyncio.sleep(1.0)
    adding.cancel()
    started = time.monotonic()
    loop = asyncio.get_running_loop()
    with pytest.raises(asyncio.CancelledError):
        await adding
    # The reading thread ends within a wait slice, not after every file.
    await loop.shutdown_default_executor()
    assert time.monotonic() - started < 5
