"""Tests for citation markers, claim units (A.7) and the attribution window (A.8)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from veriscribe.checks.markers import (
    Marker,
    MarkerPosition,
    anchor_of,
    attribute,
    coverage,
    coverage_by_window,
    flatten_markdown,
    format_marker,
    parse_markers,
    restore_markers,
    split_claim_units,
    strip_markers,
)
from veriscribe.text.sentences import (
    MIN_CLAIM_SENTENCE_CHARS,
    Sentence,
    claim_sentences,
)

# --- the worked example of figure 9 ---------------------------------------------------
# The answer runs s1, s2, c1, s3, s4, s5, c2: c1 sits at the boundary after s2 and c2
# at the end, after s5.

S = [
    "Statins lower LDL cholesterol in adults.",
    "This is a point many readers ask about.",
    "Blood pressure targets differ by age group.",
    "The next part is background for the reader.",
    "Aspirin is reserved for adults at high risk.",
]
C1 = format_marker("aha", "sec-1", "Statins lower LDL cholesterol")
C2 = format_marker("ada", "sec-9:2", "Aspirin is reserved for high-risk adults")
FIGURE_ANSWER = f"{S[0]} {S[1]} {C1} {S[2]} {S[3]} {S[4]} {C2}"

PANEL_A_CLAIMS = [True, True, True, True, True]
PANEL_B_CLAIMS = [True, False, True, False, True]  # s2 and s4 make no claim

# Expected credits per sentence (marker indices: c1 = 0, c2 = 1) for k = 0..3.
PANEL_A = {
    # k = 0: a marker credits only the claim sentence it sits at.
    0: [[], [0], [], [], [1]],
    # k = 1: the nearest claim sentence at or before each marker.
    1: [[], [0], [], [], [1]],
    # k = 2: c1 reaches s1; c2 reaches s4.
    2: [[0], [0], [], [1], [1]],
    # k = 3: c1 cannot go further back than s1; c2 stops at s3, never past c1.
    3: [[0], [0], [1], [1], [1]],
}
PANEL_A_COVERAGE = {0: 2 / 5, 1: 2 / 5, 2: 4 / 5, 3: 5 / 5}

PANEL_B = {
    # k = 0: c1 sits at s2, which makes no claim, so it credits nothing.
    0: [[], [], [], [], [1]],
    # k = 1: counting claim sentences only, c1 passes over s2 to reach s1.
    1: [[0], [], [], [], [1]],
    # k = 2: c2 passes over s4 to reach s3.
    2: [[0], [], [1], [], [1]],
    3: [[0], [], [1], [], [1]],
}
PANEL_B_COVERAGE = {0: 1 / 3, 1: 2 / 3, 2: 3 / 3, 3: 3 / 3}


def figure_units() -> tuple[list[Sentence], list[MarkerPosition]]:
    split = split_claim_units(FIGURE_ANSWER)
    assert [s.text for s in split.sentences] == S
    assert [m.section_id for m in split.markers] == ["sec-1", "sec-9:2"]
    return split.sentences, split.positions


@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_figure_9_panel_a(k: int) -> None:
    sentences, positions = figure_units()
    assert attribute(sentences, positions, k, is_claim=PANEL_A_CLAIMS) == PANEL_A[k]
    assert coverage(sentences, positions, k, is_claim=PANEL_A_CLAIMS) == pytest.approx(
        PANEL_A_COVERAGE[k]
    )


@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_figure_9_panel_b(k: int) -> None:
    sentences, positions = figure_units()
    assert attribute(sentences, positions, k, is_claim=PANEL_B_CLAIMS) == PANEL_B[k]
    assert coverage(sentences, positions, k, is_claim=PANEL_B_CLAIMS) == pytest.approx(
        PANEL_B_COVERAGE[k]
    )


def test_figure_9_larger_windows_change_nothing() -> None:
    sentences, positions = figure_units()
    for k in (4, 5, 50):
        assert attribute(sentences, positions, k) == PANEL_A[3]
        assert attribute(sentences, positions, k, is_claim=PANEL_B_CLAIMS) == PANEL_B[3]


def test_figure_9_coverage_by_window() -> None:
    sentences, positions = figure_units()
    curve = coverage_by_window(sentences, positions, is_claim=PANEL_B_CLAIMS)
    assert list(curve) == [0, 1, 2, 3, 4, 5]
    assert curve[0] == pytest.approx(1 / 3)
    assert curve[5] == pytest.approx(1.0)


def test_all_claims_is_the_default() -> None:
    sentences, positions = figure_units()
    assert attribute(sentences, positions, 2) == PANEL_A[2]


def test_coverage_without_claims_is_zero() -> None:
    sentences, positions = figure_units()
    assert coverage(sentences, positions, 1, is_claim=[False] * 5) == 0.0
    assert coverage([], [], 1) == 0.0


def test_invalid_arguments() -> None:
    sentences, positions = figure_units()
    with pytest.raises(ValueError, match="k must be"):
        attribute(sentences, positions, -1)
    with pytest.raises(ValueError, match="flags"):
        attribute(sentences, positions, 1, is_claim=[True])


# --- attribution details ----------------------------------------------------------------


def units(answer: str) -> tuple[list[Sentence], list[MarkerPosition]]:
    split = split_claim_units(answer)
    return split.sentences, split.positions


def test_marker_inside_a_sentence_credits_it_at_k0() -> None:
    m = format_marker("d", "s", "quote")
    sentences, positions = units(
        f"Statins lower LDL {m} cholesterol in adults. Aspirin is for high-risk adults."
    )
    assert [s.text for s in sentences] == [
        "Statins lower LDL cholesterol in adults.",
        "Aspirin is for high-risk adults.",
    ]
    assert attribute(sentences, positions, 0) == [[0], []]


def test_marker_before_the_period_credits_the_sentence() -> None:
    m = format_marker("d", "s", "quote")
    sentences, positions = units(
        f"Statins lower LDL cholesterol {m}. Next claim is uncited."
    )
    assert sentences[0].text == "Statins lower LDL cholesterol."
    assert attribute(sentences, positions, 0) == [[0], []]


def test_several_markers_after_one_sentence_share_its_window() -> None:
    a = format_marker("d", "s1", "first quote")
    b = format_marker("d", "s2", "second quote")
    c = format_marker("d", "s3", "third quote")
    sentences, positions = units(
        f"Statins lower LDL cholesterol. Aspirin is for high-risk adults. {a} {b}{c}"
    )
    assert attribute(sentences, positions, 1) == [[], [0, 1, 2]]
    assert attribute(sentences, positions, 2) == [[0, 1, 2], [0, 1, 2]]


def test_marker_at_the_very_start_credits_nothing() -> None:
    m = format_marker("d", "s", "quote")
    sentences, positions = units(f"{m}Statins lower LDL cholesterol in adults.")
    assert positions[0].offset == 0
    assert attribute(sentences, positions, 3) == [[]]


def test_markers_credit_only_backwards() -> None:
    m = format_marker("d", "s", "quote")
    sentences, positions = units(
        f"Statins lower LDL cholesterol. {m} Aspirin is for high-risk adults."
    )
    assert attribute(sentences, positions, 5) == [[0], []]
    assert coverage(sentences, positions, 5) == 0.5


def test_anchor_of() -> None:
    sentences = [Sentence("a" * 20, 0, 20), Sentence("b" * 20, 21, 41)]
    assert anchor_of(0, sentences) == -1
    assert anchor_of(1, sentences) == 0
    assert anchor_of(21, sentences) == 0
    assert anchor_of(22, sentences) == 1
    assert anchor_of(999, sentences) == 1


def test_attribute_accepts_hand_made_units() -> None:
    sentences = [Sentence("x" * 20, i * 21, i * 21 + 20) for i in range(4)]
    positions = [MarkerPosition(0, 41, ""), MarkerPosition(1, 83, "")]
    assert attribute(sentences, positions, 1) == [[], [0], [], [1]]
    assert attribute(sentences, positions, 9) == [[0], [0], [1], [1]]


# --- parsing and stripping ------------------------------------------------------------


def test_parse_markers_fields_and_offsets() -> None:
    text = "Claim one {{cite:aha-2019:sec-10:2|Statins lower LDL}}. Claim two."
    (marker,) = parse_markers(text)
    assert marker == Marker("aha-2019", "sec-10:2", "Statins lower LDL", 10, 54)
    assert text[marker.start : marker.end].startswith("{{cite:")
    assert text[marker.end - 2 : marker.end] == "}}"


def test_parse_markers_quote_may_hold_pipes_and_punctuation() -> None:
    text = "{{cite:d:s|A | B: c. D? ... e}}{{ cite:d2:x:y:z|  padded  }}"
    markers = parse_markers(text)
    assert [(m.doc_id, m.section_id, m.quote) for m in markers] == [
        ("d", "s", "A | B: c. D? ... e"),
        ("d2", "x:y:z", "padded"),
    ]


def test_parse_markers_ignores_malformed() -> None:
    assert parse_markers("{{cite:nocolon|q}} {{cite:d:s}} {cite:d:s|q} plain") == []


def test_format_marker_rejects_unrepresentable_fields() -> None:
    with pytest.raises(ValueError):
        format_marker("a:b", "s", "q")
    with pytest.raises(ValueError):
        format_marker("a", "s|t", "q")
    with pytest.raises(ValueError):
        format_marker("a", "s", "q}}")


def test_strip_markers_records_offsets() -> None:
    a = format_marker("d", "s", "one")
    b = format_marker("d", "t", "two")
    text = f"Statins lower LDL {a}. Aspirin helps. {b}"
    stripped, positions = strip_markers(text)
    assert stripped == "Statins lower LDL. Aspirin helps."
    assert [p.offset for p in positions] == [17, 33]
    assert stripped[: positions[0].offset].endswith("LDL")
    assert positions[0].removed == " " + a
    assert restore_markers(stripped, positions) == text


def test_strip_without_markers_is_identity() -> None:
    assert strip_markers("No citations here.") == ("No citations here.", [])


marker_strategy = st.builds(
    format_marker,
    st.text(
        st.characters(blacklist_characters=":|{}\n"), min_size=1, max_size=8
    ).filter(str.strip),
    st.text(st.characters(blacklist_characters="|{}"), max_size=8),
    st.text(max_size=20).filter(lambda q: "}}" not in q and not q.endswith("}")),
)
prose_strategy = st.text(st.characters(blacklist_characters="{}"), max_size=30)


@given(st.lists(st.tuples(prose_strategy, marker_strategy), max_size=5), prose_strategy)
def test_strip_and_restore_round_trip(pieces: list[tuple[str, str]], tail: str) -> None:
    text = "".join(prose + marker for prose, marker in pieces) + tail
    stripped, positions = strip_markers(text)
    assert len(positions) == len(pieces) == len(parse_markers(text))
    assert "{{cite:" not in stripped
    assert restore_markers(stripped, positions) == text
    offsets = [p.offset for p in positions]
    assert offsets == sorted(offsets)


@given(st.lists(st.tuples(prose_strategy, marker_strategy), max_size=5))
def test_parse_round_trip(pieces: list[tuple[str, str]]) -> None:
    text = "".join(prose + marker for prose, marker in pieces)
    markers = parse_markers(text)
    assert [text[m.start : m.end] for m in markers] == [marker for _, marker in pieces]
    for marker in markers:
        (again,) = parse_markers(
            format_marker(marker.doc_id, marker.section_id, marker.quote)
        )
        assert (again.doc_id, again.section_id, again.quote) == (
            marker.doc_id,
            marker.section_id,
            marker.quote,
        )


# --- Markdown and claim units ---------------------------------------------------------


def test_flatten_markdown() -> None:
    text = (
        "# Answer\n"
        "\n"
        "Statins **lower** LDL in *most* adults (see [the guideline](http://x.org)).\n"
        "\n"
        "1. Offer `aspirin` to high-risk adults\n"
        "   over 40 years.\n"
        "2. Check __lipids__ yearly.\n"
        "- Avoid _smoking_.\n"
        "> Quoted advice stays.\n"
        "\n"
        "---\n"
        "| Drug | Dose |\n"
        "|------|------|\n"
        "| Atorvastatin | 10 mg |\n"
    )
    assert flatten_markdown(text) == (
        "Answer\n\n"
        "Statins lower LDL in most adults (see the guideline).\n\n"
        "Offer aspirin to high-risk adults over 40 years.\n\n"
        "Check lipids yearly.\n\n"
        "Avoid smoking. Quoted advice stays.\n\n"
        "Drug; Dose\n\n"
        "Atorvastatin; 10 mg"
    )


def test_flatten_markdown_keeps_markers_intact() -> None:
    marker = format_marker(
        "d", "s:1", "**Bold** and [link](x) # not a heading\n- nor a bullet"
    )
    text = f"## Heading\n\n**Claim** here {marker}."
    flat = flatten_markdown(text)
    assert marker in flat
    assert flat.startswith("Heading\n\nClaim here")


def test_snake_case_and_arithmetic_survive_flattening() -> None:
    assert flatten_markdown("Use file_name_here and 2*3*4 today.") == (
        "Use file_name_here and 2*3*4 today."
    )


def test_split_claim_units_headings_bullets_and_short_pieces() -> None:
    a = format_marker("aha", "sec-3", "Statins lower LDL")
    b = format_marker("ada", "9.1", "Aspirin ... adults")
    answer = (
        "## Summary\n\n"
        f"Statins lower LDL cholesterol in adults {a}. Yes.\n\n"
        f"1. Offer aspirin to high-risk adults over 40 years. {b}\n"
        "2. Check lipids every year in adults.\n"
    )
    split = split_claim_units(answer)
    assert [s.text for s in split.sentences] == [
        "Statins lower LDL cholesterol in adults.",
        "Offer aspirin to high-risk adults over 40 years.",
        "Check lipids every year in adults.",
    ]
    for sentence in split.sentences:
        assert split.text[sentence.start : sentence.end] == sentence.text
        assert len(sentence.text) >= MIN_CLAIM_SENTENCE_CHARS
    assert [m.doc_id for m in split.markers] == ["aha", "ada"]
    assert [p.index for p in split.positions] == [0, 1]
    assert "{{" not in split.text
    assert attribute(split.sentences, split.positions, 1) == [[0], [1], []]


def test_quote_punctuation_does_not_create_sentences() -> None:
    m = format_marker("d", "s", "First. Second! Third? Fourth.")
    sentences = claim_sentences(
        strip_markers(f"One single claim sentence here {m}.")[0]
    )
    assert [s.text for s in sentences] == ["One single claim sentence here."]
