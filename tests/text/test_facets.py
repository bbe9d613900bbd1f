from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from veriscribe.text.facets import (
    FACETS,
    THREE_FACETS,
    group_paragraphs,
    header_label,
    lead_chars,
    naive_split,
    path_label,
    regroup_three,
)


def test_facet_names() -> None:
    assert FACETS == (
        "background",
        "objective",
        "methods",
        "results",
        "conclusions",
        "other",
    )
    assert THREE_FACETS == ("intro", "main_idea", "results_conclusions")


# ----------------------------------------------------------------- first sentence


def test_naive_split_equal_lengths() -> None:
    assert naive_split([10] * 12) == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9], [10, 11]]


def test_naive_split_fewer_paragraphs_than_groups() -> None:
    assert naive_split([5, 100, 7]) == [[0], [1], [2]]
    assert naive_split([]) == []


def test_naive_split_balances_total_length() -> None:
    lengths = [300, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 300, 300, 20, 20]
    groups = naive_split(lengths, groups=3)
    totals = [sum(lengths[i] for i in g) for g in groups]
    # Total 1140: the cuts fall where the running length is nearest 380 and 760.
    assert groups == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9, 10, 11], [12, 13, 14]]
    assert totals == [380, 420, 340]


def test_naive_split_never_cuts_a_long_paragraph() -> None:
    groups = naive_split([5, 5000, 5, 5, 5, 5, 5, 5])
    assert [1] in groups
    assert len(groups) == 6


def test_naive_split_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError):
        naive_split([1, 2], groups=0)
    with pytest.raises(ValueError):
        naive_split([1, -2])


@given(
    st.lists(st.integers(min_value=0, max_value=5000), max_size=60),
    st.integers(min_value=1, max_value=8),
)
def test_naive_split_partitions_in_order(lengths: list[int], groups: int) -> None:
    result = naive_split(lengths, groups)
    assert len(result) == min(groups, len(lengths))
    assert all(result)  # no empty group
    flat = [i for group in result for i in group]
    assert flat == list(range(len(lengths)))


# ------------------------------------------------------------------ header labels


@pytest.mark.parametrize(
    ("title", "facet"),
    [
        ("Introduction", "background"),
        ("1. Introduction", "background"),
        ("BACKGROUND", "background"),
        ("Literature review", "background"),
        ("Introduction: Version 1.0", "background"),
        ("Aims", "objective"),
        ("Objectives of the study", "objective"),
        ("Purpose", "objective"),
        ("Materials & Methods", "methods"),
        ("Material and methods", "methods"),
        ("Methodes", "methods"),
        ("2.3 Statistical analysis", "methods"),
        ("Statistical methods", "methods"),
        ("Study design", "methods"),
        ("Patients", "methods"),
        ("Case presentation", "methods"),
        ("Case report", "methods"),
        ("Results", "results"),
        ("Findings", "results"),
        ("Results and Discussion", "results"),
        ("Results/Discussion", "results"),
        ("Discussion", "conclusions"),
        ("Conclusion", "conclusions"),
        ("Concluding remarks", "conclusions"),
        ("Summary", "conclusions"),
        ("Limitations", "conclusions"),
        ("Implications for practice", "conclusions"),
        ("The Rise of Lifestyle Drugs", "other"),
        ("Patients first: a manifesto", "other"),
        ("Cause of death", "other"),
        ("Moving Forward", "other"),
        ("Main text", "other"),
        ("", "other"),
    ],
)
def test_header_label(title: str, facet: str) -> None:
    assert header_label(title) == facet


def test_path_label_prefers_the_top_level() -> None:
    assert path_label(("Results", "Patient characteristics")) == "results"
    assert path_label(("Discussion", "Methodological considerations")) == "conclusions"
    assert path_label(("Study 1", "Methods")) == "methods"
    assert path_label(("Toxoplasmosis",)) == "other"
    assert path_label(()) == "other"


# ------------------------------------------------------------- grouping, fallback


def test_group_paragraphs() -> None:
    labels = ["background", "methods", "results", "methods", "other", "results"]
    groups = group_paragraphs(labels)
    assert list(groups) == list(FACETS)
    assert groups["methods"] == [1, 3]
    assert groups["results"] == [2, 5]
    assert groups["objective"] == [] and groups["conclusions"] == []
    assert groups["other"] == [4]


def test_group_paragraphs_rejects_unknown_labels() -> None:
    with pytest.raises(ValueError, match="none"):
        group_paragraphs(["background", "none"])


def test_regroup_three_keeps_document_order() -> None:
    groups = group_paragraphs(
        [
            "objective",
            "background",
            "other",
            "methods",
            "results",
            "conclusions",
            "other",
        ]
    )
    assert regroup_three(groups) == {
        "intro": [0, 1],
        "main_idea": [2, 3, 6],
        "results_conclusions": [4, 5],
    }
    assert regroup_three({}) == {
        "intro": [],
        "main_idea": [],
        "results_conclusions": [],
    }


def test_lead_chars() -> None:
    text = "word " * 100
    lead = lead_chars(text, 30)
    assert lead == "word word word word word word"
    assert len(lead) <= 30
    assert lead_chars("short  text\n here") == "short text here"
    assert lead_chars("x" * 500, 300) == "x" * 300
    sentence = "The quick brown fox jumps over the lazy dog."
    assert lead_chars(sentence, 19) == "The quick brown fox"
    assert lead_chars(sentence, 18) == "The quick brown"
