"""Calls decoded together as sequences of one context, on the embedded model.

A call alone writes exactly what it writes on a context of its own. Calls side by side
share steps, keep their constraints, and each reads only its own cache: teacher-forced
on the tokens each wrote alone, their logits differ from the lone run's by rounding
only (batched kernels), where reading another sequence's cache would move them by
whole units.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import llama_cpp
import numpy as np
import pytest
from langchain_core.messages import HumanMessage
from tests.e2e.test_decode_local import CASES, SECTION

from veriscribe.documents.articles import Article, read_articles
from veriscribe.llm.embedded.batched import SequenceLlama, shared_sequences
from veriscribe.llm.embedded.local import ChatLlamaCpp
from veriscribe.text.sentences import quotable_units

pytestmark = pytest.mark.local_model

COUNT = 4
ROUNDING = 1.5
"""Largest logit gap that batched rounding explains (measured: below 0.7)."""


@pytest.fixture(scope="module")
def batched(local_gguf: Path) -> ChatLlamaCpp:
    return ChatLlamaCpp(
        model_path=local_gguf,
        n_ctx=2048,
        contexts=3,
        batched=True,
        temperature=0.0,
        max_tokens=90,
    )


@pytest.fixture(scope="module")
def alone(local_gguf: Path) -> ChatLlamaCpp:
    return ChatLlamaCpp(
        model_path=local_gguf, n_ctx=2048, temperature=0.0, max_tokens=90
    )


def reset(chat: ChatLlamaCpp) -> None:
    for llama in chat._loaded().contexts:
        llama.reset()


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_call_alone_writes_what_its_own_context_writes(
    batched: ChatLlamaCpp, alone: ChatLlamaCpp, case: str
) -> None:
    prompt, options = CASES[case]
    reset(alone)
    reset(batched)
    expected = alone.invoke([HumanMessage(prompt)], **options).content
    assert batched.invoke([HumanMessage(prompt)], **options).content == expected


def test_calls_side_by_side_share_steps_and_keep_their_constraints(
    batched: ChatLlamaCpp,
) -> None:
    reset(batched)
    sequences = batched._loaded().contexts
    shared = sequences[0].shared
    before = shared.shared_steps

    async def write_all() -> list[Any]:
        return await asyncio.gather(
            *(
                batched.ainvoke([HumanMessage(prompt)], **options)
                for prompt, options in (CASES[case] for case in sorted(CASES))
            )
        )

    copied, obj, quoted = (str(r.content) for r in asyncio.run(write_all()))
    assert shared.shared_steps - before > 20
    reply = json.loads(obj)
    assert isinstance(reply["ok"], bool) and isinstance(reply["colours"], list)
    units = {u.text for u in quotable_units(SECTION)}
    quotes = [s["quote"] for s in json.loads(quoted)["sentences"]]
    assert quotes and set(quotes) <= units
    assert "blood pressure" in copied.lower()


def logits(llama: SequenceLlama, rows: list[int]) -> Any:
    pointer = llama_cpp.llama_get_logits_ith(llama.ctx, rows[-1])
    return np.ctypeslib.as_array(pointer, shape=(llama.n_vocab(),)).copy()


def test_each_sequence_reads_only_its_own_cache(
    local_gguf: Path, shared_data: Path
) -> None:
    # Four article passages of about 450 tokens: read in chunks of one 512-token batch,
    # beside the other sequences' tokens.
    articles = [
        article
        for path in sorted((shared_data / "articles" / "jats").glob("*.xml"))[:8]
        for article in read_articles(path)
        if isinstance(article, Article) and len(article.body) > 4000
    ][:COUNT]
    sequences = shared_sequences(str(local_gguf), 2048, 2, COUNT)
    shared = sequences[0].shared
    prompts = [
        sequences[0].tokenize(f"{a.body[2000:4000]} In summary,".encode())
        for a in articles
    ]
    steps = 12

    def write(seq: int, forced: list[int] | None) -> tuple[list[int], list[Any]]:
        llama, prompt = sequences[seq], prompts[seq]
        seen = [logits(llama, shared.eval(seq, prompt, 0, all_logits=False))]
        tokens = [int(seen[-1].argmax()) if forced is None else forced[0]]
        for i in range(steps):
            rows = shared.eval(seq, [tokens[-1]], len(prompt) + i, all_logits=False)
            seen.append(logits(llama, rows))
            tokens.append(int(seen[-1].argmax()) if forced is None else forced[i + 1])
        shared.leave(seq)
        return tokens, seen

    lone = [write(seq, None) for seq in range(COUNT)]  # one after the other
    together: dict[int, tuple[list[int], list[Any]]] = {}

    async def side_by_side() -> None:
        async def one(seq: int) -> None:
            together[seq] = await asyncio.to_thread(write, seq, lone[seq][0])

        await asyncio.gather(*(one(seq) for seq in range(COUNT)))

    try:
        asyncio.run(side_by_side())
    finally:
        sequences[0].close()
    assert shared.shared_steps >= steps
    for seq in range(COUNT):
        gaps = [
            float(np.abs(a - b).max())
            for a, b in zip(lone[seq][1], together[seq][1], strict=True)
        ]
        assert max(gaps) < ROUNDING, (seq, gaps)
