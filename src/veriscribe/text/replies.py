"""The abstract job's model replies: their schemas, and repair when cut at the token limit.

Small models often ramble until ``max_tokens``. The schemas put the text that is used
first (``summary``, ``abstract``) and the paper's discarded ``reasoning`` field last, so
a reply cut inside ``reasoning`` still holds all the text that matters: the missing
reasoning is then taken as empty instead of failing the call (the schema the model must
follow still requires it). A text cut inside itself loses its unfinished last sentence.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, model_validator

ABSTRACT_TOKENS = 600
"""Output tokens of a refined abstract whose length is not held."""
TOKENS_PER_WORD = 1.4
"""Tokens per word of biomedical English on the small models' tokenizers."""
ABSTRACT_TOKEN_BOUNDS = (96, 1200)


class WithReasoning(BaseModel):
    """A reply with a trailing ``reasoning`` field that may have been cut off.

    Subclasses declare their text field first and ``reasoning: str`` last (fields of
    a base class would come first in the schema, and so first in the reply).
    """

    @model_validator(mode="before")
    @classmethod
    def _reasoning_may_be_cut(cls, data: Any) -> Any:
        if isinstance(data, dict) and data and "reasoning" not in data:
            return {**data, "reasoning": ""}
        return data


def abstract_tokens(words: int) -> int:
    """Return the output budget of an abstract asked to be ``words`` long.

    Room for the longest abstract the length check keeps (20% over) and the JSON
    around it, within bounds; a reply cut at the cap loses only its unfinished last
    sentence, and the check trims the rest.
    """
    if not words:
        return ABSTRACT_TOKENS
    low, high = ABSTRACT_TOKEN_BOUNDS
    return max(low, min(high, round(TOKENS_PER_WORD * words * 1.2) + 16))


class AbstractFull(WithReasoning):
    """The refined abstract with the paper's discarded reasoning field."""

    abstract: str
    reasoning: str


class AbstractLean(BaseModel):
    """The refined abstract alone (lean mode)."""

    abstract: str


class SummaryFull(WithReasoning):
    """A facet summary with the paper's discarded reasoning field."""

    summary: str
    reasoning: str


class SummaryLean(BaseModel):
    """A facet summary alone (lean mode)."""

    summary: str


class Elements(BaseModel):
    """The first stage of the chain-of-thought family."""

    elements: list[str]


def output_format(field: str, lean: bool) -> str:
    """Return the JSON shape the prompt asks for."""
    if lean:
        return f'{{"{field}": "..."}}'
    return f'{{"{field}": "...", "reasoning": "..."}}'


def summary_schema(lean: bool) -> type[SummaryFull] | type[SummaryLean]:
    """Return the summary schema for the mode."""
    return SummaryLean if lean else SummaryFull
