"""Section pages in the store: kept for PDF sections, added to older databases."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from veriscribe.documents.guidelines import GuidelineDoc, read_guideline_path
from veriscribe.store import corpora
from veriscribe.store.connect import open_database
from veriscribe.store.migrations import MIGRATIONS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PDF = FIXTURES / "documents" / "ngc-11074-2col.pdf"
MARKDOWN = FIXTURES / "guidelines" / "hypertension.md"
PAGES = "0012_corpus_sections_page"
MARKDOWN_HASH = "59a8cae1218293d538f7cf306b834231b9738dc8e711d9b77080c38841de8e43"


def _without_pages(doc: GuidelineDoc) -> GuidelineDoc:
    sections = [dataclasses.replace(s, page=None) for s in doc.sections]
    return dataclasses.replace(doc, sections=sections)


def _old_rows(corpus: str, doc: GuidelineDoc) -> list[tuple[object, ...]]:
    """The rows an older veriscribe stored: no page, the long sections summarised."""
    return [
        (
            corpus,
            doc.doc_id,
            s.section_id,
            position,
            s.number,
            s.title,
            s.parent,
            json.dumps(s.children),
            s.level,
            len(s.text),
            s.text,
            f"summary of {s.section_id}",
            "model",
            "p1",
        )
        for position, s in enumerate(doc.sections)
    ]


async def _store_as_before_pages(target: str, docs: list[GuidelineDoc]) -> None:
    async with await open_database(target) as store:
        await corpora.ensure_corpus(store, "c")
        for doc in docs:
            # An older veriscribe hashed no page: that of a page-less document.
            await store.execute(
                "INSERT INTO corpus_documents VALUES (?, ?, ?, ?, ?, ?)",
                (
                    "c",
                    doc.doc_id,
                    doc.title,
                    doc.source,
                    _without_pages(doc).content_hash,
                    0.0,
                ),
            )
            await store.executemany(
                "INSERT INTO corpus_sections VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                _old_rows("c", doc),
            )


async def test_an_older_database_gains_pages_and_keeps_its_corpora(
    db_target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    (pdf,) = read_guideline_path(PDF)
    (markdown,) = read_guideline_path(MARKDOWN)
    assert all(s.page is not None for s in pdf.sections)
    with monkeypatch.context() as older:
        older.setattr(
            "veriscribe.store.db.MIGRATIONS",
            tuple(m for m in MIGRATIONS if m.name != PAGES),
        )
        await _store_as_before_pages(db_target, [pdf, markdown])
    async with await open_database(db_target) as store:
        assert (await store.applied_migrations())[-1] == PAGES
        # The stored corpus reads as before, without pages.
        rows = await corpora.sections(store, "c", with_text=True)
        assert len(rows) == len(pdf.sections) + len(markdown.sections)
        assert {row.page for row in rows} == {None}
        assert rows[0].summary == f"summary of {rows[0].section_id}"
        key = f"{pdf.doc_id}:{pdf.sections[3].section_id}"
        found = await corpora.get_sections(store, "c", [key])
        assert found[key].text == pdf.sections[3].text and found[key].page is None
        before = await corpora.corpus_version(store, "c")
        # A document without pages is unchanged; the PDF is stored again, with its
        # pages, and keeps the summaries of its unchanged sections.
        same = await corpora.store_document(store, "c", markdown)
        assert not same.changed
        again = await corpora.store_document(store, "c", pdf)
        assert again.changed and again.reused_summaries == len(pdf.sections)
        assert await corpora.corpus_version(store, "c") != before
        rows = await corpora.sections(store, "c")
        pages = {row.key: row.page for row in rows}
        for section in pdf.sections:
            assert pages[f"{pdf.doc_id}:{section.section_id}"] == section.page
        for section in markdown.sections:
            assert pages[f"{markdown.doc_id}:{section.section_id}"] is None
        found = await corpora.get_sections(store, "c", [key])
        assert found[key].page == pdf.sections[3].page
        assert found[key].summary == f"summary of {pdf.sections[3].section_id}"


async def test_pages_are_stored_and_listed(db_target: str) -> None:
    (pdf,) = read_guideline_path(PDF)
    async with await open_database(db_target) as store:
        await corpora.ensure_corpus(store, "c")
        await corpora.store_document(store, "c", pdf)
        rows = await corpora.sections(store, "c")
    assert [row.page for row in rows] == [s.page for s in pdf.sections]
    assert len({row.page for row in rows}) > 1  # the sections span several pages
    assert [row.as_dict()["page"] for row in rows] == [s.page for s in pdf.sections]


def test_a_page_changes_the_hash_only_of_documents_with_pages() -> None:
    (pdf,) = read_guideline_path(PDF)
    (markdown,) = read_guideline_path(MARKDOWN)
    # What versions before pages stored for this file: re-adding it changes nothing.
    assert markdown.content_hash == MARKDOWN_HASH
    assert _without_pages(pdf).content_hash != pdf.content_hash
    moved = dataclasses.replace(
        pdf, sections=[dataclasses.replace(pdf.sections[0], page=9), *pdf.sections[1:]]
    )
    assert moved.content_hash != pdf.content_hash
