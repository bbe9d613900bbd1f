"""The steps of a shared context: who waits for whom, what each batch holds.

A recording context stands in for llama.cpp (``tests/e2e/test_batched_local.py`` runs
the real model): it keeps every batch it is asked to decode.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from veriscribe.llm.embedded.batched import SharedContext


class RecordingContext:
    """Keeps each decoded batch as (seq, position, wants logits) rows."""

    def __init__(self, fail: bool = False) -> None:
        self.batches: list[list[tuple[int, int, bool]]] = []
        self.removed: list[tuple[int, int]] = []
        self.fail = fail

    def decode(self, wrapper: Any) -> None:
        batch = wrapper.batch
        self.batches.append(
            [
                (batch.seq_id[i][0], batch.pos[i], bool(batch.logits[i]))
                for i in range(batch.n_tokens)
            ]
        )
        if self.fail:
            raise RuntimeError("llama_decode returned 1")

    def kv_cache_seq_rm(self, seq: int, p0: int, p1: int) -> bool:
        self.removed.append((seq, p0))
        return True


def in_thread(work: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = work()
        except Exception as exc:
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, box


def settle() -> None:
    """Give a thread time to block where it should."""
    time.sleep(0.2)


@pytest.fixture
def recording() -> RecordingContext:
    return RecordingContext()


def test_a_sequence_alone_decodes_at_once(recording: RecordingContext) -> None:
    shared = SharedContext(recording, n_batch=8)
    rows = shared.eval(0, [1, 2, 3], 0, all_logits=False)
    assert recording.batches == [[(0, 0, False), (0, 1, False), (0, 2, True)]]
    assert rows == [2]
    assert recording.removed == [(0, 0)]


def test_a_step_waits_for_every_started_sequence(recording: RecordingContext) -> None:
    shared = SharedContext(recording, n_batch=8)
    shared.eval(0, [1, 2], 0, all_logits=False)
    # Sequence 0 is writing: the prompt of sequence 1 waits for its next token.
    second, box = in_thread(lambda: shared.eval(1, [5], 0, all_logits=False))
    settle()
    assert second.is_alive() and len(recording.batches) == 1
    rows = shared.eval(0, [3], 2, all_logits=False)
    second.join(5)
    assert recording.batches[1] == [(0, 2, True), (1, 0, True)]  # one step for both
    assert rows == [0] and box["value"] == [1]
    # Now both have started: neither step runs without the other.
    first, box = in_thread(lambda: shared.eval(0, [4], 3, all_logits=False))
    settle()
    assert first.is_alive() and len(recording.batches) == 2
    assert shared.eval(1, [6], 1, all_logits=False) == [1]
    first.join(5)
    assert box["value"] == [0]
    assert shared.steps == 3 and shared.shared_steps == 2


def start_both(shared: SharedContext) -> None:
    """Start sequence 0 alone, then 1 beside it: both have tokens at position 0."""
    shared.eval(0, [1], 0, all_logits=False)
    second, _ = in_thread(lambda: shared.eval(1, [2], 0, all_logits=False))
    settle()
    shared.eval(0, [1], 0, all_logits=False)
    second.join(5)


def test_a_sequence_that_leaves_is_not_waited_for(recording: RecordingContext) -> None:
    shared = SharedContext(recording, n_batch=8)
    start_both(shared)
    waiting, box = in_thread(lambda: shared.eval(0, [3], 1, all_logits=False))
    settle()
    assert waiting.is_alive()
    shared.leave(1)
    waiting.join(5)
    assert box["value"] == [0]
    assert recording.batches[-1] == [(0, 1, True)]
    shared.leave(0)
    assert shared.eval(1, [3], 1, all_logits=False) == [0]  # back, and alone


def test_a_long_prompt_is_read_in_chunks_beside_the_tokens_being_written(
    recording: RecordingContext,
) -> None:
    shared = SharedContext(recording, n_batch=4)
    shared.eval(0, [1], 0, all_logits=False)
    reader, box = in_thread(lambda: shared.eval(1, list(range(10, 20)), 0, False))
    settle()
    # Sequence 0 has started and not handed in its next token: nothing runs.
    assert len(recording.batches) == 1
    rows = shared.eval(0, [2], 1, all_logits=False)
    assert rows == [0]
    # The token written takes one place, the prompt the rest of the batch.
    assert recording.batches[1] == [
        (0, 1, True),
        (1, 0, False),
        (1, 1, False),
        (1, 2, False),
    ]
    assert reader.is_alive()
    shared.eval(0, [3], 2, all_logits=False)
    shared.leave(0)
    reader.join(5)
    prompt = [row for batch in recording.batches for row in batch if row[0] == 1]
    assert [pos for _, pos, _ in prompt] == list(range(10))
    assert [wants for _, _, wants in prompt] == [False] * 9 + [True]
    assert all(len(batch) <= 4 for batch in recording.batches)
    assert box["value"] == [len(recording.batches[-1]) - 1]


def test_drafts_get_a_row_each(recording: RecordingContext) -> None:
    shared = SharedContext(recording, n_batch=8)
    rows = shared.eval(0, [1, 2, 3], 4, all_logits=True)
    assert rows == [0, 1, 2]
    assert recording.batches == [[(0, 4, True), (0, 5, True), (0, 6, True)]]


def test_a_failed_step_fails_every_call_in_it() -> None:
    shared = SharedContext(RecordingContext(), n_batch=8)
    start_both(shared)
    shared._ctx.fail = True
    first, box = in_thread(lambda: shared.eval(0, [2], 1, all_logits=False))
    settle()
    with pytest.raises(RuntimeError, match="llama_decode"):
        shared.eval(1, [2], 1, all_logits=False)
    first.join(5)
    assert isinstance(box["error"], RuntimeError)
    # The failed calls have left no request behind: the next call runs alone.
    shared._ctx.fail = False
    shared.leave(1)
    assert shared.eval(0, [9], 1, all_logits=False) == [0]
