"""The veriscribe database: its connection and migrations, in SQLite or PostgreSQL.

``VERISCRIBE_DB`` (or ``--db``) names it: a path (or ``sqlite:PATH``) is an embedded
SQLite file, the default, with no server; a ``postgresql://`` DSN (or libpq's keyword
form, ``host=... dbname=...``) is a PostgreSQL database that workers on many machines
can share. Both hold the same tables, made by the same named migrations, and every
query is written once (see :mod:`veriscribe.store.dialect` for the few spellings that
differ).

:class:`Store` is the connection and its migrations only. The queries of each family of
tables are free async functions that take the Store first, one module a family:
:mod:`~veriscribe.store.articles`, :mod:`~veriscribe.store.corpora`,
:mod:`~veriscribe.store.calls` (response cache and call log) and
:mod:`~veriscribe.store.runs` (batch runs, their items and worker sessions).

How statements run
==================
Every query in veriscribe follows these rules; this is the one place that states them.

1. **One connection per Store.** A :class:`Store` owns one connection (``aiosqlite``
   for SQLite, a synchronous ``psycopg`` connection for PostgreSQL), and runs every
   call on that connection's own thread, one call at a time.
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
   IMMEDIATE`` (PostgreSQL: ``BEGIN``), a plain synchronous function of a :class:`Tx`,
   and ``COMMIT`` (or ``ROLLBACK`` on any error) on the connection thread without
   yielding, so no other coroutine's statement can fall inside it, no ``await`` can
   split it, and a cancelled caller cannot leave it open. No lock is needed: the connection thread
   already runs one job at a time, and between jobs there is no open cursor or
   transaction to protect.
5. **The LangGraph checkpointer** (:meth:`Store.checkpointer`) is the one other user
   of a connection. On SQLite it shares ``Store.conn`` and keeps its own rules (its own
   lock; each read, and each write with its ``commit()``, one job on the connection's
   thread, see :mod:`veriscribe.store.sqlite_saver`); rule 4 keeps its ``commit()``
   from ever landing inside one of our transactions. On PostgreSQL it has an async
   connection of its own. Nothing else touches them.

Several processes (batch workers, a chat) may open the same database. SQLite: WAL lets
readers and one writer proceed together, and the busy timeout waits out short write
locks. PostgreSQL: processes on any machine that reach the server; migrations (and the
checkpointer's own) run under an advisory lock, so processes starting together apply
each one once.
"""

from __future__ import annotations

import abc
import functools
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from veriscribe.errors import DatabaseUnavailable
from veriscribe.redaction import redact_target
from veriscribe.store.dialect import Dialect
from veriscribe.store.migrations import MIGRATIONS, Migration

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

__all__ = ["Params", "Row", "Store", "Tx", "is_dsn"]

Row = tuple[Any, ...]
"""A result row, as both drivers return it."""

Params = Sequence[Any] | Mapping[str, Any]
"""The parameters of one statement: positional (``?``) or named (``:name``)."""

T = TypeVar("T")

_DSN = re.compile(r"^postgres(ql)?://", re.IGNORECASE)
# libpq's keyword form, "host=db dbname=v user=u password=...": taken for a file
# name, it would have made a SQLite file named after the password.
_KEYWORD_DSN = re.compile(
    r"^\s*(host|hostaddr|port|dbname|user|password|passfile|service|sslmode"
    r"|connect_timeout|options|application_name)\s*=",
    re.IGNORECASE,
)


def is_dsn(target: str | Path) -> bool:
    """Tell whether a database setting names a PostgreSQL server (not a SQLite file).

    A server is named by a URL (``postgresql://...``) or by libpq's keywords
    (``host=db dbname=v ...``); a :class:`~pathlib.Path` is always a file.
    """
    if isinstance(target, Path):
        return False
    return bool(_DSN.match(target) or _KEYWORD_DSN.match(target))


def shown_target(target: str | Path) -> str:
    """Return a database setting fit to print: a DSN's password and keys are hidden.

    The setting is read whole, so its password is hidden whatever it holds.
    """
    return redact_target(str(target))


def sqlite_path(target: str | Path) -> Path:
    """Return the file a SQLite setting names (``sqlite:PATH`` or a plain path)."""
    text = str(target)
    if text.startswith("sqlite:"):
        text = text.removeprefix("sqlite:").removeprefix("//")
    return Path(text).expanduser() if text != ":memory:" else Path(text)


class Tx(Protocol):
    """The statements of one transaction: plain calls, run on the connection's thread.

    Only :meth:`Store.transaction` makes one. Like the Store helpers, each call reads
    all its rows and closes its cursor before it returns.
    """

    def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Run a statement and return all its rows."""
        ...

    def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        """Run a statement and return its first row, or None."""
        ...

    def execute(self, sql: str, params: Params = ()) -> int:
        """Run a statement; return the rows it changed (-1 if it is not a change)."""
        ...

    def executemany(self, sql: str, rows: Iterable[Params]) -> int:
        """Run a statement once per parameter row; return how many rows changed."""
        ...


class Store(abc.ABC):
    """An open veriscribe database (``await open_database(target)``, or ``async with``).

    Run statements only through the helpers below (see the module docstring for why).
    """

    dialect: Dialect
    target: str
    """What was opened: the SQLite file's path or the PostgreSQL DSN."""

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @abc.abstractmethod
    async def close(self) -> None:
        """Close the connection (and the checkpointer's, if one was opened)."""

    @abc.abstractmethod
    async def _job(self, work: Callable[[Tx], T]) -> T:
        """Run ``work`` on the connection's thread as one job; return its result."""

    @abc.abstractmethod
    async def transaction(self, work: Callable[[Tx], T]) -> T:
        """Run ``work`` inside one transaction as one job; return its result.

        ``work`` is plain synchronous code that runs on the connection's thread; it
        must not block on anything but the database. Any exception it raises rolls the
        transaction back and reaches the caller.
        """

    @abc.abstractmethod
    async def checkpointer(self) -> BaseCheckpointSaver[str]:
        """Return this database's LangGraph checkpointer, its tables created."""

    @abc.abstractmethod
    def _migration_lock(self) -> AbstractAsyncContextManager[None]:
        """Return the lock under which migrations run."""

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

    async def migrate(self) -> list[str]:
        """Apply the migrations not applied yet; return their names."""
        async with self._migration_lock():
            create = self.dialect.ddl(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
                "(name TEXT PRIMARY KEY, applied REAL NOT NULL)"
            )
            # In a transaction that takes the write lock first: in autocommit, SQLite
            # reads the schema, then fails at once ("database is locked") when another
            # process created the table meanwhile, instead of waiting its turn.
            await self.transaction(lambda tx: tx.execute(create))
            done = {
                row[0]
                for row in await self.fetchall("SELECT name FROM schema_migrations")
            }
            unknown = sorted(done - {m.name for m in MIGRATIONS})
            if unknown:
                raise DatabaseUnavailable(
                    f"the database {shown_target(self.target)} was written by a newer "
                    f"veriscribe (schema {', '.join(unknown)}); upgrade veriscribe or "
                    "set VERISCRIBE_DB to another database"
                )
            applied = []
            for migration in MIGRATIONS:
                if migration.name in done:
                    continue
                apply = functools.partial(
                    _apply, migration=migration, dialect=self.dialect
                )
                if await self.transaction(apply):
                    applied.append(migration.name)
            return applied

    async def applied_migrations(self) -> list[str]:
        """Return the names of applied migrations, oldest first."""
        rows = await self.fetchall(
            "SELECT name FROM schema_migrations ORDER BY applied, name"
        )
        return [row[0] for row in rows]


def _apply(tx: Tx, migration: Migration, dialect: Dialect) -> bool:
    """Apply one migration inside a transaction; False if it was applied meanwhile."""
    # A second process may have applied it while this one waited for the lock.
    if tx.fetchone("SELECT 1 FROM schema_migrations WHERE name = ?", (migration.name,)):
        return False
    for statement in filter(str.strip, migration.sql.split(";")):
        tx.execute(dialect.ddl(statement))
    tx.execute(
        "INSERT INTO schema_migrations VALUES (?, ?)", (migration.name, time.time())
    )
    return True
