"""The ``eval`` commands' reports: abstracts, baselines, labels, retrieval, QA, judges."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

from veriscribe.cli.render.shared import _ends_clean, _number, _PlainColumn, duration
from veriscribe.eval.reports import (
    AbstractJudgeReport,
    AbstractsReport,
    BaselineSummary,
    Comparison,
    JudgeReport,
    LabelReport,
    QAReport,
    QuestionSetReport,
    RetrievalReport,
    ScoredResults,
)
from veriscribe.results import UNJUDGED, VERDICTS

if TYPE_CHECKING:
    from veriscribe.nodes.questions import QuestionItem


def _p_value(value: float | None) -> str:
    if value is None:
        return "-"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _metric_digits(metric: str) -> int:
    if metric == "words":
        return 1
    return 2 if metric in ("density", "compression") else 3


_BETTER = {"closer_to_human": "closer to human", "target": "the asked length"}


def abstract_eval_report(console: Console, report: AbstractsReport) -> None:
    """Render `eval abstracts`: metric means vs the human abstract, and a comparison."""
    from rich import box

    title = (
        f"Abstract metrics: {report.results} · {report.scored} of "
        f"{report.items} scored · {report.failed} failed"
    )
    table = Table(title=title, header_style="bold", box=box.SIMPLE_HEAD)
    table.add_column("metric", no_wrap=True)
    table.add_column("n", justify="right")
    table.add_column("generated", justify="right")
    table.add_column("human", justify="right")
    table.add_column("gen - human", justify="right")
    table.add_column("|gen - human|", justify="right")
    table.add_column("better")
    for name, entry in report.metrics.items():
        digits = _metric_digits(name)
        if entry.mean is None and entry.note:
            table.add_row(
                name, "0", Text("absent", style="dim"), "", "", "", entry.better
            )
            continue
        generated = _number(entry.mean, digits)
        if entry.max is not None:
            generated += f" (max {entry.max:.0f})"
        table.add_row(
            name,
            str(entry.n),
            generated,
            _number(entry.human, digits),
            _number(entry.difference, digits, signed=True),
            _number(entry.abs_difference, digits),
            _BETTER.get(entry.better, entry.better),
        )
    console.print(table)
    if report.comparison:
        _comparison_table(console, report.comparison, report.against)
    excluded = report.excluded
    if excluded:
        shown = Table(
            title=f"not scored: {len(excluded)}",
            header_style="bold",
            box=box.SIMPLE_HEAD,
        )
        shown.add_column("id", overflow="fold")
        shown.add_column("reason", overflow="fold")
        for item in excluded[:20]:
            shown.add_row(item.id, item.reason)
        console.print(shown)
        if len(excluded) > 20:
            console.print(f"... and {len(excluded) - 20} more (see --json)")
    for note in report.notes:
        console.print(Text.assemble(("note:", "dim"), f" {note}"), soft_wrap=True)
    support = report.support
    if support:
        accuracy = support.judge_accuracy
        measured = (
            f"measured accuracy {accuracy:.3f} on {support.judge_accuracy_pairs} "
            "held-out abstract pairs"
            if accuracy is not None
            else "accuracy not measured (eval judge --abstract-pairs)"
        )
        console.print(
            f"claim_support: each abstract sentence judged by the {support.judge} "
            f"judge ({measured}) against its {support.evidence_sentences} best "
            "BM25-ranked article sentences",
            highlight=False,
            soft_wrap=True,
        )
        check = support.calibration
        if check is not None and check.sentences:
            console.print(
                f"judge check: {check.fully_supported} of {check.sentences} article "
                "sentences judged fully supported by their own article",
                highlight=False,
            )
    if report.plot:
        console.print(f"plot: {report.plot}", highlight=False)


def _comparison_table(
    console: Console, comparison: Comparison, other: ScoredResults | None
) -> None:
    from rich import box

    table = Table(
        title=(
            f"A = {comparison.a}  vs  B = {comparison.b} · "
            f"{comparison.paired} paired articles · "
            f"{comparison.resamples:,} bootstrap resamples"
        ),
        header_style="bold",
        box=box.SIMPLE_HEAD,
        caption=(
            "Abstractiveness metrics compare |x - human| (lower is closer; A - B < 0: "
            "A is closer to the human abstract); the others compare raw scores. "
            "* p<0.05 ** p<0.01 *** p<0.001 (two-sided)"
        ),
    )
    table.add_column("metric", no_wrap=True)
    table.add_column("test")
    table.add_column("n", justify="right")
    table.add_column("A", justify="right")
    table.add_column("B", justify="right")
    table.add_column("A - B", justify="right")
    table.add_column("95% CI", justify="right")
    table.add_column("p", justify="right")
    table.add_column("", no_wrap=True)
    for name, entry in comparison.metrics.items():
        digits = _metric_digits(name)
        test = "|x - human|" if entry.test == "abs_deviation" else "raw"
        if entry.mean_difference is None:
            table.add_row(name, test, str(entry.n), "", "", "-", "", "", "")
            continue
        table.add_row(
            name,
            test,
            str(entry.n),
            _number(entry.a, digits),
            _number(entry.b, digits),
            _number(entry.mean_difference, digits, signed=True),
            f"[{_number(entry.ci_low, digits)}, {_number(entry.ci_high, digits)}]",
            _p_value(entry.p_value),
            entry.significance or "",
        )
    console.print(table)
    if other is not None and (other.failed or other.excluded):
        console.print(
            f"B: {other.scored} of {other.items} scored · {other.failed} failed",
            highlight=False,
        )


def baseline_summary(console: Console, summary: BaselineSummary) -> None:
    """Render the outcome of a baseline run."""
    usage = summary.usage
    line = (
        f"{summary.baseline} baseline ({summary.model}): {summary.written} "
        f"abstracts, {summary.failed} failed -> {summary.out}"
    )
    if summary.truncated:
        line += f" · {summary.truncated} articles truncated to the context"
    if usage.calls or usage.cached_calls:
        line += (
            f" · {usage.calls} calls ({usage.cached_calls} cached), "
            f"{usage.prompt_tokens:,} prompt + {usage.output_tokens:,} output tokens"
        )
    console.print(line + f" · {duration(summary.seconds)}", highlight=False)
    for failure in summary.failures[:20]:
        console.print(
            Text.assemble(("failed", "red"), f" {failure.source}: {failure.reason}"),
            soft_wrap=True,
        )


class CountProgress:
    """A transient progress bar counting finished items."""

    def __init__(self, console: Console, description: str) -> None:
        self.progress = Progress(
            _PlainColumn(description),
            BarColumn(),
            MofNCompleteColumn(),
            console=console,
            transient=True,
        )
        self.task = self.progress.add_task(description, total=None)

    def __enter__(self) -> CountProgress:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(None, None, None)

    def __call__(self, done: int, total: int) -> None:
        """Show ``done`` of ``total`` items finished (the view is the callback)."""
        self.update(done, total)

    def update(self, done: int, total: int) -> None:
        """Show ``done`` of ``total`` items finished."""
        self.progress.update(self.task, completed=done, total=total)


def label_report(
    console: Console, report: LabelReport, labellers: tuple[str, ...]
) -> None:
    """Render per-label precision, recall and F1 for each labeller."""
    for name in labellers:
        scores = report.scores(name)
        if scores is None:
            continue
        table = Table(
            title=f"{name} labeller: {report.sentences} sentences "
            f"of {report.abstracts} abstracts",
            header_style="bold",
        )
        for column in ("label", "precision", "recall", "f1", "support"):
            table.add_column(column, justify="left" if column == "label" else "right")
        for label, row in sorted(scores.labels.items()):
            table.add_row(
                label,
                f"{row.precision:.3f}",
                f"{row.recall:.3f}",
                f"{row.f1:.3f}",
                str(row.support),
            )
        console.print(table)
        console.print(
            f"micro_f1 {scores.micro_f1:.3f} · macro_f1 {scores.macro_f1:.3f}"
            f" · {scores.seconds} s"
        )
    if report.plot:
        console.print(f"plot: {report.plot}", highlight=False)


def retrieval_report(console: Console, report: RetrievalReport) -> None:
    """Render hit rate at k for each retriever."""
    ks = report.ks
    table = Table(
        title=f"retrieval on {report.corpus}: {report.questions} questions",
        header_style="bold",
    )
    table.add_column("retriever")
    for k in ks:
        table.add_column(f"hit@{k}", justify="right")
    table.add_column("mean sections", justify="right")
    table.add_column("seconds", justify="right")
    for name, row in report.retrievers.items():
        table.add_row(
            name,
            *(f"{row.hit_rates[f'hit_rate_at_{k}']:.3f}" for k in ks),
            f"{row.mean_sections:.1f}",
            str(row.seconds),
        )
    console.print(table)
    if report.plot:
        console.print(f"plot: {report.plot}", highlight=False)


def _share(count: int, total: int) -> str:
    return f"{100 * count / total:.1f}%" if total else "-"


def _rate(value: float | None) -> str:
    """Return a rate as a percentage with one decimal, or "-" when undefined."""
    return "-" if value is None else f"{100 * value:.1f}%"


def qa_eval_report(console: Console, report: QAReport) -> None:
    """Render `eval qa`: the claim funnel, coverage by window, tiers, verdicts."""
    funnel, rates = report.funnel, report.rates
    _funnel_table(console, report)
    console.print(
        f"VCR {_rate(rates.vcr)} of {report.citations} citations · "
        f"CSR strict {_rate(rates.csr_strict)} · CSR lenient {_rate(rates.csr_lenient)}"
        f" (over {funnel.verbatim} claims with a verbatim quote)",
        highlight=False,
    )
    _checks_tables(console, report)
    _gold_table(console, report)
    agreement = report.agreement
    if agreement:
        kappa = agreement.kappa
        console.print(
            f"judge agreement with {agreement.second}: {agreement.pairs} claims "
            f"judged by both, Cohen's kappa "
            f"{'-' if kappa is None else f'{kappa:.3f}'}, observed agreement "
            f"{_rate(agreement.observed_agreement)}"
            + (f" ({agreement.note})" if agreement.note else ""),
            highlight=False,
            soft_wrap=True,
        )
    if report.plot:
        console.print(f"plot: {report.plot}", highlight=False)


def _funnel_table(console: Console, report: QAReport) -> None:
    """Render `eval qa`'s claim funnel: the claims that pass each stage."""
    from rich import box

    funnel = report.funnel
    claims = funnel.claims
    table = Table(
        title=(
            f"Claim funnel: {report.results} · {report.answers} answers · "
            f"{report.not_found} not found · {report.errors} failed"
        ),
        header_style="bold",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("stage")
    table.add_column("claims", justify="right")
    table.add_column("of claims", justify="right")
    stages = [
        ("sentences", funnel.sentences, ""),
        ("claims (filter kept)", claims, _share(claims, claims)),
        ("covered by a citation (CC)", funnel.covered, None),
        ("with a verbatim quote", funnel.verbatim, None),
        ("supported, lenient", funnel.lenient, None),
        ("supported, strict = certified (CCR)", funnel.strict, None),
        ("recovered", funnel.recovered, None),
        ("certified + recovered (SCR)", funnel.strict + funnel.recovered, None),
    ]
    for name, count, shown in stages:
        table.add_row(
            name, str(count), _share(count, claims) if shown is None else shown
        )
    console.print(table)


def _checks_tables(console: Console, report: QAReport) -> None:
    """Render `eval qa`'s coverage by window, verbatim tiers, verdicts and shortfalls."""
    from rich import box

    windows = Table(
        title="citation coverage by attribution window k",
        header_style="bold",
        box=box.SIMPLE_HEAD,
    )
    windows.add_column("k", justify="right")
    windows.add_column("any citation", justify="right")
    windows.add_column("verbatim citations only", justify="right")
    for k, row in report.coverage_by_window.items():
        windows.add_row(k, _rate(row.rate), _rate(row.verbatim_rate))
    console.print(windows)
    tiers = Table(title="verbatim tiers", header_style="bold", box=box.SIMPLE_HEAD)
    tiers.add_column("tier")
    tiers.add_column("citations", justify="right")
    tiers.add_column("share", justify="right")
    for tier, counted in report.tiers.items():
        tiers.add_row(tier, str(counted.count), _rate(counted.share))
    console.print(tiers)
    judged = Table(
        title="verdicts and shortfalls", header_style="bold", box=box.SIMPLE_HEAD
    )
    judged.add_column("verdict / shortfall")
    judged.add_column("claims", justify="right")
    for verdict, count in report.verdicts.items():
        judged.add_row(verdict, str(count))
    for shortfall, count in report.shortfalls.items():
        judged.add_row(f"shortfall: {shortfall}", str(count))
    console.print(judged)


def _gold_table(console: Console, report: QAReport) -> None:
    """Render `eval qa`'s answer figures: words, gold recall and hit, not found."""
    from rich import box

    def show(value: float | None, percent: bool = True) -> str:
        if value is None:
            return "-"
        return f"{100 * value:.1f}%" if percent else f"{value:g}"

    table = Table(
        title="answers against the gold answers",
        header_style="bold",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_column("over", justify="right")
    words = report.answer_words
    over = f"{words.answers} answers given"
    table.add_row("answer words, median", show(words.median, False), over)
    table.add_row("answer words, mean", show(words.mean, False), over)
    table.add_row("not found", show(report.not_found_rate), str(report.answers))
    gold = report.gold
    if gold:
        over = f"{gold.scored} with a gold answer"
        table.add_row("gold recall (mean)", show(gold.gold_recall), over)
        table.add_row("gold hit", show(gold.gold_hit), over)
    scores = report.not_found_scores
    if scores:
        said = scores.not_found_answerable + scores.not_found_unanswerable
        table.add_row("not-found precision", show(scores.precision), f"{said} said")
        table.add_row(
            "not-found recall",
            show(scores.recall),
            f"{scores.unanswerable} unanswerable",
        )
        table.add_row(
            "answerable, wrongly not found",
            show(scores.answerable_rate),
            f"{scores.answerable} answerable",
        )
    console.print(table)


@contextmanager
def question_progress(
    console: Console,
) -> Iterator[Callable[[QuestionItem, int], None]]:
    """Show `eval make-questions` as a progress bar on stderr: kept and dropped so far."""
    progress = Progress(
        SpinnerColumn(),
        _PlainColumn("writing questions"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        _PlainColumn("{task.fields[detail]}", style="dim"),
        console=console,
    )
    counts = {"kept": 0, "dropped": 0}
    task = progress.add_task("questions", total=None, detail="")

    def update(item: QuestionItem, total: int) -> None:
        counts["kept" if item["question"] is not None else "dropped"] += 1
        progress.update(
            task,
            advance=1,
            total=total,
            detail=f"{counts['kept']} kept · {counts['dropped']} dropped",
        )

    with _ends_clean(progress):
        yield update


def questions_report(console: Console, summary: QuestionSetReport) -> None:
    """Summarise a generated question set."""
    state = "resumed" if summary.resumed else "reused" if summary.reused else ""
    console.print(
        f"{summary.kept} questions written to {summary.out} "
        f"({summary.dropped} dropped, {summary.regenerated} regenerated once) "
        f"from {summary.documents} documents of {summary.corpus}"
        + (f" · {state}" if state else ""),
        highlight=False,
        soft_wrap=True,
    )
    table = Table(header_style="bold", box=None)
    table.add_column("")
    table.add_column("count", justify="right")
    for style, count in summary.by_style.items():
        table.add_row(f"style {style}", str(count))
    for reason, count in summary.dropped_by_reason.items():
        table.add_row(f"dropped: {reason}", str(count))
    for reason, count in summary.regenerated_by_reason.items():
        table.add_row(f"first attempt failed: {reason}", str(count))
    table.add_row("eligible sections", str(summary.eligible_sections))
    for reason, count in summary.skipped_sections.items():
        table.add_row(f"sections skipped: {reason.replace('_', ' ')}", str(count))
    console.print(table)
    usage = summary.usage
    console.print(
        f"{summary.model} · {usage.calls} calls · {usage.prompt_tokens} prompt + "
        f"{usage.output_tokens} output tokens · {summary.seconds} s",
        highlight=False,
    )
    for note in summary.notes:
        console.print(Text.assemble(("note:", "dim"), f" {note}"), soft_wrap=True)


def abstract_judge_report(console: Console, report: AbstractJudgeReport) -> None:
    """Render `eval judge --abstract-pairs`: held-out accuracy and recall by kind."""
    from rich import box

    kinds = ", ".join(f"{k} {v}" for k, v in report.kinds.items())
    console.print(
        f"{report.pairs} abstract pairs from {report.articles} articles "
        f"({kinds}) · held out: {report.splits.get('test', 0)} pairs · "
        f"model {report.model or '-'}",
        highlight=False,
    )
    table = Table(header_style="bold", box=box.SIMPLE_HEAD)
    table.add_column("judge")
    table.add_column("accuracy (held out)", justify="right")
    table.add_column("tune", justify="right")
    kind_names = sorted(report.kinds)
    for kind in kind_names:
        table.add_column(kind, justify="right")
    table.add_column("cut", justify="right")
    table.add_column("ROC AUC", justify="right")

    def cell(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    for method, found in report.methods.items():
        table.add_row(
            method,
            cell(found.accuracy),
            cell(found.accuracy_tune),
            *(cell(found.by_kind["test"].get(kind)) for kind in kind_names),
            cell(found.cut),
            cell(found.roc_auc),
        )
    console.print(table)
    console.print(
        "accuracy: supported (fully) or not, on pairs of held-out articles; a kind's "
        "column is the share of its held-out pairs judged right",
        highlight=False,
    )


def judge_eval_report(console: Console, report: JudgeReport) -> None:
    """Render `eval judge`: accuracy, safety, AUC and the confusion table per method."""
    from rich import box

    console.print(
        f"{report.pairs} labelled pairs from corpus {report.corpus} "
        f"({', '.join(f'{k} {v}' for k, v in report.labels.items())}) · "
        f"model {report.model}",
        highlight=False,
    )
    for method, found in report.methods.items():
        auc = found.roc_auc
        safe = found.safe_rate
        table = Table(
            title=(
                f"judge {method}: accuracy {found.accuracy:.3f} · "
                f"safe {safe if safe is not None else '-'} · "
                f"ROC AUC {'-' if auc is None else f'{auc:.3f}'}"
            ),
            header_style="bold",
            box=box.SIMPLE_HEAD,
        )
        table.add_column("label")
        verdicts = (*VERDICTS, UNJUDGED)
        for verdict in verdicts:
            table.add_column(verdict.replace("_", " "), justify="right")
        for label, counts in found.confusion.items():
            table.add_row(label, *(str(counts.get(v, 0)) for v in verdicts))
        console.print(table)
        lanes = ", ".join(f"{k} {v}" for k, v in found.lanes.items())
        console.print(f"lanes: {lanes}", highlight=False)
