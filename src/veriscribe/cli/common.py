"""What the commands share: option types, settings from flags, running a service."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, get_args, get_origin

import typer
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from veriscribe.cli import terminal
from veriscribe.cli.failure import configure_logging, fail
from veriscribe.cli.render.shared import warning_line
from veriscribe.errors import VeriscribeError
from veriscribe.settings import LLMSettings, Settings

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class GlobalOptions:
    """The options given before the command (``veriscribe --debug ...``)."""

    debug: bool = False
    max_bytes: int | None = None
    db: str | None = None


# Set by the root callback at the start of every invocation.
global_options: ContextVar[GlobalOptions | None] = ContextVar(
    "global_options", default=None
)

ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model", "-m", help="Model SPEC: local, ollama:<m>, openai:<m>, sim[:...]"
    ),
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option("--base-url", help="Server URL for openai: SPECs (vLLM, llama.cpp)."),
]
EndpointOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--endpoint",
        metavar="URL",
        help="A server of the ollama:/openai: model (repeat for several: calls are "
        "balanced over them and fail over between them).",
    ),
]
EndpointsFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--endpoints",
        metavar="FILE",
        help="TOML file of endpoint tables (url, kind, model, max_in_flight, "
        "api_key_env); default: VERISCRIBE_ENDPOINTS_FILE.",
    ),
]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print machine-readable JSON only.")
]
PlotOpt = Annotated[
    Path | None,
    typer.Option("--plot", help="Also draw the figures of the report into this PNG."),
]
QuietOpt = Annotated[
    bool, typer.Option("--quiet", "-q", help="No progress display; one summary line.")
]


def flag_name(field: str) -> str:
    """Return the flag of an options field: ``--copy-limit`` for ``copy_limit``."""
    return "--" + field.replace("_", "-")


def field_option(
    model: type[BaseModel], name: str, *flags: str, help: str | None = None
) -> Any:
    """Return the option that takes the field ``name`` of ``model``.

    The field says everything the option needs: its flag (``flag_name``, unless
    ``flags`` name others), its help (the field's docstring, unless ``help`` is given),
    its bounds (``ge``/``le``: the command line refuses what the model would, in one
    line, and ``--help`` states them) and, for a ``Literal``, its choices. The default
    is the parameter's, ``= DEFAULTS.<name>``: the options' own.
    """
    field = model.model_fields[name]
    names = flags or (flag_name(name),)
    text = " ".join((field.description or "" if help is None else help).split())
    if get_origin(field.annotation) is Literal:
        return choice(names[0], field.annotation, text)
    low, high = field_bounds(model, name)
    note = bounds_note(low, high)
    return typer.Option(
        *names,
        callback=within(names[0].split("/")[0], low, high),
        help=f"{text} ({note})" if text and note else text or note,
    )


def field_bounds(model: type[BaseModel], name: str) -> tuple[Any, Any]:
    """Return the least and the greatest value of the field ``name`` (None: unbounded)."""
    low = high = None
    for rule in model.model_fields[name].metadata:  # annotated_types.Ge, Le, ...
        low = getattr(rule, "ge", low)
        high = getattr(rule, "le", high)
    return low, high


def bounds_note(low: Any, high: Any) -> str:
    """Return bounds as ``--help`` states them: ``1 to 50``, ``0 or more``."""
    if low is not None and high is not None:
        return f"{low} to {high}"
    if low is not None:
        return f"{low} or more"
    return "" if high is None else f"at most {high}"


def within(flag: str, low: Any, high: Any) -> Callable[[Any], Any]:
    """Return an option callback that ends the command in one line past the bounds.

    The way every other bad input ends (exit code 1), where the command line's own
    range check would print a usage box and exit with 2.
    """

    def check(value: Any) -> Any:
        if value is None:
            return value
        if low is not None and value < low:
            fail(f"{flag} must be {low} or more")
        if high is not None and value > high:
            fail(f"{flag} must be at most {high}")
        return value

    return check


def old_name(flag: str, new: str, bounds: tuple[Any, Any] = (None, None)) -> Any:
    """Return a hidden option that takes ``flag``, the name ``new`` had before.

    A renamed flag keeps its old name for one release (see the changelog), within the
    same ``bounds`` as the new one; the command reads it with ``renamed``.
    """
    return typer.Option(
        flag, hidden=True, callback=within(flag, *bounds), help=f"Old name of {new}."
    )


def renamed(value: T, old: T | None, flag: str, new: str) -> T:
    """Return the value of a renamed flag: the old name's, if given, with a warning."""
    if old is None:
        return value
    warning_line(
        terminal.stderr, f"{flag} is now {new}; the old name goes in the next release"
    )
    return old


def options_from_flags(model: type[M], **values: Any) -> M:
    """Return the options the flags give; a bad value ends the command in one line.

    The line names the flag (``--copy-limit`` for the field ``copy_limit``) and the
    bound the value breaks.
    """
    try:
        return model(**values)
    except ValidationError as exc:
        error = exc.errors()[0]
        flag = "--" + str(error["loc"][0]).replace("_", "-")
        fail(f"{flag} {broken_bound(error)}")


def broken_bound(error: ErrorDetails) -> str:
    """Return what a field's validation error asks of the value, as a flag's rule."""
    ctx = error.get("ctx", {})
    if error["type"] == "greater_than_equal":
        return f"must be {ctx['ge']} or more"
    if error["type"] == "less_than_equal":
        return f"must be at most {ctx['le']}"
    if error["type"] == "value_error":
        return str(ctx["error"])
    return error["msg"]


ConcurrencyOpt = Annotated[
    int | None,
    field_option(
        LLMSettings,
        "concurrency",
        help="Model calls in flight at once (default: VERISCRIBE_LLM__CONCURRENCY).",
    ),
]
OldConcurrencyOpt = Annotated[
    int | None,
    old_name("-c", "--concurrency", field_bounds(LLMSettings, "concurrency")),
]
"""``-c``, which ``--corpus`` has too: ``--concurrency`` alone from now on."""
CpuWorkersOpt = Annotated[
    int | None,
    field_option(
        Settings,
        "cpu_workers",
        help="Processes that run the text steps (first sentences, the abstract's "
        "checks) beside the model calls; 0: none (default: VERISCRIBE_CPU_WORKERS, "
        "else one fewer than the cores, at least 2, for 32 articles or more on a "
        "model server).",
    ),
]
DbOpt = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="Database: a SQLite file, or a PostgreSQL DSN (postgresql://...) that "
        "workers on many machines share (default: VERISCRIBE_DB).",
    ),
]
RunIdArg = Annotated[str, typer.Argument(help="A run id (see `veriscribe runs list`).")]
InputsArg = Annotated[
    list[str],
    typer.Argument(
        help="Article files, directories or globs; JSON lines count one per line."
    ),
]
CorpusOpt = Annotated[
    str, typer.Option("--corpus", "-c", help="Name of the guideline corpus.")
]


def choice(flag: str, kind: Any, help_text: str) -> Any:
    """Return an option taking one value of the ``Literal`` type ``kind``.

    A value outside it ends the command in one error line with exit code 1, the way
    every other bad input does, where the command line itself would print a usage box
    and exit with 2.
    """
    allowed: tuple[str, ...] = get_args(kind)

    def parse(value: str) -> str:
        if value not in allowed:
            fail(f"{flag} must be one of {', '.join(allowed)}, not {value!r}")
        return value

    return typer.Option(
        flag, parser=parse, metavar=f"<{'|'.join(allowed)}>", help=help_text
    )


def settings_for(
    model: str | None = None,
    base_url: str | None = None,
    endpoints: list[str] | None = None,
    endpoints_file: Path | None = None,
) -> Settings:
    """Return settings from the environment with CLI overrides applied.

    The global options (``veriscribe --max-bytes N ...``) are overrides too.
    """
    try:
        settings = Settings()
    except ValidationError as exc:
        fail(f"bad setting: {setting_problems(exc)}")
    given = global_options.get() or GlobalOptions()
    return settings.with_overrides(
        model=model,
        base_url=base_url,
        endpoints=endpoints or None,
        endpoints_file=endpoints_file,
        max_input_bytes=given.max_bytes,
        db=given.db,
    )


def log_beside(db: str) -> None:
    """Send the command's error log beside ``db``, the database its own --db names."""
    given = global_options.get() or GlobalOptions()
    configure_logging(debug=given.debug, db=db)


def setting_problems(exc: ValidationError) -> str:
    """Return a settings validation error as one line naming the variables."""
    problems = []
    for error in exc.errors():
        path = [str(part) for part in error["loc"]]
        name = "VERISCRIBE_" + "__".join(path).upper()
        given = f" (got {error['input']!r})" if "input" in error else ""
        problems.append(f"{name}: {error['msg']}{given}")
    return "; ".join(problems)


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a service coroutine; a VeriscribeError becomes one error line and exit 1."""
    try:
        return asyncio.run(coro)
    except VeriscribeError as exc:
        fail(exc.user_message)
    except KeyboardInterrupt:
        fail("interrupted", 130)


def guarded(action: Callable[[], T]) -> T:
    """Run a synchronous step; a VeriscribeError becomes one error line and exit 1."""
    try:
        return action()
    except VeriscribeError as exc:
        fail(exc.user_message)
