"""One worker's session on a run: claiming items, working on them, keeping claims alive."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import logging
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from veriscribe.documents.articles import Article
from veriscribe.errors import InputError, VeriscribeError
from veriscribe.graphs.runner import GraphRunner
from veriscribe.llm.client import LLM
from veriscribe.llm.gate import call_priority
from veriscribe.offload import AUTO_MIN_ITEMS, INLINE, Offload, auto_workers
from veriscribe.redaction import redact
from veriscribe.results import (
    AbstractResult,
    BatchLine,
    BatchSummary,
    FailedLine,
    SessionReport,
    Usage,
)
from veriscribe.service.abstracts import abstract_runner, run_abstract, thread_id
from veriscribe.service.batch.config import (
    HEARTBEAT_S,
    LEASE_S,
    READ_ON_S,
    TICK_S,
    WAIT_S,
    RunConfig,
    article_slots,
)
from veriscribe.service.batch.output import check_output, sync_output, write_lines
from veriscribe.service.batch.progress import BatchProgress, CallMeter, OnProgress
from veriscribe.service.batch.register import (
    REGISTER_CHUNK,
    OnFlush,
    failure_line,
    line_json,
    register_inputs,
)
from veriscribe.service.batch.summary import run_summary
from veriscribe.store import calls, runs
from veriscribe.store.articles import get_article
from veriscribe.store.connect import open_database
from veriscribe.store.db import Store
from veriscribe.store.output import ResultsFile, Scan, SyncReport
from veriscribe.store.runs import HeldItem, NewItem, Outcome, new_worker_id

log = logging.getLogger(__name__)

OFFLOADED = (
    "veriscribe.nodes.abstract.checks",
    "veriscribe.labeller.model",
    "veriscribe.text.sentences",
)
"""The modules of the steps a batch runs in worker processes, imported at their start."""


class BatchRunner:
    """One worker's session on a run."""

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
    ) -> None:
        self.store = store
        self.cpu_workers = cpu_workers  # None: as many as pay (``auto_workers``)
        self.offload = INLINE
        self.lease_s = lease_s
        self.heartbeat_s = min(HEARTBEAT_S, lease_s / 3)
        self.wait_s = min(WAIT_S, lease_s / 4)
        self.registers = True  # False: work on items registered by others only
        self.max_input_bytes = max_input_bytes
        self.llm = llm
        self.run_id = run_id
        self.config = config
        self.options = config.options
        self.on_progress = on_progress
        self.worker = new_worker_id()
        self.meter = CallMeter()
        self.results = ResultsFile(Path(config.out), run_id)
        self.progress = BatchProgress(run_id, call_limit=llm.settings.concurrency)
        self.slots = article_slots(llm.settings.concurrency)
        self.stop_requests = 0
        self.stopping = asyncio.Event()
        self.tasks: set[asyncio.Task[None]] = set()
        # The order articles start in: the calls of an older article go first.
        self.started_items = itertools.count()
        self.lines: asyncio.Queue[tuple[str, str] | None] = asyncio.Queue()
        self.started = time.perf_counter()
        self.graph: GraphRunner | None = None
        self.checkpoints: Store | None = None
        self.output_report: SyncReport | None = None
        self.registered_all = True  # False: a stop request cut registration short
        # A new run's inputs are read on while its first items are worked on.
        self.registering: asyncio.Task[None] | None = None
        self.arrived = asyncio.Event()  # more items were registered
        self.go_on = asyncio.Event()  # the session is open: read the rest
        self.read_on = asyncio.Event()  # the first calls are out (or nothing runs)
        self.halting = False  # the session ends: stop reading

    # ----------------------------------------------------------------- registering

    async def register(
        self, first_chunk: int = REGISTER_CHUNK, on_flush: OnFlush | None = None
    ) -> None:
        """Read every input and register its items; unreadable ones as failed items."""
        self.registered_all = await register_inputs(
            self.store,
            self.run_id,
            self.config.inputs,
            model=self.llm.label,
            options=self.options,
            max_input_bytes=self.max_input_bytes,
            should_stop=lambda: self.halting or self.stopping.is_set(),
            first_chunk=first_chunk,
            on_flush=on_flush,
        )

    async def _register_alongside(self) -> None:
        """Start registering a new run; return once its first items are stored.

        Reading then waits until the session is open (``go_on``): worker processes
        start meanwhile, never beside a thread that is reading. The first chunk is the
        batch size that starts worker processes, so a registration still under way
        means a batch that large. It is no larger: the first articles start sooner,
        and the worker processes are busy with their first text steps for longer
        than the next chunk takes to read.

        Then it waits until the first articles' calls are out (``read_on``), for at
        most ``READ_ON_S``: reading on takes the event loop and the database from
        them, and held every first call back by about a third of a second. The items
        of every later chunk are announced (``arrived``), and the lines of those that
        could not be read are queued for the output file.
        """
        first = True

        async def flushed(items: Sequence[NewItem], more: bool) -> None:
            nonlocal first
            if first:
                # Counted, and its failed lines written, as the session opens.
                first = False
                if more:
                    self.arrived.set()
                    await self.go_on.wait()
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(READ_ON_S):
                            await self.read_on.wait()
                return
            failed = [i for i in items if i.status == "failed" and i.result]
            for item in failed:
                await self.lines.put((item.item_id, item.result or ""))
            self.progress.total += len(items)
            self.progress.failed += len(failed)
            self.arrived.set()

        first_chunk = AUTO_MIN_ITEMS
        self.registering = asyncio.create_task(self.register(first_chunk, flushed))
        arrived = asyncio.create_task(self.arrived.wait())
        await asyncio.wait(
            {self.registering, arrived}, return_when=asyncio.FIRST_COMPLETED
        )
        arrived.cancel()
        self.arrived.clear()
        if self.registering.done():
            task, self.registering = self.registering, None
            task.result()  # raises what went wrong

    async def _end_registration(self) -> BaseException | None:
        """Let a registration still under way stop; return what it raised, if anything."""
        task, self.registering = self.registering, None
        if task is None:
            return None
        self.halting = True
        self.go_on.set()
        self.read_on.set()
        (outcome,) = await asyncio.gather(task, return_exceptions=True)
        return outcome if isinstance(outcome, BaseException) else None

    def _still_reading(self) -> bool:
        """Whether the inputs are still being read.

        Raises:
            Exception: What reading or storing the inputs raised.
        """
        task = self.registering
        if task is None:
            return False
        if not task.done():
            return True
        self.registering = None
        task.result()
        return False

    async def _first_of(
        self, waits: set[asyncio.Future[Any]], *, arrivals: bool
    ) -> set[asyncio.Future[Any]]:
        """Wait for the first of ``waits``, or (``arrivals``) for new items to claim."""
        arrival = None
        if arrivals and self.registering is not None:
            arrival = asyncio.ensure_future(self.arrived.wait())
            waits = {*waits, arrival, self.registering}
        finished, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        if arrival is not None:
            arrival.cancel()
        return finished

    async def check_output(self) -> Scan:
        """Refuse an output file that is not this run's (see ``ResultsFile.scan``).

        Raises:
            InputError: The file holds something else, or cannot be read.
        """
        return await check_output(self.results)

    async def sync_output(self) -> SyncReport:
        """Repair the output file from the database (see ``ResultsFile.sync``).

        Raises:
            InputError: The file cannot be written, or holds another run's lines.
        """
        return await sync_output(self.store, self.run_id, self.results)

    # --------------------------------------------------------------------- working

    def _writer_ended(self, task: asyncio.Task[None]) -> None:
        """Stop claiming work when the output file can take no more lines (disk full)."""
        if not task.cancelled() and task.exception() is not None:
            self.request_stop()

    def request_stop(self) -> None:
        """Stop claiming work; a second request also cancels the articles in flight."""
        self.stop_requests += 1
        self.stopping.set()
        self.read_on.set()
        self.progress.stage = "stopping"
        if self.stop_requests >= 2:
            for task in self.tasks:
                task.cancel()
        self._report()

    def _report(self) -> None:
        if self.on_progress is None:
            return
        p = self.progress
        p.articles_in_flight = len(self.tasks)
        p.calls_in_flight = self.meter.in_flight
        p.calls = self.llm.calls_made
        p.prompt_tokens = self.meter.prompt_tokens
        p.output_tokens = self.meter.output_tokens
        p.elapsed = time.perf_counter() - self.started
        self.on_progress(p)

    async def _ticker(self) -> None:
        while True:
            await asyncio.sleep(TICK_S)
            self._report()

    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(self.heartbeat_s)
            try:
                await runs.heartbeat(self.store, self.run_id, self.worker)
            except Exception:  # a missed beat costs at most a lease; keep beating
                log.warning("heartbeat of %s failed", self.worker, exc_info=True)

    async def _usage_of_failed(self, held: HeldItem) -> Usage:
        if held.doc_key is None:
            return Usage()
        tid = thread_id(held.doc_key, self.options, self.llm)
        return await calls.run_thread_usage(self.store, self.run_id, tid)

    async def _process(self, held: HeldItem, order: int) -> None:
        # This task's calls, its graph's branches' too, wait behind older articles'.
        call_priority.set(order)
        started = time.perf_counter()
        article: Article | None = None
        reason: str | None = None
        result: AbstractResult | None = None
        try:
            if held.doc_key is None:
                raise InputError(f"{held.source}: the article was never stored")
            article = await get_article(self.store, held.doc_key)
            assert self.graph is not None
            result = await run_abstract(
                self.store,
                self.llm,
                article,
                self.options,
                runner=self.graph,
                doc_key=held.doc_key,
                run_id=self.run_id,
                offload=self.offload,
            )
        except VeriscribeError as exc:
            reason = exc.user_message
        except Exception as exc:  # one broken article must not stop the batch
            log.exception("article %s failed", held.source)
            reason = redact(f"internal error: {type(exc).__name__}: {exc}")
        seconds = time.perf_counter() - started
        if result is not None:
            line: BatchLine | FailedLine = BatchLine(
                **{**dict(result), "source": held.source},
                attempts=held.attempts,
                run_id=self.run_id,
            )
            outcome = Outcome("done", line_json(line), seconds, usage=result.usage)
        else:
            usage = await self._usage_of_failed(held)
            line = failure_line(
                run_id=self.run_id,
                source=held.source,
                article_id=held.article_id,
                reason=reason or "unknown failure",
                model=self.llm.label,
                options=self.options,
                article=article,
                usage=usage,
                seconds=seconds,
                attempts=held.attempts,
            )
            outcome = Outcome("failed", line_json(line), seconds, reason, usage)
        if await runs.finish(
            self.store, self.run_id, self.worker, held.item_id, outcome
        ):
            await self.lines.put((held.source, outcome.result))
            if outcome.status == "done":
                self.progress.done += 1
            else:
                self.progress.failed += 1
            self.progress.finished_now += 1
        self._report()

    async def work(self) -> None:
        """Claim and process items until none is left or a stop is requested."""
        stop_wait = asyncio.create_task(self.stopping.wait())
        try:
            while not self.stopping.is_set():
                reading = self._still_reading()
                free = self.slots - len(self.tasks)
                if free > 0:
                    self.arrived.clear()
                    held = await runs.claim(self.store, self.run_id, self.worker, free)
                    for item in held:
                        order = next(self.started_items)
                        self.tasks.add(asyncio.create_task(self._process(item, order)))
                    if not held and not self.tasks and reading:
                        # The inputs are still being read: wait for their next items.
                        self.read_on.set()
                        await self._first_of({stop_wait}, arrivals=True)
                        continue
                    if not held and not self.tasks:
                        # Nothing pending: take over claims of dead workers, if any.
                        if await runs.reclaim(self.store, self.run_id, self.lease_s):
                            continue
                        if not (await runs.counts(self.store, self.run_id)).running:
                            break
                        # Other workers hold the rest: wait, in case one of them dies.
                        await asyncio.wait({stop_wait}, timeout=self.wait_s)
                        continue
                    if held:
                        self._report()
                    free -= len(held)
                finished = await self._first_of(
                    {*self.tasks, stop_wait}, arrivals=reading and free > 0
                )
                self._reap(finished)
            while self.tasks:
                finished, _ = await asyncio.wait(
                    self.tasks, return_when=asyncio.FIRST_COMPLETED
                )
                self._reap(finished)
        finally:
            stop_wait.cancel()
            for task in self.tasks:
                task.cancel()
            if self.tasks:
                await asyncio.gather(*self.tasks, return_exceptions=True)
            self.tasks.clear()

    def _reap(self, finished: set[asyncio.Future[Any]]) -> None:
        for task in finished:
            if task not in self.tasks:
                continue
            self.tasks.discard(task)
            if not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]

    async def run(self) -> BatchSummary:
        """Run this worker's session and return the run's summary."""
        with _fewer_collections():
            return await self._run()

    async def _start(self) -> None:
        """Register, repair the output file and open this worker's session."""
        self.progress.stage = "registering"
        self._report()
        # Refuse an --out file that is not this run's before reading any input.
        scan = await self.check_output()
        if self.registers:
            if (
                not scan.lines
                and not (await runs.counts(self.store, self.run_id)).total
            ):
                # A new run: nothing to repair, or to start over, while reading on.
                await self._register_alongside()
            else:
                await self.register()
        await runs.reclaim(self.store, self.run_id, self.lease_s)
        self.output_report = await self.sync_output()
        counts = await runs.counts(self.store, self.run_id)
        self.progress.total = counts.total
        self.progress.done = counts.done
        self.progress.failed = counts.failed
        reading = self.registering is not None
        self.offload = self._offload(
            max(counts.remaining, AUTO_MIN_ITEMS) if reading else counts.remaining
        )
        # The checkpointer gets a connection of its own: its lock then orders all
        # its reads and writes, and its traffic runs beside the call log's.
        self.checkpoints = await open_database(self.store.target)
        self.graph = await abstract_runner(self.checkpoints, self.llm)
        self.llm.add_observer(self.meter)
        self.meter.notify(
            min(self.llm.settings.concurrency, AUTO_MIN_ITEMS), self.read_on
        )
        await runs.start_session(self.store, self.run_id, self.worker)
        await runs.set_status(self.store, self.run_id, "running")
        self.started = time.perf_counter()
        self.progress.stage = "working"
        self.go_on.set()

    def _offload(self, remaining: int) -> Offload:
        """Return where this session runs its text steps: in workers when they pay."""
        workers = self.cpu_workers
        if workers is None:
            embedded = self.llm.spec.backend == "local"
            workers = auto_workers(remaining, embedded=embedded)
        return Offload(workers, modules=OFFLOADED) if workers else INLINE

    async def _run(self) -> BatchSummary:
        try:
            await self._start()
        except BaseException:
            await self._end_registration()
            raise
        helpers = [
            asyncio.create_task(write_lines(self.results, self.lines)),
            asyncio.create_task(self._heartbeat()),
            asyncio.create_task(self._ticker()),
        ]
        helpers[0].add_done_callback(self._writer_ended)
        outcome = "finished"
        unread: BaseException | None = None
        try:
            await self.work()
        except BaseException:
            outcome = "crashed"
            raise
        finally:
            unread = await self._end_registration()
            if unread is not None:
                outcome = "crashed"
            for helper in helpers[1:]:
                helper.cancel()
            await self.lines.put(None)
            ended = await asyncio.gather(*helpers, return_exceptions=True)
            self.llm.remove_observer(self.meter)
            await runs.release(self.store, self.run_id, self.worker)
            counts = await runs.counts(self.store, self.run_id)
            if outcome == "finished" and self.stopping.is_set():
                outcome = "interrupted"
            await runs.end_session(self.store, self.run_id, self.worker, outcome)
            if self.checkpoints is not None:
                await self.checkpoints.close()
            self.offload.close()
            if counts.remaining == 0 and self.registered_all:
                await runs.set_status(self.store, self.run_id, "finished")
            elif outcome != "finished":
                await runs.set_status(self.store, self.run_id, "interrupted")
        if unread is not None:
            raise unread
        if isinstance(ended[0], Exception):
            # The results are in the database; the next run writes the missing lines.
            problem = ended[0]
            reason = (
                problem.strerror
                if isinstance(problem, OSError) and problem.strerror
                else str(problem)
            )
            raise VeriscribeError(
                f"cannot write {self.results.path}: {reason}; every finished article "
                "is kept in the database: run the same command again to write "
                "their lines and go on"
            ) from problem
        if counts.remaining == 0 and outcome == "finished" and self.registered_all:
            # Items that other workers finished (one that died among them) but whose
            # lines never reached this file: written now, each once.
            await self.sync_output()
        self.progress.stage = "finished"
        self.progress.total = counts.total
        self._report()
        summary = await run_summary(self.store, self.run_id)
        session = self._session_report(outcome)
        return BatchSummary(
            **dict(summary), session=session, interrupted=outcome == "interrupted"
        )

    def _session_report(self, outcome: str) -> SessionReport:
        """Return what this worker's session did."""
        return SessionReport(
            worker=self.worker,
            outcome=outcome,
            processed=self.progress.finished_now,
            calls=self.llm.calls_made,
            call_limit=self.llm.settings.concurrency,
            peak_calls_in_flight=self.meter.peak,
            prompt_tokens=self.meter.prompt_tokens,
            output_tokens=self.meter.output_tokens,
            seconds=round(time.perf_counter() - self.started, 3),
            output_repair=self.output_report.as_dict() if self.output_report else None,
        )


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
