"""The first-sentence labeller that asks the model, and the choice between labellers.

Many target sentences go into one call, each with the opening of its paragraph; a batch
the model cannot label is labelled by the shipped classifier instead, with a note.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Literal

from pydantic import BaseModel, Field, create_model

from veriscribe.errors import ContextOverflow, StructuredOutputError
from veriscribe.labeller.model import Labeller
from veriscribe.llm.bundled import BUNDLED_MODELS
from veriscribe.llm.client import LLM
from veriscribe.prompts import load_prompt
from veriscribe.results import Usage

ROLES = ("background", "objective", "methods", "results", "conclusions", "none")
RoleLiteral = Literal[
    "background", "objective", "methods", "results", "conclusions", "none"
]
CONTEXT_CHARS = 300
MAX_BATCH = 16
LABEL_OUTPUT_TOKENS = 12  # per item, JSON punctuation included


@cache  # building a pydantic model per call cost more than the rest of the call
def label_schema(count: int) -> type[BaseModel]:
    """Return a schema that admits exactly ``count`` valid labels."""
    return create_model(
        f"Labels{count}",
        labels=(list[RoleLiteral], Field(min_length=count, max_length=count)),
    )


def format_items(targets: Sequence[str], contexts: Sequence[str]) -> str:
    """Format the labelling items: each target sentence with its paragraph opening."""
    blocks = []
    for i, (target, context) in enumerate(zip(targets, contexts, strict=True), 1):
        opening = " ".join(context.split())[:CONTEXT_CHARS]
        blocks.append(f"Item {i}\nTarget: {target}\nContext: {opening}")
    return "\n\n".join(blocks)


def role_to_facet(role: str) -> str:
    """Map a labeller role to a facet name (``none`` is the Other facet)."""
    return "other" if role == "none" else role


async def label_with_model(
    llm: LLM, targets: Sequence[str], contexts: Sequence[str]
) -> tuple[list[str], list[str], Usage, float]:
    """Label target sentences with the model, many per call; a failed batch falls back.

    Each target is shown with its context (the opening of its paragraph). A batch whose
    output does not hold exactly one valid label per item, even after the client's one
    repair, is labelled by the shipped classifier instead, and a note says so.
    Returns the facet labels, fallback notes, usage and model seconds.
    """
    prompt = load_prompt("abstract", "label")
    labels: list[str] = []
    notes: list[str] = []
    usage, seconds = Usage(), 0.0
    start = 0
    while start < len(targets):
        size = min(MAX_BATCH, len(targets) - start)
        batch = slice(start, start + size)
        try:
            result = await llm.json(
                prompt.id,
                prompt.render(
                    count=str(size), items=format_items(targets[batch], contexts[batch])
                ),
                label_schema(size),
                max_tokens=LABEL_OUTPUT_TOKENS * size + 16,
            )
            usage, seconds = usage + result.usage, seconds + result.seconds
            labels.extend(role_to_facet(r) for r in result.value.labels)  # type: ignore[attr-defined]
        except (StructuredOutputError, ContextOverflow) as exc:
            positions = [i / len(targets) for i in range(start, start + size)]
            labels.extend(Labeller.load().label(targets[batch], positions))
            notes.append(
                f"labels:classifier for items {start}-{start + size - 1} "
                f"({exc.user_message})"
            )
        start += size
    return labels, notes, usage, seconds


def use_classifier(labeller: str, llm: LLM) -> bool:
    """Tell whether first sentences are labelled by the shipped classifier.

    ``auto`` uses the model, except the bundled embedded models: batched labelling with
    the 0.5B scored micro-F1 0.26 on BIORC800 dev sentences (it tends to list the labels
    in their canonical order) against 0.90 for the classifier, and the 1.5B fails the
    same way.
    """
    if labeller == "auto":
        bundled = {m.name for m in BUNDLED_MODELS.values()}
        return llm.spec.backend == "local" and llm.model_name in bundled
    return labeller == "classifier"
