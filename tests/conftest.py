"""Test-wide guards: no network model calls unless a test asks, and a private database.

Every test gets a private default database (``VERISCRIBE_DB``): a SQLite file in its
temporary directory, or, with ``VERISCRIBE_TEST_STORE=postgres``, a fresh PostgreSQL
database on the server ``VERISCRIBE_TEST_PG`` names (or a throwaway one, see
:mod:`pg`). Tests about SQLite files themselves carry ``@pytest.mark.sqlite_only(reason)``
and are skipped in the PostgreSQL pass, as is the SQLite case of ``db_target``: the
default pass runs them.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings as hypothesis_settings

from pg import ENV, fresh_database, pg_bin, throwaway_server
from veriscribe import redaction

STORE_ENV = "VERISCRIBE_TEST_STORE"
STORES = ("sqlite", "postgres")

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


def default_store() -> str:
    """Return the store the suite's tests use by default: sqlite or postgres."""
    value = os.environ.get(STORE_ENV, "").strip().lower() or "sqlite"
    if value not in STORES:
        raise pytest.UsageError(
            f"{STORE_ENV}={value!r} is not a store: use {' or '.join(STORES)}"
        )
    return value


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "sqlite_only(reason): about SQLite files themselves; skipped when "
        f"{STORE_ENV}=postgres (the default pass runs it)",
    )
    default_store()  # a misspelt store stops the run before any test


def pytest_report_header(config: pytest.Config) -> str:
    return f"default test store: {default_store()}"


def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    for item in items:
        marker = item.get_closest_marker("sqlite_only")
        if marker is None:
            continue
        reason = marker.kwargs.get("reason") or (marker.args[0] if marker.args else "")
        if not reason:
            raise pytest.UsageError(f"{item.nodeid}: sqlite_only needs a reason")
        if default_store() == "postgres":
            item.add_marker(pytest.mark.skip(reason=f"SQLite only: {reason}"))


@pytest.fixture(autouse=True)
def _isolated(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[None]:
    """Give every test its own database and forbid connections off this machine."""
    if default_store() == "postgres":
        # The same fresh database as the test's pg_dsn (and db_target's PostgreSQL case).
        monkeypatch.setenv("VERISCRIBE_DB", request.getfixturevalue("pg_dsn"))
        if request.node.get_closest_marker("local_model") is None:
            # With a server database, the error log goes to the data directory: keep
            # it in the test's own (the real-model tests need the real one's models).
            monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    else:
        monkeypatch.setenv("VERISCRIBE_DB", str(tmp_path / "veriscribe.sqlite"))
    for name in ("VERISCRIBE_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    # Any Ollama a developer runs must not answer tests by accident.
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    # Secrets a test's DSNs and endpoints make remembered are forgotten after it.
    monkeypatch.setattr(redaction, "_remembered", set(redaction._remembered))
    yield


@pytest.fixture
def default_db() -> str:
    """Return this test's private default database (what VERISCRIBE_DB names)."""
    return os.environ["VERISCRIBE_DB"]


@pytest.fixture
def new_db(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Callable[[], str]]:
    """Return a maker of more empty databases of the default kind, dropped after."""
    made = 0
    with ExitStack() as stack:

        def make() -> str:
            nonlocal made
            made += 1
            if default_store() == "postgres":
                admin = request.getfixturevalue("pg_admin")
                return stack.enter_context(fresh_database(admin))
            return str(tmp_path / f"extra{made}.sqlite")

        yield make


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
        why = f"no PostgreSQL: set {ENV} or install PostgreSQL's server binaries"
        if default_store() == "postgres":
            pytest.fail(f"{STORE_ENV}=postgres, but {why}")
        pytest.skip(why)
    with fresh_database(pg_admin) as dsn:
        yield dsn


@pytest.fixture(params=["sqlite", "postgres"])
def db_target(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> str:
    """Return an empty database of each kind (also set as VERISCRIBE_DB)."""
    if request.param == "sqlite" and default_store() == "postgres":
        # The PostgreSQL pass runs only the PostgreSQL case; the default pass runs both.
        pytest.skip("the SQLite case runs in the default (SQLite) pass")
    if request.param == "sqlite":
        target = str(tmp_path / "v.sqlite")
    else:
        target = request.getfixturevalue("pg_dsn")
    monkeypatch.setenv("VERISCRIBE_DB", target)
    return target
