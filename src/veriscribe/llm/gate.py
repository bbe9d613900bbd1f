"""A limit on model calls in flight that lets the oldest work through first.

A batch keeps about twice as many articles in flight as it may make calls, so calls
wait for a slot. Served first come, first served, every article in flight advances one
step per round: they all finish together, and the articles that replace them all start
together, each with its text steps to run before its first call, while the call slots
run dry. Served by priority (a batch gives each article its place in the order it
started), the oldest article's next call goes first: articles finish one by one, and
the next one starts while the others keep the slots full.
"""

from __future__ import annotations

import asyncio
import contextvars
import heapq
import itertools
from types import TracebackType

call_priority: contextvars.ContextVar[int] = contextvars.ContextVar(
    "call_priority", default=0
)
"""The priority of the calls made in this context: lower goes first (0 by default)."""


class CallGate:
    """At most ``limit`` holders at once; waiters served by priority, then arrival.

    Used as ``async with gate:``. The priority is the context's ``call_priority`` when
    the call starts waiting. A waiter that is cancelled leaves its place; one cancelled
    just after it was given a slot passes that slot on.
    """

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"a call limit must be at least 1, not {limit}")
        self.limit = limit
        self._free = limit
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._arrivals = itertools.count()

    @property
    def in_use(self) -> int:
        """Return how many slots are held."""
        return self.limit - self._free

    @property
    def waiting(self) -> int:
        """Return how many calls wait for a slot."""
        return sum(1 for *_, f in self._waiting if not f.done())

    async def __aenter__(self) -> None:
        # A free slot means no call waits: a freed slot goes to a waiter if any.
        if self._free > 0:
            self._free -= 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (call_priority.get(), next(self._arrivals), waiter)
        heapq.heappush(self._waiting, entry)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._release()  # given a slot, but gone: the next one takes it
            raise

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._release()

    def _release(self) -> None:
        """Hand the slot to the first waiter still waiting, else free it."""
        while self._waiting:
            *_, waiter = heapq.heappop(self._waiting)
            if not waiter.done():
                waiter.set_result(None)
                return
        self._free += 1
