"""``veriscribe.verify_answer``: the checker as a Python function."""

from __future__ import annotations

from pathlib import Path

import pytest

import veriscribe
from qa_helpers import CORPUS, DIAGNOSIS, add_fixture_corpus, cite
from veriscribe.documents.guidelines import read_guideline_path
from veriscribe.errors import InputError, NotFound
from veriscribe.settings import Settings
from veriscribe.store import corpora
from veriscribe.store.connect import open_database


@pytest.fixture
async def settings(default_db: str) -> Settings:
    async with await open_database(default_db) as store:
        await add_fixture_corpus(store)
    return Settings(db=default_db, model="ollama:unreachable")


async def test_deterministic_checks_need_no_model(settings: Settings) -> None:
    answer = (
        "Two readings are needed. "
        + cite(DIAGNOSIS, "at least two separate\noccasions")
        + " Nothing else matters."
    )
    result = await veriscribe.verify_answer(
        answer, corpus=CORPUS, judge=False, all_claims=True, settings=settings
    )
    assert [c.status for c in result.claims] == ["unjudged", "uncited"]
    assert result.citations[0].tier == "exact"
    assert result.read_set == [DIAGNOSIS]
    assert result.model is None and result.usage.calls == 0


async def test_errors_the_caller_can_act_on(settings: Settings) -> None:
    with pytest.raises(NotFound):
        await veriscribe.verify_answer("x.", corpus="none", settings=settings)
    with pytest.raises(InputError):
        await veriscribe.verify_answer("  ", corpus=CORPUS, settings=settings)


DOCUMENTS = Path(__file__).resolve().parents[1] / "fixtures" / "documents"
CATEGORIES = (
    "recommendations/major-recommendations/definitions/recommendation-categories"
)


async def test_quotes_are_checked_against_a_pdf_as_against_its_source(
    default_db: str,
) -> None:
    settings = Settings(db=default_db, model="ollama:unreachable")
    async with await open_database(default_db) as store:
        for name in ("ngc-11074.md", "ngc-11074-2col.pdf"):
            await corpora.ensure_corpus(store, name)
            for doc in read_guideline_path(DOCUMENTS / name):
                await corpora.store_document(store, name, doc)
    cited = (
        (
            "A recommended practice is a best practice.",
            # In the PDF over three lines and a page break, its footer and header
            # between; in Markdown on one line.
            'The practice should be identified as a "best practice" for '
            "implementation in appropriate care settings",
        ),
        (
            "A recommended practice is a worst practice.",
            'The practice should be identified as a "worst practice"',
        ),
    )
    found = {}
    for name, doc_id in (
        ("ngc-11074.md", "ngc-11074"),
        ("ngc-11074-2col.pdf", "ngc-11074-2col"),
    ):
        answer = " ".join(
            claim + " " + cite(f"{doc_id}:{CATEGORIES}", quote)
            for claim, quote in cited
        )
        found[name] = await veriscribe.verify_answer(
            answer, corpus=name, judge=False, all_claims=True, settings=settings
        )
    markdown, pdf = found["ngc-11074.md"], found["ngc-11074-2col.pdf"]
    assert [c.tier for c in pdf.citations] == [c.tier for c in markdown.citations]
    assert [c.tier for c in pdf.citations] == ["exact", "fail"]
    assert [c.status for c in pdf.claims] == ["unjudged", "unsupported"]
    assert [c.page for c in pdf.citations] == [2, 2]
    assert [c.page for c in pdf.claims[0].citations] == [2]
    assert [c.page for c in markdown.citations] == [None, None]
