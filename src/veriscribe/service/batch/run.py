"""Running a batch: registering a run, working on it, resuming it; stop signals."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import signal
from collections.abc import Iterator, Sequence
from pathlib import Path

from veriscribe.errors import ConfigError, InputError
from veriscribe.llm.factory import make_llm
from veriscribe.llm.spec import parse_spec
from veriscribe.options import AbstractOptions
from veriscribe.results import BatchSummary
from veriscribe.service.batch.config import (
    KIND,
    RunConfig,
    absolute,
    absolute_inputs,
    batch_settings,
    default_run_id,
)
from veriscribe.service.batch.progress import OnProgress
from veriscribe.service.batch.runner import BatchRunner
from veriscribe.service.batch.summary import stored_run
from veriscribe.service.common import open_store
from veriscribe.settings import Settings
from veriscribe.store import runs
from veriscribe.store.db import Store


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
    store: Store | None = None,
) -> tuple[str, RunConfig]:
    if not inputs:
        raise InputError("no input given")
    model_text = str(parse_spec(settings.model))
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
            cpu_workers=settings.cpu_workers,
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
            cpu_workers=settings.cpu_workers,
            registers=False,
        )
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
        settings.with_overrides(model=config.model),  # the run's model, not today's
        config.inputs,
        Path(config.out),
        config.options,
        run_id=run_id,
        concurrency=concurrency or config.concurrency,
        on_progress=on_progress,
        handle_signals=handle_signals,
        stop=stop,
    )
