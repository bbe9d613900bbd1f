"""Constrained citations, the structured answer, the scored judge and what is never certified."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from fakes import ScriptedChatModel, scripted_llm
from qa_helpers import (
    CORPUS,
    DIAGNOSIS,
    DRUGS,
    LIFESTYLE,
    add_fixture_corpus,
    run_plain,
)
from veriscribe.nodes.qa.state import QADeps, turn_input
from veriscribe.options import QAOptions
from veriscribe.service.qa import qa_runner
from veriscribe.store.connect import open_database
from veriscribe.store.db import Store

QUESTION = "Can ACE inhibitors be combined with angiotensin receptor blockers?"
NOT_COMBINED = (
    "ACE inhibitors should not be combined with angiotensin receptor blockers."
)


@pytest.fixture
async def store(default_db: str) -> AsyncIterator[Store]:
    async with await open_database(default_db) as opened:
        await add_fixture_corpus(opened)
        yield opened


class Model:
    """Answers the answer prompt with given sentences and the judge with P(yes)."""

    def __init__(self, sentences: list[dict[str, str]], yes: float = 1.0) -> None:
        self.sentences = sentences
        self.yes = yes
        self.schemas: list[dict[str, Any]] = []
        self.kinds: list[str] = []
        self.prompts: list[str] = []

    def __call__(self, prompt: str, kwargs: dict[str, Any]) -> str:
        if "Guideline sections:" in prompt:
            self.kinds.append("answer")
            self.prompts.append(prompt)
            self.schemas.append(kwargs.get("format") or {})
            return json.dumps({"sentences": self.sentences})
        if "Does the guideline passage state this claim?" in prompt:
            self.kinds.append("judge")
            return json.dumps({"answer": "yes" if self.yes >= 0.5 else "no"})
        if "Quotes already cited:" in prompt:
            self.kinds.append("recover")
            return json.dumps({"section_id": "", "span": ""})
        raise AssertionError(f"unexpected prompt {prompt[:200]!r}")


async def ask(store: Store, model: Model, **options: Any) -> dict[str, Any]:
    llm = scripted_llm(ScriptedChatModel(responder=model), store=store)
    graph = await qa_runner(store)
    # The model chooses and words its sentences unless a test asks otherwise.
    opts = QAOptions(
        retriever="bm25", k=3, **{"wording": "own", "select": "model", **options}
    )
    deps = QADeps(store=store, llm=llm, options=opts)
    return await run_plain(graph, deps, "t", turn_input("ask", CORPUS, QUESTION))


async def test_the_schema_admits_only_sentences_of_the_sections_read(
    store: Store,
) -> None:
    model = Model(
        [{"section_id": DRUGS, "quote": NOT_COMBINED, "sentence": NOT_COMBINED}]
    )
    result = await ask(store, model)
    schema = model.schemas[0]
    item = schema["properties"]["sentences"]["items"]
    options = item.get("anyOf", [item])
    allowed = {
        o["properties"]["section_id"]["enum"][0]: o["properties"]["quote"]["enum"]
        for o in options
    }
    assert set(allowed) == set(result["read_set"])
    assert NOT_COMBINED in allowed[DRUGS]
    # Every allowed quote is a sentence of its section, and nothing else is allowed.
    assert all(len(quotes) >= 1 for quotes in allowed.values())
    assert item.get("anyOf") or item["required"] == ["section_id", "quote", "sentence"]
    claim = result["claims"][0]
    assert claim["status"] == "certified"
    # Restating its quote, the claim is certified without a model call.
    assert claim["judged_by"] == "lexical"
    assert "judge" not in model.kinds


async def test_a_forged_out_of_section_quote_is_flagged_not_certified(
    store: Store,
) -> None:
    """A backend that ignores the constraint cannot get a wrong quote certified."""
    forged = "ACE inhibitors may be combined with angiotensin receptor blockers."
    model = Model([{"section_id": DRUGS, "quote": forged, "sentence": forged}], yes=1.0)
    result = await ask(store, model)
    claim = result["claims"][0]
    assert claim["citations"][0]["tier"] == "fail"
    assert claim["status"] == "unsupported"
    assert "judge" not in model.kinds


async def test_a_quote_from_another_section_is_flagged(store: Store) -> None:
    model = Model(
        [{"section_id": LIFESTYLE, "quote": NOT_COMBINED, "sentence": NOT_COMBINED}]
    )
    result = await ask(store, model)
    assert result["claims"][0]["citations"][0]["tier"] == "fail"
    assert result["claims"][0]["status"] == "unsupported"


async def test_the_model_yes_does_not_certify_a_reversed_claim(store: Store) -> None:
    reversed_claim = (
        "ACE inhibitors can be combined with angiotensin receptor blockers."
    )
    model = Model(
        [{"section_id": DRUGS, "quote": NOT_COMBINED, "sentence": reversed_claim}],
        yes=1.0,
    )
    result = await ask(store, model)
    claim = result["claims"][0]
    assert claim["status"] != "certified"
    assert claim["verdict"] in ("contradicted", "not_supported")


async def test_every_cited_sentence_is_a_claim_without_a_filter_call(
    store: Store,
) -> None:
    model = Model(
        [
            {"section_id": DRUGS, "quote": NOT_COMBINED, "sentence": "No."},
            {"section_id": DIAGNOSIS, "quote": "x", "sentence": "Check twice."},
        ]
    )
    result = await ask(store, model, judge=False)
    assert [c["text"] for c in result["claims"]] == ["No.", "Check twice."]
    assert result["not_checked"] == []
    assert result["answer"].count("{{cite:") == 2


async def test_unit_ids_become_quotes_of_their_sections(store: Store) -> None:
    model = Model([{"source": "S999", "sentence": "Made up."}])
    result = await ask(store, model, cite_by="id", judge=False)
    item = model.schemas[0]["properties"]["sentences"]["items"]
    assert item["properties"]["source"]["enum"][0] == "S1"
    claim = result["claims"][0]
    assert claim["citations"][0]["tier"] == "unresolved"
    assert claim["status"] == "unsupported"


ASPIRIN = (
    "Avoid aspirin in children under 16 years; in adults with coronary disease, "
    "aspirin is recommended for secondary prevention."
)


@pytest.mark.parametrize("citations", ["constrained", "free"])
async def test_the_reversed_aspirin_recommendation_is_never_certified(
    tmp_path: Path, default_db: str, citations: str
) -> None:
    """An elision that skips a scope, and a judge that says yes to anything."""
    from veriscribe.documents.guidelines import read_guideline_path
    from veriscribe.store import corpora

    guideline = tmp_path / "aspirin.md"
    guideline.write_text(f"# Aspirin\n\n## Children\n\n{ASPIRIN}\n", "utf-8")
    claim = "Aspirin is recommended for children under 16 years."
    elided = (
        "aspirin in children under 16 years ... "
        "aspirin is recommended for secondary prevention"
    )
    async with await open_database(default_db) as store:
        await corpora.ensure_corpus(store, "asp")
        for doc in read_guideline_path(guideline):
            await corpora.store_document(store, "asp", doc)
        (key,) = [r.key for r in await corpora.sections(store, "asp") if r.chars]
        model = Model(
            [{"section_id": key, "quote": elided, "sentence": claim}], yes=1.0
        )
        llm = scripted_llm(ScriptedChatModel(responder=model), store=store)
        graph = await qa_runner(store)
        options = QAOptions(
            retriever="bm25",
            k=1,
            citations=citations,  # type: ignore[arg-type]
            wording="own",
            select="model",
        )
        deps = QADeps(store=store, llm=llm, options=options)
        result = await run_plain(
            graph, deps, "a", turn_input("ask", "asp", "Aspirin for children?")
        )
    (found,) = result["claims"]
    assert found["status"] != "certified"
    citation = found["citations"][0]
    if citation["tier"] in ("exact", "normalized", "elided"):
        # Were the quote accepted, the judge reads the whole sentence, "Avoid" too.
        assert citation["source"].startswith("Avoid aspirin")
        assert "avoid" in found["note"]


async def test_source_wording_answers_with_the_chosen_sentences(store: Store) -> None:
    model = Model([{"source": "S2"}, {"source": "S1"}], yes=0.0)
    result = await ask(store, model, cite_by="id", wording="source")
    item = model.schemas[0]["properties"]["sentences"]["items"]
    # The model only chooses: the schema has no sentence of its own to write.
    assert list(item["properties"]) == ["source"]
    shown = dict(re.findall(r"^\[(S\d+)\] (.+)$", model.prompts[0], re.MULTILINE))
    assert [c["text"] for c in result["claims"]] == [shown["S2"], shown["S1"]]
    for claim in result["claims"]:
        assert claim["citations"][0]["quote"] == claim["text"]
        assert claim["status"] == "certified" and claim["judged_by"] == "lexical"
    # The lexical lane decided: the model was never asked to judge.
    assert "judge" not in model.kinds


async def test_source_wording_by_quote_has_no_sentence_field(store: Store) -> None:
    model = Model([{"section_id": DRUGS, "quote": NOT_COMBINED}], yes=0.0)
    result = await ask(store, model, wording="source")
    item = model.schemas[0]["properties"]["sentences"]["items"]
    for option in item.get("anyOf", [item]):
        assert set(option["properties"]) == {"section_id", "quote"}
    assert [c["text"] for c in result["claims"]] == [NOT_COMBINED]
    assert result["claims"][0]["status"] == "certified"


async def test_each_sentence_of_an_item_is_checked_against_its_quote(
    store: Store,
) -> None:
    packed = "Thiazides are first-line. " + NOT_COMBINED
    model = Model(
        [{"section_id": DRUGS, "quote": NOT_COMBINED, "sentence": packed}], yes=0.0
    )
    result = await ask(store, model)
    claims = result["claims"]
    assert [c["text"] for c in claims] == ["Thiazides are first-line.", NOT_COMBINED]
    # Both parts carry the item's quote: none rides uncited behind the other.
    assert all(c["citations"][0]["quote"] == NOT_COMBINED for c in claims)
    assert [c["status"] for c in claims] == ["unsupported", "certified"]


async def test_a_sentence_read_that_restates_the_claim_recovers_it(
    store: Store,
) -> None:
    first_line = (
        "Thiazide diuretics, calcium channel blockers, ACE inhibitors and "
        "angiotensin receptor blockers are first-line agents."
    )
    # The claim is another sentence of the section than the quote: the model's
    # "yes" (here below a cut-off set out of reach) makes it partial only.
    model = Model(
        [{"section_id": DRUGS, "quote": NOT_COMBINED, "sentence": first_line}], yes=1.0
    )
    result = await ask(store, model, support_threshold=1.5)
    (claim,) = result["claims"]
    assert claim["status"] == "recovered"
    assert claim["recovered_quote"] == first_line
    assert claim["recovered_from"]["section_id"] == DRUGS.split(":")[1]
    assert "word for word" in claim["note"]
    # Found without the probe: the model was not asked for a span.
    assert "recover" not in model.kinds


async def test_the_bundled_model_yes_never_certifies(store: Store) -> None:
    from veriscribe.nodes.qa.judge import scored_verdict

    class Bundled:
        label = "local:qwen2.5-coder-0.5b-instruct-q4_k_m"

        async def choice_probs(self, *_: Any, **__: Any) -> Any:
            class Reply:
                value = {"yes": 0.99, "no": 0.01}

            return Reply()

    ruling = await scored_verdict(
        Bundled(),  # type: ignore[arg-type]
        QAOptions(),
        QUESTION,
        "ACE inhibitors should not be given together with ARBs.",
        [NOT_COMBINED],
    )
    assert ruling["verdict"] == "partially_supported" and ruling["method"] == "model"
    # A user who has measured the model may still choose a cut-off.
    ruling = await scored_verdict(
        Bundled(),  # type: ignore[arg-type]
        QAOptions(support_threshold=0.9),
        QUESTION,
        "ACE inhibitors should not be given together with ARBs.",
        [NOT_COMBINED],
    )
    assert ruling["verdict"] == "fully_supported"


async def test_a_restated_clause_is_not_certified_past_the_guard() -> None:
    from veriscribe.nodes.qa.judge import decide

    source = (
        "Do not start opioids for acute pain; opioids are recommended for cancer pain."
    )
    ruling = await decide(
        None,  # type: ignore[arg-type]  # the lexical lane decides: no model call
        QAOptions(),
        "",
        "Opioids are recommended for cancer pain.",
        [source],
    )
    assert ruling["method"] == "lexical" and ruling["verdict"] == "not_supported"
    assert "not certified" in ruling["note"]
