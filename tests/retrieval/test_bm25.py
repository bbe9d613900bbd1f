"""Tests for the BM25 baseline retriever."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from veriscribe.errors import InputError
from veriscribe.retrieval.bm25 import K1, B, BM25Index
from veriscribe.text.tokens import bm25_tokens

CPGQA = Path(__file__).resolve().parents[3] / "shared" / "data" / "guidelines" / "cpgqa"

TEXTS = {
    "statins": "Statin therapy lowers LDL cholesterol in adults with diabetes.",
    "aspirin": "Aspirin may be considered for primary prevention of heart attacks.",
    "bp": "Blood pressure should be measured with a validated cuff at each visit.",
    "smoking": "Smokers should be offered counselling and nicotine replacement.",
    "empty": "",
}


@pytest.fixture
def index() -> BM25Index:
    return BM25Index().build(list(TEXTS), list(TEXTS.values()))


def test_parameters_follow_the_paper() -> None:
    assert (K1, B) == (1.5, 0.75)


def test_tokenize_lowercases_drops_stop_words_and_stems() -> None:
    assert bm25_tokens("The Statins were LOWERING cholesterol, in 2 of 3 adults!") == [
        "statin",
        "lower",
        "cholesterol",
        "2",
        "3",
        "adult",
    ]
    assert bm25_tokens("HbA1c_level") == ["hba1c", "level"]
    assert bm25_tokens("the and of") == []


def test_search_ranks_the_matching_text_first(index: BM25Index) -> None:
    assert index.search("Does a statin lower cholesterol?", 3)[0][0] == "statins"
    assert index.search("measuring blood pressure", 3)[0][0] == "bp"
    (only,) = index.search("smoking cessation counselling", 1)
    assert only[0] == "smoking" and only[1] > 0


def test_search_scores_are_sorted_and_positive(index: BM25Index) -> None:
    results = index.search("adults prevention blood cholesterol", 10)
    scores = [score for _, score in results]
    assert scores == sorted(scores, reverse=True)
    assert all(score > 0 for score in scores)
    assert len(results) <= len(TEXTS)


def test_search_edge_cases(index: BM25Index) -> None:
    assert index.search("quantum chromodynamics", 5) == []
    assert index.search("the of and", 5) == []
    assert index.search("statin", 0) == []
    assert [doc for doc, _ in index.search("adults prevention", 50)] in (
        ["statins", "aspirin"],
        ["aspirin", "statins"],
    )
    assert len(index) == 5


def test_build_validates_input() -> None:
    with pytest.raises(ValueError):
        BM25Index().build(["a"], ["x", "y"])
    with pytest.raises(ValueError):
        BM25Index().build([], [])
    with pytest.raises(ValueError):
        BM25Index().build(["a", "a"], ["x", "y"])
    with pytest.raises(RuntimeError):
        BM25Index().search("x", 1)


def test_save_and_load_directory(index: BM25Index, tmp_path: Path) -> None:
    index.save(tmp_path / "bm25")
    loaded = BM25Index.load(tmp_path / "bm25")
    assert loaded.ids == index.ids
    for query in ("statin cholesterol", "blood pressure cuff", "aspirin prevention"):
        assert loaded.search(query, 5) == index.search(query, 5)


def test_bytes_round_trip(index: BM25Index) -> None:
    data = index.to_bytes()
    loaded = BM25Index.from_bytes(data)
    assert loaded.search("nicotine replacement", 3) == index.search(
        "nicotine replacement", 3
    )


def test_load_rejects_other_data(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        BM25Index.load(tmp_path)
    with pytest.raises(InputError):
        BM25Index.from_bytes(b"not a zip")


def test_cpgqa_hit_rate() -> None:
    if not (CPGQA / "passages.jsonl").is_file():
        pytest.skip("cpgQA data not available")
    passages = [
        json.loads(line)
        for line in (CPGQA / "passages.jsonl").read_text().splitlines()
        if line.strip()
    ]
    questions = [
        json.loads(line)
        for line in (CPGQA / "questions.jsonl").read_text().splitlines()
        if line.strip()
    ]
    index = BM25Index().build(
        [p["passage_id"] for p in passages], [p["text"] for p in passages]
    )
    ks = (1, 3, 5, 10)
    hits = dict.fromkeys(ks, 0)
    for question in questions:
        ranked = [doc for doc, _ in index.search(question["question"], max(ks))]
        for k in ks:
            hits[k] += question["passage_id"] in ranked[:k]
    rates = {k: hits[k] / len(questions) for k in ks}
    print(
        f"cpgQA BM25 hit rate over {len(questions)} questions: "
        + ", ".join(f"@{k}={rate:.3f}" for k, rate in rates.items())
    )
    assert rates[1] <= rates[3] <= rates[5] <= rates[10]
    assert rates[5] >= 0.5
