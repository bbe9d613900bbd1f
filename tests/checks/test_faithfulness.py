"""Deterministic faithfulness checks of an abstract sentence against its passage."""

from __future__ import annotations

import pytest

from veriscribe.checks.faithfulness import claim_conflict, entity_tokens

EVIDENCE = (
    "Traps caught 3,412 female Aedes aegypti over twelve weeks in 120 households. "
    "Expression of IL-6 increased in infected volunteers, and TNF did not change. "
    "The larvicide was effective in all treated containers."
)


def test_a_faithful_paraphrase_passes() -> None:
    assert (
        claim_conflict("IL-6 expression increased in volunteers infected.", EVIDENCE)
        is None
    )
    assert (
        claim_conflict(
            "In 120 households, traps caught 3,412 female Aedes aegypti.", EVIDENCE
        )
        is None
    )


@pytest.mark.parametrize(
    ("claim", "kind", "verdict"),
    [
        (
            "Traps caught 3,412 female Aedes aegypti in 150 households.",
            "number",
            "contradicted",
        ),
        (
            "Expression of TGFB increased in infected volunteers.",
            "entity",
            "not_supported",
        ),
        (
            "Expression of IL-6 decreased in infected volunteers.",
            "direction",
            "contradicted",
        ),
        (
            "The larvicide was ineffective in treated containers.",
            "direction",
            "contradicted",
        ),
        (
            "The larvicide was not effective in the treated containers.",
            "negation",
            "contradicted",
        ),
        (
            "Vaccination halved dengue incidence in every district studied.",
            "coverage",
            "not_supported",
        ),
    ],
)
def test_a_changed_fact_is_caught(claim: str, kind: str, verdict: str) -> None:
    conflict = claim_conflict(claim, EVIDENCE)
    assert conflict is not None, claim
    assert (conflict.kind, conflict.verdict) == (kind, verdict)
    assert conflict.reason


def test_a_direction_the_passage_also_states_is_left_to_the_model() -> None:
    # The passage says both "increased" and "reduced" about its subject: no check
    # can tell which the claim reverses.
    both = "Expression of IL-6 increased while expression of IL-6 mRNA was reduced."
    assert claim_conflict("Expression of IL-6 was reduced.", both) is None


def test_names_are_letters_with_digits_or_capitals() -> None:
    assert entity_tokens("IL-6, TP53, HIV and mRNA; the FDA-approved drug") == [
        "IL-6",
        "TP53",
        "HIV",
        "mRNA",
    ]
    # An abbreviation the sentence itself defines needs no support of its own.
    assert (
        claim_conflict(
            "Traps caught female Aedes aegypti (FAA) over twelve weeks.", EVIDENCE
        )
        is None
    )
