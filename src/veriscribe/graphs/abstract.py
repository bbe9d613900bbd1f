r"""The Divide-Prompt-Refine abstract graph: state, routers and the builder.

divide -> (Send per non-empty facet) summarize_facet -> join -> refine
                                                           \-> regroup -> summarize_facet -> join
                                                                                  \-> lead -> refine
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.types import RetryPolicy, Send

from veriscribe.nodes.abstract.divide import divide
from veriscribe.nodes.abstract.fallback import attempted, join, lead, regroup
from veriscribe.nodes.abstract.refine import refine
from veriscribe.nodes.abstract.state import (
    AbstractDeps,
    AbstractState,
    FacetResult,
    FacetTask,
)
from veriscribe.nodes.abstract.summarize_facet import summarize_facet
from veriscribe.options import AbstractOptions

__all__ = [
    "AbstractDeps",
    "AbstractOptions",
    "AbstractState",
    "FacetResult",
    "build_abstract_graph",
]


def _retryable(exc: Exception) -> bool:
    # Only transient backend faults; a parse failure is handled in the node.
    return bool(getattr(exc, "retryable", False))


def fan_out(state: AbstractState) -> list[Send]:
    """Send one branch per non-empty facet of the current stage."""
    return [
        Send(
            "summarize_facet",
            FacetTask(
                doc_key=state["doc_key"],
                name=name,
                stage=state["stage"],
                paragraphs=paragraphs,
            ),
        )
        for name, paragraphs in state["groups"].items()
        if paragraphs
    ]


def route_after_divide(state: AbstractState) -> list[Send]:
    """Fan out to the facets found."""
    return fan_out(state)


def route_after_regroup(state: AbstractState) -> list[Send]:
    """Fan out to the regrouped facets."""
    return fan_out(state)


def route_after_join(state: AbstractState) -> Literal["refine", "regroup", "lead"]:
    """Refine when any summary succeeded; else regroup once, then fall back to Lead-300."""
    results = attempted(state)
    if any(r["status"] == "ok" for r in results) and state["stage"] == "facets":
        return "refine"
    if state["stage"] == "facets":
        return "regroup"
    return "lead" if any(r["status"] == "failed" for r in results) else "refine"


def build_abstract_graph(
    max_attempts: int = 3,
) -> StateGraph[AbstractState, AbstractDeps]:
    """Return the (uncompiled) abstract graph."""
    retry = RetryPolicy(max_attempts=max_attempts, retry_on=_retryable)
    graph = StateGraph(AbstractState, context_schema=AbstractDeps)
    graph.add_node("divide", divide, retry_policy=retry)
    # A Send branch receives its FacetTask payload, not the graph state; the stubs
    # only know nodes that take the state.
    facet_node: Any = summarize_facet
    graph.add_node(
        "summarize_facet", facet_node, input_schema=FacetTask, retry_policy=retry
    )
    graph.add_node("join", join)
    graph.add_node("regroup", regroup)
    graph.add_node("lead", lead)
    graph.add_node("refine", refine, retry_policy=retry)
    graph.add_edge(START, "divide")
    graph.add_conditional_edges("divide", route_after_divide, ["summarize_facet"])
    graph.add_edge("summarize_facet", "join")
    graph.add_conditional_edges("join", route_after_join, ["refine", "regroup", "lead"])
    graph.add_conditional_edges("regroup", route_after_regroup, ["summarize_facet"])
    graph.add_edge("lead", "refine")
    graph.add_edge("refine", END)
    return graph
