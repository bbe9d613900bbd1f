"""ROUGE-L F1 of a generated abstract against the reference abstract.

Computed with Google's ``rouge-score`` package, which re-implements ROUGE-1.5.5: text
is lower-cased, every run of characters other than ``a-z0-9`` becomes a word break,
and with stemming on, words longer than three characters pass through the Porter
stemmer. ``rougeL`` is the longest common subsequence over the whole text (not the
sentence-split ``rougeLsum``). The DPR-BAG scripts call the same scorer through
Hugging Face ``evaluate`` with ``use_stemmer=True``, which is the default here.
"""

from __future__ import annotations

from functools import lru_cache

from rouge_score import rouge_scorer  # type: ignore[import-untyped]

__all__ = ["rouge_l"]


@lru_cache(maxsize=2)
def _scorer(use_stemmer: bool) -> rouge_scorer.RougeScorer:
    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=use_stemmer)


def rouge_l(prediction: str, reference: str, *, use_stemmer: bool = True) -> float:
    """Compute the ROUGE-L F1 of a prediction against one reference.

    Args:
        prediction: The generated text.
        reference: The reference text, e.g. the author's abstract.
        use_stemmer: Porter-stem words longer than three characters first.

    Returns:
        The F1 in [0, 1]; 0.0 when either text has no scorable word.
    """
    score = _scorer(use_stemmer).score(reference, prediction)["rougeL"]
    return float(score.fmeasure)
