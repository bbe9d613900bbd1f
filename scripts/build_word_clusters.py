"""Learn the labeller's word clusters from unlabelled text and write the table.

Usage::

    python scripts/build_word_clusters.py \
        [--articles ../shared/data/articles/jats ../shared/data/articles/pcd.jsonl \
                    ../shared/data/articles/no_abstract] \
        [--guidelines ../shared/data/guidelines] \
        [--train ../shared/data/biorc800/train.jsonl] \
        [--out src/veriscribe/labeller/clusters.json.gz]

The text: the body paragraphs and the author abstracts of the articles, every
guideline Markdown file, and the sentences of the labeller's training abstracts (their
text only, not their labels). The dev abstracts are never read. See
``veriscribe.labeller.cluster_learning`` for the method; the defaults (window 3,
words seen 3 times or more, 100 dimensions, 64/256/1024 clusters, seed 0) are the
ones the shipped labeller was tuned with. The same files give the same table, byte for
byte. Retrain the labeller (``scripts/train_labeller.py``) after writing a new table:
weights refuse a table other than the one they were trained with.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from veriscribe.documents.articles import Article, expand_inputs, read_articles
from veriscribe.labeller.cluster_learning import ClusterSettings, learn_clusters

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
DEFAULT_OUT = ROOT / "src/veriscribe/labeller/clusters.json.gz"
DEFAULT_ARTICLES = [
    DATA / "articles/jats",
    DATA / "articles/pcd.jsonl",
    DATA / "articles/no_abstract",
]


def article_texts(inputs: Sequence[Path]) -> list[str]:
    """Return the body paragraphs and abstracts of the articles, in file order."""
    texts: list[str] = []
    for path in expand_inputs([str(p) for p in inputs]):
        for item in read_articles(path):
            if isinstance(item, Article):
                texts.extend(paragraph.text for paragraph in item.paragraphs)
                if item.reference:
                    texts.append(item.reference)
    return texts


def guideline_texts(directory: Path) -> list[str]:
    """Return each Markdown file under a directory as one text, sorted by path."""
    return [p.read_text(encoding="utf-8") for p in sorted(directory.rglob("*.md"))]


def sentence_texts(path: Path) -> list[str]:
    """Return the sentences of a BIORC800 JSON-lines file (labels unread)."""
    sentences: list[str] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                sentences.extend(json.loads(line)["sentences"])
    return sentences


def main(argv: Sequence[str] | None = None) -> int:
    """Read the text, learn the clusters and write the table."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--articles", type=Path, nargs="+", default=DEFAULT_ARTICLES)
    parser.add_argument("--guidelines", type=Path, default=DATA / "guidelines")
    parser.add_argument("--train", type=Path, default=DATA / "biorc800/train.jsonl")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--seed", type=int, default=ClusterSettings().seed)
    args = parser.parse_args(argv)

    started = time.perf_counter()
    texts = (
        article_texts(args.articles)
        + guideline_texts(args.guidelines)
        + sentence_texts(args.train)
    )
    table = learn_clusters(texts, ClusterSettings(seed=args.seed))
    table.save(args.out)
    print(
        f"wrote {args.out} ({args.out.stat().st_size:,} bytes) in "
        f"{time.perf_counter() - started:.0f} s: {len(table.words):,} words from "
        f"{table.info['texts']:,} texts ({table.info['tokens']:,} tokens), "
        f"{'/'.join(str(s) for s in table.sizes)} clusters, sha256 {table.digest[:12]}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
