"""Scores of a sentence labeller against multi-label gold annotations (BIORC800)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

__all__ = ["LabelScore", "LabelScores", "label_scores"]


class LabelScore(TypedDict):
    """Precision, recall and F1 of one label, with its gold support."""

    precision: float
    recall: float
    f1: float
    support: int


class LabelScores(TypedDict):
    """Per-label scores and the micro and macro averages."""

    labels: dict[str, LabelScore]
    micro_f1: float
    macro_f1: float
    accuracy: float
    n: int


def _canonical(label: str) -> str:
    name = label.strip().lower()
    return "other" if name == "none" else name


def _f1(precision: float, recall: float) -> float:
    total = precision + recall
    return 2 * precision * recall / total if total else 0.0


def label_scores(gold: Sequence[Sequence[str]], pred: Sequence[str]) -> LabelScores:
    """Score one predicted label per sentence against the sentence's gold label set.

    The rule: a prediction is correct when it is among the sentence's gold labels (a
    sentence annotated OBJECTIVE and METHODS is correctly labelled by either). For the
    per-label counts each sentence then has one effective gold label: the predicted
    one when correct, otherwise the first gold label. So a correct prediction is a true
    positive of its label; a wrong one is a false positive of the predicted label and a
    false negative of the first gold label. Micro-F1 over all labels therefore equals
    accuracy; macro-F1 is the mean F1 of the labels that occur as effective gold or as
    prediction. Labels are compared lower-cased, with "none" read as "other".

    Raises:
        ValueError: ``gold`` and ``pred`` differ in length, or a gold set is empty.
    """
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold label sets but {len(pred)} predictions")
    true_pos: dict[str, int] = {}
    false_pos: dict[str, int] = {}
    false_neg: dict[str, int] = {}
    for index, (gold_set, predicted) in enumerate(zip(gold, pred, strict=True)):
        labels = [_canonical(label) for label in gold_set]
        if not labels:
            raise ValueError(f"sentence {index} has no gold label")
        guess = _canonical(predicted)
        if guess in labels:
            true_pos[guess] = true_pos.get(guess, 0) + 1
        else:
            false_pos[guess] = false_pos.get(guess, 0) + 1
            false_neg[labels[0]] = false_neg.get(labels[0], 0) + 1
    names = sorted(set(true_pos) | set(false_pos) | set(false_neg))
    per_label: dict[str, LabelScore] = {}
    for name in names:
        tp = true_pos.get(name, 0)
        fp = false_pos.get(name, 0)
        fn = false_neg.get(name, 0)
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        per_label[name] = LabelScore(
            precision=precision,
            recall=recall,
            f1=_f1(precision, recall),
            support=tp + fn,
        )
    total = len(pred)
    correct = sum(true_pos.values())
    accuracy = correct / total if total else 0.0
    macro = (
        sum(s["f1"] for s in per_label.values()) / len(per_label) if per_label else 0.0
    )
    return LabelScores(
        labels=per_label,
        micro_f1=accuracy,
        macro_f1=macro,
        accuracy=accuracy,
        n=total,
    )
