"""Throughput of 1, 2 and 4 worker processes sharing one run in one PostgreSQL database.

One batch of N distinct article copies (the development articles cycled to N, as in
``bench/batch.py``, so the response cache cannot answer for the model) goes through
``veriscribe worker RUN`` processes on a fresh database per worker count. The model is
four fake OpenAI-compatible servers on loopback (``tests/fake_server.py``: 0.2 s
per call, at most 8 calls in flight each, HTTP 429 beyond), and every worker is given
all four with ``--endpoint`` x4, so its calls are balanced over them.

What a worker may keep in flight decides what "more workers" means. With ``--endpoint``
``--concurrency`` counts per server, and four servers x 8 = 32 slots are more than one
process needs to saturate them: a single worker at ``--concurrency 8`` would already
keep all 32 busy and more workers could add nothing. So each worker is one machine's
worth of calls, ``--calls-per-worker 8`` (``--concurrency 2`` per server x 4 servers),
and 4 workers x 8 fill the 32 slots exactly: the ideal is 4 workers four times as
fast as one, and no server ever has to refuse a call.

The run is registered once per database before the clock starts (reading the inputs
is the same work whatever the worker count). For each worker count it prints the wall
time from starting the processes to the last one's exit, the working window (first
claim to last finish, from ``run_items``: process start-up excluded), articles/s over
that window, the model calls and their ideal time (calls x latency / calls in flight),
the workers' CPU seconds per article (also net of their start-up, measured once on a
worker that finds no run and exits), the fake servers' CPU per article, the cores the
workers and servers kept busy, the peak calls in flight each server saw, and the HTTP
429s. The ratio 4 workers / 1 worker and the efficiency (ratio / 4) are taken over the
working windows. On a machine with few cores, CPU per article in the workers bounds
throughput at about cores / CPU-per-article articles/s, less what other processes take;
the last lines say how close the run came to that.

The checkpoint size is LangGraph's PostgreSQL tables (``checkpoints``,
``checkpoint_blobs``, ``checkpoint_writes``, with their indexes and TOAST) after the
one-worker run, divided by N.

Without ``--dsn ADMIN_DSN`` (a server where databases may be created and dropped), a
throwaway PostgreSQL server is started in a temporary directory (as the ``postgres``
user when run as root) and stopped at the end, also on error or interrupt.

The last line reads ``scaling=<x> efficiency=<x> checkpoint_kib=<x>``.

Usage: ``PYTHONPATH=src .venv/bin/python bench/scale.py [--articles 160]
[--workers 1,2,4] [--calls-per-worker 8] [--servers 4] [--per-server 8]
[--latency 0.2] [--dsn postgresql://postgres@127.0.0.1:5432/postgres]``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The script's own directory is on the path: share bench/batch.py's article copies.
from batch import dev_articles, write_copies

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
# The tests' fake model server and PostgreSQL helpers (a throwaway server, fresh
# databases on it).
from fake_server import FakeServer  # noqa: E402
from pg import fresh_database, pg_bin, throwaway_server  # noqa: E402
from veriscribe.llm.factory import make_llm  # noqa: E402
from veriscribe.llm.spec import parse_spec  # noqa: E402
from veriscribe.options import AbstractOptions  # noqa: E402
from veriscribe.service.batch import BatchRunner, RunConfig  # noqa: E402
from veriscribe.settings import Settings  # noqa: E402
from veriscribe.store import runs  # noqa: E402
from veriscribe.store.connect import open_database  # noqa: E402

RUN = "scale"
MODEL = "openai:fake"
CHECKPOINT_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")


@dataclass
class Trial:
    """What one worker count measured."""

    workers: int
    done: int
    failed: int
    total: int
    wall_s: float
    window_s: float
    calls: int
    ideal_s: float
    cpu_s: float
    server_cpu_s: float
    peaks: list[int]
    rejected: int
    checkpoint_bytes: int

    @property
    def cores_used(self) -> float:
        """Return the cores the workers and the servers kept busy on average."""
        return (self.cpu_s + self.server_cpu_s) / self.wall_s

    @property
    def rate(self) -> float:
        """Return articles finished per second of the working window."""
        return self.done / self.window_s


async def register(dsn: str, dataset: Path, out: Path, per_server: int) -> int:
    """Register the run's articles in the database; return how many there are."""
    config = RunConfig(MODEL, AbstractOptions(), [str(dataset)], str(out), per_server)
    async with await open_database(dsn) as store:
        await runs.ensure_run(store, RUN, "abstract", config.as_dict())
        llm = make_llm(parse_spec("sim"), Settings(db=dsn), store)
        await BatchRunner(store, llm, RUN, config).register()
        counts = await runs.counts(store, RUN)
    return counts.total


async def measure(dsn: str) -> tuple[int, int, int, float, int, int]:
    """Return done, failed, total, the working window, model calls, checkpoint bytes."""
    async with await open_database(dsn) as store:
        counts = await runs.counts(store, RUN)
        row = await store.fetchone(
            "SELECT MAX(finished_at) - MIN(claimed_at) FROM run_items WHERE run_id = ?",
            (RUN,),
        )
        calls = await store.fetchone(
            "SELECT COUNT(*) FROM llm_calls WHERE run_id = ? AND outcome = 'ok'",
            (RUN,),
        )
        size = await store.fetchone(
            "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = current_schema() AND c.relkind = 'r' "
            f"AND c.relname IN ({', '.join('?' for _ in CHECKPOINT_TABLES)})",
            CHECKPOINT_TABLES,
        )
    assert row is not None and calls is not None and size is not None
    return (
        counts.done,
        counts.failed,
        counts.total,
        float(row[0] or 0.0),
        int(calls[0]),
        int(size[0]),
    )


def start_worker(
    dsn: str, urls: list[str], per_server: int, out: Path, log: Path
) -> subprocess.Popen[bytes]:
    """Start one ``veriscribe worker`` process on the run."""
    env = {
        **os.environ,
        "VERISCRIBE_DB": dsn,
        "VERISCRIBE_LLM__OPENAI_SCHEMA": "json_schema",
        "PYTHONPATH": os.pathsep.join(
            [str(ROOT / "src"), *filter(None, [os.environ.get("PYTHONPATH")])]
        ),
    }
    env.pop("VERISCRIBE_ENDPOINTS_FILE", None)
    endpoints = [arg for url in urls for arg in ("--endpoint", url)]
    command = [sys.executable, "-m", "veriscribe.cli.app", "worker", RUN]
    command += [
        "--concurrency",
        str(per_server),
        *endpoints,
        "--out",
        str(out),
        "--quiet",
    ]
    with log.open("wb") as err:
        return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=err)


def trial(
    admin: str, work: Path, dataset: Path, workers: int, args: argparse.Namespace
) -> Trial:
    """Run the batch through ``workers`` processes on a fresh database."""
    per_server = args.calls_per_worker // args.servers
    with fresh_database(admin) as dsn:
        total = asyncio.run(register(dsn, dataset, work / "run.jsonl", per_server))
        servers = [
            FakeServer(latency=args.latency, max_in_flight=args.per_server).start()
            for _ in range(args.servers)
        ]
        procs: list[subprocess.Popen[bytes]] = []
        logs = [work / f"w{workers}-{i}.log" for i in range(workers)]
        try:
            cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
            own_before = resource.getrusage(resource.RUSAGE_SELF)
            started = time.perf_counter()
            procs = [
                start_worker(
                    dsn,
                    [s.url for s in servers],
                    per_server,
                    work / f"w{workers}-{i}.jsonl",
                    logs[i],
                )
                for i in range(workers)
            ]
            for proc, log in zip(procs, logs, strict=True):
                if proc.wait() != 0:
                    tail = log.read_text(errors="replace")[-2000:]
                    raise SystemExit(f"a worker exited with {proc.returncode}: {tail}")
            wall = time.perf_counter() - started
            cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
            own_after = resource.getrusage(resource.RUSAGE_SELF)
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            for server in servers:
                server.kill()
        done, failed, total, window, calls, size = asyncio.run(measure(dsn))
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (
        cpu_after.ru_stime - cpu_before.ru_stime
    )
    # This process only waits for the workers meanwhile: its CPU is the servers'.
    served = (own_after.ru_utime - own_before.ru_utime) + (
        own_after.ru_stime - own_before.ru_stime
    )
    in_flight = min(workers * args.calls_per_worker, args.servers * args.per_server)
    return Trial(
        workers=workers,
        done=done,
        failed=failed,
        total=total,
        wall_s=wall,
        window_s=window,
        calls=calls,
        ideal_s=calls * args.latency / in_flight,
        cpu_s=cpu,
        server_cpu_s=served,
        peaks=[s.stats.peak_in_flight for s in servers],
        rejected=sum(s.stats.rejected for s in servers),
        checkpoint_bytes=size,
    )


def startup_cpu(admin: str) -> float:
    """Return the CPU seconds a worker process spends before its first claim.

    Measured on a worker started for a run that does not exist: it imports, opens
    the database and exits.
    """
    with fresh_database(admin) as dsn:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(
            [sys.executable, "-m", "veriscribe.cli.app", "worker", "no-such-run"],
            env={**os.environ, "VERISCRIBE_DB": dsn},
            capture_output=True,
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


@contextlib.contextmanager
def server(dsn: str | None) -> Iterator[str]:
    """Yield the admin DSN given, or that of a throwaway server stopped at the end."""
    if dsn:
        yield dsn
        return
    bindir = pg_bin()
    if bindir is None:
        raise SystemExit("no PostgreSQL server binaries: install them or pass --dsn")
    with throwaway_server(bindir) as admin:
        yield admin


def _terminate(signum: int, frame: Any) -> None:
    # SIGTERM unwinds like Ctrl-C, so the throwaway server is stopped too.
    raise KeyboardInterrupt


def main() -> None:
    """Run the batch through each worker count and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=160)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--calls-per-worker", type=int, default=8)
    parser.add_argument("--servers", type=int, default=4)
    parser.add_argument("--per-server", type=int, default=8)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--dsn", help="admin DSN of a server to create databases on")
    args = parser.parse_args()
    counts = [int(n) for n in args.workers.split(",")]
    if args.calls_per_worker % args.servers:
        parser.error("--calls-per-worker must be a multiple of --servers")
    signal.signal(signal.SIGTERM, _terminate)
    work = Path(tempfile.mkdtemp(prefix="veriscribe-scale-"))
    dataset = work / "articles.jsonl"
    write_copies(dev_articles(), args.articles, dataset)
    cores = os.cpu_count() or 1
    print(
        f"{args.articles} articles; {args.servers} servers x {args.per_server} calls, "
        f"{args.latency} s each; every worker --concurrency {args.calls_per_worker // args.servers}"
        f" x {args.servers} servers = {args.calls_per_worker} calls in flight; "
        f"{cores} cores, load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    trials: dict[int, Trial] = {}
    with server(args.dsn) as admin:
        startup = startup_cpu(admin)
        print(f"worker start-up: {startup:.1f} CPU s per process", flush=True)
        for workers in counts:
            t = trial(admin, work, dataset, workers, args)
            trials[workers] = t
            print(
                f"workers={t.workers} done={t.done}/{t.total} failed={t.failed} "
                f"wall={t.wall_s:.1f}s window={t.window_s:.1f}s "
                f"articles/s={t.rate:.2f} calls={t.calls} ideal={t.ideal_s:.1f}s "
                f"cpu/article={1000 * t.cpu_s / t.total:.0f}ms "
                f"server_cpu/article={1000 * t.server_cpu_s / t.total:.0f}ms "
                f"peak_in_flight={t.peaks} rejected={t.rejected}",
                flush=True,
            )
    first, last = trials[counts[0]], trials[counts[-1]]

    def net(t: Trial) -> float:
        """Return the workers' CPU seconds per article, their start-up taken out."""
        return max(0.0, t.cpu_s - t.workers * startup) / t.total

    base = first.rate / counts[0]
    print()
    print(
        f"{'workers':>7} {'articles/s':>10} {'x 1 worker':>10} {'ideal x':>8} "
        f"{'window s':>8} {'wall s':>7} {'CPU ms/article':>14} "
        f"{'net of start-up':>15} {'cores used':>10}"
    )
    for workers, t in trials.items():
        print(
            f"{workers:>7} {t.rate:>10.2f} {t.rate / base:>10.2f} "
            f"{first.ideal_s / t.ideal_s * counts[0]:>8.2f} {t.window_s:>8.1f} "
            f"{t.wall_s:>7.1f} {1000 * t.cpu_s / t.total:>14.0f} "
            f"{1000 * net(t):>15.0f} {t.cores_used:>10.2f}"
        )
    scaling = last.rate / first.rate
    efficiency = scaling / (counts[-1] / counts[0])
    cpu_per_article = max(net(t) for t in trials.values())
    print(
        f"CPU bound: {cores} cores / {1000 * cpu_per_article:.0f} ms per article in "
        f"the workers (start-up aside) = {cores / cpu_per_article:.1f} articles/s "
        "at most, before the fake servers, PostgreSQL and anything else on the "
        "machine take their share; "
        f"workers and servers got {max(t.cores_used for t in trials.values()):.2f} "
        f"cores at most (load now {os.getloadavg()[0]:.1f})"
    )
    kib = first.checkpoint_bytes / first.total / 1024
    print(f"scaling={scaling:.2f} efficiency={efficiency:.2f} checkpoint_kib={kib:.1f}")


if __name__ == "__main__":
    main()
