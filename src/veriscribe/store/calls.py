"""The model response cache and the call log: what each model call cost and returned."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

from veriscribe.redaction import redact
from veriscribe.results import Usage
from veriscribe.store.db import Row, Store, Tx


@dataclass(frozen=True)
class CachedResponse:
    """A stored model response."""

    content: str
    prompt_tokens: int
    output_tokens: int


def cache_key(*parts: object) -> str:
    """Return a stable key for a model call from its identifying parts."""
    blob = json.dumps(parts, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


async def thread_usage(store: Store, thread_id: str, since: float) -> Usage:
    """Return the model calls (and cached answers) a graph thread made since a time."""
    row = await store.fetchone(
        "SELECT COALESCE(SUM(CASE WHEN outcome <> 'cached' THEN 1 ELSE 0 END), 0), "
        "COALESCE(SUM(CASE WHEN outcome = 'cached' THEN 1 ELSE 0 END), 0), "
        "COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(output_tokens), 0) "
        "FROM llm_calls WHERE thread_id = ? AND at >= ?",
        (thread_id, since),
    )
    calls, cached, prompt, output = row if row else (0, 0, 0, 0)
    return Usage(
        calls=int(calls),
        prompt_tokens=int(prompt),
        output_tokens=int(output),
        cached_calls=int(cached),
    )


async def run_thread_usage(store: Store, run_id: str, thread_id: str) -> Usage:
    """Return the answered model calls of one graph thread of a run (no cached ones)."""
    row = await store.fetchone(
        "SELECT COUNT(*), SUM(prompt_tokens), SUM(output_tokens) "
        "FROM llm_calls WHERE run_id = ? AND thread_id = ? AND outcome = 'ok'",
        (run_id, thread_id),
    )
    calls, prompt, output = row if row else (0, 0, 0)
    return Usage(
        calls=int(calls or 0),
        prompt_tokens=int(prompt or 0),
        output_tokens=int(output or 0),
    )


async def run_calls(store: Store, run_id: str) -> list[Row]:
    """Return every logged attempt of a run: endpoint, outcome, tokens, latency."""
    return await store.fetchall(
        "SELECT endpoint, outcome, prompt_tokens, output_tokens, latency_s "
        "FROM llm_calls WHERE run_id = ?",
        (run_id,),
    )


def _log_statement(fields: dict[str, Any]) -> tuple[str, tuple[Any, ...]]:
    """Return the insert of one call log row and its values (``at`` now if unset).

    The endpoint and the failure detail are redacted: a URL may carry a key or a
    password, and a server may echo the key it refused.
    """
    for name in ("endpoint", "detail"):
        if fields.get(name):
            fields[name] = redact(str(fields[name]))
    fields.setdefault("at", time.time())
    columns = ", ".join(fields)
    marks = ", ".join("?" for _ in fields)
    return f"INSERT INTO llm_calls ({columns}) VALUES ({marks})", tuple(fields.values())


async def log_call(store: Store, **fields: Any) -> None:
    """Record one model call (model, prompt id, tokens, latency, outcome)."""
    await store.execute(*_log_statement(fields))


async def log_answered_call(
    store: Store, fields: dict[str, Any], cached: tuple[str, CachedResponse] | None
) -> None:
    """Record one answered model call and cache its response, in one transaction.

    The same rows as :func:`log_call` then :func:`cache_put`, in one trip to the
    database instead of two: every model call of a batch makes both.
    """
    log = _log_statement(dict(fields))

    def write(tx: Tx) -> None:
        tx.execute(*log)
        if cached is not None:
            tx.execute(*_cache_statement(*cached))

    await store.transaction(write)


async def cache_get(store: Store, key: str) -> CachedResponse | None:
    """Return the stored response for ``key``, if any."""
    row = await store.fetchone(
        "SELECT content, prompt_tokens, output_tokens FROM llm_cache WHERE key = ?",
        (key,),
    )
    return CachedResponse(*row) if row else None


def _cache_statement(key: str, response: CachedResponse) -> tuple[str, tuple[Any, ...]]:
    """Return the upsert of one cached response and its values."""
    return (
        "INSERT INTO llm_cache VALUES (?, ?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET "
        "content = excluded.content, prompt_tokens = excluded.prompt_tokens, "
        "output_tokens = excluded.output_tokens, created = excluded.created",
        (
            key,
            response.content,
            response.prompt_tokens,
            response.output_tokens,
            time.time(),
        ),
    )


async def cache_put(store: Store, key: str, response: CachedResponse) -> None:
    """Store a response under ``key`` (a later one replaces it)."""
    await store.execute(*_cache_statement(key, response))


async def call_counts(store: Store, run_id: str | None = None) -> dict[str, int]:
    """Return how many logged calls ended in each outcome (for one run or all)."""
    sql = "SELECT outcome, COUNT(*) FROM llm_calls"
    args: tuple[str, ...] = ()
    if run_id is not None:
        sql += " WHERE run_id = ?"
        args = (run_id,)
    rows = await store.fetchall(sql + " GROUP BY outcome", args)
    return {row[0]: row[1] for row in rows}
