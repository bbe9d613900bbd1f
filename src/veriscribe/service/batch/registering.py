"""The register phase: from the output file's check to an open session."""

from __future__ import annotations

import time
from dataclasses import dataclass

from veriscribe.graphs.runner import GraphRunner
from veriscribe.offload import AUTO_MIN_ITEMS, INLINE, Offload, auto_workers
from veriscribe.service.abstracts import abstract_runner
from veriscribe.service.batch.output import check_output, sync_output
from veriscribe.service.batch.reading import Reading
from veriscribe.service.batch.session import Session
from veriscribe.store import runs
from veriscribe.store.connect import open_database
from veriscribe.store.db import Store
from veriscribe.store.output import SyncReport

OFFLOADED = (
    "veriscribe.nodes.abstract.checks",
    "veriscribe.labeller.model",
    "veriscribe.text.sentences",
)
"""The modules of the steps a batch runs in worker processes, imported at their start."""


@dataclass
class OpenSession:
    """What the register phase hands to the work and drain phases."""

    graph: GraphRunner
    """The abstract graph over the checkpointer's connection."""
    checkpoints: Store
    """The checkpointer's own connection, closed by the drain phase."""
    offload: Offload
    """Where the text steps run, stopped by the drain phase."""
    output_repair: SyncReport
    """What repairing the output file did."""


class Registering:
    """Registers the inputs and opens this worker's session on the run.

    In order: refuses an ``--out`` file that is not this run's before reading any
    input; registers the inputs through the read phase (a new run only its first
    chunk, the rest read on beside the work; a run being resumed all at once; a
    worker joining a run none); takes back the claims of dead workers; repairs the
    output file from the database; counts the items; starts the worker processes
    for the text steps when they pay; opens the checkpointed graph; records the
    session and the run as running. It then opens the read phase (``opened``) and
    hands an :class:`OpenSession` to the work phase.
    """

    def __init__(
        self,
        session: Session,
        reading: Reading,
        *,
        registers: bool,
        cpu_workers: int | None,
    ) -> None:
        self.session = session
        self.reading = reading
        self.registers = registers  # False: work on items registered by others only
        self.cpu_workers = cpu_workers  # None: as many as pay (``auto_workers``)

    async def open(self) -> OpenSession:
        """Register, repair the output file and open the session."""
        s = self.session
        s.progress.stage = "registering"
        s.report()
        # Refuse an --out file that is not this run's before reading any input.
        scan = await check_output(s.results)
        if self.registers:
            if not scan.lines and not (await runs.counts(s.store, s.run_id)).total:
                # A new run: nothing to repair, or to start over, while reading on.
                await self.reading.start_beside()
            else:
                await self.reading.read_all()
        await runs.reclaim(s.store, s.run_id, s.lease_s)
        repair = await sync_output(s.store, s.run_id, s.results)
        counts = await runs.counts(s.store, s.run_id)
        s.progress.total = counts.total
        s.progress.done = counts.done
        s.progress.failed = counts.failed
        reading = self.reading.task is not None
        offload = self._offload(
            max(counts.remaining, AUTO_MIN_ITEMS) if reading else counts.remaining
        )
        # The checkpointer gets a connection of its own: its lock then orders all
        # its reads and writes, and its traffic runs beside the call log's.
        checkpoints = await open_database(s.store.target)
        graph = await abstract_runner(checkpoints, s.llm)
        s.llm.add_observer(s.meter)
        first_calls = min(s.llm.settings.concurrency, AUTO_MIN_ITEMS)
        s.meter.notify(first_calls, self.reading.calls_out)
        await runs.start_session(s.store, s.run_id, s.worker)
        await runs.set_status(s.store, s.run_id, "running")
        s.started = time.perf_counter()
        s.progress.stage = "working"
        self.reading.opened.set()
        return OpenSession(graph, checkpoints, offload, repair)

    def _offload(self, remaining: int) -> Offload:
        """Return where this session runs its text steps: in workers when they pay."""
        workers = self.cpu_workers
        if workers is None:
            embedded = self.session.llm.spec.backend == "local"
            workers = auto_workers(remaining, embedded=embedded)
        return Offload(workers, modules=OFFLOADED) if workers else INLINE
