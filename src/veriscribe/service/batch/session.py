"""What the phases of one worker's session share, and the chores that run beside them.

A session goes through four phases, each a class of its own module:

1. register (``registering.Registering``): the output file checked, the inputs
   registered, the session opened;
2. read (``reading.Reading``): for a new run, the rest of its inputs read beside the
   work on its first items;
3. work (``work.Working``): items claimed and each article run through the graph;
4. drain (``draining.Draining``): the session closed and its outcome recorded.

``runner.BatchRunner`` runs them in that order. They share a :class:`Session`: the
run, the model, the progress shown, the stop requests and the queue of output lines,
which :class:`Chores` writes to the file while the work phase runs.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path

from veriscribe.llm.client import LLM
from veriscribe.service.batch.config import HEARTBEAT_S, TICK_S, WAIT_S, RunConfig
from veriscribe.service.batch.output import write_lines
from veriscribe.service.batch.progress import BatchProgress, CallMeter, OnProgress
from veriscribe.store import runs
from veriscribe.store.db import Store
from veriscribe.store.output import ResultsFile
from veriscribe.store.runs import new_worker_id

log = logging.getLogger(__name__)

Line = tuple[str, str]
"""An output line to write: the item's key in the file, and its JSON."""


class StopRequests:
    """The stop requests a session has had: SIGINT, SIGTERM, ``stop``, a full disk.

    After the first, the work phase claims nothing more and the read phase stops
    reading; the runner cancels the articles in flight on the second.
    """

    def __init__(self) -> None:
        self.count = 0
        self._event = asyncio.Event()

    def request(self) -> int:
        """Record a stop request; return how many there were."""
        self.count += 1
        self._event.set()
        return self.count

    @property
    def requested(self) -> bool:
        """Whether a stop was requested."""
        return self._event.is_set()

    async def wait(self) -> None:
        """Return once a stop is requested."""
        await self._event.wait()


class Session:
    """One worker's session on a run: what its phases share, and how it reports.

    It owns no phase. The register phase fills in the progress counts and ``started``;
    the work phase counts the articles in flight and queues their lines; every phase
    may report progress and read the stop requests.
    """

    def __init__(
        self,
        store: Store,
        llm: LLM,
        run_id: str,
        config: RunConfig,
        *,
        on_progress: OnProgress | None = None,
        lease_s: float,
    ) -> None:
        self.store = store
        self.llm = llm
        self.run_id = run_id
        self.config = config
        self.options = config.options
        self.on_progress = on_progress
        self.lease_s = lease_s
        self.heartbeat_s = min(HEARTBEAT_S, lease_s / 3)
        self.wait_s = min(WAIT_S, lease_s / 4)
        self.worker = new_worker_id()
        self.meter = CallMeter()
        self.results = ResultsFile(Path(config.out), run_id)
        self.progress = BatchProgress(run_id, call_limit=llm.settings.concurrency)
        self.stop = StopRequests()
        self.lines: asyncio.Queue[Line | None] = asyncio.Queue()
        self.started = time.perf_counter()

    def report(self) -> None:
        """Tell the progress callback, if any, where the session is."""
        if self.on_progress is None:
            return
        p = self.progress
        p.calls_in_flight = self.meter.in_flight
        p.calls = self.llm.calls_made
        p.prompt_tokens = self.meter.prompt_tokens
        p.output_tokens = self.meter.output_tokens
        p.elapsed = time.perf_counter() - self.started
        self.on_progress(p)


class Chores:
    """The tasks beside the work phase: the line writer, the heartbeat, the ticker.

    Started once the session is open, ended by the drain phase: the heartbeat and
    the ticker are cancelled, and the writer ends once it has written every line
    queued before it was told to end.
    """

    def __init__(self, session: Session, on_write_error: Callable[[], None]) -> None:
        self.session = session
        self.on_write_error = on_write_error
        self._writer: asyncio.Task[None] | None = None
        self._others: list[asyncio.Task[None]] = []

    def start(self) -> None:
        """Start the writer, the heartbeat and the ticker."""
        s = self.session
        self._writer = asyncio.create_task(write_lines(s.results, s.lines))
        self._writer.add_done_callback(self._writer_ended)
        self._others = [
            asyncio.create_task(self._heartbeat()),
            asyncio.create_task(self._ticker()),
        ]

    async def end(self) -> BaseException | None:
        """End the chores; return what stopped the writer, if anything did."""
        for task in self._others:
            task.cancel()
        await self.session.lines.put(None)
        tasks = [t for t in (self._writer, *self._others) if t is not None]
        ended = await asyncio.gather(*tasks, return_exceptions=True)
        written = ended[0] if self._writer is not None else None
        return written if isinstance(written, Exception) else None

    def _writer_ended(self, task: asyncio.Task[None]) -> None:
        """Stop claiming work when the output file can take no more lines (disk full)."""
        if not task.cancelled() and task.exception() is not None:
            self.on_write_error()

    async def _ticker(self) -> None:
        while True:
            await asyncio.sleep(TICK_S)
            self.session.report()

    async def _heartbeat(self) -> None:
        s = self.session
        while True:
            await asyncio.sleep(s.heartbeat_s)
            try:
                await runs.heartbeat(s.store, s.run_id, s.worker)
            except Exception:  # a missed beat costs at most a lease; keep beating
                log.warning("heartbeat of %s failed", s.worker, exc_info=True)
