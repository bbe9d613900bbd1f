"""`veriscribe serve` on a real uvicorn, on a loopback port, called over HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from loopback import free_port
from qa_helpers import GUIDELINE

SRC = Path(__file__).resolve().parents[2] / "src"
TOKEN = "uvicorn-test-token-0123456789"


def test_serve_answers_over_http_and_stops_on_sigterm(tmp_path: Path) -> None:
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
        "VERISCRIBE_SERVE_TOKEN": TOKEN,
    }
    command = [sys.executable, "-m", "veriscribe.cli.app", "serve", "--port", str(port)]
    command += ["--model", "sim", "--work-dir", str(tmp_path / "serve")]
    server = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    base = f"http://127.0.0.1:{port}"
    auth = {"Authorization": f"Bearer {TOKEN}"}
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None, server.stdout.read() if server.stdout else ""
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.3)
        with httpx.Client(base_url=base, headers=auth, timeout=60) as http:
            assert http.get("/readyz").json()["model"] == "sim"
            assert httpx.get(f"{base}/v1/corpora").status_code == 401
            files = {"files": ("hypertension.md", GUIDELINE.read_bytes())}
            added = http.post("/v1/corpora/htn/documents", files=files)
            assert added.status_code == 200, added.text
            question = {"question": "How is hypertension diagnosed?", "corpus": "htn"}
            with http.stream(
                "POST",
                "/v1/answers",
                json=question,
                headers={"Accept": "text/event-stream"},
            ) as streamed:
                assert streamed.status_code == 200
                events = [
                    line.removeprefix("event: ")
                    for line in streamed.iter_lines()
                    if line.startswith("event: ")
                ]
            assert events[0] == "stage" and events[-1] == "answer"
            missing = http.post("/v1/answers", json={**question, "corpus": "nope"})
            assert missing.status_code == 404
            assert missing.headers["content-type"] == "application/problem+json"
            assert json.loads(missing.text)["status"] == 404
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            code = server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            raise
    output = server.stdout.read() if server.stdout else ""
    # uvicorn shuts down gracefully, then ends by the signal it caught.
    assert code in (0, -signal.SIGTERM), output
    assert "Application shutdown complete" in output
    assert "Traceback" not in output


ARTICLE = """# Walking in older adults {n}

## Background

High blood pressure is common in older adults and raises the risk of stroke.

## Methods

We enrolled {n} adults aged 65 to 80 years in a randomised trial of supervised walking.

## Results

Systolic blood pressure fell by 8 mmHg after twelve weeks of walking.
"""


def test_sigterm_lets_work_in_flight_finish_and_leaves_the_rest_pending(
    tmp_path: Path,
) -> None:
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    env.pop("VERISCRIBE_SERVE_TOKEN", None)
    # Every model call takes 0.1 s: an answer takes about a second, the run longer.
    command = [sys.executable, "-m", "veriscribe.cli.app", "serve", "--port", str(port)]
    command += ["--model", "sim:latency=0.4", "--work-dir", str(tmp_path / "serve")]
    server = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None, server.stdout.read() if server.stdout else ""
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.3)
        with httpx.Client(base_url=base, timeout=60) as http:
            files = {"files": ("hypertension.md", GUIDELINE.read_bytes())}
            assert (
                http.post("/v1/corpora/htn/documents", files=files).status_code == 200
            )
            articles = [
                ("files", (f"a{n}.md", ARTICLE.format(n=100 + n).encode()))
                for n in range(12)
            ]
            started = http.post("/v1/abstracts", files=articles)
            assert started.status_code == 202, started.text
            run_id = started.json()["run_id"]
            while http.get(f"/v1/runs/{run_id}").json()["running"] < 1:
                assert time.monotonic() < deadline + 60, "the run did not start"
                time.sleep(0.1)
            # The model retriever makes the answer slow enough to be in flight.
            question = {
                "question": "How is hypertension diagnosed?",
                "corpus": "htn",
                "retriever": "llm",
            }
            with http.stream(
                "POST",
                "/v1/answers",
                json=question,
                headers={"Accept": "text/event-stream"},
            ) as streamed:
                # The headers came: the answer is admitted and its first model call
                # (one second) is under way.
                server.send_signal(signal.SIGTERM)
                events = [
                    line.removeprefix("event: ")
                    for line in streamed.iter_lines()
                    if line.startswith("event: ")
                ]
            refused = False
            try:
                http.get("/healthz")
            except httpx.TransportError:
                refused = True
            assert refused, "a new connection was accepted while draining"
        # The answer in flight was finished, not cut.
        assert events[-1] == "answer", events
        code = server.wait(timeout=90)
    finally:
        if server.poll() is None:
            server.kill()
    output = server.stdout.read() if server.stdout else ""
    assert code in (0, -signal.SIGTERM), output
    assert "Traceback" not in output
    from veriscribe import service
    from veriscribe.settings import Settings

    left = asyncio.run(service.show_run(Settings(model="sim"), run_id))
    # No article half-held: each is finished or waiting for the next start.
    assert left.status == "interrupted", left
    assert left.running == 0 and left.failed == 0
    assert left.done + left.pending == 12 and left.pending > 0
