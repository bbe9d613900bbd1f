"""ServerChat sends what ChatOpenAI sends and answers, refuses and fails as it does."""

from __future__ import annotations

import asyncio
from typing import Any

import openai
import pytest
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI

from fake_server import FakeServer
from veriscribe.errors import VeriscribeError
from veriscribe.llm.client import classify_backend_error
from veriscribe.llm.openai_chat import ServerChat

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string", "enum": ["yes", "no"]}},
    "required": ["answer"],
}
FORMAT = {
    "type": "json_schema",
    "json_schema": {"name": "reply", "schema": SCHEMA, "strict": False},
}
MESSAGES = [SystemMessage("Answer yes or no."), HumanMessage("Is the sky blue?")]


def _recording(server: FakeServer, finish: str = "stop") -> list[dict[str, Any]]:
    bodies: list[dict[str, Any]] = []
    answer = server.reply

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        bodies.append(body)
        completion = answer(body)
        completion["choices"][0]["finish_reason"] = finish
        return completion

    server.reply = reply  # type: ignore[method-assign]
    return bodies


def _chat(cls: type[ChatOpenAI], url: str) -> ChatOpenAI:
    return cls(
        model="fake", base_url=url, api_key="none", temperature=0.0, max_retries=0
    )


async def _failures(url: str) -> list[Exception]:
    """Return what each of ChatOpenAI and ServerChat raises for one structured call."""
    failures: list[Exception] = []
    for cls in (ChatOpenAI, ServerChat):
        try:
            await _chat(cls, url).ainvoke(MESSAGES, response_format=FORMAT)
        except Exception as exc:  # noqa: BLE001  (the test compares what is raised)
            failures.append(exc)
    assert len(failures) == 2
    return failures


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_tokens": 40, "response_format": FORMAT},
        {"max_tokens": 40, "response_format": {"type": "json_object"}},
        {"max_tokens": 40},
    ],
)
def test_same_request_and_reply_as_chat_openai(kwargs: dict[str, Any]) -> None:
    with FakeServer() as server:
        bodies = _recording(server)

        async def both() -> list[BaseMessage]:
            return [
                await _chat(cls, server.url).ainvoke(MESSAGES, **kwargs)
                for cls in (ChatOpenAI, ServerChat)
            ]

        stock, lean = asyncio.run(both())
    assert len(bodies) == 2
    assert bodies[0] == bodies[1]
    assert lean.content == stock.content
    assert lean.usage_metadata == stock.usage_metadata
    assert lean.response_metadata["finish_reason"] == "stop"


@pytest.mark.parametrize(
    ("finish", "error"),
    [
        ("length", openai.LengthFinishReasonError),
        ("content_filter", openai.ContentFilterFinishReasonError),
    ],
)
def test_cut_replies_fail_as_with_chat_openai(
    finish: str, error: type[Exception]
) -> None:
    with FakeServer() as server:
        _recording(server, finish)
        failures = asyncio.run(_failures(server.url))
    assert [type(f) for f in failures] == [error, error]
    shown = [classify_backend_error(f, "openai:fake", "x") for f in failures]  # type: ignore[arg-type]
    assert all(isinstance(s, VeriscribeError) for s in shown)
    assert shown[0].user_message == shown[1].user_message


def test_http_errors_map_as_with_chat_openai() -> None:
    with FakeServer(mode="error") as server:
        errors = asyncio.run(_failures(server.url))
    assert all(isinstance(e, openai.APIError) for e in errors)
    assert type(errors[0]) is type(errors[1])
    assert [getattr(e, "status_code", None) for e in errors] == [500, 500]
