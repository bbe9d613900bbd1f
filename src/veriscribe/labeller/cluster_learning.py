"""Learn word clusters from unlabelled text: co-occurrence, PPMI, SVD, k-means.

Words seen at least ``min_count`` times count their neighbours within ``window``
words (a neighbour at distance d adds 1/d), never across texts. The counts become
positive pointwise mutual information with the context distribution raised to 0.75
(which keeps rare contexts from dominating), truncated SVD gives each word a dense
vector (``U * sqrt(S)``, unit length), and seeded k-means groups the vectors at each
granularity. Learning needs scipy; reading a table needs numpy only, so only
``scripts/build_word_clusters.py`` and the tests import this module. The same texts
and settings give the same table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp  # type: ignore[import-untyped]
from scipy.sparse.linalg import svds  # type: ignore[import-untyped]

from veriscribe.labeller.clusters import WordClusters, cluster_tokens

__all__ = ["ClusterSettings", "kmeans", "learn_clusters", "ppmi", "word_vectors"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

# Context distribution smoothing of the PPMI (Levy, Goldberg and Dagan, 2015).
CONTEXT_POWER = 0.75


@dataclass(frozen=True)
class ClusterSettings:
    """How to learn the table.

    Attributes:
        window: Neighbours counted on each side of a word.
        min_count: Occurrences a word needs to get a cluster.
        dimensions: Length of the SVD word vectors.
        sizes: Number of clusters at each granularity.
        seed: Seed of the k-means initialisation.
        iterations: k-means iterations.
    """

    window: int = 3
    min_count: int = 3
    dimensions: int = 100
    sizes: tuple[int, ...] = (64, 256, 1024)
    seed: int = 0
    iterations: int = 30


def cooccurrence(
    texts: Iterable[Sequence[str]], words: dict[str, int], window: int
) -> Any:
    """Return the symmetric ``(V, V)`` co-occurrence counts, 1/d at distance d."""
    rows: list[IntArray] = []
    columns: list[IntArray] = []
    values: list[FloatArray] = []
    for tokens in texts:
        ids = np.array([words.get(t, -1) for t in tokens], dtype=np.int64)
        for distance in range(1, window + 1):
            left, right = ids[:-distance], ids[distance:]
            both = (left >= 0) & (right >= 0)
            rows += [left[both], right[both]]
            columns += [right[both], left[both]]
            values.append(np.full(2 * int(both.sum()), 1.0 / distance))
    size = len(words)
    counts = sp.csr_matrix(
        (
            np.concatenate(values) if values else np.zeros(0),
            (
                np.concatenate(rows) if rows else np.zeros(0, np.int64),
                np.concatenate(columns) if columns else np.zeros(0, np.int64),
            ),
        ),
        shape=(size, size),
    )
    counts.sum_duplicates()
    return counts


def ppmi(counts: Any) -> Any:
    """Return the positive PMI of co-occurrence counts (smoothed contexts)."""
    coo = sp.coo_matrix(counts)
    total = float(coo.sum())
    row_p = np.asarray(coo.sum(axis=1)).ravel() / total
    context = np.asarray(coo.sum(axis=0)).ravel() ** CONTEXT_POWER
    context_p = context / context.sum()
    pmi = np.log(coo.data / total / row_p[coo.row] / context_p[coo.col])
    keep = pmi > 0
    return sp.csr_matrix((pmi[keep], (coo.row[keep], coo.col[keep])), shape=coo.shape)


def word_vectors(matrix: Any, dimensions: int) -> FloatArray:
    """Return unit-length ``U * sqrt(S)`` rows of a truncated SVD, largest first.

    ARPACK starts from a fixed vector, so the result does not depend on a random
    state.
    """
    size = matrix.shape[0]
    u, s, _ = svds(matrix, k=dimensions, v0=np.ones(size) / np.sqrt(size))
    order = np.argsort(-s)
    vectors: FloatArray = u[:, order] * np.sqrt(s[order])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-12
    return vectors


def kmeans(
    points: FloatArray, clusters: int, *, seed: int, iterations: int = 30
) -> IntArray:
    """Return each point's cluster after k-means++ seeding and Lloyd iterations.

    Raises:
        ValueError: More clusters than points.
    """
    count = points.shape[0]
    if clusters > count:
        raise ValueError(f"{clusters} clusters for {count} points")
    rng = np.random.default_rng(seed)
    centres = np.empty((clusters, points.shape[1]))
    centres[0] = points[rng.integers(count)]
    nearest = ((points - centres[0]) ** 2).sum(axis=1)
    for j in range(1, clusters):
        total = nearest.sum()
        pick = (
            rng.choice(count, p=nearest / total) if total > 0 else rng.integers(count)
        )
        centres[j] = points[pick]
        nearest = np.minimum(nearest, ((points - points[pick]) ** 2).sum(axis=1))
    squared = (points**2).sum(axis=1)[:, None]
    labels = np.zeros(count, dtype=np.int64)
    for _ in range(max(iterations, 1)):
        distances = squared - 2 * points @ centres.T + (centres**2).sum(axis=1)[None]
        labels = distances.argmin(axis=1)
        sums = np.zeros_like(centres)
        np.add.at(sums, labels, points)
        sizes = np.bincount(labels, minlength=clusters)
        filled = sizes > 0
        # An emptied cluster keeps its centre rather than turning into nan.
        centres[filled] = sums[filled] / sizes[filled, None]
    return labels


def learn_clusters(
    texts: Iterable[str], settings: ClusterSettings = ClusterSettings()
) -> WordClusters:
    """Learn a word-cluster table from unlabelled texts.

    Raises:
        ValueError: Too few words seen ``min_count`` times for the dimensions or
            the largest granularity.
    """
    tokenised = [cluster_tokens(text) for text in texts]
    frequency = Counter(token for tokens in tokenised for token in tokens)
    kept = sorted(w for w, n in frequency.items() if n >= settings.min_count)
    if len(kept) <= max(settings.dimensions, *settings.sizes):
        raise ValueError(
            f"{len(kept)} words seen {settings.min_count} times or more: too few for "
            f"{settings.dimensions} dimensions and {max(settings.sizes)} clusters"
        )
    words = {word: row for row, word in enumerate(kept)}
    counts = cooccurrence(tokenised, words, settings.window)
    vectors = word_vectors(ppmi(counts), settings.dimensions)
    assignments = np.stack(
        [
            kmeans(vectors, size, seed=settings.seed, iterations=settings.iterations)
            for size in settings.sizes
        ],
        axis=1,
    )
    info = {
        "texts": len(tokenised),
        "tokens": int(sum(frequency.values())),
        "window": settings.window,
        "min_count": settings.min_count,
        "dimensions": settings.dimensions,
        "seed": settings.seed,
        "iterations": settings.iterations,
    }
    return WordClusters(words, assignments, tuple(settings.sizes), info)
