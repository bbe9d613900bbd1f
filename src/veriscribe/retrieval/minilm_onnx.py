"""all-MiniLM-L6-v2 run by ONNX Runtime: the NumPy encoder's vectors, faster.

The graph is built here, with ``onnx.helper``, from the same ``model.safetensors`` the
NumPy encoder (`veriscribe.retrieval.minilm`) reads: word, position and token-type
embeddings, six BERT layers (attention with the padding mask, LayerNormalization, the
exact erf GELU), mean pooling over the real word pieces and L2 normalisation. Nothing
is downloaded or exported from PyTorch, and the tokenizer and the batching by length
are the NumPy encoder's, so the two give the same vectors to float32 rounding.

Building the graph takes seconds (more than loading it), so it is kept under the user
cache directory, named by the SHA-256 of the weights and the builder's version, written
whole or not at all; when that directory cannot be written the graph stays in memory.
The digest itself is remembered there by the weights file's size and modification time.
ONNX Runtime runs it with its own fused kernels (GELU, layer norm, scaled matmuls) on
``threads`` cores (default: every core this process may use, at most 4); its worker
threads do not spin between batches, since the machine is often shared.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from platformdirs import user_cache_path

from veriscribe.retrieval.minilm import (
    EPS,
    HEADS,
    LAYERS,
    MiniLM,
    padded,
    read_safetensors,
)

Matrix = npt.NDArray[np.float32]

OPSET = 17
"""The first opset with LayerNormalization."""
MAX_THREADS = 4
GRAPH_VERSION = 1
"""Part of the cached graph's name: raise it when `build_graph` changes."""


def cache_dir() -> Path:
    """Where built graphs are kept."""
    return user_cache_path("veriscribe", appauthor=False) / "minilm-onnx"


def default_threads() -> int:
    """Every core this process may run on, at most ``MAX_THREADS``."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_THREADS))


def build_graph(weights: Mapping[str, npt.NDArray[np.float32]]) -> bytes:
    """Return the serialized ONNX model of the encoder with these weights.

    Inputs: ``input_ids`` (int64, batch x pieces) and ``attention_mask`` (float32,
    1 for a real piece, 0 for padding). Output: ``embeddings`` (float32, batch x 384,
    unit rows).
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes: list[onnx.NodeProto] = []
    initializers: list[onnx.TensorProto] = []

    def const(name: str, value: npt.ArrayLike, dtype: type = np.float32) -> str:
        initializers.append(
            numpy_helper.from_array(np.asarray(value, dtype=dtype), name)
        )
        return name

    def node(op: str, inputs: list[str], output: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [output], output, None, **attrs))
        return output

    def weight(name: str) -> str:
        return const(name, weights[name])

    def linear(x: str, prefix: str, out: str) -> str:
        # PyTorch keeps a Linear's weight as (out, in); MatMul wants (in, out).
        w = const(
            f"{prefix}.weight.T", np.ascontiguousarray(weights[f"{prefix}.weight"].T)
        )
        return node(
            "Add", [node("MatMul", [x, w], f"{out}.mm"), weight(f"{prefix}.bias")], out
        )

    def layer_norm(x: str, prefix: str, out: str) -> str:
        return node(
            "LayerNormalization",
            [x, weight(f"{prefix}.weight"), weight(f"{prefix}.bias")],
            out,
            axis=-1,
            epsilon=EPS,
        )

    dim = weights["embeddings.word_embeddings.weight"].shape[1]
    head = dim // HEADS

    # Embeddings: word + position (the first `pieces` rows) + token type 0.
    ids_shape = node("Shape", ["input_ids"], "ids_shape")
    pieces = node(
        "Slice",
        [ids_shape, const("one_i", [1], np.int64), const("two_i", [2], np.int64)],
        "pieces",
    )
    positions = node(
        "Slice",
        [
            weight("embeddings.position_embeddings.weight"),
            const("zero_i", [0], np.int64),
            pieces,
            const("axis0", [0], np.int64),
        ],
        "positions",
    )
    words = node(
        "Gather", [weight("embeddings.word_embeddings.weight"), "input_ids"], "words"
    )
    token_type = const(
        "token_type0", weights["embeddings.token_type_embeddings.weight"][0]
    )
    x = node(
        "Add",
        [node("Add", [words, positions], "emb.wp"), token_type],
        "emb.sum",
    )
    x = layer_norm(x, "embeddings.LayerNorm", "emb")

    # Padding keys get a large negative score, so softmax gives them no weight.
    blocked = node(
        "Mul",
        [
            node("Sub", [const("one_f", 1.0), "attention_mask"], "unmasked"),
            const("minus_big", -1e9),
        ],
        "blocked.2d",
    )
    blocked = node("Unsqueeze", [blocked, const("axes12", [1, 2], np.int64)], "blocked")
    split_heads = const("split_heads", [0, 0, HEADS, head], np.int64)
    merge_heads = const("merge_heads", [0, 0, dim], np.int64)
    scale = const("scale", 1.0 / math.sqrt(head))
    half = const("half", 0.5)
    root2 = const("root2", math.sqrt(2.0))

    for i in range(LAYERS):
        p = f"encoder.layer.{i}"

        def heads(x: str, name: str, perm: list[int], p: str = p) -> str:
            projected = linear(x, f"{p}.attention.self.{name}", f"{p}.{name}")
            shaped = node("Reshape", [projected, split_heads], f"{p}.{name}.heads")
            return node("Transpose", [shaped], f"{p}.{name}.t", perm=perm)

        q = heads(x, "query", [0, 2, 1, 3])
        k = heads(x, "key", [0, 2, 3, 1])
        v = heads(x, "value", [0, 2, 1, 3])
        scores = node("MatMul", [q, k], f"{p}.scores.raw")
        scores = node("Mul", [scores, scale], f"{p}.scores.scaled")
        scores = node("Add", [scores, blocked], f"{p}.scores")
        probs = node("Softmax", [scores], f"{p}.probs", axis=-1)
        context = node("MatMul", [probs, v], f"{p}.context.heads")
        context = node("Transpose", [context], f"{p}.context.t", perm=[0, 2, 1, 3])
        context = node("Reshape", [context, merge_heads], f"{p}.context")
        attended = linear(context, f"{p}.attention.output.dense", f"{p}.attended")
        x = layer_norm(
            node("Add", [attended, x], f"{p}.residual1"),
            f"{p}.attention.output.LayerNorm",
            f"{p}.attention.out",
        )
        inner = linear(x, f"{p}.intermediate.dense", f"{p}.inner")
        # The exact (erf) GELU that BERT uses: 0.5 x (1 + erf(x / sqrt 2)).
        erf = node(
            "Erf", [node("Div", [inner, root2], f"{p}.gelu.div")], f"{p}.gelu.erf"
        )
        gelu = node(
            "Mul",
            [
                node("Mul", [inner, half], f"{p}.gelu.half"),
                node("Add", [erf, "one_f"], f"{p}.gelu.add"),
            ],
            f"{p}.gelu",
        )
        out = linear(gelu, f"{p}.output.dense", f"{p}.outer")
        x = layer_norm(
            node("Add", [out, x], f"{p}.residual2"),
            f"{p}.output.LayerNorm",
            f"{p}.out",
        )

    # Mean pooling over the real pieces, then unit length (a zero row stays zero).
    mask3 = node(
        "Unsqueeze", ["attention_mask", const("axis2", [2], np.int64)], "mask3"
    )
    summed = node(
        "ReduceSum",
        [node("Mul", [x, mask3], "masked"), const("axis1", [1], np.int64)],
        "summed",
        keepdims=0,
    )
    counts = node("ReduceSum", ["attention_mask", "axis1"], "counts", keepdims=1)
    pooled = node("Div", [summed, counts], "pooled")
    norms = node("ReduceL2", [pooled], "norms", axes=[1], keepdims=1)
    norms = node("Max", [norms, const("tiny", 1e-30)], "norms.safe")
    node("Div", [pooled, norms], "embeddings")

    graph = helper.make_graph(
        nodes,
        "all-MiniLM-L6-v2",
        [
            helper.make_tensor_value_info(
                "input_ids", TensorProto.INT64, ["batch", "pieces"]
            ),
            helper.make_tensor_value_info(
                "attention_mask", TensorProto.FLOAT, ["batch", "pieces"]
            ),
        ],
        [
            helper.make_tensor_value_info(
                "embeddings", TensorProto.FLOAT, ["batch", dim]
            )
        ],
        initializers,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="veriscribe",
    )
    model.ir_version = 8
    data: bytes = model.SerializeToString()
    return data


def weights_digest(weights: Path, cache: Path) -> str:
    """Return the weights file's SHA-256, remembered under ``cache`` by size and time.

    Hashing 90 MB takes a few tenths of a second, which every new process would pay.
    """
    stat = weights.stat()
    memo = cache / f"weights-{stat.st_size}-{stat.st_mtime_ns}.sha256"
    with contextlib.suppress(OSError):
        remembered = memo.read_text(encoding="ascii").strip()
        if len(remembered) == 64:
            return remembered
    with weights.open("rb") as f:
        digest = hashlib.file_digest(f, "sha256").hexdigest()
    with contextlib.suppress(OSError):
        cache.mkdir(parents=True, exist_ok=True)
        memo.write_text(digest + "\n", encoding="ascii")
    return digest


def cached_graph(directory: Path, cache: Path) -> Path | bytes:
    """Return the graph file for the weights in ``directory``, built on first use.

    The serialized graph itself when it cannot be written under ``cache``.
    """
    weights = directory / "model.safetensors"
    digest = weights_digest(weights, cache)
    path = cache / f"all-MiniLM-L6-v2-{digest[:16]}-v{GRAPH_VERSION}.onnx"
    if path.is_file():
        return path
    data = build_graph(read_safetensors(weights))
    partial = path.with_name(f"{path.name}.{os.getpid()}.part")
    try:
        cache.mkdir(parents=True, exist_ok=True)
        partial.write_bytes(data)
        os.replace(partial, path)
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink()
        return data
    return path


class OnnxMiniLM(MiniLM):
    """The all-MiniLM-L6-v2 encoder run by ONNX Runtime (same tokenizer and batching)."""

    name = "onnxruntime"

    def __init__(
        self, directory: Path, threads: int | None = None, cache: Path | None = None
    ):
        import onnxruntime as ort

        self._load_tokenizer(directory)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or default_threads()
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        graph = cached_graph(directory, cache or cache_dir())
        self.session = ort.InferenceSession(
            str(graph) if isinstance(graph, Path) else graph,
            options,
            providers=["CPUExecutionProvider"],
        )

    def _forward(self, batch: list[list[int]]) -> Matrix:
        ids, mask = padded(batch, np.int64)
        (out,) = self.session.run(
            ["embeddings"], {"input_ids": ids, "attention_mask": mask}
        )
        result: Matrix = np.asarray(out, dtype=np.float32)
        return result
