"""Pure text steps in worker processes: the same results as in place, and no loss."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from veriscribe import offload
from veriscribe.documents.articles import Article, read_articles
from veriscribe.nodes.abstract.checks import check_abstract
from veriscribe.offload import Offload, auto_workers
from veriscribe.text.sentences import first_sentences


def article(shared_data: Path) -> Article:
    path = shared_data / "articles" / "jats" / "plos__journal.pone.0008519.xml"
    (found,) = read_articles(path)
    assert isinstance(found, Article)
    return found


async def test_a_worker_returns_what_the_step_returns_in_place(
    shared_data: Path,
) -> None:
    paper = article(shared_data)
    texts = [p.text for p in paper.paragraphs]
    sentences = first_sentences(texts)
    # An abstract of the article's own sentences, one of them far too long.
    abstract = " ".join(sentences[:6])
    draft = "\n\n".join(sentences[6:12])
    in_place = check_abstract(abstract, draft, paper.body, 60)
    pool = Offload(1)
    try:
        assert pool.active
        assert await pool.run(first_sentences, texts) == sentences
        assert await pool.run(check_abstract, abstract, draft, paper.body, 60) == (
            in_place
        )
    finally:
        pool.close()
    assert not pool.active


async def test_a_killed_worker_costs_speed_not_the_result() -> None:
    pool = Offload(1)
    try:
        pid = await pool.run(os.getpid)
        assert pid != os.getpid()
        os.kill(pid, signal.SIGKILL)
        texts = ["First sentence here. Second one.", "Only one sentence"]
        # The step runs in place, and so does every later one.
        assert await pool.run(first_sentences, texts) == first_sentences(texts)
        assert not pool.active
        assert await pool.run(os.getpid) == os.getpid()
    finally:
        pool.close()


async def test_without_workers_steps_run_in_place() -> None:
    assert not offload.INLINE.active
    assert await offload.INLINE.run(os.getpid) == os.getpid()


@pytest.mark.parametrize(
    ("items", "embedded", "cores", "workers"),
    [
        (1000, False, 2, 2),
        (1000, False, 4, 3),
        (1000, False, 16, 4),
        (1000, True, 16, 0),  # the embedded model's decoding has every core
        (10, False, 16, 0),  # too few articles to pay for starting workers
        (1000, False, 1, 0),
    ],
)
def test_workers_start_only_where_they_pay(
    monkeypatch: pytest.MonkeyPatch,
    items: int,
    embedded: bool,
    cores: int,
    workers: int,
) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda _: set(range(cores)))
    assert auto_workers(items, embedded=embedded) == workers


def test_workers_end_when_their_parent_is_killed(tmp_path: Path) -> None:
    script = tmp_path / "parent.py"
    script.write_text(
        "import asyncio, os, sys\n"
        "from veriscribe.offload import Offload\n"
        "async def main():\n"
        "    pool = Offload(1)\n"
        "    print(await pool.run(os.getpid), flush=True)\n"
        "    await asyncio.sleep(60)\n"
        "asyncio.run(main())\n"
    )
    parent = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout is not None
    worker = int(parent.stdout.readline())
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(worker):
        time.sleep(0.1)
    assert not _alive(worker)


def _alive(pid: int) -> bool:
    """Whether a process runs (a zombie, dead but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
