"""What a reader of an abstract notices first, measured without a model.

Per abstract, against its article and the asked length: its words and whether they
are within 20% of the asked length; sentences that restate the facet guidance instead
of the article (or open with a facet label such as "Methods:"); words with a letter
of a script the article does not use; words capitalised mid-sentence that the
article writes only in lower case; words bent out of the article's shape (the
article writes a near form between the same words); citation markers and table or figure references
that point into an article the reader does not have; the share of its word
trigrams that repeat an earlier one; and the share of its numbers (with units and P
comparisons) that the article gives.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from veriscribe.checks.wording import (
    CaseIndex,
    WordContexts,
    bent_words,
    case_changes,
    foreign_script_words,
    repeated_trigram_share,
    word_count,
)
from veriscribe.text.guidance import echoes_guidance, strip_facet_label
from veriscribe.text.numbers import ArticleNumbers, number_precision
from veriscribe.text.pointers import pointer_count
from veriscribe.text.sentences import sentences_of
from veriscribe.text.tokens import content_words

__all__ = [
    "LENGTH_MARGIN",
    "QUALITY_METRICS",
    "abstract_quality",
    "guidance_echoes",
    "quality_summary",
]

LENGTH_MARGIN = 0.2
"""How far an abstract may run over or under the asked length."""
QUALITY_METRICS: dict[str, str] = {
    "words": "target",
    "within_length": "higher",
    "guidance_echoes": "lower",
    "foreign_script_words": "lower",
    "case_changes": "lower",
    "bent_words": "lower",
    "pointers": "lower",
    "repeated_trigrams": "lower",
    "number_precision": "higher",
}
"""Each metric and which way is better (``target``: the asked length)."""


def guidance_echoes(text: str, article: str | frozenset[str]) -> list[str]:
    """Return the sentences that restate the facet guidance or open with a label."""
    words = frozenset(content_words(article)) if isinstance(article, str) else article
    found = []
    for sentence in sentences_of(text):
        rest, labelled = strip_facet_label(sentence)
        if labelled or echoes_guidance(rest, words):
            found.append(sentence)
    return found


def abstract_quality(abstract: str, article: str, words: int = 250) -> dict[str, float]:
    """Score one abstract against its article and the asked length.

    Args:
        abstract: The abstract.
        article: The article's body.
        words: The asked length; ``within_length`` is NaN when it is 0.

    Returns:
        One value per metric of :data:`QUALITY_METRICS`; ``number_precision`` is NaN
        for an abstract without numbers, ``repeated_trigrams`` for one of fewer than
        three words.
    """
    count = word_count(abstract)
    precision = number_precision(abstract, ArticleNumbers.of(article))
    within = float(abs(count - words) <= LENGTH_MARGIN * words) if words else math.nan
    return {
        "words": float(count),
        "within_length": within,
        "guidance_echoes": float(len(guidance_echoes(abstract, article))),
        "foreign_script_words": float(len(foreign_script_words(abstract, article))),
        "case_changes": float(len(case_changes(abstract, CaseIndex.of(article)))),
        "bent_words": float(len(bent_words(abstract, WordContexts.of(article)))),
        "pointers": float(pointer_count(abstract)),
        "repeated_trigrams": repeated_trigram_share(abstract),
        "number_precision": math.nan if precision is None else precision,
    }


def quality_summary(rows: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Summarise per-abstract quality: means, the longest abstract, and totals.

    Returns:
        ``words_mean``, ``words_max``, ``within_length`` (the share within 20%),
        ``guidance_echoes``, ``foreign_script_words``, ``case_changes``,
        ``bent_words`` and ``pointers`` (totals),
        ``repeated_trigrams`` and ``number_precision`` (means over the abstracts
        where they are defined); NaN where no abstract defines them.
    """

    def finite(metric: str) -> list[float]:
        return [r[metric] for r in rows if math.isfinite(r.get(metric, math.nan))]

    def mean(metric: str) -> float:
        values = finite(metric)
        return sum(values) / len(values) if values else math.nan

    words = finite("words")
    return {
        "words_mean": mean("words"),
        "words_max": max(words) if words else math.nan,
        "within_length": mean("within_length"),
        "guidance_echoes": sum(finite("guidance_echoes")),
        "foreign_script_words": sum(finite("foreign_script_words")),
        "case_changes": sum(finite("case_changes")),
        "bent_words": sum(finite("bent_words")),
        "pointers": sum(finite("pointers")),
        "repeated_trigrams": mean("repeated_trigrams"),
        "number_precision": mean("number_precision"),
    }
