"""Tests for reading the term a question asks to define, and the texts that define it."""

from __future__ import annotations

import pytest

from veriscribe.retrieval.definitions import defined_term, defines


@pytest.mark.parametrize(
    ("question", "term"),
    [
        ("What is MEDD?", "MEDD"),
        ("what are NSAIDs", "NSAIDs"),
        ("Define pain according to the guideline.", "pain"),
        ("Define the term chronic pain", "chronic pain"),
        ("What is meant by opioid tapering?", "opioid tapering"),
        ("What does PEG stand for?", "PEG"),
        ("What does the abbreviation SUD mean?", "SUD"),
        ("What is the definition of an opioid use disorder?", "opioid use disorder"),
    ],
)
def test_a_question_asking_for_a_meaning_names_its_term(
    question: str, term: str
) -> None:
    assert defined_term(question) == term


@pytest.mark.parametrize(
    "question",
    [
        "What is the recommended starting dose of buprenorphine for adults?",
        "When should naloxone be offered?",
        "Is MEDD above 90 mg a risk?",
        "How is pain assessed?",
        "What is",
        "",
    ],
)
def test_other_questions_name_no_term(question: str) -> None:
    assert defined_term(question) is None


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("MEDD refers to the morphine equivalent daily dose.", "MEDD"),
        ("Pain is defined as an unpleasant sensory experience.", "pain"),
        ("Here the term opioid tapering means a gradual dose cut.", "opioid tapering"),
        (
            "The definition of chronic pain used here is pain beyond three months.",
            "chronic pain",
        ),
        ("Dosing is given as morphine equivalent daily dose (MEDD).", "MEDD"),
        ("Compute the MEDD (morphine equivalent daily dose) at each visit.", "MEDD"),
        ("Opioids are described as drugs acting on opioid receptors.", "opioids"),
    ],
)
def test_the_forms_of_a_definition(text: str, term: str) -> None:
    assert defines(text, term)


@pytest.mark.parametrize(
    ("text", "term"),
    [
        # A longer term is defined, not the one inside it.
        ("Chronic pain is defined as pain lasting three months.", "pain"),
        # A use of the term, not a definition.
        ("Keep the MEDD below 90 mg when possible.", "MEDD"),
        ("Recompute the MEDD (see below) after every change.", "MEDD"),
        # An abbreviation is matched with its case: "medd" is not "MEDD".
        ("The word medd refers to nothing here.", "MEDD"),
        ("", "pain"),
    ],
)
def test_uses_are_not_definitions(text: str, term: str) -> None:
    assert not defines(text, term)
