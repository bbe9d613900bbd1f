r"""The cited-QA graph: state, routers and the builder.

ask:    retrieve -> answer -> filter_claims -> verify -> (Send per claim) judge -> join
verify:                       filter_claims -> ...       (the tail only, on a given answer)

    answer -> present                  when the sections read do not answer
    verify -> present                  without the judge, or with no claim to judge
    join   -> (Send per partial claim) recover -> present
    join   -> present                  when no claim is partially supported
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import RetryPolicy, Send

from veriscribe.checks.verbatim import is_compliant
from veriscribe.documents.guidelines import section_key
from veriscribe.nodes.qa.answer import answer
from veriscribe.nodes.qa.claims import filter_claims
from veriscribe.nodes.qa.judge import join, judge
from veriscribe.nodes.qa.present import present
from veriscribe.nodes.qa.recover import recover
from veriscribe.nodes.qa.retrieve import retrieve
from veriscribe.nodes.qa.state import (
    JudgeTask,
    QADeps,
    QAState,
    RecoverTask,
    turn_input,
)
from veriscribe.nodes.qa.verify import compliant_quotes, compliant_sources, verify
from veriscribe.options import QAOptions

__all__ = [
    "QADeps",
    "QAOptions",
    "QAState",
    "build_cited_qa_graph",
    "route_after_answer",
    "route_after_join",
    "route_after_verify",
    "route_start",
    "turn_input",
]


def _retryable(exc: Exception) -> bool:
    # Only transient backend faults; semantic failures are handled in the nodes.
    return bool(getattr(exc, "retryable", False))


def route_start(state: QAState) -> Literal["retrieve", "filter_claims", "present"]:
    """Answer a question, or check a given answer (``verify``)."""
    if state.get("mode") != "verify":
        return "retrieve"
    # A given "not found" answer is reported as such, exactly as ask reports it.
    return "present" if state.get("not_found") else "filter_claims"


def route_after_answer(state: QAState) -> Literal["filter_claims", "present"]:
    """Check the answer, unless there is none to check."""
    if state.get("not_found") or not state.get("answer", "").strip():
        return "present"
    return "filter_claims"


def route_after_verify(
    state: QAState, runtime: Runtime[QADeps]
) -> list[Send] | Literal["present"]:
    """Send each claim with a verbatim quote to the judge, or go on to present."""
    if not runtime.context.options.judge:
        return "present"
    citations = state.get("citations", [])
    sends = []
    for claim in state.get("claims", []):
        if claim["status"] != "unjudged":
            continue
        pairs = compliant_sources(claim, citations)
        task = JudgeTask(
            question=state.get("question", ""),
            sentence=claim["sentence"],
            claim=claim["text"],
            quotes=[quote for quote, _ in pairs],
            sources=list(dict.fromkeys(source for _, source in pairs)),
        )
        sends.append(Send("judge", task))
    return sends or "present"


def route_after_join(
    state: QAState, runtime: Runtime[QADeps]
) -> list[Send] | Literal["present"]:
    """Send each partially supported claim to recovery, or go on to present."""
    if not runtime.context.options.recover:
        return "present"
    by_index = {c["index"]: c for c in state.get("citations", [])}
    sends = []
    for claim in state.get("claims", []):
        if claim["status"] != "partial":
            continue
        cited = [
            section_key(by_index[i]["doc_id"], by_index[i]["section_id"])
            for i in claim["citations"]
            if is_compliant(by_index[i]["tier"])
        ]
        sends.append(
            Send(
                "recover",
                RecoverTask(
                    corpus=state["corpus"],
                    question=state.get("question", ""),
                    sentence=claim["sentence"],
                    claim=claim["text"],
                    quotes=compliant_quotes(claim, state.get("citations", [])),
                    sources=list(
                        dict.fromkeys(
                            source
                            for _, source in compliant_sources(
                                claim, state.get("citations", [])
                            )
                        )
                    ),
                    cited=list(dict.fromkeys(cited)),
                    read_set=list(state.get("read_set", [])),
                ),
            )
        )
    return sends or "present"


def build_cited_qa_graph(max_attempts: int = 3) -> StateGraph[QAState, QADeps]:
    """Return the (uncompiled) cited-QA graph."""
    retry = RetryPolicy(max_attempts=max_attempts, retry_on=_retryable)
    graph = StateGraph(QAState, context_schema=QADeps)
    graph.add_node("retrieve", retrieve, retry_policy=retry)
    graph.add_node("answer", answer, retry_policy=retry)
    graph.add_node("filter_claims", filter_claims, retry_policy=retry)
    graph.add_node("verify", verify)
    # Send branches receive their task payload, not the graph state; the stubs only
    # know nodes that take the state.
    judge_node: Any = judge
    recover_node: Any = recover
    graph.add_node("judge", judge_node, input_schema=JudgeTask, retry_policy=retry)
    graph.add_node("join", join)
    graph.add_node(
        "recover", recover_node, input_schema=RecoverTask, retry_policy=retry
    )
    graph.add_node("present", present)
    graph.add_conditional_edges(
        START, route_start, ["retrieve", "filter_claims", "present"]
    )
    graph.add_edge("retrieve", "answer")
    graph.add_conditional_edges(
        "answer", route_after_answer, ["filter_claims", "present"]
    )
    graph.add_edge("filter_claims", "verify")
    graph.add_conditional_edges("verify", route_after_verify, ["judge", "present"])
    graph.add_edge("judge", "join")
    graph.add_conditional_edges("join", route_after_join, ["recover", "present"])
    graph.add_edge("recover", "present")
    graph.add_edge("present", END)
    return graph
