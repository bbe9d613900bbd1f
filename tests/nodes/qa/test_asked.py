"""A chat's follow-up read with the question before it."""

from __future__ import annotations

from veriscribe.nodes.qa.asked import (
    is_follow_up,
    said_before,
    searched_question,
    with_topic,
)
from veriscribe.nodes.qa.state import QAState, Turn


def turn(question: str) -> Turn:
    return Turn(question=question, answer="...")


def test_a_follow_up_carries_the_topic_and_drops_what_it_replaces() -> None:
    history = [turn("Should opioids be used for chronic low back pain?")]
    state = QAState(question="What about for acute low back pain?", history=history)
    searched = searched_question(state)
    assert "opioids" in searched and "acute" in searched
    assert "chronic" not in searched


def test_a_question_of_its_own_is_searched_as_asked() -> None:
    history = [turn("Should opioids be used for chronic low back pain?")]
    question = "Which inhaler should a patient with COPD start first?"
    assert not is_follow_up(question, history)
    assert searched_question(QAState(question=question, history=history)) == question
    assert not is_follow_up("What about for acute low back pain?", [])


def test_the_topic_is_carried_over_two_follow_ups() -> None:
    history = [
        turn("Should opioids be used for chronic low back pain?"),
        turn("What about acute pain?"),
    ]
    state = QAState(question="And for older adults?", history=history)
    assert "opioids" in searched_question(state)


def test_with_topic_adds_only_new_words() -> None:
    assert with_topic("And in pregnancy?", "Is aspirin safe?") == (
        "And in pregnancy? (aspirin safe)"
    )


def test_only_a_follow_up_leans_on_the_answer_before() -> None:
    history = [
        Turn(
            question="Should opioids be used for chronic low back pain?",
            answer="We recommend against opioids.",
        )
    ]
    follow_up = QAState(question="What about for acute low back pain?", history=history)
    assert said_before(follow_up) == "We recommend against opioids."
    own = QAState(
        question="Which exercise programs help patients with knee osteoarthritis?",
        history=history,
    )
    assert said_before(own) == ""
    assert said_before(QAState(question="What about acute pain?")) == ""
