"""The veriscribe database: one SQLite file for runs, checkpoints, corpora and call logs."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import aiosqlite

from veriscribe.errors import ConfigError
from veriscribe.store.migrations import MIGRATIONS

# Several processes (batch workers, a chat) may open the same file: WAL lets readers
# and one writer proceed together, and the busy timeout waits out short write locks.
# Reads run as one `execute_fetchall` each: a cursor left open across an `await` keeps a
# read snapshot open on the shared connection, and a write from another coroutine inside
# that stale snapshot fails at once with "database is locked" when another process has
# written meanwhile (WAL cannot upgrade a stale snapshot; the busy timeout does not help).
_PRAGMAS = (
    # The busy timeout first: switching to WAL takes a lock, and without a timeout a
    # second process opening the file at that moment fails at once ("locked").
    "PRAGMA busy_timeout=30000",
    "PRAGMA journal_mode=WAL",
    "PRAGMA foreign_keys=ON",
    "PRAGMA synchronous=NORMAL",
)


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


class Store:
    """An open veriscribe database (use ``await Store.open(path)`` or ``async with``)."""

    def __init__(self, conn: aiosqlite.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path

    @classmethod
    async def open(cls, path: Path) -> Store:
        """Open (creating and migrating if needed) the database at ``path``."""
        if str(path) != ":memory:":
            path.parent.mkdir(parents=True, exist_ok=True)
        conn = await aiosqlite.connect(str(path), isolation_level=None)
        for pragma in _PRAGMAS:
            await conn.execute(pragma)
        store = cls(conn, path)
        try:
            await store.migrate()
        except BaseException:
            await conn.close()
            raise
        return store

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the connection."""
        await self.conn.close()

    async def migrate(self) -> list[str]:
        """Apply the migrations not applied yet; return their names."""
        await self.conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations "
            "(name TEXT PRIMARY KEY, applied REAL NOT NULL)"
        )
        async with self.conn.execute("SELECT name FROM schema_migrations") as cur:
            done = {row[0] async for row in cur}
        unknown = sorted(done - {m.name for m in MIGRATIONS})
        if unknown:
            raise ConfigError(
                f"the database {self.path} was written by a newer veriscribe (schema "
                f"{', '.join(unknown)}); upgrade veriscribe or set VERISCRIBE_DB to "
                "another file"
            )
        applied = []
        for migration in MIGRATIONS:
            if migration.name in done:
                continue
            await self.conn.execute("BEGIN IMMEDIATE")
            try:
                # A second process may have applied it while this one waited.
                async with self.conn.execute(
                    "SELECT 1 FROM schema_migrations WHERE name = ?", (migration.name,)
                ) as cur:
                    if await cur.fetchone():
                        await self.conn.execute("COMMIT")
                        continue
                for statement in filter(str.strip, migration.sql.split(";")):
                    await self.conn.execute(statement)
                await self.conn.execute(
                    "INSERT INTO schema_migrations VALUES (?, ?)",
                    (migration.name, time.time()),
                )
                await self.conn.execute("COMMIT")
            except BaseException:
                await self.conn.execute("ROLLBACK")
                raise
            applied.append(migration.name)
        return applied

    async def applied_migrations(self) -> list[str]:
        """Return the names of applied migrations, oldest first."""
        async with self.conn.execute(
            "SELECT name FROM schema_migrations ORDER BY applied, name"
        ) as cur:
            return [row[0] async for row in cur]

    async def thread_usage(self, thread_id: str, since: float) -> dict[str, int]:
        """Return the model calls (and cached answers) a graph thread made since a time."""
        async with self.conn.execute(
            "SELECT COALESCE(SUM(outcome != 'cached'), 0), "
            "COALESCE(SUM(outcome = 'cached'), 0), COALESCE(SUM(prompt_tokens), 0), "
            "COALESCE(SUM(output_tokens), 0) FROM llm_calls WHERE thread_id = ? AND at >= ?",
            (thread_id, since),
        ) as cur:
            row = await cur.fetchone()
        calls, cached, prompt, output = row if row else (0, 0, 0, 0)
        return {
            "calls": int(calls),
            "prompt_tokens": int(prompt),
            "output_tokens": int(output),
            "cached_calls": int(cached),
        }

    async def log_call(self, **fields: Any) -> None:
        """Record one model call (model, prompt id, tokens, latency, outcome)."""
        fields.setdefault("at", time.time())
        columns = ", ".join(fields)
        marks = ", ".join("?" for _ in fields)
        await self.conn.execute(
            f"INSERT INTO llm_calls ({columns}) VALUES ({marks})",
            tuple(fields.values()),
        )

    async def cache_get(self, key: str) -> CachedResponse | None:
        """Return the stored response for ``key``, if any."""
        rows = await self.conn.execute_fetchall(
            "SELECT content, prompt_tokens, output_tokens FROM llm_cache WHERE key = ?",
            (key,),
        )
        return CachedResponse(*next(iter(rows))) if rows else None

    async def cache_put(self, key: str, response: CachedResponse) -> None:
        """Store a response under ``key``."""
        await self.conn.execute(
            "INSERT OR REPLACE INTO llm_cache VALUES (?, ?, ?, ?, ?)",
            (
                key,
                response.content,
                response.prompt_tokens,
                response.output_tokens,
                time.time(),
            ),
        )

    async def call_counts(self, run_id: str | None = None) -> dict[str, int]:
        """Return how many logged calls ended in each outcome (for one run or all)."""
        sql = "SELECT outcome, COUNT(*) FROM llm_calls"
        args: tuple[str, ...] = ()
        if run_id is not None:
            sql += " WHERE run_id = ?"
            args = (run_id,)
        rows = await self.conn.execute_fetchall(sql + " GROUP BY outcome", args)
        return {row[0]: row[1] for row in rows}
