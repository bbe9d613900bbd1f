"""The veriscribe database: one SQLite file for runs, checkpoints, corpora and call logs.

How statements run
==================
Every query in veriscribe follows these rules; this is the one place that states them.

1. **One connection per process.** A :class:`Store` owns one ``aiosqlite`` connection,
   and aiosqlite runs every call on that connection's own thread, one call at a time.
2. **Every statement goes through a Store helper** (:meth:`Store.fetchall`,
   :meth:`Store.fetchone`, :meth:`Store.execute`, :meth:`Store.executemany`,
   :meth:`Store.transaction`). Each is *one job* on the connection thread that runs the
   statement, reads all its rows and closes its cursor before it returns, so no
   ``sqlite3.Cursor`` ever reaches the event loop's thread. Why: Python's ``sqlite3``
   caches prepared statements by SQL text and hands one statement to every cursor that
   runs that text. A cursor that still holds the statement (every ``executemany``
   cursor does, and so does a query not read to its end) resets it when it is closed or
   garbage-collected. Dropped on the event loop's thread while the connection thread
   runs the same SQL for another coroutine, that reset lands in the middle of the other
   ``executemany``: ``sqlite3`` then skips its own reset, binds the next row into a
   statement that is still stepped, and fails with ``sqlite3.InterfaceError: bad
   parameter or other API misuse`` (SQLITE_MISUSE). Closed on the connection thread, a
   cursor's reset can never interrupt another statement.
3. **Nothing is held across an ``await``**: the helpers return lists, numbers or one
   row, never a cursor to iterate. A read left open across an ``await`` also keeps a
   read snapshot open on the shared connection, and a write from another coroutine
   inside that stale snapshot fails at once with "database is locked" when another
   process has written meanwhile (WAL cannot upgrade a stale snapshot; the busy timeout
   does not help).
4. **A transaction is one job too.** :meth:`Store.transaction` runs ``BEGIN
   IMMEDIATE``, a plain synchronous function of a :class:`Tx`, and ``COMMIT`` (or
   ``ROLLBACK`` on any error) on the connection thread without yielding, so no other
   coroutine's statement can fall inside it, no ``await`` can split it, and a
   cancelled caller cannot leave it open. No lock is needed: the connection thread
   already runs one job at a time, and between jobs there is no open cursor or
   transaction to protect.
5. **The LangGraph checkpointer is the one other user of** ``Store.conn``. It keeps its
   own rules (its own lock, cursors closed with ``async with``, ``commit()`` after each
   write); rule 4 keeps its ``commit()`` from ever landing inside one of our
   transactions. Nothing else touches ``Store.conn``.

Several processes (batch workers, a chat) may open the same file: WAL lets readers and
one writer proceed together, and the busy timeout waits out short write locks.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar, cast

import aiosqlite

from veriscribe.errors import ConfigError
from veriscribe.store.migrations import MIGRATIONS, Migration

_PRAGMAS = (
    # The busy timeout first: switching to WAL takes a lock, and without a timeout a
    # second process opening the file at that moment fails at once ("locked").
    "PRAGMA busy_timeout=30000",
    "PRAGMA journal_mode=WAL",
    "PRAGMA foreign_keys=ON",
    "PRAGMA synchronous=NORMAL",
)

Row = tuple[Any, ...]
"""A result row, as ``sqlite3`` returns it."""

Params = Sequence[Any] | Mapping[str, Any]
"""The parameters of one statement: positional (``?``) or named (``:name``)."""

T = TypeVar("T")


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


class Tx:
    """The statements of one transaction: plain calls, run on the connection's thread.

    Only :meth:`Store.transaction` makes one. Like the Store helpers, each call reads
    all its rows and closes its cursor before it returns.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Run a statement and return all its rows."""
        with closing(self._conn.execute(sql, params)) as cur:
            return cur.fetchall()

    def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        """Run a statement and return its first row, or None."""
        with closing(self._conn.execute(sql, params)) as cur:
            row: Row | None = cur.fetchone()
            return row

    def execute(self, sql: str, params: Params = ()) -> int:
        """Run a statement; return the rows it changed (-1 if it is not a change)."""
        with closing(self._conn.execute(sql, params)) as cur:
            return cur.rowcount

    def executemany(self, sql: str, rows: Iterable[Params]) -> int:
        """Run a statement once per parameter row; return how many rows changed."""
        with closing(self._conn.executemany(sql, rows)) as cur:
            return cur.rowcount


class Store:
    """An open veriscribe database (use ``await Store.open(path)`` or ``async with``).

    Run statements only through the helpers below (see the module docstring for why).
    ``conn`` is public for the LangGraph checkpointer alone.
    """

    def __init__(self, conn: aiosqlite.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path

    @classmethod
    async def open(cls, path: Path) -> Store:
        """Open (creating and migrating if needed) the database at ``path``."""
        if str(path) != ":memory:":
            path.parent.mkdir(parents=True, exist_ok=True)
        conn = await aiosqlite.connect(str(path), isolation_level=None)
        store = cls(conn, path)
        try:
            for pragma in _PRAGMAS:
                await store.execute(pragma)
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

    async def _job(self, work: Callable[[Tx], T]) -> T:
        """Run ``work`` on the connection's thread as one job; return its result."""
        conn = self.conn

        def job() -> T:
            return work(Tx(conn._conn))

        # aiosqlite's own entry point for running a function on its thread: its public
        # helpers hand cursors back to this thread, which the rules above forbid.
        return cast(T, await conn._execute(job))  # type: ignore[no-untyped-call]

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Run a statement and return all its rows."""
        return await self._job(lambda tx: tx.fetchall(sql, params))

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        """Run a statement and return its first row, or None."""
        return await self._job(lambda tx: tx.fetchone(sql, params))

    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run a statement; return the rows it changed (-1 if it is not a change)."""
        return await self._job(lambda tx: tx.execute(sql, params))

    async def executemany(self, sql: str, rows: Iterable[Params]) -> int:
        """Run a statement once per parameter row; return how many rows changed."""
        rows = list(rows)  # built here, not on the connection's thread
        return await self._job(lambda tx: tx.executemany(sql, rows))

    async def transaction(self, work: Callable[[Tx], T]) -> T:
        """Run ``work`` inside ``BEGIN IMMEDIATE`` ... ``COMMIT`` as one job; return its result.

        ``work`` is plain synchronous code that runs on the connection's thread; it
        must not block on anything but the database. Any exception it raises rolls the
        transaction back and reaches the caller.
        """

        def job(tx: Tx) -> T:
            tx.execute("BEGIN IMMEDIATE")
            try:
                result = work(tx)
                tx.execute("COMMIT")
            except BaseException:
                # A failed COMMIT or some errors end the transaction themselves.
                if tx._conn.in_transaction:
                    tx.execute("ROLLBACK")
                raise
            return result

        return await self._job(job)

    async def migrate(self) -> list[str]:
        """Apply the migrations not applied yet; return their names."""
        await self.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations "
            "(name TEXT PRIMARY KEY, applied REAL NOT NULL)"
        )
        done = {
            row[0] for row in await self.fetchall("SELECT name FROM schema_migrations")
        }
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
            if await self.transaction(functools.partial(_apply, migration=migration)):
                applied.append(migration.name)
        return applied

    async def applied_migrations(self) -> list[str]:
        """Return the names of applied migrations, oldest first."""
        rows = await self.fetchall(
            "SELECT name FROM schema_migrations ORDER BY applied, name"
        )
        return [row[0] for row in rows]

    async def thread_usage(self, thread_id: str, since: float) -> dict[str, int]:
        """Return the model calls (and cached answers) a graph thread made since a time."""
        row = await self.fetchone(
            "SELECT COALESCE(SUM(outcome != 'cached'), 0), "
            "COALESCE(SUM(outcome = 'cached'), 0), COALESCE(SUM(prompt_tokens), 0), "
            "COALESCE(SUM(output_tokens), 0) FROM llm_calls WHERE thread_id = ? AND at >= ?",
            (thread_id, since),
        )
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
        await self.execute(
            f"INSERT INTO llm_calls ({columns}) VALUES ({marks})",
            tuple(fields.values()),
        )

    async def cache_get(self, key: str) -> CachedResponse | None:
        """Return the stored response for ``key``, if any."""
        row = await self.fetchone(
            "SELECT content, prompt_tokens, output_tokens FROM llm_cache WHERE key = ?",
            (key,),
        )
        return CachedResponse(*row) if row else None

    async def cache_put(self, key: str, response: CachedResponse) -> None:
        """Store a response under ``key``."""
        await self.execute(
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
        rows = await self.fetchall(sql + " GROUP BY outcome", args)
        return {row[0]: row[1] for row in rows}


def _apply(tx: Tx, migration: Migration) -> bool:
    """Apply one migration inside a transaction; False if it was applied meanwhile."""
    # A second process may have applied it while this one waited for the lock.
    if tx.fetchone("SELECT 1 FROM schema_migrations WHERE name = ?", (migration.name,)):
        return False
    for statement in filter(str.strip, migration.sql.split(";")):
        tx.execute(statement)
    tx.execute(
        "INSERT INTO schema_migrations VALUES (?, ?)", (migration.name, time.time())
    )
    return True
