"""Answers against gold answers: how much of the gold an answer holds, and not-found.

cpgQA gold answers are short spans of one passage ("lowest", "benefits and risks").
An answer is scored on its text without citation markers:

- ``gold_recall``: the share of the gold answer's distinct content words found among
  the answer's words. Words are lower-cased alphanumeric tokens
  (:func:`veriscribe.text.tokens.alnum_words`), compared as they are
  (no stemming: a ``source``-worded answer quotes the guideline, and the gold is a span
  of it). Stop words (the NLTK list BM25 uses) do not count: any English answer holds
  "the", "of" and "over", and counting them lifts the recall of an answer that misses
  the point. A gold answer made of stop words only (rare) is scored on all its words.
- ``gold_hit``: every content word of the gold answer is in the answer.
- ``answer_words``: the number of words of the answer (stop words included).

A not-found answer holds nothing: recall 0, no hit, 0 words. For not-found scoring, a
question is *unanswerable* when its question set says so; a not-found answer is then
right. Precision is the share of not-found answers given to unanswerable questions,
recall the share of unanswerable questions answered "not found".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from veriscribe.text.tokens import STOP_WORDS, alnum_words

__all__ = [
    "NotFoundScores",
    "content_words",
    "gold_recall",
    "not_found_scores",
]


def content_words(text: str) -> set[str]:
    """Return a text's distinct words that are not stop words (all words if none are)."""
    found = set(alnum_words(text))
    return (found - STOP_WORDS) or found


def gold_recall(gold: str, answer: str) -> float:
    """Return the share of the gold answer's content words that the answer holds."""
    wanted = content_words(gold)
    if not wanted:
        return 0.0
    return len(wanted & set(alnum_words(answer))) / len(wanted)


@dataclass(frozen=True)
class NotFoundScores:
    """How well "not found" tells unanswerable questions from answerable ones."""

    answerable: int
    unanswerable: int
    not_found_answerable: int
    """Answerable questions wrongly answered "not found"."""
    not_found_unanswerable: int
    """Unanswerable questions rightly answered "not found"."""

    @property
    def precision(self) -> float | None:
        """Share of the not-found answers that were right; None without any."""
        said = self.not_found_answerable + self.not_found_unanswerable
        return self.not_found_unanswerable / said if said else None

    @property
    def recall(self) -> float | None:
        """Share of the unanswerable questions answered "not found"; None without any."""
        if not self.unanswerable:
            return None
        return self.not_found_unanswerable / self.unanswerable

    @property
    def answerable_rate(self) -> float | None:
        """Share of the answerable questions wrongly answered "not found"."""
        return self.not_found_answerable / self.answerable if self.answerable else None


def not_found_scores(outcomes: Iterable[tuple[bool, bool]]) -> NotFoundScores:
    """Count ``(answerable, answered not found)`` pairs into not-found scores."""
    counts = [0, 0, 0, 0]
    for answerable, not_found in outcomes:
        counts[0 if answerable else 1] += 1
        if not_found:
            counts[2 if answerable else 3] += 1
    return NotFoundScores(*counts)
