import sqlite3
from pathlib import Path

import pytest

from veriscribe.errors import ConfigError
from veriscribe.store.db import Store
from veriscribe.store.migrations import MIGRATIONS


async def test_migrations_are_named_recorded_and_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    async with await Store.open(path) as store:
        assert await store.applied_migrations() == [m.name for m in MIGRATIONS]
        assert await store.migrate() == []
    async with await Store.open(path) as again:
        assert await again.migrate() == []
    tables = {
        row[0]
        for row in sqlite3.connect(path).execute(
            "SELECT name FROM sqlite_master WHERE type='table'"
        )
    }
    assert {"llm_calls", "llm_cache", "schema_migrations"} <= tables


async def test_database_file_is_created_under_missing_dirs(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "v.sqlite"
    async with await Store.open(path):
        pass
    assert path.is_file()


async def test_a_database_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    async with await Store.open(path):
        pass
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO schema_migrations VALUES ('9999_from_the_future', 0)")
    with pytest.raises(ConfigError, match="written by a newer veriscribe"):
        await Store.open(path)
