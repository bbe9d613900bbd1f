"""Batch throughput on the simulated backend, side by side with the paper's runner.

Prints, from one run:

(a) efficiency: the ideal time of the model calls made (calls x latency / concurrency)
    over the measured wall time of ``run_batch`` (registration and output included),
    for N articles at a call limit C, on ``sim`` with a fixed latency per call;
(b) speedup: the time of a reference runner that reproduces the DPR-BAG paper's released
    design (a thread pool of 2 articles; within an article, the facets are summarised one
    after another) on the same simulated backend and the same graph nodes, over (a)'s time.
    The reference runs a spread subset of the articles; its time for all N is scaled by
    model calls, which is exact for a runner whose calls are sequential per worker;
(c) orchestration overhead per article with a zero-latency model (everything but the model:
    reading, graph, checkpoints, call log, cache, output);
(d) checkpoint database bytes per article: the pages of LangGraph's ``checkpoints`` and
    ``writes`` tables (and their indexes) after (a), divided by N.

Then, when the embedded model is installed, whether parallel requests raise its throughput
(4 short prompts at concurrency 1 vs 4).

The articles are the development articles (JATS and pcd.jsonl) cycled to N, each copy with
a distinct id and "Copy <n>: " opening every paragraph, so no two prompts are the same and
the response cache cannot answer for the model.

The last line reads ``efficiency=<x> speedup=<x> overhead_ms=<x> checkpoint_kib=<x>``.

Usage: ``.venv/bin/python bench/batch.py [--articles 200] [--concurrency 32]
[--latency 0.2] [--reference-articles 40] [--no-local]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import tempfile
import time
from pathlib import Path

from veriscribe.documents.articles import Article, expand_inputs, read_articles
from veriscribe.graphs.abstract import AbstractDeps, build_abstract_graph
from veriscribe.llm.factory import make_llm
from veriscribe.offload import auto_workers
from veriscribe.options import AbstractOptions
from veriscribe.results import BatchSummary
from veriscribe.service.batch import run_batch
from veriscribe.settings import Settings
from veriscribe.store.articles import article_key, put_articles
from veriscribe.store.connect import open_database

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "articles"
CHECKPOINT_TABLES = ("checkpoints", "writes")


def dev_articles() -> list[Article]:
    """Return the development articles that have body paragraphs."""
    found: list[Article] = []
    for path in expand_inputs([str(DATA / "jats"), str(DATA / "pcd.jsonl")]):
        found += [a for a in read_articles(path) if isinstance(a, Article)]
    return [a for a in found if a.paragraphs]


def write_copies(base: list[Article], n: int, path: Path) -> None:
    """Write n distinct copies of the articles as a PMC-MAD JSON-lines dataset."""
    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            article = base[i % len(base)]
            names: list[str] = []
            sections: list[list[str]] = []
            for paragraph in article.paragraphs:
                if not names or names[-1] != paragraph.top_section:
                    names.append(paragraph.top_section)
                    sections.append([])
                # Every prompt of a copy differs (labels show each paragraph's
                # opening), and no sentence boundary moves.
                sections[-1].append(f"Copy {i}: {paragraph.text}")
            item = {
                "article_id": f"{article.id}#{i}",
                "title": article.title,
                "abstract": article.reference,
                "section_names": names,
                "sections": sections,
            }
            out.write(json.dumps(item) + "\n")


def checkpoint_bytes(db: Path) -> int:
    """Return the bytes of the checkpoint tables and their indexes."""
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        try:
            rows = conn.execute(
                "SELECT SUM(pgsize) FROM dbstat WHERE name IN ("
                "SELECT name FROM sqlite_master WHERE tbl_name IN (?, ?))",
                CHECKPOINT_TABLES,
            ).fetchone()
            return int(rows[0] or 0)
        except sqlite3.OperationalError:  # no dbstat in this SQLite build
            total = 0
            for table in CHECKPOINT_TABLES:
                columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
                lengths = " + ".join(f"COALESCE(LENGTH({c}), 0)" for c in columns)
                (size,) = conn.execute(f"SELECT SUM({lengths}) FROM {table}").fetchone()
                total += size or 0
            return total


async def batch_run(
    work: Path, name: str, dataset: Path, latency: float, concurrency: int
) -> tuple[float, BatchSummary]:
    """Run the batch on a fresh database; return its wall time and summary."""
    settings = Settings(db=work / f"{name}.sqlite")
    started = time.perf_counter()
    summary = await run_batch(
        settings.with_overrides(model=f"sim:latency={latency}"),
        [str(dataset)],
        work / f"{name}.jsonl",
        AbstractOptions(),
        concurrency=concurrency,
        handle_signals=False,
    )
    return time.perf_counter() - started, summary


async def reference_run(
    work: Path, dataset: Path, latency: float, every: int
) -> tuple[float, int, int]:
    """Run the paper's design on every ``every``-th article; return time, calls, count."""
    articles = [
        a
        for i, a in enumerate(read_articles(dataset))
        if isinstance(a, Article) and i % every == 0
    ]
    settings = Settings(db=work / "reference.sqlite")
    settings.llm.concurrency = 2
    async with await open_database(settings.db) as store:
        await put_articles(store, articles)
        llm = make_llm(f"sim:latency={latency}", settings, store)
        options = AbstractOptions()
        # No checkpointer: the released code keeps nothing between calls.
        graph = build_abstract_graph(llm.settings.retries + 1).compile()
        queue: asyncio.Queue[Article] = asyncio.Queue()
        for article in articles:
            queue.put_nowait(article)

        async def worker() -> None:
            while not queue.empty():
                article = queue.get_nowait()
                deps = AbstractDeps(llm=llm, store=store, options=options)
                key = article_key(article)
                deps.articles[key] = article
                # max_concurrency 1: the facets of an article one after another.
                await graph.ainvoke(
                    {"doc_key": key}, {"max_concurrency": 1}, context=deps
                )

        started = time.perf_counter()
        await asyncio.gather(worker(), worker())  # two articles at a time
        return time.perf_counter() - started, llm.calls_made, len(articles)


async def local_parallelism() -> str:
    """Return how much 4 parallel requests raise the embedded model's throughput.

    The first inferences after loading are slow (weights paged in), so one untimed
    round comes first, and the two modes then alternate.
    """
    from veriscribe.errors import VeriscribeError
    from veriscribe.llm.client import LLM

    prompts = [
        f"In one short sentence, name a symptom of disease number {i}."
        for i in range(4)
    ]
    llms: dict[int, LLM] = {}
    try:
        for limit in (1, 4):
            settings = Settings()
            settings.llm.cache = False
            settings.llm.concurrency = limit
            llms[limit] = make_llm("local", settings)  # the loaded model is shared
        for prompt in prompts:
            await llms[1].text("warm-up", prompt, max_tokens=24)
    except (VeriscribeError, ImportError) as exc:
        return f"local: skipped ({exc})"
    timings: dict[int, list[float]] = {1: [], 4: []}
    for limit in (1, 4, 1, 4):
        started = time.perf_counter()
        await asyncio.gather(
            *(llms[limit].text("bench", p, max_tokens=24) for p in prompts)
        )
        timings[limit].append(time.perf_counter() - started)
    one, four = (sum(timings[k]) / 2 for k in (1, 4))
    return (
        f"local: 4 prompts one at a time {one:.1f}s, 4 in parallel {four:.1f}s "
        f"(mean of 2): parallel throughput x{one / four:.2f}"
    )


async def main() -> None:
    """Run the benchmark and print its ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--articles", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--reference-articles", type=int, default=40)
    parser.add_argument("--overhead-articles", type=int, default=100)
    parser.add_argument("--no-local", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="veriscribe-bench-") as tmp:
        work = Path(tmp)
        base = dev_articles()
        dataset = work / "articles.jsonl"
        write_copies(base, args.articles, dataset)
        workers = Settings().cpu_workers
        if workers is None:
            workers = auto_workers(args.articles, embedded=False)
        print(
            f"{args.articles} articles ({len(base)} distinct dev articles, cycled); "
            f"text steps in {workers} worker processes"
        )

        seconds, summary = await batch_run(
            work, "batch", dataset, args.latency, args.concurrency
        )
        calls = summary.session.calls
        ideal = calls * args.latency / args.concurrency
        efficiency = ideal / seconds
        print(
            f"(a) batch: {summary.done} done, {summary.failed} failed, "
            f"{calls} calls in {seconds:.2f}s at concurrency {args.concurrency}, "
            f"latency {args.latency}s; ideal {ideal:.2f}s; "
            f"efficiency {efficiency:.3f}"
        )

        every = max(1, args.articles // args.reference_articles)
        ref_seconds, ref_calls, ref_count = await reference_run(
            work, dataset, args.latency, every
        )
        ref_scaled = ref_seconds * calls / ref_calls
        speedup = ref_scaled / seconds
        print(
            f"(b) reference (2 articles at a time, facets in sequence): {ref_count} "
            f"articles, {ref_calls} calls in {ref_seconds:.2f}s; scaled to {calls} "
            f"calls {ref_scaled:.1f}s; speedup {speedup:.1f}x"
        )

        n_over = min(args.overhead_articles, args.articles)
        small = work / "overhead.jsonl"
        write_copies(base, n_over, small)
        zero_seconds, zero = await batch_run(work, "zero", small, 0.0, args.concurrency)
        overhead_ms = zero_seconds / n_over * 1000
        print(
            f"(c) zero latency: {n_over} articles, {zero.session.calls} calls "
            f"in {zero_seconds:.2f}s: {overhead_ms:.1f} ms per article"
        )

        db = work / "batch.sqlite"
        ckpt = checkpoint_bytes(db)
        checkpoint_kib = ckpt / args.articles / 1024
        print(
            f"(d) checkpoints: {ckpt:,} bytes for {args.articles} articles: "
            f"{checkpoint_kib:.1f} KiB per article (whole database "
            f"{db.stat().st_size / args.articles / 1024:.1f} KiB per article)"
        )

    if not args.no_local:
        print(await local_parallelism())
    print(
        f"efficiency={efficiency:.3f} speedup={speedup:.1f} "
        f"overhead_ms={overhead_ms:.1f} checkpoint_kib={checkpoint_kib:.1f}"
    )


if __name__ == "__main__":
    asyncio.run(main())
