"""The deterministic support checks: lexical lane, certification guard, shortfalls."""

from __future__ import annotations

import pytest

from veriscribe.checks.support import (
    certification_guard,
    lexical_verdict,
    shortfall_of,
    terms,
)
from veriscribe.checks.verbatim import check_quote
from veriscribe.metrics.judge_pairs import build_pairs, flip, roc_auc

ASPIRIN = (
    "Avoid aspirin in children under 16 years; in adults with coronary disease, "
    "aspirin is recommended for secondary prevention."
)


def test_terms_read_negations_polarity_and_numbers() -> None:
    found = terms("Clinicians shouldn't give 5.0 mg of X; avoid it in 1,000 patients.")
    assert found.negation == 1
    assert dict(found.polarity) == {"avoid": 1}
    assert found.numbers == ("5", "1000")
    assert "clinician" in found.content and "give" in found.content


def test_lexical_lane_certifies_a_restatement_only() -> None:
    source = "Patients with hypertension should reduce their sodium intake."
    assert lexical_verdict(source, source) == "fully_supported"
    # Inflections and "the" may differ; any other word, order and marks may not.
    restated = "Patient with hypertension should reduce their sodium intakes"
    assert lexical_verdict(restated, source) == "fully_supported"
    other_word = "Patients with hypertension should reduce the sodium intake"
    assert lexical_verdict(other_word, source) is None
    assert (
        lexical_verdict("Sodium intake should be reduced by patients.", source) is None
    )
    assert (
        lexical_verdict("Patients with hypertension must reduce sodium intake.", source)
        is None
    )


def test_lexical_lane_calls_a_flipped_negation_or_number_contradicted() -> None:
    source = "ACE inhibitors and ARBs should not be used in combination."
    assert (
        lexical_verdict(
            "ACE inhibitors and ARBs should be used in combination.", source
        )
        == "contradicted"
    )
    dose = "Start with 5 mg of amlodipine once daily."
    assert (
        lexical_verdict("Start with 10 mg of amlodipine once daily.", dose)
        == "contradicted"
    )
    assert (
        lexical_verdict("Start with 5 mg of amlodipine once daily.", dose)
        == "fully_supported"
    )


def test_word_order_reversal_is_not_certified_lexically() -> None:
    source = "Drug A is more effective than drug B in older adults."
    assert (
        lexical_verdict("Drug B is more effective than drug A in older adults.", source)
        is None
    )


def test_guard_blocks_the_reversed_aspirin_recommendation() -> None:
    reason = certification_guard(
        "Aspirin is recommended for children under 16 years.", ASPIRIN
    )
    assert reason is not None and "avoid" in reason
    # The adult recommendation the same sentence makes is not blocked.
    assert (
        certification_guard(
            "Aspirin is recommended for secondary prevention in adults with coronary "
            "disease.",
            ASPIRIN,
        )
        is None
    )


@pytest.mark.parametrize(
    ("claim", "source", "word"),
    [
        ("Give 10 mg daily.", "Give 5 mg daily.", "number"),
        (
            "Beta blockers are first-line.",
            "Beta blockers are not first-line therapy.",
            "negates",
        ),
        (
            "Opioids are not first-line.",
            "Opioids are first-line for acute pain.",
            "negates",
        ),
        (
            "Clinicians must screen adults.",
            "Clinicians should screen adults.",
            "stronger",
        ),
    ],
)
def test_guard_reasons(claim: str, source: str, word: str) -> None:
    reason = certification_guard(claim, source)
    assert reason is not None and word in reason


def test_shortfall_kinds() -> None:
    assert shortfall_of("Clinicians must screen.", ["Clinicians should screen."]) == (
        "strength_inflation"
    )
    assert (
        shortfall_of("Screen all adults.", ["Screen adults over 40."])
        == "scope_inflation"
    )
    assert shortfall_of("Screen adults and children.", ["Screen adults."]) == (
        "unsupported_addition"
    )


def test_the_source_of_a_quote_reaches_the_start_of_its_sentence() -> None:
    at = ASPIRIN.index("aspirin in children")
    found = check_quote("aspirin in children under 16 years", ASPIRIN)
    assert found.span == (at, at + len("aspirin in children under 16 years"))
    assert found.context_span is not None
    assert ASPIRIN[slice(*found.context_span)].startswith("Avoid aspirin")


def test_flip_and_pairs_are_deterministic() -> None:
    assert flip("Clinicians should offer naloxone.") == (
        "Clinicians should not offer naloxone.",
        "negation",
    )
    assert flip("Taper by 10% per week.")[0] == "Taper by 20% per week."  # type: ignore[index]
    sections = [
        (
            "a:1",
            "Clinicians should offer naloxone to every patient on long-term opioids.",
        ),
        ("b:2", "Blood pressure should be measured in both arms at the first visit."),
        ("c:3", "Exercise for 150 minutes a week lowers systolic pressure in adults."),
    ]
    first = build_pairs(sections, 3, seed=1)
    assert first == build_pairs(sections, 3, seed=1)
    labels = {p.label for p in first}
    assert labels == {"supported", "not_supported", "contradicted"}


def test_roc_auc() -> None:
    assert roc_auc([0.9, 0.8, 0.1], [True, True, False]) == 1.0
    assert roc_auc([0.5, 0.5], [True, False]) == 0.5
    assert roc_auc([0.2], [True]) is None


def test_lexical_lane_compares_with_the_whole_source_too() -> None:
    # A long sentence that the unit splitter would cut at its clauses.
    source = "; ".join(f"clause {n} names drug X{n} at dose {n} mg" for n in range(40))
    assert lexical_verdict(source, source) == "fully_supported"
    assert lexical_verdict(source.replace("dose 7 mg", "dose 9 mg"), source) == (
        "contradicted"
    )


def test_a_negation_carried_by_an_auxiliary_is_a_flip() -> None:
    source = "We recommend evaluating benefits of continued opioid therapy."
    assert lexical_verdict(
        "We does not recommend evaluating benefits of continued opioid therapy.", source
    ) == ("contradicted")
