"""Turn a model's text into a validated pydantic object, repairing what can be repaired."""

from __future__ import annotations

import copy
import json
import re
from functools import lru_cache
from typing import Any, TypeVar

from json_repair import repair_json
from pydantic import BaseModel, ValidationError

from veriscribe.errors import first_problem

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


class ParseFailure(ValueError):
    """The text is not JSON of the expected shape; ``reason`` says why in one line."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def loads_lenient(raw: str) -> Any:
    """Parse JSON from model text: code fences, prose around it and small syntax slips."""
    text = raw.strip()
    if not text:
        raise ParseFailure("the model returned empty content")
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        try:
            return json.loads(text[start : end + 1])
        except json.JSONDecodeError:
            pass
    repaired = repair_json(text, return_objects=True)
    if repaired in ("", None, [], {}) and text not in ("{}", "[]"):
        raise ParseFailure(f"the model returned text that is not JSON: {text[:80]!r}")
    return repaired


def parse_model(raw: str, schema: type[T]) -> T:
    """Parse and validate ``raw`` into ``schema``, raising ParseFailure with the reason."""
    data = loads_lenient(raw)
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        raise ParseFailure(
            f"JSON does not match {schema.__name__}: {first_problem(exc, '(root)')}"
        ) from exc


def json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """Return the JSON schema sent to backends that constrain decoding."""
    # A copy: callers may hand it to client libraries that change what they get.
    return copy.deepcopy(_schema_of(schema))


@lru_cache(maxsize=128)
def _schema_of(schema: type[BaseModel]) -> dict[str, Any]:
    # Generating a schema costs far more than copying one, on every model call.
    return schema.model_json_schema()
