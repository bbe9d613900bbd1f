"""State, options and dependencies of the abstract graph.

State stays small and saveable: the article lives in the store and is looked up by key;
state and ``Send`` payloads carry paragraph indices and short summaries only.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Annotated, Literal, TypedDict

from veriscribe.documents.articles import Article
from veriscribe.llm.client import LLM
from veriscribe.nodes.abstract.checks import CheckRecord
from veriscribe.nodes.abstract.evidence import SentenceRecord
from veriscribe.offload import INLINE, Offload
from veriscribe.options import AbstractOptions
from veriscribe.results import FacetStatus, Usage
from veriscribe.store.articles import get_article
from veriscribe.store.db import Store

Stage = Literal["facets", "regroup"]
Status = FacetStatus


@dataclass(frozen=True)
class AbstractDeps:
    """What the nodes need besides state: the model, the store, the options."""

    llm: LLM
    store: Store
    options: AbstractOptions = AbstractOptions()
    articles: dict[str, Article] = field(default_factory=dict, compare=False)
    """Articles already read, by key; any other is read from the store once."""
    offload: Offload = field(default=INLINE, compare=False)
    """Where the pure text steps (first sentences, the abstract's checks) run."""

    async def article(self, key: str) -> Article:
        """Return the article of ``key``, from the store the first time."""
        if key not in self.articles:
            self.articles[key] = await get_article(self.store, key)
        return self.articles[key]


class UsageRecord(TypedDict):
    """Model usage of one node run."""

    step: str
    calls: int
    prompt_tokens: int
    output_tokens: int
    cached: int
    seconds: float


class FacetResult(TypedDict):
    """The outcome of summarising one facet (or one regrouped facet)."""

    name: str
    stage: Stage
    paragraphs: list[int]
    summary: str
    status: Status
    error: str | None
    chunks: int
    prompt_id: str
    usage: UsageRecord


class FacetTask(TypedDict):
    """The ``Send`` payload of one facet branch: ids, no text."""

    doc_key: str
    name: str
    stage: Stage
    paragraphs: list[int]


class AbstractState(TypedDict, total=False):
    """The abstract graph's state."""

    doc_key: str
    labels: list[str]
    label_source: str
    stage: Stage
    groups: dict[str, list[int]]
    results: Annotated[list[FacetResult], operator.add]
    fallbacks: Annotated[list[str], operator.add]
    usage: Annotated[list[UsageRecord], operator.add]
    draft: str
    abstract: str
    refined: bool
    checks: CheckRecord
    sentences: list[SentenceRecord]
    prompt_ids: Annotated[list[str], operator.add]


def usage_record(step: str, usage: Usage, seconds: float) -> UsageRecord:
    """Return the saveable record of a node's model usage."""
    return UsageRecord(
        step=step,
        calls=usage.calls,
        prompt_tokens=usage.prompt_tokens,
        output_tokens=usage.output_tokens,
        cached=usage.cached_calls,
        seconds=round(seconds, 3),
    )
