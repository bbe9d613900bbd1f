"""The run store: registration, atomic claims, dead workers, lost claims.

Every test runs on SQLite and on PostgreSQL (``db_target``).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
from collections.abc import AsyncIterator

import pytest

from veriscribe.results import Usage
from veriscribe.store import runs
from veriscribe.store.connect import open_database
from veriscribe.store.db import Store
from veriscribe.store.runs import NewItem, Outcome, new_worker_id, worker_alive

RUN = "run-test"


def items(n: int, *, prefix: str = "a") -> list[NewItem]:
    return [
        NewItem(f"{prefix}{i}", i, f"{prefix}{i}", f"id{i}", f"key{i}", weight=i)
        for i in range(n)
    ]


def done(text: str = "{}") -> Outcome:
    return Outcome("done", text, 0.1, usage=Usage(calls=2, prompt_tokens=10))


@pytest.fixture
async def store(db_target: str) -> AsyncIterator[Store]:
    opened = await open_database(db_target)
    await runs.ensure_run(opened, RUN, "abstract", {"model": "sim"})
    yield opened
    await opened.close()


async def test_claims_take_heaviest_first_and_never_twice(
    store: Store,
) -> None:
    await runs.put_items(store, RUN, items(5))
    first = await runs.claim(store, RUN, "w1", 2)
    second = await runs.claim(store, RUN, "w2", 10)
    assert [c.item_id for c in first] == ["a4", "a3"]
    assert [c.item_id for c in second] == ["a2", "a1", "a0"]
    assert await runs.claim(store, RUN, "w3", 10) == []
    assert all(c.attempts == 1 for c in first + second)


async def test_a_claim_takes_no_more_than_its_limit(store: Store) -> None:
    # Enough items with tied weights that PostgreSQL joins the pick row by row.
    await runs.put_items(
        store,
        RUN,
        [NewItem(f"a{i}", i, f"a{i}", None, f"k{i}", weight=i % 7) for i in range(100)],
    )
    assert len(await runs.claim(store, RUN, "w1", 18)) == 18
    assert len(await runs.claim(store, RUN, "w2", 18)) == 18
    assert (await runs.counts(store, RUN)).running == 36


async def test_two_connections_claim_disjoint_items(db_target: str) -> None:
    stores = [await open_database(db_target) for _ in range(3)]
    try:
        await runs.ensure_run(stores[0], RUN, "abstract", {})
        await runs.put_items(stores[0], RUN, items(60))

        async def drain(store: Store, worker: str) -> list[str]:
            got: list[str] = []
            while claims := await runs.claim(store, RUN, worker, 3):
                got += [c.item_id for c in claims]
                await asyncio.sleep(0)
            return got

        taken = await asyncio.gather(*(drain(s, f"w{i}") for i, s in enumerate(stores)))
    finally:
        for store in stores:
            await store.close()
    flat = [item for got in taken for item in got]
    assert sorted(flat) == sorted(f"a{i}" for i in range(60))


async def test_finish_needs_the_claim(store: Store) -> None:
    await runs.put_items(store, RUN, items(1))
    (claim,) = await runs.claim(store, RUN, "w1", 1)
    assert not await runs.finish(store, RUN, "w2", claim.item_id, done())
    assert await runs.finish(store, RUN, "w1", claim.item_id, done('{"x": 1}'))
    assert not await runs.finish(store, RUN, "w1", claim.item_id, done())
    counts = await runs.counts(store, RUN)
    assert (counts.done, counts.calls, counts.prompt_tokens) == (1, 2, 10)
    assert await runs.results(store, RUN, ["a0"]) == {"a0": '{"x": 1}'}


async def test_claims_of_a_dead_process_are_reclaimed(store: Store) -> None:
    await runs.put_items(store, RUN, items(3))
    dead = f"{socket.gethostname()}:{2**22 + 12345}:deadbeef"
    assert worker_alive(dead) is False
    alive = new_worker_id()
    assert worker_alive(alive) is True
    assert worker_alive("elsewhere:1:x") is None
    await runs.claim(store, RUN, dead, 2)
    await runs.claim(store, RUN, alive, 1)
    assert await runs.reclaim(store, RUN, lease_s=3600) == 2
    counts = await runs.counts(store, RUN)
    assert (counts.pending, counts.running) == (2, 1)


async def test_old_claims_expire_after_the_lease(store: Store) -> None:
    await runs.put_items(store, RUN, items(2))
    await runs.claim(store, RUN, "remote-host:1:abc", 2)
    assert await runs.reclaim(store, RUN, lease_s=3600) == 0
    await asyncio.sleep(0.05)
    assert await runs.reclaim(store, RUN, lease_s=0.01) == 2


async def test_release_returns_a_workers_claims(store: Store) -> None:
    await runs.put_items(store, RUN, items(3))
    await runs.claim(store, RUN, "w1", 2)
    await runs.claim(store, RUN, "w2", 1)
    assert await runs.release(store, RUN, "w1") == 2
    counts = await runs.counts(store, RUN)
    assert (counts.pending, counts.running) == (2, 1)


async def test_registering_again_keeps_done_retries_failed_restarts_changed(
    store: Store,
) -> None:
    await runs.put_items(store, RUN, items(4))
    claims = await runs.claim(store, RUN, "w", 4)
    by_id = {c.item_id: c for c in claims}
    await runs.finish(store, RUN, "w", "a0", done())
    await runs.finish(store, RUN, "w", "a1", Outcome("failed", "{}", 0.1, "timeout"))
    await runs.finish(store, RUN, "w", "a2", done())
    assert by_id["a3"].attempts == 1  # a3 stays running (claimed by w)
    again = items(4)
    again[2] = NewItem("a2", 2, "a2", "id2", "changed-key")
    unreadable = NewItem(
        "bad", 9, "bad", None, None, status="failed", reason="bad XML", result="{}"
    )
    await runs.put_items(store, RUN, [*again, unreadable])
    status = {i.item_id: i.status for i in await runs.items(store, RUN)}
    assert status == {
        "a0": "done",
        "a1": "pending",
        "a2": "pending",
        "a3": "running",
        "bad": "failed",
    }
    assert await runs.final_ids(store, RUN) == {"a0", "bad"}
    (failed,) = await runs.items(store, RUN, "failed")
    assert failed.reason == "bad XML"


async def test_sessions_record_workers(store: Store) -> None:
    await runs.start_session(store, RUN, "w1")
    await runs.heartbeat(store, RUN, "w1")
    await runs.end_session(store, RUN, "w1", "finished")
    (session,) = await runs.sessions(store, RUN)
    assert session.outcome == "finished" and session.seconds >= 0


async def test_run_config_round_trips(store: Store) -> None:
    record = await runs.ensure_run(store, RUN, "abstract", {"model": "sim", "out": "x"})
    assert record.config == {"model": "sim", "out": "x"}
    assert [r.run_id for r in await runs.list_runs(store)] == [RUN]
    assert json.loads(json.dumps(record.config)) == record.config
    assert os.environ.get("VERISCRIBE_DB")  # the test database is private


async def test_claims_from_many_connections_at_once_never_overlap(
    db_target: str,
) -> None:
    stores = [await open_database(db_target) for _ in range(4)]
    try:
        await runs.ensure_run(stores[0], RUN, "abstract", {})
        await runs.put_items(stores[0], RUN, items(400))

        async def drain(store: Store, worker: str) -> list[str]:
            got: list[str] = []
            while claims := await runs.claim(store, RUN, worker, 5):
                for claim in claims:
                    assert await runs.finish(store, RUN, worker, claim.item_id, done())
                got += [c.item_id for c in claims]
            return got

        taken = await asyncio.gather(
            *(drain(s, f"w{i}:{j}") for i, s in enumerate(stores) for j in range(3))
        )
    finally:
        for store in stores:
            await store.close()
    flat = [item for got in taken for item in got]
    assert len(flat) == 400 and set(flat) == {f"a{i}" for i in range(400)}
    assert sum(1 for got in taken if got) > 1  # the work was shared


async def test_a_heartbeat_keeps_claims_past_the_lease(store: Store) -> None:
    await runs.put_items(store, RUN, items(2))
    await runs.start_session(store, RUN, "remote-host:1:abc")
    await runs.claim(store, RUN, "remote-host:1:abc", 1)
    await runs.claim(store, RUN, "remote-host:2:def", 1)
    # The lease is long next to one statement: on a loaded machine the heartbeat and
    # the reclaim that follows it can be a few tenths of a second apart.
    await asyncio.sleep(1.1)
    await runs.heartbeat(store, RUN, "remote-host:1:abc")
    assert await runs.reclaim(store, RUN, lease_s=1.0) == 1
    held = {i.claimed_by for i in await runs.items(store, RUN, "running")}
    assert held == {"remote-host:1:abc"}
    (session,) = await runs.sessions(store, RUN)
    assert session.outcome is None
