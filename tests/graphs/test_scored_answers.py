"""The default answer: the guideline's sentences chosen by score, each certified."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from fakes import ScriptedChatModel, scripted_llm
from qa_helpers import CORPUS, DIAGNOSIS, add_fixture_corpus, run_plain
from veriscribe.documents.guidelines import read_guideline_path
from veriscribe.nodes.qa.state import QADeps, turn_input
from veriscribe.options import QAOptions
from veriscribe.service.qa import qa_runner
from veriscribe.store import corpora
from veriscribe.store.connect import open_database
from veriscribe.store.db import Store


@pytest.fixture
async def store(default_db: str) -> AsyncIterator[Store]:
    async with await open_database(default_db) as opened:
        await add_fixture_corpus(opened)
        yield opened


async def ask(store: Store, question: str) -> tuple[dict[str, object], int]:
    # Any model call at all is a failure here: the script is empty.
    chat = ScriptedChatModel(script=[])
    llm = scripted_llm(chat, store=store)
    graph = await qa_runner(store)
    deps = QADeps(store=store, llm=llm, options=QAOptions(retriever="bm25", k=2))
    result = await run_plain(graph, deps, question, turn_input("ask", CORPUS, question))
    return result, len(chat.calls)


async def test_the_answer_is_chosen_and_certified_without_a_model_call(
    store: Store,
) -> None:
    result, calls = await ask(store, "How is hypertension diagnosed?")
    assert calls == 0
    claims = result["claims"]
    assert claims and all(c["status"] == "certified" for c in claims)  # type: ignore[index]
    first = claims[0]  # type: ignore[index]
    assert "diagnosis of hypertension requires" in first["text"]
    assert first["citations"][0]["section_id"] == DIAGNOSIS.split(":", 1)[1]
    assert result["metrics"]["ccr"] == 1.0  # type: ignore[index]


async def test_a_question_the_sections_do_not_answer_is_not_found(
    store: Store,
) -> None:
    result, calls = await ask(
        store,
        "Which vaccine protects infants whose blood pressure is measured at birth?",
    )
    assert calls == 0
    assert result["not_found"] and result["claims"] == []
    assert any("nearest sections" in note for note in result["notes"])  # type: ignore[union-attr]


async def test_a_sentence_closed_by_reference_numbers_is_one_certified_claim(
    tmp_path: Path,
) -> None:
    # Read as prose, "...studies.[12,14]" is two sentences, the second a bare list
    # of reference numbers that nothing certifies: the answer drops the numbers and
    # the quote keeps them.
    guideline = tmp_path / "refs.md"
    guideline.write_text(
        "# Opioids\n\n## Substance use\n\n"
        "The recommendation against long-term opioid therapy for patients with a "
        "substance use disorder is supported by five large studies (four cohort "
        "studies and one case-control study).[59,61,66] "
        "Patients whose only substance use disorder is tobacco are not covered.\n",
        encoding="utf-8",
    )
    async with await open_database(str(tmp_path / "refs.sqlite")) as store:
        await corpora.ensure_corpus(store, CORPUS)
        for doc in read_guideline_path(guideline):
            await corpora.store_document(store, CORPUS, doc)
        result, calls = await ask(
            store, "Which studies support the recommendation against opioid therapy?"
        )
    assert calls == 0
    claims = result["claims"]
    assert claims and all(c["status"] == "certified" for c in claims)  # type: ignore[index]
    first = claims[0]  # type: ignore[index]
    assert first["text"].endswith("one case-control study).")
    assert first["citations"][0]["quote"].endswith("study).[59,61,66]")
    # The prose itself carries no bare reference list to split off as a claim.
    assert "[59,61,66] {{cite" not in str(result["answer"])
