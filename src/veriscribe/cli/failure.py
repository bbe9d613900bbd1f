"""How a command ends when something fails: one line on stderr, never a traceback.

A :class:`~veriscribe.errors.VeriscribeError` is a failure the user can act on: its
message is the line. Anything else is a bug: the line says so and names the error log
(``veriscribe-errors.log`` beside the database) that holds the traceback; ``--debug``
prints the traceback too. Ctrl-C ends with exit code 130. Every line and log entry is
redacted of secrets; the console shows control characters as escapes.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import tempfile
import time
import traceback
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import Any, NoReturn

import typer
from typer.core import TyperGroup

from veriscribe.cli import render, terminal
from veriscribe.cli.terminal import sanitize
from veriscribe.errors import VeriscribeError
from veriscribe.redaction import redact
from veriscribe.settings import Settings, default_data_dir
from veriscribe.store.db import sqlite_path

ERROR_LOG_NAME = "veriscribe-errors.log"
LOG_MAX_BYTES = 1_000_000
"""Size at which the error log rotates (two older files are kept)."""
_MARK = "_veriscribe_handler"


def fail(message: str, code: int = 1) -> NoReturn:
    """Print one redacted error line on stderr and end the command."""
    render.error_line(terminal.stderr, redact(message))
    raise typer.Exit(code)


def error_log_path() -> Path:
    """Return the error log: beside the database, else in the data directory."""
    try:
        db = Settings().db
    except ValueError:  # bad settings: reported by the command itself
        return default_data_dir() / ERROR_LOG_NAME
    if "://" in str(db):
        return default_data_dir() / ERROR_LOG_NAME
    return sqlite_path(db).parent / ERROR_LOG_NAME


class _LogFile(RotatingFileHandler):
    """The error log: created on its first record, never breaking the command."""

    def _open(self) -> Any:
        Path(self.baseFilename).parent.mkdir(parents=True, exist_ok=True)
        return super()._open()

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802
        return


class _Redacting(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


def configure_logging(*, debug: bool) -> Path:
    """Send warnings and errors of every logger to the error log, not to stderr.

    Without a handler Python prints them on stderr, tracebacks and all. With
    ``debug`` they are printed on stderr as well.

    Returns:
        The error log's path (created only when something is written to it).
    """
    path = error_log_path()
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, _MARK, False):
            root.removeHandler(handler)
            handler.close()
    formatter = _Redacting("%(asctime)s %(levelname)s %(name)s: %(message)s")
    to_file = _LogFile(
        path, maxBytes=LOG_MAX_BYTES, backupCount=2, encoding="utf-8", delay=True
    )
    handlers: list[logging.Handler] = [to_file]
    if debug:
        handlers.append(logging.StreamHandler(sys.stderr))
    for handler in handlers:
        handler.setLevel(logging.WARNING)
        handler.setFormatter(formatter)
        setattr(handler, _MARK, True)
        root.addHandler(handler)
    return path


def _write_traceback(path: Path, exc: BaseException) -> Path:
    """Append the bug's traceback to the error log; return where it went."""
    text = "".join(traceback.format_exception(exc))
    entry = (
        f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} unexpected error in "
        f"`{' '.join(['veriscribe', *sys.argv[1:]])}`\n{text}\n"
    )
    for target in (path, Path(tempfile.gettempdir()) / ERROR_LOG_NAME):
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with target.open("a", encoding="utf-8") as log:
                log.write(redact(entry))
            return target
        except OSError:
            continue
    return path


def report_bug(exc: BaseException, *, debug: bool) -> NoReturn:
    """Log an unexpected exception's traceback and end with one line saying so."""
    path = _write_traceback(error_log_path(), exc)
    if debug:
        sys.stderr.write(sanitize(redact("".join(traceback.format_exception(exc)))))
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    summary = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    if len(summary) > 200:
        summary = summary[:200] + "..."
    hint = "" if debug else "; `veriscribe --debug ...` prints it here"
    fail(
        f"unexpected error, a bug in veriscribe ({summary}). The traceback is in "
        f"{path}: please report it with that file{hint}"
    )


class GuardedGroup(TyperGroup):
    """The root command: however a command fails, it ends in one line and an exit code."""

    def invoke(self, ctx: Any) -> Any:
        """Run the command; turn every failure into one line on stderr."""
        debug = bool(ctx.params.get("debug"))
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, typer.TyperException):
            # Exit codes, and usage errors that the command line prints itself.
            raise
        except KeyboardInterrupt:
            fail("interrupted", 130)
        except VeriscribeError as exc:
            fail(exc.user_message)
        except (Exception, asyncio.CancelledError) as exc:
            report_bug(exc, debug=debug)
