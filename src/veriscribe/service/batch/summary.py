"""Reading runs back: their state, summaries, listings and results."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Sequence

from veriscribe.errors import NotFound
from veriscribe.results import (
    BatchLine,
    FailedLine,
    RunFailure,
    RunListing,
    RunSession,
    RunSummary,
)
from veriscribe.service.batch.config import LEASE_S
from veriscribe.service.common import open_store
from veriscribe.service.endpoint_usage import endpoint_usage
from veriscribe.settings import Settings
from veriscribe.store import calls, runs
from veriscribe.store.db import Store
from veriscribe.store.runs import Counts, RunRecord, Session, worker_alive


def run_state(record: RunRecord, counts: Counts, sessions: Sequence[Session]) -> str:
    """Return a run's state: finished, running or interrupted (or pending)."""
    if counts.total and counts.remaining == 0:
        return "finished"
    now = time.time()
    live = [
        s
        for s in sessions
        if s.ended is None
        and worker_alive(s.worker) is not False
        and now - s.heartbeat < LEASE_S
    ]
    if live:
        return "running"
    return "interrupted" if sessions else record.status


async def stored_run(store: Store, run_id: str) -> runs.RunRecord:
    """Return the run named ``run_id``.

    Raises:
        NotFound: No run has this id.
    """
    record = await runs.get_run(store, run_id)
    if record is None:
        raise NotFound(f"no run {run_id!r} (see `veriscribe runs list`)")
    return record


async def run_summary(
    store: Store, run_id: str, *, failures: int | None = None
) -> RunSummary:
    """Return a run's summary: config, state, counts, timings, tokens, failures."""
    record = await stored_run(store, run_id)
    counts = await runs.counts(store, run_id)
    sessions = await runs.sessions(store, run_id)
    failed = await runs.items(store, run_id, "failed")
    shown = failed if failures is None else failed[:failures]
    config = record.config
    return RunSummary(
        run_id=run_id,
        status=run_state(record, counts, sessions),
        created=record.created,
        updated=record.updated,
        model=config.get("model"),
        options=config.get("options"),
        inputs=config.get("inputs"),
        out=config.get("out"),
        concurrency=config.get("concurrency"),
        **counts.as_dict(),
        remaining=counts.remaining,
        seconds=round(sum(s.seconds for s in sessions), 3),
        sessions=[RunSession(**dataclasses.asdict(s)) for s in sessions],
        call_log=await calls.call_counts(store, run_id),
        endpoints=await endpoint_usage(store, run_id),
        failures=[
            RunFailure(
                source=item.source,
                id=item.article_id,
                reason=item.reason,
                attempts=item.attempts,
            )
            for item in shown
        ],
    )


async def list_runs(settings: Settings) -> list[RunListing]:
    """Return every run with its counts, newest first."""
    async with open_store(settings) as store:
        listed = []
        for record in await runs.list_runs(store):
            summary = await run_summary(store, record.run_id, failures=0)
            fields = summary.model_dump(exclude={"sessions", "failures", "endpoints"})
            listed.append(RunListing(**fields))
        return listed


async def run_results(settings: Settings, run_id: str) -> list[BatchLine | FailedLine]:
    """Return the output lines of a run's finished items, in input order.

    Raises:
        NotFound: No run has this id.
    """
    async with open_store(settings) as store:
        await stored_run(store, run_id)
        ids = [item.item_id for item in await runs.items(store, run_id)]
        stored = await runs.results(store, run_id, ids)
    lines: list[BatchLine | FailedLine] = []
    for item_id in ids:
        if item_id not in stored:
            continue
        data = json.loads(stored[item_id])
        model = FailedLine if "error" in data else BatchLine
        lines.append(model.model_validate(data))
    return lines


async def show_run(settings: Settings, run_id: str) -> RunSummary:
    """Return one run's summary with all its failures.

    Raises:
        NotFound: No run has this id.
    """
    async with open_store(settings) as store:
        return await run_summary(store, run_id)
