"""Every abstract sentence against its evidence: certified, repaired or dropped."""

from __future__ import annotations

from veriscribe.documents.articles import Paragraph
from veriscribe.nodes.abstract.evidence import (
    align,
    article_units,
    certify,
    certify_text,
    cut_to_sentence,
    evidence_check,
    sentence_counts,
    shown_text,
)

PARAGRAPHS = [
    Paragraph(
        "Introduction",
        "Malaria remains endemic in Nicoadala district, Mozambique. "
        "We used unsupervised clustering of sparse household survey data to map risk.",
        ("Introduction",),
    ),
    Paragraph(
        "Methods",
        "Households were eligible if they had lived in the district for one year. "
        "The study was approved by the national ethics committee.",
        ("Methods",),
    ),
    Paragraph(
        "Results",
        "Monthly dosing reduced parasite prevalence from 42% to 18% "
        "(P < 0.001), whereas bimonthly dosing had no effect. "
        "Bed net use was higher in villages near the clinic.",
        ("Results",),
    ),
    Paragraph(
        "Discussion",
        "Previous surveys reported similar patterns. "
        "In conclusion, these findings suggest that monthly dosing should be "
        "offered in endemic districts.",
        ("Discussion",),
    ),
]
LABELS = ["background", "methods", "results", "conclusions"]
TITLE = "Mapping malaria risk in Nicoadala"


def check(sentence: str) -> str:
    units = article_units(PARAGRAPHS, LABELS)
    return evidence_check(
        sentence, [u.text for u in align(sentence, units)], frozenset()
    )


def test_a_sentence_in_the_articles_words_is_certified() -> None:
    assert check("Malaria remains endemic in Nicoadala district.") == ""


def test_a_flipped_word_the_evidence_lacks_fails() -> None:
    assert check("We used supervised clustering of sparse household data.").startswith(
        "words"
    )
    assert check("Malaria remains exotic in Nicoadala district.").startswith("words")


def test_a_renamed_place_fails() -> None:
    assert check("Malaria remains endemic in Senegal district.").startswith("name")


def test_a_changed_number_fails() -> None:
    reason = check("Monthly dosing reduced parasite prevalence from 42% to 28%.")
    assert reason.startswith("number")


def test_a_dropped_negation_fails() -> None:
    reason = check("Bimonthly dosing had an effect on parasite prevalence.")
    assert reason


def test_a_swapped_direction_fails() -> None:
    assert check("Bed net use was lower in villages near the clinic.").startswith(
        "direction"
    )


def test_evidence_names_section_paragraph_and_quote() -> None:
    units = align(
        "Bed net use was higher in villages near the clinic.",
        article_units(PARAGRAPHS, LABELS),
    )
    assert units[0].paragraph == 2
    assert units[0].section == "Results"
    assert units[0].text == "Bed net use was higher in villages near the clinic."


def test_cutting_keeps_only_the_articles_words() -> None:
    paragraph = PARAGRAPHS[3].text
    quote = (
        "In conclusion, these findings suggest that monthly dosing should be "
        "offered in endemic districts."
    )
    assert cut_to_sentence(quote, paragraph) == (
        "These findings suggest that monthly dosing should be offered in endemic "
        "districts."
    )


def test_a_failing_sentence_is_repaired_from_its_evidence() -> None:
    records = certify(
        ["Malaria remains exotic in Nicoadala district, Mozambique."],
        PARAGRAPHS,
        LABELS,
        TITLE,
        0,
    )
    first = records[0]
    assert first["status"] == "repaired"
    assert first["text"] == "Malaria remains endemic in Nicoadala district, Mozambique."
    assert first["evidence"][0]["quote"] == first["text"]
    assert "exotic" in first["reason"]


def test_a_text_is_certified_as_its_sentences_are() -> None:
    # What a batch's worker process runs: the splitting and the checks in one step.
    text = (
        "Malaria remains exotic in Nicoadala district, Mozambique. Monthly dosing "
        "reduced parasite prevalence from 42% to 18% (P < 0.001)."
    )
    sentences = [
        "Malaria remains exotic in Nicoadala district, Mozambique.",
        "Monthly dosing reduced parasite prevalence from 42% to 18% (P < 0.001).",
    ]
    records = certify_text(text, PARAGRAPHS, LABELS, TITLE, 0)
    assert records == certify(sentences, PARAGRAPHS, LABELS, TITLE, 0)
    assert [r["status"] for r in records[:2]] == ["repaired", "certified"]


def test_a_finding_with_its_number_and_a_conclusion_are_added() -> None:
    records = certify(
        ["Malaria remains endemic in Nicoadala district, Mozambique."],
        PARAGRAPHS,
        LABELS,
        TITLE,
        0,
    )
    added = [r for r in records if r["origin"] == "article"]
    assert [r["role"] for r in added] == ["results", "conclusions"]
    assert "42%" in added[0]["text"]
    assert "suggest" in added[1]["text"]
    assert sentence_counts(records) == {"certified": 3, "repaired": 0, "dropped": 0}


def test_procedure_goes_first_when_over_length() -> None:
    records = certify(
        [
            "Malaria remains endemic in Nicoadala district, Mozambique.",
            "The study was approved by the national ethics committee.",
            "Bed net use was higher in villages near the clinic.",
        ],
        PARAGRAPHS,
        LABELS,
        TITLE,
        45,
    )
    dropped = [r["text"] for r in records if r["status"] == "dropped"]
    assert dropped == ["The study was approved by the national ethics committee."]
    assert "approved" not in shown_text(records)
    assert "42%" in shown_text(records)
