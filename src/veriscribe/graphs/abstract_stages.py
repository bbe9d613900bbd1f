"""The stage event of each step of the abstract graph: the one place node names are read.

A node's state update becomes its :mod:`veriscribe.events` event here, and nowhere
else. Every node of :func:`veriscribe.graphs.abstract.build_abstract_graph` has its
entry in ``STAGES`` (a test holds them together).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from veriscribe.events import (
    AbstractRefined,
    AbstractStageEvent,
    FacetsDivided,
    FacetsJoined,
    FacetsRegrouped,
    FacetState,
    FacetSummarised,
    LeadTaken,
    OnAbstractStage,
)
from veriscribe.graphs.runner import OnUpdate
from veriscribe.nodes.abstract.state import AbstractState, FacetResult


def _facet(result: FacetResult) -> FacetState:
    return FacetState(name=result["name"], status=result["status"])


def _paragraphs(update: AbstractState) -> dict[str, int]:
    return {
        name: len(paragraphs)
        for name, paragraphs in update.get("groups", {}).items()
        if paragraphs
    }


def _summarised(update: AbstractState) -> FacetSummarised:
    (result,) = update.get("results", [])
    return FacetSummarised(facet=_facet(result))


STAGES: Mapping[str, Callable[[AbstractState], AbstractStageEvent]] = {
    "divide": lambda u: FacetsDivided(
        paragraphs=_paragraphs(u), fallbacks=list(u.get("fallbacks", []))
    ),
    "summarize_facet": _summarised,
    "join": lambda u: FacetsJoined(fallbacks=list(u.get("fallbacks", []))),
    "regroup": lambda u: FacetsRegrouped(
        paragraphs=_paragraphs(u), fallbacks=list(u.get("fallbacks", []))
    ),
    "lead": lambda u: LeadTaken(
        facets=[_facet(r) for r in u.get("results", [])],
        fallbacks=list(u.get("fallbacks", [])),
    ),
    "refine": lambda u: AbstractRefined(
        refined=u.get("refined", False), fallbacks=list(u.get("fallbacks", []))
    ),
}
"""Each node of the abstract graph, and how its state update becomes its event."""


def stage_event(node: str, update: Mapping[str, Any]) -> AbstractStageEvent | None:
    """Return the event of a node's state update (None for a name not of the graph)."""
    told = STAGES.get(node)
    # The update is the node's own return value: a slice of the graph's state.
    return None if told is None else told(cast(AbstractState, update))


def stage_watcher(on_stage: OnAbstractStage) -> OnUpdate:
    """Return the graph runner's update callback that tells ``on_stage`` the events."""

    def on_update(node: str, update: Mapping[str, Any]) -> None:
        event = stage_event(node, update)
        if event is not None:
            on_stage(event)

    return on_update
