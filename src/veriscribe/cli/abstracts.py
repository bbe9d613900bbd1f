"""The abstract commands: one article (``abstract``), many (``batch``), and ``worker``."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Annotated

import typer

from veriscribe import service
from veriscribe.cli.common import (
    BaseUrlOpt,
    ConcurrencyOpt,
    CpuWorkersOpt,
    DbOpt,
    EndpointOpt,
    EndpointsFileOpt,
    InputsArg,
    JsonOpt,
    ModelOpt,
    OldConcurrencyOpt,
    QuietOpt,
    RunIdArg,
    field_option,
    log_beside,
    options_from_flags,
    renamed,
    settings_for,
)
from veriscribe.cli.failure import fail
from veriscribe.cli.output import present, present_batch
from veriscribe.cli.render import abstracts as render
from veriscribe.options import AbstractOptions, LabellerKind, PromptFamily, Split
from veriscribe.results import AbstractResult
from veriscribe.store.files import write_atomically

DEFAULTS = AbstractOptions()
"""The options' defaults are the flags' defaults."""

# No name: added to the root, these stay top-level commands.
app = typer.Typer()

SplitOpt = Annotated[Split, field_option(AbstractOptions, "split")]
PromptOpt = Annotated[PromptFamily, field_option(AbstractOptions, "prompt")]
EntitiesOpt = Annotated[int, field_option(AbstractOptions, "entities")]
LeanOpt = Annotated[bool, field_option(AbstractOptions, "lean", "--lean/--reasoning")]
LabellerOpt = Annotated[LabellerKind, field_option(AbstractOptions, "labeller")]
CopyLimitOpt = Annotated[int, field_option(AbstractOptions, "copy_limit")]
WordsOpt = Annotated[int, field_option(AbstractOptions, "words")]


def abstract_options(
    split: Split,
    prompt: PromptFamily,
    entities: int,
    lean: bool,
    labeller: LabellerKind,
    copy_limit: int,
    words: int,
) -> AbstractOptions:
    """Return the abstract options given on the command line, counts checked."""
    return options_from_flags(
        AbstractOptions,
        split=split,
        prompt=prompt,
        entities=entities,
        lean=lean,
        labeller=labeller,
        copy_limit=copy_limit,
        words=words,
    )


@app.command()
def abstract(
    path: Annotated[
        Path, typer.Argument(help="Article: JATS XML, JSON lines, text or Markdown.")
    ],
    *,
    split: SplitOpt = DEFAULTS.split,
    prompt: PromptOpt = DEFAULTS.prompt,
    entities: EntitiesOpt = DEFAULTS.entities,
    lean: LeanOpt = DEFAULTS.lean,
    labeller: LabellerOpt = DEFAULTS.labeller,
    copy_limit: CopyLimitOpt = DEFAULTS.copy_limit,
    words: WordsOpt = DEFAULTS.words,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    endpoint: EndpointOpt = None,
    endpoints_file: EndpointsFileOpt = None,
    json_out: JsonOpt = False,
    out: Annotated[
        Path | None, typer.Option("--out", help="Also write the JSON here.")
    ] = None,
    # A display flag, not the option `evidence` (the check), which no flag sets.
    show_evidence: Annotated[
        bool,
        typer.Option(
            "--evidence",
            help="Print each sentence's article sentences, and the dropped ones.",
        ),
    ] = False,
) -> None:
    """Write an abstract for one article (JATS XML, JSON lines, text or Markdown)."""
    settings = settings_for(model, base_url, endpoint, endpoints_file)
    options = abstract_options(
        split, prompt, entities, lean, labeller, copy_limit, words
    )
    present(
        lambda on_event: service.generate_abstract(
            settings, path, options, on_event=on_event
        ),
        partial(render.abstract_result, evidence=show_evidence),
        json_out=json_out,
        live=lambda console: render.AbstractProgress(console, path.name),
        save=None if out is None else partial(write_result, out),
    )


def write_result(out: Path, result: AbstractResult) -> None:
    """Write an abstract's JSON to ``out`` whole, or end with one error line."""
    text = (
        json.dumps(result.model_dump(mode="json"), ensure_ascii=False, indent=2) + "\n"
    )
    try:
        write_atomically(out, [text])
    except OSError as exc:
        fail(f"cannot write {out}: {exc.strerror or exc}")


@app.command()
def batch(
    inputs: InputsArg,
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
    concurrency_c: OldConcurrencyOpt = None,
    cpu_workers: CpuWorkersOpt = None,
    split: SplitOpt = DEFAULTS.split,
    prompt: PromptOpt = DEFAULTS.prompt,
    entities: EntitiesOpt = DEFAULTS.entities,
    lean: LeanOpt = DEFAULTS.lean,
    labeller: LabellerOpt = DEFAULTS.labeller,
    copy_limit: CopyLimitOpt = DEFAULTS.copy_limit,
    words: WordsOpt = DEFAULTS.words,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    endpoint: EndpointOpt = None,
    endpoints_file: EndpointsFileOpt = None,
    quiet: QuietOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """Write abstracts for many articles, resumably: run it again to continue."""
    settings = settings_for(model, base_url, endpoint, endpoints_file)
    settings = settings.with_overrides(cpu_workers=cpu_workers)
    concurrency = renamed(concurrency, concurrency_c, "-c", "--concurrency")
    options = abstract_options(
        split, prompt, entities, lean, labeller, copy_limit, words
    )
    present_batch(
        lambda on_progress: service.run_batch(
            settings,
            inputs,
            out,
            options,
            run_id=run_id,
            concurrency=concurrency,
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
    concurrency_c: OldConcurrencyOpt = None,
    cpu_workers: CpuWorkersOpt = None,
    base_url: BaseUrlOpt = None,
    endpoint: EndpointOpt = None,
    endpoints_file: EndpointsFileOpt = None,
    quiet: QuietOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """Work on an existing run beside other workers; no input files needed."""
    settings = settings_for(None, base_url, endpoint, endpoints_file)
    settings = settings.with_overrides(cpu_workers=cpu_workers)
    concurrency = renamed(concurrency, concurrency_c, "-c", "--concurrency")
    if db is not None:
        log_beside(db)
        settings = settings.with_overrides(db=db)
    present_batch(
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
