"""The ``corpus`` commands: add guideline documents to a corpus, list and show corpora."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Annotated

import typer

from veriscribe.cli import terminal
from veriscribe.cli.common import (
    BaseUrlOpt,
    EndpointOpt,
    EndpointsFileOpt,
    JsonOpt,
    ModelOpt,
    settings_for,
)
from veriscribe.cli.failure import SOME_FAILED
from veriscribe.cli.output import present
from veriscribe.cli.render import corpus as render
from veriscribe.service import corpora

app = typer.Typer(help="Manage guideline corpora.", no_args_is_help=True)


@app.command("add")
def corpus_add(
    name: Annotated[str, typer.Argument(help="Corpus name (created if new).")],
    paths: Annotated[
        list[Path],
        typer.Argument(help="Guideline files or directories (read recursively)."),
    ],
    *,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    endpoint: EndpointOpt = None,
    endpoints_file: EndpointsFileOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Add guideline documents to a corpus and summarise their sections.

    A file that cannot be read is named in one line and the others are added; the
    command then exits with code 3.
    """
    settings = settings_for(model, base_url, endpoint, endpoints_file)

    report = present(
        lambda on_progress: corpora.add_corpus(
            settings, name, paths, on_progress=on_progress
        ),
        partial(render.ingest_report, errors=terminal.stderr),
        json_out=json_out,
        live=render.ingest_progress,
    )
    if report.skipped:
        raise typer.Exit(SOME_FAILED)


@app.command("list")
def corpus_list(*, json_out: JsonOpt = False) -> None:
    """List corpora."""
    settings = settings_for()

    present(
        lambda _: corpora.list_corpora(settings),
        render.corpora_table,
        json_out=json_out,
    )


@app.command("show")
def corpus_show(
    name: Annotated[str, typer.Argument(help="Corpus name.")],
    *,
    json_out: JsonOpt = False,
) -> None:
    """Show a corpus's documents and sections."""
    settings = settings_for()
    present(
        lambda _: corpora.show_corpus(settings, name),
        render.corpus_details,
        json_out=json_out,
    )
