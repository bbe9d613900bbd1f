"""Bigram and trigram novelty: the share of a summary's n-grams absent from its source.

Following See et al. (2017) as the DPR-BAG evaluation scripts compute it, n-grams are
counted as sets: novelty is the number of *distinct* summary n-grams that never occur
in the article, divided by the number of distinct summary n-grams. A phrase the
summary repeats counts once. N-grams run across sentence boundaries and include
punctuation tokens, over the tokens of ``veriscribe.text.tokens.metric_tokens``.

A summary shorter than ``n`` tokens has no n-grams; its novelty is NaN (the original
scripts return 0.0, which would read as "fully extractive").
"""

from __future__ import annotations

from collections.abc import Sequence

from veriscribe.text.tokens import metric_tokens

__all__ = ["ngram_novelty", "ngrams", "novelty_stats"]


def ngrams(tokens: Sequence[str], n: int) -> set[tuple[str, ...]]:
    """Collect the distinct contiguous n-grams of a token sequence.

    Args:
        tokens: The tokens.
        n: The n-gram order, at least 1.

    Returns:
        The set of n-token tuples; empty when there are fewer than ``n`` tokens.

    Raises:
        ValueError: If ``n`` is below 1.
    """
    if n < 1:
        raise ValueError(f"n-gram order must be at least 1, got {n}")
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def ngram_novelty(
    article_tokens: Sequence[str], summary_tokens: Sequence[str], n: int
) -> float:
    """Compute the share of distinct summary n-grams that do not occur in the article.

    Args:
        article_tokens: The article, tokenized.
        summary_tokens: The summary, tokenized the same way.
        n: The n-gram order (2 for bigram, 3 for trigram novelty).

    Returns:
        A value in [0, 1], or NaN when the summary has fewer than ``n`` tokens.
    """
    summary_ngrams = ngrams(summary_tokens, n)
    if not summary_ngrams:
        return float("nan")
    novel = summary_ngrams - ngrams(article_tokens, n)
    return len(novel) / len(summary_ngrams)


def novelty_stats(article: str, summary: str) -> dict[str, float]:
    """Compute bigram and trigram novelty of a summary against its article.

    Args:
        article: The source text.
        summary: The summary to score.

    Returns:
        ``bigram_novelty`` and ``trigram_novelty``.
    """
    article_tokens, summary_tokens = metric_tokens(article), metric_tokens(summary)
    return {
        "bigram_novelty": ngram_novelty(article_tokens, summary_tokens, 2),
        "trigram_novelty": ngram_novelty(article_tokens, summary_tokens, 3),
    }
