"""The embedded model, for real: structured output, budget, concurrency safety."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from veriscribe.errors import ContextOverflow
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


async def test_parallel_calls_share_one_context_safely(local_gguf: Path) -> None:
    llm = make_llm("local", settings(local_gguf, max_output_tokens=128, cache=False))
    results = await asyncio.gather(
        *(llm.json(f"test.par{i}", PROMPT, Labelled) for i in range(3))
    )
    # Same prompt at low temperature and a fixed seed: serialised calls agree.
    assert len({r.raw for r in results}) == 1
