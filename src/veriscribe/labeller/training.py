"""Train the rhetorical labeller on labelled abstracts (BIORC800 layout).

Training needs scipy (L-BFGS) besides numpy; labelling does not, so only
``scripts/train_labeller.py`` and the tests import this module. Training is
deterministic: the same data and settings give the same weights, bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp  # type: ignore[import-untyped]
from scipy.optimize import minimize  # type: ignore[import-untyped]

from veriscribe.labeller.clusters import WordClusters
from veriscribe.labeller.crf import Transitions, negative_log_likelihood
from veriscribe.labeller.features import Edges, FeatureSpace, Rows, Vocabulary
from veriscribe.labeller.model import Labeller

__all__ = [
    "Abstract",
    "Settings",
    "abstract_positions",
    "fit",
    "objective",
    "train",
]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Abstract:
    """One training sequence: sentences in order and each one's gold labels."""

    sentences: tuple[str, ...]
    labels: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Settings:
    """What to train: the feature blocks, the regularisation and the sequence model.

    Attributes:
        words: Word 1-2-gram TF-IDF block.
        chars: Character 3-5-gram (within words) TF-IDF block.
        cues: Cue-phrase indicators.
        position: The first-item and first-fifth indicators.
        fine_position: Add the decile, second-item, next-to-last and last-item
            indicators (only with ``position``). On in the shipped model, with
            ``shape`` and ``neighbour_cues``: together they lift BIORC800 dev micro
            F1 from 0.897 to 0.901 and agreement with full-text section headers
            from 0.544 to 0.562, methods paragraphs included (recall 0.748 to
            0.754). Fine position alone had labelled "Step 6: the samples were
            centrifuged ..." paragraphs in the middle of an article as results.
        edges: Indicators of the sentence's first 1-4 and last 1-2 tokens.
        neighbour_edges: The same for the sentences before and after, at half
            weight (only with ``edges``).
        shape: Sentence-shape indicators: numbers, comparisons, passive verb
            forms, length bucket (see ``features.shape_features``).
        neighbour_cues: The cue-phrase indicators of the sentences before and
            after, at half weight.
        clusters: The l2-normalised counts of the sentence's word clusters at each
            granularity of the shipped table (``clusters.json.gz``, learnt from
            unlabelled text). On in the shipped model: BIORC800 dev micro F1 0.901
            without, 0.911 with.
        sequence: Learn label-to-label transitions (a CRF); without, each sentence is
            labelled alone (multinomial logistic regression on the gold sets).
        c: Inverse L2 strength on the emission weights.
        c_transitions: Inverse L2 strength on the transition scores.
        min_df: A term must occur in this many training sentences.
        max_iter: L-BFGS iterations at most.
    """

    words: bool = True
    chars: bool = True
    cues: bool = True
    position: bool = True
    fine_position: bool = True
    edges: bool = True
    neighbour_edges: bool = True
    shape: bool = True
    neighbour_cues: bool = True
    clusters: bool = True
    sequence: bool = True
    c: float = 5.0
    c_transitions: float = 3.0
    min_df: int = 2
    max_iter: int = 500


def abstract_positions(count: int) -> list[float]:
    """Return the relative positions of ``count`` items: index / count."""
    return [index / count for index in range(count)]


def _rows_matrix(rows: Rows) -> Any:
    return sp.csr_matrix(
        (rows.values, rows.indices, rows.indptr), shape=(len(rows), rows.width)
    )


@dataclass(frozen=True)
class _Batch:
    """Training sequences padded into ``(B, T)`` with the row of each step."""

    index: npt.NDArray[np.int64]
    mask: BoolArray
    accepted: BoolArray

    @classmethod
    def build(cls, lengths: Sequence[int], accepted: BoolArray) -> _Batch:
        steps = max(lengths)
        index = np.zeros((len(lengths), steps), dtype=np.int64)
        mask = np.zeros((len(lengths), steps), dtype=bool)
        start = 0
        for b, length in enumerate(lengths):
            index[b, :length] = np.arange(start, start + length)
            mask[b, :length] = True
            start += length
        if start != accepted.shape[0]:
            raise ValueError(f"lengths add up to {start}, not {accepted.shape[0]}")
        return cls(index, mask, accepted[index] & mask[:, :, None])


def objective(
    theta: FloatArray,
    x: Any,
    batch: _Batch,
    labels: int,
    settings: Settings,
) -> tuple[float, FloatArray]:
    """Return the regularised loss and its gradient at the flat parameters ``theta``.

    ``theta`` holds, in order: the ``(width, K)`` emission weights, the K intercepts,
    the ``(K, K)`` transitions, the K start and the K end scores.
    """
    width = x.shape[1]
    coef, intercept, transitions = _unpack(theta, width, labels)
    if not settings.sequence:
        transitions = Transitions.none(labels)
    scores = x @ coef + intercept
    padded = scores[batch.index] * batch.mask[:, :, None]
    loss = negative_log_likelihood(padded, transitions, batch.mask, batch.accepted)
    d_scores = np.zeros_like(scores)
    d_scores[batch.index[batch.mask]] = loss.emissions[batch.mask]
    grad_coef = x.T @ d_scores + coef / settings.c
    value = loss.value + float((coef * coef).sum()) / (2 * settings.c)
    parts = [grad_coef.ravel(), d_scores.sum(axis=0)]
    if settings.sequence:
        t = transitions
        value += float((t.matrix**2).sum() + (t.start**2).sum() + (t.end**2).sum()) / (
            2 * settings.c_transitions
        )
        g = loss.transitions
        parts += [
            (g.matrix + t.matrix / settings.c_transitions).ravel(),
            g.start + t.start / settings.c_transitions,
            g.end + t.end / settings.c_transitions,
        ]
    else:
        parts.append(np.zeros(labels * labels + 2 * labels))
    return value, np.concatenate(parts)


def _unpack(
    theta: FloatArray, width: int, labels: int
) -> tuple[FloatArray, FloatArray, Transitions]:
    edges = np.cumsum([width * labels, labels, labels * labels, labels])
    coef, intercept, matrix, start, end = np.split(theta, edges)
    return (
        coef.reshape(width, labels),
        intercept,
        Transitions(matrix.reshape(labels, labels), start, end),
    )


def fit(
    x: Any,
    accepted: BoolArray,
    lengths: Sequence[int],
    settings: Settings,
) -> tuple[FloatArray, FloatArray, Transitions, int]:
    """Fit emission weights and transitions by L-BFGS from zero.

    Args:
        x: ``(N, width)`` sparse feature rows of all sentences, sequence after
            sequence.
        accepted: ``(N, K)``, true for each sentence's gold labels.
        lengths: The length of each sequence, in order; they add up to N.
        settings: Regularisation, iterations and whether to learn transitions.

    Returns:
        The coefficients, intercepts, transitions and the iterations run.
    """
    labels = accepted.shape[1]
    batch = _Batch.build(lengths, accepted)
    size = x.shape[1] * labels + labels + labels * labels + 2 * labels
    result = minimize(
        objective,
        np.zeros(size),
        args=(x, batch, labels, settings),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": settings.max_iter},
    )
    coef, intercept, transitions = _unpack(result.x, x.shape[1], labels)
    if not settings.sequence:
        transitions = Transitions.none(labels)
    return coef, intercept, transitions, int(result.nit)


def train(
    abstracts: Sequence[Abstract],
    labels: Sequence[str],
    settings: Settings = Settings(),
    clusters: WordClusters | None = None,
) -> Labeller:
    """Train a labeller on abstracts whose sentences carry gold label sets.

    ``clusters`` is the word-cluster table to read when ``settings.clusters`` is on
    (default: the shipped one).

    Raises:
        ValueError: A gold label outside ``labels``, or a sentence without one.
    """
    sentences = [s for a in abstracts for s in a.sentences]
    vocabularies = []
    if settings.words:
        vocabularies.append(
            Vocabulary.fit("word", (1, 2), sentences, min_df=settings.min_df)
        )
    if settings.chars:
        vocabularies.append(
            Vocabulary.fit("char_wb", (3, 5), sentences, min_df=settings.min_df)
        )
    space = FeatureSpace(
        tuple(vocabularies),
        cues=settings.cues,
        position=settings.position,
        fine_position=settings.position and settings.fine_position,
        edges=Edges.fit(sentences, min_df=settings.min_df) if settings.edges else None,
        neighbour_edges=settings.edges and settings.neighbour_edges,
        shape=settings.shape,
        neighbour_cues=settings.neighbour_cues,
        clusters=(clusters or WordClusters.load()) if settings.clusters else None,
    )
    x = _rows_matrix(features(space, abstracts))
    accepted = gold_matrix([g for a in abstracts for g in a.labels], labels)
    coef, intercept, transitions, iterations = fit(
        x, accepted, [len(a.sentences) for a in abstracts], settings
    )
    info = {
        "trained_on": f"{len(abstracts)} abstracts, {len(sentences)} sentences",
        "settings": settings.__dict__,
        "iterations": iterations,
    }
    return Labeller(tuple(labels), space, coef, intercept, transitions, info)


def features(space: FeatureSpace, abstracts: Sequence[Abstract]) -> Rows:
    """Return the feature rows of every sentence, abstract after abstract."""
    parts = [
        space.rows(a.sentences, abstract_positions(len(a.sentences))) for a in abstracts
    ]
    offsets = np.cumsum([0] + [len(p.indices) for p in parts])
    indptr = np.concatenate(
        [np.zeros(1, np.int64)]
        + [p.indptr[1:] + offset for p, offset in zip(parts, offsets[:-1], strict=True)]
    )
    return Rows(
        indptr=indptr,
        indices=np.concatenate([p.indices for p in parts]),
        values=np.concatenate([p.values for p in parts]),
        width=space.width,
    )


def gold_matrix(gold: Sequence[Sequence[str]], labels: Sequence[str]) -> BoolArray:
    """Return the ``(N, K)`` matrix of accepted labels (compared lower-cased).

    Raises:
        ValueError: A gold label outside ``labels``, or an empty gold set.
    """
    names = [label.lower() for label in labels]
    accepted = np.zeros((len(gold), len(names)), dtype=bool)
    for row, labels_ in enumerate(gold):
        if not labels_:
            raise ValueError(f"sentence {row} has no gold label")
        for label in labels_:
            name = "other" if label.lower() == "none" else label.lower()
            if name not in names:
                raise ValueError(f"sentence {row}: unknown label {label!r}")
            accepted[row, names.index(name)] = True
    return accepted
