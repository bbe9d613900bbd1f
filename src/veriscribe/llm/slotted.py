"""The chat model the LLM client calls: LangChain's bookkeeping outside the call slot.

LangChain's ``ainvoke`` does more than send a request. It tells the callbacks that a
call starts, runs the model's ``_agenerate`` in a task of its own, waits for that task,
then sets message ids and metadata and tells the callbacks that it ended in another
task. Each of those tasks costs a turn of the event loop, and on a busy loop a turn
takes milliseconds. Held around ``ainvoke``, a call slot stays taken through all of
it: the server is idle while the slot waits for the loop.

:class:`SlottedChat` is a chat model whose ``_agenerate`` hands the request to the
client (``send``), which takes a slot, sends the request to the routed chat model's
own ``_agenerate`` and frees the slot as soon as the reply is in. ``ainvoke`` on it
runs LangChain's bookkeeping once, around the slot, not inside it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from pydantic import ConfigDict

Send = Callable[
    [list[BaseMessage], list[str] | None, AsyncCallbackManagerForLLMRun | None, Any],
    Awaitable[ChatResult],
]
"""Sends one request: the messages, stop words, LangChain's run manager and the call's
keyword arguments; returns the routed model's result."""


class SlottedChat(BaseChatModel):
    """A chat model that sends each request through the client's ``send``."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    send: Any
    """The client's :data:`Send`."""

    @property
    def _llm_type(self) -> str:
        return "veriscribe-slotted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        raise NotImplementedError("the LLM client calls models asynchronously")

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        send: Send = self.send
        return await send(messages, stop, run_manager, kwargs)
