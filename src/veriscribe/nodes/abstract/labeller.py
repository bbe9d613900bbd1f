"""A model-free rhetorical labeller for the first sentences of paragraphs.

TF-IDF features (word uni- and bigrams, character 3-5-grams within words) plus two
position indicators feed a multinomial logistic regression trained on BIORC800
abstract sentences by ``scripts/train_labeller.py``. The weights ship as JSON
(``labeller_weights.json.gz``, no pickles) and prediction here needs numpy only: the
TF-IDF transform re-implements scikit-learn's exactly (same tokenisation, n-grams,
sublinear tf, smoothed idf and l2 normalisation per vectoriser).

Position. In training a sentence's position is its index over the abstract's length;
in use it is a paragraph's index over the article's paragraph count. Abstracts always
run background, methods, results, conclusions, but many papers put Methods after the
Discussion, so position features that speak for the middle or the end of a text teach
the model an order that full texts do not keep. Only the opening generalises: both an
abstract and a paper start with context. The features are therefore "first item" and
"in the first fifth" and nothing else; see the training script for the measurements.
"""

from __future__ import annotations

import base64
import gzip
import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from veriscribe.nodes.abstract.facets import first_sentence

__all__ = [
    "WEIGHTS_RESOURCE",
    "Labeller",
    "position_features",
]

WEIGHTS_RESOURCE = "labeller_weights.json.gz"
FORMAT_VERSION = 1
# Upper bound (exclusive) of the "early" position indicator.
EARLY_BELOW = 0.2

FloatArray = npt.NDArray[np.float64]


def position_features(positions: Sequence[float]) -> FloatArray:
    """Return the position indicators: [is the first item, lies in the first fifth].

    Raises:
        ValueError: A position outside [0, 1].
    """
    values = np.asarray(positions, dtype=np.float64).reshape(-1)
    if values.size and not np.all((values >= 0.0) & (values <= 1.0)):
        raise ValueError("positions must lie in [0, 1]")
    indicators: FloatArray = np.stack(
        [values == 0.0, values < EARLY_BELOW], axis=1
    ).astype(np.float64)
    return indicators


def _decode_array(blob: dict[str, Any]) -> FloatArray:
    raw = base64.b64decode(blob["data"])
    array = np.frombuffer(raw, dtype=np.dtype(blob["dtype"]))
    decoded: FloatArray = array.reshape(blob["shape"]).astype(np.float64)
    return decoded


@dataclass(frozen=True)
class _Vectoriser:
    """One TF-IDF vectoriser: scikit-learn's ``TfidfVectorizer.transform``, rebuilt."""

    analyzer: str
    ngram_min: int
    ngram_max: int
    lowercase: bool
    token_pattern: re.Pattern[str]
    sublinear_tf: bool
    vocabulary: dict[str, int]
    idf: FloatArray
    offset: int

    @classmethod
    def from_config(cls, config: dict[str, Any], offset: int) -> _Vectoriser:
        terms: list[str] = config["vocabulary"]
        idf = _decode_array(config["idf"])
        if len(terms) != idf.shape[0]:
            raise ValueError("vocabulary and idf differ in length")
        if config.get("norm") != "l2" or not config.get("smooth_idf", True):
            raise ValueError(
                "only l2-normalised, smoothed-idf vectorisers are supported"
            )
        return cls(
            analyzer=config["analyzer"],
            ngram_min=int(config["ngram_range"][0]),
            ngram_max=int(config["ngram_range"][1]),
            lowercase=bool(config["lowercase"]),
            token_pattern=re.compile(config["token_pattern"]),
            sublinear_tf=bool(config["sublinear_tf"]),
            vocabulary={term: index for index, term in enumerate(terms)},
            idf=idf,
            offset=offset,
        )

    @property
    def size(self) -> int:
        return int(self.idf.shape[0])

    def _word_ngrams(self, text: str) -> list[str]:
        tokens = self.token_pattern.findall(text)
        grams: list[str] = []
        for n in range(self.ngram_min, self.ngram_max + 1):
            grams.extend(
                " ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1)
            )
        return grams

    def _char_wb_ngrams(self, text: str) -> list[str]:
        grams: list[str] = []
        for word in text.split():
            padded = f" {word} "
            length = len(padded)
            for n in range(self.ngram_min, self.ngram_max + 1):
                if length <= n:
                    # scikit-learn counts a word shorter than n once, then stops.
                    grams.append(padded)
                    break
                grams.extend(padded[i : i + n] for i in range(length - n + 1))
        return grams

    def transform(self, text: str) -> tuple[list[int], FloatArray]:
        """Return the column indices and values of one text's TF-IDF row."""
        if self.lowercase:
            text = text.lower()
        if self.analyzer == "word":
            grams = self._word_ngrams(text)
        elif self.analyzer == "char_wb":
            grams = self._char_wb_ngrams(text)
        else:
            raise ValueError(f"unsupported analyzer {self.analyzer!r}")
        counts = Counter(g for g in grams if g in self.vocabulary)
        if not counts:
            return [], np.zeros(0)
        columns = [self.vocabulary[g] for g in counts]
        tf = np.array([counts[g] for g in counts], dtype=np.float64)
        if self.sublinear_tf:
            tf = np.log(tf) + 1.0
        values = tf * self.idf[columns]
        norm = math.sqrt(float(values @ values))
        if norm > 0:
            values = values / norm
        return [self.offset + c for c in columns], values


class Labeller:
    """Label sentences with a facet from their text and relative position."""

    def __init__(self, weights: dict[str, Any]) -> None:
        """Build a labeller from the decoded weights document.

        Raises:
            ValueError: The document is of another format or inconsistent.
        """
        if weights.get("format") != FORMAT_VERSION:
            raise ValueError(
                f"unsupported labeller weights format {weights.get('format')}"
            )
        self.labels: tuple[str, ...] = tuple(weights["labels"])
        self.metrics: dict[str, float] = dict(weights.get("metrics", {}))
        offset = 0
        vectorisers: list[_Vectoriser] = []
        for config in weights["vectorisers"]:
            vectoriser = _Vectoriser.from_config(config, offset)
            vectorisers.append(vectoriser)
            offset += vectoriser.size
        self._vectorisers = tuple(vectorisers)
        self._position_offset = offset
        self.coef: FloatArray = _decode_array(weights["coef"])
        self.intercept: FloatArray = _decode_array(weights["intercept"])
        expected = (len(self.labels), offset + position_features([0.0]).shape[1])
        if self.coef.shape != expected or self.intercept.shape != (len(self.labels),):
            raise ValueError(f"coefficients of shape {self.coef.shape}, not {expected}")

    @classmethod
    def load(cls) -> Labeller:
        """Return the labeller with the shipped weights (loaded once, then cached)."""
        return _shipped()

    @classmethod
    def from_file(cls, path: Path) -> Labeller:
        """Load a labeller from a ``.json`` or ``.json.gz`` weights file."""
        data = path.read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        return cls(json.loads(data))

    def decision_function(
        self, sentences: Sequence[str], positions: Sequence[float]
    ) -> FloatArray:
        """Return the linear class scores, one row per sentence.

        Raises:
            ValueError: Different numbers of sentences and positions, or a position
                outside [0, 1].
        """
        if len(sentences) != len(positions):
            raise ValueError(
                f"{len(sentences)} sentences but {len(positions)} positions"
            )
        places = position_features(positions)
        scores = np.tile(self.intercept, (len(sentences), 1))
        for row, sentence in enumerate(sentences):
            for vectoriser in self._vectorisers:
                columns, values = vectoriser.transform(sentence)
                if columns:
                    scores[row] += self.coef[:, columns] @ values
            scores[row] += self.coef[:, self._position_offset :] @ places[row]
        return scores

    def predict_proba(
        self, sentences: Sequence[str], positions: Sequence[float]
    ) -> FloatArray:
        """Return label probabilities, one row per sentence, columns as ``labels``."""
        scores = self.decision_function(sentences, positions)
        if scores.size == 0:
            return np.zeros((0, len(self.labels)))
        shifted = scores - scores.max(axis=1, keepdims=True)
        exp = np.exp(shifted)
        probabilities: FloatArray = exp / exp.sum(axis=1, keepdims=True)
        return probabilities

    def label(self, sentences: Sequence[str], positions: Sequence[float]) -> list[str]:
        """Return the most probable facet of each sentence."""
        scores = self.decision_function(sentences, positions)
        return [self.labels[int(i)] for i in np.argmax(scores, axis=1)]

    def label_paragraphs(self, paragraphs: Sequence[str]) -> list[str]:
        """Label paragraphs by their first sentence, at position index / count."""
        count = len(paragraphs)
        sentences = [first_sentence(text) for text in paragraphs]
        positions = [index / count for index in range(count)]
        return self.label(sentences, positions)


@cache
def _shipped() -> Labeller:
    resource = resources.files(__package__).joinpath(WEIGHTS_RESOURCE)
    data = gzip.decompress(resource.read_bytes())
    return Labeller(json.loads(data))
