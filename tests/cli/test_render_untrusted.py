"""Every render function draws untrusted text as text: no markup, no escape sequence.

Titles, names, ids, section titles, reasons, quotes and model replies are filled with
random Rich markup (tags, unmatched closing tags, hyperlinks, ``conceal``), ANSI and
OSC sequences, C1 and bidirectional controls and emoji codes. Each render function
must not fail, must show the text wherever it shows an ordinary string (its control
characters as visible escapes), and must give no rendered segment a hyperlink, a
concealed or a clickable style.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import io
import pkgutil
import types
from collections.abc import Callable
from functools import cache
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from pydantic import BaseModel
from rich.console import Console
from rich.segment import Segment

from veriscribe.cli import render
from veriscribe.cli.render import (
    abstracts,
    answers,
    batch,
    corpus,
    doctor,
    evaluate,
    shared,
)
from veriscribe.cli.terminal import SafeConsole, sanitize
from veriscribe.eval.reports import (
    AbstractJudgeReport,
    AbstractsReport,
    BaselineSummary,
    JudgeReport,
    LabelReport,
    MetricSummary,
    QAReport,
    QuestionSetReport,
    RetrievalReport,
)
from veriscribe.events import (
    AnswerWritten,
    ClaimJudged,
    ClaimsFound,
    FacetsDivided,
    FacetState,
    FacetSummarised,
    LeadTaken,
    SectionsChosen,
)
from veriscribe.results import (
    AbstractResult,
    BatchSummary,
    CheckedAnswer,
    CorpusDetails,
    CorpusListing,
    DoctorReport,
    EndpointReport,
    IngestReport,
    QuestionSetSummary,
    RunListing,
    RunSummary,
    SourceRead,
)
from veriscribe.service.batch import BatchProgress

# What input can hold that a terminal or Rich would act on. No newline, tab or
# underscore: those are laid out or reworded, not interpreted.
NASTY = [
    "[/]",
    "[/INST]",
    "[/bold]",
    "[bold red]",
    "[link=https://evil.example/x]",
    "[/link]",
    "[conceal]",
    "[/conceal]",
    "[blink]",
    "[reverse]",
    "[@click=app.bell]",
    "[#ff0000]",
    "\\[",
    "\\",
    ":smile:",
    ":warning:",
    "{detail}",
    "%s",
    "\x1b[2J",
    "\x1b[31m",
    "\x1b[8m",
    "\x1b]8;;https://evil.example/\x1b\\",
    "\x1b]0;owned\x07",
    "\x9b31m",
    "\x9d8;;x\x9c",
    "\x07",
    "\x00",
    "\x7f",
    "\r",
    "\u202e",
    "\u202a",
    "\u202d",
    "\u2066",
    "\u2067",
    "\u2069",
    "\u200e",
    "\u200f",
    "\u061c",
    "é",
    "漢字",
    "stroke",
    " ",
]
_TAG = st.from_regex(r"\A\[/?[a-z@#][a-z0-9 =:/.#@-]{0,12}\]\Z")
_WORD = st.text(alphabet="abcXYZ019 []/=:@#\\", max_size=6)
FRAGMENTS = st.lists(
    st.one_of(st.sampled_from(NASTY), _TAG, _WORD), min_size=1, max_size=10
)
# Delimited, so that one occurrence cannot run into the next.
UNTRUSTED = FRAGMENTS.map(lambda parts: "⟪" + "".join(parts) + "⟫")
MARKER = "⟪plain⟫"

WIDTH = 4000
"""Wide enough that nothing wraps: each occurrence is on one line."""


# ----------------------------------------------------------------------- the inputs


def fill(kind: Any, text: str) -> Any:
    """Return a value of type ``kind`` with ``text`` in every string."""
    origin, args = get_origin(kind), get_args(kind)
    if kind is str or kind is Any:
        return text
    if origin is Annotated:
        return fill(args[0], text)
    if kind is bool:
        return True
    if kind is int:
        return 3
    if kind is float:
        return 1.5
    if origin is Literal:
        return args[0]
    if origin in (Union, types.UnionType):
        return fill(next(a for a in args if a is not type(None)), text)
    if origin is list:
        return [fill(args[0], text)]
    if origin is dict:
        return {fill(args[0], text): fill(args[1], text)}
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        return kind.model_validate(
            {
                name: fill(field.annotation, text)
                for name, field in kind.model_fields.items()
            }
        )
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        hints = get_type_hints(kind)
        return kind(
            **{f.name: fill(hints[f.name], text) for f in dataclasses.fields(kind)}
        )
    raise TypeError(f"no value for {kind!r}")


def answer(s: str) -> CheckedAnswer:
    """Return a checked answer with ``s`` in every string, its funnel counts real."""
    stages = ("sentences", "claims", "covered", "verbatim", "lenient", "strict")
    funnel = {stage: 2 for stage in (*stages, "recovered", "not_checked")}
    return fill(CheckedAnswer, s).model_copy(
        update={"funnel": funnel, "metrics": {"ccr": 0.5, "scr": None, s: s}}
    )


def eval_abstracts(s: str) -> AbstractsReport:
    report: AbstractsReport = fill(AbstractsReport, s)
    report.metrics["novelty"] = MetricSummary(n=0, mean=None, better=s, note=s)
    return report


def baseline(s: str) -> BaselineSummary:
    return fill(BaselineSummary, s)


def labels(s: str) -> LabelReport:
    return fill(LabelReport, s)


def retrieval(s: str) -> RetrievalReport:
    report: RetrievalReport = fill(RetrievalReport, s)
    for row in report.retrievers.values():
        row.hit_rates = {f"hit_rate_at_{k}": 0.5 for k in report.ks}
    return report


def eval_qa(s: str) -> QAReport:
    return fill(QAReport, s)


def questions(s: str) -> QuestionSetReport:
    return fill(QuestionSetReport, s)


def judge(s: str) -> JudgeReport:
    return fill(JudgeReport, s)


def abstract_judge(s: str) -> AbstractJudgeReport:
    report: AbstractJudgeReport = fill(AbstractJudgeReport, s)
    for found in report.methods.values():
        found.by_kind = {"test": {s: 0.5}}
    return report


# ------------------------------------------------------------------ the render calls


def abstract_progress(console: Console, s: str) -> None:
    view = abstracts.AbstractProgress(console, s)
    view.event(FacetsDivided(paragraphs={s: 2}, fallbacks=[s]))
    view.event(FacetSummarised(facet=FacetState(name=s, status="ok")))
    view.event(LeadTaken(facets=[FacetState(name=s, status="lead300")], fallbacks=[s]))
    console.print(view._render())


def batch_view(console: Console, s: str) -> None:
    for stage in ("registering", "working", "stopping"):
        view = batch.BatchView(console)
        view.progress = BatchProgress(s, total=4, done=1, failed=1, stage=stage)
        console.print(view._render())


def count_progress(console: Console, s: str) -> None:
    # Its description is the code's own; the counts are numbers.
    with evaluate.CountProgress(console, "naive baseline") as view:
        view(1, 2)


def ingest_progress(console: Console, s: str) -> None:
    with corpus.ingest_progress(console) as update:
        update(types.SimpleNamespace(stage=s, total=2, done=1, detail=s))
        update(types.SimpleNamespace(stage="store", total=0, done=0, detail=s))


def qa_progress(console: Console, s: str) -> None:
    with answers.qa_progress(console, s) as update:
        update(SectionsChosen(read_set=[s], method=s))
        update(AnswerWritten(sentences=[s], not_found=False, read_set=[s]))
        update(ClaimsFound(is_claim=[True, False]))
        update(ClaimJudged(sentence=0, verdict=None))


def question_progress(console: Console, s: str) -> None:
    with evaluate.question_progress(console) as update:
        update({"question": s}, 2)
        update({"question": None}, 2)


def answer_set_progress(console: Console, s: str) -> None:
    with answers.answer_set_progress(console) as update:
        update(answer(s), 1, 2)


Call = Callable[[Console, str], None]

SHOWS_TEXT: dict[str, Call] = {
    "error_line": lambda c, s: shared.error_line(c, s),
    "warning_line": lambda c, s: shared.warning_line(c, s),
    "doctor_report": lambda c, s: doctor.doctor_report(c, fill(DoctorReport, s)),
    "AbstractProgress": abstract_progress,
    "abstract_result": lambda c, s: abstracts.abstract_result(
        c, fill(AbstractResult, s)
    ),
    "sentence_lines": lambda c, s: c.print(
        abstracts.sentence_lines(fill(AbstractResult, s), evidence=True)
    ),
    "BatchView": batch_view,
    "batch_line": lambda c, s: batch.batch_line(c, fill(BatchSummary, s), errors=c),
    "batch_summary": lambda c, s: batch.batch_summary(c, fill(BatchSummary, s)),
    "run_details": lambda c, s: batch.run_details(c, fill(RunSummary, s)),
    "endpoints_table": lambda c, s: c.print(
        batch.endpoints_table([fill(EndpointReport, s)])
    ),
    "runs_table": lambda c, s: batch.runs_table(c, [fill(RunListing, s)]),
    "abstract_eval_report": lambda c, s: evaluate.abstract_eval_report(
        c, eval_abstracts(s)
    ),
    "baseline_summary": lambda c, s: evaluate.baseline_summary(c, baseline(s)),
    "ingest_progress": ingest_progress,
    "ingest_report": lambda c, s: corpus.ingest_report(
        c,
        fill(IngestReport, s).model_copy(
            update={"skipped": [{"path": s, "reason": s}]}
        ),
        errors=c,
    ),
    "corpora_table": lambda c, s: corpus.corpora_table(c, [fill(CorpusListing, s)]),
    "corpus_details": lambda c, s: corpus.corpus_details(c, fill(CorpusDetails, s)),
    "qa_result": lambda c, s: answers.qa_result(c, answer(s), errors=c),
    "chat_banner": lambda c, s: answers.chat_banner(c, s, s, 2),
    "chat_sources": lambda c, s: answers.chat_sources(c, [fill(SourceRead, s)]),
    "chat_goodbye": lambda c, s: answers.chat_goodbye(c, s),
    "label_report": lambda c, s: evaluate.label_report(
        c, labels(s), ("classifier", "llm")
    ),
    "retrieval_report": lambda c, s: evaluate.retrieval_report(c, retrieval(s)),
    "qa_eval_report": lambda c, s: evaluate.qa_eval_report(c, eval_qa(s)),
    "questions_report": lambda c, s: evaluate.questions_report(c, questions(s)),
    "answer_set_report": lambda c, s: answers.answer_set_report(
        c, fill(QuestionSetSummary, s)
    ),
    "judge_eval_report": lambda c, s: evaluate.judge_eval_report(c, judge(s)),
    "abstract_judge_report": lambda c, s: evaluate.abstract_judge_report(
        c, abstract_judge(s)
    ),
}
"""Render calls that show the untrusted text they are given."""

SHOWS_NO_TEXT: dict[str, Call] = {
    "CountProgress": count_progress,
    "qa_progress": qa_progress,
    "question_progress": question_progress,
    "answer_set_progress": answer_set_progress,
}
"""Render calls that take untrusted text but show none of it once done (live views
that vanish, or counts): they must still not fail on it."""

NOT_DRAWING = {
    "print_json",  # JSON on stdout: see test_json_output_escapes_what_a_terminal_acts_on
    "duration",
    "batch_status",
    "compact",
    "funnel_line",
    "chat_prompt",
}
"""Functions that draw nothing on a console: they format numbers, or write JSON."""


# ---------------------------------------------------------------------- the checks


def draw(call: Call, text: str) -> tuple[str, list[Segment]]:
    """Run a render call on a safe console; return its output and its segments."""
    out = io.StringIO()
    console = SafeConsole(file=out, width=WIDTH, record=True, color_system=None)
    call(console, text)
    return out.getvalue(), list(console._record_buffer)


# Rich's Text drops these five outright (the console's strings show them as escapes):
# either way they do nothing.
_DROPPED = ("\x07", "\x08", "\x0b", "\x0c", "\r")


def visible(text: str) -> str:
    """Return what a terminal shows of untrusted text, layout (spaces, wraps) left out.

    A table's title and caption wrap at the table's width, wherever the text is.
    """
    for char in _DROPPED:
        text = text.replace(char, "")
    return "".join(sanitize(text).split())


def shown(output: str) -> str:
    """Return the output in the form :func:`visible` gives."""
    for char in _DROPPED:
        output = output.replace(sanitize(char), "")
    return "".join(output.split())


def assert_not_interpreted(output: str, segments: list[Segment]) -> None:
    for char in ("\x1b", "\x9b", "\x9c", "\x9d", "\x07", "\x00", "\r", "\u202e"):
        assert char not in output, f"{char!r} reached the terminal"
    assert "\u2066" not in output and "\u200f" not in output
    for segment in segments:
        style = segment.style
        if style is None or segment.control:
            continue
        assert not style.link, f"a hyperlink in {segment.text!r}"
        assert not style.conceal, f"concealed text {segment.text!r}"
        assert not style.blink and not style.reverse, f"styled by input: {segment!r}"
        assert not style.meta, f"a clickable action in {segment.text!r}"


def test_every_render_function_is_checked() -> None:
    modules = [
        importlib.import_module(f"{render.__name__}.{found.name}")
        for found in pkgutil.iter_modules(render.__path__)
    ]
    drawn = {
        name
        for module in modules
        for name, value in vars(module).items()
        if not name.startswith("_")
        and (inspect.isfunction(value) or inspect.isclass(value))
        and value.__module__ == module.__name__
    }
    checked = set(SHOWS_TEXT) | set(SHOWS_NO_TEXT) | NOT_DRAWING
    assert drawn - checked == set(), "a render function the fuzz test does not call"
    assert checked - drawn == set()


@cache
def plain_count(name: str) -> int:
    """Return how often a render call shows an ordinary string given to it."""
    output, _ = draw(SHOWS_TEXT[name], MARKER)
    return output.count(MARKER)


@pytest.mark.parametrize("name", sorted(SHOWS_TEXT))
def test_plain_text_is_shown(name: str) -> None:
    assert plain_count(name) > 0


@pytest.mark.parametrize("name", sorted(SHOWS_TEXT))
@hypothesis_settings(max_examples=30, deadline=None)
@given(text=UNTRUSTED)
def test_untrusted_text_is_shown_as_text(name: str, text: str) -> None:
    output, segments = draw(SHOWS_TEXT[name], text)
    assert_not_interpreted(output, segments)
    # Wherever an ordinary string shows, the untrusted one shows, escapes visible.
    assert shown(output).count(visible(text)) == plain_count(name), output


@pytest.mark.parametrize("name", sorted(SHOWS_NO_TEXT))
@hypothesis_settings(max_examples=20, deadline=None)
@given(text=UNTRUSTED)
def test_untrusted_text_in_live_views_does_not_fail(name: str, text: str) -> None:
    output, segments = draw(SHOWS_NO_TEXT[name], text)
    assert_not_interpreted(output, segments)


@given(text=UNTRUSTED)
def test_markup_asked_for_is_still_text(text: str) -> None:
    out = io.StringIO()
    console = SafeConsole(file=out, width=WIDTH, color_system=None)
    console.print(text, markup=True, emoji=True)
    assert out.getvalue() == sanitize(text) + "\n"


def test_the_codes_own_styles_are_kept() -> None:
    console = SafeConsole(
        file=io.StringIO(), width=120, record=True, color_system="truecolor"
    )
    doctor.doctor_report(console, fill(DoctorReport, "[bold]x[/]"))
    styles = {str(s.style) for s in console._record_buffer if s.text == "ok"}
    assert styles == {"green"}
    text = console.export_text()
    assert "round trip: ok" in text and "[bold]x[/]" in text
