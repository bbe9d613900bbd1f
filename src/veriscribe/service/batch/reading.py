"""The read phase: a new run's inputs read on while its first items are worked on."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any

from veriscribe.offload import AUTO_MIN_ITEMS
from veriscribe.service.batch.config import READ_ON_S
from veriscribe.service.batch.register import (
    REGISTER_CHUNK,
    OnFlush,
    register_inputs,
)
from veriscribe.service.batch.session import Session
from veriscribe.store.runs import NewItem


class Reading:
    """Reads a run's inputs into items: all at once, or beside the work on a new run.

    It owns the reading task and what coordinates it with the other phases:

    - ``complete``: every input was read (False once a stop request cut reading
      short: the run cannot be finished, and is read again when resumed);
    - ``opened``: set by the register phase once the session is open; the rest of
      a new run is read only then, never beside the start of worker processes;
    - ``calls_out``: set once the first articles' calls are out (by the call
      meter), when nothing is in flight (by the work phase) or on a stop request;
      reading on waits for it, for at most ``READ_ON_S``;
    - ``arrived``: set whenever a chunk of items was registered, for the work
      phase to claim;
    - ``halting``: set by ``end``, once the session ends: reading stops.

    The register phase calls ``read_all`` (a run being resumed or joined) or
    ``start_beside`` (a new run); the work phase asks ``under_way`` and waits
    through ``first_of``; the drain phase calls ``end``.
    """

    def __init__(self, session: Session, max_input_bytes: int | None) -> None:
        self.session = session
        self.max_input_bytes = max_input_bytes
        self.complete = True
        self.task: asyncio.Task[None] | None = None
        self.opened = asyncio.Event()
        self.calls_out = asyncio.Event()
        self.arrived = asyncio.Event()
        self.halting = False

    def should_stop(self) -> bool:
        """Whether reading should stop: the session ends, or a stop was requested."""
        return self.halting or self.session.stop.requested

    async def read_all(
        self, first_chunk: int = REGISTER_CHUNK, on_flush: OnFlush | None = None
    ) -> None:
        """Read every input and register its items; unreadable ones as failed items."""
        s = self.session
        self.complete = await register_inputs(
            s.store,
            s.run_id,
            s.config.inputs,
            model=s.llm.label,
            options=s.options,
            max_input_bytes=self.max_input_bytes,
            should_stop=self.should_stop,
            first_chunk=first_chunk,
            on_flush=on_flush,
        )

    async def start_beside(self) -> None:
        """Start reading a new run; return once its first items are stored.

        The first chunk is the batch size that starts worker processes, so a reading
        still under way means a batch that large. It is no larger: the first
        articles start sooner, and the worker processes are busy with their first
        text steps for longer than the next chunk takes to read.

        Reading on waits for ``opened``, then for ``calls_out``: reading takes the
        event loop and the database from the first articles, and held every first
        call back by about a third of a second. The items of every later chunk are
        announced (``arrived``), and the lines of those that could not be read are
        queued for the output file.
        """
        first = True
        s = self.session

        async def flushed(items: Sequence[NewItem], more: bool) -> None:
            nonlocal first
            if first:
                # Counted, and its failed lines written, as the session opens.
                first = False
                if more:
                    self.arrived.set()
                    await self.opened.wait()
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(READ_ON_S):
                            await self.calls_out.wait()
                return
            failed = [i for i in items if i.status == "failed" and i.result]
            for item in failed:
                await s.lines.put((item.item_id, item.result or ""))
            s.progress.total += len(items)
            s.progress.failed += len(failed)
            self.arrived.set()

        self.task = asyncio.create_task(self.read_all(AUTO_MIN_ITEMS, flushed))
        arrived = asyncio.create_task(self.arrived.wait())
        await asyncio.wait({self.task, arrived}, return_when=asyncio.FIRST_COMPLETED)
        arrived.cancel()
        self.arrived.clear()
        if self.task.done():
            task, self.task = self.task, None
            task.result()  # raises what went wrong

    def under_way(self) -> bool:
        """Whether the inputs are still being read.

        Raises:
            Exception: What reading or storing the inputs raised.
        """
        task = self.task
        if task is None:
            return False
        if not task.done():
            return True
        self.task = None
        task.result()
        return False

    async def first_of(
        self, waits: set[asyncio.Future[Any]]
    ) -> set[asyncio.Future[Any]]:
        """Wait for the first of ``waits``, of new items, or of the end of reading."""
        arrival = None
        if self.task is not None:
            arrival = asyncio.ensure_future(self.arrived.wait())
            waits = {*waits, arrival, self.task}
        finished, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        if arrival is not None:
            arrival.cancel()
        return finished

    async def end(self) -> BaseException | None:
        """Let a reading still under way stop; return what it raised, if anything."""
        task, self.task = self.task, None
        if task is None:
            return None
        self.halting = True
        self.opened.set()
        self.calls_out.set()
        (outcome,) = await asyncio.gather(task, return_exceptions=True)
        return outcome if isinstance(outcome, BaseException) else None
