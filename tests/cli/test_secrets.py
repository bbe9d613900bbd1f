"""No password, token or key given in a URL or DSN is ever printed, logged or stored."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from psycopg.conninfo import conninfo_to_dict
from typer.testing import CliRunner

from fake_server import FakeServer
from stores import rows
from veriscribe import service
from veriscribe.cli.app import app
from veriscribe.store.connect import open_database
from veriscribe.store.db import is_dsn

runner = CliRunner()

SECRET = "s3cr%zzet"  # a password with a bad percent escape: libpq quotes it back


@pytest.fixture
def data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Keep the data directory (where a server database's error log goes) private."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path / "data"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    monkeypatch.setenv("VERISCRIBE_LLM__OPENAI_SCHEMA", "json_schema")
    with FakeServer() as fake:
        yield fake


def logged_text(data_dir: Path) -> str:
    return "".join(p.read_text("utf-8") for p in data_dir.rglob("*.log*"))


@pytest.mark.parametrize(
    "dsn",
    [
        f"postgresql://alice:{SECRET}@127.0.0.1:1/v",
        f"postgresql://alice@127.0.0.1:1/v?password={SECRET}",
        f"postgresql://alice@127.0.0.1:1/v?sslmode=disable&password={SECRET}",
    ],
)
@pytest.mark.parametrize("debug", [False, True])
def test_a_dsn_password_with_a_bad_percent_escape_is_never_shown(
    dsn: str, debug: bool, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The DSN does not parse, so this fails before any connection is tried.
    monkeypatch.setattr(sys, "argv", ["veriscribe", "--db", dsn, "runs", "list"])
    args = ["--debug"] * debug + ["--db", dsn, "runs", "list"]
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "cannot reach the database" in lines[0], lines
    assert "zzet" not in result.output and "s3cr" not in result.output
    assert "zzet" not in logged_text(data_dir)


def test_a_dsn_password_in_the_query_is_not_in_the_error_logs_command_line(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dsn = "postgresql://alice@127.0.0.1:1/v?sslmode=disable&password=hunter2pw"
    args = ["--db", dsn, "runs", "list"]
    monkeypatch.setattr(sys, "argv", ["veriscribe", *args])
    monkeypatch.setenv("VERISCRIBE_DB", dsn)

    async def boom(*_: object, **__: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(service, "list_runs", boom)
    result = runner.invoke(app, args)
    assert result.exit_code == 1 and "a bug in veriscribe" in result.stderr
    logged = logged_text(data_dir)  # a server database's log is in the data directory
    assert "unexpected error in `veriscribe --db postgresql://alice@" in logged
    assert "RuntimeError: boom" in logged and "sslmode=disable" in logged
    assert "hunter2pw" not in logged and "hunter2pw" not in result.output


def test_doctor_json_does_not_print_the_base_urls_password(
    server: FakeServer,
) -> None:
    url = server.url.replace("http://", "http://alice:pw-s3cret@")
    result = runner.invoke(
        app, ["doctor", "--model", "openai:fake", "--base-url", url, "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["endpoint"] == f"http://[REDACTED]@127.0.0.1:{server.port}/v1"
    assert "pw-s3cret" not in result.output
    shown = runner.invoke(app, ["doctor", "--model", "openai:fake", "--base-url", url])
    assert shown.exit_code == 0 and "pw-s3cret" not in shown.output


def test_a_key_in_the_base_urls_query_is_never_stored_nor_shown(
    server: FakeServer, default_db: str
) -> None:
    url = f"{server.url}?api-token=tok-s3cret"
    result = runner.invoke(
        app, ["doctor", "--model", "openai:fake", "--base-url", url, "--json"]
    )
    assert "tok-s3cret" not in result.output
    logged = asyncio.run(rows(default_db, "SELECT endpoint, detail FROM llm_calls"))
    assert logged
    for endpoint, detail in logged:
        assert endpoint.endswith("/v1?api-token=[REDACTED]")
        assert "tok-s3cret" not in endpoint and "tok-s3cret" not in (detail or "")


def test_a_keyword_dsn_names_a_server_never_a_file_named_after_its_password(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    dsn = "host=127.0.0.1 port=1 dbname=v user=u password=pw-s3cret connect_timeout=2"
    result = runner.invoke(app, ["--db", dsn, "runs", "list"])
    assert result.exit_code == 1
    assert "cannot reach the database host=127.0.0.1 port=1" in result.stderr
    assert "password=[REDACTED]" in result.stderr
    assert "pw-s3cret" not in result.output
    assert not any("s3cret" in p.name for p in tmp_path.rglob("*"))


def test_a_keyword_dsn_opens_the_server_database(pg_dsn: str) -> None:
    keywords = " ".join(f"{k}={v}" for k, v in conninfo_to_dict(pg_dsn).items())
    assert is_dsn(keywords) and not is_dsn(Path(keywords))

    async def tables() -> list[str]:
        async with await open_database(keywords) as store:
            return await store.applied_migrations()

    assert asyncio.run(tables())
