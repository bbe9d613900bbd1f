"""The bundled model with its Q5_0 tensors as Q8_0 gives the same logits, to the bit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import llama_cpp
import numpy as np
import pytest
from tests.e2e.test_decode_local import PASSAGE

from veriscribe.llm import bundled
from veriscribe.llm.transcode import has_q5_0

pytestmark = pytest.mark.local_model


def greedy_logits(path: Path, steps: int) -> list[Any]:
    llama = llama_cpp.Llama(
        model_path=str(path), n_ctx=1024, n_threads=2, n_threads_batch=2, verbose=False
    )
    try:
        llama.eval(llama.tokenize(f"Summarise: {PASSAGE}".encode()))
        seen = []
        for _ in range(steps):
            pointer = llama_cpp.llama_get_logits_ith(llama.ctx, -1)
            logits = np.ctypeslib.as_array(pointer, shape=(llama.n_vocab(),)).copy()
            seen.append(logits)
            llama.eval([int(logits.argmax())])
        return seen
    finally:
        llama.close()


def test_the_rewritten_bundled_model_writes_what_the_shipped_one_does(
    local_gguf: Path,
) -> None:
    models = local_gguf.parents[1]
    shipped = models / f"{bundled.DEFAULT_BUNDLED.name}.gguf"
    assert local_gguf == models / "q8_0" / shipped.name  # the rewrite is what loads
    assert has_q5_0(shipped) and not has_q5_0(local_gguf)
    for fast, slow in zip(
        greedy_logits(local_gguf, 8), greedy_logits(shipped, 8), strict=True
    ):
        assert np.array_equal(fast, slow)
