"""The veriscribe command line: the root command, its global options and ``doctor``.

Each group of commands lives in its own module; this one puts them together.
"""

from __future__ import annotations

from typing import Annotated

import typer

from veriscribe import service
from veriscribe.cli import abstracts, answers, corpus, evaluate, runs, serve
from veriscribe.cli.common import (
    BaseUrlOpt,
    DbOpt,
    EndpointOpt,
    EndpointsFileOpt,
    GlobalOptions,
    JsonOpt,
    ModelOpt,
    global_options,
    settings_for,
)
from veriscribe.cli.failure import GuardedGroup, configure_logging
from veriscribe.cli.output import present
from veriscribe.cli.render import doctor as render

app = typer.Typer(
    name="veriscribe",
    help="Biomedical abstracts and guideline answers that a reader can check.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    cls=GuardedGroup,
)


@app.callback()
def root_options(
    *,
    debug: Annotated[
        bool,
        typer.Option(
            "--debug", help="On an unexpected error, also print its traceback."
        ),
    ] = False,
    max_bytes: Annotated[
        int | None,
        typer.Option(
            "--max-bytes",
            min=1,
            help="Largest article or guideline file (or JSON-lines record) to read, "
            "in bytes (default: VERISCRIBE_MAX_INPUT_BYTES, 5000000).",
        ),
    ] = None,
    db: DbOpt = None,
) -> None:
    """Biomedical abstracts and guideline answers that a reader can check."""
    global_options.set(GlobalOptions(debug=debug, max_bytes=max_bytes, db=db))
    configure_logging(debug=debug, db=db)


@app.command()
def doctor(
    *,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    endpoint: EndpointOpt = None,
    endpoints_file: EndpointsFileOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Check a backend with one real round trip and measure tokens per second."""
    settings = settings_for(model, base_url, endpoint, endpoints_file)

    present(
        lambda _: service.doctor(settings),
        render.doctor_report,
        json_out=json_out,
    )


# Nameless groups add their commands to the root: `veriscribe abstract`, `ask`, ...
app.add_typer(abstracts.app)
app.add_typer(answers.app)
app.add_typer(serve.app)
app.add_typer(runs.app, name="runs")
app.add_typer(corpus.app, name="corpus")
app.add_typer(evaluate.app, name="eval")


def main() -> None:
    """Run the command line."""
    app()


if __name__ == "__main__":
    main()
