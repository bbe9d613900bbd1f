"""Batch runs, their work items and worker sessions, so that many workers can share a run.

A run is a configuration (model, abstract options, inputs, output file) and one item per
input article. Items move ``pending -> running -> done | failed``. A worker *claims*
pending items in one atomic statement, so two workers (processes, machines) never get the
same item; it keeps its claims alive with a heartbeat, and a claim whose worker died (its
process is gone, or its heartbeat is older than the lease) goes back to ``pending``.
Nothing here assumes that one process owns a run.

Every function takes the :class:`~veriscribe.store.db.Store` first and runs the same SQL
on both databases. On PostgreSQL a claim is ``UPDATE ... WHERE item_id IN (SELECT ... FOR
UPDATE SKIP LOCKED LIMIT n) RETURNING``, so workers on many machines claim side by side
without waiting on each other's rows.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

from veriscribe.redaction import redact
from veriscribe.results import Usage
from veriscribe.store.db import Store

ItemStatus = Literal["pending", "running", "done", "failed"]
ITEM_STATUSES: tuple[ItemStatus, ...] = ("pending", "running", "done", "failed")


def new_worker_id() -> str:
    """Return a worker id: host, process id and a random suffix."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def worker_alive(worker: str) -> bool | None:
    """Tell whether a worker's process still runs (None when it is on another host)."""
    host, _, rest = worker.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return None
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass(frozen=True)
class RunRecord:
    """A run as stored."""

    run_id: str
    kind: str
    created: float
    updated: float
    status: str
    config: dict[str, Any]


@dataclass(frozen=True)
class NewItem:
    """An item to register: a readable article (pending) or an unreadable input (failed)."""

    item_id: str
    seq: int
    source: str
    article_id: str | None
    doc_key: str | None
    weight: int = 0
    status: Literal["pending", "failed"] = "pending"
    reason: str | None = None
    result: str | None = None  # the output line of an input that failed to read


@dataclass(frozen=True)
class HeldItem:
    """An item a worker now holds."""

    item_id: str
    source: str
    article_id: str | None
    doc_key: str | None
    attempts: int


@dataclass(frozen=True)
class Outcome:
    """How a worker finished an item."""

    status: Literal["done", "failed"]
    result: str
    seconds: float
    reason: str | None = None
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class ItemRecord:
    """One item as stored (without its result)."""

    item_id: str
    source: str
    article_id: str | None
    status: str
    reason: str | None
    attempts: int
    seconds: float | None
    calls: int
    prompt_tokens: int
    output_tokens: int
    claimed_by: str | None


class CountsDict(TypedDict):
    """A run's counts and usage totals as plain data (what a summary shows)."""

    total: int
    pending: int
    running: int
    done: int
    failed: int
    calls: int
    prompt_tokens: int
    output_tokens: int
    cached_calls: int
    item_seconds: float


@dataclass(frozen=True)
class Counts:
    """Item counts and usage totals of a run."""

    total: int = 0
    pending: int = 0
    running: int = 0
    done: int = 0
    failed: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    cached_calls: int = 0
    item_seconds: float = 0.0
    first_finished: float | None = None
    last_finished: float | None = None

    @property
    def remaining(self) -> int:
        """Return the items not finished yet (pending or running)."""
        return self.pending + self.running

    def as_dict(self) -> CountsDict:
        """Return the counts as a plain dict."""
        return {
            "total": self.total,
            "pending": self.pending,
            "running": self.running,
            "done": self.done,
            "failed": self.failed,
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "output_tokens": self.output_tokens,
            "cached_calls": self.cached_calls,
            "item_seconds": round(self.item_seconds, 3),
        }


@dataclass(frozen=True)
class Session:
    """One worker's time on a run."""

    worker: str
    started: float
    heartbeat: float
    ended: float | None
    outcome: str | None

    @property
    def seconds(self) -> float:
        """Return how long the session lasted (so far, or until its last heartbeat)."""
        return (self.ended or self.heartbeat) - self.started


# One statement picks and marks the items, so a second worker's claim never sees them
# pending. SQLite: a write holds the database's write lock for all its connections, so
# the UPDATE runs alone. PostgreSQL: the inner SELECT locks the rows it picks and skips
# rows another claim holds (FOR UPDATE SKIP LOCKED), so claims run side by side.
# The pick is a materialized CTE: as a plain IN subquery, PostgreSQL may run it again
# for each row it joins, and every run's LIMIT then claims more items than asked.
_CLAIM = """
WITH picked AS MATERIALIZED (
    SELECT item_id FROM run_items
    WHERE run_id = :run_id AND status = 'pending'
    ORDER BY weight DESC, seq
    LIMIT :limit{lock}
)
UPDATE run_items
SET status = 'running', claimed_by = :worker, claimed_at = :now,
    attempts = attempts + 1
WHERE run_id = :run_id AND item_id IN (SELECT item_id FROM picked)
RETURNING item_id, source, article_id, doc_key, attempts, weight, seq
"""

# A known item keeps its finished or claimed state while its content is unchanged;
# everything else takes the new registration (a failed item becomes pending again).
_KEEP = "run_items.doc_key IS NOT DISTINCT FROM excluded.doc_key"
_PUT_ITEM = f"""
INSERT INTO run_items
    (run_id, item_id, seq, source, article_id, doc_key, weight, status, reason,
     result, finished_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (run_id, item_id) DO UPDATE SET
    seq = excluded.seq,
    source = excluded.source,
    article_id = excluded.article_id,
    weight = excluded.weight,
    status = CASE
        WHEN run_items.status IN ('done', 'running') AND {_KEEP}
        THEN run_items.status ELSE excluded.status END,
    reason = CASE
        WHEN run_items.status IN ('done', 'running') AND {_KEEP}
        THEN run_items.reason ELSE excluded.reason END,
    result = CASE
        WHEN run_items.status IN ('done', 'running') AND {_KEEP}
        THEN run_items.result ELSE excluded.result END,
    finished_at = CASE
        WHEN run_items.status IN ('done', 'running') AND {_KEEP}
        THEN run_items.finished_at ELSE excluded.finished_at END,
    claimed_by = CASE
        WHEN run_items.status = 'running' AND {_KEEP}
        THEN run_items.claimed_by ELSE NULL END,
    doc_key = excluded.doc_key
"""


async def ensure_run(
    store: Store, run_id: str, kind: str, config: Mapping[str, object]
) -> RunRecord:
    """Create the run if it is new, else store the new config; return it."""
    now = time.time()
    blob = json.dumps(config, sort_keys=True)
    await store.execute(
        "INSERT INTO runs VALUES (?, ?, ?, ?, 'pending', ?) "
        "ON CONFLICT (run_id) DO UPDATE SET config = excluded.config, "
        "updated = excluded.updated",
        (run_id, kind, now, now, blob),
    )
    record = await get_run(store, run_id)
    assert record is not None
    return record


async def get_run(store: Store, run_id: str) -> RunRecord | None:
    """Return a run, or None."""
    rows = await store.fetchall(
        "SELECT run_id, kind, created, updated, status, config FROM runs "
        "WHERE run_id = ?",
        (run_id,),
    )
    return _run(rows[0]) if rows else None


async def list_runs(store: Store) -> list[RunRecord]:
    """Return every run, newest first."""
    rows = await store.fetchall(
        "SELECT run_id, kind, created, updated, status, config FROM runs "
        "ORDER BY created DESC, run_id"
    )
    return [_run(row) for row in rows]


async def set_status(store: Store, run_id: str, status: str) -> None:
    """Record the run's last known status."""
    await store.execute(
        "UPDATE runs SET status = ?, updated = ? WHERE run_id = ?",
        (status, time.time(), run_id),
    )


async def put_items(store: Store, run_id: str, items: Sequence[NewItem]) -> None:
    """Register items; a known item keeps a finished or claimed state.

    An item already ``done`` or ``running`` with the same content stays so; one that
    failed is registered again as given (so a resumed run retries it); one whose
    content changed starts over.
    """
    if not items:
        return
    now = time.time()
    rows = [
        (
            run_id,
            i.item_id,
            i.seq,
            i.source,
            i.article_id,
            i.doc_key,
            i.weight,
            i.status,
            None if i.reason is None else redact(i.reason),
            i.result,
            now if i.status == "failed" else None,
        )
        for i in items
    ]
    await store.transaction(lambda tx: tx.executemany(_PUT_ITEM, rows))


async def reclaim(store: Store, run_id: str, lease_s: float) -> int:
    """Return claims of dead workers (or older than the lease) to pending."""
    rows = await store.fetchall(
        "SELECT DISTINCT claimed_by FROM run_items "
        "WHERE run_id = ? AND status = 'running' AND claimed_by IS NOT NULL",
        (run_id,),
    )
    workers = [row[0] for row in rows]
    dead = [w for w in workers if worker_alive(w) is False]
    cutoff = time.time() - lease_s
    marks = ", ".join("?" for _ in dead) or "NULL"
    reclaimed = await store.execute(
        "UPDATE run_items SET status = 'pending', claimed_by = NULL, "
        "claimed_at = NULL WHERE run_id = ? AND status = 'running' AND "
        f"(claimed_at < ? OR claimed_by IN ({marks}))",
        (run_id, cutoff, *dead),
    )
    await store.execute(
        "UPDATE run_sessions SET ended = heartbeat, outcome = 'lost' "
        "WHERE run_id = ? AND ended IS NULL AND "
        f"(heartbeat < ? OR worker IN ({marks}))",
        (run_id, cutoff, *dead),
    )
    return max(reclaimed, 0)


async def claim(store: Store, run_id: str, worker: str, limit: int) -> list[HeldItem]:
    """Atomically move up to ``limit`` pending items to ``running`` for a worker."""
    if limit <= 0:
        return []
    rows = await store.fetchall(
        _CLAIM.format(lock=store.dialect.skip_locked),
        {"worker": worker, "now": time.time(), "run_id": run_id, "limit": limit},
    )
    # RETURNING gives rows in no promised order: keep the queue's order.
    ordered = sorted(rows, key=lambda r: (-r[5], r[6]))
    return [HeldItem(r[0], r[1], r[2], r[3], r[4]) for r in ordered]


async def heartbeat(store: Store, run_id: str, worker: str) -> None:
    """Keep a worker's claims and session alive."""
    now = time.time()
    await store.execute(
        "UPDATE run_items SET claimed_at = ? "
        "WHERE run_id = ? AND claimed_by = ? AND status = 'running'",
        (now, run_id, worker),
    )
    await store.execute(
        "UPDATE run_sessions SET heartbeat = ? WHERE run_id = ? AND worker = ?",
        (now, run_id, worker),
    )


async def finish(
    store: Store, run_id: str, worker: str, item_id: str, outcome: Outcome
) -> bool:
    """Record an item's outcome; False when the worker no longer held the claim."""
    usage = outcome.usage
    changed = await store.execute(
        "UPDATE run_items SET status = ?, reason = ?, seconds = ?, calls = ?, "
        "prompt_tokens = ?, output_tokens = ?, cached_calls = ?, result = ?, "
        "finished_at = ?, claimed_by = NULL "
        "WHERE run_id = ? AND item_id = ? AND claimed_by = ? "
        "AND status = 'running'",
        (
            outcome.status,
            None if outcome.reason is None else redact(outcome.reason),
            round(outcome.seconds, 3),
            usage.calls,
            usage.prompt_tokens,
            usage.output_tokens,
            usage.cached_calls,
            outcome.result,
            time.time(),
            run_id,
            item_id,
            worker,
        ),
    )
    return changed == 1


async def release(store: Store, run_id: str, worker: str) -> int:
    """Return a worker's unfinished claims to pending; return how many."""
    released = await store.execute(
        "UPDATE run_items SET status = 'pending', claimed_by = NULL, "
        "claimed_at = NULL WHERE run_id = ? AND claimed_by = ? "
        "AND status = 'running'",
        (run_id, worker),
    )
    return max(released, 0)


async def counts(store: Store, run_id: str) -> Counts:
    """Return the item counts and usage totals of a run."""
    rows = await store.fetchall(
        "SELECT status, COUNT(*), SUM(calls), SUM(prompt_tokens), "
        "SUM(output_tokens), SUM(cached_calls), SUM(seconds), "
        "MIN(finished_at), MAX(finished_at) "
        "FROM run_items WHERE run_id = ? GROUP BY status",
        (run_id,),
    )
    by_status = {row[0]: row for row in rows}
    finished = [r for s, r in by_status.items() if s in ("done", "failed")]
    firsts = [r[7] for r in finished if r[7] is not None]
    lasts = [r[8] for r in finished if r[8] is not None]
    return Counts(
        total=sum(r[1] for r in rows),
        pending=by_status["pending"][1] if "pending" in by_status else 0,
        running=by_status["running"][1] if "running" in by_status else 0,
        done=by_status["done"][1] if "done" in by_status else 0,
        failed=by_status["failed"][1] if "failed" in by_status else 0,
        calls=sum(r[2] or 0 for r in finished),
        prompt_tokens=sum(r[3] or 0 for r in finished),
        output_tokens=sum(r[4] or 0 for r in finished),
        cached_calls=sum(r[5] or 0 for r in finished),
        item_seconds=sum(r[6] or 0.0 for r in finished),
        first_finished=min(firsts) if firsts else None,
        last_finished=max(lasts) if lasts else None,
    )


async def items(
    store: Store, run_id: str, status: ItemStatus | None = None
) -> list[ItemRecord]:
    """Return a run's items in input order, optionally of one status."""
    sql = (
        "SELECT item_id, source, article_id, status, reason, attempts, seconds, "
        "calls, prompt_tokens, output_tokens, claimed_by FROM run_items "
        "WHERE run_id = ?"
    )
    args: tuple[str, ...] = (run_id,)
    if status is not None:
        sql += " AND status = ?"
        args += (status,)
    rows = await store.fetchall(sql + " ORDER BY seq, item_id", args)
    return [ItemRecord(*row) for row in rows]


async def final_ids(store: Store, run_id: str) -> set[str]:
    """Return the ids of the items that are done or failed."""
    rows = await store.fetchall(
        "SELECT item_id FROM run_items WHERE run_id = ? "
        "AND status IN ('done', 'failed') AND result IS NOT NULL",
        (run_id,),
    )
    return {row[0] for row in rows}


async def results(store: Store, run_id: str, item_ids: Iterable[str]) -> dict[str, str]:
    """Return the stored output lines of finished items."""
    wanted = list(item_ids)
    found: dict[str, str] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        rows = await store.fetchall(
            "SELECT item_id, result FROM run_items WHERE run_id = ? "
            f"AND item_id IN ({marks}) AND result IS NOT NULL "
            "AND status IN ('done', 'failed') ORDER BY finished_at, seq",
            (run_id, *chunk),
        )
        found.update({row[0]: row[1] for row in rows})
    return found


async def start_session(store: Store, run_id: str, worker: str) -> None:
    """Record that a worker started on a run."""
    now = time.time()
    await store.execute(
        "INSERT INTO run_sessions VALUES (?, ?, ?, ?, NULL, NULL)",
        (run_id, worker, now, now),
    )


async def end_session(store: Store, run_id: str, worker: str, outcome: str) -> None:
    """Record that a worker stopped, and why."""
    now = time.time()
    await store.execute(
        "UPDATE run_sessions SET ended = ?, heartbeat = ?, outcome = ? "
        "WHERE run_id = ? AND worker = ?",
        (now, now, outcome, run_id, worker),
    )


async def sessions(store: Store, run_id: str) -> list[Session]:
    """Return the run's worker sessions, oldest first."""
    rows = await store.fetchall(
        "SELECT worker, started, heartbeat, ended, outcome FROM run_sessions "
        "WHERE run_id = ? ORDER BY started",
        (run_id,),
    )
    return [Session(*row) for row in rows]


def _run(row: Any) -> RunRecord:
    return RunRecord(row[0], row[1], row[2], row[3], row[4], json.loads(row[5]))
