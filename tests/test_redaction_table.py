"""The redaction table: every form a DSN or URL password or key takes, never shown.

Each form is checked through the redaction itself (a message that quotes the setting,
the setting read whole, what libpq and httpx make of it) and end to end: a command
given it (stderr, the error log and its command line), the call log, and the HTTP
server's probe, a 503 and an SSE ``error`` event. A password is made of three chunks
that appear nowhere else, so a piece of one cut out by any parser is caught too.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict
from typer.testing import CliRunner

from fake_server import FakeServer
from qa_helpers import GUIDELINE
from stores import rows
from veriscribe import service
from veriscribe.cli.app import app as cli_app
from veriscribe.redaction import (
    REDACTED,
    redact,
    redact_command,
    redact_target,
    target_secrets,
)
from veriscribe.serve import ServeConfig, create_app
from veriscribe.settings import Settings

CHUNKS = ("zQ7xk", "wK4pj", "mJ2vr")
A, B, C = CHUNKS
DOWN = "127.0.0.1:1"  # nothing listens: refused at once
PORT = "{port}"  # a base URL's port: the fake model server's

runner = CliRunner()


@dataclass(frozen=True)
class Form:
    """One way a setting carries a secret."""

    name: str
    value: str
    password: str | None = None
    """The password libpq or httpx reads out of it (None: neither accepts it)."""
    in_text: bool = True
    """Hidden by the patterns alone, in a message that quotes it (not read whole)."""
    refused: bool = False
    """A base URL that HTTP clients would cut short: refused with a clear line."""


DSNS = [
    Form("url-hash", f"postgresql://alice:{A}#{B}@{DOWN}/v", f"{A}#{B}"),
    Form("url-slash", f"postgresql://alice:{A}/{B}@{DOWN}/v"),
    Form("url-question", f"postgresql://alice:{A}?{B}@{DOWN}/v", f"{A}?{B}"),
    # libpq ends the password at the first '@', HTTP clients at the last.
    Form("url-at", f"postgresql://alice:{A}@{B}@{DOWN}/v", A),
    # libpq refuses a blank in a URL, quoting the password back.
    Form("url-blank", f"postgresql://alice:{A} {B}@{DOWN}/v"),
    Form("url-percent", f"postgresql://alice:{A}%40{B}%2F{C}@{DOWN}/v", f"{A}@{B}/{C}"),
    Form("url-bad-escape", f"postgresql://alice:{A}%zz{B}@{DOWN}/v"),
    # Blanks and a '/' together: only the setting read whole knows where it ends.
    Form("url-all", f"postgresql://alice:{A} #?%{B}/{C}@{DOWN}/v", in_text=False),
    Form(
        "keyword-quoted",
        f"host=127.0.0.1 port=1 user=alice password='{A} {B} \\' {C}' dbname=v",
        f"{A} {B} ' {C}",
    ),
    Form(
        "keyword-escaped",
        f"host=127.0.0.1 port=1 user=alice password={A}\\ {B} dbname=v",
        f"{A} {B}",
    ),
    # A blank left unquoted: libpq refuses the DSN and quotes the word after it.
    Form(
        "keyword-unquoted-blank",
        f"host=127.0.0.1 port=1 user=alice password={A} {B} dbname=v",
        in_text=False,
    ),
    Form("query-hash", f"postgresql://alice@{DOWN}/v?password={A}#{B}", f"{A}#{B}"),
    Form(
        "query-amp",
        f"postgresql://alice@{DOWN}/v?sslmode=disable&password={A}%26{B}",
        f"{A}&{B}",
    ),
    Form("query-sslpassword", f"postgresql://alice@{DOWN}/v?sslpassword={A}{B}"),
]

BASE_URLS = [
    # HTTP clients end the host part at '/ ? #': these are refused, not cut.
    Form("base-slash", f"http://alice:{A}/{B}@127.0.0.1:{PORT}/v1", refused=True),
    Form("base-hash", f"http://alice:{A}#{B}@127.0.0.1:{PORT}/v1", refused=True),
    Form("base-question", f"http://alice:{A}?{B}@127.0.0.1:{PORT}/v1", refused=True),
    Form("base-blank", f"http://alice:{A} {B}@127.0.0.1:{PORT}/v1", f"{A} {B}"),
    Form("base-at", f"http://alice:{A}@{B}@127.0.0.1:{PORT}/v1", f"{A}@{B}"),
    Form("base-encoded", f"http://alice:{A}%2F{B}@127.0.0.1:{PORT}/v1", f"{A}/{B}"),
    Form("azure-code", f"http://127.0.0.1:{PORT}/v1?code={A}{B}"),
    Form("api-key", f"http://127.0.0.1:{PORT}/v1?api-key={A}{B}"),
    Form("sas-sig", f"http://127.0.0.1:{PORT}/v1?sv=2022-11-02&sig={A}%2B{B}%3D"),
    Form("aws-signature", f"http://127.0.0.1:{PORT}/v1?X-Amz-Signature={A}{B}"),
    Form("access-token", f"http://127.0.0.1:{PORT}/v1?a=1&access_token={A}{B}"),
]
URL_IDS = [form.name for form in BASE_URLS]
DSN_IDS = [form.name for form in DSNS]


def assert_hidden(text: str) -> None:
    """Fail if any chunk of a password, or the user name beside it, shows."""
    for chunk in CHUNKS:
        assert chunk not in text, text


def with_port(form: Form, port: int | str = 1) -> str:
    return form.value.replace(PORT, str(port))


# ----------------------------------------------------------------- the function


@pytest.mark.parametrize("form", DSNS + BASE_URLS, ids=DSN_IDS + URL_IDS)
def test_a_setting_read_whole_hides_its_password(form: Form) -> None:
    value = with_port(form)
    shown = redact_target(value)
    assert_hidden(shown)
    assert REDACTED in shown
    # What shows is still the setting: where it points.
    assert "127.0.0.1" in shown


@pytest.mark.parametrize(
    "form", [f for f in DSNS + BASE_URLS if f.in_text], ids=lambda f: f.name
)
def test_a_message_quoting_a_setting_hides_its_password(form: Form) -> None:
    value = with_port(form)
    for text in (
        f"cannot reach {value}: refused",
        f"error: '{value}'\nnext line",
        f'{{"url": "{value}", "n": 1}}',
    ):
        out = redact(text, {})
        assert_hidden(out)
        assert "refused" in out or "next line" in out or '"n": 1' in out


@pytest.mark.parametrize("form", [f for f in DSNS if f.password], ids=lambda f: f.name)
def test_the_password_libpq_reads_is_one_the_redaction_hides(form: Form) -> None:
    # libpq's own parser (not a pattern) says what the password is.
    assert conninfo_to_dict(form.value)["password"] == form.password
    assert form.password in target_secrets(form.value)


@pytest.mark.parametrize(
    "form", [f for f in BASE_URLS if f.password], ids=lambda f: f.name
)
def test_the_password_httpx_reads_is_one_the_redaction_hides(form: Form) -> None:
    url = httpx.URL(with_port(form))
    assert url.password == form.password and url.host == "127.0.0.1"
    assert form.password in target_secrets(with_port(form))


@pytest.mark.parametrize("form", DSNS, ids=DSN_IDS)
def test_what_libpq_says_of_a_dsn_hides_its_password(form: Form) -> None:
    # A DSN libpq cannot parse is quoted back in pieces: the part with a bad escape,
    # the port it read out of "alice:pw/...", the word that lacks its '='.
    try:
        parsed = conninfo_to_dict(form.value)
    except psycopg.ProgrammingError as exc:
        # What libpq quotes back is hidden even with no setting known.
        assert_hidden(redact(str(exc), {}))
        said = str(exc)
    else:
        said = " ".join(f"{key}={value!r}" for key, value in parsed.items())
    assert_hidden(redact(said, {}, also=target_secrets(form.value)))
    try:
        psycopg.connect(form.value, connect_timeout=2).close()
    except psycopg.Error as exc:
        # "invalid integer value" for the port read out of "alice:pw/...", a host
        # resolved from the piece after an '@'.
        assert_hidden(redact(str(exc), {}, also=target_secrets(form.value)))


@pytest.mark.parametrize("form", BASE_URLS, ids=URL_IDS)
def test_what_httpx_says_of_a_url_hides_its_password(form: Form) -> None:
    try:
        said = repr(httpx.URL(with_port(form)))
    except httpx.InvalidURL as exc:
        said = str(exc)
    assert_hidden(redact(said, {}, also=target_secrets(with_port(form))))


@pytest.mark.parametrize("form", DSNS + BASE_URLS, ids=DSN_IDS + URL_IDS)
def test_a_logged_command_line_hides_each_arguments_password(form: Form) -> None:
    value = with_port(form)
    for argv in (["--db", value, "runs"], [f"--base-url={value}", "doctor"]):
        line = redact_command(["veriscribe", *argv])
        assert_hidden(line)
        assert line.startswith("veriscribe --") and "127.0.0.1" in line


# ---------------------------------------------------------------------- the CLI


@pytest.fixture
def data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Keep the data directory (where a server database's error log goes) private."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path / "data"


@pytest.fixture
def model_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    monkeypatch.setenv("VERISCRIBE_LLM__OPENAI_SCHEMA", "json_schema")
    with FakeServer() as fake:
        yield fake


def logged_text(data_dir: Path) -> str:
    return "".join(p.read_text("utf-8") for p in data_dir.rglob("*.log*"))


def invoke(monkeypatch: pytest.MonkeyPatch, args: list[str]) -> Any:
    """Run a command as if typed: the error log's command line is sys.argv."""
    monkeypatch.setattr(sys, "argv", ["veriscribe", *args])
    return runner.invoke(cli_app, args)


@pytest.mark.parametrize("form", DSNS, ids=DSN_IDS)
def test_a_command_on_an_unreachable_database_never_shows_its_password(
    form: Form, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = invoke(monkeypatch, ["--db", form.value, "runs", "list"])
    assert result.exit_code == 1, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "cannot reach the database" in lines[0], lines
    assert_hidden(result.output)
    assert_hidden(logged_text(data_dir))


@pytest.mark.parametrize("form", DSNS, ids=DSN_IDS)
def test_a_bug_quoting_the_database_logs_no_password_nor_in_its_command_line(
    form: Form, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def boom(settings: Settings) -> None:
        # A library quoting the setting it was given, as a driver may.
        raise RuntimeError(f"cannot use {settings.db!s}")

    monkeypatch.setattr(service, "list_runs", boom)
    result = invoke(monkeypatch, ["--debug", "--db", form.value, "runs", "list"])
    assert result.exit_code == 1 and "a bug in veriscribe" in result.stderr
    logged = logged_text(data_dir)
    assert "unexpected error in `veriscribe --debug --db " in logged
    assert "RuntimeError: cannot use" in logged
    assert_hidden(logged)
    assert_hidden(result.output)  # --debug printed the traceback too


@pytest.mark.parametrize("form", BASE_URLS, ids=URL_IDS)
@pytest.mark.parametrize("given", ["--base-url", "OPENAI_BASE_URL", "--endpoint"])
def test_a_base_url_never_shows_its_password_or_key(
    form: Form,
    given: str,
    model_server: FakeServer,
    data_dir: Path,
    default_db: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = with_port(form, model_server.port)
    args = ["doctor", "--model", "openai:fake", "--json"]
    if given == "OPENAI_BASE_URL":
        monkeypatch.setenv("OPENAI_BASE_URL", url)
    else:
        args += [given, url]
    result = invoke(monkeypatch, args)
    assert_hidden(result.output)
    assert_hidden(logged_text(data_dir))
    assert "unexpected error" not in result.output
    if form.refused:
        # A password that HTTP clients would cut is refused in one clear line.
        assert result.exit_code == 1, result.output
        assert "bad server URL" in result.stderr and "percent-encoded" in result.stderr
    else:
        assert result.exit_code in (0, 1), result.output
    stored = asyncio.run(rows(default_db, "SELECT endpoint, detail FROM llm_calls"))
    for endpoint, detail in stored:
        assert_hidden(f"{endpoint} {detail}")


# --------------------------------------------------------------------- the server


def server_app(tmp_path: Path, settings: Settings) -> Any:
    return create_app(ServeConfig(settings=settings, work_dir=tmp_path / "serve"))


def client_of(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1"
    )


def sse_error(text: str) -> dict[str, Any]:
    """Return the data of the stream's ``error`` event."""
    for block in text.replace("\r\n", "\n").split("\n\n"):
        lines = block.splitlines()
        if "event: error" in lines:
            data = [line.removeprefix("data:").strip() for line in lines]
            return dict(json.loads(data[-1]))
    raise AssertionError(f"no error event in {text[:300]!r}")


@pytest.mark.parametrize("form", DSNS, ids=DSN_IDS)
async def test_the_server_says_database_unavailable_and_nothing_more(
    form: Form, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    app = server_app(tmp_path, Settings(model="sim", db=form.value))
    question = {"question": "How is it diagnosed?", "corpus": "htn"}
    with caplog.at_level(logging.WARNING):
        async with client_of(app) as http:
            ready = await http.get("/readyz")
            listed = await http.get("/v1/corpora")
            streamed = await http.post(
                "/v1/answers",
                json=question,
                headers={"Accept": "text/event-stream"},
            )
    details = [
        ready.json()["detail"],
        listed.json()["detail"],
        sse_error(streamed.text)["detail"],
    ]
    assert ready.status_code == 503 and listed.status_code == 503
    assert listed.headers["retry-after"].isdigit()
    # Open probes and every client learn only this: no host, port, name or user.
    assert details == ["database unavailable"] * 3
    for text in (ready.text, listed.text, streamed.text):
        assert_hidden(text)
        assert "127.0.0.1" not in text and "alice" not in text
    # The operator finds the details in the server's log, redacted.
    assert "cannot reach the database" in caplog.text
    assert_hidden(caplog.text)


@pytest.mark.parametrize("form", BASE_URLS, ids=URL_IDS)
async def test_the_server_never_shows_a_base_urls_password(
    form: Form, tmp_path: Path, model_server: FakeServer
) -> None:
    settings = Settings(model="sim")
    await service.add_corpus(settings, "htn", [GUIDELINE])
    url = with_port(form, model_server.port)
    app = server_app(
        tmp_path, Settings(model="openai:fake", base_url=url, db=settings.db)
    )
    question = {"question": "How is it diagnosed?", "corpus": "htn", "retriever": "llm"}
    async with client_of(app) as http:
        answered = await http.post("/v1/answers", json=question)
        streamed = await http.post(
            "/v1/answers", json=question, headers={"Accept": "text/event-stream"}
        )
    assert_hidden(answered.text)
    assert_hidden(streamed.text)
    if form.refused:
        assert answered.status_code == 503
        assert "bad server URL" in answered.json()["detail"]
        assert "bad server URL" in sse_error(streamed.text)["detail"]
    else:
        # Reached (a key in the query may send the call astray): shown hidden.
        assert answered.status_code == 200 or REDACTED in answered.text, answered.text
