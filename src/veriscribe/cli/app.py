"""The veriscribe command line: parse, call ``service``, render."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Annotated, Any

import typer

from veriscribe import service
from veriscribe.cli import qa, render
from veriscribe.cli.common import (
    BaseUrlOpt,
    EndpointOpt,
    EndpointsFileOpt,
    GlobalOptions,
    JsonOpt,
    ModelOpt,
    PlotOpt,
    global_options,
    guarded,
    run,
    settings_for,
)
from veriscribe.cli.failure import GuardedGroup, configure_logging, fail
from veriscribe.graphs.abstract import AbstractOptions

DbOpt = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="Database: a SQLite file, or a PostgreSQL DSN (postgresql://...) that "
        "workers on many machines share (default: VERISCRIBE_DB).",
    ),
]

app = typer.Typer(
    name="veriscribe",
    help="Biomedical abstracts and guideline answers that a reader can check.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    cls=GuardedGroup,
)
runs_app = typer.Typer(
    help="List, inspect and resume batch runs.", no_args_is_help=True
)
corpus_app = typer.Typer(help="Manage guideline corpora.", no_args_is_help=True)
eval_app = typer.Typer(help="Evaluate abstracts, answers, retrieval and labels.")
app.add_typer(runs_app, name="runs")
app.add_typer(corpus_app, name="corpus")
app.add_typer(eval_app, name="eval")


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
    configure_logging(debug=debug)


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
    report = run(service.doctor(settings, model)).as_dict()
    if json_out:
        render.print_json(report)
    else:
        render.doctor_report(report)


SplitOpt = Annotated[
    str, typer.Option("--split", help="Divide strategy: fs (first sentence), ns, sh.")
]
PromptOpt = Annotated[
    str,
    typer.Option(
        "--prompt",
        help="Prompt family: own (the facet's point in the model's own words), or the "
        "papers' bc, di, si, si_cot.",
    ),
]
EntitiesOpt = Annotated[
    int,
    typer.Option("--entities", help="Inject the top N TextRank key phrases (0: off)."),
]
LeanOpt = Annotated[
    bool,
    typer.Option(
        "--lean/--reasoning",
        help="Ask for the summary alone (--lean), or also for the papers' reasoning "
        "field, which is thrown away (--reasoning).",
    ),
]
CopyLimitOpt = Annotated[
    int,
    typer.Option(
        "--copy-limit",
        help="Embedded model: never continue a word-for-word run of the facet's text "
        "beyond N words (0: off; numbers are always copied exactly).",
    ),
]
LabellerOpt = Annotated[
    str,
    typer.Option(
        "--labeller",
        help="First-sentence labeller for fs: auto (the model, but the classifier "
        "with the bundled embedded model), llm or classifier.",
    ),
]


def abstract_options(
    split: str,
    prompt: str,
    entities: int,
    lean: bool,
    labeller: str,
    copy_limit: int = 0,
) -> AbstractOptions:
    """Validate the abstract options given on the command line."""
    choices = {
        "--split": (split, ("fs", "ns", "sh")),
        "--prompt": (prompt, ("own", "bc", "di", "si", "si_cot")),
        "--labeller": (labeller, ("auto", "llm", "classifier")),
    }
    for flag, (value, allowed) in choices.items():
        if value not in allowed:
            render.error_line(
                f"{flag} must be one of {', '.join(allowed)}, not {value!r}"
            )
            raise typer.Exit(1)
    for flag, number in (("--entities", entities), ("--copy-limit", copy_limit)):
        if number < 0:
            render.error_line(f"{flag} must be 0 or more")
            raise typer.Exit(1)
    return AbstractOptions(
        split=split,  # type: ignore[arg-type]
        prompt=prompt,  # type: ignore[arg-type]
        entities=entities,
        lean=lean,
        labeller=labeller,  # type: ignore[arg-type]
        copy_limit=copy_limit,
    )


@app.command()
def abstract(
    path: Annotated[
        Path, typer.Argument(help="Article: JATS XML, JSON lines, text or Markdown.")
    ],
    *,
    split: SplitOpt = "fs",
    prompt: PromptOpt = "own",
    entities: EntitiesOpt = 0,
    lean: LeanOpt = True,
    labeller: LabellerOpt = "auto",
    copy_limit: CopyLimitOpt = 4,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    endpoint: EndpointOpt = None,
    endpoints_file: EndpointsFileOpt = None,
    json_out: JsonOpt = False,
    out: Annotated[
        Path | None, typer.Option("--out", help="Also write the JSON here.")
    ] = None,
) -> None:
    """Write an abstract for one article (JATS XML, JSON lines, text or Markdown)."""
    settings = settings_for(model, base_url, endpoint, endpoints_file)
    options = abstract_options(split, prompt, entities, lean, labeller, copy_limit)
    if json_out:
        result = run(service.generate_abstract(settings, path, options, model=model))
        render.print_json(result)
    else:
        with render.AbstractProgress(str(path.name)) as view:
            result = run(
                service.generate_abstract(
                    settings, path, options, model=model, on_event=view.event
                )
            )
        render.abstract_result(result)
    if out is not None:
        text = json.dumps(result, ensure_ascii=False, indent=2) + "\n"
        try:
            out.write_text(text, "utf-8")
        except OSError as exc:
            fail(f"cannot write {out}: {exc.strerror or exc}")


ConcurrencyOpt = Annotated[
    int | None,
    typer.Option(
        "--concurrency",
        "-c",
        min=1,
        help="Model calls in flight at once (default: VERISCRIBE_LLM__CONCURRENCY).",
    ),
]
QuietOpt = Annotated[
    bool, typer.Option("--quiet", "-q", help="No progress display; one summary line.")
]
RunIdArg = Annotated[str, typer.Argument(help="A run id (see `veriscribe runs list`).")]


def _run_batch_command(
    start: Callable[
        [Callable[[Any], None] | None], Coroutine[Any, Any, dict[str, Any]]
    ],
    *,
    quiet: bool,
    json_out: bool,
) -> None:
    """Run a batch with the chosen display; exit 130 when it was interrupted."""
    if json_out or quiet:
        summary = run(start(None))
    else:
        with render.BatchView() as view:
            summary = run(start(view.update))
    if json_out:
        render.print_json(summary)
    elif quiet:
        render.batch_line(summary)
    else:
        render.batch_summary(summary)
    if summary.get("interrupted"):
        raise typer.Exit(130)


@app.command()
def batch(
    inputs: Annotated[
        list[str],
        typer.Argument(
            help="Article files, directories or globs; JSON lines count one per line."
        ),
    ],
    *,
    out: Annotated[
        Path,
        typer.Option("--out", "-o", help="Results: one JSON line per article."),
    ],
    run_id: Annotated[
        str | None,
        typer.Option(
            "--run-id", help="Name the run (default: derived from inputs and options)."
        ),
    ] = None,
    concurrency: ConcurrencyOpt = None,
    split: SplitOpt = "fs",
    prompt: PromptOpt = "own",
    entities: EntitiesOpt = 0,
    lean: LeanOpt = True,
    labeller: LabellerOpt = "auto",
    copy_limit: CopyLimitOpt = 4,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    endpoint: EndpointOpt = None,
    endpoints_file: EndpointsFileOpt = None,
    quiet: QuietOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """Write abstracts for many articles, resumably: run it again to continue."""
    settings = settings_for(model, base_url, endpoint, endpoints_file)
    options = abstract_options(split, prompt, entities, lean, labeller, copy_limit)
    _run_batch_command(
        lambda on_progress: service.run_batch(
            settings,
            inputs,
            out,
            options,
            run_id=run_id,
            concurrency=concurrency,
            model=model,
            on_progress=on_progress,
        ),
        quiet=quiet,
        json_out=json_out,
    )


@app.command()
def worker(
    run_id: RunIdArg,
    *,
    db: DbOpt = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Results file here (default: the run's own --out)."
        ),
    ] = None,
    concurrency: ConcurrencyOpt = None,
    base_url: BaseUrlOpt = None,
    endpoint: EndpointOpt = None,
    endpoints_file: EndpointsFileOpt = None,
    quiet: QuietOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """Work on an existing run beside other workers; no input files needed."""
    settings = settings_for(None, base_url, endpoint, endpoints_file)
    if db is not None:
        settings = settings.with_overrides(db=db)
    _run_batch_command(
        lambda on_progress: service.work_run(
            settings,
            run_id,
            out=out,
            concurrency=concurrency,
            on_progress=on_progress,
        ),
        quiet=quiet,
        json_out=json_out,
    )


@runs_app.command("list")
def runs_list(*, json_out: JsonOpt = False) -> None:
    """List batch runs with their counts, tokens and timings."""
    listed = run(service.list_runs(settings_for()))
    if json_out:
        render.print_json(listed)
    else:
        render.runs_table(listed)


@runs_app.command("show")
def runs_show(run_id: RunIdArg, *, json_out: JsonOpt = False) -> None:
    """Show one run: counts, timings, tokens, and every failure with its reason."""
    summary = run(service.show_run(settings_for(), run_id))
    if json_out:
        render.print_json(summary)
    else:
        render.run_details(summary)


@runs_app.command("resume")
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
    _run_batch_command(
        lambda on_progress: service.resume_run(
            settings, run_id, concurrency=concurrency, on_progress=on_progress
        ),
        quiet=quiet,
        json_out=json_out,
    )


@eval_app.command("abstracts")
def eval_abstracts(
    results: Annotated[
        Path,
        typer.Argument(help="Abstract results: JSON (abstract --out) or JSON lines."),
    ],
    *,
    reference: Annotated[
        list[str] | None,
        typer.Option(
            "--reference",
            "-r",
            help="Articles with their author abstracts (files, directories, globs), "
            "or a JSON-lines list of reference abstracts (file, abstract). "
            "Default: each result's own reference and source.",
        ),
    ] = None,
    against: Annotated[
        Path | None,
        typer.Option(
            "--against", help="Second results file: paired bootstrap, results - it."
        ),
    ] = None,
    plot: Annotated[
        Path | None,
        typer.Option("--plot", help="Write box plots of the metrics to this PNG."),
    ] = None,
    kb: Annotated[
        Path | None,
        typer.Option(
            "--kb", help="scispaCy-format knowledge base (JSON lines): umls_recall."
        ),
    ] = None,
    scorer: Annotated[
        list[str] | None,
        typer.Option(
            "--scorer",
            help="Model-based metric plug-in: NAME=module:factory (repeatable), "
            "e.g. alignscore=my_scorers:alignscore.",
        ),
    ] = None,
    resamples: Annotated[
        int, typer.Option("--resamples", min=100, help="Bootstrap resamples.")
    ] = 10_000,
    support: Annotated[
        bool,
        typer.Option(
            "--support",
            help="Judge each abstract sentence against its article with the QA support "
            "judge (uses --model): claim_support, claim_support_lenient.",
        ),
    ] = False,
    support_samples: Annotated[
        int,
        typer.Option(
            "--support-samples", min=1, help="Judge samples per sentence (majority)."
        ),
    ] = 3,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    endpoint: EndpointOpt = None,
    endpoints_file: EndpointsFileOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Score generated abstracts: abstractiveness vs the human abstract, ROUGE-L, recall."""
    # Evaluation loads ROUGE, NLTK, SciPy and spaCy: only its own commands import it.
    from veriscribe.eval import abstracts as evaluation
    from veriscribe.eval.support import support_checker
    from veriscribe.metrics.scorers import load_scorer_spec

    settings = settings_for(model, base_url, endpoint, endpoints_file)

    async def evaluate() -> dict[str, Any]:
        for spec in scorer or []:
            load_scorer_spec(spec)
        options: dict[str, Any] = {
            "reference": reference,
            "against": against,
            "plot": plot,
            "kb": kb,
            "resamples": resamples,
        }
        if not support:
            return await evaluation.eval_abstracts(results, **options)
        async with support_checker(settings, model, samples=support_samples) as checker:
            return await evaluation.eval_abstracts(results, **options, support=checker)

    report = run(evaluate())
    if json_out:
        render.print_json(report)
    else:
        render.abstract_eval_report(report)


baseline_app = typer.Typer(
    help="Baseline abstracts in the results format, for `eval abstracts --against`.",
    no_args_is_help=True,
)
eval_app.add_typer(baseline_app, name="baseline")
InputsArg = Annotated[
    list[str],
    typer.Argument(
        help="Article files, directories or globs; JSON lines count one per line."
    ),
]
BaselineOutOpt = Annotated[
    Path, typer.Option("--out", "-o", help="Results: one JSON line per article.")
]


@baseline_app.command("lead")
def baseline_lead(
    inputs: InputsArg,
    *,
    out: BaselineOutOpt,
    k: Annotated[
        int | None,
        typer.Option(
            "--k",
            min=1,
            help="At most K sentences (default: as many as fit the reference "
            "length; 3 for articles without a reference).",
        ),
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """Lead-k: the first body sentences, up to the reference abstract's length."""
    from veriscribe.eval.baselines import run_lead

    summary = run(asyncio.to_thread(run_lead, inputs, out, k=k))
    if json_out:
        render.print_json(summary)
    else:
        render.baseline_summary(summary)


@baseline_app.command("naive")
def baseline_naive(
    inputs: InputsArg,
    *,
    out: BaselineOutOpt,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    endpoint: EndpointOpt = None,
    endpoints_file: EndpointsFileOpt = None,
    concurrency: ConcurrencyOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """One prompt with the whole article (cut to the context, recorded) per abstract."""
    from veriscribe.eval.baselines import run_naive

    settings = settings_for(model, base_url, endpoint, endpoints_file)
    if json_out:
        summary = run(
            run_naive(settings, inputs, out, model=model, concurrency=concurrency)
        )
        render.print_json(summary)
        return
    with render.CountProgress("naive baseline") as view:
        summary = run(
            run_naive(
                settings,
                inputs,
                out,
                model=model,
                concurrency=concurrency,
                on_progress=view.update,
            )
        )
    render.baseline_summary(summary)


@eval_app.command("labels")
def eval_labels(
    data: Annotated[Path, typer.Argument(help="BIORC800-format JSON lines.")],
    *,
    labeller: Annotated[
        list[str] | None,
        typer.Option("--labeller", help="classifier and/or llm (repeat the option)."),
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", help="Only the first N abstracts.")
    ] = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    endpoint: EndpointOpt = None,
    endpoints_file: EndpointsFileOpt = None,
    plot: PlotOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Score the first-sentence labeller(s) on BIORC800-format data."""
    from veriscribe.eval import labels as evaluation

    settings = settings_for(model, base_url, endpoint, endpoints_file)
    names = tuple(labeller or ["classifier"])
    report = run(
        evaluation.eval_labels(
            settings, data, labellers=names, limit=limit, model=model
        )
    )
    if plot is not None:
        from veriscribe.eval.plots import label_plot

        guarded(lambda: label_plot(report, names, plot))
        report["plot"] = str(plot)
    if json_out:
        render.print_json(report)
    else:
        render.label_report(report, names)


qa.register(app, corpus_app, eval_app)


def main() -> None:
    """Run the command line."""
    app()


if __name__ == "__main__":
    main()
