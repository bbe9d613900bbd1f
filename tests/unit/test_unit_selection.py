"""Choosing the sentences that answer a question by their score."""

from __future__ import annotations

from veriscribe.retrieval.units import SectionText, choose_units, score_units

DOSING = SectionText(
    "g:dosing",
    "Dosing",
    "Start opioids at the lowest effective dose. Reassess the benefits and harms "
    "within four weeks of starting. Naloxone should be offered to every patient "
    "on long-term therapy.",
)
TAPER = SectionText(
    "g:taper",
    "Tapering",
    "Consider tapering when the harms outweigh the benefits. Tapering should be "
    "done as follows:\n"
    "- reduce the dose by 10% per month\n"
    "- see the patient at every step\n"
    "- offer support for withdrawal symptoms\n\n"
    "Faster tapers are rarely needed.",
)


def choose(question: str, *sections: SectionText, **kwargs: int) -> list[str]:
    selection = choose_units(score_units(question, sections), **kwargs)  # type: ignore[arg-type]
    return [unit.text for unit in selection.units]


def test_the_best_sentence_comes_first() -> None:
    chosen = choose("What dose should opioids be started at?", DOSING, TAPER)
    assert chosen[0] == "Start opioids at the lowest effective dose."


def test_a_lead_in_brings_its_list_items() -> None:
    chosen = choose("How should tapering be done?", DOSING, TAPER, max_sentences=1)
    assert chosen[0] == "Tapering should be done as follows:"
    assert [c for c in chosen[1:]] == [
        "- reduce the dose by 10% per month",
        "- see the patient at every step",
        "- offer support for withdrawal symptoms",
    ]


def test_a_continuing_sentence_may_follow() -> None:
    section = SectionText(
        "g:x",
        "Screening",
        "Screen adults for depression with the PHQ-9 questionnaire. This should be "
        "repeated every year. Children are screened differently.",
    )
    chosen = choose("How are adults screened for depression?", section)
    assert chosen == [
        "Screen adults for depression with the PHQ-9 questionnaire.",
        "This should be repeated every year.",
    ]


def test_word_forms_the_stemmer_splits_still_match() -> None:
    section = SectionText("g:d", "Diagnosis", "A diagnosis requires two readings.")
    assert choose("How is it diagnosed?", section) == [
        "A diagnosis requires two readings."
    ]


def test_nothing_is_chosen_when_no_sentence_covers_the_question() -> None:
    selection = choose_units(
        score_units("Which vaccine is given to infants at birth?", [DOSING, TAPER])
    )
    assert selection.not_found and selection.best_coverage < 0.4
    assert selection.candidates == 9


def test_a_weak_second_sentence_is_left_out() -> None:
    chosen = choose("When should naloxone be offered?", DOSING, TAPER)
    assert chosen == [
        "Naloxone should be offered to every patient on long-term therapy."
    ]
