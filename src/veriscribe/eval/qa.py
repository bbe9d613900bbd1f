"""`veriscribe eval qa`: pool checked answers into the paper's claim-level figures.

The input is what ``veriscribe ask --json`` and ``veriscribe verify --json`` print:
one result object per answer, in a JSON file (one object or a list) or as JSON lines
(pretty-printed objects one after another are read too, so ``--json`` outputs can be
appended to one file). Counts are pooled over all answers, as in the paper's tables
(verifiable-by-construction section 3.2); the rates are the ones of
``veriscribe.metrics.qa``.

With a second results file that holds the same answers checked by another judge model,
the two judges' verdicts on the claims both judged are compared with Cohen's kappa.

Answers of a question set (``ask --questions``) carry their question's gold answer
(``gold_answer``) and whether the corpus holds it (``answerable``): each answer is then
scored against the gold (``gold_recall``, ``gold_hit``, ``answer_words``, see
``veriscribe.metrics.gold``) in ``per_question``, pooled in ``gold``, and "not found" is
scored against the unanswerable questions in ``not_found_scores``.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from veriscribe.checks.verbatim import is_compliant
from veriscribe.eval.reports import (
    Agreement,
    AnswerWords,
    GoldScores,
    NotFoundScores,
    QARates,
    QAReport,
    QuestionScores,
    TierCount,
    WindowCoverage,
)
from veriscribe.eval.result_files import AnswerItem, ClaimItem, read_answer_items
from veriscribe.metrics.agreement import cohen_kappa, observed_agreement
from veriscribe.metrics.gold import gold_recall, not_found_scores
from veriscribe.metrics.qa import ClaimFunnel, reported_rates
from veriscribe.results import TIERS, UNJUDGED, VERDICTS
from veriscribe.text.tokens import alnum_words

__all__ = ["eval_qa", "read_results"]

WINDOWS = tuple(range(6))
_FUNNEL_KEYS = frozenset(ClaimFunnel.__dataclass_fields__)


def read_results(path: Path) -> list[AnswerItem]:
    """Read checked answers: a JSON object, a JSON list, or objects one after another.

    Raises:
        InputError: If the file cannot be read, is not JSON, or holds something
            that is not a checked answer (no ``funnel`` and ``claims``).
    """
    return read_answer_items(path)


def _rate(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def _window_counts(result: AnswerItem, key: str) -> dict[str, int]:
    metrics = result.metrics
    counts = metrics.get(key)
    if isinstance(counts, dict):
        return {str(k): int(v) for k, v in counts.items()}
    if key == "covered_by_window":
        # Results that carry only rates: rate x claims is the exact count.
        claims = int(result.funnel.get("claims", 0))
        rates = metrics.get("coverage_by_window", {})
        return {str(k): round((v or 0.0) * claims) for k, v in rates.items()}
    return {}


def _pooled_funnel(results: Sequence[AnswerItem]) -> ClaimFunnel:
    total = ClaimFunnel(0, 0, 0, 0, 0, 0, 0)
    for result in results:
        counts = {k: int(v) for k, v in result.funnel.items() if k in _FUNNEL_KEYS}
        total = total + ClaimFunnel(**{k: counts.get(k, 0) for k in _FUNNEL_KEYS})
    return total


def _coverage(results: Sequence[AnswerItem], claims: int) -> dict[str, WindowCoverage]:
    pooled: dict[str, WindowCoverage] = {}
    for k in map(str, WINDOWS):
        covered = sum(_window_counts(r, "covered_by_window").get(k, 0) for r in results)
        verbatim = [
            _window_counts(r, "verbatim_covered_by_window").get(k) for r in results
        ]
        # Older results lack the verbatim-only counts: then the figure is absent.
        count = None if None in verbatim else sum(v or 0 for v in verbatim)
        pooled[k] = WindowCoverage(
            covered=covered,
            rate=_rate(covered, claims),
            verbatim_covered=count,
            verbatim_rate=None if count is None else _rate(count, claims),
        )
    return pooled


def _claim_key(result: AnswerItem, index: int, claim: ClaimItem) -> tuple[str, ...]:
    return (result.question, str(index), claim.text)


def _agreement(
    first: Sequence[AnswerItem], second: Sequence[AnswerItem], path: Path
) -> Agreement:
    verdicts = {
        _claim_key(r, i, c): c.verdict for r in second for i, c in enumerate(r.claims)
    }
    pairs = []
    only_one = 0
    for result in first:
        for index, claim in enumerate(result.claims):
            key = _claim_key(result, index, claim)
            if key not in verdicts:
                continue
            a, b = claim.verdict, verdicts[key]
            if a is None and b is None:
                continue
            if a is None or b is None:
                only_one += 1
                continue
            pairs.append((a, b))
    agreement = Agreement(
        second=str(path),
        pairs=len(pairs),
        judged_by_one_only=only_one,
        kappa=None,
        observed_agreement=None,
    )
    if not pairs:
        agreement.note = (
            "no claim was judged in both files: are they the same answers checked by "
            "two judges?"
        )
        return agreement
    a_side, b_side = [a for a, _ in pairs], [b for _, b in pairs]
    kappa = cohen_kappa(a_side, b_side)
    agreement.kappa = None if math.isnan(kappa) else round(kappa, 4)
    agreement.observed_agreement = round(observed_agreement(a_side, b_side), 4)
    agreement.confusion = {
        f"{a} / {b}": n for (a, b), n in sorted(Counter(pairs).items())
    }
    if agreement.kappa is None:
        agreement.note = "kappa is undefined: both judges gave one and the same verdict"
    return agreement


def _plain(answer: str) -> str:
    # Imported here: the answer node pulls in the graph's dependencies.
    from veriscribe.nodes.qa.answer import plain_answer

    return plain_answer(answer)


def answer_scores(result: AnswerItem, number: int) -> QuestionScores:
    """Score one answer: its words, and against its gold answer when it has one.

    A not-found or failed answer holds nothing: 0 words, gold recall 0. Gold figures
    are None for a question without a gold answer or marked unanswerable.
    """
    given = not (result.not_found or result.error)
    text = _plain(result.answer or "") if given else ""
    gold = result.gold_answer
    scored = bool(gold) and result.answerable is not False
    recall = gold_recall(gold or "", text) if scored else None
    return QuestionScores(
        id=str(number if result.id is None else result.id),
        question=result.question,
        answerable=result.answerable,
        not_found=bool(result.not_found),
        answer_words=len(alnum_words(text)),
        gold_recall=None if recall is None else round(recall, 4),
        gold_hit=None if recall is None else recall == 1.0,
    )


def _answer_words(
    results: Sequence[AnswerItem], scores: Sequence[QuestionScores]
) -> AnswerWords:
    """Pool the words of the answers given (not found and failed ones left out)."""
    given = [
        s.answer_words
        for s, r in zip(scores, results, strict=True)
        if not (r.not_found or r.error)
    ]
    return AnswerWords(
        answers=len(given),
        median=statistics.median(given) if given else None,
        mean=round(statistics.mean(given), 2) if given else None,
    )


def _gold(scores: Sequence[QuestionScores]) -> GoldScores | None:
    """Pool gold recall and hit over the answers that have a gold answer."""
    recalls = [s.gold_recall for s in scores if s.gold_recall is not None]
    if not recalls:
        return None
    return GoldScores(
        scored=len(recalls),
        gold_recall=round(statistics.mean(recalls), 4),
        gold_hit=_rate(sum(r == 1.0 for r in recalls), len(recalls)),
    )


def _not_found(results: Sequence[AnswerItem]) -> NotFoundScores | None:
    """Score "not found" against the questions a question set marks unanswerable."""
    labelled = [r for r in results if r.answerable is not None]
    if not labelled:
        return None
    counts = not_found_scores((bool(r.answerable), bool(r.not_found)) for r in labelled)
    return NotFoundScores(
        answerable=counts.answerable,
        unanswerable=counts.unanswerable,
        not_found_answerable=counts.not_found_answerable,
        not_found_unanswerable=counts.not_found_unanswerable,
        precision=_round(counts.precision),
        recall=_round(counts.recall),
        answerable_rate=_round(counts.answerable_rate),
    )


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def eval_qa(path: Path, *, second: Path | None = None) -> QAReport:
    """Pool checked answers into the funnel, coverage, VCR, CSR and verdict figures.

    Args:
        path: Checked answers (``ask --json`` / ``verify --json`` output).
        second: The same answers checked by a second judge, for Cohen's kappa.

    Returns:
        The report printed by ``veriscribe eval qa --json``.
    """
    results = read_results(path)
    funnel = _pooled_funnel(results)
    citations = [c for r in results for c in r.citations]
    tier_counts = Counter(str(c.tier) for c in citations)
    compliant = sum(n for tier, n in tier_counts.items() if is_compliant(tier))
    claims = [c for r in results for c in r.claims]
    verdicts = Counter(c.verdict or UNJUDGED for c in claims)
    not_found = sum(bool(r.not_found) for r in results)
    scores = [answer_scores(r, n) for n, r in enumerate(results, 1)]
    return QAReport(
        results=str(path),
        answers=len(results),
        not_found=not_found,
        not_found_rate=_rate(not_found, len(results)),
        errors=sum(bool(r.error) for r in results),
        funnel=funnel,
        rates=QARates(**reported_rates(funnel, compliant, len(citations))),
        coverage_by_window=_coverage(results, funnel.claims),
        citations=len(citations),
        tiers={
            tier: TierCount(
                count=tier_counts.get(tier, 0),
                share=_rate(tier_counts.get(tier, 0), len(citations)),
            )
            for tier in (*TIERS, *sorted(set(tier_counts) - set(TIERS)))
        },
        verdicts={
            v: verdicts.get(v, 0)
            for v in (
                *VERDICTS,
                UNJUDGED,
                *sorted(set(verdicts) - {*VERDICTS, UNJUDGED}),
            )
        },
        shortfalls=dict(
            sorted(Counter(c.shortfall for c in claims if c.shortfall).items())
        ),
        statuses=dict(sorted(Counter(str(c.status) for c in claims).items())),
        answer_words=_answer_words(results, scores),
        gold=_gold(scores),
        not_found_scores=_not_found(results),
        per_question=scores,
        agreement=(
            None
            if second is None
            else _agreement(results, read_results(second), second)
        ),
    )
