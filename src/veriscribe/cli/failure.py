"""How a command ends when something fails: one line on stderr, never a traceback.

A :class:`~veriscribe.errors.VeriscribeError` is a failure the user can act on: its
message is the line. Anything else is a bug: the line says so and names the error log
(``veriscribe-errors.log`` beside the database) that holds the traceback; ``--debug``
prints the traceback too. Ctrl-C ends with exit code 130. Every line and log entry is
redacted of secrets; the console shows control characters as escapes.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import stat
import sys
import tempfile
import time
import traceback
from contextvars import ContextVar
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import Any, NoReturn, TextIO

import typer
from typer.core import TyperGroup

from veriscribe.cli import terminal
from veriscribe.cli.render.shared import error_line
from veriscribe.cli.terminal import sanitize
from veriscribe.errors import VeriscribeError
from veriscribe.redaction import redact, redact_command, remember_secrets_in
from veriscribe.settings import Settings, default_data_dir
from veriscribe.store.db import is_dsn, sqlite_path

ERROR_LOG_NAME = "veriscribe-errors.log"
LOG_MAX_BYTES = 1_000_000
"""Size at which the error log rotates (two older files are kept)."""
_MARK = "_veriscribe_handler"
_LOG_FLAGS = (
    os.O_WRONLY
    | os.O_APPEND
    | os.O_CREAT
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
SOME_FAILED = 3
"""Exit code of a command that did its work only in part: some inputs could not be
read (each named in one line), the others were done."""
# The log this command writes to, set when logging is configured.
_active_log: ContextVar[Path | None] = ContextVar("active_log", default=None)


def fail(message: str, code: int = 1) -> NoReturn:
    """Print one redacted error line on stderr and end the command."""
    error_line(terminal.stderr, redact(message))
    raise typer.Exit(code)


def error_log_path(db: str | Path | None = None) -> Path:
    """Return the error log: beside a SQLite database, else in the data directory.

    Args:
        db: The database the command uses (``--db``); default: the settings' one.
    """
    if db is None:
        try:
            db = Settings().db
        except ValueError:  # bad settings: reported by the command itself
            return default_data_dir() / ERROR_LOG_NAME
    if is_dsn(db) or "://" in str(db):
        return default_data_dir() / ERROR_LOG_NAME
    return sqlite_path(db).parent / ERROR_LOG_NAME


def open_log(path: Path) -> TextIO:
    """Open a log for appending: never through a link, created readable by its owner only.

    Raises:
        OSError: It cannot be opened, is a symbolic link, or is not a regular file.
    """
    fd = os.open(path, _LOG_FLAGS, 0o600)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        return os.fdopen(fd, "a", encoding="utf-8")
    except BaseException:
        os.close(fd)
        raise


def fallback_log_path() -> Path:
    """Return the error log of last resort: in this user's private temporary directory.

    The temporary directory is everyone's, so the log never sits in it directly: a
    directory of this user's own (mode 0700) holds it, and one that someone else
    made, or that is a link, is refused.

    Raises:
        OSError: The private directory cannot be made or is not private.
    """
    uid = os.getuid()
    directory = Path(tempfile.gettempdir()) / f"veriscribe-{uid}"
    with contextlib.suppress(FileExistsError):
        directory.mkdir(mode=0o700)
    info = directory.lstat()
    if (
        not stat.S_ISDIR(info.st_mode)
        or info.st_uid != uid
        or stat.S_IMODE(info.st_mode) & 0o077
    ):
        raise OSError(errno.EPERM, "not a private directory", str(directory))
    return directory / ERROR_LOG_NAME


class _LogFile(RotatingFileHandler):
    """The error log: created on its first record, never breaking the command."""

    def _open(self) -> Any:
        path = Path(self.baseFilename)
        path.parent.mkdir(parents=True, exist_ok=True)
        return open_log(path)

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802
        return


class _Redacting(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


def configure_logging(*, debug: bool, db: str | Path | None = None) -> Path:
    """Send warnings and errors of every logger to the error log, not to stderr.

    Without a handler Python prints them on stderr, tracebacks and all. With
    ``debug`` they are printed on stderr as well. A command given its own ``--db``
    calls this again, so that its log goes beside that database.

    Returns:
        The error log's path (created only when something is written to it).
    """
    path = error_log_path(db)
    _active_log.set(path)
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
    # Each argument is read whole: a --db or --base-url password may hold blanks.
    command = redact_command(["veriscribe", *sys.argv[1:]])
    entry = redact(
        f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} unexpected error in "
        f"`{command}`\n{text}\n"
    )
    try:
        return _append(path, entry)
    except OSError:
        pass
    try:
        return _append(fallback_log_path(), entry)
    except OSError:
        return path


def _append(path: Path, entry: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open_log(path) as log:
        log.write(entry)
    return path


def report_bug(exc: BaseException, *, debug: bool) -> NoReturn:
    """Log an unexpected exception's traceback and end with one line saying so."""
    path = _write_traceback(_active_log.get() or error_log_path(), exc)
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


def remember_arguments(argv: list[str]) -> None:
    """Hide the passwords and keys of the command's DSNs and URLs from all it prints.

    Each is read whole, before anything can quote it (a driver's error, a traceback),
    so that its password is hidden in whatever form or piece it comes back.
    """
    for arg in argv:
        name, equals, value = arg.partition("=")
        value = value if arg.startswith("--") and equals else arg
        # Only settings: a question's words ("key=mortality") stay as they are.
        if "://" in value or is_dsn(value):
            remember_secrets_in(value)


class GuardedGroup(TyperGroup):
    """The root command: however a command fails, it ends in one line and an exit code."""

    def invoke(self, ctx: Any) -> Any:
        """Run the command; turn every failure into one line on stderr."""
        debug = bool(ctx.params.get("debug"))
        remember_arguments(sys.argv[1:])
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, typer.TyperException):
            # Exit codes, and usage errors that the command line prints itself.
            raise
        except KeyboardInterrupt:
            fail("interrupted", 130)
        except BrokenPipeError:
            # The reader of the output left (`veriscribe ... | head`): stop quietly,
            # as other tools do, with stdout on /dev/null so the final flush cannot
            # fail again.
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise typer.Exit(141) from None
        except VeriscribeError as exc:
            fail(exc.user_message)
        except (Exception, asyncio.CancelledError) as exc:
            report_bug(exc, debug=debug)
