"""The shipped rhetorical labeller: features, a linear-chain CRF, JSON weights.

The labeller reads a *sequence* of sentences: the sentences of an abstract in order
when it is scored on BIORC800, the first sentences of an article's paragraphs in
order when the divide step uses it. Each sentence gets linear emission scores from its
own features (word and character n-gram TF-IDF, cue phrases, position indicators, its
first and last tokens, its shape: numbers, comparisons, passive verbs, length, the
clusters of its words) and from the first and last tokens and the cue phrases of the
sentences before and after it; the CRF's label-to-label scores tie neighbours
together, so a sentence that could be methods or results leans towards what surrounds
it. Viterbi picks the best labelling of the whole sequence.

Position. In training a sentence's position is its index over the abstract's length;
in use it is a paragraph's index over the article's paragraph count. Abstracts always
run background, objective, methods, results, conclusions, but many papers put Methods
after the Discussion. The shipped model reads "first item", "in the first fifth", the
decile, and whether the item is the second, next-to-last or last
(``Settings.fine_position``). With the coarse two alone it scored 0.897 micro F1 on
BIORC800 dev; with all of them and the shape and neighbour cue features, 0.901 (0.911
with the word clusters of :mod:`veriscribe.labeller.clusters` added), and it
agrees better with full-text section headers (0.562 against 0.544), methods paragraphs
included: the emission of a clear methods paragraph outweighs its decile. The
transitions keep a section's paragraphs together, and a paper whose Methods come last
pays one conclusions-to-methods step, not one per paragraph.

The weights ship as gzipped JSON (``weights.json.gz``: terms, document frequencies
and coefficients, the arrays as base64, no pickles, and the digest of the word-cluster
table ``clusters.json.gz`` they were trained with), written by
``scripts/train_labeller.py``; labelling needs numpy only. They are read on first use.
"""

from __future__ import annotations

import binascii
import gzip
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Final, TypedDict

import numpy as np
import numpy.typing as npt

from veriscribe.labeller.arrays import EncodedArray, decode_array, encode_array
from veriscribe.labeller.clusters import CLUSTERS_RESOURCE, WordClusters
from veriscribe.labeller.crf import Transitions, marginals, viterbi
from veriscribe.labeller.features import (
    Edges,
    FeatureSpace,
    Vocabulary,
    VocabularyConfig,
)
from veriscribe.text.sentences import first_sentence

__all__ = [
    "FORMAT_VERSION",
    "WEIGHTS_RESOURCE",
    "Labeller",
    "WeightsDocument",
    "decode_array",
]

WEIGHTS_RESOURCE: Final = "weights.json.gz"
FORMAT_VERSION: Final = 2

FloatArray = npt.NDArray[np.float64]


class StoredVocabulary(VocabularyConfig):
    """A vocabulary as the weights hold it: with its document frequencies."""

    document_frequency: EncodedArray


class ClustersReference(TypedDict):
    """The word-cluster table the weights were trained with."""

    resource: str
    sizes: list[int]
    sha256: str


class StoredTransitions(TypedDict):
    """The CRF's label-to-label, start and end scores as the weights hold them."""

    matrix: EncodedArray
    start: EncodedArray
    end: EncodedArray


class WeightsDocument(TypedDict):
    """The weights as JSON: what :meth:`Labeller.to_document` writes."""

    format: int
    model: str
    labels: list[str]
    vocabularies: list[StoredVocabulary]
    cues: bool
    position: bool
    fine_position: bool
    edges: list[str] | None
    neighbour_edges: bool
    shape: bool
    neighbour_cues: bool
    clusters: ClustersReference | None
    coef: EncodedArray
    intercept: EncodedArray
    transitions: StoredTransitions
    info: dict[str, Any]


@dataclass(frozen=True)
class Labeller:
    """Label a sequence of sentences with rhetorical roles (the facet names)."""

    labels: tuple[str, ...]
    space: FeatureSpace
    coef: FloatArray
    intercept: FloatArray
    transitions: Transitions
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        count = len(self.labels)
        shapes = {
            "coef": (self.coef.shape, (self.space.width, count)),
            "intercept": (self.intercept.shape, (count,)),
            "transitions": (self.transitions.matrix.shape, (count, count)),
            "start": (self.transitions.start.shape, (count,)),
            "end": (self.transitions.end.shape, (count,)),
        }
        for name, (shape, expected) in shapes.items():
            if shape != expected:
                raise ValueError(f"{name} of shape {shape}, not {expected}")

    @classmethod
    def load(cls) -> Labeller:
        """Return the labeller with the shipped weights (loaded once, then cached)."""
        return _shipped()

    @classmethod
    def from_file(cls, path: Path) -> Labeller:
        """Load a labeller from a ``.json`` or ``.json.gz`` weights file.

        Raises:
            ValueError: The file holds weights of another format, or inconsistent ones.
        """
        data = path.read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        return cls.from_document(json.loads(data))

    @classmethod
    def from_document(cls, document: dict[str, Any]) -> Labeller:
        """Build a labeller from the decoded weights document.

        A document without the edge or fine-position keys (written before they
        existed) reads as a model without those blocks.

        Raises:
            ValueError: A document of another format, incomplete or inconsistent.
        """
        if not isinstance(document, dict) or document.get("format") != FORMAT_VERSION:
            found = document.get("format") if isinstance(document, dict) else None
            raise ValueError(f"unsupported labeller weights format {found}")
        try:
            return cls._from_document(document)
        except (KeyError, TypeError, binascii.Error) as exc:
            raise ValueError(f"malformed labeller weights: {exc!r}") from exc

    @classmethod
    def _from_document(cls, document: dict[str, Any]) -> Labeller:
        vocabularies = tuple(
            Vocabulary.from_config(
                config, decode_array(config["document_frequency"]).astype(np.int64)
            )
            for config in document["vocabularies"]
        )
        edges = document.get("edges")
        space = FeatureSpace(
            vocabularies,
            cues=bool(document["cues"]),
            position=bool(document["position"]),
            fine_position=bool(document.get("fine_position", False)),
            edges=None if edges is None else Edges.from_config(edges),
            neighbour_edges=bool(document.get("neighbour_edges", False)),
            shape=bool(document.get("shape", False)),
            neighbour_cues=bool(document.get("neighbour_cues", False)),
            clusters=_clusters(document.get("clusters")),
        )
        transitions = document["transitions"]
        return cls(
            labels=tuple(document["labels"]),
            space=space,
            coef=decode_array(document["coef"]),
            intercept=decode_array(document["intercept"]),
            transitions=Transitions(
                matrix=decode_array(transitions["matrix"]),
                start=decode_array(transitions["start"]),
                end=decode_array(transitions["end"]),
            ),
            info=dict(document.get("info", {})),
        )

    def to_document(self) -> WeightsDocument:
        """Return the JSON-ready weights document that :meth:`from_document` reads.

        The emission coefficients are stored as float16, which halves the file; the
        training script checks that they label the training abstracts exactly as the
        float64 weights do. Transitions and intercepts are stored as float64.
        """
        vocabularies: list[StoredVocabulary] = [
            {
                **v.to_config(),
                "document_frequency": encode_array(v.document_frequency, "<i4"),
            }
            for v in self.space.vocabularies
        ]
        return {
            "format": FORMAT_VERSION,
            "model": "crf",
            "labels": list(self.labels),
            "vocabularies": vocabularies,
            "cues": self.space.cues,
            "position": self.space.position,
            "fine_position": self.space.fine_position,
            "edges": None if self.space.edges is None else self.space.edges.to_config(),
            "neighbour_edges": self.space.neighbour_edges,
            "shape": self.space.shape,
            "neighbour_cues": self.space.neighbour_cues,
            "clusters": None
            if self.space.clusters is None
            else {
                "resource": CLUSTERS_RESOURCE,
                "sizes": list(self.space.clusters.sizes),
                "sha256": self.space.clusters.digest,
            },
            "coef": encode_array(self.coef, "<f2"),
            "intercept": encode_array(self.intercept, "<f8"),
            "transitions": {
                "matrix": encode_array(self.transitions.matrix, "<f8"),
                "start": encode_array(self.transitions.start, "<f8"),
                "end": encode_array(self.transitions.end, "<f8"),
            },
            "info": self.info,
        }

    def save(self, path: Path) -> None:
        """Write the weights as gzipped JSON, byte-identical for identical weights."""
        payload = json.dumps(
            self.to_document(), ensure_ascii=False, separators=(",", ":")
        )
        path.write_bytes(gzip.compress(payload.encode("utf-8"), mtime=0))

    def emissions(
        self, sentences: Sequence[str], positions: Sequence[float]
    ) -> FloatArray:
        """Return each sentence's own label scores, before the sequence is considered.

        Raises:
            ValueError: Different numbers of sentences and positions, or a position
                outside [0, 1].
        """
        rows = self.space.rows(sentences, positions)
        scores: FloatArray = rows.dot(self.coef) + self.intercept
        return scores

    def label(self, sentences: Sequence[str], positions: Sequence[float]) -> list[str]:
        """Return the best labelling of sentences read as one sequence, in order.

        ``positions`` are each sentence's relative place in its text (index / count).

        Raises:
            ValueError: Different numbers of sentences and positions, or a position
                outside [0, 1].
        """
        best = viterbi(self.emissions(sentences, positions), self.transitions)
        return [self.labels[i] for i in best]

    def probabilities(
        self, sentences: Sequence[str], positions: Sequence[float]
    ) -> FloatArray:
        """Return each sentence's label probabilities given the whole sequence.

        Raises:
            ValueError: Different numbers of sentences and positions, or a position
                outside [0, 1].
        """
        return marginals(self.emissions(sentences, positions), self.transitions)

    def label_paragraphs(self, paragraphs: Sequence[str]) -> list[str]:
        """Label an article's paragraphs by their first sentences, in article order."""
        count = len(paragraphs)
        sentences = [first_sentence(text) for text in paragraphs]
        return self.label(sentences, [index / count for index in range(count)])


def _clusters(reference: ClustersReference | None) -> WordClusters | None:
    """Return the shipped cluster table if the weights were trained with it.

    Raises:
        ValueError: The weights name a table other than the shipped one.
    """
    if reference is None:
        return None
    table = WordClusters.load()
    if reference["sha256"] != table.digest:
        raise ValueError(
            f"the weights were trained with word clusters {reference['sha256'][:12]}, "
            f"but {CLUSTERS_RESOURCE} holds {table.digest[:12]}: retrain the labeller"
        )
    return table


def label_paragraphs(paragraphs: Sequence[str]) -> list[str]:
    """Label an article's paragraphs with the shipped labeller, in article order."""
    return Labeller.load().label_paragraphs(paragraphs)


@cache
def _shipped() -> Labeller:
    resource = resources.files(__package__).joinpath(WEIGHTS_RESOURCE)
    return Labeller.from_document(json.loads(gzip.decompress(resource.read_bytes())))
