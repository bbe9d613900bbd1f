"""Test-wide guards: no network model calls unless a test asks, and a private database."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

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
