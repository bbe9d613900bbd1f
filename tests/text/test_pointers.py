"""Citation markers and table or figure references, found and removed."""

from __future__ import annotations

import pytest

from veriscribe.text.pointers import (
    display_sentences,
    numbered_citations,
    pointer_count,
    points_to_display,
    strip_numbered_citations,
    strip_pointers,
)


@pytest.mark.parametrize(
    ("sentence", "expected", "removed"),
    [
        (
            "Mortality fell by half [1]\u2013[5].",
            "Mortality fell by half.",
            1,
        ),
        ("Mortality fell by half [2, 5, 9].", "Mortality fell by half.", 1),
        ("Mortality fell [1-4,9] in adults [12].", "Mortality fell in adults.", 2),
        (
            "Prions misfold (Smith et al., 2019; Lee and Park 2020a).",
            "Prions misfold.",
            1,
        ),
        ("Mortality was 12% (Table 2).", "Mortality was 12%.", 1),
        (
            "Mortality was 12% (see Fig. 3B), as expected.",
            "Mortality was 12%, as expected.",
            1,
        ),
        (
            "Mortality was 12% (Table 1; Figure 2 and Figure S4).",
            "Mortality was 12%.",
            1,
        ),
        (
            "As shown in Table 1, mortality was 12% in adults.",
            "Mortality was 12% in adults.",
            1,
        ),
        ("As Figure 2 shows, mortality fell.", "Mortality fell.", 1),
        ("The PCR was positive (figure 2).", "The PCR was positive.", 1),
    ],
)
def test_markers_and_lead_ins_are_removed(
    sentence: str, expected: str, removed: int
) -> None:
    assert strip_pointers(sentence) == (expected, removed)


@pytest.mark.parametrize(
    "sentence",
    [
        "Mortality was 12% (95% CI 10 to 14) in 412 adults (n = 412).",
        "Genes [such as TP53] were sequenced in 2019 (Table salt aside).",
        "The figure of 8 knot and the table of 12 drugs were compared.",
        "Smith et al. 2019 reported it first.",
    ],
)
def test_what_is_not_a_pointer_is_left_alone(sentence: str) -> None:
    assert strip_pointers(sentence) == (sentence, 0)
    assert not points_to_display(sentence)


def test_a_sentence_about_a_display_item_is_found_once_markers_are_gone() -> None:
    text = (
        "Baseline characteristics are shown in Table 1 and Figure 1. "
        "Mortality was 12% (Table 2). "
        "Supplementary Table S3 lists the primers [4]."
    )
    assert display_sentences(text) == [
        "Baseline characteristics are shown in Table 1 and Figure 1.",
        "Supplementary Table S3 lists the primers [4].",
    ]
    # Table 1 and Figure 1 are one reference; (Table 2); Table S3 and [4].
    assert pointer_count(text) == 4


def test_a_parenthesis_of_words_about_a_figure_goes_but_one_with_data_stays() -> None:
    assert strip_pointers(
        "The triad is conserved in ROM-1 (black triangles in Figure 1B), as in flies."
    ) == ("The triad is conserved in ROM-1, as in flies.", 1)
    assert strip_pointers("The R102K mutation (AncMDH2, Figure 6) slows it.") == (
        "The R102K mutation (AncMDH2) slows it.",
        1,
    )
    kept = "Failures fell (11.3% vs 16.7%, P<0.01 in Table 7)."
    assert strip_pointers(kept)[0] == kept
    assert points_to_display(kept)


def test_numbered_citations_are_cut_in_an_article_that_cites_by_number() -> None:
    article = " ".join(f"Claim {n} was made before ({n})." for n in range(1, 6))
    assert numbered_citations(article)
    assert not numbered_citations("The 12 sites (12) and the 4 clinics (4) took part.")
    assert (
        strip_numbered_citations(
            "Stroke is more common in the 'Stroke Belt' states (SBS) (5–7)."
        )
        == "Stroke is more common in the 'Stroke Belt' states (SBS)."
    )
    assert (
        strip_numbered_citations("A response rate of 43.4% (15), resulting in ...")
        == "A response rate of 43.4%, resulting in ..."
    )
    # Not a reference number: a count with words, and a P value's spacing stays.
    kept = "Bans rose (P < .001) in 12 of 20 sites (12 of 20)."
    assert strip_numbered_citations(kept) == kept
