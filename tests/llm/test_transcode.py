"""Q5_0 tensors rewritten as Q8_0 hold the same weights; everything else is copied.

The weights are checked against dequantisers written here from ggml's block layouts;
the files against a GGUF writer written here. The bundled model's rewrite giving the
same logits to the bit is checked on the real model (``tests/e2e/test_transcode_local.py``).
"""

from __future__ import annotations

import logging
import struct
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from veriscribe.llm import bundled
from veriscribe.llm.transcode import (
    Q5_0,
    Q8_0,
    GGUFFormatError,
    has_q5_0,
    q5_0_as_q8_0,
    to_q8_0,
)

F32 = 0


def q5_0_weights(blocks: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """Dequantise Q5_0 blocks: d (f16), qh (u32: fifth bits), 16 bytes of nibble pairs."""
    out = []
    for block in blocks:
        d = np.frombuffer(block[0:2].tobytes(), dtype="<f2")[0].astype(np.float32)
        qh = int.from_bytes(block[2:6].tobytes(), "little")
        qs = block[6:22]
        weights = [0.0] * 32
        for j in range(16):
            low = (int(qs[j]) & 0x0F) | (((qh >> j) & 1) << 4)
            high = (int(qs[j]) >> 4) | (((qh >> (j + 16)) & 1) << 4)
            weights[j] = float(d) * (low - 16)
            weights[j + 16] = float(d) * (high - 16)
        out.append(weights)
    return np.array(out, dtype=np.float32)


def q8_0_weights(blocks: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """Dequantise Q8_0 blocks: d (f16), 32 signed bytes."""
    d = blocks[:, 0:2].copy().view("<f2").astype(np.float32)
    return d * blocks[:, 2:].copy().view(np.int8).astype(np.float32)


def random_q5_0(count: int, seed: int = 0) -> npt.NDArray[np.uint8]:
    rng = np.random.default_rng(seed)
    blocks = rng.integers(0, 256, size=(count, 22), dtype=np.uint8)
    scales = rng.uniform(-0.05, 0.05, size=count).astype("<f2")
    blocks[:, 0:2] = scales.view(np.uint8).reshape(count, 2)
    return blocks


def test_each_q8_0_block_holds_the_q5_0_blocks_weights_exactly() -> None:
    blocks = random_q5_0(64)
    rewritten = q5_0_as_q8_0(blocks)
    assert rewritten.shape == (64, 34)
    assert np.array_equal(q8_0_weights(rewritten), q5_0_weights(blocks))
    # Every 5-bit value reached, extremes included.
    values = rewritten[:, 2:].view(np.int8)
    assert values.min() == -16 and values.max() == 15


def gguf_string(text: bytes) -> bytes:
    return struct.pack("<Q", len(text)) + text


def gguf_file(
    tensors: list[tuple[bytes, tuple[int, ...], int, bytes]], align: int
) -> bytes:
    """Return a GGUF v3 file: some metadata, then ``(name, dims, type, data)`` tensors."""
    kvs = [
        gguf_string(b"general.architecture") + struct.pack("<I", 8) + gguf_string(b"x"),
        gguf_string(b"general.alignment") + struct.pack("<II", 4, align),
        gguf_string(b"tokenizer.ggml.tokens")
        + struct.pack("<IIQ", 9, 8, 2)
        + gguf_string(b"a")
        + gguf_string(b"bc"),
        gguf_string(b"x.scores") + struct.pack("<IIQ", 9, 6, 3) + b"\0" * 12,
    ]
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + b"".join(kvs)
    infos, data, offset = b"", b"", 0
    for name, dims, kind, raw in tensors:
        infos += gguf_string(name) + struct.pack("<I", len(dims))
        infos += b"".join(struct.pack("<Q", d) for d in dims)
        infos += struct.pack("<IQ", kind, offset)
        padded = raw + b"\0" * (-len(raw) % align)
        data += padded
        offset += len(padded)
    body = head + infos
    return body + b"\0" * (-len(body) % align) + data


def test_a_file_is_rewritten_tensor_by_tensor(tmp_path: Path) -> None:
    q5 = random_q5_0(6, seed=1)
    q8 = q5_0_as_q8_0(random_q5_0(2, seed=2))
    floats = np.arange(10, dtype="<f4").tobytes()
    source = tmp_path / "model.gguf"
    source.write_bytes(
        gguf_file(
            [
                (b"norm", (10,), F32, floats),
                (b"ffn", (64, 3), Q5_0, q5.tobytes()),
                (b"out", (32, 2), Q8_0, q8.tobytes()),
            ],
            align=64,
        )
    )
    assert has_q5_0(source)
    target = to_q8_0(source, tmp_path / "fast" / "model.gguf")
    assert not has_q5_0(target) and [p.name for p in target.parent.iterdir()] == [
        "model.gguf"
    ]
    expected = gguf_file(
        [
            (b"norm", (10,), F32, floats),
            (b"ffn", (64, 3), Q8_0, q5_0_as_q8_0(q5).tobytes()),
            (b"out", (32, 2), Q8_0, q8.tobytes()),
        ],
        align=64,
    )
    assert target.read_bytes() == expected


def test_what_is_not_gguf_v3_is_refused_and_nothing_is_left(tmp_path: Path) -> None:
    source = tmp_path / "model.gguf"
    source.write_bytes(b"GGUF" + struct.pack("<IQQ", 2, 0, 0))
    with pytest.raises(GGUFFormatError, match="version 3"):
        to_q8_0(source, tmp_path / "out" / "model.gguf")
    assert list((tmp_path / "out").iterdir()) == []
    assert not has_q5_0(source)


def shipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, q5: npt.NDArray[np.uint8]
) -> Path:
    """Make ``q5`` the one tensor of the assembled file of every bundled model."""
    source = tmp_path / "models" / "m.gguf"
    source.parent.mkdir()
    source.write_bytes(gguf_file([(b"w", (96,), Q5_0, q5.tobytes())], align=32))
    monkeypatch.setattr(bundled, "_assembled_path", lambda models_dir, m: source)
    return source


def model_of(q8_0_size: int | None) -> bundled.BundledModel:
    return bundled.BundledModel(
        name="m",
        extra="x",
        package="p{i}",
        part_file="f",
        parts=1,
        size=1,
        sha256="",
        q8_0_size=q8_0_size,
    )


def test_the_bundled_model_loads_rewritten_under_its_own_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    q5 = random_q5_0(3)
    source = shipped(tmp_path, monkeypatch, q5)
    assert bundled.bundled_model_path(source.parent, model_of(None)) == source
    size = len(gguf_file([(b"w", (96,), Q8_0, q5_0_as_q8_0(q5).tobytes())], align=32))
    fast_model = model_of(size)
    fast = bundled.bundled_model_path(source.parent, fast_model)
    assert fast == source.parent / "q8_0" / "m.gguf" and fast.stat().st_size == size
    assert bundled.bundled_model_path(source.parent, fast_model) == fast  # reused


def test_a_failed_rewrite_loads_the_model_as_shipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    source = shipped(tmp_path, monkeypatch, random_q5_0(3))
    model = model_of(12345)  # not the size the rewrite gives
    with caplog.at_level(logging.WARNING, logger="veriscribe.models"):
        assert bundled.bundled_model_path(source.parent, model) == source
    assert "loads as shipped" in caplog.text and "12345 expected" in caplog.text
    assert list((source.parent / "q8_0").iterdir()) == []


def test_the_rewrite_keeps_the_keys_of_the_file_as_shipped(tmp_path: Path) -> None:
    model = bundled.DEFAULT_BUNDLED
    assert model.q8_0_size is not None
    rewrite = tmp_path / "q8_0" / f"{model.name}.gguf"
    rewrite.parent.mkdir()
    with rewrite.open("wb") as fh:
        fh.truncate(model.q8_0_size)
    assert bundled.shipped_size(rewrite) == model.size
    other = tmp_path / "q8_0" / "other.gguf"
    other.write_bytes(b"GGUF")
    assert bundled.shipped_size(other) == 4
