"""Decoding speed on the bundled model: free against constrained, both samplers, one run.

The bundled model (``local``) writes the same prompts free and constrained, for each
kind of constraint veriscribe uses:

- ``json``: a JSON-schema object (``response_format``), free = the same prompt without it;
- ``enum``: the constrained citations' schema, the quote an enum of the section's
  sentences (``quote_constraint``), free = the same prompt without it;
- ``guard``: a summary under the copy guard (limit 3 words), free = without the guard;

each through the fast sampler (``CandidateSampler``, the default) and through
llama-cpp-python's own chain (``stock``: the grammar over the whole vocabulary), first on
one context (all the threads), then on two contexts side by side (two calls at once,
one thread each; the tokens/s is the two calls' tokens over the wall time), and on any
layout ``--contexts`` lists (``b4``: four calls as sequences of one context on all the
threads, decoded together, ``LLMSettings.batched``). The runs are
interleaved (every variant once per repetition) so that a busy machine slows them alike.
Each measured call follows a one-token call on the same prompt, so the prompt is already
in the context's cache and the time is decoding (the last prompt token is read again).
A call's tokens/s is its output tokens over its wall seconds; a variant's is the median
over its calls (kinds and repetitions), so that a call slowed by another process on the
machine moves it less than a sum would.

The last line's figures are the fast sampler's on one context: ``free_tps`` and
``constrained_tps`` (all three kinds pooled), ``ratio`` = constrained / free. Then, unless
skipped (``--ask 0``, ``--articles 0``: printed as ``na``), the product end to end on the
default settings (response cache off, a fresh database): ``ask_median_s`` is the median
seconds per question of the first ``--ask`` cpgQA dev questions answered by ``ask``
(BM25, k = 3, the corpus ingested with the simulated model), ``articles_per_hour`` the
rate of ``abstract`` on the ``--articles`` shortest JATS dev articles (one batch, two
calls at once). Timings on a shared machine are noisy: compare figures of one run.

Usage: ``PYTHONPATH=src .venv/bin/python bench/decode.py [--tokens 100] [--reps 1]
[--kinds json,enum,guard] [--contexts 1,2,b4] [--no-stock] [--temperature 0.1]
[--ask 3] [--articles 1]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage

from veriscribe.llm.embedded.local import ChatLlamaCpp
from veriscribe.llm.embedded.sampling import CandidateSampler
from veriscribe.llm.factory import local_model_path
from veriscribe.nodes.qa.constrained import SourceUnit, SourceUnits, quote_constraint
from veriscribe.settings import LLMSettings, Settings
from veriscribe.text.sentences import quotable_units

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
SECTION = (
    "Thiazide diuretics, calcium channel blockers, ACE inhibitors and angiotensin "
    "receptor blockers are first-line agents for hypertension. ACE inhibitors should "
    "not be combined with angiotensin receptor blockers. Review the dose after four "
    "weeks. Measure blood pressure at home when clinic readings are high."
)
PASSAGE = (
    "Blood pressure should be measured with a validated device after five minutes of "
    "rest, with the patient seated and the arm supported at heart level. A diagnosis "
    "rests on repeated measurements on separate occasions, and home or ambulatory "
    "monitoring helps to exclude white-coat hypertension. Lifestyle measures, "
    "including less dietary sodium, more physical activity, weight loss and "
    "moderation of alcohol, lower blood pressure in most patients."
)
OBJECT = {
    "type": "object",
    "properties": {
        "summary": {"type": "string"},
        "drugs": {"type": "array", "items": {"type": "string"}},
        "monitoring": {"type": "string"},
    },
    "required": ["summary", "drugs", "monitoring"],
}


def quote_schema() -> dict[str, Any]:
    """Return the constrained citations' schema over the section's sentences."""
    units = tuple(
        SourceUnit(f"S{i}", "htn:drugs", u.text)
        for i, u in enumerate(quotable_units(SECTION), 1)
    )
    return quote_constraint(SourceUnits(units), 3)


KINDS: dict[str, tuple[str, dict[str, Any]]] = {
    "json": (
        f"{SECTION}\n\nReturn a JSON object with a one-sentence summary of this text, "
        'the drugs it names and what it says about monitoring: {"summary": "...", '
        '"drugs": [...], "monitoring": "..."}.',
        {"response_format": {"type": "json_object", "schema": OBJECT}},
    ),
    "enum": (
        f"Section [htn:drugs]:\n{SECTION}\n\nWhich drugs come first, and which should "
        "not be combined? Answer in two sentences as JSON "
        '{"sentences": [{"section_id": "htn:drugs", "quote": "...", '
        '"sentence": "..."}]}, each quote a sentence of the section.',
        {"response_format": {"type": "json_object", "schema": quote_schema()}},
    ),
    "guard": (
        f"Summarise this passage in your own words, in three sentences:\n{PASSAGE}",
        {"copy_guard": {"source": PASSAGE, "limit": 3}},
    ),
}


def calls_of(layout: str) -> int:
    """Return how many calls run at once on a layout (``2``, or ``b4``: batched)."""
    return int(layout.removeprefix("b"))


def make_chat(layout: str, args: argparse.Namespace) -> ChatLlamaCpp:
    """Return the bundled model on ``layout``: N contexts sharing the threads, or bN
    sequences of one context decoded together (``LLMSettings.batched``)."""
    return ChatLlamaCpp(
        model_path=local_model_path(Settings()),
        n_ctx=2048,
        n_threads=args.threads,
        contexts=calls_of(layout),
        batched=layout.startswith("b"),
        temperature=args.temperature,
        max_tokens=args.tokens,
    )


async def timed_calls(
    chat: ChatLlamaCpp, kind: str, constrained: bool, stock: bool, calls: int
) -> tuple[int, float]:
    """Run ``calls`` copies of one prompt at once, warm; return (tokens, seconds)."""
    prompt, options = KINDS[kind]
    options = options if constrained else {}
    messages = [HumanMessage(prompt)]
    chat._stock_sampling = stock
    try:
        # Read the prompt into every context first: the timed calls then decode.
        await asyncio.gather(
            *(chat.ainvoke(messages, max_tokens=1) for _ in range(calls))
        )
        started = time.perf_counter()
        replies = await asyncio.gather(
            *(chat.ainvoke(messages, **options) for _ in range(calls))
        )
        seconds = time.perf_counter() - started
    finally:
        chat._stock_sampling = False
    tokens = sum((r.usage_metadata or {}).get("output_tokens", 0) for r in replies)
    return tokens, seconds


async def decode_speeds(args: argparse.Namespace) -> dict[tuple[Any, ...], list[float]]:
    """Measure every variant; return {(contexts, sampler, mode, kind): [tokens/s]}."""
    totals: dict[tuple[Any, ...], list[float]] = defaultdict(list)
    samplers = ["fast"] if args.no_stock else ["fast", "stock"]
    for contexts in args.contexts:
        chat = make_chat(contexts, args)
        chat.load()
        # Untimed: the first call pages the weights in.
        await timed_calls(chat, args.kinds[0], True, False, calls_of(contexts))
        for rep in range(args.reps):
            # Every other repetition runs the variants in the reverse order.
            variants = [(s, m) for s in samplers for m in ("free", "constrained")]
            for kind in args.kinds:
                for sampler, mode in variants if rep % 2 == 0 else variants[::-1]:
                    tokens, seconds = await timed_calls(
                        chat,
                        kind,
                        mode == "constrained",
                        sampler == "stock",
                        calls_of(contexts),
                    )
                    for key in (
                        (contexts, sampler, mode, kind),
                        (contexts, sampler, mode, "all"),
                    ):
                        totals[key].append(tokens / seconds)
                    print(
                        f"  contexts {contexts} rep {rep + 1} {kind:5} "
                        f"{sampler:5} {mode:11}: {tokens} tokens "
                        f"{tokens / seconds:.1f} tok/s{misses(chat)}",
                        flush=True,
                    )
    return totals


def misses(chat: ChatLlamaCpp) -> str:
    """Say how many tokens of the last calls needed the whole vocabulary."""
    samplers = [getattr(c, "_sampler", None) for c in chat._loaded().contexts]
    fast = [s for s in samplers if isinstance(s, CandidateSampler)]
    if not fast:
        return ""
    return (
        f", whole vocabulary {sum(s.misses for s in fast)}/{sum(s.steps for s in fast)}"
    )


def tps(totals: dict[tuple[Any, ...], list[float]], *key: Any) -> float | None:
    """Return the median tokens/s of one variant's calls, or None if it did not run."""
    rates = totals.get(key)
    return statistics.median(rates) if rates else None


def table(totals: dict[tuple[Any, ...], list[float]], args: argparse.Namespace) -> None:
    """Print tokens/s per variant and the constrained / free ratios."""

    def fmt(value: float | None) -> str:
        return "-" if value is None else f"{value:.1f}"

    print(f"{'contexts':>8} {'kind':>5} {'sampler':>7} {'free':>6} {'constr':>6} ratio")
    for contexts in args.contexts:
        for kind in [*args.kinds, "all"]:
            for sampler in ("stock", "fast"):
                free = tps(totals, contexts, sampler, "free", kind)
                constrained = tps(totals, contexts, sampler, "constrained", kind)
                if free is None or constrained is None:
                    continue
                print(
                    f"{contexts:>8} {kind:>5} {sampler:>7} {fmt(free):>6} "
                    f"{fmt(constrained):>6} {constrained / free:.2f}"
                )
            stock = tps(totals, contexts, "stock", "constrained", kind)
            fast = tps(totals, contexts, "fast", "constrained", kind)
            if stock and fast:
                print(f"{'':>8} {kind:>5} constrained fast / stock: {fast / stock:.2f}")


async def ask_median(count: int, work: Path) -> float | None:
    """Return the median seconds per question of ``count`` cpgQA questions."""
    if count <= 0:
        return None
    from veriscribe.options import QAOptions
    from veriscribe.service import corpora
    from veriscribe.service import qa as qa_service

    data = SHARED / "guidelines" / "cpgqa"
    settings = Settings(db=work / "ask.sqlite", llm=LLMSettings(cache=False))
    await corpora.add_corpus(
        settings.with_overrides(model="sim"), "cpgqa", [data / "passages.jsonl"]
    )
    seconds: list[float] = []
    await qa_service.ask_questions(
        settings.with_overrides(model="local"),
        "cpgqa",
        data / "questions.jsonl",
        work / "ask.jsonl",
        options=QAOptions(retriever="bm25", k=3),
        limit=count,
        on_answer=lambda result, *_: seconds.append(result.seconds),
    )
    print(f"  ask: {[round(s, 1) for s in seconds]} s per question", flush=True)
    return statistics.median(seconds) if seconds else None


async def articles_per_hour(count: int, work: Path) -> float | None:
    """Return the abstracts per hour of the ``count`` shortest JATS dev articles."""
    if count <= 0:
        return None
    from veriscribe.documents.articles import Article, read_articles
    from veriscribe.options import AbstractOptions
    from veriscribe.service.batch import run_batch

    sized = []
    for path in sorted((SHARED / "articles" / "jats").glob("*.xml")):
        for article in read_articles(path):
            if (
                isinstance(article, Article)
                and article.paragraphs
                and article.reference
            ):
                sized.append((len(article.body), str(path)))
    paths = [path for _, path in sorted(sized)[:count]]
    settings = Settings(
        db=work / "batch.sqlite", llm=LLMSettings(cache=False, concurrency=2)
    )
    started = time.perf_counter()
    await run_batch(
        settings.with_overrides(model="local"),
        paths,
        work / "abstracts.jsonl",
        AbstractOptions(),
        concurrency=2,
        handle_signals=False,
    )
    seconds = time.perf_counter() - started
    print(f"  abstracts: {len(paths)} in {seconds:.0f} s", flush=True)
    return len(paths) * 3600 / seconds


async def main() -> None:
    """Run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=100, help="Output tokens cap.")
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--contexts", default="1,2")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--temperature", type=float, default=0.1)
    parser.add_argument("--no-stock", action="store_true", help="Fast sampler only.")
    parser.add_argument("--ask", type=int, default=3, help="Questions (0: skip).")
    parser.add_argument("--articles", type=int, default=1, help="Articles (0: skip).")
    args = parser.parse_args()
    args.kinds = [k for k in args.kinds.split(",") if k]
    args.contexts = [c for c in args.contexts.split(",") if c]
    totals = await decode_speeds(args)
    table(totals, args)
    work = Path(tempfile.mkdtemp(prefix="decode-bench-"))
    ask_s = await ask_median(args.ask, work)
    per_hour = await articles_per_hour(args.articles, work)
    first = args.contexts[0]
    free = tps(totals, first, "fast", "free", "all") or 0.0
    constrained = tps(totals, first, "fast", "constrained", "all") or 0.0

    def fmt(value: float | None) -> str:
        return "na" if value is None else f"{value:.1f}"

    print(
        f"free_tps={free:.1f} constrained_tps={constrained:.1f} "
        f"ratio={constrained / free if free else 0.0:.2f} "
        f"ask_median_s={fmt(ask_s)} articles_per_hour={fmt(per_hour)}"
    )


if __name__ == "__main__":
    asyncio.run(main())
