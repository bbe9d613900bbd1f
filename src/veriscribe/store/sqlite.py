"""The embedded backend: one SQLite file through ``aiosqlite``."""

from __future__ import annotations

import asyncio
import functools
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

import aiosqlite

from veriscribe.errors import ConfigError
from veriscribe.settings import default_data_dir
from veriscribe.store.db import Params, Row, Store, Tx
from veriscribe.store.dialect import SQLITE

if TYPE_CHECKING:
    from veriscribe.store.sqlite_saver import OneJobSqliteSaver

SETUP_ATTEMPTS = 20
"""Tries of a setup step (WAL switch, checkpoint tables) while other processes set up."""


async def _retry_locked(step: Callable[[], Awaitable[object]]) -> None:
    """Run a setup step, again while SQLite says at once that the file is locked.

    Switching a new file to WAL and creating tables in autocommit can fail at once when
    another process does the same at that moment: the busy timeout does not cover a
    lock upgrade or a journal-mode switch. The steps are idempotent.
    """
    for attempt in range(SETUP_ATTEMPTS):
        try:
            await step()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == SETUP_ATTEMPTS - 1:
                raise
            await asyncio.sleep(0.05 * (attempt + 1))


_PRAGMAS = (
    # The busy timeout first: switching to WAL takes a lock, and without a timeout a
    # second process opening the file at that moment fails at once ("locked").
    "PRAGMA busy_timeout=30000",
    "PRAGMA journal_mode=WAL",
    "PRAGMA foreign_keys=ON",
    "PRAGMA synchronous=NORMAL",
)

T = TypeVar("T")


class SqliteTx:
    """:class:`~veriscribe.store.db.Tx` over a ``sqlite3`` connection."""

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


def _ensure_folder(path: Path) -> None:
    """Create the default database's folder; refuse any other that is missing."""
    folder = path.parent
    if folder.is_dir():
        return
    if folder == default_data_dir():
        folder.mkdir(parents=True, exist_ok=True)
        return
    # A mistyped --db must not leave a trail of new directories behind.
    raise ConfigError(
        f"cannot open the database {path}: no folder {folder} (create it first, or "
        "correct --db or VERISCRIBE_DB)"
    )


class SqliteStore(Store):
    """A veriscribe database in one SQLite file.

    ``conn`` is public for the LangGraph checkpointer alone.
    """

    dialect = SQLITE

    def __init__(self, conn: aiosqlite.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self.target = str(path)
        self._saver: OneJobSqliteSaver | None = None

    @classmethod
    async def connect(cls, path: Path) -> SqliteStore:
        """Open the file (creating it), with its pragmas set.

        Raises:
            ConfigError: The file's folder does not exist and is not the default
                database's, which is created.
        """
        if str(path) != ":memory:":
            _ensure_folder(path)
        conn = await aiosqlite.connect(str(path), isolation_level=None)
        store = cls(conn, path)
        try:
            for pragma in _PRAGMAS:
                await _retry_locked(functools.partial(store.execute, pragma))
        except BaseException:
            await conn.close()
            raise
        return store

    async def close(self) -> None:
        """Close the connection."""
        await self.conn.close()

    async def _job(self, work: Callable[[Tx], T]) -> T:
        """Run ``work`` on the connection's thread as one job; return its result."""
        conn = self.conn

        def job() -> T:
            return work(SqliteTx(conn._conn))

        # aiosqlite's own entry point for running a function on its thread: its public
        # helpers hand cursors back to this thread, which the rules forbid.
        return cast(T, await conn._execute(job))  # type: ignore[no-untyped-call]

    async def transaction(self, work: Callable[[Tx], T]) -> T:
        """Run ``work`` inside ``BEGIN IMMEDIATE`` ... ``COMMIT`` as one job."""
        conn = self.conn

        def job(tx: Tx) -> T:
            tx.execute("BEGIN IMMEDIATE")
            try:
                result = work(tx)
                tx.execute("COMMIT")
            except BaseException:
                # A failed COMMIT or some errors end the transaction themselves.
                if conn._conn.in_transaction:
                    tx.execute("ROLLBACK")
                raise
            return result

        return await self._job(job)

    @asynccontextmanager
    async def _migration_lock(self) -> AsyncIterator[None]:
        # Each migration's BEGIN IMMEDIATE already serialises processes.
        yield

    async def checkpointer(self) -> OneJobSqliteSaver:
        """Return a checkpointer over this store's connection, tables created."""
        from veriscribe.store.sqlite_saver import OneJobSqliteSaver

        if self._saver is None:
            saver = OneJobSqliteSaver(self.conn)
            # Its setup creates tables in autocommit: when another process creates
            # them at the same moment, SQLite refuses at once rather than wait (see
            # `migrate`). The tables are created "if not exists": try again.
            await _retry_locked(saver.setup)
            self._saver = saver
        return self._saver
