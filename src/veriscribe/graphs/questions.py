"""The question-set graph: sample -> (Send per slot) generate.

Each slot's question is written in its own branch; a crash loses only the branches
still running, because each finished branch's result is checkpointed as it completes.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.types import RetryPolicy, Send

from veriscribe.nodes.questions import (
    QuestionDeps,
    QuestionsState,
    Slot,
    generate,
    sample,
)

__all__ = ["build_questions_graph", "fan_out"]


def _retryable(exc: Exception) -> bool:
    # Only transient backend faults; a bad reply is handled in the node.
    return bool(getattr(exc, "retryable", False))


def fan_out(state: QuestionsState) -> list[Send]:
    """Send each sampled slot to the generator (nothing to do without slots)."""
    return [Send("generate", slot) for slot in state.get("slots", [])]


def build_questions_graph(
    max_attempts: int = 3,
) -> StateGraph[QuestionsState, QuestionDeps]:
    """Return the (uncompiled) question-set graph."""
    retry = RetryPolicy(max_attempts=max_attempts, retry_on=_retryable)
    graph = StateGraph(QuestionsState, context_schema=QuestionDeps)
    graph.add_node("sample", sample)
    # Send branches receive their task payload (a Slot), not the graph state.
    branch: Any = generate
    graph.add_node("generate", branch, input_schema=Slot, retry_policy=retry)
    graph.add_edge(START, "sample")
    graph.add_conditional_edges("sample", fan_out, ["generate"])
    graph.add_edge("generate", END)
    return graph
