"""Many coroutines on one Store: cursors stay on the connection thread, jobs never mix.

Python's sqlite3 shares one prepared statement between the cursors that run the same
SQL, and a cursor resets that statement when it is closed or collected. A cursor
collected on the event loop's thread while the connection thread runs the same SQL
for another coroutine breaks that other statement ("bad parameter or other API
misuse"). See the rules in ``veriscribe.store.db``.
"""

from __future__ import annotations

import asyncio
import functools
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import aiosqlite
import pytest

from veriscribe.documents.articles import Article, Paragraph
from veriscribe.documents.guidelines import read_guideline_path
from veriscribe.service.corpora import add_corpus
from veriscribe.settings import Settings
from veriscribe.store import calls, corpora
from veriscribe.store import runs as runs_db
from veriscribe.store.articles import get_article, put_article, put_articles
from veriscribe.store.calls import CachedResponse
from veriscribe.store.connect import open_database
from veriscribe.store.runs import NewItem, Outcome

_STRAYS: list[str] = []
_MADE: list[int] = []


class _TrackedCursor(sqlite3.Cursor):
    """A cursor that reports being dropped unclosed, or closed off its own thread."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        super().__init__(conn)
        _MADE.append(1)
        self.made_on = threading.get_ident()
        self.closed_on: int | None = None
        self.sql = ""

    def close(self) -> None:
        self.closed_on = threading.get_ident()
        super().close()

    def __del__(self) -> None:
        if self.closed_on != self.made_on:
            how = "never closed" if self.closed_on is None else "closed elsewhere"
            where = "its own" if threading.get_ident() == self.made_on else "another"
            _STRAYS.append(f"{self.sql[:60]!r}: {how}, collected on {where} thread")


class _TrackingConnection(sqlite3.Connection):
    """A connection whose every cursor is a :class:`_TrackedCursor`."""

    def cursor(self, factory: Any = _TrackedCursor) -> Any:
        return super().cursor(factory)

    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        cur = self.cursor()
        cur.sql = sql
        return cur.execute(sql, parameters)

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> Any:
        cur = self.cursor()
        cur.sql = sql
        return cur.executemany(sql, parameters)


@pytest.fixture
def tracked(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Make every Store connection track its cursors; yield the strays found."""
    connect = functools.partial(aiosqlite.connect, factory=_TrackingConnection)
    monkeypatch.setattr(aiosqlite, "connect", connect)
    _STRAYS.clear()
    _MADE.clear()
    yield _STRAYS
    _STRAYS.clear()


def _ngc(shared_data: Path, n: int) -> list[Path]:
    return sorted((shared_data / "guidelines" / "ngc").glob("*.md"))[:n]


@pytest.mark.sqlite_only(reason="tracks the cursors of Python's sqlite3")
async def test_every_cursor_is_closed_on_the_connection_thread(
    tmp_path: Path, tracked: list[str], shared_data: Path
) -> None:
    article = Article("a1", "a1.xml", "T", [Paragraph("Intro", "Text.", ("Intro",))])
    async with await open_database(tmp_path / "v.sqlite") as store:
        await corpora.ensure_corpus(store, "c")
        for doc in read_guideline_path(_ngc(shared_data, 1)[0]):
            await corpora.store_document(store, "c", doc, own_summary_chars=0)
        pending = await corpora.pending_sections(store, "c")
        await asyncio.gather(
            *(
                corpora.set_summaries(
                    store,
                    "c",
                    [corpora.SummaryUpdate(s.doc_id, s.section_id, "S.", "model")],
                )
                for s in pending
            ),
            *(
                calls.log_call(
                    store, backend="sim", model="sim", prompt_id="p", outcome="ok"
                )
                for _ in pending
            ),
        )
        rows = await corpora.sections(store, "c")
        assert pending and sum(r.summary == "S." for r in rows) == len(pending)
        await corpora.get_sections(store, "c", [r.key for r in rows[:3]])
        await corpora.list_corpora(store)
        await corpora.documents(store, "c")
        await corpora.corpus_version(store, "c")
        await calls.cache_put(store, "k", CachedResponse("x", 1, 1))
        assert await calls.cache_get(store, "k") == CachedResponse("x", 1, 1)
        await calls.thread_usage(store, "t", 0.0)
        await calls.call_counts(store)
        key = await put_article(store, article)
        assert (await get_article(store, key)).title == "T"
        await put_articles(store, [article])
        await runs_db.ensure_run(store, "r", "abstract", {})
        await runs_db.put_items(store, "r", [NewItem("i", 0, "i", "a1", key)])
        (claim,) = await runs_db.claim(store, "r", "w", 1)
        await runs_db.heartbeat(store, "r", "w")
        assert await runs_db.finish(
            store, "r", "w", claim.item_id, Outcome("done", "{}", 0.1)
        )
        await runs_db.reclaim(store, "r", 60.0)
        await runs_db.release(store, "r", "w")
        await runs_db.counts(store, "r")
    assert len(_MADE) > 100  # the tracking connection was the one in use
    assert tracked == []


async def test_concurrent_summary_writers_share_one_store(
    db_target: str, shared_data: Path
) -> None:
    # The shape of `corpus add`: many batches of summaries written at once, each with
    # its logged model call, while other coroutines read. Before cursors were closed
    # on the connection thread this failed in nearly every run.
    async with await open_database(db_target) as store:
        await corpora.ensure_corpus(store, "c")
        for path in _ngc(shared_data, 3):
            for doc in read_guideline_path(path):
                await corpora.store_document(store, "c", doc, own_summary_chars=0)
        rows = await corpora.sections(store, "c")
        writers = 20

        async def writer(w: int) -> None:
            mine = rows[w::writers]
            for turn in range(20):
                await corpora.set_summaries(
                    store,
                    "c",
                    [
                        corpora.SummaryUpdate(
                            s.doc_id, s.section_id, f"{turn}", "model"
                        )
                        for s in (mine * 64)[:64]
                    ],
                )
                await calls.log_call(
                    store, backend="sim", model="sim", prompt_id="p", outcome="ok"
                )
                await corpora.get_sections(store, "c", [s.key for s in mine[:2]])

        await asyncio.gather(*(writer(w) for w in range(writers)))
        assert {r.summary for r in await corpora.sections(store, "c")} == {"19"}
        assert await calls.call_counts(store) == {"ok": writers * 20}


async def test_corpus_add_summarises_every_cpgqa_passage(
    shared_data: Path, db_target: str
) -> None:
    passages = shared_data / "guidelines" / "cpgqa" / "passages.jsonl"
    report = await add_corpus(Settings(model="sim"), "cpgqa", [passages])
    assert len(report.added) == 1
    assert sum(report.summaries.values()) == report.sections == 190
    assert "missing" not in report.summaries


async def test_a_failed_transaction_takes_nothing_else_with_it(db_target: str) -> None:
    async with await open_database(db_target) as store:

        def failing(tx: Any) -> None:
            tx.execute("INSERT INTO corpora VALUES ('gone', 0, 0)")
            raise RuntimeError("boom")

        async def log(i: int) -> None:
            await calls.log_call(
                store, backend="sim", model="m", prompt_id=f"{i}", outcome="ok"
            )

        results = await asyncio.gather(
            *(log(i) for i in range(20)),
            store.transaction(failing),
            *(log(i) for i in range(20, 40)),
            return_exceptions=True,
        )
        assert [type(r) for r in results if r is not None] == [RuntimeError]
        assert not await corpora.corpus_exists(store, "gone")
        assert await calls.call_counts(store) == {"ok": 40}
        # The connection is out of the failed transaction: a new one commits.
        await store.transaction(
            lambda tx: tx.execute("INSERT INTO corpora VALUES ('kept', 0, 0)")
        )
        assert await corpora.corpus_exists(store, "kept")


async def test_helpers_return_rows_and_change_counts(db_target: str) -> None:
    async with await open_database(db_target) as store:
        added = await store.executemany(
            "INSERT INTO corpora VALUES (?, ?, ?)", [(f"c{i}", i, i) for i in range(5)]
        )
        assert added == 5
        assert (
            await store.execute("UPDATE corpora SET updated = 9 WHERE created < 2") == 2
        )
        assert await store.fetchone("SELECT COUNT(*) FROM corpora") == (5,)
        assert await store.fetchone("SELECT name FROM corpora WHERE name = 'x'") is None
        rows = await store.fetchall(
            "SELECT name FROM corpora WHERE updated = :u ORDER BY name", {"u": 9}
        )
        assert rows == [("c0",), ("c1",)]
