"""A limit on every text field of the API, and checks that leave the server answering."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from qa_helpers import GUIDELINE
from veriscribe import service
from veriscribe.serve import ServeConfig, create_app
from veriscribe.serve.models import MAX_ANSWER_CHARS, MAX_KEY_CHARS
from veriscribe.settings import Settings


@pytest.fixture
def app(tmp_path: Path) -> FastAPI:
    config = ServeConfig(settings=Settings(model="sim"), work_dir=tmp_path / "serve")
    return create_app(config)


@pytest.fixture
async def http(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client,
    ):
        yield client


def problem_detail(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    return str(response.json()["detail"])


async def test_every_text_field_has_a_limit(http: httpx.AsyncClient) -> None:
    long_answer = {"answer": "a" * (MAX_ANSWER_CHARS + 1), "corpus": "htn"}
    detail = problem_detail(await http.post("/v1/verify", json=long_answer), 422)
    assert detail == f"answer: String should have at most {MAX_ANSWER_CHARS} characters"
    key = "d:" + "s" * MAX_KEY_CHARS
    read_set = {"answer": "Text.", "corpus": "htn", "read_set": [key]}
    detail = problem_detail(await http.post("/v1/verify", json=read_set), 422)
    assert detail.startswith("read_set.0: String should have at most")
    question = {"question": "q" * 4001, "corpus": "htn"}
    detail = problem_detail(await http.post("/v1/answers", json=question), 422)
    assert detail.startswith("question: String should have at most 4000")
    corpus = {"question": "q", "corpus": "c" * 65}
    problem_detail(await http.post("/v1/answers", json=corpus), 422)
    problem_detail(await http.get(f"/v1/corpora/htn/sections/{key}"), 422)
    for path in ("", "/results", "/events"):
        problem_detail(await http.get(f"/v1/runs/{'r' * 301}{path}"), 422)


def checkable_answer(chars: int) -> str:
    """Return an answer of about ``chars`` characters, every sentence cited."""
    sentence = (
        "A diagnosis of hypertension requires elevated readings on at least two "
        "separate occasions {{cite:hypertension:diagnosis|A diagnosis of "
        "hypertension requires elevated readings on at least two separate}}. "
    )
    return sentence * (chars // len(sentence))


async def test_a_long_check_leaves_the_server_answering(
    http: httpx.AsyncClient,
) -> None:
    await service.add_corpus(Settings(model="sim"), "htn", [GUIDELINE])
    # Without the model, the checks are text work alone: the longest stretches
    # without an await (on the server's loop: 0.6 s at this length).
    body = {
        "answer": checkable_answer(MAX_ANSWER_CHARS - 500),
        "corpus": "htn",
        "judge": False,
        "all_claims": True,
    }
    started = time.monotonic()
    check = asyncio.create_task(http.post("/v1/verify", json=body))
    answered = [started]
    while not check.done():
        await asyncio.sleep(0.02)
        health = await http.get("/healthz")
        assert health.status_code == 200
        answered.append(time.monotonic())
    checked = await check
    took = time.monotonic() - started
    assert checked.status_code == 200, checked.text
    assert json.loads(checked.text)["claims"]
    assert took > 0.8, f"the check took {took:.2f} s: too short to tell"
    # Asked every 20 ms, the probe answers every 20 ms or so all along.
    longest = max(later - earlier for earlier, later in itertools.pairwise(answered))
    # On the server's loop, the longest step of the checks held the probe for half
    # of the check's time (0.5-0.6 s of 1.0-1.7 s); off it, 0.1 s on a quiet machine
    # and under 0.3 of the time on a loaded one (load average 16-20 on two cores).
    allowed = max(0.3, 0.4 * took)
    assert longest < allowed, f"/healthz waited {longest:.2f} s in a {took:.2f} s check"


async def test_a_check_over_the_time_limit_is_504_and_frees_its_slot(
    tmp_path: Path,
) -> None:
    slow = Settings(model="sim:latency=3")
    await service.add_corpus(Settings(model="sim"), "htn", [GUIDELINE])
    config = ServeConfig(settings=slow, work_dir=tmp_path / "serve", timeout_s=0.5)
    app = create_app(config)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1"
    ) as http:
        started = time.monotonic()
        # Worded unlike its quote, the claim goes to the slow model's judge.
        answer = (
            "Two high readings on different days are needed "
            "{{cite:hypertension:diagnosis|A diagnosis of hypertension requires "
            "elevated readings on at least two separate}}."
        )
        response = await http.post(
            "/v1/verify", json={"answer": answer, "corpus": "htn"}
        )
    took = time.monotonic() - started
    assert response.status_code == 504, response.text
    assert took < 2.5, f"the check went on for {took:.2f} s after its time limit"
    assert app.state.server.gate.admitted == 0
