"""Three worker processes share one PostgreSQL run; one is SIGKILLed part way.

Each worker runs under a host name of its own when the test may make one (a UTS
namespace, as root), so the survivors cannot see that the killed process is gone: they
take its articles over only when its lease expires, as workers on other machines would.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from veriscribe.store.db import Store
from veriscribe.store.runs import open_run_store

RUN = "shared-run"
LEASE_S = 3.0
MODEL = "sim:latency=0.1"

_SET_HOST = (
    "import os, socket, sys; socket.sethostname(sys.argv[1]); "
    "os.execv(sys.executable, [sys.executable, '-m', 'veriscribe.cli.app', "
    "*sys.argv[2:]])"
)


def _can_name_hosts() -> bool:
    try:
        probe = subprocess.run(
            ["unshare", "-u", sys.executable, "-c", _SET_HOST.split("; os.")[0], "x"],
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


def start(
    args: list[str], dsn: str, host: str | None, log: Path
) -> subprocess.Popen[bytes]:
    env = {**os.environ, "VERISCRIBE_DB": dsn, "VERISCRIBE_LEASE_S": str(LEASE_S)}
    if host is None:
        command = [sys.executable, "-m", "veriscribe.cli.app", *args]
    else:
        command = ["unshare", "-u", sys.executable, "-c", _SET_HOST, host, *args]
    with open(log, "wb") as err:
        return subprocess.Popen(
            command,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
        )


async def poll(dsn: str, sql: str, until: Any, within: float = 120.0) -> Any:
    deadline = time.monotonic() + within
    async with await Store.open(dsn) as store:
        while True:
            row = await store.fetchone(sql)
            value = row[0] if row else None
            if until(value):
                return value
            assert time.monotonic() < deadline, f"timed out waiting on {sql!r}"
            await asyncio.sleep(0.1)


async def test_a_killed_workers_articles_are_finished_by_the_others(
    pg_dsn: str, shared_data: Path, tmp_path: Path
) -> None:
    articles = shared_data / "articles"
    inputs = [str(articles / "pcd.jsonl"), str(articles / "jats")]
    out = tmp_path / "out.jsonl"
    named = _can_name_hosts()
    hosts = ["machine-a", "machine-b", "machine-c"] if named else [None] * 3
    logs = [tmp_path / f"worker{i}.log" for i in range(3)]
    # The first worker registers the run (reading the inputs) and works on it.
    batch = ["batch", *inputs, "--out", str(out), "--run-id", RUN, "--model", MODEL]
    procs = [
        start([*batch, "--concurrency", "2", "--quiet"], pg_dsn, hosts[0], logs[0])
    ]
    try:
        await _share_and_kill(pg_dsn, out, named, hosts, logs, procs)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


async def _share_and_kill(
    dsn: str,
    out: Path,
    named: bool,
    hosts: list[str | None],
    logs: list[Path],
    procs: list[subprocess.Popen[bytes]],
) -> None:
    first = procs[0]
    total = await poll(
        dsn,
        "SELECT COUNT(*) FROM run_items",
        lambda n: n >= 55 or first.poll() is not None,
    )
    assert first.poll() is None, logs[0].read_text()
    assert total == 55
    # Two more join with the run id alone: no input files.
    procs += [start(["worker", RUN, "--quiet"], dsn, hosts[i], logs[i]) for i in (1, 2)]
    victim = procs[1]
    mark = f"{hosts[1]}:%" if named else f"%:{victim.pid}:%"
    mine = f"status = 'running' AND claimed_by LIKE '{mark}'"
    # Late: nothing is left to claim and the victim holds articles, so the others
    # finish theirs first and must wait for its lease to run out.
    await poll(
        dsn,
        f"SELECT COUNT(*) FROM run_items WHERE {mine} AND "
        "(SELECT COUNT(*) FROM run_items WHERE status = 'pending') = 0",
        lambda n: n > 0,
    )
    async with await Store.open(dsn) as store:
        os.kill(victim.pid, signal.SIGKILL)
        held = {
            row[0]
            for row in await store.fetchall(
                f"SELECT item_id FROM run_items WHERE {mine}"
            )
        }
    assert held
    victim.wait(timeout=30)
    assert victim.returncode == -signal.SIGKILL
    for proc, log in ((procs[0], logs[0]), (procs[2], logs[2])):
        proc.wait(timeout=300)
        assert proc.returncode == 0, log.read_text()

    text = await asyncio.to_thread(out.read_text)
    results = [json.loads(line) for line in text.splitlines()]
    sources = [r["source"] for r in results]
    assert len(sources) == len(set(sources)) == total  # every article exactly once
    async with await Store.open(dsn) as store:
        runs = open_run_store(store)
        counts = await runs.counts(RUN)
        items = {i.item_id: i for i in await runs.items(RUN)}
        sessions = await runs.sessions(RUN)
    assert (counts.total, counts.remaining) == (total, 0)
    assert counts.done + counts.failed == total
    assert set(sources) == set(items)
    # What the dead worker held was claimed again and finished by the others.
    for item_id in held:
        assert items[item_id].status in ("done", "failed")
        assert items[item_id].attempts >= 2
    outcomes = {s.worker: s.outcome for s in sessions}
    (dead,) = [o for w, o in outcomes.items() if f":{victim.pid}:" in w]
    assert dead == "lost"
    if named:  # three "machines": the dead one was found by its lease alone
        assert {w.split(":")[0] for w in outcomes} == set(hosts)
    assert sorted(outcomes.values(), key=str).count("finished") == 2
