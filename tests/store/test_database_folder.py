"""A SQLite database's folder: the default one is made, a mistyped one refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from veriscribe.cli.app import app
from veriscribe.store import sqlite
from veriscribe.store.connect import open_database

runner = CliRunner()

pytestmark = pytest.mark.sqlite_only("about SQLite files themselves")


@pytest.mark.parametrize("where", ["flag", "env"])
def test_a_database_in_a_missing_folder_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    db = tmp_path / "nonexistent" / "dir" / "x.sqlite"
    if where == "flag":
        result = runner.invoke(app, ["--db", str(db), "corpus", "list"])
    else:
        monkeypatch.setenv("VERISCRIBE_DB", str(db))
        result = runner.invoke(app, ["corpus", "list"])
    assert result.exit_code == 1
    (line,) = result.stderr.strip().splitlines()
    assert f"no folder {db.parent}" in line and "bug" not in line
    assert not (tmp_path / "nonexistent").exists()


async def test_the_default_database_folder_is_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "home" / ".local" / "share" / "veriscribe"
    monkeypatch.setattr(sqlite, "default_data_dir", lambda: data)
    store = await open_database(data / "veriscribe.sqlite")
    await store.close()
    assert (data / "veriscribe.sqlite").is_file()
