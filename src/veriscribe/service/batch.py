"""Batch abstract generation: many articles at once, resumable, observable.

``run_batch`` registers every input item in the run store (an unreadable file or line
becomes a failed item with its reason), then works through the pending items: it keeps
enough articles in flight that the model's call limit (``--concurrency``, enforced by the
LLM client's semaphore) stays saturated, runs each article through the checkpointed
abstract graph, commits each outcome to the database and then appends it as one line to
the output file.

Many workers share a run: ``run_batch`` started again with the same ``--run-id`` (on
this machine or another that reaches the same PostgreSQL database) joins it, and
``work_run`` joins without the input files, since every article's text is in the
database. Each worker claims items, keeps its claims alive with a heartbeat, and, once
nothing is pending, waits for the items other workers hold: a worker that died (its
process is gone, or its heartbeat is older than the lease) has its items taken over.

Resuming is running again: finished items are skipped, interrupted articles continue
from their checkpoints, failed items are retried, and the output file is repaired from the
database (partial tail cut, missing lines appended, no duplicates). Every model response
is cached, so a finished call is never made twice, even one whose graph step had not been
checkpointed when the process died. The first SIGINT or SIGTERM stops claiming work and
lets the articles in flight finish; a second one cancels them (they continue from their
checkpoints next time).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import hashlib
import itertools
import json
import logging
import os
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

from langchain_core.messages import BaseMessage

from veriscribe.documents.articles import (
    Article,
    ReadFailure,
    WalkStopped,
    expand_input,
    read_articles,
)
from veriscribe.errors import ConfigError, InputError, NotFound, VeriscribeError
from veriscribe.graphs.runner import GraphRunner
from veriscribe.llm.client import LLM
from veriscribe.llm.factory import make_llm
from veriscribe.llm.spec import parse_spec
from veriscribe.options import AbstractOptions
from veriscribe.redaction import redact
from veriscribe.results import (
    AbstractResult,
    BatchLine,
    BatchSummary,
    FailedLine,
    RunFailure,
    RunListing,
    RunSession,
    RunSummary,
    SessionReport,
    Usage,
)
from veriscribe.service.abstracts import abstract_runner, run_abstract, thread_id
from veriscribe.service.common import failed_result, open_store
from veriscribe.service.endpoint_usage import endpoint_usage
from veriscribe.settings import Settings
from veriscribe.store import calls, runs
from veriscribe.store.articles import get_article, put_articles
from veriscribe.store.connect import open_database
from veriscribe.store.db import Store
from veriscribe.store.output import ResultsFile, SyncReport
from veriscribe.store.runs import (
    Counts,
    HeldItem,
    NewItem,
    Outcome,
    RunRecord,
    Session,
    new_worker_id,
    worker_alive,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

KIND = "abstract"
LEASE_S = 120.0  # a claim not renewed for this long is another worker's to take
HEARTBEAT_S = 20.0
WAIT_S = 5.0  # how often a worker with nothing to claim looks at others' claims
TICK_S = 0.5  # how often the progress callback hears about calls in flight
REGISTER_CHUNK = 200
READ_CHUNK = 100  # articles read per thread hop while registering


def article_slots(concurrency: int) -> int:
    """Return how many articles to keep in flight for a limit of model calls.

    An article's calls come in dependent steps (labels, then its facets in parallel,
    then the refinement), so one article keeps only about two calls busy on average.
    Twice the call limit keeps the limit saturated while articles wait on their next
    step; the LLM client's semaphore, not this number, bounds the calls.
    """
    return 2 * concurrency + 2


def default_run_id(inputs: Sequence[str], options: AbstractOptions, model: str) -> str:
    """Return the run id derived from the inputs, the options and the model SPEC."""
    blob = json.dumps(
        {"inputs": list(inputs), "options": asdict(options), "model": model},
        sort_keys=True,
    )
    return "run-" + hashlib.sha256(blob.encode()).hexdigest()[:12]


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
        self.prompt_tokens = 0
        self.output_tokens = 0

    def call_started(self) -> None:
        """Count a call that starts."""
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)

    def call_ended(self, reply: BaseMessage | None) -> None:
        """Count a call that ended and, if it was answered, its tokens."""
        self.in_flight = max(self.in_flight - 1, 0)
        meta = getattr(reply, "usage_metadata", None)
        if meta:
            self.prompt_tokens += int(meta.get("input_tokens") or 0)
            self.output_tokens += int(meta.get("output_tokens") or 0)


def batch_settings(settings: Settings, concurrency: int | None) -> Settings:
    """Return settings for a batch: the call limit applied, every response cached."""
    update: dict[str, Any] = {"cache_sim": True}
    if concurrency is not None:
        if concurrency < 1:
            raise InputError("--concurrency must be 1 or more")
        update["concurrency"] = concurrency
    return settings.model_copy(update={"llm": settings.llm.model_copy(update=update)})


def absolute_inputs(inputs: Sequence[str]) -> list[str]:
    """Return the inputs as absolute paths or patterns (a run survives a `cd`)."""
    return [absolute(item) for item in inputs]


def absolute(path: str | Path) -> str:
    """Return a path (or glob pattern) made absolute, without resolving links."""
    return os.path.abspath(os.path.expanduser(path))


def failure_line(
    *,
    run_id: str,
    source: str,
    article_id: str | None,
    reason: str,
    model: str,
    options: AbstractOptions,
    article: Article | None = None,
    usage: Usage | None = None,
    seconds: float = 0.0,
    attempts: int = 0,
) -> FailedLine:
    """Return the output line of an item that failed: ``error`` instead of ``abstract``."""
    return failed_result(
        FailedLine,
        source=source,
        article_id=article_id or source,
        reason=reason,
        model=model,
        prompt=options.prompt,
        split=options.split,
        article=article,
        usage=usage,
        seconds=seconds,
        attempts=attempts,
        run_id=run_id,
    )


def _dumps(line: BatchLine | FailedLine) -> str:
    return json.dumps(
        line.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":")
    )


@dataclass(frozen=True)
class RunConfig:
    """What a run is: the model, the options, the inputs and where results go."""

    model: str
    options: AbstractOptions
    inputs: list[str]
    out: str
    concurrency: int

    def as_dict(self) -> dict[str, Any]:
        """Return the config as stored."""
        return {
            "model": self.model,
            "options": asdict(self.options),
            "inputs": self.inputs,
            "out": self.out,
            "concurrency": self.concurrency,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunConfig:
        """Read a stored config."""
        return cls(
            model=data["model"],
            options=AbstractOptions(**data["options"]),
            inputs=list(data["inputs"]),
            out=data["out"],
            concurrency=int(data["concurrency"]),
        )


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
    ) -> None:
        self.store = store
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
        self.lines: asyncio.Queue[tuple[str, str] | None] = asyncio.Queue()
        self.started = time.perf_counter()
        self.graph: GraphRunner | None = None
        self.checkpoints: Store | None = None
        self.output_report: SyncReport | None = None
        self.registered_all = True  # False: a stop request cut registration short

    # ----------------------------------------------------------------- registering

    async def register(self) -> None:
        """Read every input and register its items; unreadable ones as failed items."""
        seq = 0
        seen: set[str] = set()
        items: list[NewItem] = []
        articles: list[tuple[int, Article]] = []

        async def flush() -> None:
            keys = await put_articles(self.store, [a for _, a in articles])
            for (number, article), key in zip(articles, keys, strict=True):
                weight = sum(len(p.text) for p in article.paragraphs)
                items.append(
                    NewItem(
                        article.source,
                        number,
                        article.source,
                        article.id,
                        key,
                        weight=weight,
                    )
                )
            await runs.put_items(self.store, self.run_id, items)
            articles.clear()
            items.clear()

        def failed(source: str, article_id: str | None, reason: str) -> None:
            nonlocal seq
            if source in seen:
                return
            seen.add(source)
            line = failure_line(
                run_id=self.run_id,
                source=source,
                article_id=article_id,
                reason=reason,
                model=self.llm.label,
                options=self.options,
            )
            items.append(
                NewItem(
                    source,
                    seq,
                    source,
                    article_id,
                    None,
                    status="failed",
                    reason=reason,
                    result=_dumps(line),
                )
            )
            seq += 1

        # Reading runs in threads: a slow walk or parse never keeps the event loop
        # from running the Ctrl-C handler, and a stop request ends registration.
        for text in self.config.inputs:
            try:
                found = await asyncio.to_thread(
                    expand_input, text, should_stop=self.stopping.is_set
                )
            except WalkStopped:
                break
            except InputError as exc:
                failed(text, None, exc.user_message)
                continue
            for link, reason in found.skipped:
                failed(str(link), None, reason)
            for path in found.files:
                if self.stopping.is_set():
                    break
                reader = _articles_of(path, self.max_input_bytes)
                while True:
                    try:
                        chunk = await asyncio.to_thread(_take, reader, READ_CHUNK)
                    except InputError as exc:
                        failed(str(path), None, exc.user_message)
                        break
                    except Exception as exc:  # one unreadable input never stops a batch
                        log.exception("cannot read %s", path)
                        failed(
                            str(path), None, f"cannot read the file: {_describe(exc)}"
                        )
                        break
                    for item in chunk:
                        if isinstance(item, ReadFailure):
                            failed(item.source, item.id, item.reason)
                        elif not item.paragraphs:
                            failed(item.source, item.id, "no body paragraph")
                        elif item.source not in seen:
                            seen.add(item.source)
                            articles.append((seq, item))
                            seq += 1
                    if len(items) + len(articles) >= REGISTER_CHUNK:
                        await flush()
                    if len(chunk) < READ_CHUNK or self.stopping.is_set():
                        break
            if self.stopping.is_set():
                break
        self.registered_all = not self.stopping.is_set()
        await flush()

    async def check_output(self) -> None:
        """Refuse an output file that is not this run's (see ``ResultsFile.scan``).

        Raises:
            InputError: The file holds something else, or cannot be read.
        """
        try:
            await asyncio.to_thread(self.results.scan)
        except OSError as exc:
            raise InputError(
                f"cannot write {self.results.path}: {exc.strerror or exc}"
            ) from exc

    async def sync_output(self) -> SyncReport:
        """Repair the output file from the database (see ``ResultsFile.sync``).

        Raises:
            InputError: The file cannot be written, or holds another run's lines.
        """
        try:
            scan = await asyncio.to_thread(self.results.scan)
            final = await runs.final_ids(self.store, self.run_id)
            present = {key for key, _, _ in scan.lines}
            stored = await runs.results(self.store, self.run_id, final - present)
            return await asyncio.to_thread(self.results.sync, final, stored)
        except OSError as exc:
            raise InputError(
                f"cannot write {self.results.path}: {exc.strerror or exc}"
            ) from exc

    # --------------------------------------------------------------------- working

    def request_stop(self) -> None:
        """Stop claiming work; a second request also cancels the articles in flight."""
        self.stop_requests += 1
        self.stopping.set()
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

    async def _writer(self) -> None:
        while True:
            first = await self.lines.get()
            if first is None:
                return
            batch = [first]
            done = False
            while not self.lines.empty():
                nxt = self.lines.get_nowait()
                if nxt is None:
                    done = True
                    break
                batch.append(nxt)
            await asyncio.to_thread(self.results.append, batch)
            if done:
                return

    async def _usage_of_failed(self, held: HeldItem) -> Usage:
        if held.doc_key is None:
            return Usage()
        tid = thread_id(held.doc_key, self.options, self.llm)
        return await calls.run_thread_usage(self.store, self.run_id, tid)

    async def _process(self, held: HeldItem) -> None:
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
            outcome = Outcome("done", _dumps(line), seconds, usage=result.usage)
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
            outcome = Outcome("failed", _dumps(line), seconds, reason, usage)
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
                free = self.slots - len(self.tasks)
                if free > 0:
                    held = await runs.claim(self.store, self.run_id, self.worker, free)
                    for item in held:
                        self.tasks.add(asyncio.create_task(self._process(item)))
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
                finished, _ = await asyncio.wait(
                    {*self.tasks, stop_wait}, return_when=asyncio.FIRST_COMPLETED
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

    def _reap(self, finished: set[asyncio.Task[Any]]) -> None:
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

    async def _run(self) -> BatchSummary:
        self.progress.stage = "registering"
        self._report()
        # Refuse an --out file that is not this run's before reading any input.
        await self.check_output()
        if self.registers:
            await self.register()
        await runs.reclaim(self.store, self.run_id, self.lease_s)
        self.output_report = await self.sync_output()
        counts = await runs.counts(self.store, self.run_id)
        self.progress.total = counts.total
        self.progress.done = counts.done
        self.progress.failed = counts.failed
        # The checkpointer gets a connection of its own: its lock then orders all
        # its reads and writes, and its traffic runs beside the call log's.
        self.checkpoints = await open_database(self.store.target)
        self.graph = await abstract_runner(self.checkpoints, self.llm)
        self.llm.add_observer(self.meter)
        await runs.start_session(self.store, self.run_id, self.worker)
        await runs.set_status(self.store, self.run_id, "running")
        self.started = time.perf_counter()
        self.progress.stage = "working"
        helpers = [
            asyncio.create_task(self._writer()),
            asyncio.create_task(self._heartbeat()),
            asyncio.create_task(self._ticker()),
        ]
        outcome = "finished"
        try:
            await self.work()
        except BaseException:
            outcome = "crashed"
            raise
        finally:
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
            if counts.remaining == 0 and self.registered_all:
                await runs.set_status(self.store, self.run_id, "finished")
            elif outcome != "finished":
                await runs.set_status(self.store, self.run_id, "interrupted")
        if isinstance(ended[0], Exception):
            # The results are in the database; the next run writes the missing lines.
            raise VeriscribeError(
                f"cannot write {self.results.path}: {ended[0]}"
            ) from ended[0]
        if counts.remaining == 0 and outcome == "finished" and self.registered_all:
            # Items that other workers finished (one that died among them) but whose
            # lines never reached this file: written now, each once.
            await self.sync_output()
        self.progress.stage = "finished"
        self.progress.total = counts.total
        self._report()
        summary = await run_summary(self.store, self.run_id)
        session = SessionReport(
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
        return BatchSummary(
            **dict(summary), session=session, interrupted=outcome == "interrupted"
        )


def _articles_of(path: Path, max_bytes: int | None) -> Iterator[Article | ReadFailure]:
    """Yield a file's articles; whatever goes wrong, only once iteration starts."""
    yield from read_articles(path, max_bytes=max_bytes)


def _take(items: Iterator[T], n: int) -> list[T]:
    """Return the next ``n`` items (fewer at the end)."""
    return list(itertools.islice(items, n))


def _describe(exc: BaseException) -> str:
    """Return an unexpected error in one line: its kind, and its message if short."""
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    message = redact(str(exc)).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {message[:200]}" if message else type(exc).__name__


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


@contextlib.contextmanager
def _stop_on_signals(runner: BatchRunner) -> Iterator[None]:
    """Route SIGINT and SIGTERM to a graceful stop while the runner works."""
    loop = asyncio.get_running_loop()
    installed = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, runner.request_stop)
            installed.append(sig)
        except (NotImplementedError, RuntimeError, ValueError):
            # Not the main thread, or a platform without loop signal handlers.
            pass
    try:
        yield
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)


async def register_run(
    settings: Settings,
    inputs: Sequence[str],
    out: Path,
    options: AbstractOptions,
    *,
    run_id: str | None = None,
    concurrency: int | None = None,
    model: str | None = None,
) -> str:
    """Record a run (its model, options, inputs and output file) and return its id.

    Nothing is read or worked on yet: ``run_batch`` with the same arguments (or
    ``resume_run``, or a ``worker``) does that; ``show_run`` sees the run at once.

    Raises:
        InputError: No input given.
        ConfigError: ``run_id`` names a run made with another model or options.
    """
    rid, _ = await _register(
        settings,
        inputs,
        out,
        options,
        run_id=run_id,
        concurrency=concurrency,
        model=model,
    )
    return rid


async def _register(
    settings: Settings,
    inputs: Sequence[str],
    out: Path,
    options: AbstractOptions,
    *,
    run_id: str | None,
    concurrency: int | None,
    model: str | None,
    store: Store | None = None,
) -> tuple[str, RunConfig]:
    if not inputs:
        raise InputError("no input given")
    model_text = str(parse_spec(model or settings.model))
    inputs_abs = absolute_inputs(inputs)
    rid = run_id or default_run_id(inputs_abs, options, model_text)
    async with contextlib.AsyncExitStack() as stack:
        if store is None:
            store = await stack.enter_async_context(open_store(settings))
        existing = await runs.get_run(store, rid)
        if existing is not None:
            before = RunConfig.from_dict(existing.config)
            if before.model != model_text or before.options != options:
                raise ConfigError(
                    f"run {rid} was made with another model or other options "
                    f"({before.model}); "
                    f"resume it with `veriscribe runs resume {rid}` or choose a new "
                    "--run-id"
                )
        limit = concurrency or (
            RunConfig.from_dict(existing.config).concurrency
            if existing is not None
            else settings.llm.concurrency
        )
        config = RunConfig(
            model=model_text,
            options=options,
            inputs=inputs_abs,
            out=absolute(out),
            concurrency=limit,
        )
        await runs.ensure_run(store, rid, KIND, config.as_dict())
    return rid, config


async def run_batch(
    settings: Settings,
    inputs: Sequence[str],
    out: Path,
    options: AbstractOptions,
    *,
    run_id: str | None = None,
    concurrency: int | None = None,
    model: str | None = None,
    on_progress: OnProgress | None = None,
    handle_signals: bool = True,
    stop: asyncio.Event | None = None,
) -> BatchSummary:
    """Write abstracts for every article of the inputs into ``out``, resumably.

    Running it again with the same arguments (or ``resume_run``) continues the run.
    Setting ``stop`` does what the first SIGINT does: no new article is started, those
    in flight finish, and the run is left to be resumed.

    Raises:
        InputError: No input given, or ``out`` holds lines of another run.
        ConfigError: ``run_id`` names a run made with another model or options.
    """
    async with open_store(settings) as store:
        rid, config = await _register(
            settings,
            inputs,
            out,
            options,
            run_id=run_id,
            concurrency=concurrency,
            model=model,
            store=store,
        )
        llm = make_llm(
            parse_spec(config.model),
            batch_settings(settings, config.concurrency),
            store,
        )
        runner = BatchRunner(
            store,
            llm,
            rid,
            config,
            on_progress,
            max_input_bytes=settings.max_input_bytes,
            lease_s=settings.lease_s,
        )
        return await _run_runner(runner, handle_signals, stop)


async def _run_runner(
    runner: BatchRunner, handle_signals: bool, stop: asyncio.Event | None = None
) -> BatchSummary:
    relay = None if stop is None else asyncio.create_task(_stop_when(stop, runner))
    try:
        if not handle_signals:
            return await runner.run()
        with _stop_on_signals(runner):
            return await runner.run()
    finally:
        if relay is not None:
            relay.cancel()


async def _stop_when(stop: asyncio.Event, runner: BatchRunner) -> None:
    """Ask the runner to stop claiming work once ``stop`` is set."""
    await stop.wait()
    runner.request_stop()


async def work_run(
    settings: Settings,
    run_id: str,
    *,
    out: Path | None = None,
    concurrency: int | None = None,
    on_progress: OnProgress | None = None,
    handle_signals: bool = True,
    stop: asyncio.Event | None = None,
) -> BatchSummary:
    """Work on an existing run's items, without its input files, beside other workers.

    The articles are read from the database, so this machine needs only to reach it
    (and a model). Results go to ``out`` (default: the run's output file). ``stop``
    is as in ``run_batch``.

    Raises:
        NotFound: No run has this id.
    """
    async with open_store(settings) as store:
        record = await stored_run(store, run_id)
        config = RunConfig.from_dict(record.config)
        if out is not None:
            config = dataclasses.replace(config, out=absolute(out))
        limit = concurrency or config.concurrency
        llm = make_llm(parse_spec(config.model), batch_settings(settings, limit), store)
        runner = BatchRunner(
            store,
            llm,
            run_id,
            config,
            on_progress,
            max_input_bytes=settings.max_input_bytes,
            lease_s=settings.lease_s,
        )
        runner.registers = False
        summary = await _run_runner(runner, handle_signals, stop)
        summary.out = config.out  # this worker's file, perhaps not the run's
        return summary


async def resume_run(
    settings: Settings,
    run_id: str,
    *,
    concurrency: int | None = None,
    on_progress: OnProgress | None = None,
    handle_signals: bool = True,
    stop: asyncio.Event | None = None,
) -> BatchSummary:
    """Continue a run with its stored configuration (``stop`` as in ``run_batch``).

    Raises:
        NotFound: No run has this id.
    """
    async with open_store(settings) as store:
        record = await stored_run(store, run_id)
    config = RunConfig.from_dict(record.config)
    return await run_batch(
        settings,
        config.inputs,
        Path(config.out),
        config.options,
        run_id=run_id,
        concurrency=concurrency or config.concurrency,
        model=config.model,
        on_progress=on_progress,
        handle_signals=handle_signals,
        stop=stop,
    )


def run_state(record: RunRecord, counts: Counts, sessions: Sequence[Session]) -> str:
    """Return a run's state: finished, running or interrupted (or pending)."""
    if counts.total and counts.remaining == 0:
        return "finished"
    now = time.time()
    live = [
        s
        for s in sessions
        if s.ended is None
        and worker_alive(s.worker) is not False
        and now - s.heartbeat < LEASE_S
    ]
    if live:
        return "running"
    return "interrupted" if sessions else record.status


async def stored_run(store: Store, run_id: str) -> runs.RunRecord:
    """Return the run named ``run_id``.

    Raises:
        NotFound: No run has this id.
    """
    record = await runs.get_run(store, run_id)
    if record is None:
        raise NotFound(f"no run {run_id!r} (see `veriscribe runs list`)")
    return record


async def run_summary(
    store: Store, run_id: str, *, failures: int | None = None
) -> RunSummary:
    """Return a run's summary: config, state, counts, timings, tokens, failures."""
    record = await stored_run(store, run_id)
    counts = await runs.counts(store, run_id)
    sessions = await runs.sessions(store, run_id)
    failed = await runs.items(store, run_id, "failed")
    shown = failed if failures is None else failed[:failures]
    config = record.config
    return RunSummary(
        run_id=run_id,
        status=run_state(record, counts, sessions),
        created=record.created,
        updated=record.updated,
        model=config.get("model"),
        options=config.get("options"),
        inputs=config.get("inputs"),
        out=config.get("out"),
        concurrency=config.get("concurrency"),
        **counts.as_dict(),
        remaining=counts.remaining,
        seconds=round(sum(s.seconds for s in sessions), 3),
        sessions=[RunSession(**dataclasses.asdict(s)) for s in sessions],
        call_log=await calls.call_counts(store, run_id),
        endpoints=await endpoint_usage(store, run_id),
        failures=[
            RunFailure(
                source=item.source,
                id=item.article_id,
                reason=item.reason,
                attempts=item.attempts,
            )
            for item in shown
        ],
    )


async def list_runs(settings: Settings) -> list[RunListing]:
    """Return every run with its counts, newest first."""
    async with open_store(settings) as store:
        listed = []
        for record in await runs.list_runs(store):
            summary = await run_summary(store, record.run_id, failures=0)
            fields = summary.model_dump(exclude={"sessions", "failures", "endpoints"})
            listed.append(RunListing(**fields))
        return listed


async def run_results(settings: Settings, run_id: str) -> list[BatchLine | FailedLine]:
    """Return the output lines of a run's finished items, in input order.

    Raises:
        NotFound: No run has this id.
    """
    async with open_store(settings) as store:
        await stored_run(store, run_id)
        ids = [item.item_id for item in await runs.items(store, run_id)]
        stored = await runs.results(store, run_id, ids)
    lines: list[BatchLine | FailedLine] = []
    for item_id in ids:
        if item_id not in stored:
            continue
        data = json.loads(stored[item_id])
        model = FailedLine if "error" in data else BatchLine
        lines.append(model.model_validate(data))
    return lines


async def show_run(settings: Settings, run_id: str) -> RunSummary:
    """Return one run's summary with all its failures.

    Raises:
        NotFound: No run has this id.
    """
    async with open_store(settings) as store:
        return await run_summary(store, run_id)
