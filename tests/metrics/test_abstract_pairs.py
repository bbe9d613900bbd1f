"""Abstract pairs for the faithfulness judge: perturbations, evidence, determinism."""

from __future__ import annotations

import random

from veriscribe.metrics.abstract_pairs import (
    AbstractSource,
    build_abstract_pairs,
    change_direction,
    change_entity,
    change_number,
    evidence_for,
    sentence_numbers,
    split_of,
)
from veriscribe.retrieval.bm25 import BM25Index
from veriscribe.text.numbers import ArticleNumbers

BODY = (
    "Dengue is transmitted by Aedes aegypti mosquitoes in tropical cities. "
    "We trapped adult mosquitoes in 120 households during the rainy season of 2019. "
    "Traps caught 3,412 female mosquitoes over twelve weeks of sampling. "
    "Expression of IL-6 increased sharply in infected volunteers after the bite. "
    "TNF levels stayed flat while IL-6 rose in every volunteer we sampled. "
    "Household water containers held most of the larvae that the teams found.\n\n"
    "Larval density was higher in containers without lids than in covered ones. "
    "The insecticide was effective against larvae in all 40 treated containers."
)
ABSTRACT = (
    "Traps in 120 households caught 3,412 female mosquitoes over twelve weeks. "
    "IL-6 expression increased sharply in infected volunteers after a bite. "
    "Larval density was higher in containers without lids than in covered ones. "
    "The insecticide was effective against larvae in the 40 treated containers."
)


def test_a_number_is_changed_to_a_value_the_article_never_states() -> None:
    stated = ArticleNumbers.of(BODY)
    sentence = "Traps in 120 households caught many mosquitoes in 2019."
    changed = change_number(sentence, stated, random.Random(0))
    assert changed is not None and changed != sentence
    assert "2019" in changed  # a year is left alone
    assert stated.unsupported(changed)  # the new value is stated nowhere
    assert change_number("No numbers here at all.", stated, random.Random(0)) is None


def test_decimals_keep_their_places() -> None:
    changed = change_number(
        "The odds ratio was 0.82 overall.", ArticleNumbers(), random.Random(1)
    )
    assert changed is not None
    value = changed.split("was ")[1].split(" ")[0]
    assert len(value.partition(".")[2]) == 2 and value != "0.82"


def test_direction_words_are_reversed_with_their_case() -> None:
    assert change_direction("Levels increased after treatment.") == (
        "Levels decreased after treatment."
    )
    assert change_direction("Higher doses were effective.") == (
        "Lower doses were effective."
    )
    assert change_direction("The drug was effective in mice.") == (
        "The drug was ineffective in mice."
    )
    # No word of direction: the verb's negation is flipped instead.
    assert change_direction("The mosquito is a vector of dengue.") == (
        "The mosquito is not a vector of dengue."
    )


def test_an_entity_is_replaced_by_another_name_of_the_article() -> None:
    changed = change_entity(
        "IL-6 expression rose in volunteers.", ["IL-6", "TNF"], random.Random(0)
    )
    assert changed == "TNF expression rose in volunteers."
    assert change_entity("No names here.", ["TNF"], random.Random(0)) is None
    assert change_entity("TNF rose.", ["TNF"], random.Random(0)) is None


def test_evidence_brings_in_the_sentence_that_states_a_number() -> None:
    article = [
        "Mosquito traps were set in households across the city.",
        "Unrelated text about weather.",
        "In total 3,412 were caught.",
    ]
    index = BM25Index().build([str(i) for i in range(3)], article)
    claim = "Mosquito traps set in households across the city caught 3,412."
    assert evidence_for(index, article, claim, k=1) == [article[0]]
    with_numbers = evidence_for(
        index, article, claim, k=1, numbers=sentence_numbers(article)
    )
    assert with_numbers == [article[0], article[2]]


def test_pairs_are_balanced_labelled_and_deterministic() -> None:
    sources = [AbstractSource("dengue", BODY, ABSTRACT)]
    pairs = build_abstract_pairs(sources, per_article=4, seed=3)
    assert pairs == build_abstract_pairs(sources, per_article=4, seed=3)
    supported = [p for p in pairs if p.label == "supported"]
    changed = [p for p in pairs if p.label != "supported"]
    assert len(supported) == len(changed) >= 3
    # Each author sentence is judged against the same passage as its perturbation.
    for good, bad in zip(supported, changed, strict=True):
        assert good.source == bad.source and good.claim != bad.claim
        assert good.claim in ABSTRACT and good.how == "author sentence"
        assert bad.label == ("not_supported" if bad.how == "entity" else "contradicted")
    kinds = {p.how for p in changed}
    assert "number" in kinds and len(kinds) >= 2
    assert {p.section for p in pairs} == {"dengue"}


def test_the_split_is_a_fixed_half_by_article() -> None:
    splits = [split_of(f"article-{i}") for i in range(200)]
    assert splits == [split_of(f"article-{i}") for i in range(200)]
    assert 70 < splits.count("test") < 130
