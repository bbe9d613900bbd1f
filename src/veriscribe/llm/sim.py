"""A simulated chat model for benchmarks and fault-injection tests.

It answers any prompt after a fixed delay. The prompts of both graphs get the replies a
dutiful model would give (``sim_replies``): facet summaries, abstracts, section summaries,
questions and cited answers made of the prompt's own sentences. It knows them by the
prompt id and values their messages carry (``veriscribe.prompts.rendered_from``), not by
their wording: an edited prompt file gets the same replies. Any other prompt with a
JSON schema (``response_schema`` call keyword) gets a value that satisfies the schema,
with strings made of the prompt's words. A reply depends only on the prompt and the seed,
so a call that succeeds on a retry says what it would have said the first time.

A share ``fail`` of calls fails the way real servers fail: a timeout, a 5xx error,
invalid JSON or empty content. Faults are drawn from a seeded generator per (prompt,
attempt in this process), so a run is reproducible, a retried call can succeed, and a
process started afresh meets the same faults again. It never stands in for a real model
in a claim that a capability works.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import re
import threading
import time
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatResult
from pydantic import PrivateAttr

from veriscribe.errors import BackendUnavailable, ModelTimeout
from veriscribe.llm.results import chat_result
from veriscribe.llm.sim_replies import reply
from veriscribe.prompts import PROMPT_KEY, rendered_from

FAULTS = ("timeout", "server_error", "invalid_json", "empty")
# Chatter instead of the JSON asked for: nothing in it can be repaired into a value
# (a cut-off object such as '{"summary": "unter' would be, and pass as a summary).
INVALID_JSON = "Sure! Here is the summary you asked for, with my reasoning."
_WORD = re.compile(r"[A-Za-z][A-Za-z\-]{2,}")
# A quotable source in a prompt: a line "[doc_id:section_id]" followed by its text.
_SOURCE = re.compile(r"^\[([^\]\s:]+):([^\]\s]+)\]\s*\n(.+)$", re.MULTILINE)


def _prompt_text(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages)


def _first(messages: list[BaseMessage], kind: type[BaseMessage]) -> str:
    """Return the first message of a kind: the prompt itself, also in a repair call."""
    return next((str(m.content) for m in messages if isinstance(m, kind)), "")


def _digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()


def _asked(messages: list[BaseMessage]) -> str:
    """Return what a call asks, as a digest: its prompt id and values, else its text.

    A rendered prompt is known by the id without the wording's digest, and by its values:
    an edit of the prompt's wording asks the same.
    """
    origin = rendered_from(messages)
    if origin is not None:
        prompt_id, values = origin
        return _digest(prompt_id.partition("@")[0], sorted(values.items()))
    user = _first(messages, HumanMessage)
    system = _first(messages, SystemMessage)
    return hashlib.sha256(f"{system}\n{user}".encode()).hexdigest()


def _call_key(messages: list[BaseMessage]) -> str:
    """Return the key faults are drawn for: the prompt and any repair turns after it."""
    if rendered_from(messages) is None:
        return hashlib.sha256(_prompt_text(messages).encode()).hexdigest()
    turns = [str(m.content) for m in messages if PROMPT_KEY not in m.additional_kwargs]
    return _digest(_asked(messages), turns)


def sim_reply(
    messages: list[BaseMessage], schema: dict[str, Any] | None, seed: int = 0
) -> str:
    """Return the simulated model's fault-free reply (JSON when a schema is given).

    Raises:
        UnknownPrompt: The messages come from a prompt no writer answers.
    """
    # Seeded by the prompt alone, not by a repair turn: a repaired reply says
    # what the first reply would have said.
    rng = random.Random(f"{seed}:{_asked(messages)}")
    origin = rendered_from(messages)
    if origin is None:
        value = None
        prompt = _prompt_text(messages)
    else:
        value = reply(*origin, schema, rng)
        # Generic answers take the prompt's values' words, not its wording's.
        prompt = "\n".join(origin[1].values())
    if schema is None:
        if isinstance(value, str):
            return value
        return " ".join(_WORD.findall(prompt)[-40:]) or "ok"
    if value is None or isinstance(value, str):
        value = SchemaFaker(prompt, rng, schema).make(schema)
    return json.dumps(value)


class SimChatModel(BaseChatModel):
    """A chat model that answers instantly (after ``latency``) and fails on purpose."""

    latency: float = 0.0
    fail: float = 0.0
    seed: int = 0
    _attempts: dict[str, int] = PrivateAttr(default_factory=dict)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "sim"

    def _fault(self, key: str) -> str:
        """Draw this attempt's fault ("" for none) from the prompt and attempt number."""
        with self._lock:
            attempt = self._attempts.get(key, 0)
            self._attempts[key] = attempt + 1
        rng = random.Random(f"{self.seed}:{key}:{attempt}")
        return rng.choice(FAULTS) if rng.random() < self.fail else ""

    def _respond(self, messages: list[BaseMessage], **kwargs: Any) -> tuple[str, str]:
        fault = self._fault(_call_key(messages))
        schema = kwargs.get("response_schema")
        if fault == "invalid_json":
            return INVALID_JSON, fault
        if fault == "empty":
            return "", fault
        return sim_reply(messages, schema, self.seed), fault

    def _result(self, content: str, messages: list[BaseMessage]) -> ChatResult:
        prompt_tokens = max(1, len(_prompt_text(messages)) // 4)
        output_tokens = max(1, len(content) // 4) if content else 0
        return chat_result(content, prompt_tokens, output_tokens)

    @staticmethod
    def _raise_for(fault: str) -> None:
        if fault == "timeout":
            raise ModelTimeout("sim: request timed out")
        if fault == "server_error":
            raise BackendUnavailable("sim: HTTP 503 Service Unavailable")

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        time.sleep(self.latency)
        content, fault = self._respond(messages, **kwargs)
        self._raise_for(fault)
        return self._result(content, messages)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        # The attempt counts once the reply is due: a call cancelled while waiting
        # (a sibling branch failed) uses up none, whatever the timing.
        await asyncio.sleep(self.latency)
        content, fault = self._respond(messages, **kwargs)
        self._raise_for(fault)
        return self._result(content, messages)


class SchemaFaker:
    """Make a JSON value that satisfies a (pydantic-generated) JSON schema."""

    def __init__(self, prompt: str, rng: random.Random, root: dict[str, Any]) -> None:
        self.words = _WORD.findall(prompt) or ["finding"]
        self.sources = _SOURCE.findall(prompt)
        self.rng = rng
        self.defs = root.get("$defs", {})

    def sentence(self, n: int = 18) -> str:
        """Return a sentence of prompt words."""
        start = self.rng.randrange(max(1, len(self.words) - n))
        return " ".join(self.words[start : start + n]).capitalize() + "."

    def cited_answer(self) -> str:
        """Return prose whose sentences cite verbatim quotes of the prompt's sources."""
        if not self.sources:
            return "The loaded guidelines do not address this question."
        parts = []
        for doc_id, section_id, text in self.sources[:2]:
            quote = " ".join(text.split()[:12])
            parts.append(
                f"{quote.rstrip('.')}. {{{{cite:{doc_id}:{section_id}|{quote}}}}}"
            )
        return " ".join(parts)

    def make(self, schema: dict[str, Any], name: str = "") -> Any:
        """Return a value for ``schema``; ``name`` is the property being filled."""
        if "$ref" in schema:
            return self.make(self.defs[schema["$ref"].split("/")[-1]], name)
        for key in ("anyOf", "oneOf", "allOf"):
            if key in schema:
                options = [s for s in schema[key] if s.get("type") != "null"]
                return self.make(options[0] if options else schema[key][0], name)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self.rng.choice(schema["enum"])
        kind = schema.get("type", "string")
        if kind == "object":
            props = schema.get("properties", {})
            return {key: self.make(sub, key) for key, sub in props.items()}
        if kind == "array":
            low = schema.get("minItems", 1)
            high = schema.get("maxItems", max(low, 3))
            count = (
                self.rng.randint(low, max(low, min(high, 3))) if low != high else low
            )
            return [self.make(schema.get("items", {}), name) for _ in range(count)]
        if kind == "integer":
            return int(schema.get("minimum", 1))
        if kind == "number":
            return float(schema.get("minimum", 0.5))
        if kind == "boolean":
            return True
        if name == "answer":
            return self.cited_answer()
        if name in ("quote", "span") and self.sources:
            return " ".join(self.sources[0][2].split()[:10])
        if name in ("ids", "section_id") and self.sources:
            return self.sources[0][1]
        return self.sentence()
