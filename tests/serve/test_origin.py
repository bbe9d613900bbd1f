"""On loopback, the server answers only its own names and takes changes from its pages."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from typer.testing import CliRunner

from veriscribe.cli.app import app as cli_app
from veriscribe.errors import ConfigError
from veriscribe.serve import ServeConfig, create_app
from veriscribe.serve.guard import ORIGINS_ENV, parse_origin
from veriscribe.settings import Settings

DOC = ("files", ("planted.md", b"# Planted\n\n## Advice\n\nA planted section.\n"))


def make_app(tmp_path: Path, **config: Any) -> FastAPI:
    return create_app(
        ServeConfig(settings=Settings(model="sim"), work_dir=tmp_path, **config)
    )


async def client_for(app: FastAPI, base_url: str) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=transport, base_url=base_url) as http:
            yield http


@pytest.fixture
async def http(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    async for client in client_for(make_app(tmp_path), "http://127.0.0.1:8000"):
        yield client


def refused(response: httpx.Response) -> str:
    assert response.status_code == 403, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["type"] == "urn:veriscribe:problem:foreign-origin"
    return str(body["detail"])


async def upload(http: httpx.AsyncClient, **headers: str) -> httpx.Response:
    return await http.post(
        "/v1/corpora/planted/documents", files=[DOC], headers=headers
    )


async def test_a_foreign_origin_cannot_change_anything(
    http: httpx.AsyncClient,
) -> None:
    detail = refused(await upload(http, origin="http://evil.example"))
    assert "'http://evil.example'" in detail
    assert f"--allow-origin http://evil.example (or {ORIGINS_ENV})" in detail
    # Another port of this machine is another origin too; so is a sandboxed page.
    refused(await upload(http, origin="http://127.0.0.1:9000"))
    refused(await upload(http, origin="null"))
    # Without Origin, the browser's Sec-Fetch-Site still gives a foreign page away.
    refused(await upload(http, **{"sec-fetch-site": "cross-site"}))
    assert (await http.get("/v1/corpora/planted")).status_code == 404
    verify = {"answer": "Text.", "corpus": "planted"}
    refused(await http.post("/v1/verify", json=verify, headers={"origin": "null"}))
    # Reading needs no Origin check: a foreign page cannot read the answer.
    listed = await http.get("/v1/corpora", headers={"origin": "http://evil.example"})
    assert listed.status_code == 200


async def test_the_servers_own_page_and_clients_without_origin_may(
    http: httpx.AsyncClient,
) -> None:
    own = await upload(
        http, origin="http://127.0.0.1:8000", **{"sec-fetch-site": "same-origin"}
    )
    assert own.status_code == 200, own.text
    again = await upload(http)  # curl, scripts: no Origin
    assert again.status_code == 200, again.text
    assert again.json()["unchanged"] == ["planted"]


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "10.0.0.5"])
async def test_a_foreign_host_reads_nothing(http: httpx.AsyncClient, host: str) -> None:
    # A name an attacker points at 127.0.0.1 (DNS rebinding) arrives as its Host.
    for path in ("/v1/corpora", "/", "/healthz"):
        detail = refused(await http.get(path, headers={"host": host}))
        assert host in detail and "--allow-origin" in detail


@pytest.mark.parametrize("host", ["localhost:8000", "127.0.0.1", "[::1]:8000"])
async def test_loopback_names_are_answered(http: httpx.AsyncClient, host: str) -> None:
    assert (await http.get("/v1/corpora", headers={"host": host})).status_code == 200


async def test_an_allowed_origin_may_call_and_read(tmp_path: Path) -> None:
    app = make_app(tmp_path, allow_origins=("http://Tools.Local:3000/",))
    async for http in client_for(app, "http://127.0.0.1:8000"):
        allowed = await upload(http, origin="http://tools.local:3000")
        assert allowed.status_code == 200, allowed.text
        assert allowed.headers["access-control-allow-origin"] == (
            "http://tools.local:3000"
        )
        preflight = await http.options(
            "/v1/verify",
            headers={
                "origin": "http://tools.local:3000",
                "access-control-request-method": "POST",
                "access-control-request-headers": "authorization, content-type",
            },
        )
        assert preflight.status_code == 200, preflight.text
        # Its name is this server's too; other origins are still refused.
        named = await http.get("/v1/corpora", headers={"host": "tools.local:3000"})
        assert named.status_code == 200
        refused(await upload(http, origin="http://tools.local:4000"))


async def test_off_loopback_the_token_guards_instead(tmp_path: Path) -> None:
    token = "a-long-enough-test-token-0123"
    app = make_app(tmp_path, host="0.0.0.0", token=token)
    async for http in client_for(app, "http://veriscribe.example.org"):
        auth = {"authorization": f"Bearer {token}"}
        assert (await http.get("/v1/corpora", headers=auth)).status_code == 200


@pytest.mark.parametrize(
    ("given", "origin"),
    [
        ("http://localhost:3000", "http://localhost:3000"),
        ("HTTPS://Example.org:443/", "https://example.org"),
        ("http://[::1]:8080", "http://[::1]:8080"),
    ],
)
def test_origins_are_read_as_browsers_send_them(given: str, origin: str) -> None:
    assert parse_origin(given) == origin


@pytest.mark.parametrize(
    "given",
    [
        "*",
        "null",
        "localhost:3000",
        "ftp://example.org",
        "http://example.org/app",
        "http://user@example.org",
        "http://example.org:99999",
    ],
)
def test_what_is_not_an_origin_is_refused(given: str) -> None:
    with pytest.raises(ConfigError, match="not a web origin"):
        parse_origin(given)


def test_serve_refuses_a_bad_origin_in_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli_app,
        ["serve", "--model", "sim", "--db", str(tmp_path / "db.sqlite")],
        env={ORIGINS_ENV: "http://ok.local:3000 example.org/app"},
    )
    assert result.exit_code == 1, result.output
    assert "'example.org/app' is not a web origin" in result.output
    assert "Traceback" not in result.output
