"""Prompt token counting before every call.

The embedded backend counts with the model's own tokenizer. Remote backends are counted
with a deliberately conservative estimate: one token per three characters plus a fixed
overhead per message. English biomedical text averages about four characters per token
with Llama and Qwen tokenizers, so the estimate errs towards refusing a prompt that would
have fit rather than letting a server truncate one that does not (Ollama does so silently).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from langchain_core.messages import BaseMessage

from veriscribe.errors import ContextOverflow

CHARS_PER_TOKEN_ESTIMATE = 3.0
MESSAGE_OVERHEAD_ESTIMATE = 8

TokenCounter = Callable[[list[BaseMessage]], int]


def estimate_tokens(messages: list[BaseMessage]) -> int:
    """Estimate prompt tokens conservatively from character counts."""
    return sum(
        math.ceil(len(str(m.content)) / CHARS_PER_TOKEN_ESTIMATE)
        + MESSAGE_OVERHEAD_ESTIMATE
        for m in messages
    )


def estimate_text_tokens(text: str) -> int:
    """Estimate the tokens of a piece of text (no message overhead)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN_ESTIMATE)


def check_budget(
    prompt_tokens: int, max_output: int, context_tokens: int, prompt_id: str
) -> None:
    """Raise ContextOverflow when prompt plus reserved output exceeds the context."""
    if prompt_tokens + max_output > context_tokens:
        raise ContextOverflow(
            f"prompt {prompt_id!r} needs {prompt_tokens} tokens plus {max_output} for "
            f"the answer, over the model's context of {context_tokens}; it was not sent",
            prompt_tokens=prompt_tokens,
            budget=context_tokens - max_output,
        )
