"""Sentence vectors per second: the NumPy all-MiniLM-L6-v2 encoder against its variants.

The sentences are what ``corpus add`` embeds: the vector units (`fused.dense_units`:
sentences and list items of at least four words, none from back matter) of the NGC
summaries and the VA/DoD guidelines of ``../shared/data/guidelines``, from sections
taken at an even stride over those documents until ``--sentences`` units (default
3,000) are gathered. They are embedded as ingest embeds them: one encoder call per 64
sections (`fused.stored_vectors`).

Variants, all loaded at the start and run one after another in each of ``--rounds``
rounds (the order rotated every round), so a loaded machine weighs on all alike:

- ``numpy``: `veriscribe.retrieval.minilm.MiniLM`, the baseline (batches of 32 texts);
- ``numpy_fused``: the same with one fused query-key-value matmul and batches of 64;
- ``onnx_1t`` / ``onnx``: `veriscribe.retrieval.minilm_onnx.OnnxMiniLM` with one
  intra-op thread, and with its default (every core this process may use, at most 4),
  when ``onnxruntime`` and ``onnx`` are installed.

For each: the median and best sentences/second over the rounds, the ratio of the median
to the baseline's, the time to load it, the resident memory loading it added and the
peak rise in resident memory while embedding (sampled every 5 ms), and the largest
absolute difference and smallest cosine of its vectors against the baseline's. The
time spent in the tokenizer alone (shared by all) is printed once. The last line reads
``numpy_sps=<x> onnx_sps=<x> onnx_ratio=<x> onnx_min_cos=<x> ...`` (one ``_sps``,
``_ratio`` and ``_min_cos`` per variant).

Usage: ``nice -n 10 .venv/bin/python bench/encoder.py [--sentences N] [--rounds R]
[--variants numpy,onnx]``
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from veriscribe.documents.guidelines import read_guideline_path
from veriscribe.retrieval.fused import SectionDoc, dense_units
from veriscribe.retrieval.minilm import (
    HEADS,
    Matrix,
    MiniLM,
    _gelu,
    _layer_norm,
    model_dir,
    padded,
)

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "shared" / "data" / "guidelines"
SECTIONS_PER_CALL = 64
PAGE = os.sysconf("SC_PAGE_SIZE")


class FusedNumpy(MiniLM):
    """The NumPy encoder with one query-key-value matmul per layer and batches of 64."""

    name = "numpy_fused"
    batch = 64

    def __init__(self, directory: Path):
        super().__init__(directory)
        for p in self.layers:
            p["qkv"] = np.ascontiguousarray(np.concatenate([p["q"], p["k"], p["v"]]).T)
            p["qkvb"] = np.concatenate([p["qb"], p["kb"], p["vb"]])

    def __call__(self, texts: list[str]) -> Matrix:
        encoded = [self.tokenizer.encode(text) for text in texts]
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))
        result = np.zeros((len(texts), 384), dtype=np.float32)
        for start in range(0, len(order), self.batch):
            chosen = order[start : start + self.batch]
            result[chosen] = self._forward([encoded[i] for i in chosen])
        return result

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
        blocked = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        scale = np.float32(1.0 / math.sqrt(head))
        for p in self.layers:
            qkv = (x @ p["qkv"] + p["qkvb"]).reshape(n, t, 3, HEADS, head)
            q = qkv[:, :, 0].transpose(0, 2, 1, 3)
            k = qkv[:, :, 1].transpose(0, 2, 3, 1)
            v = qkv[:, :, 2].transpose(0, 2, 1, 3)
            scores = (q * scale) @ k + blocked
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


def rss() -> int:
    """This process's resident memory in bytes."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


class PeakRss:
    """The highest resident memory seen while the block runs (sampled every 5 ms)."""

    def __enter__(self) -> PeakRss:
        self.start = self.peak = rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, rss())

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss())


def bench_calls(data: Path, wanted: int) -> list[list[str]]:
    """The units to embed, as ingest's calls (one per 64 sections)."""
    sections: list[SectionDoc] = []
    for folder in ("ngc", "vadod"):
        for doc in read_guideline_path(data / folder):
            sections.extend(
                SectionDoc(f"{doc.doc_id}:{s.section_id}", doc.title, s.title, s.text)
                for s in doc.sections
                if s.text
            )
    units = [dense_units(section) for section in sections]
    total = sum(len(u) for u in units)
    stride = max(1, total // wanted)
    chosen: list[list[str]] = []
    count = 0
    for start in range(stride):
        for index in range(start, len(units), stride):
            if count >= wanted:
                break
            if units[index]:
                chosen.append(units[index][: wanted - count])
                count += len(chosen[-1])
        if count >= wanted:
            break
    return [
        [unit for section in chosen[i : i + SECTIONS_PER_CALL] for unit in section]
        for i in range(0, len(chosen), SECTIONS_PER_CALL)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--sentences", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--variants",
        default="numpy,numpy_fused,onnx_1t,onnx",
        help="comma-separated; numpy, the baseline, always runs",
    )
    args = parser.parse_args()

    calls = bench_calls(args.data, args.sentences)
    flat = [unit for call in calls for unit in call]
    print(
        f"{len(flat)} sentences in {len(calls)} calls; cores usable: "
        f"{len(os.sched_getaffinity(0))}; load average: {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    directory = model_dir()
    makers: dict[str, Callable[[], MiniLM]] = {
        "numpy": lambda: MiniLM(directory),
        "numpy_fused": lambda: FusedNumpy(directory),
    }
    if importlib.util.find_spec("onnxruntime") and importlib.util.find_spec("onnx"):
        from veriscribe.retrieval.minilm_onnx import OnnxMiniLM

        makers["onnx_1t"] = lambda: OnnxMiniLM(directory, threads=1)
        makers["onnx"] = lambda: OnnxMiniLM(directory)
    else:
        print("onnxruntime or onnx not installed: NumPy variants only")

    wanted = {"numpy", *args.variants.split(",")}
    encoders: dict[str, MiniLM] = {}
    loaded: dict[str, tuple[float, int]] = {}
    for name, make in makers.items():
        if name not in wanted:
            continue
        before, started = rss(), time.perf_counter()
        encoders[name] = make()
        loaded[name] = (time.perf_counter() - started, rss() - before)

    pieces = encoders["numpy"].tokenizer
    started = time.perf_counter()
    lengths = [len(pieces.encode(text)) for text in flat]
    tokenizer_s = time.perf_counter() - started
    print(
        f"tokenizer alone: {tokenizer_s:.2f} s ({len(flat) / tokenizer_s:.0f} sentences/s); "
        f"word pieces per sentence: median {statistics.median(lengths):.0f}, "
        f"max {max(lengths)}",
        flush=True,
    )

    vectors: dict[str, Matrix] = {}
    rates: dict[str, list[float]] = {name: [] for name in encoders}
    peaks: dict[str, int] = dict.fromkeys(encoders, 0)
    names = list(encoders)
    for round_ in range(args.rounds):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            encoder = encoders[name]
            with PeakRss() as memory:
                started = time.perf_counter()
                rows = np.vstack([encoder(call) for call in calls])
                seconds = time.perf_counter() - started
            rates[name].append(len(flat) / seconds)
            peaks[name] = max(peaks[name], memory.peak - memory.start)
            vectors.setdefault(name, rows)
            print(
                f"round {round_ + 1} {name:12s} {seconds:7.2f} s "
                f"{len(flat) / seconds:7.1f} sentences/s",
                flush=True,
            )

    base = vectors["numpy"]
    base_rate = statistics.median(rates["numpy"])
    print()
    print(
        f"{'variant':12s} {'median/s':>9s} {'best/s':>8s} {'ratio':>6s} {'load s':>7s} "
        f"{'load MB':>8s} {'peak MB':>8s} {'max |diff|':>11s} {'min cos':>10s}"
    )
    summary: list[str] = []
    for name in names:
        rate = statistics.median(rates[name])
        diff = float(np.abs(vectors[name] - base).max())
        cosine = float((vectors[name] * base).sum(axis=1).min())
        load_s, load_bytes = loaded[name]
        print(
            f"{name:12s} {rate:9.1f} {max(rates[name]):8.1f} {rate / base_rate:6.2f} "
            f"{load_s:7.2f} {load_bytes / 2**20:8.0f} {peaks[name] / 2**20:8.0f} "
            f"{diff:11.2e} {cosine:10.7f}"
        )
        summary += [
            f"{name}_sps={rate:.1f}",
            f"{name}_ratio={rate / base_rate:.2f}",
            f"{name}_min_cos={cosine:.7f}",
        ]
    print(" ".join(summary))


if __name__ == "__main__":
    main()
