"""Pictures of evaluation reports: matplotlib figures written as PNG files.

matplotlib is imported only when a figure is drawn, with the non-interactive Agg
backend, so that no display is needed and commands that draw nothing do not pay for it.
Every figure carries its own titles, axis labels and counts, to be read without the
table printed beside it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from veriscribe.errors import InputError
from veriscribe.eval.reports import (
    AbstractsReport,
    ArticleScores,
    LabelReport,
    QAReport,
    RetrievalReport,
    ScoredResults,
)
from veriscribe.results import COMPLIANT_TIERS, UNJUDGED

__all__ = ["abstract_metrics_plot", "label_plot", "qa_funnel_plot", "retrieval_plot"]

_LABELS: dict[str, tuple[str, str]] = {
    "bigram_novelty": ("Bigram novelty", "share of novel bigrams"),
    "trigram_novelty": ("Trigram novelty", "share of novel trigrams"),
    "coverage": ("Coverage", "share of tokens in fragments"),
    "density": ("Density", "\u03a3 fragment length\u00b2 / abstract tokens"),
    "compression": ("Compression", "article tokens / abstract tokens"),
    "rouge_l": ("ROUGE-L vs reference", "F1"),
    "keyphrase_recall": ("Key-phrase recall", "share of reference key phrases"),
    "umls_recall": ("UMLS concept recall", "share of reference concepts"),
}
_COLOURS = {"a": "#1f77b4", "b": "#ff7f0e", "human": "#2ca02c"}
_COLUMNS = 4


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(plt: Any, figure: Any, path: Path) -> None:
    try:
        figure.savefig(path, dpi=110)
    except OSError as exc:
        raise InputError(f"cannot write the plot {path}: {exc.strerror}") from exc
    finally:
        plt.close(figure)


def _values(
    per_article: Sequence[ArticleScores], side: str, metric: str
) -> list[float]:
    values = []
    for record in per_article:
        value = (record.generated if side == "generated" else record.human).get(metric)
        if isinstance(value, int | float) and math.isfinite(value):
            values.append(float(value))
    return values


def _short(label: str, limit: int = 22) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "\u2026"


def _name(report: ScoredResults, separator: str = " ") -> str:
    models = report.models
    name = _short(Path(report.results).name, 26)
    if len(models) == 1:
        name += f"{separator}({_short(models[0])})"
    return name


_Series = tuple[str, str, Sequence[ArticleScores]]
"""One system's box in a panel: its colour key, its label and its articles."""


def abstract_metrics_plot(report: AbstractsReport, path: Path) -> None:
    """Draw box plots of each abstract metric, generated vs human (and vs --against).

    One panel per metric that has values: a box per system (the results, the second
    results of a comparison) and, for the abstractiveness metrics, the human abstracts,
    with the individual articles as dots and the mean as a white diamond. Panels of the
    abstractiveness metrics say that closeness to the human box is the goal.

    Raises:
        InputError: When the PNG cannot be written.
    """
    plt = _pyplot()
    series = _abstract_series(report)
    metrics = [
        m
        for m, entry in report.metrics.items()
        if entry.mean is not None and _values(report.per_article, "generated", m)
    ]
    if not metrics:
        metrics = ["bigram_novelty"]
    rows = math.ceil(len(metrics) / _COLUMNS)
    columns = min(_COLUMNS, len(metrics))
    figure, axes = plt.subplots(
        rows, columns, figsize=(4.2 * columns, 3.9 * rows + 0.9), squeeze=False
    )
    for axis in axes.flat[len(metrics) :]:
        axis.set_visible(False)

    for axis, metric in zip(axes.flat, metrics, strict=False):
        proximity = report.metrics[metric].better == "closer_to_human"
        _metric_panel(axis, metric, series, proximity=proximity)

    figure.suptitle(_abstract_heading(report, len(series[0][2])), fontsize=11)
    figure.tight_layout(rect=(0, 0, 1, 0.95 if rows > 1 else 0.88))
    _save(plt, figure, path)


def _abstract_series(report: AbstractsReport) -> list[_Series]:
    """Return the systems a panel shows: the results, and those compared with them."""
    other = report.against
    # A comparison shows the paired articles only, as the bootstrap uses them.
    records = {"a": list(report.per_article)}
    if other:
        shared = {r.id for r in records["a"]} & {r.id for r in other.per_article}
        records["a"] = [r for r in records["a"] if r.id in shared]
        records["b"] = [r for r in other.per_article if r.id in shared]
    # Box labels name the model only where the two sides differ in it (the heading
    # always does): two long identical names side by side would overprint.
    same_model = other is not None and report.models == other.models

    def label(side: ScoredResults) -> str:
        if same_model:
            return _short(Path(side.results).name, 26)
        return _name(side, "\n")

    series: list[_Series] = [("a", label(report), records["a"])]
    if other:
        series.append(("b", label(other), records["b"]))
    return series


def _metric_panel(
    axis: Any, metric: str, series: list[_Series], *, proximity: bool
) -> None:
    """Draw one metric's boxes: each system's, and with ``proximity`` the human one.

    The human abstracts are those of the first system's articles.
    """
    title, unit = _LABELS.get(metric, (metric.replace("_", " ").title(), "score"))
    boxes: list[tuple[str, str, list[float]]] = [
        (key, name, _values(chosen, "generated", metric))
        for key, name, chosen in series
    ]
    if proximity:
        boxes.append(
            (
                "human",
                "human abstracts",
                _values(series[0][2], "human", metric),
            )
        )
    boxes = [b for b in boxes if b[2]]
    _draw_boxes(axis, boxes)
    goal = "closer to human is better" if proximity else "higher is better"
    axis.set_title(f"{title}\n({goal})", fontsize=10)
    axis.set_ylabel(unit, fontsize=9)
    if metric == "density":
        # Extractive outputs reach hundreds while human abstracts sit near 5.
        axis.set_yscale("symlog", linthresh=1.0)
        highest = max((max(values) for _, _, values in boxes), default=1.0)
        axis.set_ylim(bottom=0.0, top=max(highest, 1.0) * 2.0)
        axis.set_ylabel(f"{unit} (log scale)", fontsize=9)
    axis.grid(axis="y", alpha=0.3)


def _draw_boxes(axis: Any, boxes: list[tuple[str, str, list[float]]]) -> None:
    """Draw a box per ``(colour key, label, values)``, its values as dots beside it."""
    positions = list(range(1, len(boxes) + 1))
    drawn = axis.boxplot(
        [values for _, _, values in boxes],
        positions=positions,
        widths=0.55,
        patch_artist=True,
        showfliers=False,
        showmeans=True,
        medianprops={"color": "black"},
        meanprops={
            "marker": "D",
            "markerfacecolor": "white",
            "markeredgecolor": "black",
        },
    )
    for patch, (key, _, _) in zip(drawn["boxes"], boxes, strict=True):
        patch.set_facecolor(_COLOURS[key])
        patch.set_alpha(0.35)
    for position, (key, _, values) in zip(positions, boxes, strict=True):
        # A fixed spread per point (not random) keeps the picture reproducible.
        offsets = [((i * 0.618) % 1.0 - 0.5) * 0.3 for i in range(len(values))]
        axis.scatter(
            [position + o for o in offsets],
            values,
            s=9,
            color=_COLOURS[key],
            alpha=0.7,
            zorder=3,
        )
    axis.set_xticks(positions)
    axis.set_xticklabels(
        [f"{name}\nn={len(values)}" for _, name, values in boxes], fontsize=8
    )


def _abstract_heading(report: AbstractsReport, paired: int) -> str:
    """Return the figure's heading: the systems, their counts, how to read a box."""
    other = report.against
    heading = f"Abstract metrics per article: {_name(report)}"
    if other:
        heading = (
            f"Abstract metrics per article: A = {_name(report)} vs B = {_name(other)}"
        )
    counts = [
        f"{r.scored} of {r.items} items scored ({r.failed} failed)"
        for r in ([report, other] if other else [report])
    ]
    heading += (
        "\n"
        + (
            f"A: {counts[0]}, B: {counts[1]}; shown: the {paired} paired articles"
            if other
            else counts[0]
        )
        + "; boxes: quartiles, whiskers: 1.5 IQR, line: median, diamond: mean, "
        "dots: articles"
    )
    return heading


def _percent_axis(axis: Any) -> None:
    axis.set_ylim(0, 105)
    axis.grid(axis="y", alpha=0.3)


def qa_funnel_plot(report: QAReport, path: Path) -> None:
    """Draw the claim funnel, coverage against the window k, and the verbatim tiers.

    Raises:
        InputError: When the PNG cannot be written.
    """
    plt = _pyplot()
    # Answers scored against gold answers get a fourth panel.
    scored = report.gold is not None or report.not_found_scores is not None
    figure, axes = plt.subplots(
        1, 4 if scored else 3, figsize=(20 if scored else 15, 4.8)
    )
    left, middle, right = axes[:3]
    _funnel_panel(left, report)
    _coverage_panel(middle, report)
    _tiers_panel(right, report)
    if scored:
        _gold_panel(axes[3], report)

    figure.suptitle(
        f"Checked answers: {_short(Path(report.results).name, 40)} "
        f"({report.answers} answers)",
        fontsize=11,
    )
    figure.tight_layout(rect=(0, 0, 1, 0.93))
    _save(plt, figure, path)


def _funnel_panel(axis: Any, report: QAReport) -> None:
    """Draw the claim funnel: the share of claims that pass each stage."""
    funnel = report.funnel
    claims = funnel.claims
    stages = [
        ("claims", claims),
        ("covered", funnel.covered),
        ("verbatim", funnel.verbatim),
        ("lenient", funnel.lenient),
        ("strict\n(certified)", funnel.strict),
        ("strict +\nrecovered", funnel.strict + funnel.recovered),
    ]
    shares = [100 * n / claims if claims else 0.0 for _, n in stages]
    bars = axis.bar([name for name, _ in stages], shares, color="#1f77b4", alpha=0.8)
    for bar, (_, count), share in zip(bars, stages, shares, strict=True):
        axis.annotate(
            f"{count}\n{share:.0f}%",
            (bar.get_x() + bar.get_width() / 2, share),
            ha="center",
            va="bottom",
            fontsize=8,
        )
    judged = claims - report.verdicts.get(UNJUDGED, 0)
    axis.set_title(
        f"Claim funnel ({claims} claims, {funnel.sentences} sentences"
        + (", none judged)" if claims and not judged else ")")
    )
    axis.set_ylabel("% of claims")
    axis.tick_params(axis="x", labelsize=8)
    _percent_axis(axis)
    axis.set_ylim(0, 120)


def _coverage_panel(axis: Any, report: QAReport) -> None:
    """Draw citation coverage against the attribution window k."""
    windows = report.coverage_by_window
    ks = [int(k) for k in windows]
    for values, label, colour in (
        ([windows[str(k)].rate for k in ks], "any citation", "#1f77b4"),
        (
            [windows[str(k)].verbatim_rate for k in ks],
            "verbatim-passing citations only",
            "#ff7f0e",
        ),
    ):
        shown = [v for v in values if v is not None]
        if len(shown) < len(values):
            continue
        axis.plot(ks, [100 * v for v in shown], marker="o", label=label, color=colour)
    axis.set_title("Citation coverage by attribution window k")
    axis.set_xlabel("k (claims a marker credits, 0 = its own sentence)")
    axis.set_ylabel("% of claims covered")
    axis.set_xticks(ks)
    axis.legend(fontsize=8, loc="lower right")
    _percent_axis(axis)


def _tiers_panel(axis: Any, report: QAReport) -> None:
    """Draw the share of citations in each verbatim tier, compliant ones in green."""
    tiers = report.tiers
    names = list(tiers)
    counts = [tiers[t].count for t in names]
    total = report.citations
    colours = ["#2ca02c" if t in COMPLIANT_TIERS else "#d62728" for t in names]
    axis.bar(names, [100 * c / total if total else 0.0 for c in counts], color=colours)
    for index, count in enumerate(counts):
        share = 100 * count / total if total else 0.0
        axis.annotate(f"{count}", (index, share), ha="center", va="bottom", fontsize=8)
    axis.set_title(f"Verbatim tiers of {total} citations (green: compliant)")
    axis.set_ylabel("% of citations")
    axis.tick_params(axis="x", labelsize=8, rotation=20)
    _percent_axis(axis)


def _gold_panel(axis: Any, report: QAReport) -> None:
    """Draw the answers' gold recall, one bar per tenth, with the pooled figures."""
    recalls = [q.gold_recall for q in report.per_question if q.gold_recall is not None]
    edges = [i / 10 for i in range(11)]
    counts, _, _ = axis.hist(recalls, bins=edges, color="#2ca02c", alpha=0.8)
    # Room above the bars for the pooled figures.
    axis.set_ylim(0, 1.6 * max([*counts, 1]))
    axis.set_xlabel("gold recall (share of the gold answer's content words)")
    axis.set_ylabel("answers")
    gold = report.gold
    lines = [
        f"gold recall {_pct(gold.gold_recall if gold else None)}, "
        f"gold hit {_pct(gold.gold_hit if gold else None)}",
        f"answer words: median {report.answer_words.median}",
        f"not found: {_pct(report.not_found_rate)} of answers",
    ]
    scores = report.not_found_scores
    if scores and scores.unanswerable:
        lines.append(
            f"not-found precision {_pct(scores.precision)}, "
            f"recall {_pct(scores.recall)}"
        )
    if scores:
        lines.append(f"answerable wrongly not found {_pct(scores.answerable_rate)}")
    axis.text(
        0.03, 0.97, "\n".join(lines), transform=axis.transAxes, va="top", fontsize=8
    )
    axis.set_title(f"Answers against gold answers ({len(recalls)} scored)")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def retrieval_plot(report: RetrievalReport, path: Path) -> None:
    """Draw hit rate against k, one curve per retriever.

    Raises:
        InputError: When the PNG cannot be written.
    """
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(6.4, 4.6))
    ks = list(report.ks)
    for name, row in report.retrievers.items():
        values = [100 * row.hit_rates[f"hit_rate_at_{k}"] for k in ks]
        axis.plot(
            ks,
            values,
            marker="o",
            label=f"{name} (mean {row.mean_sections:.1f} sections)",
        )
        for k, value in zip(ks, values, strict=True):
            axis.annotate(
                f"{value:.0f}",
                (k, value),
                textcoords="offset points",
                xytext=(0, 5),
                ha="center",
                fontsize=7,
            )
    axis.set_xticks(ks)
    axis.set_xlabel("k (sections returned)")
    axis.set_ylabel("% of questions whose gold section is in the top k")
    axis.set_title(
        f"Retrieval hit rate on {report.corpus}: {report.questions} questions",
        fontsize=10,
    )
    axis.legend(fontsize=8, loc="lower right")
    _percent_axis(axis)
    figure.tight_layout()
    _save(plt, figure, path)


def label_plot(report: LabelReport, labellers: Sequence[str], path: Path) -> None:
    """Draw per-label F1 of each labeller, with micro and macro F1 in the legend.

    Raises:
        InputError: When the PNG cannot be written.
    """
    plt = _pyplot()
    scored = [
        (name, scores)
        for name in labellers
        if (scores := report.scores(name)) is not None
    ]
    labels = sorted({label for _, scores in scored for label in scores.labels})
    figure, axis = plt.subplots(figsize=(8, 4.6))
    width = 0.8 / max(len(scored), 1)
    for offset, (name, scores) in enumerate(scored):
        rows = scores.labels
        xs = [i + offset * width for i in range(len(labels))]
        axis.bar(
            xs,
            [rows[label].f1 if label in rows else 0.0 for label in labels],
            width=width,
            label=(
                f"{name}: micro F1 {scores.micro_f1:.3f}, "
                f"macro F1 {scores.macro_f1:.3f}"
            ),
        )
    axis.set_xticks([i + width * (len(scored) - 1) / 2 for i in range(len(labels))])
    support = {
        label: row.support
        for _, scores in scored
        for label, row in scores.labels.items()
    }
    axis.set_xticklabels(
        [f"{label}\nn={support[label]}" for label in labels], fontsize=8
    )
    axis.set_ylim(0, 1.05)
    axis.set_ylabel("F1")
    axis.set_title(
        f"First-sentence labels: {report.abstracts} abstracts, "
        f"{report.sentences} sentences",
        fontsize=10,
    )
    axis.legend(fontsize=8, loc="lower right")
    axis.grid(axis="y", alpha=0.3)
    figure.tight_layout()
    _save(plt, figure, path)
