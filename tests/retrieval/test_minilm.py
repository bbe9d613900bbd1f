"""all-MiniLM-L6-v2 in NumPy: the same word pieces and vectors as sentence-transformers.

``minilm()`` is the ONNX Runtime encoder when that is installed; the NumPy one is
checked against the reference here by name (the ONNX one in test_minilm_onnx.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from veriscribe.retrieval.minilm import (
    MAX_PIECES,
    MiniLM,
    basic_words,
    minilm,
    model_dir,
)

REFERENCE = Path(__file__).parents[1] / "fixtures" / "minilm" / "reference.json"


@pytest.fixture(scope="module")
def reference() -> dict[str, list]:  # type: ignore[type-arg]
    data: dict[str, list] = json.loads(REFERENCE.read_text())  # type: ignore[type-arg]
    return data


def test_word_pieces_match_the_reference_tokenizer(reference: dict[str, list]) -> None:  # type: ignore[type-arg]
    # Accents, CJK, punctuation, a tab, an over-long word and truncation at 256.
    encoder = minilm()
    for text, ids in zip(reference["texts"], reference["input_ids"], strict=True):
        assert encoder.tokenizer.encode(text) == ids, text
    assert max(len(ids) for ids in reference["input_ids"]) <= MAX_PIECES


def test_vectors_match_sentence_transformers(reference: dict[str, list]) -> None:  # type: ignore[type-arg]
    vectors = MiniLM(model_dir())(reference["texts"])
    expected = np.asarray(reference["vectors"], dtype=np.float32)
    assert vectors.shape == expected.shape == (len(reference["texts"]), 384)
    assert float(np.abs(vectors - expected).max()) < 1e-5
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_rows_come_back_in_input_order_whatever_the_batching() -> None:
    texts = [f"sentence number {i} " + "word " * (i % 7) for i in range(40)]
    together = minilm()(texts)
    alone = np.vstack([minilm()([text]) for text in (texts[0], texts[33])])
    assert np.allclose(together[[0, 33]], alone, atol=1e-5)


def test_meaning_not_words_makes_the_similarity() -> None:
    question, answer, other = minilm()(
        [
            "Can benzodiazepines be prescribed together with opioids?",
            "Avoid prescribing opioid and benzodiazepines concurrently when possible.",
            "Opioids should be stored in a locked cabinet at home.",
        ]
    )
    assert float(question @ answer) > float(question @ other) + 0.2


def test_basic_words_split_punctuation_and_strip_accents() -> None:
    assert basic_words("Café, naïve (p<0.05)") == [
        "cafe",
        ",",
        "naive",
        "(",
        "p",
        "<",
        "0",
        ".",
        "05",
        ")",
    ]
