"""A limit on every text field of the API, and checks that leave the server answering."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from problems import problem_detail
from qa_helpers import GUIDELINE
from veriscribe import service
from veriscribe.serve import ServeConfig, create_app
from veriscribe.serve.models import MAX_ANSWER_CHARS, MAX_KEY_CHARS
from veriscribe.settings import Settings


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
    http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A check that holds its thread without an await does not hold the probes."""
    await service.add_corpus(Settings(model="sim"), "htn", [GUIDELINE])
    started, release = threading.Event(), threading.Event()
    held = {"over": False}
    real_check = service.verify_answer

    async def busy_check(*args: Any, **kwargs: Any) -> Any:
        # Text work between awaits, as a long answer's checks are: nothing else can
        # run on this loop until the wait ends, by release or after 10 s.
        started.set()
        release.wait(timeout=10)
        held["over"] = True
        return await real_check(*args, **kwargs)

    monkeypatch.setattr(service, "verify_answer", busy_check)
    body = {
        "answer": checkable_answer(2_000),
        "corpus": "htn",
        "judge": False,
        "all_claims": True,
    }
    check = asyncio.create_task(http.post("/v1/verify", json=body))
    assert await asyncio.to_thread(started.wait, 10)
    health = await http.get("/healthz")
    # The probe was answered while the check still held its thread.
    checking = not held["over"]
    release.set()
    checked = await check
    assert health.status_code == 200
    assert checking, "/healthz waited for the check to end"
    assert checked.status_code == 200, checked.text
    assert json.loads(checked.text)["claims"]


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
