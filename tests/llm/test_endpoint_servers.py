"""Several fake OpenAI-compatible servers on loopback: balancing, failover, keys."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from fake_server import FakeServer
from stores import dump, rows
from veriscribe.errors import BackendUnavailable, VeriscribeError
from veriscribe.llm.client import LLM
from veriscribe.llm.factory import make_llm
from veriscribe.settings import LLMSettings, Settings
from veriscribe.store.connect import open_database
from veriscribe.store.db import Store

pytestmark = pytest.mark.network_model

FAST = LLMSettings(
    cache=False,
    concurrency=2,
    retries=2,
    connect_timeout_s=0.5,
    timeout_base_s=2.0,
    openai_schema="json_schema",
)


@pytest.fixture
def servers() -> Iterator[list[FakeServer]]:
    started = [FakeServer(latency=0.2, max_in_flight=2).start() for _ in range(4)]
    yield started
    for server in started:
        server.kill()


def pooled(servers: list[FakeServer], store: Store | None = None, **cfg: object) -> LLM:
    settings = Settings(
        endpoints=[s.url for s in servers], llm=FAST.model_copy(update=cfg)
    )
    return make_llm("openai:fake", settings, store)


async def many(llm: LLM, count: int) -> list[str]:
    replies = await asyncio.gather(
        *(llm.text("test.call", f"Say hello to number {n}.") for n in range(count))
    )
    return [r.value for r in replies]


class Summary(BaseModel):
    """The reply of a facet summary prompt."""

    summary: str


async def logged(db: str) -> list[tuple[str | None, str]]:
    return [
        (e, o) for e, o in await rows(db, "SELECT endpoint, outcome FROM llm_calls")
    ]


async def test_calls_spread_over_four_servers_none_beyond_its_limit(
    servers: list[FakeServer], default_db: str
) -> None:
    async with await open_database(default_db) as store:
        llm = pooled(servers, store)
        replies = await many(llm, 40)
    assert len(replies) == 40 and all(replies)
    for server in servers:
        assert server.stats.rejected == 0  # no server saw more than its limit
        # Every server ran its two slots at once: eight calls in flight. How many
        # each served depends on how fast each answered on a loaded machine.
        assert server.stats.peak_in_flight == 2
        assert server.stats.served >= 2
    assert sum(s.stats.served for s in servers) == 40
    per_endpoint = Counter(e for e, outcome in await logged(default_db))
    assert per_endpoint == {s.url: s.stats.served for s in servers}


async def test_a_server_killed_mid_run_loses_no_call(
    servers: list[FakeServer], default_db: str
) -> None:
    async with await open_database(default_db) as store:
        llm = pooled(servers, store)
        victim = servers[3]

        async def kill_soon() -> None:
            # Once calls are in flight on it (a fixed delay missed them on a slow
            # machine, where the first calls had not gone out yet).
            for _ in range(3000):  # at most 30 s
                if victim.stats.in_flight:
                    break
                await asyncio.sleep(0.01)
            await asyncio.to_thread(victim.kill)

        replies, _ = await asyncio.gather(many(llm, 40), kill_soon())
    assert len(replies) == 40 and all(replies)
    assert victim.stats.failed >= 1  # calls were dropped in flight
    # Every call was answered exactly once, the dropped ones by another server.
    assert sum(s.stats.served for s in servers) == 40
    rows = await logged(default_db)
    assert Counter(o for _, o in rows)["ok"] == 40
    failed_on = {e for e, o in rows if o != "ok"}
    assert failed_on == {victim.url}


async def test_every_server_down_waits_for_the_first_back(tmp_path: Path) -> None:
    pair = [FakeServer(latency=0.05).start() for _ in range(2)]
    for server in pair:
        server.kill()
    llm = pooled(pair)
    assert llm.pool is not None

    async def revive() -> None:
        await asyncio.sleep(0.5)
        await asyncio.to_thread(pair[0].start)

    started = time.perf_counter()
    try:
        reply, _ = await asyncio.gather(llm.text("test.call", "Say hello."), revive())
    finally:
        for server in pair:
            server.kill()
    # Both refused at once; the third attempt waited out the first cooldown (1 s)
    # instead of failing, and found the revived server.
    assert reply.value and reply.attempts == 3
    assert 0.9 < time.perf_counter() - started < 5
    assert pair[0].stats.served == 1


async def test_all_servers_failing_still_ends_within_the_retry_budget() -> None:
    pair = [FakeServer(mode="error").start() for _ in range(2)]
    try:
        llm = pooled(pair)
        with pytest.raises(BackendUnavailable, match="gave up after 3 attempts"):
            await llm.text("test.call", "Say hello.")
    finally:
        for server in pair:
            server.kill()
    assert sum(s.stats.requests for s in pair) == 3


async def test_a_refused_request_is_not_tried_elsewhere() -> None:
    pair = [FakeServer(models={"other"}).start() for _ in range(2)]
    try:
        llm = pooled(pair)
        with pytest.raises(VeriscribeError, match="does not have this model") as info:
            await llm.text("test.call", "Say hello.")
    finally:
        for server in pair:
            server.kill()
    assert not isinstance(info.value, BackendUnavailable)
    assert sum(s.stats.requests for s in pair) == 1
    assert llm.pool is not None
    assert all(m.strikes == 0 for m in llm.pool.members)  # nobody cooled down


async def test_keys_reach_the_servers_and_nowhere_else(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    default_db: str,
) -> None:
    # A variable name redaction would not guess holds a secret.
    key = "gpu-cred-7f3a9c1e5b"
    monkeypatch.setenv("FLEET_CREDENTIAL", key)
    good = FakeServer(latency=0.05).start()
    # Answers HTTP 500 repeating the key it was sent.
    leaky = FakeServer(mode="error", echo_auth=True).start()
    servers_file = tmp_path / "endpoints.toml"
    servers_file.write_text(
        "".join(
            f'[[endpoint]]\nurl = "{s.url}"\napi_key_env = "FLEET_CREDENTIAL"\n'
            for s in (good, leaky)
        )
    )
    assert key not in servers_file.read_text()
    db = default_db
    caplog.set_level(logging.DEBUG)
    errors = []
    try:
        async with await open_database(db) as store:
            settings = Settings(endpoints_file=servers_file, llm=FAST)
            llm = make_llm("openai:fake", settings, store)
            await many(llm, 6)
            good.kill()
            try:
                await llm.text("test.call", "Say hello once more.")
            except VeriscribeError as exc:
                errors.append(exc.user_message)
    finally:
        good.kill()
        leaky.kill()
    assert good.stats.authorizations == {f"Bearer {key}"}
    assert leaky.stats.authorizations == {f"Bearer {key}"}
    assert leaky.stats.requests >= 1 and errors
    dumped = await dump(db)
    assert "internal server error" in dumped  # the leaky server's errors were logged
    assert key not in dumped
    assert all(key not in e for e in errors)
    assert key not in caplog.text


async def test_a_pool_with_other_servers_reuses_the_cached_replies(
    servers: list[FakeServer], default_db: str
) -> None:
    async with await open_database(default_db) as store:
        first = pooled(servers[:2], store, cache=True)
        before = await many(first, 4)
        # Resumed with one server gone and another added: the same model.
        second = pooled(servers[1:3], store, cache=True)
        after = await many(second, 4)
    assert after == before
    assert sum(s.stats.requests for s in servers) == 4


async def test_ollama_servers_are_balanced_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROXY_CREDENTIAL", "proxy-cred-91b2c3")
    pair = [FakeServer(latency=0.1, max_in_flight=1).start() for _ in range(2)]
    servers_file = tmp_path / "endpoints.toml"
    servers_file.write_text(
        "".join(
            f'[[endpoint]]\nkind = "ollama"\nurl = "{s.ollama_url}"\n'
            'max_in_flight = 1\napi_key_env = "PROXY_CREDENTIAL"\n'
            for s in pair
        )
        # An OpenAI server in the same file is not one of an ollama: SPEC's.
        + '[[endpoint]]\nurl = "http://127.0.0.1:9/v1"\n'
    )
    try:
        llm = make_llm("ollama:fake", Settings(endpoints_file=servers_file, llm=FAST))
        replies = await many(llm, 6)
        summary = await llm.json(
            "test.json",
            "Text:\nThe trial enrolled 40 adults. Pain fell by half in six weeks.",
            Summary,
        )
    finally:
        for server in pair:
            server.kill()
    assert all(replies) and summary.value.summary
    assert sorted(s.stats.served for s in pair) == [3, 4]  # seven calls, in turn
    assert all(s.stats.peak_in_flight == 1 for s in pair)
    assert all(s.stats.authorizations == {"Bearer proxy-cred-91b2c3"} for s in pair)


async def test_a_hung_server_times_out_and_its_calls_go_elsewhere(
    default_db: str,
) -> None:
    hung = FakeServer(mode="hang").start()
    good = FakeServer(latency=0.05).start()
    quick = {"timeout_base_s": 0.5, "min_output_tokens_per_s": 100.0}
    try:
        async with await open_database(default_db) as store:
            llm = pooled([hung, good], store, **quick)
            replies = await asyncio.gather(
                *(
                    llm.text("test.call", f"Say hello to {n}.", max_tokens=10)
                    for n in range(4)
                )
            )
    finally:
        hung.kill()
        good.kill()
    assert all(r.value for r in replies)
    assert good.stats.served == 4
    rows = await logged(default_db)
    assert {e for e, o in rows if o == "timeout"} == {hung.url}
    assert Counter(o for _, o in rows)["ok"] == 4
