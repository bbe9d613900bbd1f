"""Commands of the cited-QA job: corpus, ask, chat, verify, eval qa/retrieval."""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, NoReturn, cast

import typer

from veriscribe.cli import render
from veriscribe.cli.common import (
    BaseUrlOpt,
    EndpointOpt,
    EndpointsFileOpt,
    JsonOpt,
    ModelOpt,
    PlotOpt,
    guarded,
    json_or_live,
    run,
    settings_for,
)
from veriscribe.errors import InputError, VeriscribeError
from veriscribe.nodes.qa.state import (
    Citations,
    CiteBy,
    JudgeMethod,
    QAOptions,
    Retriever,
    Wording,
)
from veriscribe.service import corpora
from veriscribe.service import qa as qa_service
from veriscribe.settings import Settings

CorpusOpt = Annotated[
    str, typer.Option("--corpus", "-c", help="Name of the guideline corpus.")
]
RetrieverOpt = Annotated[
    Retriever,
    typer.Option("--retriever", help="How sections are chosen: llm, bm25 or dense."),
]
CitationsOpt = Annotated[
    Citations,
    typer.Option(
        "--citations",
        help="constrained: quotes can only be sentences of the sections read; "
        "free: the model writes its quotes.",
    ),
]
CiteByOpt = Annotated[
    CiteBy,
    typer.Option(
        "--cite-by",
        help="Constrained citations name a sentence by its text (quote) or id (id).",
    ),
]
WordingOpt = Annotated[
    Wording,
    typer.Option(
        "--wording",
        help="Constrained answers: own, the model words each sentence from its quote; "
        "source, each sentence is the cited guideline sentence itself.",
    ),
]
JudgeMethodOpt = Annotated[
    JudgeMethod,
    typer.Option(
        "--judge-method",
        help="scored: lexical lane, then a yes/no question scored by probability; "
        "sampled: majority of sampled four-way verdicts.",
    ),
]
NoJudgeOpt = Annotated[
    bool,
    typer.Option(
        "--no-judge",
        help="Stop after the deterministic checks: no support judge, no recovery.",
    ),
]


@dataclass
class GivenAnswer:
    """An answer to verify, as read from a file or standard input."""

    answer: str
    question: str = ""
    read_set: list[str] | None = None


def read_answer(source: str) -> GivenAnswer:
    """Read the answer to verify: text with markers, or the JSON of ``ask --json``."""
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text("utf-8")
    except OSError as exc:
        raise_input(f"{source}: cannot be read ({exc.strerror})")
    except UnicodeDecodeError as exc:
        raise_input(f"{source}: not UTF-8 text ({exc.reason})")
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("answer"), str):
            read_set = data.get("read_set")
            return GivenAnswer(
                answer=data["answer"],
                question=str(data.get("question") or ""),
                read_set=[str(k) for k in read_set]
                if isinstance(read_set, list)
                else None,
            )
    return GivenAnswer(answer=text)


def raise_input(message: str) -> NoReturn:
    """Print one error line and exit 1."""
    render.error_line(message)
    raise typer.Exit(1)


async def chat_loop(
    settings: Settings,
    corpus: str,
    session_id: str | None,
    options: QAOptions,
    model: str | None,
) -> None:
    """Run the chat: read questions, answer and check each, until /quit or EOF."""
    async with qa_service.ChatSession.open(
        settings, corpus, session_id=session_id, options=options, model=model
    ) as session:
        render.chat_banner(corpus, session.session_id, len(await session.history()))
        while True:
            line = await asyncio.to_thread(_read_line)
            if line is None:
                break
            text = line.strip()
            if not text:
                continue
            if text in ("/quit", "/exit", "/q"):
                break
            if text == "/sources":
                render.chat_sources(await session.sources())
                continue
            if text.startswith("/"):
                render.error_line(f"unknown command {text}: use /sources or /quit")
                continue
            try:
                with render.qa_progress() as show:
                    result = await session.ask(text, on_stage=show)
            except (InputError, VeriscribeError) as exc:
                render.error_line(exc.user_message)
                continue
            render.qa_result(result)
        render.chat_goodbye(session.session_id)


def _read_line() -> str | None:
    try:
        return input(render.chat_prompt())
    except EOFError:
        return None


def register(app: typer.Typer, corpus_app: typer.Typer, eval_app: typer.Typer) -> None:
    """Add the QA commands to the application."""
    # Imported here: app.py imports this module and calls register() once its own
    # helpers exist.

    @corpus_app.command("add")
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
        """Add guideline documents to a corpus and summarise their sections."""
        settings = settings_for(model, base_url, endpoint, endpoints_file)
        if json_out:
            report = run(corpora.add_corpus(settings, name, paths, model=model))
            render.print_json(report.as_dict())
            return
        with render.ingest_progress() as show:
            report = run(
                corpora.add_corpus(settings, name, paths, model=model, on_progress=show)
            )
        render.ingest_report(report.as_dict())

    @corpus_app.command("list")
    def corpus_list(*, json_out: JsonOpt = False) -> None:
        """List corpora."""
        rows = [c.as_dict() for c in run(corpora.list_corpora(settings_for()))]
        if json_out:
            render.print_json(rows)
        else:
            render.corpora_table(rows)

    @corpus_app.command("show")
    def corpus_show(
        name: Annotated[str, typer.Argument(help="Corpus name.")],
        *,
        json_out: JsonOpt = False,
    ) -> None:
        """Show a corpus's documents and sections."""
        data = run(corpora.show_corpus(settings_for(), name))
        if json_out:
            render.print_json(data)
        else:
            render.corpus_details(data)

    @app.command()
    def ask(
        question: Annotated[
            str | None,
            typer.Argument(help="The clinical question (or --questions FILE)."),
        ] = None,
        *,
        corpus: CorpusOpt,
        questions: Annotated[
            Path | None,
            typer.Option(
                "--questions",
                help="Answer a question set (JSON lines, cpgQA layout) into --out.",
            ),
        ] = None,
        out: Annotated[
            Path | None,
            typer.Option("--out", "-o", help="With --questions: one result per line."),
        ] = None,
        limit: Annotated[
            int | None,
            typer.Option("--limit", min=1, help="With --questions: the first N only."),
        ] = None,
        retriever: RetrieverOpt = "llm",
        k: Annotated[
            int, typer.Option("--k", min=1, help="Sections to read (llm: at most).")
        ] = 3,
        candidates: Annotated[
            int,
            typer.Option(
                "--candidates",
                min=0,
                help="Summaries the llm retriever chooses from (0 = all that fit).",
            ),
        ] = 40,
        no_judge: NoJudgeOpt = False,
        citations: CitationsOpt = "constrained",
        cite_by: CiteByOpt = "quote",
        wording: WordingOpt = "source",
        judge_method: JudgeMethodOpt = "scored",
        model: ModelOpt = None,
        base_url: BaseUrlOpt = None,
        endpoint: EndpointOpt = None,
        endpoints_file: EndpointsFileOpt = None,
        json_out: JsonOpt = False,
    ) -> None:
        """Answer a question from a guideline corpus with checked verbatim citations."""
        settings = settings_for(model, base_url, endpoint, endpoints_file)
        options = QAOptions(
            retriever=retriever,
            k=k,
            candidates=candidates,
            judge=not no_judge,
            citations=citations,
            cite_by=cite_by,
            wording=wording,
            judge_method=judge_method,
        )
        if questions is not None or question is None:
            if question is not None or questions is None or out is None:
                render.error_line(
                    "give either a QUESTION, or --questions FILE with --out FILE"
                )
                raise typer.Exit(1)

            def answer_all(on_answer: Any) -> dict[str, Any]:
                return run(
                    qa_service.ask_questions(
                        settings,
                        corpus,
                        questions,
                        out,
                        options=options,
                        model=model,
                        limit=limit,
                        on_answer=on_answer,
                    )
                )

            json_or_live(
                json_out,
                answer_all,
                render.answer_set_progress,
                render.answer_set_report,
            )
            return
        if json_out:
            render.print_json(
                run(
                    qa_service.ask(
                        settings, corpus, question, options=options, model=model
                    )
                )
            )
            return
        with render.qa_progress() as show:
            result = run(
                qa_service.ask(
                    settings,
                    corpus,
                    question,
                    options=options,
                    model=model,
                    on_stage=show,
                )
            )
        render.qa_result(result)

    @app.command()
    def chat(
        *,
        corpus: CorpusOpt,
        session: Annotated[
            str | None,
            typer.Option("--session", help="Resume the chat with this session id."),
        ] = None,
        retriever: RetrieverOpt = "llm",
        k: Annotated[int, typer.Option("--k", min=1, help="Sections to read.")] = 3,
        citations: CitationsOpt = "constrained",
        cite_by: CiteByOpt = "quote",
        wording: WordingOpt = "source",
        judge_method: JudgeMethodOpt = "scored",
        model: ModelOpt = None,
        base_url: BaseUrlOpt = None,
        endpoint: EndpointOpt = None,
        endpoints_file: EndpointsFileOpt = None,
    ) -> None:
        """Chat with a guideline corpus; every claim of every answer is checked."""
        settings = settings_for(model, base_url, endpoint, endpoints_file)
        options = QAOptions(
            retriever=retriever,
            k=k,
            citations=citations,
            cite_by=cite_by,
            wording=wording,
            judge_method=judge_method,
        )
        run(chat_loop(settings, corpus, session, options, model))

    @app.command()
    def verify(
        answer: Annotated[
            str,
            typer.Argument(
                help="File holding the answer (text with citation markers, or the "
                "JSON of `ask --json`), or - for standard input."
            ),
        ],
        *,
        corpus: CorpusOpt,
        question: Annotated[
            str | None,
            typer.Option("--question", help="The question the answer answers."),
        ] = None,
        k: Annotated[
            int,
            typer.Option(
                "--k", min=0, help="Attribution window (claims a marker credits)."
            ),
        ] = 1,
        no_judge: NoJudgeOpt = False,
        all_claims: Annotated[
            bool,
            typer.Option(
                "--all-claims",
                help="Treat every sentence as a claim (no claim filter model call).",
            ),
        ] = False,
        judge_method: JudgeMethodOpt = "scored",
        model: ModelOpt = None,
        base_url: BaseUrlOpt = None,
        endpoint: EndpointOpt = None,
        endpoints_file: EndpointsFileOpt = None,
        json_out: JsonOpt = False,
    ) -> None:
        """Check an answer that carries {{cite:doc:section|quote}} markers."""
        settings = settings_for(model, base_url, endpoint, endpoints_file)
        given = read_answer(answer)

        def check(on_stage: qa_service.OnStage | None = None) -> dict[str, Any]:
            return run(
                qa_service.verify_answer(
                    given.answer,
                    corpus=corpus,
                    question=question if question is not None else given.question,
                    k=k,
                    judge=not no_judge,
                    all_claims=all_claims,
                    judge_method=judge_method,
                    read_set=given.read_set,
                    model=model,
                    settings=settings,
                    on_stage=on_stage,
                )
            )

        if json_out:
            render.print_json(check())
            return
        with render.qa_progress("finding the claims") as show:
            result = check(show)
        render.qa_result(result)

    @eval_app.command("qa")
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
        from veriscribe.eval.qa import eval_qa as evaluate

        report = guarded(lambda: evaluate(results, second=second_judge))
        if plot is not None:
            from veriscribe.eval.plots import qa_funnel_plot

            guarded(lambda: qa_funnel_plot(report, plot))
            report["plot"] = str(plot)
        if json_out:
            render.print_json(report)
        else:
            render.qa_eval_report(report)

    @eval_app.command("judge")
    def eval_judge(
        *,
        corpus: CorpusOpt,
        sources: Annotated[
            int,
            typer.Option(
                "--sources",
                min=1,
                help="Source sentences sampled; each gives up to three labelled pairs.",
            ),
        ] = 40,
        seed: Annotated[int, typer.Option("--seed", help="Sampling seed.")] = 0,
        method: Annotated[
            list[str] | None,
            typer.Option("--method", help="scored and/or sampled (repeat the option)."),
        ] = None,
        samples: Annotated[
            int, typer.Option("--samples", min=1, help="Samples per judgement.")
        ] = 3,
        model: ModelOpt = None,
        base_url: BaseUrlOpt = None,
        endpoint: EndpointOpt = None,
        endpoints_file: EndpointsFileOpt = None,
        json_out: JsonOpt = False,
    ) -> None:
        """Measure support judges on labelled claim/source pairs built from a corpus."""
        from veriscribe.eval.judge import eval_judge as evaluate

        methods = method or ["scored"]
        if unknown := [m for m in methods if m not in ("scored", "sampled")]:
            render.error_line(f"--method takes scored or sampled, not {unknown[0]!r}")
            raise typer.Exit(1)
        settings = settings_for(model, base_url, endpoint, endpoints_file)
        report = run(
            evaluate(
                settings,
                corpus,
                sources=sources,
                seed=seed,
                methods=tuple(cast(JudgeMethod, m) for m in methods),
                samples=samples,
                model=model,
            )
        )
        if json_out:
            render.print_json(report)
        else:
            render.judge_eval_report(report)

    @eval_app.command("make-questions")
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

        def make(on_item: Any) -> dict[str, Any]:
            return run(
                make_questions(
                    settings,
                    corpus,
                    n,
                    out,
                    styles=chosen,
                    seed=seed,
                    min_words=min_words,
                    model=model,
                    on_item=on_item,
                )
            )

        json_or_live(json_out, make, render.question_progress, render.questions_report)

    @eval_app.command("retrieval")
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
            list[str] | None,
            typer.Option("--retriever", help="bm25, dense and/or llm (repeatable)."),
        ] = None,
        k: Annotated[
            str, typer.Option("--k", help="Cut-offs, comma-separated.")
        ] = "1,3,5,10",
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
        from veriscribe.eval.retrieval import eval_retrieval as evaluate

        methods = retriever or ["bm25"]
        for method in methods:
            if method not in ("bm25", "dense", "llm"):
                render.error_line(
                    f"--retriever must be bm25, dense or llm, not {method!r}"
                )
                raise typer.Exit(1)
        try:
            cut_offs = sorted({int(part) for part in k.split(",") if part.strip()})
        except ValueError:
            render.error_line(f"--k takes comma-separated numbers, not {k!r}")
            raise typer.Exit(1) from None
        if not cut_offs or cut_offs[0] < 1:
            render.error_line("--k needs cut-offs of 1 or more")
            raise typer.Exit(1)
        settings = settings_for(model, base_url, endpoint, endpoints_file)
        report = run(
            evaluate(
                settings,
                corpus,
                questions,
                retrievers=methods,  # type: ignore[arg-type]
                ks=cut_offs,
                limit=limit,
                model=model,
            )
        )
        if plot is not None:
            from veriscribe.eval.plots import retrieval_plot

            guarded(lambda: retrieval_plot(report, plot))
            report["plot"] = str(plot)
        if json_out:
            render.print_json(report)
        else:
            render.retrieval_report(report)
