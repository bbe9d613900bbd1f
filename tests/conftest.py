"""Test-wide guards: no network model calls unless a test asks, and a private database."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings as hypothesis_settings

from pg import ENV, fresh_database, pg_bin, throwaway_server

# Property tests draw the same examples on every run, so the suite's verdict does not
# depend on the draw; VERISCRIBE_HYPOTHESIS=explore draws new ones to look for cases.
hypothesis_settings.register_profile("fixed", derandomize=True)
hypothesis_settings.register_profile("explore", derandomize=False)
hypothesis_settings.load_profile(os.environ.get("VERISCRIBE_HYPOTHESIS", "fixed"))

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
SHARED_DATA = SHARED / "data"

_LOOPBACK = ("127.", "::1", "localhost")
_real_connect = socket.socket.connect


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    host = address[0] if isinstance(address, tuple) else str(address)
    if self.family == socket.AF_UNIX or str(host).startswith(_LOOPBACK):
        return _real_connect(self, address)
    raise ConnectionRefusedError(f"tests may not reach {host!r}")


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Give every test its own database and forbid connections off this machine."""
    monkeypatch.setenv("VERISCRIBE_DB", str(tmp_path / "veriscribe.sqlite"))
    for name in ("VERISCRIBE_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    # Any Ollama a developer runs must not answer tests by accident.
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    yield


@pytest.fixture
def shared_data() -> Path:
    """Return the development data directory, skipping when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip("development data (../shared/data) not present")
    return SHARED_DATA


@pytest.fixture(scope="session")
def pg_admin() -> Iterator[str | None]:
    """Yield the admin DSN of a PostgreSQL server for the tests, or None if there is none."""
    given = os.environ.get(ENV)
    if given:
        yield given
        return
    bindir = pg_bin()
    if bindir is None:
        yield None
        return
    with throwaway_server(bindir) as dsn:
        yield dsn


@pytest.fixture
def pg_dsn(pg_admin: str | None) -> Iterator[str]:
    """Yield the DSN of a fresh, empty PostgreSQL database (skip if there is no server)."""
    if pg_admin is None:
        pytest.skip(f"no PostgreSQL: set {ENV} or install PostgreSQL's server binaries")
    with fresh_database(pg_admin) as dsn:
        yield dsn


@pytest.fixture(params=["sqlite", "postgres"])
def db_target(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> str:
    """Return an empty database of each kind (also set as VERISCRIBE_DB)."""
    if request.param == "sqlite":
        target = str(tmp_path / "v.sqlite")
    else:
        target = request.getfixturevalue("pg_dsn")
    monkeypatch.setenv("VERISCRIBE_DB", target)
    return target
