"""The refine step: one call turns the concatenated draft into the abstract."""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from veriscribe.errors import ContextOverflow, StructuredOutputError
from veriscribe.nodes.abstract.fallback import latest
from veriscribe.nodes.abstract.state import AbstractDeps, AbstractState, usage_record
from veriscribe.prompts import load_prompt
from veriscribe.results import USABLE_FACET_STATUSES
from veriscribe.text.facets import order_key
from veriscribe.text.replies import (
    ABSTRACT_TOKENS,
    AbstractFull,
    AbstractLean,
    complete_sentences,
    output_format,
)

REPEAT_MARGIN = 2
"""The refined abstract may repeat a run of its own words this much longer than a facet
summary may copy its text: abstracts name their subject again, loops repeat clauses."""


def draft_of(state: AbstractState) -> str:
    """Concatenate the usable summaries of the final stage in rhetorical order."""
    usable = [
        r
        for r in latest(state.get("results", []), state["stage"]).values()
        if r["status"] in USABLE_FACET_STATUSES and r["summary"].strip()
    ]
    usable.sort(key=lambda r: order_key(r["name"]))
    return "\n\n".join(r["summary"].strip() for r in usable)


def one_paragraph(draft: str) -> str:
    """Return the draft as one paragraph, for the prompt.

    Under a JSON grammar a string cannot hold a raw line break: a small model copying a
    draft of several paragraphs ends its string at the first break, and the abstract
    would be the first facet alone.
    """
    return " ".join(draft.split())


async def refine(
    state: AbstractState, runtime: Runtime[AbstractDeps]
) -> dict[str, Any]:
    """Refine the draft; if that fails the draft is the abstract, and it says so."""
    deps = runtime.context
    draft = draft_of(state)
    prompt = load_prompt(
        "abstract", "refine_own" if deps.options.prompt == "own" else "refine"
    )
    lean = deps.options.lean
    started = time.perf_counter()
    try:
        result = await deps.llm.json(
            prompt.id,
            prompt.render(
                draft=one_paragraph(draft),
                output_format=output_format("abstract", lean),
            ),
            AbstractLean if lean else AbstractFull,
            max_tokens=ABSTRACT_TOKENS,
            # With a copy limit, the abstract may not loop on its own words either
            # (the draft itself may be copied: it is already the model's wording).
            copy_guard=("", deps.options.copy_limit + REPEAT_MARGIN)
            if deps.options.copy_limit
            else None,
        )
    except (StructuredOutputError, ContextOverflow) as exc:
        return {
            "draft": draft,
            "abstract": draft,
            "refined": False,
            "fallbacks": [f"refine_failed: {exc.user_message}"],
        }
    abstract = complete_sentences(getattr(result.value, "abstract", ""))
    fallbacks = []
    if not abstract:
        abstract = draft
        fallbacks.append("refine_failed: the model returned an empty abstract")
    return {
        "draft": draft,
        "abstract": abstract,
        "refined": bool(abstract),
        "fallbacks": fallbacks,
        "prompt_ids": [prompt.id],
        "usage": [usage_record("refine", result.usage, time.perf_counter() - started)],
    }
