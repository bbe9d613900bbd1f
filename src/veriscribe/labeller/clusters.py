"""Word clusters learnt from unlabelled biomedical text, as labeller features.

A few hundred labelled abstracts see each wording of a rhetorical move only a few
times; "participants", "volunteers" and "subjects", or "increased", "decreased" and
"reduced", each weigh on their own. A word cluster pools them (the shipped table puts
each of these triples in one cluster): the table maps each
lower-cased word (digits read as ``0``) to one cluster at each of a few granularities
(64, 256 and 1024 clusters), learnt by ``scripts/build_word_clusters.py`` from article
bodies, guidelines and the training abstracts' sentences (see
:mod:`veriscribe.labeller.cluster_learning`). A sentence's features are, per
granularity, the l2-normalised counts of its words' clusters; a word not in the table
adds nothing.

The table ships as gzipped JSON (``clusters.json.gz``: the sorted words and a base64
``uint16`` array of their clusters). Weights trained with it record its
:attr:`WordClusters.digest`, so a labeller never reads features from another table.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Final, TypedDict

import numpy as np
import numpy.typing as npt

from veriscribe.labeller.arrays import EncodedArray, decode_array, encode_array
from veriscribe.text.tokens import sklearn_words

__all__ = [
    "CLUSTERS_FORMAT",
    "CLUSTERS_RESOURCE",
    "ClustersConfig",
    "WordClusters",
    "cluster_tokens",
]

CLUSTERS_RESOURCE: Final = "clusters.json.gz"
CLUSTERS_FORMAT: Final = 1

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


class ClustersConfig(TypedDict):
    """A word-cluster table as JSON."""

    format: int
    sizes: list[int]
    words: list[str]
    assignments: EncodedArray
    info: dict[str, Any]


_DIGIT = re.compile(r"\d")


def cluster_tokens(text: str) -> list[str]:
    """Return a text's words as the cluster table keys them: lower-cased, digits as 0."""
    return [_DIGIT.sub("0", word) for word in sklearn_words(text)]


@dataclass(frozen=True, eq=False)
class WordClusters:
    """Each known word's cluster at each granularity (compare tables by digest).

    Attributes:
        words: Each word's row in ``assignments``.
        assignments: ``(words, granularities)`` cluster ids, column g below
            ``sizes[g]``.
        sizes: The number of clusters of each granularity.
        info: How the table was built (corpus, window, dimensions, seed).
    """

    words: dict[str, int]
    assignments: IntArray
    sizes: tuple[int, ...]
    info: dict[str, Any] = field(default_factory=dict, compare=False)
    offsets: IntArray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        expected = (len(self.words), len(self.sizes))
        if self.assignments.shape != expected:
            raise ValueError(
                f"cluster assignments of shape {self.assignments.shape}, not {expected}"
            )
        if self.assignments.size and (
            self.assignments.min() < 0
            or np.any(self.assignments.max(axis=0) >= np.asarray(self.sizes))
        ):
            raise ValueError("a cluster id outside its granularity")
        offsets = np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64)
        object.__setattr__(self, "offsets", offsets)

    @property
    def width(self) -> int:
        """Return the number of feature columns: all clusters of all granularities."""
        return int(sum(self.sizes))

    @property
    def digest(self) -> str:
        """Return the SHA-256 of the words, sizes and assignments."""
        hasher = hashlib.sha256()
        hasher.update(json.dumps(self.to_config()["words"]).encode("utf-8"))
        hasher.update(json.dumps(list(self.sizes)).encode("ascii"))
        hasher.update(np.ascontiguousarray(self.assignments, dtype="<u2").tobytes())
        return hasher.hexdigest()

    def features(self, sentence: str) -> tuple[IntArray, FloatArray]:
        """Return the columns and values of a sentence's cluster counts.

        Per granularity the counts are l2-normalised, so a long sentence weighs no
        more than a short one and each granularity as much as the others.
        """
        rows = [self.words[w] for w in cluster_tokens(sentence) if w in self.words]
        if not rows:
            return np.zeros(0, np.int64), np.zeros(0)
        columns: list[IntArray] = []
        values: list[FloatArray] = []
        for g in range(len(self.sizes)):
            ids, counts = np.unique(self.assignments[rows, g], return_counts=True)
            weights = counts.astype(np.float64)
            columns.append(ids.astype(np.int64) + self.offsets[g])
            values.append(weights / np.sqrt(weights @ weights))
        return np.concatenate(columns), np.concatenate(values)

    def to_config(self) -> ClustersConfig:
        """Return the JSON-ready table that :meth:`from_config` reads."""
        return {
            "format": CLUSTERS_FORMAT,
            "sizes": list(self.sizes),
            "words": sorted(self.words, key=self.words.__getitem__),
            "assignments": encode_array(self.assignments, "<u2"),
            "info": self.info,
        }

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> WordClusters:
        """Rebuild a table from :meth:`to_config` output.

        Raises:
            ValueError: A table of another format, incomplete or inconsistent.
        """
        if not isinstance(config, dict) or config.get("format") != CLUSTERS_FORMAT:
            found = config.get("format") if isinstance(config, dict) else None
            raise ValueError(f"unsupported word-cluster table format {found}")
        try:
            words: list[str] = config["words"]
            return cls(
                {word: row for row, word in enumerate(words)},
                decode_array(config["assignments"]).astype(np.int64),
                tuple(int(size) for size in config["sizes"]),
                dict(config.get("info", {})),
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"malformed word-cluster table: {exc!r}") from exc

    def save(self, path: Path) -> None:
        """Write the table as gzipped JSON, byte-identical for identical tables."""
        payload = json.dumps(
            self.to_config(), ensure_ascii=False, separators=(",", ":")
        )
        path.write_bytes(gzip.compress(payload.encode("utf-8"), mtime=0))

    @classmethod
    def from_file(cls, path: Path) -> WordClusters:
        """Load a table from a ``.json`` or ``.json.gz`` file."""
        data = path.read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        return cls.from_config(json.loads(data))

    @classmethod
    def load(cls) -> WordClusters:
        """Return the shipped table (loaded once, then cached)."""
        return _shipped()


@cache
def _shipped() -> WordClusters:
    resource = resources.files(__package__).joinpath(CLUSTERS_RESOURCE)
    return WordClusters.from_config(json.loads(gzip.decompress(resource.read_bytes())))
