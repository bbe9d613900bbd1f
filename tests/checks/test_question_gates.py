"""Quality gates of generated questions and the cleaning of model replies."""

from __future__ import annotations

import pytest

from veriscribe.checks.question_gates import GateInput, check_question
from veriscribe.nodes.questions import clean_question

SECTION = GateInput(
    section_title="Tapering opioid therapy",
    section_text=(
        "Consider tapering to a reduced dose or discontinuing opioid therapy when the "
        "risks of continued therapy outweigh the benefits for the patient."
    ),
    doc_id="VADoDOACPG",
    doc_title="VA/DoD Clinical Practice Guideline for Opioid Therapy for Chronic Pain",
)


@pytest.mark.parametrize(
    ("question", "failed"),
    [
        (
            "When should a clinician lower the dose for a man on long-term oxycodone "
            "who is newly drowsy?",
            [],
        ),
        ("What is tapering opioid therapy?", ["title_copy"]),
        ("Tapering opioid therapy?", ["not_a_question", "title_copy"]),
        ("How should opioids be tapered", ["not_a_question"]),
        (
            "Should I consider tapering to a reduced dose or discontinuing opioid "
            "therapy when risks grow?",
            ["verbatim_copy"],
        ),
        ("Per VADoDOACPG, when is a dose reduction advised?", ["names_guideline"]),
        (
            "Under the VA/DoD Clinical Practice Guideline for Opioid Therapy for Chronic "
            "Pain, who needs naloxone?",
            ["names_guideline"],
        ),
        ("What does this section advise for a drowsy patient?", ["refers_to_source"]),
        ("According to the passage, when is a dose reduced?", ["refers_to_source"]),
    ],
)
def test_each_gate(question: str, failed: list[str]) -> None:
    assert check_question(question, SECTION) == failed


def test_nine_shared_words_are_not_a_verbatim_copy() -> None:
    # "reduced dose or discontinuing opioid therapy when the risks" is 9 words.
    question = (
        "Is the reduced dose or discontinuing opioid therapy when the risks rise wise?"
    )
    assert "verbatim_copy" not in check_question(question, SECTION)


def test_a_plain_word_id_is_not_a_name() -> None:
    plain = GateInput("Diagnosis", "Blood pressure is measured twice.", "hypertension")
    assert (
        check_question("How many readings confirm hypertension in adults?", plain) == []
    )


@pytest.mark.parametrize(
    ("reply", "question"),
    [
        ("What dose?\nSecond line", "What dose?"),
        ('**Question:** "When is a taper advised?"', "When is a taper advised?"),
        (
            "Question:\n  When is a taper advised? It depends.",
            "When is a taper advised?",
        ),
        (
            "Patient: I am 70 and worried. Should I stop?",
            "I am 70 and worried. Should I stop?",
        ),
        ("\n\n", ""),
        (
            "Patient age: 65 years old\nCondition: chronic pain\n"
            "Question: Should the dose be lowered?\nAnswer: yes",
            "Patient age: 65 years old. Condition: chronic pain. Should the dose be lowered?",
        ),
        ("A 35-year-old man\n1\n2\n3\n4\n5\n6\nWhat now?", "A 35-year-old man."),
    ],
)
def test_clean_question(reply: str, question: str) -> None:
    assert clean_question(reply) == question
