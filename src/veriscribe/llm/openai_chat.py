"""The chat model of OpenAI-compatible servers, with a lighter structured-output call.

``ChatOpenAI`` sends a request that carries a ``response_format`` through the SDK's
``chat.completions.parse``, which walks the whole request against the SDK's typed
parameter definitions before sending it and builds a typed "parsed" completion after:
milliseconds of CPU per call that a batch worker spends on every model call. The
request is plain JSON already (messages as dicts, the schema as a dict), so
:class:`ServerChat` posts the same body to ``/chat/completions`` directly, and keeps
what ``parse`` decides: a reply cut at the token limit or by the content filter raises
the SDK's error, and HTTP errors are mapped as ``ChatOpenAI`` maps them. Requests
without a ``response_format`` take ``ChatOpenAI``'s own path.
"""

from __future__ import annotations

from typing import Any

import openai
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from langchain_openai import ChatOpenAI
from langchain_openai.chat_models.base import (
    _add_gateway_metadata,
    _handle_openai_api_error,
    _handle_openai_bad_request,
)
from openai._constants import RAW_RESPONSE_HEADER
from openai.types.chat import ChatCompletion

__all__ = ["ServerChat"]


class ServerChat(ChatOpenAI):
    """``ChatOpenAI`` whose structured-output requests skip the SDK's ``parse`` helper."""

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        payload = self._get_request_payload(messages, stop=stop, **kwargs)
        if "response_format" not in payload or not isinstance(
            payload["response_format"], dict
        ):
            return await super()._agenerate(messages, stop, run_manager, **kwargs)
        payload["stream"] = False  # as ``parse`` sends it
        generation_info: dict[str, Any] = {}
        raw_response: Any = None
        try:
            # The raw response, as ``with_raw_response`` gives it: its headers and its
            # HTTP response go where ``ChatOpenAI`` puts them.
            raw_response = await self.root_async_client.post(
                "/chat/completions",
                cast_to=ChatCompletion,
                body=payload,
                options={"headers": {RAW_RESPONSE_HEADER: "true"}},
            )
            response = raw_response.parse()
            _refuse_cut_replies(response)
        except openai.BadRequestError as e:
            _handle_openai_bad_request(e)
            raise  # the handler always raises; this line is for the type checker
        except openai.APIError as e:
            _handle_openai_api_error(e)
            raise
        except Exception as e:
            if raw_response is not None and hasattr(raw_response, "http_response"):
                e.response = raw_response.http_response  # type: ignore[attr-defined]
            raise
        if self.include_response_headers:
            generation_info = {"headers": dict(raw_response.headers)}
        _add_gateway_metadata(generation_info, raw_response)
        return self._create_chat_result(response, generation_info)


def _refuse_cut_replies(completion: ChatCompletion) -> None:
    """Raise what ``parse`` raises for a reply cut at the token limit or filtered."""
    for choice in completion.choices:
        if choice.finish_reason == "length":
            raise openai.LengthFinishReasonError(completion=completion)
        if choice.finish_reason == "content_filter":
            raise openai.ContentFilterFinishReasonError(completion=completion)
