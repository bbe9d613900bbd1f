"""The work phase: claiming items and running each article through the graph."""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from typing import Any

from veriscribe.documents.articles import Article
from veriscribe.errors import InputError, VeriscribeError
from veriscribe.llm.gate import call_priority
from veriscribe.redaction import redact
from veriscribe.results import AbstractResult, BatchLine, FailedLine, Usage
from veriscribe.service.abstracts import run_abstract, thread_id
from veriscribe.service.batch.config import article_slots
from veriscribe.service.batch.reading import Reading
from veriscribe.service.batch.register import failure_line, line_json
from veriscribe.service.batch.registering import OpenSession
from veriscribe.service.batch.session import Session
from veriscribe.store import calls, runs
from veriscribe.store.articles import get_article
from veriscribe.store.runs import HeldItem, Outcome

log = logging.getLogger(__name__)


class Working:
    """Claims items and works on them until none is left or a stop is requested.

    It owns the articles in flight: it keeps about twice the call limit of them
    (``article_slots``), each a task that runs its article through the checkpointed
    graph, records the outcome in the database (a failure with its reason, never
    dropped) and then queues the output line. Articles get a place in the order they
    started, and the calls of an older one go first. While the read phase is under
    way, it claims the items of each chunk as they arrive; once nothing is pending,
    it takes over the claims of dead workers, and waits while other workers hold
    the rest.

    ``run`` returns (or raises) with nothing in flight: after a stop request, once
    the articles in flight have finished (or, on a second request, ``cancel`` has
    cancelled them). The drain phase then closes the session.
    """

    def __init__(self, session: Session, opened: OpenSession, reading: Reading) -> None:
        self.session = session
        self.opened = opened
        self.reading = reading
        self.slots = article_slots(session.llm.settings.concurrency)
        self.tasks: set[asyncio.Task[None]] = set()
        self.started_items = itertools.count()

    def cancel(self) -> None:
        """Cancel the articles in flight (they continue from their checkpoints later)."""
        for task in self.tasks:
            task.cancel()

    async def run(self) -> None:
        """Claim and process items until none is left or a stop is requested."""
        s = self.session
        stop_wait = asyncio.create_task(s.stop.wait())
        try:
            while not s.stop.requested:
                reading = self.reading.under_way()
                free = self.slots - len(self.tasks)
                if free > 0:
                    self.reading.arrived.clear()
                    held = await self._claim(free)
                    if not held and not self.tasks and reading:
                        # The inputs are still being read: wait for their next items.
                        self.reading.calls_out.set()
                        await self.reading.first_of({stop_wait})
                        continue
                    if not held and not self.tasks:
                        if await self._none_pending(stop_wait):
                            break
                        continue
                    free -= len(held)
                waits: set[asyncio.Future[Any]] = {*self.tasks, stop_wait}
                if reading and free > 0:
                    finished = await self.reading.first_of(waits)
                else:
                    finished, _ = await asyncio.wait(
                        waits, return_when=asyncio.FIRST_COMPLETED
                    )
                self._reap(finished)
            while self.tasks:
                finished, _ = await asyncio.wait(
                    self.tasks, return_when=asyncio.FIRST_COMPLETED
                )
                self._reap(finished)
        finally:
            stop_wait.cancel()
            self.cancel()
            if self.tasks:
                await asyncio.gather(*self.tasks, return_exceptions=True)
            self.tasks.clear()
            s.progress.articles_in_flight = 0

    async def _claim(self, free: int) -> list[HeldItem]:
        """Claim up to ``free`` pending items and start working on each."""
        s = self.session
        held = await runs.claim(s.store, s.run_id, s.worker, free)
        for item in held:
            order = next(self.started_items)
            self.tasks.add(asyncio.create_task(self._process(item, order)))
        if held:
            s.progress.articles_in_flight = len(self.tasks)
            s.report()
        return held

    async def _none_pending(self, stop_wait: asyncio.Future[None]) -> bool:
        """Look for work once nothing is pending; return whether the run is done."""
        s = self.session
        # Take over the claims of dead workers, if any.
        if await runs.reclaim(s.store, s.run_id, s.lease_s):
            return False
        if not (await runs.counts(s.store, s.run_id)).running:
            return True
        # Other workers hold the rest: wait, in case one of them dies.
        await asyncio.wait({stop_wait}, timeout=s.wait_s)
        return False

    def _reap(self, finished: set[asyncio.Future[Any]]) -> None:
        for task in finished:
            if task not in self.tasks:
                continue
            self.tasks.discard(task)
            self.session.progress.articles_in_flight = len(self.tasks)
            if not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]

    async def _process(self, held: HeldItem, order: int) -> None:
        """Run one claimed article and record its outcome, a failure with its reason."""
        s = self.session
        # This task's calls, its graph's branches' too, wait behind older articles'.
        call_priority.set(order)
        started = time.perf_counter()
        article: Article | None = None
        reason: str | None = None
        result: AbstractResult | None = None
        try:
            if held.doc_key is None:
                raise InputError(f"{held.source}: the article was never stored")
            article = await get_article(s.store, held.doc_key)
            result = await run_abstract(
                s.store,
                s.llm,
                article,
                s.options,
                runner=self.opened.graph,
                doc_key=held.doc_key,
                run_id=s.run_id,
                offload=self.opened.offload,
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
                run_id=s.run_id,
            )
            outcome = Outcome("done", line_json(line), seconds, usage=result.usage)
        else:
            usage = await self._usage_of_failed(held)
            line = failure_line(
                run_id=s.run_id,
                source=held.source,
                article_id=held.article_id,
                reason=reason or "unknown failure",
                model=s.llm.label,
                options=s.options,
                article=article,
                usage=usage,
                seconds=seconds,
                attempts=held.attempts,
            )
            outcome = Outcome("failed", line_json(line), seconds, reason, usage)
        if await runs.finish(s.store, s.run_id, s.worker, held.item_id, outcome):
            await s.lines.put((held.source, outcome.result))
            if outcome.status == "done":
                s.progress.done += 1
            else:
                s.progress.failed += 1
            s.progress.finished_now += 1
        s.report()

    async def _usage_of_failed(self, held: HeldItem) -> Usage:
        s = self.session
        if held.doc_key is None:
            return Usage()
        tid = thread_id(held.doc_key, s.options, s.llm)
        return await calls.run_thread_usage(s.store, s.run_id, tid)
