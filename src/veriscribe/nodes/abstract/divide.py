"""The divide step: every paragraph to one facet, by first sentence, length or header."""

from __future__ import annotations

import time

from langgraph.runtime import Runtime

from veriscribe.labeller.llm import label_with_model, use_classifier
from veriscribe.labeller.model import label_paragraphs
from veriscribe.nodes.abstract.state import (
    AbstractDeps,
    AbstractState,
    FacetResult,
    usage_record,
)
from veriscribe.prompts import load_prompt
from veriscribe.results import Usage
from veriscribe.text.facets import (
    FACETS,
    group_paragraphs,
    naive_groups,
    path_label,
)
from veriscribe.text.sentences import first_sentences


async def divide(state: AbstractState, runtime: Runtime[AbstractDeps]) -> AbstractState:
    """Assign every paragraph to a facet with the configured split strategy."""
    deps = runtime.context
    article = await deps.article(state["doc_key"])
    texts = [p.text for p in article.paragraphs]
    split = deps.options.split
    notes: list[str] = []
    usage, seconds = Usage(), 0.0
    started = time.perf_counter()
    if split == "ns":
        labels, groups = naive_groups([len(t) for t in texts])
        source = "naive"
    else:
        if split == "sh":
            labels = [path_label(p.path or (p.section,)) for p in article.paragraphs]
            source = "headers"
        elif use_classifier(deps.options.labeller, deps.llm):
            labels = await deps.offload.run(label_paragraphs, texts)
            source = "classifier"
        else:
            targets = await deps.offload.run(first_sentences, texts)
            labels, notes, usage, seconds = await label_with_model(
                deps.llm, targets, texts
            )
            source = "llm"
        groups = {k: v for k, v in group_paragraphs(labels).items()}
    empty: list[FacetResult] = [
        FacetResult(
            name=name,
            stage="facets",
            paragraphs=[],
            summary="",
            status="empty",
            error=None,
            chunks=0,
            prompt_id="",
            usage=usage_record("facet", Usage(), 0.0),
        )
        for name in (FACETS if split != "ns" else ())
        if not groups.get(name)
    ]
    return {
        "labels": labels,
        "label_source": source,
        "stage": "facets",
        "groups": {k: v for k, v in groups.items() if v},
        "results": empty,
        "fallbacks": notes,
        "prompt_ids": [load_prompt("abstract", "label").id] if source == "llm" else [],
        "usage": [
            usage_record("divide", usage, seconds or time.perf_counter() - started)
        ]
        if usage.calls or usage.cached_calls
        else [],
    }
