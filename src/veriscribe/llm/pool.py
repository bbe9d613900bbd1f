"""Balance one model's calls over several servers, and route around the failing ones.

Each call goes to the healthy server with the fewest calls in flight (ties in turn),
never beyond that server's own limit. A server whose call fails transiently (no
connection, timeout, HTTP 5xx or 429) cools down for 1 s, then 2, 4 ... up to 60 s
while it keeps failing, and the call is retried on another one by the client. When it
comes back it takes one call at a time until one succeeds, so a server that is still
down costs one attempt, not a burst. Calls that find every server cooling or full wait
for the first one to come back or free a slot.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Generic, TypeVar

COOLDOWN_FIRST_S = 1.0
"""Rest of a server after its first transient failure; it doubles while it fails."""
COOLDOWN_MAX_S = 60.0
"""Longest rest: a server that is back should be tried again within a minute."""

C = TypeVar("C")


@dataclass(eq=False)
class Member(Generic[C]):
    """One server of a pool: its client, its limit and its health."""

    name: str
    client: C
    max_in_flight: int
    in_flight: int = 0
    strikes: int = 0
    """Transient failures in a row (one outage counts once, whatever calls met it)."""
    cooling_until: float = 0.0
    struck_at: float = float("-inf")
    served: int = 0

    def capacity(self) -> int:
        """Return how many calls the server may have in flight now."""
        # Back from a cooldown: one probe call until it has answered again.
        return 1 if self.strikes else self.max_in_flight


@dataclass(eq=False)
class Lease(Generic[C]):
    """The right to send one call to one member; say how it went."""

    member: Member[C]
    pool: EndpointPool[C]
    started: float

    def failed(self) -> None:
        """Cool the member down: the call failed transiently."""
        self.pool.strike(self.member, self.started)

    def succeeded(self) -> None:
        """Mark the member healthy again: the call was answered."""
        self.pool.heal(self.member, self.started)


@dataclass(eq=False)
class EndpointPool(Generic[C]):
    """Several servers of one model, each with its own limit and cooldown."""

    members: Sequence[Member[C]]
    cooldown_first_s: float = COOLDOWN_FIRST_S
    cooldown_max_s: float = COOLDOWN_MAX_S
    clock: Callable[[], float] = time.monotonic
    _cursor: int = 0
    _waiters: set[asyncio.Future[None]] = field(default_factory=set)

    def __post_init__(self) -> None:
        if not self.members:
            raise ValueError("a pool needs at least one member")

    @property
    def capacity(self) -> int:
        """Return the calls all members may have in flight together."""
        return sum(m.max_in_flight for m in self.members)

    @asynccontextmanager
    async def lease(self) -> AsyncIterator[Lease[C]]:
        """Wait for a member that may take a call, and hold its slot meanwhile."""
        member = await self._acquire()
        try:
            yield Lease(member, self, self.clock())
        finally:
            member.in_flight -= 1
            self._wake()

    def pick(self, now: float) -> Member[C] | None:
        """Return the healthy member with the fewest calls in flight and room for one.

        Ties go to the first after the member picked last, so equal members take
        calls in turn.
        """
        best: tuple[int, Member[C]] | None = None
        count = len(self.members)
        for offset in range(count):
            index = (self._cursor + offset) % count
            member = self.members[index]
            if member.cooling_until > now or member.in_flight >= member.capacity():
                continue
            if best is None or member.in_flight < best[1].in_flight:
                best = (index, member)
        if best is None:
            return None
        self._cursor = best[0] + 1
        return best[1]

    def strike(self, member: Member[C], started: float) -> None:
        """Cool ``member`` down: a call sent at ``started`` failed transiently."""
        if started < member.struck_at:
            # Sent before the last strike: the same outage, already paid for.
            return
        now = self.clock()
        member.strikes += 1
        rest = min(
            self.cooldown_first_s * 2 ** (member.strikes - 1), self.cooldown_max_s
        )
        member.cooling_until = now + rest
        member.struck_at = now

    def heal(self, member: Member[C], started: float) -> None:
        """Count a call ``member`` answered; a fresh answer ends its probation."""
        member.served += 1
        if member.strikes and started >= member.struck_at:
            member.strikes = 0
            self._wake()  # its full limit is open again

    async def _acquire(self) -> Member[C]:
        loop = asyncio.get_running_loop()
        while True:
            now = self.clock()
            member = self.pick(now)
            if member is not None:
                member.in_flight += 1
                return member
            cooling = [m.cooling_until for m in self.members if m.cooling_until > now]
            timeout = min(cooling) - now if cooling else None
            waiter: asyncio.Future[None] = loop.create_future()
            self._waiters.add(waiter)
            try:
                await asyncio.wait({waiter}, timeout=timeout)
            finally:
                self._waiters.discard(waiter)
                if not waiter.done():
                    waiter.cancel()

    def _wake(self) -> None:
        """Let every waiting call look again: a slot was freed or a limit raised."""
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._waiters.clear()
