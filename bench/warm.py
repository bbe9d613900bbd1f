"""`ask` from a new process each time (cold) against the same questions through `serve` (warm).

A new process reads the corpus's sections, builds its BM25 and fused indexes and reads
its sentence vectors back from the store before its first question; `serve` does that
once per corpus and keeps them (`veriscribe.service.WarmIndexes`). Both phases run on
their own copy of a SQLite database holding the corpus, so that no answer is reused from
the other phase's threads, and each question is distinct. The default path calls no model.

Printed per question: cold and warm seconds; then the median and 95th percentile of
each, the warm server's first question apart (it builds the indexes). The last line reads
``questions=<n> cold_p50_ms=<x> cold_p95_ms=<x> warm_first_ms=<x> warm_p50_ms=<x>
warm_p95_ms=<x> speedup_p50=<cold/warm>``.

Usage: ``.venv/bin/python bench/warm.py --db CORPUS.sqlite --corpus NAME
[--questions FILE]`` (one question a line; default: ten questions on the VA/DoD
guidelines). Build a corpus first, for example ``VERISCRIBE_DB=v.sqlite veriscribe
corpus add vadod ../shared/data/guidelines/vadod --model sim``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

QUESTIONS = [
    "What should I give for COPD flare ups?",
    "Is aspirin recommended in pregnancy?",
    "How do I treat a migraine attack?",
    "What blood pressure target for older adults?",
    "Should opioids be tapered?",
    "When should statins be used for lipids?",
    "Is exercise good for headaches?",
    "Which inhaler first for COPD?",
    "Can pregnant women take ibuprofen?",
    "How often should blood pressure be measured at home?",
]
VERISCRIBE = [sys.executable, "-c", "from veriscribe.cli.app import main; main()"]


def percentile(values: list[float], share: float) -> float:
    """Return the nearest-rank percentile of a list of values."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def cold(db: Path, corpus: str, questions: list[str]) -> list[float]:
    """Return the seconds of each question asked by a new process."""
    env = os.environ | {"VERISCRIBE_DB": str(db)}
    seconds = []
    for question in questions:
        started = time.perf_counter()
        done = subprocess.run(
            [*VERISCRIBE, "ask", question, "--corpus", corpus, "--json"],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        seconds.append(time.perf_counter() - started)
        fresh(json.loads(done.stdout))
    return seconds


def fresh(answer: dict[str, Any]) -> None:
    """Stop if an answer was reused from a thread instead of answered."""
    if answer.get("reused"):
        raise SystemExit(
            "an answer was reused from an earlier thread: give a database in which "
            "none of these questions was asked"
        )


def free_port() -> int:
    """Return a loopback port no one listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def warm(db: Path, corpus: str, questions: list[str]) -> list[float]:
    """Return the seconds of each question asked through one `serve` process."""
    port = free_port()
    env = os.environ | {"VERISCRIBE_DB": str(db)}
    server = subprocess.Popen(
        [*VERISCRIBE, "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=url, timeout=600) as client:
            for _ in range(600):
                try:
                    if client.get("/readyz").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.1)
            else:
                raise SystemExit("serve did not come up")
            seconds = []
            for question in questions:
                started = time.perf_counter()
                response = client.post(
                    "/v1/answers", json={"corpus": corpus, "question": question}
                )
                response.raise_for_status()
                seconds.append(time.perf_counter() - started)
                fresh(response.json())
            return seconds
    finally:
        server.terminate()
        server.wait(timeout=60)


def main() -> None:
    """Run both phases and print the table and last line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--questions", type=Path)
    args = parser.parse_args()
    questions = (
        [q.strip() for q in args.questions.read_text("utf-8").splitlines() if q.strip()]
        if args.questions
        else QUESTIONS
    )
    with tempfile.TemporaryDirectory() as tmp:
        copies = [Path(tmp) / f"{phase}.sqlite" for phase in ("cold", "warm")]
        for copy in copies:
            shutil.copyfile(args.db, copy)
        cold_s = cold(copies[0], args.corpus, questions)
        warm_s = warm(copies[1], args.corpus, questions)
    print(f"{'question':<56} {'cold s':>7} {'warm s':>7}")
    for question, c, w in zip(questions, cold_s, warm_s, strict=True):
        print(f"{question[:56]:<56} {c:>7.2f} {w:>7.2f}")
    after = warm_s[1:] or warm_s
    cold_p50, warm_p50 = statistics.median(cold_s), statistics.median(after)
    print(
        f"questions={len(questions)} cold_p50_ms={1000 * cold_p50:.0f} "
        f"cold_p95_ms={1000 * percentile(cold_s, 0.95):.0f} "
        f"warm_first_ms={1000 * warm_s[0]:.0f} warm_p50_ms={1000 * warm_p50:.0f} "
        f"warm_p95_ms={1000 * percentile(after, 0.95):.0f} "
        f"speedup_p50={cold_p50 / warm_p50:.1f}"
    )


if __name__ == "__main__":
    main()
