"""The API on the simulated model, and a client that talks to it in process."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from veriscribe.serve import ServeConfig, create_app
from veriscribe.settings import Settings


@pytest.fixture
def app(tmp_path: Path) -> FastAPI:
    config = ServeConfig(
        settings=Settings(model="sim"), work_dir=tmp_path / "serve", poll_s=0.05
    )
    return create_app(config)


@pytest.fixture
async def http(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client,
    ):
        yield client
