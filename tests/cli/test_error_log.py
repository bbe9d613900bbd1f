"""Where the error log goes: beside the database a command uses, else somewhere private."""

from __future__ import annotations

import logging
import os
import stat
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from veriscribe import service
from veriscribe.cli.app import app
from veriscribe.cli.failure import ERROR_LOG_NAME, error_log_path
from veriscribe.errors import InputError

runner = CliRunner()

pytestmark = pytest.mark.sqlite_only(
    "the log of a SQLite database goes beside its file"
)


def fail_with_a_bug(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    async def boom(*_: object, **__: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(service, name, boom)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_db_puts_the_error_log_beside_that_database(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fail_with_a_bug(monkeypatch, "list_runs")
    db = tmp_path / "elsewhere" / "v.sqlite"
    result = runner.invoke(app, ["--db", str(db), "runs", "list"])
    assert result.exit_code == 1
    log = db.parent / ERROR_LOG_NAME
    assert str(log) in result.stderr
    assert "RuntimeError: boom" in log.read_text("utf-8")
    assert not error_log_path().exists()  # not beside VERISCRIBE_DB's database
    assert mode(log) == 0o600


def test_a_workers_own_db_puts_the_error_log_beside_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fail_with_a_bug(monkeypatch, "work_run")
    db = tmp_path / "shared" / "v.sqlite"
    result = runner.invoke(app, ["worker", "r1", "--db", str(db)])
    assert result.exit_code == 1
    log = db.parent / ERROR_LOG_NAME
    assert str(log) in result.stderr and "boom" in log.read_text("utf-8")
    assert not error_log_path().exists()


def test_log_records_go_beside_the_db_too(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    async def noisy(*_: object, **__: object) -> None:
        logging.getLogger("veriscribe.test").warning("something odd")
        raise InputError("x.txt: unreadable")

    monkeypatch.setattr(service, "list_runs", noisy)
    db = tmp_path / "elsewhere" / "v.sqlite"
    result = runner.invoke(app, ["--db", str(db), "runs", "list"])
    assert result.exit_code == 1
    log = db.parent / ERROR_LOG_NAME
    assert "something odd" in log.read_text("utf-8") and mode(log) == 0o600
    assert not error_log_path().exists()


@pytest.fixture
def temp_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Make the system's temporary directory one of the test's own."""
    directory = tmp_path / "tmp"
    directory.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(directory))
    return directory


def bug_with_no_log_beside_the_db(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> str:
    """Run a command that fails with a bug while its database's folder is a file."""
    blocker = tmp_path / "blocker"
    blocker.write_text("not a directory", "utf-8")
    fail_with_a_bug(monkeypatch, "list_runs")
    result = runner.invoke(app, ["--db", str(blocker / "v.sqlite"), "runs", "list"])
    assert result.exit_code == 1 and "a bug in veriscribe" in result.stderr
    return result.stderr


def test_the_fallback_log_is_private_and_follows_no_planted_link(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, temp_dir: Path
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("", "utf-8")
    (temp_dir / ERROR_LOG_NAME).symlink_to(victim)  # where the log used to go
    stderr = bug_with_no_log_beside_the_db(monkeypatch, tmp_path)
    assert victim.read_text("utf-8") == ""
    private = temp_dir / f"veriscribe-{os.getuid()}"
    log = private / ERROR_LOG_NAME
    assert str(log) in stderr.replace("\n", "")
    assert "RuntimeError: boom" in log.read_text("utf-8")
    assert mode(log) == 0o600 and mode(private) == 0o700


def test_a_link_planted_as_the_fallback_log_is_not_followed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, temp_dir: Path
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("", "utf-8")
    private = temp_dir / f"veriscribe-{os.getuid()}"
    private.mkdir(mode=0o700)
    (private / ERROR_LOG_NAME).symlink_to(victim)
    bug_with_no_log_beside_the_db(monkeypatch, tmp_path)
    assert victim.read_text("utf-8") == ""


@pytest.mark.parametrize("planted", ["link", "open"])
def test_a_fallback_directory_not_private_is_refused(
    planted: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, temp_dir: Path
) -> None:
    private = temp_dir / f"veriscribe-{os.getuid()}"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    if planted == "link":
        private.symlink_to(elsewhere)
    else:
        private.mkdir()
        private.chmod(0o777)
    bug_with_no_log_beside_the_db(monkeypatch, tmp_path)
    assert not (elsewhere / ERROR_LOG_NAME).exists()
    assert not (private / ERROR_LOG_NAME).exists()
