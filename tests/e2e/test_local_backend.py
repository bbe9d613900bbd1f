"""The embedded model, for real: structured output, budget, concurrency safety."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from veriscribe.errors import ContextOverflow
from veriscribe.llm.embedded.local import ChatLlamaCpp
from veriscribe.llm.factory import make_llm
from veriscribe.settings import LLMSettings, Settings

pytestmark = pytest.mark.local_model


class Role(BaseModel):
    index: int
    label: Literal["background", "methods", "results", "conclusions"]


class Labelled(BaseModel):
    roles: list[Role] = Field(min_length=3, max_length=3)


PROMPT = (
    "Give the rhetorical role of each numbered sentence from a medical abstract.\n"
    "1. Sepsis remains a leading cause of death in intensive care units.\n"
    "2. We randomised 412 adults to early or delayed antibiotics.\n"
    "3. Mortality at 28 days was 18% versus 25% (P = 0.03).\n"
    'Answer as JSON: {"roles": [{"index": 1, "label": "..."}, ...]}.'
)


def settings(local_gguf: Path, **llm: object) -> Settings:
    return Settings(local_model=local_gguf, llm=LLMSettings(**llm))  # type: ignore[arg-type]


async def test_real_json_call_validates_into_pydantic(local_gguf: Path) -> None:
    llm = make_llm("local", settings(local_gguf, max_output_tokens=128))
    result = await llm.json("test.roles", PROMPT, Labelled)
    assert [r.index for r in result.value.roles] == [1, 2, 3]
    assert result.usage.prompt_tokens > 50 and result.usage.output_tokens > 5


async def test_real_tokenizer_refuses_prompt_over_context(local_gguf: Path) -> None:
    llm = make_llm("local", settings(local_gguf, context_tokens=1024))
    prompt = "The patient was treated with amoxicillin. " * 150
    assert llm.count_tokens([]) == 0
    with pytest.raises(ContextOverflow) as info:
        await llm.text("test.long", prompt)
    assert info.value.prompt_tokens > 1024 - llm.settings.max_output_tokens
    assert llm.calls_made == 0


async def test_parallel_calls_share_the_contexts_safely(local_gguf: Path) -> None:
    llm = make_llm("local", settings(local_gguf, max_output_tokens=128, cache=False))
    results = await asyncio.gather(
        *(llm.json(f"test.par{i}", PROMPT, Labelled) for i in range(3))
    )
    # Same prompt at low temperature and a fixed seed: calls agree, whichever of the
    # contexts ran them and whether or not they waited for one.
    assert len({r.raw for r in results}) == 1


async def test_two_contexts_run_two_calls_at_once(local_gguf: Path) -> None:
    llm = make_llm(
        "local",
        settings(
            local_gguf,
            max_output_tokens=96,
            context_tokens=2048,
            concurrency=2,
            cache=False,
        ),
    )
    chat = llm.chat
    assert isinstance(chat, ChatLlamaCpp) and chat.layout() == (2, 1)
    llamas = chat._loaded().contexts
    assert [(m.n_threads, m.n_threads_batch) for m in llamas] == [(1, 1), (1, 1)]
    spans: list[tuple[float, float]] = []
    for llama in llamas:
        complete = llama.create_chat_completion

        def timed(*args: Any, _complete: Any = complete, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return _complete(*args, **kwargs)
            finally:
                spans.append((start, time.perf_counter()))

        llama.create_chat_completion = timed
    other = PROMPT.replace("Sepsis", "Pneumonia").replace("412", "230")
    results = await asyncio.gather(
        llm.json("test.ctx0", PROMPT, Labelled), llm.json("test.ctx1", other, Labelled)
    )
    assert all([r.index for r in res.value.roles] == [1, 2, 3] for res in results)
    assert len(spans) == 2
    (start_a, end_a), (start_b, end_b) = spans
    assert start_a < end_b and start_b < end_a  # the two calls overlapped
