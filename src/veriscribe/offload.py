"""Pure, CPU-bound steps run beside the event loop, in worker processes.

A batch on a model server spends the event loop's time between model calls on text
work: finding the paragraphs' first sentences, and checking each refined abstract
against its article. That work holds the interpreter, so with many articles in flight
it, not the model, bounds the batch. An :class:`Offload` with workers runs such steps
in other processes (other cores) while the loop keeps the model busy; one without
workers runs them in place. The steps are pure functions of picklable values, so the
result is the same either way.

A worker that dies (killed, out of memory) costs nothing but speed: the step runs in
place, and every later one too.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import BrokenExecutor, Future, ProcessPoolExecutor
from typing import TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

AUTO_MIN_ITEMS = 32
"""Fewest articles for which a batch starts workers of its own accord: below that,
starting them costs about what they save."""


PARENT_POLL_S = 1.0
"""How often a worker looks whether its parent still lives."""


def auto_workers(items: int, *, embedded: bool) -> int:
    """Return how many worker processes a batch of ``items`` articles should start.

    None on one core, or beside the embedded model (its decoding already uses every
    core), or for a small batch; else one fewer than the cores, at least 2 and at
    most 4. The event loop mostly waits on the model, so a second worker seldom takes
    a core it needs: on two cores, two workers cut ``bench/batch.py``'s overhead per
    article by about a fifth.
    """
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    if embedded or items < AUTO_MIN_ITEMS or cores < 2:
        return 0
    return min(max(cores - 1, 2), 4)


def _context() -> multiprocessing.context.BaseContext:
    """Return how workers start: forked where possible.

    A forked worker has the parent's modules already and never runs the main script
    again, which a spawned one does (a script without a ``__main__`` guard would start
    its batch over in every worker).
    """
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def _worker_start(modules: tuple[str, ...]) -> None:
    """Prepare a worker: deaf to the batch's stop signals, its modules imported."""
    # What a forked worker inherits is the parent's: never collected here, so that no
    # finalizer of a parent's object (a database connection) runs in the worker.
    gc.freeze()
    # The parent stops the batch on Ctrl-C or SIGTERM, and finishes or cancels the
    # steps in flight itself. A forked worker also inherits the event loop's signal
    # wake-up: a signal must not reach the parent's loop a second time through it.
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    threading.Thread(target=_exit_with, args=(os.getppid(),), daemon=True).start()
    for name in modules:
        importlib.import_module(name)


def _exit_with(parent: int) -> None:
    """End this worker once its parent is gone (killed: it can no longer say so)."""
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    os._exit(0)


class Offload:
    """Runs pure functions in worker processes, or in place when it has none."""

    def __init__(self, workers: int = 0, *, modules: tuple[str, ...] = ()) -> None:
        """Start ``workers`` processes (none: run in place).

        Each imports ``modules`` first, the steps' own, while the caller goes on.
        """
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None
        if workers > 0:
            self._pool = ProcessPoolExecutor(
                workers,
                mp_context=_context(),
                initializer=_worker_start,
                initargs=(modules,),
            )
            # Start the processes now, so their imports overlap the caller's work.
            for _ in range(workers):
                self._pool.submit(os.getpid)

    @property
    def active(self) -> bool:
        """Whether steps run in worker processes."""
        return self._pool is not None

    async def run(self, fn: Callable[..., T], *args: object) -> T:
        """Return ``fn(*args)``, computed by a worker when there is one.

        ``fn`` must be a module-level function and ``args`` picklable.
        """
        pool = self._pool
        if pool is None:
            return fn(*args)
        try:
            future: Future[T] = pool.submit(fn, *args)
        except (BrokenExecutor, RuntimeError):
            return self._in_place(fn, *args)
        try:
            return await asyncio.wrap_future(future)
        except BrokenExecutor:
            return self._in_place(fn, *args)

    def _in_place(self, fn: Callable[..., T], *args: object) -> T:
        if self._pool is not None:
            log.warning("a worker process died: text steps now run in place")
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
        return fn(*args)

    def close(self) -> None:
        """Stop the worker processes."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


INLINE = Offload()
"""The offload without workers: every step in place."""
