"""Three worker processes over three model servers; one worker and one server die.

The workers share one PostgreSQL run and balance their calls over the same three fake
OpenAI-compatible servers (``--endpoint`` x3). Part way through, one worker is
SIGKILLed and one server is killed at the same moment: the survivors must finish the
dead worker's articles from its checkpoints, route their calls around the dead server,
and leave every article exactly once in the output, with the dead server's errors in
``runs show``.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_many_workers import poll, start

from fake_server import FakeServer
from veriscribe.llm.factory import make_llm
from veriscribe.llm.spec import parse_spec
from veriscribe.options import AbstractOptions
from veriscribe.service.batch import BatchRunner, RunConfig
from veriscribe.settings import Settings
from veriscribe.store import runs
from veriscribe.store.connect import open_database

pytestmark = pytest.mark.network_model

RUN = "two-faults"
PER_SERVER = 1  # each worker's calls in flight per server: 3 workers x 1 <= 8


async def register(dsn: str, inputs: list[str], out: Path) -> int:
    """Register the run's articles, as `batch` does; return how many there are."""
    config = RunConfig("openai:fake", AbstractOptions(), inputs, str(out), PER_SERVER)
    async with await open_database(dsn) as store:
        await runs.ensure_run(store, RUN, "abstract", config.as_dict())
        llm = make_llm(parse_spec("sim"), Settings(), store)
        await BatchRunner(store, llm, RUN, config).register()
        return (await runs.counts(store, RUN)).total


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[FakeServer]]:
    # The fake servers answer structured calls from the schema the request carries;
    # the worker processes inherit this.
    monkeypatch.setenv("VERISCRIBE_LLM__OPENAI_SCHEMA", "json_schema")
    started = [FakeServer(latency=0.2, max_in_flight=8).start() for _ in range(3)]
    yield started
    for server in started:
        server.kill()


async def test_a_dead_worker_and_a_dead_server_lose_no_article(
    pg_dsn: str,
    servers: list[FakeServer],
    shared_data: Path,
    tmp_path: Path,
) -> None:
    articles = shared_data / "articles"
    inputs = [str(articles / "pcd.jsonl"), str(articles / "jats")]
    out = tmp_path / "out.jsonl"
    total = await register(pg_dsn, inputs, out)
    assert total == 55
    flags = [arg for s in servers for arg in ("--endpoint", s.url)]
    flags += ["--concurrency", str(PER_SERVER), "--quiet"]
    logs = [tmp_path / f"worker{i}.log" for i in range(3)]
    # All three start together, so each holds articles from the start.
    procs = [start(["worker", RUN, *flags], pg_dsn, None, log) for log in logs]
    try:
        victim, dead_server = procs[1], servers[2]
        mine = f"status = 'running' AND claimed_by LIKE '%:{victim.pid}:%'"
        # Part way: some articles are done and the victim holds some.
        await poll(
            pg_dsn,
            f"SELECT COUNT(*) FROM run_items WHERE {mine} AND "
            "(SELECT COUNT(*) FROM run_items WHERE status = 'done') >= 5",
            lambda n: n > 0 or victim.poll() is not None,
            within=90,
        )
        assert victim.poll() is None, logs[1].read_text()
        async with await open_database(pg_dsn) as store:
            os.kill(victim.pid, signal.SIGKILL)
            dead_server.kill()
            held = {
                row[0]
                for row in await store.fetchall(
                    f"SELECT item_id FROM run_items WHERE {mine}"
                )
            }
            (done_at_kill,) = await store.fetchone(
                "SELECT COUNT(*) FROM run_items WHERE status = 'done'"
            ) or (0,)
        assert held and done_at_kill < total
        assert dead_server.stats.served > 0  # it took its share before it died
        victim.wait(timeout=30)
        assert victim.returncode == -signal.SIGKILL
        for proc, log in ((procs[0], logs[0]), (procs[2], logs[2])):
            proc.wait(timeout=120)
            assert proc.returncode == 0, log.read_text()
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    results = [json.loads(line) for line in out.read_text().splitlines()]
    sources = [r["source"] for r in results]
    assert len(sources) == len(set(sources)) == total  # every article exactly once
    bad = [r for r in results if not r.get("abstract") or r.get("error")]
    assert not bad, bad[:2]
    async with await open_database(pg_dsn) as store:
        counts = await runs.counts(store, RUN)
        items = {i.item_id: i for i in await runs.items(store, RUN)}
    assert (counts.total, counts.done, counts.remaining) == (total, total, 0)
    for item_id in held:  # the dead worker's articles, finished by the others
        assert items[item_id].status == "done"
        assert items[item_id].attempts >= 2

    shown = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "veriscribe.cli.app", "runs", "show", RUN, "--json"],
        env={**os.environ, "VERISCRIBE_DB": pg_dsn},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    detail = json.loads(shown.stdout)
    by_url = {e["endpoint"]: e for e in detail["endpoints"]}
    assert set(by_url) == {s.url for s in servers}
    assert by_url[dead_server.url]["errors"] > 0
    for server in servers[:2]:
        assert by_url[server.url]["errors"] == 0
        assert by_url[server.url]["calls"] > 0
    outcomes = sorted(s["outcome"] for s in detail["sessions"])
    assert outcomes == ["finished", "finished", "lost"]
