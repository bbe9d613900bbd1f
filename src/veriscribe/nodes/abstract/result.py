"""The abstract graph's result: its final state read as a typed :class:`GraphAbstract`."""

from __future__ import annotations

from veriscribe.nodes.abstract.evidence import sentence_counts
from veriscribe.nodes.abstract.fallback import latest
from veriscribe.nodes.abstract.state import AbstractState
from veriscribe.results import (
    AbstractChecks,
    AbstractSentence,
    FacetOutcome,
    GraphAbstract,
    Usage,
)
from veriscribe.text.facets import order_key

__all__ = ["result_of"]


def result_of(state: AbstractState) -> GraphAbstract:
    """Return the abstract of a finished thread, with its facets, checks and calls.

    The facets are the last stage's (the regrouped ones after the fallback), in
    rhetorical order; the usage adds up every facet call and the refine call.
    """
    results = state.get("results", [])
    final = latest(results, state.get("stage", "facets"))
    usage_items = [r["usage"] for r in results] + list(state.get("usage", []))
    sentences = list(state.get("sentences", []))
    return GraphAbstract(
        abstract=state.get("abstract", ""),
        facets=[
            FacetOutcome(
                name=r["name"],
                paragraphs=r["paragraphs"],
                summary=r["summary"],
                status=r["status"],
                chunks=r["chunks"],
                error=r["error"],
                prompt_tokens=r["usage"]["prompt_tokens"],
                output_tokens=r["usage"]["output_tokens"],
                seconds=r["usage"]["seconds"],
            )
            for r in sorted(final.values(), key=lambda r: order_key(r["name"]))
        ],
        fallbacks=list(state.get("fallbacks", [])),
        refined=bool(state.get("refined", False)),
        draft=state.get("draft", ""),
        labels=list(state.get("labels", [])),
        label_source=state.get("label_source", ""),
        prompt_ids=sorted(set(state.get("prompt_ids", []))),
        checks=AbstractChecks(**state["checks"]) if state.get("checks") else None,
        sentences=[AbstractSentence.model_validate(s) for s in sentences],
        sentence_counts=sentence_counts(sentences) if sentences else {},
        usage=Usage(
            calls=sum(u["calls"] for u in usage_items),
            prompt_tokens=sum(u["prompt_tokens"] for u in usage_items),
            output_tokens=sum(u["output_tokens"] for u in usage_items),
            cached_calls=sum(u["cached"] for u in usage_items),
        ),
    )
