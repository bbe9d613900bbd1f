"""A batch over 1, 2 and 4 model servers, and over 4 with one killed part way.

Each server is a fake OpenAI-compatible server on loopback (``tests/fake_server.py``)
that answers like ``sim`` after a fixed latency and takes at most ``--per-server`` calls
at once; the client's limit per server is the same. For each server count K the batch
of N distinct article copies (as in ``bench/batch.py``) runs on a fresh database and
prints its wall time, its model calls, the ideal time (calls x latency / (K x limit)),
the speedup over one server and the peak calls in flight each server saw (never above
its limit; a 429 would be counted as ``rejected``).

Then the fault trial: four servers, one killed after ``--kill-after`` of the four-server
time. It prints articles done, failed and lost (missing from the output), the killed
server's dropped requests, and what ``runs show`` reports per server.

The last line reads ``speedup_2=<x> speedup_4=<x> efficiency_4=<x> killed_done=<n>/<N>
killed_lost=<n> rejected=<n>``.

Usage: ``.venv/bin/python bench/endpoints.py [--articles 40] [--latency 0.3]
[--per-server 4] [--kill-after 0.3]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

# The script's own directory is on the path: share bench/batch.py's article copies.
from batch import dev_articles, write_copies

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
# The tests' fake model server.
from fake_server import FakeServer  # noqa: E402
from veriscribe.options import AbstractOptions  # noqa: E402
from veriscribe.results import RunSummary  # noqa: E402
from veriscribe.service.batch import run_batch, show_run  # noqa: E402
from veriscribe.settings import LLMSettings, Settings  # noqa: E402


async def trial(
    work: Path,
    name: str,
    dataset: Path,
    servers: list[FakeServer],
    per_server: int,
    kill: tuple[FakeServer, float] | None = None,
) -> tuple[float, RunSummary]:
    """Run the batch over ``servers``; return its wall time and ``runs show`` summary."""
    settings = Settings(
        db=work / f"{name}.sqlite",
        endpoints=[s.url for s in servers],
        llm=LLMSettings(openai_schema="json_schema"),
    )

    async def killer() -> None:
        if kill is not None:
            await asyncio.sleep(kill[1])
            await asyncio.to_thread(kill[0].kill)

    started = time.perf_counter()
    summary, _ = await asyncio.gather(
        run_batch(
            settings.with_overrides(model="openai:fake"),
            [str(dataset)],
            work / f"{name}.jsonl",
            AbstractOptions(),
            concurrency=per_server,
            handle_signals=False,
        ),
        killer(),
    )
    seconds = time.perf_counter() - started
    return seconds, await show_run(settings, summary.run_id)


def written_abstracts(path: Path) -> int:
    """Return how many distinct articles of a batch output have an abstract."""
    ids = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        if item.get("abstract") and not item.get("error"):
            ids.add(item["source"])
    return len(ids)


async def main() -> None:
    """Run the trials and print their numbers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=40)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--per-server", type=int, default=4)
    parser.add_argument("--kill-after", type=float, default=0.3)
    args = parser.parse_args()
    os.environ.pop("VERISCRIBE_ENDPOINTS_FILE", None)
    work = Path(tempfile.mkdtemp(prefix="veriscribe-endpoints-"))
    dataset = work / "articles.jsonl"
    write_copies(dev_articles(), args.articles, dataset)
    times: dict[int, float] = {}
    rejected = 0
    for count in (1, 2, 4):
        servers = [
            FakeServer(latency=args.latency, max_in_flight=args.per_server).start()
            for _ in range(count)
        ]
        try:
            seconds, shown = await trial(
                work, f"k{count}", dataset, servers, args.per_server
            )
        finally:
            for server in servers:
                server.kill()
        times[count] = seconds
        calls = shown.calls
        ideal = calls * args.latency / (count * args.per_server)
        peaks = [s.stats.peak_in_flight for s in servers]
        rejected += sum(s.stats.rejected for s in servers)
        print(
            f"servers={count} articles={shown.done}/{shown.total} "
            f"calls={calls} seconds={seconds:.1f} ideal={ideal:.1f} "
            f"efficiency={ideal / seconds:.2f} speedup={times[1] / seconds:.2f} "
            f"peak_in_flight={peaks}",
            flush=True,
        )
    servers = [
        FakeServer(latency=args.latency, max_in_flight=args.per_server).start()
        for _ in range(4)
    ]
    victim = servers[-1]
    try:
        seconds, shown = await trial(
            work,
            "killed",
            dataset,
            servers,
            args.per_server,
            kill=(victim, args.kill_after * times[4]),
        )
    finally:
        for server in servers:
            server.kill()
    written = written_abstracts(work / "killed.jsonl")
    lost = shown.total - shown.done - shown.failed
    print(
        f"killed trial: seconds={seconds:.1f} done={shown.done} "
        f"failed={shown.failed} lost={lost} abstracts_written={written} "
        f"dropped_by_victim={victim.stats.failed} call_log={shown.call_log}",
        flush=True,
    )
    for row in shown.endpoints:
        marker = " (killed)" if row.endpoint == victim.url else ""
        print(
            f"  {row.endpoint}{marker}: calls={row.calls} errors={row.errors} "
            f"tokens={row.prompt_tokens + row.output_tokens} "
            f"p50={row.latency_p50_s} p95={row.latency_p95_s}",
            flush=True,
        )
    # What share of four servers' capacity the balancing turns into speed.
    efficiency = times[1] / times[4] / 4
    print(
        f"speedup_2={times[1] / times[2]:.2f} speedup_4={times[1] / times[4]:.2f} "
        f"efficiency_4={efficiency:.2f} killed_done={shown.done}/{shown.total} "
        f"killed_lost={lost} rejected={rejected}"
    )


if __name__ == "__main__":
    asyncio.run(main())
