"""What a running batch shows: its progress, and the model calls it makes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from langchain_core.messages import BaseMessage


@dataclass
class BatchProgress:
    """A snapshot of a running batch, for progress displays."""

    run_id: str
    total: int = 0
    done: int = 0
    failed: int = 0
    articles_in_flight: int = 0
    calls_in_flight: int = 0
    call_limit: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    elapsed: float = 0.0
    finished_now: int = 0  # items finished by this process
    stage: str = "registering"  # registering | working | stopping | finished

    @property
    def remaining(self) -> int:
        """Return the items not finished yet."""
        return max(self.total - self.done - self.failed, 0)

    @property
    def tokens_per_second(self) -> float:
        """Return prompt and output tokens processed per second so far."""
        tokens = self.prompt_tokens + self.output_tokens
        return tokens / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def output_tokens_per_second(self) -> float:
        """Return output tokens per second so far."""
        return self.output_tokens / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def eta_seconds(self) -> float | None:
        """Return the expected seconds left at the rate seen so far, if known."""
        if self.finished_now == 0 or self.elapsed <= 0:
            return None
        return self.remaining * self.elapsed / self.finished_now


OnProgress = Callable[[BatchProgress], None]


class CallMeter:
    """Count model calls in flight and the tokens they used (an LLM call observer)."""

    def __init__(self) -> None:
        self.in_flight = 0
        self.peak = 0
        self.started = 0
        self.prompt_tokens = 0
        self.output_tokens = 0
        self._watch: tuple[int, asyncio.Event] | None = None

    def call_started(self) -> None:
        """Count a call that starts."""
        self.in_flight += 1
        self.started += 1
        self.peak = max(self.peak, self.in_flight)
        if self._watch is not None and self.started >= self._watch[0]:
            self._watch[1].set()
            self._watch = None

    def notify(self, calls: int, event: asyncio.Event) -> None:
        """Set ``event`` once ``calls`` calls have started (at once if they have).

        The meter watches for one event at a time: a later call replaces the watch.
        """
        if self.started >= calls:
            event.set()
        else:
            self._watch = (calls, event)

    def call_ended(self, reply: BaseMessage | None) -> None:
        """Count a call that ended and, if it was answered, its tokens."""
        self.in_flight = max(self.in_flight - 1, 0)
        meta = getattr(reply, "usage_metadata", None)
        if meta:
            self.prompt_tokens += int(meta.get("input_tokens") or 0)
            self.output_tokens += int(meta.get("output_tokens") or 0)
