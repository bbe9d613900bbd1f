"""The shared backend: a PostgreSQL database that processes on many machines reach.

A :class:`PostgresStore` holds one synchronous ``psycopg`` connection in autocommit
mode and runs every job on one thread of its own, so the statement rules of
:mod:`veriscribe.store.db` hold unchanged: one job at a time, nothing held across an
``await``, a transaction one job. The LangGraph checkpointer (the official
``AsyncPostgresSaver``) gets an async connection of its own: every operation of one
saver takes one lock anyway, so more connections in one process add nothing; more
processes do.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import psycopg

from veriscribe.errors import DatabaseUnavailable
from veriscribe.redaction import redact, remember_secrets_in, target_secrets
from veriscribe.store.db import Params, Row, Store, Tx, shown_target
from veriscribe.store.dialect import POSTGRES

if TYPE_CHECKING:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

T = TypeVar("T")

MIGRATION_LOCK = 0x7665726973637269
"""The advisory lock key under which migrations run ("veriscri" as a bigint)."""

CONNECT_TIMEOUT_S = 10
LOCK_POLL_S = 0.05


class PgTx:
    """:class:`~veriscribe.store.db.Tx` over a ``psycopg`` connection."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Run a statement and return all its rows."""
        with self._conn.cursor() as cur:
            cur.execute(POSTGRES.sql(sql), params)
            return list(cur.fetchall()) if cur.description is not None else []

    def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        """Run a statement and return its first row, or None."""
        with self._conn.cursor() as cur:
            cur.execute(POSTGRES.sql(sql), params)
            if cur.description is None:
                return None
            row: Row | None = cur.fetchone()
            return row

    def execute(self, sql: str, params: Params = ()) -> int:
        """Run a statement; return the rows it changed (-1 if it is not a change)."""
        with self._conn.cursor() as cur:
            cur.execute(POSTGRES.sql(sql), params)
            return cur.rowcount

    def executemany(self, sql: str, rows: Iterable[Params]) -> int:
        """Run a statement once per parameter row; return how many rows changed."""
        with self._conn.cursor() as cur:
            cur.executemany(POSTGRES.sql(sql), rows)
            return cur.rowcount


def unreachable(dsn: str, exc: Exception) -> DatabaseUnavailable:
    """Return why the database cannot be reached, in one line that holds no secret.

    Every psycopg error counts, not only a failed connection: a DSN that does not
    parse (a bad percent escape in the password) is quoted back by libpq.
    """
    # libpq's message spans lines (the failure, then hints): one line is shown.
    detail = " ".join(str(exc).split()) or type(exc).__name__
    return DatabaseUnavailable(
        redact(
            f"cannot reach the database {shown_target(dsn)}: {detail}",
            also=target_secrets(dsn),
        )
    )


def _connect(dsn: str) -> psycopg.Connection[Any]:
    try:
        return psycopg.connect(
            dsn,
            autocommit=True,
            connect_timeout=CONNECT_TIMEOUT_S,
            client_encoding="utf8",
        )
    except psycopg.Error as exc:
        raise unreachable(dsn, exc) from exc


class PostgresStore(Store):
    """A veriscribe database in PostgreSQL."""

    dialect = POSTGRES

    def __init__(
        self, conn: psycopg.Connection[Any], dsn: str, executor: ThreadPoolExecutor
    ) -> None:
        self.conn = conn
        self.target = dsn
        self._executor = executor
        self._saver: AsyncPostgresSaver | None = None
        self._saver_conn: psycopg.AsyncConnection[Any] | None = None

    @classmethod
    async def connect(cls, dsn: str) -> PostgresStore:
        """Connect to the server; the connection's jobs run on a thread of its own."""
        # Whatever quotes the DSN later (a driver error, a traceback), its
        # password stays hidden.
        remember_secrets_in(dsn)
        executor = ThreadPoolExecutor(1, thread_name_prefix="veriscribe-pg")
        loop = asyncio.get_running_loop()
        try:
            conn = await loop.run_in_executor(executor, _connect, dsn)
        except BaseException:
            executor.shutdown(wait=False)
            raise
        return cls(conn, dsn, executor)

    async def close(self) -> None:
        """Close the connections and the thread."""
        try:
            if self._saver_conn is not None:
                await self._saver_conn.close()
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(self._executor, self.conn.close)
        finally:
            self._executor.shutdown(wait=False)

    async def _job(self, work: Callable[[Tx], T]) -> T:
        """Run ``work`` on the connection's thread as one job; return its result."""
        conn = self.conn
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, lambda: work(PgTx(conn)))

    async def transaction(self, work: Callable[[Tx], T]) -> T:
        """Run ``work`` inside ``BEGIN`` ... ``COMMIT`` as one job; return its result."""
        conn = self.conn

        def job(tx: Tx) -> T:
            with conn.transaction():
                return work(tx)

        return await self._job(job)

    @asynccontextmanager
    async def _migration_lock(self) -> AsyncIterator[None]:
        # A session lock on this connection: processes that start together take
        # turns, and each applies only what the one before it left undone. It is
        # polled, not waited for: a session blocked in pg_advisory_lock() sits in an
        # open statement, and the checkpointer's CREATE INDEX CONCURRENTLY (run under
        # this lock) waits for every open statement to end: a deadlock no one sees.
        while True:
            row = await self.fetchone(
                "SELECT pg_try_advisory_lock(?)", (MIGRATION_LOCK,)
            )
            if row is not None and row[0]:
                break
            await asyncio.sleep(LOCK_POLL_S)
        try:
            yield
        finally:
            await self.execute("SELECT pg_advisory_unlock(?)", (MIGRATION_LOCK,))

    async def checkpointer(self) -> AsyncPostgresSaver:
        """Return the PostgreSQL checkpointer on its own connection, tables created."""
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        from psycopg.rows import dict_row

        if self._saver is None:
            connect = functools.partial(
                psycopg.AsyncConnection.connect,
                self.target,
                autocommit=True,
                prepare_threshold=0,
                row_factory=dict_row,
                connect_timeout=CONNECT_TIMEOUT_S,
                client_encoding="utf8",
            )
            try:
                self._saver_conn = await connect()
            except psycopg.Error as exc:
                raise unreachable(self.target, exc) from exc
            saver = AsyncPostgresSaver(self._saver_conn)
            # Its setup() is not safe to run from several processes at once.
            async with self._migration_lock():
                await saver.setup()
            self._saver = saver
        return self._saver
