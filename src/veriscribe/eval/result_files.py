"""Read result files for evaluation: what ``batch``, ``abstract``, ``ask`` write.

A result file is one JSON value (an object or a list of them), JSON lines, or JSON
objects one after another (``--json`` outputs appended to one file). Each object is
read into a model of the fields the evaluation uses, with defaults for the fields that
older files and hand-made ones lack; any other field is kept as it is. The product's
own result models (:mod:`veriscribe.results`) are stricter: they describe what a
command writes today, not everything the evaluation has to read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from veriscribe.errors import InputError

__all__ = [
    "AbstractItem",
    "AnswerItem",
    "CitationItem",
    "ClaimItem",
    "RawItem",
    "read_abstract_items",
    "read_answer_items",
    "read_values",
]


class _Read(BaseModel):
    """A result as read: the fields the evaluation uses, any others kept."""

    model_config = ConfigDict(extra="allow")


class AbstractItem(_Read):
    """An abstract result (``abstract``, ``batch`` or ``eval baseline`` output)."""

    id: str | None = None
    source: str = ""
    abstract: str | None = None
    """None for a failed article, or a hand-made line without one."""
    error: str | None = None
    reference: str | None = None
    """The author abstract; None makes the result score against ``--reference``."""
    words_asked: int = 0
    """The asked length in words (0: not held, scored against 250)."""
    model: str | None = None


class CitationItem(_Read):
    """A citation of a checked answer: its quote's tier is what is counted."""

    tier: str | None = None


class ClaimItem(_Read):
    """A claim of a checked answer, with what the judge said of it."""

    text: str = ""
    status: str | None = None
    verdict: str | None = None
    shortfall: str | None = None
    judged_by: str | None = None


class AnswerItem(_Read):
    """A checked answer (``ask --json``, ``verify --json``, ``ask --questions``)."""

    funnel: dict[str, Any]
    """Claim counts by stage: a checked answer always has them."""
    claims: list[ClaimItem]
    id: str | int | None = None
    """The question's id in its set; None for a single ``ask``."""
    question: str = ""
    answer: str | None = None
    not_found: bool | None = None
    error: str | None = None
    citations: list[CitationItem] = []
    metrics: dict[str, Any] = {}
    """Per-answer figures: coverage by window, as counts or (older files) rates."""
    gold_answer: str | None = None
    answerable: bool | None = None
    """Whether the question set says the corpus holds the answer; None: it says not."""

    @field_validator("answerable", mode="before")
    @classmethod
    def _only_true_or_false(cls, value: object) -> bool | None:
        # A question set labels a question with true or false, nothing else.
        return value if isinstance(value, bool) else None


@dataclass(frozen=True)
class RawItem:
    """A value of a result file and where it is, or why it could not be read."""

    where: str
    """``name:n``: the line of a JSON-lines file, or the place in a JSON list."""
    value: Any = None
    problem: str | None = None
    """Why the line is not a result (it is not JSON); None when it was read."""


def _read_text(path: Path) -> str:
    try:
        return path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from exc


def _stream(path: Path, text: str) -> list[Any]:
    """Decode JSON values one after another; raise on the first that is not JSON."""
    decoder = json.JSONDecoder()
    values: list[Any] = []
    position = 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position == len(text):
            return values
        try:
            value, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"{path}: not JSON at line {exc.lineno}: {exc.msg}"
            ) from exc
        values.extend(value if isinstance(value, list) else [value])


def _lines(path: Path, text: str) -> list[RawItem]:
    """Read JSON lines one by one, keeping each line that is not JSON as a problem."""
    items = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path.name}:{number}"
        try:
            items.append(RawItem(where, json.loads(line)))
        except json.JSONDecodeError as exc:
            items.append(
                RawItem(where, problem=f"line {number} is not JSON ({exc.msg})")
            )
    return items


def read_values(path: Path, *, skip_bad_lines: bool = False) -> list[RawItem]:
    """Read the JSON values of a result file, each with where it is in the file.

    A file that is one JSON value gives its items (a list) or itself; otherwise it is
    read as JSON lines. ``skip_bad_lines`` keeps a line that is not JSON as a
    :class:`RawItem` with its problem; without it such a file is an error, and
    objects one after another (pretty-printed ``--json`` outputs) are read too.

    Raises:
        InputError: The file cannot be read, or (without ``skip_bad_lines``) a value
            is not JSON.
    """
    text = _read_text(path)
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        if skip_bad_lines:
            return _lines(path, text)
        return [
            RawItem(f"{path.name}:{n}", value)
            for n, value in enumerate(_stream(path, text), 1)
        ]
    items = whole if isinstance(whole, list) else [whole]
    return [RawItem(f"{path.name}:{n}", value) for n, value in enumerate(items, 1)]


def abstract_item(value: dict[str, Any]) -> AbstractItem:
    """Read one abstract result, tolerating what hand-made lines hold.

    Fields of the wrong kind are read as the evaluation always has: an ``id`` or
    ``source`` of another type as its text, an ``abstract`` or ``reference`` that is
    not text as none, a ``words_asked`` that is not a positive number as not held.
    """
    abstract, reference = value.get("abstract"), value.get("reference")
    asked = value.get("words_asked")
    model = value.get("model")
    fields = {
        **value,
        "id": str(value["id"]) if value.get("id") else None,
        "source": str(value.get("source") or ""),
        "abstract": abstract if isinstance(abstract, str) else None,
        "error": str(value["error"]) if value.get("error") else None,
        "reference": reference if isinstance(reference, str) else None,
        "words_asked": asked if isinstance(asked, int) and asked > 0 else 0,
        "model": str(model) if model else None,
    }
    return AbstractItem.model_validate(fields)


def read_abstract_items(path: Path) -> list[tuple[str, AbstractItem | str]]:
    """Read abstract results, each with where it is; or why an entry is not one.

    The lines that are not JSON come first, then the entries in the file's order.

    Raises:
        InputError: The file cannot be read or holds no item at all.
    """
    raw = read_values(path, skip_bad_lines=True)
    if not raw:
        raise InputError(f"{path}: no results")
    read: list[tuple[str, AbstractItem | str]] = [
        (item.where, item.problem) for item in raw if item.problem is not None
    ]
    for item in raw:
        if item.problem is not None:
            continue
        if not isinstance(item.value, dict):
            read.append((item.where, "not a JSON object"))
        else:
            read.append((item.where, abstract_item(item.value)))
    return read


def read_answer_items(path: Path) -> list[AnswerItem]:
    """Read checked answers: every value must be one (``funnel`` and ``claims``).

    Raises:
        InputError: If the file cannot be read, is not JSON, is empty, or holds
            something that is not a checked answer.
    """
    raw = read_values(path)
    if not raw:
        raise InputError(f"{path}: no results")
    answers = []
    for number, item in enumerate(raw, 1):
        value = item.value
        problem = f"{path}: result {number} is not a checked answer"
        if not (
            isinstance(value, dict)
            and isinstance(value.get("funnel"), dict)
            and isinstance(value.get("claims"), list)
        ):
            raise InputError(
                f"{problem} (expected the output of `veriscribe ask --json` or "
                "`veriscribe verify --json`)"
            )
        try:
            answers.append(AnswerItem.model_validate(value))
        except ValidationError as exc:
            first = exc.errors()[0]
            place = ".".join(str(part) for part in first["loc"])
            raise InputError(f"{problem}: {place}: {first['msg']}") from exc
    return answers
