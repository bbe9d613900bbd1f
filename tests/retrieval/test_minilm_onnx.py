"""all-MiniLM-L6-v2 on ONNX Runtime: the NumPy encoder's vectors, and the fallback."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from veriscribe.retrieval import minilm
from veriscribe.retrieval.fused import SectionDoc, dense_units
from veriscribe.retrieval.minilm import MiniLM, model_dir

FIXTURES = Path(__file__).parents[1] / "fixtures"

needs_onnx = pytest.mark.skipif(
    not minilm.onnx_available(), reason="onnxruntime or onnx not installed"
)


def real_sentences() -> list[str]:
    """The vector units of the cpgQA fixture passages and the tokenizer's hard cases."""
    found: list[str] = []
    for line in (FIXTURES / "cpgqa" / "passages.jsonl").read_text().splitlines():
        passage = json.loads(line)
        found += dense_units(SectionDoc("p", "", passage["title"], passage["text"]))
    reference = json.loads((FIXTURES / "minilm" / "reference.json").read_text())
    return found + reference["texts"]


@pytest.fixture(scope="module")
def numpy_encoder() -> MiniLM:
    return MiniLM(model_dir())


@pytest.fixture(scope="module")
def onnx_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("onnx-cache")


@pytest.fixture(scope="module")
def onnx_encoder(onnx_cache: Path) -> MiniLM:
    from veriscribe.retrieval.minilm_onnx import OnnxMiniLM

    return OnnxMiniLM(model_dir(), cache=onnx_cache)


@pytest.fixture
def fresh_minilm():  # type: ignore[no-untyped-def]
    minilm.minilm.cache_clear()
    yield
    minilm.minilm.cache_clear()


@needs_onnx
def test_onnx_and_numpy_agree_on_real_sentences(
    numpy_encoder: MiniLM, onnx_encoder: MiniLM
) -> None:
    texts = real_sentences()
    assert len(texts) > 50
    expected = numpy_encoder(texts)
    found = onnx_encoder(texts)
    assert found.shape == expected.shape == (len(texts), 384)
    assert float(np.abs(found - expected).max()) < 1e-5
    assert float((found * expected).sum(axis=1).min()) >= 0.9999
    reference = json.loads((FIXTURES / "minilm" / "reference.json").read_text())
    made_by_sentence_transformers = np.asarray(reference["vectors"], dtype=np.float32)
    assert float(np.abs(found[-6:] - made_by_sentence_transformers).max()) < 1e-5


@needs_onnx
def test_the_graph_is_built_once_and_then_read_from_the_cache(
    onnx_encoder: MiniLM, onnx_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from veriscribe.retrieval import minilm_onnx

    assert len(list(onnx_cache.glob("*.onnx"))) == 1
    assert len(list(onnx_cache.glob("weights-*.sha256"))) == 1
    assert not list(onnx_cache.glob("*.part"))

    def no_build(weights: object) -> bytes:
        raise AssertionError("built again")

    monkeypatch.setattr(minilm_onnx, "build_graph", no_build)
    again = minilm_onnx.OnnxMiniLM(model_dir(), threads=1, cache=onnx_cache)
    text = ["Taper opioids slowly when the risks outweigh the benefits."]
    assert np.allclose(again(text), onnx_encoder(text), atol=1e-6)


@needs_onnx
def test_an_unwritable_cache_keeps_the_graph_in_memory(tmp_path: Path) -> None:
    from veriscribe.retrieval import minilm_onnx

    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    graph = minilm_onnx.cached_graph(model_dir(), blocked / "cache")
    assert isinstance(graph, bytes)


@needs_onnx
def test_onnx_runtime_is_the_encoder_when_installed(fresh_minilm: None) -> None:
    assert minilm.minilm().name == "onnxruntime"


def test_numpy_is_the_encoder_without_onnx_runtime(
    fresh_minilm: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_find_spec = minilm.importlib.util.find_spec
    monkeypatch.setattr(
        minilm.importlib.util,
        "find_spec",
        lambda name: None if name == "onnxruntime" else real_find_spec(name),
    )
    assert not minilm.onnx_available()
    encoder = minilm.minilm()
    assert encoder.name == "numpy"
    assert type(encoder) is MiniLM
    question, answer, other = encoder(
        [
            "Can benzodiazepines be prescribed together with opioids?",
            "Avoid prescribing opioid and benzodiazepines concurrently when possible.",
            "Opioids should be stored in a locked cabinet at home.",
        ]
    )
    assert float(question @ answer) > float(question @ other) + 0.2
