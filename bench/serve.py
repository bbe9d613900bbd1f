"""`veriscribe serve` under load, and restarted in the middle of an abstract run.

One server (a real uvicorn process on a loopback port, model ``sim``) gets a guideline
corpus, then a 20-article abstract run (one JSON-lines upload of distinct copies of the
development articles, as in ``bench/batch.py``) and, at the same moment, 50 concurrent
streamed answers (``Accept: text/event-stream``). Once a fifth of the answers are
finished, with the others and the run's first articles still in flight, the server gets
SIGTERM: it drains (no new work; the answers and articles in flight finish, the rest of
the run stays pending) and exits. What it left is read from the database, then a second
server on the same database resumes the run at start and finishes it. Each model call
of ``sim`` takes ``--latency`` seconds, so that the run lasts long enough to be cut.

An answer fails unless its stream ends with an ``answer`` event holding checked claims;
an article fails if its result is a failure line, and is lost if the finished run holds
no result for it or the output file does not hold it exactly once.

The last line reads ``requests=<answers + articles> failed=<n> lost=<n> p50_ms=<x>
p95_ms=<x> rps=<x>``, the latencies and rate being those of the streamed answers (from
the request to the final event, while the run works beside them).

Usage: ``.venv/bin/python bench/serve.py [--answers 50] [--articles 20]
[--latency 0.02] [--work-slots 4]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

# The script's own directory is on the path: share bench/batch.py's article copies.
from batch import dev_articles, write_copies
from veriscribe.service import show_run
from veriscribe.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
GUIDELINE = ROOT / "tests" / "fixtures" / "guidelines" / "hypertension.md"
QUESTIONS = [
    "How is hypertension diagnosed?",
    "What lifestyle changes lower blood pressure?",
    "Which drugs are first-line for hypertension?",
    "How much sodium per day?",
    "When should blood pressure be measured again?",
]
EVENT_STREAM = {"Accept": "text/event-stream"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    index = min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))
    return ordered[index]


class Served:
    """One `veriscribe serve` process."""

    def __init__(self, work: Path, args: argparse.Namespace, name: str) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = (work / f"{name}.log").open("w")
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        env.pop("VERISCRIBE_SERVE_TOKEN", None)
        command = [sys.executable, "-m", "veriscribe.cli.app", "serve"]
        command += ["--port", str(self.port), "--db", str(work / "bench.sqlite")]
        command += ["--model", args.model, "--work-dir", str(work / "serve")]
        command += ["--work-slots", str(args.work_slots), "--queue", str(args.answers)]
        command += ["--drain", str(args.drain)]
        self.process = subprocess.Popen(
            command, env=env, stdout=self.log, stderr=subprocess.STDOUT
        )

    async def ready(self, http: httpx.AsyncClient) -> float:
        """Wait until the server answers; return how long it took."""
        started = time.perf_counter()
        while time.perf_counter() - started < 120:
            if self.process.poll() is not None:
                raise SystemExit(f"the server exited ({self.process.returncode})")
            try:
                if (await http.get(f"{self.base}/healthz")).status_code == 200:
                    return time.perf_counter() - started
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)
        raise SystemExit("the server did not start")

    async def stop(self) -> tuple[int, float]:
        """Send SIGTERM and wait for the exit; return its code and how long it took."""
        started = time.perf_counter()
        self.process.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(self.process.wait, 120)
        self.log.close()
        return code, time.perf_counter() - started


async def ask(http: httpx.AsyncClient, base: str, question: str) -> float | str:
    """Stream one answer; return its time in ms, or why it failed."""
    started = time.perf_counter()
    last, data = "", ""
    try:
        async with http.stream(
            "POST",
            f"{base}/v1/answers",
            json={"question": question, "corpus": "htn"},
            headers=EVENT_STREAM,
        ) as response:
            if response.status_code != 200:
                return f"status {response.status_code}"
            async for line in response.aiter_lines():
                if line.startswith("event:"):
                    last = line.removeprefix("event:").strip()
                elif line.startswith("data:"):
                    data = line.removeprefix("data:").strip()
    except httpx.HTTPError as exc:
        return type(exc).__name__
    if last != "answer":
        return f"stream ended with {last or 'nothing'}"
    if not json.loads(data).get("claims"):
        return "no claim"
    return (time.perf_counter() - started) * 1000


async def run_counts(http: httpx.AsyncClient, base: str, run_id: str) -> dict[str, Any]:
    summary: dict[str, Any] = (await http.get(f"{base}/v1/runs/{run_id}")).json()
    return summary


async def restart_mid_run(
    http: httpx.AsyncClient,
    first: Served,
    run_id: str,
    total: int,
    answered: list[float | str],
    fifth: asyncio.Event,
) -> dict[str, Any]:
    """SIGTERM the server once part of the work is done; report what it left."""
    # A fifth of the answers finished, the others and the run's articles in flight.
    await fifth.wait()
    summary = await run_counts(http, first.base, run_id)
    at_signal = summary["done"] + summary["failed"]
    answers_at_signal = len(answered)
    code, seconds = await first.stop()
    return {
        "done_at_signal": at_signal,
        "answers_at_signal": answers_at_signal,
        "exit_code": code,
        "stop_s": seconds,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=50)
    parser.add_argument("--articles", type=int, default=20)
    parser.add_argument(
        "--latency",
        type=float,
        default=0.02,
        help="Seconds each sim model call takes (sim:latency=...).",
    )
    parser.add_argument("--work-slots", type=int, default=4)
    parser.add_argument("--drain", type=float, default=25.0)
    args = parser.parse_args()
    args.model = f"sim:latency={args.latency}" if args.latency else "sim"

    with tempfile.TemporaryDirectory(prefix="veriscribe-serve-") as tmp:
        work = Path(tmp)
        dataset = work / "articles.jsonl"
        write_copies(dev_articles(), args.articles, dataset)
        limits = httpx.Limits(max_connections=args.answers + 10)
        async with httpx.AsyncClient(timeout=300, limits=limits) as http:
            first = Served(work, args, "first")
            print(f"server 1 up in {await first.ready(http):.1f} s ({args.model})")
            files = {"files": ("hypertension.md", GUIDELINE.read_bytes())}
            added = await http.post(
                f"{first.base}/v1/corpora/htn/documents", files=files
            )
            added.raise_for_status()
            upload = {"files": (dataset.name, dataset.read_bytes())}
            started = await http.post(f"{first.base}/v1/abstracts", files=upload)
            started.raise_for_status()
            run_id = started.json()["run_id"]

            began = time.perf_counter()
            answered: list[float | str] = []
            fifth = asyncio.Event()

            async def one(question: str) -> float | str:
                outcome = await ask(http, first.base, question)
                answered.append(outcome)
                if len(answered) >= args.answers // 5:
                    fifth.set()
                return outcome

            asked = [one(QUESTIONS[n % len(QUESTIONS)]) for n in range(args.answers)]

            async def answer_all() -> tuple[list[float | str], float]:
                results = await asyncio.gather(*asked)
                return list(results), time.perf_counter() - began

            (answers, answer_s), restart = await asyncio.gather(
                answer_all(),
                restart_mid_run(http, first, run_id, args.articles, answered, fifth),
            )
            print(
                f"SIGTERM with {restart['done_at_signal']}/{args.articles} articles and "
                f"{restart['answers_at_signal']}/{args.answers} answers finished; "
                f"server 1 drained and exited (code {restart['exit_code']}) "
                f"in {restart['stop_s']:.1f} s"
            )

            # What the first server left in the database, before another starts.
            left = await show_run(Settings(db=work / "bench.sqlite"), run_id)
            print(
                f"left by server 1: status={left.status} done={left.done} "
                f"pending={left.pending} running={left.running} failed={left.failed}"
            )
            second = Served(work, args, "second")
            await second.ready(http)
            stopped = await run_counts(http, second.base, run_id)
            resumed = time.perf_counter()
            while stopped["status"] != "finished":
                if time.perf_counter() - resumed > 600:
                    break
                await asyncio.sleep(0.2)
                stopped = await run_counts(http, second.base, run_id)
            print(
                f"server 2 resumed the run and it is {stopped['status']} after "
                f"{time.perf_counter() - resumed:.1f} s"
            )
            results = (await http.get(f"{second.base}/v1/runs/{run_id}/results")).json()
            out = Path(stopped["out"])
            text = await asyncio.to_thread(out.read_text, "utf-8")
            lines = [json.loads(line) for line in text.splitlines()]
            await second.stop()

    ids = {line["id"] for line in results}
    written = [line["id"] for line in lines]
    lost_articles = args.articles - len(ids)
    lost_articles += sum(1 for i in ids if written.count(i) != 1)
    failed_articles = sum(1 for line in results if "error" in line)
    good = [ms for ms in answers if isinstance(ms, float)]
    failed_answers = len(answers) - len(good)
    reasons = sorted({r for r in answers if isinstance(r, str)})
    for reason in reasons:
        print(f"answers failed ({reason}): {answers.count(reason)}")
    print(
        f"answers: {len(good)}/{len(answers)} streamed to the end in {answer_s:.1f} s; "
        f"articles: {len(ids)} with a result, {len(lines)} lines written, "
        f"{failed_articles} failed"
    )
    print(
        f"requests={len(answers) + args.articles} "
        f"failed={failed_answers + failed_articles} lost={lost_articles} "
        f"p50_ms={percentile(good, 0.5):.0f} p95_ms={percentile(good, 0.95):.0f} "
        f"rps={len(good) / answer_s:.1f}"
    )


if __name__ == "__main__":
    asyncio.run(main())
