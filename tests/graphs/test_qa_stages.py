"""The stage events: every step of the cited-QA graph is told, typed, to every reader."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import get_args

import pytest

from qa_helpers import CORPUS, DIAGNOSIS, LIFESTYLE, Script, cite, script_llm
from veriscribe.cli.render.answers import _NEXT_STAGE
from veriscribe.events import (
    STAGE_EVENT,
    AnswerReady,
    AnswerWritten,
    ClaimJudged,
    ClaimsFound,
    ClaimsJudged,
    QuotesChecked,
    SectionsChosen,
    StageEvent,
    SupportSought,
)
from veriscribe.graphs.cited_qa import build_cited_qa_graph
from veriscribe.graphs.qa_stages import STAGES, stage_event
from veriscribe.nodes.qa.state import QADeps, turn_input
from veriscribe.options import QAOptions
from veriscribe.serve import ServeConfig, create_app
from veriscribe.service.qa import qa_runner, run_thread
from veriscribe.settings import Settings
from veriscribe.store.connect import open_database
from veriscribe.store.db import Store

WEB_PAGE = Path(__file__).parents[2] / "src/veriscribe/serve/web/app.js"

EVENTS = get_args(get_args(StageEvent)[0])
"""Every kind of stage event, from the union."""

STAGE_NAMES = [event.model_fields["stage"].default for event in EVENTS]


def test_every_node_of_the_graph_has_its_event() -> None:
    # A node renamed or added without its entry fails here, not in a user interface.
    nodes = set(build_cited_qa_graph().nodes)
    assert nodes == set(STAGES)


def test_each_stage_is_told_by_one_kind_of_event() -> None:
    assert len(STAGE_NAMES) == len(set(STAGE_NAMES)) == len(EVENTS)
    assert set(STAGE_NAMES) == set(STAGES)


def test_the_terminal_and_the_web_page_name_every_stage() -> None:
    assert set(_NEXT_STAGE) == set(STAGE_NAMES)
    page = WEB_PAGE.read_text(encoding="utf-8")
    table = re.search(r"const STAGE_TEXT = \{(.*?)\};", page, re.DOTALL)
    assert table is not None
    assert set(re.findall(r"^\s*(\w+):", table.group(1), re.MULTILINE)) == set(
        STAGE_NAMES
    )


def test_each_event_schema_is_in_the_openapi_document() -> None:
    app = create_app(ServeConfig(settings=Settings(db=":memory:"), resume_runs=False))
    document = app.openapi()
    schemas = document["components"]["schemas"]
    union = schemas["StageEvent"]
    assert union["discriminator"]["propertyName"] == "stage"
    assert set(union["discriminator"]["mapping"]) == set(STAGE_NAMES)
    for event in EVENTS:
        schema = schemas[event.__name__]
        assert schema["properties"]["stage"]["const"] in STAGE_NAMES
        assert "stage" in schema["required"]
        assert schema.get("description"), event.__name__
    stream = document["paths"]["/v1/answers"]["post"]["responses"]["200"]["content"]
    assert stream["text/event-stream"]["schema"] == {
        "$ref": "#/components/schemas/StageEvent"
    }


def test_an_event_is_read_back_from_its_json() -> None:
    event = SectionsChosen(read_set=[DIAGNOSIS], method="bm25")
    assert STAGE_EVENT.validate_json(event.model_dump_json()) == event
    assert event.model_dump()["stage"] == "retrieve"


def test_a_name_not_of_the_graph_tells_nothing() -> None:
    assert stage_event("__interrupt__", {}) is None


SENT_DIAG = "A diagnosis requires elevated readings on two separate occasions."
SENT_SODIUM = "Adults with elevated blood pressure should cut sodium below 1500 mg."
ANSWER = (
    f"{SENT_DIAG} "
    + cite(DIAGNOSIS, "requires elevated readings on at least two separate occasions")
    + f" {SENT_SODIUM} "
    + cite(LIFESTYLE, "should reduce dietary sodium to less than 1500 mg per day")
)


@pytest.fixture
async def store(default_db: str) -> AsyncIterator[Store]:
    from qa_helpers import add_fixture_corpus

    async with await open_database(default_db) as opened:
        await add_fixture_corpus(opened)
        yield opened


async def test_a_run_tells_every_step_in_order(store: Store) -> None:
    script = Script(
        answer=ANSWER,
        verdicts={
            "diagnosis requires": ["fully_supported"],
            "sodium": ["partially_supported"],
        },
        recover={
            "sodium": (LIFESTYLE, "Adults with elevated blood pressure should reduce"),
        },
    )
    options = QAOptions(
        retriever="llm", judge_method="sampled", wording="own", select="model"
    )
    deps = QADeps(store=store, llm=script_llm(script, store=store), options=options)
    told: list[StageEvent] = []
    made = await run_thread(
        await qa_runner(store),
        deps,
        "t1",
        turn_input("ask", CORPUS, "How is hypertension diagnosed?"),
        on_stage=told.append,
    )
    kinds = [type(event) for event in told]
    assert kinds[:4] == [SectionsChosen, AnswerWritten, ClaimsFound, QuotesChecked]
    assert kinds[4:6] == [ClaimJudged, ClaimJudged]
    assert kinds[6:] == [ClaimsJudged, SupportSought, AnswerReady]
    chosen, written, found = told[0], told[1], told[2]
    assert isinstance(chosen, SectionsChosen) and chosen.read_set == [
        DIAGNOSIS,
        LIFESTYLE,
    ]
    assert isinstance(written, AnswerWritten) and len(written.sentences) == 2
    assert isinstance(found, ClaimsFound) and found.is_claim == [True, True]
    last = told[-1]
    assert isinstance(last, AnswerReady)
    assert [c.status for c in last.claims] == [c.status for c in made.answer.claims]
