from __future__ import annotations

import json
from pathlib import Path

import pytest

from veriscribe.errors import ConfigError
from veriscribe.text.entities import (
    abbreviations,
    key_phrases,
    link_concepts,
    textrank_scores,
)

FACET = (
    "Zika virus (ZIKV) is a mosquito-borne flavivirus related to dengue virus. "
    "ZIKV infection in humans causes a febrile illness similar to dengue fever. "
    "The ZIKV genome encodes a single polyprotein. Phylogenetic analyses of ZIKV "
    "strains revealed two lineages of Zika virus, an African lineage and an Asian "
    "lineage. The Asian lineage caused the epidemic on Yap Island. Mosquito vectors "
    "such as Aedes aegypti transmit the virus between primates and humans."
)


def test_textrank_ranks_the_hub_word_first() -> None:
    runs = [["virus", "a"], ["virus", "b"], ["virus", "c"], ["d", "virus"], ["e"]]
    scores = textrank_scores(runs)
    assert max(scores, key=scores.__getitem__) == "virus"
    assert sum(scores.values()) == pytest.approx(1.0)
    assert scores["e"] < scores["a"]  # an isolated word keeps only the teleport share
    assert textrank_scores([]) == {}


def test_abbreviations_work_offline() -> None:
    assert abbreviations(FACET) == {"ZIKV": "Zika virus"}


def test_key_phrases_expand_abbreviations_and_respect_n() -> None:
    phrases = key_phrases(FACET, 5)
    assert len(phrases) == 5
    assert not any("ZIKV" in p for p in phrases)
    assert any("Zika virus" in p for p in phrases)
    assert len({p.lower() for p in phrases}) == 5
    for phrase in phrases:
        assert 1 <= len(phrase.split()) <= 8  # four words, each maybe expanded
    assert key_phrases(FACET, 2) == phrases[:2]


def test_key_phrases_skip_stop_words_and_numbers() -> None:
    phrases = key_phrases(
        "The results of the study were shown in 2019 and 2020. " * 3, 5
    )
    assert phrases == []
    assert key_phrases("", 5) == []
    assert key_phrases(FACET, 0) == []


def test_hyphenated_words_stay_whole() -> None:
    phrases = key_phrases(FACET, 10)
    assert any("mosquito-borne" in p for p in phrases)
    assert not any(p.startswith("borne") for p in phrases)


def write_kb(tmp_path: Path) -> Path:
    records = [
        {
            "concept_id": "C0276289",
            "canonical_name": "Zika Virus Infection",
            "aliases": ["ZIKV infection", "Zika fever"],
            "types": ["T047"],
        },
        {
            "concept_id": "C0318793",
            "canonical_name": "Zika Virus",
            "aliases": ["ZIKV", "Zika virus"],
            "types": ["T005"],
        },
        {"concept_id": "C0002085", "canonical_name": "Aedes aegypti", "aliases": []},
    ]
    path = tmp_path / "kb.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def test_link_concepts_without_a_knowledge_base_is_identity() -> None:
    phrases = ["anything", "at all"]
    assert link_concepts(phrases, None) == phrases


def test_link_concepts_keeps_linked_phrases_one_per_concept(tmp_path: Path) -> None:
    kb = write_kb(tmp_path)
    phrases = ["Zika virus", "febrile illness", "Zika viruses", "Aedes aegypti", "ZIKV"]
    assert link_concepts(phrases, kb) == ["Zika virus", "Aedes aegypti"]
    assert link_concepts(["zika fever"], kb) == ["zika fever"]


def test_link_concepts_rejects_missing_or_bad_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        link_concepts(["x"], tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"name": "no id"}\n')
    with pytest.raises(ConfigError, match="concept_id"):
        link_concepts(["x"], bad)
