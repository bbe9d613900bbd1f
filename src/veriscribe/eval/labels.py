"""`veriscribe eval labels`: the first-sentence labellers on labelled abstracts."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from veriscribe.documents.jsonl import json_lines
from veriscribe.errors import InputError
from veriscribe.eval.reports import LabellerScores, LabelReport
from veriscribe.labeller import Labeller
from veriscribe.labeller.llm import label_with_model
from veriscribe.llm.factory import make_llm
from veriscribe.metrics.labels import label_scores
from veriscribe.service.common import open_store
from veriscribe.settings import Settings

CONTEXT_SENTENCES = 2


def read_labelled(path: Path, limit: int | None = None) -> list[dict[str, Any]]:
    """Read BIORC800-format JSON lines: ``sentences`` and their ``labels`` lists."""
    items = []
    for number, item in json_lines(path):
        try:
            sentences, labels = item["sentences"], item["labels"]
        except (KeyError, TypeError) as exc:
            raise InputError(
                f"{path}:{number}: not a labelled abstract ({exc})"
            ) from exc
        if len(sentences) != len(labels):
            raise InputError(
                f"{path}:{number}: {len(sentences)} sentences, {len(labels)} labels"
            )
        items.append(item)
        if limit is not None and len(items) >= limit:
            break
    if not items:
        raise InputError(f"{path}: no labelled abstracts")
    return items


async def eval_labels(
    settings: Settings,
    path: Path,
    *,
    labellers: tuple[str, ...] = ("classifier",),
    limit: int | None = None,
) -> LabelReport:
    """Score the first-sentence labellers on labelled abstracts."""
    items = read_labelled(path, limit)
    gold = [[g.lower() for g in labels] for item in items for labels in item["labels"]]
    report = LabelReport(data=str(path), abstracts=len(items), sentences=len(gold))
    for name in labellers:
        started = time.perf_counter()
        if name == "classifier":
            model_ = Labeller.load()
            predicted = [
                label
                for item in items
                for label in model_.label(
                    item["sentences"],
                    [i / len(item["sentences"]) for i in range(len(item["sentences"]))],
                )
            ]
            usage: dict[str, int] = {}
        elif name == "llm":
            async with open_store(settings) as store:
                llm = make_llm(settings.model, settings, store)
                predicted, calls, prompt_tokens, output_tokens = [], 0, 0, 0
                for item in items:
                    sentences = item["sentences"]
                    contexts = [
                        " ".join(sentences[max(0, i - CONTEXT_SENTENCES) : i + 1])
                        for i in range(len(sentences))
                    ]
                    labels, _, used, _ = await label_with_model(
                        llm, sentences, contexts
                    )
                    predicted.extend(labels)
                    calls += used.calls
                    prompt_tokens += used.prompt_tokens
                    output_tokens += used.output_tokens
                usage = {
                    "calls": calls,
                    "prompt_tokens": prompt_tokens,
                    "output_tokens": output_tokens,
                }
                report.model = llm.label
        else:
            raise InputError(f"unknown labeller {name!r}: use classifier or llm")
        scores = LabellerScores(
            **label_scores(gold, predicted),
            seconds=round(time.perf_counter() - started, 2),
            usage=usage,
        )
        if name == "classifier":
            report.classifier = scores
        else:
            report.llm = scores
    return report
