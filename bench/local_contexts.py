"""Facet-like calls on the embedded model with one llama context vs two.

Four JSON-schema calls (about 600 prompt tokens of development-article paragraphs under
one shared system message, up to 200 output tokens each) are sent at concurrency 2 to the
bundled model loaded with one 2-thread context and with two 1-thread contexts; then one
call alone on each, to show what a lone call pays for the split. The layouts alternate
in every round, so both see the same machine load; compare the ratios, not the absolute
speeds, on a shared machine.

With ``--window S`` it instead streams the same facet calls from two threads for S
seconds on each layout, alternating 1, 2, 1, 2 ..., and counts the output tokens in each
window: the ratio of two neighbouring windows holds on a machine too busy for whole
calls to finish in reasonable time.

Usage: ``nice -n 19 .venv/bin/python bench/local_contexts.py [--rounds 1] [--window S]``
"""

from __future__ import annotations

import argparse
import asyncio
import threading
import time
from pathlib import Path

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from veriscribe.documents.articles import Article, expand_inputs, read_articles
from veriscribe.llm.client import LLM
from veriscribe.llm.embedded.local import ChatLlamaCpp, prompt_key, to_chat_messages
from veriscribe.llm.factory import make_llm
from veriscribe.llm.structured import json_schema
from veriscribe.settings import LLMSettings, Settings

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "articles" / "jats"
SYSTEM = (
    "You summarise one facet of a biomedical research article for its abstract. "
    "Use only facts stated in the paragraphs; keep numbers exactly as written."
)
PROMPT_TOKENS = 600
OUTPUT_TOKENS = 200


class FacetSummary(BaseModel):
    """The structured reply of one facet call."""

    summary: str
    key_findings: list[str] = Field(max_length=5)


def facet_texts(count: int) -> list[str]:
    """Return ``count`` passages of about PROMPT_TOKENS tokens from different articles."""
    passages: list[str] = []
    for path in expand_inputs([str(DATA)]):
        for article in read_articles(path):
            if not isinstance(article, Article):
                continue
            text = ""
            for paragraph in article.paragraphs:
                longer = f"{text}\n\n{paragraph.text}".strip()
                if len(longer) // 4 > PROMPT_TOKENS:  # about 4 characters a token
                    break
                text = longer
            if text:
                passages.append(text)
            if len(passages) == count:
                return passages
    raise SystemExit(f"fewer than {count} articles in {DATA}")


async def calls(llm: LLM, passages: list[str], tag: str) -> tuple[float, int, int]:
    """Run one facet call per passage at once; return wall s, prompt and output tokens."""
    started = time.perf_counter()
    done = await asyncio.gather(
        *(
            llm.json(
                "bench.facet",
                [
                    SystemMessage(SYSTEM),
                    HumanMessage(
                        f"Run {tag}, facet {i}. Summarise these paragraphs in at "
                        f"most five sentences, with the key findings:\n\n{text}"
                    ),
                ],
                FacetSummary,
                max_tokens=OUTPUT_TOKENS,
            )
            for i, text in enumerate(passages)
        )
    )
    wall = time.perf_counter() - started
    return (
        wall,
        sum(c.usage.prompt_tokens for c in done),
        sum(c.usage.output_tokens for c in done),
    )


def load(llm: LLM) -> None:
    """Fail early when the embedded model cannot load."""
    load = getattr(llm.chat, "load", None)
    if load is not None:
        load()


def facet_messages(tag: str, i: int, text: str) -> list[dict[str, str]]:
    """Return the llama.cpp chat messages of one facet call."""
    return to_chat_messages(
        [
            SystemMessage(SYSTEM),
            HumanMessage(
                f"Run {tag}, facet {i}. Summarise these paragraphs in at "
                f"most five sentences, with the key findings:\n\n{text}"
            ),
        ]
    )


def window(chat: ChatLlamaCpp, passages: list[str], seconds: float, tag: str) -> int:
    """Stream facet calls from two threads for ``seconds``; return output tokens."""
    pool = chat._loaded()
    grammar = chat.grammar(json_schema(FacetSummary))
    end = time.perf_counter() + seconds
    counts = [0, 0]

    def worker(w: int) -> None:
        call = 0
        while time.perf_counter() < end:
            i = (2 * call + w) % len(passages)
            messages = facet_messages(f"{tag}.{call}", i, passages[i])
            with pool.lease(prompt_key(messages)) as llama:
                for _ in llama.create_chat_completion(
                    messages=messages,
                    max_tokens=OUTPUT_TOKENS,
                    grammar=grammar,
                    temperature=0.1,
                    seed=0,
                    stream=True,
                ):
                    if time.perf_counter() >= end:
                        break
                    counts[w] += 1
            call += 1

    threads = [threading.Thread(target=worker, args=(w,)) for w in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(counts)


async def main() -> None:
    """Print tokens per second and wall ratios of one context vs two."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--window", type=float, default=0.0)
    args = parser.parse_args()
    llms = {
        contexts: make_llm(
            "local",
            Settings(
                llm=LLMSettings(
                    cache=False,
                    concurrency=2,
                    local_contexts=contexts,
                    context_tokens=4096,
                    threads=2,
                    # A busy shared machine can be many times slower than the
                    # budgets assume; this measures, it does not guard.
                    timeout_s=7200,
                    min_prompt_tokens_per_s=1,
                    min_output_tokens_per_s=0.1,
                )
            ),
        )
        for contexts in (1, 2)
    }
    for llm in llms.values():
        load(llm)
        await llm.text("bench.warm", "Say OK.", max_tokens=4)  # page the weights in
    passages = facet_texts(4)
    tokens = [llms[1].count_tokens([HumanMessage(p)]) for p in passages]
    print(f"prompt tokens of the passages: {tokens}")
    if args.window:
        got: dict[int, list[int]] = {1: [], 2: []}
        for r in range(args.rounds):
            for contexts in (1, 2) if r % 2 == 0 else (2, 1):
                chat = llms[contexts].chat
                assert isinstance(chat, ChatLlamaCpp)
                n = window(chat, passages, args.window, f"{r}.{contexts}")
                got[contexts].append(n)
                print(f"window {r} contexts={contexts}: {n / args.window:.2f} tokens/s")
        ratios = [b / a for a, b in zip(got[1], got[2], strict=True) if a]
        print(
            f"output tokens/s in all, 2 contexts over 1, per round: "
            f"{', '.join(f'{x:.2f}' for x in ratios)}; overall "
            f"{sum(got[2]) / max(sum(got[1]), 1):.2f}"
        )
        return
    walls: dict[int, list[float]] = {1: [], 2: []}
    outs: dict[int, list[int]] = {1: [], 2: []}
    lone: dict[int, list[float]] = {1: [], 2: []}
    for r in range(args.rounds):
        order = (1, 2) if r % 2 == 0 else (2, 1)
        for contexts in order:
            wall, prompt, out = await calls(llms[contexts], passages, f"{r}.{contexts}")
            walls[contexts].append(wall)
            outs[contexts].append(out)
            print(
                f"round {r} contexts={contexts}: 4 calls {wall:.1f}s, prompt {prompt} "
                f"out {out} tokens, {out / wall:.1f} out tokens/s"
            )
        for contexts in order:
            wall, _, out = await calls(llms[contexts], passages[:1], f"{r}.{contexts}L")
            lone[contexts].append(out / wall)
            print(
                f"round {r} contexts={contexts}: one call alone {wall:.1f}s {out} out"
            )
    one, two = sum(walls[1]), sum(walls[2])
    rate1, rate2 = sum(outs[1]) / one, sum(outs[2]) / two
    print(
        f"4 calls at concurrency 2: wall 1 context {one:.1f}s, 2 contexts {two:.1f}s: "
        f"wall ratio {one / two:.2f}; out tokens/s {rate1:.1f} vs {rate2:.1f} "
        f"(x{rate2 / rate1:.2f}); lone call out tokens/s (incl. prompt) "
        f"{sum(lone[1]) / len(lone[1]):.1f} vs {sum(lone[2]) / len(lone[2]):.1f}"
    )


if __name__ == "__main__":
    asyncio.run(main())
