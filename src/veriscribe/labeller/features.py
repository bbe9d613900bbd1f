"""Sentence features of the rhetorical labeller: n-grams, cues, place, neighbours.

Every sentence becomes one sparse row: the TF-IDF blocks (word uni- and bigrams,
character 3-5-grams within words), then the cue-phrase indicators ("we aimed", "in
conclusion", "p <", ...), then the position indicators, then the sentence's edges
(its first one to four and last one or two tokens, e.g. ``first2:we enrolled``), then
the edges of the sentence before and of the one after, then the sentence's shape
(numbers, comparisons, passive verbs, length), then the cue phrases of the sentences
before and after, then the clusters of its words (see :mod:`veriscribe.labeller.clusters`).
The same code builds the rows when the model is trained and when it
labels, so the two cannot drift apart.
The TF-IDF weighting is scikit-learn's ``TfidfVectorizer`` with ``sublinear_tf=True``
(the tests hold it to that): a term's idf is ``ln((1 + n) / (1 + df)) + 1``, its
weight ``(1 + ln tf) * idf``, each block's row l2-normalised.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypedDict

import numpy as np
import numpy.typing as npt

from veriscribe.labeller.clusters import WordClusters
from veriscribe.text.tokens import edge_tokens, sklearn_words

__all__ = [
    "CUES",
    "EARLY_BELOW",
    "Edges",
    "FeatureSpace",
    "Rows",
    "Vocabulary",
    "VocabularyConfig",
    "cue_features",
    "edge_terms",
    "position_features",
    "shape_features",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
Analyzer = Literal["word", "char_wb"]


class VocabularyConfig(TypedDict):
    """A vocabulary as JSON, its document frequencies apart."""

    analyzer: Analyzer
    ngram_range: list[int]
    documents: int
    vocabulary: list[str]


_WHITESPACE = re.compile(r"\s\s+")

# Upper bound (exclusive) of the "early" position indicator.
EARLY_BELOW: Final = 0.2

# Cue phrases, matched in the lower-cased sentence. Most of what they catch is also in
# the n-grams; a cue pools the many wordings of one rhetorical move into one feature,
# which the few hundred training abstracts cannot do term by term.
CUES: Final[tuple[tuple[str, re.Pattern[str]], ...]] = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        (
            "aim",
            r"\b(we|this study|this paper|the present study|here,? we)\b.{0,40}"
            r"\b(aim|aimed|sought|investigat|examin|assess|evaluat|explor|test"
            r"|determin|propose|describe|report)",
        ),
        (
            "purpose",
            r"\b(aim|aims|purpose|objective|goal)s? (of|was|were|is)\b"
            r"|^to (investigate|determine|assess|evaluate|examine|compare|explore"
            r"|test|identify|describe)",
        ),
        (
            "found",
            r"\bwe (found|observed|show|showed|demonstrate|demonstrated|identified"
            r"|report)\b|\b(results|findings) (show|showed|indicate|indicated|revealed"
            r"|demonstrated|suggest)",
        ),
        (
            "conclude",
            r"\b(in conclusion|conclusions?|taken together|overall|in summary"
            r"|these (results|findings|data)|our (results|findings|data)"
            r"|collectively)\b",
        ),
        (
            "hedge",
            r"\b(suggest|suggests|may|might|could|should|implications?|warrant"
            r"|future|further (research|studies|work))\b",
        ),
        (
            "procedure",
            r"\b(were (enrolled|recruited|randomi[sz]ed|included|collected|measured"
            r"|assessed|analy[sz]ed|performed|used)|was (performed|conducted|used"
            r"|measured|assessed)|we (used|performed|conducted|analy[sz]ed|recruited"
            r"|enrolled|collected|developed|applied)|using|participants"
            r"|patients were)\b",
        ),
        (
            "statistic",
            r"\b(p ?[<=>]|95 ?% ?ci|confidence interval|odds ratio|hazard ratio"
            r"|\bor\b ?=|\bhr\b|rr\b|significant(ly)?)",
        ),
        ("percent", r"\d ?%"),
        (
            "front_matter",
            r"(registration|nct\d|isrctn|copyright|\(c\)|©|wiley|elsevier"
            r"|supplementary|creative commons|licen[sc]e|clinicaltrials\.gov|doi"
            r"|https?://|www\.)",
        ),
        (
            "context",
            r"\b(is a|are a|is one of|remains?|has been|have been|is (associated"
            r"|characterized|known)|little is known|unknown|unclear|however"
            r"|recent(ly)?|increasing(ly)?|common|leading cause)\b",
        ),
    )
)
CUE_SIZE: Final = len(CUES)
COARSE_POSITION_SIZE: Final = 2
# Coarse, then the ten deciles, the second item, the next-to-last and the last.
FINE_POSITION_SIZE: Final = COARSE_POSITION_SIZE + 10 + 3

# How many leading and trailing tokens make a sentence's edge terms.
HEAD_LENGTHS: Final = (1, 2, 3, 4)
TAIL_LENGTHS: Final = (1, 2)
# Scale of a neighbour's edge indicators against the sentence's own (1.0): at full
# weight they outvoted the sentence's own words on dev.
NEIGHBOUR_WEIGHT: Final = 0.5
_DIGIT = re.compile(r"\d")

# Sentence shape: how long, how numeric, which verb forms. Methods and results
# sentences share their words (patients, group, treatment) but not their shape: a
# result reports numbers and comparisons, a method past-tense passive procedures.
SHAPE_PATTERNS: Final[tuple[re.Pattern[str], ...]] = tuple(
    re.compile(pattern)
    for pattern in (
        r"\d\.\d",  # a decimal number
        r"\(\s*\d[^)]*\)",  # a number in parentheses
        r"\bn ?= ?\d",  # a sample size
        r"(\d[^\d]+){3}\d",  # four or more numbers
        r"\b(versus|vs\.?|compared (with|to)|higher|lower|greater|fewer|more"
        r"|less|increased|decreased|reduced|improved)\b",
        r"\b(was|were) \w+ed\b",  # past passive: "were randomized"
        r"\b(is|are) \w+ed\b",  # present passive: "is caused"
        r"\b(we|this|these|our) (suggest|propose|recommend|conclude|believe)",
    )
)
LENGTH_BOUNDS: Final = (10, 20, 30, 45)
SHAPE_SIZE: Final = len(SHAPE_PATTERNS) + len(LENGTH_BOUNDS) + 1


def cue_features(sentence: str) -> FloatArray:
    """Return which cue phrases a sentence holds (1.0 or 0.0, in :data:`CUES` order).

    Counts of numbers and sentence length were tried too and left out: they help a
    little on abstracts but mislead on papers, whose paragraph openings are longer
    and full of citation and figure numbers.
    """
    low = sentence.lower()
    return np.array([1.0 if pattern.search(low) else 0.0 for _, pattern in CUES])


def shape_features(sentence: str) -> FloatArray:
    """Return a sentence's shape indicators: :data:`SHAPE_PATTERNS`, then its length.

    The length is one indicator of ``len(LENGTH_BOUNDS) + 1`` token-count buckets.
    """
    low = sentence.lower()
    found = [1.0 if pattern.search(low) else 0.0 for pattern in SHAPE_PATTERNS]
    tokens = len(sklearn_words(sentence))
    bucket = sum(tokens >= bound for bound in LENGTH_BOUNDS)
    length = [1.0 if b == bucket else 0.0 for b in range(len(LENGTH_BOUNDS) + 1)]
    return np.array(found + length)


def position_features(positions: Sequence[float], *, fine: bool = False) -> FloatArray:
    """Return the position indicators of one sequence, a row per item.

    Coarse: [is the first item, lies in the first fifth]. Fine adds the decile of the
    position (one indicator of ten), then whether the item is the second, the
    next-to-last and the last of the sequence (from its index among ``positions``).

    Raises:
        ValueError: A position outside [0, 1].
    """
    values = np.asarray(positions, dtype=np.float64).reshape(-1)
    if values.size and not np.all((values >= 0.0) & (values <= 1.0)):
        raise ValueError("positions must lie in [0, 1]")
    columns = [values == 0.0, values < EARLY_BELOW]
    if fine:
        # A position of exactly 1.0 falls in the last decile.
        decile = np.minimum((values * 10).astype(np.int64), 9)
        columns += [decile == d for d in range(10)]
        index = np.arange(values.size)
        columns += [index == 1, index == values.size - 2, index == values.size - 1]
    indicators: FloatArray = np.stack(columns, axis=1).astype(np.float64)
    return indicators.reshape(values.size, len(columns))


def edge_terms(sentence: str) -> list[str]:
    """Return a sentence's edge terms: its first 1-4 and last 1-2 tokens, digits as 0.

    Tokens are runs of word characters and single punctuation marks, lower-cased, so
    "To assess", "We enrolled 120", "P < 0.001)." each give their own terms. Openings
    carry much of a sentence's role; in TF-IDF they weigh no more than any word.
    """
    tokens = [_DIGIT.sub("0", t) for t in edge_tokens(sentence)]
    terms = [f"first{k}:" + " ".join(tokens[:k]) for k in HEAD_LENGTHS]
    terms += [f"last{k}:" + " ".join(tokens[-k:]) for k in TAIL_LENGTHS]
    return terms


@dataclass(frozen=True)
class Edges:
    """The edge terms (see :func:`edge_terms`) kept as indicator columns."""

    terms: dict[str, int]

    @property
    def size(self) -> int:
        """Return the number of terms."""
        return len(self.terms)

    def columns(self, sentence: str) -> IntArray:
        """Return the columns of a sentence's known edge terms."""
        found = sorted({self.terms[t] for t in edge_terms(sentence) if t in self.terms})
        return np.asarray(found, dtype=np.int64)

    @classmethod
    def fit(cls, texts: Iterable[str], *, min_df: int = 2) -> Edges:
        """Keep the edge terms of at least ``min_df`` texts, sorted."""
        df: Counter[str] = Counter()
        for text in texts:
            df.update(set(edge_terms(text)))
        kept = sorted(term for term, n in df.items() if n >= min_df)
        return cls({term: index for index, term in enumerate(kept)})

    def to_config(self) -> list[str]:
        """Return the terms in column order."""
        return sorted(self.terms, key=self.terms.__getitem__)

    @classmethod
    def from_config(cls, terms: Sequence[str]) -> Edges:
        """Rebuild the block from :meth:`to_config` output."""
        return cls({term: index for index, term in enumerate(terms)})


@dataclass(frozen=True)
class Vocabulary:
    """One TF-IDF block: its n-gram kind, its terms and their document frequencies.

    Attributes:
        analyzer: ``word`` (tokens of two or more word characters) or ``char_wb``
            (character n-grams inside space-padded words).
        ngram_min: Shortest n-gram.
        ngram_max: Longest n-gram.
        terms: Each term's column.
        document_frequency: In how many training texts each term (by column) occurs.
        documents: How many training texts there were.
        idf: Each term's idf, computed from the two above.
    """

    analyzer: Analyzer
    ngram_min: int
    ngram_max: int
    terms: dict[str, int]
    document_frequency: IntArray
    documents: int
    idf: FloatArray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(self.terms) != self.document_frequency.shape[0]:
            raise ValueError("vocabulary and document frequencies differ in length")
        idf = np.log((1 + self.documents) / (1 + self.document_frequency)) + 1.0
        object.__setattr__(self, "idf", idf.astype(np.float64))

    @property
    def size(self) -> int:
        """Return the number of terms."""
        return len(self.terms)

    def grams(self, text: str) -> list[str]:
        """Return the n-grams of a text, repeats kept, as scikit-learn makes them."""
        if self.analyzer == "word":
            tokens = sklearn_words(text)
            grams: list[str] = []
            for n in range(self.ngram_min, self.ngram_max + 1):
                grams.extend(
                    " ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1)
                )
            return grams
        grams = []
        for word in _WHITESPACE.sub(" ", text.lower()).split():
            padded = f" {word} "
            length = len(padded)
            for n in range(self.ngram_min, self.ngram_max + 1):
                if length <= n:
                    # scikit-learn counts a word shorter than n once, then stops.
                    grams.append(padded)
                    break
                grams.extend(padded[i : i + n] for i in range(length - n + 1))
        return grams

    def transform(self, text: str) -> tuple[IntArray, FloatArray]:
        """Return the term indices and l2-normalised TF-IDF weights of one text."""
        counts = Counter(g for g in self.grams(text) if g in self.terms)
        if not counts:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        columns = np.fromiter((self.terms[g] for g in counts), dtype=np.int64)
        tf = np.fromiter(counts.values(), dtype=np.float64)
        values = (np.log(tf) + 1.0) * self.idf[columns]
        values /= math.sqrt(float(values @ values))
        return columns, values

    @classmethod
    def fit(
        cls,
        analyzer: Analyzer,
        ngram_range: tuple[int, int],
        texts: Iterable[str],
        *,
        min_df: int = 2,
    ) -> Vocabulary:
        """Learn the terms seen in at least ``min_df`` texts, sorted, and their counts."""
        low, high = ngram_range
        empty = cls(analyzer, low, high, {}, np.zeros(0, np.int64), 0)
        df: Counter[str] = Counter()
        count = 0
        for text in texts:
            df.update(set(empty.grams(text)))
            count += 1
        kept = sorted(term for term, n in df.items() if n >= min_df)
        return cls(
            analyzer,
            low,
            high,
            {term: index for index, term in enumerate(kept)},
            np.array([df[term] for term in kept], dtype=np.int64),
            count,
        )

    def to_config(self) -> VocabularyConfig:
        """Return the JSON-ready description, document frequencies apart."""
        return {
            "analyzer": self.analyzer,
            "ngram_range": [self.ngram_min, self.ngram_max],
            "documents": self.documents,
            "vocabulary": sorted(self.terms, key=self.terms.__getitem__),
        }

    @classmethod
    def from_config(
        cls, config: dict[str, Any], document_frequency: IntArray
    ) -> Vocabulary:
        """Rebuild a vocabulary from :meth:`to_config` output and its frequencies.

        Raises:
            ValueError: An unknown analyzer, or terms and frequencies of different
                lengths.
        """
        analyzer = config["analyzer"]
        if analyzer not in ("word", "char_wb"):
            raise ValueError(f"unsupported analyzer {analyzer!r}")
        terms: list[str] = config["vocabulary"]
        low, high = (int(n) for n in config["ngram_range"])
        return cls(
            analyzer,
            low,
            high,
            {term: index for index, term in enumerate(terms)},
            document_frequency,
            int(config["documents"]),
        )


@dataclass(frozen=True)
class Rows:
    """Sparse feature rows in compressed-row form (as ``scipy.sparse.csr_matrix``)."""

    indptr: IntArray
    indices: IntArray
    values: FloatArray
    width: int

    def __len__(self) -> int:
        return int(self.indptr.shape[0] - 1)

    def dot(self, weights: FloatArray) -> FloatArray:
        """Return the product of the rows with a ``(width, k)`` weight matrix."""
        out = np.zeros((len(self), weights.shape[1]))
        for row in range(len(self)):
            start, end = self.indptr[row], self.indptr[row + 1]
            out[row] = self.values[start:end] @ weights[self.indices[start:end]]
        return out


@dataclass(frozen=True)
class FeatureSpace:
    """The feature blocks of a model, in column order."""

    vocabularies: tuple[Vocabulary, ...]
    cues: bool = True
    position: bool = True
    fine_position: bool = False
    edges: Edges | None = None
    neighbour_edges: bool = False
    shape: bool = False
    neighbour_cues: bool = False
    clusters: WordClusters | None = None

    def __post_init__(self) -> None:
        if self.neighbour_edges and self.edges is None:
            raise ValueError("neighbour edges need an edge vocabulary")

    @property
    def position_size(self) -> int:
        """Return the number of position columns."""
        if not self.position:
            return 0
        return FINE_POSITION_SIZE if self.fine_position else COARSE_POSITION_SIZE

    @property
    def width(self) -> int:
        """Return the number of columns."""
        width = sum(v.size for v in self.vocabularies)
        width += CUE_SIZE * self.cues + self.position_size
        if self.edges is not None:
            width += self.edges.size * (3 if self.neighbour_edges else 1)
        width += SHAPE_SIZE * self.shape + 2 * CUE_SIZE * self.neighbour_cues
        if self.clusters is not None:
            width += self.clusters.width
        return width

    def rows(self, sentences: Sequence[str], positions: Sequence[float]) -> Rows:
        """Return the feature rows of sentences at relative positions in [0, 1].

        Raises:
            ValueError: Different numbers of sentences and positions, or a position
                outside [0, 1].
        """
        if len(sentences) != len(positions):
            raise ValueError(
                f"{len(sentences)} sentences but {len(positions)} positions"
            )
        places = position_features(positions, fine=self.fine_position)
        edges = (
            [self.edges.columns(s) for s in sentences] if self.edges is not None else []
        )
        none = np.zeros(0, np.int64)
        cues = (
            [cue_features(s) for s in sentences]
            if self.cues or self.neighbour_cues
            else []
        )
        indptr = [0]
        indices: list[IntArray] = []
        values: list[FloatArray] = []
        for row, sentence in enumerate(sentences):
            offset, first_block = 0, len(values)
            for vocabulary in self.vocabularies:
                columns, weights = vocabulary.transform(sentence)
                indices.append(columns + offset)
                values.append(weights)
                offset += vocabulary.size
            if self.cues:
                indices.append(np.arange(offset, offset + CUE_SIZE))
                values.append(cues[row])
                offset += CUE_SIZE
            if self.position:
                indices.append(np.arange(offset, offset + self.position_size))
                values.append(places[row])
                offset += self.position_size
            if self.edges is not None:
                own = [(edges[row], 1.0)]
                if self.neighbour_edges:
                    before = edges[row - 1] if row > 0 else none
                    after = edges[row + 1] if row + 1 < len(edges) else none
                    own += [(before, NEIGHBOUR_WEIGHT), (after, NEIGHBOUR_WEIGHT)]
                for columns, weight in own:
                    indices.append(columns + offset)
                    values.append(np.full(columns.shape[0], weight))
                    offset += self.edges.size
            if self.shape:
                indices.append(np.arange(offset, offset + SHAPE_SIZE))
                values.append(shape_features(sentence))
                offset += SHAPE_SIZE
            if self.neighbour_cues:
                silent = np.zeros(CUE_SIZE)
                before_cues = cues[row - 1] if row > 0 else silent
                after_cues = cues[row + 1] if row + 1 < len(cues) else silent
                for found in (before_cues, after_cues):
                    indices.append(np.arange(offset, offset + CUE_SIZE))
                    values.append(found * NEIGHBOUR_WEIGHT)
                    offset += CUE_SIZE
            if self.clusters is not None:
                columns, weights = self.clusters.features(sentence)
                indices.append(columns + offset)
                values.append(weights)
                offset += self.clusters.width
            indptr.append(indptr[-1] + sum(len(v) for v in values[first_block:]))
        return Rows(
            indptr=np.asarray(indptr, dtype=np.int64),
            indices=np.concatenate(indices) if indices else np.zeros(0, np.int64),
            values=np.concatenate(values) if values else np.zeros(0),
            width=self.width,
        )
