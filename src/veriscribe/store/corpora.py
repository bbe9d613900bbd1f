"""Guideline corpora in the database: documents, their section trees and summaries.

A corpus is a named set of guideline documents. Each document is stored with a hash of
its content, so adding an unchanged document again changes nothing; each section keeps
its text (looked up by id whenever a graph needs it, never copied into graph state) and
its one-sentence summary, written once at ingest.

Sections are addressed across a corpus by a *key* ``<doc_id>:<section_id>``, the same
pair a citation marker names. A ``doc_id`` never holds a colon, so the key splits at
the first one.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from veriscribe.documents.guidelines import GuidelineDoc, section_key
from veriscribe.results import SectionListing
from veriscribe.store.db import Store, Tx

OWN_SUMMARY_CHARS = 300
"""A section at most this long is its own summary; no model call is spent on it."""


def split_key(key: str) -> tuple[str, str]:
    """Split a section key into ``(doc_id, section_id)``."""
    doc_id, _, section_id = key.partition(":")
    return doc_id, section_id


@dataclass(frozen=True)
class SectionRow:
    """One stored section.

    Attributes:
        doc_id: The document it belongs to.
        section_id: Its id within the document.
        position: Its place in the document's reading order.
        number: The section number, or "".
        title: The heading.
        parent: The parent's ``section_id``, or None.
        children: The ``section_id`` of each direct sub-section.
        level: Depth in the tree, 1 for top-level sections.
        chars: Length of the text in characters.
        summary: The one-sentence summary, or None while not yet written.
        summary_source: ``model`` (written by the model), ``text`` (the section is
            short enough to be its own summary) or ``lead`` (the model gave nothing
            usable; the opening of the text stands in).
        text: The section text, when it was asked for ("" otherwise).
        page: The page the section starts on, for sources with pages (PDF), else
            None (and None for PDF sections stored before pages were kept).
    """

    doc_id: str
    section_id: str
    position: int
    number: str
    title: str
    parent: str | None
    children: list[str]
    level: int
    chars: int
    summary: str | None
    summary_source: str | None
    text: str = ""
    page: int | None = None

    @property
    def key(self) -> str:
        """The corpus-wide key ``<doc_id>:<section_id>``."""
        return section_key(self.doc_id, self.section_id)

    def as_dict(self) -> dict[str, Any]:
        """Return the fields of ``corpus show --json`` (without the text)."""
        return SectionListing.model_validate(self, from_attributes=True).model_dump()


@dataclass(frozen=True)
class DocumentRow:
    """One stored document."""

    doc_id: str
    title: str
    source: str
    content_hash: str
    added: float
    sections: int


@dataclass(frozen=True)
class CorpusInfo:
    """A corpus and its size."""

    name: str
    documents: int
    sections: int
    chars: int
    summarized: int
    created: float
    updated: float


@dataclass
class SummaryUpdate:
    """A summary to store for one section."""

    doc_id: str
    section_id: str
    summary: str
    source: str
    prompt_id: str | None = None


@dataclass
class StoredDocument:
    """What storing one document did."""

    doc_id: str
    changed: bool
    sections: int
    reused_summaries: int = 0
    notes: list[str] = field(default_factory=list)


_SECTION_COLUMNS = (
    "doc_id, section_id, position, number, title, parent, children, level, chars, "
    "summary, summary_source, page"
)
_INSERT_SECTION = (
    "INSERT INTO corpus_sections (corpus, doc_id, section_id, position, number, "
    "title, parent, children, level, chars, text, summary, summary_source, "
    "summary_prompt, page) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _row(values: Sequence[Any], *, with_text: bool = False) -> SectionRow:
    return SectionRow(
        doc_id=values[0],
        section_id=values[1],
        position=values[2],
        number=values[3],
        title=values[4],
        parent=values[5],
        children=json.loads(values[6]),
        level=values[7],
        chars=values[8],
        summary=values[9],
        summary_source=values[10],
        page=values[11],
        text=values[12] if with_text else "",
    )


async def corpus_exists(store: Store, name: str) -> bool:
    """Tell whether a corpus of this name exists."""
    return (
        await store.fetchone("SELECT 1 FROM corpora WHERE name = ?", (name,))
        is not None
    )


async def ensure_corpus(store: Store, name: str) -> None:
    """Create the corpus if it does not exist yet."""
    now = time.time()
    await store.execute(
        "INSERT INTO corpora (name, created, updated) VALUES (?, ?, ?) "
        "ON CONFLICT DO NOTHING",
        (name, now, now),
    )


async def list_corpora(store: Store) -> list[CorpusInfo]:
    """Return every corpus with its size, by name."""
    sql = """
        SELECT c.name, c.created, c.updated,
            (SELECT COUNT(*) FROM corpus_documents d WHERE d.corpus = c.name),
            COUNT(s.section_id), COALESCE(SUM(s.chars), 0), COUNT(s.summary)
        FROM corpora c LEFT JOIN corpus_sections s ON s.corpus = c.name
        GROUP BY c.name ORDER BY c.name
    """
    rows = await store.fetchall(sql)
    return [
        CorpusInfo(
            name=row[0],
            created=row[1],
            updated=row[2],
            documents=row[3],
            sections=row[4],
            chars=row[5],
            summarized=row[6],
        )
        for row in rows
    ]


async def document_hash(store: Store, corpus: str, doc_id: str) -> str | None:
    """Return the stored content hash of a document, or None if it is not stored."""
    row = await store.fetchone(
        "SELECT content_hash FROM corpus_documents WHERE corpus = ? AND doc_id = ?",
        (corpus, doc_id),
    )
    return str(row[0]) if row else None


async def store_document(
    store: Store,
    corpus: str,
    doc: GuidelineDoc,
    *,
    own_summary_chars: int = OWN_SUMMARY_CHARS,
) -> StoredDocument:
    """Store a document and its sections, unless it is stored unchanged already.

    A changed document replaces the stored one. Summaries of sections whose text did
    not change are kept; a section of at most ``own_summary_chars`` characters becomes
    its own summary; the others are left for the model (``summary`` NULL).
    """
    content_hash = doc.content_hash
    if await document_hash(store, corpus, doc.doc_id) == content_hash:
        return StoredDocument(doc.doc_id, changed=False, sections=len(doc.sections))
    reused = await store.transaction(
        lambda tx: _replace_document(tx, corpus, doc, content_hash, own_summary_chars)
    )
    return StoredDocument(
        doc.doc_id, changed=True, sections=len(doc.sections), reused_summaries=reused
    )


def _replace_document(
    tx: Tx, corpus: str, doc: GuidelineDoc, content_hash: str, own_summary_chars: int
) -> int:
    """Replace a document's rows inside a transaction; return the summaries kept."""
    previous = {
        row[0]: (row[1], row[2], row[3])
        for row in tx.fetchall(
            "SELECT text, summary, summary_source, summary_prompt FROM corpus_sections "
            "WHERE corpus = ? AND doc_id = ? AND summary IS NOT NULL",
            (corpus, doc.doc_id),
        )
    }
    tx.execute(
        "DELETE FROM corpus_documents WHERE corpus = ? AND doc_id = ?",
        (corpus, doc.doc_id),
    )
    now = time.time()
    tx.execute(
        "INSERT INTO corpus_documents VALUES (?, ?, ?, ?, ?, ?)",
        (corpus, doc.doc_id, doc.title, doc.source, content_hash, now),
    )
    reused = 0
    rows = []
    for position, section in enumerate(doc.sections):
        summary: str | None = None
        source: str | None = None
        prompt: str | None = None
        if section.text in previous:
            summary, source, prompt = previous[section.text]
            reused += 1
        elif len(section.text) <= own_summary_chars:
            summary = " ".join(section.text.split()) or section.title
            source = "text"
        rows.append(
            (
                corpus,
                doc.doc_id,
                section.section_id,
                position,
                section.number,
                section.title,
                section.parent,
                json.dumps(section.children),
                section.level,
                len(section.text),
                section.text,
                summary,
                source,
                prompt,
                section.page,
            )
        )
    tx.executemany(_INSERT_SECTION, rows)
    tx.execute("UPDATE corpora SET updated = ? WHERE name = ?", (now, corpus))
    return reused


async def pending_sections(store: Store, corpus: str) -> list[SectionRow]:
    """Return the sections still without a summary, with their text, in order."""
    rows = await store.fetchall(
        f"SELECT {_SECTION_COLUMNS}, text FROM corpus_sections "
        "WHERE corpus = ? AND summary IS NULL ORDER BY doc_id, position",
        (corpus,),
    )
    return [_row(row, with_text=True) for row in rows]


async def set_summaries(
    store: Store, corpus: str, updates: Iterable[SummaryUpdate]
) -> None:
    """Store section summaries."""
    await store.executemany(
        "UPDATE corpus_sections SET summary = ?, summary_source = ?, summary_prompt = ? "
        "WHERE corpus = ? AND doc_id = ? AND section_id = ?",
        [
            (u.summary, u.source, u.prompt_id, corpus, u.doc_id, u.section_id)
            for u in updates
        ],
    )


async def documents(store: Store, corpus: str) -> list[DocumentRow]:
    """Return the documents of a corpus, by id."""
    rows = await store.fetchall(
        "SELECT d.doc_id, d.title, d.source, d.content_hash, d.added, "
        "(SELECT COUNT(*) FROM corpus_sections s "
        " WHERE s.corpus = d.corpus AND s.doc_id = d.doc_id) "
        "FROM corpus_documents d WHERE d.corpus = ? ORDER BY d.doc_id",
        (corpus,),
    )
    return [DocumentRow(*row) for row in rows]


async def sections(
    store: Store, corpus: str, *, with_text: bool = False
) -> list[SectionRow]:
    """Return every section of a corpus in reading order."""
    text = ", text" if with_text else ""
    rows = await store.fetchall(
        f"SELECT {_SECTION_COLUMNS}{text} FROM corpus_sections "
        "WHERE corpus = ? ORDER BY doc_id, position",
        (corpus,),
    )
    return [_row(row, with_text=with_text) for row in rows]


async def get_sections(
    store: Store, corpus: str, keys: Iterable[str]
) -> dict[str, SectionRow]:
    """Return the sections with these keys (text included); unknown keys are absent."""
    wanted = [split_key(key) for key in dict.fromkeys(keys)]
    found: dict[str, SectionRow] = {}
    for doc_id, section_id in wanted:
        row = await store.fetchone(
            f"SELECT {_SECTION_COLUMNS}, text FROM corpus_sections "
            "WHERE corpus = ? AND doc_id = ? AND section_id = ?",
            (corpus, doc_id, section_id),
        )
        if row is not None:
            section = _row(row, with_text=True)
            found[section.key] = section
    return found


async def corpus_version(store: Store, corpus: str) -> str:
    """Return a string that changes whenever the corpus's documents change."""
    hashes = store.dialect.concat_agg("content_hash", ",")
    row = await store.fetchone(
        f"SELECT COUNT(*), COALESCE({hashes}, '') FROM (SELECT content_hash "
        "FROM corpus_documents WHERE corpus = ? ORDER BY doc_id) AS ordered",
        (corpus,),
    )
    assert row is not None
    digest = hashlib.sha256(str(row[1]).encode()).hexdigest()[:16]
    return f"{row[0]}:{digest}"


@dataclass(frozen=True)
class SectionVectors:
    """A section's sentence embeddings by one encoder, for the text they were made of."""

    key: str
    digest: str
    """`text_digest` of the section text the vectors were made of."""
    vectors: bytes
    """Row-major float16 rows, one per unit (see `veriscribe.retrieval.fused`)."""


def text_digest(text: str) -> str:
    """Return a short digest of a section's text: stored vectors are for this text."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


async def section_vectors(
    store: Store, corpus: str, encoder: str
) -> dict[str, SectionVectors]:
    """Return the stored vectors of a corpus's sections by one encoder, by section key."""
    rows = await store.fetchall(
        "SELECT doc_id, section_id, digest, vectors FROM section_vectors "
        "WHERE corpus = ? AND encoder = ?",
        (corpus, encoder),
    )
    found = {}
    for doc_id, section_id, digest, vectors in rows:
        key = section_key(doc_id, section_id)
        found[key] = SectionVectors(key, digest, bytes(vectors))
    return found


async def set_section_vectors(
    store: Store, corpus: str, encoder: str, items: Iterable[SectionVectors]
) -> None:
    """Store section vectors, replacing any made before by the same encoder."""
    await store.executemany(
        "INSERT INTO section_vectors "
        "(corpus, doc_id, section_id, encoder, digest, vectors) "
        "VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (corpus, doc_id, section_id, encoder) DO UPDATE SET "
        "digest = excluded.digest, vectors = excluded.vectors",
        [
            (corpus, *split_key(item.key), encoder, item.digest, item.vectors)
            for item in items
        ],
    )
