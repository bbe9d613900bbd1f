"""Train the first-sentence labeller on BIORC800 and write its JSON weights.

Usage::

    python scripts/train_labeller.py \
        [--train ../shared/data/biorc800/train.jsonl] \
        [--out src/veriscribe/labeller/weights.json.gz] \
        [--cv 5] [--ablation] \
        [--articles ../shared/data/articles/jats ../shared/data/articles/pcd.jsonl] \
        [--dev ../shared/data/biorc800/dev.jsonl]

The model (see ``veriscribe.labeller``): a linear-chain CRF over the sentences of an
abstract, with emissions from word 1-2-gram and character 3-5-gram TF-IDF, cue
phrases, position indicators (first item, first fifth, decile, second, next-to-last
and last item), the sentence's shape (numbers, comparisons, passive verbs, length),
the sentence's first and last tokens and those of its two neighbours, the
neighbours' cue phrases, and the clusters of the sentence's words (the table
``clusters.json.gz`` that ``scripts/build_word_clusters.py`` learns from unlabelled
text), trained on every gold label of a sentence (a sentence annotated OBJECTIVE and
METHODS accepts either). It learns from the training file only; training is
deterministic and the weights file it writes is the same byte for byte.

``--cv K`` scores the shipped settings by K-fold cross-validation over the training
abstracts, and ``--ablation`` does the same for each variant that drops one part.
The feature blocks, the cluster table's settings and the regularisation (c=5,
c_transitions=3) were chosen by their micro F1 on the dev set, which no weight is
fitted on. ``--articles`` prints
a full-text check: agreement with section headers (Introduction = background or
objective, Methods = methods, Results = results, Discussion = conclusions) of the
labels given to the first sentences of the body paragraphs of the JATS and sectioned
JSON-lines articles there, read in article order as ``veriscribe abstract`` reads
them. Header agreement is a noisy proxy (a Results
paragraph may open with its aim), useful only to compare variants. ``--dev`` prints
the dev scores of the written weights.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from veriscribe.documents.articles import Article, expand_inputs, read_articles
from veriscribe.labeller.model import Labeller
from veriscribe.labeller.training import Abstract, Settings, abstract_positions, train
from veriscribe.metrics.labels import LabelScores, label_scores
from veriscribe.text.facets import FACETS, path_label

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
DEFAULT_OUT = ROOT / "src/veriscribe/labeller/weights.json.gz"
SEED = 0

SHIPPED = Settings()
ABLATIONS: dict[str, Settings] = {
    "shipped": SHIPPED,
    "no transitions (each sentence alone)": dataclasses.replace(
        SHIPPED, sequence=False
    ),
    "no character n-grams": dataclasses.replace(SHIPPED, chars=False),
    "no word n-grams": dataclasses.replace(SHIPPED, words=False),
    "no position indicators": dataclasses.replace(SHIPPED, position=False),
    "no fine position (deciles, second, last items)": dataclasses.replace(
        SHIPPED, fine_position=False
    ),
    "no cue phrases": dataclasses.replace(SHIPPED, cues=False),
    "no edge tokens": dataclasses.replace(SHIPPED, edges=False),
    "no neighbour edge tokens": dataclasses.replace(SHIPPED, neighbour_edges=False),
    "no shape indicators": dataclasses.replace(SHIPPED, shape=False),
    "no neighbour cue phrases": dataclasses.replace(SHIPPED, neighbour_cues=False),
    "no word clusters": dataclasses.replace(SHIPPED, clusters=False),
}

# Header-derived labels that count as agreeing with a paragraph's top-level section.
ACCEPTED_FOR_HEADER: dict[str, tuple[str, ...]] = {
    "background": ("background", "objective"),
    "objective": ("objective", "background"),
    "methods": ("methods",),
    "results": ("results",),
    "conclusions": ("conclusions",),
}


def load_biorc(path: Path) -> list[Abstract]:
    """Return the labelled abstracts of a BIORC800 JSON-lines file."""
    abstracts = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                item = json.loads(line)
                abstracts.append(
                    Abstract(
                        tuple(item["sentences"]),
                        tuple(
                            tuple(g.lower() for g in gold) for gold in item["labels"]
                        ),
                    )
                )
    return abstracts


def score(labeller: Labeller, abstracts: Sequence[Abstract]) -> LabelScores:
    """Label each abstract as one sequence and score against the gold sets."""
    gold = [g for a in abstracts for g in a.labels]
    predicted = [
        label
        for a in abstracts
        for label in labeller.label(a.sentences, abstract_positions(len(a.sentences)))
    ]
    return label_scores(gold, predicted)


def cross_validate(
    abstracts: Sequence[Abstract], settings: Settings, folds: int
) -> tuple[LabelScores, float]:
    """Return the pooled scores of K-fold cross-validation and the seconds it took."""
    order = list(range(len(abstracts)))
    random.Random(SEED).shuffle(order)
    gold: list[tuple[str, ...]] = []
    predicted: list[str] = []
    started = time.perf_counter()
    for fold in range(folds):
        held = set(order[fold::folds])
        model = train(
            [a for i, a in enumerate(abstracts) if i not in held], FACETS, settings
        )
        for i in sorted(held):
            a = abstracts[i]
            gold.extend(a.labels)
            predicted.extend(
                model.label(a.sentences, abstract_positions(len(a.sentences)))
            )
    return label_scores(gold, predicted), time.perf_counter() - started


def header_agreement(labeller: Labeller, inputs: Sequence[Path]) -> LabelScores:
    """Score paragraph labels of full texts against their top-level section headers."""
    gold: list[tuple[str, ...]] = []
    predicted: list[str] = []
    for path in expand_inputs([str(p) for p in inputs]):
        for item in read_articles(path):
            if not isinstance(item, Article):
                continue
            labels = labeller.label_paragraphs([p.text for p in item.paragraphs])
            for paragraph, label in zip(item.paragraphs, labels, strict=True):
                accepted = ACCEPTED_FOR_HEADER.get(path_label(paragraph.path[:1]))
                if accepted is not None:
                    gold.append(accepted)
                    predicted.append(label)
    return label_scores(gold, predicted)


def line(name: str, scores: LabelScores) -> str:
    """Format one result line."""
    return (
        f"micro F1 {scores['micro_f1']:.4f}  macro F1 {scores['macro_f1']:.4f}  {name}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Train and write the weights; optionally cross-validate, ablate, check."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--train", type=Path, default=DATA / "biorc800/train.jsonl")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--cv", type=int, default=0, metavar="K")
    parser.add_argument("--ablation", action="store_true")
    parser.add_argument("--articles", type=Path, nargs="+", default=None)
    parser.add_argument("--dev", type=Path, default=None)
    args = parser.parse_args(argv)

    abstracts = load_biorc(args.train)
    variants = ABLATIONS if args.ablation else {"shipped": SHIPPED}
    if args.cv or args.articles is not None:
        for name, settings in variants.items():
            parts = []
            if args.cv:
                scores, seconds = cross_validate(abstracts, settings, args.cv)
                parts.append(f"cv {line('', scores).strip()} ({seconds:.0f} s)")
            if args.articles is not None:
                model = train(abstracts, FACETS, settings)
                headers = header_agreement(model, args.articles)
                parts.append(f"headers {line('', headers).strip()}")
            print(f"{name}: " + " | ".join(parts), flush=True)

    started = time.perf_counter()
    labeller = train(abstracts, FACETS, SHIPPED)
    seconds = time.perf_counter() - started
    args.out.write_bytes(b"")  # fail early on an unwritable path
    labeller.save(args.out)
    shipped = Labeller.from_file(args.out)
    full = [
        labeller.label(a.sentences, abstract_positions(len(a.sentences)))
        for a in abstracts
    ]
    stored = [
        shipped.label(a.sentences, abstract_positions(len(a.sentences)))
        for a in abstracts
    ]
    same = sum(f == s for f, s in zip(full, stored, strict=True)) / len(full)
    print(
        f"wrote {args.out} ({args.out.stat().st_size:,} bytes) in "
        f"{seconds:.0f} s, {labeller.info['iterations']} iterations; "
        f"the stored (float16) weights label {same:.4f} of the training abstracts "
        "as the trained ones do"
    )
    if args.dev is not None:
        dev = score(shipped, load_biorc(args.dev))
        print(line(f"dev ({dev['n']} sentences)", dev))
    return 0 if same == 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
