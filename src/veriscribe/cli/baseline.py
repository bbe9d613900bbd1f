"""The ``eval baseline`` commands: Lead-k and naive abstracts in the results format."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from veriscribe.cli.common import (
    BaseUrlOpt,
    ConcurrencyOpt,
    EndpointOpt,
    EndpointsFileOpt,
    InputsArg,
    JsonOpt,
    ModelOpt,
    OldConcurrencyOpt,
    old_name,
    renamed,
    settings_for,
)
from veriscribe.cli.output import present
from veriscribe.cli.render import evaluate as render

app = typer.Typer(
    help="Baseline abstracts in the results format, for `eval abstracts --against`.",
    no_args_is_help=True,
)
OutOpt = Annotated[
    Path, typer.Option("--out", "-o", help="Results: one JSON line per article.")
]


@app.command("lead")
def baseline_lead(
    inputs: InputsArg,
    *,
    out: OutOpt,
    sentences: Annotated[
        int | None,
        typer.Option(
            "--sentences",
            min=1,
            help="At most N sentences (default: as many as fit the reference "
            "length; 3 for articles without a reference).",
        ),
    ] = None,
    sentences_k: Annotated[
        int | None, old_name("--k", "--sentences", (1, None))
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """Lead-k: the first body sentences, up to the reference abstract's length."""
    from veriscribe.eval.baselines import run_lead

    k = renamed(sentences, sentences_k, "--k", "--sentences")

    present(
        lambda _: asyncio.to_thread(run_lead, inputs, out, k=k),
        render.baseline_summary,
        json_out=json_out,
    )


@app.command("naive")
def baseline_naive(
    inputs: InputsArg,
    *,
    out: OutOpt,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    endpoint: EndpointOpt = None,
    endpoints_file: EndpointsFileOpt = None,
    concurrency: ConcurrencyOpt = None,
    concurrency_c: OldConcurrencyOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """One prompt with the whole article (cut to the context, recorded) per abstract."""
    from veriscribe.eval.baselines import run_naive

    concurrency = renamed(concurrency, concurrency_c, "-c", "--concurrency")
    settings = settings_for(model, base_url, endpoint, endpoints_file)
    present(
        lambda on_progress: run_naive(
            settings,
            inputs,
            out,
            concurrency=concurrency,
            on_progress=on_progress,
        ),
        render.baseline_summary,
        json_out=json_out,
        live=lambda console: render.CountProgress(console, "naive baseline"),
    )
