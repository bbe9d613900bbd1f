"""LangGraph's SQLite checkpointer, each write one job on the connection's thread.

The stock ``AsyncSqliteSaver`` makes every write several trips to the connection's
thread: open a cursor, run the statement, commit, close the cursor, each a hand-over
between threads. A batch article writes about twenty checkpoints and task writes, so
those trips were a large part of its orchestration time. :class:`OneJobSqliteSaver`
runs the same statements with the same rows, and commits, in one job (as the Store
helpers do, see :mod:`veriscribe.store.db`), so the database holds exactly what the
stock saver writes; reading a thread's checkpoint and its pending writes is one job too.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from contextlib import closing
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_checkpoint_metadata,
)
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.checkpoint.sqlite.utils import load_pending_writes, pending_writes_sql

__all__ = ["OneJobSqliteSaver"]

Row = tuple[Any, ...]

PUT_CHECKPOINT = (
    "INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, "
    "parent_checkpoint_id, type, checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_WRITES_COLUMNS = (
    "INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, "
    "channel, type, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
# As the stock saver: writes to the special channels replace, the others never do.
REPLACE_WRITES = "INSERT OR REPLACE " + _WRITES_COLUMNS
KEEP_WRITES = "INSERT OR IGNORE " + _WRITES_COLUMNS


GET_CHECKPOINT = (
    "SELECT thread_id, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata "
    "FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"
)
GET_LATEST_CHECKPOINT = (
    "SELECT thread_id, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata "
    "FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? "
    "ORDER BY checkpoint_id DESC LIMIT 1"
)


def _read(
    conn: sqlite3.Connection, sql: str, params: Row, writes_sql: str, namespace: str
) -> tuple[Row | None, list[Row]]:
    """Return a checkpoint row and its pending write rows, on the connection's thread."""
    with closing(conn.execute(sql, params)) as cur:
        row: Row | None = cur.fetchone()
    if row is None:
        return None, []
    with closing(conn.execute(writes_sql, (row[0], namespace, row[1]))) as cur:
        return row, cur.fetchall()


def _write(conn: sqlite3.Connection, sql: str, rows: list[Row]) -> None:
    """Run one statement per row and commit, on the connection's thread."""
    with closing(conn.executemany(sql, rows)):
        pass
    conn.commit()


class OneJobSqliteSaver(AsyncSqliteSaver):
    """The stock SQLite checkpointer, its writes one job each on the connection."""

    async def _job(self, sql: str, rows: list[Row]) -> None:
        """Write the rows in one job on the connection's thread, under the lock."""
        conn = self.conn
        async with self.lock:
            # aiosqlite's entry point for running a function on its thread, as the
            # Store helpers use it.
            await conn._execute(  # type: ignore[no-untyped-call]
                lambda: _write(conn._conn, sql, rows)
            )

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Return a thread's checkpoint (the latest, or the one named) with its writes."""
        await self.setup()
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        checkpoint_ns = configurable.get("checkpoint_ns", "")
        checkpoint_id = get_checkpoint_id(config)
        params: Row
        if checkpoint_id:
            sql, params = GET_CHECKPOINT, (thread_id, checkpoint_ns, checkpoint_id)
        else:
            sql, params = GET_LATEST_CHECKPOINT, (thread_id, checkpoint_ns)
        writes_sql = pending_writes_sql(self._has_task_path)
        conn = self.conn
        async with self.lock:
            row, writes = await conn._execute(  # type: ignore[no-untyped-call]
                lambda: _read(conn._conn, sql, params, writes_sql, checkpoint_ns)
            )
        if row is None:
            return None
        found_thread, found_id, parent_id, type_, checkpoint, metadata = row
        if not checkpoint_id:
            config = {
                "configurable": {
                    "thread_id": found_thread,
                    "checkpoint_ns": checkpoint_ns,
                    "checkpoint_id": found_id,
                }
            }
        return CheckpointTuple(
            config,
            self.serde.loads_typed((type_, checkpoint)),
            cast(
                CheckpointMetadata,
                json.loads(metadata) if metadata is not None else {},
            ),
            {
                "configurable": {
                    "thread_id": found_thread,
                    "checkpoint_ns": checkpoint_ns,
                    "checkpoint_id": parent_id,
                }
            }
            if parent_id
            else None,
            load_pending_writes(writes, self.serde),
        )

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save a checkpoint (as the stock saver does, in one job)."""
        await self.setup()
        configurable = config["configurable"]
        thread_id = configurable["thread_id"]
        checkpoint_ns = configurable["checkpoint_ns"]
        type_, serialized_checkpoint = self.serde.dumps_typed(checkpoint)
        serialized_metadata = json.dumps(
            get_checkpoint_metadata(config, metadata), ensure_ascii=False
        ).encode("utf-8", "ignore")
        row = (
            str(thread_id),
            checkpoint_ns,
            checkpoint["id"],
            configurable.get("checkpoint_id"),
            type_,
            serialized_checkpoint,
            serialized_metadata,
        )
        await self._job(PUT_CHECKPOINT, [row])
        return {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": checkpoint_ns,
                "checkpoint_id": checkpoint["id"],
            }
        }

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's writes (as the stock saver does, in one job)."""
        sql = (
            REPLACE_WRITES
            if all(w[0] in WRITES_IDX_MAP for w in writes)
            else KEEP_WRITES
        )
        await self.setup()
        configurable = config["configurable"]
        rows = [
            (
                str(configurable["thread_id"]),
                str(configurable["checkpoint_ns"]),
                str(configurable["checkpoint_id"]),
                task_id,
                task_path,
                WRITES_IDX_MAP.get(channel, idx),
                channel,
                *self.serde.dumps_typed(value),
            )
            for idx, (channel, value) in enumerate(writes)
        ]
        await self._job(sql, rows)
