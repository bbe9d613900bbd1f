"""The ``eval`` commands: score abstracts, answers, retrieval, labellers and judges."""

from __future__ import annotations

from enum import Enum
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from veriscribe.cli import baseline
from veriscribe.cli.common import (
    BaseUrlOpt,
    CorpusOpt,
    EndpointOpt,
    EndpointsFileOpt,
    JsonOpt,
    ModelOpt,
    PlotOpt,
    field_bounds,
    field_option,
    guarded,
    old_name,
    renamed,
    settings_for,
)
from veriscribe.cli.failure import fail
from veriscribe.cli.output import present, with_plot
from veriscribe.cli.render import evaluate as render
from veriscribe.options import JudgeMethod, QAOptions, Retriever
from veriscribe.settings import Settings

if TYPE_CHECKING:
    from veriscribe.eval.abstract_judge import AbstractJudgeMethod
    from veriscribe.eval.reports import (
        AbstractsReport,
        LabelReport,
        QAReport,
        RetrievalReport,
    )

# Evaluation loads ROUGE, NLTK, SciPy and spaCy: each command imports what it needs
# when it runs, so that the other commands never load them.

JUDGE_SAMPLES = QAOptions().samples
"""The judge's samples per claim, as answers take them."""

app = typer.Typer(help="Evaluate abstracts, answers, retrieval and labels.")
app.add_typer(baseline.app, name="baseline")


# Repeatable options take Enums: the command line takes no list of Literals.
class LabellerName(Enum):
    """A first-sentence labeller ``eval labels`` can score."""

    classifier = "classifier"
    llm = "llm"


class JudgeName(Enum):
    """A support judge ``eval judge`` can measure (a ``JudgeMethod``)."""

    scored = "scored"
    sampled = "sampled"
    checks = "checks"
    hybrid = "hybrid"


class SupportJudgeName(Enum):
    """The faithfulness judge of ``eval abstracts --support``."""

    auto = "auto"
    checks = "checks"
    hybrid = "hybrid"
    scored = "scored"
    sampled = "sampled"


class RetrieverName(Enum):
    """A retriever ``eval retrieval`` can measure (a ``Retriever``)."""

    fused = "fused"
    bm25 = "bm25"
    dense = "dense"
    llm = "llm"


@app.command("abstracts")
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
            help="Judge each abstract sentence against its article: claim_support, "
            "claim_support_lenient; the report names the judge and its measured "
            "accuracy.",
        ),
    ] = False,
    support_judge: Annotated[
        SupportJudgeName,
        typer.Option(
            "--support-judge",
            help="auto: the judge with the best measured accuracy whose model is "
            "installed; checks (no model); hybrid, scored or sampled on --model.",
        ),
    ] = SupportJudgeName.auto,
    support_samples: Annotated[
        int,
        field_option(
            QAOptions,
            "samples",
            "--support-samples",
            help="Judge samples per sentence (majority).",
        ),
    ] = JUDGE_SAMPLES,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    endpoint: EndpointOpt = None,
    endpoints_file: EndpointsFileOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Score generated abstracts: abstractiveness vs the human abstract, ROUGE-L, recall."""
    settings = settings_for(model, base_url, endpoint, endpoints_file)
    present(
        lambda _: _score_abstracts(
            settings,
            results,
            reference=reference,
            against=against,
            plot=plot,
            kb=kb,
            resamples=resamples,
            scorers=scorer or [],
            support=support,
            support_judge=support_judge,
            support_samples=support_samples,
        ),
        render.abstract_eval_report,
        json_out=json_out,
    )


async def _score_abstracts(
    settings: Settings,
    results: Path,
    *,
    reference: list[str] | None,
    against: Path | None,
    plot: Path | None,
    kb: Path | None,
    resamples: int,
    scorers: list[str],
    support: bool,
    support_judge: SupportJudgeName,
    support_samples: int,
) -> AbstractsReport:
    """Load the scorer plug-ins, then score the abstracts (their support if asked)."""
    from veriscribe.eval import abstracts as evaluation
    from veriscribe.eval.support import support_checker
    from veriscribe.metrics.scorers import load_scorer_spec

    score = partial(
        evaluation.eval_abstracts,
        results,
        reference=reference,
        against=against,
        plot=plot,
        kb=kb,
        resamples=resamples,
    )
    for spec in scorers:
        load_scorer_spec(spec)
    if not support:
        return await score()
    judge = None if support_judge is SupportJudgeName.auto else support_judge.value
    async with support_checker(
        settings, samples=support_samples, judge=judge
    ) as checker:
        return await score(support=checker)


@app.command("labels")
def eval_labels(
    data: Annotated[Path, typer.Argument(help="BIORC800-format JSON lines.")],
    *,
    labeller: Annotated[
        list[LabellerName] | None,
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
    from veriscribe.eval.plots import label_plot

    settings = settings_for(model, base_url, endpoint, endpoints_file)
    names = tuple(name.value for name in labeller or [LabellerName.classifier])

    async def evaluate(_: None) -> LabelReport:
        report = await evaluation.eval_labels(
            settings, data, labellers=names, limit=limit
        )
        return with_plot(report, plot, lambda r, p: label_plot(r, names, p))

    present(
        evaluate,
        lambda console, report: render.label_report(console, report, names),
        json_out=json_out,
    )


@app.command("qa")
def eval_qa(
    results: Annotated[
        Path,
        typer.Argument(
            help="Checked answers: `ask --json` / `verify --json` output, one or many."
        ),
    ],
    *,
    second_judge: Annotated[
        Path | None,
        typer.Option(
            "--second-judge",
            help="The same answers checked with another judge model: Cohen's kappa.",
        ),
    ] = None,
    plot: PlotOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Score checked answers: claim funnel, coverage by k, VCR, CSR and verdicts."""
    from veriscribe.eval.plots import qa_funnel_plot
    from veriscribe.eval.qa import eval_qa as evaluate

    async def score(_: None) -> QAReport:
        return with_plot(evaluate(results, second=second_judge), plot, qa_funnel_plot)

    present(score, render.qa_eval_report, json_out=json_out)


@app.command("judge")
def eval_judge(
    *,
    corpus: Annotated[
        str | None,
        typer.Option(
            "--corpus",
            "-c",
            help="Build QA pairs from this guideline corpus's sections.",
        ),
    ] = None,
    abstract_pairs: Annotated[
        list[str] | None,
        typer.Option(
            "--abstract-pairs",
            help="Build abstract pairs from these articles (files, directories or "
            "globs; those with an author abstract), instead of --corpus (repeatable).",
        ),
    ] = None,
    sources: Annotated[
        int,
        typer.Option(
            "--sources",
            min=1,
            help="--corpus: source sentences sampled; each gives up to three pairs.",
        ),
    ] = 40,
    per_article: Annotated[
        int,
        typer.Option(
            "--per-article",
            min=1,
            help="--abstract-pairs: author sentences per article (two pairs each).",
        ),
    ] = 4,
    articles: Annotated[
        int | None,
        typer.Option(
            "--articles", min=1, help="--abstract-pairs: only the first N articles."
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Sampling seed.")] = 0,
    method: Annotated[
        list[JudgeName] | None,
        typer.Option(
            "--method",
            help="scored, sampled (both), checks, hybrid (--abstract-pairs); repeat "
            "the option. Default: scored (--corpus), checks and hybrid (abstracts).",
        ),
    ] = None,
    samples: Annotated[
        int,
        field_option(QAOptions, "samples", help="Samples per judgement."),
    ] = JUDGE_SAMPLES,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    endpoint: EndpointOpt = None,
    endpoints_file: EndpointsFileOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Measure support judges on labelled pairs from a corpus or from abstracts."""
    if (corpus is None) == (abstract_pairs is None):
        fail("give one of --corpus NAME and --abstract-pairs ARTICLES")
    settings = settings_for(model, base_url, endpoint, endpoints_file)
    if abstract_pairs is not None:
        _judge_abstract_pairs(
            settings,
            abstract_pairs,
            per_article=per_article,
            articles=articles,
            seed=seed,
            method=method,
            samples=samples,
            json_out=json_out,
        )
    elif corpus is not None:
        _judge_qa_pairs(
            settings,
            corpus,
            sources=sources,
            seed=seed,
            method=method,
            samples=samples,
            json_out=json_out,
        )


def _judge_abstract_pairs(
    settings: Settings,
    inputs: list[str],
    *,
    per_article: int,
    articles: int | None,
    seed: int,
    method: list[JudgeName] | None,
    samples: int,
    json_out: bool,
) -> None:
    """Measure the judges (checks and hybrid by default) on abstracts' pairs."""
    from veriscribe.eval import judge as evaluation

    chosen: list[AbstractJudgeMethod] = [
        name.value for name in method or [JudgeName.checks, JudgeName.hybrid]
    ]
    present(
        lambda _: evaluation.eval_abstract_judge(
            settings,
            inputs,
            per_article=per_article,
            articles=articles,
            seed=seed,
            methods=chosen,
            samples=samples,
        ),
        render.abstract_judge_report,
        json_out=json_out,
    )


def _judge_qa_pairs(
    settings: Settings,
    corpus: str,
    *,
    sources: int,
    seed: int,
    method: list[JudgeName] | None,
    samples: int,
    json_out: bool,
) -> None:
    """Measure the answer judges (scored by default) on a corpus's pairs."""
    from veriscribe.eval import judge as evaluation

    methods: list[JudgeMethod] = []
    for name in method or [JudgeName.scored]:
        if name.value not in ("scored", "sampled"):
            fail(f"--method {name.value} judges abstract pairs only")
        methods.append(name.value)  # type: ignore[arg-type]
    present(
        lambda _: evaluation.eval_judge(
            settings,
            corpus,
            sources=sources,
            seed=seed,
            methods=methods,
            samples=samples,
        ),
        render.judge_eval_report,
        json_out=json_out,
    )


@app.command("make-questions")
def eval_make_questions(
    *,
    corpus: CorpusOpt,
    n: Annotated[int, typer.Option("--n", min=1, help="How many questions.")],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="JSON lines in the cpgQA layout.")
    ],
    styles: Annotated[
        str,
        typer.Option(
            "--styles",
            help="Comma-separated: lookup, scenario, sdm (dealt in turn).",
        ),
    ] = "lookup,scenario,sdm",
    seed: Annotated[int, typer.Option("--seed", help="Sampling seed.")] = 0,
    min_words: Annotated[
        int,
        typer.Option(
            "--min-words", min=1, help="Skip sections with fewer words than this."
        ),
    ] = 40,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    endpoint: EndpointOpt = None,
    endpoints_file: EndpointsFileOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Write a question set from sampled sections, gated; run again to resume."""
    from veriscribe.eval.questions import make_questions, parse_styles

    settings = settings_for(model, base_url, endpoint, endpoints_file)
    chosen = guarded(lambda: parse_styles(styles))
    present(
        lambda on_item: make_questions(
            settings,
            corpus,
            n,
            out,
            styles=chosen,
            seed=seed,
            min_words=min_words,
            on_item=on_item,
        ),
        render.questions_report,
        json_out=json_out,
        live=render.question_progress,
    )


@app.command("retrieval")
def eval_retrieval(
    *,
    corpus: CorpusOpt,
    questions: Annotated[
        Path,
        typer.Option(
            "--questions", help="JSON lines with `question` and `passage_id`."
        ),
    ],
    retriever: Annotated[
        list[RetrieverName] | None,
        typer.Option(
            "--retriever",
            help="fused, bm25, dense and/or llm (repeatable; default fused).",
        ),
    ] = None,
    cut_offs: Annotated[
        str,
        typer.Option(
            "--cut-offs", help="The k of hit rate at k: sections read, comma-separated."
        ),
    ] = "1,3,5,10",
    cut_offs_k: Annotated[str | None, old_name("--k", "--cut-offs")] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", help="Only the first N questions.")
    ] = None,
    model: ModelOpt = None,
    base_url: BaseUrlOpt = None,
    endpoint: EndpointOpt = None,
    endpoints_file: EndpointsFileOpt = None,
    plot: PlotOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Measure retrieval hit rate at k on a question set with gold sections."""
    from veriscribe.eval.plots import retrieval_plot
    from veriscribe.eval.retrieval import eval_retrieval as evaluate

    methods: list[Retriever] = [
        name.value for name in retriever or [RetrieverName.fused]
    ]
    ks = parse_cut_offs(renamed(cut_offs, cut_offs_k, "--k", "--cut-offs"))
    settings = settings_for(model, base_url, endpoint, endpoints_file)

    async def measure(_: None) -> RetrievalReport:
        report = await evaluate(
            settings,
            corpus,
            questions,
            retrievers=methods,
            ks=ks,
            limit=limit,
        )
        return with_plot(report, plot, retrieval_plot)

    present(measure, render.retrieval_report, json_out=json_out)


def parse_cut_offs(text: str) -> list[int]:
    """Return the sorted cut-offs of ``--cut-offs 1,3,5``; a bad list ends the command.

    A cut-off is a number of sections read: within the bounds of the options' ``k``.
    """
    try:
        cut_offs = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        fail(f"--cut-offs takes comma-separated numbers, not {text!r}")
    low, high = field_bounds(QAOptions, "k")
    if not cut_offs or cut_offs[0] < low:
        fail(f"--cut-offs needs cut-offs of {low} or more")
    if cut_offs[-1] > high:
        fail(f"--cut-offs takes cut-offs of at most {high}")
    return cut_offs
