"""The run store: registration, atomic claims, dead workers, lost claims.

Every test runs on SQLite and on PostgreSQL (``db_target``).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket

import pytest

from veriscribe.store.db import Store
from veriscribe.store.runs import (
    NewItem,
    Outcome,
    SqlRunStore,
    new_worker_id,
    worker_alive,
)

RUN = "run-test"


def items(n: int, *, prefix: str = "a") -> list[NewItem]:
    return [
        NewItem(f"{prefix}{i}", i, f"{prefix}{i}", f"id{i}", f"key{i}", weight=i)
        for i in range(n)
    ]


def done(text: str = "{}") -> Outcome:
    return Outcome("done", text, 0.1, usage={"calls": 2, "prompt_tokens": 10})


@pytest.fixture
async def runs(db_target: str) -> SqlRunStore:
    store = await Store.open(db_target)
    run_store = SqlRunStore(store)
    await run_store.ensure_run(RUN, "abstract", {"model": "sim"})
    yield run_store  # type: ignore[misc]
    await store.close()


async def test_claims_take_heaviest_first_and_never_twice(
    runs: SqlRunStore,
) -> None:
    await runs.put_items(RUN, items(5))
    first = await runs.claim(RUN, "w1", 2)
    second = await runs.claim(RUN, "w2", 10)
    assert [c.item_id for c in first] == ["a4", "a3"]
    assert [c.item_id for c in second] == ["a2", "a1", "a0"]
    assert await runs.claim(RUN, "w3", 10) == []
    assert all(c.attempts == 1 for c in first + second)


async def test_a_claim_takes_no_more_than_its_limit(runs: SqlRunStore) -> None:
    # Enough items with tied weights that PostgreSQL joins the pick row by row.
    await runs.put_items(
        RUN,
        [NewItem(f"a{i}", i, f"a{i}", None, f"k{i}", weight=i % 7) for i in range(100)],
    )
    assert len(await runs.claim(RUN, "w1", 18)) == 18
    assert len(await runs.claim(RUN, "w2", 18)) == 18
    assert (await runs.counts(RUN)).running == 36


async def test_two_connections_claim_disjoint_items(db_target: str) -> None:
    stores = [await Store.open(db_target) for _ in range(3)]
    try:
        runs = [SqlRunStore(s) for s in stores]
        await runs[0].ensure_run(RUN, "abstract", {})
        await runs[0].put_items(RUN, items(60))

        async def drain(store: SqlRunStore, worker: str) -> list[str]:
            got: list[str] = []
            while claims := await store.claim(RUN, worker, 3):
                got += [c.item_id for c in claims]
                await asyncio.sleep(0)
            return got

        taken = await asyncio.gather(*(drain(r, f"w{i}") for i, r in enumerate(runs)))
    finally:
        for store in stores:
            await store.close()
    flat = [item for got in taken for item in got]
    assert sorted(flat) == sorted(f"a{i}" for i in range(60))


async def test_finish_needs_the_claim(runs: SqlRunStore) -> None:
    await runs.put_items(RUN, items(1))
    (claim,) = await runs.claim(RUN, "w1", 1)
    assert not await runs.finish(RUN, "w2", claim.item_id, done())
    assert await runs.finish(RUN, "w1", claim.item_id, done('{"x": 1}'))
    assert not await runs.finish(RUN, "w1", claim.item_id, done())
    counts = await runs.counts(RUN)
    assert (counts.done, counts.calls, counts.prompt_tokens) == (1, 2, 10)
    assert await runs.results(RUN, ["a0"]) == {"a0": '{"x": 1}'}


async def test_claims_of_a_dead_process_are_reclaimed(runs: SqlRunStore) -> None:
    await runs.put_items(RUN, items(3))
    dead = f"{socket.gethostname()}:{2**22 + 12345}:deadbeef"
    assert worker_alive(dead) is False
    alive = new_worker_id()
    assert worker_alive(alive) is True
    assert worker_alive("elsewhere:1:x") is None
    await runs.claim(RUN, dead, 2)
    await runs.claim(RUN, alive, 1)
    assert await runs.reclaim(RUN, lease_s=3600) == 2
    counts = await runs.counts(RUN)
    assert (counts.pending, counts.running) == (2, 1)


async def test_old_claims_expire_after_the_lease(runs: SqlRunStore) -> None:
    await runs.put_items(RUN, items(2))
    await runs.claim(RUN, "remote-host:1:abc", 2)
    assert await runs.reclaim(RUN, lease_s=3600) == 0
    await asyncio.sleep(0.05)
    assert await runs.reclaim(RUN, lease_s=0.01) == 2


async def test_release_returns_a_workers_claims(runs: SqlRunStore) -> None:
    await runs.put_items(RUN, items(3))
    await runs.claim(RUN, "w1", 2)
    await runs.claim(RUN, "w2", 1)
    assert await runs.release(RUN, "w1") == 2
    counts = await runs.counts(RUN)
    assert (counts.pending, counts.running) == (2, 1)


async def test_registering_again_keeps_done_retries_failed_restarts_changed(
    runs: SqlRunStore,
) -> None:
    await runs.put_items(RUN, items(4))
    claims = await runs.claim(RUN, "w", 4)
    by_id = {c.item_id: c for c in claims}
    await runs.finish(RUN, "w", "a0", done())
    await runs.finish(RUN, "w", "a1", Outcome("failed", "{}", 0.1, "timeout"))
    await runs.finish(RUN, "w", "a2", done())
    assert by_id["a3"].attempts == 1  # a3 stays running (claimed by w)
    again = items(4)
    again[2] = NewItem("a2", 2, "a2", "id2", "changed-key")
    unreadable = NewItem(
        "bad", 9, "bad", None, None, status="failed", reason="bad XML", result="{}"
    )
    await runs.put_items(RUN, [*again, unreadable])
    status = {i.item_id: i.status for i in await runs.items(RUN)}
    assert status == {
        "a0": "done",
        "a1": "pending",
        "a2": "pending",
        "a3": "running",
        "bad": "failed",
    }
    assert await runs.final_ids(RUN) == {"a0", "bad"}
    (failed,) = await runs.items(RUN, "failed")
    assert failed.reason == "bad XML"


async def test_sessions_record_workers(runs: SqlRunStore) -> None:
    await runs.start_session(RUN, "w1")
    await runs.heartbeat(RUN, "w1")
    await runs.end_session(RUN, "w1", "finished")
    (session,) = await runs.sessions(RUN)
    assert session.outcome == "finished" and session.seconds >= 0


async def test_run_config_round_trips(runs: SqlRunStore) -> None:
    record = await runs.ensure_run(RUN, "abstract", {"model": "sim", "out": "x"})
    assert record.config == {"model": "sim", "out": "x"}
    assert [r.run_id for r in await runs.list_runs()] == [RUN]
    assert json.loads(json.dumps(record.config)) == record.config
    assert os.environ.get("VERISCRIBE_DB")  # the test database is private


async def test_claims_from_many_connections_at_once_never_overlap(
    db_target: str,
) -> None:
    stores = [await Store.open(db_target) for _ in range(4)]
    try:
        runs = [SqlRunStore(s) for s in stores]
        await runs[0].ensure_run(RUN, "abstract", {})
        await runs[0].put_items(RUN, items(400))

        async def drain(store: SqlRunStore, worker: str) -> list[str]:
            got: list[str] = []
            while claims := await store.claim(RUN, worker, 5):
                for claim in claims:
                    assert await store.finish(RUN, worker, claim.item_id, done())
                got += [c.item_id for c in claims]
            return got

        taken = await asyncio.gather(
            *(drain(r, f"w{i}:{j}") for i, r in enumerate(runs) for j in range(3))
        )
    finally:
        for store in stores:
            await store.close()
    flat = [item for got in taken for item in got]
    assert len(flat) == 400 and set(flat) == {f"a{i}" for i in range(400)}
    assert sum(1 for got in taken if got) > 1  # the work was shared


async def test_a_heartbeat_keeps_claims_past_the_lease(runs: SqlRunStore) -> None:
    await runs.put_items(RUN, items(2))
    await runs.start_session(RUN, "remote-host:1:abc")
    await runs.claim(RUN, "remote-host:1:abc", 1)
    await runs.claim(RUN, "remote-host:2:def", 1)
    # The lease is long next to one statement: on a loaded machine the heartbeat and
    # the reclaim that follows it can be a few tenths of a second apart.
    await asyncio.sleep(1.1)
    await runs.heartbeat(RUN, "remote-host:1:abc")
    assert await runs.reclaim(RUN, lease_s=1.0) == 1
    held = {i.claimed_by for i in await runs.items(RUN, "running")}
    assert held == {"remote-host:1:abc"}
    (session,) = await runs.sessions(RUN)
    assert session.outcome is None
