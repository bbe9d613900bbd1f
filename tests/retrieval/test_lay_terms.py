"""Users' words read in the guidelines' words before retrieval and selection."""

from __future__ import annotations

import pytest

from veriscribe.retrieval.lay_terms import guideline_words, lay_terms, read_lay_terms


@pytest.mark.parametrize(
    ("question", "searched"),
    [
        (
            "Can I give my patient with back pain paracetamol?",
            "Can I give my patient with low back pain acetaminophen?",
        ),
        ("Is Tylenol OK for my bad back?", "Is acetaminophen OK for my low back pain?"),
        ("Benadryl for sleep?", "diphenhydramine for sleep?"),
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
