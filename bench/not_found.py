"""Answer or "not found": each sentence selection on answerable and unanswerable questions.

For each way that needs no model (``scored``: the retriever and the sentence choice by
words alone, as before the sentence encoder; ``semantic``, the default: all-MiniLM-L6-v2
similarity joins both), the question is answered as ``ask`` answers it with ``--wording
source`` (the ``fused`` retriever's best 3 sections, the units the checker certifies,
`select_units`) and the bench counts:

- cpgQA dev, all questions: said "not found" though answerable (``dev_nf``), and the
  gold answer's word recall and whole-answer hit on the first 100 and on all;
- cpgQA hold-out, seeds 0-9 (``eval.holdout.hold_out``: 40 questions asked without
  their gold passage each): "not found" for those (``holdout_nf`` mean and min) and for
  the answerable questions of the same sets (``holdout_answerable_nf``);
- the hand-written questions about other guidelines (``bench/questions``: NGC and
  VA/DoD, in a user's own words): "not found" though answerable, and "not found" with
  the gold section left out of the corpus (other sections may still answer those, so
  that column is a guide, not a target).

The constants of the semantic selection were set on cpgQA only (dev and hold-out); the
NGC and VA/DoD columns measure how it carries to other guidelines. No model is called
and the checker is the real one, so the numbers are what ``ask`` gives.

Usage: ``.venv/bin/python bench/not_found.py [--seeds 10] [--selections scored,semantic]``
Last line: ``dev_nf=<x> dev_recall=<x> dev_hit=<x> holdout_nf=<x> holdout_nf_min=<x>
holdout_answerable_nf=<x> ngc_nf=<x> vadod_nf=<x>`` for the default selection.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from veriscribe.documents.guidelines import read_guideline_path
from veriscribe.eval.holdout import hold_out
from veriscribe.metrics.gold import gold_recall
from veriscribe.nodes.qa.answer import select_units
from veriscribe.options import QAOptions
from veriscribe.retrieval.bm25 import BM25Index
from veriscribe.retrieval.dense import Encoder, Matrix
from veriscribe.retrieval.fused import FusedIndex, SectionDoc
from veriscribe.retrieval.lay_terms import guideline_words
from veriscribe.retrieval.minilm import minilm
from veriscribe.retrieval.units import SectionText, answer_text

DATA = Path(
    os.environ.get(
        "VERISCRIBE_GUIDELINES",
        Path(__file__).resolve().parents[2] / "shared" / "data" / "guidelines",
    )
)
"""The development guidelines (``VERISCRIBE_GUIDELINES`` names another place)."""
QUESTIONS = Path(__file__).resolve().parent / "questions"
READ = 3
"""Sections read per question: the default ``--k``."""


class CachedEncoder:
    """The encoder with its rows kept by text: hold-out sets share their sentences."""

    def __init__(self, encoder: Encoder) -> None:
        self.encoder = encoder
        self.rows: dict[str, np.ndarray] = {}

    def __call__(self, texts: list[str]) -> Matrix:
        new = [text for text in dict.fromkeys(texts) if text not in self.rows]
        if new:
            self.rows.update(zip(new, self.encoder(new), strict=True))
        return np.asarray([self.rows[text] for text in texts], dtype=np.float32)


@dataclass
class Corpus:
    sections: dict[str, SectionText]
    fused: FusedIndex
    bm25: BM25Index

    @classmethod
    def of(cls, docs: Sequence[SectionDoc], encoder: Encoder | None) -> Corpus:
        keys = [doc.key for doc in docs]
        return cls(
            {d.key: SectionText(d.key, d.title, d.text) for d in docs},
            FusedIndex(docs, encoder),
            BM25Index().build(keys, [f"{d.title}\n{d.text}" for d in docs]),
        )

    async def answer(self, question: str, encoder: Encoder | None) -> tuple[bool, str]:
        not_found, units, _ = await self.answer_read(question, encoder)
        return not_found, " ".join(units)

    async def answer_read(
        self, question: str, encoder: Encoder | None
    ) -> tuple[bool, list[str], list[str]]:
        """Answer as ``ask`` does: "not found", the answer's sentences, the keys read."""
        searched = guideline_words(question, self.bm25.holds)
        read = [key for key, _ in self.fused.search(searched, READ)]
        selection = await select_units(
            searched,
            [self.sections[key] for key in read],
            QAOptions().max_sentences,
            self.bm25.idf,
            encoder=encoder,
        )
        units = [answer_text(unit.text) for unit in selection.units]
        return selection.not_found, units, read


def cpgqa_docs(passages: Sequence[dict[str, Any]]) -> list[SectionDoc]:
    return [SectionDoc(p["passage_id"], "", p["title"], p["text"]) for p in passages]


def guideline_docs(name: str) -> list[SectionDoc]:
    docs = read_guideline_path(DATA / name, on_error=lambda path, error: None)
    found = []
    for doc in docs:
        by_id = {s.section_id: s for s in doc.sections}
        for section in doc.sections:
            if not section.text.strip():
                continue
            titles, parent = [], section.parent
            while parent is not None and parent in by_id:
                titles.append(by_id[parent].title)
                parent = by_id[parent].parent
            context = "\n".join([doc.title, *reversed(titles)])
            key = f"{doc.doc_id}:{section.section_id}"
            found.append(SectionDoc(key, context, section.title, section.text))
    return found


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def measure(name: str, encoder: Encoder | None, seeds: int) -> dict[str, float]:
    passages = read_jsonl(DATA / "cpgqa" / "passages.jsonl")
    questions = read_jsonl(DATA / "cpgqa" / "questions.jsonl")
    dev = Corpus.of(cpgqa_docs(passages), encoder)
    recalls, dev_nf = [], []
    for q in questions:
        not_found, text = await dev.answer(q["question"], encoder)
        dev_nf.append(not_found)
        recalls.append(0.0 if not_found else gold_recall(q["answer"], text))
    held_nf, held_answerable_nf = [], []
    for seed in range(seeds):
        kept, asked = hold_out(passages, questions, 40, seed=seed)
        corpus = Corpus.of(cpgqa_docs(kept), encoder)
        unanswerable, answerable = [], []
        for q in asked:
            not_found, _ = await corpus.answer(q["question"], encoder)
            (unanswerable if q.get("answerable") is False else answerable).append(
                not_found
            )
        held_nf.append(statistics.mean(unanswerable))
        held_answerable_nf.append(statistics.mean(answerable))
    result = {
        "dev_nf": statistics.mean(dev_nf),
        "dev_recall": statistics.mean(recalls[:100]),
        "dev_hit": statistics.mean(r >= 0.999 for r in recalls[:100]),
        "dev_recall_all": statistics.mean(recalls),
        "dev_hit_all": statistics.mean(r >= 0.999 for r in recalls),
        "holdout_nf": statistics.mean(held_nf),
        "holdout_nf_min": min(held_nf),
        "holdout_answerable_nf": statistics.mean(held_answerable_nf),
    }
    for other in ("ngc", "vadod"):
        docs = guideline_docs(other)
        corpus = Corpus.of(docs, encoder)
        asked = read_jsonl(QUESTIONS / f"{other}.jsonl")
        found_nf, out_nf = [], []
        for q in asked:
            gold = f"{q['doc_id']}:{q['section_id']}"
            not_found, _ = await corpus.answer(q["question"], encoder)
            found_nf.append(not_found)
            without = Corpus.of([doc for doc in docs if doc.key != gold], encoder)
            not_found, _ = await without.answer(q["question"], encoder)
            out_nf.append(not_found)
        result[f"{other}_nf"] = statistics.mean(found_nf)
        result[f"{other}_out_nf"] = statistics.mean(out_nf)
        result[f"{other}_n"] = len(asked)
    print(f"  {name}: done", flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--selections", default="scored,semantic")
    args = parser.parse_args()
    encoders: dict[str, Callable[[], Encoder | None]] = {
        "scored": lambda: None,
        "semantic": lambda: CachedEncoder(minilm()),
    }
    names = args.selections.split(",")
    results = {
        name: asyncio.run(measure(name, encoders[name](), args.seeds)) for name in names
    }
    rows = [
        ("cpgQA dev: answerable said not found", "dev_nf"),
        ("cpgQA dev first 100: gold recall", "dev_recall"),
        ("cpgQA dev first 100: gold hit", "dev_hit"),
        ("cpgQA dev all: gold recall", "dev_recall_all"),
        ("cpgQA dev all: gold hit", "dev_hit_all"),
        (f"hold-out x{args.seeds}: unanswerable said not found (mean)", "holdout_nf"),
        (
            f"hold-out x{args.seeds}: unanswerable said not found (min)",
            "holdout_nf_min",
        ),
        (f"hold-out x{args.seeds}: answerable said not found", "holdout_answerable_nf"),
        ("NGC: answerable said not found", "ngc_nf"),
        ("NGC: gold section left out, said not found", "ngc_out_nf"),
        ("VA/DoD: answerable said not found", "vadod_nf"),
        ("VA/DoD: gold section left out, said not found", "vadod_out_nf"),
    ]
    print(f"{'':58s}" + "".join(f"{name:>10s}" for name in names))
    for label, key in rows:
        print(f"{label:58s}" + "".join(f"{results[n][key]:10.3f}" for n in names))
    default = results.get(QAOptions().select, results[names[-1]])
    print(
        " ".join(
            f"{key}={default[key]:.3f}"
            for key in (
                "dev_nf",
                "dev_recall",
                "dev_hit",
                "holdout_nf",
                "holdout_nf_min",
                "holdout_answerable_nf",
                "ngc_nf",
                "vadod_nf",
            )
        )
    )


if __name__ == "__main__":
    main()
