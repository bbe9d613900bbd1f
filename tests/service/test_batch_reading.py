"""A new run's articles are worked on while its inputs are still being read."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from veriscribe.options import AbstractOptions
from veriscribe.results import BatchSummary
from veriscribe.service.batch import register as register_module
from veriscribe.service.batch import run_batch
from veriscribe.service.batch.progress import CallMeter
from veriscribe.settings import Settings
from veriscribe.store import runs

ARTICLES = 60
BAD_LINES = (45, 55)  # after the first chunk (32 items at concurrency 2)


def dataset(path: Path) -> Path:
    """Write ARTICLES small articles, with unreadable lines among the later ones."""
    rows: list[str] = []
    for i in range(ARTICLES):
        if i in BAD_LINES:
            rows.append("{not json")
        text = (
            f"We enrolled {40 + i} adults with asthma in trial {i}. "
            f"Inhaled steroids cut attacks by {i % 9 + 1} per year."
        )
        rows.append(
            json.dumps(
                {
                    "article_id": f"a{i}",
                    "sections": [{"heading": "Results", "text": text}],
                }
            )
        )
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Record, in order, the items each registration chunk stored and each claim took."""
    seen: list[tuple[str, int]] = []
    put, claim = runs.put_items, runs.claim

    async def recording_put(store: Any, run_id: str, items: Any) -> None:
        await put(store, run_id, items)
        seen.append(("put", len(items)))

    async def recording_claim(*args: Any) -> list[runs.HeldItem]:
        held = await claim(*args)
        seen.append(("claim", len(held)))
        return held

    monkeypatch.setattr(runs, "put_items", recording_put)
    monkeypatch.setattr(runs, "claim", recording_claim)
    # Small reads and chunks, so that 60 articles make several chunks.
    monkeypatch.setattr(register_module, "READ_CHUNK", 5)
    monkeypatch.setattr(register_module, "REGISTER_CHUNK", 10)
    return seen


def sources(out: Path) -> Counter[str]:
    text = out.read_text(encoding="utf-8")
    assert text.endswith("\n")
    return Counter(json.loads(line)["source"] for line in text.splitlines())


def batch(cfg: Settings, data: Path, out: Path, **more: Any) -> Any:
    """Return the batch of the dataset at concurrency 2 (a coroutine to await or run)."""
    return run_batch(
        cfg,
        [str(data)],
        out,
        AbstractOptions(),
        concurrency=2,
        handle_signals=False,
        **more,
    )


def assert_every_item_once(summary: BatchSummary, out: Path) -> None:
    """The 60 articles and the 2 unreadable lines, each with exactly one line."""
    assert (summary.total, summary.done, summary.failed) == (62, 60, 2)
    counts = sources(out)
    assert len(counts) == 62 and set(counts.values()) == {1}


async def test_work_starts_before_reading_ends_and_every_item_has_one_line(
    tmp_path: Path, events: list[tuple[str, int]], db_target: str
) -> None:
    data = dataset(tmp_path / "many.jsonl")
    out = tmp_path / "out.jsonl"
    summary = await batch(Settings(db=db_target, model="sim"), data, out)
    puts = [i for i, (kind, _) in enumerate(events) if kind == "put"]
    claims = [i for i, (kind, n) in enumerate(events) if kind == "claim" and n]
    assert len(puts) > 2 and claims[0] < puts[-1]  # worked on while reading
    assert_every_item_once(summary, out)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    failed = sorted(r["source"] for r in rows if r.get("error"))
    assert failed == [f"{data}:46", f"{data}:57"]


async def test_a_stop_while_reading_is_resumed_without_loss(
    tmp_path: Path, events: list[tuple[str, int]], db_target: str
) -> None:
    data = dataset(tmp_path / "many.jsonl")
    out = tmp_path / "out.jsonl"
    cfg = Settings(db=db_target, model="sim")
    stop = asyncio.Event()
    put = runs.put_items

    async def stop_after_the_second_chunk(store: Any, run_id: str, items: Any) -> None:
        await put(store, run_id, items)
        if sum(kind == "put" for kind, _ in events) == 2:
            stop.set()

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runs, "put_items", stop_after_the_second_chunk)
        first = await batch(cfg, data, out, stop=stop)
    assert first.interrupted and first.total < 62
    second = await batch(cfg, data, out)
    assert not second.interrupted
    assert_every_item_once(second, out)


async def test_a_registration_error_ends_the_run_and_a_rerun_loses_nothing(
    tmp_path: Path, events: list[tuple[str, int]], db_target: str
) -> None:
    data = dataset(tmp_path / "many.jsonl")
    out = tmp_path / "out.jsonl"
    cfg = Settings(db=db_target, model="sim")
    put = runs.put_items

    async def failing_third_chunk(store: Any, run_id: str, items: Any) -> None:
        if sum(kind == "put" for kind, _ in events) == 2:
            raise OSError("disk full")
        await put(store, run_id, items)

    crashing = batch(cfg, data, out)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runs, "put_items", failing_third_chunk)
        # On an event loop of its own, as a crash ends its process: the articles it
        # cancels may leave their database sockets registered with that loop.
        with pytest.raises(OSError, match="disk full"):
            await asyncio.to_thread(asyncio.run, crashing)
    assert_every_item_once(await batch(cfg, data, out), out)


async def test_reading_goes_on_once_the_first_calls_are_out(
    tmp_path: Path,
    events: list[tuple[str, int]],
    db_target: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Reading on would take the event loop and the database from the first articles.
    started = CallMeter.call_started

    def recording(meter: CallMeter) -> None:
        started(meter)
        events.append(("call", meter.started))

    monkeypatch.setattr(CallMeter, "call_started", recording)
    data = dataset(tmp_path / "many.jsonl")
    out = tmp_path / "out.jsonl"
    summary = await batch(Settings(db=db_target, model="sim:latency=0.05"), data, out)
    puts = [i for i, (kind, _) in enumerate(events) if kind == "put"]
    calls = [i for i, (kind, _) in enumerate(events) if kind == "call"]
    # At concurrency 2: the second chunk is read once two calls have started.
    assert len(puts) > 2 and calls[1] < puts[1]
    assert_every_item_once(summary, out)


async def test_the_call_meter_says_when_enough_calls_have_started() -> None:
    meter, enough = CallMeter(), asyncio.Event()
    meter.notify(2, enough)
    meter.call_started()
    meter.call_ended(None)
    assert not enough.is_set()
    meter.call_started()
    assert enough.is_set() and meter.started == 2 and meter.in_flight == 1
    already = asyncio.Event()
    meter.notify(1, already)
    assert already.is_set()
