"""What a batch article costs in trips to the database thread, and that it saves the same.

Every statement runs on the connection's thread; each trip there is a hand-over between
threads, and an article makes dozens. These tests hold each step to its trips, and to
the rows and results it had when it took more.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel
from typing_extensions import TypedDict

from fakes import ScriptedChatModel, scripted_llm
from veriscribe.graphs.runner import GraphRunner
from veriscribe.store import calls
from veriscribe.store.connect import open_database
from veriscribe.store.db import Store
from veriscribe.store.sqlite import SqliteStore


def _count_trips(store: SqliteStore) -> list[str]:
    """Count the jobs sent to the store's connection thread, by function name."""
    trips: list[str] = []
    execute = store.conn._execute

    async def counted(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        trips.append(getattr(fn, "__qualname__", repr(fn)))
        return await execute(fn, *args, **kwargs)

    store.conn._execute = counted  # type: ignore[method-assign]
    return trips


async def _sqlite(path: Path) -> SqliteStore:
    store = await open_database(path)
    assert isinstance(store, SqliteStore)
    return store


async def test_the_checkpointer_saves_what_the_stock_saver_saves_in_one_trip_each(
    tmp_path: Path,
) -> None:
    checkpoint = empty_checkpoint()
    checkpoint["id"] = "1ef-checkpoint"
    checkpoint["channel_values"] = {"doc_key": "k", "results": [{"summary": "s"}]}
    config: Any = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    seen: dict[str, tuple[Any, ...]] = {}
    for name in ("stock", "ours"):
        store = await _sqlite(tmp_path / f"{name}.sqlite")
        try:
            saver = (
                await store.checkpointer()
                if name == "ours"
                else AsyncSqliteSaver(store.conn)
            )
            await saver.setup()
            trips = _count_trips(store)
            saved = await saver.aput(config, checkpoint, {"step": 1}, {})
            await saver.aput_writes(saved, [("results", [1]), ("x", "y")], "a", "p")
            await saver.aput_writes(saved, [("__error__", "boom")], "b")
            writes_trips = len(trips)
            latest = await saver.aget_tuple(config)
            named = await saver.aget_tuple(saved)
            missing = await saver.aget_tuple(
                {"configurable": {"thread_id": "none", "checkpoint_ns": ""}}
            )
            read_trips = len(trips) - writes_trips
            seen[name] = (
                saved,
                latest,
                named,
                missing,
                await store.fetchall("SELECT * FROM checkpoints"),
                await store.fetchall("SELECT * FROM writes ORDER BY task_id, idx"),
                writes_trips,
                read_trips,
            )
        finally:
            await store.close()
    assert seen["ours"][:6] == seen["stock"][:6]
    assert seen["ours"][1] is not None and seen["ours"][1].pending_writes
    # Three writes, three reads: one trip each (the stock saver takes 3 or 4 a write).
    assert seen["ours"][6:] == (3, 3)
    assert seen["stock"][6] > 3


class _Summary(BaseModel):
    summary: str


async def test_an_answered_call_is_logged_and_cached_in_one_trip(
    tmp_path: Path,
) -> None:
    store = await _sqlite(tmp_path / "db.sqlite")
    try:
        chat = ScriptedChatModel(script=['{"summary": "a"}'])
        llm = scripted_llm(chat, store=store, cache=True)
        trips = _count_trips(store)
        first = await llm.json("facet", "summarise", _Summary)
        # The cache lookup, then the log row and the reply together.
        assert len(trips) == 2
        again = await llm.json("facet", "summarise", _Summary)
        assert first.value == again.value and again.usage.cached_calls == 1
        assert await calls.call_counts(store) == {"ok": 1, "cached": 1}
        assert await store.fetchone("SELECT COUNT(*) FROM llm_cache") == (1,)
    finally:
        await store.close()


class _Counter(TypedDict, total=False):
    steps: Annotated[list[str], operator.add]
    done: bool


def _graph() -> StateGraph[_Counter, None]:
    graph = StateGraph(_Counter)
    graph.add_node("one", lambda state: {"steps": ["one"]})
    graph.add_node("two", lambda state: {"steps": ["two"], "done": True})
    graph.add_edge(START, "one")
    graph.add_edge("one", "two")
    graph.add_edge("two", END)
    return graph


async def test_a_thread_run_takes_its_final_state_from_the_stream(
    tmp_path: Path,
) -> None:
    store: Store = await open_database(tmp_path / "db.sqlite")
    try:
        runner = await GraphRunner.open(_graph(), store, max_concurrency=2)
        reads: list[str] = []
        get_state = runner.graph.aget_state

        async def counted(config: Any, **kwargs: Any) -> Any:
            reads.append(config["configurable"]["thread_id"])
            return await get_state(config, **kwargs)

        runner.graph.aget_state = counted  # type: ignore[method-assign]
        updates: list[str] = []
        run = await runner.run(
            "t", {"steps": []}, None, on_update=lambda node, _: updates.append(node)
        )
        assert run.values == {"steps": ["one", "two"], "done": True}
        assert run.values == dict((await get_state(runner.config("t"))).values)
        assert updates == ["one", "two"]
        # Only the look at the thread before it runs; none after.
        assert reads == ["t"]
        again = await runner.run("t", {"steps": []}, None)
        assert again.reused and again.values == run.values
    finally:
        await store.close()
