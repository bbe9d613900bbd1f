"""Newsroom extractive fragments: coverage, density and compression.

Grusky et al. (2018) describe the shared token sequences between a summary ``S`` and
its article ``A`` by a greedy scan of the summary from left to right. At position
``i`` it takes the longest sequence ``S[i:i+L]`` that occurs anywhere in the article;
if ``L > 0`` that sequence is a fragment and the scan jumps to ``i + L``, otherwise
``S[i]`` is novel and the scan moves on by one token. From the fragments ``F``::

    coverage    = sum(|f| for f in F) / |S|
    density     = sum(|f| ** 2 for f in F) / |S|
    compression = |A| / |S|

Each fragment also records where it starts in the article: among article positions
holding a longest match, the leftmost one. The length never depends on that choice.

The Newsroom code (and the DPR-BAG scripts that copy it) resumes its scan of the
article at the end of each partial match instead of at the next position, so it can
miss the longest match when a shorter one overlaps it: for the article ``x x x y``
and the summary ``x x y`` it reports a fragment of 2 tokens, not 3. Both functions
here follow the stated definition, the longest match; in prose the two rarely differ.

``greedy_fragments_reference`` is the definition written out as plainly as possible
(quadratic or worse). ``extractive_fragments`` returns exactly the same fragments,
fast enough for articles of millions of tokens: it indexes the article positions of
each summary token once, then extends all candidate starts one token at a time with
vectorised comparisons, keeping the candidates that still match. The work per
fragment is the total number of candidates alive at each step, which falls to one
or none within a token or two for ordinary text.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from veriscribe.text.tokens import metric_tokens

__all__ = [
    "Fragment",
    "extractive_fragments",
    "fragment_stats",
    "fragment_stats_from_tokens",
    "greedy_fragments_reference",
]

_IntArray = npt.NDArray[np.int64]


class Fragment(NamedTuple):
    """One extractive fragment: a run of summary tokens copied from the article."""

    summary_start: int
    """Index of the fragment's first token in the summary."""
    article_start: int
    """Index of its leftmost occurrence in the article."""
    length: int
    """Number of tokens, at least one."""


def greedy_fragments_reference(
    article_tokens: Sequence[str], summary_tokens: Sequence[str]
) -> list[Fragment]:
    """Find the greedy extractive fragments by direct search of every position pair.

    Args:
        article_tokens: The article, tokenized.
        summary_tokens: The summary, tokenized the same way.

    Returns:
        The fragments in summary order.
    """
    article, summary = article_tokens, summary_tokens
    fragments: list[Fragment] = []
    i = 0
    while i < len(summary):
        best_length, best_start = 0, -1
        for j in range(len(article)):
            k = 0
            while (
                i + k < len(summary)
                and j + k < len(article)
                and summary[i + k] == article[j + k]
            ):
                k += 1
            # Strictly longer only, so the leftmost of equally long matches is kept.
            if k > best_length:
                best_length, best_start = k, j
        if best_length == 0:
            i += 1
        else:
            fragments.append(Fragment(i, best_start, best_length))
            i += best_length
    return fragments


def extractive_fragments(
    article_tokens: Sequence[str], summary_tokens: Sequence[str]
) -> list[Fragment]:
    """Find the greedy extractive fragments, exactly as the reference does, fast.

    Args:
        article_tokens: The article, tokenized.
        summary_tokens: The summary, tokenized the same way.

    Returns:
        The fragments in summary order, equal to ``greedy_fragments_reference``.
    """
    n_summary = len(summary_tokens)
    if n_summary == 0 or len(article_tokens) == 0:
        return []

    # Only summary tokens can start or extend a match, so ids cover the summary's
    # vocabulary and every other article token becomes -1, which matches nothing.
    vocab: dict[str, int] = {}
    summary = np.fromiter(
        (vocab.setdefault(token, len(vocab)) for token in summary_tokens),
        dtype=np.int64,
        count=n_summary,
    )
    n_article = len(article_tokens)
    # One sentinel (-1) past the end: a candidate that reaches it stops matching,
    # which saves a bounds check at every extension step.
    article = np.empty(n_article + 1, dtype=np.int64)
    # Mapping the article is the one pass over every token in Python. A defaultdict
    # whose factory is a C callable keeps that pass in C: each token type outside
    # the summary is looked up once through the factory, then stored as -1.
    lookup: defaultdict[str, int] = defaultdict(itertools.repeat(-1).__next__, vocab)
    article[:n_article] = np.fromiter(
        map(lookup.__getitem__, article_tokens), dtype=np.int64, count=n_article
    )
    article[n_article] = -1

    # Positions of each summary token in the article, ascending within each token
    # (stable sort), so the first surviving candidate is always the leftmost.
    in_vocab = np.flatnonzero(article[:n_article] >= 0)
    ids = article[in_vocab]
    positions: _IntArray = in_vocab[np.argsort(ids, kind="stable")]
    offsets = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(np.bincount(ids, minlength=len(vocab)), out=offsets[1:])

    fragments: list[Fragment] = []
    i = 0
    while i < n_summary:
        token = int(summary[i])
        candidates = positions[offsets[token] : offsets[token + 1]]
        if candidates.size == 0:
            i += 1
            continue
        length = 1
        while i + length < n_summary and candidates.size > 1:
            alive = candidates[article[candidates + length] == summary[i + length]]
            if alive.size == 0:
                break
            candidates = alive
            length += 1
        if candidates.size == 1 and i + length < n_summary:
            start = int(candidates[0])
            length += _common_prefix(article, start + length, summary, i + length)
        fragments.append(Fragment(i, int(candidates[0]), length))
        i += length
    return fragments


def _common_prefix(article: _IntArray, a: int, summary: _IntArray, s: int) -> int:
    """Count the tokens that agree from ``article[a]`` and ``summary[s]`` onwards."""
    span = min(article.size - a, summary.size - s)
    mismatch = np.flatnonzero(article[a : a + span] != summary[s : s + span])
    return int(mismatch[0]) if mismatch.size else span


def fragment_stats_from_tokens(
    article_tokens: Sequence[str], summary_tokens: Sequence[str]
) -> dict[str, float]:
    """Compute coverage, density and compression from tokenized texts.

    Args:
        article_tokens: The article, tokenized.
        summary_tokens: The summary, tokenized the same way.

    Returns:
        ``coverage``, ``density`` and ``compression``. All three are NaN for an empty
        summary: there is nothing to score, and the paired bootstrap drops NaN items.
    """
    n_summary = len(summary_tokens)
    if n_summary == 0:
        nan = float("nan")
        return {"coverage": nan, "density": nan, "compression": nan}
    lengths = [f.length for f in extractive_fragments(article_tokens, summary_tokens)]
    return {
        "coverage": sum(lengths) / n_summary,
        "density": sum(length * length for length in lengths) / n_summary,
        "compression": len(article_tokens) / n_summary,
    }


def fragment_stats(article: str, summary: str) -> dict[str, float]:
    """Compute Newsroom coverage, density and compression of a summary.

    Args:
        article: The source text.
        summary: The summary to score, e.g. a generated or the author's abstract.

    Returns:
        ``coverage``, ``density`` and ``compression`` over the tokens of
        ``veriscribe.text.tokens.metric_tokens``; NaN for an empty summary.
    """
    return fragment_stats_from_tokens(metric_tokens(article), metric_tokens(summary))
