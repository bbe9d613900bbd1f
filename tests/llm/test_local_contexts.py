"""The embedded backend's contexts: thread split, pool, shared-start choice (no model)."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import HumanMessage, SystemMessage

from veriscribe.llm.embedded import local, sampling
from veriscribe.llm.embedded.contexts import ContextPool, shared_start, split_threads
from veriscribe.llm.factory import make_llm
from veriscribe.settings import LLMSettings, Settings


@given(st.integers(1, 64), st.integers(1, 64))
def test_split_never_runs_more_threads_than_configured(
    threads: int, contexts: int
) -> None:
    count, each = split_threads(threads, contexts)
    assert 1 <= count <= min(threads, contexts)
    assert each >= 1 and count * each <= threads


def test_split_on_two_threads() -> None:
    assert split_threads(2, 1) == (1, 2)
    assert split_threads(2, 2) == (2, 1)
    assert split_threads(2, 4) == (2, 1)
    assert split_threads(3, 2) == (2, 1)


def test_lease_gives_each_call_its_own_context_and_waits_when_none_is_free() -> None:
    pool = ContextPool(["a", "b"], threads_each=1)
    third: list[str] = []
    with pool.lease("x") as first, pool.lease("y") as second:
        assert {first, second} == {"a", "b"} and pool.free == 0

        def take() -> None:
            with pool.lease("z") as context:
                third.append(context)

        waiter = threading.Thread(target=take)
        waiter.start()
        time.sleep(0.2)
        assert third == []  # both contexts are busy: the third call waits
    waiter.join(timeout=5)
    assert len(third) == 1 and pool.free == 2


def test_free_context_with_the_longest_shared_start_is_chosen() -> None:
    pool = ContextPool(["a", "b", "c"], threads_each=1)
    system_one = "<system>Summarise the methods of this article.</system><user>"
    system_two = "<system>Judge whether the quote supports the claim.</system><user>"
    with pool.lease(system_one + "article 1") as first:
        with pool.lease(system_two + "claim 1") as second:
            pass
    assert first != second
    with pool.lease(system_two + "claim 2") as context:
        assert context == second
    with pool.lease(system_one + "article 2") as context:
        assert context == first


def test_equal_candidates_take_turns() -> None:
    pool = ContextPool(["a", "b"], threads_each=1)
    used = []
    for _ in range(4):
        with pool.lease("") as context:
            used.append(context)
    assert used == ["a", "b", "a", "b"]


def test_failed_call_leaves_its_context_expecting_no_reuse() -> None:
    pool = ContextPool(["a", "b"], threads_each=1)
    with pool.lease("<system>S</system>one") as kept:
        with pytest.raises(RuntimeError), pool.lease("<system>T</system>two"):
            raise RuntimeError("decode failed")
    # The failed context remembers nothing, so a prompt like the failed one goes to
    # the context that shares at least "<system>" with it.
    with pool.lease("<system>T</system>three") as context:
        assert context == kept


def test_shared_start() -> None:
    assert shared_start("abcdef", "abcxyz") == 3
    assert shared_start("", "abc") == 0


class FakeLlama:
    """Stands in for llama_cpp.Llama: records its threads and overlapping calls."""

    made: list[dict[str, Any]] = []
    lock = threading.Lock()
    in_flight = 0
    most_in_flight = 0

    threads_seen: list[int] = []
    fits_threads = True

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.busy = False
        self.threads = kwargs["n_threads"]
        FakeLlama.made.append(kwargs)

    @property
    def ctx(self) -> FakeLlama:
        return self

    def tokenize(self, text: bytes, **kwargs: Any) -> list[bytes]:
        return text.split()

    def leave(self) -> None:
        pass

    def create_chat_completion(self, messages: Any, **kwargs: Any) -> dict[str, Any]:
        assert not self.busy, "two calls at once on one llama context"
        self.busy = True
        with FakeLlama.lock:
            FakeLlama.in_flight += 1
            FakeLlama.most_in_flight = max(
                FakeLlama.most_in_flight, FakeLlama.in_flight
            )
        for _ in range(3):  # three tokens: the processors run before each
            for process in kwargs.get("logits_processor") or []:
                process([1, 2, 3], [0.0, 0.0])
            with FakeLlama.lock:
                FakeLlama.threads_seen.append(self.threads)
            time.sleep(0.05)
        with FakeLlama.lock:
            FakeLlama.in_flight -= 1
        self.busy = False
        return {
            "choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1},
        }

    def close(self) -> None:
        pass


@pytest.fixture
def fake_llama(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Load FakeLlama instead of llama.cpp; return a file that passes the GGUF check."""
    import llama_cpp

    def set_threads(ctx: FakeLlama, threads: int, batch: int) -> None:
        assert threads == batch
        ctx.threads = threads

    monkeypatch.setattr(llama_cpp, "Llama", FakeLlama)
    # The model's contexts are veriscribe's sampling subclass of Llama.
    monkeypatch.setattr(sampling, "SamplingLlama", FakeLlama)
    monkeypatch.setattr(llama_cpp, "llama_set_n_threads", set_threads)
    monkeypatch.setattr(FakeLlama, "threads_seen", [])
    monkeypatch.setattr(local, "_LOADED", {})
    monkeypatch.setattr(FakeLlama, "made", [])
    monkeypatch.setattr(FakeLlama, "most_in_flight", 0)
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF" + bytes(16))
    return path


@pytest.mark.parametrize(("contexts", "expected"), [(1, 1), (2, 2), (4, 2)])
async def test_calls_run_at_once_up_to_the_contexts(
    fake_llama: Path, contexts: int, expected: int
) -> None:
    chat = local.ChatLlamaCpp(model_path=fake_llama, n_threads=2, contexts=contexts)
    await asyncio.gather(
        *(chat.ainvoke([HumanMessage(f"question {i}")]) for i in range(4))
    )
    assert FakeLlama.most_in_flight == expected
    assert len(FakeLlama.made) == expected
    threads = [(m["n_threads"], m["n_threads_batch"]) for m in FakeLlama.made]
    assert threads == [(2 // expected, 2 // expected)] * expected


async def test_a_call_alone_uses_every_thread_and_calls_side_by_side_split_them(
    fake_llama: Path,
) -> None:
    chat = local.ChatLlamaCpp(model_path=fake_llama, n_threads=2, contexts=2)
    await chat.ainvoke([HumanMessage("alone")])
    assert FakeLlama.threads_seen == [2, 2, 2]
    FakeLlama.threads_seen.clear()
    await asyncio.gather(
        chat.ainvoke([HumanMessage("a")]), chat.ainvoke([HumanMessage("b")])
    )
    # Side by side, one thread each (a call refits before every token, so at most the
    # first token of the second call overlaps a two-thread one).
    assert FakeLlama.threads_seen.count(1) >= 4
    pool = chat._loaded()
    assert sum(c.threads for c in pool.contexts) <= 3


def test_contexts_are_loaded_once_and_shared(fake_llama: Path) -> None:
    one = local.ChatLlamaCpp(model_path=fake_llama, n_threads=2, contexts=2)
    two = local.ChatLlamaCpp(model_path=fake_llama, n_threads=2, contexts=2)
    other = local.ChatLlamaCpp(model_path=fake_llama, n_threads=2, contexts=1)
    for chat in (one, two, other):
        chat.load()
    assert len(FakeLlama.made) == 3
    assert one.count_tokens([SystemMessage("a b"), HumanMessage("c")]) == 3 + 2 * (
        local.MESSAGE_OVERHEAD_TOKENS
    )


def test_contexts_follow_the_concurrency_unless_set(tmp_path: Path) -> None:
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")

    def layout(**llm: Any) -> tuple[int, int]:
        settings = Settings(local_model=model, llm=LLMSettings(**llm))
        chat = make_llm("local", settings).chat
        assert isinstance(chat, local.ChatLlamaCpp)
        return chat.layout()

    assert layout() == (2, 1)  # default concurrency 4, two threads
    assert layout(concurrency=1) == (1, 2)
    assert layout(concurrency=4, local_contexts=1) == (1, 2)
    assert layout(concurrency=1, local_contexts=2) == (2, 1)
    assert layout(threads=4, concurrency=8, local_contexts=3) == (3, 1)
    # Batched: the calls are sequences of one context, each step on every thread.
    assert layout(batched=True) == (4, 2)
    assert layout(batched=True, concurrency=8, local_contexts=6) == (6, 2)


def test_batched_replies_have_keys_of_their_own(tmp_path: Path) -> None:
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")

    def identity(**llm: Any) -> str:
        settings = Settings(local_model=model, llm=LLMSettings(**llm))
        return make_llm("local", settings).identity

    assert "batched" in identity(batched=True)
    assert "batched" not in identity()
