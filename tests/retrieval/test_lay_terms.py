"""Users' words read in the guidelines' words before retrieval and selection."""

from __future__ import annotations

import pytest

from veriscribe.retrieval.lay_terms import (
    drug_classes,
    guideline_words,
    lay_terms,
    read_drug_classes,
    read_lay_terms,
)


@pytest.mark.parametrize(
    ("question", "searched"),
    [
        (
            "Can I give my patient with back pain paracetamol?",
            "Can I give my patient with low back pain acetaminophen?",
        ),
        ("Is Tylenol OK for my bad back?", "Is acetaminophen OK for my low back pain?"),
        ("Benadryl for sleep?", "diphenhydramine (or antihistamine) for sleep?"),
        (
            "Should people with COPD get flu shots?",
            "Should people with COPD get influenza vaccination?",
        ),
        ("What is the BP goal?", "What is the blood pressure goal?"),
    ],
)
def test_users_terms_become_the_guidelines(question: str, searched: str) -> None:
    assert guideline_words(question) == searched


def test_abbreviations_match_only_as_written() -> None:
    # "bp" and "prep" in lower case are not the abbreviations BP and PrEP.
    assert guideline_words("meal prep and bp") == "meal prep and bp"
    assert guideline_words("Is PrEP safe?") == "Is pre-exposure prophylaxis safe?"


def test_the_guidelines_phrase_is_left_as_it_is() -> None:
    assert guideline_words("low back pain in adults") == "low back pain in adults"
    assert guideline_words("chronic kidney disease") == "chronic kidney disease"


def test_the_shipped_list_parses_and_a_bad_line_is_named() -> None:
    terms = lay_terms()
    assert terms.folded["paracetamol"] == "acetaminophen"
    assert terms.exact["BP"] == "blood pressure"
    with pytest.raises(ValueError, match="line 2"):
        read_lay_terms("# notes\nTylenol acetaminophen\n")


def test_a_word_the_corpus_uses_is_read_as_the_corpus_means_it() -> None:
    # In the opioid guideline "OT" is opioid therapy, and "NSAIDs" its own word.
    uses = {"OT", "NSAIDs"}
    question = "Which risks of OT and NSAIDs, and is paracetamol safer?"
    assert guideline_words(question, uses.__contains__) == (
        "Which risks of OT and NSAIDs, and is acetaminophen safer?"
    )
    assert "occupational therapy" in guideline_words(question)


def test_a_drug_is_searched_with_the_class_a_guideline_names_it_by() -> None:
    # Guidelines recommend by class: "the concurrent use of benzodiazepines and opioids".
    assert guideline_words("My patient takes Xanax and Percocet together.") == (
        "My patient takes alprazolam (or benzodiazepine) and oxycodone (or opioid) together."
    )
    # A question that names the class already is searched as asked.
    asked = "Should benzodiazepines be given with lorazepam for alcohol withdrawal?"
    assert guideline_words(asked) == asked
    assert drug_classes().classes["losartan"] == "angiotensin receptor blocker"
    with pytest.raises(ValueError, match="drug classes line 1"):
        read_drug_classes("losartan\n")
