"""Lexical section retrievers without a model: hit rate at k on three question sets.

The default ``fused`` retriever (`veriscribe.retrieval.fused`: BM25 of the section with
its document title and heading path, plus 0.25 x BM25 of adjacent stem pairs and 0.25 x
its best unit, each scaled by the question's top score), the ``bm25`` baseline (Okapi
BM25 over each section's title and text) and parameter-light variants, each measured on
the same questions:

- ``bm25_title2``: the title written twice (title weighted double);
- ``bm25_headpath``: the titles of the section's ancestors added to its text;
- ``units_max``: BM25 over quotable units (sentences, list items), a section scored by
  its best unit;
- ``char4``: BM25 over within-word character 4-grams (typos, word forms);
- ``bigram``: BM25 over stems and pairs of adjacent stems (phrases);
- ``rrf_*``: reciprocal-rank fusion (k = 60) of ``bm25`` with the variants named;
- ``dense`` and ``rrf_bm25_dense``: all-MiniLM-L6-v2 (best 250-character window), alone
  and fused with ``bm25``, when the encoder's package is installed;
- ``fused_meaning``: ``fused`` with its meaning term (the question's cosine with the
  section's closest sentence, weight 1), what ``ask`` uses when the encoder is installed
  (``fused`` is then its lexical part alone).

Question sets: all cpgQA dev questions (``../shared/data/guidelines/cpgqa``), and
``bench/questions/ngc.jsonl`` (19) and ``bench/questions/vadod.jsonl`` (22) over the NGC
summaries and the VA/DoD guidelines of ``../shared/data/guidelines``. Those two were
written by hand, one question per section sampled at random (administrative and
boilerplate sections skipped), in a user's words rather than the guideline's, before any
retriever was run on them; the gold is that section (``doc_id``, ``section_id``),
though another section may answer too. ``eval make-questions`` would make larger sets,
but needs a model. cpgQA questions often copy the passage's phrasing, so a variant must
not be judged on cpgQA alone.

For each set and variant: hit@1, 3, 5, 10, and the questions it wins and loses against
``bm25`` at k = 3 and 5. Corpora are ingested with the simulated model (retrieval reads
no summary). ``--pair-weight`` and ``--unit-weight`` set the two weights of ``fused``
(to see how much each brings). The last line reads ``cpgqa_bm25_hit3=<x>
cpgqa_bm25_hit5=<x> cpgqa_fused_hit3=<x> cpgqa_fused_hit5=<x>``.

Usage: ``.venv/bin/python bench/lexical_retrieval.py [--data DIR] [--pair-weight W]
[--unit-weight W]``
"""

from __future__ import annotations

import argparse
import asyncio
import re
import tempfile
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import bm25s

from veriscribe.documents.questions import is_hit, read_questions
from veriscribe.errors import ConfigError
from veriscribe.retrieval import fused
from veriscribe.retrieval.bm25 import K1, METHOD, B
from veriscribe.retrieval.dense import DenseIndex, minilm_encoder
from veriscribe.service import corpora
from veriscribe.service.common import open_store
from veriscribe.settings import Settings
from veriscribe.store import corpora as db
from veriscribe.store.corpora import SectionRow
from veriscribe.text.sentences import quotable_units
from veriscribe.text.tokens import STOP_WORDS, bm25_tokens

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "shared" / "data" / "guidelines"
KS = (1, 3, 5, 10)
DEPTH = 50
RRF_K = 60
_WORD = re.compile(r"[^\W_]+")


class Index:
    """BM25 (the shipped k1, b and IDF) over token lists made by ``tokens``."""

    def __init__(
        self,
        ids: Sequence[str],
        texts: Sequence[str],
        tokens: Callable[[str], list[str]],
    ) -> None:
        self.ids = list(ids)
        self.tokens = tokens
        self.model = bm25s.BM25(k1=K1, b=B, method=METHOD)
        self.model.index([tokens(text) for text in texts], show_progress=False)

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        """Return up to ``k`` ids with positive scores, best first."""
        vocab = self.model.vocab_dict
        wanted = [t for t in self.tokens(query) if t in vocab]
        if not wanted:
            return []
        docs, scores = self.model.retrieve(
            [wanted], k=min(k, len(self.ids)), show_progress=False
        )
        return [
            (self.ids[int(d)], float(s))
            for d, s in zip(docs[0], scores[0], strict=True)
            if s > 0
        ]


def char4(text: str) -> list[str]:
    """Return the character 4-grams of each non-stop word, with word-edge marks."""
    grams: list[str] = []
    for word in _WORD.findall(text.lower()):
        if word in STOP_WORDS:
            continue
        marked = f"#{word}#"
        grams.extend(marked[i : i + 4] for i in range(max(1, len(marked) - 3)))
    return grams


def bigrams(text: str) -> list[str]:
    """Return the stems of a text and each pair of adjacent stems."""
    stems = bm25_tokens(text)
    return stems + [f"{a}_{b}" for a, b in zip(stems, stems[1:], strict=False)]


def rrf(*rankings: Sequence[str]) -> list[str]:
    """Fuse rankings by reciprocal rank (k = 60)."""
    score: dict[str, float] = defaultdict(float)
    for ranking in rankings:
        for place, key in enumerate(ranking, 1):
            score[key] += 1 / (RRF_K + place)
    return sorted(score, key=lambda key: -score[key])


def retrievers(
    every: Sequence[SectionRow], doc_titles: dict[str, str]
) -> dict[str, Callable[[str], list[str]]]:
    """Build every variant over a corpus's sections: name -> ranked section keys."""
    rows = [row for row in every if row.chars]
    by_id = {(row.doc_id, row.section_id): row for row in every}

    def ancestors(row: SectionRow) -> str:
        titles, parent = [], row.parent
        while parent is not None and (row.doc_id, parent) in by_id:
            titles.append(by_id[(row.doc_id, parent)].title)
            parent = by_id[(row.doc_id, parent)].parent
        return " ".join(reversed(titles))

    keys = [row.key for row in rows]
    full = [f"{row.title}\n{row.text}" for row in rows]
    sections = Index(keys, full, bm25_tokens)
    title2 = Index(
        keys,
        [f"{row.title}\n{text}" for row, text in zip(rows, full, strict=True)],
        bm25_tokens,
    )
    headpath = Index(
        keys,
        [f"{ancestors(row)}\n{text}" for row, text in zip(rows, full, strict=True)],
        bm25_tokens,
    )
    grams = Index(keys, full, char4)
    pairs = Index(keys, full, bigrams)
    unit_ids, unit_texts, owner = [], [], {}
    for row in rows:
        texts = [unit.text for unit in quotable_units(row.text)] or [row.text]
        for number, text in enumerate(texts):
            unit_ids.append(f"{row.key}#{number}")
            unit_texts.append(text)
            owner[unit_ids[-1]] = row.key
    units = Index(unit_ids, unit_texts, bm25_tokens)

    def top(index: Index) -> Callable[[str], list[str]]:
        return lambda q: [key for key, _ in index.search(q, DEPTH)]

    def best_unit(question: str) -> list[str]:
        best: dict[str, float] = {}
        for unit, score in units.search(question, len(unit_ids)):
            best.setdefault(owner[unit], score)  # hits come best first
        return sorted(best, key=lambda key: -best[key])[:DEPTH]

    base = top(sections)
    shipped = fused.FusedIndex(fused.section_docs(every, doc_titles))
    found: dict[str, Callable[[str], list[str]]] = {
        "fused": lambda q: [key for key, _ in shipped.search(q, DEPTH)],
        "bm25": base,
        "bm25_title2": top(title2),
        "bm25_headpath": top(headpath),
        "units_max": best_unit,
        "char4": top(grams),
        "bigram": top(pairs),
    }
    found["rrf_bm25_units"] = lambda q: rrf(base(q), best_unit(q))
    found["rrf_bm25_char4"] = lambda q: rrf(base(q), found["char4"](q))
    found["rrf_bm25_bigram"] = lambda q: rrf(base(q), found["bigram"](q))
    found["rrf_bm25_units_char4"] = lambda q: rrf(
        base(q), best_unit(q), found["char4"](q)
    )
    found["rrf_bm25_bigram_char4"] = lambda q: rrf(
        base(q), found["bigram"](q), found["char4"](q)
    )
    try:
        encoder = minilm_encoder()
    except ConfigError:
        return found  # the dense encoder is an optional install
    dense = DenseIndex(encoder, keys, full)
    found["dense"] = lambda q: [key for key, _ in dense.search(q, DEPTH)]
    found["rrf_bm25_dense"] = lambda q: rrf(base(q), found["dense"](q))
    meaning = fused.FusedIndex(fused.section_docs(every, doc_titles), encoder)
    found["fused_meaning"] = lambda q: [key for key, _ in meaning.search(q, DEPTH)]
    return found


def hits(ranked: Sequence[str], gold: str | None, k: int) -> bool:
    """Tell whether the gold section is among the first k."""
    return any(is_hit(gold, key) for key in ranked[:k])


async def measure(settings: Settings, corpus: str, questions: Path) -> dict[str, Any]:
    """Rank every question with every variant; return hit rates and wins/losses."""
    async with open_store(settings) as store:
        every = await db.sections(store, corpus, with_text=True)
        titles = {doc.doc_id: doc.title for doc in await db.documents(store, corpus)}
    items = read_questions(questions, require_gold=True)
    found: dict[str, Any] = {}
    ranked = {
        name: [run(q["question"]) for q in items]
        for name, run in retrievers(every, titles).items()
    }
    for name, lists in ranked.items():
        row: dict[str, Any] = {}
        for k in KS:
            row[f"hit@{k}"] = sum(
                hits(r, q["gold"], k) for r, q in zip(lists, items, strict=True)
            ) / len(items)
        for k in (3, 5):
            pairs = [
                (hits(r, q["gold"], k), hits(b, q["gold"], k))
                for r, b, q in zip(lists, ranked["bm25"], items, strict=True)
            ]
            row[f"vs_bm25@{k}"] = (
                sum(a and not b for a, b in pairs),
                sum(b and not a for a, b in pairs),
            )
        found[name] = row
    return {"questions": len(items), "variants": found}


async def main() -> None:
    """Ingest the corpora and print the table for each question set."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--pair-weight", type=float, default=fused.PAIR_WEIGHT)
    parser.add_argument("--unit-weight", type=float, default=fused.UNIT_WEIGHT)
    args = parser.parse_args()
    fused.PAIR_WEIGHT, fused.UNIT_WEIGHT = args.pair_weight, args.unit_weight
    work = Path(tempfile.mkdtemp(prefix="lexical-"))
    settings = Settings(db=work / "bench.sqlite")
    sets = {
        "cpgqa": (
            args.data / "cpgqa" / "passages.jsonl",
            args.data / "cpgqa" / "questions.jsonl",
        ),
        "ngc": (args.data / "ngc", HERE / "questions" / "ngc.jsonl"),
        "vadod": (args.data / "vadod", HERE / "questions" / "vadod.jsonl"),
    }
    reports = {}
    for corpus, (source, questions) in sets.items():
        await corpora.add_corpus(settings.with_overrides(model="sim"), corpus, [source])
        reports[corpus] = report = await measure(settings, corpus, questions)
        print(f"\n{corpus}: {report['questions']} questions")
        print(
            f"{'variant':24}"
            + "".join(f"{f'hit@{k}':>8}" for k in KS)
            + "   vs bm25 @3, @5"
        )
        for name, row in report["variants"].items():
            print(
                f"{name:24}"
                + "".join(f"{row[f'hit@{k}']:8.3f}" for k in KS)
                + "   "
                + "  ".join(
                    f"+{w}/-{lost}" for w, lost in (row["vs_bm25@3"], row["vs_bm25@5"])
                )
            )
    base = reports["cpgqa"]["variants"]["bm25"]
    new = reports["cpgqa"]["variants"]["fused"]
    line = (
        f"cpgqa_bm25_hit3={base['hit@3']:.3f} cpgqa_bm25_hit5={base['hit@5']:.3f} "
        f"cpgqa_fused_hit3={new['hit@3']:.3f} cpgqa_fused_hit5={new['hit@5']:.3f}"
    )
    if "fused_meaning" in reports["cpgqa"]["variants"]:
        best = reports["cpgqa"]["variants"]["fused_meaning"]
        line += (
            f" cpgqa_fused_meaning_hit3={best['hit@3']:.3f}"
            f" cpgqa_fused_meaning_hit5={best['hit@5']:.3f}"
        )
    print(line)


if __name__ == "__main__":
    asyncio.run(main())
