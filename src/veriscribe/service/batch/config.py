"""What a run is, and the timings every worker of it keeps to."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from veriscribe.errors import InputError
from veriscribe.options import AbstractOptions
from veriscribe.settings import Settings

KIND = "abstract"
LEASE_S = 120.0  # a claim not renewed for this long is another worker's to take
HEARTBEAT_S = 20.0
WAIT_S = 5.0  # how often a worker with nothing to claim looks at others' claims
TICK_S = 0.5  # how often the progress callback hears about calls in flight
READ_ON_S = 1.0  # longest a new run's reading waits for its first calls to go out


def article_slots(concurrency: int) -> int:
    """Return how many articles to keep in flight for a limit of model calls.

    An article's calls come in dependent steps (labels, then its facets in parallel,
    then the refinement), so one article keeps only about two calls busy on average.
    Twice the call limit keeps the limit saturated while articles wait on their next
    step; the LLM client's call gate, not this number, bounds the calls.
    """
    return 2 * concurrency + 2


def default_run_id(inputs: Sequence[str], options: AbstractOptions, model: str) -> str:
    """Return the run id derived from the inputs, the options and the model SPEC."""
    blob = json.dumps(
        {"inputs": list(inputs), "options": options.model_dump(), "model": model},
        sort_keys=True,
    )
    return "run-" + hashlib.sha256(blob.encode()).hexdigest()[:12]


def batch_settings(settings: Settings, concurrency: int | None) -> Settings:
    """Return settings for a batch: the call limit applied, every response cached."""
    update: dict[str, Any] = {"cache_sim": True}
    if concurrency is not None:
        if concurrency < 1:
            raise InputError("--concurrency must be 1 or more")
        update["concurrency"] = concurrency
    return settings.model_copy(update={"llm": settings.llm.model_copy(update=update)})


def absolute_inputs(inputs: Sequence[str]) -> list[str]:
    """Return the inputs as absolute paths or patterns (a run survives a `cd`)."""
    return [absolute(item) for item in inputs]


def absolute(path: str | Path) -> str:
    """Return a path (or glob pattern) made absolute, without resolving links."""
    return os.path.abspath(os.path.expanduser(path))


class StoredConfig(TypedDict):
    """A run's config as the runs table stores it."""

    model: str
    options: dict[str, Any]
    inputs: list[str]
    out: str
    concurrency: int


@dataclass(frozen=True)
class RunConfig:
    """What a run is: the model, the options, the inputs and where results go."""

    model: str
    options: AbstractOptions
    inputs: list[str]
    out: str
    concurrency: int

    def as_dict(self) -> StoredConfig:
        """Return the config as stored."""
        return {
            "model": self.model,
            "options": self.options.model_dump(),
            "inputs": self.inputs,
            "out": self.out,
            "concurrency": self.concurrency,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunConfig:
        """Read a stored config."""
        return cls(
            model=data["model"],
            options=AbstractOptions(**data["options"]),
            inputs=list(data["inputs"]),
            out=data["out"],
            concurrency=int(data["concurrency"]),
        )
