"""The ``runs`` commands: list, inspect and resume batch runs."""

from __future__ import annotations

import typer

from veriscribe import service
from veriscribe.cli.common import (
    BaseUrlOpt,
    ConcurrencyOpt,
    EndpointOpt,
    EndpointsFileOpt,
    JsonOpt,
    QuietOpt,
    RunIdArg,
    settings_for,
)
from veriscribe.cli.output import present, present_batch
from veriscribe.cli.render import batch as render

app = typer.Typer(help="List, inspect and resume batch runs.", no_args_is_help=True)


@app.command("list")
def runs_list(*, json_out: JsonOpt = False) -> None:
    """List batch runs with their counts, tokens and timings."""
    settings = settings_for()
    present(
        lambda _: service.list_runs(settings),
        render.runs_table,
        json_out=json_out,
    )


@app.command("show")
def runs_show(run_id: RunIdArg, *, json_out: JsonOpt = False) -> None:
    """Show one run: counts, timings, tokens, and every failure with its reason."""
    settings = settings_for()
    present(
        lambda _: service.show_run(settings, run_id),
        render.run_details,
        json_out=json_out,
    )


@app.command("resume")
def runs_resume(
    run_id: RunIdArg,
    *,
    concurrency: ConcurrencyOpt = None,
    base_url: BaseUrlOpt = None,
    endpoint: EndpointOpt = None,
    endpoints_file: EndpointsFileOpt = None,
    quiet: QuietOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """Continue a run: skip finished articles, retry failed ones, repair the output."""
    settings = settings_for(None, base_url, endpoint, endpoints_file)
    present_batch(
        lambda on_progress: service.resume_run(
            settings, run_id, concurrency=concurrency, on_progress=on_progress
        ),
        quiet=quiet,
        json_out=json_out,
    )
