"""A lexical BM25 baseline over section texts (paper appendix A.2).

Okapi BM25 with ``k1 = 1.5`` and ``b = 0.75`` over lower-cased alphanumeric tokens,
English stop words removed and Porter2 (Snowball English) stemming applied. Scoring
uses bm25s with the Lucene form of the IDF, ``log(1 + (N - df + 0.5) / (df + 0.5))``,
which keeps the Okapi term weighting but never turns a term found in more than half
the sections into a negative weight, as the original Robertson IDF does.
"""

from __future__ import annotations

import io
import json
import math
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import bm25s

from veriscribe.errors import InputError
from veriscribe.text.tokens import bm25_tokens

K1 = 1.5
B = 0.75
METHOD = "lucene"
FORMAT_VERSION = 1

_IDS_FILE = "ids.json"
_META_FILE = "veriscribe.json"


class BM25Index:
    """A BM25 index over named texts, searchable by query and storable on disk."""

    def __init__(self) -> None:
        self._ids: list[str] = []
        self._model: Any = None

    def __len__(self) -> int:
        return len(self._ids)

    @property
    def ids(self) -> list[str]:
        """The ids of the indexed texts, in index order."""
        return list(self._ids)

    def build(self, ids: Sequence[str], texts: Sequence[str]) -> BM25Index:
        """Index ``texts`` under ``ids``, replacing any previous contents."""
        if len(ids) != len(texts):
            raise ValueError(f"{len(ids)} ids for {len(texts)} texts")
        if not ids:
            raise ValueError("cannot build a BM25 index over no texts")
        if len(set(ids)) != len(ids):
            raise ValueError("the ids of a BM25 index must be unique")
        model = bm25s.BM25(k1=K1, b=B, method=METHOD)
        model.index([bm25_tokens(text) for text in texts], show_progress=False)
        self._ids = list(ids)
        self._model = model
        return self

    def search(self, query: str, k: int = 10) -> list[tuple[str, float]]:
        """Return up to ``k`` ``(id, score)`` pairs, best first; zero scores are left out."""
        if self._model is None:
            raise RuntimeError("the BM25 index is empty: call build() or load() first")
        if k <= 0:
            return []
        vocab: dict[str, int] = self._model.vocab_dict
        tokens = [t for t in bm25_tokens(query) if t in vocab]
        if not tokens:
            return []
        docs, scores = self._model.retrieve(
            [tokens], k=min(k, len(self._ids)), show_progress=False
        )
        return [
            (self._ids[int(doc)], float(score))
            for doc, score in zip(docs[0], scores[0], strict=True)
            if score > 0
        ]

    def holds(self, word: str) -> bool:
        """Tell whether the indexed texts hold a word (each of its stems)."""
        if self._model is None:
            raise RuntimeError("the BM25 index is empty: call build() or load() first")
        tokens = bm25_tokens(word)
        vocab = self._model.vocab_dict
        return bool(tokens) and all(token in vocab for token in tokens)

    def idf(self, term: str) -> float:
        """Return the Lucene IDF of a tokenized term over the indexed texts.

        A term no text holds weighs most: a question about something the texts never
        name is not answered by them.
        """
        if self._model is None:
            raise RuntimeError("the BM25 index is empty: call build() or load() first")
        count = len(self._ids)
        column = self._model.vocab_dict.get(term)
        pointers = self._model.scores["indptr"]
        df = 0 if column is None else int(pointers[column + 1] - pointers[column])
        return math.log(1 + (count - df + 0.5) / (df + 0.5))

    def save(self, directory: Path) -> None:
        """Write the index to a directory (created if needed)."""
        if self._model is None:
            raise RuntimeError("cannot save an empty BM25 index")
        directory.mkdir(parents=True, exist_ok=True)
        self._model.save(str(directory), show_progress=False)
        (directory / _IDS_FILE).write_text(json.dumps(self._ids), encoding="utf-8")
        meta = {"format": FORMAT_VERSION, "k1": K1, "b": B, "method": METHOD}
        (directory / _META_FILE).write_text(json.dumps(meta), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> BM25Index:
        """Read an index written by `save`."""
        meta_path = directory / _META_FILE
        if not meta_path.is_file():
            raise InputError(f"{directory} does not hold a saved BM25 index")
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if meta.get("format") != FORMAT_VERSION:
            raise InputError(
                f"{directory} holds a BM25 index in format {meta.get('format')}, "
                f"expected {FORMAT_VERSION}; rebuild it"
            )
        index = cls()
        index._model = bm25s.BM25.load(str(directory), show_progress=False)
        index._ids = json.loads((directory / _IDS_FILE).read_text(encoding="utf-8"))
        return index

    def to_bytes(self) -> bytes:
        """Serialize the index to bytes (a zip archive of the saved directory)."""
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            self.save(root)
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
                for path in sorted(root.iterdir()):
                    archive.write(path, path.name)
            return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> BM25Index:
        """Read an index serialized by `to_bytes`."""
        try:
            archive = zipfile.ZipFile(io.BytesIO(data))
        except zipfile.BadZipFile as exc:
            raise InputError("the data is not a serialized BM25 index") from exc
        with archive, tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            for name in archive.namelist():
                # Entry names are flat file names written by to_bytes; refuse others.
                if Path(name).name != name or name in {"", ".", ".."}:
                    raise InputError(f"unexpected entry {name!r} in a BM25 index")
                (root / name).write_bytes(archive.read(name))
            return cls.load(root)
