import asyncio

import pytest
from langchain_core.messages import HumanMessage
from pydantic import BaseModel

from fakes import ScriptedChatModel, scripted_llm
from veriscribe.errors import (
    BackendUnavailable,
    ContextOverflow,
    ModelTimeout,
    StructuredOutputError,
)
from veriscribe.llm.client import classify_backend_error
from veriscribe.store import calls
from veriscribe.store.connect import open_database


class Summary(BaseModel):
    summary: str


async def test_prompt_over_budget_is_refused_before_any_call() -> None:
    chat = ScriptedChatModel(script=['{"summary": "never"}'])
    llm = scripted_llm(chat, context_tokens=1024, max_output_tokens=256)
    with pytest.raises(ContextOverflow) as info:
        await llm.json("facet", "word " * 3000, Summary)
    assert chat.calls == []
    assert "1024" in info.value.user_message and "not sent" in info.value.user_message


async def test_invalid_json_is_repaired_once_by_the_model() -> None:
    chat = ScriptedChatModel(script=["no json here", '{"summary": "fixed"}'])
    llm = scripted_llm(chat)
    result = await llm.json("facet", "summarise", Summary)
    assert result.value.summary == "fixed"
    assert result.repaired and result.usage.calls == 2
    assert "not usable" in chat.calls[1][0]


async def test_second_invalid_output_is_a_typed_error() -> None:
    llm = scripted_llm(["no json", '{"other": 1}'])
    with pytest.raises(StructuredOutputError) as info:
        await llm.json("facet", "summarise", Summary)
    assert info.value.raw == '{"other": 1}'
    assert "facet" in info.value.user_message


async def test_schema_reaches_the_backend() -> None:
    chat = ScriptedChatModel(script=['{"summary": "a"}'])
    await scripted_llm(chat).json("facet", "summarise", Summary)
    assert chat.calls[0][1]["format"]["required"] == ["summary"]


async def test_cache_and_call_log(default_db: str) -> None:
    async with await open_database(default_db) as store:
        chat = ScriptedChatModel(script=['{"summary": "a"}'])
        llm = scripted_llm(chat, store=store, cache=True)
        first = await llm.json("facet", "summarise this", Summary)
        second = await llm.json("facet", "summarise this", Summary)
        assert first.value == second.value
        assert len(chat.calls) == 1
        assert second.usage.cached_calls == 1 and second.usage.calls == 0
        assert await calls.call_counts(store) == {"ok": 1, "cached": 1}


async def test_failed_output_is_not_cached(default_db: str) -> None:
    async with await open_database(default_db) as store:
        llm = scripted_llm(
            ["garbage", "garbage", '{"summary": "b"}'], store=store, cache=True
        )
        with pytest.raises(StructuredOutputError):
            await llm.json("facet", "p", Summary)
        assert (await llm.json("facet", "p", Summary)).value.summary == "b"


async def test_backend_errors_are_classified() -> None:
    error = classify_backend_error(ConnectionRefusedError("refused"), "m", "")
    assert isinstance(error, BackendUnavailable) and error.retryable
    llm = scripted_llm([ConnectionRefusedError("connection refused")])
    llm.settings = llm.settings.model_copy(update={"retries": 0})
    with pytest.raises(BackendUnavailable) as info:
        await llm.text("x", "hi")
    # The client made its attempts: nothing above it should retry again.
    assert not info.value.retryable and info.value.attempts == 1


async def test_timeout() -> None:
    chat = ScriptedChatModel(script=["late"], delay=1.0)
    llm = scripted_llm(chat)
    llm.settings = llm.settings.model_copy(update={"timeout_s": 0.05, "retries": 0})
    with pytest.raises(ModelTimeout):
        await llm.text("x", "hi")


async def test_concurrency_limit_is_respected() -> None:
    in_flight = 0
    peak = 0

    class Counting(ScriptedChatModel):
        async def _agenerate(self, messages, stop=None, run_manager=None, **kw):  # type: ignore[no-untyped-def]
            nonlocal in_flight, peak
            in_flight += 1
            peak = max(peak, in_flight)
            await asyncio.sleep(0.02)
            in_flight -= 1
            return self._next(messages, kw)

    llm = scripted_llm(Counting(responder=lambda p, k: "ok"), concurrency=3)
    await asyncio.gather(*(llm.text("x", f"p{i}") for i in range(10)))
    assert peak == 3


async def test_waiting_for_a_slot_does_not_count_against_the_timeout() -> None:
    # One slot, four calls of 0.05 s each: the last waits 0.15 s for its turn, longer
    # than the time limit, which only the request itself must keep.
    chat = ScriptedChatModel(responder=lambda p, k: "ok", delay=0.05)
    llm = scripted_llm(chat, concurrency=1)
    llm.settings = llm.settings.model_copy(update={"timeout_s": 0.12, "retries": 0})
    replies = await asyncio.gather(*(llm.text("x", f"p{i}") for i in range(4)))
    assert [r.value for r in replies] == ["ok"] * 4


async def test_observers_hear_each_request_and_replies_keep_their_metadata() -> None:
    heard: list[str] = []

    class Observer:
        def call_started(self) -> None:
            heard.append("started")

        def call_ended(self, reply: object) -> None:
            heard.append("ended" if reply is not None else "failed")

    chat = ScriptedChatModel(script=["first", "second"])
    llm = scripted_llm(chat, concurrency=1)
    llm.add_observer(Observer())
    done = await llm.text("x", "hi")
    assert done.value == "first"
    assert heard == ["started", "ended"]
    assert llm.calls_made == 1
    # The reply went through LangChain's bookkeeping: it has a run's message id.
    reply, _, _ = await llm._attempt("x", [HumanMessage("hi")], {}, 1, 5.0)
    assert reply.content == "second" and str(reply.id).startswith("lc_run-")
