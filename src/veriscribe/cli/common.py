"""What the commands share: option types, settings from flags, running a service."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar, get_args

import typer
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from veriscribe.cli.failure import configure_logging, fail
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


def bounded(model: type[BaseModel], name: str, *flags: str, help: str) -> Any:
    """Return an option taking the field ``name`` of ``model``, within its bounds.

    The field's ``ge``/``le`` become the option's ``min``/``max``, so the command line
    refuses (and ``--help`` shows) what the model would.
    """
    low = high = None
    for rule in model.model_fields[name].metadata:  # annotated_types.Ge, Le, ...
        low = getattr(rule, "ge", low)
        high = getattr(rule, "le", high)
    return typer.Option(*flags, min=low, max=high, help=help)


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
    bounded(
        LLMSettings,
        "concurrency",
        "--concurrency",
        "-c",
        help="Model calls in flight at once (default: VERISCRIBE_LLM__CONCURRENCY).",
    ),
]
CpuWorkersOpt = Annotated[
    int | None,
    bounded(
        Settings,
        "cpu_workers",
        "--cpu-workers",
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
