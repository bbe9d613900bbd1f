"""Garbled words in the abstracts (and their drafts) of ``bench/local.py`` runs.

For every ``*.jsonl`` in the directories given (``bench/local.py --db DIR``), per
pipeline, summed or averaged over its articles, for the abstract and for the draft
(the facet summaries it was refined from):

- ``foreign``: words with a letter of a script the article does not use;
- ``case``: words capitalised mid-sentence that the article writes only in lower
  case. For the abstract, those the refine model wrote (the checks' ``case_repairs``,
  which lower-case them afterwards) plus any left in the final text;
- ``fused``: fused or coined words ("chemicalproperties", "trade_channels"): the
  words the copy guard's word rule refuses, with the article and the model's
  vocabulary as the known words (``CopyGuard.unknown_words``); the list is printed;
- ``rep3``: the share of word trigrams that repeat an earlier one (mean);
- ``novelty`` and ``density``: trigram novelty and extractive fragment density against
  the article (means).

Usage: ``.venv/bin/python bench/garble.py DIR [DIR ...]``
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from llama_cpp import Llama

from veriscribe.checks.wording import (
    CaseIndex,
    case_changes,
    foreign_script_words,
    repeated_trigram_share,
)
from veriscribe.documents.articles import Article, read_articles
from veriscribe.llm.embedded.copy_guard import CommonWords, CopyGuard
from veriscribe.llm.embedded.local import vocabulary_words
from veriscribe.llm.factory import local_model_path
from veriscribe.metrics.fragments import fragment_stats
from veriscribe.metrics.novelty import novelty_stats
from veriscribe.settings import Settings


def body_of(source: str) -> str:
    (article,) = [a for a in read_articles(Path(source)) if isinstance(a, Article)]
    return article.body


def measure(text: str, body: str, common: CommonWords) -> dict[str, float | list[str]]:
    guard = CopyGuard("", 1, words=body, common=common)
    fused = guard.unknown_words(text)
    stats = novelty_stats(body, text) | fragment_stats(body, text)
    return {
        "foreign": float(len(foreign_script_words(text, body))),
        "case": float(len(case_changes(text, CaseIndex.of(body)))),
        "fused": float(len(fused)),
        "fused_words": fused,
        "rep3": repeated_trigram_share(text),
        "novelty": stats["trigram_novelty"],
        "density": stats["density"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+", type=Path)
    args = parser.parse_args()
    path = local_model_path(Settings())
    llama = Llama(model_path=str(path), vocab_only=True, verbose=False)
    common = vocabulary_words(llama)
    print(
        f"{'run':<40} {'text':<9} {'foreign':>8} {'case':>6} {'fused':>6} "
        f"{'rep3':>6} {'novelty':>8} {'density':>8}"
    )
    for folder in args.dirs:
        for out in sorted(folder.glob("*.jsonl")):
            records = [json.loads(line) for line in out.read_text().splitlines()]
            for part in ("abstract", "draft"):
                rows = []
                for record in records:
                    if not record.get(part):
                        continue
                    row = measure(record[part], body_of(record["source"]), common)
                    if part == "abstract":
                        row["case"] = float(row["case"]) + len(
                            (record.get("checks") or {}).get("case_repairs", [])
                        )
                    rows.append(row)

                def total(
                    key: str, rows: list[dict[str, float | list[str]]] = rows
                ) -> float:
                    return sum(float(r[key]) for r in rows)  # type: ignore[arg-type]

                def mean(
                    key: str, rows: list[dict[str, float | list[str]]] = rows
                ) -> float:
                    return statistics.fmean(float(r[key]) for r in rows)  # type: ignore[arg-type]

                print(
                    f"{str(out.relative_to(out.parents[1])):<40} {part:<9} "
                    f"{total('foreign'):>8.0f} {total('case'):>6.0f} "
                    f"{total('fused'):>6.0f} {mean('rep3'):>6.3f} "
                    f"{mean('novelty'):>8.3f} {mean('density'):>8.2f}"
                )
                for r in rows:
                    if r["fused_words"]:
                        print("    fused:", ", ".join(r["fused_words"]))  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
