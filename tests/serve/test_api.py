"""The HTTP API on the simulated model: every endpoint and every error class."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from typer.testing import CliRunner

from qa_helpers import GUIDELINE
from veriscribe import service
from veriscribe.cli.app import app as cli_app
from veriscribe.errors import ConfigError
from veriscribe.events import (
    STAGE_EVENT,
    AnswerReady,
    AnswerWritten,
    ClaimJudged,
    ClaimsFound,
    SectionsChosen,
)
from veriscribe.options import AbstractOptions
from veriscribe.serve import ServeConfig, check_bind, create_app
from veriscribe.serve.guard import TOKEN_ENV
from veriscribe.settings import LLMSettings, Settings
from veriscribe.store.connect import open_database

TOKEN = "a-long-enough-test-token-0123"
QUESTION = "How is hypertension diagnosed?"
ARTICLE = """# Exercise and blood pressure in older adults

## Background

High blood pressure is common in older adults and raises the risk of stroke.

## Methods

We enrolled 120 adults aged 65 to 80 years in a randomised trial of supervised walking.

## Results

Systolic blood pressure fell by 8 mmHg after twelve weeks of walking.

## Conclusions

Supervised walking lowers blood pressure in older adults.
"""


def make_app(tmp_path: Path, **config: Any) -> FastAPI:
    settings = config.pop("settings", None) or Settings(model="sim")
    return create_app(
        ServeConfig(settings=settings, work_dir=tmp_path / "serve", **config)
    )


def client_of(app: FastAPI, **transport: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app, **transport), base_url="http://127.0.0.1"
    )


@pytest.fixture
def app(tmp_path: Path) -> FastAPI:
    return make_app(tmp_path)


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with app.router.lifespan_context(app), client_of(app) as http:
        yield http


@pytest.fixture
async def corpus() -> str:
    await service.add_corpus(Settings(model="sim"), "htn", [GUIDELINE])
    return "htn"


async def cli(*args: str) -> Any:
    """Run a command in a thread of its own (it runs its own event loop)."""
    return await asyncio.to_thread(CliRunner().invoke, cli_app, list(args))


def assert_problem(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert set(body) == {"type", "title", "status", "detail"}
    assert body["status"] == status
    assert "Traceback" not in body["detail"]
    return body


def sse_events(text: str) -> list[tuple[str, str]]:
    """Parse a server-sent event stream into (event, data) pairs."""
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        name, data = "message", []
        for line in block.splitlines():
            if line.startswith(":"):
                continue  # a keep-alive comment
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
        if data:
            events.append((name, "\n".join(data)))
    return events


# --------------------------------------------------------------------------- probes


async def test_health_ready_and_openapi(client: httpx.AsyncClient) -> None:
    health = await client.get("/healthz")
    assert health.status_code == 200 and health.json()["status"] == "ok"
    ready = await client.get("/readyz")
    assert ready.status_code == 200, ready.text
    assert ready.json() == {"status": "ready", "database": "ok", "model": "sim"}
    schema = (await client.get("/openapi.json")).json()
    assert {
        "/v1/answers",
        "/v1/verify",
        "/v1/corpora",
        "/v1/corpora/{name}/documents",
        "/v1/abstracts",
        "/v1/runs/{run_id}",
        "/healthz",
        "/readyz",
    } <= set(schema["paths"])
    components = set(schema["components"]["schemas"])
    assert {"CheckedAnswer", "RunSummary", "IngestReport", "Problem"} <= components
    answers = schema["paths"]["/v1/answers"]["post"]["responses"]
    assert "text/event-stream" in answers["200"]["content"]
    assert answers["429"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/Problem"
    )


async def test_readyz_is_503_when_the_model_spec_is_unusable(tmp_path: Path) -> None:
    app = make_app(tmp_path, settings=Settings(model="nonsense:x"))
    async with client_of(app) as http:
        body = assert_problem(await http.get("/readyz"), 503)
    assert "unknown model SPEC" in body["detail"]


async def test_readyz_is_503_when_the_database_does_not_answer(
    tmp_path: Path,
) -> None:
    dsn = "postgresql://vs:pw-not-to-show@127.0.0.1:9/veriscribe"
    app = make_app(tmp_path, settings=Settings(model="sim", db=dsn))
    async with client_of(app) as http:
        body = assert_problem(await http.get("/readyz"), 503)
        assert (await http.get("/healthz")).status_code == 200
    # The probe is open to anyone: it names neither the database nor its server.
    assert body["detail"] == "database unavailable"


async def test_a_database_from_a_newer_version_is_unavailable_and_not_named(
    tmp_path: Path, default_db: str
) -> None:
    async with await open_database(default_db) as store:
        await store.execute(
            "INSERT INTO schema_migrations VALUES ('9999_from_the_future', 0)"
        )
    app = make_app(tmp_path)
    async with client_of(app) as http:
        for response in (await http.get("/readyz"), await http.get("/v1/corpora")):
            body = assert_problem(response, 503)
            assert body["detail"] == "database unavailable"
            assert Path(default_db).name not in response.text


# ------------------------------------------------------------------------- corpora


async def test_upload_documents_then_list_and_show(client: httpx.AsyncClient) -> None:
    files = {"files": ("hypertension.md", GUIDELINE.read_bytes(), "text/markdown")}
    added = await client.post("/v1/corpora/htn/documents", files=files)
    assert added.status_code == 200, added.text
    report = added.json()
    assert report["corpus"] == "htn" and report["added"] == ["hypertension"]
    again = (await client.post("/v1/corpora/htn/documents", files=files)).json()
    assert again["unchanged"] == ["hypertension"]
    listed = (await client.get("/v1/corpora")).json()
    assert [(c["name"], c["documents"], c["sections"]) for c in listed] == [
        ("htn", 1, 5)
    ]
    shown = (await client.get("/v1/corpora/htn")).json()
    assert shown["name"] == "htn" and len(shown["sections"]) == 5


async def test_an_upload_cannot_name_a_path_outside_its_folder(
    client: httpx.AsyncClient, tmp_path: Path
) -> None:
    files = {"files": ("../../escape.md", GUIDELINE.read_bytes(), "text/markdown")}
    added = await client.post("/v1/corpora/htn/documents", files=files)
    assert added.status_code == 200, added.text
    assert not (tmp_path / "escape.md").exists()
    stored = list((tmp_path / "serve" / "corpora" / "htn").glob("*/escape.md"))
    assert len(stored) == 1 and stored[0].is_file()
    bad = await client.post("/v1/corpora/..%2Fx/documents", files=files)
    assert bad.status_code in (404, 422)


# ------------------------------------------------------------------------- answers


async def test_answer_is_the_json_of_ask(
    client: httpx.AsyncClient, corpus: str
) -> None:
    response = await client.post(
        "/v1/answers", json={"question": QUESTION, "corpus": corpus}
    )
    assert response.status_code == 200, response.text
    data = response.json()
    asked = await cli("ask", QUESTION, "--corpus", corpus, "--model", "sim", "--json")
    assert asked.exit_code == 0, asked.output
    printed = json.loads(asked.stdout)
    assert set(data) == set(printed)
    for key in ("answer", "claims", "citations", "funnel", "read_set", "options"):
        assert data[key] == printed[key], key
    assert printed["reused"] and data["thread_id"] == printed["thread_id"]


async def test_answer_streams_stages_then_the_answer(
    app: FastAPI, client: httpx.AsyncClient, corpus: str
) -> None:
    response = await client.post(
        "/v1/answers",
        json={"question": QUESTION, "corpus": corpus, "retriever": "bm25"},
        headers={"Accept": "text/event-stream"},
    )
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response.text)
    names = [name for name, _ in events]
    assert names[-1] == "answer" and set(names[:-1]) == {"stage"}
    stages = [STAGE_EVENT.validate_json(data) for _, data in events[:-1]]
    assert stages[0].stage == "retrieve" and stages[-1].stage == "present"
    told = {event.stage: event for event in stages}
    assert isinstance(told["retrieve"], SectionsChosen) and told["retrieve"].read_set
    assert isinstance(told["answer"], AnswerWritten) and told["answer"].sentences[0]
    assert (
        isinstance(told["filter_claims"], ClaimsFound)
        and told["filter_claims"].is_claim
    )
    assert isinstance(told["judge"], ClaimJudged) and told["judge"].verdict
    final = json.loads(events[-1][1])
    assert final["question"] == QUESTION and final["claims"]
    assert isinstance(told["present"], AnswerReady)
    statuses = [claim.status for claim in told["present"].claims]
    assert statuses == [claim["status"] for claim in final["claims"]]
    assert app.state.server.gate.admitted == 0


async def test_chat_turns_by_session_id(client: httpx.AsyncClient, corpus: str) -> None:
    turn = {"corpus": corpus, "session": "ward-3", "retriever": "bm25"}
    first = await client.post("/v1/answers", json={**turn, "question": QUESTION})
    second = await client.post(
        "/v1/answers", json={**turn, "question": "How much sodium per day?"}
    )
    assert first.status_code == second.status_code == 200, second.text
    assert first.json()["thread_id"] == second.json()["thread_id"] == "chat:htn:ward-3"
    assert not second.json()["reused"]


async def test_verify_checks_an_answer(client: httpx.AsyncClient, corpus: str) -> None:
    asked = (
        await client.post("/v1/answers", json={"question": QUESTION, "corpus": corpus})
    ).json()
    checked = await client.post(
        "/v1/verify",
        json={
            "answer": asked["answer"],
            "corpus": corpus,
            "question": QUESTION,
            "read_set": asked["read_set"],
        },
    )
    assert checked.status_code == 200, checked.text
    for key in ("answer", "claims", "citations", "funnel", "read_set"):
        assert checked.json()[key] == asked[key], key
    quick = await client.post(
        "/v1/verify",
        json={
            "answer": asked["answer"],
            "corpus": corpus,
            "judge": False,
            "all_claims": True,
        },
    )
    assert quick.status_code == 200 and quick.json()["model"] is None


# ----------------------------------------------------------------------- abstracts


async def test_abstract_run_in_the_background_is_seen_by_runs_show(
    client: httpx.AsyncClient, tmp_path: Path
) -> None:
    files = [
        ("files", ("walking.md", ARTICLE.encode(), "text/markdown")),
        ("files", ("other.md", ARTICLE.replace("120", "90").encode(), "text/plain")),
    ]
    started = await client.post("/v1/abstracts", files=files, data={"split": "sh"})
    assert started.status_code == 202, started.text
    accepted = started.json()
    run_id = accepted["run_id"]
    assert accepted["location"] == f"/v1/runs/{run_id}"
    assert sorted(accepted["articles"]) == ["other.md", "walking.md"]
    deadline = time.monotonic() + 120
    while True:
        shown = await client.get(f"/v1/runs/{run_id}")
        assert shown.status_code == 200, shown.text
        if shown.json()["status"] == "finished" or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.2)
    summary = shown.json()
    assert summary["status"] == "finished", summary
    assert summary["total"] == 2 and summary["done"] == 2, summary
    assert summary["options"]["split"] == "sh"
    shown_cli = await cli("runs", "show", run_id, "--json")
    assert shown_cli.exit_code == 0, shown_cli.output
    assert json.loads(shown_cli.stdout)["done"] == 2
    assert summary["out"] == f"{run_id}.jsonl"  # where the server keeps it: not shown
    out = tmp_path / "serve" / "runs" / summary["out"]
    text = await asyncio.to_thread(out.read_text, "utf-8")
    assert len(text.splitlines()) == 2
    # The same articles and options name the same run.
    again = await client.post("/v1/abstracts", files=files, data={"split": "sh"})
    assert again.json()["run_id"] == run_id
    assert again.json()["status"] == "finished"


async def test_abstract_options_are_validated(client: httpx.AsyncClient) -> None:
    files = {"files": ("a.md", ARTICLE.encode(), "text/markdown")}
    bad = await client.post("/v1/abstracts", files=files, data={"split": "zz"})
    assert "split" in assert_problem(bad, 422)["detail"]


# -------------------------------------------------------------------------- errors


async def test_bad_json_is_400_and_a_bad_field_422(client: httpx.AsyncClient) -> None:
    bad = await client.post(
        "/v1/answers",
        content=b'{"question": "Why?", ',
        headers={"Content-Type": "application/json"},
    )
    assert assert_problem(bad, 400)["type"].endswith(":bad-json")
    missing = await client.post("/v1/answers", json={"question": "Why?"})
    assert "corpus" in assert_problem(missing, 422)["detail"]
    unknown = await client.post(
        "/v1/answers", json={"question": "Why?", "corpus": "c", "colour": "red"}
    )
    assert "colour" in assert_problem(unknown, 422)["detail"]


async def test_unknown_corpus_and_run_are_404(client: httpx.AsyncClient) -> None:
    asked = await client.post(
        "/v1/answers", json={"question": "Why?", "corpus": "nope"}
    )
    assert "no corpus named 'nope'" in assert_problem(asked, 404)["detail"]
    assert_problem(await client.get("/v1/corpora/nope"), 404)
    checked = await client.post("/v1/verify", json={"answer": "A.", "corpus": "nope"})
    assert_problem(checked, 404)
    assert_problem(await client.get("/v1/runs/run-0"), 404)
    assert_problem(await client.get("/v1/nothing-here"), 404)


async def test_a_secret_never_reaches_the_client(client: httpx.AsyncClient) -> None:
    key = "sk-" + "x1" * 15
    body = assert_problem(await client.get(f"/v1/runs/{key}"), 404)
    assert key not in body["detail"] and "[REDACTED]" in body["detail"]


async def test_an_unexpected_error_is_500_without_its_message(
    app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(settings: Settings) -> None:
        raise RuntimeError("password=hunter2 at line 3")

    monkeypatch.setattr(service, "list_corpora", broken)
    async with client_of(app, raise_app_exceptions=False) as http:
        body = assert_problem(await http.get("/v1/corpora"), 500)
    assert "hunter2" not in body["detail"] and "RuntimeError" not in body["detail"]


async def test_a_failing_backend_is_503_with_retry_after(tmp_path: Path) -> None:
    settings = Settings(model="sim")
    await service.add_corpus(settings, "htn", [GUIDELINE])
    down = settings.model_copy(update={"model": "ollama:llama3.2:3b"})
    down.llm.retries = 0
    down.llm.connect_timeout_s = 1.0
    app = make_app(tmp_path, settings=down)
    async with client_of(app) as http:
        # The default answer asks no model: the model retriever does.
        response = await http.post(
            "/v1/answers",
            json={"question": QUESTION, "corpus": "htn", "retriever": "llm"},
        )
    if response.status_code == 200:
        pytest.fail(f"a backend that is down answered: {response.text[:300]}")
    assert_problem(response, 503)
    assert response.headers["retry-after"].isdigit()


async def test_body_too_large_is_413(tmp_path: Path) -> None:
    app = make_app(tmp_path, settings=Settings(model="sim", max_input_bytes=2000))
    big = {"question": "x" * 3000, "corpus": "htn"}
    async with client_of(app) as http:
        declared = await http.post("/v1/answers", json=big)
        assert "2000 bytes" in assert_problem(declared, 413)["detail"]

        async def chunks() -> AsyncIterator[bytes]:
            yield json.dumps(big).encode()

        streamed = await http.post(
            "/v1/answers",
            content=chunks(),
            headers={"Content-Type": "application/json"},
        )
        assert_problem(streamed, 413)
        upload = {"files": ("big.md", b"# T\n\n" + b"word " * 1000, "text/markdown")}
        assert_problem(await http.post("/v1/corpora/htn/documents", files=upload), 413)


async def test_queue_full_is_429_with_retry_after(tmp_path: Path, corpus: str) -> None:
    app = make_app(tmp_path, work_slots=1, queue=0, retry_after_s=7)
    gate = app.state.server.gate
    held = gate.ticket()
    body = {"question": QUESTION, "corpus": corpus}
    async with client_of(app) as http:
        refused = await http.post("/v1/answers", json=body)
        assert assert_problem(refused, 429)["type"].endswith(":busy")
        assert refused.headers["retry-after"] == "7"
        streamed = await http.post(
            "/v1/answers", json=body, headers={"Accept": "text/event-stream"}
        )
        assert_problem(streamed, 429)
        assert_problem(
            await http.post("/v1/verify", json={**body, "answer": "A."}), 429
        )
        held.release()
        assert (await http.post("/v1/answers", json=body)).status_code == 200
    assert gate.admitted == 0


async def test_a_queued_request_waits_for_a_slot(tmp_path: Path, corpus: str) -> None:
    app = make_app(tmp_path, work_slots=1, queue=1)
    gate = app.state.server.gate
    async with gate.ticket():
        async with client_of(app) as http:
            waiting = asyncio.create_task(
                http.post("/v1/answers", json={"question": QUESTION, "corpus": corpus})
            )
            await asyncio.sleep(0.3)
            assert not waiting.done() and gate.admitted == 2
            third = await http.get("/v1/corpora")  # no model work: not queued
            assert third.status_code == 200
    assert (await waiting).status_code == 200


async def test_the_token_is_required_when_set(tmp_path: Path) -> None:
    app = make_app(tmp_path, token=TOKEN)
    async with client_of(app) as http:
        missing = await http.get("/v1/corpora")
        assert_problem(missing, 401)
        assert missing.headers["www-authenticate"] == "Bearer"
        wrong = await http.get(
            "/v1/corpora", headers={"Authorization": f"Bearer {TOKEN[:-1]}x"}
        )
        assert_problem(wrong, 401)
        assert_problem(
            await http.get("/openapi.json", headers={"Authorization": TOKEN}), 401
        )
        good = await http.get(
            "/v1/corpora", headers={"Authorization": f"Bearer {TOKEN}"}
        )
        assert good.status_code == 200 and good.json() == []
        assert (await http.get("/healthz")).status_code == 200


@pytest.mark.parametrize(
    ("host", "token", "allowed"),
    [
        ("127.0.0.1", None, True),
        ("localhost", None, True),
        ("::1", None, True),
        ("0.0.0.0", None, False),
        ("192.168.1.4", None, False),
        ("example.org", None, False),
        ("0.0.0.0", TOKEN, True),
        ("127.0.0.1", "short", False),
    ],
)
def test_the_bind_rule(host: str, token: str | None, allowed: bool) -> None:
    if allowed:
        check_bind(host, token)
    else:
        with pytest.raises(ConfigError):
            check_bind(host, token)


def test_serve_refuses_a_public_address_without_a_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    result = CliRunner().invoke(
        cli_app, ["serve", "--host", "0.0.0.0", "--model", "sim"]
    )
    assert result.exit_code == 1
    assert TOKEN_ENV in result.stderr and "refusing" in result.stderr


async def test_concurrent_answers_all_succeed(tmp_path: Path, corpus: str) -> None:
    app = make_app(tmp_path, work_slots=3, queue=10)
    questions = [
        QUESTION,
        "How much sodium per day?",
        "Which drugs are first-line?",
        "When should treatment start?",
        "Is home monitoring useful?",
        "What is a normal reading?",
    ]
    async with client_of(app) as http:
        replies = await asyncio.gather(
            *(
                http.post(
                    "/v1/answers",
                    json={"question": q, "corpus": corpus, "retriever": "bm25"},
                    headers={"Accept": "text/event-stream"} if n % 2 else {},
                )
                for n, q in enumerate(questions)
            )
        )
    assert [r.status_code for r in replies] == [200] * len(questions)
    for n, reply in enumerate(replies):
        answer = json.loads(sse_events(reply.text)[-1][1]) if n % 2 else reply.json()
        assert answer["question"] == questions[n]
    assert app.state.server.gate.admitted == 0


async def test_run_events_stream_progress_until_the_run_ends(tmp_path: Path) -> None:
    app = make_app(tmp_path, poll_s=0.05)
    files = {"files": ("walking.md", ARTICLE.encode(), "text/markdown")}
    async with app.router.lifespan_context(app), client_of(app) as http:
        started = await http.post("/v1/abstracts", files=files)
        run_id = started.json()["run_id"]
        streamed = await http.get(
            f"/v1/runs/{run_id}/events", headers={"Accept": "text/event-stream"}
        )
        assert_problem(await http.get("/v1/runs/run-0/events"), 404)
    assert streamed.status_code == 200
    events = sse_events(streamed.text)
    assert [name for name, _ in events][-1] == "run"
    assert {name for name, _ in events[:-1]} == {"progress"}
    last = json.loads(events[-1][1])
    assert last["run_id"] == run_id and last["status"] == "finished"
    assert last["done"] == 1


async def test_a_restarted_server_finishes_the_runs_it_started(
    tmp_path: Path,
) -> None:
    settings = Settings(model="sim")
    article = tmp_path / "walking.md"
    article.write_text(ARTICLE)
    out = tmp_path / "runs" / "api-left.jsonl"
    out.parent.mkdir()
    # Registered by a server that stopped before working on it.
    await service.register_run(
        settings, [str(article)], out, AbstractOptions(), run_id="api-left"
    )
    assert (await service.show_run(settings, "api-left")).status == "pending"
    app = make_app(tmp_path)
    async with app.router.lifespan_context(app), client_of(app) as http:
        task = app.state.server.runs["api-left"]
        await asyncio.wait_for(asyncio.shield(task), 120)
        summary = (await http.get("/v1/runs/api-left")).json()
    assert summary["status"] == "finished" and summary["done"] == 1
    text = await asyncio.to_thread(out.read_text, "utf-8")
    assert len(text.splitlines()) == 1


async def test_a_request_cancelled_in_the_queue_gives_its_place_back(
    tmp_path: Path, corpus: str
) -> None:
    app = make_app(tmp_path, work_slots=1, queue=1)
    gate = app.state.server.gate
    async with gate.ticket(), client_of(app) as http:
        waiting = asyncio.create_task(
            http.post("/v1/answers", json={"question": QUESTION, "corpus": corpus})
        )
        await asyncio.sleep(0.3)
        assert gate.admitted == 2
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)
        assert gate.admitted == 1
    assert gate.admitted == 0


async def test_turns_of_one_chat_run_one_at_a_time(
    app: FastAPI, client: httpx.AsyncClient, corpus: str
) -> None:
    turn = {"corpus": corpus, "session": "bed-7", "retriever": "bm25"}
    questions = [QUESTION, "How much sodium per day?", "Which drugs are first-line?"]
    replies = await asyncio.gather(
        *(client.post("/v1/answers", json={**turn, "question": q}) for q in questions)
    )
    assert [r.status_code for r in replies] == [200, 200, 200]
    async with service.ChatSession.open(
        Settings(model="sim"), corpus, session_id="bed-7"
    ) as chat:
        history = await chat.history()
    assert sorted(t["question"] for t in history) == sorted(questions)
    assert app.state.server.chats == {}


async def test_work_over_the_time_limit_is_504(tmp_path: Path, corpus: str) -> None:
    slow = Settings(model="sim:latency=3")
    app = make_app(tmp_path, settings=slow, timeout_s=0.5)
    async with client_of(app) as http:
        started = time.monotonic()
        # The model retriever makes the slow model call the limit cuts.
        response = await http.post(
            "/v1/answers",
            json={"question": QUESTION, "corpus": corpus, "retriever": "llm"},
        )
    assert time.monotonic() - started < 2.5
    assert "longer than" in assert_problem(response, 504)["detail"]
    assert app.state.server.gate.admitted == 0


# ------------------------------------------------------------------ page and sources


async def test_the_page_is_served_without_the_token_and_loads_nothing_outside(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path, token=TOKEN)
    async with client_of(app) as http:
        page = await http.get("/")
        script = await http.get("/ui/app.js")
        style = await http.get("/ui/app.css")
        missing = await http.get("/ui/secrets.txt")
        api = await http.get("/v1/corpora")
    assert page.status_code == 200 and page.headers["content-type"].startswith(
        "text/html"
    )
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert 'src="/ui/app.js"' in page.text and 'href="/ui/app.css"' in page.text
    assert script.headers["content-type"].startswith("text/javascript")
    assert style.headers["content-type"].startswith("text/css")
    for text in (page.text, script.text, style.text):
        assert not re.search(r"(src|href|url)\s*[=(]\s*[\"']?(https?:)?//", text)
    assert_problem(missing, 404)
    assert_problem(api, 401)  # the data still needs the token


async def test_a_section_is_shown_with_its_text(
    client: httpx.AsyncClient, corpus: str
) -> None:
    shown = await client.get(f"/v1/corpora/{corpus}/sections/hypertension:diagnosis")
    assert shown.status_code == 200, shown.text
    section = shown.json()
    assert section["title"] == "Diagnosis" and section["number"] == "1"
    assert "two separate\noccasions" in section["text"]
    assert_problem(
        await client.get(f"/v1/corpora/{corpus}/sections/hypertension:x"), 404
    )
    assert_problem(await client.get("/v1/corpora/nope/sections/hypertension:x"), 404)


async def test_a_runs_results_are_its_abstracts_in_input_order(
    client: httpx.AsyncClient,
) -> None:
    files = [
        ("files", ("walking.md", ARTICLE.encode(), "text/markdown")),
        ("files", ("broken.xml", b"<article><not-closed>", "application/xml")),
    ]
    run_id = (await client.post("/v1/abstracts", files=files)).json()["run_id"]
    assert (await client.get(f"/v1/runs/{run_id}/results")).status_code == 200
    await finished(client, run_id)
    lines = (await client.get(f"/v1/runs/{run_id}/results")).json()
    assert len(lines) == 2
    by_source = {Path(line["source"]).name: line for line in lines}
    assert "Supervised walking" in by_source["walking.md"]["abstract"]
    assert by_source["broken.xml"]["error"]
    assert_problem(await client.get("/v1/runs/run-0/results"), 404)


async def finished(http: httpx.AsyncClient, run_id: str) -> dict[str, Any]:
    """Wait until a run is finished; return its summary."""
    deadline = time.monotonic() + 120
    while True:
        summary: dict[str, Any] = (await http.get(f"/v1/runs/{run_id}")).json()
        if summary["status"] == "finished" or time.monotonic() > deadline:
            return summary
        await asyncio.sleep(0.1)


# -------------------------------------------------------------------------- draining


async def progressed(http: httpx.AsyncClient, run_id: str, count: str) -> None:
    """Wait until a run has at least one item ``done`` (or ``running``)."""
    deadline = time.monotonic() + 60
    while (await http.get(f"/v1/runs/{run_id}")).json()[count] < 1:
        assert time.monotonic() < deadline, f"no item {count}"
        await asyncio.sleep(0.05)


async def test_a_draining_server_takes_no_new_work(tmp_path: Path, corpus: str) -> None:
    app = make_app(tmp_path)
    async with app.router.lifespan_context(app), client_of(app) as http:
        app.state.server.drain()
        asked = await http.post(
            "/v1/answers", json={"question": QUESTION, "corpus": corpus}
        )
        files = {"files": ("walking.md", ARTICLE.encode(), "text/markdown")}
        started = await http.post("/v1/abstracts", files=files)
        listed = await http.get("/v1/corpora")
    for refused in (asked, started):
        body = assert_problem(refused, 503)
        assert body["type"].endswith(":draining")
        assert refused.headers["retry-after"] == "5"
    assert listed.status_code == 200  # reading goes on until the end
    assert not (tmp_path / "serve" / "articles").exists()


async def test_shutdown_finishes_articles_in_flight_and_loses_none(
    tmp_path: Path,
) -> None:
    # Four articles in flight at a time (one model call at a time), each making
    # several calls of 0.1 s: the shutdown comes in the middle of the run.
    slow = Settings(model="sim:latency=0.1", llm=LLMSettings(concurrency=1))
    files = [
        ("files", (f"a{n}.md", ARTICLE.replace("120", str(100 + n)).encode()))
        for n in range(8)
    ]
    app = make_app(tmp_path, settings=slow, runs=1, poll_s=0.05)
    async with app.router.lifespan_context(app), client_of(app) as http:
        run_id = (await http.post("/v1/abstracts", files=files)).json()["run_id"]
        await progressed(http, run_id, "done")
        run = app.state.server.runs[run_id]
    # Leaving the context is the server's shutdown: the run has stopped, not been
    # cancelled, and every article is either finished or waiting, none half-held.
    assert run.done() and not run.cancelled()
    stopped = await service.show_run(slow, run_id)
    assert stopped.status == "interrupted", stopped
    assert stopped.running == 0 and stopped.failed == 0
    assert 1 <= stopped.done < 8 and stopped.done + stopped.pending == 8
    out = Path(stopped.out or "")
    lines = (await asyncio.to_thread(out.read_text, "utf-8")).splitlines()
    assert len(lines) == stopped.done

    again = make_app(tmp_path, settings=slow, runs=1)
    async with again.router.lifespan_context(again), client_of(again) as http:
        summary = await finished(http, run_id)
        results = (await http.get(f"/v1/runs/{run_id}/results")).json()
    assert summary["status"] == "finished" and summary["done"] == 8, summary
    assert summary["failed"] == 0
    assert sorted(line["source"] for line in results) == sorted(
        f"a{n}.md" for n in range(8)
    )
    lines = (await asyncio.to_thread(out.read_text, "utf-8")).splitlines()
    assert sorted(Path(json.loads(line)["source"]).name for line in lines) == sorted(
        line["source"] for line in results
    )


async def test_shutdown_cancels_a_run_that_outlasts_the_drain_time(
    tmp_path: Path,
) -> None:
    slow = Settings(model="sim:latency=2")
    files = {"files": ("walking.md", ARTICLE.encode(), "text/markdown")}
    app = make_app(tmp_path, settings=slow, drain_s=0.3)
    async with app.router.lifespan_context(app), client_of(app) as http:
        run_id = (await http.post("/v1/abstracts", files=files)).json()["run_id"]
        await progressed(http, run_id, "running")
        started = time.monotonic()
    assert time.monotonic() - started < 5
    left = await service.show_run(slow, run_id)
    # Left for `runs resume` or the next start: released, not lost.
    assert left.status == "interrupted" and left.running == 0 and left.pending == 1
