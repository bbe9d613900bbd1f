"""The phases of a batch session, each on its own: stops, chores, reading, work."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from veriscribe.llm.factory import make_llm
from veriscribe.options import AbstractOptions
from veriscribe.service.batch import (
    BatchProgress,
    RunConfig,
    register_run,
    run_batch,
    stored_run,
)
from veriscribe.service.batch.reading import Reading
from veriscribe.service.batch.runner import BatchRunner
from veriscribe.service.batch.session import Chores, Session, StopRequests
from veriscribe.settings import Settings
from veriscribe.store import runs
from veriscribe.store.connect import open_database
from veriscribe.store.db import Store

RUN = "run-phases"


def dataset(path: Path, n: int) -> Path:
    """Write ``n`` small articles as JSON lines."""
    rows = [
        json.dumps(
            {
                "article_id": f"a{i}",
                "sections": [
                    {
                        "heading": "Results",
                        "text": f"We enrolled {40 + i} adults with asthma in trial "
                        f"{i}. Inhaled steroids cut attacks by {i % 9 + 1} per year.",
                    }
                ],
            }
        )
        for i in range(n)
    ]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await open_database(tmp_path / "v.sqlite") as opened:
        yield opened


def session(
    store: Store, tmp_path: Path, inputs: list[str], out: Path | None = None
) -> Session:
    config = RunConfig(
        model="sim",
        options=AbstractOptions(),
        inputs=inputs,
        out=str(out or tmp_path / "out.jsonl"),
        concurrency=2,
    )
    llm = make_llm("sim", Settings(db=tmp_path / "v.sqlite"), store)
    return Session(store, llm, RUN, config, lease_s=120.0)


async def test_stop_requests_are_counted_and_wake_their_waiters() -> None:
    stop = StopRequests()
    waiter = asyncio.create_task(stop.wait())
    await asyncio.sleep(0)
    assert not stop.requested and not waiter.done()
    assert stop.request() == 1
    await asyncio.wait_for(waiter, 1)
    assert stop.requested and stop.request() == 2


async def test_chores_write_every_queued_line_before_they_end(
    store: Store, tmp_path: Path
) -> None:
    s = session(store, tmp_path, [])
    chores = Chores(s, on_write_error=lambda: pytest.fail("no write error expected"))
    chores.start()
    for i in range(5):
        await s.lines.put((f"k{i}", json.dumps({"source": f"k{i}", "run_id": RUN})))
    assert await chores.end() is None
    written = [json.loads(line)["source"] for line in s.results.path.open()]
    assert written == [f"k{i}" for i in range(5)]


async def test_a_writer_that_fails_asks_for_a_stop_and_says_why(
    store: Store, tmp_path: Path
) -> None:
    s = session(store, tmp_path, [], out=tmp_path / "gone" / "out.jsonl")
    stops: list[bool] = []
    chores = Chores(s, on_write_error=lambda: stops.append(True))
    chores.start()
    await s.lines.put(("k", json.dumps({"source": "k", "run_id": RUN})))
    await asyncio.sleep(0.2)
    problem = await chores.end()
    assert isinstance(problem, FileNotFoundError) and stops == [True]


async def test_reading_a_new_run_returns_with_its_first_chunk_and_ends_on_request(
    store: Store, tmp_path: Path
) -> None:
    data = dataset(tmp_path / "many.jsonl", 100)
    s = session(store, tmp_path, [str(data)])
    await runs.ensure_run(store, RUN, "abstract", s.config.as_dict())
    reading = Reading(s, None)
    await reading.start_beside()
    # The first chunk is stored; the rest waits until the session is open.
    assert reading.under_way()
    assert (await runs.counts(store, RUN)).total == 32
    reading.opened.set()
    reading.calls_out.set()
    arrived = await reading.first_of(set())
    assert arrived and reading.arrived.is_set()
    assert await reading.end() is None
    assert not reading.under_way() and reading.task is None
    # Ended before the file was read through: the run cannot finish.
    if (await runs.counts(store, RUN)).total < 100:
        assert not reading.complete


async def test_reading_that_fails_raises_where_the_work_asks(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = dataset(tmp_path / "many.jsonl", 100)
    s = session(store, tmp_path, [str(data)])
    await runs.ensure_run(store, RUN, "abstract", s.config.as_dict())
    put = runs.put_items
    chunks = 0

    async def failing_second_chunk(*args: object) -> None:
        nonlocal chunks
        chunks += 1
        if chunks == 2:
            raise OSError("disk full")
        await put(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(runs, "put_items", failing_second_chunk)
    reading = Reading(s, None)
    await reading.start_beside()
    reading.opened.set()
    reading.calls_out.set()
    assert reading.task is not None
    await asyncio.wait({reading.task})
    with pytest.raises(OSError, match="disk full"):
        reading.under_way()
    assert await reading.end() is None  # raised once, where the work asked


async def test_a_second_stop_cancels_the_articles_in_flight_and_a_rerun_loses_nothing(
    tmp_path: Path, db_target: str
) -> None:
    data = dataset(tmp_path / "few.jsonl", 4)
    out = tmp_path / "out.jsonl"
    cfg = Settings(db=db_target, model="sim:latency=0.2")
    options = AbstractOptions()
    rid = await register_run(cfg, [str(data)], out, options, concurrency=2)
    async with await open_database(db_target) as store:
        config = RunConfig.from_dict((await stored_run(store, rid)).config)
        llm = make_llm(config.model, cfg, store)
        stops: list[int] = []

        def stop_twice(progress: BatchProgress) -> None:
            # Once calls are out, as a second Ctrl-C would come.
            if not stops and progress.calls_in_flight:
                stops.append(progress.calls_in_flight)
                runner.request_stop()
                runner.request_stop()

        runner = BatchRunner(store, llm, rid, config, on_progress=stop_twice)
        summary = await asyncio.wait_for(runner.run(), 60)
        assert stops
        assert summary.interrupted and summary.session is not None
        assert summary.session.outcome == "interrupted"
        # Nothing of the cancelled articles finished; none stays claimed.
        assert summary.done == summary.session.processed == 0
        assert (await runs.counts(store, rid)).running == 0
        assert (await stored_run(store, rid)).status == "interrupted"
    again = await run_batch(
        cfg,
        [str(data)],
        out,
        options,
        run_id=rid,
        handle_signals=False,
    )
    assert (again.total, again.done, again.failed) == (4, 4, 0)
    sources = [json.loads(line)["source"] for line in out.read_text().splitlines()]
    assert len(sources) == len(set(sources)) == 4
