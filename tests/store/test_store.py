import asyncio
import hashlib
import sqlite3
from pathlib import Path

import pytest

from veriscribe.errors import ConfigError
from veriscribe.store import calls, corpora
from veriscribe.store.calls import CachedResponse
from veriscribe.store.connect import open_database
from veriscribe.store.migrations import MIGRATIONS


async def test_migrations_are_named_recorded_and_idempotent(db_target: str) -> None:
    async with await open_database(db_target) as store:
        assert await store.applied_migrations() == [m.name for m in MIGRATIONS]
        assert await store.migrate() == []
    async with await open_database(db_target) as again:
        assert await again.migrate() == []
        for table in ("llm_calls", "llm_cache", "run_items", "corpus_sections"):
            assert await again.fetchone(f"SELECT COUNT(*) FROM {table}") == (0,)


async def test_stores_opened_together_migrate_once(db_target: str) -> None:
    stores = await asyncio.gather(*(open_database(db_target) for _ in range(4)))
    try:
        names = await stores[0].fetchall("SELECT name FROM schema_migrations")
        assert sorted(n for (n,) in names) == sorted(m.name for m in MIGRATIONS)
        # The checkpointer's own migrations, from several stores at once, too.
        await asyncio.gather(*(s.checkpointer() for s in stores))
    finally:
        for store in stores:
            await store.close()


async def test_the_call_log_and_cache_round_trip(db_target: str) -> None:
    async with await open_database(db_target) as store:
        await calls.cache_put(store, "k", CachedResponse("first", 1, 2))
        await calls.cache_put(store, "k", CachedResponse("second", 3, 4))
        assert await calls.cache_get(store, "k") == CachedResponse("second", 3, 4)
        assert await calls.cache_get(store, "other") is None
        for outcome in ("ok", "ok", "cached"):
            await calls.log_call(
                store,
                backend="sim",
                model="m",
                prompt_id="p",
                outcome=outcome,
                prompt_tokens=5,
                output_tokens=2,
                thread_id="t",
                run_id="r",
            )
        usage = await calls.thread_usage(store, "t", 0.0)
        assert usage.model_dump() == {
            "calls": 2,
            "prompt_tokens": 15,
            "output_tokens": 6,
            "cached_calls": 1,
        }
        assert await calls.call_counts(store, "r") == {"ok": 2, "cached": 1}
        (at,) = await store.fetchone("SELECT MAX(at) FROM llm_calls") or (0,)
        assert at > 1.7e9 and at != round(at)  # a full-precision timestamp


async def test_corpus_version_follows_the_documents(db_target: str) -> None:
    async with await open_database(db_target) as store:
        await corpora.ensure_corpus(store, "c")
        await corpora.ensure_corpus(store, "c")  # a second time changes nothing
        assert await corpora.corpus_version(store, "c") == "0:e3b0c44298fc1c14"
        await store.executemany(
            "INSERT INTO corpus_documents VALUES (?, ?, ?, ?, ?, ?)",
            [("c", d, d, d, h, 0.0) for d, h in (("b", "h2"), ("a", "h1"))],
        )
        version = await corpora.corpus_version(store, "c")
        assert version.startswith("2:") and version != "0:e3b0c44298fc1c14"
        assert version == "2:" + hashlib.sha256(b"h1,h2").hexdigest()[:16]


@pytest.mark.sqlite_only(reason="a SQLite file's missing directories")
async def test_a_database_under_missing_dirs_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "v.sqlite"
    with pytest.raises(ConfigError, match="no folder"):
        await open_database(f"sqlite:{path}")
    assert not (tmp_path / "a").exists()  # a mistyped path leaves nothing behind


async def test_a_database_from_a_newer_version_is_refused(db_target: str) -> None:
    async with await open_database(db_target) as store:
        await store.execute(
            "INSERT INTO schema_migrations VALUES ('9999_from_the_future', 0)"
        )
    with pytest.raises(ConfigError, match="written by a newer veriscribe"):
        await open_database(db_target)


async def test_an_unreachable_server_is_one_clear_error() -> None:
    with pytest.raises(ConfigError, match="cannot reach the database") as caught:
        await open_database("postgresql://someone:secret@127.0.0.1:9/none")
    assert "secret" not in str(caught.value)


@pytest.mark.sqlite_only(reason="reads the SQLite file with sqlite3")
def test_a_sqlite_file_is_still_plain_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    asyncio.run(_open_close(path))
    tables = {
        row[0]
        for row in sqlite3.connect(path).execute(
            "SELECT name FROM sqlite_master WHERE type='table'"
        )
    }
    assert {"llm_calls", "llm_cache", "schema_migrations", "runs"} <= tables


async def _open_close(path: Path) -> None:
    async with await open_database(path):
        pass


async def test_text_sorts_by_code_point_on_both_stores(db_target: str) -> None:
    ids = ["b", "B", "_x", "a", "Z9", "é", "a-1", "a1"]
    async with await open_database(db_target) as store:
        await corpora.ensure_corpus(store, "c")
        await store.executemany(
            "INSERT INTO corpus_documents VALUES (?, ?, ?, ?, ?, ?)",
            [("c", d, d, d, "h", 0.0) for d in ids],
        )
        listed = [d.doc_id for d in await corpora.documents(store, "c")]
        if store.dialect.postgres:
            # Whatever the database's locale: every text column sorts by code point.
            other = await store.fetchall(
                "SELECT table_name, column_name FROM information_schema.columns "
                "WHERE table_schema = 'public' AND data_type = 'text' "
                "AND collation_name IS DISTINCT FROM 'C' "
                "AND table_name NOT LIKE 'checkpoint%'"
            )
            assert other == []
    assert listed == sorted(ids)
