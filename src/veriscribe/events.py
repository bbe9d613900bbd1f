"""The stage events: what a run of a graph tells its watchers, step by step.

Each step of the cited-QA graph that finishes is told as one event, keyed by its
``stage``, carrying only the typed fields a reader needs. The terminal's progress line,
the server's ``stage`` events (each event's JSON) and the web page read these, never
the graph's node names or state: :func:`veriscribe.graphs.qa_stages.stage_event` is
the one place that turns a node's update into its event. The abstract graph's steps
are told the same way (:class:`AbstractStageEvent`, made in
:mod:`veriscribe.graphs.abstract_stages`) to the live view of ``abstract``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from veriscribe.results import ClaimStatus, FacetStatus, Verdict


class _Event(BaseModel):
    model_config = ConfigDict(
        frozen=True, extra="forbid", json_schema_serialization_defaults_required=True
    )


class ClaimState(_Event):
    """A claim's status as the run stands."""

    sentence: int = Field(description="The claim's sentence: its index in the answer.")
    status: ClaimStatus = Field(description="The claim's badge so far.")


class SectionsChosen(_Event):
    """The sections to read are chosen (``ask`` only)."""

    stage: Literal["retrieve"] = "retrieve"
    read_set: list[str] = Field(description="The `doc:section` keys of the sections.")
    method: str = Field(description="How they were chosen (the retriever).")


class AnswerWritten(_Event):
    """The answer is written from the sections read (``ask`` only)."""

    stage: Literal["answer"] = "answer"
    sentences: list[str] = Field(
        description="The answer's sentences, in order, without their citations."
    )
    not_found: bool = Field(description="The sections read do not answer the question.")
    read_set: list[str] | None = Field(
        default=None,
        description="The sections the answer was written from (it may leave out "
        "some of those chosen); null when this step kept the chosen ones.",
    )


class ClaimsFound(_Event):
    """The answer's sentences that state a claim are picked out."""

    stage: Literal["filter_claims"] = "filter_claims"
    is_claim: list[bool] = Field(
        description="One flag per sentence of the answer, in order: whether it "
        "states a claim (only claims are checked)."
    )


class QuotesChecked(_Event):
    """Every quote is checked verbatim against its cited section."""

    stage: Literal["verify"] = "verify"
    claims: list[ClaimState] = Field(
        description="Each claim's status: `unjudged` where the judge is still to rule."
    )


class ClaimJudged(_Event):
    """The judge ruled on whether one claim's quotes support it (one per claim)."""

    stage: Literal["judge"] = "judge"
    sentence: int = Field(description="The claim's sentence.")
    verdict: Verdict | None = Field(description="The verdict, null if none was given.")


class ClaimsJudged(_Event):
    """The judge's verdicts are turned into the claims' badges."""

    stage: Literal["join"] = "join"
    claims: list[ClaimState]


class SupportSought(_Event):
    """Support was looked for elsewhere in the sections read (one per partial claim)."""

    stage: Literal["recover"] = "recover"
    sentence: int = Field(description="The claim's sentence.")
    recovered: bool = Field(description="A section read states what was missing.")


class AnswerReady(_Event):
    """The answer is put together: the claims' final badges (the answer follows)."""

    stage: Literal["present"] = "present"
    claims: list[ClaimState]


StageEvent = Annotated[
    SectionsChosen
    | AnswerWritten
    | ClaimsFound
    | QuotesChecked
    | ClaimJudged
    | ClaimsJudged
    | SupportSought
    | AnswerReady,
    Field(discriminator="stage"),
]
"""One step of a cited answer's run, told by its ``stage``."""

STAGE_EVENT: TypeAdapter[StageEvent] = TypeAdapter(StageEvent)
"""Validates and describes (JSON schema) any stage event."""

OnStage = Callable[[StageEvent], None]
"""Called with each step's event as the step finishes."""


class FacetState(_Event):
    """How one facet's summary came out."""

    name: str = Field(description="The facet (background, methods, ...).")
    status: FacetStatus


class FacetsDivided(_Event):
    """The article's paragraphs are divided among the facets."""

    stage: Literal["divide"] = "divide"
    paragraphs: dict[str, int] = Field(
        description="Each facet that has paragraphs, and how many."
    )
    fallbacks: list[str]


class FacetSummarised(_Event):
    """One facet is summarised (one per facet, in any order)."""

    stage: Literal["summarize_facet"] = "summarize_facet"
    facet: FacetState


class FacetsJoined(_Event):
    """Every facet's summary is in; the failed ones are noted."""

    stage: Literal["join"] = "join"
    fallbacks: list[str]


class FacetsRegrouped(_Event):
    """No facet came out: the paragraphs are regrouped into fewer facets."""

    stage: Literal["regroup"] = "regroup"
    paragraphs: dict[str, int] = Field(
        description="Each regrouped facet that has paragraphs, and how many."
    )
    fallbacks: list[str]


class LeadTaken(_Event):
    """Still no facet: the opening text stands in for the summaries."""

    stage: Literal["lead"] = "lead"
    facets: list[FacetState]
    fallbacks: list[str]


class AbstractRefined(_Event):
    """The draft is refined into the abstract, and its sentences checked."""

    stage: Literal["refine"] = "refine"
    refined: bool = Field(description="The model refined the draft (else kept it).")
    fallbacks: list[str]


AbstractStageEvent = Annotated[
    FacetsDivided
    | FacetSummarised
    | FacetsJoined
    | FacetsRegrouped
    | LeadTaken
    | AbstractRefined,
    Field(discriminator="stage"),
]
"""One step of an abstract's run, told by its ``stage``."""

OnAbstractStage = Callable[[AbstractStageEvent], None]
"""Called with each step's event as the step finishes."""
