"""One worker's session on a run: its four phases, run in order."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

from veriscribe.llm.client import LLM
from veriscribe.results import BatchSummary
from veriscribe.service.batch.config import LEASE_S, RunConfig
from veriscribe.service.batch.draining import Draining
from veriscribe.service.batch.progress import OnProgress
from veriscribe.service.batch.reading import Reading
from veriscribe.service.batch.registering import Registering
from veriscribe.service.batch.session import Chores, Session
from veriscribe.service.batch.work import Working
from veriscribe.store.db import Store


class BatchRunner:
    """One worker's session on a run: register, read, work, drain.

    ``run`` goes through the phases: :class:`Registering` checks the output file,
    registers the inputs and opens the session; :class:`Reading` reads the rest of a
    new run's inputs meanwhile; :class:`Working` claims items and runs their
    articles; :class:`Draining` closes the session and sums up the run, whatever
    ended the work. The runner owns the stop requests' effect on the phases
    (``request_stop``, called on SIGINT or SIGTERM) and nothing else; the phases
    share a :class:`Session`.
    """

    def __init__(
        self,
        store: Store,
        llm: LLM,
        run_id: str,
        config: RunConfig,
        on_progress: OnProgress | None = None,
        max_input_bytes: int | None = None,
        lease_s: float = LEASE_S,
        cpu_workers: int | None = None,
        *,
        registers: bool = True,
    ) -> None:
        self.session = Session(
            store, llm, run_id, config, on_progress=on_progress, lease_s=lease_s
        )
        self.reading = Reading(self.session, max_input_bytes)
        self.registering = Registering(
            self.session, self.reading, registers=registers, cpu_workers=cpu_workers
        )
        self.working: Working | None = None

    async def register(self) -> None:
        """Read every input and register its items; unreadable ones as failed items."""
        await self.reading.read_all()

    def request_stop(self) -> None:
        """Stop claiming work; a second request also cancels the articles in flight."""
        s = self.session
        requests = s.stop.request()
        self.reading.calls_out.set()
        s.progress.stage = "stopping"
        if requests >= 2 and self.working is not None:
            self.working.cancel()
        s.report()

    async def run(self) -> BatchSummary:
        """Run this worker's session and return the run's summary."""
        with _fewer_collections():
            return await self._run()

    async def _run(self) -> BatchSummary:
        try:
            opened = await self.registering.open()
        except BaseException:
            await self.reading.end()
            raise
        chores = Chores(self.session, self.request_stop)
        chores.start()
        self.working = Working(self.session, opened, self.reading)
        draining = Draining(self.session, opened, self.reading, chores)
        outcome = "finished"
        try:
            await self.working.run()
        except BaseException:
            outcome = "crashed"
            raise
        finally:
            await draining.settle(outcome)
        return await draining.summary()


@contextlib.contextmanager
def _fewer_collections() -> Iterator[None]:
    """Collect garbage less often while a batch runs.

    A batch allocates many short-lived objects per model call; with the default
    thresholds the collector keeps re-scanning the long-lived ones (modules, compiled
    graph, caches), about a tenth of the event loop's time. Those are frozen out of
    collection and the first generation is collected less often; both are restored.
    """
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(thresholds[0], 20_000), thresholds[1], thresholds[2])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
