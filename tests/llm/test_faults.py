"""Model faults end fast, within a bound the error line states, and leak no secret."""

from __future__ import annotations

import time

import pytest

from fakes import ScriptedChatModel, scripted_llm
from loopback import echoing_401, free_port, full_backlog, hung_server
from stores import rows as stored_rows
from veriscribe.errors import BackendUnavailable, ModelTimeout, VeriscribeError
from veriscribe.llm.client import as_messages, classify_backend_error, seconds_text
from veriscribe.llm.deadline import backoff, call_timeout, give_up_bound
from veriscribe.llm.factory import make_llm
from veriscribe.redaction import REDACTED, redact
from veriscribe.settings import LLMSettings, Settings
from veriscribe.store.connect import open_database

pytestmark = pytest.mark.network_model

# Small budgets so that a hung server is given up on in seconds.
FAST = LLMSettings(
    timeout_base_s=0.5,
    min_prompt_tokens_per_s=200,
    min_output_tokens_per_s=100,
    connect_timeout_s=0.5,
    retries=2,
    cache=False,
)


# ------------------------------------------------------------------ the arithmetic


def test_timeout_grows_with_the_output_budget_and_is_capped() -> None:
    cfg = LLMSettings()
    short = call_timeout(cfg, "openai", 1000, 48)
    long = call_timeout(cfg, "openai", 1000, 600)
    # 30 s + 1000 / 50 + 48 / 4, and 552 / 4 seconds more for the longer budget.
    assert short == pytest.approx(30 + 20 + 12)
    assert long - short == pytest.approx(552 / 4)
    assert call_timeout(cfg, "openai", 7000, 100_000) == cfg.timeout_s


def test_the_embedded_backend_gets_a_larger_clock() -> None:
    cfg = LLMSettings(concurrency=4)
    server = call_timeout(cfg, "ollama", 2000, 320)
    local = call_timeout(cfg, "local", 2000, 320)
    assert local == pytest.approx(server * cfg.local_timeout_scale * 4)
    # The bundled model writes 12-50 tokens/s on two cores: 320 tokens behind three
    # queued calls of the same size take at most ~4 x (2000 / 100 + 320 / 12) s.
    assert local > 4 * (2000 / 100 + 320 / 12) * 2


def test_give_up_bound_counts_every_attempt_and_pause() -> None:
    cfg = LLMSettings(retries=2)
    per_call = call_timeout(cfg, "openai", 500, 200)
    assert give_up_bound(cfg, "openai", 500, 200) == pytest.approx(
        3 * per_call + backoff(1) + backoff(2)
    )
    assert [backoff(n) for n in range(1, 7)] == [0.5, 1, 2, 4, 8, 8]


# ------------------------------------------------------------------ real sockets


async def test_hung_server_fails_within_the_stated_bound() -> None:
    with hung_server() as (url, connections):
        llm = make_llm("openai:hung", Settings(base_url=url, llm=FAST))
        prompt = "Say hello."
        tokens = llm.count_tokens(as_messages(prompt))
        bound = give_up_bound(FAST, "openai", tokens, 50)
        per_call = call_timeout(FAST, "openai", tokens, 50)
        started = time.perf_counter()
        with pytest.raises(ModelTimeout) as info:
            await llm.text("test.hung", prompt, max_tokens=50)
        elapsed = time.perf_counter() - started
        assert len(connections) == 3  # every attempt reached the server
    assert 3 * per_call <= elapsed <= bound + 2.0
    error = info.value
    assert error.attempts == 3 and not error.retryable
    assert error.seconds == pytest.approx(elapsed, abs=0.5)
    message = error.user_message
    assert f"within {seconds_text(per_call)} s" in message
    assert "gave up after 3 attempts in" in message and url in message


async def test_closed_port_fails_within_seconds() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    llm = make_llm("openai:any", Settings(base_url=url, llm=FAST))
    started = time.perf_counter()
    with pytest.raises(BackendUnavailable) as info:
        await llm.text("test.down", "hello")
    elapsed = time.perf_counter() - started
    # Three refused connections and the two pauses between them.
    assert elapsed < backoff(1) + backoff(2) + 2.0
    assert "cannot reach openai:any" in info.value.user_message
    assert "gave up after 3 attempts" in info.value.user_message
    assert not info.value.retryable


async def test_server_that_accepts_no_connection_fails_on_the_connect_timeout() -> None:
    with full_backlog() as url:
        if url is None:
            pytest.skip("this kernel completes connections beyond the listen backlog")
        # The read clock is long: only the connect timeout can end this quickly.
        cfg = FAST.model_copy(update={"timeout_base_s": 60.0, "retries": 1})
        llm = make_llm("openai:full", Settings(base_url=url, llm=cfg))
        started = time.perf_counter()
        with pytest.raises(BackendUnavailable) as info:
            await llm.text("test.backlog", "hello")
        elapsed = time.perf_counter() - started
    assert elapsed < 2 * cfg.connect_timeout_s + backoff(1) + 2.0
    assert "did not accept a connection" in info.value.user_message
    assert "gave up after 2 attempts" in info.value.user_message


async def test_401_echoing_the_key_leaks_it_nowhere(
    monkeypatch: pytest.MonkeyPatch, default_db: str
) -> None:
    key = "sk-test-0123456789abcdefSECRETKEY"
    other = "hf_0123456789TOKENVALUE"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.setenv("HF_TOKEN", other)
    with echoing_401([other]) as (url, seen):
        db = default_db
        async with await open_database(db) as store:
            llm = make_llm("openai:gpt-x", Settings(base_url=url, llm=FAST), store)
            with pytest.raises(VeriscribeError) as info:
                await llm.text("test.auth", "hello")
    # The key really went to the server, and came back in its body.
    assert seen and seen[0]["authorization"] == f"Bearer {key}"
    message = info.value.user_message
    assert "HTTP 401" in message and REDACTED in message
    assert key not in message and other not in message
    assert not info.value.retryable  # a refused key is not retried
    rows = await stored_rows(db, "SELECT outcome, detail FROM llm_calls")
    assert rows and all(outcome == "error" for outcome, _ in rows)
    for _, detail in rows:
        assert "HTTP 401" in detail and key not in detail and other not in detail


# ------------------------------------------------------------------ the retry loop


async def test_transient_faults_are_retried_by_the_client_and_counted() -> None:
    chat = ScriptedChatModel(
        script=[BackendUnavailable("HTTP 503"), ConnectionRefusedError("refused"), "ok"]
    )
    llm = scripted_llm(chat)
    result = await llm.text("x", "hi")
    assert result.value == "ok" and result.attempts == 3


async def test_a_final_error_is_not_retried_again_by_a_graph() -> None:
    llm = scripted_llm([BackendUnavailable("HTTP 503")] * 3)
    with pytest.raises(BackendUnavailable) as info:
        await llm.text("x", "hi")
    # A RetryPolicy retries only retryable errors: the attempts are spent.
    assert not info.value.retryable and info.value.attempts == 3


async def test_a_refusal_is_not_retried() -> None:
    class Refused(Exception):
        status_code = 400

    chat = ScriptedChatModel(script=[Refused("bad request"), "never"])
    with pytest.raises(VeriscribeError) as info:
        await scripted_llm(chat).text("x", "hi")
    assert len(chat.calls) == 1 and "HTTP 400" in info.value.user_message


# ------------------------------------------------------------------ redaction


def test_redact_covers_keys_tokens_bearers_and_url_passwords() -> None:
    env = {
        "OPENAI_API_KEY": "sk-live-abcdef",
        "GITHUB_TOKEN": "ghp_tokenvalue",
        "DB_PASSWORD": "hunter2hunter2",
        "SHORT_TOKEN": "abc",
        "HOME": "/home/someone",
    }
    text = (
        "key sk-live-abcdef; token ghp_tokenvalue; Authorization: Bearer xyz.123-abc; "
        "url https://user:hunter2hunter2@host/v1?api_key=q1w2e3; home /home/someone; "
        "abc stays"
    )
    out = redact(text, env)
    for secret in ("sk-live-abcdef", "ghp_tokenvalue", "hunter2hunter2", "xyz.123-abc"):
        assert secret not in out
    assert "q1w2e3" not in out and "user:" not in out
    assert "/home/someone" in out and "abc stays" in out


def test_classified_errors_are_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value-123")

    class Unauthorised(Exception):
        status_code = 401

    error = classify_backend_error(
        Unauthorised("Incorrect API key provided: sk-secret-value-123"), "openai:x", ""
    )
    assert "sk-secret-value-123" not in error.user_message
    assert "check OPENAI_API_KEY" in error.user_message
