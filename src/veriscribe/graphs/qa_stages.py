"""The stage event of each step of the cited-QA graph: the one place node names are read.

A node's state update becomes its :mod:`veriscribe.events` event here, and nowhere
else: the terminal, the server and the web page read the events. Every node of
:func:`veriscribe.graphs.cited_qa.build_cited_qa_graph` has its entry in ``STAGES``
(a test holds them together), so renaming a node fails that test instead of quietly
leaving a user interface without its progress.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from veriscribe.events import (
    AnswerReady,
    AnswerWritten,
    ClaimJudged,
    ClaimsFound,
    ClaimsJudged,
    ClaimState,
    OnStage,
    QuotesChecked,
    SectionsChosen,
    StageEvent,
    SupportSought,
)
from veriscribe.graphs.runner import OnUpdate
from veriscribe.nodes.qa.state import ClaimInfo, QAState


def _claims(claims: list[ClaimInfo]) -> list[ClaimState]:
    return [ClaimState(sentence=c["sentence"], status=c["status"]) for c in claims]


def _retrieved(update: QAState) -> SectionsChosen:
    retrieval = update.get("retrieval")
    return SectionsChosen(
        read_set=list(update.get("read_set", [])),
        method=retrieval["method"] if retrieval else "",
    )


def _answered(update: QAState) -> AnswerWritten:
    read_set = update.get("read_set")
    return AnswerWritten(
        sentences=[s["text"] for s in update.get("answer_sentences", [])],
        not_found=update.get("not_found", False),
        read_set=None if read_set is None else list(read_set),
    )


def _judged(update: QAState) -> ClaimJudged:
    (judgement,) = update.get("judgements", [])
    return ClaimJudged(sentence=judgement["sentence"], verdict=judgement["verdict"])


def _recovered(update: QAState) -> SupportSought:
    (found,) = update.get("recoveries", [])
    return SupportSought(
        sentence=found["sentence"], recovered=found["recovered"] is not None
    )


STAGES: Mapping[str, Callable[[QAState], StageEvent]] = {
    "retrieve": _retrieved,
    "answer": _answered,
    "filter_claims": lambda u: ClaimsFound(
        is_claim=[s["claim"] for s in u.get("sentences", [])]
    ),
    "verify": lambda u: QuotesChecked(claims=_claims(u.get("claims", []))),
    "judge": _judged,
    "join": lambda u: ClaimsJudged(claims=_claims(u.get("claims", []))),
    "recover": _recovered,
    "present": lambda u: AnswerReady(claims=_claims(u.get("claims", []))),
}
"""Each node of the cited-QA graph, and how its state update becomes its event."""


def stage_event(node: str, update: Mapping[str, Any]) -> StageEvent | None:
    """Return the event of a node's state update (None for a name not of the graph)."""
    told = STAGES.get(node)
    # The update is the node's own return value: a slice of the graph's state.
    return None if told is None else told(cast(QAState, update))


def stage_watcher(on_stage: OnStage) -> OnUpdate:
    """Return the graph runner's update callback that tells ``on_stage`` the events."""

    def on_update(node: str, update: Mapping[str, Any]) -> None:
        event = stage_event(node, update)
        if event is not None:
            on_stage(event)

    return on_update
