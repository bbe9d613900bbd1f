"""Prompt files, loaded by name and checked for their placeholders.

A prompt file ``<graph>/<name>.md`` holds a system part and a user part, each introduced by
a line ``## system`` or ``## user``. Placeholders are ``{name}``; a literal brace is written
``{{`` or ``}}``. Rendering with a missing or unknown value is an error, never a blank. Each
prompt's id (``<graph>/<name>@<hash>``) changes with its text, so every result can be traced
to the exact prompt that produced it.

Every rendered message also carries, under ``additional_kwargs[PROMPT_KEY]``, the id of its
prompt and the values it was rendered with. Chat clients send a message's role and content
(OpenAI also a ``name``), never other ``additional_kwargs``, so this stays in the process:
the simulated model reads it to know what it answers without reading the wording.
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

PROMPT_KEY = "veriscribe_prompt"
"""The ``additional_kwargs`` key of a rendered message: ``{"id": ..., "values": {...}}``."""


class PromptError(ValueError):
    """A prompt file that is malformed or rendered with the wrong values."""


@dataclass(frozen=True)
class Prompt:
    """A loaded prompt template."""

    id: str
    system: str
    user: str
    placeholders: frozenset[str]

    @property
    def name(self) -> str:
        """Return ``<graph>/<name>``: the id without the digest of the wording."""
        return self.id.partition("@")[0]

    def render(self, **values: str) -> list[BaseMessage]:
        """Fill the placeholders and return the chat messages."""
        given = set(values)
        if missing := self.placeholders - given:
            raise PromptError(
                f"prompt {self.id} is missing values for {sorted(missing)}"
            )
        if unknown := given - self.placeholders:
            raise PromptError(f"prompt {self.id} has no placeholders {sorted(unknown)}")
        origin = {PROMPT_KEY: {"id": self.id, "values": dict(values)}}
        messages: list[BaseMessage] = []
        if self.system:
            messages.append(
                SystemMessage(self.system.format(**values), additional_kwargs=origin)
            )
        messages.append(
            HumanMessage(self.user.format(**values), additional_kwargs=origin)
        )
        return messages


def rendered_from(messages: Sequence[BaseMessage]) -> tuple[str, dict[str, str]] | None:
    """Return the prompt id and values the messages were rendered with, if any."""
    for message in messages:
        origin: Any = message.additional_kwargs.get(PROMPT_KEY)
        if isinstance(origin, dict):
            return str(origin["id"]), dict(origin["values"])
    return None


def _fields(text: str) -> set[str]:
    names = set()
    for _, name, spec, conversion in string.Formatter().parse(text):
        if name is None:
            continue
        if not name.isidentifier() or spec or conversion:
            raise PromptError(f"bad placeholder {{{name}}}")
        names.add(name)
    return names


@cache
def load_prompt(graph: str, name: str) -> Prompt:
    """Load ``prompts/<graph>/<name>.md``."""
    try:
        text = (
            resources.files(__package__)
            .joinpath(graph, f"{name}.md")
            .read_text("utf-8")
        )
    except FileNotFoundError as exc:
        raise PromptError(f"no prompt {graph}/{name}") from exc
    parts: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.strip() in ("## system", "## user"):
            current = parts.setdefault(line.strip()[3:], [])
        elif current is not None:
            current.append(line)
    if "user" not in parts:
        raise PromptError(f"prompt {graph}/{name} has no '## user' part")
    system = "\n".join(parts.get("system", [])).strip()
    user = "\n".join(parts["user"]).strip()
    digest = hashlib.sha256(text.encode()).hexdigest()[:8]
    return Prompt(
        id=f"{graph}/{name}@{digest}",
        system=system,
        user=user,
        placeholders=frozenset(_fields(system) | _fields(user)),
    )


def all_prompts() -> list[Prompt]:
    """Load every prompt file of every graph."""
    root = resources.files(__package__)
    return [
        load_prompt(folder.name, entry.name.removesuffix(".md"))
        for folder in sorted(root.iterdir(), key=lambda f: f.name)
        if folder.is_dir() and not folder.name.startswith("_")
        for entry in sorted(folder.iterdir(), key=lambda e: e.name)
        if entry.name.endswith(".md")
    ]


@cache
def prompts_digest(graph: str) -> str:
    """Return a digest of every prompt file of one graph: any edit gives a new digest.

    Thread keys hold it, so a finished thread is never served after a prompt of its
    graph changed, whichever of the graph's prompts the options select.
    """
    folder = resources.files(__package__).joinpath(graph)
    files = sorted(
        (entry.name, entry.read_bytes())
        for entry in folder.iterdir()
        if entry.name.endswith(".md")
    )
    if not files:
        raise PromptError(f"no prompts for the graph {graph!r}")
    digest = hashlib.sha256()
    for name, data in files:
        digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()[:12]
