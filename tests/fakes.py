"""Scripted chat models that drive graph and client logic deterministically."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from pydantic import PrivateAttr

from veriscribe.llm.budget import estimate_tokens
from veriscribe.llm.client import LLM
from veriscribe.llm.results import chat_result
from veriscribe.llm.spec import ModelSpec
from veriscribe.settings import LLMSettings
from veriscribe.store.db import Store

Reply = str | BaseException
Responder = Callable[[str, dict[str, Any]], Reply]


class ScriptedChatModel(BaseChatModel):
    """Answer from a script: a list of replies in order, or a function of the prompt.

    Every call is recorded in ``calls`` as (prompt text, call keywords). A reply that is an
    exception is raised instead of returned.
    """

    script: list[Reply] = []
    responder: Responder | None = None
    delay: float = 0.0
    _calls: list[tuple[str, dict[str, Any]]] = PrivateAttr(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def calls(self) -> list[tuple[str, dict[str, Any]]]:
        return self._calls

    def _next(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> ChatResult:
        prompt = "\n".join(str(m.content) for m in messages)
        self._calls.append((prompt, kwargs))
        if self.responder is not None:
            reply = self.responder(prompt, kwargs)
        elif self.script:
            reply = self.script.pop(0)
        else:
            raise AssertionError(f"unscripted model call: {prompt[:200]!r}")
        if isinstance(reply, BaseException):
            raise reply
        return chat_result(reply, len(prompt) // 4, len(reply) // 4)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._next(messages, kwargs)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.delay:
            await asyncio.sleep(self.delay)
        return self._next(messages, kwargs)


def scripted_llm(
    chat: BaseChatModel | Sequence[Reply] | Responder,
    *,
    store: Store | None = None,
    context_tokens: int = 8192,
    max_output_tokens: int = 512,
    cache: bool = False,
    concurrency: int = 4,
) -> LLM:
    """Wrap a scripted model (or a script, or a responder) in veriscribe's LLM client."""
    if callable(chat) and not isinstance(chat, BaseChatModel):
        chat = ScriptedChatModel(responder=chat)
    elif not isinstance(chat, BaseChatModel):
        chat = ScriptedChatModel(script=list(chat))
    settings = LLMSettings(
        context_tokens=context_tokens,
        max_output_tokens=max_output_tokens,
        cache=cache,
        concurrency=concurrency,
    )
    return LLM(
        spec=ModelSpec("ollama", "scripted"),
        chat=chat,
        settings=settings,
        count_tokens=estimate_tokens,
        json_kwargs=lambda s: {"format": s},
        limit_kwargs=lambda n: {"max_tokens": n},
        context_tokens=context_tokens,
        store=store,
        model_name="scripted",
    )
