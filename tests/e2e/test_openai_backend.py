"""The `openai` backend against a real OpenAI-compatible server on loopback."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from veriscribe.errors import BackendUnavailable
from veriscribe.llm.factory import make_llm
from veriscribe.settings import LLMSettings, Settings

pytestmark = [pytest.mark.local_model, pytest.mark.network_model]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(local_gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    # The server logs a lot while loading: a pipe nobody reads would block it.
    log_path = tmp_path_factory.mktemp("server") / "server.log"
    log = log_path.open("wb")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(local_gguf),
            "--model_alias",
            "qwen-local",
            "--n_ctx",
            "2048",
            "--n_threads",
            "2",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"server exited: {log_path.read_text()[-2000:]}")
        try:
            urllib.request.urlopen(f"{url}/models", timeout=2)
            break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("llama.cpp server did not start in 120 s")
    yield url
    proc.terminate()
    proc.wait(timeout=30)
    log.close()


class Capital(BaseModel):
    country: str
    capital: str


async def test_openai_round_trip_with_json(server: str) -> None:
    settings = Settings(
        base_url=server, llm=LLMSettings(context_tokens=2048, max_output_tokens=64)
    )
    llm = make_llm("openai:qwen-local", settings)
    result = await llm.json(
        "test.capital",
        'What is the capital of France? Answer as JSON {"country": ..., "capital": ...}.',
        Capital,
    )
    assert result.value.capital.lower().startswith("paris")
    assert result.usage.prompt_tokens > 10 and result.usage.output_tokens > 3


async def test_openai_unreachable_server_is_retried_then_reported() -> None:
    settings = Settings(base_url=f"http://127.0.0.1:{free_port()}/v1")
    llm = make_llm("openai:any", settings)
    with pytest.raises(BackendUnavailable) as info:
        await llm.text("test.down", "hello")
    # The client spent the retries; nothing above it retries again.
    assert info.value.attempts == settings.llm.retries + 1 and not info.value.retryable
    assert "127.0.0.1" in info.value.user_message


# A CPU server decodes a few tokens a second when the machine is busy.
SLOW: dict[str, Any] = {
    "context_tokens": 2048,
    "cache": False,
    "min_output_tokens_per_s": 0.5,
    "retries": 0,
}


async def test_constrained_quotes_over_the_openai_protocol(server: str) -> None:
    """The schema sent to a llama.cpp server constrains its quotes to the section."""
    from test_constrained_local import SECTION, ask

    from veriscribe.checks.verbatim import check_quote, is_compliant
    from veriscribe.text.sentences import quotable_units

    free = make_llm(
        "openai:qwen-local",
        Settings(base_url=server, llm=LLMSettings(**SLOW)),
    )
    quotes = await ask(free, constrained=False)
    assert any(not is_compliant(check_quote(q, SECTION).tier) for q in quotes)
    constrained = make_llm(
        "openai:qwen-local",
        Settings(
            base_url=server,
            llm=LLMSettings(**SLOW, openai_schema="json_object_schema"),
        ),
    )
    assert constrained.constrains
    quotes = await ask(constrained, constrained=True)
    assert quotes and set(quotes) <= {u.text for u in quotable_units(SECTION)}
