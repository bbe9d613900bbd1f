"""What veriscribe returns: abstracts, batch runs, checked answers, and their vocabularies.

The result models are the ``--json`` output of the commands, field for field; the
vocabularies (quote tiers, verdicts, claim statuses) are defined here once, and every
layer reads them from here: the checks that assign them, the metrics that count them,
the nodes, the evaluation, the terminal. This module imports nothing of veriscribe.
"""

from __future__ import annotations

from typing import Any, Final, Literal, Self, get_args

from pydantic import BaseModel, ConfigDict

Tier = Literal["exact", "normalized", "elided", "elided_risky", "fail", "unresolved"]
"""How a quote matched its cited section (see :mod:`veriscribe.checks.verbatim`)."""

TIERS: Final[tuple[Tier, ...]] = get_args(Tier)

COMPLIANT_TIERS: Final[frozenset[Tier]] = frozenset({"exact", "normalized", "elided"})
"""The tiers that count as verbatim: ``elided_risky`` skipped a word that can turn the
meaning (a negation, a condition), ``fail`` matched nothing, ``unresolved`` names no
known section."""

Verdict = Literal[
    "fully_supported", "partially_supported", "not_supported", "contradicted"
]
"""The support judge's verdict on a claim given its quotes."""

VERDICTS: Final[tuple[Verdict, ...]] = get_args(Verdict)
"""From the most supportive to the least: a tie goes to the later one."""

LENIENT_VERDICTS: Final[frozenset[Verdict]] = frozenset(
    {"fully_supported", "partially_supported"}
)
"""The verdicts that count as supported when partial support is allowed."""

UNJUDGED: Final = "unjudged"
"""Counted in place of a verdict for a claim no judge gave one."""

Shortfall = Literal[
    "unsupported_addition", "strength_inflation", "scope_inflation", "causal_upgrade"
]
"""What a partially supported claim adds to its quotes."""

ShortfallVote = Literal["none", Shortfall]
"""A judge's answer to what a claim adds: a shortfall, or ``none``."""

ClaimStatus = Literal[
    "certified", "recovered", "partial", "unsupported", "uncited", "unjudged"
]
"""The badge a claim carries: only ``certified`` and ``recovered`` are shown as
supported by the quoted source."""

CLAIM_STATUSES: Final[tuple[ClaimStatus, ...]] = get_args(ClaimStatus)

FacetStatus = Literal["ok", "empty", "failed", "lead300"]
"""How a facet's summary came about: ``lead300`` is the fallback of the opening text."""

USABLE_FACET_STATUSES: Final[frozenset[FacetStatus]] = frozenset({"ok", "lead300"})
"""The facet statuses whose summary goes into the draft."""


class Result(BaseModel):
    """A result: exactly the fields of its JSON, no others."""

    model_config = ConfigDict(extra="forbid")


def plain(data: Any) -> Any:
    """Return ``data`` with every result in it as its JSON object (for ``--json``)."""
    if isinstance(data, BaseModel):
        return data.model_dump(mode="json")
    if isinstance(data, dict):
        return {key: plain(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [plain(value) for value in data]
    return data


class TokenUsage(Result):
    """Model calls and the tokens they spent."""

    calls: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: TokenUsage) -> Self:
        """Return the sum, counting the fields of this one's kind."""
        fields = type(self).model_fields
        return type(self)(
            **{name: getattr(self, name) + getattr(other, name) for name in fields}
        )


class Usage(TokenUsage):
    """Model calls and tokens; cached calls cost no tokens."""

    cached_calls: int = 0


class DoctorReport(Result):
    """What ``veriscribe doctor`` found out about a backend."""

    backend: str
    model: str
    endpoint: str
    context_tokens: int
    ok: bool
    load_seconds: float
    prompt_tokens: int
    output_tokens: int
    prompt_tokens_per_second: float
    output_tokens_per_second: float
    """Output speed of the structured (JSON-schema) round trip."""
    reply: str
    free_output_tokens_per_second: float | None = None
    """Output speed of the same prompt without a schema."""
    constrained_output_tokens_per_second: float | None = None
    """Output speed under the schema (the same as ``output_tokens_per_second``)."""
    contexts: int | None = None
    """Calls the embedded backend runs at once (None for servers)."""
    threads_per_context: int | None = None


# ------------------------------------------------------------------------- abstracts


class FacetOutcome(Result):
    """One facet of an article: its paragraphs, summary and cost."""

    name: str
    paragraphs: list[int]
    summary: str
    status: FacetStatus
    chunks: int
    error: str | None
    prompt_tokens: int
    output_tokens: int
    seconds: float


class AbstractChecks(Result):
    """What the refine step's deterministic checks found and changed in an abstract."""

    words_asked: int
    """The asked length (0: not held)."""
    words: int
    length: str
    """``ok``, ``trimmed``, ``padded``, ``short``, ``long``, ``brief_article`` (too
    little article text for the asked length) or ``off``."""
    trimmed: list[str]
    """Sentences dropped to hold the length."""
    added: list[str]
    """Facet-summary sentences added to reach it."""
    labels_stripped: int
    """Leading facet labels ("Methods:") removed."""
    endings_mended: int = 0
    """Sentences that ended on a dangling word ("..., and."), ended before it."""
    pointers_removed: int = 0
    """Citation markers and parenthesised table or figure references removed."""
    pointers_dropped: list[str] = []
    """Sentences that named a table or figure of the article."""
    guidance_dropped: list[str]
    """Sentences that restated the facet guidance instead of the article."""
    number_precision: float | None
    """The share of the refined abstract's numbers the article gives, before the
    check (None: it had no numbers); after it, every number is the article's."""
    numbers_dropped: list[str]
    """Sentences with a number, unit or P value the article does not give."""
    numbers_replaced: list[str]
    """Facet-summary sentences used in their place."""
    patterns_dropped: list[str] = []
    """Sentences that repeated an earlier sentence's opening or wording."""
    patterns_replaced: list[str] = []
    """Facet-summary sentences used in their place."""
    word_repairs: list[str] = []
    """Bent words put back as the article writes them, as ``bent -> article's``."""
    case_repairs: list[str]
    """Words capitalised mid-sentence that the article writes in lower case, as
    they were before being lower-cased."""


class SentenceEvidence(Result):
    """An article sentence an abstract sentence is drawn from."""

    paragraph: int
    """The paragraph's index in the article body (0-based)."""
    section: str
    """The paragraph's section path, headings joined by `` > ``."""
    quote: str
    """The article sentence, verbatim."""


SentenceStatus = Literal["certified", "repaired", "dropped"]
"""What the check against its evidence made of an abstract sentence: ``certified``
as written, ``repaired`` (replaced by its evidence sentence, shortened only by cutting
words), ``dropped`` (not shown)."""

SENTENCE_STATUSES: Final[tuple[SentenceStatus, ...]] = get_args(SentenceStatus)


class AbstractSentence(Result):
    """One abstract sentence with its evidence and its status."""

    text: str
    """The sentence as shown (for ``dropped``: as the model wrote it)."""
    status: SentenceStatus
    original: str = ""
    """The model's sentence ("" for one taken from the article)."""
    reason: str = ""
    """Why the model's sentence failed its check ("" when certified)."""
    origin: Literal["model", "article"] = "model"
    """``article``: added as the article states it (a finding or the conclusion)."""
    role: str = "other"
    """The facet of its first evidence paragraph (``results``, ``conclusions``...)."""
    evidence: list[SentenceEvidence] = []


class GraphAbstract(Result):
    """What the abstract graph ends in: the abstract, how it was made, its calls."""

    abstract: str
    facets: list[FacetOutcome]
    fallbacks: list[str]
    refined: bool
    draft: str
    labels: list[str]
    label_source: str
    prompt_ids: list[str]
    checks: AbstractChecks | None
    usage: Usage
    sentences: list[AbstractSentence] = []
    """Every sentence in abstract order with its evidence, dropped ones included."""
    sentence_counts: dict[str, int] = {}
    """How many sentences were ``certified``, ``repaired`` and ``dropped``."""


class AbstractResult(Result):
    """An article's abstract, with everything that went into it."""

    id: str
    source: str
    title: str
    abstract: str
    reference: str | None
    facets: list[FacetOutcome]
    fallbacks: list[str]
    """The fallbacks taken, each ``kind: reason``."""
    refined: bool
    draft: str
    labels: list[str]
    """Each paragraph's facet, in order."""
    label_source: str
    model: str
    prompt: str
    prompt_ids: list[str]
    split: str
    lean: bool
    entities: int
    copy_limit: int
    words_asked: int = 0
    """The asked length in words (0: not held)."""
    checks: AbstractChecks | None = None
    """What the checks after refining found and changed (None: made before them)."""
    sentences: list[AbstractSentence] = []
    """Every sentence in abstract order with its evidence and status, the dropped
    ones included (empty: made before the check against evidence)."""
    sentence_counts: dict[str, int] = {}
    """How many sentences were ``certified``, ``repaired`` and ``dropped``."""
    paragraph_count: int
    usage: Usage
    thread_id: str
    resumed_from_checkpoint: bool
    """The article's thread had finished before: nothing ran again."""
    seconds: float


class BatchLine(AbstractResult):
    """A line of a batch's results file for an article that has its abstract."""

    attempts: int
    run_id: str


class FailedResult(Result):
    """The result of an article that failed: ``error`` instead of ``abstract``."""

    id: str
    source: str
    title: str
    error: str
    reference: str | None
    facets: list[FacetOutcome]
    fallbacks: list[str]
    model: str
    prompt: str
    split: str | None
    usage: Usage
    seconds: float


class FailedLine(FailedResult):
    """A line of a batch's results file for an article that failed."""

    attempts: int
    run_id: str


class RunFailure(Result):
    """An article of a run that failed, and why."""

    source: str
    id: str | None
    reason: str | None
    attempts: int


class RunSession(Result):
    """One worker's time on a run (clock times in seconds since the epoch)."""

    worker: str
    started: float
    heartbeat: float
    ended: float | None
    outcome: str | None


class SessionReport(Result):
    """What this worker's session of a batch did."""

    worker: str
    outcome: str
    processed: int
    calls: int
    call_limit: int
    peak_calls_in_flight: int
    prompt_tokens: int
    output_tokens: int
    seconds: float
    output_repair: dict[str, int] | None
    """How the results file was repaired from the database before the run went on."""


class RunListing(Result):
    """A run as ``runs list`` shows it: its config, state, counts and usage."""

    run_id: str
    status: str
    created: float
    updated: float
    model: str | None
    options: dict[str, Any] | None
    inputs: list[str] | None
    out: str | None
    concurrency: int | None
    total: int
    pending: int
    running: int
    done: int
    failed: int
    calls: int
    prompt_tokens: int
    output_tokens: int
    cached_calls: int
    item_seconds: float
    remaining: int
    seconds: float
    call_log: dict[str, int]
    """Model calls by outcome (``ok``, ``error``, ``cached`` ...)."""


class EndpointReport(Result):
    """What one model server did for a run (answers from the cache left out)."""

    endpoint: str
    calls: int
    ok: int
    errors: int
    prompt_tokens: int
    output_tokens: int
    latency_p50_s: float | None
    latency_p95_s: float | None


class RunSummary(RunListing):
    """A run as ``runs show`` shows it: also its sessions, servers and failures."""

    sessions: list[RunSession]
    endpoints: list[EndpointReport]
    failures: list[RunFailure]


class BatchSummary(RunSummary):
    """What a batch command returns: the run's summary and this worker's session."""

    session: SessionReport
    interrupted: bool


# ---------------------------------------------------------------------------- corpora


class IngestReport(Result):
    """What ``corpus add`` did."""

    corpus: str
    added: list[str] = []
    changed: list[str] = []
    unchanged: list[str] = []
    skipped: list[dict[str, str]] = []
    """Files that could not be read: ``path`` and ``reason``."""
    sections: int = 0
    summaries: dict[str, int] = {}
    """Sections by where their summary came from (``model``, ``text``, ``lead``)."""
    model: str | None = None
    usage: Usage = Usage()
    seconds: float = 0.0


class CorpusListing(Result):
    """A corpus and its size, as ``corpus list`` shows it."""

    name: str
    documents: int
    sections: int
    chars: int
    summarized: int
    created: float
    updated: float


class DocumentListing(Result):
    """A document of a corpus."""

    doc_id: str
    title: str
    source: str
    sections: int
    content_hash: str


class SectionListing(Result):
    """A section of a corpus, without its text."""

    doc_id: str
    section_id: str
    number: str
    title: str
    parent: str | None
    children: list[str]
    level: int
    chars: int
    summary: str | None
    summary_source: str | None
    page: int | None = None
    """The page the section starts on (PDF sources); None for sources without pages."""


class SectionText(Result):
    """A section of a corpus with its text, as citations quote it."""

    corpus: str
    doc_id: str
    section_id: str
    number: str
    title: str
    text: str


class CorpusDetails(Result):
    """A corpus's documents and sections (``corpus show``)."""

    name: str
    documents: list[DocumentListing]
    sections: list[SectionListing]


# ---------------------------------------------------------------------------- answers


class ClaimCitation(Result):
    """A citation as shown under the claim it supports."""

    n: int
    doc_id: str
    section_id: str
    quote: str
    tier: Tier | Literal["unchecked"]
    source: str
    """The passage of the section the quote spans, widened to whole sentences."""
    page: int | None = None
    """The page the cited section starts on (PDF sources); None for sources without
    pages."""


class Citation(ClaimCitation):
    """A citation of the answer, with where its quote matched."""

    span: list[int] | None
    note: str


class RecoveredFrom(Result):
    """Where recovery found the evidence a claim's own quotes lacked."""

    doc_id: str
    section_id: str
    tier: Tier
    page: int | None = None
    """The page the section starts on (PDF sources); None for sources without pages."""


class Lead(Result):
    """What a certified quote recommends, read from its fixed language (never written).

    See `veriscribe.text.recommendations`: "we suggest against" is ``against``,
    ``weak``; a USPSTF "(B recommendation)" is ``for``, ``B``.
    """

    direction: Literal["for", "against", "neither"]
    strength: str | None
    """``strong``, ``moderate``, ``weak``, ``insufficient``, a USPSTF grade (A-D, I),
    ``EO`` (expert opinion), or None."""
    text: str
    """The lead as shown, e.g. "Suggests against (weak)"."""
    phrase: str
    """The quote's words it was read from, or the strength label that follows them
    in the citation's source ("( **B recommendation** )", "[A]")."""


class NearestSection(Result):
    """A section read for a question the guidelines do not answer: where to look."""

    key: str
    """``doc_id:section_id``."""
    title: str
    page: int | None = None


class Claim(Result):
    """A claim of an answer and what the checks found: its badge is ``status``."""

    text: str
    status: ClaimStatus
    verdict: Verdict | None
    votes: list[str]
    shortfall: Shortfall | None
    judged_by: str | None
    """``lexical``, ``model`` or ``sampled``; None when no judge ran."""
    score: float | None
    citations: list[ClaimCitation]
    recovered_quote: str | None
    recovered_from: RecoveredFrom | None
    note: str
    lead: Lead | None = None
    """What the claim's certified quote recommends, when it states a recommendation."""


class Retrieval(Result):
    """How the sections read were chosen."""

    method: str
    candidates: int
    notes: list[str]


class AnswerOptions(Result):
    """The options an answer was made and checked with (those of its ``QAOptions``)."""

    retriever: str
    k: int
    window: int
    judge: bool
    all_claims: bool
    samples: int
    citations: str
    cite_by: str
    wording: str
    judge_method: str
    select: str = "scored"
    """How the answer's sentences were chosen (older results: the default)."""
    max_sentences: int = 3


class GraphAnswer(Result):
    """What the cited-QA graph ends in: an answer checked claim by claim."""

    question: str
    answer: str
    """The answer with its ``{{cite:doc:section|quote}}`` markers."""
    answer_numbered: str
    """The answer with numbered references ``[n]`` in place of the markers."""
    not_found: bool
    error: str | None
    """Why no answer could be made (the model failed); None otherwise."""
    claims: list[Claim]
    citations: list[Citation]
    not_checked: list[str]
    """Sentences the claim filter judged not to be claims."""
    checked_claims: int
    read_set: list[str]
    retrieval: Retrieval
    funnel: dict[str, int]
    metrics: dict[str, Any]
    sentences: int
    notes: list[str]
    prompt_ids: list[str]
    lead: Lead | None = None
    """The answer's verdict, shown above it: the lead of its first certified claim
    that states a recommendation, when the question asks for one."""
    nearest: list[NearestSection] = []
    """For a "not found" answer, the sections read, nearest first: where to look."""


class CheckedAnswer(GraphAnswer):
    """An answer checked claim by claim (``ask`` and ``verify``), with what made it."""

    thread_id: str
    reused: bool
    usage: Usage
    seconds: float
    corpus: str
    model: str | None
    options: AnswerOptions


class SourceRead(Result):
    """A section read for an answer, with the quotes the answer took from it."""

    key: str
    title: str
    number: str
    chars: int
    summary: str | None
    citations: list[Citation]
    page: int | None = None
    """The page the section starts on (PDF sources); None for sources without pages."""


class QuestionFailure(Result):
    """A question of a set that got no answer, and why."""

    id: str
    reason: str


class QuestionSetSummary(Result):
    """What ``ask --questions`` did: answers written, reused and failed."""

    out: str
    corpus: str
    questions: int
    answered: int
    reused: int
    failed: list[QuestionFailure]
    gold_read: int
    """Answers that read their question's gold section."""
    usage: TokenUsage
    seconds: float


class QuestionSetAnswer(CheckedAnswer):
    """A line of ``ask --questions`` output: the answer to one question of the set."""

    id: str
    gold_section: str | None = None
    """The section that holds the answer (``doc:section``, or a section id); None
    when the question set names none."""
    gold_read: bool
    """Whether the gold section was among the sections read."""
    gold_answer: str | None = None
    """The question set's gold answer (its ``answer`` field), scored by ``eval qa``."""
    answerable: bool = True
    """False when the question set says the corpus lacks the answer (``eval qa``
    then counts a not-found answer as right)."""
