"""What the ``eval`` commands return: their reports, whose dump is their ``--json``.

A field declared with :func:`absent` is left out of the JSON when it is None: the
report has it only in some runs (a plot drawn, a second judge, answers with gold
answers). Counts that may be whole or fractional (a median of word counts) are typed
:data:`Number` so that a whole number stays one in the JSON.
"""

from __future__ import annotations

from typing import Any

from pydantic import (
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from veriscribe.metrics.qa import ClaimFunnel
from veriscribe.results import Result, Usage

Number = int | float
"""A figure that may be a whole number: it keeps its kind in the JSON."""


Score = Number | None
"""A score that may be undefined: None (``null`` in the JSON); NaN while computing."""


def _is_none(value: object) -> bool:
    return value is None


def absent() -> Any:
    """Declare a field the JSON leaves out while it is None."""
    return Field(default=None, exclude_if=_is_none)


class Calls(Result):
    """The model calls an evaluation made."""

    calls: int


class Sparse(Result):
    """A report part whose JSON holds only the fields it was given.

    Which fields such a part has depends on the case (an abstractiveness metric has
    a human value, another metric none), and a field it has may be None (no value).
    """

    @model_serializer(mode="wrap")
    def _given_only(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if k in self.model_fields_set}


# ---------------------------------------------------------------- eval abstracts


class ExcludedItem(Result):
    """A result that was not scored, and why."""

    id: str
    source: str
    reason: str


class ArticleScores(Result):
    """One generated abstract's scores against its article and the human abstract."""

    id: str
    source: str
    generated: dict[str, Score]
    """Metric -> value; None where it is undefined."""
    human: dict[str, Score]
    """The abstractiveness metrics of the human abstract."""
    difference: dict[str, Score]
    """Generated - human, for the abstractiveness metrics."""
    keyphrases: list[str]
    recalled: list[str]
    words: int
    reference_words: int
    article_words: int
    support_verdicts: dict[str, int] | None = absent()
    """How many of the abstract's sentences got each verdict (``--support``)."""


class MetricSummary(Sparse):
    """A metric on average, with what its kind of metric adds.

    ``max`` for words, the human values for the abstractiveness metrics, and
    ``note`` (and no mean) for a model-based metric that is absent.
    """

    n: int
    mean: Score
    better: str
    """``closer_to_human``, ``higher``, ``lower`` or ``target``."""
    max: Score = None
    human: Score = None
    difference: Score = None
    abs_difference: Score = None
    note: str | None = None


class ScoredResults(Result):
    """One results file scored: per article and on average."""

    results: str
    models: list[str]
    items: int
    scored: int
    failed: int
    excluded: list[ExcludedItem]
    metrics: dict[str, MetricSummary]
    per_article: list[ArticleScores]


class MetricComparison(Result):
    """The paired bootstrap of one metric, A - B; or why it could not be run."""

    test: str
    """``abs_deviation`` (|x - human|) or ``raw``."""
    a: Score
    b: Score
    mean_difference: Score
    ci_low: Score = None
    ci_high: Score = None
    p_value: Score = None
    n: int
    resamples: int | None = None
    confidence: Score = None
    significance: str | None = None
    note: str | None = None
    """Why there is no result (then only ``n`` and ``mean_difference``, None)."""

    @model_serializer(mode="wrap")
    def _as_run(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        head = {key: data[key] for key in ("test", "a", "b")}
        if self.note is not None:
            return {**head, "n": self.n, "mean_difference": None, "note": self.note}
        return {**head, **{k: v for k, v in data.items() if k != "note"}}


class Comparison(Result):
    """Two results files compared on their paired articles."""

    a: str
    b: str
    paired: int
    notes: list[str]
    resamples: int
    seed: int
    metrics: dict[str, MetricComparison]


class Calibration(Result):
    """Article sentences judged against their own article: a check of the judge."""

    sentences: int
    fully_supported: int
    share: float | None
    verdicts: dict[str, int]


class SupportDescription(Result):
    """How the claim-support figures were made."""

    judge: str
    judge_method: str
    model: str | None
    judge_accuracy: float | None
    judge_accuracy_pairs: int
    judge_measured_by: str
    samples: int
    evidence_sentences: int
    calibration: Calibration | None


class AbstractsReport(ScoredResults):
    """``eval abstracts``: generated abstracts scored, and compared with others."""

    reference: list[str] | None
    reference_mode: str
    """Where the references came from: ``articles``, ``list`` or ``results``."""
    keyphrases: int
    support: SupportDescription | None = absent()
    notes: list[str]
    against: ScoredResults | None = absent()
    comparison: Comparison | None = absent()
    plot: str | None = absent()


# --------------------------------------------------------------------- eval qa


class QARates(Result):
    """The paper's claim-level rates (None where the denominator is 0)."""

    cc: float | None
    vcr: float | None
    csr_strict: float | None
    csr_lenient: float | None
    ccr: float | None
    scr: float | None


class WindowCoverage(Result):
    """Claims covered within one attribution window k."""

    covered: int
    rate: float | None
    verbatim_covered: int | None
    """Counting only verbatim-passing citations; None when an older result lacks it."""
    verbatim_rate: float | None


class TierCount(Result):
    """Citations whose quote matched in one tier, and their share."""

    count: int
    share: float | None


class AnswerWords(Result):
    """The length of the answers given (not found and failed ones left out)."""

    answers: int
    median: Number | None
    mean: Number | None


class GoldScores(Result):
    """Gold recall and hit pooled over the answers that have a gold answer."""

    scored: int
    gold_recall: float
    gold_hit: float | None


class NotFoundScores(Result):
    """How well "not found" was said: against the questions marked unanswerable."""

    answerable: int
    unanswerable: int
    not_found_answerable: int
    not_found_unanswerable: int
    precision: float | None
    recall: float | None
    answerable_rate: float | None


class QuestionScores(Result):
    """One answer's words, and its scores against its gold answer."""

    id: str
    question: str
    answerable: bool | None
    not_found: bool
    answer_words: int
    gold_recall: float | None
    gold_hit: bool | None


class Agreement(Result):
    """Two judges' verdicts on the claims both judged: Cohen's kappa."""

    second: str
    pairs: int
    judged_by_one_only: int
    kappa: float | None
    observed_agreement: float | None
    confusion: dict[str, int] | None = absent()
    """Claims by ``first / second`` verdict."""
    note: str | None = absent()


class QAReport(Result):
    """``eval qa``: checked answers pooled into the claim-level figures."""

    results: str
    answers: int
    not_found: int
    not_found_rate: float | None
    errors: int
    funnel: ClaimFunnel
    rates: QARates
    coverage_by_window: dict[str, WindowCoverage]
    citations: int
    tiers: dict[str, TierCount]
    verdicts: dict[str, int]
    shortfalls: dict[str, int]
    statuses: dict[str, int]
    answer_words: AnswerWords
    gold: GoldScores | None = absent()
    not_found_scores: NotFoundScores | None = absent()
    per_question: list[QuestionScores]
    agreement: Agreement | None = absent()
    plot: str | None = absent()


# -------------------------------------------------------------- eval retrieval


class RetrieverScores(Result):
    """One retriever's hit rates, sections returned, fallbacks and time."""

    hit_rates: dict[str, float]
    """``hit_rate_at_k`` for each k: written as fields of their own in the JSON."""
    mean_sections: float
    fallbacks_to_bm25: int
    seconds: float

    @model_serializer(mode="wrap")
    def _hit_rates_first(
        self, handler: SerializerFunctionWrapHandler
    ) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {**data.pop("hit_rates"), **data}


class RetrievalReport(Result):
    """``eval retrieval``: hit rate at k of each retriever on a question set."""

    corpus: str
    questions: int
    ks: list[int]
    retrievers: dict[str, RetrieverScores]
    model: str | None = absent()
    plot: str | None = absent()


# ----------------------------------------------------------------- eval labels


class LabelScore(Result):
    """Precision, recall and F1 of one label, with its gold support."""

    precision: Number
    recall: Number
    f1: Number
    support: int


class LabellerScores(Result):
    """One labeller's per-label scores, averages, time and model usage."""

    labels: dict[str, LabelScore]
    micro_f1: Number
    macro_f1: Number
    accuracy: Number
    n: int
    seconds: float
    usage: dict[str, int]
    """Model calls and tokens (empty for the classifier)."""


class LabelReport(Result):
    """``eval labels``: the first-sentence labellers on labelled abstracts."""

    data: str
    abstracts: int
    sentences: int
    classifier: LabellerScores | None = absent()
    model: str | None = absent()
    llm: LabellerScores | None = absent()
    plot: str | None = absent()

    def scores(self, labeller: str) -> LabellerScores | None:
        """Return the scores of the labeller named ``classifier`` or ``llm``."""
        return {"classifier": self.classifier, "llm": self.llm}.get(labeller)


# ------------------------------------------------------------------ eval judge


class PairRuling(Result):
    """A labelled pair and what the judge ruled on it."""

    id: str
    label: str
    how: str
    verdict: str
    lane: str | None
    score: Number | None
    claim: str
    source: str


class JudgeScores(Result):
    """One judge method's accuracy, safety, confusion table and ROC AUC."""

    accuracy: float
    binary_accuracy: float
    safe_rate: float | None
    confusion: dict[str, dict[str, int]]
    """Verdicts given, by the pair's label."""
    lanes: dict[str, int]
    roc_auc: float | None
    thresholds: dict[str, float]
    suggested_threshold: Number | None
    per_pair: list[PairRuling]


class JudgeReport(Result):
    """``eval judge --corpus``: judges on pairs built from a guideline corpus."""

    corpus: str
    model: str
    seed: int
    pairs: int
    labels: dict[str, int]
    methods: dict[str, JudgeScores]
    usage: Calls


class AbstractJudgeScores(Result):
    """One judge's accuracy on abstract pairs: held out, tune, all, and by kind."""

    accuracy: float | None
    accuracy_tune: float | None
    accuracy_all: float | None
    test_pairs: int
    label_accuracy: float
    cut: Number | None
    by_kind: dict[str, dict[str, float | None]]
    """Per split (``test``, ``all``), the share of each kind of pair judged right."""
    confusion: dict[str, dict[str, int]]
    lanes: dict[str, int]
    roc_auc: float | None
    suggested_threshold: Number | None
    per_pair: list[PairRuling]


class AbstractJudgeReport(Result):
    """``eval judge --abstract-pairs``: judges on pairs built from abstracts."""

    pairs_from: str
    articles: int
    model: str | None
    seed: int
    pairs: int
    labels: dict[str, int]
    kinds: dict[str, int]
    splits: dict[str, int]
    methods: dict[str, AbstractJudgeScores]
    usage: Calls


# --------------------------------------------------------- eval make-questions


class QuestionSetReport(Result):
    """``eval make-questions``: the question set written, and what was dropped."""

    out: str
    corpus: str
    requested: int
    slots: int
    kept: int
    dropped: int
    dropped_by_reason: dict[str, int]
    regenerated: int
    regenerated_by_reason: dict[str, int]
    by_style: dict[str, int]
    documents: int
    eligible_sections: int
    skipped_sections: dict[str, int]
    styles: list[str]
    seed: int
    model: str
    thread_id: str
    resumed: bool
    reused: bool
    usage: Usage
    seconds: float
    notes: list[str]


# --------------------------------------------------------------- eval baseline


class BaselineFailureRow(Result):
    """An article a baseline made no abstract of, and why."""

    id: str
    source: str
    reason: str


class BaselineSummary(Result):
    """``eval baseline``: the abstracts written, failed and truncated."""

    baseline: str
    model: str
    out: str
    items: int
    written: int
    failed: int
    truncated: int
    failures: list[BaselineFailureRow]
    usage: Usage
    seconds: float


__all__ = [
    "AbstractJudgeReport",
    "AbstractsReport",
    "ArticleScores",
    "Calibration",
    "Comparison",
    "ExcludedItem",
    "MetricComparison",
    "MetricSummary",
    "ScoredResults",
    "Sparse",
    "SupportDescription",
    "AbstractJudgeScores",
    "Agreement",
    "AnswerWords",
    "BaselineFailureRow",
    "BaselineSummary",
    "Calls",
    "GoldScores",
    "JudgeReport",
    "JudgeScores",
    "LabelReport",
    "LabelScore",
    "LabellerScores",
    "NotFoundScores",
    "Number",
    "PairRuling",
    "QAReport",
    "QARates",
    "QuestionScores",
    "QuestionSetReport",
    "RetrievalReport",
    "RetrieverScores",
    "Score",
    "TierCount",
    "WindowCoverage",
    "absent",
]
