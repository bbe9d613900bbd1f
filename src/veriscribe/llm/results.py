"""One way to build a LangChain chat result with token usage, for in-process models."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult


def chat_result(
    content: str,
    prompt_tokens: int,
    output_tokens: int,
    response_metadata: dict[str, Any] | None = None,
) -> ChatResult:
    """Return a one-message chat result that reports its prompt and output tokens."""
    message = AIMessage(
        content=content,
        usage_metadata={
            "input_tokens": prompt_tokens,
            "output_tokens": output_tokens,
            "total_tokens": prompt_tokens + output_tokens,
        },
        response_metadata=response_metadata or {},
    )
    return ChatResult(generations=[ChatGeneration(message=message)])
