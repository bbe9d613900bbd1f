"""The drain phase: the session closed, its outcome recorded, the run summed up."""

from __future__ import annotations

import time

from veriscribe.errors import VeriscribeError
from veriscribe.results import BatchSummary, SessionReport
from veriscribe.service.batch.output import sync_output
from veriscribe.service.batch.reading import Reading
from veriscribe.service.batch.registering import OpenSession
from veriscribe.service.batch.session import Chores, Session
from veriscribe.service.batch.summary import run_summary
from veriscribe.store import runs
from veriscribe.store.runs import Counts


class Draining:
    """Closes the session once the work phase has returned or raised.

    ``settle`` always runs, whatever ended the work: it stops the read phase (what
    reading raised makes the session crashed), ends the chores once every queued
    line is written, returns this worker's unfinished claims to pending, records the
    session's outcome (finished, interrupted or crashed), closes the checkpointer and
    the worker processes, and records the run as finished (every item final and
    every input read) or interrupted. ``summary`` runs only when the work ended
    without raising: it raises what reading or writing the file raised, writes the
    lines other workers finished but this file lacks, and returns the summary.
    """

    def __init__(
        self, session: Session, opened: OpenSession, reading: Reading, chores: Chores
    ) -> None:
        self.session = session
        self.opened = opened
        self.reading = reading
        self.chores = chores
        self.outcome = "finished"
        self.unread: BaseException | None = None
        self.write_error: BaseException | None = None
        self.counts: Counts | None = None

    async def settle(self, outcome: str) -> None:
        """Close the session whose work ended with ``outcome`` (finished, crashed)."""
        s = self.session
        self.unread = await self.reading.end()
        if self.unread is not None:
            outcome = "crashed"
        self.write_error = await self.chores.end()
        s.llm.remove_observer(s.meter)
        await runs.release(s.store, s.run_id, s.worker)
        counts = self.counts = await runs.counts(s.store, s.run_id)
        if outcome == "finished" and s.stop.requested:
            outcome = "interrupted"
        self.outcome = outcome
        await runs.end_session(s.store, s.run_id, s.worker, outcome)
        await self.opened.checkpoints.close()
        self.opened.offload.close()
        if counts.remaining == 0 and self.reading.complete:
            await runs.set_status(s.store, s.run_id, "finished")
        elif outcome != "finished":
            await runs.set_status(s.store, s.run_id, "interrupted")

    async def summary(self) -> BatchSummary:
        """Return the run's summary with this session's report.

        Raises:
            Exception: What reading or storing the inputs raised.
            VeriscribeError: The output file could take no more lines.
        """
        s, counts = self.session, self.counts
        assert counts is not None, "settle() first"
        if self.unread is not None:
            raise self.unread
        if isinstance(self.write_error, Exception):
            # The results are in the database; the next run writes the missing lines.
            problem = self.write_error
            reason = (
                problem.strerror
                if isinstance(problem, OSError) and problem.strerror
                else str(problem)
            )
            raise VeriscribeError(
                f"cannot write {s.results.path}: {reason}; every finished article "
                "is kept in the database: run the same command again to write "
                "their lines and go on"
            ) from problem
        finished = self.outcome == "finished" and self.reading.complete
        if counts.remaining == 0 and finished:
            # Items that other workers finished (one that died among them) but whose
            # lines never reached this file: written now, each once.
            await sync_output(s.store, s.run_id, s.results)
        s.progress.stage = "finished"
        s.progress.total = counts.total
        s.report()
        summary = await run_summary(s.store, s.run_id)
        return BatchSummary(
            **dict(summary),
            session=self._report(),
            interrupted=self.outcome == "interrupted",
        )

    def _report(self) -> SessionReport:
        """Return what this worker's session did."""
        s = self.session
        return SessionReport(
            worker=s.worker,
            outcome=self.outcome,
            processed=s.progress.finished_now,
            calls=s.llm.calls_made,
            call_limit=s.llm.settings.concurrency,
            peak_calls_in_flight=s.meter.peak,
            prompt_tokens=s.meter.prompt_tokens,
            output_tokens=s.meter.output_tokens,
            seconds=round(time.perf_counter() - s.started, 3),
            output_repair=self.opened.output_repair.as_dict(),
        )
