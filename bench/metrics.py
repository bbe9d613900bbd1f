"""Speed of the extractive-fragment matcher against the plain greedy reference.

Run as ``python bench/metrics.py``. Prints, measured side by side in one run (best of
a few repetitions each):

- the speed ratio of ``extractive_fragments`` over ``greedy_fragments_reference`` on
  a synthetic 50,000-token article with a ~250-token summary partly copied from it;
- the fast matcher alone on a synthetic 1,000,000-token article (the scale of the
  longest articles in the DPR-BAG data), where the reference would take hours;
- ``fragment_stats`` end to end (tokenizing included) on the longest dev article of
  the JATS set, against its author abstract.

The last line reads ``speedup=<x> longest_s=<x>``.
"""

from __future__ import annotations

import argparse
import json
import random
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from veriscribe.metrics.fragments import (
    extractive_fragments,
    fragment_stats,
    greedy_fragments_reference,
)
from veriscribe.text.tokens import metric_tokens

T = TypeVar("T")
DEFAULT_ARTICLES = Path(__file__).resolve().parents[2] / "shared/data/articles"


def best_of(repeats: int, run: Callable[[], T]) -> tuple[float, T]:
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
    assert result is not None
    return best, result


def synthetic(
    n_article: int, n_summary: int, seed: int = 13
) -> tuple[list[str], list[str]]:
    """Zipf-like article; summary of copied spans (2-12 tokens) and loose words."""
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(5_000)]
    weights = [1.0 / (rank + 1) for rank in range(len(vocabulary))]
    article = rng.choices(vocabulary, weights, k=n_article)
    summary: list[str] = []
    while len(summary) < n_summary:
        if rng.random() < 0.6:
            start = rng.randrange(n_article - 12)
            summary += article[start : start + rng.randint(2, 12)]
        else:
            summary += rng.choices(vocabulary, weights, k=rng.randint(1, 3))
    return article, summary[:n_summary]


def jats_body(path: Path) -> str:
    """Text of the article's own <body> (not of sub-articles such as reviews)."""
    root = ET.parse(path).getroot()
    for child in root:
        if isinstance(child.tag, str) and child.tag.rsplit("}", 1)[-1] == "body":
            return " ".join(child.itertext())
    return ""


def longest_dev_article(articles: Path) -> tuple[str, str, str]:
    abstracts: dict[str, str] = {}
    with (articles / "reference_abstracts.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                record = json.loads(line)
                abstracts[Path(record["file"]).name] = record["abstract"]
    candidates = [
        (len(metric_tokens(body)), path.name, body)
        for path in sorted((articles / "jats").glob("*.xml"))
        if path.name in abstracts and (body := jats_body(path))
    ]
    _, name, body = max(candidates)
    return name, body, abstracts[name]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=Path, default=DEFAULT_ARTICLES)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    article, summary = synthetic(50_000, 250)
    reference_s, reference = best_of(
        args.repeats, lambda: greedy_fragments_reference(article, summary)
    )
    fast_s, fast = best_of(
        args.repeats * 3, lambda: extractive_fragments(article, summary)
    )
    assert fast == reference, "fast matcher disagrees with the reference"
    speedup = reference_s / fast_s
    print(
        f"synthetic 50k: {len(article)} article / {len(summary)} summary tokens, "
        f"{len(fast)} fragments; reference {reference_s:.3f}s, fast {fast_s:.4f}s, "
        f"ratio {speedup:.1f}x"
    )

    big_article, big_summary = synthetic(1_000_000, 250, seed=29)
    big_s, big = best_of(
        args.repeats, lambda: extractive_fragments(big_article, big_summary)
    )
    print(
        f"synthetic 1M: {len(big_article)} article tokens, {len(big)} fragments; "
        f"fast {big_s:.3f}s"
    )

    name, body, abstract = longest_dev_article(args.articles)
    longest_s, stats = best_of(args.repeats, lambda: fragment_stats(body, abstract))
    print(
        f"longest dev article {name}: {len(metric_tokens(body))} article / "
        f"{len(metric_tokens(abstract))} abstract tokens; coverage {stats['coverage']:.3f}, "
        f"density {stats['density']:.3f}, compression {stats['compression']:.1f}; "
        f"fragment_stats {longest_s:.4f}s"
    )
    print(f"speedup={speedup:.1f} longest_s={longest_s:.4f}")


if __name__ == "__main__":
    main()
