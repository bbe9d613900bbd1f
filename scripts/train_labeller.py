"""Train the first-sentence labeller on BIORC800 and write its JSON weights.

Usage::

    python scripts/train_labeller.py \
        [--train ../shared/data/biorc800/train.jsonl] \
        [--dev ../shared/data/biorc800/dev.jsonl] \
        [--articles ../shared/data/articles] \
        [--out src/veriscribe/nodes/abstract/labeller_weights.json.gz]

The model: TF-IDF of word 1-2-grams and within-word character 3-5-grams, two position
indicators (first item; first fifth), multinomial logistic regression. Each training
sentence takes its first gold label. The script checks that the numpy runtime predicts
what scikit-learn predicts, and prints micro and macro F1 on the dev set.

With ``--articles`` it also prints a full-text check: the labeller's agreement with
section headers (Introduction = background or objective, Methods = methods, Results =
results, Discussion = conclusions) on the first sentences of the body paragraphs of
the JATS and sectioned JSON-lines articles there, for every position encoding tried
when the position feature was chosen. Header agreement is a noisy proxy (a Results
paragraph may open with its aim), useful only to compare encodings.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp  # type: ignore[import-untyped]
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

from veriscribe.documents.articles import Article, expand_inputs, read_articles
from veriscribe.metrics.labels import label_scores
from veriscribe.nodes.abstract.facets import first_sentence, path_label
from veriscribe.nodes.abstract.labeller import (
    EARLY_BELOW,
    FORMAT_VERSION,
    Labeller,
    position_features,
)

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
DEFAULT_OUT = ROOT / "src/veriscribe/nodes/abstract/labeller_weights.json.gz"
C = 3.0
SEED = 0

Matrix = Any  # a scipy sparse matrix


def load_biorc(path: Path) -> tuple[list[str], list[float], list[list[str]]]:
    """Return sentences, positions (index / abstract length) and gold label lists."""
    sentences: list[str] = []
    positions: list[float] = []
    gold: list[list[str]] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            item = json.loads(line)
            count = len(item["sentences"])
            for index, (text, labels) in enumerate(
                zip(item["sentences"], item["labels"], strict=True)
            ):
                sentences.append(text)
                positions.append(index / count)
                gold.append([label.lower() for label in labels])
    return sentences, positions, gold


def make_vectorisers() -> list[TfidfVectorizer]:
    """Return the two unfitted vectorisers of the model."""
    common: dict[str, Any] = {"sublinear_tf": True, "min_df": 2, "lowercase": True}
    return [
        TfidfVectorizer(analyzer="word", ngram_range=(1, 2), **common),
        TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), **common),
    ]


PositionEncoder = Callable[[Sequence[float]], npt.NDArray[np.float64]]


def _bins(count: int) -> PositionEncoder:
    def encode(positions: Sequence[float]) -> npt.NDArray[np.float64]:
        values = np.asarray(positions)
        index = np.minimum((values * count).astype(int), count - 1)
        encoded: npt.NDArray[np.float64] = np.eye(count)[index]
        return encoded

    return encode


ENCODINGS: dict[str, PositionEncoder] = {
    "none": lambda p: np.zeros((len(p), 0)),
    "first+early (shipped)": position_features,
    "thirds": _bins(3),
    "quintiles": _bins(5),
    "linear+square": lambda p: np.stack([np.asarray(p), np.asarray(p) ** 2], axis=1),
}


def features(
    vectorisers: Sequence[TfidfVectorizer],
    sentences: Sequence[str],
    positions: Sequence[float],
    encode: PositionEncoder,
    *,
    fit: bool = False,
) -> Matrix:
    """Stack the TF-IDF blocks and the position block, as the runtime does."""
    blocks = [
        v.fit_transform(sentences) if fit else v.transform(sentences)
        for v in vectorisers
    ]
    blocks.append(sp.csr_matrix(encode(positions)))
    return sp.hstack(blocks).tocsr()


def train(
    sentences: Sequence[str],
    positions: Sequence[float],
    gold: Sequence[Sequence[str]],
    encode: PositionEncoder,
) -> tuple[list[TfidfVectorizer], LogisticRegression]:
    """Fit vectorisers and the classifier on the first gold label of each sentence."""
    vectorisers = make_vectorisers()
    x = features(vectorisers, sentences, positions, encode, fit=True)
    model = LogisticRegression(C=C, max_iter=5000, random_state=SEED)
    model.fit(x, [labels[0] for labels in gold])
    return vectorisers, model


def encode_array(array: npt.NDArray[Any], dtype: str) -> dict[str, Any]:
    """Encode an array as base64 of its little-endian bytes (exactly reversible)."""
    data = np.ascontiguousarray(array, dtype=np.dtype(dtype))
    return {
        "dtype": dtype,
        "shape": list(data.shape),
        "data": base64.b64encode(data.tobytes()).decode("ascii"),
    }


def weights_document(
    vectorisers: Sequence[TfidfVectorizer],
    model: LogisticRegression,
    metrics: dict[str, float],
) -> dict[str, Any]:
    """Return the JSON document that ``Labeller`` loads."""
    configs = []
    for v in vectorisers:
        terms = [""] * len(v.vocabulary_)
        for term, index in v.vocabulary_.items():
            terms[index] = term
        configs.append(
            {
                "analyzer": v.analyzer,
                "ngram_range": list(v.ngram_range),
                "lowercase": v.lowercase,
                "token_pattern": v.token_pattern,
                "sublinear_tf": v.sublinear_tf,
                "norm": v.norm,
                "smooth_idf": v.smooth_idf,
                "vocabulary": terms,
                "idf": encode_array(v.idf_, "<f8"),
            }
        )
    return {
        "format": FORMAT_VERSION,
        "model": "tfidf-logreg",
        "trained_on": "BIORC800 train (first gold label per sentence)",
        "labels": [str(label) for label in model.classes_],
        "vectorisers": configs,
        "position": {"features": ["first", f"below_{EARLY_BELOW}"]},
        "coef": encode_array(model.coef_, "<f4"),
        "intercept": encode_array(model.intercept_, "<f8"),
        "metrics": metrics,
    }


def fulltext_items(folder: Path) -> tuple[list[str], list[float], list[list[str]]]:
    """Return first sentences, positions and header-derived labels of body paragraphs."""
    accepted = {
        "background": ["background", "objective"],
        "objective": ["objective", "background"],
        "methods": ["methods"],
        "results": ["results"],
        "conclusions": ["conclusions"],
    }
    sentences: list[str] = []
    positions: list[float] = []
    gold: list[list[str]] = []
    for path in expand_inputs([str(folder)]):
        for item in read_articles(path):
            if not isinstance(item, Article):
                continue
            count = len(item.paragraphs)
            for index, paragraph in enumerate(item.paragraphs):
                label = path_label(paragraph.path[:1])
                if label in accepted:
                    sentences.append(first_sentence(paragraph.text))
                    positions.append(index / count)
                    gold.append(accepted[label])
    return sentences, positions, gold


def main(argv: Sequence[str] | None = None) -> int:
    """Train, check against scikit-learn, write the weights and print the scores."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--train", type=Path, default=DATA / "biorc800/train.jsonl")
    parser.add_argument("--dev", type=Path, default=DATA / "biorc800/dev.jsonl")
    parser.add_argument("--articles", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)

    train_s, train_p, train_g = load_biorc(args.train)
    dev_s, dev_p, dev_g = load_biorc(args.dev)

    if args.articles is not None:
        full_s, full_p, full_g = fulltext_items(args.articles)
        print(f"position encodings ({len(full_s)} full-text first sentences):")
        for name, encode in ENCODINGS.items():
            vs, m = train(train_s, train_p, train_g, encode)
            dev = label_scores(dev_g, m.predict(features(vs, dev_s, dev_p, encode)))
            full = label_scores(full_g, m.predict(features(vs, full_s, full_p, encode)))
            print(
                f"  {name:24s} dev micro {dev['micro_f1']:.3f} macro "
                f"{dev['macro_f1']:.3f} | headers micro {full['micro_f1']:.3f} "
                f"macro {full['macro_f1']:.3f}"
            )

    vectorisers, model = train(train_s, train_p, train_g, position_features)
    sk_pred = list(
        model.predict(features(vectorisers, dev_s, dev_p, position_features))
    )
    scores = label_scores(dev_g, sk_pred)
    metrics = {
        "dev_micro_f1": round(scores["micro_f1"], 4),
        "dev_macro_f1": round(scores["macro_f1"], 4),
    }
    document = weights_document(vectorisers, model, metrics)
    payload = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    args.out.write_bytes(gzip.compress(payload.encode("utf-8"), mtime=0))

    runtime = Labeller.from_file(args.out)
    rt_pred = runtime.label(dev_s, dev_p)
    agree = sum(a == b for a, b in zip(rt_pred, sk_pred, strict=True)) / len(sk_pred)
    rt_scores = label_scores(dev_g, rt_pred)
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes)")
    print(
        f"dev sentences: {len(dev_s)}; runtime agrees with scikit-learn on {agree:.4f}"
    )
    print(
        f"dev micro F1 {rt_scores['micro_f1']:.4f}, macro F1 {rt_scores['macro_f1']:.4f}"
    )
    for name, s in rt_scores["labels"].items():
        print(
            f"  {name:12s} P {s['precision']:.3f} R {s['recall']:.3f} "
            f"F1 {s['f1']:.3f} n {s['support']}"
        )
    return 0 if agree == 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
