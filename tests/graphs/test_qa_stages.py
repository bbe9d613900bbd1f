"""The stage events: every step of the cited-QA graph is told, typed, to every reader."""

from __future__ import annotations

from typing import get_args

from qa_helpers import DIAGNOSIS
from veriscribe.events import (
    STAGE_EVENT,
    SectionsChosen,
    StageEvent,
)
from veriscribe.graphs.cited_qa import build_cited_qa_graph
from veriscribe.graphs.qa_stages import STAGES, stage_event

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


def test_an_event_is_read_back_from_its_json() -> None:
    event = SectionsChosen(read_set=[DIAGNOSIS], method="bm25")
    assert STAGE_EVENT.validate_json(event.model_dump_json()) == event
    assert event.model_dump()["stage"] == "retrieve"


def test_a_name_not_of_the_graph_tells_nothing() -> None:
    assert stage_event("__interrupt__", {}) is None
