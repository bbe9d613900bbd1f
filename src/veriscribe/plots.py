"""Pictures of evaluation reports: matplotlib figures written as PNG files.

matplotlib is imported only when a figure is drawn, with the non-interactive Agg
backend, so that no display is needed and commands that draw nothing do not pay for it.
Every figure carries its own titles, axis labels and counts, to be read without the
table printed beside it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from veriscribe.errors import InputError

__all__ = ["abstract_metrics_plot"]

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


def _values(
    per_article: Sequence[Mapping[str, Any]], side: str, metric: str
) -> list[float]:
    values = []
    for record in per_article:
        value = record.get(side, {}).get(metric)
        if isinstance(value, int | float) and math.isfinite(value):
            values.append(float(value))
    return values


def _short(label: str, limit: int = 22) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "\u2026"


def _name(report: Mapping[str, Any], separator: str = " ") -> str:
    models = report.get("models") or []
    name = _short(Path(str(report["results"])).name, 26)
    if len(models) == 1:
        name += f"{separator}({_short(models[0])})"
    return name


def abstract_metrics_plot(report: Mapping[str, Any], path: Path) -> None:
    """Draw box plots of each abstract metric, generated vs human (and vs --against).

    One panel per metric that has values: a box per system (the results, the second
    results of a comparison) and, for the abstractiveness metrics, the human abstracts,
    with the individual articles as dots and the mean as a white diamond. Panels of the
    abstractiveness metrics say that closeness to the human box is the goal.

    Raises:
        InputError: When the PNG cannot be written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    other = report.get("against")
    # A comparison shows the paired articles only, as the bootstrap uses them.
    records = {"a": list(report["per_article"])}
    if other:
        shared = {r["id"] for r in records["a"]} & {
            r["id"] for r in other["per_article"]
        }
        records["a"] = [r for r in records["a"] if r["id"] in shared]
        records["b"] = [r for r in other["per_article"] if r["id"] in shared]
    series: list[tuple[str, str, Sequence[Mapping[str, Any]]]] = [
        ("a", _name(report, "\n"), records["a"])
    ]
    if other:
        series.append(("b", _name(other, "\n"), records["b"]))
    metrics = [
        m
        for m, entry in report["metrics"].items()
        if entry.get("mean") is not None
        and _values(report["per_article"], "generated", m)
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
        title, unit = _LABELS.get(metric, (metric.replace("_", " ").title(), "score"))
        boxes: list[tuple[str, str, list[float]]] = [
            (key, name, _values(chosen, "generated", metric))
            for key, name, chosen in series
        ]
        proximity = report["metrics"][metric].get("better") == "closer_to_human"
        if proximity:
            boxes.append(
                (
                    "human",
                    "human abstracts",
                    _values(records["a"], "human", metric),
                )
            )
        boxes = [b for b in boxes if b[2]]
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

    heading = f"Abstract metrics per article: {_name(report)}"
    if other:
        heading = (
            f"Abstract metrics per article: A = {_name(report)} vs B = {_name(other)}"
        )
    counts = [
        f"{r['scored']} of {r['items']} items scored ({r['failed']} failed)"
        for r in ([report, other] if other else [report])
    ]
    heading += (
        "\n"
        + (
            f"A: {counts[0]}, B: {counts[1]}; shown: the {len(records['a'])} paired"
            " articles"
            if other
            else counts[0]
        )
        + "; boxes: quartiles, whiskers: 1.5 IQR, line: median, diamond: mean, "
        "dots: articles"
    )
    figure.suptitle(heading, fontsize=11)
    figure.tight_layout(rect=(0, 0, 1, 0.95 if rows > 1 else 0.88))
    try:
        figure.savefig(path, dpi=110)
    except OSError as exc:
        raise InputError(f"cannot write the plot {path}: {exc.strerror}") from exc
    finally:
        plt.close(figure)
