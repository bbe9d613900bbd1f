"""Batches of real development articles on the simulated backend."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from veriscribe.errors import ConfigError, InputError, VeriscribeError
from veriscribe.offload import Offload
from veriscribe.options import AbstractOptions
from veriscribe.service.batch import BatchProgress, default_run_id, run_batch
from veriscribe.service.batch import work as batch_module
from veriscribe.settings import Settings
from veriscribe.store import calls
from veriscribe.store.connect import open_database

JATS = [
    "plos__journal.pone.0008519.xml",
    "plos__journal.pntd.0002570.xml",
    "epmc__PMC4101712.xml",
]


def settings(db: str, model: str = "sim") -> Settings:
    return Settings(db=db, model=model)


def lines(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    assert text == "" or text.endswith("\n")
    return [json.loads(raw) for raw in text.splitlines()]


async def call_log(db: str) -> dict[str, int]:
    async with await open_database(db) as store:
        return await calls.call_counts(store)


@pytest.fixture
def inputs(shared_data: Path, tmp_path: Path) -> list[str]:
    articles = shared_data / "articles"
    bad_lines = tmp_path / "mixed.jsonl"
    bad_lines.write_text(
        json.dumps(
            {
                "article_id": "tiny-1",
                "sections": [
                    {
                        "heading": "Methods",
                        "text": "We enrolled 40 adults with asthma in a small trial.",
                    }
                ],
            }
        )
        + "\n{not json\n"
    )
    broken = tmp_path / "broken.xml"
    broken.write_text("<article><body><sec><p>Unclosed</sec></body>")
    return [
        *(str(articles / "jats" / name) for name in JATS),
        str(articles / "pcd.jsonl"),
        str(bad_lines),
        str(broken),
        str(tmp_path / "missing.xml"),
    ]


EXPECTED_ITEMS = 3 + 11 + 2 + 1 + 1


async def test_faulty_backend_every_article_ends_with_abstract_or_reason(
    inputs: list[str], tmp_path: Path, db_target: str
) -> None:
    out = tmp_path / "out.jsonl"
    seen: list[BatchProgress] = []
    summary = await run_batch(
        settings(db_target, "sim:latency=0.02,fail=0.2,seed=3"),
        inputs,
        out,
        AbstractOptions(),
        concurrency=8,
        on_progress=seen.append,
        handle_signals=False,
    )
    results = lines(out)
    assert len(results) == EXPECTED_ITEMS
    assert len({r["source"] for r in results}) == EXPECTED_ITEMS
    for result in results:
        if "abstract" in result:
            assert result["abstract"].strip(), result["source"]
            assert "error" not in result
        else:
            assert result["error"].strip(), result["source"]
    by_source = {r["source"]: r for r in results}
    assert "invalid JSON" in by_source[f"{inputs[4]}:2"]["error"]
    assert "malformed XML" in by_source[inputs[5]]["error"]
    assert "no such file" in by_source[inputs[6]]["error"]
    assert by_source[f"{inputs[4]}:1"]["id"] == "tiny-1"
    assert summary.remaining == 0 and summary.status == "finished"
    assert summary.done + summary.failed == EXPECTED_ITEMS
    assert len(summary.failures) == summary.failed >= 3
    assert all(f.reason for f in summary.failures)
    # The injected faults happened and were retried or recorded, not hidden.
    log = await call_log(db_target)
    assert log.get("timeout", 0) + log.get("unavailable", 0) > 0
    assert any(r.get("fallbacks") for r in results if "abstract" in r)
    # The model's call limit was used fully and never exceeded.
    assert summary.session.peak_calls_in_flight == 8
    assert max(p.calls_in_flight for p in seen) <= 8
    assert seen[-1].calls_in_flight == 0 and seen[-1].stage == "finished"


async def test_rerun_of_a_finished_configuration_makes_no_model_call(
    shared_data: Path, tmp_path: Path, db_target: str
) -> None:
    pcd = [str(shared_data / "articles" / "pcd.jsonl")]
    cfg = settings(db_target)
    db = db_target
    first = await run_batch(
        cfg,
        pcd,
        tmp_path / "a.jsonl",
        AbstractOptions(),
        handle_signals=False,
    )
    made = (await call_log(db))["ok"]
    assert first.session.calls == made > 0

    # The same command: every item is done, nothing runs.
    again = await run_batch(
        cfg,
        pcd,
        tmp_path / "a.jsonl",
        AbstractOptions(),
        handle_signals=False,
    )
    assert again.session.calls == 0 and again.session.processed == 0
    # Another run of the same configuration: the finished threads answer.
    other = await run_batch(
        cfg,
        pcd,
        tmp_path / "b.jsonl",
        AbstractOptions(),
        run_id="second",
        handle_signals=False,
    )
    assert other.session.calls == 0 and other.done == 11
    # Even with the checkpoints gone, the response cache answers every call.
    async with await open_database(db) as store:
        tables = ["checkpoints", "writes"]
        if store.dialect.postgres:
            tables = ["checkpoints", "checkpoint_blobs", "checkpoint_writes"]
        for table in tables:
            await store.execute(f"DELETE FROM {table}")
    third = await run_batch(
        cfg,
        pcd,
        tmp_path / "c.jsonl",
        AbstractOptions(),
        run_id="third",
        handle_signals=False,
    )
    assert third.session.calls == 0 and third.done == 11
    assert (await call_log(db))["ok"] == made
    assert (await call_log(db))["cached"] == made
    abstracts = {
        name: {r["source"]: r["abstract"] for r in lines(tmp_path / name)}
        for name in ("a.jsonl", "b.jsonl", "c.jsonl")
    }
    assert abstracts["a.jsonl"] == abstracts["b.jsonl"] == abstracts["c.jsonl"]


async def test_failed_items_are_retried_and_their_lines_replaced(
    shared_data: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    db_target: str,
) -> None:
    pcd = [str(shared_data / "articles" / "pcd.jsonl")]
    real = batch_module.run_abstract
    broken = {"10.5888/pcd21.230162"}

    async def flaky(*args: Any, **kwargs: Any) -> dict[str, Any]:
        if args[2].id in broken:
            raise VeriscribeError("server went away")
        return await real(*args, **kwargs)

    monkeypatch.setattr(batch_module, "run_abstract", flaky)
    out = tmp_path / "out.jsonl"
    cfg = settings(db_target)
    first = await run_batch(cfg, pcd, out, AbstractOptions(), handle_signals=False)
    assert first.failed == 1 and first.done == 10
    (failure,) = first.failures
    assert failure.reason == "server went away" and failure.attempts == 1
    assert [r["error"] for r in lines(out) if "error" in r] == ["server went away"]

    broken.clear()
    second = await run_batch(cfg, pcd, out, AbstractOptions(), handle_signals=False)
    assert second.failed == 0 and second.done == 11
    assert second.session.processed == 1
    results = lines(out)
    assert len(results) == 11 and all("abstract" in r for r in results)


async def test_output_file_is_repaired_from_the_database(
    shared_data: Path, tmp_path: Path, db_target: str
) -> None:
    pcd = [str(shared_data / "articles" / "pcd.jsonl")]
    out = tmp_path / "out.jsonl"
    cfg = settings(db_target)
    await run_batch(cfg, pcd, out, AbstractOptions(), handle_signals=False)
    original = out.read_text().splitlines()
    # Lose two lines, duplicate one, and leave half a line at the end.
    out.write_text("\n".join([*original[2:], original[5]]) + "\n" + original[0][:40])
    summary = await run_batch(cfg, pcd, out, AbstractOptions(), handle_signals=False)
    repair = summary.session.output_repair
    assert repair["dropped"] == 1 and repair["appended"] == 2 and repair["cut_bytes"]
    assert summary.session.calls == 0
    assert sorted(out.read_text().splitlines()) == sorted(original)


async def test_a_run_id_of_another_configuration_is_refused(
    shared_data: Path, tmp_path: Path, db_target: str
) -> None:
    pcd = [str(shared_data / "articles" / "pcd.jsonl")]
    cfg = settings(db_target)
    await run_batch(
        cfg,
        pcd,
        tmp_path / "o.jsonl",
        AbstractOptions(),
        run_id="mine",
        handle_signals=False,
    )
    with pytest.raises(ConfigError, match="runs resume mine"):
        await run_batch(
            cfg,
            pcd,
            tmp_path / "o.jsonl",
            AbstractOptions(split="sh"),
            run_id="mine",
            handle_signals=False,
        )


async def test_an_output_file_of_something_else_is_left_alone(
    shared_data: Path, tmp_path: Path, db_target: str
) -> None:
    out = tmp_path / "notes.jsonl"
    out.write_text('{"mine": true}\n')
    with pytest.raises(InputError, match="another --out"):
        await run_batch(
            settings(db_target),
            [str(shared_data / "articles" / "pcd.jsonl")],
            out,
            AbstractOptions(),
            handle_signals=False,
        )
    assert out.read_text() == '{"mine": true}\n'


def test_run_id_depends_on_inputs_options_and_model() -> None:
    base = default_run_id(["/a.xml"], AbstractOptions(), "sim")
    assert base == default_run_id(["/a.xml"], AbstractOptions(), "sim")
    assert base != default_run_id(["/b.xml"], AbstractOptions(), "sim")
    assert base != default_run_id(["/a.xml"], AbstractOptions(prompt="di"), "sim")
    assert base != default_run_id(["/a.xml"], AbstractOptions(), "local")


async def test_two_workers_share_a_run_without_doing_an_item_twice(
    shared_data: Path, tmp_path: Path, db_target: str
) -> None:
    import asyncio

    pcd = [str(shared_data / "articles" / "pcd.jsonl")]
    out = tmp_path / "out.jsonl"
    cfg = settings(db_target)

    def worker() -> Any:
        return run_batch(
            cfg.with_overrides(model="sim:latency=0.02"),
            pcd,
            out,
            AbstractOptions(),
            concurrency=2,
            run_id="shared",
            handle_signals=False,
        )

    first, second = await asyncio.gather(worker(), worker())
    assert first.session.processed + second.session.processed == 11
    assert first.session.processed > 0 and second.session.processed > 0
    results = lines(out)
    assert len(results) == len({r["source"] for r in results}) == 11
    assert len(second.sessions) == 2
    async with await open_database(db_target) as store:
        attempts = [
            row[0] for row in await store.fetchall("SELECT attempts FROM run_items")
        ]
    assert attempts == [1] * 11


async def test_text_steps_in_a_worker_process_write_the_same_lines(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[str] = []
    run = Offload.run

    async def counted(self: Offload, fn: Any, *args: object) -> Any:
        if self.active:
            sent.append(fn.__name__)
        return await run(self, fn, *args)

    monkeypatch.setattr(Offload, "run", counted)
    inputs = [
        *(str(shared_data / "articles" / "jats" / name) for name in JATS),
        str(shared_data / "articles" / "pcd.jsonl"),
    ]
    written = {}
    for workers in (0, 1):
        out = tmp_path / f"workers-{workers}.jsonl"
        cfg = settings(str(tmp_path / f"{workers}.sqlite")).with_overrides(
            cpu_workers=workers
        )
        summary = await run_batch(
            cfg, inputs, out, AbstractOptions(), handle_signals=False
        )
        assert summary.done == 14 and summary.failed == 0
        written[workers] = {
            r["source"]: (r["abstract"], r["checks"], r["fallbacks"], r["labels"])
            for r in lines(out)
        }
    assert written[0] == written[1]
    # Every article's first sentences and checks went to the worker.
    assert sent.count("first_sentences") == sent.count("check_abstract") == 14


async def test_articles_finish_about_in_the_order_they_started(
    shared_data: Path, tmp_path: Path, db_target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With four articles in flight for one call slot, each article's calls go before
    # those of the articles that started after it: it finishes about when it would
    # alone, not once every article in flight has had its turn at every step.
    started: list[str] = []
    run_abstract = batch_module.run_abstract

    async def spied(store: Any, llm: Any, article: Any, *args: Any, **kw: Any) -> Any:
        started.append(article.source)
        return await run_abstract(store, llm, article, *args, **kw)

    monkeypatch.setattr(batch_module, "run_abstract", spied)
    out = tmp_path / "out.jsonl"
    summary = await run_batch(
        settings(db_target, "sim:latency=0.02"),
        [str(shared_data / "articles" / "pcd.jsonl")],
        out,
        AbstractOptions(),
        concurrency=1,
        handle_signals=False,
    )
    assert summary.done == 11
    finished = [line["source"] for line in lines(out)]
    assert sorted(finished) == sorted(started)
    late = {s: finished.index(s) - started.index(s) for s in started}
    assert max(late.values()) <= 1, late
