"""The veriscribe command line: parse, call ``service``, render."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from veriscribe import service
from veriscribe.cli import qa, render
from veriscribe.errors import VeriscribeError
from veriscribe.graphs.abstract import AbstractOptions
from veriscribe.settings import Settings

T = TypeVar("T")

app = typer.Typer(
    name="veriscribe",
    help="Biomedical abstracts and guideline answers that a reader can check.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
runs_app = typer.Typer(
    help="List, inspect and resume batch runs.", no_args_is_help=True
)
corpus_app = typer.Typer(help="Manage guideline corpora.", no_args_is_help=True)
eval_app = typer.Typer(help="Evaluate abstracts, answers, retrieval and labels.")
app.add_typer(runs_app, name="runs")
app.add_typer(corpus_app, name="corpus")
app.add_typer(eval_app, name="eval")

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
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print machine-readable JSON only.")
]


def settings_for(model: str | None = None, base_url: str | None = None) -> Settings:
    """Return settings from the environment with CLI overrides applied."""
    try:
        return Settings().with_overrides(model=model, base_url=base_url)
    except ValueError as exc:
        render.error_line(f"bad setting: {exc}")
        raise typer.Exit(1) from exc


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a service coroutine; a VeriscribeError becomes one error line and exit 1."""
    try:
        return asyncio.run(coro)
    except VeriscribeError as exc:
        render.error_line(exc.user_message)
        raise typer.Exit(1) from exc
    except KeyboardInterrupt:
        render.error_line("interrupted")
        raise typer.Exit(130) from None


@app.command()
def doctor(
    *, model: ModelOpt = None, base_url: BaseUrlOpt = None, json_out: JsonOpt = False
) -> None:
    """Check a backend with one real round trip and measure tokens per second."""
    settings = settings_for(model, base_url)
    report = run(service.doctor(settings, model)).as_dict()
    if json_out:
        render.print_json(report)
    else:
        render.doctor_report(report)


def _later(name: str) -> None:
    render.not_available(name)
    raise typer.Exit(2)


SplitOpt = Annotated[
    str, typer.Option("--split", help="Divide strategy: fs (first sentence), ns, sh.")
]
PromptOpt = Annotated[
    str, typer.Option("--prompt", help="Prompt family: bc, di, si, si_cot.")
]
EntitiesOpt = Annotated[
    int,
    typer.Option("--entities", help="Inject the top N TextRank key phrases (0: off)."),
]
LeanOpt = Annotated[
    bool,
    typer.Option("--lean", help="Drop the discarded reasoning field from prompts."),
]
LabellerOpt = Annotated[
    str,
    typer.Option(
        "--labeller", help="First-sentence labeller for fs: llm or classifier."
    ),
]


def abstract_options(
    split: str, prompt: str, entities: int, lean: bool, labeller: str
) -> AbstractOptions:
    """Validate the abstract options given on the command line."""
    choices = {
        "--split": (split, ("fs", "ns", "sh")),
        "--prompt": (prompt, ("bc", "di", "si", "si_cot")),
        "--labeller": (labeller, ("llm", "classifier")),
    }
    for flag, (value, allowed) in choices.items():
        if value not in allowed:
            render.error_line(
                f"{flag} must be one of {', '.join(allowed)}, not {value!r}"
            )
            raise typer.Exit(1)
    if entities < 0:
        render.error_line("--entities must be 0 or more")
        raise typer.Exit(1)
    return AbstractOptions(
        split=split,  # type: ignore[arg-type]
        prompt=prompt,  # type: ignore[arg-type]
        entities=entities,
        lean=lean,
        labeller=labeller,  # type: ignore[arg-type]
    )


@app.command()
def abstract(
    path: Annotated[
        Path, typer.Argument(help="Article: JATS XML, JSON lines, text or Markdown.")
    ],
    *,
    split: SplitOpt = "fs",
    prompt: PromptOpt = "bc",
    entities: EntitiesOpt = 0,
    lean: LeanOpt = False,
    labeller: LabellerOpt = "llm",
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    json_out: JsonOpt = False,
    out: Annotated[
        Path | None, typer.Option("--out", help="Also write the JSON here.")
    ] = None,
) -> None:
    """Write an abstract for one article (JATS XML, JSON lines, text or Markdown)."""
    settings = settings_for(model, base_url)
    options = abstract_options(split, prompt, entities, lean, labeller)
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
        out.write_text(json.dumps(result, ensure_ascii=False, indent=2) + "\n", "utf-8")


@app.command()
def batch(inputs: list[str], *, out: Annotated[Path, typer.Option("--out")]) -> None:
    """Write abstracts for many articles, resumably."""
    _later("batch")


@runs_app.command("list")
def runs_list() -> None:
    """List batch runs."""
    _later("runs list")


@runs_app.command("show")
def runs_show(run_id: str) -> None:
    """Show one run with its failures."""
    _later("runs show")


@runs_app.command("resume")
def runs_resume(run_id: str) -> None:
    """Resume an interrupted run."""
    _later("runs resume")


@eval_app.command("abstracts")
def eval_abstracts(results: Path) -> None:
    """Score generated abstracts against references."""
    _later("eval abstracts")


@eval_app.command("labels")
def eval_labels(data: Path) -> None:
    """Score the first-sentence labeller on BIORC800-format data."""
    _later("eval labels")


qa.register(app, corpus_app, eval_app)


def main() -> None:
    """Run the command line."""
    app()


if __name__ == "__main__":
    main()
