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

from typer.testing import CliRunner

from veriscribe.cli.app import app
from veriscribe.store import runs
from veriscribe.store.connect import open_database

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
    async with await open_database(dsn) as store:
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
    async with await open_database(dsn) as store:
        # Frozen first, so that what it holds cannot change between the look and the
        # kill (on a loaded machine it may finish them meanwhile: then look again).
        for _ in range(20):
            os.kill(victim.pid, signal.SIGSTOP)
            # A statement it sent just before it stopped (the commit of a finished
            # article) may still be under way in the server: let it land first.
            await asyncio.sleep(0.5)
            held = {
                row[0]
                for row in await store.fetchall(
                    f"SELECT item_id FROM run_items WHERE {mine}"
                )
            }
            if held:
                break
            os.kill(victim.pid, signal.SIGCONT)
            await asyncio.sleep(0.2)
        os.kill(victim.pid, signal.SIGKILL)
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
    async with await open_database(dsn) as store:
        counts = await runs.counts(store, RUN)
        items = {i.item_id: i for i in await runs.items(store, RUN)}
        sessions = await runs.sessions(store, RUN)
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


def test_a_worker_needs_an_existing_run(db_target: str) -> None:
    result = CliRunner().invoke(app, ["--db", db_target, "worker", "nope"])
    assert result.exit_code == 1
    assert "no run 'nope'" in result.output


def test_a_worker_finishes_a_run_without_its_inputs(
    db_target: str, shared_data: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    # The run is registered from a copy of the inputs that is then deleted.
    copy = tmp_path / "pcd.jsonl"
    copy.write_bytes((shared_data / "articles" / "pcd.jsonl").read_bytes())
    out = tmp_path / "first.jsonl"

    async def register() -> None:
        from veriscribe.llm.factory import make_llm
        from veriscribe.llm.spec import parse_spec
        from veriscribe.options import AbstractOptions
        from veriscribe.service.batch import BatchRunner, RunConfig
        from veriscribe.settings import Settings

        config = RunConfig("sim", AbstractOptions(), [str(copy)], str(out), 2)
        async with await open_database(db_target) as store:
            await runs.ensure_run(store, RUN, "abstract", config.as_dict())
            llm = make_llm(parse_spec("sim"), Settings(), store)
            await BatchRunner(store, llm, RUN, config).register()

    asyncio.run(register())
    copy.unlink()
    monkeypatch.delenv("VERISCRIBE_DB")
    mine = tmp_path / "mine.jsonl"
    result = CliRunner().invoke(
        app, ["worker", RUN, "--db", db_target, "--out", str(mine), "--json"]
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["done"], summary["failed"], summary["out"]) == (11, 0, str(mine))
    lines = [json.loads(line) for line in mine.read_text().splitlines()]
    assert len(lines) == 11 and all(line["abstract"] for line in lines)
    assert not out.exists()  # the run's own file was left to its owner
