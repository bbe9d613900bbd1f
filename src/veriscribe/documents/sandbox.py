"""Reading a file in a worker process it cannot escape: a time budget and a memory cap.

A reader fed a hostile or broken file (a PDF whose references loop, a stream that
inflates to gigabytes) must cost one failed file, never a hung command or server. So
each file is read in a worker process whose address space is capped
(``RLIMIT_AS``); the caller waits at most the time budget for its answer and kills
the worker when it runs over. Either way the caller gets one :class:`InputError`
naming the file, the limit and how to raise it.

Workers are fresh interpreters (never forks of the caller, whose threads and address
space they would inherit), kept between files: a file costs a round trip through a
pipe, not a new process. Only a worker that ran over, ran out of memory or died is
replaced.
"""

from __future__ import annotations

import atexit
import importlib
import os
import pickle
import resource
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from veriscribe.errors import InputError
from veriscribe.settings import Settings

T = TypeVar("T")

READ_STOP: ContextVar[Callable[[], bool] | None] = ContextVar("read_stop", default=None)
"""Set to a test of whether to stop reading: once it is true, the wait on the file
being read ends and no other file is read. Threads started with
``asyncio.to_thread`` see the caller's."""

WAIT_SLICE_S = 0.25
"""How often a caller waiting on a file looks whether it was asked to stop."""


class ReadingStopped(Exception):
    """Reading was stopped at the caller's request (``READ_STOP``)."""


DEFAULT_TIMEOUT_S = 60.0
"""Seconds one file may take to read."""

DEFAULT_MEMORY_MB = 2048
"""Address space, in MiB, of the process reading one file."""

MAX_IDLE = 2
"""Workers kept waiting for the next file; more (after a burst) are stopped."""

START_S = 120.0
"""Longest a worker may take to start (on a machine under load)."""

PARENT_POLL_S = 1.0
"""How often a worker looks whether the process that started it still lives."""

# Imported by each worker as it starts, before it is asked for its first file.
_PRELOAD = [
    "veriscribe.documents.articles",
    "veriscribe.documents.guidelines",
    "veriscribe.documents.pdf",
    "pdfminer.pdfinterp",
    "pdfminer.pdfpage",
    "pdfminer.converter",
]


@dataclass(frozen=True)
class ReadLimits:
    """How long, and in how much memory, one file may be read.

    Attributes:
        timeout_s: Seconds before the reading is stopped.
        memory_mb: Address space of the reading process, in MiB.
    """

    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_mb: int = DEFAULT_MEMORY_MB

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> ReadLimits:
        """Return the limits of ``settings`` (None: of the environment's)."""
        settings = settings or Settings()
        return cls(settings.read_timeout_s, settings.read_memory_mb)


def run_limited(
    source: object,
    func: Callable[..., T],
    *args: Any,
    limits: ReadLimits | None = None,
) -> T:
    """Run ``func(*args)`` in a reader worker under ``limits``; return its result.

    ``func`` and its arguments and result must pickle; ``func`` runs with the
    caller's working directory. An exception it raises is raised here.

    Raises:
        InputError: Reading ``source`` ran over the time budget or the memory cap, or
            the worker died; the one line names the file, the limit and the setting
            that raises it.
    """
    limits = limits or ReadLimits.from_settings()
    stop = READ_STOP.get()
    if stop is not None and stop():
        raise ReadingStopped(f"{source}: not read, reading was stopped")
    worker = _take(limits.memory_mb)
    healthy = False
    try:
        try:
            worker.wait_ready()
            worker.send.send((func, args, os.getcwd(), limits.timeout_s))
            answer = _wait(worker, limits.timeout_s, stop, source)
        except (EOFError, OSError):
            raise InputError(f"{source}: {worker.death()}; not read") from None
        if answer is None:
            raise InputError(
                f"{source}: reading it took over the {limits.timeout_s:g} s limit per "
                "file and was stopped; not read (raise the limit with "
                "VERISCRIBE_READ_TIMEOUT_S)"
            )
        kind, value = answer
        if kind == "memory":
            raise InputError(
                f"{source}: reading it needs more than the {limits.memory_mb:,} MiB "
                "memory limit per file; not read (raise the limit with "
                "VERISCRIBE_READ_MEMORY_MB)"
            )
        healthy = True
        if kind == "raise":
            raise value
        return value  # type: ignore[no-any-return]
    finally:
        if healthy:
            _give_back(worker)
        else:
            worker.stop()


def _wait(
    worker: _Worker, timeout_s: float, stop: Callable[[], bool] | None, source: object
) -> tuple[str, Any] | None:
    """Return the worker's answer, or None once ``timeout_s`` have passed.

    Raises:
        ReadingStopped: ``stop`` was set meanwhile.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        if worker.receive.poll(min(left, WAIT_SLICE_S) if stop else left):
            answer: tuple[str, Any] = worker.receive.recv()
            return answer
        if stop is not None and stop():
            raise ReadingStopped(f"{source}: not read, reading was stopped")


class _Worker:
    """One reader process and the pipes to it."""

    def __init__(self, memory_mb: int) -> None:
        # A fresh interpreter, not a fork: a fork would share the caller's threads'
        # locks and count its address space (a loaded model) against the cap; the
        # caller's main script is never run again, guarded or not.
        ours_r, theirs_w = os.pipe()
        theirs_r, ours_w = os.pipe()
        code = (
            f"import sys; sys.path[:] = {sys.path!r}; "
            "from veriscribe.documents.sandbox import serve; "
            f"serve({theirs_r}, {theirs_w}, {memory_mb})"
        )
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", code],
                pass_fds=(theirs_r, theirs_w),
                # What goes wrong comes back through the pipe; nothing a library
                # prints reaches the caller's terminal.
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # a terminal's Ctrl-C is the caller's to handle
            )
        finally:
            os.close(theirs_r)
            os.close(theirs_w)
        self.receive = Connection(ours_r, writable=False)
        self.send = Connection(ours_w, readable=False)
        self.memory_mb = memory_mb
        self.ready = False

    def wait_ready(self) -> None:
        """Wait until the worker has started (its start is no file's time)."""
        if self.ready:
            return
        if not self.receive.poll(START_S):
            raise OSError(f"the reader did not start within {START_S:g} s")
        self.receive.recv()
        self.ready = True

    def alive(self) -> bool:
        """Whether the process still runs."""
        return self.process.poll() is None

    def death(self) -> str:
        """Say why the worker stopped answering."""
        try:
            code = self.process.wait(1.0)
        except subprocess.TimeoutExpired:
            return "the reader stopped answering"
        if code == -signal.SIGXCPU:
            return "the reader ran out of CPU time and was stopped"
        if code == -signal.SIGKILL:
            return "the reader was killed (out of memory?)"
        if code < 0:
            return f"the reader died ({signal.Signals(-code).name})"
        return f"the reader stopped (exit code {code})"

    def stop(self) -> None:
        """Kill the worker and wait for it."""
        if self.alive():
            self.process.kill()
        self.process.wait()
        self.receive.close()
        self.send.close()


_idle: list[_Worker] = []
_lock = threading.Lock()


def _take(memory_mb: int) -> _Worker:
    """Return an idle worker with this memory cap, or a new one."""
    stale: list[_Worker] = []
    found: _Worker | None = None
    with _lock:
        while _idle:
            worker = _idle.pop()
            if worker.memory_mb == memory_mb and worker.alive():
                found = worker
                break
            stale.append(worker)
    for worker in stale:
        worker.stop()
    return found or _Worker(memory_mb)


def _give_back(worker: _Worker) -> None:
    """Keep a worker for the next file, or stop it when enough are waiting."""
    with _lock:
        if len(_idle) < MAX_IDLE:
            _idle.append(worker)
            return
    worker.stop()


@atexit.register
def stop_workers() -> None:
    """Stop every idle worker."""
    with _lock:
        workers = list(_idle)
        _idle.clear()
    for worker in workers:
        worker.stop()


# ----------------------------------------------------------------------- the worker


def serve(receive_fd: int, send_fd: int, memory_mb: int) -> None:
    """Read files as asked until the pipe closes (the reader process's main)."""
    receive = Connection(receive_fd, writable=False)
    send = Connection(send_fd, readable=False)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the caller handles Ctrl-C
    cap = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    threading.Thread(target=_exit_with, args=(os.getppid(),), daemon=True).start()
    for name in _PRELOAD:
        importlib.import_module(name)
    send.send(("ready", os.getpid()))
    while True:
        try:
            func, args, cwd, timeout_s = receive.recv()
        except (EOFError, OSError):
            return
        # A CPU limit past the budget: a worker whose caller is gone (and cannot
        # kill it) still stops.
        used = resource.getrusage(resource.RUSAGE_SELF)
        spent = used.ru_utime + used.ru_stime
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        soft = int(spent + 2 * timeout_s) + 5
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
        answer: tuple[str, Any]
        try:
            os.chdir(cwd)
            answer = ("ok", func(*args))
        except MemoryError:
            answer = ("memory", None)
        except BaseException as exc:  # raised in the caller, whatever it is
            answer = ("raise", _portable(exc))
        try:
            send.send(answer)
        except MemoryError:
            answer = ("memory", None)
            send.send(answer)
        if answer[0] == "memory":
            return  # a fresh worker for the next file


def _portable(exc: BaseException) -> BaseException:
    """Return the exception if it survives pickling, else a RuntimeError naming it."""
    if not isinstance(exc, InputError):
        exc.add_note("in the reader process:\n" + "".join(traceback.format_exc()))
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        plain = RuntimeError(f"{type(exc).__name__}: {exc}")
        plain.add_note("in the reader process:\n" + "".join(traceback.format_exc()))
        return plain
    return exc


def _exit_with(parent: int) -> None:
    """End this worker once the process that started it is gone."""
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    os._exit(0)
