from __future__ import annotations

import gzip
import json
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp  # type: ignore[import-untyped]
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

from veriscribe.metrics.labels import label_scores
from veriscribe.nodes.abstract.facets import FACETS
from veriscribe.nodes.abstract.labeller import (
    WEIGHTS_RESOURCE,
    Labeller,
    _decode_array,
    position_features,
)

ROOT = Path(__file__).resolve().parents[2]
BIORC = ROOT.parent / "shared" / "data" / "biorc800"
needs_data = pytest.mark.skipif(
    not BIORC.is_dir(), reason="shared/data/biorc800 is not beside the repository"
)


def load_dev() -> tuple[list[str], list[float], list[list[str]]]:
    sentences: list[str] = []
    positions: list[float] = []
    gold: list[list[str]] = []
    for line in (BIORC / "dev.jsonl").read_text("utf-8").splitlines():
        item = json.loads(line)
        count = len(item["sentences"])
        for index, (text, labels) in enumerate(
            zip(item["sentences"], item["labels"], strict=True)
        ):
            sentences.append(text)
            positions.append(index / count)
            gold.append(labels)
    return sentences, positions, gold


def shipped_weights() -> dict[str, Any]:
    blob = resources.files("veriscribe.nodes.abstract").joinpath(WEIGHTS_RESOURCE)
    loaded: dict[str, Any] = json.loads(gzip.decompress(blob.read_bytes()))
    return loaded


def sklearn_twin(
    weights: dict[str, Any],
) -> tuple[list[TfidfVectorizer], LogisticRegression]:
    """Build scikit-learn objects that hold exactly the shipped parameters."""
    vectorisers = []
    for config in weights["vectorisers"]:
        vectoriser = TfidfVectorizer(
            analyzer=config["analyzer"],
            ngram_range=tuple(config["ngram_range"]),
            lowercase=config["lowercase"],
            token_pattern=config["token_pattern"],
            sublinear_tf=config["sublinear_tf"],
            norm=config["norm"],
            smooth_idf=config["smooth_idf"],
            vocabulary={term: i for i, term in enumerate(config["vocabulary"])},
        )
        vectoriser.idf_ = _decode_array(config["idf"])
        vectorisers.append(vectoriser)
    model = LogisticRegression()
    model.classes_ = np.array(weights["labels"])
    model.coef_ = _decode_array(weights["coef"])
    model.intercept_ = _decode_array(weights["intercept"])
    return vectorisers, model


def test_weights_file_is_small_json() -> None:
    blob = resources.files("veriscribe.nodes.abstract").joinpath(WEIGHTS_RESOURCE)
    assert len(blob.read_bytes()) < 3_000_000
    weights = shipped_weights()
    assert weights["format"] == 1
    assert sorted(weights["labels"]) == sorted(FACETS)


def test_load_is_cached() -> None:
    assert Labeller.load() is Labeller.load()
    assert set(Labeller.load().labels) == set(FACETS)


@needs_data
def test_dev_micro_f1_with_shipped_weights() -> None:
    sentences, positions, gold = load_dev()
    predicted = Labeller.load().label(sentences, positions)
    scores = label_scores(gold, predicted)
    assert scores["n"] == 1590
    assert scores["micro_f1"] >= 0.80
    assert scores["macro_f1"] >= 0.80


@needs_data
def test_runtime_equals_sklearn_on_dev() -> None:
    sentences, positions, _ = load_dev()
    vectorisers, model = sklearn_twin(shipped_weights())
    blocks = [v.transform(sentences) for v in vectorisers]
    blocks.append(sp.csr_matrix(position_features(positions)))
    x = sp.hstack(blocks).tocsr()
    labeller = Labeller.load()
    assert labeller.label(sentences, positions) == list(model.predict(x))
    np.testing.assert_allclose(
        labeller.predict_proba(sentences, positions), model.predict_proba(x), atol=1e-9
    )


def test_tokenisation_edge_cases_match_sklearn() -> None:
    texts = [
        "",
        "a",
        "I",
        "  spaced\tout\n words  ",
        "Über-expression of IL-6 (p<0.05), i.e. 3x; CD4+ T-cells!",
        "\u00e9\u00e9 ab",
    ]
    vectorisers, model = sklearn_twin(shipped_weights())
    positions = [0.0, 0.1, 0.5, 0.2, 0.99, 1.0]
    x = sp.hstack(
        [v.transform(texts) for v in vectorisers]
        + [sp.csr_matrix(position_features(positions))]
    ).tocsr()
    np.testing.assert_allclose(
        Labeller.load().decision_function(texts, positions),
        model.decision_function(x),
        atol=1e-9,
    )


def test_position_features() -> None:
    assert position_features([0.0, 0.1, 0.2, 0.9]).tolist() == [
        [1.0, 1.0],
        [0.0, 1.0],
        [0.0, 0.0],
        [0.0, 0.0],
    ]
    with pytest.raises(ValueError):
        position_features([1.5])
    with pytest.raises(ValueError):
        position_features([float("nan")])


def test_label_checks_arguments() -> None:
    labeller = Labeller.load()
    with pytest.raises(ValueError, match="positions"):
        labeller.label(["One sentence."], [0.0, 0.5])
    assert labeller.label([], []) == []
    assert labeller.predict_proba([], []).shape == (0, len(labeller.labels))


def test_probabilities_sum_to_one() -> None:
    labeller = Labeller.load()
    probabilities = labeller.predict_proba(
        ["We enrolled 50 patients.", "Hello."], [0.4, 1.0]
    )
    assert probabilities.shape == (2, 6)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0)


def test_labels_typical_paragraph_openings() -> None:
    paragraphs = [
        "Malaria remains a leading cause of death among children in sub-Saharan "
        "Africa. Many more words follow here.",
        "Blood samples were collected from 120 participants and stored at -80 °C. "
        "Then more.",
        "The mean age of the participants was 42 years, and 58% were women (Table 1).",
        "In conclusion, these findings suggest that screening should be expanded. End.",
    ]
    labels = Labeller.load().label_paragraphs(paragraphs)
    assert labels == ["background", "methods", "results", "conclusions"]


def test_weights_of_another_format_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"format": 99}))
    with pytest.raises(ValueError, match="format"):
        Labeller.from_file(path)


# ------------------------------------------------------------------ label_scores


def test_label_scores_multi_label_rule() -> None:
    gold = [["OBJECTIVE", "METHODS"], ["RESULTS"], ["RESULTS"], ["BACKGROUND"]]
    pred = ["methods", "results", "conclusions", "background"]
    scores = label_scores(gold, pred)
    assert scores["micro_f1"] == pytest.approx(0.75)
    assert scores["accuracy"] == scores["micro_f1"]
    labels = scores["labels"]
    assert labels["methods"] == {
        "precision": 1.0,
        "recall": 1.0,
        "f1": 1.0,
        "support": 1,
    }
    assert "objective" not in labels  # correctly covered by the methods prediction
    assert labels["results"]["recall"] == pytest.approx(0.5)
    assert labels["conclusions"]["precision"] == 0.0
    expected_macro = (1.0 + 1.0 + 2 / 3 + 0.0) / 4
    assert scores["macro_f1"] == pytest.approx(expected_macro)


def test_label_scores_wrong_prediction_charges_first_gold_label() -> None:
    scores = label_scores([["OBJECTIVE", "METHODS"]], ["results"])
    assert scores["labels"]["objective"]["recall"] == 0.0
    assert "methods" not in scores["labels"]
    assert scores["micro_f1"] == 0.0


def test_label_scores_reads_none_as_other() -> None:
    assert label_scores([["OTHER"]], ["none"])["micro_f1"] == 1.0


def test_label_scores_checks_lengths() -> None:
    with pytest.raises(ValueError):
        label_scores([["RESULTS"]], [])
    with pytest.raises(ValueError):
        label_scores([[]], ["results"])
