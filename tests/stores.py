"""Read what a test's database holds, the same way on SQLite and on PostgreSQL."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import psycopg

from veriscribe.store.connect import open_database
from veriscribe.store.db import Row, Store, is_dsn, sqlite_path
from veriscribe.store.dialect import POSTGRES

# Where each database's LangGraph checkpointer keeps checkpoints and pending writes.
_CHECKPOINT_COLUMNS = {
    "sqlite": (("checkpoints", "checkpoint"), ("writes", "value")),
    "postgresql": (
        ("checkpoints", "checkpoint::text"),
        ("checkpoint_blobs", "blob"),
        ("checkpoint_writes", "blob"),
    ),
}


def _as_bytes(value: Any) -> bytes:
    if value is None:
        return b""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    return str(value).encode()


async def rows(db: str | Path, sql: str, params: tuple[Any, ...] = ()) -> list[Row]:
    """Open the database, run one query and return its rows."""
    async with await open_database(db) as store:
        return await store.fetchall(sql, params)


async def tables(store: Store) -> list[str]:
    """Return the names of the database's tables (veriscribe's and the checkpointer's)."""
    if store.dialect.postgres:
        sql = (
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = current_schema() ORDER BY table_name"
        )
    else:
        sql = "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
    return [row[0] for row in await store.fetchall(sql)]


async def dump(db: str | Path) -> str:
    """Return every row of every table as text (to look for what must not be stored)."""
    async with await open_database(db) as store:
        lines = []
        for table in await tables(store):
            for row in await store.fetchall(f"SELECT * FROM {table}"):
                lines.append(f"{table}: {row!r}")
        return "\n".join(lines)


async def checkpoint_bytes(store: Store) -> bytes:
    """Return everything the checkpointer stored, as one byte string."""
    found = []
    for table, column in _CHECKPOINT_COLUMNS[store.dialect.name]:
        for row in await store.fetchall(f"SELECT {column} FROM {table}"):
            found.append(_as_bytes(row[0]))
    return b"".join(found)


def scalar(db: str | Path, sql: str, *args: Any) -> Any:
    """Read one value of another process's database (None while it lacks the table).

    A plain synchronous read on a connection of its own, for tests that watch a
    running CLI process.
    """
    target = str(db)
    try:
        if is_dsn(target):
            with psycopg.connect(target, autocommit=True) as conn:
                row = conn.execute(POSTGRES.sql(sql), args).fetchone()
        else:
            uri = f"file:{sqlite_path(target)}?mode=ro"
            with sqlite3.connect(uri, uri=True, timeout=30) as sq:
                row = sq.execute(sql, args).fetchone()
    except (sqlite3.OperationalError, psycopg.errors.UndefinedTable):
        return None
    return None if row is None else row[0]
